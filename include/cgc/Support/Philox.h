//===- Philox.h - the counter-based generator of random masks ---*- C++ -*-===//
//
// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011): ten rounds of a multiply-based Feistel
// network over a 128-bit counter under a 64-bit key. A pure function, so
// the element k of a mask is computed from k alone by whichever thread
// needs it. The kernels' copy (cgc_random_keep in CudaPrelude.cpp) must give
// the same words; CI checks both, this one against Random123's
// known-answer vectors (unittests) and the kernels against this one (the
// emulator, bit for bit).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_SUPPORT_PHILOX_H
#define CGC_SUPPORT_PHILOX_H

#include <array>
#include <cstdint>

namespace cgc {

inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                          std::array<uint32_t, 2> key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = (uint64_t)kMul0 * counter[0];
    uint64_t p1 = (uint64_t)kMul1 * counter[2];
    counter = {(uint32_t)(p1 >> 32) ^ counter[1] ^ key[0], (uint32_t)p1,
               (uint32_t)(p0 >> 32) ^ counter[3] ^ key[1], (uint32_t)p0};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return counter;
}

/// The threshold of a mask that keeps an element with probability
/// 1 - ratio: kept when the top 24 bits of the word are at least this.
inline uint32_t randomMaskThreshold(double ratio) {
  double scaled = ratio * (double)(1u << 24);
  uint32_t t = (uint32_t)scaled;
  return (double)t < scaled ? t + 1 : t;
}

/// Element `index` of cgc.random_mask (its description says the layout).
inline bool randomMaskKeeps(uint64_t index, uint64_t offset, uint32_t seed,
                            uint32_t stream, uint32_t threshold) {
  std::array<uint32_t, 4> words = philox4x32(
      {(uint32_t)index, (uint32_t)(index >> 32), (uint32_t)offset,
       (uint32_t)(offset >> 32)},
      {seed, stream});
  return (words[0] >> 8) >= threshold;
}

} // namespace cgc

#endif // CGC_SUPPORT_PHILOX_H
