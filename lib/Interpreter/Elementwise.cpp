//===- Elementwise.cpp - unary, binary, where, clip and cast --------------===//
//
// Floats are computed in double and rounded to the element type on store;
// integers in int64/uint64 with two's complement wrap-around to their
// width, as numpy does.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "cgc/Support/Philox.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

template <typename T> constexpr bool isF = std::is_same_v<T, double>;
template <typename T> constexpr bool isS = std::is_same_v<T, int64_t>;

/// Round half to even.
double roundHalfEven(double v) {
  double r = std::round(v);
  if (std::fabs(v - std::trunc(v)) == 0.5)
    r = 2.0 * std::round(v / 2.0);
  return r;
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// y = fn(x) on floats.
template <typename Fn> Results mapFloat(OpCall &call, Fn fn) {
  const HostTensor &x = call.in(0);
  if (!isFloat(x.scalar)) {
    call.error() << "expects a floating-point operand, got " << x.typeString();
    return failure();
  }
  HostTensor y = call.makeResult(x.shape);
  for (int64_t i = 0, n = x.numElements(); i < n; ++i)
    y.setF(i, fn(x.getF(i)));
  return single(std::move(y));
}

/// y = fn(x) for any element type; fn is generic over double/int64/uint64.
template <typename Fn> Results mapAny(OpCall &call, Fn fn) {
  const HostTensor &x = call.in(0);
  HostTensor y = call.makeResult(x.shape);
  visitScalar(x.scalar, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0, n = x.numElements(); i < n; ++i)
      y.set<T>(i, fn(x.get<T>(i)));
  });
  return single(std::move(y));
}

#define FLOAT_KERNEL(NAME, EXPR)                                               \
  Results NAME(OpCall &call) {                                                 \
    return mapFloat(call, [](double x) -> double { return EXPR; });            \
  }

FLOAT_KERNEL(runExp, std::exp(x))
FLOAT_KERNEL(runLog, std::log(x))
FLOAT_KERNEL(runSqrt, std::sqrt(x))
FLOAT_KERNEL(runReciprocal, 1.0 / x)
FLOAT_KERNEL(runSigmoid, 1.0 / (1.0 + std::exp(-x)))
FLOAT_KERNEL(runTanh, std::tanh(x))
FLOAT_KERNEL(runErf, std::erf(x))
FLOAT_KERNEL(runSin, std::sin(x))
FLOAT_KERNEL(runCos, std::cos(x))
FLOAT_KERNEL(runTan, std::tan(x))
FLOAT_KERNEL(runAsin, std::asin(x))
FLOAT_KERNEL(runAcos, std::acos(x))
FLOAT_KERNEL(runAtan, std::atan(x))
FLOAT_KERNEL(runSinh, std::sinh(x))
FLOAT_KERNEL(runCosh, std::cosh(x))
FLOAT_KERNEL(runAsinh, std::asinh(x))
FLOAT_KERNEL(runAcosh, std::acosh(x))
FLOAT_KERNEL(runAtanh, std::atanh(x))
FLOAT_KERNEL(runFloor, std::floor(x))
FLOAT_KERNEL(runCeil, std::ceil(x))
FLOAT_KERNEL(runRound, roundHalfEven(x))
FLOAT_KERNEL(runSoftplus, std::log(std::exp(x) + 1.0))
FLOAT_KERNEL(runSoftsign, x / (1.0 + std::fabs(x)))
FLOAT_KERNEL(runMish, x *std::tanh(std::log1p(std::exp(x))))
FLOAT_KERNEL(runHardSwish, x *std::max(0.0, std::min(1.0, x / 6.0 + 0.5)))
#undef FLOAT_KERNEL

Results runAbs(OpCall &call) {
  return mapAny(call, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (isF<T>)
      return std::fabs(x);
    else if constexpr (isS<T>)
      return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    else
      return x;
  });
}

Results runNeg(OpCall &call) {
  return mapAny(call, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (isF<T>)
      return -x;
    else
      return (T)(0 - (uint64_t)x);
  });
}

Results runSign(OpCall &call) {
  return mapAny(call, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (isF<T>)
      if (std::isnan(x))
        return x;
    return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
  });
}

