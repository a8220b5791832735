//===- Driver.h - the CUDA driver, loaded at run time -----------*- C++ -*-===//
//
// libcgrt never links libcuda: getDriver() dlopens libcuda.so.1 once per
// process, resolves every entry point it uses through cuGetProcAddress with
// the CUDA 12.0 ABI (so any driver from 12.0 on works, driver 580 included)
// and calls cuInit. A missing driver, an old driver or a machine without a GPU
// becomes a CGRT_NO_DEVICE status.
//
// Every call goes through CGRT_CU, which lets tests inject a failure into any
// named entry point (see Testing.h), and every failure becomes a status that
// names the call and what it was for (driverError).
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_RUNTIME_DRIVER_H
#define CGRT_RUNTIME_DRIVER_H

#include "cgrt/cgrt.h"
#include "cgrt/package.h"

#include <atomic>
#include <string>

namespace cgrt {

/// The entry points: X(name). Members keep the names (and through cuda.h's
/// macros, the exact prototypes) of the CUDA 12+ headers; each one is
/// resolved with cuGetProcAddress(#name, 12000), which returns the variant
/// matching that prototype (cuMemAlloc -> cuMemAlloc_v2, cuGraphAddKernelNode
/// -> cuGraphAddKernelNode_v2, ...).
#define CGRT_DRIVER_ENTRY_POINTS(X)                                            \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorString)                                                          \
  X(cuGetErrorName)                                                            \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuModuleUnload)                                                            \
  X(cuMemGetInfo)                                                              \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemsetD8)                                                                \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyDtoD)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventQuery)                                                              \
  X(cuEventElapsedTime)                                                        \
  X(cuEventDestroy)                                                            \
  X(cuGraphCreate)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphAddKernelNode)                                                      \
  X(cuGraphAddMemcpyNode)                                                      \
  X(cuGraphAddMemsetNode)                                                      \
  X(cuGraphInstantiateWithFlags)                                               \
  X(cuGraphUpload)                                                             \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDebugDotPrint)                                                      \
  X(cuLaunchKernel)                                                             \
  X(cuMemsetD8Async)                                                           \
  X(cuMemcpy2DAsync)                                                           \
  X(cuGraphGetNodes)                                                           \
  X(cuGraphKernelNodeGetParams)                                                \
  X(cuGraphExecKernelNodeSetParams)                                            \
  X(cuStreamWaitEvent)                                                         \
  X(cuStreamIsCapturing)

/// The CUDA ABI version every entry point is requested at.
constexpr int kDriverApiVersion = 12000;

/// Entry points a model may need but the runtime does not: requested at
/// the CUDA version that introduced them (12.0 for those only packages with
/// cuBLASLt nodes use), NULL when the driver lacks them.
#define CGRT_OPTIONAL_DRIVER_ENTRY_POINTS(X)                                   \
  X(cuGraphConditionalHandleCreate, 12030)                                     \
  X(cuGraphAddNode, 12030)                                                     \
  X(cuStreamBeginCapture, 12000)                                               \
  X(cuStreamEndCapture, 12000)                                                 \
  X(cuGraphAddChildGraphNode, 12000)                                           \
  X(cuStreamGetCaptureInfo, 12030)                                             \
  X(cuStreamUpdateCaptureDependencies, 12030)

struct Driver {
#define CGRT_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  CGRT_DRIVER_ENTRY_POINTS(CGRT_DECLARE_ENTRY)
#undef CGRT_DECLARE_ENTRY
#define CGRT_DECLARE_OPTIONAL(name, version) decltype(&::name) name = nullptr;
  CGRT_OPTIONAL_DRIVER_ENTRY_POINTS(CGRT_DECLARE_OPTIONAL)
#undef CGRT_DECLARE_OPTIONAL

  std::string libraryPath; ///< what was dlopened
  int version = 0;         ///< cuDriverGetVersion, e.g. 13000
  int deviceCount = 0;
};

/// Loads and initializes the driver (once per process; later calls return
/// the same result). The library is $CGRT_DRIVER_LIBRARY if set, else
/// libcuda.so.1.
cgrt_status getDriver(const Driver **driver);

/// "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
std::string resultString(const Driver &driver, CUresult result);

/// CUDA_ERROR_OUT_OF_MEMORY -> CGRT_OUT_OF_MEMORY, CUDA_ERROR_NOT_FOUND ->
/// CGRT_NOT_FOUND, anything else -> CGRT_CUDA_ERROR.
cgrt_status_code statusCodeFor(CUresult result);

/// The status for a failed call: "`call` failed for `what`: <result>".
/// The code is statusCodeFor(result).
cgrt_status driverError(const Driver &driver, CUresult result,
                        const char *call, const std::string &what);

/// The table handed to graph builders: the raw entry points, or wrappers
/// that go through fault injection while faults are armed.
const cgrt_driver_api *builderApi(const Driver &driver);

//--- Fault injection (armed through Testing.h or $CGRT_FAULT) -------------//

extern std::atomic<bool> faultsArmed;
/// True (and the code to return in *code) if a fault is due for `call`.
bool takeFault(const char *call, CUresult *code);

template <typename Fn, typename... Args>
inline CUresult callDriver(const char *name, Fn fn, Args... args) {
  if (faultsArmed.load(std::memory_order_relaxed)) {
    CUresult code;
    if (takeFault(name, &code))
      return code;
  }
  return fn(args...);
}

/// Calls an entry point of `driver` by name, through fault injection.
#define CGRT_CU(driver, name, ...)                                             \
  ::cgrt::callDriver(#name, (driver).name, __VA_ARGS__)

/// Makes `context` current on this thread for the scope and restores the
/// previous one afterwards, so the caller's own CUDA state is left as found.
class ScopedContext {
public:
  ScopedContext(const Driver &driver, CUcontext context);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  /// The status of making the context current (NULL on success).
  cgrt_status take() {
    cgrt_status s = status;
    status = nullptr;
    return s;
  }

private:
  const Driver &driver;
  CUcontext previous = nullptr;
  bool restore = false;
  cgrt_status status = nullptr;
};

} // namespace cgrt

#endif // CGRT_RUNTIME_DRIVER_H
