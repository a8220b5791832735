//===- Run.cpp - cgrt_model_run and cgrt_model_benchmark --------*- C++ -*-===//

#include "Model.h"

#include "DType.h"
#include "Status.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>

using namespace cgrt;

namespace {

/// What a caller's tensor must be: the slot, with the bucketed dim (at
/// `axis`, when not -1) at its run-time size when the run is padded. (A
/// copy on the stack: this runs for every tensor of every call.)
cgrt_io_desc expectedTensor(const cgrt_io_desc &slot, int32_t axis,
                            int64_t used) {
  cgrt_io_desc d = slot;
  if (axis >= 0 && axis < d.rank) {
    d.dims[axis] = used;
    tensorBytes(d.dtype, d.rank, d.dims, &d.bytes);
  }
  return d;
}

} // namespace

cgrt_status cgrt::validateTensor(const char *api, const char *kind,
                                 size_t index, const cgrt_io_desc &slot,
                                 const cgrt_tensor &t, int32_t axis,
                                 int64_t used, bool checkDims) {
  cgrt_io_desc d = expectedTensor(slot, axis, used);
  // The messages' parts are formatted only for a failure: this runs for
  // every tensor of every call, where a valid call should cost no string.
  auto who = [&] {
    return formatString("%s: %s %zu '%s'", api, kind, index, d.name);
  };
  auto expected = [&] {
    return dtypeName(d.dtype) + " " + shapeString(d.rank, d.dims);
  };
  if (enumValue(t.dtype) != d.dtype)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: dtype is %s, the model expects %s", who().c_str(),
                      dtypeName(enumValue(t.dtype)).c_str(),
                      expected().c_str());
  if (t.rank != d.rank)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: rank is %d, the model expects %s", who().c_str(),
                      static_cast<int>(t.rank), expected().c_str());
  for (int32_t i = 0; checkDims && i < d.rank; ++i)
    if (d.dims[i] >= 0 && t.dims[i] != d.dims[i]) // -1: data-dependent
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "%s: shape is %s, the model expects %s (dim %d "
                        "differs)",
                        who().c_str(), shapeString(t.rank, t.dims).c_str(),
                        expected().c_str(), static_cast<int>(i));
  int memory = enumValue(t.memory);
  if (memory != CGRT_MEMORY_HOST && memory != CGRT_MEMORY_DEVICE)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: memory is %d, neither CGRT_MEMORY_HOST nor "
                      "CGRT_MEMORY_DEVICE",
                      who().c_str(), memory);
  if (d.bytes == 0)
    return nullptr;
  if (!t.data)
    return makeStatus(CGRT_INVALID_ARGUMENT, "%s: data is NULL",
                      who().c_str());
  if (t.bytes < d.bytes)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: the buffer holds %zu bytes, %s needs %" PRIu64,
                      who().c_str(), t.bytes, expected().c_str(), d.bytes);
  return nullptr;
}

