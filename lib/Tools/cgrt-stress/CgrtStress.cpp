//===- CgrtStress.cpp - the cgrt-stress tool ------------------------------===//
//
// Every run is checked: the tool first runs each of K input sets (seeded
// random, as cgc-run --seed makes them) twice on a reference instance, and
// requires the two results to agree bit for bit; afterwards every run of every
// thread must reproduce its set's result bit for bit (cgc's kernels have no
// atomics, so results do not depend on timing). Output buffers are filled
// with garbage before each run, so an output the runtime failed to write
// shows. With device I/O the tool owns device buffers in the device's primary
// context, which it retains for its whole life (so load/unload cycles do not
// also create and destroy the context, and cuMemGetInfo has a context).
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgrt-stress/CgrtStress.h"

#include "cgc/Tools/cgc-run/CgcRun.h"
#include "Driver.h"
#include "Testing.h"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using cgcrun::HostTensor;

namespace cgrtstress {
namespace {

const char kUsage[] =
    "usage: cgrt-stress PACKAGE_DIR MODE [options]\n"
    "modes:\n"
    "  own       T threads, each loading its own instance, N runs each\n"
    "  shared    T threads sharing one instance, N runs each; thread 0 also\n"
    "            benchmarks the instance now and then\n"
    "  replays   N runs of one instance; memory before and after\n"
    "  loads     N load/run/release cycles; memory before and after\n"
    "  faults    N cycles: a load failing by an injected fault, a good load\n"
    "            whose run fails by one, a correct run; memory too\n"
    "options:\n"
    "  --threads T            threads of own/shared (default 4)\n"
    "  --iterations N         runs per thread, runs or cycles (default 1000)\n"
    "  --warmup W             runs or cycles before the first measurement\n"
    "                         (default 1000 runs, 10 cycles)\n"
    "  --input-sets K         distinct input sets (default 8)\n"
    "  --io host|device|mixed where inputs and outputs live (default mixed:\n"
    "                         alternate; replays default to host)\n"
    "  --device D             CUDA device ordinal (default 0)\n"
    "  --max-device-growth B  bytes of device memory the run may lose\n"
    "                         (default 0)\n"
    "  --max-rss-growth KB    host RSS growth allowed (default 1024 kB)\n"
    "  --max-seconds S        stop a mode after S seconds (fails it)\n";

enum class IoKind { Host, Device, Mixed };

struct Options {
  std::string package;
  std::string mode;
  int threads = 4;
  int64_t iterations = 1000;
  int64_t warmup = -1;
  int inputSets = 8;
  IoKind io = IoKind::Mixed;
  bool ioGiven = false;
  int device = 0;
  int64_t maxDeviceGrowth = 0;
  int64_t maxRssGrowthKb = 1024;
  double maxSeconds = 0;
};

int usageError(const std::string &message) {
  std::fprintf(stderr, "cgrt-stress: error: %s (see cgrt-stress --help)\n",
               message.c_str());
  return 2;
}

bool parseInt(const char *text, int64_t low, int64_t *out) {
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (!*text || *end || value < low)
    return false;
  *out = value;
  return true;
}

/// Parses argv; returns -1 to go on, else the exit code.
int parseOptions(int argc, char **argv, Options *o) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg.rfind("--", 0) != 0) {
      positional.push_back(arg);
      continue;
    }
    if (i + 1 >= argc)
      return usageError("option '" + arg + "' needs a value");
    const char *value = argv[++i];
    int64_t number = 0;
    if (arg == "--io") {
      std::string v = value;
      o->ioGiven = true;
      if (v == "host")
        o->io = IoKind::Host;
      else if (v == "device")
        o->io = IoKind::Device;
      else if (v == "mixed")
        o->io = IoKind::Mixed;
      else
        return usageError("--io takes host, device or mixed, not '" + v + "'");
    } else if (arg == "--max-seconds") {
      char *end = nullptr;
      o->maxSeconds = std::strtod(value, &end);
      if (!*value || *end || o->maxSeconds <= 0)
        return usageError("--max-seconds needs a positive number");
    } else {
      struct IntOption {
        const char *name;
        int64_t low;
        int64_t *target;
      };
      int64_t threads = o->threads, inputSets = o->inputSets,
              device = o->device;
      const IntOption table[] = {
          {"--threads", 1, &threads},
          {"--iterations", 1, &o->iterations},
          {"--warmup", 0, &o->warmup},
          {"--input-sets", 1, &inputSets},
          {"--device", 0, &device},
          {"--max-device-growth", 0, &o->maxDeviceGrowth},
          {"--max-rss-growth", 0, &o->maxRssGrowthKb},
      };
      const IntOption *found = nullptr;
      for (const IntOption &option : table)
        if (arg == option.name)
          found = &option;
      if (!found)
        return usageError("unknown option '" + arg + "'");
      if (!parseInt(value, found->low, &number) || number > (1ll << 40))
        return usageError(arg + " needs a whole number >= " +
                          std::to_string(found->low) + ", not '" + value + "'");
      *found->target = number;
      if (threads > 1024 || inputSets > 4096)
        return usageError(arg + " is too large");
      o->threads = static_cast<int>(threads);
      o->inputSets = static_cast<int>(inputSets);
      o->device = static_cast<int>(device);
    }
  }
  if (positional.size() != 2)
    return usageError("need a package folder and a mode");
  o->package = positional[0];
  o->mode = positional[1];
  static const char *const modes[] = {"own", "shared", "replays", "loads",
                                      "faults"};
  bool known = false;
  for (const char *mode : modes)
    known |= o->mode == mode;
  if (!known)
    return usageError("unknown mode '" + o->mode + "'");
  if (o->mode == "replays" && !o->ioGiven)
    o->io = IoKind::Host;
  return -1;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Takes a status: its message ("" for success), freed.
