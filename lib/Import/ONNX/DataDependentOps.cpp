//===- DataDependentOps.cpp - importers of data-dependent shapes ----------===//

#include "TensorHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

//===----------------------------------------------------------------------===//
// Data-dependent shapes: NonZero, Compress, Unique, NonMaxSuppression
//===----------------------------------------------------------------------===//

Results importNonZero(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  Type i64 = ctx.builder().getI64Type();
  // A small constant input folds to its indices.
  if (DenseElementsAttr dense = inlineDense(*x);
      dense && dense.getNumElements() <= kMaxFoldElements) {
    SmallVector<bool> nonzero;
    if (isa<FloatType>(dense.getElementType()))
      for (const APFloat &v : dense.getValues<APFloat>())
        nonzero.push_back(!v.isZero());
    else
      for (const APInt &v : dense.getValues<APInt>())
        nonzero.push_back(!v.isZero());
    int64_t rank = type.getRank(), count = llvm::count(nonzero, true);
    SmallVector<int64_t> values(rank * count);
    int64_t column = 0;
    for (auto [flat, nz] : llvm::enumerate(nonzero)) {
      if (!nz)
        continue;
      int64_t rest = flat;
      for (int64_t d = rank - 1; d >= 0; --d) {
        values[d * count + column] = rest % type.getDimSize(d);
        rest /= type.getDimSize(d);
      }
      ++column;
    }
    auto resultType = RankedTensorType::get({rank, count}, i64);
    return SmallVector<Value>{ctx.constant(intElements(resultType, values))};
  }
  return single(ctx.create1<NonZeroOp>(
      {*x}, {}, {RankedTensorType::get({type.getRank(), kDyn}, i64)}));
}

Results importCompress(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  RankedTensorType type = tensorType((*in)[0]);
  RankedTensorType condType = tensorType((*in)[1]);
  if (condType.getRank() != 1 || !condType.getElementType().isInteger(1)) {
    ctx.error() << "condition must be a 1-D bool tensor, got " << condType;
    return failure();
  }
  SmallVector<NamedAttribute> attrs;
  std::optional<int64_t> axis;
  if (ctx.hasAttr("axis")) {
    FailureOr<int64_t> a =
        normalizeAxis(ctx, ctx.getInt("axis", 0), type.getRank());
    if (failed(a))
      return failure();
    axis = *a;
    attrs.push_back(ctx.namedI64("axis", *axis));
  }
  int64_t extent = axis
                       ? type.getDimSize(*axis)
                       : (type.hasStaticShape() ? type.getNumElements() : kDyn);
  // A constant condition fixes the result size: the true entries among the
  // first min(len(condition), extent) (a shorter condition truncates).
  int64_t count = kDyn;
  DenseElementsAttr cond = inlineDense((*in)[1]);
  if (cond &&
      (!ShapedType::isDynamic(extent) ||
       llvm::none_of(cond.getValues<bool>(), [](bool b) { return b; }))) {
    count = 0;
    int64_t i = 0;
    for (bool b : cond.getValues<bool>()) {
      if (!ShapedType::isDynamic(extent) && i++ >= extent)
        break;
      count += b;
    }
  }
  SmallVector<int64_t> shape;
  if (axis) {
    shape.assign(type.getShape().begin(), type.getShape().end());
    shape[*axis] = count;
  } else {
    shape.push_back(count);
  }
  return single(ctx.create1<CompressOp>(
      *in, attrs, {RankedTensorType::get(shape, type.getElementType())}));
}

