//===- StubDriver.cpp - a CUDA driver without a GPU, for tests ------------===//
//
// The entry points libcgrt resolves (lib/Runtime/Driver.h), emulated on the
// host well enough to drive the runtime's run path; StubDriver.h says what
// is emulated and what is not. One recursive mutex serializes every call (a
// launch runs host kernels, which may call back into the stub).
//
//===----------------------------------------------------------------------===//

#include "StubState.h"

using namespace cgrt_stub;

//=== Entry points ==========================================================//

extern "C" {

STUB_EXPORT CUresult cuGetErrorName(CUresult error, const char **str) {
  if (!str)
    return CUDA_ERROR_INVALID_VALUE;
  *str = errorName(error);
  return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

STUB_EXPORT CUresult cuGetErrorString(CUresult error, const char **str) {
  if (!str)
    return CUDA_ERROR_INVALID_VALUE;
  const char *name = errorName(error);
  static std::map<CUresult, std::string> strings;
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  if (!name) {
    *str = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::string &text = strings[error];
  if (text.empty())
    text = std::string("stub driver: ") + name;
  *str = text.c_str();
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuInit(unsigned int flags) {
  ENTER("cuInit", false);
  CHECK(flags == 0, "cuInit", CUDA_ERROR_INVALID_VALUE, "flags %u", flags);
  if (state().devices <= 0)
    return fail("cuInit", CUDA_ERROR_NO_DEVICE, "CGRT_STUB_DEVICES is 0");
  state().initialized = true;
  for (int i = static_cast<int>(state().contexts.size()); i < state().devices;
       ++i)
    state().contexts.push_back(std::unique_ptr<Context>(new Context{i}));
  logLine("cuInit: stub driver %d.%d, %d device(s)", state().version / 1000,
          state().version % 1000 / 10, state().devices);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuDriverGetVersion(int *version) {
  ENTER("cuDriverGetVersion", false);
  CHECK(version, "cuDriverGetVersion", CUDA_ERROR_INVALID_VALUE, "NULL");
  *version = state().version;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuDeviceGetCount(int *count) {
  ENTER("cuDeviceGetCount", true);
  CHECK(count, "cuDeviceGetCount", CUDA_ERROR_INVALID_VALUE, "NULL");
  *count = state().devices;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  ENTER("cuDeviceGet", true);
  CHECK(device && ordinal >= 0 && ordinal < state().devices, "cuDeviceGet",
        CUDA_ERROR_INVALID_DEVICE, "ordinal %d", ordinal);
  *device = ordinal;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  ENTER("cuDeviceGetName", true);
  CHECK(name && length > 0 && device >= 0 && device < state().devices,
        "cuDeviceGetName", CUDA_ERROR_INVALID_VALUE, "bad arguments");
  std::snprintf(name, static_cast<size_t>(length), "cgrt stub driver (no GPU)");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuDeviceGetAttribute(int *value,
                                          CUdevice_attribute attribute,
                                          CUdevice device) {
  ENTER("cuDeviceGetAttribute", true);
  CHECK(value && device >= 0 && device < state().devices,
        "cuDeviceGetAttribute", CUDA_ERROR_INVALID_VALUE, "bad arguments");
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *value = 32;
    break;
  default:
    *value = 0;
  }
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context,
                                              CUdevice device) {
  ENTER("cuDevicePrimaryCtxRetain", true);
  CHECK(context && device >= 0 && device < state().devices,
        "cuDevicePrimaryCtxRetain", CUDA_ERROR_INVALID_DEVICE, "device %d",
        device);
  Context *c = state().contexts[static_cast<size_t>(device)].get();
  ++c->retains;
  *context = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
  ENTER("cuDevicePrimaryCtxRelease", true);
  CHECK(device >= 0 && device < state().devices, "cuDevicePrimaryCtxRelease",
        CUDA_ERROR_INVALID_DEVICE, "device %d", device);
  Context *c = state().contexts[static_cast<size_t>(device)].get();
  CHECK(c->retains > 0, "cuDevicePrimaryCtxRelease", CUDA_ERROR_INVALID_CONTEXT,
        "released more often than retained");
  --c->retains;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuCtxGetCurrent(CUcontext *context) {
  ENTER("cuCtxGetCurrent", true);
  CHECK(context, "cuCtxGetCurrent", CUDA_ERROR_INVALID_VALUE, "NULL");
  *context = currentContext;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  ENTER("cuCtxSetCurrent", true);
  bool known = !context;
  for (const auto &c : state().contexts)
    known |= reinterpret_cast<CUcontext>(c.get()) == context;
  CHECK(known, "cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT,
        "not a primary context");
  currentContext = context;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize", true);
  NEED_CONTEXT("cuCtxSynchronize");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  ENTER("cuModuleLoadData", true);
  NEED_CONTEXT("cuModuleLoadData");
  CHECK(module && image, "cuModuleLoadData", CUDA_ERROR_INVALID_VALUE, "NULL");
  std::map<std::string, std::vector<size_t>> kernels;
  const auto *bytes = static_cast<const unsigned char *>(image);
  bool cubin = parseCubin(bytes, kernels);
  if (!cubin && !parsePtx(static_cast<const char *>(image), kernels))
    return fail("cuModuleLoadData", CUDA_ERROR_INVALID_IMAGE,
                "neither a 64-bit ELF cubin nor PTX text");
  std::unique_ptr<Module> m(new Module{state().nextId++, !cubin, {}});
  for (const auto &k : kernels) {
    m->functions.emplace_back(new Function{m->id, k.first, k.second});
    state().functions.insert(m->functions.back().get());
  }
  logLine("cuModuleLoadData: module %d from %s, %zu kernels", m->id,
          cubin ? "a cubin" : "PTX", kernels.size());
  *module = reinterpret_cast<CUmodule>(m.get());
  state().modules[*module] = std::move(m);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                                         const char *name) {
  ENTER("cuModuleGetFunction", true);
  auto it = state().modules.find(module);
  CHECK(function && name && it != state().modules.end(), "cuModuleGetFunction",
        CUDA_ERROR_INVALID_HANDLE, "no such module");
  for (const auto &f : it->second->functions)
    if (f->name == name) {
      *function = reinterpret_cast<CUfunction>(f.get());
      return CUDA_SUCCESS;
    }
  return fail("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND,
              format("module %d has no kernel %s", it->second->id, name));
}

STUB_EXPORT CUresult cuModuleUnload(CUmodule module) {
  ENTER("cuModuleUnload", true);
  auto it = state().modules.find(module);
  CHECK(it != state().modules.end(), "cuModuleUnload",
        CUDA_ERROR_INVALID_HANDLE, "no such module");
  for (const auto &f : it->second->functions)
    state().functions.erase(f.get());
  state().modules.erase(it);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  ENTER("cuMemGetInfo", true);
  NEED_CONTEXT("cuMemGetInfo");
  CHECK(freeBytes && totalBytes, "cuMemGetInfo", CUDA_ERROR_INVALID_VALUE,
        "NULL");
  *totalBytes = size_t(80) << 30;
  *freeBytes = *totalBytes - state().liveBytes;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  ENTER("cuMemAlloc", true);
  NEED_CONTEXT("cuMemAlloc");
  CHECK(pointer && bytes > 0, "cuMemAlloc", CUDA_ERROR_INVALID_VALUE,
        "%zu bytes", bytes);
  CHECK(bytes <= (size_t(1) << 34), "cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY,
        "%zu bytes is more than the stub lends", bytes);
  // Exactly `bytes`, so that ASan sees a host stand-in of a kernel that
  // writes past an allocation.
  void *block = nullptr;
  CHECK(posix_memalign(&block, 256, bytes) == 0, "cuMemAlloc",
        CUDA_ERROR_OUT_OF_MEMORY, "%zu bytes", bytes);
  // Fresh device memory holds garbage; so does this.
  std::memset(block, 0xcd, bytes);
  int id = state().nextId++;
  state().allocations[reinterpret_cast<uintptr_t>(block)] = {id, bytes};
  state().liveBytes += bytes;
  *pointer = reinterpret_cast<CUdeviceptr>(block);
  logLine("cuMemAlloc M%d %zu bytes", id, bytes);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuMemFree(CUdeviceptr pointer) {
  ENTER("cuMemFree", true);
  NEED_CONTEXT("cuMemFree");
  auto it = state().allocations.find(static_cast<uintptr_t>(pointer));
  CHECK(it != state().allocations.end(), "cuMemFree", CUDA_ERROR_INVALID_VALUE,
        "%s is not the base of a live allocation",
        pointerName(pointer).c_str());
  logLine("cuMemFree M%d", it->second.id);
  state().liveBytes -= it->second.bytes;
  state().allocations.erase(it);
  std::free(reinterpret_cast<void *>(pointer));
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value,
                                size_t count) {
  ENTER("cuMemsetD8", true);
  NEED_CONTEXT("cuMemsetD8");
  logLine("cuMemsetD8 %s 0x%02x %zu bytes", pointerName(dst).c_str(), value,
          count);
  CUDA_MEMSET_NODE_PARAMS p{dst, 0, value, 1, count, 1};
  return memset2D("cuMemsetD8", p);
}

STUB_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value,
                                     size_t count, CUstream stream) {
  ENTER("cuMemsetD8Async", true);
  NEED_CONTEXT("cuMemsetD8Async");
  CHECK(validStream(stream), "cuMemsetD8Async", CUDA_ERROR_INVALID_HANDLE,
        "no such stream");
  logLine("cuMemsetD8Async %s 0x%02x %zu bytes", pointerName(dst).c_str(),
          value, count);
  CUDA_MEMSET_NODE_PARAMS p{dst, 0, value, 1, count, 1};
  return memset2D("cuMemsetD8Async", p);
}

#define LINEAR_COPY(name, dst, dstHost, src, srcHost, bytes)                   \
  NEED_CONTEXT(name);                                                          \
  {                                                                            \
    CUDA_MEMCPY3D c_ = linearCopy(dst, dstHost, src, srcHost, bytes);          \
    logLine("%s %s", name, copyText(c_).c_str());                              \
    return copyBlock(name, c_);                                                \
  }

STUB_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src,
                                  size_t bytes) {
  ENTER("cuMemcpyHtoD", true);
  LINEAR_COPY("cuMemcpyHtoD", dst, nullptr, 0, src, bytes);
}

STUB_EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  ENTER("cuMemcpyDtoH", true);
  LINEAR_COPY("cuMemcpyDtoH", 0, dst, src, nullptr, bytes);
}

STUB_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src,
                                  size_t bytes) {
  ENTER("cuMemcpyDtoD", true);
  LINEAR_COPY("cuMemcpyDtoD", dst, nullptr, src, nullptr, bytes);
}

STUB_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
                                       size_t bytes, CUstream stream) {
  ENTER("cuMemcpyHtoDAsync", true);
  CHECK(validStream(stream), "cuMemcpyHtoDAsync", CUDA_ERROR_INVALID_HANDLE,
        "no such stream");
  LINEAR_COPY("cuMemcpyHtoDAsync", dst, nullptr, 0, src, bytes);
}

STUB_EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                                       CUstream stream) {
  ENTER("cuMemcpyDtoHAsync", true);
  CHECK(validStream(stream), "cuMemcpyDtoHAsync", CUDA_ERROR_INVALID_HANDLE,
        "no such stream");
  LINEAR_COPY("cuMemcpyDtoHAsync", 0, dst, src, nullptr, bytes);
}

STUB_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src,
                                       size_t bytes, CUstream stream) {
  ENTER("cuMemcpyDtoDAsync", true);
  CHECK(validStream(stream), "cuMemcpyDtoDAsync", CUDA_ERROR_INVALID_HANDLE,
        "no such stream");
  LINEAR_COPY("cuMemcpyDtoDAsync", dst, nullptr, src, nullptr, bytes);
}

STUB_EXPORT CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D *copy,
                                     CUstream stream) {
  ENTER("cuMemcpy2DAsync", true);
  NEED_CONTEXT("cuMemcpy2DAsync");
  CHECK(copy && validStream(stream), "cuMemcpy2DAsync",
        CUDA_ERROR_INVALID_VALUE, "NULL copy or no such stream");
  CUDA_MEMCPY3D c;
  std::memset(&c, 0, sizeof c);
  c.srcXInBytes = copy->srcXInBytes;
  c.srcY = copy->srcY;
  c.srcMemoryType = copy->srcMemoryType;
  c.srcHost = copy->srcHost;
  c.srcDevice = copy->srcDevice;
  c.srcPitch = copy->srcPitch;
  c.dstXInBytes = copy->dstXInBytes;
  c.dstY = copy->dstY;
  c.dstMemoryType = copy->dstMemoryType;
  c.dstHost = copy->dstHost;
  c.dstDevice = copy->dstDevice;
  c.dstPitch = copy->dstPitch;
  c.WidthInBytes = copy->WidthInBytes;
  c.Height = copy->Height;
  c.Depth = 1;
  logLine("cuMemcpy2DAsync %s (pitch %zu) <- %s (pitch %zu) %zu bytes x %zu "
          "rows",
          side(c.dstMemoryType, c.dstDevice).c_str(), c.dstPitch,
          side(c.srcMemoryType, c.srcDevice).c_str(), c.srcPitch,
          c.WidthInBytes, c.Height);
  return copyBlock("cuMemcpy2DAsync", c);
}

