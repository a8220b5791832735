//===- StubState.h - The stub driver's state and shared helpers -*- C++ -*-===//
//
// What the stub (StubDriver.h) keeps between calls: device memory, modules,
// graphs and their instantiations, streams and events, the log, faults;
// and the helpers its entry points (StubDriver.cpp) and its observation
// API (StubObservation.cpp) share. Internal: nothing here is exported.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_STUB_STUBSTATE_H
#define CGRT_STUB_STUBSTATE_H

#include "StubDriver.h"

#include "FaultSpec.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#define STUB_EXPORT extern "C" __attribute__((visibility("default")))

namespace cgrt_stub {

//--- State ----------------------------------------------------------------//

struct Allocation {
  int id;
  size_t bytes;
};

struct Function {
  int module;
  std::string name;
  std::vector<size_t> paramSizes;
};

struct Module {
  int id;
  bool ptx;
  std::vector<std::unique_ptr<Function>> functions;
};

struct Context {
  int device;
  int retains = 0;
};

struct Graph;

struct Stream {
  int id;
  /// While capturing (cuStreamBeginCapture): the graph the work enqueued
  /// becomes, each node after the last.
  std::shared_ptr<Graph> capture;
  CUgraphNode captureTail = nullptr;
};

struct Event {
  int id;
  unsigned long long stamp = 0; ///< the operation count when recorded
  bool recorded = false;
};

struct Graph;

struct Node {
  int id;
  Graph *owner;
  CUgraphNodeType type;
  std::vector<Node *> deps;
  std::vector<bool> programmatic; ///< per dep
  // Kernel nodes.
  Function *function = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shared = 0;
  std::vector<std::vector<unsigned char>> params;
  std::vector<void *> paramPointers; ///< for cuGraphKernelNodeGetParams
  // Memcpy and memset nodes.
  CUDA_MEMCPY3D copy{};
  CUDA_MEMSET_NODE_PARAMS set{};
  // Conditional nodes.
  CUgraphConditionalHandle handle = 0;
  CUgraphConditionalNodeType condType = CU_GRAPH_COND_TYPE_IF;
  std::vector<std::shared_ptr<Graph>> bodies;
  std::vector<CUgraph> bodyHandles; ///< the phGraph_out array
  // Host nodes (captured cuLaunchHostFunc) and child graph nodes.
  CUhostFn hostFn = nullptr;
  void *hostData = nullptr;
  std::shared_ptr<Graph> child;
};

struct Graph {
  int id;
  Node *parent = nullptr; ///< the conditional node of a body graph
  std::vector<std::unique_ptr<Node>> nodes;
};

struct Handle {
  int id;
  Graph *graph;
  unsigned defaultValue;
  unsigned flags;
};

struct Exec {
  int id;
  std::shared_ptr<Graph> graph;
  /// The kernel parameters it holds now, per kernel node of its graph tree.
  std::map<const Node *, std::vector<std::vector<unsigned char>>> params;
  std::map<CUgraphConditionalHandle, unsigned> handleValues;
};

using Fault = cgrt::FaultSpec;

struct State {
  std::recursive_mutex mutex;
  bool initialized = false;
  int version = 13000;
  int devices = 1;
  std::string logPath;
  std::string log;
  std::map<std::string, unsigned long> calls;
  std::vector<Fault> faults;

