//===- Gemm.cpp - the tiled matrix-product template -----------------------===//
//
// One template, specialized per problem at compile time:
//   - a block of 256 threads (16 x 16) owns a BM x BN output tile, each
//     thread a (BM/16) x (BN/16) register tile;
//   - K advances in BK slices held in shared memory twice (double buffer):
//     while the threads multiply slice t out of one buffer, their loads of
//     slice t+1 are in flight into registers, stored into the other buffer
//     after the multiply, so one barrier per slice suffices;
//   - A is stored k-major (transposed) in shared memory so that both
//     operands are read as rows; register tiles of 4 or more read float4
//     (a thread's rows/columns are groups of 4, 64 apart, so a quarter warp
//     reads 128 contiguous bytes); rows are padded by 4 floats against bank
//     conflicts of the transposing store;
//   - BK is chosen so that every thread loads 8 elements per slice: deep
//     slices (few barriers, many loads in flight) for small tiles;
//   - bounds checks only where a dim is not a multiple of the tile;
//   - the large register tiles (8x8, 8x6, 6x8) with both operands plain
//     16-byte-aligned arrays take a cp.async main loop instead: 3 stages
//     of shared memory filled by asynchronous copies that need no
//     registers, so a thread fits in 128 registers and a grid of more
//     blocks than multiprocessors runs two blocks a multiprocessor
//     (`__launch_bounds__(256, 2)`).
// fp32 FFMA; tensor cores are GemmTensorCore.cpp's.
//
//===----------------------------------------------------------------------===//

#include "GemmParts.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

/// Writes the tiled template for one problem and tile: the geometry is
/// derived once, each step of the kernel is a member that returns its code.
class TiledGemmWriter : GemmBlock {
public:
  TiledGemmWriter(const GemmProblem &p, const GemmTile &tile)
      : GemmBlock(p, tile.bm, tile.bn, tile.bk, tile.splitK), tile(tile),
        TM(tile.tm), TN(tile.tn), S(tile.slices), TY(BM / TM), TX(BN / TN),
        TPS(TY * TX), KS(BK / S), LA(BM * BK / 256), LB(BN * BK / 256),
        pipelined(tile.asyncCopy) {}

  SmallVector<Launch> write() {
    std::string t = sharedMemory() + threadLayout() + blockCoordinates() +
                    p.blockSetup + splitKArrival() + rowStatistics();
    t += zeroAccumulators();
    t += pipelined ? pipelinedMainLoop(p, tile, KT, aTerms, bTerms)
                   : registerMainLoop();
    std::string store = SK > 1 ? p.accumulate : p.epilogue;
    t += splitKStore(S > 1 ? sliceReductionEpilogue(store)
                           : threadEpilogue(store));
    return launches(std::move(t), tile.minBlocks);
  }

private:
  /// A comment naming the tile, the shared memory (two buffers of both
  /// operands' slices, or the stages of the cp.async loop) and its views.
  std::string sharedMemory() const {
    const int64_t tileFloats = 2 * BK * (BM + 4) + 2 * BK * (BN + 4);
    const int64_t redFloats = S > 1 ? TM * TN * 256 : 0;
    std::string t;
    t += "  // tiled GEMM " + s(BM) + "x" + s(BN) + "x" + s(BK) + ", " + s(TM) +
         "x" + s(TN) + " per thread, " + s(S) + " slice(s), split-K " + s(SK) +
         ": M=" + s(p.m) + " N=" + s(p.n) + " K=" + s(p.k) +
         " batch=" + s(p.batch) + "\n";
    if (pipelined)
      t += "  // cp.async main loop, " + s(tile.stages) +
           " stages\n  __shared__ __align__(16) float cgcSm[" +
           s(tile.stages * (BM + BN) * BK) + "];\n";
    else
      t += "  __shared__ __align__(16) float cgcSm[" +
           s(std::max(tileFloats, redFloats)) + "];\n";
    if (!pipelined) {
      t += "  float (*cgcAs)[" + s(BK) + "][" + s(BM + 4) +
           "] = reinterpret_cast<float (*)[" + s(BK) + "][" + s(BM + 4) +
           "]>(cgcSm);\n";
      t += "  float (*cgcBs)[" + s(BK) + "][" + s(BN + 4) +
           "] = reinterpret_cast<float (*)[" + s(BK) + "][" + s(BN + 4) +
           "]>(cgcSm + " + s(2 * BK * (BM + 4)) + ");\n";
    }
    return t;
  }

