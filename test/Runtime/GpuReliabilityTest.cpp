//===- GpuReliabilityTest.cpp - stale pointers, threads, faults, soak -----===//
//
// The runtime's reliability on a GPU (docs/reliability.md): caller buffers
// that are reallocated, poisoned and freed between runs; misaligned buffers;
// threads with their own instances and threads sharing one; loads and runs
// that fail by injected faults and leave the process (and the model) usable;
// a short soak. Every test skips without a GPU. tools/cgrt-stress runs the
// long versions (1,000,000 replays, 1,000 load cycles) and measures memory.
//
//===----------------------------------------------------------------------===//

#include "GpuTest.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using namespace cgrttest;
using namespace testpkg;

namespace {

/// The three outputs' references for `seed`, and whether `y`, `y2`,
/// `y2Copy` (host copies) match them bit for bit.
::testing::AssertionResult matchesSeed(int seed, const float *y,
                                       const float *y2, const float *y2Copy) {
  Io expected(seed);
  for (int i = 0; i < kElements; ++i)
    if (std::memcmp(&y[i], &expected.refY[i], sizeof(float)) ||
        std::memcmp(&y2[i], &expected.refY2[i], sizeof(float)) ||
        std::memcmp(&y2Copy[i], &expected.refY2Copy[i], sizeof(float)))
      return ::testing::AssertionFailure()
             << "seed " << seed << ", element " << i << ": y " << y[i]
             << " (expected " << expected.refY[i] << "), y2 " << y2[i] << " ("
             << expected.refY2[i] << "), y2_copy " << y2Copy[i] << " ("
             << expected.refY2Copy[i] << ")";
  return ::testing::AssertionSuccess();
}

/// Host buffers for one run, each a separate heap allocation, the outputs
/// filled with garbage (NaN bytes) so a missing write shows.
struct HostBuffers {
  int seed;
  std::unique_ptr<float[]> x, y, y2, y2Copy;
  cgrt_tensor input, outputs[3];

  explicit HostBuffers(int seed)
      : seed(seed), x(new float[kElements]), y(new float[kElements]),
        y2(new float[kElements]), y2Copy(new float[kElements]) {
    std::vector<float> values = makeInput(seed);
    std::memcpy(x.get(), values.data(), kSlotBytes);
    for (float *out : {y.get(), y2.get(), y2Copy.get()})
      std::memset(out, 0xff, kSlotBytes);
    input = tensorOf(x.get(), kSlotBytes);
    outputs[0] = tensorOf(y.get(), kSlotBytes);
    outputs[1] = tensorOf(y2.get(), kSlotBytes);
    outputs[2] = tensorOf(y2Copy.get(), kSlotBytes);
  }
  /// Garbage into every buffer the runtime has seen.
  void poison() {
    for (float *buffer : {x.get(), y.get(), y2.get(), y2Copy.get()})
      std::memset(buffer, 0xa5, kSlotBytes);
  }
  cgrt_status run(cgrt_model *model) {
    return cgrt_model_run(model, &input, 1, outputs, 3);
  }
  ::testing::AssertionResult matches() const {
    return matchesSeed(seed, y.get(), y2.get(), y2Copy.get());
  }
};

/// Device buffers for one run (input and three outputs), allocated in the
/// model's context at `padding` bytes past a fresh allocation's start.
class DeviceBuffers {
public:
  DeviceBuffers(cgrt_model *model, size_t padding = 0)
      : d(cgrt::testing::driverOf(model)),
        context(cgrt::testing::contextOf(model)), padding(padding) {
    cgrt::ScopedContext scope(d, context);
    for (CUdeviceptr &base : bases)
      if (d.cuMemAlloc(&base, kSlotBytes + padding) != CUDA_SUCCESS)
        base = 0;
  }
  ~DeviceBuffers() {
    cgrt::ScopedContext scope(d, context);
    for (CUdeviceptr base : bases)
      if (base)
        d.cuMemFree(base);
  }
  DeviceBuffers(const DeviceBuffers &) = delete;
  DeviceBuffers &operator=(const DeviceBuffers &) = delete;

