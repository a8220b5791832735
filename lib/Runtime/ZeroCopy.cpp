//===- ZeroCopy.cpp - kernels that read and write the caller's buffers ----===//
//
// A run normally copies every input into its static arena slot and every
// output out of its slot. When the caller passes device buffers, the kernel
// nodes that touch those slots can instead take the caller's pointers
// (cuGraphExecKernelNodeSetParams on the instantiated graph): no copies, and
// no update at all while the caller keeps passing the same buffers. Every
// run binds its own buffers before it launches, so a buffer freed after a
// run is never used again. Where the slots' pointers are among the nodes'
// arguments is found once per graph set (a BindingPlan), so a run visits
// only those pointers, and updates none while its buffers are bound already.
// A caller that alternates between two sets of buffers (cgc.Model's output
// pool, while the caller keeps the last result) gets a second instance of
// the graphs, one per set: each run then finds its binding in place.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "Status.h"

#include <algorithm>
#include <cstdio>

using namespace cgrt;

void cgrt::recordKernelNode(void *model, CUgraphNode node,
                            const CUDA_KERNEL_NODE_PARAMS *params,
                            size_t numParams) {
  auto &m = *static_cast<cgrt_model_t *>(model);
  KernelNode record;
  record.graph = m.buildingGraph;
  record.node = node;
  record.params = *params;
  record.params.kernelParams = nullptr;
  record.params.extra = nullptr;
  for (size_t i = 0; i < numParams; ++i)
    record.built.push_back(
        *static_cast<CUdeviceptr *>(params->kernelParams[i]));
  m.kernelNodes.push_back(std::move(record));
}

namespace {

/// Slots and caller buffers are aligned alike, so vectorized kernels stay
/// valid.
constexpr uint64_t kAlignment = 256;

bool hasEagerStep(const GraphSet &set) {
  for (size_t i = 0; i < set.numSteps; ++i)
    if (set.steps[i].kind == CGRT_STEP_EAGER)
      return true;
  return false;
}

bool runsGraph(const GraphSet &set, size_t graph) {
  for (size_t i = 0; i < set.numSteps; ++i)
    if (set.steps[i].kind == CGRT_STEP_GRAPH &&
        static_cast<size_t>(set.steps[i].index) == graph)
      return true;
  return false;
}

bool hasStaticDims(const cgrt_io_desc &d) {
  for (int32_t k = 0; k < d.rank; ++k)
    if (d.dims[k] < 0)
      return false;
  return true;
}

/// The caller's buffer if it can stand in for slot `d`, else 0.
CUdeviceptr usableBuffer(const cgrt_tensor &t, const cgrt_io_desc &d) {
  auto ptr = reinterpret_cast<CUdeviceptr>(t.data);
  if (t.memory != CGRT_MEMORY_DEVICE || !ptr || d.bytes == 0 ||
      ptr % kAlignment != 0 || t.bytes < d.bytes || !hasStaticDims(d))
    return 0;
  return ptr;
}

bool inSlot(CUdeviceptr p, CUdeviceptr slot, uint64_t bytes) {
  return p >= slot && p < slot + bytes;
}

bool overlapsAny(const cgrt_io_desc &d, const cgrt_io_desc *others,
                 size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (others[i].arena_offset < d.arena_offset + d.bytes &&
        d.arena_offset < others[i].arena_offset + others[i].bytes)
      return true;
  return false;
}

/// Every pointer into an I/O slot among the kernel nodes of `set`, in the
/// order a rebinding consults them: per pointer the inputs' slots, then the
/// outputs'.
BindingPlan makeBindingPlan(const cgrt_model_t &m, const GraphSet &set) {
  const cgrt_package &p = *m.package;
  BindingPlan plan;
  plan.inputs = set.inputs;
  plan.steps = set.steps;
  plan.outputWritten.assign(p.num_outputs, false);
  for (size_t n = 0; n < m.kernelNodes.size(); ++n) {
    const KernelNode &node = m.kernelNodes[n];
    if (!runsGraph(set, node.graph))
      continue;
    BindingPlan::Node uses{n, {}};
    for (size_t a = 0; a < node.built.size(); ++a) {
      CUdeviceptr ptr = node.built[a];
      auto note = [&](const cgrt_io_desc *descs, size_t count, bool input) {
        for (size_t i = 0; i < count; ++i) {
          CUdeviceptr slot = m.arena + descs[i].arena_offset;
          if (!inSlot(ptr, slot, descs[i].bytes))
            continue;
          uses.pointers.push_back({a, input, i, ptr - slot});
          if (!input)
            plan.outputWritten[i] = true;
        }
      };
      note(set.inputs, p.num_inputs, true);
      note(set.outputs, p.num_outputs, false);
    }
    if (!uses.pointers.empty())
      plan.nodes.push_back(std::move(uses));
  }
  return plan;
}

/// The plan of the active graph set, made on its first run.
BindingPlan &bindingPlanFor(cgrt_model_t &m) {
  for (BindingPlan &plan : m.bindingPlans)
    if (plan.inputs == m.active.inputs && plan.steps == m.active.steps)
      return plan;
  m.bindingPlans.push_back(makeBindingPlan(m, m.active));
  return m.bindingPlans.back();
}

} // namespace

