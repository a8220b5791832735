//===- GatherScatterOps.cpp - importers of gather and scatter ops ---------===//

#include "TensorHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

/// ONNX index inputs are int64 (or int32 where `allowI32`).
LogicalResult checkIndices(NodeContext &ctx, Value indices, bool allowI32) {
  Type element = tensorType(indices).getElementType();
  if (element.isSignlessInteger(64) ||
      (allowI32 && element.isSignlessInteger(32)))
    return success();
  ctx.error() << "indices must be " << (allowI32 ? "int32 or int64" : "int64")
              << ", got " << indices.getType();
  return failure();
}

Results importGather(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/true)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), tensorType((*in)[0]).getRank());
  if (failed(axis))
    return failure();
  return single(ctx.create1<GatherOp>(*in, {ctx.namedI64("axis", *axis)}));
}

Results importGatherElements(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/true)))
    return failure();
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]);
  if (data.getRank() != indices.getRank()) {
    ctx.error() << "indices " << indices << " must have the rank of the data "
                << data;
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), data.getRank());
  if (failed(axis))
    return failure();
  return single(
      ctx.create1<GatherElementsOp>(*in, {ctx.namedI64("axis", *axis)}));
}

Results importGatherND(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/false)))
    return failure();
  int64_t batchDims = ctx.getInt("batch_dims", 0);
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]);
  if (batchDims < 0 ||
      batchDims >= std::min(data.getRank(), indices.getRank())) {
    ctx.error() << "batch_dims " << batchDims << " is out of range for data "
                << data << " and indices " << indices;
    return failure();
  }
  for (int64_t d = 0; d < batchDims; ++d) {
    if (!data.isDynamicDim(d) && !indices.isDynamicDim(d) &&
        data.getDimSize(d) != indices.getDimSize(d)) {
      ctx.error() << "batch dim " << d << " differs between data " << data
                  << " and indices " << indices;
      return failure();
    }
  }
  return single(
      ctx.create1<GatherNDOp>(*in, {ctx.namedI64("batch_dims", batchDims)}));
}

/// The reduction attribute of ScatterElements/ScatterND (opset 16+).
FailureOr<std::string> scatterReduction(NodeContext &ctx) {
  std::string reduction = ctx.getString("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction)) {
    ctx.error() << "unknown reduction '" << reduction << "'";
    return failure();
  }
  return reduction;
}

/// Static dims that must agree (dynamic dims agree with anything).
bool dimsDiffer(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// ScatterElements, and the deprecated Scatter (opset 9-10).
Results importScatterElements(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/true)))
    return failure();
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]),
                   updates = tensorType((*in)[2]);
  if (indices.getRank() != data.getRank() ||
      updates.getRank() != data.getRank() ||
      llvm::any_of(llvm::seq<int64_t>(0, data.getRank()), [&](int64_t d) {
        return dimsDiffer(indices.getDimSize(d), updates.getDimSize(d));
      })) {
    ctx.error() << "indices " << indices << " and updates " << updates
                << " must have the same shape and the rank of the data "
                << data;
    return failure();
  }
  if (updates.getElementType() != data.getElementType()) {
    ctx.error() << "updates element type " << updates.getElementType()
                << " differs from the data's " << data.getElementType();
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), data.getRank());
  if (failed(axis))
    return failure();
  FailureOr<std::string> reduction =
      ctx.node().op_type() == "Scatter"
          ? FailureOr<std::string>(std::string("none"))
          : scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  return single(ctx.create1<ScatterElementsOp>(
      *in,
      {ctx.namedI64("axis", *axis), ctx.namedStr("reduction", *reduction)}));
}

