//===- LibraryNodes.h - vendor-library calls as graph nodes -----*- C++ -*-===//
//
// A package may hand matrix products to cuBLASLt and convolutions to cuDNN
// (cgraph.cublaslt_matmul_node, cgraph.cudnn_conv_node). Like the driver,
// each library is dlopened at run time, and only when a package asks for
// it: packages that use none need none. Each call runs once eagerly (a
// library may set itself up on first use, which a capture must not see),
// is then captured into a child graph node of the model's graph, and kept
// for profiles. Every library node of a model shares one workspace; the
// compiler orders them one after another.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_RUNTIME_LIBRARYNODES_H
#define CGRT_RUNTIME_LIBRARYNODES_H

#include "cgrt/package.h"

#include <functional>
#include <mutex>
#include <string>
#include <vector>

struct cgrt_model_t;

namespace cgrt {

/// A model's library state: handles, workspace, the stream calls are run
/// and captured on, and every node added.
struct LibraryState {
  void *cublasLt = nullptr; ///< cublasLtHandle_t
  void *cudnn = nullptr;    ///< cudnnHandle_t
  CUdeviceptr workspace = 0;
  CUstream stream = nullptr;
  std::string message; ///< the last error returned to a builder
  struct Node {
    std::string kernel; ///< the fused kernel it computes
    CUgraph captured = nullptr;
    /// Floating-point operations of one call (2 per multiply-add; 0 for
    /// a collective).
    double flops = 0.0;
  };
  std::vector<Node> nodes;
};

/// cuBLAS recommends 32 MiB of workspace on Hopper; cuDNN algorithms that
/// need more are not chosen.
constexpr size_t kLibraryWorkspaceBytes = 32u << 20;

/// dlopens $`envVar` if set, else the first of `sonames` that loads; null
/// with `error` saying what was tried and how to fix it (`option`: the cgc
/// option that avoids the library).
void *openLibrary(const char *envVar, const std::vector<const char *> &sonames,
                  const char *library, const char *option, std::string &error,
                  std::string &path);

/// Resolves entry point `name` of the library at `handle` into *slot;
/// false with `error` naming the file (`path`) and the symbol.
bool resolveEntryPoint(void *handle, const char *name, void **slot,
                       const std::string &path, std::string &error);

/// `Library` (a table of entry points with `path` and `error`) made and
/// filled by `load` once per process; never freed, as captured graphs keep
/// running the library's kernels.
template <typename Library> const Library &loadOnce(void (*load)(Library &)) {
  static std::once_flag once;
  static Library *library = nullptr;
  std::call_once(once, [&] {
    library = new Library();
    load(*library);
  });
  return *library;
}

/// The model's LibraryState with its workspace and stream, made on first
/// use; false with `error` (and *result for a driver failure) set.
bool ensureLibraryState(cgrt_model_t &model, std::string &error,
                        CUresult *result);

/// Runs `call` (a library call on `stream`, returning "" or why it failed)
/// once, then captures it and adds the capture to `graph` as a child node
/// depending on `deps`; records it under `kernel`. False with `error`.
bool captureLibraryCall(cgrt_model_t &model, const char *kernel,
                        const std::function<std::string(CUstream)> &call,
                        CUgraphNode *node, CUgraph graph,
                        const CUgraphNode *deps, size_t numDeps,
                        std::string &error, CUresult *result);

/// What every add_*_node does around its library's own part: checks that
/// the library loaded (`loadError` empty), makes the model's state, lets
/// `prepare` make the library's handle and describe the call ("" or why
/// not), then runs `run` once and captures it into `graph` as a child node
/// that computes `flops` floating-point operations a call. Returns null, or
/// the failure message with *result set.
const char *addLibraryNode(
    cgrt_model_t &model, const char *library, const std::string &label,
    const char *kernel, const std::string &loadError,
    const std::function<std::string(LibraryState &)> &prepare,
    const std::function<std::string(CUstream)> &run, CUgraphNode *node,
    CUgraph graph, const CUgraphNode *deps, size_t numDeps, CUresult *result,
    double flops = 0.0);

/// The message a builder returns for a failed node: "`label` (`library`):
/// `why`", kept in the model's state (or a thread-local without one).
const char *libraryFailure(cgrt_model_t &model, const std::string &label,
                           const char *library, const std::string &why,
                           CUresult *result);

/// cgrt_build_env::add_matmul_node (CublasLt.cpp) and add_conv_node
/// (Cudnn.cpp).
const char *addMatmulNode(void *model, CUgraphNode *node, CUgraph graph,
                          const CUgraphNode *deps, size_t numDeps,
                          const cgrt_matmul_desc *desc, CUresult *result);
const char *addConvNode(void *model, CUgraphNode *node, CUgraph graph,
                        const CUgraphNode *deps, size_t numDeps,
                        const cgrt_conv_desc *desc, CUresult *result);

/// Floating-point operations of one call of a matmul node (2 m n k per
/// matrix of the batch) and of a conv node (2 per multiply-add: every
/// output element sums C / groups x R x S products).
double matmulFlops(const cgrt_matmul_desc &desc);
double convFlops(const cgrt_conv_desc &desc);

/// Frees the model's library state (its context current): captured calls,
/// workspace, stream, then each library's handle. No-op without one.
void releaseLibraryState(cgrt_model_t &model);
/// Handle destructors, set by each library's file when it makes a handle.
void destroyCublasLtHandle(void *handle);
void destroyCudnnHandle(void *handle);

/// The model's library nodes in the order they were added.
size_t libraryNodeCount(const cgrt_model_t &model);
const char *libraryNodeKernel(const cgrt_model_t &model, size_t i);
double libraryNodeFlops(const cgrt_model_t &model, size_t i);
CUgraph libraryNodeGraph(const cgrt_model_t &model, size_t i);

} // namespace cgrt

#endif // CGRT_RUNTIME_LIBRARYNODES_H
