//===- Profile.cpp - cgrt_model_profile_kernels ----------------------------===//
//
// Each kernel on its own, for a tuner: the graphs' kernel nodes whose
// parameters are all arena pointers (those a package reports for zero-copy
// I/O) are launched one by one on the model's stream, outside the graphs,
// with events around `iterations` launches of each. A kernel is timed with
// its fused epilogue and the arena's real data (the region cgc fused, not a
// bare GEMM); what is left out is the graphs' launch overlap.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "Status.h"

#include <vector>

using namespace cgrt;

namespace {

/// The package's index of the kernel a node launches, or -1.
int64_t kernelIndexOf(const cgrt_model_t &m, CUfunction function) {
  for (size_t i = 0; i < m.kernels.size(); ++i)
    if (m.kernels[i] == function)
      return static_cast<int64_t>(i);
  return -1;
}

/// Launches `node` with its recorded arena pointers.
CUresult launchNode(const cgrt_model_t &m, const KernelNode &node) {
  std::vector<CUdeviceptr> args = node.built;
  std::vector<void *> params;
  for (CUdeviceptr &arg : args)
    params.push_back(&arg);
  const CUDA_KERNEL_NODE_PARAMS &p = node.params;
  return CGRT_CU(*m.driver, cuLaunchKernel, p.func, p.gridDimX, p.gridDimY,
                 p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ,
                 p.sharedMemBytes, m.stream, params.data(),
                 static_cast<void **>(nullptr));
}

/// Mean microseconds of one `launch()` over `iterations` (after `warmup`).
template <typename Launch>
cgrt_status timeLaunches(cgrt_model_t &m, const std::string &what,
                         Launch launch, int64_t warmup, int64_t iterations,
                         CUevent start, CUevent stop, double *us) {
  const Driver &d = *m.driver;
  CUresult result = CUDA_SUCCESS;
  for (int64_t i = 0; i < warmup && result == CUDA_SUCCESS; ++i)
    result = launch();
  if (result == CUDA_SUCCESS)
    result = CGRT_CU(d, cuEventRecord, start, m.stream);
  for (int64_t i = 0; i < iterations && result == CUDA_SUCCESS; ++i)
    result = launch();
  if (result == CUDA_SUCCESS)
    result = CGRT_CU(d, cuEventRecord, stop, m.stream);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "the profile", what);
  // Bounded where the model has ranks (an all-reduce node waits on them).
  if (cgrt_status s = waitForDevice(m, m.stream, stop, "the profile of " + what))
    return s;
  float ms = 0;
  if (result == CUDA_SUCCESS)
    result = CGRT_CU(d, cuEventElapsedTime, &ms, start, stop);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "the profile", what);
  *us = 1000.0 * ms / static_cast<double>(iterations);
  return nullptr;
}

/// A cuBLASLt node's call, instantiated alone (destroyed with the scope).
struct CapturedCall {
  const Driver &d;
  CUgraphExec exec = nullptr;
  ~CapturedCall() {
    if (exec)
      CGRT_CU(d, cuGraphExecDestroy, exec);
  }
};

/// Two events for the profile, destroyed with the scope.
struct EventPair {
  const Driver &d;
  CUevent start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start)
      CGRT_CU(d, cuEventDestroy, start);
    if (stop)
      CGRT_CU(d, cuEventDestroy, stop);
  }
  /// Makes both events; the status names `function` on failure.
  cgrt_status create(const char *function) {
    CUresult result = CGRT_CU(d, cuEventCreate, &start, 0u);
    if (result == CUDA_SUCCESS)
      result = CGRT_CU(d, cuEventCreate, &stop, 0u);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, function, "its events");
    return nullptr;
  }
};

/// Runs `body(events)` with the model locked, its context current and two
/// events made; `function` names the API call in failures.
template <typename Body>
cgrt_status withProfileEvents(cgrt_model_t &m, const char *function,
                              Body body) {
  return withModelStream(m, function, [&]() -> cgrt_status {
    EventPair events{*m.driver};
    if (cgrt_status s = events.create(function))
      return s;
    return body(events);
  });
}

} // namespace

