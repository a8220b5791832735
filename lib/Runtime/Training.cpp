//===- Training.cpp - a training step's state ------------------------------===//
//
// A package of `cgc --train` runs one training step per run: its inputs
// are a batch and its label, its output the loss, and the step replaces
// its state (the weights being trained, the optimizer's buffers) in the
// arena's weights region, where the state stays from run to run. The step
// writes most updates over their state itself; for the others (an update
// computed while the old value is still read) the package names a slot,
// copied over the state after the step's graphs (copyStateUpdates). Here
// too: reading, writing and resetting the state, and checking class-index
// labels.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "DType.h"
#include "Package.h"
#include "Status.h"

#include <cinttypes>
#include <cstring>
#include <vector>

using namespace cgrt;

cgrt_status cgrt::copyStateUpdates(cgrt_model_t &m) {
  const cgrt_package &p = *m.package;
  const Driver &d = *m.driver;
  for (size_t i = 0; i < p.num_state; ++i) {
    const cgrt_state_desc &s = p.state[i];
    if (s.update_offset == s.tensor.arena_offset)
      continue; // written in place
    CUresult result = CGRT_CU(d, cuMemcpyDtoDAsync,
                              m.arena + s.tensor.arena_offset,
                              m.arena + s.update_offset,
                              static_cast<size_t>(s.tensor.bytes), m.runStream);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cuMemcpyDtoDAsync",
                         formatString("writing the update of state '%s' of %s",
                                      s.tensor.name, m.label.c_str()));
  }
  return nullptr;
}

namespace {

/// Label `index` holds class indices in [0, classes): `count` integers of
/// `dtype` at `data`.
cgrt_status checkClassIndices(const char *api, const cgrt_model_t &m,
                              size_t index, const void *data, int64_t count,
                              int64_t classes) {
  const cgrt_io_desc &d = m.package->inputs[index];
  for (int64_t k = 0; k < count; ++k) {
    int64_t value = 0;
    if (d.dtype == CGRT_INT64)
      std::memcpy(&value, static_cast<const char *>(data) + 8 * k, 8);
    else if (d.dtype == CGRT_INT32) {
      int32_t narrow = 0;
      std::memcpy(&narrow, static_cast<const char *>(data) + 4 * k, 4);
      value = narrow;
    } else {
      return nullptr; // not a class-index label (the compiler made it so)
    }
    if (value < 0 || value >= classes)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "%s: input %zu '%s' holds %" PRId64
                        " at flat index %" PRId64
                        ", not a class index in [0, %" PRId64 ")",
                        api, index, d.name, value, k, classes);
  }
  return nullptr;
}

} // namespace

cgrt_status cgrt::checkLabels(const char *api, const cgrt_model_t &m,
                              const cgrt_tensor *inputs) {
  const cgrt_package &p = *m.package;
  if (!p.input_label_classes)
    return nullptr;
  for (size_t i = 0; i < p.num_inputs; ++i) {
    int64_t classes = p.input_label_classes[i];
    // Device labels are read by the step itself: a class index out of
    // range there selects no class (its one-hot row is zero).
    if (classes <= 0 || inputs[i].memory != CGRT_MEMORY_HOST)
      continue;
    int64_t count = 1;
    for (int32_t k = 0; k < p.inputs[i].rank; ++k)
      count *= p.inputs[i].dims[k];
    if (cgrt_status s =
            checkClassIndices(api, m, i, inputs[i].data, count, classes))
      return s;
  }
  return nullptr;
}

namespace {

cgrt_status checkStateIndex(const char *api, const cgrt_model *model,
                            size_t index) {
  if (!model)
    return makeStatus(CGRT_INVALID_ARGUMENT, "%s: model is NULL", api);
  const cgrt_package &p = *model->package;
  if (index >= p.num_state)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: index %zu is out of range: %s has %zu state "
                      "tensors%s",
                      api, index, model->label.c_str(), p.num_state,
                      p.num_state ? "" : " (it is no training step)");
  return nullptr;
}

cgrt_status stateInfo(const cgrt_model *model, size_t index,
                      const char **name, cgrt_tensor *info) {
  if (cgrt_status s = checkStateIndex("cgrt_model_state_info", model, index))
    return s;
  describeTensor(model->package->state[index].tensor, name, info);
  return nullptr;
}

/// Runs `enqueue()` (copies on the model's stream, returning the first
/// failure) with the model locked and its context current, after every run
/// so far, and waits for it; `what` names the work in a failure.
template <typename Enqueue>
cgrt_status onModelStream(cgrt_model_t &m, const char *api,
                          const std::string &what, Enqueue enqueue) {
  return withModelStream(m, api, [&]() -> cgrt_status {
    const Driver &d = *m.driver;
    CUresult result = enqueue();
    if (result != CUDA_SUCCESS)
      return driverError(d, result, api, what);
    if (cgrt_status s = waitForDevice(m, m.stream, nullptr, what))
      return annotate(s, api);
    m.runPending = false; // the stream waited for it, and we for the stream
    return nullptr;
  });
}

