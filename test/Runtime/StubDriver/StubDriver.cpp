//===- StubDriver.cpp - a CUDA driver without a GPU, for tests ------------===//
//
// The entry points libcgrt resolves (lib/Runtime/Driver.h), emulated on the
// host well enough to drive the runtime's run path; StubDriver.h says what
// is emulated and what is not. One recursive mutex serializes every call (a
// launch runs host kernels, which may call back into the stub).
//
//===----------------------------------------------------------------------===//

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

namespace {

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

struct Stream {
  int id;
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

State &state() {
  static State *s = new State(); // never freed: calls may come at exit
  return *s;
}

thread_local CUcontext currentContext = nullptr;

const char *errorName(CUresult code) {
  switch (code) {
#define NAME(c)                                                                \
  case c:                                                                      \
    return #c;
    NAME(CUDA_SUCCESS)
    NAME(CUDA_ERROR_INVALID_VALUE)
    NAME(CUDA_ERROR_OUT_OF_MEMORY)
    NAME(CUDA_ERROR_NOT_INITIALIZED)
    NAME(CUDA_ERROR_DEINITIALIZED)
    NAME(CUDA_ERROR_STUB_LIBRARY)
    NAME(CUDA_ERROR_NO_DEVICE)
    NAME(CUDA_ERROR_INVALID_DEVICE)
    NAME(CUDA_ERROR_INVALID_IMAGE)
    NAME(CUDA_ERROR_INVALID_CONTEXT)
    NAME(CUDA_ERROR_NO_BINARY_FOR_GPU)
    NAME(CUDA_ERROR_INVALID_PTX)
    NAME(CUDA_ERROR_INVALID_SOURCE)
    NAME(CUDA_ERROR_FILE_NOT_FOUND)
    NAME(CUDA_ERROR_OPERATING_SYSTEM)
    NAME(CUDA_ERROR_INVALID_HANDLE)
    NAME(CUDA_ERROR_NOT_FOUND)
    NAME(CUDA_ERROR_NOT_READY)
    NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    NAME(CUDA_ERROR_LAUNCH_FAILED)
    NAME(CUDA_ERROR_NOT_SUPPORTED)
    NAME(CUDA_ERROR_UNKNOWN)
#undef NAME
  default:
    return nullptr;
  }
}

void logLine(const char *format, ...) __attribute__((format(printf, 1, 2)));
void logLine(const char *format, ...) {
  State &s = state();
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  s.log += buffer;
  s.log += '\n';
  if (!s.logPath.empty())
    if (FILE *f = std::fopen(s.logPath.c_str(), "a")) {
      std::fprintf(f, "%s\n", buffer);
      std::fclose(f);
    }
}

/// Logs and returns a failure of `call`.
CUresult fail(const char *call, CUresult code, const std::string &why) {
  const char *name = errorName(code);
  logLine("%s -> %s: %s", call, name ? name : "?", why.c_str());
  return code;
}

/// $CGRT_STUB_FAULT, in the runtime's CGRT_FAULT format (FaultSpec.h).
void armFaults(const char *spec) {
  for (const Fault &fault : cgrt::parseFaultSpecs(spec))
    state().faults.push_back(fault);
}

/// Reads the environment once, at the first call of any entry point.
void configure() {
  static bool done = false;
  if (done)
    return;
  done = true;
  State &s = state();
  if (const char *path = std::getenv("CGRT_STUB_LOG"))
    s.logPath = path;
  if (const char *v = std::getenv("CGRT_STUB_DRIVER_VERSION"))
    s.version = std::atoi(v);
  if (const char *n = std::getenv("CGRT_STUB_DEVICES"))
    s.devices = std::atoi(n);
  if (const char *spec = std::getenv("CGRT_STUB_FAULT"))
    armFaults(spec);
}

/// Counts the call and fires a fault armed for it.
bool takeFault(const char *call, CUresult *code) {
  State &s = state();
  configure();
  ++s.calls[call];
  for (size_t i = 0; i < s.faults.size(); ++i) {
    if (s.faults[i].call != call)
      continue;
    if (s.faults[i].skip > 0) {
      --s.faults[i].skip;
      return false;
    }
    *code = s.faults[i].code;
    s.faults.erase(s.faults.begin() + static_cast<std::ptrdiff_t>(i));
    fail(call, *code, "injected");
    return true;
  }
  return false;
}

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

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

//--- Memory ---------------------------------------------------------------//

/// The allocation holding [p, p + bytes), or null.
const std::pair<const uintptr_t, Allocation> *findAllocation(CUdeviceptr p,
                                                             size_t bytes) {
  State &s = state();
  auto it = s.allocations.upper_bound(static_cast<uintptr_t>(p));
  if (it == s.allocations.begin())
    return nullptr;
  --it;
  uintptr_t base = it->first;
  if (p < base || p - base > it->second.bytes ||
      bytes > it->second.bytes - (p - base))
    return nullptr;
  return &*it;
}

std::string pointerName(CUdeviceptr p) {
  if (const auto *a = findAllocation(p, 0))
    return format("M%d+%" PRIu64, a->second.id,
                  static_cast<uint64_t>(p - a->first));
  return "?";
}

bool deviceRange(CUdeviceptr p, size_t bytes) {
  return findAllocation(p, bytes) != nullptr;
}

bool validStream(CUstream stream) {
  return !stream || stream == CU_STREAM_LEGACY ||
         stream == CU_STREAM_PER_THREAD || state().streams.count(stream);
}

std::string streamName(CUstream stream) {
  auto it = state().streams.find(stream);
  return it == state().streams.end() ? std::string("default")
                                     : format("S%d", it->second->id);
}

#define NEED_CONTEXT(name)                                                     \
  CHECK(currentContext, name, CUDA_ERROR_INVALID_CONTEXT, "no current context")

/// One copy of a (2D or 3D) block. Device sides are checked against the
/// allocations; host sides are trusted.
CUresult copyBlock(const char *call, const CUDA_MEMCPY3D &c) {
  size_t height = c.Height ? c.Height : 1, depth = c.Depth ? c.Depth : 1;
  size_t srcPitch = c.srcPitch ? c.srcPitch : c.WidthInBytes;
  size_t dstPitch = c.dstPitch ? c.dstPitch : c.WidthInBytes;
  size_t srcHeight = c.srcHeight ? c.srcHeight : height;
  size_t dstHeight = c.dstHeight ? c.dstHeight : height;
  CHECK(srcPitch >= c.WidthInBytes && dstPitch >= c.WidthInBytes, call,
        CUDA_ERROR_INVALID_VALUE, "a pitch is below the width %zu",
        c.WidthInBytes);
  auto base = [](CUmemorytype type, const void *host, CUdeviceptr device) {
    return type == CU_MEMORYTYPE_HOST ? reinterpret_cast<uintptr_t>(host)
                                      : static_cast<uintptr_t>(device);
  };
  uintptr_t src = base(c.srcMemoryType, c.srcHost, c.srcDevice);
  uintptr_t dst = base(c.dstMemoryType, c.dstHost, c.dstDevice);
  size_t srcFirst = c.srcXInBytes + (c.srcY + c.srcZ * srcHeight) * srcPitch;
  size_t dstFirst = c.dstXInBytes + (c.dstY + c.dstZ * dstHeight) * dstPitch;
  size_t srcSpan =
      ((depth - 1) * srcHeight + (height - 1)) * srcPitch + c.WidthInBytes;
  size_t dstSpan =
      ((depth - 1) * dstHeight + (height - 1)) * dstPitch + c.WidthInBytes;
  CHECK(c.srcMemoryType == CU_MEMORYTYPE_HOST ||
            deviceRange(src + srcFirst, srcSpan),
        call, CUDA_ERROR_INVALID_VALUE,
        "the source %s..+%zu is outside every allocation",
        pointerName(src + srcFirst).c_str(), srcSpan);
  CHECK(c.dstMemoryType == CU_MEMORYTYPE_HOST ||
            deviceRange(dst + dstFirst, dstSpan),
        call, CUDA_ERROR_INVALID_VALUE,
        "the destination %s..+%zu is outside every allocation",
        pointerName(dst + dstFirst).c_str(), dstSpan);
  for (size_t z = 0; z < depth; ++z)
    for (size_t y = 0; y < height; ++y)
      std::memmove(reinterpret_cast<void *>(dst + dstFirst +
                                            (z * dstHeight + y) * dstPitch),
                   reinterpret_cast<const void *>(
                       src + srcFirst + (z * srcHeight + y) * srcPitch),
                   c.WidthInBytes);
  ++state().operations;
  return CUDA_SUCCESS;
}

CUDA_MEMCPY3D linearCopy(CUdeviceptr dst, const void *dstHost, CUdeviceptr src,
                         const void *srcHost, size_t bytes) {
  CUDA_MEMCPY3D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = srcHost ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  c.srcHost = srcHost;
  c.srcDevice = src;
  c.dstMemoryType = dstHost ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  c.dstHost = const_cast<void *>(dstHost);
  c.dstDevice = dst;
  c.WidthInBytes = bytes;
  c.Height = c.Depth = 1;
  return c;
}

std::string side(CUmemorytype type, CUdeviceptr device) {
  return type == CU_MEMORYTYPE_HOST ? std::string("host") : pointerName(device);
}

CUresult memset2D(const char *call, const CUDA_MEMSET_NODE_PARAMS &p) {
  size_t height = p.height ? p.height : 1;
  size_t rowBytes = p.width * p.elementSize;
  size_t pitch = height > 1 ? p.pitch : rowBytes;
  CHECK(p.elementSize == 1 || p.elementSize == 2 || p.elementSize == 4, call,
        CUDA_ERROR_INVALID_VALUE, "element size %u", p.elementSize);
  CHECK(pitch >= rowBytes, call, CUDA_ERROR_INVALID_VALUE, "pitch %zu < %zu",
        pitch, rowBytes);
  CHECK(deviceRange(p.dst, (height - 1) * pitch + rowBytes), call,
        CUDA_ERROR_INVALID_VALUE, "%s..+%zu is outside every allocation",
        pointerName(p.dst).c_str(), (height - 1) * pitch + rowBytes);
  for (size_t y = 0; y < height; ++y) {
    auto *row = reinterpret_cast<unsigned char *>(p.dst + y * pitch);
    for (size_t x = 0; x < p.width; ++x)
      std::memcpy(row + x * p.elementSize, &p.value, p.elementSize);
  }
  ++state().operations;
  return CUDA_SUCCESS;
}

//--- Kernel images --------------------------------------------------------//

template <typename T> T readAt(const unsigned char *d, size_t offset) {
  T value;
  std::memcpy(&value, d + offset, sizeof value);
  return value;
}

/// Kernels of a cubin: every .text.<name> section, its parameter sizes from
/// .nv.info.<name> (EIATTR_KPARAM_INFO: ordinal at +4, size in the top 14
/// bits of the word at +8). False if the image is not a 64-bit ELF.
bool parseCubin(const unsigned char *d,
                std::map<std::string, std::vector<size_t>> &kernels) {
  if (std::memcmp(d,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      d[4] != 2)
    return false;
  uint64_t shoff = readAt<uint64_t>(d, 0x28);
  uint16_t shentsize = readAt<uint16_t>(d, 0x3a);
  uint16_t shnum = readAt<uint16_t>(d, 0x3c);
  uint16_t shstrndx = readAt<uint16_t>(d, 0x3e);
  if (shentsize != 64 || shstrndx >= shnum || shoff > (1u << 30))
    return false;
  auto section = [&](size_t i, size_t field) {
    return d + shoff + i * 64 + field;
  };
  uint64_t strOffset = readAt<uint64_t>(section(shstrndx, 0), 0x18);
  std::map<std::string, std::vector<size_t>> params;
  for (size_t i = 0; i < shnum; ++i) {
    uint32_t nameOffset = readAt<uint32_t>(section(i, 0), 0);
    std::string name(
        reinterpret_cast<const char *>(d + strOffset + nameOffset));
    uint64_t offset = readAt<uint64_t>(section(i, 0), 0x18);
    uint64_t size = readAt<uint64_t>(section(i, 0), 0x20);
    if (name.rfind(".text.", 0) == 0) {
      kernels[name.substr(6)];
    } else if (name.rfind(".nv.info.", 0) == 0) {
      std::vector<size_t> &sizes = params[name.substr(9)];
      for (uint64_t o = offset; o + 4 <= offset + size;) {
        unsigned char fmt = d[o], attr = d[o + 1];
        if (fmt == 4) { // EIFMT_SVAL: u16 size, payload
          uint16_t bytes = readAt<uint16_t>(d, o + 2);
          if (attr == 0x17 && bytes >= 12) { // EIATTR_KPARAM_INFO
            uint16_t ordinal = readAt<uint16_t>(d, o + 8);
            uint32_t word = readAt<uint32_t>(d, o + 12);
            if (sizes.size() <= ordinal)
              sizes.resize(ordinal + 1u, 0);
            sizes[ordinal] = word >> 18;
          }
          o += 4u + bytes;
        } else if (fmt >= 1 && fmt <= 3) {
          o += fmt == 1 ? 2 : 4;
        } else {
          break;
        }
      }
    }
  }
  for (auto &entry : kernels)
    entry.second = params[entry.first];
  return true;
}

size_t ptxTypeBytes(const std::string &type) {
  if (type.size() < 3)
    return 0;
  return static_cast<size_t>(std::atoi(type.c_str() + 2)) / 8;
}

/// Kernels of a PTX text: every `.entry name(.param .TYPE name[N], ...)`.
bool parsePtx(const char *text,
              std::map<std::string, std::vector<size_t>> &kernels) {
  std::string ptx(text);
  if (ptx.find(".version") == std::string::npos)
    return false;
  auto identChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '$' || c == '.';
  };
  for (size_t at = ptx.find(".entry"); at != std::string::npos;
       at = ptx.find(".entry", at + 6)) {
    size_t i = at + 6;
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i])))
      ++i;
    size_t nameStart = i;
    while (i < ptx.size() && identChar(ptx[i]))
      ++i;
    std::string name = ptx.substr(nameStart, i - nameStart);
    std::vector<size_t> &sizes = kernels[name];
    size_t open = ptx.find_first_of("({", i);
    if (open == std::string::npos || ptx[open] != '(')
      continue;
    size_t close = ptx.find(')', open);
    std::string list = ptx.substr(open + 1, close - open - 1);
    for (size_t p = list.find(".param"); p != std::string::npos;
         p = list.find(".param", p + 6)) {
      size_t end = list.find(',', p);
      std::string decl = list.substr(
          p, end == std::string::npos ? std::string::npos : end - p);
      size_t bytes = 0;
      size_t typeAt = decl.find(" .", 6);
      while (typeAt != std::string::npos) {
        size_t typeEnd = decl.find_first_of(" \t\n", typeAt + 1);
        std::string type = decl.substr(typeAt + 1, typeEnd - typeAt - 1);
        if (type != ".align" && type.size() > 1 &&
            std::isalpha(static_cast<unsigned char>(type[1])) &&
            std::isdigit(static_cast<unsigned char>(type.back())))
          bytes = ptxTypeBytes(type);
        typeAt = decl.find(" .", typeAt + 1);
      }
      size_t bracket = decl.find('[');
      if (bracket != std::string::npos)
        bytes *= static_cast<size_t>(std::atoll(decl.c_str() + bracket + 1));
      sizes.push_back(bytes);
    }
  }
  return true;
}