namespace {

/// The bucketed dim's axis in input or output `index` when the active run
/// is padded; -1 otherwise.
int32_t paddedAxis(const cgrt_model_t &m, bool input, size_t index) {
  if (!m.active.padded())
    return -1;
  const int32_t *axes = input ? m.package->input_bucket_axes
                              : m.package->output_bucket_axes;
  return axes ? axes[index] : -1;
}

/// Checks the counts, chooses the graph set (a shape bucket) and checks
/// every tensor against it. Call with the model's mutex held.
cgrt_status validateAll(const char *api, cgrt_model_t *m,
                        const cgrt_tensor *inputs,
                        size_t numInputs, cgrt_tensor *outputs,
                        size_t numOutputs) {
  const cgrt_package &p = *m->package;
  if (numInputs != p.num_inputs)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: %zu inputs given, %s has %zu", api, numInputs, m->label.c_str(), p.num_inputs);
  if (numOutputs != p.num_outputs)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: %zu outputs given, %s has %zu", api, numOutputs, m->label.c_str(), p.num_outputs);
  if (numInputs > 0 && !inputs)
    return makeStatus(CGRT_INVALID_ARGUMENT, "%s: inputs is NULL", api);
  if (numOutputs > 0 && !outputs)
    return makeStatus(CGRT_INVALID_ARGUMENT, "%s: outputs is NULL", api);
  if (cgrt_status s = selectGraphSet(*m, inputs))
    return s;
  const GraphSet &g = m->active;
  for (size_t i = 0; i < numInputs; ++i)
    if (cgrt_status s = validateTensor(api, "input", i, g.inputs[i], inputs[i],
                                       paddedAxis(*m, true, i), g.used))
      return s;
  // With shape buckets the caller cannot know the output dims before the
  // bucket is chosen: any buffer large enough will do, the run writes them.
  bool checkOutputDims = p.num_buckets == 0;
  for (size_t i = 0; i < numOutputs; ++i)
    if (cgrt_status s =
            validateTensor(api, "output", i, g.outputs[i], outputs[i],
                           paddedAxis(*m, false, i), g.used, checkOutputDims))
      return s;
  return checkLabels(api, *m, inputs);
}

/// How a tensor whose bucketed dim is `used` lies in a slot where it is
/// `full`: `rows` runs of `usedBytes`, `fullBytes` apart in the slot.
struct PaddedLayout {
  size_t rows = 1, usedBytes = 0, fullBytes = 0;
};

PaddedLayout paddedLayout(const cgrt_io_desc &d, int32_t axis, int64_t used) {
  PaddedLayout layout;
  size_t inner = cgrt_dtype_size(d.dtype);
  for (int32_t k = axis + 1; k < d.rank; ++k)
    inner *= static_cast<size_t>(d.dims[k]);
  for (int32_t k = 0; k < axis; ++k)
    layout.rows *= static_cast<size_t>(d.dims[k]);
  layout.usedBytes = inner * static_cast<size_t>(used);
  layout.fullBytes = inner * static_cast<size_t>(d.dims[axis]);
  return layout;
}

/// Enqueues a copy between a caller's tensor (`user`) and a padded slot.
CUresult copyPadded(const Driver &d, CUstream stream, const PaddedLayout &l,
                    CUdeviceptr slot, void *user, bool userOnDevice,
                    bool toSlot) {
  CUDA_MEMCPY2D copy;
  std::memset(&copy, 0, sizeof copy);
  CUmemorytype userType =
      userOnDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  auto setUser = [&](CUmemorytype &type, const void *&host,
                     CUdeviceptr &device, size_t &pitch) {
    type = userType;
    host = user;
    device = reinterpret_cast<CUdeviceptr>(user);
    pitch = l.usedBytes;
  };
  auto setSlot = [&](CUmemorytype &type, CUdeviceptr &device, size_t &pitch) {
    type = CU_MEMORYTYPE_DEVICE;
    device = slot;
    pitch = l.fullBytes;
  };
  if (toSlot) {
    setUser(copy.srcMemoryType, copy.srcHost, copy.srcDevice, copy.srcPitch);
    setSlot(copy.dstMemoryType, copy.dstDevice, copy.dstPitch);
  } else {
    setSlot(copy.srcMemoryType, copy.srcDevice, copy.srcPitch);
    const void *host = nullptr;
    setUser(copy.dstMemoryType, host, copy.dstDevice, copy.dstPitch);
    copy.dstHost = user;
  }
  copy.WidthInBytes = l.usedBytes;
  copy.Height = l.rows;
  return CGRT_CU(d, cuMemcpy2DAsync, &copy, stream);
}

/// Enqueues the copy of `input` into slot `index`.
cgrt_status copyInput(cgrt_model_t &m, size_t index, CUdeviceptr source,
                      const void *hostSource, bool fromDevice) {
  const Driver &d = *m.driver;
  const cgrt_io_desc &desc = m.active.inputs[index];
  if (desc.bytes == 0)
    return nullptr;
  CUdeviceptr slot = m.arena + desc.arena_offset;
  int32_t axis = paddedAxis(m, true, index);
  CUresult result;
  if (axis >= 0) {
    // The rows past the caller's are zeros, never another run's data.
    result = CGRT_CU(d, cuMemsetD8Async, slot, static_cast<unsigned char>(0),
                     static_cast<size_t>(desc.bytes), m.runStream);
    if (result == CUDA_SUCCESS)
      result = copyPadded(
          d, m.runStream, paddedLayout(desc, axis, m.active.used), slot,
          fromDevice ? reinterpret_cast<void *>(source)
                     : const_cast<void *>(hostSource),
          fromDevice, /*toSlot=*/true);
  } else {
    result = fromDevice ? CGRT_CU(d, cuMemcpyDtoDAsync, slot, source,
                                  static_cast<size_t>(desc.bytes), m.runStream)
                        : CGRT_CU(d, cuMemcpyHtoDAsync, slot, hostSource,
                                  static_cast<size_t>(desc.bytes), m.runStream);
  }
  if (result != CUDA_SUCCESS)
    return driverError(d, result,
                       fromDevice ? "cuMemcpyDtoDAsync" : "cuMemcpyHtoDAsync",
                       formatString("input %zu '%s' of %s", index, desc.name,
                                    m.label.c_str()));
  return nullptr;
}

/// What the callbacks of cgrt_eager_env see: the model and the message of
/// the last failure.
struct EagerContext {
  cgrt_model_t &model;
  std::string message;
  bool driverFailed = false;

