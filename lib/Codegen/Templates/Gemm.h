//===- Gemm.h - the tiled matrix-product template ---------------*- C++ -*-===//
//
// Private to lib/Codegen: the shared-memory tiled fp32 GEMM that matmul,
// gemm and convolution groups (1x1 and implicit-GEMM) are written with.
// The caller describes its operands as element expressions; the template
// owns tiling, the K loop (double-buffered through registers, or a
// multi-stage cp.async pipeline for the large tiles) and the bounds checks,
// and runs the caller's epilogue once per output element.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CODEGEN_TEMPLATES_GEMM_H
#define CGC_LIB_CODEGEN_TEMPLATES_GEMM_H

#include "../KernelUtils.h"

#include <string>

namespace cgc {
namespace codegen {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// C[bt][m][n] = sum_k A[bt](m, k) * B[bt](k, n) for bt < batch.
struct GemmProblem {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  /// Code run once per block, after `bt` (long long, the batch index) is
  /// declared: batch offsets the loads use.
  std::string blockSetup;
  /// Expressions of A at (gm, gk) and B at (gk, gn) (long long variables,
  /// always in range when evaluated; implicit-GEMM convolutions return 0
  /// for padding themselves).
  std::string loadA, loadB;
  /// Which index is contiguous in memory: consecutive threads load
  /// consecutive addresses (A along k, else along m; B along n, else k).
  bool aContiguousK = true, bContiguousN = true;
  /// Whether loadA/loadB are lvalues that may be read 4 at a time along
  /// the contiguous dim (16-byte aligned at every 4th element; that dim a
  /// multiple of 4).
  bool aVec4 = false, bVec4 = false;
  /// Whether loadA/loadB are lvalues of a 16-bit array in the tensor-core
  /// operand type that may be copied 8 at a time along the contiguous dim
  /// (16-byte aligned at every 8th element; that dim a multiple of 8): the
  /// cp.async loop over 16-bit stages needs both.
  bool aHalf8 = false, bHalf8 = false;
  /// A layer norm of A's rows folded into the loads: when set, the block
  /// first computes the mean and 1/stddev of its rows of this expression
  /// (raw A at (gm, gk)) into cgcMean[gm - tm0] / cgcRstd[gm - tm0], which
  /// loadA uses.
  std::string rowStatsInput;
  double rowStatsEpsilon = 0;
  /// Per output element, with `bt`, `gm`, `gn` and `cgc_v` (the float
  /// accumulator) in scope: the code that stores it (and any epilogue).
  std::string epilogue;
  /// Set when the stored value is `cgc_v * scale + terms independent of
  /// cgc_v` (a bias, a residual): K may then be split across blocks. `init`
  /// stores the value for cgc_v = 0 (the first block of a tile to arrive
  /// runs it, GemmBlock::splitKArrival), `accumulate` adds a
  /// block's partial sum cgc_v to it atomically (same variables in scope).
  bool splittable = false;
  std::string init, accumulate;
};

/// Block tile of the template, as the kernel's #cgc.kernel_config says
/// (chosen by --cgc-select-kernel-config): BM x BN outputs per block, TM x
/// TN per thread, BK deep K slices per iteration. 256 threads form `slices`
/// groups that each take BK / slices of every K slice (their partial sums
/// meet in shared memory at the end); `splitK` blocks share the K range of
/// one tile; `asyncCopy`: the cp.async main loop with `stages` shared-memory
/// stages; `minBlocks`: the second __launch_bounds__ argument.
struct GemmTile {
  int64_t bm = 64, bn = 64, bk = 16, tm = 4, tn = 4, slices = 1, splitK = 1;
  int64_t stages = 2, minBlocks = 1;
  bool asyncCopy = false;
};

/// The tile a gemm or conv_gemm config names.
GemmTile gemmTileOf(KernelConfigAttr config);

/// The launches of the tiled template (Gemm.cpp; 256 threads a block): one,
/// split-K included. Fails (with an error on
/// `where`) when the problem cannot take the tile: a split of K where the
/// epilogue is not linear, cp.async where an operand is not a plain
/// 16-byte-aligned array.
mlir::FailureOr<llvm::SmallVector<Launch>>
writeTiledGemm(const GemmProblem &p, GemmTile tile, mlir::Operation *where);

/// The launches of the template a gemm or conv_gemm config names: the
/// tensor-core template where it has an `operand` type, else the tiled FMA
/// template.
mlir::FailureOr<llvm::SmallVector<Launch>>
writeGemm(const GemmProblem &p, KernelConfigAttr config,
          mlir::Operation *where);

} // namespace codegen
} // namespace cgc

#endif // CGC_LIB_CODEGEN_TEMPLATES_GEMM_H
