//===- TensorHelpers.cpp - shared by the data movement importers ----------===//

#include "TensorHelpers.h"

using namespace mlir;
using namespace cgc;

namespace cgc::onnx_import {

/// Normalizes ONNX axes against `rank`; rejects out-of-range and repeated
/// entries.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext &ctx,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank,
                                              StringRef what) {
  SmallVector<int64_t> result;
  SmallVector<bool> seen(rank, false);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      ctx.error() << what << " entry " << axis << " is out of range for rank "
                  << rank;
      return failure();
    }
    int64_t a = axis < 0 ? axis + rank : axis;
    if (seen[a]) {
      ctx.error() << what << " entry " << axis << " is repeated";
      return failure();
    }
    seen[a] = true;
    result.push_back(a);
  }
  return result;
}

/// Rejects result shapes whose static dims multiply past 2^40 elements (the
/// importer's tensor size limit), so that no later size arithmetic
/// overflows.
LogicalResult checkShapeInput(NodeContext &ctx, RankedTensorType shapeType) {
  if (shapeType.getRank() != 1 || shapeType.isDynamicDim(0) ||
      !shapeType.getElementType().isInteger(64)) {
    ctx.error() << "the shape input must be a 1-D i64 tensor of static "
                << "length, got " << shapeType;
    return failure();
  }
  if (shapeType.getDimSize(0) > kMaxRank) {
    ctx.error() << "the shape input has " << shapeType.getDimSize(0)
                << " entries (at most " << kMaxRank << " dims)";
    return failure();
  }
  return success();
}

LogicalResult checkElementCount(NodeContext &ctx, ArrayRef<int64_t> shape) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim) || dim == 0)
      continue;
    if (dim < 0 || dim > kLimit || count > kLimit / dim) {
      ctx.error() << "the result shape is too large";
      return failure();
    }
    count *= dim;
  }
  return success();
}

/// Reshapes `x` to `shape`. A kDyn entry of `shape` is input dim
/// `source[i]` (source is -1 for static entries); when any entry is dynamic
/// the target shape is computed at run time from Shape slices.
FailureOr<Value> reshapeKeepingDims(NodeContext &ctx, Value x,
                                    ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> source) {
  if (llvm::none_of(shape, ShapedType::isDynamic))
    return reshapeTo(ctx, x, shape);
  auto resultType =
      RankedTensorType::get(shape, tensorType(x).getElementType());
  if (resultType == x.getType())
    return x;
  SmallVector<Value> parts;
  SmallVector<int64_t> pending;
  auto flush = [&]() {
    if (!pending.empty())
      parts.push_back(ctx.constI64(pending, {(int64_t)pending.size()}));
    pending.clear();
  };
  for (auto [dim, from] : llvm::zip(shape, source)) {
    if (!ShapedType::isDynamic(dim)) {
      pending.push_back(dim);
      continue;
    }
    flush();
    FailureOr<Value> part = ctx.create1<ShapeOp>(
        {x}, {ctx.namedI64("start", from), ctx.namedI64("end", from + 1)});
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  flush();
  FailureOr<Value> target =
      parts.size() == 1
          ? FailureOr<Value>(parts.front())
          : ctx.create1<ConcatOp>(parts, {ctx.namedI64("axis", 0)});
  if (failed(target))
    return failure();
  return ctx.create1<ReshapeOp>({x, *target}, {}, {resultType});
}

/// The inline dense value of a constant, or null.
DenseElementsAttr inlineDense(Value v) {
  auto constant = v ? v.getDefiningOp<ConstantOp>() : nullptr;
  return constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
}

/// Integer (or i1) elements of `type` from int64 values.
DenseElementsAttr intElements(RankedTensorType type, ArrayRef<int64_t> values) {
  auto intType = cast<IntegerType>(type.getElementType());
  SmallVector<APInt> bits;
  for (int64_t v : values) {
    if (intType.getWidth() == 1)
      v = v != 0;
    bits.push_back(APInt(intType.getWidth(), (uint64_t)v,
                         /*isSigned=*/!intType.isUnsigned(),
                         /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(type, bits);
}

/// Floating-point elements of `type` from doubles.
DenseElementsAttr floatElements(RankedTensorType type,
                                ArrayRef<double> values) {
  auto floatType = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> converted;
  for (double v : values) {
    APFloat f(v);
    bool lost;
    f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lost);
    converted.push_back(f);
  }
  return DenseElementsAttr::get(type, converted);
}

/// Elements of `type` (any supported element type) from doubles.
DenseElementsAttr numericElements(RankedTensorType type,
                                  ArrayRef<double> values) {
  if (isa<FloatType>(type.getElementType()))
    return floatElements(type, values);
  SmallVector<int64_t> ints;
  for (double v : values)
    ints.push_back((int64_t)v);
  return intElements(type, ints);
}

/// A scalar read from a one-element constant (int or float) as a double.
std::optional<double> constScalarValue(NodeContext &ctx, Value v) {
  std::optional<SmallVector<double>> values = ctx.constFloats(v);
  if (!values || values->size() != 1)
    return std::nullopt;
  return (*values)[0];
}

/// Reads the ONNX `axes`-like ints from input `index` (newer opsets) or the
/// attribute `name`; absent or empty gives nullopt.
FailureOr<std::optional<SmallVector<int64_t>>>
optionalInts(NodeContext &ctx, size_t index, StringRef name) {
  FailureOr<std::optional<SmallVector<int64_t>>> ints =
      ctx.intsFromInputOrAttr(index, name);
  if (failed(ints) || ctx.hadAttributeError())
    return failure();
  return *ints;
}

} // namespace cgc::onnx_import