Results runRelu(OpCall &call) {
  return mapAny(call, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (isF<T>)
      if (std::isnan(x))
        return x;
    return x < 0 ? T(0) : x;
  });
}

Results runNot(OpCall &call) {
  return mapAny(call, [](auto x) -> decltype(x) { return x == 0; });
}

Results runBitwiseNot(OpCall &call) {
  return mapAny(call, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (isF<T>)
      return x;
    else
      return (T) ~(uint64_t)x;
  });
}

Results runLeakyRelu(OpCall &call) {
  double alpha = call.get<LeakyReluOp>().getAlpha().convertToDouble();
  return mapFloat(call, [&](double x) { return x < 0 ? alpha * x : x; });
}

Results runElu(OpCall &call) {
  double alpha = call.get<EluOp>().getAlpha().convertToDouble();
  return mapFloat(
      call, [&](double x) { return x < 0 ? alpha * (std::exp(x) - 1) : x; });
}

Results runCelu(OpCall &call) {
  double alpha = call.get<CeluOp>().getAlpha().convertToDouble();
  return mapFloat(call, [&](double x) {
    return std::max(0.0, x) + std::min(0.0, alpha * (std::exp(x / alpha) - 1));
  });
}

Results runSelu(OpCall &call) {
  auto op = call.get<SeluOp>();
  double alpha = op.getAlpha().convertToDouble();
  double gamma = op.getGamma().convertToDouble();
  return mapFloat(call, [&](double x) {
    return x > 0 ? gamma * x : gamma * (alpha * std::exp(x) - alpha);
  });
}

Results runThresholdedRelu(OpCall &call) {
  double alpha = call.get<ThresholdedReluOp>().getAlpha().convertToDouble();
  return mapFloat(call, [&](double x) { return x > alpha ? x : 0.0; });
}

Results runHardSigmoid(OpCall &call) {
  auto op = call.get<HardSigmoidOp>();
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  return mapFloat(call, [&](double x) {
    return std::max(0.0, std::min(1.0, alpha * x + beta));
  });
}

Results runShrink(OpCall &call) {
  auto op = call.get<ShrinkOp>();
  double bias = op.getBias().convertToDouble();
  double lambd = op.getLambd().convertToDouble();
  return mapFloat(call, [&](double x) {
    return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0);
  });
}

Results runGelu(OpCall &call) {
  bool tanhApprox = call.get<GeluOp>().getApproximate() == "tanh";
  return mapFloat(call, [&](double x) {
    if (tanhApprox)
      return 0.5 * x *
             (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  });
}

Results runClip(OpCall &call) {
  auto op = call.get<ClipOp>();
  std::optional<double> lo, hi;
  if (op.getMin())
    lo = op.getMin()->convertToDouble();
  if (op.getMax())
    hi = op.getMax()->convertToDouble();
  // numpy.clip: min(max(x, lo), hi), so hi wins when lo > hi.
  return mapAny(call, [&](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (isF<T>)
      if (std::isnan(x))
        return x;
    if (lo && (double)x < *lo)
      x = (T)*lo;
    if (hi && (double)x > *hi)
      x = (T)*hi;
    return x;
  });
}

Results runIsNaN(OpCall &call) {
  const HostTensor &x = call.in(0);
  HostTensor y = call.makeResult(x.shape);
  for (int64_t i = 0, n = x.numElements(); i < n; ++i)
    y.setU(i, std::isnan(x.getF(i)));
  return single(std::move(y));
}

Results runIsInf(OpCall &call) {
  auto op = call.get<IsInfOp>();
  const HostTensor &x = call.in(0);
  HostTensor y = call.makeResult(x.shape);
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    double v = x.getF(i);
    y.setU(i, std::isinf(v) && ((v > 0 && op.getDetectPositive()) ||
                                (v < 0 && op.getDetectNegative())));
  }
  return single(std::move(y));
}

/// The largest finite value of a float type.
double largestOf(Type type) {
  APFloat largest =
      APFloat::getLargest(cast<FloatType>(type).getFloatSemantics());
  bool lost;
  largest.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return largest.convertToDouble();
}

