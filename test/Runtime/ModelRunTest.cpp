//===- ModelRunTest.cpp - the runtime on a GPU ----------------------------===//
//
// Loads and runs the hand-written test package. Every test here skips when
// the CUDA driver or GPU is absent (GTEST_SKIP), so the binary passes on the
// build machine; utils/gpu/gpu_runtime_check.sh runs it on the GPU machine, where
// none may skip.
//
//===----------------------------------------------------------------------===//

#include "GpuTest.h"
#include "StubTest.h"
#include "TestPackage.h"
#include "TestUtil.h"
#include "Testing.h"

#include <atomic>
#include <cstring>
#include <malloc.h>
#include <filesystem>
#include <thread>
#include <vector>

using namespace cgrttest;
using namespace testpkg;

TEST_F(GpuTest, DescribesItsInputsAndOutputs) {
  Model model = load();
  ASSERT_TRUE(model);
  ASSERT_EQ(cgrt_model_num_inputs(model.get()), 1u);
  ASSERT_EQ(cgrt_model_num_outputs(model.get()), 3u);
  const char *name = nullptr;
  cgrt_tensor info;
  ASSERT_OK(cgrt_model_input_info(model.get(), 0, &name, &info));
  EXPECT_STREQ(name, kInputName);
  EXPECT_EQ(info.dtype, CGRT_FLOAT32);
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[0], kRows);
  EXPECT_EQ(info.dims[1], kCols);
  EXPECT_EQ(info.data, nullptr);
  // bytes is the buffer size the runtime needs.
  EXPECT_EQ(info.bytes, kRows * kCols * sizeof(float));
  const char *names[] = {"y", "y2", "y2_copy"};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_OK(cgrt_model_output_info(model.get(), i, &name, &info));
    EXPECT_STREQ(name, names[i]);
  }
  EXPECT_TRUE(hasStatus(cgrt_model_output_info(model.get(), 3, &name, &info),
                        CGRT_INVALID_ARGUMENT, {"index 3 is out of range"}));
  EXPECT_TRUE(hasStatus(cgrt_model_input_info(model.get(), 1, &name, &info),
                        CGRT_INVALID_ARGUMENT, {"has 1 inputs"}));
}

TEST_F(GpuTest, RunMatchesTheCpuReference) {
  Model model = load();
  ASSERT_TRUE(model);
  EXPECT_FALSE(cgrt::testing::kernelsFromPtx(model.get()));
  // Several runs with different inputs: y accumulates, so a missing memset
  // node or stale input would show from the second run on.
  for (int seed = 0; seed < 4; ++seed) {
    Io io(seed);
    ASSERT_OK(run(model.get(), io));
    EXPECT_TRUE(io.matches()) << "seed " << seed;
  }
}

TEST_F(GpuTest, DeviceResidentInputsAndOutputs) {
  Model model = load();
  ASSERT_TRUE(model);
  const cgrt::Driver &d = cgrt::testing::driverOf(model.get());
  cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model.get()));
  ASSERT_OK(scope.take());
  CUdeviceptr buffers[4] = {};
  for (CUdeviceptr &buffer : buffers)
    ASSERT_EQ(d.cuMemAlloc(&buffer, kSlotBytes), CUDA_SUCCESS);
  Io io(3);
  ASSERT_EQ(d.cuMemcpyHtoD(buffers[0], io.x.data(), kSlotBytes), CUDA_SUCCESS);
  cgrt_tensor input = tensorOf(reinterpret_cast<void *>(buffers[0]),
                               kSlotBytes, CGRT_MEMORY_DEVICE);
  cgrt_tensor outputs[3];
  for (int i = 0; i < 3; ++i)
    outputs[i] = tensorOf(reinterpret_cast<void *>(buffers[i + 1]), kSlotBytes,
                          CGRT_MEMORY_DEVICE);
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, outputs, 3));
  ASSERT_EQ(d.cuMemcpyDtoH(io.y.data(), buffers[1], kSlotBytes), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyDtoH(io.y2.data(), buffers[2], kSlotBytes), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyDtoH(io.y2Copy.data(), buffers[3], kSlotBytes),
            CUDA_SUCCESS);
  EXPECT_TRUE(io.matches());
  for (CUdeviceptr buffer : buffers)
    d.cuMemFree(buffer);
}

