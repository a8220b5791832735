//===- StubDriverTest.cpp - the run path, seen from the driver's side -----===//
//
// Tests that need the stub driver (StubTest.h; they skip on a GPU machine,
// where GpuTest runs the numerical checks for real): what a load builds,
// which driver calls a run makes and in what order, what they copy where
// (padding included), which kernel nodes zero-copy I/O rebinds and when it
// must not, how cgc's conditional nodes are wired to their handles and
// replayed, and how driver failures are reported and cleaned up.
//
// What these cannot prove: that a kernel computes the right thing (only
// host stand-ins of the test kernels and of cgc's condition kernels run),
// that a real driver accepts what the stub accepts (graph update rules,
// conditional node restrictions), timing, or asynchronous errors (the stub
// does everything at once, on the calling thread). docs/testing.md, "The
// runtime without a GPU".
//
//===----------------------------------------------------------------------===//

#include "StubTest.h"
#include "TestPackage.h"
#include "TestUtil.h"
#include "Testing.h"

#include <cstdlib>
#include <cstring>
#include <regex>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace cgrttest;
using namespace testpkg;

namespace {

size_t occurrences(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1))
    ++n;
  return n;
}

/// "M7" for the arena of `model`: its slots read "M7+<offset>" in the log.
std::string arenaName(const StubApi &stub, const cgrt_model *model) {
  std::string name = stub.pointer(cgrt::testing::arenaOf(model));
  return name.substr(0, name.find('+'));
}

/// Copies of device memory in the model's context.
std::vector<unsigned char> readDevice(const cgrt_model *model, CUdeviceptr p,
                                      size_t bytes) {
  const cgrt::Driver &d = cgrt::testing::driverOf(model);
  cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model));
  std::vector<unsigned char> out(bytes);
  EXPECT_EQ(d.cuMemcpyDtoH(out.data(), p, bytes), CUDA_SUCCESS);
  return out;
}

void writeDevice(const cgrt_model *model, CUdeviceptr p, const void *host,
                 size_t bytes) {
  const cgrt::Driver &d = cgrt::testing::driverOf(model);
  cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model));
  EXPECT_EQ(d.cuMemcpyHtoD(p, host, bytes), CUDA_SUCCESS);
}

/// Device buffers in the model's context, freed at the end of the scope.
class Buffers {
public:
  explicit Buffers(const cgrt_model *model)
      : d(cgrt::testing::driverOf(model)),
        context(cgrt::testing::contextOf(model)) {}
  ~Buffers() {
    cgrt::ScopedContext scope(d, context);
    for (CUdeviceptr b : all)
      d.cuMemFree(b);
  }
  CUdeviceptr alloc(size_t bytes) {
    cgrt::ScopedContext scope(d, context);
    CUdeviceptr b = 0;
    EXPECT_EQ(d.cuMemAlloc(&b, bytes), CUDA_SUCCESS);
    all.push_back(b);
    return b;
  }

private:
  const cgrt::Driver &d;
  CUcontext context;
  std::vector<CUdeviceptr> all;
};

cgrt_tensor deviceTensor(CUdeviceptr p, size_t bytes) {
  return tensorOf(reinterpret_cast<void *>(p), bytes, CGRT_MEMORY_DEVICE);
}

/// Two sets of device buffers for the test package's three outputs, as
/// cgc.Model's output pool hands them out in turn.
struct OutputSets {
  explicit OutputSets(Buffers &buffers) {
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 3; ++i) {
        buffers_[k][i] = buffers.alloc(kSlotBytes);
        tensors[k][i] = deviceTensor(buffers_[k][i], kSlotBytes);
      }
  }
  CUdeviceptr buffer(int set, int output) const {
    return buffers_[set][output];
  }
  cgrt_tensor tensors[2][3];

private:
  CUdeviceptr buffers_[2][3];
};

Model loadIn(const char *mode, const std::string &dir = testPackageDir()) {
  ScopedEnv env("CGRT_TEST_PACKAGE_MODE", mode);
  cgrt_model *model = nullptr;
  cgrt_status status = cgrt_model_load(dir.c_str(), nullptr, &model);
  EXPECT_EQ(status, nullptr) << cgrt_status_get_message(status);
  cgrt_status_free(status);
  return Model(model);
}

/// The stub's name of the instantiated graph `index` of `model` ("E12").
std::string execName(const StubApi &stub, const cgrt_model *model,
                     size_t index) {
  return stub.cgrt_stub_exec_name(cgrt::testing::execOf(model, index));
}

} // namespace

//--- What a load builds ----------------------------------------------------//

TEST_F(StubTest, LoadBuildsTheGraphsTheBuildersDescribe) {
  Model model = load();
  ASSERT_TRUE(model);
  std::string a = arenaName(*stub, model.get());
  std::string main = stub->graphText(cgrt::testing::graphOf(model.get(), 0));
  std::string copy = stub->graphText(cgrt::testing::graphOf(model.get(), 1));
  // Every pointer is the arena plus the slot's offset (TestPackage.h).
  EXPECT_NE(main.find("memset " + a + "+2048 value 0x0 x 256 (4-byte"),
            std::string::npos)
      << main;
  EXPECT_NE(main.find("kernel test_affine_accumulate grid 2x1x1 block "
                      "128x1x1 smem 0 deps"),
            std::string::npos)
      << main;
  EXPECT_NE(main.find("params " + a + "+0 " + a + "+1024 " + a + "+2048 256"),
            std::string::npos)
      << main;
  EXPECT_NE(main.find("params " + a + "+2048 " + a + "+3072 256"),
            std::string::npos)
      << main;
  EXPECT_NE(copy.find("memcpy " + a + "+4096 <- " + a + "+3072 1024 bytes"),
            std::string::npos)
      << copy;
  // The weights were uploaded to their offset and the arena cleared first.
  std::string log = stub->log();
  size_t clear = log.find("cuMemsetD8 " + a + "+0 0x00 5120 bytes");
  EXPECT_NE(
      findFrom(log, "cuMemcpyHtoD " + a + "+1024 <- host 1024 bytes", clear),
      std::string::npos)
      << log;
}

//--- What a run does -------------------------------------------------------//

TEST_F(StubTest, RunCopiesInReplaysInOrderAndCopiesOut) {
  Model model = load();
  ASSERT_TRUE(model);
  std::string a = arenaName(*stub, model.get());
  stub->cgrt_stub_reset();
  Io io(3);
  ASSERT_OK(run(model.get(), io));
  EXPECT_TRUE(io.matches());
  std::string log = stub->log();
  size_t at = log.find("cuMemcpyHtoDAsync " + a + "+0 <- host 1024 bytes");
  at = findFrom(log, "cuGraphLaunch " + execName(*stub, model.get(), 0) + " ",
                at);
  at = findFrom(log, "cuGraphLaunch " + execName(*stub, model.get(), 1) + " ",
                at);
  for (const char *slot : {"+2048", "+3072", "+4096"})
    at = findFrom(log, "cuMemcpyDtoHAsync host <- " + a + slot + " 1024 bytes",
                  at);
  EXPECT_NE(at, std::string::npos) << "out of order or missing:\n" << log;
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphLaunch"), 2u);
  EXPECT_EQ(stub->cgrt_stub_calls("cuStreamSynchronize"), 1u)
      << "one wait per run, after the output copies";
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 0u)
      << "host buffers are never bound in place";
  EXPECT_EQ(stub->cgrt_stub_calls("cuMemAlloc"), 0u) << "a run allocates";
}

