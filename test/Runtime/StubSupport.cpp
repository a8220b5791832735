//===- StubSupport.cpp - the stub driver as cgrt-tests sees it ------------===//
//
// Resolves the stub's observation API and registers host stand-ins of the
// kernels the tests' packages launch: the four of the hand-written test
// package (TestPackage/kernels.cu) and cgc's three condition kernels
// (lib/Conversion/CgcToCGraph/CgcToCGraph.cpp). They mirror that device
// code line by line so that the run path's data movement and the
// conditional nodes' wiring can be checked end to end; they say nothing
// about the device code itself, which only the GPU runs.
//
//===----------------------------------------------------------------------===//

#include "StubTest.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

namespace fs = std::filesystem;

namespace cgrttest {

namespace {

template <typename T> T arg(const cgrt_stub_launch *l, size_t i) {
  return *static_cast<T *>(l->params[i]);
}

/// Calls `body(i)` for every thread of a 1-D launch.
template <typename Body> void threads(const cgrt_stub_launch *l, Body body) {
  for (unsigned b = 0; b < l->grid[0]; ++b)
    for (unsigned t = 0; t < l->block[0]; ++t)
      body(static_cast<int>(b * l->block[0] + t));
}

void testAffineAccumulate(const cgrt_stub_launch *l) {
  auto *x = arg<const float *>(l, 0);
  auto *w = arg<const float *>(l, 1);
  auto *y = arg<float *>(l, 2);
  int n = arg<int>(l, 3);
  threads(l, [&](int i) {
    if (i < n)
      y[i] += x[i] * 2.0f + w[i];
  });
}

void testRelu(const cgrt_stub_launch *l) {
  auto *y = arg<const float *>(l, 0);
  auto *out = arg<float *>(l, 1);
  int n = arg<int>(l, 2);
  threads(l, [&](int i) {
    if (i < n)
      out[i] = y[i] > 0.0f ? y[i] : 0.0f;
  });
}

void testAffine(const cgrt_stub_launch *l) {
  auto *x = arg<const float *>(l, 0);
  auto *w = arg<const float *>(l, 1);
  auto *y = arg<float *>(l, 2);
  threads(l, [&](int i) {
    if (i < 256)
      y[i] = x[i] * 2.0f + w[i];
  });
}

void testReluCopy(const cgrt_stub_launch *l) {
  auto *y = arg<const float *>(l, 0);
  auto *out = arg<float *>(l, 1);
  auto *copy = arg<float *>(l, 2);
  threads(l, [&](int i) {
    if (i < 256) {
      float r = y[i] > 0.0f ? y[i] : 0.0f;
      out[i] = r;
      copy[i] = r;
    }
  });
}

const StubApi *setConditionalApi = nullptr;

void cgcIfCondition(const cgrt_stub_launch *l) {
  auto *cond = arg<const unsigned char *>(l, 0);
  setConditionalApi->cgrt_stub_set_conditional(
      arg<CUgraphConditionalHandle>(l, 1), cond[0] != 0);
}

void cgcLoopInit(const cgrt_stub_launch *l) {
  auto *maxTrips = arg<const long long *>(l, 0);
  auto *cond = arg<const unsigned char *>(l, 1);
  auto *iteration = arg<long long *>(l, 2);
  auto *condArg = arg<unsigned char *>(l, 3);
  unsigned char c = cond[0];
  iteration[0] = 0;
  condArg[0] = c;
  setConditionalApi->cgrt_stub_set_conditional(
      arg<CUgraphConditionalHandle>(l, 4), maxTrips[0] > 0 && c != 0);
}

void cgcLoopNext(const cgrt_stub_launch *l) {
  auto *maxTrips = arg<const long long *>(l, 0);
  auto *condOut = arg<const unsigned char *>(l, 1);
  auto *iteration = arg<long long *>(l, 2);
  auto *condArg = arg<unsigned char *>(l, 3);
  unsigned char c = condOut[0];
  long long i = iteration[0] + 1;
  iteration[0] = i;
  condArg[0] = c;
  setConditionalApi->cgrt_stub_set_conditional(
      arg<CUgraphConditionalHandle>(l, 4), i < maxTrips[0] && c != 0);
}

StubApi *loadStub() {
  const char *path = std::getenv("CGRT_DRIVER_LIBRARY");
  if (!path || !*path)
    return nullptr;
  // The runtime dlopens the same path; this handle shares its state.
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle || !dlsym(handle, "cgrt_stub_abi"))
    return nullptr;
  auto *api = new StubApi();
#define CGRT_STUB_RESOLVE(name)                                                \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name));     \
  if (!api->name)                                                              \
    return nullptr;
  CGRT_STUB_RESOLVE(cgrt_stub_abi)
  CGRT_STUB_RESOLVE(cgrt_stub_reset)
  CGRT_STUB_RESOLVE(cgrt_stub_log)
  CGRT_STUB_RESOLVE(cgrt_stub_calls)
  CGRT_STUB_RESOLVE(cgrt_stub_fail)
  CGRT_STUB_RESOLVE(cgrt_stub_pending_faults)
  CGRT_STUB_RESOLVE(cgrt_stub_live)
  CGRT_STUB_RESOLVE(cgrt_stub_set_kernel)
  CGRT_STUB_RESOLVE(cgrt_stub_set_conditional)
  CGRT_STUB_RESOLVE(cgrt_stub_pointer_name)
  CGRT_STUB_RESOLVE(cgrt_stub_graph_text)
  CGRT_STUB_RESOLVE(cgrt_stub_exec_text)
  CGRT_STUB_RESOLVE(cgrt_stub_graph_name)
  CGRT_STUB_RESOLVE(cgrt_stub_exec_name)
#undef CGRT_STUB_RESOLVE
  if (api->cgrt_stub_abi() != CGRT_STUB_ABI)
    return nullptr;
  setConditionalApi = api;
  const std::pair<const char *, cgrt_stub_kernel_fn> kernels[] = {
      {"test_affine_accumulate", testAffineAccumulate},
      {"test_relu", testRelu},
      {"test_affine", testAffine},
      {"test_relu_copy", testReluCopy},
      {"cgc_if_condition", cgcIfCondition},
      {"cgc_loop_init", cgcLoopInit},
      {"cgc_loop_next", cgcLoopNext},
  };
  for (const auto &k : kernels)
    api->cgrt_stub_set_kernel(k.first, k.second);
  return api;
}

} // namespace

