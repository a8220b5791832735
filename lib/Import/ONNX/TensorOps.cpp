//===- TensorOps.cpp - importers of data movement and constant ops --------===//

#include "ImportHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// Identity, and ops that are the identity at inference (Dropout, whose
/// mask output is then all true).
Results importIdentity(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  if (ctx.node().op_type() != "Dropout")
    return SmallVector<Value>{*x};
  // A constant ratio of 0 drops nothing, in training mode too.
  std::optional<SmallVector<double>> ratio = ctx.constFloats(ctx.input(1));
  bool dropsNothing = ratio && ratio->size() == 1 && (*ratio)[0] == 0.0;
  // Opset 12+: a third input selects training (random masks), which is not
  // supported; it must be absent or a constant false.
  if (ctx.hasInput(2) && !dropsNothing) {
    std::optional<SmallVector<int64_t>> training = ctx.constInts(ctx.input(2));
    if (!training || training->size() != 1 || (*training)[0] != 0) {
      ctx.error() << "training mode is not supported (training_mode must be "
                     "absent or a constant false)";
      return failure();
    }
  }
  if (!ctx.isOutputUsed(1))
    return SmallVector<Value>{*x};
  RankedTensorType type = tensorType(*x);
  if (!type.hasStaticShape()) {
    ctx.error() << "the mask output needs a static shape";
    return failure();
  }
  auto maskType = RankedTensorType::get(type.getShape(),
                                        ctx.builder().getI1Type());
  Value mask = ctx.constant(DenseElementsAttr::get(maskType, true));
  return SmallVector<Value>{*x, mask};
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
        ctx.constInt(ctx.getInt("value_int", 0), b.getI64Type())};
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
  // Keeps the product below from overflowing.
  if (!isWithinSizeLimit(shape, input.getElementType())) {
    ctx.error() << "the requested shape holds more than " << kMaxTensorBytes
                << " bytes";
    return failure();
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
      if (shapeType.getDimSize(0) > kMaxRank) {
        ctx.error() << "the target shape has " << shapeType.getDimSize(0)
                    << " entries (at most " << kMaxRank << " dims)";
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
  SmallVector<NamedAttribute> attrs;
  if (!resultType.hasStaticShape()) {
    if (!shapeOperand) {
      ctx.error() << "cannot resolve the target shape";
      return failure();
    }
    operands.push_back(shapeOperand);
    // The run-time shape keeps ONNX's meaning of 0.
    if (ctx.getInt("allowzero", 0) != 0)
      attrs.push_back(ctx.named("allowzero", ctx.builder().getUnitAttr()));
  }
  return single(ctx.create1<ReshapeOp>(operands, attrs, {resultType}));
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

//===----------------------------------------------------------------------===//
// Shared helpers of the data movement importers
//===----------------------------------------------------------------------===//

constexpr int64_t kDyn = ShapedType::kDynamic;
constexpr int64_t kMaxFoldElements = 1 << 16;

/// Normalizes ONNX axes against `rank`; rejects out-of-range and repeated
/// entries.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext &ctx,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank,
                                              StringRef what = "axes") {
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

//===----------------------------------------------------------------------===//
// Squeeze, Unsqueeze, Transpose, Concat, Split, Slice
//===----------------------------------------------------------------------===//

Results importSqueeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t rank = type.getRank();
  FailureOr<std::optional<SmallVector<int64_t>>> axesOr =
      optionalInts(ctx, 1, "axes");
  if (failed(axesOr))
    return failure();
  SmallVector<bool> drop(rank, false);
  if (!*axesOr || (*axesOr)->empty()) {
    // No axes: remove every dim of size 1 (needs static dims).
    for (int64_t d = 0; d < rank; ++d) {
      if (type.isDynamicDim(d)) {
        ctx.error() << "without axes every dim must be static, but dim " << d
                    << " of " << type << " is dynamic";
        return failure();
      }
      drop[d] = type.getDimSize(d) == 1;
    }
  } else {
    FailureOr<SmallVector<int64_t>> axes = normalizeAxes(ctx, **axesOr, rank);
    if (failed(axes))
      return failure();
    for (int64_t a : *axes) {
      if (!type.isDynamicDim(a) && type.getDimSize(a) != 1) {
        ctx.error() << "cannot squeeze dim " << a << " of size "
                    << type.getDimSize(a);
        return failure();
      }
      drop[a] = true;
    }
  }
  SmallVector<int64_t> shape, source;
  for (int64_t d = 0; d < rank; ++d) {
    if (drop[d])
      continue;
    shape.push_back(type.getDimSize(d));
    source.push_back(d);
  }
  return single(reshapeKeepingDims(ctx, *x, shape, source));
}

Results importUnsqueeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  FailureOr<std::optional<SmallVector<int64_t>>> axesOr =
      optionalInts(ctx, 1, "axes");
  if (failed(axesOr))
    return failure();
  if (!*axesOr) {
    ctx.error() << (ctx.opset() < 13 ? "the axes attribute is required"
                                     : "the axes input is required");
    return failure();
  }
  int64_t outRank = type.getRank() + (int64_t)(*axesOr)->size();
  FailureOr<SmallVector<int64_t>> axes = normalizeAxes(ctx, **axesOr, outRank);
  if (failed(axes))
    return failure();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t a : *axes)
    inserted[a] = true;
  SmallVector<int64_t> shape, source;
  int64_t next = 0;
  for (int64_t d = 0; d < outRank; ++d) {
    if (inserted[d]) {
      shape.push_back(1);
      source.push_back(-1);
    } else {
      shape.push_back(type.getDimSize(next));
      source.push_back(next++);
    }
  }
  return single(reshapeKeepingDims(ctx, *x, shape, source));
}