TEST_F(StubTest, InvalidRunsAreRejectedBeforeAnyDriverCall) {
  Model model = load();
  ASSERT_TRUE(model);
  stub->cgrt_stub_reset();
  Io io(0);
  auto runWith = [&](cgrt_tensor input) {
    return cgrt_model_run(model.get(), &input, 1, io.outputs, 3);
  };
  struct Case {
    const char *what;
    void (*change)(cgrt_tensor &);
    const char *message;
  };
  const Case cases[] = {
      {"dtype", [](cgrt_tensor &t) { t.dtype = CGRT_INT64; },
       "dtype is int64, the model expects float32 [2, 128]"},
      {"rank", [](cgrt_tensor &t) { t.rank = 1; }, "rank is 1"},
      {"shape", [](cgrt_tensor &t) { t.dims[0] = 3; },
       "shape is [3, 128], the model expects float32 [2, 128] (dim 0 "
       "differs)"},
      {"data", [](cgrt_tensor &t) { t.data = nullptr; }, "data is NULL"},
      {"bytes", [](cgrt_tensor &t) { t.bytes = 4; },
       "the buffer holds 4 bytes, float32 [2, 128] needs 1024"},
      {"memory", [](cgrt_tensor &t) { t.memory = static_cast<cgrt_memory>(2); },
       "memory is 2, neither CGRT_MEMORY_HOST nor CGRT_MEMORY_DEVICE"},
  };
  for (const Case &c : cases) {
    cgrt_tensor t = io.input;
    c.change(t);
    EXPECT_TRUE(hasStatus(runWith(t), CGRT_INVALID_ARGUMENT,
                          {"cgrt_model_run: input 0 'input:x/0'", c.message}))
        << c.what;
  }
  EXPECT_TRUE(hasStatus(cgrt_model_run(model.get(), &io.input, 1, nullptr, 3),
                        CGRT_INVALID_ARGUMENT, {"outputs is NULL"}));
  EXPECT_TRUE(hasStatus(cgrt_model_run(nullptr, &io.input, 1, io.outputs, 3),
                        CGRT_INVALID_ARGUMENT, {"model is NULL"}));
  EXPECT_EQ(stub->log(), "") << "an invalid run reached the driver";
  EXPECT_EQ(stub->cgrt_stub_calls("cuCtxGetCurrent"), 0u);
}

//--- Shape buckets and padding ---------------------------------------------//

// One row runs padded in the 2-row bucket: the slot is cleared before the
// caller's row is copied in (so the padded row is zeros, not the previous
// run's), and only the caller's rows are copied out.
TEST_F(StubTest, PaddedRunClearsThePaddingAndCopiesOnlyTheCallersRows) {
  Model model = loadIn("buckets_padded");
  ASSERT_TRUE(model);
  std::string a = arenaName(*stub, model.get());
  Io full(1); // both rows, leaving nonzero data in the whole slot
  ASSERT_OK(run(model.get(), full));
  EXPECT_TRUE(full.matches());

  stub->cgrt_stub_reset();
  Io io(2);
  io.input.dims[0] = 1;
  for (cgrt_tensor &out : io.outputs)
    out.dims[0] = 1;
  ASSERT_OK(run(model.get(), io));
  for (int i = 0; i < kCols; ++i)
    ASSERT_EQ(io.y2[i], io.refY2[i]) << "element " << i;
  for (int i = kCols; i < kElements; ++i)
    ASSERT_EQ(io.y2[i], -7.0f) << "element " << i << " past the caller's row";
  EXPECT_EQ(io.outputs[1].dims[0], 1);

  std::string log = stub->log();
  size_t at = log.find("cuMemsetD8Async " + a + "+0 0x00 1024 bytes");
  at = findFrom(log,
                "cuMemcpy2DAsync " + a +
                    "+0 (pitch 1024) <- host (pitch 512) 512 bytes x 1 rows",
                at);
  for (const char *slot : {"+2048", "+3072", "+4096"})
    at = findFrom(log,
                  std::string("cuMemcpy2DAsync host (pitch 512) <- ") + a +
                      slot + " (pitch 1024) 512 bytes x 1 rows",
                  at);
  EXPECT_NE(at, std::string::npos) << log;

  std::vector<unsigned char> slot =
      readDevice(model.get(), cgrt::testing::arenaOf(model.get()), kSlotBytes);
  EXPECT_EQ(0, std::memcmp(slot.data(), io.x.data(), kSlotBytes / 2))
      << "the caller's row";
  EXPECT_EQ(
      std::vector<unsigned char>(slot.begin() + kSlotBytes / 2, slot.end()),
      std::vector<unsigned char>(kSlotBytes / 2, 0))
      << "the padded row is zeros, not the first run's second row";
}

// An exact bucket is used as it is: no clearing, plain copies.
TEST_F(StubTest, AnExactBucketIsNotPadded) {
  Model model = loadIn("buckets");
  ASSERT_TRUE(model);
  std::string a = arenaName(*stub, model.get());
  stub->cgrt_stub_reset();
  Io io(2);
  io.input.dims[0] = 1;
  ASSERT_OK(run(model.get(), io));
  std::string log = stub->log();
  EXPECT_NE(log.find("cuMemcpyHtoDAsync " + a + "+0 <- host 512 bytes"),
            std::string::npos)
      << log;
  EXPECT_EQ(stub->cgrt_stub_calls("cuMemsetD8Async"), 0u) << log;
  EXPECT_EQ(stub->cgrt_stub_calls("cuMemcpy2DAsync"), 0u) << log;
}

