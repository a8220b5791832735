//===- QuantizationOps.cpp - linear quantization ---------------------------===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// QLinearMatMul, ConvInteger and QLinearConv as the arithmetic ONNX defines them by: scales and zero
// points broadcast per tensor, per axis or per block; x / scale rounded
// half to even, plus the zero point, clamped to the integer type (float8
// and float4 targets are casts, saturating as `saturate` says); (x - zero
// point) * scale in float; integer products in int32. Every step is an
// elementwise op, a reduction or a matmul the fuse pass already handles.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// The [min, max] of the integer types a quantized value may take.
std::optional<std::pair<double, double>> integerRange(Type type) {
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType || intType.getWidth() == 1 || intType.getWidth() > 16)
    return std::nullopt;
  unsigned bits = intType.getWidth();
  if (intType.isUnsigned())
    return std::make_pair(0.0, std::ldexp(1.0, bits) - 1);
  return std::make_pair(-std::ldexp(1.0, bits - 1),
                        std::ldexp(1.0, bits - 1) - 1);
}

bool isQuantFloat(Type type) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType, Float4E2M1FNType>(type);
}

/// A scale or zero point made broadcastable to `shape`: a scalar (or one
/// element) as is, a 1-D one along `axis`, a blocked one (x's rank, `axis`
/// dim ceil(n / blockSize)) with each element repeated blockSize times.
FailureOr<Value> broadcastParam(NodeContext &ctx, Value param,
                                ArrayRef<int64_t> shape, int64_t axis,
                                int64_t blockSize, StringRef what) {
  RankedTensorType type = tensorType(param);
  if (!type.hasStaticShape()) {
    ctx.error() << what << " must have a static shape, got " << type;
    return failure();
  }
  if (type.getNumElements() == 1)
    return reshapeTo(ctx, param, {});
  int64_t rank = shape.size();
  // The axis matters (and must be valid) only for a per-axis or blocked
  // parameter.
  FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank);
  if (failed(normalized))
    return failure();
  axis = *normalized;
  if (blockSize <= 0) {
    if (type.getRank() != 1 || type.getDimSize(0) != shape[axis]) {
      ctx.error() << what << " " << type << " must be a scalar or 1-D of the "
                  << shape[axis] << " elements of axis " << axis;
      return failure();
    }
    SmallVector<int64_t> dims(rank, 1);
    dims[axis] = shape[axis];
    return reshapeTo(ctx, param, dims);
  }
  ArrayRef<int64_t> p = type.getShape();
  // One block covering the whole axis repeats its value over the axis.
  blockSize = std::min(blockSize, std::max<int64_t>(shape[axis], 1));
  int64_t blocks = (shape[axis] + blockSize - 1) / blockSize;
  bool matches = type.getRank() == rank;
  for (int64_t d = 0; matches && d < rank; ++d)
    matches = p[d] == (d == axis ? blocks : shape[d]);
  if (!matches) {
    ctx.error() << what << " " << type << " does not block x's shape with "
                << "block_size " << blockSize << " on axis " << axis;
    return failure();
  }
  SmallVector<int64_t> split(p), repeated(p);
  split.insert(split.begin() + axis + 1, 1);
  repeated.insert(repeated.begin() + axis + 1, blockSize);
  FailureOr<Value> v = reshapeTo(ctx, param, split);
  if (failed(v))
    return failure();
  v = ctx.create1<ExpandOp>(
      {*v}, {}, {RankedTensorType::get(repeated, type.getElementType())});
  SmallVector<int64_t> merged(p);
  merged[axis] = blocks * blockSize;
  if (failed(v) || failed(v = reshapeTo(ctx, *v, merged)))
    return failure();
  if (merged[axis] == shape[axis])
    return v;
  return sliceAlong(ctx, *v, axis, 0, shape[axis]);
}