std::string take(cgrt_status status) {
  std::string message = cgrt_status_get_message(status);
  cgrt_status_free(status);
  return message;
}

uint64_t bytesOf(const cgrt_tensor &t) {
  uint64_t count = 1;
  for (int32_t i = 0; i < t.rank; ++i)
    count *= t.dims[i] < 0 ? 0 : static_cast<uint64_t>(t.dims[i]);
  return count * cgrt_dtype_size(t.dtype);
}

/// One input set and what the reference instance made of it.
struct InputSet {
  std::vector<HostTensor> inputs;
  std::vector<cgrt_tensor> outputDescs; ///< dims as the run reported them
  std::vector<std::vector<unsigned char>> outputs;
};

/// The process's view of the device: driver, retained primary context.
struct Device {
  const cgrt::Driver *d = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;

  ~Device() {
    if (context)
      d->cuDevicePrimaryCtxRelease(device);
  }
};

struct Memory {
  size_t deviceFree = 0;
  int64_t rssKb = 0;
};

int64_t rssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::strtoll(line.c_str() + 6, nullptr, 10);
  return -1;
}

Memory measure(const Device &dev) {
  Memory m;
  cgrt::ScopedContext scope(*dev.d, dev.context);
  size_t total = 0;
  if (dev.d->cuMemGetInfo(&m.deviceFree, &total) != CUDA_SUCCESS)
    m.deviceFree = 0;
  m.rssKb = rssKb();
  return m;
}

/// What a mode found.
struct Tally {
  std::atomic<int64_t> runs{0}, mismatches{0}, errors{0};
  std::mutex mutex;
  std::string firstProblem;

  void problem(std::atomic<int64_t> &counter, const std::string &what) {
    ++counter;
    std::lock_guard<std::mutex> lock(mutex);
    if (firstProblem.empty())
      firstProblem = what;
  }
  bool clean() const { return mismatches == 0 && errors == 0; }
};

/// Runs and checks inference on one model from one thread, with buffers of
/// its own (host, and device ones when the I/O kind needs them).
class Worker {
public:
  Worker(const Device &dev, const std::vector<InputSet> &sets,
         const std::vector<cgrt_tensor> &inputInfo,
         const std::vector<cgrt_tensor> &outputInfo, bool withDevice)
      : dev(dev), sets(sets), inputInfo(inputInfo), outputInfo(outputInfo) {
    hostOutputs.resize(outputInfo.size());
    for (size_t i = 0; i < outputInfo.size(); ++i)
      hostOutputs[i].resize(outputInfo[i].bytes);
    if (!withDevice)
      return;
    cgrt::ScopedContext scope(*dev.d, dev.context);
    for (const cgrt_tensor &info : inputInfo)
      deviceInputs.push_back(allocate(info.bytes));
    for (const cgrt_tensor &info : outputInfo)
      deviceOutputs.push_back(allocate(info.bytes));
  }
  ~Worker() {
    cgrt::ScopedContext scope(*dev.d, dev.context);
    for (CUdeviceptr p : deviceInputs)
      if (p)
        dev.d->cuMemFree(p);
    for (CUdeviceptr p : deviceOutputs)
      if (p)
        dev.d->cuMemFree(p);
  }
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  const std::string &setupError() const { return error; }