  const char *fail(CUresult result, const char *call) {
    driverFailed = true;
    cgrt_status s = driverError(*model.driver, result, call, "an eager op");
    message = cgrt_status_get_message(s);
    cgrt_status_free(s);
    return message.c_str();
  }
  const char *fail(std::string text) {
    message = std::move(text);
    return message.c_str();
  }
  bool inArena(uint64_t offset, uint64_t bytes) const {
    uint64_t limit = model.package->arena_bytes;
    return offset <= limit && bytes <= limit - offset;
  }
};

EagerContext &context(void *runtime) {
  return *static_cast<EagerContext *>(runtime);
}

const char *eagerLaunch(void *runtime, size_t kernel, const uint32_t grid[3],
                        const uint32_t block[3], const uint64_t *offsets,
                        size_t count) {
  EagerContext &c = context(runtime);
  cgrt_model_t &m = c.model;
  if (kernel >= m.kernels.size())
    return c.fail(formatString("kernel %zu does not exist (%zu kernels)",
                               kernel, m.kernels.size()));
  std::vector<CUdeviceptr> pointers(count);
  std::vector<void *> params(count);
  for (size_t i = 0; i < count; ++i) {
    if (!c.inArena(offsets[i], 0))
      return c.fail(formatString("parameter %zu points outside the arena", i));
    pointers[i] = m.arena + offsets[i];
    params[i] = &pointers[i];
  }
  CUresult result =
      CGRT_CU(*m.driver, cuLaunchKernel, m.kernels[kernel], grid[0], grid[1],
              grid[2], block[0], block[1], block[2], 0u, m.runStream,
              params.data(), static_cast<void **>(nullptr));
  return result == CUDA_SUCCESS ? nullptr : c.fail(result, "cuLaunchKernel");
}

const char *eagerCopy(void *runtime, uint64_t dst, uint64_t src,
                      uint64_t bytes) {
  EagerContext &c = context(runtime);
  cgrt_model_t &m = c.model;
  if (!c.inArena(dst, bytes) || !c.inArena(src, bytes))
    return c.fail("a copy reaches outside the arena");
  CUresult result = CGRT_CU(*m.driver, cuMemcpyDtoDAsync, m.arena + dst,
                            m.arena + src, static_cast<size_t>(bytes),
                            m.runStream);
  return result == CUDA_SUCCESS ? nullptr : c.fail(result, "cuMemcpyDtoDAsync");
}

const char *eagerRead(void *runtime, void *host, uint64_t src,
                      uint64_t bytes) {
  EagerContext &c = context(runtime);
  cgrt_model_t &m = c.model;
  if (!c.inArena(src, bytes))
    return c.fail("a read reaches outside the arena");
  CUresult result = CGRT_CU(*m.driver, cuMemcpyDtoHAsync, host, m.arena + src,
                            static_cast<size_t>(bytes), m.runStream);
  if (result != CUDA_SUCCESS)
    return c.fail(result, "cuMemcpyDtoHAsync");
  result = CGRT_CU(*m.driver, cuStreamSynchronize, m.runStream);
  return result == CUDA_SUCCESS ? nullptr
                                : c.fail(result, "cuStreamSynchronize");
}

const char *eagerWrite(void *runtime, uint64_t dst, const void *host,
                       uint64_t bytes) {
  EagerContext &c = context(runtime);
  cgrt_model_t &m = c.model;
  if (!c.inArena(dst, bytes))
    return c.fail("a write reaches outside the arena");
  // Synchronous: the host buffer may be gone when the runner returns.
  CUresult result = CGRT_CU(*m.driver, cuMemcpyHtoDAsync, m.arena + dst, host,
                            static_cast<size_t>(bytes), m.runStream);
  if (result != CUDA_SUCCESS)
    return c.fail(result, "cuMemcpyHtoDAsync");
  result = CGRT_CU(*m.driver, cuStreamSynchronize, m.runStream);
  return result == CUDA_SUCCESS ? nullptr
                                : c.fail(result, "cuStreamSynchronize");
}

const char *eagerSetOutputShape(void *runtime, size_t output, int32_t rank,
                                const int64_t *dims) {
  EagerContext &c = context(runtime);
  const cgrt_package &p = *c.model.package;
  const cgrt_io_desc *outputs = c.model.active.outputs;
  if (output >= p.num_outputs || rank != outputs[output].rank)
    return c.fail(formatString("output %zu with rank %d does not exist",
                               output, static_cast<int>(rank)));
  uint64_t bytes = 0;
  if (!tensorBytes(outputs[output].dtype, rank, dims, &bytes) ||
      bytes > outputs[output].bytes)
    return c.fail(formatString("output %zu '%s' of shape %s exceeds its "
                               "%llu-byte slot",
                               output, outputs[output].name,
                               shapeString(rank, dims).c_str(),
                               static_cast<unsigned long long>(
                                   outputs[output].bytes)));
  c.model.outputDims[output].assign(dims, dims + rank);
  return nullptr;
}

cgrt_status runEager(cgrt_model_t &m, size_t step, size_t index) {
  EagerContext c{m, "", false};
  cgrt_eager_env env = {&c,         eagerLaunch, eagerCopy,
                        eagerRead,  eagerWrite,  eagerSetOutputShape};
  if (const char *failure = m.package->eager_runners[index](&env))
    return makeStatus(c.driverFailed ? CGRT_CUDA_ERROR : CGRT_INTERNAL,
                      "step %zu (%s) of %s: %s", step,
                      m.eagerLabel(index).c_str(), m.label.c_str(), failure);
  return nullptr;
}

cgrt_status launchSteps(cgrt_model_t &m) {
  const Driver &d = *m.driver;
  const GraphSet &g = m.active;
  for (size_t i = 0; i < g.numSteps; ++i) {
    size_t index = static_cast<size_t>(g.steps[i].index);
    if (g.steps[i].kind == CGRT_STEP_EAGER) {
      if (cgrt_status s = runEager(m, i, index))
        return s;
      continue;
    }
    CUresult result = CGRT_CU(d, cuGraphLaunch, m.runExec(index), m.runStream);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cuGraphLaunch",
                         formatString("step %zu (%s) of %s", i,
                                      m.graphLabel(index).c_str(),
                                      m.label.c_str()));
  }
  return copyStateUpdates(m);
}

