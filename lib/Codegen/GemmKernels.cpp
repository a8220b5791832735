//===- GemmKernels.cpp - tiled matrix-product templates -------------------===//
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

#include "GemmKernels.h"
#include "cgc/Codegen/KernelGen.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t pow2Ceil(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

std::string s(int64_t v) { return std::to_string(v); }

/// Register rows/columns of a thread are read in groups of this many
/// (float4, float2 or single floats), groups `group * threads` apart.
int64_t groupOf(int64_t t) { return t % 4 == 0 ? 4 : t % 2 == 0 ? 2 : 1; }

/// Offset of register row/column `i` of a thread in its tile, for a
/// per-thread extent `t` and `threads` threads along that dim.
std::string lane(StringRef var, StringRef i, int64_t t, int64_t threads) {
  int64_t g = groupOf(t);
  if (g > 1)
    return "((" + i.str() + ") / " + s(g) + " * " + s(g * threads) + " + " +
           var.str() + " * " + s(g) + " + (" + i.str() + ") % " + s(g) + ")";
  return "(" + var.str() + " * " + s(t) + " + (" + i.str() + "))";
}

/// The register tiles the template offers and their slice counts.
struct TileShape {
  int64_t bm, bn, tm, tn;
  /// Relative FMA throughput of the register tile (smem reads per FMA,
  /// slice reduction).
  double efficiency;
};
// The large tiles' efficiencies are fitted to bench/gemm_sweep.py on the
// H200 (docs/kernels.md): an SM ran 50-63 FMAs a clock with any of them, one
// block of 8 warps or two, so the choice is mostly the work of the busiest
// multiprocessor (the wave quantization), the efficiency a tie-breaker.
const TileShape kShapes[] = {
    {128, 128, 8, 8, 1.0}, {128, 96, 8, 6, 0.93}, {96, 128, 6, 8, 0.97},
    {96, 96, 6, 6, 0.95},  {128, 64, 8, 4, 0.97}, {64, 128, 4, 8, 0.97},
    {96, 64, 6, 4, 0.95},  {64, 96, 4, 6, 0.92},
    {64, 64, 4, 4, 0.7},   {64, 32, 4, 4, 0.6},   {32, 64, 4, 4, 0.6},
    {32, 32, 4, 4, 0.5},   {32, 16, 4, 4, 0.45},  {16, 32, 4, 4, 0.45},
    {16, 16, 4, 4, 0.35}};

GemmTile tileOf(const TileShape &shape) {
  GemmTile t;
  t.bm = shape.bm;
  t.bn = shape.bn;
  t.tm = shape.tm;
  t.tn = shape.tn;
  int64_t perSlice = (t.bm / t.tm) * (t.bn / t.tn);
  t.slices = 256 / perSlice;
  // K depth per slice and iteration: enough FMAs between barriers to cover
  // the next slice's load latency, within 48 KB of shared memory.
  int64_t depth = t.slices == 1 ? (t.tm * t.tn == 16 ? 32 : 16)
                  : t.slices <= 4 ? 16
                                  : 8;
  t.bk = t.slices * depth;
  return t;
}


/// Shared-memory stages of the cp.async main loop: as many as fit in the
/// 48 KB of static shared memory (at most 4).
int64_t pipelineStages(const GemmTile &t) {
  return std::min<int64_t>(4, 49152 / (4 * (t.bm + t.bn) * t.bk));
}

/// Whether a problem and tile take the cp.async main loop: the large
/// register tiles (one slice), both operands plain 16-byte-aligned arrays
/// (cp.async copies 16 bytes from an address), no folded layer norm.
bool usesAsyncCopies(const GemmProblem &p, const GemmTile &t) {
  return t.slices == 1 && t.tm * t.tn >= 24 && t.bk % 16 == 0 && p.aVec4 &&
         p.bVec4 && p.rowStatsInput.empty() && pipelineStages(t) >= 2;
}

