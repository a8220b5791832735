//===- Driver.cpp - the CUDA driver, loaded at run time ---------*- C++ -*-===//

#include "Driver.h"

#include "FaultSpec.h"

#include "Status.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <vector>

// The package ABI passes cuda.h's structs as they are in CUDA 12+ (notably
// CUDA_KERNEL_NODE_PARAMS = _v2, with the kern/ctx fields) and every entry
// point is requested at the 12.0 ABI, matching these prototypes.
static_assert(CUDA_VERSION >= 12000, "libcgrt needs the CUDA 12+ cuda.h");
static_assert(std::is_same<CUDA_KERNEL_NODE_PARAMS,
                           CUDA_KERNEL_NODE_PARAMS_v2>::value,
              "the package ABI uses CUDA_KERNEL_NODE_PARAMS_v2");

namespace cgrt {
namespace {

using GetProcAddressFn = CUresult (*)(const char *, void **, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult *);

struct DriverState {
  Driver driver;
  cgrt_status_code code = CGRT_OK;
  std::string message;
  cgrt_driver_api rawApi{};
};

DriverState *driverState = nullptr; // set once, never freed
std::once_flag driverOnce;

cgrt_status_code noDevice(DriverState &state, std::string message) {
  state.code = CGRT_NO_DEVICE;
  state.message = std::move(message);
  return state.code;
}

void loadDriver(DriverState &state) {
  Driver &d = state.driver;
  const char *env = std::getenv("CGRT_DRIVER_LIBRARY");
  d.libraryPath = env && *env ? env : "libcuda.so.1";

  void *handle = dlopen(d.libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *error = dlerror();
    noDevice(state, "no CUDA driver: cannot load " + d.libraryPath + " (" +
                        (error ? error : "unknown dlopen error") +
                        "); this machine needs an NVIDIA driver and GPU");
    return;
  }
  // Never dlclosed: the driver stays for the life of the process.
  auto getProc =
      reinterpret_cast<GetProcAddressFn>(dlsym(handle, "cuGetProcAddress_v2"));
  if (!getProc) {
    noDevice(state, "the CUDA driver " + d.libraryPath +
                        " is older than CUDA 12.0 (no cuGetProcAddress_v2); "
                        "cgrt needs a CUDA 12.0 or newer driver");
    return;
  }

  // cuInit first, through its one unversioned export, so a stub library or
  // a machine without a GPU is told apart from a driver that lacks entry
  // points; then everything else through cuGetProcAddress.
  d.cuInit = reinterpret_cast<decltype(d.cuInit)>(dlsym(handle, "cuInit"));
  d.cuGetErrorName =
      reinterpret_cast<decltype(d.cuGetErrorName)>(dlsym(handle, "cuGetErrorName"));
  d.cuGetErrorString = reinterpret_cast<decltype(d.cuGetErrorString)>(
      dlsym(handle, "cuGetErrorString"));
  if (!d.cuInit) {
    noDevice(state, "the CUDA driver " + d.libraryPath + " exports no cuInit");
    return;
  }
  CUresult result = CGRT_CU(d, cuInit, 0u);
  if (result != CUDA_SUCCESS) {
    const char *why = "the CUDA driver could not initialize: cuInit failed: ";
    if (result == CUDA_ERROR_NO_DEVICE)
      why = "no CUDA GPU: cuInit failed: ";
    else if (result == CUDA_ERROR_STUB_LIBRARY)
      why = "no CUDA driver (only the toolkit's link-time stub): cuInit "
            "failed: ";
    noDevice(state, why + resultString(d, result));
    return;
  }

  struct Entry {
    const char *name;
    void **slot;
  };
  std::vector<Entry> entries = {
#define CGRT_ENTRY(name) {#name, reinterpret_cast<void **>(&d.name)},
      CGRT_DRIVER_ENTRY_POINTS(CGRT_ENTRY)
#undef CGRT_ENTRY
  };
  for (const Entry &entry : entries) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult result = getProc(entry.name, entry.slot, kDriverApiVersion,
                              CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (result != CUDA_SUCCESS || !*entry.slot) {
      std::string why =
          found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
              ? "the driver is too old"
              : "cuGetProcAddress: " + resultString(d, result);
      noDevice(state, formatString("the CUDA driver %s has no usable entry "
                                   "point %s for the CUDA %d.%d ABI (%s)",
                                   d.libraryPath.c_str(), entry.name,
                                   kDriverApiVersion / 1000,
                                   kDriverApiVersion % 1000 / 10, why.c_str()));
      return;
    }
  }

  // Optional entries stay NULL on an older driver; a package that needs
  // one says so when its graph is built.
#define CGRT_OPTIONAL_ENTRY(name, version)                                     \
  {                                                                            \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;        \
    if (getProc(#name, reinterpret_cast<void **>(&d.name), version,            \
                CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS)          \
      d.name = nullptr;                                                        \
  }
  CGRT_OPTIONAL_DRIVER_ENTRY_POINTS(CGRT_OPTIONAL_ENTRY)
#undef CGRT_OPTIONAL_ENTRY
  state.rawApi.cuGraphConditionalHandleCreate = d.cuGraphConditionalHandleCreate;
  state.rawApi.cuGraphAddNode = d.cuGraphAddNode;
  state.rawApi.cuGraphAddKernelNode = d.cuGraphAddKernelNode;
  state.rawApi.cuGraphAddMemcpyNode = d.cuGraphAddMemcpyNode;
  state.rawApi.cuGraphAddMemsetNode = d.cuGraphAddMemsetNode;
  state.rawApi.cuGetErrorString = d.cuGetErrorString;

  result = CGRT_CU(d, cuDriverGetVersion, &d.version);
  if (result != CUDA_SUCCESS) {
    noDevice(state, "cuDriverGetVersion failed: " + resultString(d, result));
    return;
  }
  if (d.version < kDriverApiVersion) {
    noDevice(state, formatString("the CUDA driver supports CUDA %d.%d; cgrt "
                                 "needs CUDA %d.%d or newer",
                                 d.version / 1000, d.version % 1000 / 10,
                                 kDriverApiVersion / 1000,
                                 kDriverApiVersion % 1000 / 10));
    return;
  }
  result = CGRT_CU(d, cuDeviceGetCount, &d.deviceCount);
  if (result != CUDA_SUCCESS || d.deviceCount <= 0) {
    noDevice(state, "no CUDA GPU: cuDeviceGetCount " +
                        (result != CUDA_SUCCESS
                             ? "failed: " + resultString(d, result)
                             : std::string("found 0 devices")));
    return;
  }
}

//--- Fault injection --------------------------------------------------------

using Fault = cgrt::FaultSpec;

std::mutex faultMutex;
std::vector<Fault> &faults() {
  static std::vector<Fault> list;
  return list;
}

// $CGRT_FAULT (FaultSpec.h), read once, at first use.
void armFaultsFromEnvironment() {
  const char *spec = std::getenv("CGRT_FAULT");
  if (!spec || !*spec)
    return;
  std::lock_guard<std::mutex> lock(faultMutex);
  for (const Fault &fault : cgrt::parseFaultSpecs(spec)) {
    faults().push_back(fault);
    faultsArmed = true;
  }
}

// Builder table entries that go through fault injection.
CUresult faultyAddKernelNode(CUgraphNode *node, CUgraph graph,
                             const CUgraphNode *deps, size_t numDeps,
                             const CUDA_KERNEL_NODE_PARAMS *params) {
  return CGRT_CU(driverState->driver, cuGraphAddKernelNode, node, graph, deps,
                 numDeps, params);
}
CUresult faultyAddMemcpyNode(CUgraphNode *node, CUgraph graph,
                             const CUgraphNode *deps, size_t numDeps,
                             const CUDA_MEMCPY3D *params, CUcontext context) {
  return CGRT_CU(driverState->driver, cuGraphAddMemcpyNode, node, graph, deps,
                 numDeps, params, context);
}
CUresult faultyAddMemsetNode(CUgraphNode *node, CUgraph graph,
                             const CUgraphNode *deps, size_t numDeps,
                             const CUDA_MEMSET_NODE_PARAMS *params,
                             CUcontext context) {
  return CGRT_CU(driverState->driver, cuGraphAddMemsetNode, node, graph, deps,
                 numDeps, params, context);
}

} // namespace

std::atomic<bool> faultsArmed{false};

bool takeFault(const char *call, CUresult *code) {
  std::lock_guard<std::mutex> lock(faultMutex);
  std::vector<Fault> &list = faults();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].call != call)
      continue;
    if (list[i].skip > 0) {
      --list[i].skip;
      return false;
    }
    *code = list[i].code;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    if (list.empty())
      faultsArmed = false;
    return true;
  }
  return false;
}

