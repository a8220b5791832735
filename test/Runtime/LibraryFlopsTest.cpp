//===- LibraryFlopsTest.cpp - the work a library node reports -------------===//
//
// cgc-run --profile-kernels divides each cuBLASLt and cuDNN node's
// floating-point operations by its time: the rate issue 15 holds against
// the device's measured peak. The counts come from the nodes' descriptions,
// so they are checked here against products worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "LibraryNodes.h"

#include <gtest/gtest.h>

namespace {

TEST(LibraryFlopsTest, MatmulCountsTwoPerMultiplyAddOverTheBatch) {
  cgrt_matmul_desc desc{};
  desc.m = 128;
  desc.n = 384;
  desc.k = 1536;
  desc.batch = 4;
  EXPECT_DOUBLE_EQ(cgrt::matmulFlops(desc), 2.0 * 128 * 384 * 1536 * 4);
}

// ResNet-50's first 3x3 convolution at batch 8: [8, 64, 56, 56] by
// [64, 64, 3, 3]; the filter's dims are K, C / groups, R, S in either
// layout, and a grouped convolution sums over its group's channels only.
TEST(LibraryFlopsTest, ConvCountsEachOutputsWindowOfItsGroup) {
  cgrt_conv_desc desc{};
  const int64_t input[4] = {8, 64, 56, 56}, filter[4] = {64, 64, 3, 3},
                output[4] = {8, 64, 56, 56};
  for (int i = 0; i < 4; ++i) {
    desc.input[i] = input[i];
    desc.filter[i] = filter[i];
    desc.output[i] = output[i];
  }
  desc.groups = 1;
  EXPECT_DOUBLE_EQ(cgrt::convFlops(desc), 2.0 * 8 * 64 * 56 * 56 * 64 * 9);
  desc.channels_last = 1;
  EXPECT_DOUBLE_EQ(cgrt::convFlops(desc), 2.0 * 8 * 64 * 56 * 56 * 64 * 9);
  desc.groups = 4;
  desc.filter[1] = 16;
  EXPECT_DOUBLE_EQ(cgrt::convFlops(desc), 2.0 * 8 * 64 * 56 * 56 * 16 * 9);
}

} // namespace