/// The K loop of the cp.async template (after cgc_acc is declared): each
/// K slice is copied global -> shared by cp.async, `stages` slices in
/// flight, so the copies take no registers and the kernel fits two blocks
/// a multiprocessor. An operand contiguous along K is stored [outer][BK]
/// with its 4-float chunks XOR-swizzled by (outer / group) % (BK / 4), so
/// that the four distinct rows a warp reads at once (float4 over 4 k) fall
/// in different banks; one contiguous along its outer dim is stored
/// [BK][outer] and read as rows, as in the register template.
std::string pipelinedMainLoop(const GemmProblem &p, const GemmTile &tile,
                              int64_t KT, ArrayRef<std::string> aTerms,
                              ArrayRef<std::string> bTerms) {
  const int64_t BM = tile.bm, BN = tile.bn, BK = tile.bk, TM = tile.tm,
                TN = tile.tn, TY = BM / TM, TX = BN / TN, C = BK / 4;
  const int64_t stages = pipelineStages(tile), SF = (BM + BN) * BK;
  // K steps a fragment read covers (float4 or float2 along K).
  // (float2 steps of 2 measured no fewer registers under ptxas.)
  const int64_t KV = 4;
  struct Operand {
    std::string base, outerVar, outer0, load, thread;
    int64_t extent, perThread, threads;
    bool contiguousK;
    ArrayRef<std::string> terms;
  };
  Operand ops[2] = {
      {"cgcAs", "gm", "tm0", p.loadA, "ty", BM, TM, TY, p.aContiguousK,
       aTerms},
      {"cgcBs", "gn", "tn0", p.loadB, "tx", BN, TN, TX, !p.bContiguousN,
       bTerms}};
  std::string t;
  // Copies of one K slice into stage `st`.
  t += "  auto cgcIssue = [&](int st, long long k0) {\n";
  t += "    float *const cgcAs = cgcSm + st * " + s(SF) +
       ", *const cgcBs = cgcAs + " + s(BM * BK) + ";\n";
  for (const Operand &o : ops) {
    const int64_t vectors = o.extent * BK / 4, g = groupOf(o.perThread);
    t += "#pragma unroll\n    for (int i = 0; i < " + s(ceilDiv(vectors, 256)) +
         "; ++i) {\n      const int e = tid + i * 256;\n";
    if (vectors % 256)
      t += "      if (e >= " + s(vectors) + ") break;\n";
    std::string outer, k, at;
    if (o.contiguousK) {
      outer = "e / " + s(C);
      k = "(e % " + s(C) + ") * 4";
      at = "(e / " + s(C) + ") * " + s(BK) + " + ((e % " + s(C) + ") ^ (e / " +
           s(C) + " / " + s(g) + " % " + s(C) + ")) * 4";
    } else {
      outer = "(e % " + s(o.extent / 4) + ") * 4";
      k = "e / " + s(o.extent / 4);
      at = "e * 4";
    }
    t += "      const long long " + o.outerVar + " = " + o.outer0 + " + " +
         outer + ", gk = k0 + " + k + ";\n";
    t += "      cgc_cp_async16(" + o.base + " + " + at + ", &(" + o.load +
         "), " + (o.terms.empty() ? "true" : llvm::join(o.terms, " && ")) +
         ");\n    }\n";
  }
  t += "  };\n";
  t += "#pragma unroll\n  for (int st = 0; st < " + s(stages - 1) +
       "; ++st) {\n    if (st < " + s(KT) + ") cgcIssue(st, kBegin + st * " +
       ll(BK) + ");\n    cgc_cp_async_commit();\n  }\n";
  t += "  for (int kt = 0; kt < " + s(KT) + "; ++kt) {\n";
  // Slice kt has landed (at most stages - 2 younger groups in flight); the
  // barrier also ends every thread's reads of slice kt - 1, whose stage
  // the next copies overwrite.
  t += "    cgc_cp_async_wait<" + s(stages - 2) + ">();\n    __syncthreads();\n";
  t += "    if (kt + " + s(stages - 1) + " < " + s(KT) + ") cgcIssue((kt + " +
       s(stages - 1) + ") % " + s(stages) + ", kBegin + (long long)(kt + " +
       s(stages - 1) + ") * " + ll(BK) + ");\n    cgc_cp_async_commit();\n";
  t += "    const float *const cgcAs = cgcSm + (kt % " + s(stages) + ") * " +
       s(SF) + ", *const cgcBs = cgcAs + " + s(BM * BK) + ";\n";
  t += "#pragma unroll\n    for (int kq = 0; kq < " + s(BK) + "; kq += " +
       s(KV) + ") {\n      float a[" + s(KV) + "][" + s(TM) + "], b[" + s(KV) +
       "][" + s(TN) + "];\n";
  for (const Operand &o : ops) {
    std::string dst = o.base == "cgcAs" ? "a" : "b";
    const int64_t g = groupOf(o.perThread);
    if (o.contiguousK) {
      // Register row i: 4 consecutive k in one float4.
      std::string key =
          g > 1 ? "(" + o.thread + " + i / " + s(g) + " * " + s(o.threads) +
                      ") % " + s(C)
                : "(" + o.thread + " * " + s(o.perThread) + " + i) % " + s(C);
      std::string vt = KV == 4 ? "float4" : "float2";
      t += "#pragma unroll\n      for (int i = 0; i < " + s(o.perThread) +
           "; ++i) {\n        const " + vt + " q = *reinterpret_cast<const " +
           vt + " *>(&" + o.base + "[" +
           lane(o.thread, "i", o.perThread, o.threads) + " * " + s(BK) +
           " + ((kq / 4) ^ (" + key + ")) * 4 + kq % 4]);\n";
      t += "        " + dst + "[0][i] = q.x; " + dst + "[1][i] = q.y;";
      if (KV == 4)
        t += " " + dst + "[2][i] = q.z; " + dst + "[3][i] = q.w;";
      t += "\n      }\n";
      continue;
    }
    // Row kq + c of the slice: the thread's groups of 4 (or 2) outputs.
    t += "#pragma unroll\n      for (int c = 0; c < " + s(KV) + "; ++c) {\n";
    if (g > 1) {
      const char *type = g == 4 ? "float4" : "float2";
      t += "#pragma unroll\n        for (int g = 0; g < " + s(o.perThread / g) +
           "; ++g) {\n          const " + type + " q = *reinterpret_cast<const " +
           type + " *>(&" + o.base + "[(kq + c) * " + s(o.extent) + " + g * " +
           s(g * o.threads) + " + " + o.thread + " * " + s(g) + "]);\n";
      t += "          " + dst + "[c][" + s(g) + " * g] = q.x; " + dst + "[c][" +
           s(g) + " * g + 1] = q.y;";
      if (g == 4)
        t += " " + dst + "[c][4 * g + 2] = q.z; " + dst + "[c][4 * g + 3] = q.w;";
      t += "\n        }\n";
    } else {
      t += "#pragma unroll\n        for (int i = 0; i < " + s(o.perThread) +
           "; ++i) " + dst + "[c][i] = " + o.base + "[(kq + c) * " +
           s(o.extent) + " + " + o.thread + " * " + s(o.perThread) +
           " + i];\n";
    }
    t += "      }\n";
  }
  t += "#pragma unroll\n      for (int c = 0; c < " + s(KV) +
       "; ++c)\n#pragma unroll\n"
       "        for (int i = 0; i < " + s(TM) + "; ++i)\n#pragma unroll\n"
       "          for (int j = 0; j < " + s(TN) +
       "; ++j) cgc_acc[i][j] = fmaf(a[c][i], b[c][j], cgc_acc[i][j]);\n"
       "    }\n  }\n";
  return t;
}