Results importTranspose(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("perm")) {
    perm = *given;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  if (ctx.hadAttributeError())
    return failure();
  if ((int64_t)perm.size() != rank) {
    ctx.error() << "perm has " << perm.size() << " entries but the input has "
                << "rank " << rank;
    return failure();
  }
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) {
      ctx.error() << "perm is not a permutation of [0, " << rank << ")";
      return failure();
    }
    seen[p] = true;
  }
  return single(
      ctx.create1<TransposeOp>({*x}, {ctx.namedI64Array("perm", perm)}));
}

Results importConcat(NodeContext &ctx) {
  if (ctx.numInputs() == 0) {
    ctx.error() << "needs at least one input";
    return failure();
  }
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, ctx.numInputs());
  if (failed(in))
    return failure();
  if (!ctx.hasAttr("axis")) {
    ctx.error() << "the axis attribute is required";
    return failure();
  }
  int64_t rank = tensorType(in->front()).getRank();
  for (Value v : *in) {
    if (tensorType(v).getRank() != rank) {
      ctx.error() << "inputs differ in rank: " << in->front().getType()
                  << " vs " << v.getType();
      return failure();
    }
  }
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  return single(ctx.create1<ConcatOp>(*in, {ctx.namedI64("axis", *axis)}));
}

/// Clamped ONNX slice bounds for one dim of static size `dim`.
void clampSlice(int64_t dim, int64_t step, int64_t &start, int64_t &end) {
  if (dim == 0) {
    start = end = 0;
    return;
  }
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
}

/// Builds one cgc.slice over all dims of `x`; dims not in `axes` are kept
/// whole.
FailureOr<Value> sliceAlong(NodeContext &ctx, Value x, ArrayRef<int64_t> axes,
                            ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
                            ArrayRef<int64_t> steps) {
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  SmallVector<int64_t> allStarts(rank, 0), allEnds(rank), allSteps(rank, 1);
  for (int64_t d = 0; d < rank; ++d)
    allEnds[d] = type.getDimSize(d); // kDyn for a dynamic dim: untouched
  for (auto [i, axis] : llvm::enumerate(axes)) {
    int64_t start = starts[i], end = ends[i], step = steps[i];
    if (step == 0) {
      ctx.error() << "slice step must not be 0";
      return failure();
    }
    if (type.isDynamicDim(axis)) {
      // Only the whole-dim slice is expressible on a dynamic dim.
      if (step == 1 && start == 0 &&
          end >= (int64_t)std::numeric_limits<int32_t>::max())
        continue;
      ctx.error() << "cannot slice dynamic dim " << axis << " of " << type
                  << " (bind its size with --dim/--shape)";
      return failure();
    }
    clampSlice(type.getDimSize(axis), step, start, end);
    allStarts[axis] = start;
    allEnds[axis] = end;
    allSteps[axis] = step;
  }
  return ctx.create1<SliceOp>({x}, {ctx.namedI64Array("starts", allStarts),
                                    ctx.namedI64Array("ends", allEnds),
                                    ctx.namedI64Array("steps", allSteps)});
}

