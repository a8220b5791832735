//===- TrainingTest.cpp - a training step's state in the runtime ----------===//
//
// The test package in its training mode: a step whose state is w, and
// whose update of w (y2_copy = relu(2x + w)) has a slot of its own that the
// runtime copies over w after the graphs. So every run is a step that sees
// the state the step before it left; the state can be read, written and
// reset to the package's weights.
//
//===----------------------------------------------------------------------===//

#include "GpuTest.h"
#include "TestPackage.h"
#include "TestUtil.h"

#include <vector>

using namespace cgrttest;
using namespace testpkg;

namespace {

class TrainingTest : public GpuTest {
protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped())
      return;
    ScopedEnv env("CGRT_TEST_PACKAGE_MODE", "training");
    model = load();
    ASSERT_TRUE(model);
  }

  std::vector<float> readState() {
    std::vector<float> w(kElements, -9.0f);
    cgrt_tensor t = tensorOf(w.data(), kSlotBytes);
    EXPECT_OK(cgrt_model_read_state(model.get(), 0, &t));
    return w;
  }

  static std::vector<float> initialWeights() {
    std::vector<float> w(kElements);
    for (int i = 0; i < kElements; ++i)
      w[i] = weight(i);
    return w;
  }

  /// One step on `io` from state `w`: checks y = 2x + w, returns relu(y).
  std::vector<float> step(Io &io, const std::vector<float> &w) {
    EXPECT_OK(run(model.get(), io));
    std::vector<float> next(kElements);
    for (int i = 0; i < kElements; ++i) {
      float y = io.x[i] * 2.0f + w[i];
      EXPECT_EQ(io.y[i], y) << "element " << i;
      next[i] = y > 0.0f ? y : 0.0f;
    }
    return next;
  }

  Model model;
};

TEST_F(TrainingTest, EachRunIsAStepThatReplacesTheState) {
  std::vector<float> w = initialWeights();
  EXPECT_EQ(readState(), w) << "the state starts from weights.bin";
  for (int seed = 0; seed < 3; ++seed) {
    Io io(seed);
    w = step(io, w);
    EXPECT_EQ(readState(), w) << "after step " << seed;
  }
}

TEST_F(TrainingTest, TrainStepEnqueuesAStepOnTheStream) {
  const cgrt::Driver &d = cgrt::testing::driverOf(model.get());
  cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model.get()));
  Io io(2);
  CUdeviceptr buffers[4] = {};
  for (CUdeviceptr &b : buffers)
    ASSERT_EQ(d.cuMemAlloc(&b, kSlotBytes), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyHtoD(buffers[0], io.x.data(), kSlotBytes), CUDA_SUCCESS);
  cgrt_tensor input =
      tensorOf(reinterpret_cast<void *>(buffers[0]), kSlotBytes,
               CGRT_MEMORY_DEVICE);
  cgrt_tensor outputs[3];
  for (int i = 0; i < 3; ++i)
    outputs[i] = tensorOf(reinterpret_cast<void *>(buffers[i + 1]),
                          kSlotBytes, CGRT_MEMORY_DEVICE);
  ASSERT_OK(cgrt_model_train_step(model.get(), &input, 1, outputs, 3,
                                  nullptr));
  std::vector<float> y(kElements), w = initialWeights();
  ASSERT_EQ(d.cuMemcpyDtoH(y.data(), buffers[1], kSlotBytes), CUDA_SUCCESS);
  std::vector<float> next(kElements);
  for (int i = 0; i < kElements; ++i) {
    EXPECT_EQ(y[i], io.x[i] * 2.0f + w[i]) << "element " << i;
    next[i] = y[i] > 0.0f ? y[i] : 0.0f;
  }
  EXPECT_EQ(readState(), next) << "read_state waits for the step";
  for (CUdeviceptr b : buffers)
    d.cuMemFree(b);
}