//--- Graphs ---------------------------------------------------------------//

Graph *findGraph(CUgraph g) {
  auto it = state().allGraphs.find(g);
  return it == state().allGraphs.end() ? nullptr : it->second;
}

std::string nodeList(const std::vector<Node *> &nodes) {
  std::string s = "[";
  for (size_t i = 0; i < nodes.size(); ++i)
    s += format("%sN%d", i ? " " : "", nodes[i]->id);
  return s + "]";
}

std::string paramText(const std::vector<unsigned char> &bytes) {
  if (bytes.size() == 8) {
    uint64_t v = readAt<uint64_t>(bytes.data(), 0);
    auto h = state().handles.find(v);
    if (h != state().handles.end())
      return format("H%d", h->second.id);
    if (findAllocation(v, 0))
      return pointerName(v);
    return format("%" PRIu64, v);
  }
  if (bytes.size() == 4)
    return format("%d", readAt<int32_t>(bytes.data(), 0));
  std::string s = "0x";
  for (unsigned char b : bytes)
    s += format("%02x", b);
  return s;
}

std::string paramsText(const std::vector<std::vector<unsigned char>> &params) {
  std::string s;
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? " " : "") + paramText(params[i]);
  return s;
}

std::string copyText(const CUDA_MEMCPY3D &c) {
  return format("%s <- %s %zu bytes",
                side(c.dstMemoryType, c.dstDevice + c.dstXInBytes).c_str(),
                side(c.srcMemoryType, c.srcDevice + c.srcXInBytes).c_str(),
                c.WidthInBytes * (c.Height ? c.Height : 1) *
                    (c.Depth ? c.Depth : 1));
}

