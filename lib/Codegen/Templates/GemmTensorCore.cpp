//===- GemmTensorCore.cpp - the tensor-core matrix-product template -------===//
//
// The products a kernel config gives an `operand` type (tf32, f16, bf16)
// run on tensor cores with mma.sync (sm_80 and later), accumulating in f32:
//   - a block of 8 warps owns a BM x BN output tile, each warp a WM x WN
//     tile of m16 x n8 mma tiles, all of its accumulators in registers;
//   - K advances in slices of two mma steps (32 f16/bf16 or 16 tf32
//     values), loaded through the caller's element expressions into
//     registers while the previous slice is multiplied (as the FMA
//     template does), rounded to the operand type and stored twice
//     buffered into shared memory with vector stores: A [m][k], B [n][k]
//     or, contiguous along n, [k][n]; rows padded so that a warp's
//     fragment reads fall in 32 different banks;
//   - or (`async_copy`) cp.async copies keep up to 4 slices in flight:
//     plain f32 operands are staged as f32 slices of 16 k and rounded as
//     fragments are read; operands stored in the 16-bit operand type
//     (--cgc-narrow-storage, or a model in that type) are staged as they
//     are, slices of 32 k in the register loop's layout (a config's K
//     depth says which);
//   - fragments are read as 32-bit words in the register layout mma.sync
//     defines (PTX ISA, "Matrix fragments for mma.m16n8k16 / m16n8k8"),
//     a [k][n] B of 16-bit values through ldmatrix .trans;
//   - the caller's epilogue runs per accumulator, so bias, activation and
//     residual fusions, split-K and the layer-norm prologue are the FMA
//     template's.
// The tensors around the product stay in their own types: a kernel rounds
// its operands as it loads them (operands that --cgc-narrow-storage stored
// in the 16-bit type already load as floats and round back exactly).
//
//===----------------------------------------------------------------------===//

#include "GemmParts.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

/// How the template handles one operand type.
struct OperandKind {
  std::string name;     ///< for the comment: bf16, f16, tf32
  std::string storage;  ///< shared-memory element type
  std::string round;    ///< prelude function: float -> stored bits
  std::string mma;      ///< prelude function: one mma.sync
  int64_t bytes;        ///< of a stored element
  int64_t mmaK;         ///< K of one mma
};

OperandKind operandKindOf(Type operand) {
  if (operand.isBF16())
    return {"bf16", "unsigned short", "cgc_bf16_bits", "cgc_mma_bf16", 2, 16};
  if (operand.isF16())
    return {"f16", "unsigned short", "cgc_f16_bits", "cgc_mma_f16", 2, 16};
  return {"tf32", "unsigned int", "cgc_tf32_bits", "cgc_mma_tf32", 4, 8};
}

class TensorCoreGemmWriter : GemmBlock {
public:
  TensorCoreGemmWriter(const GemmProblem &p, KernelConfigAttr config)
      : GemmBlock(p, config.blockTile(0), config.blockTile(1),
                  config.blockTile(2), config.getSplitK()),
        kind(operandKindOf(config.getOperand())), WM(config.threadTile(0)),
        WN(config.threadTile(1)), warpsN(BN / WN), MI(WM / 16), NI(WN / 8),
        pad(16 / kind.bytes), minBlocks(config.getMinBlocksPerMultiprocessor()),
        bKMajor(!operandB().contiguousK), async(config.getAsyncCopy()),
        halfStages(tensorCoreHalfStages(async, kind.bytes, BK)),
        stages(config.getStages()) {}

