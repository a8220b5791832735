//===- ZeroCopy.cpp - kernels that read and write the caller's buffers ----===//
//
// A run normally copies every input into its static arena slot and every
// output out of its slot. When the caller passes device buffers, the kernel
// nodes that touch those slots can instead take the caller's pointers
// (cuGraphExecKernelNodeSetParams on the instantiated graph): no copies, and
// no update at all while the caller keeps passing the same buffers. Each run
// rebinds from scratch, so a buffer freed after a run is never used again.
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

/// Whether a kernel of the active graph set has a pointer into the slot.
bool someKernelTouches(const cgrt_model_t &m, CUdeviceptr slot,
                       uint64_t bytes) {
  for (const KernelNode &node : m.kernelNodes)
    if (runsGraph(m.active, node.graph))
      for (CUdeviceptr p : node.built)
        if (inSlot(p, slot, bytes))
          return true;
  return false;
}

bool overlapsAny(const cgrt_io_desc &d, const cgrt_io_desc *others,
                 size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (others[i].arena_offset < d.arena_offset + d.bytes &&
        d.arena_offset < others[i].arena_offset + others[i].bytes)
      return true;
  return false;
}

} // namespace

IoBinding cgrt::chooseIoBinding(const cgrt_model_t &m,
                                const cgrt_tensor *inputs,
                                const cgrt_tensor *outputs,
                                size_t numOutputs) {
  const cgrt_package &p = *m.package;
  IoBinding binding;
  binding.inputs.assign(p.num_inputs, 0);
  binding.outputs.assign(numOutputs, 0);
  if (!m.zeroCopy || !p.zero_copy_io || m.kernelNodes.empty() ||
      m.active.padded() || hasEagerStep(m.active))
    return binding;
  // An output that is an input itself (an identity) is read from the
  // input's slot: neither may move to a caller's buffer.
  for (size_t i = 0; i < p.num_inputs; ++i)
    if (!overlapsAny(m.active.inputs[i], m.active.outputs, numOutputs))
      binding.inputs[i] = usableBuffer(inputs[i], m.active.inputs[i]);
  for (size_t i = 0; i < numOutputs; ++i) {
    const cgrt_io_desc &d = m.active.outputs[i];
    CUdeviceptr buffer = usableBuffer(outputs[i], d);
    if (buffer && !overlapsAny(d, m.active.inputs, p.num_inputs) &&
        someKernelTouches(m, m.arena + d.arena_offset, d.bytes))
      binding.outputs[i] = buffer;
  }
  return binding;
}

namespace {

/// Where pointer `p` goes under `binding`: into the caller's buffer when it
/// lies in a bound slot.
CUdeviceptr rebind(const cgrt_model_t &m, const IoBinding &binding,
                   CUdeviceptr p) {
  auto bound = [&](const cgrt_io_desc *descs,
                   const std::vector<CUdeviceptr> &buffers) -> CUdeviceptr {
    for (size_t i = 0; i < buffers.size(); ++i) {
      CUdeviceptr slot = m.arena + descs[i].arena_offset;
      if (buffers[i] && inSlot(p, slot, descs[i].bytes))
        return buffers[i] + (p - slot);
    }
    return 0;
  };
  if (CUdeviceptr moved = bound(m.active.inputs, binding.inputs))
    return moved;
  if (CUdeviceptr moved = bound(m.active.outputs, binding.outputs))
    return moved;
  return p;
}

} // namespace

cgrt_status cgrt::applyIoBinding(cgrt_model_t &m, const IoBinding &binding) {
  const Driver &d = *m.driver;
  std::vector<CUdeviceptr> &wanted = m.bindingWanted;
  std::vector<void *> &params = m.bindingParams;
  for (size_t n = 0; n < m.kernelNodes.size(); ++n) {
    KernelNode &node = m.kernelNodes[n];
    if (!runsGraph(m.active, node.graph))
      continue;
    wanted.resize(node.built.size());
    for (size_t a = 0; a < node.built.size(); ++a)
      wanted[a] = rebind(m, binding, node.built[a]);
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