/// Bytes of output `index` after a run: its slot, or for a data-dependent
/// output the size of the shape the eager region reported.
uint64_t outputBytes(const cgrt_model_t &m, size_t index) {
  const cgrt_io_desc &desc = m.active.outputs[index];
  const std::vector<int64_t> &dims = m.outputDims[index];
  uint64_t bytes = desc.bytes;
  if (!dims.empty() || desc.rank == 0)
    tensorBytes(desc.dtype, desc.rank, dims.empty() ? desc.dims : dims.data(),
                &bytes);
  return bytes;
}

std::string allGraphNames(const cgrt_model_t &m) {
  std::string names;
  for (size_t i = 0; i < m.package->num_graphs; ++i)
    names += (i ? ", " : "") + m.graphLabel(i);
  return names;
}

/// Enqueues the copy of output `index` (of `bytes`) to the caller.
cgrt_status copyOutput(cgrt_model_t &m, size_t index, cgrt_tensor &out,
                       uint64_t bytes) {
  const Driver &d = *m.driver;
  const cgrt_io_desc &desc = m.active.outputs[index];
  CUdeviceptr slot = m.arena + desc.arena_offset;
  bool toDevice = out.memory == CGRT_MEMORY_DEVICE;
  int32_t axis = paddedAxis(m, false, index);
  CUresult result =
      axis >= 0
          ? copyPadded(d, m.runStream, paddedLayout(desc, axis, m.active.used),
                       slot, out.data, toDevice, /*toSlot=*/false)
      : toDevice ? CGRT_CU(d, cuMemcpyDtoDAsync,
                           reinterpret_cast<CUdeviceptr>(out.data), slot,
                           static_cast<size_t>(bytes), m.runStream)
                 : CGRT_CU(d, cuMemcpyDtoHAsync, out.data, slot,
                           static_cast<size_t>(bytes), m.runStream);
  if (result == CUDA_SUCCESS)
    return nullptr;
  return driverError(d, result,
                     axis >= 0   ? "cgrt_model_run: cuMemcpy2DAsync"
                     : toDevice ? "cgrt_model_run: cuMemcpyDtoDAsync"
                                : "cgrt_model_run: cuMemcpyDtoHAsync",
                     formatString("output %zu '%s' of %s", index, desc.name,
                                  m.label.c_str()));
}

/// How a run is enqueued: on the runtime's stream, waiting for its end
/// (cgrt_model_run); on the caller's stream without waiting
/// (cgrt_model_run_async); or, where the caller's stream is capturing a
/// CUDA graph, as nodes of that graph.
enum class RunMode { Sync, Async, Capture };

/// Refuses what an asynchronous or captured run cannot do, before anything
/// is enqueued: write host outputs (they would be read before the copy
/// lands), and, in a capture, read host inputs (a captured copy from pageable
/// memory is invalid) or run host code between the graphs.
cgrt_status checkRunMode(const cgrt_model_t &m, RunMode mode, const char *api,
                         const cgrt_tensor *inputs, size_t numInputs,
                         const cgrt_tensor *outputs, size_t numOutputs) {
  if (mode == RunMode::Sync)
    return nullptr;
  for (size_t i = 0; i < numOutputs; ++i)
    if (outputs[i].memory != CGRT_MEMORY_DEVICE && m.active.outputs[i].bytes)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "%s: output %zu '%s' is in host memory; an "
                        "asynchronous run writes device buffers only "
                        "(cgrt_model_run copies to the host and waits)",
                        api, i, m.active.outputs[i].name);
  if (mode != RunMode::Capture)
    return nullptr;
  for (size_t i = 0; i < numInputs; ++i)
    if (inputs[i].memory != CGRT_MEMORY_DEVICE && m.active.inputs[i].bytes)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "%s: input %zu '%s' is in host memory, which a CUDA "
                        "graph capture cannot copy from; pass a device buffer",
                        api, i, m.active.inputs[i].name);
  for (size_t i = 0; i < m.active.numSteps; ++i)
    if (m.active.steps[i].kind == CGRT_STEP_EAGER)
      return makeStatus(
          CGRT_INVALID_ARGUMENT,
          "%s: the stream is capturing a CUDA graph, and %s has an eager "
          "region (%s: host work between its graphs), which cannot be "
          "captured; run it outside the capture",
          api, m.label.c_str(),
          m.eagerLabel(static_cast<size_t>(m.active.steps[i].index)).c_str());
  const Driver &d = *m.driver;
  if (!d.cuStreamGetCaptureInfo || !d.cuStreamUpdateCaptureDependencies ||
      !d.cuGraphAddChildGraphNode)
    return makeStatus(CGRT_INCOMPATIBLE,
                      "%s: capturing %s into a CUDA graph needs a driver of "
                      "CUDA 12.3 or later (this one is %d)",
                      api, m.label.c_str(), d.version);
  return nullptr;
}