  /// One run of input set `k`; the outputs checked against the set's.
  /// Returns false with `*what` set on a failed run or a mismatch
  /// (`*mismatch` tells which).
  bool run(cgrt_model *model, size_t k, bool onDevice, bool *mismatch,
           std::string *what) {
    *mismatch = false;
    const InputSet &set = sets[k];
    std::vector<cgrt_tensor> inputs(inputInfo.size()),
        outputs(outputInfo.size());
    cgrt::ScopedContext scope(*dev.d, dev.context);
    for (size_t i = 0; i < inputs.size(); ++i) {
      inputs[i] = const_cast<HostTensor &>(set.inputs[i]).view();
      if (onDevice && inputs[i].bytes) {
        if (dev.d->cuMemcpyHtoD(deviceInputs[i], set.inputs[i].data.data(),
                                inputs[i].bytes) != CUDA_SUCCESS)
          return fail("cuMemcpyHtoD of an input failed", what);
        inputs[i].data = reinterpret_cast<void *>(deviceInputs[i]);
        inputs[i].memory = CGRT_MEMORY_DEVICE;
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      outputs[i] = outputInfo[i];
      if (onDevice) {
        outputs[i].data = reinterpret_cast<void *>(deviceOutputs[i]);
        outputs[i].memory = CGRT_MEMORY_DEVICE;
        if (outputs[i].bytes &&
            dev.d->cuMemsetD8(deviceOutputs[i], 0xa5, outputs[i].bytes) !=
                CUDA_SUCCESS)
          return fail("cuMemsetD8 of an output failed", what);
      } else {
        std::memset(hostOutputs[i].data(), 0xa5, hostOutputs[i].size());
        outputs[i].data = hostOutputs[i].data();
      }
    }
    // The copies and memsets above may still run on the legacy stream; the
    // runtime's stream does not wait for it.
    if (onDevice && dev.d->cuStreamSynchronize(nullptr) != CUDA_SUCCESS)
      return fail("cuStreamSynchronize before the run failed", what);
    std::string message = take(cgrt_model_run(
        model, inputs.data(), inputs.size(), outputs.data(), outputs.size()));
    if (!message.empty())
      return fail(message, what);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const cgrt_tensor &expected = set.outputDescs[i];
      if (outputs[i].rank != expected.rank ||
          std::memcmp(outputs[i].dims, expected.dims,
                      sizeof(int64_t) * static_cast<size_t>(expected.rank)))
        return mismatchIn(i, k, "its dims differ", mismatch, what);
      uint64_t bytes = set.outputs[i].size();
      if (onDevice && bytes) {
        if (dev.d->cuMemcpyDtoH(hostOutputs[i].data(), deviceOutputs[i],
                                bytes) != CUDA_SUCCESS)
          return fail("cuMemcpyDtoH of an output failed", what);
      }
      if (bytes &&
          std::memcmp(hostOutputs[i].data(), set.outputs[i].data(), bytes) != 0)
        return mismatchIn(i, k, "its bytes differ", mismatch, what);
    }
    return true;
  }

private:
  CUdeviceptr allocate(size_t bytes) {
    CUdeviceptr p = 0;
    if (bytes && dev.d->cuMemAlloc(&p, bytes) != CUDA_SUCCESS) {
      error = "cannot allocate " + std::to_string(bytes) +
              " bytes of device memory for a buffer";
      p = 0;
    }
    return p;
  }
  static bool fail(const std::string &message, std::string *what) {
    *what = message;
    return false;
  }
  bool mismatchIn(size_t output, size_t k, const char *how, bool *mismatch,
                  std::string *what) {
    *mismatch = true;
    *what = "output " + std::to_string(output) + " of input set " +
            std::to_string(k) + ": " + how + " from the reference run";
    return false;
  }

  const Device &dev;
  const std::vector<InputSet> &sets;
  const std::vector<cgrt_tensor> &inputInfo, &outputInfo;
  std::vector<std::vector<unsigned char>> hostOutputs;
  std::vector<CUdeviceptr> deviceInputs, deviceOutputs;
  std::string error;
};

