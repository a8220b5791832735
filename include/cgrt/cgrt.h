/*===- cgrt.h - the cgc runtime C API ---------------------------*- C -*-===*
 *
 * libcgrt loads a package that `cgc` compiled, allocates its arena once,
 * uploads the weights, builds, instantiates and uploads every CUDA graph
 * once, and then runs inferences by copying inputs into their static slots
 * and replaying the graphs. It links only the C/C++ standard library: the
 * CUDA driver is loaded at run time, so a machine without a driver or GPU
 * gets an ordinary error status.
 *
 * Conventions: a cgrt_status is NULL for success; otherwise it carries a code
 * and a message and must be freed with cgrt_status_free. Handles are opaque;
 * every create/load has a matching release.
 *
 * Threads. Any function may be called from any thread; the runtime makes the
 * model's context (the device's primary context) current for the call and
 * restores the caller's before returning.
 *  - Models are independent, also two of one package on one device: each has
 *    its own arena, graphs and stream, and their runs proceed concurrently.
 *  - cgrt_model_run and cgrt_model_benchmark on one model are serialized by
 *    the model's mutex: a second caller waits until the first returns (in no
 *    particular order). Each run reads only its own inputs and writes only
 *    its own outputs.
 *  - cgrt_model_num_inputs/num_outputs/input_info/output_info read what the
 *    load fixed, and may overlap any call but cgrt_model_release.
 *  - cgrt_model_load may run in several threads at once.
 *  - cgrt_model_release must not overlap another call on the same model, nor
 *    may the model be used after it: join the threads that use a model first.
 *  - A cgrt_status belongs to the caller that received it.
 *
 * Caller buffers. A run uses only the buffers passed to it: it keeps no
 * pointer to them once it returns, so they may be freed, reallocated or
 * refilled between runs, host and device buffers alike. They need no
 * particular alignment (misaligned ones are copied). Device buffers
 * are CUdeviceptrs of the device's primary context, and work that writes an
 * input on another stream must be finished before the call: the runtime's
 * stream does not wait for other streams.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CGRT_CGRT_H
#define CGRT_CGRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*--- Status ---------------------------------------------------------------*/

typedef enum cgrt_status_code {
  CGRT_OK = 0,
  CGRT_INVALID_ARGUMENT = 1, /* wrong dtype/rank/dims, null or short buffer */
  CGRT_NOT_FOUND = 2,        /* missing package file or symbol */
  CGRT_INCOMPATIBLE = 3,     /* package from another cgc/ABI version */
  CGRT_CORRUPT = 4,          /* package files do not match their metadata */
  CGRT_NO_DEVICE = 5,        /* no CUDA driver or no GPU */
  CGRT_CUDA_ERROR = 6,       /* a CUDA driver call failed */
  CGRT_OUT_OF_MEMORY = 7,
  CGRT_INTERNAL = 8,
  CGRT_RANK_FAILED = 9, /* another rank died, failed or did not answer in
                           time; the communicator was aborted */
} cgrt_status_code;

typedef struct cgrt_status_t *cgrt_status;

cgrt_status_code cgrt_status_get_code(cgrt_status status);
/* The message; valid until the status is freed. "" for NULL (success). */
const char *cgrt_status_get_message(cgrt_status status);
void cgrt_status_free(cgrt_status status);

/*--- Tensors --------------------------------------------------------------*/

/* Element types; values match ONNX TensorProto.DataType. */
typedef enum cgrt_dtype {
  CGRT_FLOAT32 = 1,
  CGRT_UINT8 = 2,
  CGRT_INT8 = 3,
  CGRT_UINT16 = 4,
  CGRT_INT16 = 5,
  CGRT_INT32 = 6,
  CGRT_INT64 = 7,
  CGRT_BOOL = 9,
  CGRT_FLOAT16 = 10,
  CGRT_FLOAT64 = 11,
  CGRT_UINT32 = 12,
  CGRT_UINT64 = 13,
  CGRT_BFLOAT16 = 16,
  /* The types narrower than 16 bits hold one element a byte: the float8
     and float4 bit patterns (float4 in the low four bits), and int4/int2
     sign-extended, uint4/uint2 zero-extended (ONNX packs two or four a byte
     in its files; cgc unpacks them). */
  CGRT_FLOAT8E4M3FN = 17,
  CGRT_FLOAT8E4M3FNUZ = 18,
  CGRT_FLOAT8E5M2 = 19,
  CGRT_FLOAT8E5M2FNUZ = 20,
  CGRT_UINT4 = 21,
  CGRT_INT4 = 22,
  CGRT_FLOAT4E2M1 = 23,
  CGRT_FLOAT8E8M0 = 24,
  CGRT_UINT2 = 25,
  CGRT_INT2 = 26,
} cgrt_dtype;

