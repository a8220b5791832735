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
// Only fp32 FFMA (no TF32): the comparison this project makes is fp32.
//
//===----------------------------------------------------------------------===//

#include "GemmParts.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

/// `(e)`, or with bounds conditions `terms` the element where they hold
/// and 0 elsewhere.
std::string guard(ArrayRef<std::string> terms, const std::string &e) {
  if (terms.empty())
    return "(" + e + ")";
  return "((" + llvm::join(terms, " && ") + ") ? (float)(" + e + ") : 0.0f)";
}

/// Writes the tiled template for one problem and tile: the geometry is
/// derived once, each step of the kernel is a member that returns its code.
class TiledGemmWriter {
public:
  TiledGemmWriter(const GemmProblem &p, const GemmTile &tile)
      : p(p), tile(tile), BM(tile.bm), BN(tile.bn), BK(tile.bk), TM(tile.tm),
        TN(tile.tn), S(tile.slices), TY(BM / TM), TX(BN / TN), TPS(TY * TX),
        KS(BK / S), LA(BM * BK / 256), LB(BN * BK / 256), MT(ceilDiv(p.m, BM)),
        NT(ceilDiv(p.n, BN)), SK(p.splittable ? tile.splitK : 1),
        // K range of one block: whole tiles, the last split may be shorter.
        kPerSplit(ceilDiv(ceilDiv(p.k, BK), SK) * BK),
        KT(ceilDiv(std::min(p.k, kPerSplit), BK)),
        kRagged(p.k % BK != 0 || (SK > 1 && p.k % kPerSplit != 0)),
        pipelined(tile.asyncCopy) {
    // Bounds conditions of the loads, where a dim is not a multiple of the
    // tile.
    if (p.m % BM)
      aTerms.push_back("gm < " + ll(p.m));
    if (kRagged) {
      aTerms.push_back("gk < kEnd");
      bTerms.push_back("gk < kEnd");
    }
    if (p.n % BN)
      bTerms.push_back("gn < " + ll(p.n));
  }

