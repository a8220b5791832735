//===- AttentionTensorCore.cpp - attention on tensor cores ----------------===//
//
// An attention group whose config has an operand type (tf32, f16, bf16)
// computes both products with mma.sync and f32 accumulators, and never
// holds a whole row of scores: keys are taken a chunk at a time with an
// online softmax (the running row maximum rescales the sums and the
// output already accumulated), so the block's shared memory is one key
// chunk and one value chunk whatever the number of keys.
//   - 8 warps a block, rowWarps x keyWarps (config block_tile [R, KC],
//     thread_tile [16, WK]): a warp owns 16 query rows (its Q fragments
//     stay in registers) and WK keys of every chunk of KC; the warps of
//     the same rows meet at the end, their partial outputs rescaled to the
//     rows' common maximum in shared memory (the chunk buffers' space),
//     where each key warp adds up and stores its share of the columns.
//   - The chunk of K is stored [key][d] and V transposed, [dv][key], both
//     rounded to the operand type once as they are loaded, rows padded by
//     16 bytes so that a warp's fragment reads fall in different banks.
//     f32 operands contiguous along d (K) or dv (V) are read as float4
//     into registers a chunk ahead, so the next chunk's loads are in
//     flight while this one is multiplied; others element by element,
//     also a chunk ahead where a thread's share is small (ViT's K^T, rows
//     of 197 keys).
//   - The scores come out of the first mma in the accumulator layout; the
//     group's elementwise ops (scale, masks) run on them there, and the
//     exponentials are the second mma's A fragment as they lie: for 16-bit
//     operands two n8 tiles of scores are one k16 fragment (PTX ISA,
//     "Matrix fragments for mma.m16n8k16"); for tf32 a thread's two
//     adjacent keys stand at columns t and t + 4 of the k8 fragment, so V
//     is read at the same permuted keys.
//   - Rows past L and keys past L2 load zeros; keys past L2 get a score of
//     -inf, so their weight is 0; a row whose scores are all -inf divides
//     0 by 0, as the FMA kernel and the interpreter do.
//
//===----------------------------------------------------------------------===//

#include "AttentionParts.h"
#include "cgc/Codegen/KernelGen.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

std::string num(int64_t v) { return std::to_string(v); }

/// How the kernel handles one operand type.
struct AttentionOperand {
  std::string name;    ///< for the comment
  std::string storage; ///< shared-memory element type
  std::string round;   ///< prelude function: float -> operand bits
  std::string mma;     ///< prelude function: one mma.sync
  int64_t bytes;       ///< of a stored element
};

AttentionOperand attentionOperandOf(Type operand) {
  if (operand.isBF16())
    return {"bf16", "unsigned short", "cgc_bf16_bits", "cgc_mma_bf16", 2};
  if (operand.isF16())
    return {"f16", "unsigned short", "cgc_f16_bits", "cgc_mma_f16", 2};
  return {"tf32", "unsigned int", "cgc_tf32_bits", "cgc_mma_tf32", 4};
}

/// How a chunk of K or V reaches shared memory: as float4 into registers
/// a chunk ahead, element by element into registers a chunk ahead, or
/// element by element when the chunk is stored.
enum class ChunkRead { Vector, Prefetched, Direct };

/// Elements a thread may hold of a chunk read element by element a chunk
/// ahead (registers, as many again for the other operand).
constexpr int64_t kMaxPrefetchedElements = 16;

ChunkRead chunkRead(bool vector, int64_t elements) {
  if (vector)
    return ChunkRead::Vector;
  return (elements + 255) / 256 <= kMaxPrefetchedElements
             ? ChunkRead::Prefetched
             : ChunkRead::Direct;
}