TEST_F(GpuTest, InvalidInputsNameTheInput) {
  Model model = load();
  ASSERT_TRUE(model);
  Io io(0);
  auto runWith = [&](cgrt_tensor input) {
    return cgrt_model_run(model.get(), &input, 1, io.outputs, 3);
  };
  cgrt_tensor t = io.input;
  t.dtype = CGRT_INT32;
  EXPECT_TRUE(hasStatus(runWith(t), CGRT_INVALID_ARGUMENT,
                        {"input 0 'input:x/0'", "dtype is int32",
                         "float32 [2, 128]"}));
  t = io.input;
  t.rank = 3;
  t.dims[2] = 1;
  EXPECT_TRUE(hasStatus(runWith(t), CGRT_INVALID_ARGUMENT,
                        {"input 0 'input:x/0'", "rank is 3"}));
  t = io.input;
  t.dims[1] = 64;
  EXPECT_TRUE(hasStatus(runWith(t), CGRT_INVALID_ARGUMENT,
                        {"input 0 'input:x/0'", "shape is [2, 64]",
                         "dim 1 differs"}));
  t = io.input;
  t.data = nullptr;
  EXPECT_TRUE(hasStatus(runWith(t), CGRT_INVALID_ARGUMENT,
                        {"input 0 'input:x/0'", "data is NULL"}));
  t = io.input;
  t.bytes = kSlotBytes - 1;
  EXPECT_TRUE(hasStatus(runWith(t), CGRT_INVALID_ARGUMENT,
                        {"input 0 'input:x/0'", "holds 1023 bytes",
                         "needs 1024"}));
  t = io.input;
  t.memory = static_cast<cgrt_memory>(9);
  EXPECT_TRUE(hasStatus(runWith(t), CGRT_INVALID_ARGUMENT,
                        {"input 0 'input:x/0'", "memory is 9"}));
  // A bigger buffer is fine.
  t = io.input;
  std::vector<float> big(kElements + 10);
  std::memcpy(big.data(), io.x.data(), kSlotBytes);
  t.data = big.data();
  t.bytes = big.size() * sizeof(float);
  EXPECT_OK(runWith(t));
  EXPECT_TRUE(io.matches());
}

TEST_F(GpuTest, InvalidOutputsNameTheOutput) {
  Model model = load();
  ASSERT_TRUE(model);
  Io io(0);
  io.outputs[1].bytes = 16;
  EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_INVALID_ARGUMENT,
                        {"output 1 'y2'", "holds 16 bytes"}));
  io.outputs[1].bytes = kSlotBytes;
  io.outputs[2].data = nullptr;
  EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_INVALID_ARGUMENT,
                        {"output 2 'y2_copy'", "data is NULL"}));
  io.outputs[2].data = io.y2Copy.data();
  io.outputs[0].dtype = CGRT_FLOAT16;
  EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_INVALID_ARGUMENT,
                        {"output 0 'y'", "dtype is float16"}));
}

TEST_F(GpuTest, WrongCountsAndNullArrays) {
  Model model = load();
  ASSERT_TRUE(model);
  Io io(0);
  cgrt_tensor two[2] = {io.input, io.input};
  EXPECT_TRUE(hasStatus(cgrt_model_run(model.get(), two, 2, io.outputs, 3),
                        CGRT_INVALID_ARGUMENT, {"2 inputs given", "has 1"}));
  EXPECT_TRUE(hasStatus(cgrt_model_run(model.get(), &io.input, 1, io.outputs, 2),
                        CGRT_INVALID_ARGUMENT, {"2 outputs given", "has 3"}));
  EXPECT_TRUE(hasStatus(cgrt_model_run(model.get(), nullptr, 1, io.outputs, 3),
                        CGRT_INVALID_ARGUMENT, {"inputs is NULL"}));
  EXPECT_TRUE(hasStatus(cgrt_model_run(model.get(), &io.input, 1, nullptr, 3),
                        CGRT_INVALID_ARGUMENT, {"outputs is NULL"}));
}

