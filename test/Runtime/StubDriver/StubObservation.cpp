//===- StubObservation.cpp - what tests ask the stub driver ---------------===//
//
// The cgrt_stub_* API of StubDriver.h: the log, call counts, live objects,
// graphs as built and instantiated, and faults armed from a test.
//
//===----------------------------------------------------------------------===//

#include "StubState.h"

using namespace cgrt_stub;

extern "C" {

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
