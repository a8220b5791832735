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
#define CGRT_PACKAGE_ABI_VERSION 8

/* An input or output: a static slot of the arena. A dim of -1 is only
 * known at run time (a data-dependent output); `bytes` is then the slot's
 * capacity, the most the output can hold. */
typedef struct cgrt_io_desc {
  const char *name;
  cgrt_dtype dtype;
  int32_t rank;
  int64_t dims[CGRT_MAX_RANK];
  uint64_t arena_offset;
  uint64_t bytes;
} cgrt_io_desc;

/* A training step's state (`cgc --train`): a tensor each step reads and
 * replaces (a weight being trained, an optimizer's buffer). It lives in the
 * weights region, where weights.bin holds its initial value. The step
 * writes the next value at `update_offset`: `tensor.arena_offset` itself
 * when it writes in place (the buffer plan proved that safe), else a slot
 * of its own that the runtime copies over the state after the step. */
typedef struct cgrt_state_desc {
  cgrt_io_desc tensor;
  uint64_t update_offset;
} cgrt_state_desc;

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
  /* Conditional nodes (CUDA 12.3 and later); NULL when the driver is older,
   * and then a builder that needs them fails with a message saying so. */
  CUresult (*cuGraphConditionalHandleCreate)(CUgraphConditionalHandle *,
                                             CUgraph, CUcontext, unsigned int,
                                             unsigned int);
  CUresult (*cuGraphAddNode)(CUgraphNode *, CUgraph, const CUgraphNode *,
                             const CUgraphEdgeData *, size_t,
                             CUgraphNodeParams *);
} cgrt_driver_api;

/* How a library matmul node multiplies (cgraph.cublaslt_matmul_node): the
 * inputs' products rounded to this type on tensor cores, accumulated in
 * f32 (CGRT_MATMUL_F32: f32 FMAs, no rounding). */
typedef enum cgrt_matmul_compute {
  CGRT_MATMUL_F32 = 0,
  CGRT_MATMUL_TF32 = 1,
  CGRT_MATMUL_BF16 = 2,
  CGRT_MATMUL_F16 = 3
} cgrt_matmul_compute;

/* No buffer (an absent bias or C). */
#define CGRT_NO_OFFSET UINT64_MAX

/* One row-major product D = alpha * op(A) x op(B) + beta * C + bias over
 * `batch` matrices, every matrix stored contiguously: A [M, K] ([K, M] with
 * trans_a), B [K, N] ([N, K] with trans_b), C and D [M, N], bias [N] added
 * to every row. A stride is the elements from one matrix of the batch to
 * the next (0: the one matrix serves every batch index). Offsets are arena
 * offsets. The runtime lets cuBLASLt pick its algorithm for the problem and
 * captures the call once into a child graph node. */
typedef struct cgrt_matmul_desc {
  const char *label;  /* graph, node and kernel, for error messages */
  const char *kernel; /* the fused kernel it computes (profiles name it) */
  cgrt_dtype a_type, b_type, d_type; /* C and bias have D's type */
  cgrt_matmul_compute compute;
  int32_t trans_a, trans_b;
  int64_t m, n, k, batch;
  int64_t stride_a, stride_b, stride_d;
  uint64_t a, b, c, d, bias; /* c, bias: CGRT_NO_OFFSET when absent */
  float alpha, beta;
} cgrt_matmul_desc;

/* One 2-d convolution y = conv(x, w) + bias (cgraph.cudnn_conv_node):
 * x [N, C, H, W], w [K, C / groups, R, S], y [N, K, P, Q], stored in this
 * order (NCHW) or, where `channels_last` is 1, as NHWC, KRSC and NPQK;
 * bias [K] added per output channel; pads symmetric (top = bottom, left =
 * right). x, w and
 * y share one type; `compute` CGRT_MATMUL_F32 keeps f32 FMAs, any other
 * lets cuDNN use tensor cores (TF32 for f32 data). The runtime takes
 * cuDNN's first heuristic algorithm that fits the workspace and captures
 * the call into a child graph node. */