std::string nodeText(const Node &n,
                     const std::vector<std::vector<unsigned char>> *params) {
  std::string deps = n.deps.empty() ? "" : " deps " + nodeList(n.deps);
  for (size_t i = 0; i < n.programmatic.size(); ++i)
    if (n.programmatic[i]) {
      deps += " programmatic";
      break;
    }
  switch (n.type) {
  case CU_GRAPH_NODE_TYPE_KERNEL:
    return format("N%d kernel %s grid %ux%ux%u block %ux%ux%u smem %u%s "
                  "params %s",
                  n.id, n.function->name.c_str(), n.grid[0], n.grid[1],
                  n.grid[2], n.block[0], n.block[1], n.block[2], n.shared,
                  deps.c_str(),
                  paramsText(params ? *params : n.params).c_str());
  case CU_GRAPH_NODE_TYPE_MEMCPY:
    return format("N%d memcpy %s%s", n.id, copyText(n.copy).c_str(),
                  deps.c_str());
  case CU_GRAPH_NODE_TYPE_MEMSET:
    return format("N%d memset %s value 0x%x x %zu (%u-byte elements)%s", n.id,
                  pointerName(n.set.dst).c_str(), n.set.value, n.set.width,
                  n.set.elementSize, deps.c_str());
  case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
    std::string bodies;
    for (const auto &b : n.bodies)
      bodies += format(" G%d", b->id);
    return format("N%d %s H%d size %zu bodies%s%s", n.id,
                  n.condType == CU_GRAPH_COND_TYPE_WHILE ? "WHILE" : "IF",
                  state().handles[n.handle].id, n.bodies.size(), bodies.c_str(),
                  deps.c_str());
  }
  default:
    return format("N%d type %d", n.id, static_cast<int>(n.type));
  }
}