Results importUnique(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  Type i64 = ctx.builder().getI64Type();
  SmallVector<NamedAttribute> attrs = {
      ctx.namedBool("sorted", ctx.getInt("sorted", 1) != 0)};
  SmallVector<int64_t> valuesShape;
  int64_t inverseSize;
  if (ctx.hasAttr("axis")) {
    FailureOr<int64_t> axis =
        normalizeAxis(ctx, ctx.getInt("axis", 0), type.getRank());
    if (failed(axis))
      return failure();
    attrs.push_back(ctx.namedI64("axis", *axis));
    valuesShape.assign(type.getShape().begin(), type.getShape().end());
    valuesShape[*axis] = kDyn;
    inverseSize = type.getDimSize(*axis);
  } else {
    valuesShape.push_back(kDyn);
    inverseSize = type.hasStaticShape() ? type.getNumElements() : kDyn;
  }
  if (ctx.hadAttributeError())
    return failure();
  SmallVector<Type> types = {
      RankedTensorType::get(valuesShape, type.getElementType()),
      RankedTensorType::get({kDyn}, i64),
      RankedTensorType::get({inverseSize}, i64),
      RankedTensorType::get({kDyn}, i64)};
  FailureOr<Operation *> op = ctx.create<UniqueOp>({*x}, attrs, types);
  if (failed(op))
    return failure();
  return SmallVector<Value>((*op)->getResults());
}

/// ONNX NonMaxSuppression; absent parameters take ONNX's defaults (no box
/// kept without max_output_boxes_per_class, IoU threshold 0, every score).
Results importNonMaxSuppression(NodeContext &ctx) {
  FailureOr<Value> boxes = ctx.requiredInput(0);
  FailureOr<Value> scores = ctx.requiredInput(1);
  if (failed(boxes) || failed(scores))
    return failure();
  RankedTensorType boxesType = tensorType(*boxes),
                   scoresType = tensorType(*scores);
  if (boxesType.getRank() != 3 || scoresType.getRank() != 3 ||
      !isa<FloatType>(boxesType.getElementType()) ||
      scoresType.getElementType() != boxesType.getElementType()) {
    ctx.error() << "needs float boxes [batches, boxes, 4] and scores "
                   "[batches, classes, boxes] of one type, got "
                << boxesType << " and " << scoresType;
    return failure();
  }
  auto known = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  if (!known(boxesType.getDimSize(2), 4) ||
      !known(boxesType.getDimSize(0), scoresType.getDimSize(0)) ||
      !known(boxesType.getDimSize(1), scoresType.getDimSize(2))) {
    ctx.error() << "boxes " << boxesType << " and scores " << scoresType
                << " disagree (boxes is [batches, boxes, 4], scores "
                   "[batches, classes, boxes])";
    return failure();
  }
  int64_t centerPointBox = ctx.getInt("center_point_box", 0);
  if (centerPointBox != 0 && centerPointBox != 1) {
    ctx.error() << "center_point_box must be 0 or 1, got " << centerPointBox;
    return failure();
  }
  Type element = boxesType.getElementType();
  Type i64 = ctx.builder().getI64Type();
  // Each parameter is one value; an empty name means ONNX's default.
  auto scalarInput = [&](size_t i, Type type) -> FailureOr<Value> {
    Value v = ctx.input(i);
    if (!v)
      return ctx.constScalar(0, type);
    if (!hasOneElement(v) || tensorType(v).getElementType() != type) {
      ctx.error() << "input #" << i << " must be one " << type << ", got "
                  << v.getType();
      return failure();
    }
    return reshapeTo(ctx, v, {});
  };
  FailureOr<Value> maxOutput = scalarInput(2, i64);
  FailureOr<Value> iou = scalarInput(3, element);
  FailureOr<Value> scoreThreshold = scalarInput(4, element);
  if (failed(maxOutput) || failed(iou) || failed(scoreThreshold) ||
      ctx.hadAttributeError())
    return failure();
  return single(ctx.create1<NonMaxSuppressionOp>(
      {*boxes, *scores, *maxOutput, *iou, *scoreThreshold},
      {ctx.namedI64("center_point_box", centerPointBox),
       ctx.namedBool("score_threshold_given", (bool)ctx.input(4))},
      {RankedTensorType::get({kDyn, 3}, i64)}));
}

} // namespace

void cgc::onnx_import::registerDataDependentOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("NonZero", importNonZero, "`cgc.nonzero` (folded for constants)");
  add("Compress", importCompress, "`cgc.compress`");
  add("Unique", importUnique, "`cgc.unique`");
  add("NonMaxSuppression", importNonMaxSuppression,
      "`cgc.non_max_suppression` (runs on the host)");
}