/// The tool's state between modes: options, device, reference results.
class Stress {
public:
  explicit Stress(const Options &o) : o(o) {}

  /// Driver, context, I/O description, reference results; 0 or an exit code.
  int setUp();
  int runMode();

private:
  cgrt_model *load(std::string *message) {
    cgrt_model_options options;
    cgrt_model_options_init(&options);
    options.device_ordinal = o.device;
    cgrt_model *model = nullptr;
    *message = take(cgrt_model_load(o.package.c_str(), &options, &model));
    return model;
  }
  bool onDevice(int64_t iteration) const {
    return o.io == IoKind::Device ||
           (o.io == IoKind::Mixed && iteration % 2 == 1);
  }
  bool timeUp(std::chrono::steady_clock::time_point start) const {
    return o.maxSeconds > 0 && secondsSince(start) > o.maxSeconds;
  }
  const char *ioName() const {
    return o.io == IoKind::Host     ? "host I/O"
           : o.io == IoKind::Device ? "device I/O"
                                    : "host and device I/O alternating";
  }
  std::unique_ptr<Worker> worker() {
    return std::make_unique<Worker>(dev, sets, inputInfo, outputInfo,
                                    o.io != IoKind::Host);
  }
  void runChecked(Worker &w, cgrt_model *model, size_t k, int64_t iteration,
                  Tally &tally, const char *who) {
    bool mismatch = false;
    std::string what;
    if (!w.run(model, k, onDevice(iteration), &mismatch, &what))
      tally.problem(mismatch ? tally.mismatches : tally.errors,
                    std::string(who) + ": " + what);
    ++tally.runs;
  }
  int threads(bool shared);
  int replays();
  int loads();
  int faults();
  /// "device free A -> B bytes (growth G B, tolerance T B), host RSS ..."
  /// and whether both growths are within the tolerances.
  bool memoryReport(const Memory &before, const Memory &after,
                    std::string *text) const;
  int finish(const char *mode, bool pass, const std::string &text,
             const Tally *tally) const;

  const Options &o;
  Device dev;
  std::string modelLabel;
  std::vector<cgrt_tensor> inputInfo, outputInfo;
  std::vector<InputSet> sets;
};