void graphText(const Graph &g, const Exec *exec, const std::string &indent,
               std::string &out) {
  out += indent + format("G%d\n", g.id);
  for (const auto &n : g.nodes) {
    const std::vector<std::vector<unsigned char>> *params = nullptr;
    if (exec) {
      auto it = exec->params.find(n.get());
      if (it != exec->params.end())
        params = &it->second;
    }
    out += indent + "  " + nodeText(*n, params) + "\n";
    for (const auto &body : n->bodies)
      graphText(*body, exec, indent + "    ", out);
  }
}

/// Node `n` of a graph being built: deps checked, recorded, logged.
CUresult addNode(const char *call, CUgraphNode *out, CUgraph graph,
                 const CUgraphNode *deps, size_t numDeps,
                 const CUgraphEdgeData *edges, std::unique_ptr<Node> node) {
  Graph *g = findGraph(graph);
  CHECK(out && g, call, CUDA_ERROR_INVALID_VALUE, "no such graph");
  CHECK(numDeps == 0 || deps, call, CUDA_ERROR_INVALID_VALUE,
        "%zu dependencies but no array", numDeps);
  for (size_t i = 0; i < numDeps; ++i) {
    auto it = state().nodes.find(deps[i]);
    CHECK(it != state().nodes.end() && it->second->owner == g, call,
          CUDA_ERROR_INVALID_VALUE, "dependency %zu is not a node of G%d", i,
          g->id);
    node->deps.push_back(it->second);
    node->programmatic.push_back(
        edges && edges[i].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
  }
  node->id = state().nextId++;
  node->owner = g;
  Node *raw = node.get();
  g->nodes.push_back(std::move(node));
  *out = reinterpret_cast<CUgraphNode>(raw);
  state().nodes[*out] = raw;
  logLine("%s in G%d: %s", call, g->id, nodeText(*raw, nullptr).c_str());
  return CUDA_SUCCESS;
}

CUresult kernelNode(const char *call, const CUDA_KERNEL_NODE_PARAMS_v2 &p,
                    std::unique_ptr<Node> &node) {
  const Function *f = reinterpret_cast<const Function *>(p.func);
  CHECK(f && state().functions.count(f), call, CUDA_ERROR_INVALID_VALUE,
        "no such function");
  CHECK(p.gridDimX && p.gridDimY && p.gridDimZ && p.blockDimX && p.blockDimY &&
            p.blockDimZ && p.blockDimX * p.blockDimY * p.blockDimZ <= 1024,
        call, CUDA_ERROR_INVALID_VALUE, "%s: grid %ux%ux%u, block %ux%ux%u",
        f->name.c_str(), p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX,
        p.blockDimY, p.blockDimZ);
  CHECK(f->paramSizes.empty() || p.kernelParams, call, CUDA_ERROR_INVALID_VALUE,
        "%s takes %zu parameters, none given", f->name.c_str(),
        f->paramSizes.size());
  node.reset(new Node());
  node->type = CU_GRAPH_NODE_TYPE_KERNEL;
  node->function = const_cast<Function *>(f);
  unsigned grid[3] = {p.gridDimX, p.gridDimY, p.gridDimZ};
  unsigned block[3] = {p.blockDimX, p.blockDimY, p.blockDimZ};
  std::copy(grid, grid + 3, node->grid);
  std::copy(block, block + 3, node->block);
  node->shared = p.sharedMemBytes;
  for (size_t i = 0; i < f->paramSizes.size(); ++i) {
    const auto *bytes = static_cast<const unsigned char *>(p.kernelParams[i]);
    node->params.emplace_back(bytes, bytes + f->paramSizes[i]);
  }
  return CUDA_SUCCESS;
}

//--- Launches -------------------------------------------------------------//

CUresult runKernel(const char *what, const Function &f, const unsigned grid[3],
                   const unsigned block[3], unsigned shared,
                   std::vector<std::vector<unsigned char>> params) {
  State &s = state();
  ++s.operations;
  auto it = s.hostKernels.find(f.name);
  if (it == s.hostKernels.end()) {
    logLine("  %s kernel %s skipped (no host function)", what, f.name.c_str());
    return CUDA_SUCCESS;
  }
  std::vector<void *> pointers;
  for (auto &p : params)
    pointers.push_back(p.data());
  cgrt_stub_launch launch;
  launch.name = f.name.c_str();
  std::copy(grid, grid + 3, launch.grid);
  std::copy(block, block + 3, launch.block);
  launch.shared_bytes = shared;
  launch.num_params = params.size();
  launch.params = pointers.data();
  logLine("  %s kernel %s ran %s", what, f.name.c_str(),
          paramsText(params).c_str());
  it->second(&launch);
  return CUDA_SUCCESS;
}

CUresult runGraph(const Graph &g, Exec &exec, int depth) {
  for (const auto &n : g.nodes) {
    std::string what = format("N%d", n->id);
    CUresult result = CUDA_SUCCESS;
    switch (n->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      result = runKernel(what.c_str(), *n->function, n->grid, n->block,
                         n->shared, exec.params[n.get()]);
      break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      logLine("  N%d memcpy %s", n->id, copyText(n->copy).c_str());
      result = copyBlock("cuGraphLaunch (memcpy node)", n->copy);
      break;
    case CU_GRAPH_NODE_TYPE_MEMSET:
      logLine("  N%d memset %s", n->id, pointerName(n->set.dst).c_str());
      result = memset2D("cuGraphLaunch (memset node)", n->set);
      break;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
      int handle = state().handles[n->handle].id;
      if (n->condType == CU_GRAPH_COND_TYPE_IF) {
        unsigned value = exec.handleValues[n->handle];
        logLine("  N%d IF H%d = %u: %s", n->id, handle, value,
                value ? "body 0"
                      : (n->bodies.size() > 1 ? "body 1" : "nothing"));
        if (value)
          result = runGraph(*n->bodies[0], exec, depth + 1);
        else if (n->bodies.size() > 1)
          result = runGraph(*n->bodies[1], exec, depth + 1);
        break;
      }
      unsigned iterations = 0;
      while (result == CUDA_SUCCESS && exec.handleValues[n->handle]) {
        if (++iterations > 100000)
          return fail("cuGraphLaunch", CUDA_ERROR_LAUNCH_FAILED,
                      format("WHILE H%d ran 100000 iterations", handle));
        logLine("  N%d WHILE H%d: iteration %u", n->id, handle, iterations);
        result = runGraph(*n->bodies[0], exec, depth + 1);
      }
      logLine("  N%d WHILE H%d: done after %u iterations", n->id, handle,
              iterations);
      break;
    }
    default:
      break;
    }
    if (result != CUDA_SUCCESS)
      return result;
  }
  return CUDA_SUCCESS;
}