  /// `tid`, `slice` and the thread's (tx, ty) in its slice.
  std::string threadLayout() const {
    std::string t;
    // Threads of a slice: a warp covers 8 x 4 of the (tx, ty) grid where it
    // fits (its reads of a k row of the tiles are 128 bytes of B and 64 of A,
    // against 256 and 32 for a 16 x 2 strip: fewer shared-memory wavefronts
    // a multiply), else rows of TX threads.
    const bool warpPatch = TPS % 32 == 0 && TX % 8 == 0 && TY % 4 == 0;
    t += "  const int tid = threadIdx.x, slice = tid / " + s(TPS) + ";\n";
    if (warpPatch)
      t += "  const int cgcW = (tid % " + s(TPS) +
           ") / 32, cgcL = tid % 32;\n  const int tx = cgcW % " + s(TX / 8) +
           " * 8 + cgcL % 8, ty = cgcW / " + s(TX / 8) + " * 4 + cgcL / 8;\n";
    else
      t += "  const int tx = tid % " + s(TX) + ", ty = (tid % " + s(TPS) +
           ") / " + s(TX) + ";\n";
    return t;
  }

  std::string zeroAccumulators() const {
    std::string t;
    t += "  float cgc_acc[" + s(TM) + "][" + s(TN) + "];\n";
    t += "#pragma unroll\n  for (int i = 0; i < " + s(TM) +
         "; ++i)\n#pragma unroll\n    for (int j = 0; j < " + s(TN) +
         "; ++j) cgc_acc[i][j] = 0.0f;\n";
    return t;
  }

  /// One operand's loads (into registers) and stores (into shared memory,
  /// k-major: both operands are then read as rows).
  void operandTransfers(std::string &loads, std::string &stores) const {
    for (const GemmOperand &o : {operandA(), operandB()}) {
      const int64_t v = o.vector;
      const std::string smem = o.reg == "ra" ? "cgcAs" : "cgcBs";
      const std::string k = o.k(), outer = o.outer();
      loads += registerLoads(o);
      stores += "#pragma unroll\n    for (int i = 0; i < " + s(o.count() / v) +
                "; ++i) {\n      const int e = tid + i * 256;\n";
      if (v == 1) {
        stores += "      " + smem + "[buf][" + k + "][" + outer +
                  "] = " + o.reg + "[i];\n    }\n";
        continue;
      }
      if (o.contiguousK) {
        // Four consecutive k of one row or column: four scalar stores.
        for (int q = 0; q < 4; ++q)
          stores += "      " + smem + "[buf][" + k + " + " + s(q) + "][" +
                    outer + "] = " + o.reg + "[4 * i + " + s(q) + "];\n";
        stores += "    }\n";
      } else {
        stores += "      *reinterpret_cast<float4 *>(&" + smem + "[buf][" +
                  k + "][" + outer + "]) = make_float4(" + o.reg +
                  "[4 * i], " + o.reg + "[4 * i + 1], " + o.reg +
                  "[4 * i + 2], " + o.reg + "[4 * i + 3]);\n    }\n";
      }
    }
  }