int Stress::setUp() {
  if (cgrt_status s = cgrt::getDriver(&dev.d)) {
    std::fprintf(stderr, "cgrt-stress: error: %s\n", take(s).c_str());
    return 2;
  }
  const cgrt::Driver &d = *dev.d;
  char name[256] = {};
  if (o.device >= d.deviceCount ||
      d.cuDeviceGet(&dev.device, o.device) != CUDA_SUCCESS ||
      d.cuDevicePrimaryCtxRetain(&dev.context, dev.device) != CUDA_SUCCESS) {
    dev.context = nullptr;
    std::fprintf(stderr, "cgrt-stress: error: cannot use CUDA device %d\n",
                 o.device);
    return 2;
  }
  d.cuDeviceGetName(name, sizeof(name) - 1, dev.device);
  dev.name = name;

  std::string message;
  cgrt_model *reference = load(&message);
  if (!reference) {
    std::fprintf(stderr, "cgrt-stress: error: %s\n", message.c_str());
    return 2;
  }
  std::unique_ptr<cgrt_model, void (*)(cgrt_model *)> holder(
      reference, cgrt_model_release);
  const char *modelName = nullptr;
  for (size_t i = 0; i < cgrt_model_num_inputs(reference); ++i) {
    cgrt_tensor info;
    take(cgrt_model_input_info(reference, i, &modelName, &info));
    for (int32_t k = 0; k < info.rank; ++k)
      if (info.dims[k] < 0) {
        std::fprintf(stderr,
                     "cgrt-stress: error: input %zu '%s' has a dim only known "
                     "at run time; cgrt-stress needs static inputs\n",
                     i, modelName);
        return 2;
      }
    inputInfo.push_back(info);
  }
  for (size_t i = 0; i < cgrt_model_num_outputs(reference); ++i) {
    cgrt_tensor info;
    take(cgrt_model_output_info(reference, i, nullptr, &info));
    outputInfo.push_back(info);
  }
  modelLabel = "'" + o.package + "'";

  // K input sets and their results, each computed twice.
  sets.resize(static_cast<size_t>(o.inputSets));
  for (size_t k = 0; k < sets.size(); ++k) {
    InputSet &set = sets[k];
    for (size_t i = 0; i < inputInfo.size(); ++i) {
      HostTensor t;
      t.dtype = inputInfo[i].dtype;
      t.shape.assign(inputInfo[i].dims, inputInfo[i].dims + inputInfo[i].rank);
      cgcrun::fillRandom(&t, 0x5eed0000ull + k * 1000 + i);
      set.inputs.push_back(std::move(t));
    }
    std::vector<std::vector<unsigned char>> results[2];
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::vector<cgrt_tensor> inputs, outputs = outputInfo;
      for (HostTensor &t : set.inputs)
        inputs.push_back(t.view());
      results[attempt].resize(outputs.size());
      for (size_t i = 0; i < outputs.size(); ++i) {
        results[attempt][i].assign(outputs[i].bytes, 0xa5);
        outputs[i].data = results[attempt][i].data();
      }
      message = take(cgrt_model_run(reference, inputs.data(), inputs.size(),
                                    outputs.data(), outputs.size()));
      if (!message.empty()) {
        std::fprintf(stderr, "cgrt-stress: error: the reference run: %s\n",
                     message.c_str());
        return 2;
      }
      for (size_t i = 0; i < outputs.size(); ++i)
        results[attempt][i].resize(bytesOf(outputs[i]));
      set.outputDescs = outputs;
    }
    if (results[0] != results[1]) {
      std::fprintf(stderr,
                   "cgrt-stress: error: two runs of input set %zu on one "
                   "instance differ; the package's results are not "
                   "deterministic, so cgrt-stress cannot check them bit for "
                   "bit\n",
                   k);
      return 2;
    }
    set.outputs = std::move(results[0]);
  }
  std::printf("cgrt-stress: package %s on device %d '%s' (CUDA driver %d), "
              "%zu inputs, %zu outputs, %d input sets\n",
              modelLabel.c_str(), o.device, dev.name.c_str(), d.version,
              inputInfo.size(), outputInfo.size(), o.inputSets);
  std::fflush(stdout);
  return 0;
}

int Stress::finish(const char *mode, bool pass, const std::string &text,
                   const Tally *tally) const {
  std::printf("cgrt-stress: %s: %s: %s\n", mode, pass ? "PASS" : "FAIL",
              text.c_str());
  if (tally && !tally->firstProblem.empty())
    std::printf("  first problem: %s\n", tally->firstProblem.c_str());
  std::fflush(stdout);
  return pass ? 0 : 1;
}

bool Stress::memoryReport(const Memory &before, const Memory &after,
                          std::string *text) const {
  int64_t deviceGrowth = static_cast<int64_t>(before.deviceFree) -
                         static_cast<int64_t>(after.deviceFree);
  int64_t rssGrowth = after.rssKb - before.rssKb;
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                "device memory free %zu -> %zu bytes (growth %" PRId64
                " B, tolerance %" PRId64 " B), host RSS %" PRId64 " -> %" PRId64
                " kB (growth %" PRId64 " kB, tolerance %" PRId64 " kB)",
                before.deviceFree, after.deviceFree, deviceGrowth,
                o.maxDeviceGrowth, before.rssKb, after.rssKb, rssGrowth,
                o.maxRssGrowthKb);
  *text = buffer;
  return before.deviceFree && after.deviceFree && before.rssKb >= 0 &&
         deviceGrowth <= o.maxDeviceGrowth && rssGrowth <= o.maxRssGrowthKb;
}