STUB_EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  ENTER("cuStreamCreate", true);
  NEED_CONTEXT("cuStreamCreate");
  CHECK(stream, "cuStreamCreate", CUDA_ERROR_INVALID_VALUE, "NULL");
  std::unique_ptr<Stream> s(new Stream());
  s->id = state().nextId++;
  *stream = reinterpret_cast<CUstream>(s.get());
  logLine("cuStreamCreate S%d flags %u", s->id, flags);
  state().streams[*stream] = std::move(s);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuStreamDestroy(CUstream stream) {
  ENTER("cuStreamDestroy", true);
  CHECK(state().streams.erase(stream), "cuStreamDestroy",
        CUDA_ERROR_INVALID_HANDLE, "no such stream");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  ENTER("cuStreamSynchronize", true);
  NEED_CONTEXT("cuStreamSynchronize");
  CHECK(validStream(stream), "cuStreamSynchronize", CUDA_ERROR_INVALID_HANDLE,
        "no such stream");
  return CUDA_SUCCESS;
}

// The stub runs work as it is enqueued, so a wait has nothing to wait for;
// it is logged, for tests of how runs on several streams are ordered.
STUB_EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event,
                                       unsigned int flags) {
  ENTER("cuStreamWaitEvent", true);
  auto it = state().events.find(event);
  CHECK(it != state().events.end() && validStream(stream),
        "cuStreamWaitEvent", CUDA_ERROR_INVALID_HANDLE,
        "no such event or stream (flags %u)", flags);
  CHECK(it->second->recorded, "cuStreamWaitEvent", CUDA_ERROR_INVALID_VALUE,
        "the event was never recorded");
  logLine("cuStreamWaitEvent %s", streamName(stream).c_str());
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuStreamIsCapturing(CUstream stream,
                                         CUstreamCaptureStatus *status) {
  ENTER("cuStreamIsCapturing", true);
  CHECK(status && validStream(stream), "cuStreamIsCapturing",
        CUDA_ERROR_INVALID_VALUE, "NULL status or no such stream");
  auto it = state().streams.find(stream);
  bool capturing = it != state().streams.end() && it->second->capture;
  *status = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                      : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

// Work runs as it is enqueued: a stream is never busy.
STUB_EXPORT CUresult cuStreamQuery(CUstream stream) {
  ENTER("cuStreamQuery", true);
  CHECK(validStream(stream), "cuStreamQuery", CUDA_ERROR_INVALID_HANDLE,
        "no such stream");
  return CUDA_SUCCESS;
}

// Capture records only host functions (what a stub library enqueues); a
// stream of the runtime's own (not the legacy one) is needed.
STUB_EXPORT CUresult cuStreamBeginCapture(CUstream stream,
                                          CUstreamCaptureMode mode) {
  ENTER("cuStreamBeginCapture", true);
  auto it = state().streams.find(stream);
  CHECK(it != state().streams.end(), "cuStreamBeginCapture",
        CUDA_ERROR_INVALID_HANDLE, "no such stream (mode %d)",
        static_cast<int>(mode));
  CHECK(!it->second->capture, "cuStreamBeginCapture",
        CUDA_ERROR_ILLEGAL_STATE, "S%d is capturing already", it->second->id);
  auto g = std::make_shared<Graph>();
  g->id = state().nextId++;
  state().allGraphs[reinterpret_cast<CUgraph>(g.get())] = g.get();
  it->second->capture = g;
  it->second->captureTail = nullptr;
  logLine("cuStreamBeginCapture S%d into G%d", it->second->id, g->id);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  ENTER("cuStreamEndCapture", true);
  auto it = state().streams.find(stream);
  CHECK(graph && it != state().streams.end() && it->second->capture,
        "cuStreamEndCapture", CUDA_ERROR_ILLEGAL_STATE,
        "NULL or no capture on the stream");
  std::shared_ptr<Graph> g = std::move(it->second->capture);
  it->second->captureTail = nullptr;
  *graph = reinterpret_cast<CUgraph>(g.get());
  state().graphs[*graph] = g;
  logLine("cuStreamEndCapture S%d: G%d, %zu node(s)", it->second->id, g->id,
          g->nodes.size());
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn,
                                      void *userData) {
  ENTER("cuLaunchHostFunc", true);
  CHECK(fn && validStream(stream), "cuLaunchHostFunc",
        CUDA_ERROR_INVALID_VALUE, "NULL function or no such stream");
  auto it = state().streams.find(stream);
  if (it == state().streams.end() || !it->second->capture) {
    logLine("cuLaunchHostFunc %s", streamName(stream).c_str());
    ++state().operations;
    fn(userData);
    return CUDA_SUCCESS;
  }
  Stream &s = *it->second;
  std::unique_ptr<Node> n(new Node());
  n->type = CU_GRAPH_NODE_TYPE_HOST;
  n->hostFn = fn;
  n->hostData = userData;
  CUgraphNode tail = s.captureTail;
  return addNode("cuLaunchHostFunc (captured)", &s.captureTail,
                 reinterpret_cast<CUgraph>(s.capture.get()), &tail,
                 tail ? 1 : 0, nullptr, std::move(n));
}

STUB_EXPORT CUresult cuEventQuery(CUevent event) {
  ENTER("cuEventQuery", true);
  CHECK(state().events.count(event), "cuEventQuery",
        CUDA_ERROR_INVALID_HANDLE, "no such event");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  ENTER("cuEventCreate", true);
  NEED_CONTEXT("cuEventCreate");
  CHECK(event, "cuEventCreate", CUDA_ERROR_INVALID_VALUE, "NULL (flags %u)",
        flags);
  std::unique_ptr<Event> e(new Event{state().nextId++});
  *event = reinterpret_cast<CUevent>(e.get());
  state().events[*event] = std::move(e);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  ENTER("cuEventRecord", true);
  auto it = state().events.find(event);
  CHECK(it != state().events.end() && validStream(stream), "cuEventRecord",
        CUDA_ERROR_INVALID_HANDLE, "no such event or stream");
  it->second->stamp = state().operations;
  it->second->recorded = true;
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuEventSynchronize(CUevent event) {
  ENTER("cuEventSynchronize", true);
  CHECK(state().events.count(event), "cuEventSynchronize",
        CUDA_ERROR_INVALID_HANDLE, "no such event");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuEventElapsedTime(float *milliseconds, CUevent start,
                                        CUevent end) {
  ENTER("cuEventElapsedTime", true);
  auto a = state().events.find(start), b = state().events.find(end);
  CHECK(milliseconds && a != state().events.end() && b != state().events.end(),
        "cuEventElapsedTime", CUDA_ERROR_INVALID_HANDLE, "no such event");
  CHECK(a->second->recorded && b->second->recorded, "cuEventElapsedTime",
        CUDA_ERROR_INVALID_HANDLE, "an event was never recorded");
  // Not a time: 1 us per operation recorded between the events.
  unsigned long long ops = b->second->stamp - a->second->stamp;
  *milliseconds = 1e-3f * static_cast<float>(ops ? ops : 1);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuEventDestroy(CUevent event) {
  ENTER("cuEventDestroy", true);
  CHECK(state().events.erase(event), "cuEventDestroy",
        CUDA_ERROR_INVALID_HANDLE, "no such event");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGraphCreate(CUgraph *graph, unsigned int flags) {
  ENTER("cuGraphCreate", true);
  CHECK(graph && flags == 0, "cuGraphCreate", CUDA_ERROR_INVALID_VALUE,
        "NULL or flags %u", flags);
  auto g = std::make_shared<Graph>();
  g->id = state().nextId++;
  *graph = reinterpret_cast<CUgraph>(g.get());
  state().graphs[*graph] = g;
  state().allGraphs[*graph] = g.get();
  logLine("cuGraphCreate G%d", g->id);
  return CUDA_SUCCESS;
}

namespace {
void forgetGraph(Graph &g) {
  state().allGraphs.erase(reinterpret_cast<CUgraph>(&g));
  for (const auto &n : g.nodes) {
    state().nodes.erase(reinterpret_cast<CUgraphNode>(n.get()));
    for (const auto &body : n->bodies)
      forgetGraph(*body);
  }
}
} // namespace

STUB_EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  ENTER("cuGraphDestroy", true);
  auto it = state().graphs.find(graph);
  CHECK(it != state().graphs.end(), "cuGraphDestroy", CUDA_ERROR_INVALID_VALUE,
        "not a graph of cuGraphCreate");
  forgetGraph(*it->second);
  for (auto h = state().handles.begin(); h != state().handles.end();)
    h = h->second.graph == it->second.get() ? state().handles.erase(h)
                                            : std::next(h);
  // An instantiated graph keeps what it needs (shared_ptr).
  state().graphs.erase(it);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *node, CUgraph graph,
                                              const CUgraphNode *deps,
                                              size_t numDeps, CUgraph child) {
  ENTER("cuGraphAddChildGraphNode", true);
  auto it = state().graphs.find(child);
  CHECK(it != state().graphs.end(), "cuGraphAddChildGraphNode",
        CUDA_ERROR_INVALID_VALUE, "the child is not a graph");
  std::unique_ptr<Node> n(new Node());
  n->type = CU_GRAPH_NODE_TYPE_GRAPH;
  // The node holds the graph as it is now (CUDA copies it); later changes
  // to the child are not seen, which the runtime never makes.
  n->child = it->second;
  return addNode("cuGraphAddChildGraphNode", node, graph, deps, numDeps,
                 nullptr, std::move(n));
}

STUB_EXPORT CUresult cuGraphConditionalHandleCreate(
    CUgraphConditionalHandle *handle, CUgraph graph, CUcontext context,
    unsigned int defaultLaunchValue, unsigned int flags) {
  ENTER("cuGraphConditionalHandleCreate", true);
  Graph *g = findGraph(graph);
  CHECK(handle && g && context, "cuGraphConditionalHandleCreate",
        CUDA_ERROR_INVALID_VALUE, "NULL handle, graph or context");
  CHECK(flags == 0 || flags == CU_GRAPH_COND_ASSIGN_DEFAULT,
        "cuGraphConditionalHandleCreate", CUDA_ERROR_INVALID_VALUE, "flags %u",
        flags);
  int id = state().nextId++;
  // Recognizable among kernel parameters: not a heap address.
  *handle = 0xC0DE000000000000ull | static_cast<unsigned>(id);
  state().handles[*handle] = {id, g, defaultLaunchValue, flags};
  logLine("cuGraphConditionalHandleCreate H%d in G%d default %u flags %u", id,
          g->id, defaultLaunchValue, flags);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult
cuGraphAddKernelNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                     size_t numDeps, const CUDA_KERNEL_NODE_PARAMS *params) {
  ENTER("cuGraphAddKernelNode", true);
  CHECK(params, "cuGraphAddKernelNode", CUDA_ERROR_INVALID_VALUE, "NULL");
  std::unique_ptr<Node> n;
  if (CUresult r = kernelNode("cuGraphAddKernelNode", *params, n))
    return r;
  return addNode("cuGraphAddKernelNode", node, graph, deps, numDeps, nullptr,
                 std::move(n));
}

STUB_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph graph,
                                          const CUgraphNode *deps,
                                          size_t numDeps,
                                          const CUDA_MEMCPY3D *copy,
                                          CUcontext context) {
  ENTER("cuGraphAddMemcpyNode", true);
  CHECK(copy && context, "cuGraphAddMemcpyNode", CUDA_ERROR_INVALID_VALUE,
        "NULL");
  CUDA_MEMCPY3D c = *copy;
  size_t height = c.Height ? c.Height : 1, depth = c.Depth ? c.Depth : 1;
  size_t span = height * depth * c.WidthInBytes;
  CHECK(c.srcMemoryType != CU_MEMORYTYPE_DEVICE ||
            deviceRange(c.srcDevice + c.srcXInBytes, span),
        "cuGraphAddMemcpyNode", CUDA_ERROR_INVALID_VALUE,
        "the source %s..+%zu is outside every allocation",
        pointerName(c.srcDevice).c_str(), span);
  CHECK(c.dstMemoryType != CU_MEMORYTYPE_DEVICE ||
            deviceRange(c.dstDevice + c.dstXInBytes, span),
        "cuGraphAddMemcpyNode", CUDA_ERROR_INVALID_VALUE,
        "the destination %s..+%zu is outside every allocation",
        pointerName(c.dstDevice).c_str(), span);
  std::unique_ptr<Node> n(new Node());
  n->type = CU_GRAPH_NODE_TYPE_MEMCPY;
  n->copy = c;
  return addNode("cuGraphAddMemcpyNode", node, graph, deps, numDeps, nullptr,
                 std::move(n));
}

STUB_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph graph,
                                          const CUgraphNode *deps,
                                          size_t numDeps,
                                          const CUDA_MEMSET_NODE_PARAMS *params,
                                          CUcontext context) {
  ENTER("cuGraphAddMemsetNode", true);
  CHECK(params && context, "cuGraphAddMemsetNode", CUDA_ERROR_INVALID_VALUE,
        "NULL");
  size_t height = params->height ? params->height : 1;
  size_t rowBytes = params->width * params->elementSize;
  CHECK(deviceRange(params->dst, (height - 1) * params->pitch + rowBytes),
        "cuGraphAddMemsetNode", CUDA_ERROR_INVALID_VALUE,
        "%s..+%zu is outside every allocation",
        pointerName(params->dst).c_str(), rowBytes);
  std::unique_ptr<Node> n(new Node());
  n->type = CU_GRAPH_NODE_TYPE_MEMSET;
  n->set = *params;
  return addNode("cuGraphAddMemsetNode", node, graph, deps, numDeps, nullptr,
                 std::move(n));
}

STUB_EXPORT CUresult cuGraphAddNode(CUgraphNode *node, CUgraph graph,
                                    const CUgraphNode *deps,
                                    const CUgraphEdgeData *edges,
                                    size_t numDeps, CUgraphNodeParams *params) {
  ENTER("cuGraphAddNode", true);
  CHECK(params, "cuGraphAddNode", CUDA_ERROR_INVALID_VALUE, "NULL");
  std::unique_ptr<Node> n;
  if (params->type == CU_GRAPH_NODE_TYPE_KERNEL) {
    const CUDA_KERNEL_NODE_PARAMS_v3 &k = params->kernel;
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    std::memset(&p, 0, sizeof p);
    p.func = k.func;
    p.gridDimX = k.gridDimX;
    p.gridDimY = k.gridDimY;
    p.gridDimZ = k.gridDimZ;
    p.blockDimX = k.blockDimX;
    p.blockDimY = k.blockDimY;
    p.blockDimZ = k.blockDimZ;
    p.sharedMemBytes = k.sharedMemBytes;
    p.kernelParams = k.kernelParams;
    if (CUresult r = kernelNode("cuGraphAddNode", p, n))
      return r;
  } else if (params->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
    const CUDA_CONDITIONAL_NODE_PARAMS &c = params->conditional;
    auto h = state().handles.find(c.handle);
    CHECK(h != state().handles.end() && h->second.graph == findGraph(graph),
          "cuGraphAddNode", CUDA_ERROR_INVALID_VALUE,
          "the condition handle is not one of this graph's");
    CHECK(c.ctx, "cuGraphAddNode", CUDA_ERROR_INVALID_CONTEXT,
          "a conditional node without a context");
    bool sizeOk =
        c.type == CU_GRAPH_COND_TYPE_WHILE
            ? c.size == 1
            : (c.type == CU_GRAPH_COND_TYPE_IF && (c.size == 1 || c.size == 2));
    CHECK(sizeOk, "cuGraphAddNode", CUDA_ERROR_INVALID_VALUE,
          "conditional type %d with %u bodies", static_cast<int>(c.type),
          c.size);
    n.reset(new Node());
    n->type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    n->handle = c.handle;
    n->condType = c.type;
    for (unsigned i = 0; i < c.size; ++i) {
      auto body = std::make_shared<Graph>();
      body->id = state().nextId++;
      body->parent = n.get();
      state().allGraphs[reinterpret_cast<CUgraph>(body.get())] = body.get();
      n->bodyHandles.push_back(reinterpret_cast<CUgraph>(body.get()));
      n->bodies.push_back(std::move(body));
    }
  } else {
    return fail("cuGraphAddNode", CUDA_ERROR_NOT_SUPPORTED,
                format("node type %d", static_cast<int>(params->type)));
  }
  Node *raw = n.get();
  CUresult result = addNode("cuGraphAddNode", node, graph, deps, numDeps, edges,
                            std::move(n));
  if (result == CUDA_SUCCESS && raw->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
    params->conditional.phGraph_out = raw->bodyHandles.data();
  return result;
}

STUB_EXPORT CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes,
                                     size_t *count) {
  ENTER("cuGraphGetNodes", true);
  Graph *g = findGraph(graph);
  CHECK(g && count, "cuGraphGetNodes", CUDA_ERROR_INVALID_VALUE,
        "no such graph");
  if (nodes)
    for (size_t i = 0; i < std::min(*count, g->nodes.size()); ++i)
      nodes[i] = reinterpret_cast<CUgraphNode>(g->nodes[i].get());
  *count = g->nodes.size();
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult
cuGraphKernelNodeGetParams(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *params) {
  ENTER("cuGraphKernelNodeGetParams", true);
  auto it = state().nodes.find(node);
  CHECK(params && it != state().nodes.end() &&
            it->second->type == CU_GRAPH_NODE_TYPE_KERNEL,
        "cuGraphKernelNodeGetParams", CUDA_ERROR_INVALID_VALUE,
        "not a kernel node");
  Node &n = *it->second;
  std::memset(params, 0, sizeof *params);
  params->func = reinterpret_cast<CUfunction>(n.function);
  params->gridDimX = n.grid[0];
  params->gridDimY = n.grid[1];
  params->gridDimZ = n.grid[2];
  params->blockDimX = n.block[0];
  params->blockDimY = n.block[1];
  params->blockDimZ = n.block[2];
  params->sharedMemBytes = n.shared;
  n.paramPointers.clear();
  for (auto &p : n.params)
    n.paramPointers.push_back(p.data());
  params->kernelParams = n.paramPointers.data();
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec,
                                                 CUgraph graph,
                                                 unsigned long long flags) {
  ENTER("cuGraphInstantiateWithFlags", true);
  auto it = state().graphs.find(graph);
  CHECK(exec && it != state().graphs.end(), "cuGraphInstantiateWithFlags",
        CUDA_ERROR_INVALID_VALUE, "not a graph of cuGraphCreate");
  std::unique_ptr<Exec> e(new Exec());
  e->id = state().nextId++;
  e->graph = it->second;
  collectKernelParams(*e->graph, *e);
  for (const auto &h : state().handles)
    if (h.second.graph == e->graph.get())
      e->handleValues[h.first] = h.second.defaultValue;
  *exec = reinterpret_cast<CUgraphExec>(e.get());
  logLine("cuGraphInstantiateWithFlags E%d of G%d flags %llu", e->id,
          e->graph->id, flags);
  state().execs[*exec] = std::move(e);
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGraphUpload(CUgraphExec exec, CUstream stream) {
  ENTER("cuGraphUpload", true);
  CHECK(state().execs.count(exec) && validStream(stream), "cuGraphUpload",
        CUDA_ERROR_INVALID_HANDLE, "no such instantiated graph or stream");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGraphExecKernelNodeSetParams(
    CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *params) {
  ENTER("cuGraphExecKernelNodeSetParams", true);
  auto e = state().execs.find(exec);
  auto n = state().nodes.find(node);
  CHECK(params && e != state().execs.end() && n != state().nodes.end(),
        "cuGraphExecKernelNodeSetParams", CUDA_ERROR_INVALID_VALUE,
        "no such instantiated graph or node");
  bool inBody = false;
  CHECK(inGraphTree(*e->second->graph, n->second, &inBody),
        "cuGraphExecKernelNodeSetParams", CUDA_ERROR_INVALID_VALUE,
        "N%d is not a node of E%d", n->second->id, e->second->id);
  std::unique_ptr<Node> updated;
  if (CUresult r =
          kernelNode("cuGraphExecKernelNodeSetParams", *params, updated))
    return r;
  CHECK(updated->function == n->second->function,
        "cuGraphExecKernelNodeSetParams", CUDA_ERROR_INVALID_VALUE,
        "N%d runs %s, not %s", n->second->id, n->second->function->name.c_str(),
        updated->function->name.c_str());
  e->second->params[n->second] = updated->params;
  logLine("cuGraphExecKernelNodeSetParams E%d N%d%s params %s", e->second->id,
          n->second->id, inBody ? " (in a conditional body)" : "",
          paramsText(updated->params).c_str());
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  ENTER("cuGraphLaunch", true);
  NEED_CONTEXT("cuGraphLaunch");
  auto it = state().execs.find(exec);
  CHECK(it != state().execs.end() && validStream(stream), "cuGraphLaunch",
        CUDA_ERROR_INVALID_HANDLE, "no such instantiated graph or stream");
  Exec &e = *it->second;
  logLine("cuGraphLaunch E%d (G%d) on %s", e.id, e.graph->id,
          streamName(stream).c_str());
  for (const auto &h : state().handles)
    if (h.second.graph == e.graph.get() &&
        (h.second.flags & CU_GRAPH_COND_ASSIGN_DEFAULT))
      e.handleValues[h.first] = h.second.defaultValue;
  Exec *outer = state().running;
  state().running = &e;
  CUresult result = runGraph(*e.graph, e, 0);
  state().running = outer;
  return result;
}

STUB_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  ENTER("cuGraphExecDestroy", true);
  CHECK(state().execs.erase(exec), "cuGraphExecDestroy",
        CUDA_ERROR_INVALID_VALUE, "no such instantiated graph");
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGraphDebugDotPrint(CUgraph graph, const char *path,
                                          unsigned int flags) {
  ENTER("cuGraphDebugDotPrint", true);
  Graph *g = findGraph(graph);
  CHECK(g && path, "cuGraphDebugDotPrint", CUDA_ERROR_INVALID_VALUE,
        "no such graph (flags %u)", flags);
  std::ofstream out(path);
  CHECK(out, "cuGraphDebugDotPrint", CUDA_ERROR_OPERATING_SYSTEM,
        "cannot write %s", path);
  out << "digraph G" << g->id << " {\n";
  writeDot(*g, out);
  out << "}\n";
  return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned gridX,
                                    unsigned gridY, unsigned gridZ,
                                    unsigned blockX, unsigned blockY,
                                    unsigned blockZ, unsigned shared,
                                    CUstream stream, void **kernelParams,
                                    void **extra) {
  ENTER("cuLaunchKernel", true);
  NEED_CONTEXT("cuLaunchKernel");
  CHECK(validStream(stream) && !extra, "cuLaunchKernel",
        CUDA_ERROR_INVALID_VALUE, "no such stream, or `extra` given");
  CUDA_KERNEL_NODE_PARAMS_v2 p;
  std::memset(&p, 0, sizeof p);
  p.func = function;
  p.gridDimX = gridX;
  p.gridDimY = gridY;
  p.gridDimZ = gridZ;
  p.blockDimX = blockX;
  p.blockDimY = blockY;
  p.blockDimZ = blockZ;
  p.sharedMemBytes = shared;
  p.kernelParams = kernelParams;
  std::unique_ptr<Node> n;
  if (CUresult r = kernelNode("cuLaunchKernel", p, n))
    return r;
  logLine("cuLaunchKernel %s grid %ux%ux%u block %ux%ux%u params %s",
          n->function->name.c_str(), gridX, gridY, gridZ, blockX, blockY,
          blockZ, paramsText(n->params).c_str());
  return runKernel("launched", *n->function, n->grid, n->block, n->shared,
                   n->params);
}

//--- cuGetProcAddress -------------------------------------------------------

namespace {
struct ProcEntry {
  const char *name;
  void *function;
  int since; ///< the CUDA version that introduced this prototype
};

#define ENTRY(name, since)                                                     \
  { #name, reinterpret_cast < void *>(&name), since }
const ProcEntry kProcs[] = {
    ENTRY(cuInit, 2000),
    ENTRY(cuDriverGetVersion, 2020),
    ENTRY(cuGetErrorString, 6000),
    ENTRY(cuGetErrorName, 6000),
    ENTRY(cuDeviceGetCount, 2000),
    ENTRY(cuDeviceGet, 2000),
    ENTRY(cuDeviceGetName, 2000),
    ENTRY(cuDeviceGetAttribute, 2000),
    ENTRY(cuDevicePrimaryCtxRetain, 7000),
    ENTRY(cuDevicePrimaryCtxRelease, 11000),
    ENTRY(cuCtxGetCurrent, 4000),
    ENTRY(cuCtxSetCurrent, 4000),
    ENTRY(cuCtxSynchronize, 2000),
    ENTRY(cuModuleLoadData, 2000),
    ENTRY(cuModuleGetFunction, 2000),
    ENTRY(cuModuleUnload, 2000),
    ENTRY(cuMemGetInfo, 3020),
    ENTRY(cuMemAlloc, 3020),
    ENTRY(cuMemFree, 3020),
    ENTRY(cuMemsetD8, 3020),
    ENTRY(cuMemcpyHtoD, 3020),
    ENTRY(cuMemcpyDtoH, 3020),
    ENTRY(cuMemcpyDtoD, 3020),
    ENTRY(cuMemcpyHtoDAsync, 3020),
    ENTRY(cuMemcpyDtoHAsync, 3020),
    ENTRY(cuMemcpyDtoDAsync, 3020),
    ENTRY(cuStreamCreate, 2000),
    ENTRY(cuStreamDestroy, 4000),
    ENTRY(cuStreamSynchronize, 2000),
    ENTRY(cuEventCreate, 2000),
    ENTRY(cuEventRecord, 2000),
    ENTRY(cuEventSynchronize, 2000),
    ENTRY(cuEventElapsedTime, 2000),
    ENTRY(cuEventDestroy, 4000),
    ENTRY(cuGraphCreate, 10000),
    ENTRY(cuGraphDestroy, 10000),
    ENTRY(cuGraphAddKernelNode, 12000),
    ENTRY(cuGraphAddMemcpyNode, 10000),
    ENTRY(cuGraphAddMemsetNode, 10000),
    ENTRY(cuGraphInstantiateWithFlags, 11040),
    ENTRY(cuGraphUpload, 11010),
    ENTRY(cuGraphLaunch, 10000),
    ENTRY(cuGraphExecDestroy, 10000),
    ENTRY(cuGraphDebugDotPrint, 11030),
    ENTRY(cuLaunchKernel, 4000),
    ENTRY(cuMemsetD8Async, 3020),
    ENTRY(cuMemcpy2DAsync, 3020),
    ENTRY(cuGraphGetNodes, 10000),
    ENTRY(cuGraphKernelNodeGetParams, 12000),
    ENTRY(cuGraphExecKernelNodeSetParams, 12000),
    ENTRY(cuGraphConditionalHandleCreate, 12030),
    ENTRY(cuGraphAddNode, 12030),
    ENTRY(cuStreamWaitEvent, 3020),
    ENTRY(cuStreamIsCapturing, 10000),
    ENTRY(cuStreamQuery, 2000),
    ENTRY(cuEventQuery, 2000),
    ENTRY(cuStreamBeginCapture, 12000),
    ENTRY(cuStreamEndCapture, 10000),
    ENTRY(cuGraphAddChildGraphNode, 10000),
    ENTRY(cuLaunchHostFunc, 10000),
};
#undef ENTRY
} // namespace

STUB_EXPORT CUresult cuGetProcAddress(const char *symbol, void **function,
                                      int cudaVersion, cuuint64_t flags,
                                      CUdriverProcAddressQueryResult *status) {
  ENTER("cuGetProcAddress", false);
  CHECK(symbol && function, "cuGetProcAddress", CUDA_ERROR_INVALID_VALUE,
        "NULL (flags %llu)", static_cast<unsigned long long>(flags));
  *function = nullptr;
  for (const ProcEntry &e : kProcs) {
    if (std::strcmp(e.name, symbol) != 0)
      continue;
    if (e.since > cudaVersion || e.since > state().version) {
      if (status)
        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return fail("cuGetProcAddress", CUDA_ERROR_NOT_FOUND,
                  format("%s needs CUDA %d.%d", symbol, e.since / 1000,
                         e.since % 1000 / 10));
    }
    *function = e.function;
    if (status)
      *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  if (status)
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return fail("cuGetProcAddress", CUDA_ERROR_NOT_FOUND,
              format("the stub has no %s", symbol));
}

} // extern "C"