extern "C" cgrt_status
cgrt_model_profile_kernels(cgrt_model *model, int64_t warmup,
                           int64_t iterations, double *us_per_launch,
                           size_t num_kernels) {
  if (!model || !us_per_launch)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_profile_kernels: model or result is NULL");
  cgrt_model_t &m = *model;
  if (warmup < 0 || iterations < 1)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_profile_kernels: need warmup >= 0 and "
                      "iterations >= 1");
  if (num_kernels != m.kernels.size())
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_profile_kernels: %s has %zu kernels, the "
                      "result array %zu",
                      m.label.c_str(), m.kernels.size(), num_kernels);
  if (m.kernelNodes.empty() && libraryNodeCount(m) == 0)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_profile_kernels: %s reports no kernel "
                      "nodes that take only arena pointers",
                      m.label.c_str());
  return withProfileEvents(
      m, "cgrt_model_profile_kernels", [&](EventPair &events) -> cgrt_status {
        std::vector<double> sum(num_kernels, 0.0);
        std::vector<int64_t> nodes(num_kernels, 0);
        for (const KernelNode &node : m.kernelNodes) {
          int64_t k = kernelIndexOf(m, node.params.func);
          if (k < 0)
            continue;
          double us = 0;
          std::string what = "a kernel node of " + m.graphLabel(node.graph);
          if (cgrt_status s = timeLaunches(
                  m, what, [&] { return launchNode(m, node); }, warmup,
                  iterations, events.start, events.stop, &us))
            return s;
          sum[k] += us;
          ++nodes[k];
        }
        for (size_t k = 0; k < num_kernels; ++k)
          us_per_launch[k] =
              nodes[k] ? sum[k] / static_cast<double>(nodes[k]) : 0.0;
        return nullptr;
      });
}

extern "C" size_t cgrt_model_num_kernels(const cgrt_model *model) {
  return model ? model->kernels.size() : 0;
}

extern "C" const char *cgrt_model_kernel_name(const cgrt_model *model,
                                              size_t i) {
  if (!model || !model->package || i >= model->package->num_kernels)
    return nullptr;
  return model->package->kernel_names[i];
}

extern "C" size_t cgrt_model_num_library_nodes(const cgrt_model *model) {
  return model ? libraryNodeCount(*model) : 0;
}

extern "C" const char *cgrt_model_library_node_kernel(const cgrt_model *model,
                                                      size_t i) {
  return model ? libraryNodeKernel(*model, i) : nullptr;
}

extern "C" double cgrt_model_library_node_flops(const cgrt_model *model,
                                                size_t i) {
  return model ? libraryNodeFlops(*model, i) : 0.0;
}

extern "C" cgrt_status
cgrt_model_profile_library_nodes(cgrt_model *model, int64_t warmup,
                                 int64_t iterations, double *us_per_launch,
                                 size_t num_nodes) {
  if (!model || (!us_per_launch && num_nodes))
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_profile_library_nodes: model or result is "
                      "NULL");
  cgrt_model_t &m = *model;
  if (warmup < 0 || iterations < 1)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_profile_library_nodes: need warmup >= 0 "
                      "and iterations >= 1");
  if (num_nodes != libraryNodeCount(m))
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_profile_library_nodes: %s has %zu library "
                      "nodes, the result array %zu",
                      m.label.c_str(), libraryNodeCount(m), num_nodes);
  if (num_nodes == 0)
    return nullptr;
  const Driver &d = *m.driver;
  return withProfileEvents(
      m, "cgrt_model_profile_library_nodes",
      [&](EventPair &events) -> cgrt_status {
        for (size_t i = 0; i < num_nodes; ++i) {
          std::string what =
              formatString("library node %zu (%s) of %s", i,
                           libraryNodeKernel(m, i), m.label.c_str());
          CapturedCall call{d};
          CUresult result = CGRT_CU(d, cuGraphInstantiateWithFlags, &call.exec,
                                    libraryNodeGraph(m, i), 0ull);
          if (result != CUDA_SUCCESS) {
            call.exec = nullptr;
            return driverError(d, result, "cuGraphInstantiateWithFlags", what);
          }
          if (cgrt_status s = timeLaunches(
                  m, what,
                  [&] {
                    return CGRT_CU(d, cuGraphLaunch, call.exec, m.stream);
                  },
                  warmup, iterations, events.start, events.stop,
                  &us_per_launch[i]))
            return s;
        }
        return nullptr;
      });
}