/// Adds graph `index` of the model as a child graph node of the graph the
/// run stream is capturing, after what the capture has so far: a copy of
/// the graph as built (arena pointers), so the caller's graph keeps working
/// whatever later runs bind.
cgrt_status addCapturedGraph(cgrt_model_t &m, size_t step, size_t index) {
  const Driver &d = *m.driver;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode *dependencies = nullptr;
  const CUgraphEdgeData *edges = nullptr;
  size_t count = 0;
  std::string what = formatString("step %zu (%s) of %s", step,
                                  m.graphLabel(index).c_str(),
                                  m.label.c_str());
  CUresult result = CGRT_CU(d, cuStreamGetCaptureInfo, m.runStream, &status,
                            &id, &graph, &dependencies, &edges, &count);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cuStreamGetCaptureInfo", what);
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !graph)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "the capture of the caller's stream was invalidated "
                      "before %s (capture status %d)",
                      what.c_str(), static_cast<int>(status));
  CUgraphNode node = nullptr;
  result = CGRT_CU(d, cuGraphAddChildGraphNode, &node, graph, dependencies,
                   count, m.graphs[index]);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cuGraphAddChildGraphNode", what);
  result = CGRT_CU(d, cuStreamUpdateCaptureDependencies, m.runStream, &node,
                   static_cast<const CUgraphEdgeData *>(nullptr), size_t{1},
                   static_cast<unsigned>(CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cuStreamUpdateCaptureDependencies", what);
  return nullptr;
}

cgrt_status captureSteps(cgrt_model_t &m) {
  const GraphSet &g = m.active;
  for (size_t i = 0; i < g.numSteps; ++i) // checkRunMode refused eager steps
    if (cgrt_status s =
            addCapturedGraph(m, i, static_cast<size_t>(g.steps[i].index)))
      return s;
  // Copies on a capturing stream become nodes of the caller's graph.
  return copyStateUpdates(m);
}

/// Enqueues one inference on m.runStream: the inputs into their slots (or
/// bound in place), the steps, the outputs out of theirs; writes the
/// outputs' dims. Waits for nothing but what eager regions wait for.
cgrt_status enqueueRun(cgrt_model_t &m, RunMode mode, const char *api,
                       const cgrt_tensor *inputs, size_t numInputs,
                       cgrt_tensor *outputs, size_t numOutputs) {
  const cgrt_package &p = *m.package;
  // A capture copies through the slots: the caller's graph keeps the
  // pointers it was captured with, and ours may be rebound after it.
  IoBinding &binding = m.runBinding;
  if (mode == RunMode::Capture) {
    binding.inputs.assign(numInputs, 0);
    binding.outputs.assign(numOutputs, 0);
  } else {
    chooseIoBinding(m, inputs, outputs, numOutputs, binding);
    if (cgrt_status s = applyIoBinding(m, binding))
      return annotate(s, api);
  }
  for (size_t i = 0; i < numInputs; ++i)
    if (!binding.inputs[i])
      if (cgrt_status s = copyInput(
              m, i, reinterpret_cast<CUdeviceptr>(inputs[i].data),
              inputs[i].data, inputs[i].memory == CGRT_MEMORY_DEVICE))
        return annotate(s, api);
  m.outputDims.assign(p.num_outputs, {});
  if (cgrt_status s = mode == RunMode::Capture ? captureSteps(m)
                                               : launchSteps(m))
    return annotate(s, api);
  for (size_t i = 0; i < numOutputs; ++i) {
    const cgrt_io_desc &desc = m.active.outputs[i];
    cgrt_io_desc expected =
        expectedTensor(desc, paddedAxis(m, false, i), m.active.used);
    for (int32_t k = 0; k < desc.rank; ++k)
      outputs[i].dims[k] =
          m.outputDims[i].empty() ? expected.dims[k] : m.outputDims[i][k];
    for (int32_t k = 0; k < desc.rank; ++k)
      if (outputs[i].dims[k] < 0)
        return makeStatus(CGRT_INTERNAL,
                          "%s: output %zu '%s' of %s is data-dependent but no "
                          "eager region set its shape",
                          api, i, desc.name, m.label.c_str());
    uint64_t bytes = outputBytes(m, i);
    if (bytes == 0 || binding.outputs[i]) // written in place
      continue;
    if (cgrt_status s = copyOutput(m, i, outputs[i], bytes))
      return s;
  }
  return nullptr;
}

cgrt_status runModel(cgrt_model_t &m, const cgrt_tensor *inputs,
                     size_t numInputs, cgrt_tensor *outputs,
                     size_t numOutputs) {
  const char *api = "cgrt_model_run";
  std::lock_guard<std::mutex> lock(m.mutex);
  if (cgrt_status s =
          validateAll(api, &m, inputs, numInputs, outputs, numOutputs))
    return s;
  const Driver &d = *m.driver;
  ScopedContext scope(d, m.context);
  if (cgrt_status s = scope.take())
    return annotate(s, api);
  m.runStream = m.stream;
  if (cgrt_status s = waitForPendingRun(m, m.stream))
    return annotate(s, api);
  if (cgrt_status s = enqueueRun(m, RunMode::Sync, api, inputs, numInputs,
                                 outputs, numOutputs))
    return s;
  if (cgrt_status s = waitForDevice(
          m, m.stream, nullptr,
          "the inference of " + m.label +
              " (an asynchronous error from a copy or from a kernel of " +
              allGraphNames(m) + ")"))
    return annotate(s, "cgrt_model_run");
  // Our stream waited for the pending run, and we waited for our stream.
  m.runPending = false;
  return nullptr;
}

/// Whether the caller's stream is capturing a CUDA graph.
cgrt_status isCapturing(const Driver &d, CUstream stream, bool *capturing,
                        const char *api = "cgrt_model_run_async") {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult result = CGRT_CU(d, cuStreamIsCapturing, stream, &status);
  if (result != CUDA_SUCCESS)
    return driverError(d, result,
                       formatString("%s: cuStreamIsCapturing", api).c_str(),
                       "the caller's stream");
  if (status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: the caller's stream is in an invalidated capture "
                      "(an earlier operation broke it)",
                      api);
  *capturing = status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return nullptr;
}

cgrt_status runModelAsync(cgrt_model_t &m, const cgrt_tensor *inputs,
                          size_t numInputs, cgrt_tensor *outputs,
                          size_t numOutputs, CUstream stream) {
  const char *api = "cgrt_model_run_async";
  std::lock_guard<std::mutex> lock(m.mutex);
  if (cgrt_status s =
          validateAll(api, &m, inputs, numInputs, outputs, numOutputs))
    return s;
  const Driver &d = *m.driver;
  ScopedContext scope(d, m.context);
  if (cgrt_status s = scope.take())
    return annotate(s, api);
  // NULL is CUDA's default stream (torch's too), not the runtime's own:
  // named explicitly, whatever default-stream mode the entry points have.
  m.runStream = stream ? stream : CU_STREAM_LEGACY;
  bool capturing = false;
  if (cgrt_status s = isCapturing(d, m.runStream, &capturing))
    return s;
  RunMode mode = capturing ? RunMode::Capture : RunMode::Async;
  if (cgrt_status s = checkRunMode(m, mode, api, inputs, numInputs, outputs,
                                   numOutputs))
    return s;
  // A capture records work for later replays: waiting there for an event
  // of this moment would be meaningless (and breaks the capture).
  if (mode == RunMode::Async)
    if (cgrt_status s = waitForPendingRun(m, m.runStream))
      return annotate(s, api);
  if (cgrt_status s =
          enqueueRun(m, mode, api, inputs, numInputs, outputs, numOutputs))
    return s;
  if (mode == RunMode::Capture)
    return nullptr;
  if (!m.runDone) {
    CUresult result = CGRT_CU(d, cuEventCreate, &m.runDone,
                              static_cast<unsigned>(CU_EVENT_DISABLE_TIMING));
    if (result != CUDA_SUCCESS) {
      m.runDone = nullptr;
      return driverError(d, result, "cgrt_model_run_async: cuEventCreate",
                         "the completion event of " + m.label);
    }
  }
  CUresult result = CGRT_CU(d, cuEventRecord, m.runDone, m.runStream);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cgrt_model_run_async: cuEventRecord",
                       "the end of the inference of " + m.label);
  m.runPending = true;
  m.runDoneStream = m.runStream;
  // No call waits for it: the communicator's watchdog bounds it.
  watchAsyncRun(m, m.runDone);
  return nullptr;
}