  /// Reads a thread's `n` registers of row kk of a tile (`threads` threads
  /// along it) into `dst`: float4/float2 groups where they fit.
  std::string readFragment(StringRef dst, StringRef arr, StringRef var,
                           int64_t n, int64_t threads) const {
    std::string r;
    int64_t g = groupOf(n);
    if (g > 1) {
      const char *type = g == 4 ? "float4" : "float2";
      r += "#pragma unroll\n      for (int g = 0; g < " + s(n / g) +
           "; ++g) {\n        const " + type + " q = *reinterpret_cast<const " +
           type + " *>(&" + arr.str() + "[buf][kk][g * " + s(g * threads) +
           " + " + var.str() + " * " + s(g) + "]);\n";
      r += "        " + dst.str() + "[" + s(g) + " * g] = q.x; " + dst.str() +
           "[" + s(g) + " * g + 1] = q.y;";
      if (g == 4)
        r += " " + dst.str() + "[4 * g + 2] = q.z; " + dst.str() +
             "[4 * g + 3] = q.w;";
      r += "\n      }\n";
    } else {
      r += "#pragma unroll\n      for (int i = 0; i < " + s(n) + "; ++i) " +
           dst.str() + "[i] = " + arr.str() + "[buf][kk][" + var.str() + " * " +
           s(n) + " + i];\n";
    }
    return r;
  }

  /// The register-staged K loop: slice kt + 1 is loaded into registers
  /// while slice kt is multiplied out of shared memory, then stored into
  /// the other buffer.
  std::string registerMainLoop() const {
    std::string loads, stores;
    operandTransfers(loads, stores);
    std::string step = "      const int kk = " +
                       (S > 1 ? "slice * " + s(KS) + " + " : "") + "kq;\n";
    step += "      float a[" + s(TM) + "], b[" + s(TN) + "];\n";
    step += readFragment("a", "cgcAs", "ty", TM, TY);
    step += readFragment("b", "cgcBs", "tx", TN, TX);
    step += "#pragma unroll\n      for (int i = 0; i < " + s(TM) +
            "; ++i)\n#pragma unroll\n        for (int j = 0; j < " + s(TN) +
            "; ++j) cgc_acc[i][j] = fmaf(a[i], b[j], cgc_acc[i][j]);\n";
    return registerPipeline("  float ra[" + s(LA) + "], rb[" + s(LB) + "];\n",
                            loads, stores, KS, step);
  }

  /// The slices' partial sums meet in shared memory; then every thread
  /// adds up the S partials of one output element at a time (consecutive
  /// threads, consecutive columns) and stores it.
  std::string sliceReductionEpilogue(const std::string &store) const {
    std::string t;
    // The slices' partial sums meet in shared memory; then every thread
    // adds up the S partials of one output element at a time (consecutive
    // threads, consecutive columns) and stores it.
    t += "#pragma unroll\n  for (int i = 0; i < " + s(TM) +
         "; ++i)\n#pragma unroll\n    for (int j = 0; j < " + s(TN) +
         "; ++j) cgcSm[(i * " + s(TN) + " + j) * 256 + slice * " + s(TPS) +
         " + ty * " + s(TX) + " + tx] = cgc_acc[i][j];\n";
    t += "  __syncthreads();\n";
    t += "  for (int o = tid; o < " + s(BM * BN) + "; o += 256) {\n";
    t += "    const int ml = o / " + s(BN) + ", nl = o % " + s(BN) + ";\n";
    auto inverse = [&](StringRef local, StringRef thr, StringRef reg,
                       int64_t tpt, int64_t threads) {
      std::string l = local.str(), g = s(groupOf(tpt));
      if (groupOf(tpt) > 1)
        return "    const int " + thr.str() + " = " + l + " / " + g + " % " +
               s(threads) + ", " + reg.str() + " = " + l + " / " +
               s(groupOf(tpt) * threads) + " * " + g + " + " + l + " % " + g +
               ";\n";
      return "    const int " + thr.str() + " = " + l + " / " + s(tpt) + ", " +
             reg.str() + " = " + l + " % " + s(tpt) + ";\n";
    };
    t += inverse("ml", "oy", "oi", TM, TY);
    t += inverse("nl", "ox", "oj", TN, TX);
    t += "    const long long gm = tm0 + ml, gn = tn0 + nl;\n";
    if (p.m % BM)
      t += "    if (gm >= " + ll(p.m) + ") continue;\n";
    if (p.n % BN)
      t += "    if (gn >= " + ll(p.n) + ") continue;\n";
    t += "    float cgc_v = 0.0f;\n#pragma unroll\n    for (int r = 0; r < " +
         s(S) + "; ++r) cgc_v += cgcSm[(oi * " + s(TN) + " + oj) * 256 + r * " +
         s(TPS) + " + oy * " + s(TX) + " + ox];\n";
    t += "    {\n" + store + "    }\n  }\n";
    return t;
  }

