//===- CgcRunTest.cpp - cgc-run's checking, random inputs and options -----===//

#include "cgc/Tools/cgc-run/CgcRun.h"
#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace cgcrun;
using namespace cgrttest;

namespace {

HostTensor floats(std::vector<float> values, std::vector<int64_t> shape = {}) {
  HostTensor t;
  t.dtype = CGRT_FLOAT32;
  t.shape = shape.empty() ? std::vector<int64_t>{
                                static_cast<int64_t>(values.size())}
                          : shape;
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

HostTensor int64s(std::vector<int64_t> values) {
  HostTensor t;
  t.dtype = CGRT_INT64;
  t.shape = {static_cast<int64_t>(values.size())};
  t.data.resize(values.size() * 8);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

int runTool(std::vector<std::string> args) {
  std::vector<char *> argv;
  std::string name = "cgc-run";
  argv.push_back(&name[0]);
  for (std::string &arg : args)
    argv.push_back(&arg[0]);
  return cgcRunMain(static_cast<int>(argv.size()), argv.data());
}

} // namespace

TEST(CompareTest, WithinTolerancePasses) {
  Comparison c = compareTensors(floats({1.0f, 2.0f, 0.0f}),
                                floats({1.00001f, 2.0f, 0.0f}), 1e-4, 1e-5);
  EXPECT_TRUE(c.ok);
  EXPECT_NEAR(c.maxAbsError, 1e-5, 1e-6);
  EXPECT_NEAR(c.maxRelError, 1e-5, 1e-6);
}

TEST(CompareTest, MismatchIsLocated) {
  Comparison c = compareTensors(floats({1, 2, 3, 4}, {2, 2}),
                                floats({1, 2, 3.5f, 4}, {2, 2}), 1e-4, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_EQ(c.firstMismatch, 2u);
  EXPECT_EQ(c.firstGot, 3.0L);
  EXPECT_EQ(c.firstExpected, 3.5L);
  EXPECT_DOUBLE_EQ(c.maxAbsError, 0.5);
}

TEST(CompareTest, NanAndInfinity) {
  EXPECT_TRUE(compareTensors(floats({NAN, INFINITY}), floats({NAN, INFINITY}),
                             0, 0)
                  .ok);
  EXPECT_FALSE(compareTensors(floats({NAN}), floats({1.0f}), 1, 1).ok);
  EXPECT_FALSE(compareTensors(floats({1.0f}), floats({NAN}), 1, 1).ok);
  EXPECT_FALSE(compareTensors(floats({INFINITY}), floats({-INFINITY}), 1, 1).ok);
}

TEST(CompareTest, RelativeL2AndOverflowAreMeasured) {
  // ||(0.1, 0, 0)|| / ||(1, 2, 2)|| = 0.1 / 3.
  Comparison c = compareTensors(floats({1.1f, 2.0f, 2.0f}),
                                floats({1.0f, 2.0f, 2.0f}), 1e-4, 1e-5);
  EXPECT_NEAR(c.relL2, 0.1 / 3, 1e-6);
  EXPECT_EQ(c.nonFiniteWhereFinite, 0u);
  // An f16 output that overflowed: infinite where the reference is not.
  Comparison o = compareTensors(floats({INFINITY, 1.0f, NAN}),
                                floats({70000.0f, 1.0f, 3.0f}), 1, 1);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.nonFiniteWhereFinite, 2u);
}

TEST(CompareTest, IntegersMustBeExact) {
  // 2^53 + 1 is not a double; compared exactly anyway.
  int64_t big = (int64_t(1) << 53) + 1;
  EXPECT_TRUE(compareTensors(int64s({big, -3}), int64s({big, -3}), 1, 1).ok);
  EXPECT_FALSE(
      compareTensors(int64s({big, -3}), int64s({big - 1, -3}), 1, 1).ok);
}

TEST(CompareTest, ShapeMismatchIsAnError) {
  Comparison c = compareTensors(floats({1, 2}), floats({1, 2}, {1, 2}), 1, 1);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.error.find("shape"), std::string::npos) << c.error;
}

TEST(RandomInputTest, DeterministicAndInRange) {
  HostTensor a, b, c;
  a.dtype = b.dtype = c.dtype = CGRT_FLOAT32;
  a.shape = b.shape = c.shape = {1000};
  fillRandom(&a, 7);
  fillRandom(&b, 7);
  fillRandom(&c, 8);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  for (uint64_t i = 0; i < a.numElements(); ++i) {
    long double v = elementValue(a, i);
    ASSERT_GE(v, -1.0L);
    ASSERT_LT(v, 1.0L);
  }
  HostTensor ints;
  ints.dtype = CGRT_INT64;
  ints.shape = {200};
  fillRandom(&ints, 1);
  for (uint64_t i = 0; i < ints.numElements(); ++i) {
    long double v = elementValue(ints, i);
    ASSERT_GE(v, 0.0L);
    ASSERT_LT(v, 8.0L);
  }
}

TEST(RandomInputTest, SubByteIntegersStayInRange) {
  for (cgrt_dtype dtype : {CGRT_INT2, CGRT_UINT2, CGRT_INT4, CGRT_UINT4}) {
    HostTensor t;
    t.dtype = dtype;
    t.shape = {300};
    fillRandom(&t, 3);
    bool isSigned = dtype == CGRT_INT2 || dtype == CGRT_INT4;
    long double low = isSigned ? (dtype == CGRT_INT2 ? -2 : -8) : 0;
    long double high = dtype == CGRT_INT2 ? 1 : dtype == CGRT_UINT2 ? 3 : 15;
    for (uint64_t i = 0; i < t.numElements(); ++i) {
      ASSERT_GE(elementValue(t, i), low) << dtype;
      ASSERT_LE(elementValue(t, i), high) << dtype;
    }
  }
}

TEST(CarrierTest, NarrowTypesTravelInNumpyTypes) {
  EXPECT_EQ(carrierOf(CGRT_BFLOAT16), CGRT_UINT16);
  EXPECT_EQ(carrierOf(CGRT_FLOAT8E5M2), CGRT_UINT8);
  EXPECT_EQ(carrierOf(CGRT_INT4), CGRT_INT8);
  EXPECT_EQ(carrierOf(CGRT_UINT2), CGRT_UINT8);
  EXPECT_EQ(carrierOf(CGRT_FLOAT32), CGRT_FLOAT32);
  std::string message;
  HostTensor bits;
  bits.dtype = CGRT_UINT8;
  bits.shape = {2};
  bits.data = {0x7e, 0x80};
  ASSERT_TRUE(relabelBitPatterns(&bits, CGRT_FLOAT8E4M3FN, "b.npy", &message));
  EXPECT_EQ(bits.dtype, CGRT_FLOAT8E4M3FN);
  EXPECT_EQ(elementValue(bits, 0), 448.0L);
  // Another type is left for the caller's dtype check to report.
  HostTensor floats32;
  floats32.dtype = CGRT_FLOAT32;
  ASSERT_TRUE(relabelBitPatterns(&floats32, CGRT_INT4, "f.npy", &message));
  EXPECT_EQ(floats32.dtype, CGRT_FLOAT32);
}

TEST(CarrierTest, SubByteValuesOutOfRangeAreErrors) {
  HostTensor values;
  values.dtype = CGRT_INT8;
  values.shape = {3};
  values.data = {0x07, 0xf8, 0x09}; // 7, -8, 9
  std::string message;
  EXPECT_FALSE(relabelBitPatterns(&values, CGRT_INT4, "a.npy", &message));
  EXPECT_EQ(message, "a.npy: element 2 is 9, outside the range of int4");
  values.data = {0x01, 0x00, 0x03};
  EXPECT_FALSE(relabelBitPatterns(&values, CGRT_INT2, "a.npy", &message));
  EXPECT_EQ(message, "a.npy: element 2 is 3, outside the range of int2");
  values.dtype = CGRT_UINT8;
  EXPECT_TRUE(relabelBitPatterns(&values, CGRT_UINT2, "a.npy", &message));
  EXPECT_EQ(values.dtype, CGRT_UINT2);
}

TEST(CgcRunToolTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(runTool({}), 2);
  EXPECT_EQ(runTool({"a", "b"}), 2);
  EXPECT_EQ(runTool({"pkg", "--bench"}), 2);
  EXPECT_EQ(runTool({"pkg", "--bench", "x"}), 2);
  EXPECT_EQ(runTool({"pkg", "--atol", "-1", "--check", "r"}), 2);
  EXPECT_EQ(runTool({"pkg", "--nope"}), 2);
  EXPECT_EQ(runTool({"--help"}), 0);
}

// A package that cannot be loaded is the package's error (1), not the
// command line's (2): the exit codes all cgc tools share.
TEST(CgcRunToolTest, LoadErrorsExitWithOne) {
  TempDir dir;
  EXPECT_EQ(runTool({dir.file("missing")}), 1);
  EXPECT_EQ(runTool({dir.path()}), 1); // no libmodel.so
  EXPECT_EQ(runTool({dir.path(), "--info"}), 1);
}