Results importSlice(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  // Opset < 10: attributes; later: inputs (which must be constant).
  bool fromInputs = ctx.opset() >= 10;
  auto read =
      [&](size_t index,
          StringRef name) -> FailureOr<std::optional<SmallVector<int64_t>>> {
    if (!fromInputs)
      return optionalInts(ctx, /*index=*/~size_t(0), name);
    return optionalInts(ctx, index, "");
  };
  FailureOr<std::optional<SmallVector<int64_t>>> starts = read(1, "starts");
  if (failed(starts))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> ends = read(2, "ends");
  if (failed(ends))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axesOr = read(3, "axes");
  if (failed(axesOr))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> stepsOr =
      fromInputs ? read(4, "steps")
                 : FailureOr<std::optional<SmallVector<int64_t>>>(std::nullopt);
  if (failed(stepsOr))
    return failure();
  if (!*starts || !*ends) {
    ctx.error() << (fromInputs ? "the starts and ends inputs are required"
                               : "the starts and ends attributes are required");
    return failure();
  }
  size_t n = (*starts)->size();
  if ((*ends)->size() != n || (*axesOr && (*axesOr)->size() != n) ||
      (*stepsOr && (*stepsOr)->size() != n)) {
    ctx.error() << "starts, ends, axes and steps must have the same length";
    return failure();
  }
  SmallVector<int64_t> axesRaw;
  if (*axesOr)
    axesRaw = **axesOr;
  else
    for (size_t i = 0; i < n; ++i)
      axesRaw.push_back(i);
  FailureOr<SmallVector<int64_t>> axes = normalizeAxes(ctx, axesRaw, rank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> steps =
      *stepsOr ? **stepsOr : SmallVector<int64_t>(n, 1);
  return single(sliceAlong(ctx, *x, *axes, **starts, **ends, steps));
}

Results importSplit(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t outputs = ctx.numOutputs();
  if (outputs == 0) {
    ctx.error() << "needs at least one output";
    return failure();
  }
  FailureOr<std::optional<SmallVector<int64_t>>> split =
      optionalInts(ctx, 1, "split");
  if (failed(split))
    return failure();
  if (*split && (*split)->empty())
    *split = std::nullopt;
  std::optional<int64_t> numOutputs;
  if (ctx.opset() >= 18 && ctx.hasAttr("num_outputs"))
    numOutputs = ctx.getInt("num_outputs", 0);
  int64_t extent = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (*split) {
    if (numOutputs) {
      ctx.error() << "split and num_outputs must not both be given";
      return failure();
    }
    sizes = **split;
    if ((int64_t)sizes.size() != outputs) {
      ctx.error() << "split has " << sizes.size() << " entries but the node "
                  << "has " << outputs << " outputs";
      return failure();
    }
  } else {
    if (ShapedType::isDynamic(extent)) {
      ctx.error() << "cannot split dynamic dim " << *axis << " of " << type
                  << " into equal parts (bind its size with --dim/--shape)";
      return failure();
    }
    if (numOutputs) {
      // Opset 18: ceil-sized chunks, the last one smaller.
      if (*numOutputs != outputs || *numOutputs <= 0) {
        ctx.error() << "num_outputs is " << *numOutputs << " but the node has "
                    << outputs << " outputs";
        return failure();
      }
      int64_t chunk = (extent + outputs - 1) / outputs;
      int64_t last = extent - chunk * (outputs - 1);
      if (last < 0) {
        ctx.error() << "cannot split " << extent << " into " << outputs
                    << " chunks of " << chunk;
        return failure();
      }
      sizes.assign(outputs - 1, chunk);
      sizes.push_back(last);
    } else {
      if (extent % outputs != 0) {
        ctx.error() << "dim " << *axis << " of size " << extent
                    << " does not split into " << outputs << " equal parts";
        return failure();
      }
      sizes.assign(outputs, extent / outputs);
    }
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) {
      ctx.error() << "split sizes must be non-negative";
      return failure();
    }
    total += s;
  }
  if (!ShapedType::isDynamic(extent) && total != extent) {
    ctx.error() << "split sizes sum to " << total << " but dim " << *axis
                << " has size " << extent;
    return failure();
  }
  // A constant input (a shape vector) is split with slices, which fold.
  if (DenseElementsAttr dense = inlineDense(*x);
      dense && dense.getNumElements() <= kMaxFoldElements) {
    SmallVector<Value> results;
    int64_t offset = 0;
    for (int64_t s : sizes) {
      FailureOr<Value> part =
          sliceAlong(ctx, *x, {*axis}, {offset}, {offset + s}, {1});
      if (failed(part))
        return failure();
      results.push_back(*part);
      offset += s;
    }
    return results;
  }
  FailureOr<Operation *> op = ctx.create<SplitOp>(
      {*x}, {ctx.namedI64("axis", *axis), ctx.namedI64Array("sizes", sizes)});
  if (failed(op))
    return failure();
  return SmallVector<Value>((*op)->getResults());
}

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

//===----------------------------------------------------------------------===//
// Expand, Tile, Pad, DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

Results importExpand(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], shapeValue = (*in)[1];
  RankedTensorType type = tensorType(x);
  RankedTensorType shapeType = tensorType(shapeValue);
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
  if (std::optional<SmallVector<int64_t>> target = ctx.constInts(shapeValue)) {
    if (llvm::any_of(*target, [](int64_t d) { return d < 0; })) {
      ctx.error() << "shape entries must be non-negative";
      return failure();
    }
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(type.getShape(), *target);
    if (failed(shape)) {
      ctx.error() << "cannot broadcast " << type << " to the shape ["
                  << llvm::make_range(target->begin(), target->end()) << "]";
      return failure();
    }
    if (failed(checkElementCount(ctx, *shape)))
      return failure();
    auto resultType = RankedTensorType::get(*shape, type.getElementType());
    if (resultType == type)
      return SmallVector<Value>{x};
    return single(ctx.create1<ExpandOp>({x}, {}, {resultType}));
  }
  // Run-time shape: keep what is known of it.
  SmallVector<int64_t> target =
      ctx.graph()
          .partialInts(shapeValue)
          .value_or(SmallVector<int64_t>(shapeType.getDimSize(0), kDyn));
  int64_t rank = std::max<int64_t>(type.getRank(), target.size());
  SmallVector<int64_t> shape(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t offsetIn = rank - type.getRank(), offsetT = rank - target.size();
    int64_t in = d >= offsetIn ? type.getDimSize(d - offsetIn) : 1;
    int64_t t = d >= offsetT ? target[d - offsetT] : 1;
    if (!ShapedType::isDynamic(t) && t < 0) {
      ctx.error() << "shape entries must be non-negative";
      return failure();
    }
    if (ShapedType::isDynamic(t))
      shape[d] = (!ShapedType::isDynamic(in) && in != 1) ? in : kDyn;
    else if (t == 1)
      shape[d] = in;
    else if (ShapedType::isDynamic(in) || in == 1 || in == t)
      shape[d] = t;
    else {
      ctx.error() << "cannot broadcast dim " << d << " of size " << in << " to "
                  << t;
      return failure();
    }
  }
  if (failed(checkElementCount(ctx, shape)))
    return failure();
  return single(ctx.create1<DynamicExpandOp>(
      {x, shapeValue}, {},
      {RankedTensorType::get(shape, type.getElementType())}));
}

