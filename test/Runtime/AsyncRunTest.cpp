//===- AsyncRunTest.cpp - cgrt_model_run_async on a caller's stream -------===//
//
// Runs enqueued on a stream of the caller's (as PyTorch's current stream),
// without waiting: results, the ordering of runs on several streams through
// the shared arena, the refusals, and capture into the caller's own CUDA
// graph (on a real driver only: the stub never captures). On the stub the
// log shows which stream each launch went to and where a run waited.
//
//===----------------------------------------------------------------------===//

#include "GpuTest.h"
#include "StubTest.h"
#include "TestPackage.h"
#include "TestUtil.h"
#include "Testing.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace cgrttest;
using namespace testpkg;

namespace {

/// Device buffers for one inference (input, y, y2, y2_copy) and their
/// tensors, in the model's context.
struct DeviceIo {
  const cgrt::Driver &d;
  CUdeviceptr buffers[4] = {};
  cgrt_tensor input;
  cgrt_tensor outputs[3];

  explicit DeviceIo(const cgrt::Driver &driver) : d(driver) {
    for (CUdeviceptr &buffer : buffers)
      EXPECT_EQ(d.cuMemAlloc(&buffer, kSlotBytes), CUDA_SUCCESS);
    input = tensorOf(reinterpret_cast<void *>(buffers[0]), kSlotBytes,
                     CGRT_MEMORY_DEVICE);
    for (int i = 0; i < 3; ++i)
      outputs[i] = tensorOf(reinterpret_cast<void *>(buffers[i + 1]),
                            kSlotBytes, CGRT_MEMORY_DEVICE);
  }
  ~DeviceIo() {
    for (CUdeviceptr buffer : buffers)
      if (buffer)
        d.cuMemFree(buffer);
  }
  void write(const Io &io) {
    EXPECT_EQ(d.cuMemcpyHtoD(buffers[0], io.x.data(), kSlotBytes),
              CUDA_SUCCESS);
  }
  /// Reads the outputs back into `io` (after the stream is synchronized).
  void read(Io &io) {
    EXPECT_EQ(d.cuMemcpyDtoH(io.y.data(), buffers[1], kSlotBytes),
              CUDA_SUCCESS);
    EXPECT_EQ(d.cuMemcpyDtoH(io.y2.data(), buffers[2], kSlotBytes),
              CUDA_SUCCESS);
    EXPECT_EQ(d.cuMemcpyDtoH(io.y2Copy.data(), buffers[3], kSlotBytes),
              CUDA_SUCCESS);
  }
  cgrt_status runAsync(cgrt_model *model, CUstream stream) {
    return cgrt_model_run_async(model, &input, 1, outputs, 3, stream);
  }
};

class AsyncRunTest : public GpuTest {
protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped())
      return;
    model = load();
    ASSERT_TRUE(model);
    d = &cgrt::testing::driverOf(model.get());
    // The test's streams live in the primary context: hold it, so that a
    // model released before them does not take the context with it.
    ASSERT_EQ(d->cuDeviceGet(&device, 0), CUDA_SUCCESS);
    ASSERT_EQ(d->cuDevicePrimaryCtxRetain(&retained, device), CUDA_SUCCESS);
    scope.reset(new cgrt::ScopedContext(
        *d, cgrt::testing::contextOf(model.get())));
    ASSERT_OK(scope->take());
    if (const StubApi *stub = stubDriver())
      stub->cgrt_stub_reset();
    for (CUstream &s : streams)
      ASSERT_EQ(d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    // The stub's names of the two streams ("S12"), for its log.
    if (const StubApi *stub = stubDriver()) {
      std::string log = stub->log();
      for (std::string &name : streamNames) {
        size_t at = log.find("cuStreamCreate ");
        ASSERT_NE(at, std::string::npos) << log;
        at += std::strlen("cuStreamCreate ");
        name = log.substr(at, log.find(' ', at) - at);
        log = log.substr(at);
      }
    }
  }
  void TearDown() override {
    if (d) {
      model.reset(); // waits for what is still pending
      for (CUstream s : streams)
        if (s)
          d->cuStreamDestroy(s);
    }
    scope.reset();
    if (retained)
      d->cuDevicePrimaryCtxRelease(device);
    GpuTest::TearDown();
  }

  Model model{nullptr};
  const cgrt::Driver *d = nullptr;
  std::unique_ptr<cgrt::ScopedContext> scope;
  CUdevice device = 0;
  CUcontext retained = nullptr;
  CUstream streams[2] = {};
  std::string streamNames[2];
};

} // namespace