  bool ok() const { return bases[0] && bases[1] && bases[2] && bases[3]; }
  CUdeviceptr pointer(int i) const { return bases[i] + padding; }

  /// Uploads the input of `seed` and fills the outputs with garbage.
  bool prepare(int seed) {
    cgrt::ScopedContext scope(d, context);
    std::vector<float> x = makeInput(seed);
    bool ok = d.cuMemcpyHtoD(pointer(0), x.data(), kSlotBytes) == CUDA_SUCCESS;
    for (int i = 1; i < 4; ++i)
      ok &= d.cuMemsetD8(pointer(i), 0xff, kSlotBytes) == CUDA_SUCCESS;
    // Pageable copies and memsets may still be in flight on the legacy
    // stream; the runtime's stream does not wait for it.
    return ok && d.cuStreamSynchronize(nullptr) == CUDA_SUCCESS;
  }
  /// Garbage into every buffer the runtime has seen.
  bool poison() {
    cgrt::ScopedContext scope(d, context);
    bool ok = true;
    for (int i = 0; i < 4; ++i)
      ok &= d.cuMemsetD8(pointer(i), 0xa5, kSlotBytes) == CUDA_SUCCESS;
    return ok && d.cuStreamSynchronize(nullptr) == CUDA_SUCCESS;
  }
  cgrt_status run(cgrt_model *model) {
    cgrt_tensor input = tensorOf(reinterpret_cast<void *>(pointer(0)),
                                 kSlotBytes, CGRT_MEMORY_DEVICE);
    cgrt_tensor outputs[3];
    for (int i = 0; i < 3; ++i)
      outputs[i] = tensorOf(reinterpret_cast<void *>(pointer(i + 1)),
                            kSlotBytes, CGRT_MEMORY_DEVICE);
    return cgrt_model_run(model, &input, 1, outputs, 3);
  }
  ::testing::AssertionResult matches(int seed) {
    std::vector<float> out[3];
    cgrt::ScopedContext scope(d, context);
    for (int i = 0; i < 3; ++i) {
      out[i].resize(kElements);
      if (d.cuMemcpyDtoH(out[i].data(), pointer(i + 1), kSlotBytes) !=
          CUDA_SUCCESS)
        return ::testing::AssertionFailure() << "cuMemcpyDtoH failed";
    }
    return matchesSeed(seed, out[0].data(), out[1].data(), out[2].data());
  }

private:
  const cgrt::Driver &d;
  CUcontext context;
  size_t padding;
  CUdeviceptr bases[4] = {};
};

/// Free device memory as the driver reports it, in `model`'s context.
size_t freeDeviceBytes(cgrt_model *model) {
  const cgrt::Driver &d = cgrt::testing::driverOf(model);
  cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model));
  size_t freeBytes = 0, totalBytes = 0;
  EXPECT_EQ(d.cuMemGetInfo(&freeBytes, &totalBytes), CUDA_SUCCESS);
  return freeBytes;
}

} // namespace

//--- Stale pointers -------------------------------------------------------//

// New heap buffers every run; the ones the runtime saw before are filled with
// garbage, and every third run freed (so the allocator hands their addresses
// out again, with other contents).
TEST_F(GpuTest, HostBuffersReallocatedAndPoisonedBetweenRuns) {
  Model model = load();
  ASSERT_TRUE(model);
  std::vector<std::unique_ptr<HostBuffers>> seen;
  for (int seed = 0; seed < 12; ++seed) {
    auto io = std::make_unique<HostBuffers>(seed);
    ASSERT_OK(io->run(model.get()));
    EXPECT_TRUE(io->matches());
    io->poison();
    seen.push_back(std::move(io));
    if (seed % 3 == 2)
      seen.clear();
  }
}

// The same buffers with new contents: the runtime reads the input again
// rather than remembering what was at that address.
TEST_F(GpuTest, HostInputRewrittenInPlaceIsReadAgain) {
  Model model = load();
  ASSERT_TRUE(model);
  HostBuffers io(0);
  for (int seed = 0; seed < 6; ++seed) {
    std::vector<float> x = makeInput(seed);
    std::memcpy(io.x.get(), x.data(), kSlotBytes);
    io.seed = seed;
    for (float *out : {io.y.get(), io.y2.get(), io.y2Copy.get()})
      std::memset(out, 0xff, kSlotBytes);
    ASSERT_OK(io.run(model.get()));
    EXPECT_TRUE(io.matches());
  }
}

