//===- ImportHelpers.cpp - small helpers shared by op importers -----------===//

#include "ImportHelpers.h"

#include <algorithm>

using namespace mlir;
using namespace cgc;

namespace cgc::onnx_import {

FailureOr<Value> sliceAlong(NodeContext &ctx, Value x, int64_t axis,
                            int64_t start, int64_t end, int64_t step) {
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  SmallVector<int64_t> starts(shape.size(), 0), ends(shape),
      steps(shape.size(), 1);
  starts[axis] = start;
  ends[axis] = end;
  steps[axis] = step;
  return ctx.create1<SliceOp>({x}, {ctx.namedI64Array("starts", starts),
                                    ctx.namedI64Array("ends", ends),
                                    ctx.namedI64Array("steps", steps)});
}

FailureOr<Value> takeStep(NodeContext &ctx, Value x, int64_t axis,
                          int64_t index) {
  FailureOr<Value> slice = sliceAlong(ctx, x, axis, index, index + 1);
  if (failed(slice))
    return failure();
  SmallVector<int64_t> dropped(tensorType(x).getShape());
  dropped.erase(dropped.begin() + axis);
  return reshapeTo(ctx, *slice, dropped);
}

FailureOr<Value> castTo(NodeContext &ctx, Value v, Type element) {
  RankedTensorType type = tensorType(v);
  if (type.getElementType() == element)
    return v;
  return ctx.create1<CastOp>(
      {v}, {}, {RankedTensorType::get(type.getShape(), element)});
}

FailureOr<Type> stashType(NodeContext &ctx) {
  int64_t stash = ctx.getInt("stash_type", onnx::TensorProto::FLOAT);
  if (ctx.hadAttributeError())
    return failure();
  Builder b(ctx.context());
  if (stash == onnx::TensorProto::FLOAT)
    return b.getF32Type();
  if (stash == onnx::TensorProto::DOUBLE)
    return b.getF64Type();
  ctx.error() << "stash_type must be FLOAT (1) or DOUBLE (11), got " << stash;
  return failure();
}

/// Fails with a diagnostic when any output from `first` on is used (training
/// outputs, indices, ...).
LogicalResult checkOutputsUnused(NodeContext &ctx, size_t first,
                                 StringRef what) {
  for (size_t i = first; i < ctx.numOutputs(); ++i) {
    if (ctx.isOutputUsed(i)) {
      ctx.error() << "output #" << i << " ('" << ctx.node().output(i)
                  << "') is used but " << what << " is not supported";
      return failure();
    }
  }
  return success();
}

/// Normalizes (and sorts) a list of axes; duplicates are an error.
FailureOr<SmallVector<int64_t>> normalizeSortedAxes(NodeContext &ctx,
                                                    ArrayRef<int64_t> axes,
                                                    int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = normalizeAxis(ctx, axis, rank);
    if (failed(a))
      return failure();
    result.push_back(*a);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end()) {
    ctx.error() << "axes " << formatDims(axes) << " repeat an axis";
    return failure();
  }
  return result;
}

/// The axes [first, rank).
SmallVector<int64_t> axesFrom(int64_t first, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

} // namespace cgc::onnx_import
