//===- BroadcastTest.cpp - shape helpers of the cgc dialect ---------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include <gtest/gtest.h>

using mlir::ShapedType;

TEST(Broadcast, NumpyRules) {
  auto r = cgc::broadcastShapes({2, 1, 4}, {3, 1});
  ASSERT_TRUE(mlir::succeeded(r));
  EXPECT_EQ(llvm::ArrayRef<int64_t>(*r), llvm::ArrayRef<int64_t>({2, 3, 4}));
}

TEST(Broadcast, ScalarAndEmpty) {
  auto r = cgc::broadcastShapes({}, {5});
  ASSERT_TRUE(mlir::succeeded(r));
  EXPECT_EQ(llvm::ArrayRef<int64_t>(*r), llvm::ArrayRef<int64_t>({5}));
}

TEST(Broadcast, MismatchFails) {
  EXPECT_TRUE(mlir::failed(cgc::broadcastShapes({2, 3}, {4})));
}

TEST(Broadcast, DynamicDimTakesTheStaticSide) {
  int64_t dyn = ShapedType::kDynamic;
  auto r = cgc::broadcastShapes({dyn, 3}, {4, 3});
  ASSERT_TRUE(mlir::succeeded(r));
  EXPECT_EQ((*r)[0], 4);
  auto s = cgc::broadcastShapes({dyn, 3}, {1, 3});
  ASSERT_TRUE(mlir::succeeded(s));
  EXPECT_EQ((*s)[0], dyn);
}

TEST(SlidingWindow, FloorAndCeil) {
  // 224 input, 3x3 kernel, stride 2, no padding: (224-3)/2+1 = 111.
  EXPECT_EQ(cgc::slidingWindowOutputSize(224, 3, 2, 0, 0, 1, false), 111);
  // 111 with ceil mode, kernel 3, stride 2: ceil(108/2)+1 = 55.
  EXPECT_EQ(cgc::slidingWindowOutputSize(111, 3, 2, 0, 0, 1, true), 55);
  // Ceil mode drops a window that would start in the end padding.
  EXPECT_EQ(cgc::slidingWindowOutputSize(4, 2, 2, 0, 1, 1, true), 2);
  // Dilation widens the window.
  EXPECT_EQ(cgc::slidingWindowOutputSize(10, 3, 1, 0, 0, 2, false), 6);
  EXPECT_EQ(cgc::slidingWindowOutputSize(ShapedType::kDynamic, 3, 1, 0, 0, 1,
                                         false),
            ShapedType::kDynamic);
}