  SmallVector<Launch> write() const {
    std::string t = header() + threadLayout() + blockCoordinates() +
                    p.blockSetup + splitKArrival() + rowStatistics() +
                    accumulators() + mainLoop() +
                    splitKStore(epilogue(SK > 1 ? p.accumulate : p.epilogue));
    return launches(std::move(t), minBlocks);
  }

private:
  /// A comment naming the tile, and the two operands' slice buffers.
  std::string header() const {
    std::string t = "  // tensor-core GEMM " + s(BM) + "x" + s(BN) + "x" +
                    s(BK) + ", " + s(WM) + "x" + s(WN) + " a warp, " +
                    kind.name + " mma.sync m16n8k" + s(kind.mmaK) +
                    ", f32 accumulation, split-K " + s(SK) + ": M=" + s(p.m) +
                    " N=" + s(p.n) + " K=" + s(p.k) + " batch=" + s(p.batch) +
                    "\n";
    if (async)
      return t + asyncBuffers();
    t += "  __shared__ __align__(16) " + kind.storage + " cgcAs[2][" + s(BM) +
         "][" + s(BK + pad) + "];\n";
    if (bKMajor)
      t += "  __shared__ __align__(16) " + kind.storage + " cgcBs[2][" +
           s(BK) + "][" + s(BN + 8) + "];\n";
    else
      t += "  __shared__ __align__(16) " + kind.storage + " cgcBs[2][" +
           s(BN) + "][" + s(BK + pad) + "];\n";
    return t;
  }

  /// `tid`; the warp's first row and column in the tile (wm0, wn0); the
  /// lane's group (g: the fragment row) and its index in it (t4).
  std::string threadLayout() const {
    return "  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;\n"
           "  const int g = lane / 4, t4 = lane % 4;\n"
           "  const int wm0 = warp / " +
           s(warpsN) + " * " + s(WM) + ", wn0 = warp % " + s(warpsN) + " * " +
           s(WN) + ";\n";
  }

  std::string accumulators() const {
    return "  float cgc_acc[" + s(MI) + "][" + s(NI) +
           "][4];\n#pragma unroll\n  for (int i = 0; i < " + s(MI) +
           "; ++i)\n#pragma unroll\n    for (int j = 0; j < " + s(NI) +
           "; ++j)\n#pragma unroll\n      for (int c = 0; c < 4; ++c) "
           "cgc_acc[i][j][c] = 0.0f;\n";
  }

  /// An operand's registers of one slice rounded and stored into its
  /// buffer `buf`: at [outer][k], or at [k][outer] where `kMajor` (B
  /// contiguous along n: four consecutive columns are one vector store,
  /// where [n][k] would take four conflicting 16-bit stores).
  std::string stores(const GemmOperand &o, const std::string &smem,
                     bool kMajor) const {
    const std::string k = o.k(), outer = o.outer();
    std::string t = "#pragma unroll\n    for (int i = 0; i < " +
                    s(o.count() / o.vector) +
                    "; ++i) {\n      const int e = tid + i * 256;\n";
    auto at = [&](const std::string &inOuter, const std::string &inK) {
      return kMajor ? smem + "[buf][" + inK + "][" + inOuter + "]"
                    : smem + "[buf][" + inOuter + "][" + inK + "]";
    };
    auto rounded = [&](int q) {
      return kind.round + "(" + o.reg + "[" +
             (o.vector == 1 ? std::string("i") : "4 * i + " + s(q)) + "])";
    };
    if (o.vector == 1)
      return t + "      " + at(outer, k) + " = " + rounded(0) + ";\n    }\n";
    if (o.contiguousK == kMajor) {
      // Four consecutive elements the operand and shared memory both keep
      // contiguous, transposed: four scalar stores.
      for (int q = 0; q < 4; ++q)
        t += "      " +
             (kMajor ? at(outer, k + " + " + s(q))
                     : at(outer + " + " + s(q), k)) +
             " = " + rounded(q) + ";\n";
      return t + "    }\n";
    }
    // Four consecutive elements contiguous in both: one vector store.
    std::string target = "&" + at(outer, k);
    if (kind.bytes == 2)
      t += "      *reinterpret_cast<uint2 *>(" + target +
           ") = make_uint2(cgc_pack_halves(" + rounded(0) + ", " + rounded(1) +
           "), cgc_pack_halves(" + rounded(2) + ", " + rounded(3) + "));\n";
    else
      t += "      *reinterpret_cast<uint4 *>(" + target + ") = make_uint4(" +
           rounded(0) + ", " + rounded(1) + ", " + rounded(2) + ", " +
           rounded(3) + ");\n";
    return t + "    }\n";
  }