// cgc's buckets N = 1, 2, 4, 8 with --pad-to-bucket: each size runs the
// graph of the smallest bucket it fits, padded where it is not one.
TEST_F(StubTest, EachSizeRunsTheSmallestBucketThatFits) {
  std::string skip;
  std::string dir =
      cgcPackage("bucketed", "--dim N=1,2,4,8 --pad-to-bucket", &skip);
  if (dir.empty() && !skip.empty())
    GTEST_SKIP() << skip;
  ASSERT_FALSE(dir.empty());
  Model model = load(dir);
  ASSERT_TRUE(model);
  const cgrt_package &p = cgrt::testing::packageOf(model.get());
  ASSERT_EQ(p.num_buckets, 4u);
  ASSERT_TRUE(p.pad_to_bucket);
  const int64_t expected[][2] = {{1, 1}, {2, 2}, {3, 4}, {4, 4},
                                 {5, 8}, {7, 8}, {8, 8}};
  for (const auto &e : expected) {
    int64_t used = e[0], bucket = e[1];
    size_t b = 0;
    while (p.buckets[b].value != bucket)
      ++b;
    size_t graph = static_cast<size_t>(p.buckets[b].steps[0].index);
    std::vector<float> x(static_cast<size_t>(used * 64), 1.0f),
        y(static_cast<size_t>(used * 64), -1.0f);
    cgrt_tensor in = tensorOf(x.data(), x.size() * sizeof(float));
    cgrt_tensor out = tensorOf(y.data(), y.size() * sizeof(float));
    in.dims[0] = out.dims[0] = used;
    in.dims[1] = out.dims[1] = 64;
    stub->cgrt_stub_reset();
    ASSERT_OK(cgrt_model_run(model.get(), &in, 1, &out, 1));
    std::string log = stub->log();
    EXPECT_EQ(stub->cgrt_stub_calls("cuGraphLaunch"), 1u);
    EXPECT_NE(
        log.find("cuGraphLaunch " + execName(*stub, model.get(), graph) + " "),
        std::string::npos)
        << "N=" << used << " should run bucket " << bucket << " (graph "
        << graph << " '" << p.graph_names[graph] << "'):\n"
        << log;
    EXPECT_EQ(out.dims[0], used);
    bool padded = used != bucket;
    EXPECT_EQ(stub->cgrt_stub_calls("cuMemsetD8Async"), padded ? 1u : 0u)
        << "N=" << used << ":\n"
        << log;
    if (padded)
      EXPECT_NE(log.find(std::to_string(used * 256) + " bytes x 1 rows"),
                std::string::npos)
          << log;
  }
  // Aligned device buffers are bound in place in an exact bucket; a padded
  // run in the same bucket must point its kernels back at the slots (they
  // read and write whole buckets) and copy through them.
  size_t b4 = 0;
  while (p.buckets[b4].value != 4)
    ++b4;
  size_t graph4 = static_cast<size_t>(p.buckets[b4].steps[0].index);
  std::string a = arenaName(*stub, model.get());
  Buffers buffers(model.get());
  for (int64_t used : {int64_t{4}, int64_t{3}}) {
    // Room for the whole bucket either way: size alone must not decide.
    size_t bytes = 4 * 64 * sizeof(float);
    CUdeviceptr dx = buffers.alloc(bytes), dy = buffers.alloc(bytes);
    cgrt_tensor in = deviceTensor(dx, bytes), out = deviceTensor(dy, bytes);
    in.dims[0] = out.dims[0] = used;
    in.dims[1] = out.dims[1] = 64;
    stub->cgrt_stub_reset();
    ASSERT_OK(cgrt_model_run(model.get(), &in, 1, &out, 1));
    bool padded = used == 3;
    std::string bound =
        stub->execText(cgrt::testing::runExecOf(model.get(), graph4));
    std::string callers = stub->pointer(dx) + " " + stub->pointer(dy);
    EXPECT_EQ(bound.find("params " + callers) != std::string::npos, !padded)
        << "N=" << used << ":\n"
        << bound << stub->log();
    EXPECT_EQ(bound.find("params " + a + "+") != std::string::npos, padded)
        << "N=" << used << ":\n"
        << bound;
    EXPECT_EQ(stub->cgrt_stub_calls("cuMemcpy2DAsync"), padded ? 2u : 0u)
        << "N=" << used << ":\n"
        << stub->log();
  }
  std::vector<float> x(9 * 64), y(9 * 64);
  cgrt_tensor in = tensorOf(x.data(), x.size() * sizeof(float));
  cgrt_tensor out = tensorOf(y.data(), y.size() * sizeof(float));
  in.dims[0] = out.dims[0] = 9;
  in.dims[1] = out.dims[1] = 64;
  EXPECT_TRUE(hasStatus(cgrt_model_run(model.get(), &in, 1, &out, 1),
                        CGRT_INVALID_ARGUMENT,
                        {"'x' [9, 64]", "match no shape bucket",
                         "N = 1, 2, 4, 8", "larger ones cannot"}));
}

//--- Zero-copy I/O ---------------------------------------------------------//

// The test package's zero_copy mode: aligned device buffers are bound into
// the instantiated graph (only when a pointer changes), and everything else
// goes back to the slots.
TEST_F(StubTest, ZeroCopyBindsAlignedDeviceBuffersOnlyAndOnlyWhenTheyChange) {
  Model model = loadIn("zero_copy");
  ASSERT_TRUE(model);
  std::string a = arenaName(*stub, model.get());
  CUgraphExec exec = cgrt::testing::execOf(model.get(), 0);
  Buffers buffers(model.get());
  CUdeviceptr in = buffers.alloc(kSlotBytes);
  CUdeviceptr out[3] = {buffers.alloc(kSlotBytes), buffers.alloc(kSlotBytes),
                        buffers.alloc(kSlotBytes)};
  Io io(4);
  writeDevice(model.get(), in, io.x.data(), kSlotBytes);
  cgrt_tensor input = deviceTensor(in, kSlotBytes);
  cgrt_tensor outputs[3];
  for (int i = 0; i < 3; ++i)
    outputs[i] = deviceTensor(out[i], kSlotBytes);

  stub->cgrt_stub_reset();
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, outputs, 3));
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 2u);
  EXPECT_EQ(stub->cgrt_stub_calls("cuMemcpyDtoDAsync"), 0u) << stub->log();
  std::string bound = stub->execText(exec);
  EXPECT_NE(bound.find("params " + stub->pointer(in) + " " + a + "+1024 " +
                       stub->pointer(out[0])),
            std::string::npos)
      << bound;
  EXPECT_NE(bound.find("params " + stub->pointer(out[0]) + " " +
                       stub->pointer(out[1]) + " " + stub->pointer(out[2])),
            std::string::npos)
      << bound;
  // The graph as built is untouched: only the instantiated copy moved.
  EXPECT_NE(stub->graphText(cgrt::testing::graphOf(model.get(), 0))
                .find("params " + a + "+0 " + a + "+1024 " + a + "+2048"),
            std::string::npos);
  std::vector<unsigned char> y2 = readDevice(model.get(), out[1], kSlotBytes);
  EXPECT_EQ(0, std::memcmp(y2.data(), io.refY2.data(), kSlotBytes));

  stub->cgrt_stub_reset();
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, outputs, 3));
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 0u)
      << "the same buffers again: nothing to update";

  stub->cgrt_stub_reset();
  ASSERT_OK(run(model.get(), io)); // host buffers
  // A second binding gets a second exec, instantiated as built: its nodes
  // point at the slots already, and the first keeps the device buffers.
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphInstantiateWithFlags"), 1u);
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 0u);
  CUgraphExec second = cgrt::testing::execOf(model.get(), 0, 1);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(cgrt::testing::runExecOf(model.get(), 0), second);
  EXPECT_NE(stub->execText(second).find("params " + a + "+0 " + a + "+1024 " +
                                        a + "+2048"),
            std::string::npos);
  EXPECT_NE(stub->execText(exec).find("params " + stub->pointer(in)),
            std::string::npos);
  EXPECT_TRUE(io.matches());

  // Misaligned device buffers are copied through the slots.
  CUdeviceptr base = buffers.alloc(kSlotBytes + 256);
  writeDevice(model.get(), base + 4, io.x.data(), kSlotBytes);
  cgrt_tensor misaligned = deviceTensor(base + 4, kSlotBytes);
  stub->cgrt_stub_reset();
  ASSERT_OK(cgrt_model_run(model.get(), &misaligned, 1, outputs, 3));
  std::string log = stub->log();
  EXPECT_NE(log.find("cuMemcpyDtoDAsync " + a + "+0 <- " +
                     stub->pointer(base + 4) + " 1024 bytes"),
            std::string::npos)
      << log;
  // Neither exec holds this binding: the one run longest ago (the first,
  // its outputs bound already) is rebound, and only the input's node
  // changes.
  EXPECT_EQ(cgrt::testing::runExecOf(model.get(), 0), exec);
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 1u) << log;
  EXPECT_NE(stub->execText(exec).find("params " + a + "+0 " + a + "+1024 " +
                                      stub->pointer(out[0])),
            std::string::npos)
      << stub->execText(exec);

  // Turned off: everything through the slots (the second exec's binding).
  cgrt_model_set_zero_copy(model.get(), 0);
  stub->cgrt_stub_reset();
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, outputs, 3));
  EXPECT_EQ(stub->cgrt_stub_calls("cuMemcpyDtoDAsync"), 4u) << stub->log();
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 0u);
  EXPECT_EQ(cgrt::testing::runExecOf(model.get(), 0), second);
}