  std::map<uintptr_t, Allocation> allocations; ///< by base address
  size_t liveBytes = 0;
  std::vector<std::unique_ptr<Context>> contexts; ///< one per device
  std::map<CUmodule, std::unique_ptr<Module>> modules;
  std::set<const Function *> functions;
  std::map<CUstream, std::unique_ptr<Stream>> streams;
  std::map<CUevent, std::unique_ptr<Event>> events;
  std::map<CUgraph, std::shared_ptr<Graph>> graphs; ///< made by cuGraphCreate
  std::map<CUgraph, Graph *> allGraphs;             ///< bodies too
  std::map<CUgraphNode, Node *> nodes;
  std::map<CUgraphConditionalHandle, Handle> handles;
  std::map<CUgraphExec, std::unique_ptr<Exec>> execs;
  std::map<std::string, cgrt_stub_kernel_fn> hostKernels;
  int nextId = 1;
  unsigned long long operations = 0;
  Exec *running = nullptr; ///< the launch host kernels run in
  std::string scratch;     ///< what the query functions return
};

State &state();

extern thread_local CUcontext currentContext;

const char *errorName(CUresult code);

void logLine(const char *format, ...) __attribute__((format(printf, 1, 2)));

/// Logs and returns a failure of `call`.
CUresult fail(const char *call, CUresult code, const std::string &why);

/// $CGRT_STUB_FAULT, in the runtime's CGRT_FAULT format (FaultSpec.h).
void armFaults(const char *spec);

/// Reads the environment once, at the first call of any entry point.
void configure();

/// Counts the call and fires a fault armed for it.
bool takeFault(const char *call, CUresult *code);

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/// The allocation holding [p, p + bytes), or null.
const std::pair<const uintptr_t, Allocation> *findAllocation(CUdeviceptr p,
                                                             size_t bytes);

std::string pointerName(CUdeviceptr p);

bool deviceRange(CUdeviceptr p, size_t bytes);

bool validStream(CUstream stream);

std::string streamName(CUstream stream);

/// One copy of a (2D or 3D) block. Device sides are checked against the
/// allocations; host sides are trusted.
CUresult copyBlock(const char *call, const CUDA_MEMCPY3D &c);

CUDA_MEMCPY3D linearCopy(CUdeviceptr dst, const void *dstHost, CUdeviceptr src,
                         const void *srcHost, size_t bytes);

std::string side(CUmemorytype type, CUdeviceptr device);

CUresult memset2D(const char *call, const CUDA_MEMSET_NODE_PARAMS &p);

/// Kernels of a cubin: every .text.<name> section, its parameter sizes from
/// .nv.info.<name> (EIATTR_KPARAM_INFO: ordinal at +4, size in the top 14
/// bits of the word at +8). False if the image is not a 64-bit ELF.
bool parseCubin(const unsigned char *d,
                std::map<std::string, std::vector<size_t>> &kernels);

size_t ptxTypeBytes(const std::string &type);

/// Kernels of a PTX text: every `.entry name(.param .TYPE name[N], ...)`.
bool parsePtx(const char *text,
              std::map<std::string, std::vector<size_t>> &kernels);

Graph *findGraph(CUgraph g);

std::string nodeList(const std::vector<Node *> &nodes);

std::string paramText(const std::vector<unsigned char> &bytes);

std::string paramsText(const std::vector<std::vector<unsigned char>> &params);

std::string copyText(const CUDA_MEMCPY3D &c);

std::string nodeText(const Node &n,
                     const std::vector<std::vector<unsigned char>> *params);

void graphText(const Graph &g, const Exec *exec, const std::string &indent,
               std::string &out);

/// Node `n` of a graph being built: deps checked, recorded, logged.
CUresult addNode(const char *call, CUgraphNode *out, CUgraph graph,
                 const CUgraphNode *deps, size_t numDeps,
                 const CUgraphEdgeData *edges, std::unique_ptr<Node> node);

CUresult kernelNode(const char *call, const CUDA_KERNEL_NODE_PARAMS_v2 &p,
                    std::unique_ptr<Node> &node);

CUresult runKernel(const char *what, const Function &f, const unsigned grid[3],
                   const unsigned block[3], unsigned shared,
                   std::vector<std::vector<unsigned char>> params);

CUresult runGraph(const Graph &g, Exec &exec, int depth);

void collectKernelParams(const Graph &g, Exec &exec);

/// Whether `node` is in `g` or a body below it; `inBody` says which.
bool inGraphTree(const Graph &g, const Node *node, bool *inBody);

void writeDot(const Graph &g, std::ofstream &out);

template <typename T> T readAt(const unsigned char *d, size_t offset) {
  T value;
  std::memcpy(&value, d + offset, sizeof value);
  return value;
}

} // namespace cgrt_stub

/// The start of every entry point: the lock, the count, an injected fault,
/// and (unless `init` is false) cuInit having been called.
#define ENTER(name, needsInit)                                                 \
  std::lock_guard<std::recursive_mutex> lock_(state().mutex);                  \
  {                                                                            \
    CUresult fault_;                                                           \
    if (takeFault(name, &fault_))                                              \
      return fault_;                                                           \
    if ((needsInit) && !state().initialized)                                   \
      return fail(name, CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called");  \
  }

#define CHECK(cond, name, code, ...)                                           \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(name, code, format(__VA_ARGS__));                            \
  } while (0)

#define NEED_CONTEXT(name)                                                     \
  CHECK(currentContext, name, CUDA_ERROR_INVALID_CONTEXT, "no current context")

#endif // CGRT_STUB_STUBSTATE_H