  /// A warp's A and B fragments of one mma step (kq) and its MI x NI
  /// mma.sync. 16-bit operands: a word holds two consecutive k; a0/a1 are
  /// rows g and g + 8 at k 2*t4, a2/a3 the same 8 k further; b0/b1 column
  /// g at k 2*t4 and 8 further. tf32: a word is one k, t4 and t4 + 4.
  std::string multiply() const {
    if (async && !halfStages)
      return asyncMultiply();
    const bool half = kind.bytes == 2;
    const std::string kk = half ? "kq * 16 + t4 * 2" : "kq * 8 + t4";
    const std::string far = half ? "8" : "4";
    auto word = [&](const std::string &smem, const std::string &row,
                    const std::string &col) {
      std::string e = smem + "[buf][" + row + "][" + col + "]";
      return half ? "*reinterpret_cast<const unsigned int *>(&" + e + ")" : e;
    };
    std::string t = "      const int kk = " + kk + ";\n";
    t += "      unsigned int a[" + s(MI) + "][4], b[" + s(NI) + "][2];\n";
    t += "#pragma unroll\n      for (int i = 0; i < " + s(MI) +
         "; ++i) {\n        const int r = wm0 + i * 16 + g;\n";
    t += "        a[i][0] = " + word("cgcAs", "r", "kk") + ";\n";
    t += "        a[i][1] = " + word("cgcAs", "r + 8", "kk") + ";\n";
    t += "        a[i][2] = " + word("cgcAs", "r", "kk + " + far) + ";\n";
    t += "        a[i][3] = " + word("cgcAs", "r + 8", "kk + " + far) +
         ";\n      }\n";
    t += bFragments(far);
    t += "#pragma unroll\n      for (int i = 0; i < " + s(MI) +
         "; ++i)\n#pragma unroll\n        for (int j = 0; j < " + s(NI) +
         "; ++j) " + kind.mma + "(cgc_acc[i][j], a[i], b[j]);\n";
    return t;
  }

  /// The B fragments of mma step kq. Stored [n][k]: as A's. Stored [k][n]:
  /// 16-bit ones through ldmatrix .trans, two n tiles at a time (lanes 8i
  /// to 8i + 7 name the k rows of tile i: k 0-7 and 8-15 of n tile j, then
  /// of j + 1); tf32 ones are single words, k = t4 and t4 + 4 of column g.
  std::string bFragments(const std::string &far) const {
    std::string t;
    if (!bKMajor) {
      auto word = [&](const std::string &col) {
        std::string e = "cgcBs[buf][c][" + col + "]";
        return kind.bytes == 2
                   ? "*reinterpret_cast<const unsigned int *>(&" + e + ")"
                   : e;
      };
      return "#pragma unroll\n      for (int j = 0; j < " + s(NI) +
             "; ++j) {\n        const int c = wn0 + j * 8 + g;\n" +
             "        b[j][0] = " + word("kk") + ";\n        b[j][1] = " +
             word("kk + " + far) + ";\n      }\n";
    }
    if (kind.bytes == 4)
      return "#pragma unroll\n      for (int j = 0; j < " + s(NI) +
             "; ++j) {\n        const int c = wn0 + j * 8 + g;\n"
             "        b[j][0] = cgcBs[buf][kk][c];\n"
             "        b[j][1] = cgcBs[buf][kk + 4][c];\n      }\n";
    const std::string row = "kq * 16 + (lane / 8) % 2 * 8 + lane % 8";
    if (NI == 1)
      return "      cgc_ldmatrix_x2_trans(b[0], &cgcBs[buf][" + row +
             "][wn0]);\n";
    return "#pragma unroll\n      for (int j = 0; j < " + s(NI) +
           "; j += 2) cgc_ldmatrix_x4_trans(&b[j][0], &cgcBs[buf][" + row +
           "][wn0 + (j + lane / 16) * 8]);\n";
  }