  /// Epilogue, once per output element of the thread.
  std::string threadEpilogue(const std::string &store) const {
    std::string t;
    // Epilogue, once per output element of the thread.
    t += "#pragma unroll\n  for (int i = 0; i < " + s(TM) + "; ++i) {\n";
    t += "    const long long gm = tm0 + " + lane("ty", "i", TM, TY) + ";\n";
    if (p.m % BM)
      t += "    if (gm >= " + ll(p.m) + ") continue;\n";
    t += "#pragma unroll\n    for (int j = 0; j < " + s(TN) + "; ++j) {\n";
    t += "      const long long gn = tn0 + " + lane("tx", "j", TN, TX) + ";\n";
    if (p.n % BN)
      t += "      if (gn >= " + ll(p.n) + ") continue;\n";
    t += "      const float cgc_v = cgc_acc[i][j];\n";
    t += store;
    t += "    }\n  }\n";
    return t;
  }

  const GemmTile tile;
  const int64_t TM, TN, S, TY, TX, TPS, KS, LA, LB;
  const bool pipelined;
};

} // namespace

std::string lane(StringRef var, StringRef i, int64_t t, int64_t threads) {
  int64_t g = groupOf(t);
  if (g > 1)
    return "((" + i.str() + ") / " + s(g) + " * " + s(g * threads) + " + " +
           var.str() + " * " + s(g) + " + (" + i.str() + ") % " + s(g) + ")";
  return "(" + var.str() + " * " + s(t) + " + (" + i.str() + "))";
}

GemmTile gemmTileOf(KernelConfigAttr config) {
  GemmTile tile;
  tile.bm = config.blockTile(0);
  tile.bn = config.blockTile(1);
  tile.bk = config.blockTile(2);
  tile.tm = config.threadTile(0);
  tile.tn = config.threadTile(1);
  tile.slices = config.getSlices();
  tile.splitK = config.getSplitK();
  tile.stages = config.getStages();
  tile.asyncCopy = config.getAsyncCopy();
  tile.minBlocks = config.getMinBlocksPerMultiprocessor();
  return tile;
}

FailureOr<SmallVector<Launch>> writeTiledGemm(const GemmProblem &p,
                                              GemmTile tile, Operation *where) {
  // The config was chosen for this problem; these hold unless it was
  // written by hand for another one, or the plan broke an alignment.
  if (tile.splitK > 1 && !p.splittable)
    return where->emitError(
        "kernel config splits K, but the product is not stored as itself "
        "plus terms independent of it (or the kernel is deterministic)");
  if (tile.asyncCopy && (!p.aVec4 || !p.bVec4 || !p.rowStatsInput.empty()))
    return where->emitError(
        "kernel config asks for the cp.async loop, but an operand is not a "
        "plain 16-byte-aligned array read 4 elements at a time");
  return TiledGemmWriter(p, tile).write();
}

FailureOr<SmallVector<Launch>> writeGemm(const GemmProblem &p,
                                         KernelConfigAttr config,
                                         Operation *where) {
  if (config.usesTensorCores())
    return writeTensorCoreGemm(p, config, where);
  return writeTiledGemm(p, gemmTileOf(config), where);
}

} // namespace codegen
} // namespace cgc
