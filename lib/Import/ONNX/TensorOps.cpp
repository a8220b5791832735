//===- TensorOps.cpp - importers of data movement and constant ops --------===//

#include "TensorHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

Results importIdentity(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  return SmallVector<Value>{*x};
}

/// Tells the masks of one program apart: a hash (FNV-1a) of the node's
/// first output, unique in the model, so the same model gives the same
/// masks whatever else is compiled with it.
int64_t randomStreamOf(const onnx::NodeProto &node) {
  uint32_t hash = 2166136261u;
  for (char c : node.output(0))
    hash = (hash ^ (uint8_t)c) * 16777619u;
  return hash;
}

/// Dropout. At inference (training_mode absent or false, and every opset
/// before 12) it forwards its input and its mask is all true; in training
/// mode, y = x * mask / (1 - ratio) with a `cgc.random_mask` (Philox, the
/// `seed` attribute as its key): under `cgc --train` each step draws a new
/// mask, in an inference package every run draws the same one.
Results importDropout(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  double ratio = 0.5;
  if (ctx.hasInput(1)) {
    std::optional<SmallVector<double>> r = ctx.constFloats(ctx.input(1));
    if (!r || r->size() != 1) {
      ctx.error() << "the ratio must be a constant scalar";
      return failure();
    }
    ratio = (*r)[0];
  } else if (ctx.opset() < 12) {
    ratio = ctx.getFloat("ratio", 0.5);
  }
  bool training = false;
  if (ctx.hasInput(2)) {
    std::optional<SmallVector<int64_t>> t = ctx.constInts(ctx.input(2));
    if (!t || t->size() != 1) {
      ctx.error() << "training_mode must be a constant (a run-time choice "
                     "between training and inference is not supported)";
      return failure();
    }
    training = (*t)[0] != 0;
  }
  // A ratio of 0 drops nothing, in training mode too.
  training = training && ratio != 0.0;
  if (training && !(ratio > 0 && ratio < 1)) {
    ctx.error() << "the ratio must be in [0, 1), got " << ratio;
    return failure();
  }
  if (!training && !ctx.isOutputUsed(1))
    return SmallVector<Value>{*x};
  if (!type.hasStaticShape()) {
    ctx.error() << (training ? "training mode" : "the mask output")
                << " needs a static shape";
    return failure();
  }
  auto maskType =
      RankedTensorType::get(type.getShape(), ctx.builder().getI1Type());
  if (!training)
    return SmallVector<Value>{
        *x, ctx.constant(DenseElementsAttr::get(maskType, true))};
  if (!isa<FloatType>(type.getElementType())) {
    ctx.error() << "training mode needs a float input";
    return failure();
  }
  FailureOr<Value> mask = ctx.create1<RandomMaskOp>(
      {}, {ctx.namedF64("ratio", ratio),
           ctx.namedI64("stream", randomStreamOf(ctx.node())),
           ctx.namedI64("seed", (uint32_t)ctx.getInt("seed", 0))},
      {maskType});
  if (failed(mask))
    return failure();
  Value scale = ctx.constScalar(1.0 / (1.0 - ratio), type.getElementType());
  FailureOr<Value> scaled = ctx.create1<MulOp>({*x, scale});
  if (failed(scaled))
    return failure();
  Value zero = ctx.constScalar(0.0, type.getElementType());
  FailureOr<Value> y = ctx.create1<WhereOp>({*mask, *scaled, zero});
  if (failed(y))
    return failure();
  return SmallVector<Value>{*y, *mask};
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
    // No dim is above 2^40: nor are the sizes or their sum (which then
    // cannot overflow).
    if (s < 0 || s > kMaxTensorBytes || (total += s) > kMaxTensorBytes) {
      ctx.error() << "split sizes must be from 0 to 2^40, as their sum";
      return failure();
    }
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
// Expand, Tile, Pad, DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

Results importExpand(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], shapeValue = (*in)[1];
  RankedTensorType type = tensorType(x);
  RankedTensorType shapeType = tensorType(shapeValue);
  if (failed(checkShapeInput(ctx, shapeType)))
    return failure();
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
  if (llvm::any_of(pads, [](int64_t p) {
        return p < -kMaxTensorBytes || p > kMaxTensorBytes;
      })) {
    ctx.error() << "pads " << formatDims(pads)
                << " has an entry outside [-2^40, 2^40]";
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

/// CenterCropPad (opset 18): each of `axes` cropped or zero-padded to the
/// target size around its center (the odd element goes to the end).
Results importCenterCropPad(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0];
  RankedTensorType xt = tensorType(x);
  int64_t rank = xt.getRank();
  std::optional<SmallVector<int64_t>> target = ctx.constInts((*in)[1]);
  if (!target) {
    ctx.error() << "the shape input must be a constant";
    return failure();
  }
  SmallVector<int64_t> axes = axesFrom(0, rank);
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("axes")) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(ctx, *given, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  }
  if (ctx.hadAttributeError())
    return failure();
  if (target->size() != axes.size() || !xt.hasStaticShape()) {
    ctx.error() << "needs a static input and one target size an axis, got "
                << target->size() << " sizes for " << axes.size() << " axes";
    return failure();
  }
  SmallVector<int64_t> starts(rank, 0), ends(xt.getShape()), steps(rank, 1),
      pads(2 * rank, 0);
  for (auto [axis, size] : llvm::zip(axes, *target)) {
    int64_t dim = xt.getDimSize(axis);
    if (size < 0 || size > (1 << 24)) {
      ctx.error() << "target size " << size << " is outside 0 to 2^24";
      return failure();
    }
    if (size < dim) {
      starts[axis] = (dim - size) / 2;
      ends[axis] = starts[axis] + size;
    } else if (size > dim) {
      pads[axis] = (size - dim) / 2;
      pads[axis + rank] = size - dim - pads[axis];
    }
  }
  FailureOr<Value> cropped = ctx.create1<SliceOp>(
      {x}, {ctx.namedI64Array("starts", starts),
            ctx.namedI64Array("ends", ends), ctx.namedI64Array("steps", steps)});
  if (failed(cropped) || llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return single(cropped);
  return single(ctx.create1<PadOp>({*cropped},
                                   {ctx.namedI64Array("pads", pads),
                                    ctx.namedStr("mode", "constant"),
                                    ctx.namedF64("value", 0.0)}));
}

FailureOr<int64_t> requiredBlocksize(NodeContext &ctx) {
  if (!ctx.hasAttr("blocksize")) {
    ctx.error() << "the blocksize attribute is required";
    return failure();
  }
  int64_t b = ctx.getInt("blocksize", 0);
  if (ctx.hadAttributeError())
    return failure();
  // b * b stays far from overflow.
  if (b <= 0 || b > (int64_t(1) << 20)) {
    ctx.error() << "blocksize must be from 1 to 2^20, got " << b;
    return failure();
  }
  return b;
}

/// The `mode` of DepthToSpace and SpaceToDepth: DCR (the default) or CRD.
FailureOr<std::string> blockOrder(NodeContext &ctx) {
  std::string mode = ctx.getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    ctx.error() << "mode must be DCR or CRD, got '" << mode << "'";
    return failure();
  }
  return mode;
}

