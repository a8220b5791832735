//===- StubState.cpp - the stub driver's state and its helpers -----------===//
//
// The state every entry point works on, the log, faults, and what the
// entry points share: memory ranges, copies, kernel images, graph text,
// launches (StubState.h).
//
//===----------------------------------------------------------------------===//

#include "StubState.h"

#include <unistd.h>

namespace cgrt_stub {

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
  if (const char *path = std::getenv("CGRT_STUB_LOG")) {
    // %p: this process's id, so that ranks run as processes log apart.
    s.logPath = path;
    if (size_t at = s.logPath.find("%p"); at != std::string::npos)
      s.logPath.replace(at, 2, std::to_string(::getpid()));
  }
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
  case CU_GRAPH_NODE_TYPE_HOST:
    return format("N%d host function%s", n.id, deps.c_str());
  case CU_GRAPH_NODE_TYPE_GRAPH:
    return format("N%d child graph G%d (%zu nodes)%s", n.id, n.child->id,
                  n.child->nodes.size(), deps.c_str());
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
    case CU_GRAPH_NODE_TYPE_HOST:
      logLine("  N%d host function", n->id);
      n->hostFn(n->hostData);
      break;
    case CU_GRAPH_NODE_TYPE_GRAPH:
      logLine("  N%d child graph G%d", n->id, n->child->id);
      result = runGraph(*n->child, exec, depth + 1);
      break;
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

} // namespace cgrt_stub