/* Bytes per element of a dtype; 0 for an unknown value. */
size_t cgrt_dtype_size(cgrt_dtype dtype);

#define CGRT_MAX_RANK 8

typedef enum cgrt_memory {
  CGRT_MEMORY_HOST = 0,
  CGRT_MEMORY_DEVICE = 1, /* a CUdeviceptr in the runtime's context */
} cgrt_memory;

/* A caller-owned buffer and what it holds. */
typedef struct cgrt_tensor {
  void *data;
  size_t bytes; /* capacity of data */
  cgrt_dtype dtype;
  int32_t rank;
  int64_t dims[CGRT_MAX_RANK];
  cgrt_memory memory;
} cgrt_tensor;

/*--- Models ---------------------------------------------------------------*/

typedef struct cgrt_model_t cgrt_model;

typedef struct cgrt_comm_t cgrt_comm;

typedef struct cgrt_model_options {
  int32_t device_ordinal; /* CUDA device index, default 0 */
  /* The communicator of this process's rank (cgrt_comm_create), for a
   * package split over several GPUs: it decides the rank's weights and the
   * device, and must outlive the model. NULL (the default) for a one-GPU
   * package (one that holds all-reduce nodes anyway makes a communicator
   * of one rank of its own). A one-GPU package may be given one of one
   * rank too: every rank then checks the package at load. */
  cgrt_comm *comm;
} cgrt_model_options;

void cgrt_model_options_init(cgrt_model_options *options);

/* Loads the package in `package_dir` (the folder `cgc -o DIR` wrote, with
 * its compiled library) and prepares it to run: arena, weights, graphs. */
cgrt_status cgrt_model_load(const char *package_dir,
                            const cgrt_model_options *options,
                            cgrt_model **out_model);
void cgrt_model_release(cgrt_model *model);

/* I/O description, in the order of the model's inputs and outputs. */
size_t cgrt_model_num_inputs(const cgrt_model *model);
size_t cgrt_model_num_outputs(const cgrt_model *model);
/* Fills name, dtype, rank, dims and bytes (the buffer size the runtime needs;
 * data is left NULL). A dim of -1 is data-dependent: the output's buffer
 * must hold `bytes` (its capacity), and cgrt_model_run writes the actual
 * dims into the caller's cgrt_tensor. */
cgrt_status cgrt_model_input_info(const cgrt_model *model, size_t index,
                                  const char **name, cgrt_tensor *info);
cgrt_status cgrt_model_output_info(const cgrt_model *model, size_t index,
                                   const char **name, cgrt_tensor *info);

/* Shape buckets (`cgc --dim N=1,2,4,8`): one package, one graph set per
 * value of one symbolic dim, one shared arena. cgrt_model_run picks the
 * bucket whose shapes the inputs have (or, for a package compiled with
 * --pad-to-bucket, the smallest larger one, padding the inputs with zeros
 * and cutting the outputs back); other sizes are an error naming the
 * buckets. cgrt_model_input_info and cgrt_model_output_info describe the
 * largest bucket; cgrt_model_benchmark times the bucket of the last run.
 * Without buckets: 0 buckets and a NULL dim. */
size_t cgrt_model_num_buckets(const cgrt_model *model);
const char *cgrt_model_bucket_dim(const cgrt_model *model);
/* The value of bucket `index` (ascending), or -1 if there is none. */
int64_t cgrt_model_bucket_value(const cgrt_model *model, size_t index);

