//===- GemmBlock.cpp - what the two GEMM templates share ------------------===//
//
// The FMA template (Gemm.cpp) and the tensor-core template
// (GemmTensorCore.cpp) tile a problem the same way: a block per BM x BN
// output tile (times split-K), K in slices of BK loaded into registers
// through the caller's element expressions, the layer-norm prologue's row
// statistics, split-K's tile counters. They differ in how a slice
// is stored and multiplied.
//
//===----------------------------------------------------------------------===//

#include "GemmParts.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

} // namespace

std::string GemmOperand::outer() const {
  if (contiguousK)
    return "e / " + s(bk / vector);
  return "(e % " + s(extent / vector) + ")" + (vector > 1 ? " * 4" : "");
}

std::string GemmOperand::k() const {
  if (contiguousK)
    return "(e % " + s(bk / vector) + ")" + (vector > 1 ? " * 4" : "");
  return "e / " + s(extent / vector);
}

GemmBlock::GemmBlock(const GemmProblem &p, int64_t bm, int64_t bn, int64_t bk,
                     int64_t splitK)
    : p(p), BM(bm), BN(bn), BK(bk), MT(ceilDiv(p.m, bm)), NT(ceilDiv(p.n, bn)),
      SK(p.splittable ? splitK : 1),
      // K range of one block: whole slices, the last split may be shorter.
      kPerSplit(ceilDiv(ceilDiv(p.k, bk), SK) * bk),
      KT(ceilDiv(std::min(p.k, kPerSplit), bk)),
      // Guarded where the splits' slices overrun K: a K that is not a
      // multiple of the slice, a shorter last split, or splits past the end
      // (K = 384 in 12 slices of 32, split 8: two slices a split, splits 6
      // and 7 start at or past K and must read zeros, not the next row).
      kRagged(SK * kPerSplit != p.k) {
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

std::string GemmBlock::blockCoordinates() const {
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

std::string GemmBlock::rowStatistics() const {
  if (p.rowStatsInput.empty())
    return "";
  if (p.k % 32 == 0 && p.k / 32 <= 32)
    return rowStatisticsInRegisters();
  return rowStatisticsTwoPass();
}

/// Row statistics of the block's rows, a warp per row: the row is read
/// once into registers (K / 32 values a lane), U rows of a warp at a time
/// so that all their loads are in flight together; mean, then the squared
/// deviations from the registers.
std::string GemmBlock::rowStatisticsInRegisters() const {
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
std::string GemmBlock::rowStatisticsTwoPass() const {
  std::string t;
  t += "  __shared__ float cgcMean[" + s(BM) + "], cgcRstd[" + s(BM) + "];\n";
  t += "  for (int rr = tid / 32; rr < " + s(BM) +
       "; rr += 8) {\n    const int lane = tid % 32;\n    const long long "
       "gm = tm0 + rr;\n    float sum = 0.0f;\n    if (gm < " +
       ll(p.m) + ")\n      for (long long gk = lane; gk < " + ll(p.k) +
       "; gk += 32) sum += (float)(" + p.rowStatsInput + ");\n";
  t += "    for (int o = 16; o > 0; o >>= 1) sum += "
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

// Split-K in one launch. Each tile has three counters in a static device
// array (zero when the module loads): arrivals, a flag set once the tile's
// product-independent terms are stored, departures. The first block of a
// tile to arrive stores those terms (bias, residual: the epilogue at a zero
// product) while the others run their K loops; each block waits for the
// flag before adding its partial sums atomically; the last to leave clears
// the counters for the next launch. The first arrival is running when the
// others wait for it, so no block waits for one that has not started.
// Nodes of one such kernel must not overlap (they share the array): the
// launch says so and the lowering orders them.
std::string GemmBlock::splitKArrival() const {
  if (SK == 1)
    return "";
  std::string t;
  t += "  // split-K: the first of the tile's " + s(SK) +
       " blocks to arrive stores the terms independent of the product\n";
  t += "  static __device__ unsigned int cgcSplitTiles[" +
       s(std::max<int64_t>(1, 3 * tiles())) + "];\n";
  t += "  const long long cgcTile = blockIdx.x / " + ll(SK) + ";\n";
  // A vote, not a shared word: the largest tiles fill the 48 KB of static
  // shared memory.
  t += "  if (__syncthreads_or(threadIdx.x == 0 && "
       "atomicAdd(&cgcSplitTiles[cgcTile], 1u) == 0u)) {\n"
       "    for (int cgcE = threadIdx.x; cgcE < " +
       s(BM * BN) + "; cgcE += blockDim.x) {\n";
  t += "      const long long gm = tm0 + cgcE / " + s(BN) +
       ", gn = tn0 + cgcE % " + s(BN) + ";\n";
  if (p.m % BM)
    t += "      if (gm >= " + ll(p.m) + ") continue;\n";
  if (p.n % BN)
    t += "      if (gn >= " + ll(p.n) + ") continue;\n";
  t += "      const float cgc_v = 0.0f;\n      {\n" + p.init + "      }\n";
  t += "    }\n    __threadfence();\n    __syncthreads();\n";
  t += "    if (threadIdx.x == 0) atomicExch(&cgcSplitTiles[" + s(tiles()) +
       " + cgcTile], 1u);\n  }\n";
  return t;
}

std::string GemmBlock::splitKStore(const std::string &storeLoop) const {
  if (SK == 1)
    return storeLoop;
  std::string t;
  t += "  // split-K: add the partial sums once the tile's terms are stored\n";
  t += "  if (threadIdx.x == 0) cgc_wait_for_flag(&cgcSplitTiles[" +
       s(tiles()) + " + cgcTile]);\n  __syncthreads();\n";
  t += storeLoop;
  t += "  if (threadIdx.x == 0 && atomicAdd(&cgcSplitTiles[" +
       s(2 * tiles()) + " + cgcTile], 1u) == " + s(SK - 1) +
       "u) {\n    cgcSplitTiles[cgcTile] = 0u;\n    cgcSplitTiles[" +
       s(tiles()) + " + cgcTile] = 0u;\n    cgcSplitTiles[" +
       s(2 * tiles()) + " + cgcTile] = 0u;\n  }\n";
  return t;
}

std::string GemmBlock::registerPipeline(const std::string &registers,
                                        const std::string &loads,
                                        const std::string &stores,
                                        int64_t steps,
                                        const std::string &step) const {
  std::string t = registers;
  t += "  auto cgcLoad = [&](long long k0) {\n" + loads + "  };\n";
  t += "  auto cgcStore = [&](int buf) {\n" + stores + "  };\n";
  t += "  cgcLoad(kBegin);\n  cgcStore(0);\n  __syncthreads();\n";
  t += "  for (int kt = 0; kt < " + s(KT) + "; ++kt) {\n";
  t += "    const int buf = kt & 1;\n";
  if (KT > 1)
    t += "    if (kt + 1 < " + s(KT) +
         ") cgcLoad(kBegin + (long long)(kt + 1) * " + ll(BK) + ");\n";
  t += "#pragma unroll\n    for (int kq = 0; kq < " + s(steps) + "; ++kq) {\n" +
       step + "    }\n";
  if (KT > 1)
    t += "    if (kt + 1 < " + s(KT) + ") cgcStore(buf ^ 1);\n";
  t += "    __syncthreads();\n  }\n";
  return t;
}

SmallVector<Launch> GemmBlock::launches(std::string body,
                                        int64_t minBlocks) const {
  SmallVector<Launch> all;
  Launch launch;
  launch.body = std::move(body);
  launch.grid = {gridBlocks(), 1, 1};
  launch.block = {256, 1, 1};
  launch.minBlocks = minBlocks;
  launch.staticState = SK > 1;
  all.push_back(std::move(launch));
  return all;
}

GemmOperand GemmBlock::operandA() const {
  GemmOperand o{"ra", "gm", "tm0", p.loadA, BM, BK, p.aContiguousK, 1, aTerms};
  o.vector = p.aVec4 && o.count() % 4 == 0 ? 4 : 1;
  return o;
}

GemmOperand GemmBlock::operandB() const {
  GemmOperand o{"rb", "gn", "tn0", p.loadB, BN, BK, !p.bContiguousN, 1, bTerms};
  o.vector = p.bVec4 && o.count() % 4 == 0 ? 4 : 1;
  return o;
}

/// `(e)`, or with bounds conditions `terms` the element where they hold
/// and 0 elsewhere.
static std::string guard(ArrayRef<std::string> terms, const std::string &e) {
  if (terms.empty())
    return "(" + e + ")";
  return "((" + llvm::join(terms, " && ") + ") ? (float)(" + e + ") : 0.0f)";
}

std::string GemmBlock::registerLoads(const GemmOperand &o) {
  const int64_t v = o.vector;
  std::string t = "#pragma unroll\n    for (int i = 0; i < " +
                  s(o.count() / v) +
                  "; ++i) {\n      const int e = tid + i * 256;\n";
  t += "      const long long " + o.outerVar + " = " + o.outer0 + " + " +
       o.outer() + ", gk = k0 + " + o.k() + ";\n";
  if (v == 1)
    return t + "      " + o.reg + "[i] = " + guard(o.terms, o.load) +
           ";\n    }\n";
  std::string vload = "*reinterpret_cast<const float4 *>(&(" + o.load + "))";
  return t + "      const float4 x = " +
         (o.terms.empty() ? vload
                          : "(" + llvm::join(o.terms, " && ") + ") ? " +
                                vload + " : make_float4(0.f, 0.f, 0.f, 0.f)") +
         ";\n      " + o.reg + "[4 * i] = x.x; " + o.reg +
         "[4 * i + 1] = x.y; " + o.reg + "[4 * i + 2] = x.z; " + o.reg +
         "[4 * i + 3] = x.w;\n    }\n";
}

} // namespace codegen
} // namespace cgc