/// Copies between state `index` and the caller's tensor (host or device),
/// after every run so far.
cgrt_status copyState(const char *api, cgrt_model_t &m, size_t index,
                      const cgrt_tensor *tensor, bool toState) {
  if (cgrt_status s = checkStateIndex(api, &m, index))
    return s;
  if (!tensor)
    return makeStatus(CGRT_INVALID_ARGUMENT, "%s: tensor is NULL", api);
  const cgrt_io_desc &d = m.package->state[index].tensor;
  if (cgrt_status s = validateTensor(api, "state tensor", index, d, *tensor,
                                     -1, 0))
    return s;
  const Driver &drv = *m.driver;
  CUdeviceptr state = m.arena + d.arena_offset;
  size_t bytes = static_cast<size_t>(d.bytes);
  bool device = tensor->memory == CGRT_MEMORY_DEVICE;
  CUdeviceptr buffer = reinterpret_cast<CUdeviceptr>(tensor->data);
  return onModelStream(
      m, api,
      formatString("copying state '%s' of %s", d.name, m.label.c_str()),
      [&]() -> CUresult {
        if (device)
          return toState ? CGRT_CU(drv, cuMemcpyDtoDAsync, state, buffer,
                                   bytes, m.stream)
                         : CGRT_CU(drv, cuMemcpyDtoDAsync, buffer, state,
                                   bytes, m.stream);
        return toState ? CGRT_CU(drv, cuMemcpyHtoDAsync, state,
                                 static_cast<const void *>(tensor->data),
                                 bytes, m.stream)
                       : CGRT_CU(drv, cuMemcpyDtoHAsync, tensor->data, state,
                                 bytes, m.stream);
      });
}

/// Uploads the state's initial values again (weights.bin, read afresh and
/// checked like at load).
cgrt_status resetState(cgrt_model_t &m) {
  const char *api = "cgrt_model_reset_state";
  const cgrt_package &p = *m.package;
  if (p.num_state == 0)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: %s is no training step: it has no state", api,
                      m.label.c_str());
  std::vector<char> weights;
  if (cgrt_status s = readWeights(m.dir, p, m.label, modelRank(m), &weights))
    return annotate(s, api);
  const Driver &d = *m.driver;
  return onModelStream(
      m, api, "uploading the initial state of " + m.label, [&] {
        CUresult result = CUDA_SUCCESS;
        for (size_t i = 0; i < p.num_state && result == CUDA_SUCCESS; ++i) {
          const cgrt_io_desc &t = p.state[i].tensor;
          result = CGRT_CU(d, cuMemcpyHtoDAsync, m.arena + t.arena_offset,
                           static_cast<const void *>(weights.data() +
                                                     t.arena_offset -
                                                     p.weights_offset),
                           static_cast<size_t>(t.bytes), m.stream);
        }
        return result;
      });
}

} // namespace

extern "C" {

size_t cgrt_model_num_state(const cgrt_model *model) {
  return model ? model->package->num_state : 0;
}

int64_t cgrt_model_input_label_classes(const cgrt_model *model,
                                       size_t index) {
  if (!model || !model->package->input_label_classes ||
      index >= model->package->num_inputs)
    return 0;
  return model->package->input_label_classes[index];
}

cgrt_status cgrt_model_train_step(cgrt_model *model, const cgrt_tensor *inputs,
                                  size_t num_inputs, cgrt_tensor *outputs,
                                  size_t num_outputs, void *stream) {
  const char *api = "cgrt_model_train_step";
  cgrt_status refused = guardApi(api, [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT, "%s: model is NULL", api);
    if (model->package->num_state == 0)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "%s: %s is no training step (compile it with cgc "
                        "--train)",
                        api, model->label.c_str());
    return nullptr;
  });
  if (refused)
    return refused;
  return cgrt_model_run_async(model, inputs, num_inputs, outputs, num_outputs,
                              stream);
}

cgrt_status cgrt_model_state_info(const cgrt_model *model, size_t index,
                                  const char **name, cgrt_tensor *info) {
  return guardApi("cgrt_model_state_info",
                  [&] { return stateInfo(model, index, name, info); });
}

cgrt_status cgrt_model_read_state(cgrt_model *model, size_t index,
                                  cgrt_tensor *out) {
  const char *api = "cgrt_model_read_state";
  return guardApi(api, [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT, "%s: model is NULL", api);
    return copyState(api, *model, index, out, /*toState=*/false);
  });
}

cgrt_status cgrt_model_write_state(cgrt_model *model, size_t index,
                                   const cgrt_tensor *in) {
  const char *api = "cgrt_model_write_state";
  return guardApi(api, [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT, "%s: model is NULL", api);
    return copyState(api, *model, index, in, /*toState=*/true);
  });
}

cgrt_status cgrt_model_reset_state(cgrt_model *model) {
  return guardApi("cgrt_model_reset_state", [&]() -> cgrt_status {
    if (!model)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "cgrt_model_reset_state: model is NULL");
    return resetState(*model);
  });
}

} // extern "C"
