/*===- package.h - the ABI between cgc packages and libcgrt ------*- C -*-===*
 *
 * `cgc MODEL -o DIR --emit=lib` writes DIR/libmodel.so, whose only export is
 * cgrt_package_descriptor(). The descriptor tells libcgrt everything it needs
 * to run the model: I/O slots in the arena, the weights file, the kernel
 * module, and one function per CUDA graph that adds the graph's nodes one by
 * one with explicit cuGraphAdd*Node calls. The generated code calls the
 * driver through the table in cgrt_build_env, so the package library links
 * nothing: the runtime owns the driver.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CGRT_PACKAGE_H
#define CGRT_PACKAGE_H

#include "cgrt/cgrt.h"

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the structs below. */
#define CGRT_PACKAGE_ABI_VERSION 1

/* An input or output: a static slot of the arena. */
typedef struct cgrt_io_desc {
  const char *name;
  cgrt_dtype dtype;
  int32_t rank;
  int64_t dims[CGRT_MAX_RANK];
  uint64_t arena_offset;
  uint64_t bytes;
} cgrt_io_desc;

/* The driver entry points generated graph builders may call. */
typedef struct cgrt_driver_api {
  CUresult (*cuGraphAddKernelNode)(CUgraphNode *, CUgraph, const CUgraphNode *,
                                   size_t, const CUDA_KERNEL_NODE_PARAMS *);
  CUresult (*cuGraphAddMemcpyNode)(CUgraphNode *, CUgraph, const CUgraphNode *,
                                   size_t, const CUDA_MEMCPY3D *, CUcontext);
  CUresult (*cuGraphAddMemsetNode)(CUgraphNode *, CUgraph, const CUgraphNode *,
                                   size_t, const CUDA_MEMSET_NODE_PARAMS *,
                                   CUcontext);
  CUresult (*cuGetErrorString)(CUresult, const char **);
} cgrt_driver_api;

/* What a graph builder gets from the runtime. */
typedef struct cgrt_build_env {
  const cgrt_driver_api *api;
  CUcontext context;
  CUdeviceptr arena; /* base; every planned offset is added to it */
  const CUfunction *kernels; /* indexed like cgrt_package.kernel_names */
} cgrt_build_env;

/* Adds the nodes of one graph to `graph`. On failure returns a message that
 * names the node (static storage) and sets *result to the driver's code. */
typedef const char *(*cgrt_graph_builder)(const cgrt_build_env *env,
                                          CUgraph graph, CUresult *result);

/* One step of an inference: replay a graph, or (later) an eager region. */
typedef enum cgrt_step_kind { CGRT_STEP_GRAPH = 0 } cgrt_step_kind;

typedef struct cgrt_step {
  cgrt_step_kind kind;
  int32_t index; /* into graph_builders */
} cgrt_step;

typedef struct cgrt_package {
  uint32_t abi_version;    /* CGRT_PACKAGE_ABI_VERSION */
  const char *cgc_version; /* the cgc that wrote the package */
  const char *model_name;

  uint64_t arena_bytes;      /* one device allocation for everything */
  uint64_t weights_offset;   /* where weights.bin is uploaded in the arena */
  uint64_t weights_bytes;    /* must equal the size of weights.bin */
  const char *weights_file;  /* relative to the package folder */
  uint64_t weights_checksum; /* FNV-1a 64 of weights.bin */

  const char *cubin_file; /* sm_90 image, relative to the package folder */
  const char *ptx_file;   /* fallback for other GPUs */
  size_t num_kernels;
  const char *const *kernel_names;

  size_t num_inputs;
  const cgrt_io_desc *inputs;
  size_t num_outputs;
  const cgrt_io_desc *outputs;

  size_t num_graphs;
  const cgrt_graph_builder *graph_builders;
  const char *const *graph_names;
  size_t num_steps;
  const cgrt_step *steps;
} cgrt_package;

/* The one symbol a package library exports. */
typedef const cgrt_package *(*cgrt_package_descriptor_fn)(void);
#define CGRT_PACKAGE_DESCRIPTOR_SYMBOL "cgrt_package_descriptor"

#ifdef __cplusplus
}
#endif

#endif /* CGRT_PACKAGE_H */