Results importTile(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  std::optional<SmallVector<int64_t>> repeats = ctx.constInts((*in)[1]);
  if (!repeats) {
    ctx.error() << "the repeats input must be a constant (or computable from "
                << "static shapes)";
    return failure();
  }
  int64_t rank = tensorType((*in)[0]).getRank();
  if ((int64_t)repeats->size() != rank) {
    ctx.error() << "repeats has " << repeats->size()
                << " entries but the input has rank " << rank;
    return failure();
  }
  if (llvm::any_of(*repeats, [](int64_t r) { return r < 0; })) {
    ctx.error() << "repeats must be non-negative";
    return failure();
  }
  SmallVector<int64_t> tiled;
  for (auto [dim, rep] : llvm::zip(tensorType((*in)[0]).getShape(), *repeats)) {
    if (!ShapedType::isDynamic(dim) && dim > 0 &&
        rep > (int64_t(1) << 40) / dim) {
      ctx.error() << "the result shape is too large";
      return failure();
    }
    tiled.push_back(ShapedType::isDynamic(dim) ? kDyn : dim * rep);
  }
  if (failed(checkElementCount(ctx, tiled)))
    return failure();
  return single(ctx.create1<TileOp>({(*in)[0]},
                                    {ctx.namedI64Array("repeats", *repeats)}));
}

Results importPad(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t rank = type.getRank();
  std::string mode = ctx.getString("mode", "constant");
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode)) {
    ctx.error() << "unknown mode '" << mode << "'";
    return failure();
  }
  SmallVector<int64_t> pads;
  double value = 0.0;
  SmallVector<int64_t> axes;
  if (ctx.opset() < 11) {
    std::optional<SmallVector<int64_t>> given = ctx.getInts("pads");
    if (!given) {
      if (!ctx.hadAttributeError())
        ctx.error() << "the pads attribute is required";
      return failure();
    }
    pads = *given;
    value = ctx.getFloat("value", 0.0);
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  } else {
    if (!ctx.hasInput(1)) {
      ctx.error() << "the pads input is required";
      return failure();
    }
    std::optional<SmallVector<int64_t>> given = ctx.constInts(ctx.input(1));
    if (!given) {
      ctx.error() << "the pads input must be a constant (or computable from "
                  << "static shapes)";
      return failure();
    }
    pads = *given;
    if (ctx.hasInput(2)) {
      std::optional<SmallVector<double>> v = ctx.constFloats(ctx.input(2));
      if (!v || v->size() > 1) {
        ctx.error() << "constant_value must be a constant scalar";
        return failure();
      }
      if (!v->empty())
        value = (*v)[0];
    }
    if (ctx.opset() >= 18 && ctx.hasInput(3)) {
      std::optional<SmallVector<int64_t>> given = ctx.constInts(ctx.input(3));
      if (!given) {
        ctx.error() << "the axes input must be a constant";
        return failure();
      }
      FailureOr<SmallVector<int64_t>> normalized =
          normalizeAxes(ctx, *given, rank);
      if (failed(normalized))
        return failure();
      axes = *normalized;
    } else {
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    }
  }
  if (ctx.hadAttributeError())
    return failure();
  int64_t n = axes.size();
  if ((int64_t)pads.size() != 2 * n) {
    ctx.error() << "pads has " << pads.size() << " entries, expected " << 2 * n;
    return failure();
  }
  SmallVector<int64_t> fullPads(2 * rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    fullPads[axis] = pads[i];
    fullPads[axis + rank] = pads[i + n];
  }
  if (mode != "constant") {
    // Reflect, edge and wrap read from the input: it must not be empty
    // along a padded dim.
    for (int64_t d = 0; d < rank; ++d) {
      if ((fullPads[d] > 0 || fullPads[d + rank] > 0) &&
          type.getDimSize(d) == 0) {
        ctx.error() << "cannot " << mode << "-pad empty dim " << d;
        return failure();
      }
    }
  }
  return single(ctx.create1<PadOp>({*x}, {ctx.namedI64Array("pads", fullPads),
                                          ctx.namedStr("mode", mode),
                                          ctx.namedF64("value", value)}));
}

FailureOr<int64_t> requiredBlocksize(NodeContext &ctx) {
  if (!ctx.hasAttr("blocksize")) {
    ctx.error() << "the blocksize attribute is required";
    return failure();
  }
  int64_t b = ctx.getInt("blocksize", 0);
  if (ctx.hadAttributeError())
    return failure();
  if (b <= 0) {
    ctx.error() << "blocksize must be positive, got " << b;
    return failure();
  }
  return b;
}

Results importDepthToSpace(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  FailureOr<int64_t> b = requiredBlocksize(ctx);
  if (failed(x) || failed(b))
    return failure();
  std::string mode = ctx.getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    ctx.error() << "mode must be DCR or CRD, got '" << mode << "'";
    return failure();
  }
  return single(ctx.create1<DepthToSpaceOp>(
      {*x}, {ctx.namedI64("blocksize", *b), ctx.namedStr("mode", mode)}));
}

Results importSpaceToDepth(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  FailureOr<int64_t> b = requiredBlocksize(ctx);
  if (failed(x) || failed(b))
    return failure();
  return single(
      ctx.create1<SpaceToDepthOp>({*x}, {ctx.namedI64("blocksize", *b)}));
}