/// Prints the kernel step by step; the group's sizes, views and blocking
/// are the names the steps share.
class TensorCoreAttentionPrinter {
public:
  TensorCoreAttentionPrinter(GroupWriter &w, const AttentionGroup &g,
                             const OperandView &q, const OperandView &k,
                             const OperandView &v, const OutputView &o)
      : w(w), g(g), q(q), k(k), v(v), o(o),
        op(attentionOperandOf(w.config.getOperand())),
        R(w.config.blockTile(0)), KC(w.config.blockTile(1)),
        WK(w.config.threadTile(1)), keyWarps(KC / WK),
        Dp((g.D + 15) / 16 * 16),
        Dvp((g.Dv + 7) / 8 * 8), KP(Dp + 16 / op.bytes),
        VP(KC + 16 / op.bytes), RT((g.L + R - 1) / R),
        kRead(chunkRead(k.rowStride == 1 && g.D % 4 == 0 && k.rowsAligned4,
                        KC * Dp)),
        vRead(chunkRead(v.colStride == 1 && g.Dv % 4 == 0 && v.aligned4,
                        KC * Dvp)) {}

  FailureOr<std::string> print() {
    std::string t = declarations() + queryFragments() + prefetch("0") +
                    "  for (int j0 = 0; j0 < " + num(g.L2) + "; j0 += " +
                    num(KC) + ") {\n    __syncthreads();\n" + storeChunk() +
                    "    __syncthreads();\n";
    if ((kRead != ChunkRead::Direct || vRead != ChunkRead::Direct) &&
        g.L2 > KC)
      t += "    if (j0 + " + num(KC) + " < " + num(g.L2) + ") {\n" +
           prefetch("j0 + " + num(KC)) + "    }\n";
    t += scores();
    if (failed(scoreOps(t)))
      return failure();
    t += onlineSoftmax() + valueProduct() + "  }\n" + combine();
    if (failed(epilogue(t)))
      return failure();
    return t;
  }

  int64_t blocks() const { return g.batch * RT; }

  int64_t sharedBytes() const {
    return tensorCoreAttentionSharedBytes(R, KC, WK, g.D, g.Dv, op.bytes);
  }

private:
  bool sixteenBit() const { return op.bytes == 2; }
  /// Floats a row of the key warps' partial outputs takes.
  int64_t partialPitch() const { return Dvp + 8; }
  /// Offset of the row statistics in the shared buffer.
  int64_t statsOffset() const {
    return sharedBytes() - 2 * keyWarps * R * 4;
  }

  /// The shared buffer and its views, the warp's rows and keys, and the
  /// block's operand offsets.
  std::string declarations() const {
    std::string t = "  // tensor-core attention, " + op.name +
                    " mma.sync, f32 accumulation: batch=" + num(g.batch) +
                    " L=" + num(g.L) + " keys=" + num(g.L2) +
                    " D=" + num(g.D) + " Dv=" + num(g.Dv) + ", " + num(R) +
                    " rows a block, " + num(KC) + " keys a chunk, " +
                    num(keyWarps) + " key warps of " + num(WK) + "\n";
    t += "  __shared__ __align__(16) unsigned char cgcSmem[" +
         num(sharedBytes()) + "];\n";
    t += "  " + op.storage + " *const cgcKs = reinterpret_cast<" + op.storage +
         " *>(cgcSmem);\n";
    t += "  " + op.storage + " *const cgcVt = reinterpret_cast<" + op.storage +
         " *>(cgcSmem + " + num(KC * KP * op.bytes) + ");\n";
    t += "  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;\n"
         "  const int g = lane / 4, t4 = lane % 4;\n";
    t += "  const int rw = warp / " + num(keyWarps) + ", kw = warp % " +
         num(keyWarps) + ", kb = kw * " + num(WK) + ";\n";
    t += "  const long long bt = blockIdx.x / " + ll(RT) +
         ", wr0 = (blockIdx.x % " + ll(RT) + ") * " + ll(R) + " + rw * " +
         num(kAttentionWarpRows) + ";\n";
    t += "  const long long qoff = " + q.offset + ", koff = " + k.offset +
         ", voff = " + v.offset + ", ooff = " + o.offset + ";\n";
    t += "  const float cgcInf = __int_as_float(0x7f800000);\n";
    if (kRead == ChunkRead::Vector)
      t += "  float4 cgcKr[" + num((KC * Dp / 4 + 255) / 256) + "];\n";
    if (kRead == ChunkRead::Prefetched)
      t += "  float cgcKr[" + num((KC * Dp + 255) / 256) + "];\n";
    if (vRead == ChunkRead::Vector)
      t += "  float4 cgcVr[" + num((KC * Dvp / 4 + 255) / 256) + "];\n";
    if (vRead == ChunkRead::Prefetched)
      t += "  float cgcVr[" + num((KC * Dvp + 255) / 256) + "];\n";
    return t;
  }