Results importDepthToSpace(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  FailureOr<int64_t> b = requiredBlocksize(ctx);
  if (failed(x) || failed(b))
    return failure();
  FailureOr<std::string> mode = blockOrder(ctx);
  if (failed(mode))
    return failure();
  return single(ctx.create1<DepthToSpaceOp>(
      {*x}, {ctx.namedI64("blocksize", *b), ctx.namedStr("mode", *mode)}));
}

Results importSpaceToDepth(NodeContext &ctx) {
/// SpaceToDepth gained DepthToSpace's `mode` in opset 28 (DCR, the order of
/// every earlier version, stays the default).
  FailureOr<Value> x = ctx.requiredInput(0);
  FailureOr<int64_t> b = requiredBlocksize(ctx);
  if (failed(x) || failed(b))
    return failure();
  FailureOr<std::string> mode = blockOrder(ctx);
  if (failed(mode))
    return failure();
  if (*mode == "CRD" && ctx.opset() < 28) {
    ctx.error() << "mode CRD is defined from opset 28 (the model imports "
                << ctx.opset() << ")";
    return failure();
  }
  return single(ctx.create1<SpaceToDepthOp>(
      {*x}, {ctx.namedI64("blocksize", *b), ctx.namedStr("mode", *mode)}));
}

} // namespace

void cgc::onnx_import::registerTensorOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Identity", importIdentity, "forwarded (no op)");
  add("Dropout", importDropout,
      "forwarded at inference (the mask all true); in training mode "
      "`cgc.random_mask`, `cgc.mul` and `cgc.where`");
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
  add("Expand", importExpand,
      "`cgc.expand` (constant shape) or `cgc.dynamic_expand`");
  add("Tile", importTile, "`cgc.tile` (constant repeats)");
  add("Pad", importPad, "`cgc.pad` (constant pads and value)");
  add("CenterCropPad", importCenterCropPad,
      "`cgc.slice` (crop) and `cgc.pad` (zeros) around the center");
  add("DepthToSpace", importDepthToSpace, "`cgc.depth_to_space`");
  add("SpaceToDepth", importSpaceToDepth, "`cgc.space_to_depth`");
}