  SmallVector<Launch> write() {
    std::string t =
        sharedMemory() + threadLayout() + blockCoordinates() + p.blockSetup;
    if (!p.rowStatsInput.empty() && p.k % 32 == 0 && p.k / 32 <= 32)
      t += rowStatisticsInRegisters();
    else if (!p.rowStatsInput.empty())
      t += rowStatisticsTwoPass();
    t += zeroAccumulators();
    t += pipelined ? pipelinedMainLoop(p, tile, KT, aTerms, bTerms)
                   : registerMainLoop();
    std::string store = SK > 1 ? p.accumulate : p.epilogue;
    t += S > 1 ? sliceReductionEpilogue(store) : threadEpilogue(store);
    SmallVector<Launch> launches;
    if (SK > 1)
      launches.push_back(splitKInitialization());
    Launch launch;
    launch.body = std::move(t);
    launch.grid = {std::max<int64_t>(1, p.batch * MT * NT * SK), 1, 1};
    launch.block = {256, 1, 1};
    launch.minBlocks = tile.minBlocks;
    launches.push_back(std::move(launch));
    return launches;
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

  /// The block's tile: its K range (kBegin, kEnd), first row and column
  /// (tm0, tn0) and batch index (bt).
  std::string blockCoordinates() const {
    std::string t;
    t += "  long long tile = blockIdx.x;\n";
    if (SK > 1)
      t += "  const long long kBegin = (tile % " + ll(SK) + ") * " +
           ll(kPerSplit) + ";\n  tile /= " + ll(SK) + ";\n";
    else
      t += "  const long long kBegin = 0;\n";
    if (kRagged)
      t += "  const long long kEnd = kBegin + " + ll(kPerSplit) + " < " +
           ll(p.k) + " ? kBegin + " + ll(kPerSplit) + " : " + ll(p.k) + ";\n";
    t += "  const long long tn0 = (tile % " + ll(NT) + ") * " + ll(BN) +
         ";\n  tile /= " + ll(NT) + ";\n";
    t += "  const long long tm0 = (tile % " + ll(MT) + ") * " + ll(BM) +
         ";\n  const long long bt = tile / " + ll(MT) + ";\n";
    return t;
  }

  /// Row statistics of the block's rows, a warp per row: the row is read
  /// once into registers (K / 32 values a lane), U rows of a warp at a
  /// time so that all their loads are in flight together; mean, then the
  /// squared deviations from the registers.
  std::string rowStatisticsInRegisters() const {
    const int64_t KL = p.k / 32;
    int64_t U = 1;
    while (U * 2 <= BM / 8 && U * 2 * KL <= 64)
      U *= 2;
    std::string t;
    t += "  __shared__ float cgcMean[" + s(BM) + "], cgcRstd[" + s(BM) + "];\n";
    t += "  for (int rr0 = tid / 32; rr0 < " + s(BM) + "; rr0 += " + s(8 * U) +
         ") {\n    const int lane = tid % 32;\n    float xv[" + s(U) + "][" +
         s(KL) + "];\n";
    // Load the U rows.
    t += "#pragma unroll\n    for (int u = 0; u < " + s(U) +
         "; ++u) {\n      const long long gm = tm0 + rr0 + u * 8;\n"
         "#pragma unroll\n      for (int q = 0; q < " +
         s(KL) +
         "; ++q) {\n        const long long gk = lane + q * 32;\n"
         "        xv[u][q] = rr0 + u * 8 < " +
         s(BM) + " && gm < " + ll(p.m) + " ? (float)(" + p.rowStatsInput +
         ") : 0.0f;\n      }\n    }\n";
    // Per row: the mean, then the sum of squared deviations.
    t += "#pragma unroll\n    for (int u = 0; u < " + s(U) +
         "; ++u) {\n      float sum = 0.0f;\n#pragma unroll\n"
         "      for (int q = 0; q < " +
         s(KL) +
         "; ++q) sum += xv[u][q];\n"
         "      for (int o = 16; o > 0; o >>= 1) sum += "
         "__shfl_xor_sync(0xffffffffu, sum, o);\n"
         "      const float mean = sum / " +
         s(p.k) +
         ".0f;\n"
         "      float sq = 0.0f;\n#pragma unroll\n"
         "      for (int q = 0; q < " +
         s(KL) +
         "; ++q) { const float d = xv[u][q] - mean; sq += d * d; }\n"
         "      for (int o = 16; o > 0; o >>= 1) sq += "
         "__shfl_xor_sync(0xffffffffu, sq, o);\n"
         "      if (lane == 0 && rr0 + u * 8 < " +
         s(BM) +
         ") { cgcMean[rr0 + u * 8] = mean; "
         "cgcRstd[rr0 + u * 8] = 1.0f / sqrtf(sq / " +
         s(p.k) + ".0f + " + doubleLiteral(p.rowStatsEpsilon) +
         "f); }\n    }\n  }\n"
         "  __syncthreads();\n";
    return t;
  }

  /// Row statistics of the block's rows, a warp per row (two passes).
  std::string rowStatisticsTwoPass() const {
    std::string t;
    t += "  __shared__ float cgcMean[" + s(BM) + "], cgcRstd[" + s(BM) + "];\n";
    t += "  for (int rr = tid / 32; rr < " + s(BM) +
         "; rr += 8) {\n    const int lane = tid % 32;\n    const long long "
         "gm = tm0 + rr;\n    float sum = 0.0f;\n    if (gm < " +
         ll(p.m) + ")\n      for (long long gk = lane; gk < " + ll(p.k) +
         "; gk += 32) sum += (float)(" + p.rowStatsInput + ");\n";
    t +=
        "    for (int o = 16; o > 0; o >>= 1) sum += "
        "__shfl_xor_sync(0xffffffffu, sum, o);\n    const float mean = sum / " +
        s(p.k) + ".0f;\n    float sq = 0.0f;\n    if (gm < " + ll(p.m) +
        ")\n      for (long long gk = lane; gk < " + ll(p.k) +
        "; gk += 32) { const float d = (float)(" + p.rowStatsInput +
        ") - mean; sq += d * d; }\n";
    t += "    for (int o = 16; o > 0; o >>= 1) sq += "
         "__shfl_xor_sync(0xffffffffu, sq, o);\n    if (lane == 0) { "
         "cgcMean[rr] = mean; cgcRstd[rr] = 1.0f / sqrtf(sq / " +
         s(p.k) + ".0f + " + doubleLiteral(p.rowStatsEpsilon) +
         "f); }\n  }\n  __syncthreads();\n";
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

  /// One operand's loads (into registers) and stores (into shared memory).
  /// Element e of a slice is (outer, k) for A (outer = row) and (k, outer)
  /// for B (outer = column); threads walk the contiguous dim. Vector loads
  /// read 4 consecutive elements of the contiguous dim at once.
  void operandTransfers(std::string &loads, std::string &stores) const {
    struct Operand {
      std::string reg, smem, outerVar, outer0, load;
      int64_t extent; // BM or BN
      bool contiguousK, vec;
      SmallVector<std::string> terms;
    };
    Operand opA{"ra", "cgcAs",        "gm",    "tm0", p.loadA,
                BM,   p.aContiguousK, p.aVec4, aTerms};
    Operand opB{"rb", "cgcBs",         "gn",    "tn0", p.loadB,
                BN,   !p.bContiguousN, p.bVec4, bTerms};
    for (Operand *o : {&opA, &opB}) {
      int64_t count = o->extent * BK / 256;
      int64_t v = o->vec && count % 4 == 0 ? 4 : 1;
      // Position of element (vector) e along outer and k.
      std::string outer, k;
      if (o->contiguousK) {
        outer = "e / " + s(BK / v);
        k = "(e % " + s(BK / v) + ")" + (v > 1 ? " * 4" : "");
      } else {
        outer = "(e % " + s(o->extent / v) + ")" + (v > 1 ? " * 4" : "");
        k = "e / " + s(o->extent / v);
      }
      loads += "#pragma unroll\n    for (int i = 0; i < " + s(count / v) +
               "; ++i) {\n      const int e = tid + i * 256;\n";
      loads += "      const long long " + o->outerVar + " = " + o->outer0 +
               " + " + outer + ", gk = k0 + " + k + ";\n";
      stores += "#pragma unroll\n    for (int i = 0; i < " + s(count / v) +
                "; ++i) {\n      const int e = tid + i * 256;\n";
      if (v == 1) {
        loads += "      " + o->reg + "[i] = " + guard(o->terms, o->load) +
                 ";\n    }\n";
        stores += "      " + o->smem + "[buf][" + k + "][" + outer +
                  "] = " + o->reg + "[i];\n    }\n";
        continue;
      }
      std::string vload =
          "*reinterpret_cast<const float4 *>(&(" + o->load + "))";
      loads += "      const float4 x = " +
               (o->terms.empty()
                    ? vload
                    : "(" + llvm::join(o->terms, " && ") + ") ? " + vload +
                          " : make_float4(0.f, 0.f, 0.f, 0.f)") +
               ";\n      " + o->reg + "[4 * i] = x.x; " + o->reg +
               "[4 * i + 1] = x.y; " + o->reg + "[4 * i + 2] = x.z; " + o->reg +
               "[4 * i + 3] = x.w;\n    }\n";
      if (o->contiguousK) {
        // Four consecutive k of one row or column: four scalar stores.
        for (int q = 0; q < 4; ++q)
          stores += "      " + o->smem + "[buf][" + k + " + " + s(q) + "][" +
                    outer + "] = " + o->reg + "[4 * i + " + s(q) + "];\n";
        stores += "    }\n";
      } else {
        stores += "      *reinterpret_cast<float4 *>(&" + o->smem + "[buf][" +
                  k + "][" + outer + "]) = make_float4(" + o->reg +
                  "[4 * i], " + o->reg + "[4 * i + 1], " + o->reg +
                  "[4 * i + 2], " + o->reg + "[4 * i + 3]);\n    }\n";
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
    std::string t;
    t += "  float ra[" + s(LA) + "], rb[" + s(LB) + "];\n";
    std::string loads, stores;
    operandTransfers(loads, stores);
    t += "  auto cgcLoad = [&](long long k0) {\n" + loads + "  };\n";
    t += "  auto cgcStore = [&](int buf) {\n" + stores + "  };\n";
    t += "  cgcLoad(kBegin);\n  cgcStore(0);\n  __syncthreads();\n";
    t += "  for (int kt = 0; kt < " + s(KT) + "; ++kt) {\n";
    t += "    const int buf = kt & 1;\n";
    if (KT > 1)
      t += "    if (kt + 1 < " + s(KT) +
           ") cgcLoad(kBegin + (long long)(kt + 1) * " + ll(BK) + ");\n";
    t += "#pragma unroll\n    for (int kq = 0; kq < " + s(KS) + "; ++kq) {\n";
    t += "      const int kk = " + (S > 1 ? "slice * " + s(KS) + " + " : "") +
         "kq;\n";
    t += "      float a[" + s(TM) + "], b[" + s(TN) + "];\n";
    t += readFragment("a", "cgcAs", "ty", TM, TY);
    t += readFragment("b", "cgcBs", "tx", TN, TX);
    t += "#pragma unroll\n      for (int i = 0; i < " + s(TM) +
         "; ++i)\n#pragma unroll\n        for (int j = 0; j < " + s(TN) +
         "; ++j) cgc_acc[i][j] = fmaf(a[i], b[j], cgc_acc[i][j]);\n    }\n";
    if (KT > 1)
      t += "    if (kt + 1 < " + s(KT) + ") cgcStore(buf ^ 1);\n";
    t += "    __syncthreads();\n  }\n";
    return t;
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

  /// The launch before a split-K GEMM: the output's terms that do not
  /// depend on the product.
  Launch splitKInitialization() const {
    int64_t total = p.batch * p.m * p.n;
    Launch init;
    init.body = "  // split-K initialization: the epilogue at a zero product\n"
                "  const long long f = (long long)blockIdx.x * blockDim.x + "
                "threadIdx.x;\n  if (f >= " +
                ll(total) + ") return;\n  const long long bt = f / " +
                ll(p.m * p.n) + ", gm = (f / " + ll(p.n) + ") % " + ll(p.m) +
                ", gn = f % " + ll(p.n) +
                ";\n  const float cgc_v = 0.0f;\n  {\n" + p.init + "  }\n";
    init.grid = {ceilDiv(total, 256), 1, 1};
    init.block = {256, 1, 1};
    return init;
  }

  const GemmProblem &p;
  const GemmTile tile;
  const int64_t BM, BN, BK, TM, TN, S, TY, TX, TPS, KS, LA, LB, MT, NT, SK;
  const int64_t kPerSplit, KT;
  const bool kRagged, pipelined;
  SmallVector<std::string> aTerms, bTerms;
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

} // namespace codegen
} // namespace cgc