typedef struct cgrt_conv_desc {
  const char *label;  /* graph, node and kernel, for error messages */
  const char *kernel; /* the fused kernel it computes (profiles name it) */
  cgrt_dtype type;
  cgrt_matmul_compute compute;
  int64_t input[4], filter[4], output[4];
  int64_t pads[2], strides[2], dilations[2];
  int64_t groups;
  uint64_t x, w, y, bias; /* bias: CGRT_NO_OFFSET when absent */
  int32_t channels_last;  /* 1: NHWC, KRSC, NPQK; 0: NCHW */
} cgrt_conv_desc;

/* The collectives a package's graphs hold. */
typedef enum cgrt_collective {
  CGRT_ALL_REDUCE_SUM = 0, /* cgraph.nccl_all_reduce_node */
  CGRT_ALL_GATHER = 1,     /* cgraph.nccl_all_gather_node */
} cgrt_collective;

/* One collective over the model's ranks: each rank sends `count` elements
 * of `type` at arena offset `send`. An all-reduce writes their sum over
 * the ranks at `recv` (which may equal `send`: in place); an all-gather
 * writes all of them at `recv`, rank r's at element r x count (a buffer
 * of ranks x count elements that does not overlap `send`). The runtime
 * runs it on the model's NCCL communicator and captures it into a child
 * graph node. */
typedef struct cgrt_collective_desc {
  const char *label;  /* graph, node and group, for error messages */
  const char *kernel; /* the group it computes (profiles name it) */
  cgrt_collective collective;
  cgrt_dtype type;
  int64_t count;
  uint64_t send, recv;
} cgrt_collective_desc;

/* What a graph builder gets from the runtime. */
typedef struct cgrt_build_env {
  const cgrt_driver_api *api;
  CUcontext context;
  CUdeviceptr arena; /* base; every planned offset is added to it */
  const CUfunction *kernels; /* indexed like cgrt_package.kernel_names */
  /* Called (when not NULL) after every kernel node a builder adds, with the
   * node's parameters: all of them arena pointers (CUdeviceptr). The runtime
   * keeps them to point the nodes that read inputs or write outputs at the
   * caller's buffers instead (zero-copy I/O). */
  void (*kernel_node_added)(void *runtime, CUgraphNode node,
                            const CUDA_KERNEL_NODE_PARAMS *params,
                            size_t num_params);
  void *runtime;
  /* Adds a cuBLASLt matmul to `graph` as one node depending on `deps`. The
   * runtime loads cuBLASLt when a package first asks for it. On failure
   * returns a message (owned by the runtime, valid until the next call)
   * and sets *result. */
  const char *(*add_matmul_node)(void *runtime, CUgraphNode *node,
                                 CUgraph graph, const CUgraphNode *deps,
                                 size_t num_deps, const cgrt_matmul_desc *desc,
                                 CUresult *result);
  /* The same for a cuDNN convolution. */
  const char *(*add_conv_node)(void *runtime, CUgraphNode *node, CUgraph graph,
                               const CUgraphNode *deps, size_t num_deps,
                               const cgrt_conv_desc *desc, CUresult *result);
  /* The same for an NCCL collective over the model's ranks. */
  const char *(*add_collective_node)(void *runtime, CUgraphNode *node,
                                     CUgraph graph, const CUgraphNode *deps,
                                     size_t num_deps,
                                     const cgrt_collective_desc *desc,
                                     CUresult *result);
} cgrt_build_env;

/* Adds the nodes of one graph to `graph`. On failure returns a message that
 * names the node (static storage) and sets *result to the driver's code. */
typedef const char *(*cgrt_graph_builder)(const cgrt_build_env *env,
                                          CUgraph graph, CUresult *result);

/* What an eager region's runner gets from the runtime: the region runs on
 * the host, between graph replays, on the model's stream. Every call returns
 * NULL on success, else a message owned by the runtime (valid until the next
 * call); the runner returns it, prefixed with the op it was running. */
