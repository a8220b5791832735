//===- ZeroCopy.cpp - kernels that read and write the caller's buffers ----===//
//
// A run normally copies every input into its static arena slot and every
// output out of its slot. When the caller passes device buffers, the kernel
// nodes that touch those slots can instead take the caller's pointers
// (cuGraphExecKernelNodeSetParams on the instantiated graph): no copies, and
// no update at all while the caller keeps passing the same buffers. Every
// run binds its own buffers before it launches, so a buffer freed after a
// run is never used again. Where the slots' pointers are among the nodes'
// arguments is found once per graph set (a BindingPlan), so a run costs a
// comparison with the last binding, and a changed binding visits only
// those pointers.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "Status.h"

#include <algorithm>

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
    record.built.push_back(*static_cast<CUdeviceptr *>(params->kernelParams[i]));
  record.current = record.built;
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

cgrt_status cgrt::applyIoBinding(cgrt_model_t &m, const IoBinding &binding) {
  BindingPlan &plan = bindingPlanFor(m);
  // The graphs have this binding already (the common case: a caller that
  // passes the same buffers every run).
  if (m.appliedPlan == &plan && m.appliedBinding.inputs == binding.inputs &&
      m.appliedBinding.outputs == binding.outputs)
    return nullptr;
  m.appliedPlan = nullptr;
  const Driver &d = *m.driver;
  std::vector<CUdeviceptr> &wanted = m.bindingWanted;
  std::vector<void *> &params = m.bindingParams;
  for (const BindingPlan::Node &uses : plan.nodes) {
    KernelNode &node = m.kernelNodes[uses.node];
    wanted = node.built;
    // A pointer goes to the first bound tensor whose slot holds it
    // (inputs first); pointers of unbound slots stay in the arena.
    std::vector<bool> &moved = m.bindingMoved;
    moved.assign(wanted.size(), false);
    for (const BindingPlan::Pointer &use : uses.pointers) {
      CUdeviceptr buffer = use.input ? binding.inputs[use.slot]
                                     : binding.outputs[use.slot];
      if (!buffer || moved[use.arg])
        continue;
      wanted[use.arg] = buffer + use.offset;
      moved[use.arg] = true;
    }
    if (wanted == node.current)
      continue;
    params.resize(wanted.size());
    for (size_t a = 0; a < wanted.size(); ++a)
      params[a] = &wanted[a];
    CUDA_KERNEL_NODE_PARAMS update = node.params;
    update.kernelParams = params.data();
    CUresult result = CGRT_CU(d, cuGraphExecKernelNodeSetParams,
                              m.execs[node.graph], node.node, &update);
    if (result != CUDA_SUCCESS) {
      // The exec may hold either binding now; force an update next time.
      node.current.assign(node.current.size(), 0);
      return driverError(d, result, "cuGraphExecKernelNodeSetParams",
                         formatString("rebinding a kernel node of %s to the "
                                      "caller's buffers (zero-copy I/O)",
                                      m.graphLabel(node.graph).c_str()));
    }
    node.current = wanted;
  }
  m.appliedPlan = &plan;
  m.appliedBinding.inputs = binding.inputs;
  m.appliedBinding.outputs = binding.outputs;
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