void collectKernelParams(const Graph &g, Exec &exec) {
  for (const auto &n : g.nodes) {
    if (n->type == CU_GRAPH_NODE_TYPE_KERNEL)
      exec.params[n.get()] = n->params;
    for (const auto &body : n->bodies)
      collectKernelParams(*body, exec);
  }
}

/// Whether `node` is in `g` or a body below it; `inBody` says which.
bool inGraphTree(const Graph &g, const Node *node, bool *inBody) {
  for (const auto &n : g.nodes) {
    if (n.get() == node)
      return true;
    for (const auto &body : n->bodies)
      if (inGraphTree(*body, node, inBody)) {
        *inBody = true;
        return true;
      }
  }
  return false;
}

void writeDot(const Graph &g, std::ofstream &out) {
  for (const auto &n : g.nodes) {
    out << "  n" << n->id << " [label=\"" << nodeText(*n, nullptr) << "\"];\n";
    for (const Node *d : n->deps)
      out << "  n" << d->id << " -> n" << n->id << ";\n";
    for (const auto &body : n->bodies) {
      out << "  subgraph cluster_g" << body->id << " {\n  label=\"G" << body->id
          << "\";\n";
      writeDot(*body, out);
      out << "  }\n";
    }
  }
}

} // namespace

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
  std::unique_ptr<Stream> s(new Stream{state().nextId++});
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