  /// The warp's 16 rows of Q as A fragments, rounded once, zero past L
  /// and past D.
  std::string queryFragments() const {
    std::string t = "  auto cgcQ = [&](long long r, int d) -> " + op.storage +
                    " {\n    return " + op.round + "(r < " + ll(g.L) +
                    " && d < " + num(g.D) + " ? (float)" + q.param +
                    "[qoff + r * " + ll(q.rowStride) + " + (long long)d * " +
                    ll(q.colStride) + "] : 0.0f);\n  };\n";
    if (sixteenBit()) {
      t += "  unsigned int cgcQa[" + num(Dp / 16) + "][4];\n#pragma unroll\n"
           "  for (int s = 0; s < " + num(Dp / 16) + "; ++s)\n#pragma unroll\n"
           "    for (int f = 0; f < 4; ++f) {\n"
           "      const long long r = wr0 + g + (f & 1) * 8;\n"
           "      const int d = s * 16 + (f >> 1) * 8 + 2 * t4;\n"
           "      cgcQa[s][f] = cgc_pack_halves(cgcQ(r, d), cgcQ(r, d + 1));\n"
           "    }\n";
    } else {
      t += "  unsigned int cgcQa[" + num(Dp / 8) + "][4];\n#pragma unroll\n"
           "  for (int s = 0; s < " + num(Dp / 8) + "; ++s)\n#pragma unroll\n"
           "    for (int f = 0; f < 4; ++f)\n"
           "      cgcQa[s][f] = cgcQ(wr0 + g + (f & 1) * 8, s * 8 + t4 + "
           "(f >> 1) * 4);\n";
    }
    t += "  float cgcO[" + num(Dvp / 8) + "][4];\n#pragma unroll\n"
         "  for (int n = 0; n < " + num(Dvp / 8) + "; ++n)\n#pragma unroll\n"
         "    for (int c = 0; c < 4; ++c) cgcO[n][c] = 0.0f;\n"
         "  float cgcM[2] = {-cgcInf, -cgcInf}, cgcL[2] = {0.0f, 0.0f};\n";
    return t;
  }

  /// The loop over e, element (or float4) of a chunk, `count` in all:
  /// a fixed count a thread, unrolled, so that its loads are all in flight.
  static std::string each(int64_t count, const std::string &indent) {
    return indent + "#pragma unroll\n" + indent + "for (int it = 0; it < " +
           num((count + 255) / 256) + "; ++it) {\n" + indent +
           "  const int e = tid + it * 256;\n" +
           (count % 256 ? indent + "  if (e >= " + num(count) + ") break;\n"
                        : std::string());
  }

