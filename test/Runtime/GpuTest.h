//===- GpuTest.h - the fixture of the GPU tests -----------------*- C++ -*-===//
//
// What the GPU tests share: inputs and CPU references of the hand-written test
// package, tensors over host or device buffers, and GpuTest, a fixture that
// skips (GTEST_SKIP) where there is no CUDA driver, GPU or compiled kernels.
// CI has no GPU: it runs them on the stub driver (StubTest.h), which runs
// host stand-ins of the test package's kernels, so every assertion about
// the run path holds there too; the GPU machine runs them on the real
// driver (utils/gpu/gpu_runtime_check.sh, utils/gpu/gpu_reliability.sh).
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_TEST_GPUTEST_H
#define CGRT_TEST_GPUTEST_H

#include "TestPackage.h"
#include "TestUtil.h"
#include "Testing.h"

#include <cstring>
#include <string>
#include <vector>

namespace cgrttest {

inline std::vector<float> makeInput(int seed) {
  std::vector<float> x(testpkg::kElements);
  for (int i = 0; i < testpkg::kElements; ++i)
    x[i] = testpkg::input(i, seed);
  return x;
}

inline cgrt_tensor tensorOf(void *data, size_t bytes,
                            cgrt_memory memory = CGRT_MEMORY_HOST) {
  cgrt_tensor t;
  std::memset(&t, 0, sizeof(t));
  t.data = data;
  t.bytes = bytes;
  t.dtype = CGRT_FLOAT32;
  t.rank = 2;
  t.dims[0] = testpkg::kRows;
  t.dims[1] = testpkg::kCols;
  t.memory = memory;
  return t;
}

/// Host buffers for one inference and its CPU reference.
struct Io {
  std::vector<float> x, y, y2, y2Copy;
  std::vector<float> refY, refY2, refY2Copy;
  cgrt_tensor input;
  cgrt_tensor outputs[3];

  explicit Io(int seed)
      : x(makeInput(seed)), y(testpkg::kElements, -7.0f),
        y2(testpkg::kElements, -7.0f), y2Copy(testpkg::kElements, -7.0f),
        refY(testpkg::kElements), refY2(testpkg::kElements),
        refY2Copy(testpkg::kElements) {
    testpkg::reference(x.data(), refY.data(), refY2.data(), refY2Copy.data());
    input = tensorOf(x.data(), testpkg::kSlotBytes);
    outputs[0] = tensorOf(y.data(), testpkg::kSlotBytes);
    outputs[1] = tensorOf(y2.data(), testpkg::kSlotBytes);
    outputs[2] = tensorOf(y2Copy.data(), testpkg::kSlotBytes);
  }

  ::testing::AssertionResult matches() const {
    for (int i = 0; i < testpkg::kElements; ++i)
      if (y[i] != refY[i] || y2[i] != refY2[i] || y2Copy[i] != refY2Copy[i])
        return ::testing::AssertionFailure()
               << "element " << i << ": y " << y[i] << " (expected " << refY[i]
               << "), y2 " << y2[i] << " (" << refY2[i] << "), y2_copy "
               << y2Copy[i] << " (" << refY2Copy[i] << ")";
    return ::testing::AssertionSuccess();
  }
};

/// Skips unless a GPU and the package's kernels are there.
#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    std::string reason_;                                                       \
    if (!gpuAvailable(&reason_))                                               \
      GTEST_SKIP() << reason_;                                                 \
  } while (0)

struct StubApi;
/// The stub driver's API when $CGRT_DRIVER_LIBRARY names it (StubTest.h).
const StubApi *stubDriver();

inline bool gpuAvailable(std::string *reason) {
  if (!testPackageHasKernels()) {
    *reason = "no nvcc: the test package has no kernels (nvcc was not found "
              "at build time)";
    return false;
  }
  static int state = -1; // -1 unknown, 0 no, 1 yes
  static std::string why;
  if (state < 0) {
    stubDriver(); // registers the kernels' host stand-ins on the stub
    cgrt_model *model = nullptr;
    cgrt_status status =
        cgrt_model_load(testPackageDir().c_str(), nullptr, &model);
    state = cgrt_status_get_code(status) == CGRT_NO_DEVICE ? 0 : 1;
    why = cgrt_status_get_message(status);
    cgrt_status_free(status);
    cgrt_model_release(model);
  }
  *reason = "no GPU: " + why;
  return state == 1;
}

class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_GPU();
    cgrt::testing::clearFaults();
  }
  void TearDown() override {
    EXPECT_EQ(cgrt::testing::pendingFaults(), 0u) << "a fault did not fire";
    cgrt::testing::clearFaults();
  }

  Model load(const std::string &dir = testPackageDir()) {
    cgrt_model *model = nullptr;
    cgrt_status status = cgrt_model_load(dir.c_str(), nullptr, &model);
    EXPECT_EQ(status, nullptr) << cgrt_status_get_message(status);
    cgrt_status_free(status);
    return Model(model);
  }

  /// The status of loading the package (the model, if any, released).
  cgrt_status loadStatus(const std::string &dir = testPackageDir(),
                         int ordinal = 0) {
    cgrt_model_options options;
    cgrt_model_options_init(&options);
    options.device_ordinal = ordinal;
    cgrt_model *model = nullptr;
    cgrt_status status = cgrt_model_load(dir.c_str(), &options, &model);
    cgrt_model_release(model);
    return status;
  }

  static cgrt_status run(cgrt_model *model, Io &io) {
    return cgrt_model_run(model, &io.input, 1, io.outputs, 3);
  }
};

} // namespace cgrttest

#endif // CGRT_TEST_GPUTEST_H