Results importScatterND(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/false)))
    return failure();
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]),
                   updates = tensorType((*in)[2]);
  if (indices.getRank() < 1 || indices.isDynamicDim(indices.getRank() - 1)) {
    ctx.error() << "indices " << indices
                << " must have a static last dim (the index tuple length)";
    return failure();
  }
  int64_t tuple = indices.getShape().back();
  if (tuple > data.getRank()) {
    ctx.error() << "index tuples of " << tuple << " exceed the data rank "
                << data.getRank();
    return failure();
  }
  // updates.shape == indices.shape[:-1] + data.shape[tuple:]
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(tuple));
  if ((int64_t)expected.size() != updates.getRank() ||
      llvm::any_of(llvm::zip(expected, updates.getShape()), [](auto pair) {
        return dimsDiffer(std::get<0>(pair), std::get<1>(pair));
      })) {
    ctx.error() << "updates " << updates << " do not match indices " << indices
                << " and data " << data;
    return failure();
  }
  if (updates.getElementType() != data.getElementType()) {
    ctx.error() << "updates element type " << updates.getElementType()
                << " differs from the data's " << data.getElementType();
    return failure();
  }
  FailureOr<std::string> reduction = scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  return single(
      ctx.create1<ScatterNDOp>(*in, {ctx.namedStr("reduction", *reduction)}));
}

/// ReverseSequence: along time_axis, the first sequence_lens[b] steps of
/// each batch b reversed and the rest kept, as a GatherElements by a
/// constant index table ([T, B] or [B, T], expanded over the other dims).
Results importReverseSequence(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0];
  RankedTensorType xt = tensorType(x);
  int64_t timeAxis = ctx.getInt("time_axis", 0),
          batchAxis = ctx.getInt("batch_axis", 1);
  std::optional<SmallVector<int64_t>> lengths = ctx.constInts((*in)[1]);
  if (ctx.hadAttributeError())
    return failure();
  if (xt.getRank() < 2 || !xt.hasStaticShape() ||
      !llvm::is_contained({0, 1}, timeAxis) || batchAxis != 1 - timeAxis) {
    ctx.error() << "expects a static input of rank >= 2 with time_axis and "
                   "batch_axis 0 and 1 (either way), got "
                << xt;
    return failure();
  }
  int64_t steps = xt.getDimSize(timeAxis), batch = xt.getDimSize(batchAxis);
  if (!lengths || (int64_t)lengths->size() != batch ||
      llvm::any_of(*lengths, [&](int64_t n) { return n < 0 || n > steps; })) {
    ctx.error() << "sequence_lens must be a constant of " << batch
                << " lengths from 0 to " << steps;
    return failure();
  }
  // The index table is built here, a value per (step, batch).
  if (batch > 0 && steps > (int64_t(1) << 24) / batch) {
    ctx.error() << "a sequence of " << steps << " steps x " << batch
                << " batches is too large to reverse (at most 2^24)";
    return failure();
  }
  SmallVector<int64_t> table;
  SmallVector<int64_t> tableShape(xt.getRank(), 1);
  tableShape[0] = xt.getDimSize(0);
  tableShape[1] = xt.getDimSize(1);
  for (int64_t i = 0; i < tableShape[0]; ++i)
    for (int64_t j = 0; j < tableShape[1]; ++j) {
      int64_t t = timeAxis == 0 ? i : j, b = timeAxis == 0 ? j : i;
      int64_t n = (*lengths)[b];
      table.push_back(t < n ? n - 1 - t : t);
    }
  Value index = ctx.constI64(table, tableShape);
  FailureOr<Value> full = ctx.create1<ExpandOp>(
      {index}, {},
      {RankedTensorType::get(xt.getShape(), tensorType(index).getElementType())});
  if (failed(full))
    return failure();
  return single(ctx.create1<GatherElementsOp>(
      {x, *full}, {ctx.namedI64("axis", timeAxis)}));
}