TEST_F(GpuTest, BenchmarkReportsPositiveTimes) {
  Model model = load();
  ASSERT_TRUE(model);
  cgrt_benchmark_result result;
  ASSERT_OK(cgrt_model_benchmark(model.get(), 5, 50, &result));
  EXPECT_GT(result.median_us, 0);
  EXPECT_GT(result.mean_us, 0);
  EXPECT_GE(result.p99_us, result.median_us);
  EXPECT_EQ(result.iterations, 50);
  EXPECT_EQ(result.graph_launches_per_run, 2);
  EXPECT_LT(result.median_us, 1e5); // 100 ms would be absurd
  // The model still runs correctly afterwards.
  Io io(2);
  ASSERT_OK(run(model.get(), io));
  EXPECT_TRUE(io.matches());
  EXPECT_TRUE(hasStatus(cgrt_model_benchmark(model.get(), 0, 0, &result),
                        CGRT_INVALID_ARGUMENT, {"iterations is 0"}));
  EXPECT_TRUE(hasStatus(cgrt_model_benchmark(model.get(), -1, 5, &result),
                        CGRT_INVALID_ARGUMENT, {"warmup is -1"}));
  EXPECT_TRUE(hasStatus(cgrt_model_benchmark(model.get(), 1, 5, nullptr),
                        CGRT_INVALID_ARGUMENT, {"result is NULL"}));
}

TEST_F(GpuTest, ConcurrentRunsAreSerialized) {
  Model model = load();
  ASSERT_TRUE(model);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        Io io(t * 100 + i);
        cgrt_status status = run(model.get(), io);
        if (status || !io.matches())
          ++failures;
        cgrt_status_free(status);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(GpuTest, TwoModelsAreIndependent) {
  Model a = load(), b = load();
  ASSERT_TRUE(a && b);
  Io ioA(1), ioB(2);
  ASSERT_OK(run(a.get(), ioA));
  ASSERT_OK(run(b.get(), ioB));
  a.reset();
  Io ioB2(3);
  ASSERT_OK(run(b.get(), ioB2));
  EXPECT_TRUE(ioA.matches());
  EXPECT_TRUE(ioB.matches());
  EXPECT_TRUE(ioB2.matches());
}

TEST_F(GpuTest, CorruptCubinFallsBackToPtx) {
  TempDir copy;
  copy.copyFilesFrom(testPackageDir());
  writeFile(copy.file("kernels.cubin"), std::string(512, '\x7f'));
  Model model = load(copy.path());
  ASSERT_TRUE(model);
  EXPECT_TRUE(cgrt::testing::kernelsFromPtx(model.get()));
  Io io(5);
  ASSERT_OK(run(model.get(), io));
  EXPECT_TRUE(io.matches());
}

TEST_F(GpuTest, InjectedCubinFailureFallsBackToPtx) {
  cgrt::testing::injectFault("cuModuleLoadData", 0,
                             CUDA_ERROR_NO_BINARY_FOR_GPU);
  Model model = load();
  ASSERT_TRUE(model);
  EXPECT_TRUE(cgrt::testing::kernelsFromPtx(model.get()));
  Io io(6);
  ASSERT_OK(run(model.get(), io));
  EXPECT_TRUE(io.matches());
}

TEST_F(GpuTest, PtxOnlyPackage) {
  ScopedEnv mode("CGRT_TEST_PACKAGE_MODE", "ptx_only");
  Model model = load();
  ASSERT_TRUE(model);
  EXPECT_TRUE(cgrt::testing::kernelsFromPtx(model.get()));
  Io io(7);
  ASSERT_OK(run(model.get(), io));
  EXPECT_TRUE(io.matches());
}

TEST_F(GpuTest, BothImagesFailingIsAnError) {
  cgrt::testing::injectFault("cuModuleLoadData", 0, CUDA_ERROR_INVALID_IMAGE);
  cgrt::testing::injectFault("cuModuleLoadData", 0, CUDA_ERROR_INVALID_PTX);
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"kernels.cubin", "CUDA_ERROR_INVALID_IMAGE",
                         "kernels.ptx", "CUDA_ERROR_INVALID_PTX"}));
}

TEST_F(GpuTest, MissingKernelIsNotFound) {
  ScopedEnv mode("CGRT_TEST_PACKAGE_MODE", "missing_kernel");
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_NOT_FOUND,
                        {"cuModuleGetFunction", "kernel 1 'no_such_kernel'"}));
}

TEST_F(GpuTest, FailingBuilderNamesTheNode) {
  ScopedEnv mode("CGRT_TEST_PACKAGE_MODE", "builder_fail");
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"graph 1 'copy'", "kernel node 'broken_node'",
                         "CUDA_ERROR_INVALID_VALUE"}));
}

