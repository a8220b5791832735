//===- GemmTile.cpp - the tile of a GEMM problem --------------------------===//
//
// The decision the tiled template (Gemm.cpp) prints: which block and
// register tile, and how many K splits, a problem takes. A small cost model
// of an H200 (chooseGemmTile), overridden by CGC_GEMM_TILE for measuring
// tiles against each other.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

int64_t pow2Ceil(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
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
    {96, 64, 6, 4, 0.95},  {64, 96, 4, 6, 0.92},  {64, 64, 4, 4, 0.7},
    {64, 32, 4, 4, 0.6},   {32, 64, 4, 4, 0.6},   {32, 32, 4, 4, 0.5},
    {32, 16, 4, 4, 0.45},  {16, 32, 4, 4, 0.45},  {16, 16, 4, 4, 0.35}};

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
  int64_t depth = t.slices == 1   ? (t.tm * t.tn == 16 ? 32 : 16)
                  : t.slices <= 4 ? 16
                                  : 8;
  t.bk = t.slices * depth;
  return t;
}

/// The tile CGC_GEMM_TILE names (`BMxBNxTMxTN[/SPLIT]`, a shape of
/// kShapes), for measuring tiles against each other (bench/gemm_sweep.py);
/// warns on stderr whenever it is in effect, and when it names no tile.
std::optional<GemmTile> tileOverride() {
  static const std::optional<GemmTile> chosen =
      []() -> std::optional<GemmTile> {
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
      if (parsed && split >= 1 && split <= 64 && shape.bm == bm &&
          shape.bn == bn && shape.tm == tm && shape.tn == tn) {
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
    tile.splitK =
        splittable ? std::min<int64_t>(tile.splitK, ceilDiv(k, tile.bk)) : 1;
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

} // namespace codegen
} // namespace cgc