/* One inference: validates and copies the inputs into their static slots,
 * replays the graphs (and eager regions) in order, and copies the outputs
 * into the caller's buffers. Blocks until the outputs are ready. Calls on
 * one model are serialized by the runtime. The dims of data-dependent
 * outputs are written into `outputs[i].dims`. */
cgrt_status cgrt_model_run(cgrt_model *model, const cgrt_tensor *inputs,
                           size_t num_inputs, cgrt_tensor *outputs,
                           size_t num_outputs);

/* One inference enqueued on the caller's `stream` (a CUstream of the
 * device's primary context, as PyTorch's streams are; NULL is the legacy
 * default stream, as everywhere in CUDA, and PyTorch's default stream),
 * returning without waiting for it: the semantics of a library call on a
 * stream. The run starts after the work already queued there, and work
 * queued there afterwards sees its outputs. Outputs must be device buffers
 * (CGRT_INVALID_ARGUMENT names a host one); host inputs are staged before
 * the call returns, so their memory may be reused at once. The caller keeps
 * device buffers alive until the stream reaches the run, as with any
 * stream-ordered call.
 *
 * Runs of one model share its arena, so the runtime orders them: a run
 * (either kind, a benchmark or a profile) on another stream first waits,
 * on the GPU, for the end of the last asynchronous run; cgrt_model_release
 * waits for it on the host. The dims of data-dependent outputs are written
 * before the call returns: the eager regions that compute them wait for the
 * stream's work up to them, so such packages return later.
 *
 * Where `stream` is capturing a CUDA graph (cuStreamBeginCapture, or
 * torch.cuda.graph), nothing runs: the copies and the model's graphs (as
 * child graph nodes, copies of the graphs as built) become nodes of the
 * caller's graph, ordered after what the capture holds so far. Every replay
 * of that graph then reads the input buffers and writes the output buffers
 * given here, through the model's arena, so it must not overlap another run
 * of the same model. Host inputs and packages with eager regions cannot be
 * captured (CGRT_INVALID_ARGUMENT saying why); capture needs CUDA 12.3+. */
cgrt_status cgrt_model_run_async(cgrt_model *model, const cgrt_tensor *inputs,
                                 size_t num_inputs, cgrt_tensor *outputs,
                                 size_t num_outputs, void *stream);

/* Whether `stream` (as for cgrt_model_run_async: NULL is the legacy default
 * stream) is capturing a CUDA graph, asked of the driver libcgrt uses. For
 * callers that choose their output buffers by it before a run (a capture
 * keeps the addresses it saw; cgc's Python call path takes fresh tensors
 * then): one driver call, no Python. CGRT_INVALID_ARGUMENT for a capture
 * an earlier operation invalidated. */
cgrt_status cgrt_stream_is_capturing(void *stream, int *capturing);

/* Timing of `iterations` runs with device-resident inputs and outputs
 * (copy into the static slots included), after `warmup` runs. */
typedef struct cgrt_benchmark_result {
  double median_us;
  double p99_us;
  double mean_us;
  int64_t iterations;
  int64_t graph_launches_per_run;
} cgrt_benchmark_result;

cgrt_status cgrt_model_benchmark(cgrt_model *model, int64_t warmup,
                                 int64_t iterations,
                                 cgrt_benchmark_result *result);

/* Writes each of the model's CUDA graphs, as the driver holds them, to
 * `out_dir`/graph<index>_<name>.dot (cuGraphDebugDotPrint, verbose: kernel
 * names, launch dimensions, memcpy and memset nodes, dependencies), for
 * comparison with `cgc --explain --format=dot`. Creates `out_dir` if it is
 * missing (not its parents). If `num_written` is not NULL it receives the
 * number of files written. */
cgrt_status cgrt_model_dump_graphs(cgrt_model *model, const char *out_dir,
                                   size_t *num_written);

/* Zero-copy I/O. When cgrt_model_run gets CGRT_MEMORY_DEVICE buffers that
 * are 256-byte aligned and large enough, the kernels that read those inputs
 * and write those outputs are pointed at them (their nodes in the
 * instantiated graph are updated only when a pointer changes), instead of
 * copying through the static slots. Other buffers (host memory, misaligned,
 * data-dependent outputs, graph sets with eager regions or padding) are
 * copied as before. Every run binds afresh, so a buffer freed after a run
 * is never touched again. On by default; `enabled` 0 turns it off. */
