//===- LibraryNodes.cpp - vendor-library calls as graph nodes -------------===//

#include "LibraryNodes.h"

#include "Model.h"
#include "Nccl.h"
#include "Status.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace cgrt {

void *openLibrary(const char *envVar, const std::vector<const char *> &sonames,
                  const char *library, const char *option, std::string &error,
                  std::string &path) {
  const char *env = std::getenv(envVar);
  void *handle = nullptr;
  std::string tried;
  if (env && *env) {
    path = env;
    handle = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    tried = env;
  } else {
    for (const char *name : sonames) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      tried += tried.empty() ? name : std::string(", ") + name;
      if (handle) {
        path = name;
        break;
      }
    }
  }
  if (handle)
    return handle;
  // dlerror names the file it could not open.
  const char *why = dlerror();
  std::string reason = why ? why : tried + ": not found";
  if (!(env && *env))
    reason = "tried " + tried + "; " + reason;
  error = std::string("cannot load ") + library + " (" + reason + "); set " +
          envVar + " to its path, or compile the model with " + option;
  return nullptr;
}

bool resolveEntryPoint(void *handle, const char *name, void **slot,
                       const std::string &path, std::string &error) {
  *slot = dlsym(handle, name);
  if (!*slot)
    error = path + " has no " + name;
  return *slot != nullptr;
}