  /// The register-staged K loop, as the FMA template's: slice kt + 1 is
  /// loaded while slice kt is multiplied, then stored into the other buffer.
  std::string mainLoop() const {
    if (async)
      return asyncMainLoop();
    GemmOperand a = operandA(), b = operandB();
    return registerPipeline("  float ra[" + s(a.count()) + "], rb[" +
                                s(b.count()) + "];\n",
                            registerLoads(a) + registerLoads(b),
                            stores(a, "cgcAs", false) +
                                stores(b, "cgcBs", bKMajor),
                            BK / kind.mmaK, multiply());
  }

  /// The epilogue once per accumulator: c0/c1 are row g, columns 2*t4 and
  /// 2*t4 + 1 of an mma tile, c2/c3 the same columns of row g + 8.
  std::string epilogue(const std::string &store) const {
    std::string t;
    t += "#pragma unroll\n  for (int i = 0; i < " + s(MI) +
         "; ++i)\n#pragma unroll\n  for (int j = 0; j < " + s(NI) +
         "; ++j)\n#pragma unroll\n  for (int c = 0; c < 4; ++c) {\n";
    t += "    const long long gm = tm0 + wm0 + i * 16 + g + c / 2 * 8;\n";
    t += "    const long long gn = tn0 + wn0 + j * 8 + t4 * 2 + c % 2;\n";
    if (p.m % BM)
      t += "    if (gm >= " + ll(p.m) + ") continue;\n";
    if (p.n % BN)
      t += "    if (gn >= " + ll(p.n) + ") continue;\n";
    t += "    const float cgc_v = cgc_acc[i][j][c];\n" + store + "  }\n";
    return t;
  }

  const OperandKind kind;
  const int64_t WM, WN, warpsN, MI, NI, pad, minBlocks;
  /// B is contiguous along n (a [K, N] weight, an implicit-GEMM input):
  /// stored [k][n], its rows padded by 8 elements (16 bytes of f16/bf16,
  /// 32 of tf32: the rows a fragment read touches then fall in different
  /// banks).
  const bool bKMajor;
  /// The cp.async loop (`async_copy`): both operands plain arrays, copied
  /// 16 bytes at a time into `stages` slices: f32 slices of 16 k, rounded
  /// to the operand type as fragments are read, or (`halfStages`, slices
  /// of 32 k) the 16-bit values as stored, read as the register loop's.
  const bool async;
  const bool halfStages;
  const int64_t stages;

  //===--------------------------------------------------------------------===//
  // The cp.async loop
  //===--------------------------------------------------------------------===//

  /// An operand's f32 stage buffer: [outer][k] where it is contiguous
  /// along k, rows padded so that the fragment reads (two consecutive k of
  /// 8 rows, or one k of 8 rows for tf32) fall in distinct banks; else
  /// [k][outer], rows padded likewise for the reads of 8 columns at two
  /// (one) k.
  std::string asyncBuffer(const char *name, const GemmOperand &o) const {
    const int64_t outerPad = kind.bytes == 2 ? 4 : 8;
    const int64_t kPad = kind.bytes == 2 ? 8 : 4;
    return "  __shared__ __align__(16) float " + std::string(name) + "[" +
           s(stages) + "]" +
           (o.contiguousK
                ? "[" + s(o.extent) + "][" + s(BK + kPad) + "]"
                : "[" + s(BK) + "][" + s(o.extent + outerPad) + "]") +
           ";\n";
  }

  /// 16-bit stages are laid out as the register loop's two buffers: A
  /// [m][k] and B [n][k] with rows padded by 8 values, a B contiguous along
  /// n [k][n] (its fragments through ldmatrix .trans).
  std::string halfStageBuffers() const {
    std::string t = "  __shared__ __align__(16) unsigned short cgcAs[" +
                    s(stages) + "][" + s(BM) + "][" + s(BK + 8) + "];\n";
    if (bKMajor)
      return t + "  __shared__ __align__(16) unsigned short cgcBs[" +
             s(stages) + "][" + s(BK) + "][" + s(BN + 8) + "];\n";
    return t + "  __shared__ __align__(16) unsigned short cgcBs[" + s(stages) +
           "][" + s(BN) + "][" + s(BK + 8) + "];\n";
  }

