//===- GemmParts.h - what the tiled GEMM template's files share -*- C++ -*-===//
//
// Private to the GEMM templates: Gemm.cpp writes the FMA kernel and takes
// its cp.async main loop from GemmAsyncLoop.cpp; GemmTensorCore.cpp writes
// the tensor-core kernel; both share GemmBlock (GemmBlock.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CODEGEN_TEMPLATES_GEMMPARTS_H
#define CGC_LIB_CODEGEN_TEMPLATES_GEMMPARTS_H

#include "Gemm.h"

namespace cgc {
namespace codegen {

/// One operand as a block's threads load a K slice of it into registers:
/// element (vector) e of the slice, e = tid + i * 256, lies at `outer()`
/// along the operand's outer dim (rows of A, columns of B) and `k()` along
/// K; threads walk the contiguous dim; `vector` consecutive elements of
/// the contiguous dim are read at once (4 or 1).
struct GemmOperand {
  std::string reg, outerVar, outer0, load;
  int64_t extent; ///< BM or BN
  int64_t bk;
  bool contiguousK;
  int64_t vector;
  llvm::SmallVector<std::string> terms;
  /// Elements of the slice a thread loads.
  int64_t count() const { return extent * bk / 256; }
  std::string outer() const;
  std::string k() const;
};

/// What both GEMM templates derive from a problem and a block tile (BM x
/// BN outputs, K slices of BK, `splitK` blocks a tile): the grid, a
/// block's K range, the loads' bounds conditions, and the code the two
/// kernels share.
class GemmBlock {
public:
  GemmBlock(const GemmProblem &p, int64_t bm, int64_t bn, int64_t bk,
            int64_t splitK);

protected:
  /// The block's tile: its K range (kBegin, kEnd), first row and column
  /// (tm0, tn0) and batch index (bt).
  std::string blockCoordinates() const;
  /// The layer norm prologue's row statistics (cgcMean, cgcRstd), if the
  /// problem has one; `tid` must be declared.
  std::string rowStatistics() const;
  /// Split-K (SK > 1; else nothing): after the block coordinates, the
  /// tile's arrival, where the first block of a tile stores the output's
  /// terms that do not depend on the product; `cgcSplitTiles` and
  /// `cgcTile` are then in scope.
  std::string splitKArrival() const;
  /// Split-K: `storeLoop` (the loop that adds a block's partial sums,
  /// `p.accumulate` per output) after waiting for the tile's terms, then
  /// the departure (the last block clears the counters). Without split-K,
  /// `storeLoop` itself.
  std::string splitKStore(const std::string &storeLoop) const;
  /// The two operands; `vectorsAllowed`: whether an operand marked vec4
  /// may be read 4 at a time (its count must then be a multiple of 4).
  GemmOperand operandA() const;
  GemmOperand operandB() const;
  /// The loads of an operand's part of the slice at k0 into registers
  /// `o.reg` (floats, zero out of bounds).
  static std::string registerLoads(const GemmOperand &o);
  /// The register-staged K loop both templates run: slice kt + 1 is
  /// loaded into registers (`loads`: a lambda body of k0) while slice kt is
  /// multiplied (`step`: the body of a loop over its `steps` steps kq), then
  /// stored (`stores`: a lambda body of buf) into the other of two shared
  /// buffers; one barrier a slice. `registers` declares the staging
  /// registers.
  std::string registerPipeline(const std::string &registers,
                               const std::string &loads,
                               const std::string &stores, int64_t steps,
                               const std::string &step) const;
  /// The kernel's launch: the product with `body` on the grid, `minBlocks`
  /// the second __launch_bounds__ argument (static state where K is split).
  llvm::SmallVector<Launch> launches(std::string body,
                                     int64_t minBlocks) const;
  /// The grid: batch x tiles x splits.
  int64_t gridBlocks() const { return std::max<int64_t>(1, tiles() * SK); }
  /// Output tiles: batch x row tiles x column tiles.
  int64_t tiles() const { return p.batch * MT * NT; }

  const GemmProblem &p;
  const int64_t BM, BN, BK, MT, NT, SK, kPerSplit, KT;
  const bool kRagged;
  llvm::SmallVector<std::string> aTerms, bTerms;

private:
  std::string rowStatisticsInRegisters() const;
  std::string rowStatisticsTwoPass() const;
};

/// The launches of the tensor-core template (GemmTensorCore.cpp): the
/// product's inputs rounded to `operand` (tf32, f16, bf16) as they are
/// stored into shared memory, mma.sync with f32 accumulators, the caller's
/// epilogue per output. Fails (with an error on `where`) where the problem
/// cannot take the config.
mlir::FailureOr<llvm::SmallVector<Launch>>
writeTensorCoreGemm(const GemmProblem &p, KernelConfigAttr config,
                    mlir::Operation *where);

/// Register rows/columns of a thread are read in groups of this many
/// (float4, float2 or single floats), groups `group * threads` apart.
inline int64_t groupOf(int64_t t) {
  return t % 4 == 0 ? 4 : t % 2 == 0 ? 2 : 1;
}

/// Offset of register row/column `i` of a thread in its tile, for a
/// per-thread extent `t` and `threads` threads along that dim.
std::string lane(llvm::StringRef var, llvm::StringRef i, int64_t t,
                 int64_t threads);

/// The K loop of the cp.async template (after cgc_acc is declared): each
/// K slice is copied global -> shared by cp.async, `tile.stages` slices in
/// flight, so the copies take no registers and the kernel fits two blocks
/// a multiprocessor. An operand contiguous along K is stored [outer][BK]
/// with its 4-float chunks XOR-swizzled by (outer / group) % (BK / 4), so
/// that the four distinct rows a warp reads at once (float4 over 4 k) fall
/// in different banks; one contiguous along its outer dim is stored
/// [BK][outer] and read as rows, as in the register template. `KT`: K
/// slices of a block; `aTerms`/`bTerms`: the operands' bounds conditions.
std::string pipelinedMainLoop(const GemmProblem &p, const GemmTile &tile,
                              int64_t KT, llvm::ArrayRef<std::string> aTerms,
                              llvm::ArrayRef<std::string> bTerms);

} // namespace codegen
} // namespace cgc

#endif // CGC_LIB_CODEGEN_TEMPLATES_GEMMPARTS_H