/// The tile CGC_GEMM_TILE names (`BMxBNxTMxTN[/SPLIT]`, a shape of
/// kShapes), for measuring tiles against each other (bench/gemm_sweep.py);
/// warns on stderr whenever it is in effect, and when it names no tile.
std::optional<GemmTile> tileOverride() {
  static const std::optional<GemmTile> chosen = []() -> std::optional<GemmTile> {
    const char *env = std::getenv("CGC_GEMM_TILE");
    if (!env || !*env)
      return std::nullopt;
    long bm = 0, bn = 0, tm = 0, tn = 0, split = 1;
    int used = 0, splitUsed = 0;
    bool parsed =
        std::sscanf(env, "%ldx%ldx%ldx%ld%n", &bm, &bn, &tm, &tn, &used) == 4 &&
        used > 0 &&
        (env[used] == 0 ||
         (std::sscanf(env + used, "/%ld%n", &split, &splitUsed) == 1 &&
          env[used + splitUsed] == 0));
    for (const TileShape &shape : kShapes)
      if (parsed && split >= 1 && split <= 64 &&
          shape.bm == bm && shape.bn == bn && shape.tm == tm &&
          shape.tn == tn) {
        GemmTile tile = tileOf(shape);
        tile.splitK = split;
        return tile;
      }
    llvm::errs() << "cgc: warning: CGC_GEMM_TILE='" << env
                 << "' names no tile of the GEMM template (BMxBNxTMxTN[/SPLIT]"
                    " with one of:";
    for (const TileShape &shape : kShapes)
      llvm::errs() << " " << shape.bm << "x" << shape.bn << "x" << shape.tm
                   << "x" << shape.tn;
    llvm::errs() << "); the cost model chooses\n";
    return std::nullopt;
  }();
  return chosen;
}

} // namespace