  std::string asyncBuffers() const {
    if (halfStages)
      return "  // cp.async main loop, " + s(stages) + " stages of " +
             kind.name + " as stored\n" + halfStageBuffers();
    return "  // cp.async main loop, " + s(stages) + " stages of f32\n" +
           asyncBuffer("cgcAs", operandA()) + asyncBuffer("cgcBs", operandB());
  }

  /// The 16-byte copies of an operand's part of the slice at k0 into stage
  /// `st`: vector e covers 4 f32 (8 16-bit) elements along the contiguous
  /// dim.
  std::string asyncCopies(const GemmOperand &o, const char *smem) const {
    const int64_t chunk = halfStages ? 8 : 4;
    const int64_t vectors = o.extent * BK / chunk;
    const int64_t across = (o.contiguousK ? BK : o.extent) / chunk;
    const std::string along = "(e % " + s(across) + ") * " + s(chunk),
                      row = "e / " + s(across);
    const std::string outer = o.contiguousK ? row : along,
                      k = o.contiguousK ? along : row;
    const std::string at =
        std::string(smem) + "[st][" + row + "][" + along + "]";
    std::string t = "#pragma unroll\n    for (int i = 0; i < " +
                    s(ceilDiv(vectors, 256)) +
                    "; ++i) {\n      const int e = tid + i * 256;\n";
    if (vectors % 256)
      t += "      if (e >= " + s(vectors) + ") break;\n";
    t += "      const long long " + o.outerVar + " = " + o.outer0 + " + " +
         outer + ", gk = k0 + " + k + ";\n";
    const std::string valid = o.terms.empty() ? std::string("true")
                                              : llvm::join(o.terms, " && ");
    if (halfStages)
      t += "      cgc_cp_async16(reinterpret_cast<float *>(&" + at +
           "), reinterpret_cast<const float *>(&(" + o.load + ")), " + valid +
           ");\n    }\n";
    else
      t += "      cgc_cp_async16(&" + at + ", &(" + o.load + "), " + valid +
           ");\n    }\n";
    return t;
  }

  /// Stages kt + stages - 1 in flight while stage kt is multiplied: the
  /// wait leaves stages - 2 groups pending, the barrier makes every
  /// thread's copies of stage kt visible and frees the stage the next
  /// issue overwrites (multiplied in the previous iteration).
  std::string asyncMainLoop() const {
    std::string t = "  auto cgcIssue = [&](int st, long long k0) {\n" +
                    asyncCopies(operandA(), "cgcAs") +
                    asyncCopies(operandB(), "cgcBs") + "  };\n";
    t += "#pragma unroll\n  for (int st = 0; st < " + s(stages - 1) +
         "; ++st) {\n    if (st < " + s(KT) + ") cgcIssue(st, kBegin + (long long)st * " +
         ll(BK) + ");\n    cgc_cp_async_commit();\n  }\n";
    t += "  for (int kt = 0; kt < " + s(KT) + "; ++kt) {\n";
    t += "    cgc_cp_async_wait<" + s(stages - 2) + ">();\n    __syncthreads();\n";
    t += "    const int buf = kt % " + s(stages) + ";\n";
    t += "#pragma unroll\n    for (int kq = 0; kq < " + s(BK / kind.mmaK) +
         "; ++kq) {\n" + multiply() + "    }\n";
    t += "    if (kt + " + s(stages - 1) + " < " + s(KT) + ") cgcIssue((kt + " +
         s(stages - 1) + ") % " + s(stages) + ", kBegin + (long long)(kt + " +
         s(stages - 1) + ") * " + ll(BK) + ");\n";
    t += "    cgc_cp_async_commit();\n  }\n";
    return t;
  }

