//===- ElementwiseOps.cpp - importers of elementwise ONNX ops -------------===//

#include "ImportHelpers.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

template <typename OpTy> ImportFn unary() {
  return [](NodeContext &ctx) -> Results {
    FailureOr<Value> x = ctx.requiredInput(0);
    if (failed(x))
      return failure();
    return single(ctx.create1<OpTy>({*x}));
  };
}

template <typename OpTy> ImportFn binary() {
  return [](NodeContext &ctx) -> Results {
    FailureOr<Value> a = ctx.requiredInput(0), b = ctx.requiredInput(1);
    if (failed(a) || failed(b))
      return failure();
    return single(ctx.create1<OpTy>({*a, *b}));
  };
}

/// Sum/Mean/Max/Min take any number of inputs: a left fold of the binary op.
template <typename OpTy> FailureOr<Value> foldInputs(NodeContext &ctx) {
  if (ctx.numInputs() == 0) {
    ctx.error() << "needs at least one input";
    return failure();
  }
  FailureOr<Value> acc = ctx.requiredInput(0);
  for (size_t i = 1; i < ctx.numInputs() && succeeded(acc); ++i) {
    FailureOr<Value> next = ctx.requiredInput(i);
    if (failed(next))
      return failure();
    acc = ctx.create1<OpTy>({*acc, *next});
  }
  return acc;
}

template <typename OpTy> ImportFn variadic() {
  return [](NodeContext &ctx) -> Results {
    return single(foldInputs<OpTy>(ctx));
  };
}

Results importMean(NodeContext &ctx) {
  FailureOr<Value> sum = foldInputs<AddOp>(ctx);
  if (failed(sum))
    return failure();
  Value count = ctx.constScalar((double)ctx.numInputs(),
                                tensorType(*sum).getElementType());
  return single(ctx.create1<DivOp>({*sum, count}));
}

/// Unary op with float parameters read from attributes with ONNX defaults.
template <typename OpTy>
ImportFn withParams(std::vector<std::pair<const char *, double>> params) {
  return [params](NodeContext &ctx) -> Results {
    FailureOr<Value> x = ctx.requiredInput(0);
    if (failed(x))
      return failure();
    SmallVector<NamedAttribute> attrs;
    for (auto [name, def] : params)
      attrs.push_back(ctx.namedF64(name, ctx.getFloat(name, def)));
    return single(ctx.create1<OpTy>({*x}, attrs, {tensorType(*x)}));
  };
}

Results importGelu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  std::string approximate = ctx.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    ctx.error() << "unknown approximate '" << approximate << "'";
    return failure();
  }
  return single(ctx.create1<GeluOp>(
      {*x}, {ctx.namedStr("approximate", approximate)}, {tensorType(*x)}));
}

/// Clip with constant bounds is one op; a bound only known at run time
/// becomes a broadcast max/min (the shape does not depend on it).
Results importClip(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  SmallVector<NamedAttribute> attrs;
  SmallVector<std::pair<size_t, Value>> runtimeBounds;
  // Opset < 11: attributes; later: optional scalar inputs.
  auto bound = [&](size_t index, const char *name) -> LogicalResult {
    if (ctx.opset() < 11) {
      if (ctx.hasAttr(name))
        attrs.push_back(ctx.namedF64(name, ctx.getFloat(name, 0)));
      return success();
    }
    if (!ctx.hasInput(index))
      return success();
    Value value = ctx.input(index);
    if (!hasOneElement(value)) {
      ctx.error() << name << " must be a scalar";
      return failure();
    }
    if (std::optional<SmallVector<double>> v = ctx.constFloats(value))
      attrs.push_back(ctx.namedF64(name, (*v)[0]));
    else
      runtimeBounds.push_back({index, value});
    return success();
  };
  if (failed(bound(1, "min")) || failed(bound(2, "max")))
    return failure();
  FailureOr<Value> result = ctx.create1<ClipOp>({*x}, attrs, {tensorType(*x)});
  for (auto [index, value] : runtimeBounds) {
    if (failed(result))
      return failure();
    result = index == 1 ? ctx.create1<MaxOp>({*result, value})
                        : ctx.create1<MinOp>({*result, value});
  }
  return single(result);
}

Results importIsInf(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  auto type = RankedTensorType::get(tensorType(*x).getShape(),
                                    ctx.builder().getI1Type());
  return single(ctx.create1<IsInfOp>(
      {*x},
      {ctx.namedBool("detect_positive", ctx.getInt("detect_positive", 1)),
       ctx.namedBool("detect_negative", ctx.getInt("detect_negative", 1))},
      {type}));
}

Results importIsNaN(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  auto type = RankedTensorType::get(tensorType(*x).getShape(),
                                    ctx.builder().getI1Type());
  return single(ctx.create1<IsNaNOp>({*x}, {}, {type}));
}