/// axis and block_size of a (De)QuantizeLinear.
FailureOr<std::pair<int64_t, int64_t>> axisAndBlock(NodeContext &ctx) {
  int64_t blockSize = ctx.getInt("block_size", 0);
  int64_t axis = ctx.getInt("axis", 1);
  if (ctx.hadAttributeError())
    return failure();
  if (blockSize < 0) {
    ctx.error() << "block_size must be positive, got " << blockSize;
    return failure();
  }
  return std::make_pair(axis, blockSize);
}

/// round-half-to-even(v) + zeroPoint, clamped to `range`, as `target`.
FailureOr<Value> roundShiftClamp(NodeContext &ctx, Value v, Value zeroPoint,
                                 std::pair<double, double> range,
                                 Type target) {
  FailureOr<Value> rounded = ctx.create1<RoundOp>({v}, {}, {v.getType()});
  if (failed(rounded))
    return failure();
  Type f32 = Float32Type::get(ctx.context());
  // In f32 (exact below 2^24): a float16 quotient plus a zero point might
  // round.
  FailureOr<Value> shifted = castTo(ctx, *rounded, f32);
  if (failed(shifted))
    return failure();
  if (zeroPoint) {
    FailureOr<Value> zp = castTo(ctx, zeroPoint, f32);
    if (failed(zp) || failed(shifted = ctx.create1<AddOp>({*shifted, *zp})))
      return failure();
  }
  FailureOr<Value> clamped = ctx.create1<ClipOp>(
      {*shifted},
      {ctx.namedF64("min", range.first), ctx.namedF64("max", range.second)},
      {shifted->getType()});
  if (failed(clamped))
    return failure();
  return castTo(ctx, *clamped, target);
}

/// The element type QuantizeLinear produces: the zero point's, else
/// output_dtype, else uint8.
FailureOr<Type> quantizedType(NodeContext &ctx, Value zeroPoint) {
  Type type = IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  if (ctx.hasAttr("output_dtype")) {
    int64_t code = ctx.getInt("output_dtype", 0);
    type = convertElementType(ctx.context(), (int32_t)code);
    if (!type) {
      ctx.error() << "unsupported output_dtype " << onnxTypeName((int32_t)code);
      return failure();
    }
    if (zeroPoint && tensorType(zeroPoint).getElementType() != type) {
      ctx.error() << "output_dtype " << onnxTypeName((int32_t)code)
                  << " differs from the zero point's type "
                  << tensorType(zeroPoint).getElementType();
      return failure();
    }
  }
  if (zeroPoint)
    type = tensorType(zeroPoint).getElementType();
  if (!integerRange(type) && !isQuantFloat(type)) {
    ctx.error() << "cannot quantize to " << type
                << " (8/16-bit, 4-bit or 2-bit ints, float8 or float4)";
    return failure();
  }
  return type;
}

Results importQuantizeLinear(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], zeroPoint = ctx.input(2);
  RankedTensorType xt = tensorType(x);
  FailureOr<std::pair<int64_t, int64_t>> ab = axisAndBlock(ctx);
  FailureOr<Type> target = quantizedType(ctx, zeroPoint);
  if (failed(ab) || failed(target) || !xt.hasStaticShape()) {
    if (succeeded(ab) && succeeded(target))
      ctx.error() << "x must have a static shape, got " << xt;
    return failure();
  }
  auto [axis, block] = *ab;
  // The quotient is taken in x's type, or in `precision` (opset 23).
  Type compute = xt.getElementType();
  if (ctx.hasAttr("precision")) {
    compute = convertElementType(ctx.context(),
                                 (int32_t)ctx.getInt("precision", 1));
    if (!compute || !isa<FloatType>(compute)) {
      ctx.error() << "precision must name a float type";
      return failure();
    }
  }
  FailureOr<Value> scale =
      broadcastParam(ctx, (*in)[1], xt.getShape(), axis, block, "y_scale");
  if (failed(scale))
    return failure();
  FailureOr<Value> xc = castTo(ctx, x, compute),
                   sc = castTo(ctx, *scale, compute);
  if (failed(xc) || failed(sc))
    return failure();
  FailureOr<Value> quotient = ctx.create1<DivOp>({*xc, *sc});
  if (failed(quotient))
    return failure();
  Value zp;
  if (zeroPoint) {
    FailureOr<Value> b = broadcastParam(ctx, zeroPoint, xt.getShape(), axis,
                                        block, "y_zero_point");
    if (failed(b))
      return failure();
    zp = *b;
  }
  if (std::optional<std::pair<double, double>> range = integerRange(*target))
    return single(roundShiftClamp(ctx, *quotient, zp, *range, *target));
  // float4 adds its zero point in float; float8's must be zero and is
  // left out, as ONNX's reference does.
  if (zp && isa<Float4E2M1FNType>(*target)) {
    FailureOr<Value> zf = castTo(ctx, zp, compute);
    if (failed(zf) || failed(quotient = ctx.create1<AddOp>({*quotient, *zf})))
      return failure();
  }
  SmallVector<NamedAttribute> attrs;
  if (ctx.getInt("saturate", 1) == 0)
    attrs.push_back(ctx.namedBool("saturate", false));
  return single(ctx.create1<CastOp>(
      {*quotient}, attrs, {RankedTensorType::get(xt.getShape(), *target)}));
}