/// float8e8m0 (a biased power of two, 0xff is NaN) from the float32
/// exponent of `value`, a fraction rounding by `mode` as ONNX's reference
/// does; with `saturate` the largest exponent does not round up to NaN.
uint8_t toE8M0(double value, StringRef mode, bool saturate) {
  float f = (float)value;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff)
    return 0xff;
  bool roundUp = false;
  if (mode == "up") {
    roundUp = (bits & 0x7fffff) != 0;
  } else if (mode == "nearest") {
    bool guard = bits & 0x400000, round = bits & 0x200000,
         sticky = bits & 0x1fffff, lsb = exponent > 0;
    roundUp = guard && (round || sticky || lsb);
  }
  if (roundUp && saturate && exponent == 0xfe)
    roundUp = false;
  return (uint8_t)(exponent + roundUp);
}

/// One element of a Cast to a float narrower than 16 bits.
void castToNarrowFloat(CastOp op, HostTensor &y, int64_t i, double v) {
  Type type = y.dtype;
  if (y.scalar == Scalar::F8E8M0FNU) {
    y.bytes[i] = toE8M0(v, op.getRoundMode(), op.getSaturate());
    return;
  }
  // float4e2m1 has no infinity or NaN to overflow to: it always saturates.
  if ((op.getSaturate() || y.scalar == Scalar::F4E2M1FN) && !std::isnan(v)) {
    double largest = largestOf(type);
    v = std::clamp(v, -largest, largest);
  }
  y.setF(i, v);
}

/// One element of a Cast to int4/uint4/int2/uint2: truncated, and 0 when
/// outside the target's range (ONNX's reference, through ml_dtypes).
void castToSubByteInt(HostTensor &y, int64_t i, double v) {
  unsigned bits = subByteBits(y.scalar);
  double low = isSigned(y.scalar) ? -std::ldexp(1.0, bits - 1) : 0.0;
  double high = isSigned(y.scalar) ? std::ldexp(1.0, bits - 1) - 1
                                   : std::ldexp(1.0, bits) - 1;
  double t = std::trunc(v);
  y.setI(i, std::isnan(t) || t < low || t > high ? 0 : (int64_t)t);
}

/// ONNX Cast: floats to integers truncate toward zero, anything to bool is
/// `!= 0`, integers wrap to the target width; the narrow floats and ints
/// as CastOp's description says.
Results runCast(OpCall &call) {
  const HostTensor &x = call.in(0);
  HostTensor y = call.makeResult(x.shape);
  int64_t n = x.numElements();
  auto op = call.get<CastOp>();
  if (isNarrowFloat(y.scalar)) {
    for (int64_t i = 0; i < n; ++i)
      castToNarrowFloat(op, y, i, x.getF(i));
  } else if (subByteBits(y.scalar)) {
    for (int64_t i = 0; i < n; ++i)
      castToSubByteInt(y, i, isFloat(x.scalar) ? x.getF(i) : (double)x.getI(i));
  } else if (isFloat(x.scalar)) {
    for (int64_t i = 0; i < n; ++i)
      y.setF(i, x.getF(i));
  } else if (isSigned(x.scalar)) {
    for (int64_t i = 0; i < n; ++i)
      y.setI(i, x.getI(i));
  } else {
    for (int64_t i = 0; i < n; ++i)
      y.setU(i, x.getU(i));
  }
  return single(std::move(y));
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

/// out[i] = fn(lhs[bcast i], rhs[bcast i], error) for any element type; fn
/// returns the element type's value type (or bool for `Predicate`). fn sets
/// `error` to report a run-time error.
template <bool Predicate, typename Fn> Results binary(OpCall &call, Fn fn) {
  const HostTensor &a = call.in(0), &b = call.in(1);
  if (a.dtype != b.dtype) {
    call.error() << "operand element types differ: " << a.typeString() << " vs "
                 << b.typeString();
    return failure();
  }
  FailureOr<SmallVector<int64_t, 4>> shape =
      broadcastRuntime(call, {a.shape, b.shape});
  if (failed(shape))
    return failure();
  SmallVector<int64_t, 4> sa = broadcastStrides(a.shape, *shape);
  SmallVector<int64_t, 4> sb = broadcastStrides(b.shape, *shape);
  HostTensor out = call.makeResult(*shape);
  std::string error;
  visitScalar(a.scalar, [&](auto tag) {
    using T = decltype(tag);
    int64_t flat = 0;
    forEachIndex(*shape, [&](ArrayRef<int64_t> index) {
      T x = a.get<T>(offsetOf(index, sa));
      T y = b.get<T>(offsetOf(index, sb));
      if constexpr (Predicate)
        out.setU(flat++, fn(x, y, error) ? 1 : 0);
      else
        out.set<T>(flat++, fn(x, y, error));
    });
  });
  if (!error.empty()) {
    call.error() << error;
    return failure();
  }
  return single(std::move(out));
}

template <typename Fn> Results arith(OpCall &call, Fn fn) {
  return binary<false>(call, fn);
}
template <typename Fn> Results predicate(OpCall &call, Fn fn) {
  return binary<true>(call, fn);
}

Results runAdd(OpCall &call) {
  return arith(call, [](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>)
      return a + b;
    else
      return (T)((uint64_t)a + (uint64_t)b);
  });
}

