//===- AttentionLimits.h - what the attention kernel can hold ---*- C++ -*-===//
//
// The fused attention kernel keeps a block's query rows, its rows of scores
// and one chunk of keys (or values) in static shared memory. The fuse pass
// merges an attention only where the smallest block fits, and the code
// generator sizes its blocks by the same count, so a fused attention always
// has a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_ANALYSIS_ATTENTIONLIMITS_H
#define CGC_DIALECT_CGC_ANALYSIS_ATTENTIONLIMITS_H

#include <algorithm>
#include <cstdint>

namespace cgc {

/// Static shared memory of a kernel: 48 KB.
constexpr int64_t kStaticSharedFloats = 48 * 1024 / 4;

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

/// The smallest block: 8 query rows, 32 keys a chunk.
inline bool attentionFitsSharedMemory(int64_t headDim, int64_t keys,
                                      int64_t valueDim) {
  return attentionSharedFloats(8, headDim, keys, valueDim, 32) <=
         kStaticSharedFloats;
}

} // namespace cgc

#endif // CGC_DIALECT_CGC_ANALYSIS_ATTENTIONLIMITS_H