Results importDequantizeLinear(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], zeroPoint = ctx.input(2);
  RankedTensorType xt = tensorType(x);
  FailureOr<std::pair<int64_t, int64_t>> ab = axisAndBlock(ctx);
  if (failed(ab))
    return failure();
  if (!xt.hasStaticShape()) {
    ctx.error() << "x must have a static shape, got " << xt;
    return failure();
  }
  auto [axis, block] = *ab;
  Type out = tensorType((*in)[1]).getElementType();
  if (ctx.hasAttr("output_dtype")) {
    out = convertElementType(ctx.context(),
                             (int32_t)ctx.getInt("output_dtype", 1));
    if (!out || !isa<FloatType>(out)) {
      ctx.error() << "output_dtype must name a float type";
      return failure();
    }
  }
  Type f32 = Float32Type::get(ctx.context());
  FailureOr<Value> value = castTo(ctx, x, f32);
  if (failed(value))
    return failure();
  // A float8 or float4 zero point must be zero; it is not subtracted.
  if (zeroPoint && !isa<FloatType>(xt.getElementType())) {
    if (tensorType(zeroPoint).getElementType() != xt.getElementType()) {
      ctx.error() << "x_zero_point's type "
                  << tensorType(zeroPoint).getElementType()
                  << " differs from x's " << xt.getElementType();
      return failure();
    }
    FailureOr<Value> zp = broadcastParam(ctx, zeroPoint, xt.getShape(), axis,
                                         block, "x_zero_point");
    if (failed(zp) || failed(zp = castTo(ctx, *zp, f32)) ||
        failed(value = ctx.create1<SubOp>({*value, *zp})))
      return failure();
  }
  FailureOr<Value> scale =
      broadcastParam(ctx, (*in)[1], xt.getShape(), axis, block, "x_scale");
  if (failed(scale) || failed(scale = castTo(ctx, *scale, f32)))
    return failure();
  FailureOr<Value> y = ctx.create1<MulOp>({*value, *scale});
  if (failed(y))
    return failure();
  return single(castTo(ctx, *y, out));
}