Results importMod(NodeContext &ctx) {
  FailureOr<Value> a = ctx.requiredInput(0), b = ctx.requiredInput(1);
  if (failed(a) || failed(b))
    return failure();
  bool fmod = ctx.getInt("fmod", 0) != 0;
  // Opset 28 defines fmod=0 on floats too (the sign of the divisor, as on
  // integers); before it, floats needed fmod=1.
  if (!fmod && isa<FloatType>(tensorType(*a).getElementType()) &&
      ctx.opset() < 28) {
    ctx.error() << "floating-point Mod requires fmod=1 before opset 28 (the "
                   "model imports "
                << ctx.opset() << ")";
    return failure();
  }
  return single(ctx.create1<ModOp>({*a, *b}, {ctx.namedBool("fmod", fmod)}));
}

Results importBitShift(NodeContext &ctx) {
  FailureOr<Value> a = ctx.requiredInput(0), b = ctx.requiredInput(1);
  if (failed(a) || failed(b))
    return failure();
  std::string direction = ctx.getString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    ctx.error() << "direction must be LEFT or RIGHT, got '" << direction
                << "'";
    return failure();
  }
  return single(ctx.create1<BitShiftOp>(
      {*a, *b}, {ctx.namedBool("left", direction == "LEFT")}));
}

/// Pow allows a different exponent type; cast it to the base's type.
Results importPow(NodeContext &ctx) {
  FailureOr<Value> a = ctx.requiredInput(0), b = ctx.requiredInput(1);
  if (failed(a) || failed(b))
    return failure();
  Type element = tensorType(*a).getElementType();
  Value exponent = *b;
  if (tensorType(exponent).getElementType() != element) {
    FailureOr<Value> cast = ctx.create1<CastOp>(
        {exponent}, {},
        {RankedTensorType::get(tensorType(exponent).getShape(), element)});
    if (failed(cast))
      return failure();
    exponent = *cast;
  }
  return single(ctx.create1<PowOp>({*a, exponent}));
}

Results importPRelu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0), slope = ctx.requiredInput(1);
  if (failed(x) || failed(slope))
    return failure();
  // Exporters (and opset < 7 models) give a per-channel slope [C] for an
  // [N, C, ...] input: that means channel dim 1, not the last dim, so it is
  // reshaped to [C, 1, ..., 1] when numpy broadcasting would not apply.
  RankedTensorType xType = tensorType(*x), slopeType = tensorType(*slope);
  Value s = *slope;
  if (slopeType.getRank() == 1 && xType.getRank() > 2 &&
      slopeType.getDimSize(0) != 1 &&
      slopeType.getDimSize(0) == xType.getDimSize(1) &&
      slopeType.getDimSize(0) != xType.getDimSize(xType.getRank() - 1)) {
    SmallVector<int64_t> shape(xType.getRank() - 1, 1);
    shape[0] = slopeType.getDimSize(0);
    FailureOr<Value> reshaped = reshapeTo(ctx, s, shape);
    if (failed(reshaped))
      return failure();
    s = *reshaped;
  }
  return single(ctx.create1<PReluOp>({*x, s}));
}

/// Cast's `saturate` (opset 19) and `round_mode` (24), kept where they mean
/// something: saturate for the float8 targets, round_mode for float8e8m0.
LogicalResult castRounding(NodeContext &ctx, Type target,
                           SmallVectorImpl<NamedAttribute> &attrs) {
  bool float8 = isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
                    Float8E5M2FNUZType, Float8E8M0FNUType>(target);
  if (float8 && ctx.getInt("saturate", 1) == 0)
    attrs.push_back(ctx.namedBool("saturate", false));
  if (isa<Float8E8M0FNUType>(target)) {
    std::string mode = ctx.getString("round_mode", "up");
    if (!llvm::is_contained({"up", "down", "nearest"}, mode)) {
      ctx.error() << "round_mode must be up, down or nearest, got '" << mode
                  << "'";
      return failure();
    }
    if (mode != "up")
      attrs.push_back(ctx.namedStr("round_mode", mode));
  }
  return failure(ctx.hadAttributeError());
}

/// BitCast (opset 26): the bits kept, read as `to` of the same width.
Results importBitCast(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t to = ctx.getInt("to", 0);
  Type target = convertElementType(ctx.context(), (int32_t)to);
  if (ctx.hadAttributeError())
    return failure();
  if (!target) {
    ctx.error() << "unsupported BitCast target " << onnxTypeName((int32_t)to);
    return failure();
  }
  // bool is a byte, as ONNX (and numpy) store it.
  auto bits = [](Type t) {
    unsigned width = t.getIntOrFloatBitWidth();
    return width == 1 ? 8u : width;
  };
  Type source = tensorType(*x).getElementType();
  if (bits(source) != bits(target)) {
    ctx.error() << "BitCast needs types of one width, got " << source << " ("
                << bits(source) << " bits) and " << target << " ("
                << bits(target) << " bits)";
    return failure();
  }
  if (source == target)
    return SmallVector<Value>{*x};
  return single(ctx.create1<BitCastOp>(
      {*x}, {}, {RankedTensorType::get(tensorType(*x).getShape(), target)}));
}