void cgrt::chooseIoBinding(cgrt_model_t &m, const cgrt_tensor *inputs,
                           const cgrt_tensor *outputs, size_t numOutputs,
                           IoBinding &binding) {
  const cgrt_package &p = *m.package;
  binding.inputs.assign(p.num_inputs, 0);
  binding.outputs.assign(numOutputs, 0);
  if (!m.zeroCopy || !p.zero_copy_io || m.kernelNodes.empty() ||
      m.active.padded() || hasEagerStep(m.active))
    return;
  const BindingPlan &plan = bindingPlanFor(m);
  // An output that is an input itself (an identity) is read from the
  // input's slot: neither may move to a caller's buffer.
  for (size_t i = 0; i < p.num_inputs; ++i)
    if (!overlapsAny(m.active.inputs[i], m.active.outputs, numOutputs))
      binding.inputs[i] = usableBuffer(inputs[i], m.active.inputs[i]);
  for (size_t i = 0; i < numOutputs; ++i) {
    const cgrt_io_desc &d = m.active.outputs[i];
    CUdeviceptr buffer = usableBuffer(outputs[i], d);
    if (buffer && !overlapsAny(d, m.active.inputs, p.num_inputs) &&
        plan.outputWritten[i])
      binding.outputs[i] = buffer;
  }
}

namespace {

/// Exec sets a model keeps: two serve a caller alternating between two
/// sets of buffers; more would cost an instantiation per set for callers
/// that rarely repeat a binding.
constexpr size_t kExecSets = 2;

/// The arguments node `uses.node` should have under `binding`: a pointer
/// goes to the first bound tensor whose slot holds it (inputs first);
/// pointers of unbound slots stay in the arena.
void wantedArguments(cgrt_model_t &m, const BindingPlan::Node &uses,
                     const IoBinding &binding,
                     std::vector<CUdeviceptr> &wanted) {
  wanted = m.kernelNodes[uses.node].built;
  std::vector<bool> &moved = m.bindingMoved;
  moved.assign(wanted.size(), false);
  for (const BindingPlan::Pointer &use : uses.pointers) {
    CUdeviceptr buffer =
        use.input ? binding.inputs[use.slot] : binding.outputs[use.slot];
    if (!buffer || moved[use.arg])
      continue;
    wanted[use.arg] = buffer + use.offset;
    moved[use.arg] = true;
  }
}

/// Whether the nodes of `set` point where `binding` says.
bool holds(cgrt_model_t &m, const ExecSet &set, const BindingPlan &plan,
           const IoBinding &binding) {
  // The common case, the buffers this set was last bound to: a compare of
  // the caller's pointers (a few), not of every bound node's arguments.
  if (set.bound && set.appliedPlan == &plan &&
      set.applied.inputs == binding.inputs &&
      set.applied.outputs == binding.outputs)
    return true;
  for (const BindingPlan::Node &uses : plan.nodes) {
    wantedArguments(m, uses, binding, m.bindingWanted);
    if (m.bindingWanted != set.current[uses.node])
      return false;
  }
  return true;
}

/// Instantiates graph `index` into `set`.
cgrt_status instantiate(cgrt_model_t &m, ExecSet &set, size_t index) {
  const Driver &d = *m.driver;
  CUresult result = CGRT_CU(d, cuGraphInstantiateWithFlags, &set.execs[index],
                            m.graphs[index], 0ull);
  if (result == CUDA_SUCCESS)
    return nullptr;
  set.execs[index] = nullptr;
  return driverError(d, result, "cuGraphInstantiateWithFlags",
                     "a second exec of " + m.graphLabel(index) + " of " +
                         m.label + " (for a second set of zero-copy buffers)");
}

/// A second exec set, with an exec of every graph (every bucket's: a run
/// may pick either set), or null when it cannot be made (the first set
/// then serves every binding).
ExecSet *makeSpareExecSet(cgrt_model_t &m) {
  ExecSet spare;
  spare.execs.assign(m.graphs.size(), nullptr);
  for (const KernelNode &node : m.kernelNodes)
    spare.current.push_back(node.built);
  m.execSets.push_back(std::move(spare));
  ExecSet &set = m.execSets.back();
  for (size_t i = 0; i < m.graphs.size(); ++i)
    if (cgrt_status s = instantiate(m, set, i)) {
      // Only a cost: the first set is rebound instead, as with one set.
      if (verbose())
        std::fprintf(stderr, "cgrt: %s\n", cgrt_status_get_message(s));
      cgrt_status_free(s);
      for (CUgraphExec exec : set.execs)
        if (exec)
          CGRT_CU(*m.driver, cuGraphExecDestroy, exec);
      m.execSets.pop_back();
      m.spareExecsFailed = true;
      return nullptr;
    }
  return &m.execSets.back();
}

/// Notes `binding` as what `set` now holds in full (under `plan`). The
/// vectors keep their capacity, so a run with as many tensors as the last
/// copies a few pointers and allocates nothing.
void recordApplied(ExecSet &set, const BindingPlan &plan,
                   const IoBinding &binding) {
  set.applied = binding;
  set.appliedPlan = &plan;
}

/// The exec set a run with `binding` should launch: one that holds it
/// (`*held` set), else a second set where the only one holds another run's
/// binding (a caller alternating between two sets of buffers, the last
/// run's still in use), else the least recently run one.
ExecSet &chooseExecSet(cgrt_model_t &m, const BindingPlan &plan,
                       const IoBinding &binding, bool *held) {
  *held = false;
  for (ExecSet &set : m.execSets)
    if (holds(m, set, plan, binding)) {
      *held = true;
      return set;
    }
  bool allBound = true;
  for (const ExecSet &set : m.execSets)
    allBound = allBound && set.bound;
  if (m.execSets.size() < kExecSets && !m.spareExecsFailed && allBound)
    if (ExecSet *spare = makeSpareExecSet(m))
      return *spare;
  ExecSet *oldest = &m.execSets[0];
  for (ExecSet &set : m.execSets)
    if (set.lastRun < oldest->lastRun)
      oldest = &set;
  return *oldest;
}

} // namespace