  /// Element e of a chunk of K or V as (jj, `dim`): its key jj and its
  /// index along d (K) or dv (V), `extent` of them padded; threads walk
  /// the dim where `alongDim`, else the keys.
  std::string chunkElement(const std::string &start, const std::string &dim,
                           int64_t extent, bool alongDim) const {
    return "      const int jj = " +
           (alongDim ? "e / " + num(extent) : "e % " + num(KC)) + ", " + dim +
           " = " + (alongDim ? "e % " + num(extent) : "e / " + num(KC)) +
           ";\n      const long long j = " + start + " + jj;\n";
  }
  /// The value of that element: operand `param` at `offset` plus its
  /// strides, zero past the keys and past `size` along the dim.
  std::string chunkValue(const std::string &param, const std::string &offset,
                         const std::string &dim, int64_t size,
                         int64_t keyStride, int64_t dimStride) const {
    return "(j < " + ll(g.L2) + " && " + dim + " < " + num(size) +
           " ? (float)" + param + "[" + offset + " + j * " + ll(keyStride) +
           " + (long long)" + dim + " * " + ll(dimStride) + "] : 0.0f)";
  }
  std::string kElement(const std::string &start) const {
    return chunkElement(start, "d", Dp, /*alongDim=*/k.rowStride == 1);
  }
  std::string kValue() const {
    return chunkValue(k.param, "koff", "d", g.D, k.colStride, k.rowStride);
  }
  std::string vElement(const std::string &start) const {
    return chunkElement(start, "c", Dvp, /*alongDim=*/v.rowStride != 1);
  }
  std::string vValue() const {
    return chunkValue(v.param, "voff", "c", g.Dv, v.rowStride, v.colStride);
  }

  /// The loads of the chunk at `start` into registers, for operands read
  /// a chunk ahead: float4 where f32 K is contiguous along d or V along
  /// dv (16 bytes aligned), else element by element where a thread's
  /// share is small; the next chunk's loads are then in flight while this
  /// one is multiplied.
  std::string prefetch(const std::string &start) const {
    std::string t;
    if (kRead == ChunkRead::Vector) {
      const std::string q4 = num(Dp / 4);
      t += each(KC * Dp / 4, "    ") + "      const int jj = e / " + q4 +
           ", d = (e % " + q4 + ") * 4;\n      const long long j = " + start +
           " + jj;\n      cgcKr[it] = j < " + ll(g.L2) + " && d < " +
           num(g.D) + " ? *reinterpret_cast<const float4 *>(&" + k.param +
           "[koff + d + j * " + ll(k.colStride) +
           "]) : make_float4(0.f, 0.f, 0.f, 0.f);\n    }\n";
    } else if (kRead == ChunkRead::Prefetched) {
      t += each(KC * Dp, "    ") + kElement(start) +
           "      cgcKr[it] = " + kValue() + ";\n    }\n";
    }
    if (vRead == ChunkRead::Vector) {
      const std::string q4 = num(Dvp / 4);
      t += each(KC * Dvp / 4, "    ") + "      const int jj = e / " + q4 +
           ", c = (e % " + q4 + ") * 4;\n      const long long j = " +
           start + " + jj;\n      cgcVr[it] = j < " + ll(g.L2) +
           " && c < " + num(g.Dv) + " ? *reinterpret_cast<const float4 *>(&" +
           v.param + "[voff + j * " + ll(v.rowStride) +
           " + c]) : make_float4(0.f, 0.f, 0.f, 0.f);\n    }\n";
    } else if (vRead == ChunkRead::Prefetched) {
      t += each(KC * Dvp, "    ") + vElement(start) +
           "      cgcVr[it] = " + vValue() + ";\n    }\n";
    }
    return t;
  }