/// Cast and CastLike.
Results importCast(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  Type target;
  if (ctx.node().op_type() == "CastLike") {
    FailureOr<Value> like = ctx.requiredInput(1);
    if (failed(like))
      return failure();
    target = tensorType(*like).getElementType();
  } else {
    int64_t to = ctx.getInt("to", 0);
    target = convertElementType(ctx.context(), (int32_t)to);
    if (!target) {
      ctx.error() << "unsupported Cast target " << onnxTypeName((int32_t)to);
      return failure();
    }
  }
  if (target == tensorType(*x).getElementType())
    return SmallVector<Value>{*x};
  SmallVector<NamedAttribute> attrs;
  if (failed(castRounding(ctx, target, attrs)))
    return failure();
  return single(ctx.create1<CastOp>(
      {*x}, attrs, {RankedTensorType::get(tensorType(*x).getShape(), target)}));
}

/// x * sigmoid(alpha * x): Swish (opset 24), the gate of SwiGLU (28).
FailureOr<Value> buildSwish(NodeContext &ctx, Value x, double alpha) {
  Value scaled = x;
  if (alpha != 1.0) {
    FailureOr<Value> product = ctx.create1<MulOp>(
        {x, ctx.constScalar(alpha, tensorType(x).getElementType())});
    if (failed(product))
      return failure();
    scaled = *product;
  }
  FailureOr<Value> gate =
      ctx.create1<SigmoidOp>({scaled}, {}, {scaled.getType()});
  if (failed(gate))
    return failure();
  return ctx.create1<MulOp>({x, *gate});
}

Results importSwish(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  return single(buildSwish(ctx, *x, ctx.getFloat("alpha", 1.0)));
}

/// SwiGLU: Swish(a) * b, where a and b have one shape (no broadcasting).
Results importSwiGLU(NodeContext &ctx) {
  FailureOr<Value> a = ctx.requiredInput(0), b = ctx.requiredInput(1);
  if (failed(a) || failed(b))
    return failure();
  RankedTensorType at = tensorType(*a), bt = tensorType(*b);
  if (at.getRank() != bt.getRank() ||
      llvm::any_of(llvm::zip(at.getShape(), bt.getShape()), [](auto dims) {
        auto [x, y] = dims;
        return !ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y;
      })) {
    ctx.error() << "A and B must have the same shape (SwiGLU does not "
                   "broadcast), got "
                << at << " and " << bt;
    return failure();
  }
  FailureOr<Value> gate = buildSwish(ctx, *a, ctx.getFloat("alpha", 1.0));
  if (failed(gate))
    return failure();
  return single(ctx.create1<MulOp>({*gate, *b}));
}

Results importWhere(NodeContext &ctx) {
  FailureOr<Value> c = ctx.requiredInput(0), x = ctx.requiredInput(1),
                   y = ctx.requiredInput(2);
  if (failed(c) || failed(x) || failed(y))
    return failure();
  return single(ctx.create1<WhereOp>({*c, *x, *y}));
}

} // namespace