Results runSub(OpCall &call) {
  return arith(call, [](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>)
      return a - b;
    else
      return (T)((uint64_t)a - (uint64_t)b);
  });
}

Results runMul(OpCall &call) {
  return arith(call, [](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>)
      return a * b;
    else
      return (T)((uint64_t)a * (uint64_t)b);
  });
}

Results runDiv(OpCall &call) {
  return arith(call, [](auto a, auto b, std::string &error) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>) {
      return a / b;
    } else {
      if (b == 0) {
        error = "integer division by zero";
        return 0;
      }
      if constexpr (isS<T>)
        if (a == std::numeric_limits<int64_t>::min() && b == -1)
          return a; // wraps
      return a / b; // truncates toward zero
    }
  });
}

/// Integer power by squaring (wrapping); negative exponents give the
/// truncated real result (1, -1 or 0).
template <typename T> T intPow(T base, T exponent) {
  if constexpr (isS<T>) {
    if (exponent < 0) {
      if (base == 1)
        return 1;
      if (base == -1)
        return (exponent % 2) ? -1 : 1;
      return 0;
    }
  }
  uint64_t result = 1, b = (uint64_t)base, e = (uint64_t)exponent;
  while (e) {
    if (e & 1)
      result *= b;
    b *= b;
    e >>= 1;
  }
  return (T)result;
}

Results runPow(OpCall &call) {
  return arith(call, [](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>)
      return std::pow(a, b);
    else
      return intPow<T>(a, b);
  });
}

/// numpy.maximum / minimum: NaN propagates.
Results runMax(OpCall &call) {
  return arith(call, [](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>)
      if (std::isnan(a) || std::isnan(b))
        return std::numeric_limits<double>::quiet_NaN();
    return a < b ? b : a;
  });
}

Results runMin(OpCall &call) {
  return arith(call, [](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>)
      if (std::isnan(a) || std::isnan(b))
        return std::numeric_limits<double>::quiet_NaN();
    return b < a ? b : a;
  });
}

/// fmod: C fmod (the sign of the dividend); otherwise Python's % (the sign
/// of the divisor).
Results runMod(OpCall &call) {
  bool fmod = call.get<ModOp>().getFmod();
  return arith(call, [fmod](auto a, auto b, std::string &error) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>) {
      double r = std::fmod(a, b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      // Opset 28: a zero remainder takes the divisor's sign.
      else if (!fmod && r == 0)
        r = std::copysign(0.0, (double)b);
      return r;
    } else {
      if (b == 0) {
        error = "integer modulo by zero";
        return 0;
      }
      if constexpr (isS<T>) {
        if (b == -1)
          return 0;
        T r = a % b;
        if (!fmod && r != 0 && ((r < 0) != (b < 0)))
          r += b;
        return r;
      } else {
        return a % b;
      }
    }
  });
}