/// MaxUnpool: X's values put at the flat positions `indices` gives (as
/// MaxPool's Indices) in zeros of the unpooled shape, then placed in the
/// corner of output_shape when that is larger.
Results importMaxUnpool(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], indices = (*in)[1];
  RankedTensorType xt = tensorType(x);
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (ctx.hadAttributeError())
    return failure();
  int64_t spatial = xt.getRank() - 2;
  if (spatial < 1 || !xt.hasStaticShape() || !kernel ||
      (int64_t)kernel->size() != spatial ||
      tensorType(indices).getShape() != xt.getShape()) {
    ctx.error() << "expects a static [N, C, ...] input, indices of its shape "
                   "and kernel_shape, got "
                << xt;
    return failure();
  }
  SmallVector<int64_t> strides =
      ctx.getInts("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads =
      ctx.getInts("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if ((int64_t)strides.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial) {
    ctx.error() << "strides and pads must have " << spatial << " and "
                << 2 * spatial << " entries";
    return failure();
  }
  // Attribute values bounded first: the sizes below must not overflow.
  auto bounded = [](int64_t v) { return v >= 0 && v <= (1 << 20); };
  if (!llvm::all_of(strides, bounded) || !llvm::all_of(pads, bounded) ||
      !llvm::all_of(*kernel, bounded) || xt.getNumElements() == 0) {
    ctx.error() << "strides, pads and kernel_shape must be 0 to 2^20 and "
                   "the input non-empty";
    return failure();
  }
  SmallVector<int64_t> unpooled = {xt.getDimSize(0), xt.getDimSize(1)};
  int64_t total = unpooled[0] * unpooled[1];
  for (int64_t d = 0; d < spatial; ++d) {
    unpooled.push_back((xt.getDimSize(d + 2) - 1) * strides[d] -
                       (pads[d] + pads[spatial + d]) + (*kernel)[d]);
    if (unpooled.back() < 1 || unpooled.back() > (1 << 24) / total) {
      ctx.error() << "the unpooled shape must have 1 to 2^24 elements";
      return failure();
    }
    total *= unpooled.back();
  }
  Type element = xt.getElementType();
  Value zeros = ctx.constant(DenseElementsAttr::get(
      RankedTensorType::get({total}, element),
      isa<FloatType>(element) ? Attribute(FloatAttr::get(element, 0.0))
                              : Attribute(IntegerAttr::get(element, 0))));
  int64_t n = xt.getNumElements();
  FailureOr<Value> flatX = reshapeTo(ctx, x, {n}),
                   flatI = reshapeTo(ctx, indices, {n});
  if (failed(flatX) || failed(flatI))
    return failure();
  FailureOr<Value> scattered = ctx.create1<ScatterElementsOp>(
      {zeros, *flatI, *flatX},
      {ctx.namedI64("axis", 0), ctx.namedStr("reduction", "none")});
  if (failed(scattered) ||
      failed(scattered = reshapeTo(ctx, *scattered, unpooled)))
    return failure();
  Value shapeInput = ctx.input(2);
  if (!shapeInput)
    return single(scattered);
  std::optional<SmallVector<int64_t>> target = ctx.constInts(shapeInput);
  if (!target || target->size() != unpooled.size()) {
    ctx.error() << "output_shape must be a constant of " << unpooled.size()
                << " dims";
    return failure();
  }
  SmallVector<int64_t> padding(2 * unpooled.size(), 0);
  for (size_t d = 0; d < unpooled.size(); ++d) {
    if ((*target)[d] < unpooled[d]) {
      ctx.error() << "output_shape dim " << d << " (" << (*target)[d]
                  << ") is smaller than the unpooled " << unpooled[d];
      return failure();
    }
    padding[unpooled.size() + d] = (*target)[d] - unpooled[d];
  }
  return single(ctx.create1<PadOp>({*scattered},
                                   {ctx.namedI64Array("pads", padding),
                                    ctx.namedStr("mode", "constant"),
                                    ctx.namedF64("value", 0.0)}));
}

} // namespace

void cgc::onnx_import::registerGatherScatterOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Gather", importGather, "`cgc.gather`");
  add("GatherElements", importGatherElements, "`cgc.gather_elements`");
  add("GatherND", importGatherND, "`cgc.gather_nd`");
  add("ScatterElements", importScatterElements, "`cgc.scatter_elements`");
  add("ReverseSequence", importReverseSequence,
      "`cgc.gather_elements` by a constant index table (constant lengths)");
  add("MaxUnpool", importMaxUnpool,
      "`cgc.scatter_elements` of X at its indices into zeros, `cgc.pad` to "
      "output_shape");
  add("Scatter", importScatterElements,
      "`cgc.scatter_elements` (deprecated op name)");
  add("ScatterND", importScatterND, "`cgc.scatter_nd`");
}