namespace testing {
void injectFault(const std::string &call, unsigned skip, CUresult code) {
  std::lock_guard<std::mutex> lock(faultMutex);
  faults().push_back(Fault{call, skip, code});
  faultsArmed = true;
}
void clearFaults() {
  std::lock_guard<std::mutex> lock(faultMutex);
  faults().clear();
  faultsArmed = false;
}
size_t pendingFaults() {
  std::lock_guard<std::mutex> lock(faultMutex);
  return faults().size();
}
} // namespace testing

cgrt_status getDriver(const Driver **driver) {
  std::call_once(driverOnce, [] {
    armFaultsFromEnvironment();
    auto *state = new (std::nothrow) DriverState();
    if (!state)
      return;
    loadDriver(*state);
    driverState = state;
  });
  if (!driverState)
    return makeStatus(CGRT_OUT_OF_MEMORY, "out of host memory loading the "
                                          "CUDA driver");
  if (driverState->code != CGRT_OK)
    return makeStatusString(driverState->code, driverState->message);
  *driver = &driverState->driver;
  return nullptr;
}

const cgrt_driver_api *builderApi(const Driver &) {
  static const cgrt_driver_api faulty = {
      faultyAddKernelNode, faultyAddMemcpyNode, faultyAddMemsetNode,
      driverState->rawApi.cuGetErrorString,
      driverState->rawApi.cuGraphConditionalHandleCreate,
      driverState->rawApi.cuGraphAddNode};
  return faultsArmed ? &faulty : &driverState->rawApi;
}