  /// The chunk at j0 of K ([key][d]) and of V ([dv][key]) rounded into
  /// shared memory: from the registers the prefetch filled, or read here.
  std::string storeChunk() const {
    std::string t;
    const std::string kAt = "cgcKs[jj * " + num(KP) + " + d]";
    if (kRead == ChunkRead::Vector) {
      const std::string q4 = num(Dp / 4);
      t += each(KC * Dp / 4, "    ") + "      const int jj = e / " + q4 +
           ", d = (e % " + q4 + ") * 4;\n      const float4 x = cgcKr[it];\n";
      if (sixteenBit())
        t += "      *reinterpret_cast<uint2 *>(&" + kAt +
             ") = make_uint2(cgc_pack_halves(" + op.round + "(x.x), " +
             op.round + "(x.y)), cgc_pack_halves(" + op.round + "(x.z), " +
             op.round + "(x.w)));\n    }\n";
      else
        t += "      *reinterpret_cast<uint4 *>(&" + kAt + ") = make_uint4(" +
             op.round + "(x.x), " + op.round + "(x.y), " + op.round +
             "(x.z), " + op.round + "(x.w));\n    }\n";
    } else {
      t += each(KC * Dp, "    ") + kElement("j0") + "      " + kAt + " = " +
           op.round + "(" +
           (kRead == ChunkRead::Prefetched ? "cgcKr[it]" : kValue()) +
           ");\n    }\n";
    }
    const std::string vAt = "cgcVt[c * " + num(VP) + " + jj]";
    if (vRead == ChunkRead::Vector) {
      const std::string q4 = num(Dvp / 4);
      t += each(KC * Dvp / 4, "    ") + "      const int jj = e / " + q4 +
           ", c = (e % " + q4 + ") * 4;\n      const float4 x = cgcVr[it];\n" +
           "      cgcVt[c * " + num(VP) + " + jj] = " + op.round +
           "(x.x);\n      cgcVt[(c + 1) * " + num(VP) + " + jj] = " +
           op.round + "(x.y);\n      cgcVt[(c + 2) * " + num(VP) +
           " + jj] = " + op.round + "(x.z);\n      cgcVt[(c + 3) * " +
           num(VP) + " + jj] = " + op.round + "(x.w);\n    }\n";
    } else {
      t += each(KC * Dvp, "    ") + vElement("j0") + "      " + vAt + " = " +
           op.round + "(" +
           (vRead == ChunkRead::Prefetched ? "cgcVr[it]" : vValue()) +
           ");\n    }\n";
    }
    return t;
  }

  /// The warp's 16 x WK scores of the chunk: WK / 8 n8 tiles.
  std::string scores() const {
    std::string t = "    float cgcS[" + num(WK / 8) + "][4] = {};\n";
    std::string b0, b1;
    if (sixteenBit()) {
      b0 = "*reinterpret_cast<const unsigned int *>(&cgcKs[(kb + n * 8 + g) "
           "* " + num(KP) + " + s * 16 + 2 * t4])";
      b1 = "*reinterpret_cast<const unsigned int *>(&cgcKs[(kb + n * 8 + g) "
           "* " + num(KP) + " + s * 16 + 8 + 2 * t4])";
    } else {
      b0 = "cgcKs[(kb + n * 8 + g) * " + num(KP) + " + s * 8 + t4]";
      b1 = "cgcKs[(kb + n * 8 + g) * " + num(KP) + " + s * 8 + t4 + 4]";
    }
    t += "#pragma unroll\n    for (int s = 0; s < " +
         num(sixteenBit() ? Dp / 16 : Dp / 8) +
         "; ++s)\n#pragma unroll\n      for (int n = 0; n < " + num(WK / 8) +
         "; ++n) {\n"
         "        const unsigned int b[2] = {" + b0 + ", " + b1 + "};\n" +
         "        " + op.mma + "(cgcS[n], cgcQa[s], b);\n      }\n";
    return t;
  }

