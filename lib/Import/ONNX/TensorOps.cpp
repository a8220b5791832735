//===- TensorOps.cpp - importers of data movement and constant ops --------===//

#include "ImportHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// Identity, and ops that are the identity at inference (Dropout).
Results importIdentity(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  if (ctx.node().op_type() == "Dropout" && ctx.isOutputUsed(1)) {
    ctx.error() << "the mask output is not supported (inference only)";
    return failure();
  }
  return SmallVector<Value>{*x};
}

Results importConstant(NodeContext &ctx) {
  if (const onnx::TensorProto *tensor = ctx.getTensor("value")) {
    FailureOr<ElementsAttr> value = ctx.graph().convertTensor(
        *tensor, "constant '" + ctx.node().output(0) + "'");
    if (failed(value))
      return failure();
    return SmallVector<Value>{
        ConstantOp::create(ctx.builder(), ctx.loc(), *value).getResult()};
  }
  Builder &b = ctx.builder();
  if (ctx.hasAttr("value_float"))
    return SmallVector<Value>{
        ctx.constScalar(ctx.getFloat("value_float", 0), b.getF32Type())};
  if (ctx.hasAttr("value_int"))
    return SmallVector<Value>{
        ctx.constScalar((double)ctx.getInt("value_int", 0), b.getI64Type())};
  if (std::optional<SmallVector<int64_t>> ints = ctx.getInts("value_ints"))
    return SmallVector<Value>{ctx.constI64(*ints, {(int64_t)ints->size()})};
  if (std::optional<SmallVector<double>> floats = ctx.getFloats("value_floats")) {
    SmallVector<float> values(floats->begin(), floats->end());
    auto type = RankedTensorType::get({(int64_t)values.size()}, b.getF32Type());
    return SmallVector<Value>{
        ctx.constant(DenseElementsAttr::get(type, ArrayRef<float>(values)))};
  }
  if (ctx.hadAttributeError())
    return failure();
  ctx.error() << "needs a value, value_float(s) or value_int(s) attribute "
                 "(sparse and string constants are not supported)";
  return failure();
}

/// Resolves ONNX Reshape's 0 (copy, unless allowzero) and -1 (infer) entries.
/// Unknown entries (symbolic dims) stay kDynamic.
FailureOr<SmallVector<int64_t>> resolveReshape(NodeContext &ctx,
                                               RankedTensorType input,
                                               ArrayRef<int64_t> target,
                                               bool allowZero) {
  SmallVector<int64_t> shape;
  int64_t inferIndex = -1;
  for (auto [i, dim] : llvm::enumerate(target)) {
    if (dim == -1) {
      if (inferIndex >= 0) {
        ctx.error() << "shape has more than one -1";
        return failure();
      }
      inferIndex = i;
      shape.push_back(ShapedType::kDynamic);
    } else if (dim == 0 && !allowZero) {
      if (i >= (size_t)input.getRank()) {
        ctx.error() << "shape entry " << i << " is 0 but the input has rank "
                    << input.getRank();
        return failure();
      }
      shape.push_back(input.getDimSize(i));
    } else if (dim < -1 && !ShapedType::isDynamic(dim)) {
      ctx.error() << "invalid shape entry " << dim;
      return failure();
    } else {
      shape.push_back(dim);
    }
  }
  if (inferIndex >= 0 && input.hasStaticShape()) {
    int64_t known = 1;
    bool allKnown = true;
    for (auto [i, dim] : llvm::enumerate(shape))
      if ((int64_t)i != inferIndex) {
        allKnown &= !ShapedType::isDynamic(dim);
        known *= ShapedType::isDynamic(dim) ? 1 : dim;
      }
    if (allKnown) {
      if (known == 0 || input.getNumElements() % known != 0) {
        ctx.error() << "cannot reshape " << input << " to the requested shape";
        return failure();
      }
      shape[inferIndex] = input.getNumElements() / known;
    }
  }
  return shape;
}

