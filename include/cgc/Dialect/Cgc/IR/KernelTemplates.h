//===- KernelTemplates.h - what the kernel templates can serve --*- C++ -*-===//
//
// The contract between `--cgc-select-kernel-config`, the verifier of
// `cgc.kernel` configs and the kernel writers (lib/Codegen/Templates): the
// register tiles the GEMM template is written for, the geometry it derives
// from a tile, and the shared memory the GEMM and attention templates
// declare. Kept in one place so that a config the pass chooses, a config
// written by hand and the code printed from it agree.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_KERNELTEMPLATES_H
#define CGC_DIALECT_CGC_IR_KERNELTEMPLATES_H

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace cgc {

/// Threads a block of every template.
constexpr int64_t kTemplateThreads = 256;

/// Threads of a block that cooperates on a line of `n` elements: a power of
/// two of at least a warp covering `n`, at most kTemplateThreads.
inline int64_t blockThreadsFor(int64_t n) {
  int64_t b = 32;
  while (b < n && b < kTemplateThreads)
    b <<= 1;
  return b;
}

/// Reductions over more elements than these take a block per output (the
/// threads share the elements and meet in a block reduction); shorter ones
/// a thread per output. Arg-reductions keep more per thread: each thread's
/// candidate carries its index through the block reduction.
constexpr int64_t kBlockReductionMinElements = 65;
constexpr int64_t kBlockArgReductionMinElements = 129;

/// The rows a norm kernel normalizes in a tensor of `shape`: `rows` rows of
/// `length` elements, consecutive ones `inner` apart. A layer norm's row is
/// every dim from `axis` on (contiguous); a softmax's is dim `axis` alone.
struct NormRowShape {
  int64_t rows = 1, length = 1, inner = 1;
};
inline NormRowShape normRowShape(llvm::ArrayRef<int64_t> shape, int64_t axis,
                                 bool layerNorm) {
  auto product = [](llvm::ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  };
  if (axis < 0)
    axis += shape.size();
  if (layerNorm)
    return {product(shape.take_front(axis)), product(shape.drop_front(axis)),
            1};
  int64_t inner = product(shape.drop_front(axis + 1));
  return {product(shape.take_front(axis)) * inner, shape[axis], inner};
}

/// Longest row a warp normalizes alone: 32 values a lane in registers.
constexpr int64_t kWarpRowMaxLength = 1024;

/// The values a lane holds where a warp normalizes a row, or 0 for a block
/// a row. A warp reads its row once into registers and reduces with
/// shuffles alone, where a block reads it three times and meets in shared
/// memory twice; contiguous rows up to kWarpRowMaxLength fit (a softmax
/// along an inner dim keeps a block).
inline int64_t warpRowValues(const NormRowShape &row) {
  if (row.inner != 1 || row.length > kWarpRowMaxLength)
    return 0;
  return std::max<int64_t>(1, (row.length + 31) / 32);
}

/// Products of at most this many rows against a weight stored [N, K] (a
/// gemm with transB) take one warp per output element on FMAs, which reads
/// each weight row once, coalesced; the others take the tiled template
/// (on tensor cores where their kernel has a precision).
constexpr int64_t kWarpPerOutputMaxRows = 8;
inline bool takesWarpPerOutput(int64_t rows, bool transB) {
  return transB && rows <= kWarpPerOutputMaxRows;
}

/// A block tile of the GEMM template: BM x BN outputs, TM x TN a thread.
struct GemmTileShape {
  int64_t bm, bn, tm, tn;
  /// Relative FMA throughput of the register tile (shared-memory reads per
  /// FMA, slice reduction), for the cost model.
  double efficiency;
};

/// The tiles the template is written for, largest first.
llvm::ArrayRef<GemmTileShape> gemmTileShapes();

/// The shape (bm, bn, tm, tn) of the table, if it is one.
std::optional<GemmTileShape> findGemmTileShape(int64_t bm, int64_t bn,
                                               int64_t tm, int64_t tn);

/// What the template derives from a tile: 256 threads form `slices` groups
/// that each take BK / slices of every K slice.
struct GemmTileGeometry {
  int64_t bk, slices;
};
GemmTileGeometry gemmTileGeometry(int64_t bm, int64_t bn, int64_t tm,
                                  int64_t tn);

/// Shared-memory stages of the cp.async main loop that fit `sharedBytes`
/// (at most 4).
int64_t gemmPipelineStages(int64_t bm, int64_t bn, int64_t bk,
                           int64_t sharedBytes);

/// Whether a tile can take the cp.async main loop at all (one slice, a
/// large register tile, K slices of 16): the operands must then also be
/// 16-byte-aligned plain arrays.
bool gemmTileAllowsAsyncCopies(int64_t bm, int64_t bn, int64_t bk,
                               int64_t tm, int64_t tn, int64_t slices,
                               int64_t sharedBytes);

/// Bytes of static shared memory the GEMM template declares for a tile.
int64_t gemmSharedBytes(int64_t bm, int64_t bn, int64_t bk, int64_t tm,
                        int64_t tn, int64_t slices, int64_t stages,
                        bool asyncCopy);

/// A block tile of the tensor-core GEMM template: BM x BN outputs a block
/// of 8 warps, WM x WN a warp (in mma tiles of 16 x 8).
struct TensorCoreTileShape {
  int64_t bm, bn, wm, wn;
};

/// The tiles the tensor-core template is written for, largest first.
llvm::ArrayRef<TensorCoreTileShape> tensorCoreTileShapes();

/// The shape (bm, bn, wm, wn) of that table, if it is one.
std::optional<TensorCoreTileShape>
findTensorCoreTileShape(int64_t bm, int64_t bn, int64_t wm, int64_t wn);

/// K depth of a tensor-core slice: two mma steps (k16 for 16-bit operands,
/// k8 for tf32), so that a shared-memory row is 64 bytes either way. The
/// cp.async loop stages f32 slices of 16 k, or (`halfStages`: both
/// operands stored in the 16-bit operand type) those values as stored, in
/// slices of 32 k: a config's K depth says which.
inline int64_t tensorCoreSliceDepth(int64_t operandBytes,
                                    bool asyncCopy = false,
                                    bool halfStages = false) {
  if (asyncCopy && !(halfStages && operandBytes == 2))
    return 16;
  return operandBytes == 4 ? 16 : 32;
}

/// Whether a tensor-core config stages its operands' stored 16-bit values
/// (async_copy, a 16-bit operand, K slices of 32) rather than f32 slices
/// or the register loop: the one rule by which the template and the
/// shared-memory count read a config.
inline bool tensorCoreHalfStages(bool asyncCopy, int64_t operandBytes,
                                 int64_t bk) {
  return asyncCopy && operandBytes == 2 &&
         bk == tensorCoreSliceDepth(2, true, true);
}

/// Bytes of one stage of the tensor-core template's cp.async loop: f32
/// slices of 16 k with rows padded by 8 floats, or 16-bit slices of 32 k
/// padded by 8 values.
inline int64_t tensorCoreAsyncStageBytes(int64_t bm, int64_t bn,
                                         bool halfStages) {
  return halfStages ? (bm + bn) * (32 + 8) * 2 : (bm + bn) * (16 + 8) * 4;
}

/// Whether the tensor-core template can stage a product's operands as
/// they are stored (16-bit stages, K slices of 32) once both are stored in
/// its 16-bit precision: A contiguous along K and both contiguous dims
/// multiples of 8 (each copy moves 16 bytes, 8 values; every planned
/// buffer is 16-byte aligned). --cgc-narrow-storage predicts the
/// selection with it.
inline bool halfStagesFit(int64_t k, int64_t n, bool transA, bool transB) {
  return !transA && k % 8 == 0 && (transB ? k : n) % 8 == 0;
}

/// Stages of the tensor-core template's cp.async loop that fit
/// `sharedBytes` (at most 4).
inline int64_t tensorCoreAsyncStages(int64_t bm, int64_t bn,
                                     int64_t sharedBytes,
                                     bool halfStages = false) {
  return std::min<int64_t>(
      4, sharedBytes / tensorCoreAsyncStageBytes(bm, bn, halfStages));
}

/// Bytes of static shared memory the tensor-core template declares at
/// most: both operands' slices twice (double buffer), stored [outer][BK]
/// with rows padded by 16 bytes, so that the eight rows a fragment load
/// reads fall in different banks (a B stored [BK][BN + 8] takes no more).
inline int64_t tensorCoreSharedBytes(int64_t bm, int64_t bn, int64_t bk,
                                     int64_t operandBytes, int64_t stages = 2,
                                     bool asyncCopy = false) {
  // The cp.async loop stages f32 slices (rounded when fragments are read)
  // or, in slices of 32, the 16-bit values as stored.
  if (asyncCopy)
    return stages * tensorCoreAsyncStageBytes(
                        bm, bn, tensorCoreHalfStages(true, operandBytes, bk));
  return 2 * (bm + bn) * (bk * operandBytes + 16);
}

/// Floats of shared memory the attention kernel needs for `rows` query
/// rows a block and `keyChunk` keys a chunk: Q and the scores stored
/// key-major with rows padded by 4, plus the larger of a key chunk (d-major,
/// padded by 2) and a value chunk.
inline int64_t attentionSharedFloats(int64_t rows, int64_t headDim,
                                     int64_t keys, int64_t valueDim,
                                     int64_t keyChunk) {
  return (headDim + keys) * (rows + 4) +
         std::max(headDim * (keyChunk + 2), keyChunk * valueDim);
}

/// The tensor-core attention template: each of a block's 8 warps owns 16
/// query rows and WK keys (16 or 32) of every key chunk; `rowWarps` x
/// `keyWarps` = 8 warps cover R = 16 rowWarps rows and chunks of KC = WK
/// keyWarps keys. (64 keys a warp, with its scores and a chunk's prefetch
/// in registers, measured slower on the H200: ViT b8's attention 135 us
/// against 90 at 16.)
constexpr int64_t kAttentionWarpRows = 16, kAttentionMinWarpKeys = 16,
                  kAttentionMaxWarpKeys = 32;

/// Bytes of shared memory the tensor-core attention needs: a key chunk
/// [KC][D] and a value chunk transposed [Dv][KC] in the operand type (D
/// rounded up to 16, Dv to 8, rows padded by 16 bytes), the space of
/// which every key warp's partial output (f32, rows padded by 8) reuses
/// at the end where there are several, plus each warp's row maxima and
/// sums.
inline int64_t tensorCoreAttentionSharedBytes(int64_t rows, int64_t keyChunk,
                                              int64_t warpKeys,
                                              int64_t headDim,
                                              int64_t valueDim,
                                              int64_t operandBytes) {
  const int64_t d = (headDim + 15) / 16 * 16, dv = (valueDim + 7) / 8 * 8;
  const int64_t keyWarps = keyChunk / warpKeys;
  const int64_t chunks = keyChunk * (d * operandBytes + 16) +
                         dv * (keyChunk * operandBytes + 16);
  const int64_t partials = keyWarps > 1 ? keyWarps * rows * (dv + 8) * 4 : 0;
  return std::max(chunks, partials) + 2 * keyWarps * rows * 4;
}

/// Whether the smallest attention block (8 query rows, 32 keys a chunk)
/// fits `sharedBytes`: the fuse pass merges an attention only then.
inline bool attentionFitsSharedMemory(int64_t headDim, int64_t keys,
                                      int64_t valueDim, int64_t sharedBytes) {
  return attentionSharedFloats(8, headDim, keys, valueDim, 32) * 4 <=
         sharedBytes;
}

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_KERNELTEMPLATES_H