//=== Observation ===========================================================//

STUB_EXPORT int cgrt_stub_abi(void) { return CGRT_STUB_ABI; }

STUB_EXPORT void cgrt_stub_reset(void) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  configure();
  state().log.clear();
  state().calls.clear();
  state().faults.clear();
}

STUB_EXPORT const char *cgrt_stub_log(void) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().scratch = state().log;
  return state().scratch.c_str();
}

STUB_EXPORT unsigned long cgrt_stub_calls(const char *call) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  auto it = state().calls.find(call ? call : "");
  return it == state().calls.end() ? 0 : it->second;
}

STUB_EXPORT void cgrt_stub_fail(const char *call, unsigned skip,
                                CUresult code) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  configure();
  state().faults.push_back(Fault{call ? call : "", skip, code});
}

STUB_EXPORT size_t cgrt_stub_pending_faults(void) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  return state().faults.size();
}

STUB_EXPORT long long cgrt_stub_live(const char *what) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  State &s = state();
  std::string w = what ? what : "";
  if (w == "allocations")
    return static_cast<long long>(s.allocations.size());
  if (w == "bytes")
    return static_cast<long long>(s.liveBytes);
  if (w == "modules")
    return static_cast<long long>(s.modules.size());
  if (w == "streams")
    return static_cast<long long>(s.streams.size());
  if (w == "events")
    return static_cast<long long>(s.events.size());
  if (w == "graphs")
    return static_cast<long long>(s.graphs.size());
  if (w == "execs")
    return static_cast<long long>(s.execs.size());
  if (w == "retains") {
    long long retains = 0;
    for (const auto &c : s.contexts)
      retains += c->retains;
    return retains;
  }
  return -1;
}