GemmTile chooseGemmTile(int64_t batch, int64_t m, int64_t n, int64_t k,
                        bool splittable, bool asyncCopies) {
  if (std::optional<GemmTile> forced = tileOverride()) {
    GemmTile tile = *forced;
    tile.splitK = splittable ? std::min<int64_t>(tile.splitK,
                                                 ceilDiv(k, tile.bk))
                             : 1;
    llvm::errs() << "cgc: warning: CGC_GEMM_TILE: GEMM M=" << m << " N=" << n
                 << " K=" << k << " batch=" << batch << " takes " << tile.bm
                 << "x" << tile.bn << " (" << tile.tm << "x" << tile.tn
                 << " a thread), split-K " << tile.splitK << "\n";
    return tile;
  }
  constexpr double kMultiprocessors = 132, kLatency = 700, kFmaPerClock = 128;
  GemmTile best;
  double bestCost = -1;
  int64_t maxM = std::max<int64_t>(16, pow2Ceil(m)),
          maxN = std::max<int64_t>(16, pow2Ceil(n));
  for (const TileShape &shape : kShapes) {
    if (shape.bm > maxM || shape.bn > maxN)
      continue;
    GemmTile tile = tileOf(shape);
    int64_t blocks = batch * ceilDiv(m, tile.bm) * ceilDiv(n, tile.bn);
    int64_t kTiles = ceilDiv(k, tile.bk);
    // Resident blocks a multiprocessor by registers (8x8: ~150 a thread,
    // 8x6: ~130, 8x4: ~100, 4x4: ~80, of 64K).
    int64_t area = tile.tm * tile.tn;
    // The cp.async template keeps two large-tile blocks a multiprocessor.
    int64_t resident = area >= 36 ? (asyncCopies ? 2 : 1) : area >= 24 ? 2 : 3;
    for (int64_t split = 1; split <= (splittable ? 16 : 1); split *= 2) {
      if (split > 1 && ceilDiv(kTiles, split) < 2)
        break;
      int64_t total = blocks * split;
      double perSm = std::ceil(total / kMultiprocessors);
      double waves = std::ceil(perSm / resident);
      double sharing = std::min<double>(perSm, resident);
      double iteration =
          std::max(kLatency, tile.bm * tile.bn * tile.bk * sharing /
                                 (shape.efficiency * kFmaPerClock));
      // Per wave the first loads and the epilogue are not overlapped; a
      // split adds the initializing launch and its partial sums' atomic
      // additions (8 a clock per multiprocessor: the sweep's split-K 4 of
      // 1024 x 384 outputs cost about that).
      double cost = waves * (2 * kLatency + ceilDiv(kTiles, split) * iteration);
      if (split > 1)
        cost += 2000 + (double)batch * m * n * split / (8 * kMultiprocessors);
      if (bestCost < 0 || cost < bestCost) {
        bestCost = cost;
        best = tile;
        best.splitK = split;
      }
    }
  }
  return best;
}