// Two sets of outputs in turn (what cgc.Model's pool hands out when the
// caller keeps the last result): each run points the nodes at its own set,
// and a run with the last run's buffers changes nothing.
TEST_F(StubTest, ZeroCopyFollowsOutputSetsTakenInTurn) {
  Model model = loadIn("zero_copy");
  ASSERT_TRUE(model);
  Buffers buffers(model.get());
  CUdeviceptr in = buffers.alloc(kSlotBytes);
  Io io(6);
  writeDevice(model.get(), in, io.x.data(), kSlotBytes);
  cgrt_tensor input = deviceTensor(in, kSlotBytes);
  OutputSets sets(buffers);
  std::vector<unsigned char> stale(kSlotBytes, 0xee);
  CUgraphExec execOfSet[2] = {nullptr, nullptr};
  for (int turn : {0, 1, 0, 1, 1}) {
    for (int i = 0; i < 3; ++i)
      writeDevice(model.get(), sets.buffer(turn, i), stale.data(), kSlotBytes);
    stub->cgrt_stub_reset();
    ASSERT_OK(cgrt_model_run(model.get(), &input, 1, sets.tensors[turn], 3));
    // Each set is bound once, in an exec of its own (both nodes write
    // outputs); afterwards its runs update nothing.
    CUgraphExec launched = cgrt::testing::runExecOf(model.get(), 0);
    bool first = !execOfSet[turn];
    if (first)
      execOfSet[turn] = launched;
    EXPECT_EQ(launched, execOfSet[turn]) << "turn " << turn;
    EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"),
              first ? 2u : 0u)
        << "turn " << turn;
    std::string bound = stub->execText(launched);
    EXPECT_NE(bound.find("params " + stub->pointer(sets.buffer(turn, 0)) + " " +
                         stub->pointer(sets.buffer(turn, 1)) + " " +
                         stub->pointer(sets.buffer(turn, 2))),
              std::string::npos)
        << "turn " << turn << ": " << bound;
    std::vector<unsigned char> y2 =
        readDevice(model.get(), sets.buffer(turn, 1), kSlotBytes);
    EXPECT_EQ(0, std::memcmp(y2.data(), io.refY2.data(), kSlotBytes))
        << "turn " << turn;
  }
  EXPECT_NE(execOfSet[0], execOfSet[1]);
}

// The second exec set is an optimization: when its instantiation fails the
// run still succeeds, on the first set rebound, and no second set is tried
// again (nor leaked).
TEST_F(StubTest, ASecondExecSetThatCannotBeMadeLeavesTheFirstToRebind) {
  Model model = loadIn("zero_copy");
  ASSERT_TRUE(model);
  CUgraphExec first = cgrt::testing::execOf(model.get(), 0);
  Buffers buffers(model.get());
  CUdeviceptr in = buffers.alloc(kSlotBytes);
  Io io(7);
  writeDevice(model.get(), in, io.x.data(), kSlotBytes);
  cgrt_tensor input = deviceTensor(in, kSlotBytes);
  OutputSets sets(buffers);
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, sets.tensors[0], 3));
  long long execs = stub->cgrt_stub_live("execs");
  stub->cgrt_stub_reset();
  stub->cgrt_stub_fail("cuGraphInstantiateWithFlags", 0,
                       CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, sets.tensors[1], 3));
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphInstantiateWithFlags"), 1u);
  EXPECT_EQ(cgrt::testing::execOf(model.get(), 0, 1), nullptr);
  EXPECT_EQ(cgrt::testing::runExecOf(model.get(), 0), first);
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 2u);
  EXPECT_EQ(stub->cgrt_stub_live("execs"), execs);
  std::vector<unsigned char> y2 =
      readDevice(model.get(), sets.buffer(1, 1), kSlotBytes);
  EXPECT_EQ(0, std::memcmp(y2.data(), io.refY2.data(), kSlotBytes));
  stub->cgrt_stub_reset();
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, sets.tensors[0], 3));
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphInstantiateWithFlags"), 0u)
      << "a failed second set is not tried again";
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 2u);
}

// A failed rebind leaves the graph in an unknown binding; the next run
// must update every node again rather than trust what it recorded.
TEST_F(StubTest, AFailedRebindIsRedoneByTheNextRun) {
  Model model = loadIn("zero_copy");
  ASSERT_TRUE(model);
  Buffers buffers(model.get());
  CUdeviceptr in = buffers.alloc(kSlotBytes);
  CUdeviceptr out[3] = {buffers.alloc(kSlotBytes), buffers.alloc(kSlotBytes),
                        buffers.alloc(kSlotBytes)};
  Io io(5);
  writeDevice(model.get(), in, io.x.data(), kSlotBytes);
  cgrt_tensor input = deviceTensor(in, kSlotBytes);
  cgrt_tensor outputs[3];
  for (int i = 0; i < 3; ++i)
    outputs[i] = deviceTensor(out[i], kSlotBytes);
  stub->cgrt_stub_fail("cuGraphExecKernelNodeSetParams", 1,
                       CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(hasStatus(cgrt_model_run(model.get(), &input, 1, outputs, 3),
                        CGRT_CUDA_ERROR,
                        {"cuGraphExecKernelNodeSetParams failed for rebinding "
                         "a kernel node of graph 0",
                         "CUDA_ERROR_INVALID_VALUE (1)"}));
  stub->cgrt_stub_reset();
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, outputs, 3));
  EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams"), 1u)
      << "the node whose update failed is updated again";
  std::vector<unsigned char> copy = readDevice(model.get(), out[2], kSlotBytes);
  EXPECT_EQ(0, std::memcmp(copy.data(), io.refY2Copy.data(), kSlotBytes));
}