void cgc::onnx_import::registerElementwiseOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Abs", unary<AbsOp>(), "`cgc.abs`");
  add("Neg", unary<NegOp>(), "`cgc.neg`");
  add("Sign", unary<SignOp>(), "`cgc.sign`");
  add("Relu", unary<ReluOp>(), "`cgc.relu`");
  add("Exp", unary<ExpOp>(), "`cgc.exp`");
  add("Log", unary<LogOp>(), "`cgc.log`");
  add("Sqrt", unary<SqrtOp>(), "`cgc.sqrt`");
  add("Reciprocal", unary<ReciprocalOp>(), "`cgc.reciprocal`");
  add("Sigmoid", unary<SigmoidOp>(), "`cgc.sigmoid`");
  add("Tanh", unary<TanhOp>(), "`cgc.tanh`");
  add("Erf", unary<ErfOp>(), "`cgc.erf`");
  add("Sin", unary<SinOp>(), "`cgc.sin`");
  add("Cos", unary<CosOp>(), "`cgc.cos`");
  add("Tan", unary<TanOp>(), "`cgc.tan`");
  add("Asin", unary<AsinOp>(), "`cgc.asin`");
  add("Acos", unary<AcosOp>(), "`cgc.acos`");
  add("Atan", unary<AtanOp>(), "`cgc.atan`");
  add("Sinh", unary<SinhOp>(), "`cgc.sinh`");
  add("Cosh", unary<CoshOp>(), "`cgc.cosh`");
  add("Asinh", unary<AsinhOp>(), "`cgc.asinh`");
  add("Acosh", unary<AcoshOp>(), "`cgc.acosh`");
  add("Atanh", unary<AtanhOp>(), "`cgc.atanh`");
  add("Floor", unary<FloorOp>(), "`cgc.floor`");
  add("Ceil", unary<CeilOp>(), "`cgc.ceil`");
  add("Round", unary<RoundOp>(), "`cgc.round` (half to even)");
  add("Softplus", unary<SoftplusOp>(), "`cgc.softplus`");
  add("Softsign", unary<SoftsignOp>(), "`cgc.softsign`");
  add("Mish", unary<MishOp>(), "`cgc.mish`");
  add("HardSwish", unary<HardSwishOp>(), "`cgc.hard_swish`");
  add("Swish", importSwish, "`cgc.mul` of x and `cgc.sigmoid`(alpha x)");
  add("SwiGLU", importSwiGLU,
      "`cgc.mul` of Swish(A) (`cgc.sigmoid`) and B");
  add("Not", unary<NotOp>(), "`cgc.not`");
  add("BitwiseNot", unary<BitwiseNotOp>(), "`cgc.bitwise_not`");
  add("IsNaN", importIsNaN, "`cgc.is_nan`");
  add("IsInf", importIsInf, "`cgc.is_inf`");
  add("LeakyRelu", withParams<LeakyReluOp>({{"alpha", 0.01}}),
      "`cgc.leaky_relu`");
  add("Elu", withParams<EluOp>({{"alpha", 1.0}}), "`cgc.elu`");
  add("Celu", withParams<CeluOp>({{"alpha", 1.0}}), "`cgc.celu`");
  add("Selu",
      withParams<SeluOp>({{"alpha", 1.67326319217681884765625},
                          {"gamma", 1.05070102214813232421875}}),
      "`cgc.selu`");
  add("ThresholdedRelu", withParams<ThresholdedReluOp>({{"alpha", 1.0}}),
      "`cgc.thresholded_relu`");
  add("HardSigmoid", withParams<HardSigmoidOp>({{"alpha", 0.2}, {"beta", 0.5}}),
      "`cgc.hard_sigmoid`");
  add("Shrink", withParams<ShrinkOp>({{"bias", 0.0}, {"lambd", 0.5}}),
      "`cgc.shrink`");
  add("Gelu", importGelu, "`cgc.gelu` (exact or tanh)");
  add("Clip", importClip,
      "`cgc.clip`; run-time bounds as `cgc.max`/`cgc.min`");
  add("Add", binary<AddOp>(), "`cgc.add`");
  add("Sub", binary<SubOp>(), "`cgc.sub`");
  add("Mul", binary<MulOp>(), "`cgc.mul`");
  add("Div", binary<DivOp>(), "`cgc.div`");
  add("Pow", importPow, "`cgc.pow` (exponent cast to the base type)");
  add("Mod", importMod, "`cgc.mod`");
  add("PRelu", importPRelu, "`cgc.prelu`");
  add("BitShift", importBitShift, "`cgc.bit_shift`");
  add("And", binary<AndOp>(), "`cgc.and`");
  add("BitwiseAnd", binary<BitwiseAndOp>(), "`cgc.bitwise_and`");
  add("BitwiseOr", binary<BitwiseOrOp>(), "`cgc.bitwise_or`");
  add("BitwiseXor", binary<BitwiseXorOp>(), "`cgc.bitwise_xor`");
  add("Or", binary<OrOp>(), "`cgc.or`");
  add("Xor", binary<XorOp>(), "`cgc.xor`");
  add("Equal", binary<EqualOp>(), "`cgc.equal`");
  add("Less", binary<LessOp>(), "`cgc.less`");
  add("LessOrEqual", binary<LessEqualOp>(), "`cgc.less_equal`");
  add("Greater", binary<GreaterOp>(), "`cgc.greater`");
  add("GreaterOrEqual", binary<GreaterEqualOp>(), "`cgc.greater_equal`");
  add("Max", variadic<MaxOp>(), "chain of `cgc.max`");
  add("Min", variadic<MinOp>(), "chain of `cgc.min`");
  add("Sum", variadic<AddOp>(), "chain of `cgc.add`");
  add("Mean", importMean, "chain of `cgc.add`, then `cgc.div`");
  add("Where", importWhere, "`cgc.where`");
  add("Cast", importCast, "`cgc.cast` (dropped when the type is unchanged)");
  add("CastLike", importCast, "`cgc.cast`");
  add("BitCast", importBitCast, "`cgc.bitcast` (types of one width)");
}