  /// The group's elementwise ops on each score (at its flat index `i` in
  /// S), -inf past the keys, 0 past the rows (never stored).
  LogicalResult scoreOps(std::string &t) {
    t += "#pragma unroll\n    for (int u = 0; u < " + num(WK / 2) +
         "; ++u) {\n"
         "      const int n = u >> 2, c = u & 3;\n"
         "      const long long r = wr0 + g + (c >> 1) * 8;\n"
         "      const long long j = j0 + kb + n * 8 + 2 * t4 + (c & 1);\n"
         "      if (j >= " + ll(g.L2) + ") { cgcS[n][c] = -cgcInf; continue; }\n"
         "      if (r >= " + ll(g.L) + ") { cgcS[n][c] = 0.0f; continue; }\n"
         "      const long long i = (bt * " + ll(g.L) + " + r) * " + ll(g.L2) +
         " + j;\n      const float cgc_s = cgcS[n][c];\n";
    w.vars[g.mm1.getResult()] = "cgc_s";
    if (failed(w.writeElements(g.prologue, shapeOf(g.mm1.getResult()), "i", t,
                               /*storeResults=*/false)))
      return failure();
    t += "      cgcS[n][c] = (float)" + w.vars.lookup(g.softmaxInput) +
         ";\n    }\n";
    return success();
  }

  /// The rows' running maxima over this chunk too (a row's 16 keys lie in
  /// the 4 lanes of a quad), the sums and outputs so far rescaled to them,
  /// and the scores turned into weights.
  std::string onlineSoftmax() const {
    const std::string n8 = num(Dvp / 8), sn = num(WK / 8);
    return "#pragma unroll\n    for (int h = 0; h < 2; ++h) {\n"
           "      float mx = -cgcInf;\n#pragma unroll\n"
           "      for (int n = 0; n < " + sn +
           "; ++n) mx = fmaxf(mx, fmaxf(cgcS[n][2 * h], cgcS[n][2 * h + 1]));\n"
           "      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));\n"
           "      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));\n"
           "      const float mNew = fmaxf(cgcM[h], mx);\n"
           "      const float base = mNew == -cgcInf ? 0.0f : mNew;\n"
           "      const float alpha = expf(cgcM[h] - base);\n"
           "      cgcM[h] = mNew;\n      cgcL[h] *= alpha;\n"
           "#pragma unroll\n      for (int n = 0; n < " + n8 +
           "; ++n) { cgcO[n][2 * h] *= alpha; cgcO[n][2 * h + 1] *= alpha; }\n"
           "#pragma unroll\n      for (int n = 0; n < " + sn + "; ++n)\n"
           "#pragma unroll\n        for (int c = 2 * h; c < 2 * h + 2; ++c) {\n"
           "          cgcS[n][c] = expf(cgcS[n][c] - base);\n"
           "          cgcL[h] += cgcS[n][c];\n        }\n    }\n";
  }

  /// O += P x V over the warp's WK keys of the chunk, 16 keys (two n8
  /// tiles of weights) a 16-bit step, 8 keys a tf32 step.
  std::string valueProduct() const {
    const std::string n8 = num(Dvp / 8), vp = num(VP);
    if (sixteenBit()) {
      auto pack = [&](const std::string &lo, const std::string &hi) {
        return "cgc_pack_halves(" + op.round + "(" + lo + "), " + op.round +
               "(" + hi + "))";
      };
      return "#pragma unroll\n    for (int s = 0; s < " + num(WK / 16) +
             "; ++s) {\n      const unsigned int a[4] = {\n          " +
             pack("cgcS[2 * s][0]", "cgcS[2 * s][1]") + ",\n          " +
             pack("cgcS[2 * s][2]", "cgcS[2 * s][3]") + ",\n          " +
             pack("cgcS[2 * s + 1][0]", "cgcS[2 * s + 1][1]") +
             ",\n          " +
             pack("cgcS[2 * s + 1][2]", "cgcS[2 * s + 1][3]") +
             "};\n#pragma unroll\n      for (int n = 0; n < " + n8 +
             "; ++n) {\n        const unsigned int b[2] = {\n"
             "            *reinterpret_cast<const unsigned int *>(&cgcVt[(n * "
             "8 + g) * " + vp + " + kb + s * 16 + 2 * t4]),\n"
             "            *reinterpret_cast<const unsigned int *>(&cgcVt[(n * "
             "8 + g) * " + vp + " + kb + s * 16 + 8 + 2 * t4])};\n        " +
             op.mma + "(cgcO[n], a, b);\n      }\n    }\n";
    }
    // tf32: A column t4 is the key 2 t4, column t4 + 4 the key 2 t4 + 1.
    return "#pragma unroll\n    for (int s = 0; s < " + num(WK / 8) +
           "; ++s) {\n"
           "      const unsigned int a[4] = {" + op.round + "(cgcS[s][0]), " +
           op.round + "(cgcS[s][2]), " + op.round + "(cgcS[s][1]), " +
           op.round + "(cgcS[s][3])};\n#pragma unroll\n      for (int n = 0; "
           "n < " + n8 + "; ++n) {\n        const unsigned int b[2] = {"
           "cgcVt[(n * 8 + g) * " + vp + " + kb + s * 8 + 2 * t4], "
           "cgcVt[(n * 8 + g) * " + vp + " + kb + s * 8 + 2 * t4 + 1]};\n"
           "        " + op.mma + "(cgcO[n], a, b);\n      }\n    }\n";
  }