SmallVector<Launch> writeTiledGemm(const GemmProblem &p, GemmTile tile) {
  const int64_t BM = tile.bm, BN = tile.bn, BK = tile.bk;
  const int64_t TM = tile.tm, TN = tile.tn, S = tile.slices;
  const int64_t TY = BM / TM, TX = BN / TN, TPS = TY * TX, KS = BK / S;
  const int64_t LA = BM * BK / 256, LB = BN * BK / 256;
  const int64_t MT = ceilDiv(p.m, BM), NT = ceilDiv(p.n, BN);
  const int64_t SK = p.splittable ? tile.splitK : 1;
  // K range of one block: whole tiles, the last split may be shorter.
  const int64_t kPerSplit = ceilDiv(ceilDiv(p.k, BK), SK) * BK;
  const int64_t KT = ceilDiv(std::min(p.k, kPerSplit), BK);
  const bool kRagged = p.k % BK != 0 || (SK > 1 && p.k % kPerSplit != 0);
  auto guard = [](SmallVector<std::string> terms, const std::string &e) {
    if (terms.empty())
      return "(" + e + ")";
    return "((" + llvm::join(terms, " && ") + ") ? (float)(" + e +
           ") : 0.0f)";
  };
  SmallVector<std::string> aTerms, bTerms;
  if (p.m % BM)
    aTerms.push_back("gm < " + ll(p.m));
  if (kRagged) {
    aTerms.push_back("gk < kEnd");
    bTerms.push_back("gk < kEnd");
  }
  if (p.n % BN)
    bTerms.push_back("gn < " + ll(p.n));

  const int64_t tileFloats = 2 * BK * (BM + 4) + 2 * BK * (BN + 4);
  const int64_t redFloats = S > 1 ? TM * TN * 256 : 0;
  std::string t;
  t += "  // tiled GEMM " + s(BM) + "x" + s(BN) + "x" + s(BK) + ", " + s(TM) +
       "x" + s(TN) + " per thread, " + s(S) + " slice(s), split-K " + s(SK) +
       ": M=" + s(p.m) + " N=" + s(p.n) + " K=" + s(p.k) +
       " batch=" + s(p.batch) + "\n";
  const bool pipelined = usesAsyncCopies(p, tile);
  if (pipelined)
    t += "  // cp.async main loop, " + s(pipelineStages(tile)) +
         " stages\n  __shared__ __align__(16) float cgcSm[" +
         s(pipelineStages(tile) * (BM + BN) * BK) + "];\n";
  else
    t += "  __shared__ __align__(16) float cgcSm[" +
         s(std::max(tileFloats, redFloats)) + "];\n";
  if (!pipelined) {
    t += "  float (*cgcAs)[" + s(BK) + "][" + s(BM + 4) + "] = reinterpret_cast<"
         "float (*)[" + s(BK) + "][" + s(BM + 4) + "]>(cgcSm);\n";
    t += "  float (*cgcBs)[" + s(BK) + "][" + s(BN + 4) + "] = reinterpret_cast<"
         "float (*)[" + s(BK) + "][" + s(BN + 4) + "]>(cgcSm + " +
         s(2 * BK * (BM + 4)) + ");\n";
  }
  // Threads of a slice: a warp covers 8 x 4 of the (tx, ty) grid where it
  // fits (its reads of a k row of the tiles are 128 bytes of B and 64 of A,
  // against 256 and 32 for a 16 x 2 strip: fewer shared-memory wavefronts
  // a multiply), else rows of TX threads.
  const bool warpPatch = TPS % 32 == 0 && TX % 8 == 0 && TY % 4 == 0;
  t += "  const int tid = threadIdx.x, slice = tid / " + s(TPS) + ";\n";
  if (warpPatch)
    t += "  const int cgcW = (tid % " + s(TPS) + ") / 32, cgcL = tid % 32;\n"
         "  const int tx = cgcW % " + s(TX / 8) + " * 8 + cgcL % 8, ty = cgcW / " +
         s(TX / 8) + " * 4 + cgcL / 8;\n";
  else
    t += "  const int tx = tid % " + s(TX) + ", ty = (tid % " + s(TPS) + ") / " +
         s(TX) + ";\n";
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
  t += p.blockSetup;
  if (!p.rowStatsInput.empty() && p.k % 32 == 0 && p.k / 32 <= 32) {
    // Row statistics of the block's rows, a warp per row: the row is read
    // once into registers (K / 32 values a lane), U rows of a warp at a
    // time so that all their loads are in flight together; mean, then the
    // squared deviations from the registers.
    const int64_t KL = p.k / 32;
    int64_t U = 1;
    while (U * 2 <= BM / 8 && U * 2 * KL <= 64)
      U *= 2;
    t += "  __shared__ float cgcMean[" + s(BM) + "], cgcRstd[" + s(BM) +
         "];\n";
    t += "  for (int rr0 = tid / 32; rr0 < " + s(BM) + "; rr0 += " +
         s(8 * U) + ") {\n    const int lane = tid % 32;\n    float xv[" +
         s(U) + "][" + s(KL) + "];\n";
    t += "#pragma unroll\n    for (int u = 0; u < " + s(U) +
         "; ++u) {\n      const long long gm = tm0 + rr0 + u * 8;\n"
         "#pragma unroll\n      for (int q = 0; q < " + s(KL) +
         "; ++q) {\n        const long long gk = lane + q * 32;\n"
         "        xv[u][q] = rr0 + u * 8 < " + s(BM) + " && gm < " + ll(p.m) +
         " ? (float)(" + p.rowStatsInput + ") : 0.0f;\n      }\n    }\n";
    t += "#pragma unroll\n    for (int u = 0; u < " + s(U) +
         "; ++u) {\n      float sum = 0.0f;\n#pragma unroll\n      for "
         "(int q = 0; q < " + s(KL) + "; ++q) sum += xv[u][q];\n"
         "      for (int o = 16; o > 0; o >>= 1) sum += "
         "__shfl_xor_sync(0xffffffffu, sum, o);\n      const float mean = "
         "sum / " + s(p.k) + ".0f;\n      float sq = 0.0f;\n#pragma unroll\n"
         "      for (int q = 0; q < " + s(KL) + "; ++q) { const float d = "
         "xv[u][q] - mean; sq += d * d; }\n      for (int o = 16; o > 0; o "
         ">>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, o);\n      if (lane "
         "== 0 && rr0 + u * 8 < " + s(BM) + ") { cgcMean[rr0 + u * 8] = mean; "
         "cgcRstd[rr0 + u * 8] = 1.0f / sqrtf(sq / " + s(p.k) + ".0f + " +
         doubleLiteral(p.rowStatsEpsilon) + "f); }\n    }\n  }\n"
         "  __syncthreads();\n";
  } else if (!p.rowStatsInput.empty()) {
    // Row statistics of the block's rows, a warp per row (two passes).
    t += "  __shared__ float cgcMean[" + s(BM) + "], cgcRstd[" + s(BM) +
         "];\n";
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
  }
  t += "  float cgc_acc[" + s(TM) + "][" + s(TN) + "];\n";
  t += "#pragma unroll\n  for (int i = 0; i < " + s(TM) +
       "; ++i)\n#pragma unroll\n    for (int j = 0; j < " + s(TN) +
       "; ++j) cgc_acc[i][j] = 0.0f;\n";
  if (pipelined) {
    t += pipelinedMainLoop(p, tile, KT, aTerms, bTerms);
  } else {
    t += "  float ra[" + s(LA) + "], rb[" + s(LB) + "];\n";
    // One operand's loads (into registers) and stores (into shared memory).
    // Element e of a slice is (outer, k) for A (outer = row) and (k, outer)
    // for B (outer = column); threads walk the contiguous dim. Vector loads
    // read 4 consecutive elements of the contiguous dim at once.
    struct Operand {
      std::string reg, smem, outerVar, outer0, load;
      int64_t extent; // BM or BN
      bool contiguousK, vec;
      SmallVector<std::string> terms;
    };
    Operand opA{"ra", "cgcAs", "gm", "tm0", p.loadA, BM,
                p.aContiguousK, p.aVec4, aTerms};
    Operand opB{"rb", "cgcBs", "gn", "tn0", p.loadB, BN,
                !p.bContiguousN, p.bVec4, bTerms};
    std::string loads, stores;
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
        stores += "      " + o->smem + "[buf][" + k + "][" + outer + "] = " +
                  o->reg + "[i];\n    }\n";
        continue;
      }
      std::string vload = "*reinterpret_cast<const float4 *>(&(" + o->load + "))";
      loads += "      const float4 x = " +
               (o->terms.empty() ? vload
                                 : "(" + llvm::join(o->terms, " && ") + ") ? " +
                                       vload + " : make_float4(0.f, 0.f, 0.f, 0.f)") +
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
        stores += "      *reinterpret_cast<float4 *>(&" + o->smem + "[buf][" + k +
                  "][" + outer + "]) = make_float4(" + o->reg + "[4 * i], " +
                  o->reg + "[4 * i + 1], " + o->reg + "[4 * i + 2], " + o->reg +
                  "[4 * i + 3]);\n    }\n";
      }
    }
    t += "  auto cgcLoad = [&](long long k0) {\n" + loads + "  };\n";
    t += "  auto cgcStore = [&](int buf) {\n" + stores + "  };\n";
    t += "  cgcLoad(kBegin);\n  cgcStore(0);\n  __syncthreads();\n";
    t += "  for (int kt = 0; kt < " + s(KT) + "; ++kt) {\n";
    t += "    const int buf = kt & 1;\n";
    if (KT > 1)
      t += "    if (kt + 1 < " + s(KT) + ") cgcLoad(kBegin + (long long)(kt + "
           "1) * " + ll(BK) + ");\n";
    t += "#pragma unroll\n    for (int kq = 0; kq < " + s(KS) + "; ++kq) {\n";
    t += "      const int kk = " + (S > 1 ? "slice * " + s(KS) + " + " : "") +
         "kq;\n";
    t += "      float a[" + s(TM) + "], b[" + s(TN) + "];\n";
    auto readRow = [&](StringRef dst, StringRef arr, StringRef var, int64_t n,
                       int64_t threads) {
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
             dst.str() + "[i] = " + arr.str() + "[buf][kk][" + var.str() +
             " * " + s(n) + " + i];\n";
      }
      return r;
    };
    t += readRow("a", "cgcAs", "ty", TM, TY);
    t += readRow("b", "cgcBs", "tx", TN, TX);
    t += "#pragma unroll\n      for (int i = 0; i < " + s(TM) +
         "; ++i)\n#pragma unroll\n        for (int j = 0; j < " + s(TN) +
         "; ++j) cgc_acc[i][j] = fmaf(a[i], b[j], cgc_acc[i][j]);\n    }\n";
    if (KT > 1)
      t += "    if (kt + 1 < " + s(KT) + ") cgcStore(buf ^ 1);\n";
    t += "    __syncthreads();\n  }\n";
  }
  std::string store = SK > 1 ? p.accumulate : p.epilogue;
  if (S > 1) {
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
  } else {
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
  }
  SmallVector<Launch> launches;
  if (SK > 1) {
    // The output's terms that do not depend on the product, first.
    int64_t total = p.batch * p.m * p.n;
    Launch init;
    init.body = "  // split-K initialization: the epilogue at a zero product\n"
                "  const long long f = (long long)blockIdx.x * blockDim.x + "
                "threadIdx.x;\n  if (f >= " +
                ll(total) + ") return;\n  const long long bt = f / " +
                ll(p.m * p.n) + ", gm = (f / " + ll(p.n) + ") % " + ll(p.m) +
                ", gn = f % " + ll(p.n) + ";\n  const float cgc_v = 0.0f;\n  {\n" +
                p.init + "  }\n";
    init.grid = {ceilDiv(total, 256), 1, 1};
    init.block = {256, 1, 1};
    launches.push_back(std::move(init));
  }
  Launch launch;
  launch.body = std::move(t);
  launch.grid = {std::max<int64_t>(1, p.batch * MT * NT * SK), 1, 1};
  launch.block = {256, 1, 1};
  // Two blocks a multiprocessor where the grid has more blocks than the
  // 132 multiprocessors (ptxas then caps a thread at 128 registers); a
  // grid of one wave keeps the registers for fragment prefetching.
  launch.minBlocks = pipelined && launch.grid[0] > 132 ? 2 : 1;
  launches.push_back(std::move(launch));
  return launches;
}