// Device buffers: a new set before the old one is poisoned and freed (new
// addresses), then freed first and allocated again (likely the same
// addresses, other contents).
TEST_F(GpuTest, DeviceBuffersReallocatedAndPoisonedBetweenRuns) {
  Model model = load();
  ASSERT_TRUE(model);
  auto current = std::make_unique<DeviceBuffers>(model.get());
  ASSERT_TRUE(current->ok());
  for (int seed = 0; seed < 12; ++seed) {
    ASSERT_TRUE(current->prepare(seed));
    ASSERT_OK(current->run(model.get()));
    EXPECT_TRUE(current->matches(seed)) << "seed " << seed;
    ASSERT_TRUE(current->poison());
    if (seed % 2 == 0) {
      auto next = std::make_unique<DeviceBuffers>(model.get());
      current = std::move(next);
    } else {
      current.reset();
      current = std::make_unique<DeviceBuffers>(model.get());
    }
    ASSERT_TRUE(current->ok());
  }
}

// Host and device buffers alternate on one model, each poisoned after use.
TEST_F(GpuTest, HostAndDeviceBuffersAlternate) {
  Model model = load();
  ASSERT_TRUE(model);
  DeviceBuffers device(model.get());
  ASSERT_TRUE(device.ok());
  for (int seed = 0; seed < 8; ++seed) {
    if (seed % 2) {
      ASSERT_TRUE(device.prepare(seed));
      ASSERT_OK(device.run(model.get()));
      EXPECT_TRUE(device.matches(seed)) << "seed " << seed;
      ASSERT_TRUE(device.poison());
    } else {
      HostBuffers host(seed);
      ASSERT_OK(host.run(model.get()));
      EXPECT_TRUE(host.matches());
      host.poison();
    }
  }
}

// Buffers need no alignment: the runtime copies them into its aligned slots.
TEST_F(GpuTest, MisalignedBuffersAreAccepted) {
  Model model = load();
  ASSERT_TRUE(model);
  for (size_t offset : {1, 2, 4, 8, 12}) {
    std::vector<unsigned char> storage[4];
    for (std::vector<unsigned char> &s : storage)
      s.assign(kSlotBytes + 16, 0xff);
    std::vector<float> x = makeInput(static_cast<int>(offset));
    std::memcpy(storage[0].data() + offset, x.data(), kSlotBytes);
    cgrt_tensor input = tensorOf(storage[0].data() + offset, kSlotBytes);
    cgrt_tensor outputs[3];
    for (int i = 0; i < 3; ++i)
      outputs[i] = tensorOf(storage[i + 1].data() + offset, kSlotBytes);
    ASSERT_OK(cgrt_model_run(model.get(), &input, 1, outputs, 3));
    std::vector<float> out[3];
    for (int i = 0; i < 3; ++i) {
      out[i].resize(kElements);
      std::memcpy(out[i].data(), storage[i + 1].data() + offset, kSlotBytes);
    }
    EXPECT_TRUE(matchesSeed(static_cast<int>(offset), out[0].data(),
                            out[1].data(), out[2].data()))
        << "host buffers at +" << offset;

    DeviceBuffers device(model.get(), offset);
    ASSERT_TRUE(device.ok());
    ASSERT_TRUE(device.prepare(static_cast<int>(offset)));
    ASSERT_OK(device.run(model.get()));
    EXPECT_TRUE(device.matches(static_cast<int>(offset)))
        << "device buffers at +" << offset;
  }
}

//--- Threads --------------------------------------------------------------//

