//===- DTypeTest.cpp - cgrt_dtype_size and shape helpers ------------------===//

#include "DType.h"

#include <gtest/gtest.h>

#include <limits>

TEST(DTypeTest, Sizes) {
  EXPECT_EQ(cgrt_dtype_size(CGRT_FLOAT32), 4u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_UINT8), 1u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_INT8), 1u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_UINT16), 2u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_INT16), 2u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_INT32), 4u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_INT64), 8u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_BOOL), 1u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_FLOAT16), 2u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_FLOAT64), 8u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_UINT32), 4u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_UINT64), 8u);
  EXPECT_EQ(cgrt_dtype_size(CGRT_BFLOAT16), 2u);
  // One element a byte, however narrow.
  for (cgrt_dtype narrow :
       {CGRT_FLOAT8E4M3FN, CGRT_FLOAT8E4M3FNUZ, CGRT_FLOAT8E5M2,
        CGRT_FLOAT8E5M2FNUZ, CGRT_UINT4, CGRT_INT4, CGRT_FLOAT4E2M1,
        CGRT_FLOAT8E8M0, CGRT_UINT2, CGRT_INT2})
    EXPECT_EQ(cgrt_dtype_size(narrow), 1u) << narrow;
}

TEST(DTypeTest, UnknownValuesHaveSizeZero) {
  for (int value : {0, 8, 14, 15, 27, 999, -1})
    EXPECT_EQ(cgrt_dtype_size(static_cast<cgrt_dtype>(value)), 0u) << value;
}

TEST(DTypeTest, ValuesMatchOnnx) {
  // TensorProto.DataType.
  EXPECT_EQ(CGRT_FLOAT32, 1);
  EXPECT_EQ(CGRT_BOOL, 9);
  EXPECT_EQ(CGRT_FLOAT16, 10);
  EXPECT_EQ(CGRT_BFLOAT16, 16);
  EXPECT_EQ(CGRT_FLOAT8E4M3FN, 17);
  EXPECT_EQ(CGRT_UINT4, 21);
  EXPECT_EQ(CGRT_INT4, 22);
  EXPECT_EQ(CGRT_FLOAT4E2M1, 23);
  EXPECT_EQ(CGRT_FLOAT8E8M0, 24);
  EXPECT_EQ(CGRT_INT2, 26);
}

TEST(DTypeTest, NamesAndShapes) {
  EXPECT_EQ(cgrt::dtypeName(CGRT_INT64), "int64");
  EXPECT_EQ(cgrt::dtypeName(CGRT_FLOAT8E4M3FN), "float8_e4m3fn");
  EXPECT_EQ(cgrt::dtypeName(CGRT_INT4), "int4");
  EXPECT_EQ(cgrt::dtypeName(static_cast<cgrt_dtype>(42)), "dtype(42)");
  int64_t dims[] = {2, 3, 4};
  EXPECT_EQ(cgrt::shapeString(3, dims), "[2, 3, 4]");
  EXPECT_EQ(cgrt::shapeString(0, dims), "[]");
}

TEST(DTypeTest, TensorBytes) {
  int64_t dims[] = {2, 3, 4};
  uint64_t bytes = 0;
  ASSERT_TRUE(cgrt::tensorBytes(CGRT_FLOAT16, 3, dims, &bytes));
  EXPECT_EQ(bytes, 48u);
  ASSERT_TRUE(cgrt::tensorBytes(CGRT_INT64, 0, dims, &bytes));
  EXPECT_EQ(bytes, 8u); // a scalar
  int64_t negative[] = {2, -1};
  EXPECT_FALSE(cgrt::tensorBytes(CGRT_FLOAT32, 2, negative, &bytes));
  int64_t huge[] = {std::numeric_limits<int64_t>::max(), 4};
  EXPECT_FALSE(cgrt::tensorBytes(CGRT_FLOAT32, 2, huge, &bytes));
  EXPECT_FALSE(cgrt::tensorBytes(static_cast<cgrt_dtype>(0), 3, dims, &bytes));
  EXPECT_FALSE(cgrt::tensorBytes(CGRT_FLOAT32, CGRT_MAX_RANK + 1, dims, &bytes));
}
