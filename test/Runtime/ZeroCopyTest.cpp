//===- ZeroCopyTest.cpp - kernels on the caller's device buffers ----------===//
//
// The test package in its zero_copy mode (every node a kernel node reported
// to the runtime): device buffers are read and written in place, the static
// slots stay untouched, and host, misaligned or freed buffers never leave a
// node pointing where it should not.
//
//===----------------------------------------------------------------------===//

#include "GpuTest.h"
#include "TestPackage.h"
#include "TestUtil.h"
#include "Testing.h"

#include <vector>

using namespace cgrttest;
using namespace testpkg;

namespace {

class ZeroCopyTest : public GpuTest {
protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped())
      return;
    ScopedEnv env("CGRT_TEST_PACKAGE_MODE", packageMode());
    model = load();
    ASSERT_TRUE(model);
    d = &cgrt::testing::driverOf(model.get());
  }
  /// The test package's mode (TestPackage.cpp).
  virtual const char *packageMode() const { return "zero_copy"; }

  void TearDown() override {
    for (CUdeviceptr b : buffers)
      d->cuMemFree(b);
    GpuTest::TearDown();
  }

  /// A device buffer of `bytes` plus `slack`, freed at the end.
  CUdeviceptr alloc(size_t bytes, size_t slack = 0) {
    CUdeviceptr b = 0;
    EXPECT_EQ(d->cuMemAlloc(&b, bytes + slack), CUDA_SUCCESS);
    buffers.push_back(b);
    return b;
  }

  /// The arena's copy of a slot, to see whether a run went through it.
  std::vector<float> slot(uint64_t offset) {
    std::vector<float> data(kElements);
    EXPECT_EQ(d->cuMemcpyDtoH(data.data(),
                              cgrt::testing::arenaOf(model.get()) + offset,
                              kSlotBytes),
              CUDA_SUCCESS);
    return data;
  }

  /// Runs on device buffers at `in` and `out[3]`; fills io's outputs.
  cgrt_status runDevice(Io &io, CUdeviceptr in, const CUdeviceptr out[3]) {
    EXPECT_EQ(d->cuMemcpyHtoD(in, io.x.data(), kSlotBytes), CUDA_SUCCESS);
    cgrt_tensor input = tensorOf(reinterpret_cast<void *>(in), kSlotBytes,
                                 CGRT_MEMORY_DEVICE);
    cgrt_tensor outputs[3];
    for (int i = 0; i < 3; ++i)
      outputs[i] = tensorOf(reinterpret_cast<void *>(out[i]), kSlotBytes,
                            CGRT_MEMORY_DEVICE);
    cgrt_status s = cgrt_model_run(model.get(), &input, 1, outputs, 3);
    if (s)
      return s;
    float *hosts[3] = {io.y.data(), io.y2.data(), io.y2Copy.data()};
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(d->cuMemcpyDtoH(hosts[i], out[i], kSlotBytes), CUDA_SUCCESS);
    return nullptr;
  }

  Model model;
  const cgrt::Driver *d = nullptr;
  std::vector<CUdeviceptr> buffers;
};

} // namespace

TEST_F(ZeroCopyTest, DeviceBuffersAreUsedInPlace) {
  cgrt::ScopedContext scope(*d, cgrt::testing::contextOf(model.get()));
  ASSERT_OK(scope.take());
  CUdeviceptr in = alloc(kSlotBytes);
  CUdeviceptr out[3] = {alloc(kSlotBytes), alloc(kSlotBytes),
                        alloc(kSlotBytes)};
  for (int seed = 0; seed < 3; ++seed) {
    Io io(seed);
    ASSERT_OK(runDevice(io, in, out));
    EXPECT_TRUE(io.matches()) << "seed " << seed;
  }
  // The slots were never written: the arena is zeroed at load.
  for (uint64_t offset : {kXOffset, kYOffset, kY2Offset, kY2CopyOffset})
    for (float v : slot(offset))
      ASSERT_EQ(v, 0.0f) << "slot at offset " << offset << " was used";
}

