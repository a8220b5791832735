//===- Model.h - a loaded package -------------------------------*- C++ -*-===//

#ifndef CGRT_RUNTIME_MODEL_H
#define CGRT_RUNTIME_MODEL_H

#include "Driver.h"

#include "cgrt/package.h"

#include <mutex>
#include <string>
#include <vector>

struct cgrt_model_t {
  std::mutex mutex; ///< serializes run and benchmark
  std::string dir;
  std::string label; ///< "model 'name' (package 'dir')", for messages

  void *library = nullptr;
  const cgrt_package *package = nullptr; ///< lives in `library`
  const cgrt::Driver *driver = nullptr;

  CUdevice device = 0;
  CUcontext context = nullptr; ///< the device's primary context, retained
  CUstream stream = nullptr;
  CUmodule module = nullptr;
  bool kernelsFromPtx = false; ///< the cubin failed and PTX was JIT-compiled
  std::vector<CUfunction> kernels;
  CUdeviceptr arena = 0;
  std::vector<CUgraph> graphs;
  std::vector<CUgraphExec> execs;

  /// Run-time dims of the outputs, as eager regions report them (outputs
  /// with static dims keep the package's).
  std::vector<std::vector<int64_t>> outputDims;

  // Made by the first benchmark and kept until release.
  CUevent start = nullptr, stop = nullptr;
  std::vector<CUdeviceptr> benchmarkInputs;

  /// "graph 1 'relu'".
  std::string graphLabel(size_t index) const;
  /// "eager region 0 'eager0'".
  std::string eagerLabel(size_t index) const;
};

namespace cgrt {
/// Frees what `model` holds, in reverse order of creation; tolerates a
/// partially loaded model.
void destroyModel(cgrt_model_t *model);
/// True when CGRT_VERBOSE is set: load steps are logged to stderr.
bool verbose();
} // namespace cgrt

#endif // CGRT_RUNTIME_MODEL_H