const StubApi *stubDriver() {
  static const StubApi *api = loadStub();
  return api;
}

StubObjects StubObjects::now(const StubApi &stub) {
  return {stub.cgrt_stub_live("allocations"), stub.cgrt_stub_live("bytes"),
          stub.cgrt_stub_live("modules"),     stub.cgrt_stub_live("streams"),
          stub.cgrt_stub_live("events"),      stub.cgrt_stub_live("graphs"),
          stub.cgrt_stub_live("execs"),       stub.cgrt_stub_live("retains")};
}

bool StubObjects::operator==(const StubObjects &o) const {
  return allocations == o.allocations && bytes == o.bytes &&
         modules == o.modules && streams == o.streams && events == o.events &&
         graphs == o.graphs && execs == o.execs && retains == o.retains;
}

std::string StubObjects::str() const {
  return std::to_string(allocations) + " allocations (" +
         std::to_string(bytes) + " bytes), " + std::to_string(modules) +
         " modules, " + std::to_string(streams) + " streams, " +
         std::to_string(events) + " events, " + std::to_string(graphs) +
         " graphs, " + std::to_string(execs) + " execs, " +
         std::to_string(retains) + " context retains";
}

namespace {

bool onPath(const std::string &program) {
  if (program.find('/') != std::string::npos)
    return access(program.c_str(), X_OK) == 0;
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos)
      end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0)
      return true;
    start = end + 1;
  }
  return false;
}

std::string cgcBinary() {
  if (const char *env = std::getenv("CGC"))
    if (*env)
      return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : (exe.parent_path() / "cgc").string();
}

} // namespace

std::string cgcPackage(const std::string &name, const std::string &args,
                       std::string *skip) {
  static std::mutex mutex;
  static std::map<std::string, std::string> built;
  static std::unique_ptr<TempDir> root;
  std::lock_guard<std::mutex> lock(mutex);
  std::string key = name + " " + args;
  auto it = built.find(key);
  if (it != built.end())
    return it->second;

  std::string cgc = cgcBinary();
  if (cgc.empty() || access(cgc.c_str(), X_OK) != 0) {
    *skip = "no compiler: no cgc next to cgrt-tests (a runtime-only build; "
            "set CGC)";
    return "";
  }
  const char *cxxEnv = std::getenv("CXX");
  std::string cxx = cxxEnv && *cxxEnv ? cxxEnv : "c++";
  if (!onPath(cxx)) {
    *skip = "no compiler: no C++ compiler ('" + cxx +
            "' is not on PATH) to build the package's libmodel.so";
    return "";
  }
  std::string source =
      std::string(CGRT_TEST_SOURCE_DIR) + "/Inputs/" + name + ".onnxtxt";
  if (!fs::exists(source)) {
    *skip = "no compiler: no test model " + source +
            " (cgrt-tests was copied elsewhere)";
    return "";
  }
  if (!root)
    root.reset(new TempDir());
  std::string dir = root->file("pkg" + std::to_string(built.size()));
  std::string log = dir + ".log";
  std::string command = "'" + cgc + "' '" + source + "' --emit=lib -o '" + dir +
                        "' " + args + " > '" + log + "' 2>&1";
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << command << " failed:\n" << readFile(log);
    return "";
  }
  built[key] = dir;
  return dir;
}

} // namespace cgrttest
