//===- PhiloxTest.cpp - the generator of dropout's masks ------------------===//
//
// Random123's known-answer vectors for Philox4x32-10 (its kat_vectors file:
// counter, key, the four words out), then the mask's threshold at the
// ends of its range.
//
//===----------------------------------------------------------------------===//

#include "cgc/Support/Philox.h"

#include <gtest/gtest.h>

namespace {

struct KnownAnswer {
  std::array<uint32_t, 4> counter;
  std::array<uint32_t, 2> key;
  std::array<uint32_t, 4> words;
};

TEST(Philox, Random123KnownAnswers) {
  const KnownAnswer answers[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const KnownAnswer &a : answers)
    EXPECT_EQ(cgc::philox4x32(a.counter, a.key), a.words);
}

TEST(Philox, ThresholdKeepsTheAskedFraction) {
  EXPECT_EQ(cgc::randomMaskThreshold(0.0), 0u);
  EXPECT_EQ(cgc::randomMaskThreshold(0.5), 1u << 23);
  // Rounded up: an element is dropped when u < ratio, u = k / 2^24.
  EXPECT_EQ(cgc::randomMaskThreshold(0.1), 1677722u);
  int kept = 0, n = 1 << 16;
  uint32_t threshold = cgc::randomMaskThreshold(0.25);
  for (int i = 0; i < n; ++i)
    kept += cgc::randomMaskKeeps(i, /*offset=*/3, /*seed=*/7, /*stream=*/1,
                                 threshold);
  // 0.75 n kept; the binomial's standard deviation is ~111.
  EXPECT_NEAR(kept, 0.75 * n, 600);
}

TEST(Philox, OffsetsAndStreamsDrawOtherMasks) {
  uint32_t threshold = cgc::randomMaskThreshold(0.5);
  int sameOffset = 0, sameStream = 0, n = 4096;
  for (int i = 0; i < n; ++i) {
    bool a = cgc::randomMaskKeeps(i, 0, 0, 0, threshold);
    sameOffset += a == cgc::randomMaskKeeps(i, 1, 0, 0, threshold);
    sameStream += a == cgc::randomMaskKeeps(i, 0, 0, 1, threshold);
  }
  // Independent masks agree on about half the elements.
  EXPECT_NEAR(sameOffset, n / 2, 300);
  EXPECT_NEAR(sameStream, n / 2, 300);
}

} // namespace