int Stress::threads(bool shared) {
  Tally tally;
  std::string message;
  cgrt_model *sharedModel = shared ? load(&message) : nullptr;
  if (shared && !sharedModel) {
    std::fprintf(stderr, "cgrt-stress: error: %s\n", message.c_str());
    return 2;
  }
  std::atomic<int64_t> benchmarks{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < o.threads; ++t)
    pool.emplace_back([&, t] {
      std::string who = "thread " + std::to_string(t);
      std::unique_ptr<Worker> w = worker();
      if (!w->setupError().empty()) {
        tally.problem(tally.errors, who + ": " + w->setupError());
        return;
      }
      cgrt_model *model = sharedModel;
      if (!shared) {
        std::string loadMessage;
        model = load(&loadMessage);
        if (!model) {
          tally.problem(tally.errors, who + ": " + loadMessage);
          return;
        }
      }
      for (int64_t i = 0; i < o.iterations && !timeUp(start); ++i) {
        size_t k = static_cast<size_t>(t * 131 + i) % sets.size();
        runChecked(*w, model, k, i + t, tally, who.c_str());
        if (shared && t == 0 && i % 64 == 63) {
          cgrt_benchmark_result result;
          std::string error = take(cgrt_model_benchmark(model, 0, 2, &result));
          if (!error.empty())
            tally.problem(tally.errors, who + ": benchmark: " + error);
          ++benchmarks;
        }
      }
      if (!shared)
        cgrt_model_release(model);
    });
  for (std::thread &thread : pool)
    thread.join();
  double seconds = secondsSince(start);
  cgrt_model_release(sharedModel);
  int64_t expected = o.iterations * o.threads;
  char text[512];
  std::snprintf(text, sizeof(text),
                "%d threads x %" PRId64 " runs (%s) on %s, %" PRId64
                " of %" PRId64 " runs done%s, %" PRId64 " mismatches, %" PRId64
                " errors, in %.2f s",
                o.threads, o.iterations, ioName(),
                shared ? "one shared instance" : "an instance per thread",
                tally.runs.load(), expected,
                shared ? (" (and " + std::to_string(benchmarks.load()) +
                          " benchmarks interleaved)")
                             .c_str()
                       : "",
                tally.mismatches.load(), tally.errors.load(), seconds);
  return finish(shared ? "shared" : "own",
                tally.clean() && tally.runs == expected, text, &tally);
}

int Stress::replays() {
  Tally tally;
  std::string message;
  cgrt_model *model = load(&message);
  if (!model) {
    std::fprintf(stderr, "cgrt-stress: error: %s\n", message.c_str());
    return 2;
  }
  std::unique_ptr<Worker> w = worker();
  int64_t warmup = o.warmup < 0 ? 1000 : o.warmup;
  for (int64_t i = 0; i < warmup; ++i)
    runChecked(*w, model, static_cast<size_t>(i) % sets.size(), i, tally,
               "warm-up");
  Memory before = measure(dev);
  tally.runs = 0;
  auto start = std::chrono::steady_clock::now();
  int64_t i = 0;
  for (; i < o.iterations; ++i) {
    if ((i & 1023) == 0 && timeUp(start))
      break;
    runChecked(*w, model, static_cast<size_t>(i) % sets.size(), i, tally,
               "replay");
  }
  double seconds = secondsSince(start);
  Memory after = measure(dev);
  w.reset();
  cgrt_model_release(model);
  std::string memory;
  bool memoryOk = memoryReport(before, after, &memory);
  char text[1024];
  std::snprintf(text, sizeof(text),
                "%" PRId64 " of %" PRId64 " runs (%s, after %" PRId64
                " warm-up runs) in %.1f s (%.1f us/run), %" PRId64
                " mismatches, %" PRId64 " errors; %s",
                tally.runs.load(), o.iterations, ioName(), warmup, seconds,
                tally.runs ? seconds * 1e6 / static_cast<double>(tally.runs)
                           : 0.0,
                tally.mismatches.load(), tally.errors.load(), memory.c_str());
  return finish("replays",
                tally.clean() && memoryOk && tally.runs == o.iterations, text,
                &tally);
}

int Stress::loads() {
  Tally tally;
  std::unique_ptr<Worker> w = worker();
  int64_t loadsDone = 0;
  auto cycle = [&](int64_t i, const char *who) {
    std::string message;
    cgrt_model *model = load(&message);
    if (!model) {
      tally.problem(tally.errors, std::string(who) + ": " + message);
      return;
    }
    ++loadsDone;
    runChecked(*w, model, static_cast<size_t>(i) % sets.size(), i, tally, who);
    cgrt_model_release(model);
  };
  int64_t warmup = o.warmup < 0 ? 10 : o.warmup;
  for (int64_t i = 0; i < warmup; ++i)
    cycle(i, "warm-up");
  Memory before = measure(dev);
  tally.runs = 0;
  loadsDone = 0;
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < o.iterations && !timeUp(start); ++i)
    cycle(i, "cycle");
  double seconds = secondsSince(start);
  Memory after = measure(dev);
  std::string memory;
  bool memoryOk = memoryReport(before, after, &memory);
  char text[1024];
  std::snprintf(text, sizeof(text),
                "%" PRId64 " of %" PRId64 " load/run/release cycles (%s, after "
                "%" PRId64 " warm-up cycles) in %.1f s (%.2f ms/cycle), "
                "%" PRId64 " mismatches, %" PRId64 " errors; %s",
                loadsDone, o.iterations, ioName(), warmup, seconds,
                loadsDone ? seconds * 1e3 / static_cast<double>(loadsDone)
                          : 0.0,
                tally.mismatches.load(), tally.errors.load(), memory.c_str());
  return finish("loads",
                tally.clean() && memoryOk && loadsDone == o.iterations &&
                    tally.runs == o.iterations,
                text, &tally);
}