TEST_F(GpuTest, InjectedNodeFailureNamesTheNodeAndGraph) {
  cgrt::testing::injectFault("cuGraphAddKernelNode", 1);
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"graph 0 'main'", "kernel node 'relu'"}));
  cgrt::testing::injectFault("cuGraphAddMemcpyNode");
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"graph 1 'copy'", "memcpy node 'copy_y2'"}));
  cgrt::testing::injectFault("cuGraphAddMemsetNode", 0,
                             CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_OUT_OF_MEMORY,
                        {"graph 0 'main'", "memset node 'zero_y'"}));
}

TEST_F(GpuTest, InjectedDriverFailuresNameTheCall) {
  cgrt::testing::injectFault("cuGraphInstantiateWithFlags", 1);
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"cuGraphInstantiateWithFlags failed for graph 1 "
                         "'copy' of model 'cgrt_test_package'"}));
  cgrt::testing::injectFault("cuGraphUpload");
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"cuGraphUpload failed for graph 0 'main'"}));
  cgrt::testing::injectFault("cuMemAlloc", 0, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_OUT_OF_MEMORY,
                        {"cuMemAlloc failed for the 5120-byte arena",
                         "bytes free"}));
  cgrt::testing::injectFault("cuMemcpyHtoD");
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"cuMemcpyHtoD failed for uploading 1024 bytes of "
                         "weights"}));
  cgrt::testing::injectFault("cuStreamCreate");
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR, {"cuStreamCreate"}));
  cgrt::testing::injectFault("cuDevicePrimaryCtxRetain");
  EXPECT_TRUE(hasStatus(loadStatus(), CGRT_CUDA_ERROR,
                        {"cuDevicePrimaryCtxRetain failed for device 0"}));
}

TEST_F(GpuTest, InjectedRunFailuresNameTheStep) {
  Model model = load();
  ASSERT_TRUE(model);
  Io io(0);
  cgrt::testing::injectFault("cuGraphLaunch", 1);
  EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_CUDA_ERROR,
                        {"cuGraphLaunch failed for step 1 (graph 1 'copy')"}));
  cgrt::testing::injectFault("cuMemcpyHtoDAsync");
  EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_CUDA_ERROR,
                        {"cuMemcpyHtoDAsync failed for input 0 'input:x/0'"}));
  cgrt::testing::injectFault("cuMemcpyDtoHAsync", 2);
  EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_CUDA_ERROR,
                        {"cuMemcpyDtoHAsync failed for output 2 'y2_copy'"}));
  // The model recovers: injected faults leave no sticky error.
  Io again(1);
  ASSERT_OK(run(model.get(), again));
  EXPECT_TRUE(again.matches());
}