bool ensureLibraryState(cgrt_model_t &m, std::string &error,
                        CUresult *result) {
  if (m.libraryState)
    return true;
  const Driver &d = *m.driver;
  if (!d.cuStreamBeginCapture || !d.cuStreamEndCapture ||
      !d.cuGraphAddChildGraphNode) {
    *result = CUDA_ERROR_NOT_SUPPORTED;
    error = "the CUDA driver " + d.libraryPath +
            " lacks stream capture or child graph nodes";
    return false;
  }
  auto state = new LibraryState();
  m.libraryState = state;
  CUresult r = CGRT_CU(d, cuMemAlloc, &state->workspace, kLibraryWorkspaceBytes);
  if (r != CUDA_SUCCESS) {
    state->workspace = 0;
    *result = r;
    error = "cuMemAlloc of the libraries' workspace failed: " +
            resultString(d, r);
    return false;
  }
  r = CGRT_CU(d, cuStreamCreate, &state->stream,
              static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  if (r != CUDA_SUCCESS) {
    state->stream = nullptr;
    *result = r;
    error = "cuStreamCreate failed: " + resultString(d, r);
    return false;
  }
  return true;
}

bool captureLibraryCall(cgrt_model_t &m, const char *kernel,
                        const std::function<std::string(CUstream)> &call,
                        CUgraphNode *node, CUgraph graph,
                        const CUgraphNode *deps, size_t numDeps,
                        std::string &error, CUresult *result) {
  LibraryState &state = *m.libraryState;
  const Driver &d = *m.driver;
  auto driverFail = [&](CUresult r, const char *what) {
    *result = r;
    error = std::string(what) + " failed: " + resultString(d, r);
    return false;
  };
  error = call(state.stream);
  if (!error.empty())
    return false;
  // With a communicator this wait is bounded (a call may wait on a rank).
  if (cgrt_status s = waitForDevice(m, state.stream, nullptr,
                                    "the first call")) {
    *result = CUDA_ERROR_UNKNOWN;
    error = cgrt_status_get_message(s);
    cgrt_status_free(s);
    return false;
  }
  CUresult r = CGRT_CU(d, cuStreamBeginCapture, state.stream,
              CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS)
    return driverFail(r, "cuStreamBeginCapture");
  std::string captured = call(state.stream);
  CUgraph child = nullptr;
  r = CGRT_CU(d, cuStreamEndCapture, state.stream, &child);
  if (!captured.empty()) {
    if (child)
      CGRT_CU(d, cuGraphDestroy, child);
    error = captured + " (while captured)";
    return false;
  }
  if (r != CUDA_SUCCESS)
    return driverFail(r, "cuStreamEndCapture");
  r = CGRT_CU(d, cuGraphAddChildGraphNode, node, graph, deps, numDeps, child);
  if (r != CUDA_SUCCESS) {
    CGRT_CU(d, cuGraphDestroy, child);
    return driverFail(r, "cuGraphAddChildGraphNode");
  }
  state.nodes.push_back({kernel ? kernel : "", child});
  return true;
}

const char *libraryFailure(cgrt_model_t &m, const std::string &label,
                           const char *library, const std::string &why,
                           CUresult *result) {
  if (*result == CUDA_SUCCESS)
    *result = CUDA_ERROR_UNKNOWN;
  static thread_local std::string fallback;
  std::string &message = m.libraryState ? m.libraryState->message : fallback;
  message = label + " (" + library + "): " + why;
  return message.c_str();
}

const char *addLibraryNode(
    cgrt_model_t &m, const char *library, const std::string &label,
    const char *kernel, const std::string &loadError,
    const std::function<std::string(LibraryState &)> &prepare,
    const std::function<std::string(CUstream)> &run, CUgraphNode *node,
    CUgraph graph, const CUgraphNode *deps, size_t numDeps, CUresult *result,
    double flops) {
  *result = CUDA_SUCCESS;
  if (!loadError.empty()) {
    *result = CUDA_ERROR_NOT_FOUND;
    return libraryFailure(m, label, library, loadError, result);
  }
  std::string error;
  if (!ensureLibraryState(m, error, result))
    return libraryFailure(m, label, library, error, result);
  error = prepare(*m.libraryState);
  if (error.empty() && !captureLibraryCall(m, kernel, run, node, graph, deps,
                                           numDeps, error, result))
    return libraryFailure(m, label, library, error, result);
  if (!error.empty())
    return libraryFailure(m, label, library, error, result);
  m.libraryState->nodes.back().flops = flops;
  if (verbose())
    std::fprintf(stderr, "cgrt: %s: %s call captured\n", label.c_str(),
                 library);
  return nullptr;
}

void releaseLibraryState(cgrt_model_t &m) {
  LibraryState *state = m.libraryState;
  if (!state)
    return;
  m.libraryState = nullptr;
  const Driver &d = *m.driver;
  for (const LibraryState::Node &node : state->nodes)
    CGRT_CU(d, cuGraphDestroy, node.captured);
  if (state->stream)
    CGRT_CU(d, cuStreamDestroy, state->stream);
  if (state->workspace)
    CGRT_CU(d, cuMemFree, state->workspace);
  if (state->cublasLt)
    destroyCublasLtHandle(state->cublasLt);
  if (state->cudnn)
    destroyCudnnHandle(state->cudnn);
  delete state;
}

size_t libraryNodeCount(const cgrt_model_t &m) {
  return m.libraryState ? m.libraryState->nodes.size() : 0;
}

double libraryNodeFlops(const cgrt_model_t &m, size_t i) {
  return i < libraryNodeCount(m) ? m.libraryState->nodes[i].flops : 0.0;
}

double matmulFlops(const cgrt_matmul_desc &desc) {
  return 2.0 * double(desc.m) * double(desc.n) * double(desc.k) *
         double(desc.batch);
}

double convFlops(const cgrt_conv_desc &desc) {
  double outputs = 1.0;
  for (int64_t d : desc.output)
    outputs *= double(d);
  // filter: [K, C / groups, R, S] whatever the layout.
  return 2.0 * outputs * double(desc.filter[1]) * double(desc.filter[2]) *
         double(desc.filter[3]);
}

const char *libraryNodeKernel(const cgrt_model_t &m, size_t i) {
  return i < libraryNodeCount(m) ? m.libraryState->nodes[i].kernel.c_str()
                                 : nullptr;
}

CUgraph libraryNodeGraph(const cgrt_model_t &m, size_t i) {
  return i < libraryNodeCount(m) ? m.libraryState->nodes[i].captured
                                 : nullptr;
}

} // namespace cgrt