  /// The rows' sums over their quads; with several key warps, each warp's
  /// partial output rescaled to the rows' common maximum and stored to
  /// shared memory (the chunk buffers' space; rows padded by 8 floats, so
  /// that a warp's float2 stores and loads meet no bank twice).
  std::string combine() const {
    std::string t = "#pragma unroll\n  for (int h = 0; h < 2; ++h) {\n"
                    "    cgcL[h] += __shfl_xor_sync(0xffffffffu, cgcL[h], 1);\n"
                    "    cgcL[h] += __shfl_xor_sync(0xffffffffu, cgcL[h], 2);\n"
                    "  }\n";
    if (keyWarps == 1)
      return t;
    const std::string kwN = num(keyWarps), rN = num(R), n8 = num(Dvp / 8);
    t += "  __syncthreads();\n";
    t += "  float *const cgcPart = reinterpret_cast<float *>(cgcSmem);\n";
    t += "  float *const cgcStatM = reinterpret_cast<float *>(cgcSmem + " +
         num(statsOffset()) + "), *const cgcStatL = cgcStatM + " +
         num(keyWarps * R) + ";\n";
    t += "  const int lr = rw * " + num(kAttentionWarpRows) + " + g;\n";
    t += "  if (t4 == 0) {\n    for (int h = 0; h < 2; ++h) {\n"
         "      cgcStatM[kw * " + rN + " + lr + h * 8] = cgcM[h];\n"
         "      cgcStatL[kw * " + rN + " + lr + h * 8] = cgcL[h];\n    }\n"
         "  }\n  __syncthreads();\n";
    t += "#pragma unroll\n  for (int h = 0; h < 2; ++h) {\n"
         "    float mx = -cgcInf;\n    for (int k = 0; k < " + kwN +
         "; ++k) mx = fmaxf(mx, cgcStatM[k * " + rN + " + lr + h * 8]);\n"
         "    const float base = mx == -cgcInf ? 0.0f : mx;\n"
         "    float sum = 0.0f;\n    for (int k = 0; k < " + kwN +
         "; ++k) sum += cgcStatL[k * " + rN + " + lr + h * 8] * "
         "expf(cgcStatM[k * " + rN + " + lr + h * 8] - base);\n"
         "    const float scale = expf(cgcM[h] - base);\n"
         "#pragma unroll\n    for (int n = 0; n < " + n8 +
         "; ++n)\n      *reinterpret_cast<float2 *>(&cgcPart[(kw * " + rN +
         " + lr + h * 8) * " + num(partialPitch()) +
         " + n * 8 + 2 * t4]) = make_float2(cgcO[n][2 * h] * scale, "
         "cgcO[n][2 * h + 1] * scale);\n"
         "    cgcL[h] = sum;\n  }\n  __syncthreads();\n";
    return t;
  }