cgrt_status cgrt::applyIoBinding(cgrt_model_t &m, const IoBinding &binding) {
  BindingPlan &plan = bindingPlanFor(m);
  bool held = false;
  ExecSet &set = chooseExecSet(m, plan, binding, &held);
  m.runExecSet = static_cast<size_t>(&set - m.execSets.data());
  set.lastRun = ++m.runs;
  // A set that holds the binding has it in full; one being rebound has it
  // once the loop below completes.
  set.bound = held;
  // The common case (the same buffers as an earlier run): holds() compared
  // them already, nothing to update.
  if (held) {
    recordApplied(set, plan, binding);
    return nullptr;
  }
  const Driver &d = *m.driver;
  std::vector<CUdeviceptr> &wanted = m.bindingWanted;
  std::vector<void *> &params = m.bindingParams;
  for (const BindingPlan::Node &uses : plan.nodes) {
    KernelNode &node = m.kernelNodes[uses.node];
    std::vector<CUdeviceptr> &current = set.current[uses.node];
    wantedArguments(m, uses, binding, wanted);
    if (wanted == current)
      continue;
    params.resize(wanted.size());
    for (size_t a = 0; a < wanted.size(); ++a)
      params[a] = &wanted[a];
    CUDA_KERNEL_NODE_PARAMS update = node.params;
    update.kernelParams = params.data();
    CUresult result = CGRT_CU(d, cuGraphExecKernelNodeSetParams,
                              set.execs[node.graph], node.node, &update);
    if (result != CUDA_SUCCESS) {
      // The exec may hold either binding now; force an update next time.
      current.assign(current.size(), 0);
      return driverError(d, result, "cuGraphExecKernelNodeSetParams",
                         formatString("rebinding a kernel node of %s to the "
                                      "caller's buffers (zero-copy I/O)",
                                      m.graphLabel(node.graph).c_str()));
    }
    current = wanted;
  }
  set.bound = true;
  recordApplied(set, plan, binding);
  return nullptr;
}

extern "C" {

void cgrt_model_set_zero_copy(cgrt_model *model, int enabled) {
  if (!model)
    return;
  std::lock_guard<std::mutex> lock(model->mutex);
  model->zeroCopy = enabled != 0;
}

} // extern "C"