// Each thread loads, runs and releases its own instance; loads overlap.
TEST_F(GpuTest, ThreadsWithTheirOwnInstances) {
  std::atomic<int> failures{0}, runs{0};
  std::vector<std::thread> threads;
  std::string dir = testPackageDir();
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      cgrt_model *model = nullptr;
      cgrt_status status = cgrt_model_load(dir.c_str(), nullptr, &model);
      if (status) {
        ++failures;
        cgrt_status_free(status);
        return;
      }
      for (int i = 0; i < 40; ++i) {
        HostBuffers io(t * 1000 + i);
        status = io.run(model);
        if (status || !io.matches())
          ++failures;
        cgrt_status_free(status);
        ++runs;
      }
      cgrt_model_release(model);
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(runs.load(), 160);
}

// Runs, benchmarks and I/O queries from several threads on one instance:
// the runtime serializes runs and benchmarks, and every run sees its own
// inputs.
TEST_F(GpuTest, SharedInstanceRunsBenchmarksAndQueries) {
  Model model = load();
  ASSERT_TRUE(model);
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        HostBuffers io(t * 1000 + i);
        cgrt_status status = io.run(model.get());
        if (status || !io.matches())
          ++failures;
        cgrt_status_free(status);
      }
    });
  std::thread bench([&] {
    for (int i = 0; i < 10; ++i) {
      cgrt_benchmark_result result;
      cgrt_status status = cgrt_model_benchmark(model.get(), 0, 5, &result);
      if (status || result.iterations != 5)
        ++failures;
      cgrt_status_free(status);
    }
  });
  std::thread queries([&] {
    while (!done.load()) {
      const char *name = nullptr;
      cgrt_tensor info;
      cgrt_status status = cgrt_model_output_info(model.get(), 2, &name, &info);
      if (status || std::strcmp(name, "y2_copy") != 0 ||
          cgrt_model_num_inputs(model.get()) != 1)
        ++failures;
      cgrt_status_free(status);
    }
  });
  for (std::thread &thread : threads)
    thread.join();
  bench.join();
  done = true;
  queries.join();
  EXPECT_EQ(failures.load(), 0);
}

//--- Faults leave the process and the model usable -------------------------//

// Every load step fails once, three rounds over: each load reports the step,
// leaves no model behind, and the next load runs correctly; device memory
// ends where it started (to the driver's 2 MiB granularity; cgrt-stress
// measures this on a model whose arena alone is megabytes).
TEST_F(GpuTest, FailedLoadsLeaveNothingBehind) {
  struct LoadFault {
    const char *call;
    unsigned skip;
    CUresult code;
    int times;
    cgrt_status_code expected;
    const char *message;
  };
  const LoadFault faults[] = {
      {"cuStreamCreate", 0, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR,
       "cuStreamCreate"},
      {"cuModuleLoadData", 0, CUDA_ERROR_INVALID_PTX, 2, CGRT_CUDA_ERROR,
       "kernels.ptx"},
      {"cuModuleGetFunction", 1, CUDA_ERROR_NOT_FOUND, 1, CGRT_NOT_FOUND,
       "kernel 1 'test_relu'"},
      {"cuMemAlloc", 0, CUDA_ERROR_OUT_OF_MEMORY, 1, CGRT_OUT_OF_MEMORY,
       "5120-byte arena"},
      {"cuMemsetD8", 0, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR,
       "clearing the arena"},
      {"cuMemcpyHtoD", 0, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR, "weights"},
      {"cuGraphCreate", 1, CUDA_ERROR_OUT_OF_MEMORY, 1, CGRT_OUT_OF_MEMORY,
       "graph 1 'copy'"},
      {"cuGraphAddKernelNode", 1, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR,
       "kernel node 'relu'"},
      {"cuGraphAddMemcpyNode", 0, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR,
       "memcpy node 'copy_y2'"},
      {"cuGraphInstantiateWithFlags", 0, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR,
       "graph 0 'main'"},
      {"cuGraphUpload", 1, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR,
       "graph 1 'copy'"},
      {"cuStreamSynchronize", 0, CUDA_ERROR_UNKNOWN, 1, CGRT_CUDA_ERROR,
       "uploading the graphs"},
  };
  Model holder = load(); // keeps the context (and cuMemGetInfo) alive
  ASSERT_TRUE(holder);
  {
    Model warmUp = load();
    ASSERT_TRUE(warmUp);
  }
  size_t before = freeDeviceBytes(holder.get());
  for (int round = 0; round < 3; ++round) {
    for (const LoadFault &fault : faults) {
      for (int i = 0; i < fault.times; ++i)
        cgrt::testing::injectFault(fault.call, fault.skip, fault.code);
      cgrt_model *model = nullptr;
      cgrt_status status =
          cgrt_model_load(testPackageDir().c_str(), nullptr, &model);
      EXPECT_EQ(model, nullptr) << fault.call;
      cgrt_model_release(model);
      EXPECT_TRUE(hasStatus(status, fault.expected, {fault.message}))
          << fault.call;
      EXPECT_EQ(cgrt::testing::pendingFaults(), 0u) << fault.call;
      cgrt::testing::clearFaults();

      Model good = load();
      ASSERT_TRUE(good) << "after " << fault.call;
      HostBuffers io(round);
      ASSERT_OK(io.run(good.get()));
      EXPECT_TRUE(io.matches()) << "after " << fault.call;
    }
  }
  size_t after = freeDeviceBytes(holder.get());
  EXPECT_LE(before - std::min(before, after), size_t(2) << 20)
      << "device memory free: " << before << " bytes before, " << after
      << " after";
}