FailureOr<SmallVector<Launch>> writeGemmConv(ConvOp conv,
                                             ParamResolver &params) {
  Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  if (xs.size() != 4 || conv.getGroup() != 1 || !elementType(y).isF32() ||
      !elementType(x).isF32() || !elementType(w).isF32())
    return failure();
  if (conv.getBias() && !elementType(conv.getBias()).isF32())
    return failure();
  ArrayRef<int64_t> strides = conv.getStrides(), dil = conv.getDilations(),
                    pads = conv.getPads();
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return failure();
  const int64_t batch = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t Co = ys[1], Ho = ys[2], Wo = ys[3];
  const int64_t KH = ws[2], KW = ws[3];
  if (ws[1] != C || ws[0] != Co)
    return failure();
  const int64_t HWo = Ho * Wo, window = KH * KW;
  bool pointwise = KH == 1 && KW == 1 && strides[0] == 1 && strides[1] == 1 &&
                   pads[0] == 0 && pads[1] == 0 && pads[2] == 0 &&
                   pads[3] == 0 && H == Ho && W == Wo;
  GemmProblem p;
  p.m = Co;
  p.n = batch * HWo;
  p.k = C * window;
  std::string px = params.input(x), pw = params.input(w);
  p.loadA = pw + "[gm * " + ll(p.k) + " + gk]";
  p.aContiguousK = true;
  p.bContiguousN = true;
  p.aVec4 = p.k % 4 == 0 && plannedOffset(w) % 16 == 0;
  std::string img = "(gn / " + ll(HWo) + ")", pix = "(gn % " + ll(HWo) + ")";
  if (pointwise) {
    p.loadB = px + "[(" + img + " * " + ll(C) + " + gk) * " + ll(HWo) +
              " + " + pix + "]";
    p.bVec4 = HWo % 4 == 0 && plannedOffset(x) % 16 == 0;
  } else {
    // Input pixel of (gk, gn): channel, window position, output position.
    std::string ci = "(gk / " + ll(window) + ")";
    std::string ky = "((gk % " + ll(window) + ") / " + ll(KW) + ")";
    std::string kx = "(gk % " + ll(KW) + ")";
    std::string hi = "(" + pix + " / " + ll(Wo) + " * " + ll(strides[0]) +
                     " - " + ll(pads[0]) + " + " + ky + " * " + ll(dil[0]) +
                     ")";
    std::string wi = "(" + pix + " % " + ll(Wo) + " * " + ll(strides[1]) +
                     " - " + ll(pads[1]) + " + " + kx + " * " + ll(dil[1]) +
                     ")";
    p.loadB = "[&]() -> float { const long long hi = " + hi +
              ", wi = " + wi + "; return (hi >= 0 && hi < " + ll(H) +
              " && wi >= 0 && wi < " + ll(W) + ") ? " + px + "[((" + img +
              " * " + ll(C) + " + " + ci + ") * " + ll(H) + " + hi) * " +
              ll(W) + " + wi] : 0.0f; }()";
  }
  std::string value = "cgc_v";
  if (Value b = conv.getBias())
    value = "(cgc_v + " + params.input(b) + "[gm])";
  p.epilogue = "      const long long w = (gn / " + ll(HWo) + " * " + ll(Co) +
               " + gm) * " + ll(HWo) + " + gn % " + ll(HWo) + ";\n" +
               params.store(y, value, "w");
  return writeTiledGemm(p, chooseGemmTile(1, p.m, p.n, p.k, false,
                                          p.aVec4 && p.bVec4));
}

} // namespace codegen
} // namespace cgc