// cgc marks a graph set that replays conditional nodes copy_io (the
// condition kernels take a handle by value, the bodies are child graphs):
// the runtime must copy even aligned device buffers. A package without
// control flow binds them.
TEST_F(StubTest, ConditionalPackagesCopyDeviceBuffersOthersBindThem) {
  std::string skip;
  std::string conditional = cgcPackage("control-flow", "", &skip);
  if (conditional.empty() && !skip.empty())
    GTEST_SKIP() << skip;
  std::string plain = cgcPackage("bucketed", "--dim N=4", &skip);
  ASSERT_FALSE(conditional.empty() || plain.empty());
  for (const std::string &dir : {conditional, plain}) {
    bool hasConditional = dir == conditional;
    Model model = load(dir);
    ASSERT_TRUE(model);
    EXPECT_EQ(cgrt::testing::packageOf(model.get()).zero_copy_io,
              hasConditional ? 0 : 1);
    Buffers buffers(model.get());
    size_t bytes = hasConditional ? 4 * 16 * 4 : 4 * 64 * 4;
    CUdeviceptr in = buffers.alloc(bytes), out = buffers.alloc(bytes);
    cgrt_tensor input = deviceTensor(in, bytes);
    cgrt_tensor output = deviceTensor(out, bytes);
    input.dims[0] = output.dims[0] = 4;
    input.dims[1] = output.dims[1] = hasConditional ? 16 : 64;
    stub->cgrt_stub_reset();
    ASSERT_OK(cgrt_model_run(model.get(), &input, 1, &output, 1));
    std::string log = stub->log();
    EXPECT_EQ(stub->cgrt_stub_calls("cuGraphExecKernelNodeSetParams") > 0,
              !hasConditional)
        << dir << ":\n"
        << log;
    EXPECT_EQ(stub->cgrt_stub_calls("cuMemcpyDtoDAsync"),
              hasConditional ? 2u : 0u)
        << dir << ":\n"
        << log;
  }
}

// A package without library nodes has none to profile: zero of them, no
// names, an empty profile that is not an error, and a result array of the
// wrong size or a NULL model refused with the counts.
TEST_F(StubTest, LibraryNodeProfileChecksItsArguments) {
  Model model = load();
  ASSERT_TRUE(model);
  EXPECT_EQ(cgrt_model_num_library_nodes(model.get()), 0u);
  EXPECT_EQ(cgrt_model_library_node_kernel(model.get(), 0), nullptr);
  EXPECT_EQ(cgrt_model_library_node_flops(model.get(), 0), 0.0);
  EXPECT_EQ(cgrt_model_library_node_flops(nullptr, 0), 0.0);
  EXPECT_EQ(cgrt_model_num_library_nodes(nullptr), 0u);
  EXPECT_OK(cgrt_model_profile_library_nodes(model.get(), 1, 1, nullptr, 0));
  double us[1] = {0};
  cgrt_status status =
      cgrt_model_profile_library_nodes(model.get(), 1, 1, us, 1);
  EXPECT_EQ(cgrt_status_get_code(status), CGRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cgrt_status_get_message(status))
                .find("has 0 library nodes, the result array 1"),
            std::string::npos)
      << cgrt_status_get_message(status);
  cgrt_status_free(status);
  status = cgrt_model_profile_library_nodes(model.get(), 1, 0, us, 0);
  EXPECT_EQ(cgrt_status_get_code(status), CGRT_INVALID_ARGUMENT);
  cgrt_status_free(status);
  status = cgrt_model_profile_library_nodes(nullptr, 1, 1, us, 0);
  EXPECT_EQ(cgrt_status_get_code(status), CGRT_INVALID_ARGUMENT);
  cgrt_status_free(status);
}

//--- Conditional nodes -----------------------------------------------------//

// cgc's If/Loop as IF (with ELSE) and WHILE nodes: each condition kernel
// sets the handle of the node it guards, the WHILE body's last kernel sets
// the WHILE's handle again, and replaying picks the branch by the
// condition and runs the loop body its trip count of 3 times.
TEST_F(StubTest, ConditionalNodesAreWiredToTheirHandlesAndReplayed) {
  std::string skip;
  std::string dir = cgcPackage("control-flow", "", &skip);
  if (dir.empty() && !skip.empty())
    GTEST_SKIP() << skip;
  ASSERT_FALSE(dir.empty());
  Model model = load(dir);
  ASSERT_TRUE(model);
  CUgraph graph = cgrt::testing::graphOf(model.get(), 0);
  std::string text = stub->graphText(graph);
  std::string g = stub->cgrt_stub_graph_name(graph);

  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      text, m,
      std::regex("N([0-9]+) kernel cgc_if_condition .* params M[0-9]+\\+"
                 "([0-9]+) (H[0-9]+)\n")))
      << text;
  std::string ifKernel = m[1], ifHandle = m[3];
  uint64_t condOffset = std::stoull(m[2]);
  EXPECT_TRUE(std::regex_search(
      text, std::regex("N[0-9]+ IF " + ifHandle +
                       " size 2 bodies G[0-9]+ G[0-9]+ deps \\[N" + ifKernel +
                       "\\]")))
      << text;
  ASSERT_TRUE(std::regex_search(
      text, m, std::regex("kernel cgc_loop_init .* (H[0-9]+)\n")))
      << text;
  std::string loopHandle = m[1];
  EXPECT_NE(loopHandle, ifHandle);
  EXPECT_TRUE(std::regex_search(
      text, std::regex("N[0-9]+ WHILE " + loopHandle +
                       " size 1 bodies G[0-9]+ deps \\[N[0-9]+ N[0-9]+\\]\n"
                       "    G[0-9]+\n(      .*\n)*      N[0-9]+ kernel "
                       "cgc_loop_next .* " +
                       loopHandle + "\n")))
      << "the WHILE body ends by setting the WHILE's handle:\n"
      << text;
  std::string log = stub->log();
  for (const std::string &h : {ifHandle, loopHandle})
    EXPECT_NE(log.find("cuGraphConditionalHandleCreate " + h + " in " + g +
                       " default 0 flags 0"),
              std::string::npos)
        << log;

  // Replays: the condition (computed by a kernel the stub does not run) is
  // written into its slot before each run.
  std::vector<float> x(64, 0.5f), y(64);
  cgrt_tensor in = tensorOf(x.data(), x.size() * sizeof(float));
  cgrt_tensor out = tensorOf(y.data(), y.size() * sizeof(float));
  in.dims[0] = out.dims[0] = 4;
  in.dims[1] = out.dims[1] = 16;
  CUdeviceptr cond = cgrt::testing::arenaOf(model.get()) + condOffset;
  for (unsigned char c : {1, 0}) {
    writeDevice(model.get(), cond, &c, 1);
    stub->cgrt_stub_reset();
    ASSERT_OK(cgrt_model_run(model.get(), &in, 1, &out, 1));
    log = stub->log();
    EXPECT_NE(log.find("IF " + ifHandle + " = " + std::to_string(c) +
                       (c ? ": body 0" : ": body 1")),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("WHILE " + loopHandle + ": done after 3 iterations"),
              std::string::npos)
        << log;
    EXPECT_EQ(occurrences(log, "kernel cgc_loop_next ran"), 3u) << log;
  }
}

