//===- Testing.h - test hooks of libcgrt ------------------------*- C++ -*-===//
//
// Not part of the C API: for cgrt-tests, which links the static library.
// The same faults can be armed without recompiling through the environment:
//   CGRT_FAULT=call[:skip[:code]][,...]   e.g. CGRT_FAULT=cuModuleLoadData
//     makes the first cuModuleLoadData fail with CUDA_ERROR_UNKNOWN (999),
//     CGRT_FAULT=cuMemAlloc:0:2 the first cuMemAlloc with out-of-memory.
//   CGRT_DRIVER_LIBRARY=PATH   dlopen PATH instead of libcuda.so.1; the
//     tests load the stub driver this way where there is no GPU
//     (test/Runtime/StubDriver/StubDriver.h).
//   CGRT_VERBOSE=1             log load steps to stderr.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_RUNTIME_TESTING_H
#define CGRT_RUNTIME_TESTING_H

#include "Driver.h"
#include "Model.h"

#include <string>

namespace cgrt {
namespace testing {

/// Makes the call of driver entry point `call` after `skip` successful ones
/// return `code` instead of running (once; then the fault is gone). The
/// graph builders' table (cuGraphAdd*Node) is covered too.
void injectFault(const std::string &call, unsigned skip = 0,
                 CUresult code = CUDA_ERROR_UNKNOWN);
void clearFaults();
/// Faults armed and not yet fired.
size_t pendingFaults();

/// Whether the model's communicator was aborted (by a failed wait or by
/// its watchdog).
inline bool commAborted(const cgrt_model *model) {
  return model->comm && model->comm->aborted.load();
}

/// Whether the model's kernels came from the PTX fallback.
inline bool kernelsFromPtx(const cgrt_model *model) {
  return model->kernelsFromPtx;
}
/// The loaded driver of a loaded model (for allocating device buffers).
inline const Driver &driverOf(const cgrt_model *model) {
  return *model->driver;
}
inline CUcontext contextOf(const cgrt_model *model) { return model->context; }
inline CUdeviceptr arenaOf(const cgrt_model *model) { return model->arena; }
/// The package a model runs (its descriptor: buckets, steps, kernel names).
inline const cgrt_package &packageOf(const cgrt_model *model) {
  return *model->package;
}
/// Graph `index` of the package as the runtime built and instantiated it.
inline CUgraph graphOf(const cgrt_model *model, size_t index) {
  return model->graphs.at(index);
}
/// Its exec in exec set `set` (0: the one made at load; 1: the second, made
/// for a second binding), null where the set or exec does not exist.
inline CUgraphExec execOf(const cgrt_model *model, size_t index,
                          size_t set = 0) {
  if (set >= model->execSets.size())
    return nullptr;
  return model->execSets[set].execs.at(index);
}
/// The exec of graph `index` that the last run launched (of either set).
inline CUgraphExec runExecOf(const cgrt_model *model, size_t index) {
  return model->runExec(index);
}
/// The kernels as cuModuleGetFunction returned them, indexed like the
/// package's kernel_names.
inline CUfunction kernelOf(const cgrt_model *model, size_t index) {
  return model->kernels.at(index);
}

} // namespace testing
} // namespace cgrt

#endif // CGRT_RUNTIME_TESTING_H