TEST_F(AsyncRunTest, RunsOnTheCallersStreamAndMatches) {
  const StubApi *stub = stubDriver();
  for (int seed = 0; seed < 3; ++seed) {
    Io io(seed);
    DeviceIo buffers(*d);
    buffers.write(io);
    if (stub)
      stub->cgrt_stub_reset();
    ASSERT_OK(buffers.runAsync(model.get(), streams[0]));
    if (stub) {
      // The graph went to the caller's stream, and the run did not wait.
      std::string log = stub->log();
      size_t launch = log.find("cuGraphLaunch");
      ASSERT_NE(launch, std::string::npos) << log;
      std::string line = log.substr(launch, log.find('\n', launch) - launch);
      EXPECT_NE(line.find(" on " + streamNames[0]), std::string::npos)
          << "not launched on the caller's stream " << streamNames[0] << "\n"
          << log;
      EXPECT_EQ(stub->cgrt_stub_calls("cuStreamSynchronize"), 0) << log;
    }
    ASSERT_EQ(d->cuStreamSynchronize(streams[0]), CUDA_SUCCESS);
    buffers.read(io);
    EXPECT_TRUE(io.matches()) << "seed " << seed;
  }
}

TEST_F(AsyncRunTest, RunsOnTwoStreamsShareTheArenaInTurn) {
  Io first(1), second(2);
  DeviceIo a(*d), b(*d);
  a.write(first);
  b.write(second);
  const StubApi *stub = stubDriver();
  ASSERT_OK(a.runAsync(model.get(), streams[0]));
  if (stub)
    stub->cgrt_stub_reset();
  // The second run waits on the GPU for the first: both use the arena.
  ASSERT_OK(b.runAsync(model.get(), streams[1]));
  if (stub)
    EXPECT_NE(stub->log().find("cuStreamWaitEvent"), std::string::npos)
        << stub->log();
  ASSERT_EQ(d->cuStreamSynchronize(streams[1]), CUDA_SUCCESS);
  ASSERT_EQ(d->cuStreamSynchronize(streams[0]), CUDA_SUCCESS);
  a.read(first);
  b.read(second);
  EXPECT_TRUE(first.matches());
  EXPECT_TRUE(second.matches());
  // A synchronous run after them waits as well, and returns the right data.
  Io host(3);
  ASSERT_OK(a.runAsync(model.get(), streams[0]));
  ASSERT_OK(run(model.get(), host));
  EXPECT_TRUE(host.matches());
}

TEST_F(AsyncRunTest, NullStreamIsTheDefaultStream) {
  // NULL means CUDA's legacy default stream (PyTorch's default stream), so
  // work queued there afterwards, like a copy, sees the outputs.
  Io io(4);
  DeviceIo buffers(*d);
  buffers.write(io);
  if (const StubApi *stub = stubDriver())
    stub->cgrt_stub_reset();
  ASSERT_OK(buffers.runAsync(model.get(), nullptr));
  if (const StubApi *stub = stubDriver()) {
    std::string log = stub->log();
    size_t launch = log.find("cuGraphLaunch");
    ASSERT_NE(launch, std::string::npos) << log;
    std::string line = log.substr(launch, log.find('\n', launch) - launch);
    EXPECT_NE(line.find(" on default"), std::string::npos) << line;
  }
  ASSERT_EQ(d->cuStreamSynchronize(CU_STREAM_LEGACY), CUDA_SUCCESS);
  buffers.read(io);
  EXPECT_TRUE(io.matches());
  // A benchmark, like any later use of the arena, follows the pending run.
  cgrt_benchmark_result result;
  ASSERT_OK(cgrt_model_benchmark(model.get(), 0, 2, &result));
}

TEST_F(AsyncRunTest, HostInputsAreStagedHostOutputsRefused) {
  Io io(5);
  DeviceIo buffers(*d);
  // A host input: the copy is staged before the call returns.
  cgrt_tensor hostInput = tensorOf(io.x.data(), kSlotBytes);
  ASSERT_OK(cgrt_model_run_async(model.get(), &hostInput, 1, buffers.outputs,
                                 3, streams[0]));
  std::fill(io.x.begin(), io.x.end(), 1e9f); // must not reach the run
  ASSERT_EQ(d->cuStreamSynchronize(streams[0]), CUDA_SUCCESS);
  Io expected(5);
  buffers.read(expected);
  EXPECT_TRUE(expected.matches());

  cgrt_tensor outputs[3] = {buffers.outputs[0], io.outputs[1],
                            buffers.outputs[2]};
  EXPECT_TRUE(hasStatus(cgrt_model_run_async(model.get(), &buffers.input, 1,
                                             outputs, 3, streams[0]),
                        CGRT_INVALID_ARGUMENT,
                        {"cgrt_model_run_async: output 1 'y2' is in host "
                         "memory",
                         "device buffers only"}));
}