/// Device-resident copies of the inputs, made once per model from the
/// current slot contents (zeros, or the last run's inputs).
cgrt_status prepareBenchmark(cgrt_model_t &m) {
  const Driver &d = *m.driver;
  const cgrt_package &p = *m.package;
  if (!m.start) {
    CUresult result = CGRT_CU(d, cuEventCreate, &m.start, 0u);
    if (result != CUDA_SUCCESS) {
      m.start = nullptr;
      return driverError(d, result, "cuEventCreate",
                         "the benchmark of " + m.label);
    }
  }
  if (!m.stop) {
    CUresult result = CGRT_CU(d, cuEventCreate, &m.stop, 0u);
    if (result != CUDA_SUCCESS) {
      m.stop = nullptr;
      return driverError(d, result, "cuEventCreate",
                         "the benchmark of " + m.label);
    }
  }
  // Another shape bucket than last time needs inputs of its own size.
  if (m.benchmarkInputs.size() == p.num_inputs &&
      m.benchmarkBucket == m.active.value)
    return nullptr;
  for (CUdeviceptr &buffer : m.benchmarkInputs)
    if (buffer)
      CGRT_CU(d, cuMemFree, buffer);
  for (CUdeviceptr &buffer : m.benchmarkOutputs)
    if (buffer)
      CGRT_CU(d, cuMemFree, buffer);
  m.benchmarkOutputs.clear();
  m.benchmarkInputs.assign(p.num_inputs, 0);
  m.benchmarkBucket = m.active.value;
  for (size_t i = 0; i < p.num_inputs; ++i) {
    const cgrt_io_desc &desc = m.active.inputs[i];
    if (m.benchmarkInputs[i] || desc.bytes == 0)
      continue;
    std::string what = formatString("the benchmark copy of input %zu '%s' of %s",
                                    i, desc.name, m.label.c_str());
    CUresult result = CGRT_CU(d, cuMemAlloc, &m.benchmarkInputs[i],
                              static_cast<size_t>(desc.bytes));
    if (result != CUDA_SUCCESS) {
      m.benchmarkInputs[i] = 0;
      return driverError(d, result, "cuMemAlloc", what);
    }
    result = CGRT_CU(d, cuMemcpyDtoD, m.benchmarkInputs[i],
                     m.arena + desc.arena_offset,
                     static_cast<size_t>(desc.bytes));
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cuMemcpyDtoD", what);
  }
  return nullptr;
}

/// What a benchmark iteration does with the I/O: copy device inputs into
/// the slots and leave the outputs there (cgrt_model_benchmark), or run on
/// caller-owned device inputs and outputs, copied through the slots or read
/// and written in place (cgrt_model_benchmark_device_io).
enum class BenchmarkIo { Slots, DeviceCopy, DeviceZeroCopy };

