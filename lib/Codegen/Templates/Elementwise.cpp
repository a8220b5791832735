//===- Elementwise.cpp - elementwise ops as C expressions -----------------===//
//
// Every elementwise op of a group becomes one C expression over its
// operands' expressions (GroupWriter::writeElements chains them as
// variables). An `elementwise` group is one thread per output element
// computing the chain and storing the group's results.
//
//===----------------------------------------------------------------------===//

#include "GroupWriter.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Support/Philox.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace cgc {
namespace codegen {

/// ONNX Cast of `x` to the result's type. A cast to a narrower float rounds
/// here, not only at a store: the value may feed the next op of the group
/// (a Cast to f16 and back must lose the bits the store would).
static std::string castExpression(CastOp cast, const std::string &x) {
  Type t = elementType(cast.getResult());
  if (t.isInteger(1))
    return "(" + x + " != 0)";
  if (isNarrowFloat(t)) {
    // e8m0's rounding modes in the prelude's order.
    int roundMode = llvm::StringSwitch<int>(cast.getRoundMode())
                        .Case("up", 0)
                        .Case("down", 1)
                        .Default(2);
    return "cgc_cast_narrow<" + storageType(t) + ">(" + x + ", " +
           (cast.getSaturate() ? "true" : "false") + ", " +
           std::to_string(roundMode) + ")";
  }
  if (loadsAsFloat(t)) // f64 -> f16/bf16 rounds once, not through float
    return "((float)" + storageType(t) + "(" + x + "))";
  if (auto i = dyn_cast<IntegerType>(t); i && i.getWidth() < 8)
    return "((" + cType(t) + ")cgc_cast_subbyte<" +
           std::to_string(i.getWidth()) + ", " +
           (i.isUnsigned() ? "false" : "true") + ">(" + x + "))";
  return "((" + cType(t) + ")" + x + ")";
}

FailureOr<std::string> elementExpression(Operation *op,
                                         ArrayRef<std::string> a) {
  Type t = elementType(op->getResult(0));
  std::string c = cType(t);
  auto lit = [&](double v) { return literal(v, t); };
  auto f64 = [&](StringRef name) {
    return op->getAttrOfType<FloatAttr>(name).getValueAsDouble();
  };
  std::optional<std::string> e =
      llvm::TypeSwitch<Operation *, std::optional<std::string>>(op)
          .Case([&](AddOp) { return "(" + a[0] + " + " + a[1] + ")"; })
          .Case([&](SubOp) { return "(" + a[0] + " - " + a[1] + ")"; })
          .Case([&](MulOp) { return "(" + a[0] + " * " + a[1] + ")"; })
          .Case([&](DivOp) { return "(" + a[0] + " / " + a[1] + ")"; })
          .Case([&](PowOp) { return "cgc_pow(" + a[0] + ", " + a[1] + ")"; })
          .Case([&](MaxOp) { return "cgc_max(" + a[0] + ", " + a[1] + ")"; })
          .Case([&](MinOp) { return "cgc_min(" + a[0] + ", " + a[1] + ")"; })
          .Case([&](ModOp m) {
            return (m.getFmod() ? "cgc_fmod(" : "cgc_pymod(") + a[0] + ", " +
                   a[1] + ")";
          })
          .Case([&](PReluOp) {
            return "(" + a[0] + " < 0 ? " + a[1] + " * " + a[0] + " : " + a[0] +
                   ")";
          })
          .Case([&](AndOp) { return "(" + a[0] + " && " + a[1] + ")"; })
          .Case([&](OrOp) { return "(" + a[0] + " || " + a[1] + ")"; })
          .Case([&](XorOp) { return "(" + a[0] + " != " + a[1] + ")"; })
          .Case([&](BitwiseAndOp) {
            return "((" + c + ")(" + a[0] + " & " + a[1] + "))";
          })
          .Case([&](BitwiseOrOp) {
            return "((" + c + ")(" + a[0] + " | " + a[1] + "))";
          })
          .Case([&](BitwiseXorOp) {
            return "((" + c + ")(" + a[0] + " ^ " + a[1] + "))";
          })
          .Case([&](EqualOp) { return "(" + a[0] + " == " + a[1] + ")"; })
          .Case([&](LessOp) { return "(" + a[0] + " < " + a[1] + ")"; })
          .Case([&](LessEqualOp) { return "(" + a[0] + " <= " + a[1] + ")"; })
          .Case([&](GreaterOp) { return "(" + a[0] + " > " + a[1] + ")"; })
          .Case(
              [&](GreaterEqualOp) { return "(" + a[0] + " >= " + a[1] + ")"; })
          .Case([&](BitShiftOp s) {
            return "(" + a[0] + (s.getLeft() ? " << " : " >> ") + a[1] + ")";
          })
          .Case([&](WhereOp) {
            return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
          })
          .Case([&](CastOp cast) { return castExpression(cast, a[0]); })
          .Case([&](AbsOp) { return "cgc_abs(" + a[0] + ")"; })
          .Case([&](NegOp) { return "(-" + a[0] + ")"; })
          .Case([&](SignOp) { return "cgc_sign(" + a[0] + ")"; })
          .Case([&](ReluOp) { return "cgc_max(" + a[0] + ", " + lit(0) + ")"; })
          .Case([&](ExpOp) { return "cgc_exp(" + a[0] + ")"; })
          .Case([&](LogOp) { return "cgc_log(" + a[0] + ")"; })
          .Case([&](SqrtOp) { return "cgc_sqrt(" + a[0] + ")"; })
          .Case([&](ReciprocalOp) { return "(" + lit(1) + " / " + a[0] + ")"; })
          .Case([&](SigmoidOp) { return "cgc_sigmoid(" + a[0] + ")"; })
          .Case([&](TanhOp) { return "cgc_tanh(" + a[0] + ")"; })
          .Case([&](ErfOp) { return "cgc_erf(" + a[0] + ")"; })
          .Case([&](SinOp) { return "cgc_sin(" + a[0] + ")"; })
          .Case([&](CosOp) { return "cgc_cos(" + a[0] + ")"; })
          .Case([&](TanOp) { return "cgc_tan(" + a[0] + ")"; })
          .Case([&](AsinOp) { return "cgc_asin(" + a[0] + ")"; })
          .Case([&](AcosOp) { return "cgc_acos(" + a[0] + ")"; })
          .Case([&](AtanOp) { return "cgc_atan(" + a[0] + ")"; })
          .Case([&](SinhOp) { return "cgc_sinh(" + a[0] + ")"; })
          .Case([&](CoshOp) { return "cgc_cosh(" + a[0] + ")"; })
          .Case([&](AsinhOp) { return "cgc_asinh(" + a[0] + ")"; })
          .Case([&](AcoshOp) { return "cgc_acosh(" + a[0] + ")"; })
          .Case([&](AtanhOp) { return "cgc_atanh(" + a[0] + ")"; })
          .Case([&](FloorOp) { return "cgc_floor(" + a[0] + ")"; })
          .Case([&](CeilOp) { return "cgc_ceil(" + a[0] + ")"; })
          .Case([&](RoundOp) { return "cgc_round(" + a[0] + ")"; })
          .Case([&](SoftplusOp) { return "cgc_softplus(" + a[0] + ")"; })
          .Case([&](SoftsignOp) {
            return "(" + a[0] + " / (" + lit(1) + " + cgc_abs(" + a[0] + ")))";
          })
          .Case([&](MishOp) {
            return "(" + a[0] + " * cgc_tanh(cgc_softplus(" + a[0] + ")))";
          })
          .Case([&](HardSwishOp) {
            return "(" + a[0] + " * cgc_max(" + lit(0) + ", cgc_min(" + lit(1) +
                   ", " + a[0] + " / " + lit(6) + " + " + lit(0.5) + ")))";
          })
          .Case([&](NotOp) { return "(!" + a[0] + ")"; })
          .Case([&](BitwiseNotOp) { return "((" + c + ")~" + a[0] + ")"; })
          .Case([&](LeakyReluOp) {
            return "(" + a[0] + " >= 0 ? " + a[0] + " : " + lit(f64("alpha")) +
                   " * " + a[0] + ")";
          })
          .Case([&](EluOp) {
            return "(" + a[0] + " > 0 ? " + a[0] + " : " + lit(f64("alpha")) +
                   " * (cgc_exp(" + a[0] + ") - " + lit(1) + "))";
          })
          .Case([&](CeluOp) {
            std::string alpha = lit(f64("alpha"));
            return "(cgc_max(" + lit(0) + ", " + a[0] + ") + cgc_min(" +
                   lit(0) + ", " + alpha + " * (cgc_exp(" + a[0] + " / " +
                   alpha + ") - " + lit(1) + ")))";
          })
          .Case([&](SeluOp) {
            return "(" + lit(f64("gamma")) + " * (" + a[0] + " > 0 ? " + a[0] +
                   " : " + lit(f64("alpha")) + " * (cgc_exp(" + a[0] + ") - " +
                   lit(1) + ")))";
          })
          .Case([&](ThresholdedReluOp) {
            return "(" + a[0] + " > " + lit(f64("alpha")) + " ? " + a[0] +
                   " : " + lit(0) + ")";
          })
          .Case([&](HardSigmoidOp) {
            return "cgc_max(" + lit(0) + ", cgc_min(" + lit(1) + ", " +
                   lit(f64("alpha")) + " * " + a[0] + " + " + lit(f64("beta")) +
                   "))";
          })
          .Case([&](ShrinkOp) {
            std::string bias = lit(f64("bias")), lambd = lit(f64("lambd"));
            return "(" + a[0] + " < -" + lambd + " ? " + a[0] + " + " + bias +
                   " : " + a[0] + " > " + lambd + " ? " + a[0] + " - " + bias +
                   " : " + lit(0) + ")";
          })
          .Case([&](GeluOp g) {
            if (g.getApproximate() == "tanh")
              return "(" + lit(0.5) + " * " + a[0] + " * (" + lit(1) +
                     " + cgc_tanh(" + lit(0.7978845608028654) + " * (" + a[0] +
                     " + " + lit(0.044715) + " * " + a[0] + " * " + a[0] +
                     " * " + a[0] + "))))";
            return "(" + lit(0.5) + " * " + a[0] + " * (" + lit(1) +
                   " + cgc_erf(" + a[0] + " * " + lit(0.7071067811865476) +
                   ")))";
          })
          .Case([&](ClipOp clip) {
            std::string x = a[0];
            if (auto lo = clip.getMinAttr())
              x = "cgc_max(" + x + ", " + lit(lo.getValueAsDouble()) + ")";
            if (auto hi = clip.getMaxAttr())
              x = "cgc_min(" + x + ", " + lit(hi.getValueAsDouble()) + ")";
            return x;
          })
          .Case([&](RandomMaskOp mask) {
            // Operands: the offset (when present), then the element index.
            std::string offset = mask.getOffset() ? a[0] : "0ll";
            return "cgc_random_keep((unsigned long long)(" + a.back() +
                   "), (long long)" + offset + ", " +
                   std::to_string((uint32_t)mask.getSeed()) + "u, " +
                   std::to_string((uint32_t)mask.getStream()) + "u, " +
                   std::to_string(randomMaskThreshold(
                       mask.getRatio().convertToDouble())) +
                   "u)";
          })
          .Case([&](IsNaNOp) { return "(" + a[0] + " != " + a[0] + ")"; })
          .Case([&](IsInfOp inf) {
            std::string pos =
                "(" + a[0] +
                " == " + literal(INFINITY, elementType(op->getOperand(0))) +
                ")";
            std::string neg =
                "(" + a[0] +
                " == " + literal(-INFINITY, elementType(op->getOperand(0))) +
                ")";
            std::string r = "false";
            if (inf.getDetectPositive())
              r = pos;
            if (inf.getDetectNegative())
              r = inf.getDetectPositive() ? "(" + pos + " || " + neg + ")"
                                          : neg;
            return r;
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!e)
    return op->emitError() << "no GPU code for elementwise '" << op->getName()
                           << "' (ONNX node '" << nodeName(op) << "')";
  return *e;
}

namespace {

/// A thread per `vector_width` elements of `shape` (a block's threads take
/// consecutive elements, then the next block-wide run: loads coalesced and
/// all of a thread's in flight): `first` (declarations of known values),
/// then the element code of `ops`, then the stores.
LogicalResult writePerElement(GroupWriter &w, ArrayRef<int64_t> shape,
                              StringRef first, ArrayRef<Operation *> ops) {
  const int64_t n = numElements(shape), threads = w.config.getThreads();
  const int64_t each = w.config.getVectorWidth(), span = threads * each;
  const std::string count = std::to_string(n) + "ll";
  std::string text;
  if (each == 1) {
    text = "  const long long i = (long long)blockIdx.x * blockDim.x + "
           "threadIdx.x;\n  if (i >= " + count + ") return;\n  {\n" +
           first.str();
  } else {
    // The block's size is a literal so that the compiler sees the
    // elements apart and may issue all their loads before any store.
    text = "  const long long i0 = (long long)blockIdx.x * " +
           std::to_string(span) + "ll + threadIdx.x;\n#pragma unroll\n"
           "  for (int k = 0; k < " + std::to_string(each) + "; ++k) {\n"
           "  const long long i = i0 + k * " + std::to_string(threads) +
           "ll;\n  if (i < " + count + ") {\n" + first.str();
  }
  if (failed(w.writeElements(ops, shape, "i", text)))
    return failure();
  text += each == 1 ? "  }\n" : "  }\n  }\n";
  w.launches.push_back(
      Launch{text, {std::max<int64_t>(1, (n + span - 1) / span), 1, 1},
             {threads, 1, 1}});
  return success();
}

} // namespace

LogicalResult writeElementwiseGroup(GroupWriter &w, ArrayRef<Operation *> ops) {
  return writePerElement(w, w.groupShape(), "", ops);
}

LogicalResult writeInPlaceEpilogue(GroupWriter &w, Value d,
                                   ArrayRef<Operation *> epilogue,
                                   Value channelBias, bool channelsLast) {
  if (epilogue.empty() && !channelBias)
    return success();
  // The library wrote `d` where the group's result goes; each thread reads
  // its element back (adding its channel's bias, dim 1 of NC... or the
  // last of N...C) and overwrites it.
  std::string t = cType(elementType(d));
  std::string read = w.output(w.results()[0]) + "[i]";
  if (channelBias) {
    ArrayRef<int64_t> shape = shapeOf(d);
    int64_t axis = channelsLast ? shape.size() - 1 : 1;
    std::string inner = std::to_string(numElements(shape.drop_front(axis + 1)));
    std::string channels = std::to_string(shape[axis]);
    read = "(float)" + read + " + (float)" + w.inputParam(channelBias) +
           "[(i / " + inner + "ll) % " + channels + "ll]";
  }
  w.vars[d] = "v0";
  // Where only the product's 16-bit copy is read (--cgc-narrow-storage),
  // the f32 result is just where the library put the product: reading it
  // back is all the epilogue needs, storing it again would be wasted.
  if (w.results().size() > 1 && w.kernel->getResult(0).use_empty())
    w.unstored.insert(w.results()[0]);
  return writePerElement(w, shapeOf(d),
                         "    const " + t + " v0 = (" + t + ")(" + read +
                             ");\n",
                         epilogue);
}

LogicalResult writeLibraryConvEpilogue(GroupWriter &w,
                                       ArrayRef<Operation *> ops) {
  std::string reason;
  FailureOr<LibraryConv> library = describeLibraryConv(w.kernel, reason);
  if (failed(library))
    return w.kernel.emitError("cuDNN cannot compute '")
           << w.kernel.getName() << "': " << reason;
  // The bias joins the epilogue's pass over the output: cuDNN would add it
  // in a launch of its own (cudnnAddTensor, a slow generic kernel).
  return writeInPlaceEpilogue(w, library->conv.getOutput(), library->epilogue,
                              library->conv.getBias(), library->channelsLast);
}

} // namespace codegen
} // namespace cgc