/// A driver call to fail: `times` armed faults, the first after `skip`
/// successful calls.
struct Fault {
  const char *call;
  unsigned skip;
  CUresult code;
  int times;
};

/// Failures of the load steps, in load order.
const Fault kLoadFaults[] = {
    {"cuStreamCreate", 0, CUDA_ERROR_UNKNOWN, 1},
    {"cuModuleLoadData", 0, CUDA_ERROR_INVALID_IMAGE, 2}, // cubin, then PTX
    {"cuModuleGetFunction", 0, CUDA_ERROR_NOT_FOUND, 1},
    {"cuMemAlloc", 0, CUDA_ERROR_OUT_OF_MEMORY, 1}, // the arena
    {"cuMemsetD8", 0, CUDA_ERROR_UNKNOWN, 1},
    {"cuMemcpyHtoD", 0, CUDA_ERROR_UNKNOWN, 1}, // the weights
    {"cuGraphCreate", 0, CUDA_ERROR_OUT_OF_MEMORY, 1},
    {"cuGraphAddKernelNode", 0, CUDA_ERROR_INVALID_VALUE, 1},
    {"cuGraphInstantiateWithFlags", 0, CUDA_ERROR_UNKNOWN, 1},
    {"cuGraphUpload", 0, CUDA_ERROR_OUT_OF_MEMORY, 1},
    {"cuStreamSynchronize", 0, CUDA_ERROR_UNKNOWN, 1},
};

/// Failures of the run steps (the host I/O path).
const Fault kRunFaults[] = {
    {"cuMemcpyHtoDAsync", 0, CUDA_ERROR_UNKNOWN, 1},
    {"cuGraphLaunch", 0, CUDA_ERROR_LAUNCH_FAILED, 1},
    {"cuMemcpyDtoHAsync", 0, CUDA_ERROR_UNKNOWN, 1},
    {"cuStreamSynchronize", 0, CUDA_ERROR_UNKNOWN, 1},
};

/// What one kind of fault did over the cycles.
struct FaultRecord {
  int64_t injected = 0, reported = 0, notFired = 0;
  std::string example;
};