//--- Faults inside the driver ---------------------------------------------//

// Each load step failing in the driver: the status names the call and
// the driver's error, no model is returned, and nothing the failed load
// created is left behind (the stub counts every object).
TEST_F(StubTest, DriverFailuresDuringLoadAreReportedAndLeakNothing) {
  struct LoadFault {
    const char *call;
    unsigned skip;
    CUresult code;
    int times;
    cgrt_status_code expected;
    std::initializer_list<const char *> message;
  };
  const LoadFault faults[] = {
      {"cuDevicePrimaryCtxRetain",
       0,
       CUDA_ERROR_INVALID_DEVICE,
       1,
       CGRT_CUDA_ERROR,
       {"cuDevicePrimaryCtxRetain failed for device 0",
        "CUDA_ERROR_INVALID_DEVICE (101)"}},
      {"cuStreamCreate",
       0,
       CUDA_ERROR_OUT_OF_MEMORY,
       1,
       CGRT_OUT_OF_MEMORY,
       {"cuStreamCreate failed for the stream of"}},
      {"cuModuleLoadData",
       0,
       CUDA_ERROR_INVALID_IMAGE,
       2,
       CGRT_CUDA_ERROR,
       {"kernels.cubin", "CUDA_ERROR_INVALID_IMAGE (200)", "kernels.ptx"}},
      {"cuModuleGetFunction",
       1,
       CUDA_ERROR_NOT_FOUND,
       1,
       CGRT_NOT_FOUND,
       {"kernel 1 'test_relu'", "CUDA_ERROR_NOT_FOUND (500)"}},
      {"cuMemAlloc",
       0,
       CUDA_ERROR_OUT_OF_MEMORY,
       1,
       CGRT_OUT_OF_MEMORY,
       {"cuMemAlloc failed for the 5120-byte arena", "bytes free",
        "CUDA_ERROR_OUT_OF_MEMORY (2)"}},
      {"cuMemcpyHtoD",
       0,
       CUDA_ERROR_ILLEGAL_ADDRESS,
       1,
       CGRT_CUDA_ERROR,
       {"uploading 1024 bytes of weights", "CUDA_ERROR_ILLEGAL_ADDRESS (700)"}},
      {"cuGraphCreate",
       1,
       CUDA_ERROR_OUT_OF_MEMORY,
       1,
       CGRT_OUT_OF_MEMORY,
       {"cuGraphCreate failed for graph 1 'copy'"}},
      {"cuGraphAddMemsetNode",
       0,
       CUDA_ERROR_INVALID_VALUE,
       1,
       CGRT_CUDA_ERROR,
       {"building graph 0 'main'", "memset node 'zero_y'"}},
      {"cuGraphAddKernelNode",
       1,
       CUDA_ERROR_INVALID_VALUE,
       1,
       CGRT_CUDA_ERROR,
       {"kernel node 'relu' (test_relu)", "CUDA_ERROR_INVALID_VALUE (1)"}},
      {"cuGraphInstantiateWithFlags",
       1,
       CUDA_ERROR_UNKNOWN,
       1,
       CGRT_CUDA_ERROR,
       {"cuGraphInstantiateWithFlags failed for graph 1 'copy'"}},
      {"cuGraphUpload",
       0,
       CUDA_ERROR_LAUNCH_FAILED,
       1,
       CGRT_CUDA_ERROR,
       {"cuGraphUpload failed for graph 0 'main'"}},
      {"cuStreamSynchronize",
       0,
       CUDA_ERROR_LAUNCH_FAILED,
       1,
       CGRT_CUDA_ERROR,
       {"uploading the graphs"}},
  };
  { Model warmUp = load(); }
  StubObjects before = StubObjects::now(*stub);
  for (const LoadFault &fault : faults) {
    for (int i = 0; i < fault.times; ++i)
      stub->cgrt_stub_fail(fault.call, fault.skip, fault.code);
    cgrt_model *model = nullptr;
    cgrt_status status =
        cgrt_model_load(testPackageDir().c_str(), nullptr, &model);
    EXPECT_EQ(model, nullptr) << fault.call;
    cgrt_model_release(model);
    EXPECT_TRUE(hasStatus(status, fault.expected, fault.message)) << fault.call;
    EXPECT_EQ(stub->cgrt_stub_pending_faults(), 0u) << fault.call;
    StubObjects after = StubObjects::now(*stub);
    EXPECT_TRUE(after == before)
        << fault.call << ": " << after.str() << " instead of " << before.str();
    Model good = load();
    ASSERT_TRUE(good) << "after " << fault.call;
    Io io(1);
    ASSERT_OK(run(good.get(), io));
    EXPECT_TRUE(io.matches()) << "after " << fault.call;
  }
}

// The generated builders call cuGraphConditionalHandleCreate and
// cuGraphAddNode through the raw driver table, where the runtime's own
// fault injection (CGRT_FAULT) cannot reach; the stub can.
TEST_F(StubTest, ConditionalNodeFailuresNameTheHandleOrNode) {
  std::string skip;
  std::string dir = cgcPackage("control-flow", "", &skip);
  if (dir.empty() && !skip.empty())
    GTEST_SKIP() << skip;
  ASSERT_FALSE(dir.empty());
  { Model warmUp = load(dir); }
  StubObjects before = StubObjects::now(*stub);
  struct Case {
    const char *call;
    unsigned skip;
    const char *message;
  };
  const Case cases[] = {
      {"cuGraphConditionalHandleCreate", 1, "island0: condition handle 1"},
      {"cuGraphAddNode", 0, "(if 0)"},
      {"cuGraphAddNode", 1, "(while 1)"},
  };
  for (const Case &c : cases) {
    stub->cgrt_stub_fail(c.call, c.skip, CUDA_ERROR_NOT_SUPPORTED);
    cgrt_model *model = nullptr;
    EXPECT_TRUE(hasStatus(cgrt_model_load(dir.c_str(), nullptr, &model),
                          CGRT_CUDA_ERROR,
                          {"building graph 0 'island0'", c.message,
                           "CUDA_ERROR_NOT_SUPPORTED (801)"}))
        << c.call;
    EXPECT_EQ(model, nullptr);
    StubObjects after = StubObjects::now(*stub);
    EXPECT_TRUE(after == before)
        << c.call << ": " << after.str() << " instead of " << before.str();
  }
}

