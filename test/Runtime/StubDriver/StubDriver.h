/*===- StubDriver.h - a CUDA driver without a GPU, for tests ----*- C -*-===*
 *
 * libcgrt_stub_driver.so exports the CUDA driver entry points libcgrt
 * resolves (lib/Runtime/Driver.h) so that the runtime's run path can be
 * tested where there is no GPU: load it with
 *
 *   CGRT_DRIVER_LIBRARY=build/lib/libcgrt_stub_driver.so
 *
 * What it does:
 *  - device memory is host memory (256-byte aligned, one heap block of
 *    exactly the size asked per cuMemAlloc, so ASan sees overruns) with
 *    bookkeeping: copies and memsets move real bytes, and any device range
 *    outside a live allocation fails the call with CUDA_ERROR_INVALID_VALUE
 *    (and a line in the log); fresh memory holds 0xcd bytes;
 *  - modules record their kernels' names and parameter sizes, read from the
 *    cubin's ELF (.nv.info KPARAM_INFO) or the PTX's .entry lists; a name
 *    the image lacks is CUDA_ERROR_NOT_FOUND;
 *  - graphs record their nodes (kernel, memcpy, memset, conditional with
 *    their body graphs) and edges; an instantiated graph keeps its own copy
 *    of the kernel parameters, which cuGraphExecKernelNodeSetParams updates;
 *  - a launch runs the graph in node order on the calling thread: memcpy
 *    and memset nodes copy and set bytes; a kernel node runs the host
 *    function a test registered for its name (cgrt_stub_set_kernel), or is
 *    recorded as skipped; IF and WHILE nodes run their bodies by the value
 *    of their condition handle, which only a registered host kernel can set
 *    (cgrt_stub_set_conditional, the stand-in for cudaGraphSetConditional);
 *  - everything is synchronous: streams and events only record order.
 *
 * What it cannot prove (docs/testing.md, "The runtime without a GPU"):
 * whether a generated kernel computes the right thing (kernels are cubin;
 * only host functions a test registers run), real driver semantics of graph
 * instantiation, update and conditional nodes beyond what is emulated here,
 * timing (cuEventElapsedTime counts recorded operations, 1 us each),
 * asynchronous errors and races (nothing runs concurrently with the host).
 *
 * Observation and fault injection, for tests (dlsym these from the handle
 * of the same path; they are not CUDA entry points):
 *   CGRT_STUB_LOG=PATH     append every recorded call to PATH as it happens
 *                          (a %p in PATH: the process id)
 *   CGRT_STUB_FAULT=call[:skip[:code]][,...]   make the call of entry point
 *                          `call` after `skip` successful ones return `code`
 *                          (default 999, CUDA_ERROR_UNKNOWN), once
 *   CGRT_STUB_DRIVER_VERSION=N   what cuDriverGetVersion says (default
 *                          13000); entry points newer than N are not found
 *                          by cuGetProcAddress (12020: no conditional nodes)
 *   CGRT_STUB_DEVICES=N    how many devices there are (default 1)
 *
 *===----------------------------------------------------------------------===*/

#ifndef CGRT_STUB_DRIVER_H
#define CGRT_STUB_DRIVER_H

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change below. */
#define CGRT_STUB_ABI 1

/* What a registered host kernel gets: the launch shape and, like
 * kernelParams, one pointer per parameter to its value. */
typedef struct cgrt_stub_launch {
  const char *name;
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  size_t num_params;
  void *const *params;
} cgrt_stub_launch;
typedef void (*cgrt_stub_kernel_fn)(const cgrt_stub_launch *launch);

int cgrt_stub_abi(void);
/* Forgets the log, the call counts and the armed faults (not the objects:
 * memory, modules, graphs stay). */
void cgrt_stub_reset(void);
/* The log since the last reset, one line per call; valid until the next
 * call into the stub. Device pointers read M<allocation>+<offset>, graphs
 * G<n>, nodes N<n>, instantiated graphs E<n>, condition handles H<n>. */
const char *cgrt_stub_log(void);
/* How often entry point `call` was called since the last reset (failed
 * calls included). */
unsigned long cgrt_stub_calls(const char *call);
/* Arms a fault, as CGRT_STUB_FAULT does. */
void cgrt_stub_fail(const char *call, unsigned skip, CUresult code);
/* Faults armed and not yet fired. */
size_t cgrt_stub_pending_faults(void);
/* Live objects: "allocations", "bytes", "modules", "streams", "events",
 * "graphs" (made by cuGraphCreate, not destroyed), "execs", "retains"
 * (primary context retains not released); -1 for another word. */
long long cgrt_stub_live(const char *what);
/* Registers (or with NULL removes) the host stand-in of kernel `name`. */
void cgrt_stub_set_kernel(const char *name, cgrt_stub_kernel_fn fn);
/* cudaGraphSetConditional for host kernels: sets `handle` in the running
 * launch. */
void cgrt_stub_set_conditional(CUgraphConditionalHandle handle, unsigned value);
/* How a device pointer reads in the log ("M3+256"; "?" if in no live
 * allocation). Valid until the next call into the stub. */
const char *cgrt_stub_pointer_name(CUdeviceptr pointer);
/* A graph's nodes, one per line, bodies indented below their conditional
 * node; for an instantiated graph, the kernel parameters it has now (after
 * cuGraphExecKernelNodeSetParams). Valid until the next call into the stub.
 * NULL for an unknown handle. */
const char *cgrt_stub_graph_text(CUgraph graph);
const char *cgrt_stub_exec_text(CUgraphExec exec);
/* "G<n>" / "E<n>" of a handle (NULL if unknown). */
const char *cgrt_stub_graph_name(CUgraph graph);
const char *cgrt_stub_exec_name(CUgraphExec exec);

#ifdef __cplusplus
}
#endif

#endif /* CGRT_STUB_DRIVER_H */