std::string resultString(const Driver &driver, CUresult result) {
  const char *name = nullptr;
  const char *description = nullptr;
  if (driver.cuGetErrorName)
    driver.cuGetErrorName(result, &name);
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &description);
  if (!name)
    return formatString("CUresult %d%s%s", static_cast<int>(result),
                        description ? ": " : "",
                        description ? description : "");
  return formatString("%s (%d): %s", name, static_cast<int>(result),
                      description ? description : "no description");
}

cgrt_status_code statusCodeFor(CUresult result) {
  switch (result) {
  case CUDA_SUCCESS:
    return CGRT_OK;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return CGRT_OUT_OF_MEMORY;
  case CUDA_ERROR_NOT_FOUND:
    return CGRT_NOT_FOUND;
  default:
    return CGRT_CUDA_ERROR;
  }
}

cgrt_status driverError(const Driver &driver, CUresult result,
                        const char *call, const std::string &what) {
  cgrt_status_code code = statusCodeFor(result);
  if (code == CGRT_OK)
    code = CGRT_INTERNAL;
  return makeStatusString(code, std::string(call) + " failed for " + what +
                                    ": " + resultString(driver, result));
}

ScopedContext::ScopedContext(const Driver &driver, CUcontext context)
    : driver(driver) {
  if (CGRT_CU(driver, cuCtxGetCurrent, &previous) != CUDA_SUCCESS)
    previous = nullptr;
  if (previous == context)
    return;
  CUresult result = CGRT_CU(driver, cuCtxSetCurrent, context);
  if (result != CUDA_SUCCESS) {
    status = driverError(driver, result, "cuCtxSetCurrent",
                         "the model's context");
    return;
  }
  restore = true;
}

ScopedContext::~ScopedContext() {
  if (restore)
    CGRT_CU(driver, cuCtxSetCurrent, previous);
  cgrt_status_free(status);
}

} // namespace cgrt