Results runPRelu(OpCall &call) {
  return arith(call, [](auto x, auto slope, std::string &) -> decltype(x) {
    using T = decltype(x);
    if constexpr (isF<T>)
      return x < 0 ? slope * x : x;
    else
      return x < 0 ? (T)((uint64_t)slope * (uint64_t)x) : x;
  });
}

Results runBitShift(OpCall &call) {
  bool left = call.get<BitShiftOp>().getLeft();
  return arith(call, [left](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>) {
      return a;
    } else {
      uint64_t shift = (uint64_t)b;
      if (left)
        return shift >= 64 ? T(0) : (T)((uint64_t)a << shift);
      if constexpr (isS<T>)
        return a >> std::min<uint64_t>(shift, 63);
      else
        return shift >= 64 ? T(0) : a >> shift;
    }
  });
}

Results runAnd(OpCall &call) {
  return predicate(
      call, [](auto a, auto b, std::string &) { return a != 0 && b != 0; });
}
Results runOr(OpCall &call) {
  return predicate(
      call, [](auto a, auto b, std::string &) { return a != 0 || b != 0; });
}
Results runXor(OpCall &call) {
  return predicate(
      call, [](auto a, auto b, std::string &) { return (a != 0) != (b != 0); });
}
/// Bitwise And/Or/Xor of integers (floats never reach them: the ops take
/// integer tensors).
template <typename Combine> Results bitwise(OpCall &call, Combine combine) {
  return arith(call, [combine](auto a, auto b, std::string &) -> decltype(a) {
    using T = decltype(a);
    if constexpr (isF<T>)
      return a;
    else
      return (T)combine((uint64_t)a, (uint64_t)b);
  });
}
Results runBitwiseAnd(OpCall &call) {
  return bitwise(call, [](uint64_t a, uint64_t b) { return a & b; });
}
Results runBitwiseOr(OpCall &call) {
  return bitwise(call, [](uint64_t a, uint64_t b) { return a | b; });
}
Results runBitwiseXor(OpCall &call) {
  return bitwise(call, [](uint64_t a, uint64_t b) { return a ^ b; });
}
Results runEqual(OpCall &call) {
  return predicate(call, [](auto a, auto b, std::string &) { return a == b; });
}
Results runLess(OpCall &call) {
  return predicate(call, [](auto a, auto b, std::string &) { return a < b; });
}
Results runLessEqual(OpCall &call) {
  return predicate(call, [](auto a, auto b, std::string &) { return a <= b; });
}
Results runGreater(OpCall &call) {
  return predicate(call, [](auto a, auto b, std::string &) { return a > b; });
}
Results runGreaterEqual(OpCall &call) {
  return predicate(call, [](auto a, auto b, std::string &) { return a >= b; });
}

Results runWhere(OpCall &call) {
  const HostTensor &c = call.in(0), &x = call.in(1), &y = call.in(2);
  if (x.dtype != y.dtype) {
    call.error() << "branch element types differ";
    return failure();
  }
  FailureOr<SmallVector<int64_t, 4>> shape =
      broadcastRuntime(call, {c.shape, x.shape, y.shape});
  if (failed(shape))
    return failure();
  SmallVector<int64_t, 4> sc = broadcastStrides(c.shape, *shape);
  SmallVector<int64_t, 4> sx = broadcastStrides(x.shape, *shape);
  SmallVector<int64_t, 4> sy = broadcastStrides(y.shape, *shape);
  HostTensor out = call.makeResult(*shape);
  int64_t flat = 0;
  forEachIndex(*shape, [&](ArrayRef<int64_t> index) {
    if (c.getU(offsetOf(index, sc)))
      out.copyElement(flat++, x, offsetOf(index, sx));
    else
      out.copyElement(flat++, y, offsetOf(index, sy));
  });
  return single(std::move(out));
}

/// cgc.random_mask: Philox words of each element's index (Philox.h).
Results runRandomMask(OpCall &call) {
  auto op = call.get<RandomMaskOp>();
  const HostTensor *offset = call.optional(op.getOffset());
  uint64_t at = offset ? (uint64_t)offset->getI(0) : 0;
  uint32_t threshold = randomMaskThreshold(op.getRatio().convertToDouble());
  auto shape = cast<RankedTensorType>(op.getType()).getShape();
  HostTensor mask = call.makeResult(shape);
  for (int64_t i = 0, n = mask.numElements(); i < n; ++i)
    mask.setU(i, randomMaskKeeps((uint64_t)i, at, (uint32_t)op.getSeed(),
                                 (uint32_t)op.getStream(), threshold));
  return single(std::move(mask));
}

} // namespace