/// DynamicQuantizeLinear: uint8 with the scale and zero point that map
/// [min(0, min x), max(0, max x)] onto [0, 255].
Results importDynamicQuantizeLinear(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  if (!xt.hasStaticShape() || !xt.getElementType().isF32()) {
    ctx.error() << "x must be a static float tensor, got " << xt;
    return failure();
  }
  Type f32 = xt.getElementType();
  auto u8 = IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  SmallVector<NamedAttribute> all = {
      ctx.namedI64Array("axes", axesFrom(0, xt.getRank())),
      ctx.namedBool("keepdims", false)};
  FailureOr<Value> high = ctx.create1<ReduceMaxOp>({*x}, all),
                   low = ctx.create1<ReduceMinOp>({*x}, all);
  if (failed(high) || failed(low))
    return failure();
  Value zero = ctx.constScalar(0.0, f32);
  FailureOr<Value> hi = ctx.create1<MaxOp>({*high, zero}),
                   lo = ctx.create1<MinOp>({*low, zero});
  if (failed(hi) || failed(lo))
    return failure();
  // (hi - lo) / 255, or 1 / 255 when the range is empty.
  FailureOr<Value> span = ctx.create1<SubOp>({*hi, *lo});
  FailureOr<Value> empty =
      succeeded(span) ? ctx.create1<EqualOp>({*span, zero}) : span;
  if (failed(empty) ||
      failed(span = ctx.create1<WhereOp>(
                 {*empty, ctx.constScalar(1.0, f32), *span})))
    return failure();
  FailureOr<Value> scale =
      ctx.create1<DivOp>({*span, ctx.constScalar(255.0, f32)});
  if (failed(scale))
    return failure();
  // zero point: round(clamp(0 - lo / scale, 0, 255)).
  FailureOr<Value> shift = ctx.create1<DivOp>({*lo, *scale});
  if (failed(shift) || failed(shift = ctx.create1<NegOp>(
                                  {*shift}, {}, {shift->getType()})))
    return failure();
  FailureOr<Value> zpf = ctx.create1<ClipOp>(
      {*shift}, {ctx.namedF64("min", 0.0), ctx.namedF64("max", 255.0)},
      {shift->getType()});
  if (failed(zpf) ||
      failed(zpf = ctx.create1<RoundOp>({*zpf}, {}, {zpf->getType()})))
    return failure();
  FailureOr<Value> quotient = ctx.create1<DivOp>({*x, *scale});
  if (failed(quotient))
    return failure();
  FailureOr<Value> y =
      roundShiftClamp(ctx, *quotient, *zpf, {0.0, 255.0}, u8);
  FailureOr<Value> zp = castTo(ctx, *zpf, u8);
  if (failed(y) || failed(zp))
    return failure();
  return SmallVector<Value>{*y, *scale, *zp};
}

/// Whether v is a 1-D parameter of several values (one a row or a channel)
/// rather than one for the whole tensor; a 1-D parameter of dynamic length
/// is refused, since its length decides how it broadcasts.
FailureOr<bool> isPerSliceParam(NodeContext &ctx, Value v) {
  RankedTensorType t = tensorType(v);
  if (t.getRank() != 1)
    return false;
  if (t.isDynamicDim(0)) {
    ctx.error() << "expects a scale or zero point of static length, got "
                << t;
    return failure();
  }
  return t.getDimSize(0) > 1;
}

/// v - zeroPoint in int32; a zero point of A with one value a row (1-D of
/// M) is made a column.
FailureOr<Value> centered(NodeContext &ctx, Value v, Value zeroPoint,
                          bool perRow) {
  Type i32 = IntegerType::get(ctx.context(), 32);
  FailureOr<Value> wide = castTo(ctx, v, i32);
  if (failed(wide) || !zeroPoint)
    return wide;
  FailureOr<bool> perSlice = isPerSliceParam(ctx, zeroPoint);
  if (failed(perSlice))
    return failure();
  Value zp = zeroPoint;
  if (perRow && *perSlice) {
    FailureOr<Value> column =
        reshapeTo(ctx, zp, {tensorType(zeroPoint).getDimSize(0), 1});
    if (failed(column))
      return failure();
    zp = *column;
  }
  FailureOr<Value> zw = castTo(ctx, zp, i32);
  if (failed(zw))
    return failure();
  return ctx.create1<SubOp>({*wide, *zw});
}

/// (A - a_zero_point) x (B - b_zero_point) in int32.
FailureOr<Value> integerProduct(NodeContext &ctx, Value a, Value aZero,
                                Value b, Value bZero) {
  for (Value v : {a, b})
    if (!integerRange(tensorType(v).getElementType()) ||
        tensorType(v).getElementType().getIntOrFloatBitWidth() != 8) {
      ctx.error() << "expects int8 or uint8 operands, got "
                  << tensorType(v);
      return failure();
    }
  FailureOr<Value> ac = centered(ctx, a, aZero, true),
                   bc = centered(ctx, b, bZero, false);
  if (failed(ac) || failed(bc))
    return failure();
  return ctx.create1<MatMulOp>({*ac, *bc});
}