  /// The group's epilogue on output element (r, col) of value `value`
  /// (divided by the row's sum here).
  LogicalResult outputElement(const std::string &value, std::string &t) {
    Value ov = g.mm2.getResult();
    const int64_t rank = g.rank;
    t += "      if (r >= " + ll(g.L) + " || col >= " + ll(g.Dv) +
         ") continue;\n      const long long w = ooff + r * " +
         ll(o.view.strides[rank - 2]) + " + col * " +
         ll(o.view.strides[rank - 1]) + ";\n      {\n      const " +
         cType(elementType(ov)) + " cgc_o = " + value + ";\n";
    w.vars[ov] = "cgc_o";
    if (g.outT)
      w.vars[g.outT.getResult()] = "cgc_o";
    if (failed(w.writeElements(g.epilogue, shapeOf(ov), "w", t)))
      return failure();
    t += "      }\n";
    return success();
  }

  /// The output divided by the rows' sums, through the group's epilogue:
  /// from the registers with one key warp; with several, key warp kw
  /// finishes the columns of every keyWarps-th n8 tile, adding up the
  /// warps' partials.
  LogicalResult epilogue(std::string &t) {
    if (keyWarps == 1) {
      t += "#pragma unroll\n  for (int u = 0; u < " + num(Dvp / 2) +
           "; ++u) {\n    const int n = u >> 2, c = u & 3;\n"
           "    {\n      const long long r = wr0 + g + (c >> 1) * 8;\n"
           "      const long long col = n * 8 + 2 * t4 + (c & 1);\n";
      if (failed(outputElement("cgcO[n][c] / cgcL[c >> 1]", t)))
        return failure();
      t += "    }\n  }\n";
      return success();
    }
    const std::string rN = num(R);
    t += "  for (int n = kw; n < " + num(Dvp / 8) + "; n += " +
         num(keyWarps) + ")\n#pragma unroll\n    for (int h = 0; h < 2; "
         "++h) {\n      float2 acc = make_float2(0.f, 0.f);\n"
         "      for (int k = 0; k < " + num(keyWarps) +
         "; ++k) {\n        const float2 p = *reinterpret_cast<const float2 "
         "*>(&cgcPart[(k * " + rN + " + lr + h * 8) * " +
         num(partialPitch()) + " + n * 8 + 2 * t4]);\n"
         "        acc.x += p.x;\n        acc.y += p.y;\n      }\n"
         "#pragma unroll\n      for (int i = 0; i < 2; ++i) {\n"
         "      const long long r = wr0 + g + h * 8;\n"
         "      const long long col = n * 8 + 2 * t4 + i;\n";
    if (failed(outputElement("(i ? acc.y : acc.x) / cgcL[h]", t)))
      return failure();
    t += "      }\n    }\n";
    return success();
  }

  GroupWriter &w;
  AttentionGroup g;
  const OperandView &q, &k, &v;
  const OutputView &o;
  const AttentionOperand op;
  /// Rows a block, keys a chunk, warps sharing a row group.
  const int64_t R, KC;
  /// Keys a warp takes of each chunk (16 or 32), warps sharing a row
  /// group.
  const int64_t WK, keyWarps;
  /// D and Dv padded to whole fragments; the rows of the K and V^T chunks.
  const int64_t Dp, Dvp, KP, VP;
  /// Row tiles of a batch index.
  const int64_t RT;
  /// How K and V reach shared memory.
  const ChunkRead kRead, vRead;
};

} // namespace

LogicalResult writeTensorCoreAttention(GroupWriter &w, const AttentionGroup &g,
                                       const OperandView &q,
                                       const OperandView &k,
                                       const OperandView &v) {
  OutputView o = outputView(g);
  TensorCoreAttentionPrinter printer(w, g, q, k, v, o);
  return launchAttention(w, g, "tensor-core attention", printer.sharedBytes(),
                         printer.blocks(), [&] { return printer.print(); });
}

} // namespace codegen
} // namespace cgc