TEST_F(TrainingTest, TheStateIsDescribedWrittenAndReset) {
  ASSERT_EQ(cgrt_model_num_state(model.get()), 1u);
  const char *name = nullptr;
  cgrt_tensor info;
  ASSERT_OK(cgrt_model_state_info(model.get(), 0, &name, &info));
  EXPECT_STREQ(name, "w");
  EXPECT_EQ(info.dtype, CGRT_FLOAT32);
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[0], kRows);
  EXPECT_EQ(info.dims[1], kCols);
  EXPECT_EQ(info.bytes, kSlotBytes);

  // A checkpoint's weights replace the state for the next step.
  std::vector<float> ones(kElements, 1.0f);
  cgrt_tensor in = tensorOf(ones.data(), kSlotBytes);
  ASSERT_OK(cgrt_model_write_state(model.get(), 0, &in));
  Io io(4);
  step(io, ones);
  ASSERT_OK(cgrt_model_reset_state(model.get()));
  EXPECT_EQ(readState(), initialWeights());
  Io again(4);
  step(again, initialWeights());
}

TEST_F(TrainingTest, StateCallsCheckTheirArguments) {
  std::vector<float> w(kElements);
  cgrt_tensor t = tensorOf(w.data(), kSlotBytes);
  EXPECT_TRUE(hasStatus(cgrt_model_read_state(model.get(), 1, &t),
                        CGRT_INVALID_ARGUMENT,
                        {"cgrt_model_read_state", "index 1 is out of range",
                         "1 state tensors"}));
  EXPECT_TRUE(hasStatus(cgrt_model_read_state(model.get(), 0, nullptr),
                        CGRT_INVALID_ARGUMENT, {"tensor is NULL"}));
  cgrt_tensor wrongType = t;
  wrongType.dtype = CGRT_INT32;
  EXPECT_TRUE(hasStatus(cgrt_model_write_state(model.get(), 0, &wrongType),
                        CGRT_INVALID_ARGUMENT,
                        {"cgrt_model_write_state: state tensor 0 'w'",
                         "dtype is int32"}));
  cgrt_tensor shortBuffer = t;
  shortBuffer.bytes = kSlotBytes - 4;
  EXPECT_TRUE(hasStatus(cgrt_model_read_state(model.get(), 0, &shortBuffer),
                        CGRT_INVALID_ARGUMENT, {"the buffer holds 1020 bytes"}));
  EXPECT_TRUE(hasStatus(cgrt_model_state_info(nullptr, 0, nullptr, nullptr),
                        CGRT_INVALID_ARGUMENT, {"model is NULL"}));
  EXPECT_TRUE(hasStatus(cgrt_model_reset_state(nullptr),
                        CGRT_INVALID_ARGUMENT, {"model is NULL"}));
  EXPECT_EQ(cgrt_model_num_state(nullptr), 0u);
}

TEST_F(GpuTest, AnInferencePackageHasNoState) {
  Model inference = load();
  ASSERT_TRUE(inference);
  EXPECT_EQ(cgrt_model_num_state(inference.get()), 0u);
  std::vector<float> w(kElements);
  cgrt_tensor t = tensorOf(w.data(), kSlotBytes);
  EXPECT_TRUE(hasStatus(cgrt_model_read_state(inference.get(), 0, &t),
                        CGRT_INVALID_ARGUMENT,
                        {"0 state tensors (it is no training step)"}));
  EXPECT_TRUE(hasStatus(cgrt_model_reset_state(inference.get()),
                        CGRT_INVALID_ARGUMENT,
                        {"is no training step: it has no state"}));
  Io io(0);
  EXPECT_TRUE(hasStatus(cgrt_model_train_step(inference.get(), &io.input, 1,
                                              io.outputs, 3, nullptr),
                        CGRT_INVALID_ARGUMENT,
                        {"cgrt_model_train_step", "is no training step"}));
}

} // namespace