  /// Fragments of mma step kq from the f32 stages, rounded as they are
  /// read: a 16-bit word packs k and k + 1 (a float2 where k is the
  /// buffer's contiguous dim), a tf32 word is one k.
  std::string asyncMultiply() const {
    const bool half = kind.bytes == 2;
    const std::string far = half ? "8" : "4";
    GemmOperand a = operandA(), b = operandB();
    // Element (outer, k) of an operand's stage.
    auto at = [&](const char *smem, bool contiguousK, const std::string &outer,
                  const std::string &k) {
      return std::string(smem) + "[buf][" + (contiguousK ? outer : k) + "][" +
             (contiguousK ? k : outer) + "]";
    };
    auto word = [&](const char *smem, bool contiguousK,
                    const std::string &outer, const std::string &k) {
      if (!half)
        return "cgc_tf32_bits(" + at(smem, contiguousK, outer, k) + ")";
      return "cgc_pack_halves(" + kind.round + "(" +
             at(smem, contiguousK, outer, k) + "), " + kind.round + "(" +
             at(smem, contiguousK, outer, k + " + 1") + "))";
    };
    std::string t = "      const int kk = " +
                    std::string(half ? "kq * 16 + t4 * 2" : "kq * 8 + t4") +
                    ";\n";
    t += "      unsigned int a[" + s(MI) + "][4], b[" + s(NI) + "][2];\n";
    t += "#pragma unroll\n      for (int i = 0; i < " + s(MI) +
         "; ++i) {\n        const int r = wm0 + i * 16 + g;\n";
    t += "        a[i][0] = " + word("cgcAs", a.contiguousK, "r", "kk") + ";\n";
    t += "        a[i][1] = " + word("cgcAs", a.contiguousK, "r + 8", "kk") + ";\n";
    t += "        a[i][2] = " + word("cgcAs", a.contiguousK, "r", "kk + " + far) +
         ";\n";
    t += "        a[i][3] = " +
         word("cgcAs", a.contiguousK, "r + 8", "kk + " + far) + ";\n      }\n";
    t += "#pragma unroll\n      for (int j = 0; j < " + s(NI) +
         "; ++j) {\n        const int c = wn0 + j * 8 + g;\n";
    t += "        b[j][0] = " + word("cgcBs", b.contiguousK, "c", "kk") + ";\n";
    t += "        b[j][1] = " + word("cgcBs", b.contiguousK, "c", "kk + " + far) +
         ";\n      }\n";
    t += "#pragma unroll\n      for (int i = 0; i < " + s(MI) +
         "; ++i)\n#pragma unroll\n        for (int j = 0; j < " + s(NI) +
         "; ++j) " + kind.mma + "(cgc_acc[i][j], a[i], b[j]);\n";
    return t;
  }
};

} // namespace

FailureOr<SmallVector<Launch>> writeTensorCoreGemm(const GemmProblem &p,
                                                   KernelConfigAttr config,
                                                   Operation *where) {
  if (config.getSplitK() > 1 && !p.splittable)
    return where->emitError(
        "kernel config splits K, but the product is not stored as itself "
        "plus terms independent of it (or the kernel is deterministic)");
  const bool halfStages = tensorCoreHalfStages(
      config.getAsyncCopy(), tensorCoreOperandBytes(config.getOperand()),
      config.blockTile(2));
  if (halfStages && (!p.aHalf8 || !p.bHalf8 || !p.aContiguousK ||
                     !p.rowStatsInput.empty()))
    return where->emitError(
        "kernel config asks for the cp.async loop over 16-bit stages (K "
        "slices of 32), but an operand is not a plain 16-byte-aligned array "
        "of the operand type read 8 elements at a time (A along K)");
  if (config.getAsyncCopy() && !halfStages &&
      (!p.aVec4 || !p.bVec4 || !p.rowStatsInput.empty()))
    return where->emitError(
        "kernel config asks for the cp.async loop, but an operand is not a "
        "plain 16-byte-aligned f32 array read 4 elements at a time");
  return TensorCoreGemmWriter(p, config).write();
}

} // namespace codegen
} // namespace cgc
