//===- CublasLt.h - cuBLASLt matmuls as graph nodes -------------*- C++ -*-===//
//
// A package may hand some of its matrix products to cuBLASLt
// (cgraph.cublaslt_matmul_node). Like the driver, the library is dlopened
// at run time, and only when a package asks for it: packages that use none
// need none. Each product is captured once, at load, into a child graph
// node of the model's graph; replays then cost nothing more than a kernel
// node.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_RUNTIME_CUBLASLT_H
#define CGRT_RUNTIME_CUBLASLT_H

#include "cgrt/package.h"

struct cgrt_model_t;

namespace cgrt {

/// A model's cuBLASLt handle, workspace and capture stream (made by its
/// first matmul node).
struct MatmulLibrary;

/// cgrt_build_env::add_matmul_node.
const char *addMatmulNode(void *model, CUgraphNode *node, CUgraph graph,
                          const CUgraphNode *deps, size_t numDeps,
                          const cgrt_matmul_desc *desc, CUresult *result);

/// Frees the model's MatmulLibrary (its context current); no-op without one.
void releaseMatmulLibrary(cgrt_model_t &model);

/// The model's cuBLASLt nodes in the order they were added: the fused
/// kernel each computes and the call as captured (for profiles).
size_t libraryNodeCount(const cgrt_model_t &model);
const char *libraryNodeKernel(const cgrt_model_t &model, size_t i);
CUgraph libraryNodeGraph(const cgrt_model_t &model, size_t i);

} // namespace cgrt

#endif // CGRT_RUNTIME_CUBLASLT_H
