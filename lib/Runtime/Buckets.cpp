//===- Buckets.cpp - choosing a package's graph set for a run ---*- C++ -*-===//
//
// A package compiled with `--dim N=1,2,4,8` holds one graph set per value
// of N. A run uses the bucket whose input shapes its tensors match; with
// `--pad-to-bucket` a size between buckets runs in the next larger one, its
// inputs zero-padded along the bucketed dim and its outputs cut back.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "DType.h"
#include "Status.h"

using namespace cgrt;

GraphSet cgrt::packageGraphSet(const cgrt_package &p) {
  GraphSet set;
  set.inputs = p.inputs;
  set.outputs = p.outputs;
  set.numSteps = p.num_steps;
  set.steps = p.steps;
  if (p.num_buckets > 0)
    set.value = set.used = p.buckets[p.num_buckets - 1].value;
  return set;
}

namespace {

GraphSet bucketGraphSet(const cgrt_bucket &b, int64_t used) {
  GraphSet set;
  set.inputs = b.inputs;
  set.outputs = b.outputs;
  set.numSteps = b.num_steps;
  set.steps = b.steps;
  set.value = b.value;
  set.used = used;
  return set;
}

/// Whether `t` has the shape of `d`, except that the bucketed dim (at
/// `axis`, when not -1) is `used`.
bool matches(const cgrt_io_desc &d, const cgrt_tensor &t, int32_t axis,
             int64_t used) {
  if (t.rank != d.rank)
    return false;
  for (int32_t k = 0; k < d.rank; ++k)
    if (t.dims[k] != (k == axis ? used : d.dims[k]))
      return false;
  return true;
}

bool matchesBucket(const cgrt_package &p, const cgrt_bucket &b,
                   const cgrt_tensor *inputs, int64_t used) {
  for (size_t i = 0; i < p.num_inputs; ++i) {
    int32_t axis = used == b.value ? -1 : p.input_bucket_axes[i];
    if (!matches(b.inputs[i], inputs[i], axis, used))
      return false;
  }
  return true;
}

/// The size of the bucketed dim in the caller's inputs, or -1 when the
/// inputs disagree or none has it.
int64_t bucketedSize(const cgrt_package &p, const cgrt_tensor *inputs) {
  int64_t used = -1;
  for (size_t i = 0; i < p.num_inputs; ++i) {
    int32_t axis = p.input_bucket_axes ? p.input_bucket_axes[i] : -1;
    if (axis < 0 || axis >= inputs[i].rank)
      continue;
    if (used >= 0 && inputs[i].dims[axis] != used)
      return -1;
    used = inputs[i].dims[axis];
  }
  return used;
}

std::string bucketList(const cgrt_package &p) {
  std::string list;
  for (size_t b = 0; b < p.num_buckets; ++b)
    list += (b ? ", " : "") + std::to_string(p.buckets[b].value);
  return list;
}

/// The shapes of the caller's inputs, for the message.
std::string inputShapes(const cgrt_package &p, const cgrt_tensor *inputs) {
  std::string shapes;
  for (size_t i = 0; i < p.num_inputs; ++i)
    shapes += formatString("%s'%s' %s", i ? ", " : "", p.inputs[i].name,
                           shapeString(inputs[i].rank, inputs[i].dims).c_str());
  return shapes;
}

} // namespace

cgrt_status cgrt::selectGraphSet(cgrt_model_t &m, const cgrt_tensor *inputs) {
  const cgrt_package &p = *m.package;
  m.active = packageGraphSet(p);
  if (p.num_buckets == 0)
    return nullptr;
  for (size_t b = 0; b < p.num_buckets; ++b) {
    if (matchesBucket(p, p.buckets[b], inputs, p.buckets[b].value)) {
      m.active = bucketGraphSet(p.buckets[b], p.buckets[b].value);
      return nullptr;
    }
  }
  // A wrong dtype or rank gets the ordinary per-tensor message.
  for (size_t i = 0; i < p.num_inputs; ++i)
    if (inputs[i].rank != p.inputs[i].rank ||
        enumValue(inputs[i].dtype) != p.inputs[i].dtype)
      return nullptr;
  int64_t used = bucketedSize(p, inputs);
  if (p.pad_to_bucket && used >= 1) {
    for (size_t b = 0; b < p.num_buckets; ++b) {
      if (used < p.buckets[b].value &&
          matchesBucket(p, p.buckets[b], inputs, used)) {
        m.active = bucketGraphSet(p.buckets[b], used);
        return nullptr;
      }
    }
  }
  return makeStatus(
      CGRT_INVALID_ARGUMENT,
      "cgrt_model_run: the inputs (%s) match no shape bucket of %s: it has "
      "%s = %s%s",
      inputShapes(p, inputs).c_str(), m.label.c_str(), p.bucket_dim,
      bucketList(p).c_str(),
      p.pad_to_bucket ? " (sizes in between run padded; larger ones cannot)"
                      : " (compile with --pad-to-bucket to run sizes in "
                        "between padded, where cgc can prove that is safe)");
}

extern "C" {

size_t cgrt_model_num_buckets(const cgrt_model *model) {
  return model && model->package ? model->package->num_buckets : 0;
}

const char *cgrt_model_bucket_dim(const cgrt_model *model) {
  return model && model->package ? model->package->bucket_dim : nullptr;
}

int64_t cgrt_model_bucket_value(const cgrt_model *model, size_t index) {
  if (!model || !model->package || index >= model->package->num_buckets)
    return -1;
  return model->package->buckets[index].value;
}

} // extern "C"