TEST_F(AsyncRunTest, ValidationNamesTheAsyncCall) {
  DeviceIo buffers(*d);
  cgrt_tensor input = buffers.input;
  input.dims[1] = kCols + 1;
  EXPECT_TRUE(hasStatus(
      cgrt_model_run_async(model.get(), &input, 1, buffers.outputs, 3,
                           streams[0]),
      CGRT_INVALID_ARGUMENT, {"cgrt_model_run_async: input 0 '", "shape is [2, 129]"}));
  EXPECT_TRUE(hasStatus(cgrt_model_run_async(nullptr, &input, 1,
                                             buffers.outputs, 3, streams[0]),
                        CGRT_INVALID_ARGUMENT, {"model is NULL"}));
  EXPECT_TRUE(hasStatus(cgrt_model_run_async(model.get(), &buffers.input, 1,
                                             buffers.outputs, 2, streams[0]),
                        CGRT_INVALID_ARGUMENT, {"2 outputs given"}));
}

TEST_F(AsyncRunTest, CapturedIntoTheCallersGraph) {
  if (!d->cuStreamBeginCapture || !d->cuStreamGetCaptureInfo)
    GTEST_SKIP() << "no GPU: stream capture needs a real driver "
                    "(CUDA 12.3+); the stub driver has none";
  DeviceIo buffers(*d);
  Io io(6);
  buffers.write(io);
  int capturing = -1;
  ASSERT_OK(cgrt_stream_is_capturing(streams[0], &capturing));
  EXPECT_EQ(capturing, 0);
  ASSERT_EQ(d->cuStreamBeginCapture(streams[0],
                                    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS);
  ASSERT_OK(cgrt_stream_is_capturing(streams[0], &capturing));
  EXPECT_EQ(capturing, 1);
  // Host inputs cannot be captured; the refusal leaves the capture intact.
  cgrt_tensor hostInput = tensorOf(io.x.data(), kSlotBytes);
  EXPECT_TRUE(hasStatus(cgrt_model_run_async(model.get(), &hostInput, 1,
                                             buffers.outputs, 3, streams[0]),
                        CGRT_INVALID_ARGUMENT,
                        {"input 0 '", "is in host memory", "capture"}));
  ASSERT_OK(buffers.runAsync(model.get(), streams[0]));
  CUgraph graph = nullptr;
  ASSERT_EQ(d->cuStreamEndCapture(streams[0], &graph), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(d->cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  // Each replay is a whole inference on what the input buffer holds then,
  // also after direct runs of the model have rebound its own graphs.
  for (int seed = 7; seed < 10; ++seed) {
    Io next(seed);
    buffers.write(next);
    ASSERT_EQ(d->cuGraphLaunch(exec, streams[1]), CUDA_SUCCESS);
    ASSERT_EQ(d->cuStreamSynchronize(streams[1]), CUDA_SUCCESS);
    buffers.read(next);
    EXPECT_TRUE(next.matches()) << "replay with seed " << seed;
    DeviceIo other(*d);
    Io direct(seed + 10);
    other.write(direct);
    ASSERT_OK(other.runAsync(model.get(), streams[0]));
    ASSERT_EQ(d->cuStreamSynchronize(streams[0]), CUDA_SUCCESS);
    other.read(direct);
    EXPECT_TRUE(direct.matches());
  }
  d->cuGraphExecDestroy(exec);
  d->cuGraphDestroy(graph);
}

// The query cgc's Python call path makes before choosing output buffers:
// streams that capture nothing say so (the capture itself is checked above,
// on a real driver); a NULL result pointer is refused by name.
TEST_F(AsyncRunTest, StreamIsCapturingAnswersOutsideACapture) {
  int capturing = -1;
  ASSERT_OK(cgrt_stream_is_capturing(streams[0], &capturing));
  EXPECT_EQ(capturing, 0);
  capturing = -1;
  ASSERT_OK(cgrt_stream_is_capturing(nullptr, &capturing)); // legacy stream
  EXPECT_EQ(capturing, 0);
  EXPECT_TRUE(hasStatus(cgrt_stream_is_capturing(streams[0], nullptr),
                        CGRT_INVALID_ARGUMENT,
                        {"cgrt_stream_is_capturing: capturing is NULL"}));
}

TEST_F(AsyncRunTest, ReleaseWaitsForAPendingRun) {
  DeviceIo buffers(*d);
  Io io(11);
  buffers.write(io);
  for (int i = 0; i < 8; ++i)
    ASSERT_OK(buffers.runAsync(model.get(), streams[0]));
  model.reset(); // frees the arena only after the runs
  ASSERT_EQ(d->cuStreamSynchronize(streams[0]), CUDA_SUCCESS);
  buffers.read(io);
  EXPECT_TRUE(io.matches());
}