/// Device buffers for the outputs, made once per bucket.
cgrt_status prepareBenchmarkOutputs(cgrt_model_t &m) {
  const Driver &d = *m.driver;
  const cgrt_package &p = *m.package;
  if (m.benchmarkOutputs.size() == p.num_outputs)
    return nullptr;
  m.benchmarkOutputs.assign(p.num_outputs, 0);
  for (size_t i = 0; i < p.num_outputs; ++i) {
    const cgrt_io_desc &desc = m.active.outputs[i];
    if (desc.bytes == 0)
      continue;
    CUresult result = CGRT_CU(d, cuMemAlloc, &m.benchmarkOutputs[i],
                              static_cast<size_t>(desc.bytes));
    if (result != CUDA_SUCCESS) {
      m.benchmarkOutputs[i] = 0;
      return driverError(d, result, "cuMemAlloc",
                         formatString("the benchmark buffer of output %zu "
                                      "'%s' of %s",
                                      i, desc.name, m.label.c_str()));
    }
  }
  return nullptr;
}

/// The benchmark buffers as the caller's tensors of a device-I/O run.
std::vector<cgrt_tensor> benchmarkTensors(const cgrt_model_t &m, bool inputs) {
  const std::vector<CUdeviceptr> &buffers =
      inputs ? m.benchmarkInputs : m.benchmarkOutputs;
  const cgrt_io_desc *descs = inputs ? m.active.inputs : m.active.outputs;
  std::vector<cgrt_tensor> tensors(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    cgrt_tensor &t = tensors[i];
    std::memset(&t, 0, sizeof t);
    t.data = reinterpret_cast<void *>(buffers[i]);
    t.bytes = static_cast<size_t>(descs[i].bytes);
    t.dtype = descs[i].dtype;
    t.rank = descs[i].rank;
    std::copy(descs[i].dims, descs[i].dims + descs[i].rank, t.dims);
    t.memory = CGRT_MEMORY_DEVICE;
  }
  return tensors;
}

/// One benchmark iteration: the binding, the copies it leaves and the graph
/// launches.
cgrt_status enqueueIteration(cgrt_model_t &m, BenchmarkIo io,
                             const IoBinding &binding) {
  const Driver &d = *m.driver;
  if (cgrt_status s = applyIoBinding(m, binding))
    return s;
  for (size_t i = 0; i < m.package->num_inputs; ++i)
    if (!binding.inputs[i])
      if (cgrt_status s = copyInput(m, i, m.benchmarkInputs[i], nullptr, true))
        return s;
  // As in a run: eager regions set the data-dependent output dims afresh
  // (outputBytes reads them, also when no run came before the benchmark).
  m.outputDims.assign(m.package->num_outputs, {});
  if (cgrt_status s = launchSteps(m))
    return s;
  if (io == BenchmarkIo::Slots)
    return nullptr;
  for (size_t i = 0; i < m.package->num_outputs; ++i) {
    uint64_t bytes = outputBytes(m, i);
    if (binding.outputs[i] || bytes == 0)
      continue;
    CUresult result = CGRT_CU(
        d, cuMemcpyDtoDAsync, m.benchmarkOutputs[i],
        m.arena + m.active.outputs[i].arena_offset,
        static_cast<size_t>(bytes), m.stream);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cuMemcpyDtoDAsync",
                         formatString("the benchmark copy of output %zu", i));
  }
  return nullptr;
}