TEST_F(GpuTest, DeviceOrdinalOutOfRange) {
  EXPECT_TRUE(hasStatus(loadStatus(testPackageDir(), 4096),
                        CGRT_INVALID_ARGUMENT,
                        {"device ordinal 4096 is out of range"}));
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CGRT_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CGRT_TEST_ASAN 1
#endif
#ifdef CGRT_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#endif

namespace {
/// Heap bytes this process has allocated and not freed. Not the resident
/// set: under AddressSanitizer that grows with the freed blocks it holds
/// in quarantine and the allocation stacks it records, neither a leak.
size_t heapBytesInUse() {
#ifdef CGRT_TEST_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

/// The test package (in the mode the caller set) loaded; null with
/// `message` set when it fails, `noNccl` when because NCCL cannot load.
cgrt_model *loadWithNccl(std::string &message, bool &noNccl) {
  cgrt_model *raw = nullptr;
  cgrt_status status = cgrt_model_load(testPackageDir().c_str(), nullptr, &raw);
  message = cgrt_status_get_message(status);
  noNccl = cgrt_status_get_code(status) == CGRT_NOT_FOUND &&
           message.find("cannot load NCCL") != std::string::npos;
  cgrt_status_free(status);
  return raw;
}
} // namespace

// An NCCL all-reduce node in a one-GPU package: the runtime makes a
// communicator of one rank itself, runs the call once and captures it into
// a child graph node; the sum over one rank leaves y2 as the kernels wrote
// it. On the stub driver the stub NCCL runs it (runtime.test sets
// CGRT_NCCL_LIBRARY); on the GPU, NCCL itself. Then the replays the
// several-GPU issue asks for: 10,000 runs (1,000 on the stub, which logs
// every call) with no growth of device or host memory.
TEST_F(GpuTest, AllReduceNodeOnOneRankReplaysWithoutGrowth) {
  ScopedEnv mode("CGRT_TEST_PACKAGE_MODE", "all_reduce");
  std::string message;
  bool noNccl = false;
  cgrt_model *raw = loadWithNccl(message, noNccl);
  if (noNccl)
    GTEST_SKIP() << message;
  ASSERT_NE(raw, nullptr) << message;
  Model model(raw);
  ASSERT_EQ(cgrt_model_num_library_nodes(model.get()), 1u);
  EXPECT_STREQ(cgrt_model_library_node_kernel(model.get(), 0), "sum_y2");
  // A collective moves data: no floating-point work to rate.
  EXPECT_EQ(cgrt_model_library_node_flops(model.get(), 0), 0.0);
  for (int seed = 0; seed < 4; ++seed) {
    Io io(seed);
    ASSERT_OK(run(model.get(), io));
    EXPECT_TRUE(io.matches()) << "seed " << seed;
  }

  const cgrt::Driver &d = cgrt::testing::driverOf(model.get());
  auto deviceFree = [&] {
    cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model.get()));
    size_t freeBytes = 0, total = 0;
    EXPECT_EQ(scope.take(), nullptr);
    EXPECT_EQ(d.cuMemGetInfo(&freeBytes, &total), CUDA_SUCCESS);
    return freeBytes;
  };
  Io io(5);
  int runs = stubDriver() ? 1000 : 10000;
  // The stub driver keeps a log of every call in memory: a first batch
  // grows its buffer, which the reset empties without shrinking, so the
  // measured batch finds room (else the test's verdict would depend on
  // which tests ran before it).
  if (const StubApi *stub = stubDriver()) {
    for (int i = 0; i < runs; ++i)
      ASSERT_OK(run(model.get(), io));
    stub->cgrt_stub_reset();
  }
  size_t freeBefore = deviceFree(), heapBefore = heapBytesInUse();
  for (int i = 0; i < runs; ++i)
    ASSERT_OK(run(model.get(), io));
  EXPECT_TRUE(io.matches());
  EXPECT_EQ(deviceFree(), freeBefore) << "device memory after " << runs
                                      << " runs";
  // Host memory: a few pages of slack (a run's error string, containers
  // that grew to their steady size).
  EXPECT_LE(heapBytesInUse(), heapBefore + (64u << 10))
      << "heap bytes in use after " << runs << " runs";
}

// An NCCL all-gather node in a one-GPU package: the runtime's desc reaches
// ncclAllGather (send, recv, count per rank), captured once; over one rank
// it copies y2 over y, at every replay. On the stub driver the stub NCCL
// runs it; on the GPU, NCCL itself.
TEST_F(GpuTest, AllGatherNodeOnOneRankCopiesItsPart) {
  ScopedEnv mode("CGRT_TEST_PACKAGE_MODE", "all_gather");
  std::string message;
  bool noNccl = false;
  cgrt_model *raw = loadWithNccl(message, noNccl);
  if (noNccl)
    GTEST_SKIP() << message;
  ASSERT_NE(raw, nullptr) << message;
  Model model(raw);
  ASSERT_EQ(cgrt_model_num_library_nodes(model.get()), 1u);
  EXPECT_STREQ(cgrt_model_library_node_kernel(model.get(), 0), "gather_y2");
  for (int seed = 0; seed < 3; ++seed) {
    Io io(seed);
    ASSERT_OK(run(model.get(), io));
    EXPECT_EQ(io.y, io.refY2) << "seed " << seed;
    EXPECT_EQ(io.y2, io.refY2) << "seed " << seed;
    EXPECT_EQ(io.y2Copy, io.refY2Copy) << "seed " << seed;
  }
  // A node whose buffers leave the arena is refused at load, by name.
  ScopedEnv outside("CGRT_TEST_PACKAGE_MODE", "all_gather_outside");
  cgrt_model *bad = nullptr;
  cgrt_status refused = cgrt_model_load(testPackageDir().c_str(), nullptr, &bad);
  EXPECT_EQ(bad, nullptr);
  EXPECT_TRUE(hasStatus(refused, CGRT_CUDA_ERROR,
                        {"gather_y2", "buffers outside the arena"}));
  // So is one whose dtype field holds no cgrt_dtype.
  ScopedEnv badType("CGRT_TEST_PACKAGE_MODE", "all_gather_bad_type");
  refused = cgrt_model_load(testPackageDir().c_str(), nullptr, &bad);
  EXPECT_EQ(bad, nullptr);
  EXPECT_TRUE(hasStatus(refused, CGRT_CUDA_ERROR,
                        {"gather_y2", "a type other than f32, f16, bf16, f64"}));
}