int Stress::faults() {
  Tally tally;
  // Faults fire on the host path; device buffers would add calls of the
  // same names (cuMemcpyHtoD) outside the runtime.
  std::unique_ptr<Worker> w =
      std::make_unique<Worker>(dev, sets, inputInfo, outputInfo, false);
  std::map<std::string, FaultRecord> records;
  std::vector<std::string> order;
  constexpr size_t numLoad = sizeof(kLoadFaults) / sizeof(kLoadFaults[0]);
  constexpr size_t numRun = sizeof(kRunFaults) / sizeof(kRunFaults[0]);

  auto inject = [](const Fault &f, unsigned skip) {
    cgrt::testing::clearFaults();
    for (int i = 0; i < f.times; ++i)
      cgrt::testing::injectFault(f.call, skip, f.code);
    return cgrt::testing::pendingFaults();
  };
  auto record = [&](const std::string &key) -> FaultRecord & {
    if (!records.count(key))
      order.push_back(key);
    return records[key];
  };
  auto cycle = [&](int64_t i, bool count) {
    // A load that fails; kernel nodes fail at a different node each round.
    const Fault &lf = kLoadFaults[static_cast<size_t>(i) % numLoad];
    unsigned skip = lf.skip;
    if (!std::strcmp(lf.call, "cuGraphAddKernelNode"))
      skip = static_cast<unsigned>((i / static_cast<int64_t>(numLoad)) % 4);
    size_t armed = inject(lf, skip);
    std::string message;
    cgrt_model *model = load(&message);
    bool fired = cgrt::testing::pendingFaults() < armed;
    cgrt::testing::clearFaults();
    FaultRecord &lr = record(std::string("load: ") + lf.call);
    if (count) {
      if (!fired)
        ++lr.notFired;
      else {
        ++lr.injected;
        if (!model && message.find("model '") != std::string::npos) {
          ++lr.reported;
          if (lr.example.empty())
            lr.example = message;
        } else {
          tally.problem(tally.errors,
                        std::string("load fault ") + lf.call +
                            (model
                                 ? ": the load succeeded"
                                 : ": the message names no model: " + message));
        }
      }
    }
    cgrt_model_release(model);

    // A good load, a run that fails, a run that must be right.
    model = load(&message);
    if (!model) {
      tally.problem(tally.errors, "load after a fault: " + message);
      return;
    }
    const Fault &rf = kRunFaults[static_cast<size_t>(i) % numRun];
    armed = inject(rf, rf.skip);
    size_t k = static_cast<size_t>(i) % sets.size();
    bool mismatch = false;
    std::string what;
    bool ok = w->run(model, k, false, &mismatch, &what);
    fired = cgrt::testing::pendingFaults() < armed;
    cgrt::testing::clearFaults();
    FaultRecord &rr = record(std::string("run: ") + rf.call);
    if (count) {
      if (!fired)
        ++rr.notFired;
      else {
        ++rr.injected;
        if (!ok && !mismatch && what.find(rf.call) != std::string::npos) {
          ++rr.reported;
          if (rr.example.empty())
            rr.example = what;
        } else {
          tally.problem(tally.errors, std::string("run fault ") + rf.call +
                                          (ok ? ": the run succeeded"
                                              : ": not reported: " + what));
        }
      }
    }
    runChecked(*w, model, (k + 1) % sets.size(), 0, tally, "run after a fault");
    cgrt_model_release(model);
  };

  int64_t warmup = o.warmup < 0 ? 10 : o.warmup;
  for (int64_t i = 0; i < warmup; ++i)
    cycle(i, false);
  Memory before = measure(dev);
  tally.runs = 0;
  auto start = std::chrono::steady_clock::now();
  int64_t cycles = 0;
  for (; cycles < o.iterations && !timeUp(start); ++cycles)
    cycle(cycles, true);
  double seconds = secondsSince(start);
  Memory after = measure(dev);
  std::string memory;
  bool memoryOk = memoryReport(before, after, &memory);

  int64_t injected = 0, reported = 0;
  for (const std::string &key : order) {
    const FaultRecord &r = records[key];
    injected += r.injected;
    reported += r.reported;
    std::printf("  %-40s %5" PRId64 " injected, %5" PRId64 " reported%s%s%s\n",
                key.c_str(), r.injected, r.reported,
                r.notFired ? (", " + std::to_string(r.notFired) +
                              " did not fire (the package makes no such call)")
                                 .c_str()
                           : "",
                r.example.empty() ? "" : "; e.g. ", r.example.c_str());
  }
  char text[1024];
  std::snprintf(text, sizeof(text),
                "%" PRId64 " of %" PRId64 " cycles in %.1f s: %" PRId64
                " faults reported of %" PRId64 " injected (%zu kinds), "
                "%" PRId64 " correct runs after them, %" PRId64
                " mismatches, %" PRId64 " errors; %s",
                cycles, o.iterations, seconds, reported, injected,
                records.size(), tally.runs.load(), tally.mismatches.load(),
                tally.errors.load(), memory.c_str());
  return finish("faults",
                tally.clean() && memoryOk && reported == injected &&
                    cycles == o.iterations && tally.runs == cycles,
                text, &tally);
}

int Stress::runMode() {
  if (o.mode == "own" || o.mode == "shared")
    return threads(o.mode == "shared");
  if (o.mode == "replays")
    return replays();
  if (o.mode == "loads")
    return loads();
  return faults();
}

} // namespace

int stressMain(int argc, char **argv) {
  Options options;
  int code = parseOptions(argc, argv, &options);
  if (code >= 0)
    return code;
  Stress stress(options);
  if (int setUpCode = stress.setUp())
    return setUpCode;
  return stress.runMode();
}

} // namespace cgrtstress