Results importReshape(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in;
  SmallVector<int64_t> target;
  Value shapeOperand;
  if (ctx.opset() < 5 || !ctx.hasInput(1)) {
    in = requiredInputs(ctx, 1);
    if (failed(in))
      return failure();
    target = ctx.getInts("shape").value_or(SmallVector<int64_t>{});
  } else {
    in = requiredInputs(ctx, 2);
    if (failed(in))
      return failure();
    shapeOperand = (*in)[1];
    std::optional<SmallVector<int64_t>> known = ctx.constInts(shapeOperand);
    if (!known)
      known = ctx.graph().partialInts(shapeOperand);
    if (!known) {
      auto shapeType = tensorType(shapeOperand);
      if (shapeType.getRank() != 1 || shapeType.isDynamicDim(0)) {
        ctx.error() << "the target shape must be 1-D with a static length";
        return failure();
      }
      known = SmallVector<int64_t>(shapeType.getDimSize(0),
                                   ShapedType::kDynamic);
    }
    target = *known;
  }
  RankedTensorType input = tensorType((*in)[0]);
  FailureOr<SmallVector<int64_t>> shape = resolveReshape(
      ctx, input, target, ctx.getInt("allowzero", 0) != 0);
  if (failed(shape))
    return failure();
  auto resultType = RankedTensorType::get(*shape, input.getElementType());
  SmallVector<Value> operands = {(*in)[0]};
  if (!resultType.hasStaticShape()) {
    if (!shapeOperand) {
      ctx.error() << "cannot resolve the target shape";
      return failure();
    }
    operands.push_back(shapeOperand);
  }
  return single(ctx.create1<ReshapeOp>(operands, {}, {resultType}));
}

Results importShape(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  int64_t start = clampIndex(ctx.getInt("start", 0));
  int64_t end = clampIndex(ctx.getInt("end", rank));
  end = std::max(start, end);
  return single(ctx.create1<ShapeOp>(
      {*x}, {ctx.namedI64("start", start), ctx.namedI64("end", end)}));
}

Results importFlatten(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t rank = type.getRank();
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank) {
    ctx.error() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  if (axis < 0)
    axis += rank;
  auto product = [&](int64_t from, int64_t to) {
    int64_t p = 1;
    for (int64_t d = from; d < to; ++d) {
      if (type.isDynamicDim(d))
        return ShapedType::kDynamic;
      p *= type.getDimSize(d);
    }
    return p;
  };
  SmallVector<int64_t> shape = {product(0, axis), product(axis, rank)};
  if (!ShapedType::isDynamic(shape[0]) && !ShapedType::isDynamic(shape[1]))
    return single(reshapeTo(ctx, *x, shape));
  // Unbound symbolic dims: compute the 2-D shape at run time from Shape.
  SmallVector<Value> parts;
  for (auto [from, to] : {std::pair{int64_t(0), axis}, std::pair{axis, rank}}) {
    FailureOr<Value> dims = ctx.create1<ShapeOp>(
        {*x}, {ctx.namedI64("start", from), ctx.namedI64("end", to)});
    if (failed(dims))
      return failure();
    FailureOr<Value> prod =
        from == to ? FailureOr<Value>(ctx.constI64({1}, {1}))
                   : ctx.create1<ReduceProdOp>(
                         {*dims}, {ctx.namedI64Array("axes", {0}),
                                   ctx.namedBool("keepdims", true)});
    if (failed(prod))
      return failure();
    parts.push_back(*prod);
  }
  FailureOr<Value> target =
      ctx.create1<ConcatOp>(parts, {ctx.namedI64("axis", 0)});
  if (failed(target))
    return failure();
  return single(ctx.create1<ReshapeOp>(
      {*x, *target}, {},
      {RankedTensorType::get(shape, type.getElementType())}));
}

} // namespace

void cgc::onnx_import::registerTensorOps(ImporterTable &t) {
  auto add = [&](const char *name, ImportFn fn, std::string note) {
    t[name] = OpImporter{std::move(fn), std::move(note)};
  };
  add("Identity", importIdentity, "forwarded (no op)");
  add("Dropout", importIdentity, "forwarded (inference: identity)");
  add("Constant", importConstant, "`cgc.constant`");
  add("Reshape", importReshape, "`cgc.reshape` (target shape folded)");
  add("Shape", importShape, "`cgc.shape` (folds when dims are static)");
  add("Flatten", importFlatten, "`cgc.reshape` to 2-D");
}