cgrt_status benchmarkModel(cgrt_model_t &m, int64_t warmup, int64_t iterations,
                           BenchmarkIo io, cgrt_benchmark_result *out) {
  if (!out)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_benchmark: result is NULL");
  if (warmup < 0 || iterations < 1)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_benchmark: warmup is %" PRId64
                      " and iterations is %" PRId64
                      "; need warmup >= 0 and iterations >= 1",
                      warmup, iterations);
  std::memset(out, 0, sizeof(*out));
  std::lock_guard<std::mutex> lock(m.mutex);
  const Driver &d = *m.driver;
  ScopedContext scope(d, m.context);
  if (cgrt_status s = scope.take())
    return annotate(s, "cgrt_model_benchmark");
  m.runStream = m.stream;
  if (cgrt_status s = waitForPendingRun(m, m.stream))
    return annotate(s, "cgrt_model_benchmark");
  if (cgrt_status s = prepareBenchmark(m))
    return annotate(s, "cgrt_model_benchmark");
  if (io != BenchmarkIo::Slots)
    if (cgrt_status s = prepareBenchmarkOutputs(m))
      return annotate(s, "cgrt_model_benchmark");
  IoBinding binding;
  binding.inputs.assign(m.package->num_inputs, 0);
  binding.outputs.assign(m.package->num_outputs, 0);
  if (io == BenchmarkIo::DeviceZeroCopy) {
    bool enabled = m.zeroCopy;
    m.zeroCopy = true;
    std::vector<cgrt_tensor> ins = benchmarkTensors(m, true);
    std::vector<cgrt_tensor> outs = benchmarkTensors(m, false);
    chooseIoBinding(m, ins.data(), outs.data(), outs.size(), binding);
    m.zeroCopy = enabled;
  }

  for (int64_t i = 0; i < warmup; ++i)
    if (cgrt_status s = enqueueIteration(m, io, binding))
      return annotate(s, "cgrt_model_benchmark (warm-up)");
  if (cgrt_status s =
          waitForDevice(m, m.stream, nullptr, "the warm-up of " + m.label))
    return annotate(s, "cgrt_model_benchmark");
  CUresult result = CUDA_SUCCESS;

  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(iterations));
  for (int64_t i = 0; i < iterations; ++i) {
    result = CGRT_CU(d, cuEventRecord, m.start, m.stream);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cgrt_model_benchmark: cuEventRecord",
                         "the benchmark of " + m.label);
    if (cgrt_status s = enqueueIteration(m, io, binding))
      return annotate(s, "cgrt_model_benchmark");
    result = CGRT_CU(d, cuEventRecord, m.stop, m.stream);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cgrt_model_benchmark: cuEventRecord",
                         "the benchmark of " + m.label);
    if (cgrt_status s = waitForDevice(
            m, m.stream, m.stop,
            "iteration " + std::to_string(i) + " of " + m.label +
                " (an asynchronous error from a kernel of " +
                allGraphNames(m) + ")"))
      return annotate(s, "cgrt_model_benchmark");
    float milliseconds = 0;
    result = CGRT_CU(d, cuEventElapsedTime, &milliseconds, m.start, m.stop);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cgrt_model_benchmark: cuEventElapsedTime",
                         "the benchmark of " + m.label);
    samples.push_back(static_cast<double>(milliseconds) * 1e3);
  }

  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  double sum = 0;
  for (double sample : samples)
    sum += sample;
  out->median_us =
      n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  size_t p99 = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(n)));
  out->p99_us = samples[std::min(n, std::max<size_t>(p99, 1)) - 1];
  out->mean_us = sum / static_cast<double>(n);
  out->iterations = iterations;
  int64_t launches = 0;
  for (size_t i = 0; i < m.active.numSteps; ++i)
    launches += m.active.steps[i].kind == CGRT_STEP_GRAPH;
  out->graph_launches_per_run = launches;
  return nullptr;
}

} // namespace

cgrt_status cgrt::waitForPendingRun(cgrt_model_t &m, CUstream stream) {
  // Every call that works on the arena comes here first; a rank whose
  // communicator failed must not enqueue work that waits on the others.
  if (m.comm && m.comm->aborted.load())
    return rankFailure(m);
  // The stream of the pending run orders it already (a wait there would
  // cost a driver call on every call of a model run on one stream).
  if (!m.runPending || stream == m.runDoneStream)
    return nullptr;
  const Driver &d = *m.driver;
  CUresult result = CGRT_CU(d, cuStreamWaitEvent, stream, m.runDone, 0u);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cuStreamWaitEvent",
                       "the end of the last asynchronous run of " + m.label);
  return nullptr;
}

extern "C" {

cgrt_status cgrt_model_run(cgrt_model *model, const cgrt_tensor *inputs,
                           size_t num_inputs, cgrt_tensor *outputs,
                           size_t num_outputs) {
  return guardApi("cgrt_model_run", [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT, "cgrt_model_run: model is NULL");
    return runModel(*model, inputs, num_inputs, outputs, num_outputs);
  });
}

cgrt_status cgrt_model_run_async(cgrt_model *model, const cgrt_tensor *inputs,
                                 size_t num_inputs, cgrt_tensor *outputs,
                                 size_t num_outputs, void *stream) {
  return guardApi("cgrt_model_run_async", [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "cgrt_model_run_async: model is NULL");
    return runModelAsync(*model, inputs, num_inputs, outputs, num_outputs,
                         static_cast<CUstream>(stream));
  });
}

cgrt_status cgrt_stream_is_capturing(void *stream, int *capturing) {
  return guardApi("cgrt_stream_is_capturing", [&]() -> cgrt_status {
    if (!capturing)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "cgrt_stream_is_capturing: capturing is NULL");
    *capturing = 0;
    const Driver *d = nullptr;
    if (cgrt_status s = getDriver(&d))
      return s;
    bool active = false;
    CUstream s = stream ? static_cast<CUstream>(stream) : CU_STREAM_LEGACY;
    if (cgrt_status error =
            isCapturing(*d, s, &active, "cgrt_stream_is_capturing"))
      return error;
    *capturing = active ? 1 : 0;
    return nullptr;
  });
}

cgrt_status cgrt_model_benchmark(cgrt_model *model, int64_t warmup,
                                 int64_t iterations,
                                 cgrt_benchmark_result *result) {
  return guardApi("cgrt_model_benchmark", [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "cgrt_model_benchmark: model is NULL");
    return benchmarkModel(*model, warmup, iterations, BenchmarkIo::Slots,
                          result);
  });
}

cgrt_status cgrt_model_benchmark_device_io(cgrt_model *model, int64_t warmup,
                                           int64_t iterations, int zero_copy,
                                           cgrt_benchmark_result *result) {
  return guardApi("cgrt_model_benchmark_device_io", [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "cgrt_model_benchmark_device_io: model is NULL");
    return benchmarkModel(*model, warmup, iterations,
                          zero_copy ? BenchmarkIo::DeviceZeroCopy
                                    : BenchmarkIo::DeviceCopy,
                          result);
  });
}

} // extern "C"