void cgrt_model_set_zero_copy(cgrt_model *model, int enabled);

/* Like cgrt_model_benchmark, with inputs and outputs in device buffers of
 * the runtime's own: zero_copy nonzero binds them in place (as
 * cgrt_model_run does), 0 copies them in and out through the slots. */
cgrt_status cgrt_model_benchmark_device_io(cgrt_model *model, int64_t warmup,
                                           int64_t iterations, int zero_copy,
                                           cgrt_benchmark_result *result);

/* Times each kernel on its own, for a tuner: every kernel node of the
 * graphs whose parameters are all arena pointers is launched `iterations`
 * times (after `warmup`) on its own, outside the graphs, on the arena's
 * current data (run once first). us_per_launch[i] receives the mean time of
 * one launch of kernel i (the package's order: metadata.json "kernels"),
 * averaged over its nodes; 0 for a kernel no such node launches.
 * num_kernels must be the package's kernel count. */
cgrt_status cgrt_model_profile_kernels(cgrt_model *model, int64_t warmup,
                                       int64_t iterations,
                                       double *us_per_launch,
                                       size_t num_kernels);

/* The library nodes of the model's graphs (cuBLASLt and cuDNN calls, cgc
 * --cublaslt and --cudnn), in the order the graphs were built, and the
 * fused kernel node i computes (NULL past the end). */
size_t cgrt_model_num_library_nodes(const cgrt_model *model);
const char *cgrt_model_library_node_kernel(const cgrt_model *model, size_t i);
/* The floating-point operations one call of library node i computes (2 per
 * multiply-add of its product or convolution; 0 for a collective and past
 * the end): over its time from cgrt_model_profile_library_nodes, the rate
 * it achieves (cgc-run --profile-kernels prints it). */
double cgrt_model_library_node_flops(const cgrt_model *model, size_t i);

/* Times each library node on its own, like cgrt_model_profile_kernels: its
 * captured call is launched `iterations` times (after `warmup`) outside
 * the model's graphs; us_per_launch[i] receives the mean time of node i.
 * num_nodes must be cgrt_model_num_library_nodes. A node's epilogue kernel
 * (what the library does not compute) is a kernel of its own, timed by
 * cgrt_model_profile_kernels. */
cgrt_status cgrt_model_profile_library_nodes(cgrt_model *model,
                                             int64_t warmup,
                                             int64_t iterations,
                                             double *us_per_launch,
                                             size_t num_nodes);

/*--- Training steps -------------------------------------------------------*/

/* A package of `cgc --train` (docs/training.md) is one training step:
 * every cgrt_model_run or cgrt_model_run_async runs one step, whose inputs
 * are the batch and the label and whose output is the loss, and replaces
 * the model's state (the weights being trained and the optimizer's
 * buffers) inside the model, where it stays from run to run. Capturing
 * run_async into a CUDA graph captures a step (every replay is one).
 * Benchmarks and kernel profiles of a training package run steps too.
 * A label of class indices (cross entropy) in host memory is checked: a
 * value outside [0, classes) is CGRT_INVALID_ARGUMENT naming it; in device
 * memory it is not read on the host, and such a value selects no class.
 * An inference package has no state: 0 tensors, and the calls below are
 * CGRT_INVALID_ARGUMENT. */
size_t cgrt_model_num_state(const cgrt_model *model);
/* The classes of input `index` when it is a label of class indices (cross
 * entropy), else 0. */
int64_t cgrt_model_input_label_classes(const cgrt_model *model, size_t index);
/* One training step enqueued on `stream`: cgrt_model_run_async of a
 * training package (the outputs, the loss first, in device buffers); an
 * inference package is CGRT_INVALID_ARGUMENT. */
cgrt_status cgrt_model_train_step(cgrt_model *model, const cgrt_tensor *inputs,
                                  size_t num_inputs, cgrt_tensor *outputs,
                                  size_t num_outputs, void *stream);