//===----------------------------------------------------------------------===//
// Resize and Upsample
//===----------------------------------------------------------------------===//

struct ResizeParams {
  std::string mode = "nearest";
  std::string coordinateMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
};

/// Builds cgc.resize from per-dim output sizes and scales.
Results buildResize(NodeContext &ctx, Value x, const ResizeParams &p,
                    ArrayRef<int64_t> shape, ArrayRef<double> scales) {
  RankedTensorType type = tensorType(x);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Builder &b = ctx.builder();
  return single(ctx.create1<ResizeOp>(
      {x},
      {ctx.named("scales", b.getF64ArrayAttr(scales)),
       ctx.namedStr("mode", p.mode),
       ctx.namedStr("coordinate_transformation_mode", p.coordinateMode),
       ctx.namedStr("nearest_mode", p.nearestMode),
       ctx.namedF64("cubic_coeff_a", p.cubicCoeffA),
       ctx.namedBool("exclude_outside", p.excludeOutside),
       ctx.namedF64("extrapolation_value", p.extrapolationValue)},
      {resultType}));
}

/// Output shape floor(in * scale) per dim (dynamic stays dynamic).
FailureOr<SmallVector<int64_t>>
scaledShape(NodeContext &ctx, RankedTensorType type, ArrayRef<double> scales) {
  SmallVector<int64_t> shape;
  for (auto [d, scale] : llvm::enumerate(scales)) {
    if (!(scale > 0) || !std::isfinite(scale)) {
      ctx.error() << "scale " << scale << " of dim " << d
                  << " must be positive";
      return failure();
    }
    int64_t in = type.getDimSize(d);
    if (ShapedType::isDynamic(in)) {
      shape.push_back(kDyn);
      continue;
    }
    double out = std::floor((double)in * scale);
    if (out > (double)(int64_t(1) << 40)) {
      ctx.error() << "output dim " << d << " is too large";
      return failure();
    }
    shape.push_back((int64_t)out);
  }
  return shape;
}

Results importResize(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t rank = type.getRank();
  ResizeParams p;
  p.mode = ctx.getString("mode", "nearest");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, p.mode) ||
      (ctx.opset() < 11 && p.mode == "cubic")) {
    ctx.error() << "unknown mode '" << p.mode << "'";
    return failure();
  }
  Value scalesValue, sizesValue;
  if (ctx.opset() < 11) {
    // Resize-10: scales is input 1; asymmetric coordinates, floor for nearest
    // (the semantics of the Upsample op it replaced).
    p.coordinateMode = "asymmetric";
    p.nearestMode = "floor";
    if (!ctx.hasInput(1)) {
      ctx.error() << "the scales input is required";
      return failure();
    }
    scalesValue = ctx.input(1);
  } else {
    p.coordinateMode =
        ctx.getString("coordinate_transformation_mode", "half_pixel");
    p.nearestMode = ctx.getString("nearest_mode", "round_prefer_floor");
    p.cubicCoeffA = ctx.getFloat("cubic_coeff_a", -0.75);
    p.excludeOutside = ctx.getInt("exclude_outside", 0) != 0;
    p.extrapolationValue = ctx.getFloat("extrapolation_value", 0.0);
    scalesValue = ctx.input(2);
    sizesValue = ctx.input(3);
  }
  if (ctx.hadAttributeError())
    return failure();
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          p.coordinateMode)) {
    ctx.error() << "unknown coordinate_transformation_mode '"
                << p.coordinateMode << "'";
    return failure();
  }
  if (p.coordinateMode == "tf_crop_and_resize") {
    ctx.error() << "coordinate_transformation_mode tf_crop_and_resize is not "
                   "supported (cgc.resize has no roi)";
    return failure();
  }
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          p.nearestMode)) {
    ctx.error() << "unknown nearest_mode '" << p.nearestMode << "'";
    return failure();
  }
  if (ctx.getInt("antialias", 0) != 0 && p.mode != "nearest") {
    ctx.error() << "antialias is not supported";
    return failure();
  }
  // Opset 18: axes select the dims that scales/sizes refer to.
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("axes")) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(ctx, *given, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    if (ctx.hadAttributeError())
      return failure();
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  std::optional<SmallVector<double>> scales;
  std::optional<SmallVector<int64_t>> sizes;
  if (scalesValue) {
    scales = ctx.constFloats(scalesValue);
    if (!scales) {
      ctx.error() << "the scales input must be a constant";
      return failure();
    }
    if (scales->empty())
      scales.reset();
  }
  if (sizesValue) {
    sizes = ctx.constInts(sizesValue);
    if (!sizes) {
      ctx.error() << "the sizes input must be a constant (or computable from "
                     "static shapes)";
      return failure();
    }
    if (sizes->empty())
      sizes.reset();
  }
  if ((bool)scales == (bool)sizes) {
    ctx.error() << "exactly one of scales and sizes must be given";
    return failure();
  }
  size_t given = scales ? scales->size() : sizes->size();
  if (given != axes.size()) {
    ctx.error() << (scales ? "scales" : "sizes") << " has " << given
                << " entries, expected " << axes.size();
    return failure();
  }
  SmallVector<double> allScales(rank, 1.0);
  SmallVector<int64_t> shape(type.getShape());
  if (scales) {
    for (auto [i, axis] : llvm::enumerate(axes))
      allScales[axis] = (*scales)[i];
    FailureOr<SmallVector<int64_t>> out = scaledShape(ctx, type, allScales);
    if (failed(out))
      return failure();
    shape = *out;
  } else {
    std::string policy = ctx.getString("keep_aspect_ratio_policy", "stretch");
    if (!llvm::is_contained({"stretch", "not_larger", "not_smaller"}, policy)) {
      ctx.error() << "unknown keep_aspect_ratio_policy '" << policy << "'";
      return failure();
    }
    for (auto [i, axis] : llvm::enumerate(axes)) {
      int64_t in = type.getDimSize(axis), out = (*sizes)[i];
      if (out < 0) {
        ctx.error() << "sizes entry " << out << " is negative";
        return failure();
      }
      if (ShapedType::isDynamic(in) || in == 0) {
        ctx.error() << "cannot resize dim " << axis << " of " << type
                    << " to a given size: the input dim must be static and "
                       "non-zero";
        return failure();
      }
      allScales[axis] = (double)out / (double)in;
      shape[axis] = out;
    }
    if (policy != "stretch" && !axes.empty()) {
      double scale = allScales[axes.front()];
      for (int64_t axis : axes)
        scale = policy == "not_larger" ? std::min(scale, allScales[axis])
                                       : std::max(scale, allScales[axis]);
      for (int64_t axis : axes) {
        allScales[axis] = scale;
        shape[axis] = (int64_t)(scale * (double)type.getDimSize(axis) + 0.5);
      }
    }
  }
  if (failed(checkElementCount(ctx, shape)))
    return failure();
  return buildResize(ctx, *x, p, shape, allScales);
}