STUB_EXPORT void cgrt_stub_set_kernel(const char *name,
                                      cgrt_stub_kernel_fn fn) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  if (fn)
    state().hostKernels[name] = fn;
  else
    state().hostKernels.erase(name);
}

STUB_EXPORT void cgrt_stub_set_conditional(CUgraphConditionalHandle handle,
                                           unsigned value) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  Exec *e = state().running;
  auto h = state().handles.find(handle);
  if (!e || h == state().handles.end()) {
    logLine("cgrt_stub_set_conditional: no launch is running or no handle "
            "%llu",
            static_cast<unsigned long long>(handle));
    return;
  }
  logLine("    set H%d = %u", h->second.id, value);
  e->handleValues[handle] = value;
}

STUB_EXPORT const char *cgrt_stub_pointer_name(CUdeviceptr pointer) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().scratch = pointerName(pointer);
  return state().scratch.c_str();
}

STUB_EXPORT const char *cgrt_stub_graph_text(CUgraph graph) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  Graph *g = findGraph(graph);
  if (!g)
    return nullptr;
  state().scratch.clear();
  graphText(*g, nullptr, "", state().scratch);
  return state().scratch.c_str();
}

STUB_EXPORT const char *cgrt_stub_exec_text(CUgraphExec exec) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  auto it = state().execs.find(exec);
  if (it == state().execs.end())
    return nullptr;
  state().scratch.clear();
  graphText(*it->second->graph, it->second.get(), "", state().scratch);
  return state().scratch.c_str();
}

STUB_EXPORT const char *cgrt_stub_graph_name(CUgraph graph) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  Graph *g = findGraph(graph);
  if (!g)
    return nullptr;
  state().scratch = format("G%d", g->id);
  return state().scratch.c_str();
}

STUB_EXPORT const char *cgrt_stub_exec_name(CUgraphExec exec) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  auto it = state().execs.find(exec);
  if (it == state().execs.end())
    return nullptr;
  state().scratch = format("E%d", it->second->id);
  return state().scratch.c_str();
}

} // extern "C"