TEST_F(ZeroCopyTest, HostMisalignedAndFreedBuffersGoThroughTheSlots) {
  cgrt::ScopedContext scope(*d, cgrt::testing::contextOf(model.get()));
  ASSERT_OK(scope.take());
  CUdeviceptr in = alloc(kSlotBytes);
  CUdeviceptr out[3] = {alloc(kSlotBytes), alloc(kSlotBytes),
                        alloc(kSlotBytes)};
  Io first(1);
  ASSERT_OK(runDevice(first, in, out));
  ASSERT_TRUE(first.matches());
  // Free the buffers the graph was bound to; a host run must not touch them
  // (compute-sanitizer would report it) and must be right.
  for (CUdeviceptr &b : buffers)
    d->cuMemFree(b);
  buffers.clear();
  Io host(2);
  ASSERT_OK(run(model.get(), host));
  EXPECT_TRUE(host.matches());
  EXPECT_NE(slot(kXOffset)[5], 0.0f) << "a host input is copied to its slot";

  // Misaligned device buffers (4 bytes past an allocation) are copied.
  CUdeviceptr base = alloc(kSlotBytes, 256);
  CUdeviceptr outs[3] = {alloc(kSlotBytes, 256) + 4, alloc(kSlotBytes, 256) + 4,
                         alloc(kSlotBytes, 256) + 4};
  Io misaligned(3);
  ASSERT_OK(runDevice(misaligned, base + 4, outs));
  EXPECT_TRUE(misaligned.matches());
  std::vector<float> xSlot = slot(kXOffset);
  EXPECT_EQ(0, std::memcmp(xSlot.data(), misaligned.x.data(), kSlotBytes))
      << "a misaligned input goes through its slot";
}

TEST_F(ZeroCopyTest, CanBeTurnedOffAndBenchmarkedBothWays) {
  cgrt::ScopedContext scope(*d, cgrt::testing::contextOf(model.get()));
  ASSERT_OK(scope.take());
  cgrt_model_set_zero_copy(model.get(), 0);
  CUdeviceptr in = alloc(kSlotBytes);
  CUdeviceptr out[3] = {alloc(kSlotBytes), alloc(kSlotBytes),
                        alloc(kSlotBytes)};
  Io io(4);
  ASSERT_OK(runDevice(io, in, out));
  EXPECT_TRUE(io.matches());
  std::vector<float> xSlot = slot(kXOffset);
  EXPECT_EQ(0, std::memcmp(xSlot.data(), io.x.data(), kSlotBytes))
      << "with zero-copy off the input is copied";
  cgrt_model_set_zero_copy(model.get(), 1);
  for (int zeroCopy : {0, 1}) {
    cgrt_benchmark_result result;
    ASSERT_OK(cgrt_model_benchmark_device_io(model.get(), 3, 20, zeroCopy,
                                             &result));
    EXPECT_GT(result.median_us, 0.0) << "zero_copy " << zeroCopy;
    EXPECT_EQ(result.graph_launches_per_run, 1);
  }
  // The slot benchmark after a zero-copy one reads the slots again.
  cgrt_benchmark_result result;
  ASSERT_OK(cgrt_model_benchmark(model.get(), 1, 5, &result));
  Io again(5);
  ASSERT_OK(run(model.get(), again));
  EXPECT_TRUE(again.matches());
}

/// The package whose output 2 returns the input (its slot).
class ZeroCopyIdentityTest : public ZeroCopyTest {
protected:
  const char *packageMode() const override { return "zero_copy_identity"; }
};

TEST_F(ZeroCopyIdentityTest, AnInputReturnedAsAnOutputIsStillCopiedIn) {
  cgrt::ScopedContext scope(*d, cgrt::testing::contextOf(model.get()));
  ASSERT_OK(scope.take());
  CUdeviceptr in = alloc(kSlotBytes);
  CUdeviceptr out[3] = {alloc(kSlotBytes), alloc(kSlotBytes),
                        alloc(kSlotBytes)};
  for (int seed = 0; seed < 2; ++seed) {
    Io io(seed);
    ASSERT_OK(runDevice(io, in, out));
    for (int i = 0; i < kElements; ++i) {
      ASSERT_EQ(io.y2[i], io.refY2[i]) << "seed " << seed << ", element " << i;
      ASSERT_EQ(io.y2Copy[i], io.x[i]) << "seed " << seed << ", element " << i;
    }
  }
}