/// Upsample (opset 7-9; deprecated after): nearest or linear with
/// asymmetric coordinates.
Results importUpsample(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  ResizeParams p;
  p.mode = ctx.getString("mode", "nearest");
  if (p.mode == "bilinear" || p.mode == "trilinear")
    p.mode = "linear";
  if (p.mode != "nearest" && p.mode != "linear") {
    ctx.error() << "unknown mode '" << p.mode << "'";
    return failure();
  }
  p.coordinateMode = "asymmetric";
  p.nearestMode = "floor";
  std::optional<SmallVector<double>> scales;
  if (ctx.opset() >= 9 || ctx.hasInput(1)) {
    if (!ctx.hasInput(1)) {
      ctx.error() << "the scales input is required";
      return failure();
    }
    scales = ctx.constFloats(ctx.input(1));
    if (!scales) {
      ctx.error() << "the scales input must be a constant";
      return failure();
    }
  } else {
    scales = ctx.getFloats("scales");
    if (!scales) {
      if (!ctx.hadAttributeError())
        ctx.error() << "the scales attribute is required";
      return failure();
    }
  }
  if (ctx.hadAttributeError())
    return failure();
  if ((int64_t)scales->size() != type.getRank()) {
    ctx.error() << "scales has " << scales->size() << " entries but the "
                << "input has rank " << type.getRank();
    return failure();
  }
  FailureOr<SmallVector<int64_t>> shape = scaledShape(ctx, type, *scales);
  if (failed(shape) || failed(checkElementCount(ctx, *shape)))
    return failure();
  return buildResize(ctx, *x, p, *shape, *scales);
}

//===----------------------------------------------------------------------===//
// Trilu, OneHot, EyeLike, ConstantOfShape, Size, Range
//===----------------------------------------------------------------------===//

/// Trilu with a k only known at run time: the shape does not depend on k,
/// so it becomes where(col - row >= k (upper) or <= k (lower), x, 0) with a
/// constant col - row table over the last two dims.
Results importTriluWithRuntimeK(NodeContext &ctx, Value x, Value k,
                                bool upper) {
  RankedTensorType type = tensorType(x);
  if (!tensorType(k).getElementType().isInteger(64) ||
      !hasOneElement(k)) {
    ctx.error() << "k must be one int64";
    return failure();
  }
  int64_t rows = type.getDimSize(type.getRank() - 2);
  int64_t cols = type.getDimSize(type.getRank() - 1);
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols)) {
    ctx.error() << "a run-time k needs static matrix dims";
    return failure();
  }
  SmallVector<int64_t> diagonal;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      diagonal.push_back(j - i);
  Value table = ctx.constI64(diagonal, {rows, cols});
  FailureOr<Value> scalarK = reshapeTo(ctx, k, {});
  if (failed(scalarK))
    return failure();
  FailureOr<Value> keep = upper ? ctx.create1<GreaterEqualOp>({table, *scalarK})
                                : ctx.create1<LessEqualOp>({table, *scalarK});
  if (failed(keep))
    return failure();
  Value zero = ctx.constScalar(0, type.getElementType());
  return single(ctx.create1<WhereOp>({*keep, x, zero}));
}

Results importTrilu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  if (tensorType(*x).getRank() < 2) {
    ctx.error() << "the input must have rank >= 2, got " << x->getType();
    return failure();
  }
  int64_t k = 0;
  bool upper = ctx.getInt("upper", 1) != 0;
  if (ctx.hasInput(1)) {
    Value kValue = ctx.input(1);
    std::optional<SmallVector<int64_t>> given = ctx.constInts(kValue);
    if (!given)
      return importTriluWithRuntimeK(ctx, *x, kValue, upper);
    if (given->size() != 1) {
      ctx.error() << "k must hold one integer";
      return failure();
    }
    k = (*given)[0];
  }
  return single(ctx.create1<TriluOp>(
      {*x}, {ctx.namedBool("upper", upper), ctx.namedI64("k", k)},
      {x->getType()}));
}

