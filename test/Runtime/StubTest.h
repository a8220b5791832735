//===- StubTest.h - cgrt-tests on the stub CUDA driver ----------*- C++ -*-===//
//
// Where there is no GPU, lit runs cgrt-tests with
// CGRT_DRIVER_LIBRARY=<build>/lib/libcgrt_stub_driver.so (runtime.test):
// the runtime then loads the stub (StubDriver/StubDriver.h) instead of
// libcuda, and the GPU tests (GpuTest) run on it, with host stand-ins for
// the test package's four kernels. StubTest adds what only the stub can
// show: the driver calls a run makes, what they copied where, the graphs as
// built and as instantiated, faults inside the driver, and leaks.
//
// What passing on the stub proves, and what it cannot: docs/testing.md,
// "The runtime without a GPU". In short: the runtime's decisions and data
// movement, yes; kernels, real driver semantics, timing and asynchronous
// errors, no. On the GPU machine StubTest skips and GpuTest runs for real.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_TEST_STUBTEST_H
#define CGRT_TEST_STUBTEST_H

#include "GpuTest.h"
#include "StubDriver/StubDriver.h"

#include <string>

namespace cgrttest {

/// The stub's observation API, resolved from the library the runtime
/// loaded; null members where the driver is not the stub.
struct StubApi {
#define CGRT_STUB_FN(name) decltype(&::name) name = nullptr;
  CGRT_STUB_FN(cgrt_stub_abi)
  CGRT_STUB_FN(cgrt_stub_reset)
  CGRT_STUB_FN(cgrt_stub_log)
  CGRT_STUB_FN(cgrt_stub_calls)
  CGRT_STUB_FN(cgrt_stub_fail)
  CGRT_STUB_FN(cgrt_stub_pending_faults)
  CGRT_STUB_FN(cgrt_stub_live)
  CGRT_STUB_FN(cgrt_stub_set_kernel)
  CGRT_STUB_FN(cgrt_stub_set_conditional)
  CGRT_STUB_FN(cgrt_stub_pointer_name)
  CGRT_STUB_FN(cgrt_stub_graph_text)
  CGRT_STUB_FN(cgrt_stub_exec_text)
  CGRT_STUB_FN(cgrt_stub_graph_name)
  CGRT_STUB_FN(cgrt_stub_exec_name)
#undef CGRT_STUB_FN

  std::string log() const { return cgrt_stub_log(); }
  std::string pointer(CUdeviceptr p) const { return cgrt_stub_pointer_name(p); }
  std::string graphText(CUgraph g) const {
    const char *text = cgrt_stub_graph_text(g);
    return text ? text : "";
  }
  std::string execText(CUgraphExec e) const {
    const char *text = cgrt_stub_exec_text(e);
    return text ? text : "";
  }
};

/// The stub if $CGRT_DRIVER_LIBRARY names it, else null. The first call
/// registers the host stand-ins of the test package's kernels (kernels.cu)
/// and of cgc's condition kernels.
const StubApi *stubDriver();

/// The live object counts of the stub, to compare before and after.
struct StubObjects {
  long long allocations, bytes, modules, streams, events, graphs, execs,
      retains;
  static StubObjects now(const StubApi &stub);
  bool operator==(const StubObjects &o) const;
  std::string str() const;
};

#define REQUIRE_STUB()                                                         \
  do {                                                                         \
    if (!stubDriver())                                                         \
      GTEST_SKIP() << "needs the stub driver: set CGRT_DRIVER_LIBRARY to "     \
                      "build/lib/libcgrt_stub_driver.so";                      \
  } while (0)

/// GpuTest on the stub driver: skips elsewhere (GpuTest covers the GPU).
class StubTest : public GpuTest {
protected:
  void SetUp() override {
    REQUIRE_STUB();
    GpuTest::SetUp();
    if (IsSkipped())
      return;
    stub = stubDriver();
    stub->cgrt_stub_reset();
  }
  void TearDown() override {
    if (stub)
      EXPECT_EQ(stub->cgrt_stub_pending_faults(), 0u)
          << "a stub fault did not fire";
    GpuTest::TearDown();
  }
  const StubApi *stub = nullptr;
};

/// A package cgc compiles from test/Runtime/Inputs/<name>.onnxtxt with
/// `args` (once per process); "" with the reason in *skip where cgc or a
/// host C++ compiler is missing.
std::string cgcPackage(const std::string &name, const std::string &args,
                       std::string *skip);

/// Position of `needle` in `text` at or after `from`, npos if absent.
inline size_t findFrom(const std::string &text, const std::string &needle,
                       size_t from) {
  return from == std::string::npos ? std::string::npos
                                   : text.find(needle, from);
}

} // namespace cgrttest

#endif // CGRT_TEST_STUBTEST_H