Results importMatMulInteger(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  return single(
      integerProduct(ctx, (*in)[0], ctx.input(2), (*in)[1], ctx.input(3)));
}

/// An int32 accumulator requantized: times scaleA * scaleB / yScale (the
/// scales multiplied in f32, the product in double, as the reference's
/// numpy promotes), plus y_zero_point, rounded and clamped to its type.
FailureOr<Value> requantize(NodeContext &ctx, Value acc, Value scaleA,
                            Value scaleB, Value yScale, Value yZero) {
  Type f32 = Float32Type::get(ctx.context()),
       f64 = Float64Type::get(ctx.context());
  FailureOr<Value> sa = castTo(ctx, scaleA, f32), sb = castTo(ctx, scaleB, f32),
                   sy = castTo(ctx, yScale, f32);
  if (failed(sa) || failed(sb) || failed(sy))
    return failure();
  FailureOr<Value> factor = ctx.create1<MulOp>({*sa, *sb});
  if (failed(factor) || failed(factor = ctx.create1<DivOp>({*factor, *sy})) ||
      failed(factor = castTo(ctx, *factor, f64)))
    return failure();
  FailureOr<Value> scaled = castTo(ctx, acc, f64);
  if (failed(scaled) || failed(scaled = ctx.create1<MulOp>({*scaled, *factor})))
    return failure();
  Type target = tensorType(yZero).getElementType();
  std::optional<std::pair<double, double>> range = integerRange(target);
  if (!range) {
    ctx.error() << "y_zero_point must be an int of 16 bits or fewer, got "
                << tensorType(yZero);
    return failure();
  }
  return roundShiftClamp(ctx, *scaled, yZero, *range, target);
}

/// QLinearMatMul: the int32 product of the centered operands, requantized
/// (a per-row a_scale made a column).
Results importQLinearMatMul(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 8);
  if (failed(in))
    return failure();
  FailureOr<Value> product =
      integerProduct(ctx, (*in)[0], (*in)[2], (*in)[3], (*in)[5]);
  if (failed(product))
    return failure();
  Value aScale = (*in)[1];
  FailureOr<bool> perRow = isPerSliceParam(ctx, aScale);
  if (failed(perRow))
    return failure();
  if (*perRow) {
    FailureOr<Value> column =
        reshapeTo(ctx, aScale, {tensorType(aScale).getDimSize(0), 1});
    if (failed(column))
      return failure();
    aScale = *column;
  }
  return single(
      requantize(ctx, *product, aScale, (*in)[4], (*in)[6], (*in)[7]));
}

/// A per-output-channel parameter ([M], M > 1) as [M, 1, ...] of `rank`
/// dims from dim `at` (0 for a weight, 1 for an output); a scalar as is.
FailureOr<Value> perChannelParam(NodeContext &ctx, Value v, int64_t rank,
                                 int64_t at) {
  FailureOr<bool> perChannel = isPerSliceParam(ctx, v);
  if (failed(perChannel))
    return failure();
  if (!*perChannel)
    return v;
  SmallVector<int64_t> shape(rank - at, 1);
  shape[0] = tensorType(v).getDimSize(0);
  return reshapeTo(ctx, v, shape);
}