Results importOneHot(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  Value indices = (*in)[0];
  std::optional<double> depth = constScalarValue(ctx, (*in)[1]);
  if (!depth) {
    ctx.error() << "depth must be a constant scalar";
    return failure();
  }
  std::optional<SmallVector<double>> values = ctx.constFloats((*in)[2]);
  if (!values || values->size() != 2) {
    ctx.error() << "values must be a constant [off_value, on_value]";
    return failure();
  }
  if (!(*depth >= 1) || *depth > (double)(int64_t(1) << 40)) {
    ctx.error() << "depth must be positive (and not huge), got " << *depth;
    return failure();
  }
  int64_t d = (int64_t)*depth;
  if (d <= 0) {
    ctx.error() << "depth must be positive, got " << *depth;
    return failure();
  }
  RankedTensorType type = tensorType(indices);
  int64_t outRank = type.getRank() + 1;
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", -1), outRank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + *axis, d);
  if (failed(checkElementCount(ctx, shape)))
    return failure();
  Type element = tensorType((*in)[2]).getElementType();
  return single(ctx.create1<OneHotOp>({indices},
                                      {ctx.namedI64("depth", d),
                                       ctx.namedI64("axis", *axis),
                                       ctx.namedF64("off_value", (*values)[0]),
                                       ctx.namedF64("on_value", (*values)[1])},
                                      {RankedTensorType::get(shape, element)}));
}

Results importEyeLike(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  if (type.getRank() != 2 || !type.hasStaticShape()) {
    ctx.error() << "the input must be 2-D with a static shape, got " << type;
    return failure();
  }
  Type element = type.getElementType();
  if (ctx.hasAttr("dtype")) {
    int64_t dtype = ctx.getInt("dtype", 0);
    element = convertElementType(ctx.context(), (int32_t)dtype);
    if (!element) {
      ctx.error() << "unsupported dtype " << onnxTypeName((int32_t)dtype);
      return failure();
    }
  }
  if (ctx.hadAttributeError())
    return failure();
  int64_t k = ctx.getInt("k", 0);
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  if (rows * cols > (int64_t(1) << 24)) {
    ctx.error() << "the input " << type << " is too large to fold";
    return failure();
  }
  SmallVector<double> values(rows * cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t c = r + k;
    if (c >= 0 && c < cols)
      values[r * cols + c] = 1.0;
  }
  auto resultType = RankedTensorType::get(type.getShape(), element);
  return SmallVector<Value>{ctx.constant(numericElements(resultType, values))};
}

Results importConstantOfShape(NodeContext &ctx) {
  FailureOr<Value> shapeValue = ctx.requiredInput(0);
  if (failed(shapeValue))
    return failure();
  DenseElementsAttr value;
  if (const onnx::TensorProto *tensor = ctx.getTensor("value")) {
    FailureOr<ElementsAttr> converted =
        ctx.graph().convertTensor(*tensor, "the value attribute");
    if (failed(converted))
      return failure();
    value = dyn_cast<DenseElementsAttr>(*converted);
    if (!value || value.getNumElements() != 1) {
      ctx.error() << "the value attribute must hold exactly one element";
      return failure();
    }
  } else {
    if (ctx.hadAttributeError())
      return failure();
    value = DenseElementsAttr::get(
        RankedTensorType::get({1}, ctx.builder().getF32Type()), 0.0f);
  }
  Type element = value.getElementType();
  RankedTensorType shapeType = tensorType(*shapeValue);
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
  if (std::optional<SmallVector<int64_t>> shape = ctx.constInts(*shapeValue)) {
    if (llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
      ctx.error() << "shape entries must be non-negative";
      return failure();
    }
    if (failed(checkElementCount(ctx, *shape)))
      return failure();
    auto type = RankedTensorType::get(*shape, element);
    return SmallVector<Value>{ctx.constant(value.resizeSplat(type))};
  }
  double fill =
      isa<FloatType>(element)
          ? (*value.getValues<APFloat>().begin()).convertToDouble()
          : (element.isUnsignedInteger() || element.isInteger(1)
                 ? (double)(*value.getValues<APInt>().begin()).getZExtValue()
                 : (double)(*value.getValues<APInt>().begin()).getSExtValue());
  SmallVector<int64_t> dims =
      ctx.graph()
          .partialInts(*shapeValue)
          .value_or(SmallVector<int64_t>(shapeType.getDimSize(0), kDyn));
  for (int64_t &d : dims)
    if (!ShapedType::isDynamic(d) && d < 0) {
      ctx.error() << "shape entries must be non-negative";
      return failure();
    }
  return single(ctx.create1<ConstantOfShapeOp>(
      {*shapeValue}, {ctx.namedF64("value", fill)},
      {RankedTensorType::get(dims, element)}));
}

Results importSize(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  return single(ctx.create1<SizeOp>({*x}));
}