void cgc::interp::registerElementwiseKernels(KernelTable &t) {
  addKernel<AbsOp>(t, runAbs);
  addKernel<NegOp>(t, runNeg);
  addKernel<SignOp>(t, runSign);
  addKernel<ReluOp>(t, runRelu);
  addKernel<ExpOp>(t, runExp);
  addKernel<LogOp>(t, runLog);
  addKernel<SqrtOp>(t, runSqrt);
  addKernel<ReciprocalOp>(t, runReciprocal);
  addKernel<SigmoidOp>(t, runSigmoid);
  addKernel<TanhOp>(t, runTanh);
  addKernel<ErfOp>(t, runErf);
  addKernel<SinOp>(t, runSin);
  addKernel<CosOp>(t, runCos);
  addKernel<TanOp>(t, runTan);
  addKernel<AsinOp>(t, runAsin);
  addKernel<AcosOp>(t, runAcos);
  addKernel<AtanOp>(t, runAtan);
  addKernel<SinhOp>(t, runSinh);
  addKernel<CoshOp>(t, runCosh);
  addKernel<AsinhOp>(t, runAsinh);
  addKernel<AcoshOp>(t, runAcosh);
  addKernel<AtanhOp>(t, runAtanh);
  addKernel<FloorOp>(t, runFloor);
  addKernel<CeilOp>(t, runCeil);
  addKernel<RoundOp>(t, runRound);
  addKernel<SoftplusOp>(t, runSoftplus);
  addKernel<SoftsignOp>(t, runSoftsign);
  addKernel<MishOp>(t, runMish);
  addKernel<HardSwishOp>(t, runHardSwish);
  addKernel<NotOp>(t, runNot);
  addKernel<BitwiseNotOp>(t, runBitwiseNot);
  addKernel<LeakyReluOp>(t, runLeakyRelu);
  addKernel<EluOp>(t, runElu);
  addKernel<CeluOp>(t, runCelu);
  addKernel<SeluOp>(t, runSelu);
  addKernel<ThresholdedReluOp>(t, runThresholdedRelu);
  addKernel<HardSigmoidOp>(t, runHardSigmoid);
  addKernel<ShrinkOp>(t, runShrink);
  addKernel<GeluOp>(t, runGelu);
  addKernel<ClipOp>(t, runClip);
  addKernel<IsNaNOp>(t, runIsNaN);
  addKernel<IsInfOp>(t, runIsInf);
  addKernel<CastOp>(t, runCast);
  addKernel<AddOp>(t, runAdd);
  addKernel<SubOp>(t, runSub);
  addKernel<MulOp>(t, runMul);
  addKernel<DivOp>(t, runDiv);
  addKernel<PowOp>(t, runPow);
  addKernel<MaxOp>(t, runMax);
  addKernel<MinOp>(t, runMin);
  addKernel<ModOp>(t, runMod);
  addKernel<PReluOp>(t, runPRelu);
  addKernel<BitShiftOp>(t, runBitShift);
  addKernel<AndOp>(t, runAnd);
  addKernel<OrOp>(t, runOr);
  addKernel<XorOp>(t, runXor);
  addKernel<BitwiseAndOp>(t, runBitwiseAnd);
  addKernel<BitwiseOrOp>(t, runBitwiseOr);
  addKernel<BitwiseXorOp>(t, runBitwiseXor);
  addKernel<EqualOp>(t, runEqual);
  addKernel<LessOp>(t, runLess);
  addKernel<LessEqualOp>(t, runLessEqual);
  addKernel<GreaterOp>(t, runGreater);
  addKernel<GreaterEqualOp>(t, runGreaterEqual);
  addKernel<WhereOp>(t, runWhere);
  addKernel<RandomMaskOp>(t, runRandomMask);
}