// Failures while running: named by the step or tensor, and the next run of
// the same model is right (the stub has no sticky errors; a real
// CUDA_ERROR_ILLEGAL_ADDRESS would leave the context unusable).
TEST_F(StubTest, DriverFailuresDuringARunLeaveTheModelUsable) {
  Model model = load();
  ASSERT_TRUE(model);
  struct RunFault {
    const char *call;
    unsigned skip;
    CUresult code;
    std::initializer_list<const char *> message;
  };
  const RunFault faults[] = {
      {"cuMemcpyHtoDAsync",
       0,
       CUDA_ERROR_INVALID_VALUE,
       {"cuMemcpyHtoDAsync failed for input 0 'input:x/0'"}},
      {"cuGraphLaunch",
       1,
       CUDA_ERROR_LAUNCH_FAILED,
       {"cuGraphLaunch failed for step 1 (graph 1 'copy')",
        "CUDA_ERROR_LAUNCH_FAILED (719)"}},
      {"cuMemcpyDtoHAsync",
       1,
       CUDA_ERROR_UNKNOWN,
       {"cuMemcpyDtoHAsync failed for output 1 'y2'"}},
      {"cuStreamSynchronize",
       0,
       CUDA_ERROR_ILLEGAL_ADDRESS,
       {"an asynchronous error from a copy or from a kernel of graph 0 "
        "'main', graph 1 'copy'",
        "CUDA_ERROR_ILLEGAL_ADDRESS (700)"}},
      {"cuCtxSetCurrent",
       0,
       CUDA_ERROR_INVALID_CONTEXT,
       {"cuCtxSetCurrent failed for the model's context"}},
  };
  StubObjects before = StubObjects::now(*stub);
  for (const RunFault &fault : faults) {
    stub->cgrt_stub_fail(fault.call, fault.skip, fault.code);
    Io io(7);
    EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_CUDA_ERROR, fault.message))
        << fault.call;
    EXPECT_EQ(stub->cgrt_stub_pending_faults(), 0u) << fault.call;
    Io again(8);
    ASSERT_OK(run(model.get(), again));
    EXPECT_TRUE(again.matches()) << "after " << fault.call;
  }
  EXPECT_TRUE(StubObjects::now(*stub) == before) << "a failed run leaked";
}

TEST_F(StubTest, ReleasedModelsLeaveNothingBehind) {
  StubObjects before = StubObjects::now(*stub);
  {
    Model a = load(), b = loadIn("zero_copy");
    ASSERT_TRUE(a && b);
    cgrt_benchmark_result result;
    ASSERT_OK(cgrt_model_benchmark(a.get(), 1, 3, &result));
    ASSERT_OK(cgrt_model_benchmark_device_io(b.get(), 1, 3, 1, &result));
    EXPECT_GT(StubObjects::now(*stub).allocations, before.allocations);
  }
  StubObjects after = StubObjects::now(*stub);
  EXPECT_TRUE(after == before) << after.str() << " instead of " << before.str();
}

//--- Process-wide driver states (a fresh process each) ----------------------//

namespace {
/// Runs `load` in a fresh process (threadsafe death test) with `env` set,
/// and expects it to exit 0 after printing the status matching `pattern`.
#define EXPECT_LOAD_IN_FRESH_PROCESS(env, value, dir, code, pattern)           \
  EXPECT_EXIT(                                                                 \
      {                                                                        \
        setenv(env, value, 1);                                                 \
        cgrt_model *model_ = nullptr;                                          \
        cgrt_status status_ = cgrt_model_load(dir, nullptr, &model_);          \
        cgrt_status_code code_ = cgrt_status_get_code(status_);                \
        std::fprintf(stderr, "[%d] %s\n", code_,                               \
                     cgrt_status_get_message(status_));                        \
        /* Nothing left for LeakSanitizer at exit. */                          \
        cgrt_status_free(status_);                                             \
        cgrt_model_release(model_);                                            \
        std::exit(code_ == (code) ? 0 : 1);                                    \
      },                                                                       \
      ::testing::ExitedWithCode(0), pattern)
} // namespace

TEST(StubDeathTest, DriverInitFailuresAreNoDevice) {
  REQUIRE_STUB();
  if (!testPackageHasKernels())
    GTEST_SKIP() << "no nvcc: the test package has no kernels";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string dir = testPackageDir();
  EXPECT_LOAD_IN_FRESH_PROCESS("CGRT_STUB_FAULT", "cuInit:0:100", dir.c_str(),
                               CGRT_NO_DEVICE,
                               "no CUDA GPU: cuInit failed: "
                               "CUDA_ERROR_NO_DEVICE \\(100\\)");
  EXPECT_LOAD_IN_FRESH_PROCESS("CGRT_STUB_FAULT", "cuInit:0:34", dir.c_str(),
                               CGRT_NO_DEVICE,
                               "only the toolkit's link-time stub");
  EXPECT_LOAD_IN_FRESH_PROCESS("CGRT_STUB_DEVICES", "0", dir.c_str(),
                               CGRT_NO_DEVICE, "no CUDA GPU: cuInit failed");
  EXPECT_LOAD_IN_FRESH_PROCESS("CGRT_STUB_DRIVER_VERSION", "11080", dir.c_str(),
                               CGRT_NO_DEVICE,
                               "no usable entry point .* for the CUDA 12.0 "
                               "ABI \\(the driver is too old\\)");
}

// A 12.2 driver has no conditional nodes: packages without If/Loop run,
// packages with them say what they need.
TEST(StubDeathTest, ConditionalNodesNeedACuda123Driver) {
  REQUIRE_STUB();
  std::string skip;
  std::string dir = cgcPackage("control-flow", "", &skip);
  if (dir.empty() && !skip.empty())
    GTEST_SKIP() << skip;
  ASSERT_FALSE(dir.empty());
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_LOAD_IN_FRESH_PROCESS("CGRT_STUB_DRIVER_VERSION", "12020", dir.c_str(),
                               CGRT_CUDA_ERROR,
                               "island0: its If/Loop conditional nodes need a "
                               "CUDA 12.3 or newer driver");
  std::string plain = testPackageDir();
  EXPECT_LOAD_IN_FRESH_PROCESS("CGRT_STUB_DRIVER_VERSION", "12020",
                               plain.c_str(), CGRT_OK, "\\[0\\] ");
}