/* Name, dtype, rank, dims and bytes of state tensor `index` (data NULL). */
cgrt_status cgrt_model_state_info(const cgrt_model *model, size_t index,
                                  const char **name, cgrt_tensor *info);
/* Copies state tensor `index` into `out` (host or device buffer of its
 * dtype and shape) after every run so far; blocks until it is there. */
cgrt_status cgrt_model_read_state(cgrt_model *model, size_t index,
                                  cgrt_tensor *out);
/* Replaces state tensor `index` (a checkpoint's weights, say) before the
 * next run; blocks until it is written. */
cgrt_status cgrt_model_write_state(cgrt_model *model, size_t index,
                                   const cgrt_tensor *in);
/* Puts every state tensor back to the value the package was compiled with
 * (read again from its weights file, checksum checked). */
cgrt_status cgrt_model_reset_state(cgrt_model *model);

/*--- Several GPUs ---------------------------------------------------------*/

/* A package split over N GPUs (cgc --tensor-parallel=N, cgc --train
 * --data-parallel=N) runs as N ranks, one GPU each, usually one process
 * each. Every rank loads the same package folder with a communicator of
 * its rank; the model's graphs then hold NCCL all-reduce calls (captured
 * into child graph nodes at load) where the ranks meet. NCCL is loaded at
 * run time: $CGRT_NCCL_LIBRARY, else libnccl.so.2.
 *
 * The ranks meet three times before the first run, each within the
 * communicator's timeout: when the communicator is made, when a model is
 * loaded (each rank's package is compared with the others': different
 * packages are refused, CGRT_INVALID_ARGUMENT on every rank), and once per
 * all-reduce node as the graphs are built. Every rank must then make the
 * same calls in the same order (runs, benchmarks and training steps). A
 * run that waits for its result (cgrt_model_run, cgrt_model_benchmark,
 * the state calls) waits at most the timeout: when another rank died or
 * NCCL reports an error, the communicator is aborted and the call, and
 * every later call of the models that use it, returns CGRT_RANK_FAILED.
 * An asynchronous run is bounded alike by the communicator's watchdog
 * thread, which aborts it when NCCL reports an error or the run is not
 * done by the timeout. */

#define CGRT_COMM_ID_BYTES 128
/* What the ranks of one communicator share: made by one rank and sent to
 * the others (a pipe, a file, torch.distributed's broadcast). */
typedef struct cgrt_comm_id {
  char bytes[CGRT_COMM_ID_BYTES];
} cgrt_comm_id;

/* Makes a new communicator's id (ncclGetUniqueId). Without NCCL_COMM_ID in
 * the environment, the process that made it listens for the ranks and must
 * live until every rank's cgrt_comm_create has returned; with
 * NCCL_COMM_ID=HOST:PORT set alike for every rank, every rank may make the
 * id itself, and rank 0 listens at HOST:PORT. */
cgrt_status cgrt_comm_id_create(cgrt_comm_id *id);

/* Joins the communicator `id` of `ranks` ranks as `rank`, on CUDA device
 * `device_ordinal`. Waits for every rank at most `timeout_ms` (0: 300000);
 * the same timeout bounds every later wait on the other ranks. */
cgrt_status cgrt_comm_create(const cgrt_comm_id *id, int32_t ranks,
                             int32_t rank, int32_t device_ordinal,
                             int64_t timeout_ms, cgrt_comm **out_comm);
int32_t cgrt_comm_rank(const cgrt_comm *comm);
int32_t cgrt_comm_ranks(const cgrt_comm *comm);
int32_t cgrt_comm_device(const cgrt_comm *comm);
/* Ends this rank's part (after every model that uses it is released): a
 * communicator that failed is already aborted; otherwise the rank waits at
 * most the timeout for the others to finish their work, then aborts. */
void cgrt_comm_release(cgrt_comm *comm);

/* The number of kernels in the model's package, and the name of kernel i
 * (NULL past the end). */
size_t cgrt_model_num_kernels(const cgrt_model *model);
const char *cgrt_model_kernel_name(const cgrt_model *model, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* CGRT_CGRT_H */