// A failing step of a run is reported with what it was for, and the next
// run of the same model is correct.
TEST_F(GpuTest, RunFaultsLeaveTheModelUsable) {
  struct RunFault {
    const char *call;
    unsigned skip;
    bool deviceIo;
    const char *message;
  };
  const RunFault faults[] = {
      {"cuMemcpyHtoDAsync", 0, false, "input 0 'input:x/0'"},
      {"cuMemcpyDtoDAsync", 0, true, "input 0 'input:x/0'"},
      {"cuGraphLaunch", 0, false, "step 0 (graph 0 'main')"},
      {"cuMemcpyDtoDAsync", 2, true, "output 1 'y2'"},
      {"cuStreamSynchronize", 0, false, "graph 0 'main', graph 1 'copy'"},
      {"cuCtxSetCurrent", 0, false, "the model's context"},
  };
  Model model = load();
  ASSERT_TRUE(model);
  DeviceBuffers device(model.get());
  ASSERT_TRUE(device.ok());
  int seed = 0;
  for (const RunFault &fault : faults) {
    cgrt::testing::injectFault(fault.call, fault.skip);
    if (fault.deviceIo) {
      ASSERT_TRUE(device.prepare(seed));
      EXPECT_TRUE(hasStatus(device.run(model.get()), CGRT_CUDA_ERROR,
                            {fault.call, fault.message}));
    } else {
      HostBuffers io(seed);
      EXPECT_TRUE(hasStatus(io.run(model.get()), CGRT_CUDA_ERROR,
                            {fault.call, fault.message}));
    }
    EXPECT_EQ(cgrt::testing::pendingFaults(), 0u) << fault.call;
    cgrt::testing::clearFaults();
    ++seed;
    HostBuffers again(seed);
    ASSERT_OK(again.run(model.get()));
    EXPECT_TRUE(again.matches()) << "after " << fault.call;
    ASSERT_TRUE(device.prepare(seed));
    ASSERT_OK(device.run(model.get()));
    EXPECT_TRUE(device.matches(seed)) << "after " << fault.call;
  }
}

//--- A short soak (tools/cgrt-stress runs the long one) --------------------//

TEST_F(GpuTest, RepeatedRunsAndLoadsStayCorrect) {
  {
    Model model = load();
    ASSERT_TRUE(model);
    int mismatches = 0;
    for (int i = 0; i < 2000; ++i) {
      HostBuffers io(i % 17);
      ASSERT_OK(io.run(model.get()));
      mismatches += !io.matches();
    }
    EXPECT_EQ(mismatches, 0);
  }
  for (int cycle = 0; cycle < 25; ++cycle) {
    Model model = load();
    ASSERT_TRUE(model);
    HostBuffers io(cycle);
    ASSERT_OK(io.run(model.get()));
    EXPECT_TRUE(io.matches()) << "cycle " << cycle;
  }
}