namespace {
/// A package compiled without library nodes loads (and is released) with
/// `envVar` pointing at no library: it never asks for one. In this process:
/// a load in a death test's child sometimes crashed LeakSanitizer's own
/// thread tracer at exit under make test-sanitize.
void expectLoadsWithout(const char *model, const char *flags,
                        const char *envVar, const char *missing) {
  std::string skip;
  std::string dir = cgcPackage(model, flags, &skip);
  ASSERT_FALSE(dir.empty()) << skip;
  ScopedEnv env(envVar, missing);
  cgrt_model *loaded = nullptr;
  EXPECT_OK(cgrt_model_load(dir.c_str(), nullptr, &loaded));
  EXPECT_NE(loaded, nullptr);
  cgrt_model_release(loaded);
}
} // namespace

// cuBLASLt is loaded only for a package with cuBLASLt nodes, and its
// absence is an error naming the node, what was tried and both ways out.
// (The stub driver cannot run the library; GpuTest and docs/kernels.md
// cover the products themselves.)
TEST(StubDeathTest, CublasLtIsLoadedOnlyWhenAPackageUsesIt) {
  REQUIRE_STUB();
  std::string skip;
  std::string dir = cgcPackage("matmul", "--cublaslt=always", &skip);
  if (dir.empty() && !skip.empty())
    GTEST_SKIP() << skip;
  ASSERT_FALSE(dir.empty());
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_LOAD_IN_FRESH_PROCESS(
      "CGRT_CUBLASLT_LIBRARY", "/nonexistent/libcublasLt.so.13", dir.c_str(),
      CGRT_NOT_FOUND,
      "building graph 0 'island0' of .* failed at island0: node 0 "
      "\\(matmul_0\\) \\(cuBLASLt\\): cannot load cuBLASLt "
      "\\(/nonexistent/libcublasLt.so.13: cannot open shared object file: "
      "No such file or directory\\); set CGRT_CUBLASLT_LIBRARY to its path, "
      "or compile the model with --cublaslt=never: CUDA_ERROR_NOT_FOUND");
  expectLoadsWithout("matmul", "--cublaslt=never", "CGRT_CUBLASLT_LIBRARY",
                     "/nonexistent/libcublasLt.so.13");
}

// The same for cuDNN, which the convolution packages need.
TEST(StubDeathTest, CudnnIsLoadedOnlyWhenAPackageUsesIt) {
  REQUIRE_STUB();
  std::string skip;
  std::string dir = cgcPackage("conv", "--cudnn=always", &skip);
  if (dir.empty() && !skip.empty())
    GTEST_SKIP() << skip;
  ASSERT_FALSE(dir.empty());
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_LOAD_IN_FRESH_PROCESS(
      "CGRT_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.9", dir.c_str(),
      CGRT_NOT_FOUND,
      "failed at island0: node 0 \\(conv_0\\) \\(cuDNN\\): cannot load "
      "cuDNN \\(/nonexistent/libcudnn.so.9: cannot open shared object file: "
      "No such file or directory\\); set CGRT_CUDNN_LIBRARY to its path, or "
      "compile the model with --cudnn=never");
  expectLoadsWithout("conv", "--cudnn=never", "CGRT_CUDNN_LIBRARY",
                     "/nonexistent/libcudnn.so.9");
}

// The watchdog of a communicator: rank 1 (a forked process) dies before
// the first run's all-reduce; rank 0's run is asynchronous, so no call of
// rank 0 waits for it, yet the watchdog sees NCCL's error (the stub NCCL
// reports the missing rank after CGRT_STUB_NCCL_TIMEOUT_MS) and aborts the
// communicator: the next call fails with CGRT_RANK_FAILED at once instead
// of a caller's synchronization hanging. Both ranks on device 0: the stub
// NCCL does not mind.
TEST_F(StubTest, WatchdogAbortsTheCommunicatorOfADeadRank) {
  const char *nccl = std::getenv("CGRT_NCCL_LIBRARY");
  if (!nccl || !std::strstr(nccl, "stub"))
    GTEST_SKIP() << "needs the stub driver: and the stub NCCL "
                    "(CGRT_NCCL_LIBRARY; runtime.test sets it)";
  ScopedEnv mode("CGRT_TEST_PACKAGE_MODE", "split_all_reduce");
  ScopedEnv meet("NCCL_COMM_ID", "watchdog-test");
  ScopedEnv exit("CGRT_STUB_NCCL_EXIT", "1:2");
  ScopedEnv wait("CGRT_STUB_NCCL_TIMEOUT_MS", "200");
  cgrt_comm_id id;
  ASSERT_OK(cgrt_comm_id_create(&id));
  auto load = [&](int rank, cgrt_comm **comm, cgrt_model **model) {
    cgrt_status s = cgrt_comm_create(&id, 2, rank, 0, 20000, comm);
    if (!s) {
      cgrt_model_options options;
      cgrt_model_options_init(&options);
      options.comm = *comm;
      s = cgrt_model_load(testPackageDir().c_str(), &options, model);
    }
    return s;
  };
  std::fflush(nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) { // rank 1: loads, then dies at the run's all-reduce
    cgrt_comm *comm = nullptr;
    cgrt_model *model = nullptr;
    if (load(1, &comm, &model))
      _exit(1);
    Io io(0);
    cgrt_status_free(run(model, io));
    _exit(0); // not reached: the stub NCCL exits with status 3
  }
  cgrt_comm *comm = nullptr;
  cgrt_model *raw = nullptr;
  ASSERT_OK(load(0, &comm, &raw));
  Model model(raw);
  Io io(1);
  CUdeviceptr in = 0, out[3] = {};
  const cgrt::Driver &d = cgrt::testing::driverOf(model.get());
  cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model.get()));
  ASSERT_OK(scope.take());
  ASSERT_EQ(d.cuMemAlloc(&in, kSlotBytes), CUDA_SUCCESS);
  for (CUdeviceptr &o : out)
    ASSERT_EQ(d.cuMemAlloc(&o, kSlotBytes), CUDA_SUCCESS);
  cgrt_tensor input = tensorOf(reinterpret_cast<void *>(in), kSlotBytes,
                               CGRT_MEMORY_DEVICE);
  cgrt_tensor outputs[3];
  for (int i = 0; i < 3; ++i)
    outputs[i] = tensorOf(reinterpret_cast<void *>(out[i]), kSlotBytes,
                          CGRT_MEMORY_DEVICE);
  ASSERT_OK(cgrt_model_run_async(model.get(), &input, 1, outputs, 3, nullptr));
  for (int i = 0; i < 100 && !cgrt::testing::commAborted(model.get()); ++i)
    usleep(20000);
  EXPECT_TRUE(cgrt::testing::commAborted(model.get()))
      << "the watchdog did not abort within 2 s";
  EXPECT_TRUE(hasStatus(run(model.get(), io), CGRT_RANK_FAILED,
                        {"rank 0 of 2", "NCCL reports",
                         "the communicator was aborted"}));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3)
      << "rank 1 ended with status " << status;
  for (CUdeviceptr p : {in, out[0], out[1], out[2]})
    d.cuMemFree(p);
  model.reset();
  cgrt_comm_release(comm);
}