Results importRange(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  Type element = tensorType((*in)[0]).getElementType();
  for (Value v : *in) {
    RankedTensorType t = tensorType(v);
    if (t.getElementType() != element ||
        (t.hasStaticShape() && t.getNumElements() != 1)) {
      ctx.error() << "start, limit and delta must be scalars of one type";
      return failure();
    }
  }
  bool isFloat = isa<FloatType>(element);
  std::optional<SmallVector<double>> s = ctx.constFloats((*in)[0]),
                                     l = ctx.constFloats((*in)[1]),
                                     dl = ctx.constFloats((*in)[2]);
  if (s && l && dl) {
    if ((*dl)[0] == 0) {
      ctx.error() << "delta must not be 0";
      return failure();
    }
    int64_t n = 0;
    std::optional<SmallVector<int64_t>> si = ctx.constInts((*in)[0]),
                                        li = ctx.constInts((*in)[1]),
                                        di = ctx.constInts((*in)[2]);
    if (isFloat) {
      double count = std::ceil(((*l)[0] - (*s)[0]) / (*dl)[0]);
      if (count > (double)(int64_t(1) << 40)) {
        ctx.error() << "range has too many elements";
        return failure();
      }
      n = count > 0 ? (int64_t)count : 0;
    } else {
      // Exact integer ceil((limit - start) / delta).
      __int128 span = (__int128)(*li)[0] - (*si)[0], delta = (*di)[0];
      __int128 q = span / delta;
      if (q * delta != span && ((span > 0) == (delta > 0)))
        ++q;
      if (q > ((__int128)1 << 40)) {
        ctx.error() << "range has too many elements";
        return failure();
      }
      n = q > 0 ? (int64_t)q : 0;
    }
    auto type = RankedTensorType::get({n}, element);
    if (n <= kMaxFoldElements) {
      if (isFloat) {
        SmallVector<double> values;
        for (int64_t i = 0; i < n; ++i)
          values.push_back((*s)[0] + (double)i * (*dl)[0]);
        return SmallVector<Value>{ctx.constant(floatElements(type, values))};
      }
      SmallVector<int64_t> values;
      for (int64_t i = 0; i < n; ++i)
        values.push_back((*si)[0] + i * (*di)[0]);
      return SmallVector<Value>{ctx.constant(intElements(type, values))};
    }
    return single(ctx.create1<RangeOp>(*in, {}, {type}));
  }
  return single(
      ctx.create1<RangeOp>(*in, {}, {RankedTensorType::get({kDyn}, element)}));
}

//===----------------------------------------------------------------------===//
// Data-dependent shapes: NonZero, Compress, Unique
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

} // namespace

void cgc::onnx_import::registerTensorOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Identity", importIdentity, "forwarded (no op)");
  add("Dropout", importIdentity,
      "forwarded (inference: identity; the mask is all true)");
  add("Constant", importConstant, "`cgc.constant`");
  add("Reshape", importReshape, "`cgc.reshape` (target shape folded)");
  add("Shape", importShape, "`cgc.shape` (folds when dims are static)");
  add("Flatten", importFlatten, "`cgc.reshape` to 2-D");
  add("Squeeze", importSqueeze, "`cgc.reshape` (axes folded)");
  add("Unsqueeze", importUnsqueeze, "`cgc.reshape` (axes folded)");
  add("Transpose", importTranspose, "`cgc.transpose`");
  add("Concat", importConcat, "`cgc.concat`");
  add("Split", importSplit,
      "`cgc.split` (constant sizes; `cgc.slice`s of a constant input)");
  add("Slice", importSlice, "`cgc.slice` (constant bounds, clamped)");
  add("Gather", importGather, "`cgc.gather`");
  add("GatherElements", importGatherElements, "`cgc.gather_elements`");
  add("GatherND", importGatherND, "`cgc.gather_nd`");
  add("ScatterElements", importScatterElements, "`cgc.scatter_elements`");
  add("Scatter", importScatterElements,
      "`cgc.scatter_elements` (deprecated op name)");
  add("ScatterND", importScatterND, "`cgc.scatter_nd`");
  add("Expand", importExpand,
      "`cgc.expand` (constant shape) or `cgc.dynamic_expand`");
  add("Tile", importTile, "`cgc.tile` (constant repeats)");
  add("Pad", importPad, "`cgc.pad` (constant pads and value)");
  add("DepthToSpace", importDepthToSpace, "`cgc.depth_to_space`");
  add("SpaceToDepth", importSpaceToDepth, "`cgc.space_to_depth`");
  add("Resize", importResize,
      "`cgc.resize` (constant scales/sizes; no roi or antialias)");
  add("Upsample", importUpsample, "`cgc.resize` (asymmetric coordinates)");
  add("Trilu", importTrilu,
      "`cgc.trilu` (constant k), else `cgc.where` over a diagonal table");
  add("OneHot", importOneHot, "`cgc.one_hot` (constant depth and values)");
  add("EyeLike", importEyeLike, "folded to `cgc.constant`");
  add("ConstantOfShape", importConstantOfShape,
      "`cgc.constant` (constant shape) or `cgc.constant_of_shape`");
  add("Size", importSize, "`cgc.size` (folds when the shape is static)");
  add("Range", importRange, "folded to `cgc.constant`, else `cgc.range`");
  add("NonZero", importNonZero, "`cgc.nonzero` (folded for constants)");
  add("Compress", importCompress, "`cgc.compress`");
  add("Unique", importUnique, "`cgc.unique`");
}