/// (x - x_zero_point) conv (w - w_zero_point) with int32 results: the
/// centered operands are convolved in float, exact while every sum stays
/// below 2^24 (in double beyond that).
FailureOr<Value> integerConv(NodeContext &ctx, Value x, Value xZero, Value w,
                             Value wZero) {
  RankedTensorType xt = tensorType(x), wt = tensorType(w);
  for (RankedTensorType t : {xt, wt})
    if (!integerRange(t.getElementType()) ||
        t.getElementType().getIntOrFloatBitWidth() != 8 ||
        !t.hasStaticShape() || t.getRank() < 3 || t.getNumElements() == 0) {
      ctx.error() << "expects static, non-empty int8 or uint8 [N, C, ...] "
                     "operands, got "
                  << t;
      return failure();
    }
  FailureOr<Value> xc = centered(ctx, x, xZero, false);
  FailureOr<Value> wz =
      wZero ? perChannelParam(ctx, wZero, wt.getRank(), 0) : FailureOr<Value>(Value());
  if (failed(xc) || failed(wz))
    return failure();
  FailureOr<Value> wc = centered(ctx, w, *wz, false);
  if (failed(wc))
    return failure();
  int64_t terms = wt.getNumElements() / wt.getDimSize(0);
  bool wide = (double)terms * 255.0 * 255.0 >= 16777216.0;
  Type compute = wide ? Type(Float64Type::get(ctx.context()))
                      : Type(Float32Type::get(ctx.context()));
  FailureOr<Value> xf = castTo(ctx, *xc, compute),
                   wf = castTo(ctx, *wc, compute);
  if (failed(xf) || failed(wf))
    return failure();
  FailureOr<Value> y = convOf(ctx, *xf, *wf, Value());
  if (failed(y))
    return failure();
  return castTo(ctx, *y, IntegerType::get(ctx.context(), 32));
}

Results importConvInteger(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  return single(
      integerConv(ctx, (*in)[0], ctx.input(2), (*in)[1], ctx.input(3)));
}

/// QLinearConv: the integer convolution plus the int32 bias, times
/// x_scale * w_scale / y_scale (w_scale per output channel), plus
/// y_zero_point, rounded and clamped.
Results importQLinearConv(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 8);
  if (failed(in))
    return failure();
  Value x = (*in)[0], xScale = (*in)[1], xZero = (*in)[2], w = (*in)[3],
        wScale = (*in)[4], wZero = (*in)[5], yScale = (*in)[6],
        yZero = (*in)[7];
  FailureOr<Value> acc = integerConv(ctx, x, xZero, w, wZero);
  if (failed(acc))
    return failure();
  int64_t rank = tensorType(x).getRank();
  if (Value bias = ctx.input(8)) {
    FailureOr<Value> b = perChannelParam(ctx, bias, rank, 1);
    FailureOr<Value> bi =
        succeeded(b) ? castTo(ctx, *b, IntegerType::get(ctx.context(), 32)) : b;
    if (failed(bi) || failed(acc = ctx.create1<AddOp>({*acc, *bi})))
      return failure();
  }
  FailureOr<Value> ws = perChannelParam(ctx, wScale, rank, 1);
  if (failed(ws))
    return failure();
  return single(requantize(ctx, *acc, xScale, *ws, yScale, yZero));
}

} // namespace

void cgc::onnx_import::registerQuantizationOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("QuantizeLinear", importQuantizeLinear,
      "div by the scale (per tensor, axis or block), round half to even, "
      "add the zero point, clip, cast; float8/float4 targets a saturating "
      "cast");
  add("DequantizeLinear", importDequantizeLinear,
      "cast to f32, sub the zero point, mul by the scale (per tensor, axis "
      "or block), cast to the scale's type or output_dtype");
  add("DynamicQuantizeLinear", importDynamicQuantizeLinear,
      "reduce_max/reduce_min for the uint8 scale and zero point, then as "
      "QuantizeLinear");
  add("MatMulInteger", importMatMulInteger,
      "casts to i32, sub the zero points, `cgc.matmul` in i32");
  add("ConvInteger", importConvInteger,
      "zero points subtracted in i32, `cgc.conv` in f32 (f64 when sums "
      "could pass 2^24), cast to i32");
  add("QLinearConv", importQLinearConv,
      "ConvInteger plus the bias, times x_scale * w_scale / y_scale in "
      "f64, add the zero point, round, clip, cast");
  add("QLinearMatMul", importQLinearMatMul,
      "MatMulInteger, times a_scale * b_scale / y_scale in f64, add the "
      "zero point, round, clip, cast");
}