typedef struct cgrt_eager_env {
  void *runtime;
  /* Ordinary launch of kernel `kernel` with arena pointers as parameters. */
  const char *(*launch)(void *runtime, size_t kernel, const uint32_t grid[3],
                        const uint32_t block[3], const uint64_t *arg_offsets,
                        size_t num_args);
  /* Device-to-device copy inside the arena (enqueued). */
  const char *(*copy)(void *runtime, uint64_t dst_offset, uint64_t src_offset,
                      uint64_t bytes);
  /* Reads arena bytes to the host; waits for the work enqueued so far. */
  const char *(*read)(void *runtime, void *host, uint64_t src_offset,
                      uint64_t bytes);
  /* Writes host bytes into the arena (complete when it returns). */
  const char *(*write)(void *runtime, uint64_t dst_offset, const void *host,
                       uint64_t bytes);
  /* Records the run-time shape of a data-dependent model output. */
  const char *(*set_output_shape)(void *runtime, size_t output, int32_t rank,
                                  const int64_t *dims);
} cgrt_eager_env;

typedef const char *(*cgrt_eager_runner)(const cgrt_eager_env *env);

/* One step of an inference: replay a graph, or run an eager region. */
typedef enum cgrt_step_kind {
  CGRT_STEP_GRAPH = 0,
  CGRT_STEP_EAGER = 1
} cgrt_step_kind;

typedef struct cgrt_step {
  cgrt_step_kind kind;
  int32_t index; /* into graph_builders or eager_runners */
} cgrt_step;

/* One graph set of a package compiled with shape buckets (`cgc --dim
 * N=1,2,4,8`): what runs when the bucketed dim has `value`. Its steps index
 * the package's graph_builders and eager_runners, which hold the graphs and
 * regions of every bucket; its I/O tables have num_inputs and num_outputs
 * entries, like the package's. */
typedef struct cgrt_bucket {
  int64_t value;
  uint64_t arena_bytes; /* the part of the arena this bucket uses */
  const cgrt_io_desc *inputs;
  const cgrt_io_desc *outputs;
  size_t num_steps;
  const cgrt_step *steps;
} cgrt_bucket;

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

  size_t num_eager;
  const cgrt_eager_runner *eager_runners;
  const char *const *eager_names;

  /* Shape buckets. Without them bucket_dim is NULL and num_buckets 0. With
   * them, inputs, outputs and steps above are those of the largest bucket,
   * and buckets[] lists every bucket by ascending value. */
  const char *bucket_dim;
  size_t num_buckets;
  const cgrt_bucket *buckets;
  /* Nonzero when a size between buckets may run padded in the next bucket
   * (cgc proved that padded rows never reach real ones). The axes say where
   * the bucketed dim is in each input and output (-1: not there). */
  int32_t pad_to_bucket;
  const int32_t *input_bucket_axes;
  const int32_t *output_bucket_axes;

  /* Nonzero when the graphs touch the I/O slots only through kernel nodes
   * whose parameters all are arena pointers reported to kernel_node_added:
   * then the runtime may rebind them to caller-owned device buffers. */
  int32_t zero_copy_io;

  /* A training step: its state, and per input the classes of a label of
   * class indices (cross entropy; 0 for every other input). A run is one
   * step: the inputs are the batch and the label, the outputs the loss.
   * An inference package has 0, NULL and NULL. */
  size_t num_state;
  const cgrt_state_desc *state;
  const int64_t *input_label_classes;

  /* A program split over several GPUs (`cgc --tensor-parallel=N`): `ranks`
   * processes, one GPU each, run the same graphs, which meet in NCCL
   * all-reduce nodes; rank r uploads rank_weights_files[r] (checksum
   * rank_weights_checksums[r], weights_bytes long) instead of
   * weights_file. A one-GPU package has ranks 1 and NULL tables. */
  int32_t ranks;
  const char *const *rank_weights_files;
  const uint64_t *rank_weights_checksums;
} cgrt_package;

/* The one symbol a package library exports. */
typedef const cgrt_package *(*cgrt_package_descriptor_fn)(void);
#define CGRT_PACKAGE_DESCRIPTOR_SYMBOL "cgrt_package_descriptor"

#ifdef __cplusplus
}
#endif

#endif /* CGRT_PACKAGE_H */
