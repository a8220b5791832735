//===- KernelGen.cpp - CUDA C++ for fused kernel groups -------------------===//

#include "cgc/Codegen/KernelGen.h"
#include "GemmKernels.h"
#include "KernelUtils.h"
#include "cgc/Dialect/Cgc/Analysis/AttentionLimits.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/Analysis/Views.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace cgc;

namespace {

using namespace cgc::codegen;

/// The splat value of an inline constant, if `v` is one (inlined as a
/// literal instead of a pointer parameter).
std::optional<double> splatValue(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  APInt i = dense.getSplatValue<APInt>();
  return dense.getElementType().isUnsignedInteger() ? (double)i.getZExtValue()
                                                    : (double)i.getSExtValue();
}

class KernelWriter : public ParamResolver {
public:
  explicit KernelWriter(KernelOp kernel) : kernel(kernel) {}

  FailureOr<std::vector<GeneratedKernel>> run() {
    Block &body = kernel.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    // Every value read or written must have a CUDA element type.
    for (Operation *op : ops) {
      for (Value v : op->getOperands())
        if (failed(checkType(v, op)))
          return failure();
      for (Value v : op->getResults())
        if (failed(checkType(v, op)))
          return failure();
    }
    if (ops.empty() || body.getTerminator()->getNumOperands() == 0) {
      // Nothing is used after the group: an empty launch keeps the graph's
      // node list in step with the kernels.
      launches.push_back(Launch{"", {1, 1, 1}, {32, 1, 1}});
      return finish();
    }
    StringRef kind = kernel.getKind();
    LogicalResult status = failure();
    if (kind == "elementwise") {
      status = writeElementwise(ops);
    } else if (kind == "matmul") {
      status = writeMatmul(ops);
    } else if (kind == "norm") {
      status = writeNorm(ops);
    } else if (kind == "attention") {
      status = writeAttention(ops);
    } else if ((kind == "single" &&
                (ops.size() == 1 || isa<GatherOp>(ops.front()))) ||
               kind == "conv" || kind == "reduce") {
      // Conv, reduce and gather groups run their fused elementwise ops in
      // store();
      // a reduce group's producers (prologue) run where it reads its input.
      size_t anchorIndex = 0;
      if (kind == "reduce")
        while (anchorIndex + 1 < ops.size() && isPrologueOp(ops[anchorIndex]))
          ++anchorIndex;
      prologue.assign(ops.begin(), ops.begin() + anchorIndex);
      epilogue.assign(ops.begin() + anchorIndex + 1, ops.end());
      anchor = ops[anchorIndex]->getResult(0);
      // Single-group 2-d f32 convolutions run as (implicit) GEMMs,
      // depthwise ones on their own template.
      FailureOr<SmallVector<Launch>> single = failure();
      auto conv = dyn_cast<ConvOp>(ops[anchorIndex]);
      if (conv && needed(conv.getOutput()))
        single = writeGemmConv(conv, *this);
      if (conv && needed(conv.getOutput()) && failed(single))
        single = writeDepthwiseConv(conv, *this);
      if (failed(single))
        single = writeSingleOpKernel(ops[anchorIndex], *this);
      if (failed(single) || epilogueFailed)
        return failure();
      launches = std::move(*single);
      if (!prologue.empty()) {
        FailureOr<std::string> lambda =
            prologueLambda(ops[anchorIndex]->getOperand(0));
        if (failed(lambda))
          return failure();
        for (Launch &launch : launches)
          launch.body = *lambda + launch.body;
      }
      status = success();
    } else {
      return ops.front()->emitError()
             << "no GPU kernel template for a '" << kind << "' group of "
             << ops.size() << " ops (ONNX node '" << nodeName(ops.front())
             << "')";
    }
    if (failed(status))
      return failure();
    return finish();
  }

  std::string input(Value v) override { return inputParam(v); }

  std::string output(Value result) override {
    Block &body = kernel.getBody().front();
    for (auto [k, value] : llvm::enumerate(body.getTerminator()->getOperands()))
      if (value == result)
        return "out" + std::to_string(k);
    return "";
  }

  std::string read(Value v, StringRef index) override {
    if (!prologue.empty() && v == prologueOutput())
      return "cgcInput(" + index.str() + ")";
    return ParamResolver::read(v, index);
  }

  bool needed(Value result) override {
    return (result == anchor && !epilogue.empty()) ||
           !output(result).empty();
  }

  std::string store(Value result, StringRef value, StringRef index) override {
    if (result != anchor || epilogue.empty())
      return ParamResolver::store(result, value, index);
    std::string text = "  {\n    const " + cType(elementType(result)) +
                       " v0 = " + value.str() + ";\n";
    vars[result] = "v0";
    if (failed(writeElements(epilogue, shapeOf(result), index, text)))
      epilogueFailed = true;
    return text + "  }\n";
  }

private:
  /// The op a `conv` or `reduce` group is anchored on, the elementwise ops
  /// fused before it (computing its input) and after it.
  Value anchor;
  SmallVector<Operation *> prologue, epilogue;
  bool epilogueFailed = false;

  /// In a reduce group, ops before the reduction are its prologue.
  static bool isPrologueOp(Operation *op) {
    return !isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
                ReduceProdOp, ReduceL1Op, ReduceL2Op, ReduceSumSquareOp,
                ReduceLogSumOp, ReduceLogSumExpOp>(op);
  }
  Value prologueOutput() { return prologue.back()->getResult(0); }

  /// A device lambda computing the prologue at a flat index of its output.
  FailureOr<std::string> prologueLambda(Value input) {
    std::string body;
    if (failed(writeElements(prologue, shapeOf(input), "i", body,
                             /*storeResults=*/false)))
      return failure();
    return "  auto cgcInput = [&](long long i) {\n" + body + "    return " +
           vars.lookup(input) + ";\n  };\n";
  }

  LogicalResult checkType(Value v, Operation *where) {
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return where->emitError()
             << "no GPU kernel for the dynamic shape " << v.getType()
             << " (ONNX node '" << nodeName(where) << "', op '"
             << where->getName() << "')";
    if (cType(elementType(v)).empty())
      return where->emitError()
             << "no GPU kernel for element type " << elementType(v)
             << " yet (ONNX node '" << nodeName(where) << "', op '"
             << where->getName() << "')";
    return success();
  }

  /// Pointer parameter for an external input (deduplicated).
  std::string inputParam(Value v) {
    for (auto &[value, name] : inputs)
      if (value == v)
        return name;
    std::string name = "in" + std::to_string(inputs.size());
    inputs.push_back({v, name});
    return name;
  }

  /// Expression reading external value `v` at the element of the group
  /// output whose flat index is `index` (numpy broadcasting).
  std::string load(Value v, ArrayRef<int64_t> outShape, StringRef index) {
    if (std::optional<double> splat = splatValue(v))
      return literal(*splat, elementType(v));
    std::string p = inputParam(v);
    // Half types load as float, so every expression computes in float.
    auto at = [&](const std::string &i) {
      std::string e = p + "[" + i + "]";
      return isHalf(elementType(v)) ? "((float)" + e + ")" : e;
    };
    ArrayRef<int64_t> shape = shapeOf(v);
    if (shape == outShape)
      return at(index.str());
    if (numElements(shape) == 1)
      return at("0");
    // Sum over the operand's non-broadcast dims of coord * stride.
    std::string expr;
    int64_t offset = outShape.size() - shape.size();
    int64_t outStride = 1, stride = 1;
    SmallVector<std::string> terms;
    for (int64_t d = outShape.size() - 1; d >= 0; --d) {
      int64_t j = d - offset;
      if (j >= 0 && shape[j] != 1)
        terms.push_back("((" + index.str() + " / " + std::to_string(outStride) +
                        "ll) % " + std::to_string(outShape[d]) + "ll) * " +
                        std::to_string(stride) + "ll");
      if (j >= 0)
        stride *= shape[j];
      outStride *= outShape[d];
    }
    return at(llvm::join(terms, " + "));
  }

  /// The C expression of one elementwise op over operand expressions.
  FailureOr<std::string> expression(Operation *op, ArrayRef<std::string> a) {
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
              return "(" + a[0] + " < 0 ? " + a[1] + " * " + a[0] + " : " +
                     a[0] + ")";
            })
            .Case([&](AndOp) { return "(" + a[0] + " && " + a[1] + ")"; })
            .Case([&](OrOp) { return "(" + a[0] + " || " + a[1] + ")"; })
            .Case([&](XorOp) { return "(" + a[0] + " != " + a[1] + ")"; })
            .Case([&](EqualOp) { return "(" + a[0] + " == " + a[1] + ")"; })
            .Case([&](LessOp) { return "(" + a[0] + " < " + a[1] + ")"; })
            .Case([&](LessEqualOp) { return "(" + a[0] + " <= " + a[1] + ")"; })
            .Case([&](GreaterOp) { return "(" + a[0] + " > " + a[1] + ")"; })
            .Case([&](GreaterEqualOp) {
              return "(" + a[0] + " >= " + a[1] + ")";
            })
            .Case([&](BitShiftOp s) {
              return "(" + a[0] + (s.getLeft() ? " << " : " >> ") + a[1] + ")";
            })
            .Case([&](WhereOp) {
              return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
            })
            .Case([&](CastOp cast) -> std::string {
              if (t.isInteger(1))
                return "(" + a[0] + " != 0)";
              // f64 -> f16/bf16 rounds once, not through float.
              if (isHalf(t) && elementType(cast.getInput()).isF64())
                return "((float)" + storageType(t) + "(" + a[0] + "))";
              return "((" + c + ")" + a[0] + ")";
            })
            .Case([&](AbsOp) { return "cgc_abs(" + a[0] + ")"; })
            .Case([&](NegOp) { return "(-" + a[0] + ")"; })
            .Case([&](SignOp) { return "cgc_sign(" + a[0] + ")"; })
            .Case([&](ReluOp) {
              return "cgc_max(" + a[0] + ", " + lit(0) + ")";
            })
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
              return "(" + a[0] + " / (" + lit(1) + " + cgc_abs(" + a[0] +
                     ")))";
            })
            .Case([&](MishOp) {
              return "(" + a[0] + " * cgc_tanh(cgc_softplus(" + a[0] + ")))";
            })
            .Case([&](HardSwishOp) {
              return "(" + a[0] + " * cgc_max(" + lit(0) + ", cgc_min(" +
                     lit(1) + ", " + a[0] + " / " + lit(6) + " + " + lit(0.5) +
                     ")))";
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
              return "(" + lit(f64("gamma")) + " * (" + a[0] + " > 0 ? " +
                     a[0] + " : " + lit(f64("alpha")) + " * (cgc_exp(" + a[0] +
                     ") - " + lit(1) + ")))";
            })
            .Case([&](ThresholdedReluOp) {
              return "(" + a[0] + " > " + lit(f64("alpha")) + " ? " + a[0] +
                     " : " + lit(0) + ")";
            })
            .Case([&](HardSigmoidOp) {
              return "cgc_max(" + lit(0) + ", cgc_min(" + lit(1) + ", " +
                     lit(f64("alpha")) + " * " + a[0] + " + " +
                     lit(f64("beta")) + "))";
            })
            .Case([&](ShrinkOp) {
              std::string bias = lit(f64("bias")), lambd = lit(f64("lambd"));
              return "(" + a[0] + " < -" + lambd + " ? " + a[0] + " + " + bias +
                     " : " + a[0] + " > " + lambd + " ? " + a[0] + " - " +
                     bias + " : " + lit(0) + ")";
            })
            .Case([&](GeluOp g) {
              if (g.getApproximate() == "tanh")
                return "(" + lit(0.5) + " * " + a[0] + " * (" + lit(1) +
                       " + cgc_tanh(" + lit(0.7978845608028654) + " * (" +
                       a[0] + " + " + lit(0.044715) + " * " + a[0] + " * " +
                       a[0] + " * " + a[0] + "))))";
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
            .Case([&](IsNaNOp) { return "(" + a[0] + " != " + a[0] + ")"; })
            .Case([&](IsInfOp inf) {
              std::string pos = "(" + a[0] + " == " + literal(INFINITY, elementType(op->getOperand(0))) + ")";
              std::string neg = "(" + a[0] + " == " + literal(-INFINITY, elementType(op->getOperand(0))) + ")";
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
      return op->emitError() << "no GPU code for elementwise '"
                             << op->getName() << "' (ONNX node '"
                             << nodeName(op) << "')";
    return *e;
  }

  /// Emits the element code of `ops` at flat output index `index`, given
  /// the variables already known (anchor), then stores the kernel results.
  LogicalResult writeElements(ArrayRef<Operation *> ops,
                              ArrayRef<int64_t> outShape, StringRef index,
                              std::string &out, bool storeResults = true) {
    for (Operation *op : ops) {
      if (failed(checkType(op->getResult(0), op)))
        return failure();
      SmallVector<std::string> args;
      for (Value operand : op->getOperands()) {
        auto known = vars.find(operand);
        args.push_back(known != vars.end() ? known->second
                                           : load(operand, outShape, index));
      }
      FailureOr<std::string> e = expression(op, args);
      if (failed(e))
        return failure();
      std::string var = "v" + std::to_string(vars.size());
      out += "    const " + cType(elementType(op->getResult(0))) + " " + var +
             " = " + *e + ";\n";
      vars[op->getResult(0)] = var;
    }
    if (!storeResults)
      return success();
    Block &body = kernel.getBody().front();
    for (auto [k, result] : llvm::enumerate(body.getTerminator()->getOperands()))
      out += "    out" + std::to_string(k) + "[" + index.str() + "] = " +
             vars.lookup(result) + ";\n";
    return success();
  }

  ArrayRef<int64_t> groupShape() {
    return shapeOf(kernel.getBody().front().getTerminator()->getOperand(0));
  }

  LogicalResult writeElementwise(ArrayRef<Operation *> ops) {
    int64_t n = numElements(groupShape());
    std::string text = "  const long long i = (long long)blockIdx.x * "
                       "blockDim.x + threadIdx.x;\n  if (i >= " +
                       std::to_string(n) + "ll) return;\n  {\n";
    if (failed(writeElements(ops, groupShape(), "i", text)))
      return failure();
    text += "  }\n";
    launches.push_back(
        Launch{text,
               {std::max<int64_t>(1, (n + kThreads - 1) / kThreads), 1, 1},
               {kThreads, 1, 1}});
    return success();
  }

  /// Matmul/gemm. f32 products run on the tiled template (GemmKernels.cpp)
  /// except when few rows (M <= 8) meet a right operand stored [N, K]
  /// (gemm transB): there one warp per output element reads a weight row
  /// coalesced, once. Other element types keep one warp per output element.
  /// The fused elementwise ops run as the epilogue, per output element.
  LogicalResult writeMatmul(ArrayRef<Operation *> ops) {
    // A layer norm fused before the matmul (the fuse pass): its input and
    // parameters are read instead of the normalized lhs.
    LayerNormOp ln = dyn_cast<LayerNormOp>(ops.front());
    if (ln)
      ops = ops.drop_front();
    Operation *anchor = ops.front();
    Value out = anchor->getResult(0);
    if (failed(checkType(out, anchor)))
      return failure();
    std::string t = cType(elementType(out));
    std::string acc = accType(elementType(out));
    ArrayRef<int64_t> outShape = shapeOf(out);
    int64_t total = numElements(outShape);
    // Operand expressions over the variables (row, contraction, column).
    std::function<std::string(StringRef, StringRef)> aAt, bAt;
    std::function<std::string(StringRef)> cTermOf;
    std::string batchSetup;
    int64_t m = 1, n = 1, k = 1, batchCount = 1;
    bool transA = false, transB = false;
    if (auto gemm = dyn_cast<GemmOp>(anchor)) {
      ArrayRef<int64_t> a = shapeOf(gemm.getA());
      m = outShape[0];
      n = outShape[1];
      transA = gemm.getTransA();
      transB = gemm.getTransB();
      k = transA ? a[0] : a[1];
      std::string pa = inputParam(gemm.getA()), pb = inputParam(gemm.getB());
      std::string ms = std::to_string(m) + "ll", ks = std::to_string(k) + "ll",
                  ns = std::to_string(n) + "ll";
      aAt = [=](StringRef r, StringRef c) {
        return transA ? pa + "[" + c.str() + " * " + ms + " + " + r.str() + "]"
                      : pa + "[" + r.str() + " * " + ks + " + " + c.str() + "]";
      };
      bAt = [=](StringRef r, StringRef c) {
        return transB ? pb + "[" + c.str() + " * " + ks + " + " + r.str() + "]"
                      : pb + "[" + r.str() + " * " + ns + " + " + c.str() + "]";
      };
      std::string alpha =
          literal(gemm.getAlpha().convertToDouble(), elementType(out));
      std::string cLoad, beta;
      if (Value c = gemm.getC()) {
        cLoad = load(c, outShape, "w");
        beta = literal(gemm.getBeta().convertToDouble(), elementType(out));
      }
      cTermOf = [=](StringRef v) {
        std::string r = "(" + acc + ")" + alpha + " * " + v.str();
        if (!cLoad.empty())
          r += " + (" + acc + ")" + beta + " * (" + acc + ")" + cLoad;
        return r;
      };
    } else {
      auto matmul = cast<MatMulOp>(anchor);
      SmallVector<int64_t> a(shapeOf(matmul.getLhs())),
          b(shapeOf(matmul.getRhs()));
      if (a.size() == 1)
        a.insert(a.begin(), 1);
      if (b.size() == 1)
        b.push_back(1);
      m = a[a.size() - 2];
      k = a.back();
      n = b.back();
      SmallVector<int64_t> batch(outShape.begin(),
                                 outShape.end() -
                                     (shapeOf(matmul.getLhs()).size() > 1) -
                                     (shapeOf(matmul.getRhs()).size() > 1));
      batchCount = numElements(batch);
      // Batch offsets with broadcasting: coordinate d of the output batch
      // maps to each operand's batch dim when it is not 1.
      auto batchOffset = [&](ArrayRef<int64_t> full, int64_t matrix) {
        ArrayRef<int64_t> ob = ArrayRef<int64_t>(full).drop_back(2);
        SmallVector<std::string> terms;
        int64_t stride = matrix, outStride = 1;
        for (int64_t d = batch.size() - 1; d >= 0; --d) {
          int64_t j = d - (int64_t)(batch.size() - ob.size());
          if (j >= 0 && ob[j] != 1)
            terms.push_back("((bt / " + std::to_string(outStride) + "ll) % " +
                            std::to_string(batch[d]) + "ll) * " +
                            std::to_string(stride) + "ll");
          if (j >= 0)
            stride *= ob[j];
          outStride *= batch[d];
        }
        return terms.empty() ? std::string("0ll") : llvm::join(terms, " + ");
      };
      std::string pa = inputParam(ln ? ln.getInput() : matmul.getLhs()),
                  pb = inputParam(matmul.getRhs());
      batchSetup = "  const long long aoff = " + batchOffset(a, m * k) +
                   ", boff = " + batchOffset(b, k * n) + ";\n";
      std::string ks = std::to_string(k) + "ll", ns = std::to_string(n) + "ll";
      aAt = [=](StringRef r, StringRef c) {
        return pa + "[aoff + " + r.str() + " * " + ks + " + " + c.str() + "]";
      };
      bAt = [=](StringRef r, StringRef c) {
        return pb + "[boff + " + r.str() + " * " + ns + " + " + c.str() + "]";
      };
      cTermOf = [](StringRef v) { return v.str(); };
      // A weight without batch dims against a batched lhs that broadcasts
      // nothing: one matrix of batch x M rows (bigger tiles, fewer edges).
      if (b.size() == 2 && numElements(ArrayRef<int64_t>(a).drop_back(2)) ==
                               batchCount && acc == "float") {
        m *= batchCount;
        batchCount = 1;
        batchSetup = "  const long long aoff = 0ll, boff = 0ll;\n";
      }
    }
    if (ln) {
      // The fuse pass admits only f32 row norms over K with [K] scale and
      // bias before a matmul with more than 8 rows: the tiled template.
      if (acc != "float" || m <= 8 || batchCount != 1)
        return ln->emitError("layer norm fused into a matmul it cannot lead");
      std::string raw = aAt("gm", "gk");
      std::string scale = inputParam(ln.getScale());
      std::string bias = ln.getBias() ? inputParam(ln.getBias()) : "";
      aAt = [=](StringRef r, StringRef c) {
        std::string e = "(((float)" + raw + " - cgcMean[gm - tm0]) * "
                        "cgcRstd[gm - tm0] * (float)" + scale + "[" +
                        c.str() + "]";
        if (!bias.empty())
          e += " + (float)" + bias + "[" + c.str() + "]";
        return e + ")";
      };
      lnStats = raw;
      lnEpsilon = ln.getEpsilon().convertToDouble();
    }
    if (acc == "float" && !(m <= 8 && transB))
      return writeTiledMatmul(ops, m, n, k, batchCount, batchSetup, aAt, bAt,
                              cTermOf, transA, transB,
                              isa<GemmOp>(anchor)
                                  ? cast<GemmOp>(anchor).getAlpha()
                                        .convertToDouble()
                                  : 1.0);
    std::string code;
    if (isa<GemmOp>(anchor))
      code += "  const long long m = w / " + std::to_string(n) +
              "ll, n = w % " + std::to_string(n) + "ll;\n";
    else
      code += "  const long long bt = w / " + std::to_string(m * n) +
              "ll, m = (w / " + std::to_string(n) + "ll) % " +
              std::to_string(m) + "ll, n = w % " + std::to_string(n) +
              "ll;\n" + batchSetup;
    // A weight row read 4 floats a lane at a time (all of a row's loads in
    // flight at once) where both rows are contiguous and aligned.
    bool vec = acc == "float" && transB && !transA && k % 4 == 0 &&
               isa<GemmOp>(anchor) &&
               plannedOffset(anchor->getOperand(0)) % 16 == 0 &&
               plannedOffset(anchor->getOperand(1)) % 16 == 0;
    auto f4 = [](const std::string &e) {
      return "*reinterpret_cast<const float4 *>(&" + e + ")";
    };
    std::string loop =
        vec ? "#pragma unroll\n  for (long long kk = lane * 4; kk < " +
                  std::to_string(k) +
                  "ll; kk += 128) {\n    const float4 av = " +
                  f4(aAt("m", "kk")) + ", bv = " + f4(bAt("kk", "n")) +
                  ";\n    acc = fmaf(av.x, bv.x, acc); acc = fmaf(av.y, bv.y, "
                  "acc); acc = fmaf(av.z, bv.z, acc); acc = fmaf(av.w, bv.w, "
                  "acc);\n  }\n"
            : "  for (long long kk = lane; kk < " + std::to_string(k) +
                  "ll; kk += 32)\n    acc += (" + acc + ")" + aAt("m", "kk") +
                  " * (" + acc + ")" + bAt("kk", "n") + ";\n";
    std::string text =
        "  const long long w = ((long long)blockIdx.x * blockDim.x + "
        "threadIdx.x) >> 5;\n  const int lane = threadIdx.x & 31;\n  if (w >= " +
        std::to_string(total) + "ll) return;\n" + code + "  " + acc +
        " acc = 0;\n" + loop +
        "  for (int o = 16; o > 0; o >>= 1)\n    acc += "
        "__shfl_down_sync(0xffffffffu, acc, o);\n  if (lane != 0) return;\n  "
        "{\n    const " +
        t + " v0 = (" + t + ")(" + cTermOf("acc") + ");\n";
    vars[out] = "v0";
    if (failed(writeElements(ops.drop_front(), outShape, "w", text)))
      return failure();
    int64_t warpsPerBlock = kThreads / 32;
    launches.push_back(Launch{
        text + "  }\n",
        {std::max<int64_t>(1, (total + warpsPerBlock - 1) / warpsPerBlock), 1,
         1},
        {kThreads, 1, 1}});
    return success();
  }

  /// The tiled template for an f32 matmul/gemm group: the output element
  /// (bt, gm, gn) has the flat index w = (bt * M + gm) * N + gn.
  LogicalResult writeTiledMatmul(
      ArrayRef<Operation *> ops, int64_t m, int64_t n, int64_t k,
      int64_t batch, const std::string &batchSetup,
      const std::function<std::string(StringRef, StringRef)> &aAt,
      const std::function<std::string(StringRef, StringRef)> &bAt,
      const std::function<std::string(StringRef)> &cTermOf, bool transA,
      bool transB, double alpha) {
    Value out = ops.front()->getResult(0);
    std::string t = cType(elementType(out));
    GemmProblem p;
    p.batch = batch;
    p.m = m;
    p.n = n;
    p.k = k;
    p.blockSetup = batchSetup;
    p.loadA = aAt("gm", "gk");
    p.loadB = bAt("gk", "gn");
    p.aContiguousK = !transA;
    p.bContiguousN = !transB;
    // Vector loads where the contiguous dim is a multiple of 4 and the
    // operand's buffer 16-byte aligned (batch offsets are then too).
    Operation *anchor = ops.front();
    Value a = anchor->getOperand(0), b = anchor->getOperand(1);
    p.aVec4 = (transA ? m : k) % 4 == 0 && plannedOffset(a) % 16 == 0 &&
              shapeOf(a).size() >= 2 && lnStats.empty();
    p.rowStatsInput = lnStats;
    p.rowStatsEpsilon = lnEpsilon;
    p.bVec4 = (transB ? k : n) % 4 == 0 && plannedOffset(b) % 16 == 0 &&
              shapeOf(b).size() >= 2;
    std::string text = "      const long long w = (bt * " + ll(m) +
                       " + gm) * " + ll(n) + " + gn;\n      {\n    const " +
                       t + " v0 = (" + t + ")(" + cTermOf("cgc_v") + ");\n";
    vars[out] = "v0";
    if (failed(writeElements(ops.drop_front(), shapeOf(out), "w", text)))
      return failure();
    p.epilogue = text + "      }\n";
    // Split K across blocks when the stored value is the product plus
    // terms that do not depend on it (bias, residual, beta * C): those are
    // stored first, the blocks' partial products added atomically.
    // (Not with --deterministic: atomic additions of the blocks' partial
    // sums land in a varying order, so the last bits vary run to run.)
    auto module = kernel->getParentOfType<ModuleOp>();
    bool deterministic = module && module->hasAttr("cgc.deterministic");
    if (Value stored = linearEpilogueResult(ops);
        stored && isF32(stored) && !deterministic) {
      p.splittable = true;
      p.init = p.epilogue;
      p.accumulate = "      atomicAdd(" + output(stored) + " + ((bt * " +
                     ll(m) + " + gm) * " + ll(n) + " + gn), " +
                     (alpha == 1.0 ? std::string("")
                                   : doubleLiteral(alpha) + "f * ") +
                     "cgc_v);\n";
    }
    for (Launch &launch :
         writeTiledGemm(p, chooseGemmTile(batch, m, n, k, p.splittable,
                                          p.aVec4 && p.bVec4 &&
                                              p.rowStatsInput.empty())))
      launches.push_back(std::move(launch));
    return success();
  }

  static bool isF32(Value v) { return elementType(v).isF32(); }

  /// Set by writeMatmul for a fused layer norm: the raw lhs at (gm, gk)
  /// and the epsilon.
  std::string lnStats;
  double lnEpsilon = 0;

  /// The only value a matmul group stores, when it is the product plus a
  /// chain of additions of values from outside the group (x + c, c + x,
  /// x - c); else null.
  Value linearEpilogueResult(ArrayRef<Operation *> ops) {
    Block &body = kernel.getBody().front();
    if (body.getTerminator()->getNumOperands() != 1)
      return nullptr;
    Value chain = ops.front()->getResult(0);
    llvm::SmallPtrSet<Value, 8> inGroup = {chain};
    for (Operation *op : ops.drop_front()) {
      if (!isa<AddOp, SubOp>(op) || !chain.hasOneUse())
        return nullptr;
      Value lhs = op->getOperand(0), rhs = op->getOperand(1);
      bool chainLeft = lhs == chain && !inGroup.contains(rhs);
      bool chainRight = isa<AddOp>(op) && rhs == chain && !inGroup.contains(lhs);
      if (!chainLeft && !chainRight)
        return nullptr;
      chain = op->getResult(0);
      inGroup.insert(chain);
    }
    return body.getTerminator()->getOperand(0) == chain ? chain : nullptr;
  }

  /// Attention (see the fuse pass): S = Q x Kt, elementwise ops of S, a
  /// softmax over its last axis, O = P x V, an epilogue. One block per
  /// batch index and R query rows: the rows of Q and of S/P stay in shared
  /// memory, Kt and V are read coalesced (along the key and the value dim).
  LogicalResult writeAttention(ArrayRef<Operation *> ops) {
    // [views of Q, Kt, V] S = Q x Kt, [elementwise], softmax, O = P x V,
    // [epilogue | a transpose of O].
    size_t at = 0;
    while (at < ops.size() && isa<SplitOp, TransposeOp, ReshapeOp>(ops[at]))
      ++at;
    size_t softmaxAt = at + 1;
    while (softmaxAt < ops.size() && !isa<SoftmaxOp>(ops[softmaxAt]))
      ++softmaxAt;
    if (at >= ops.size() || !isa<MatMulOp>(ops[at]) ||
        softmaxAt + 1 >= ops.size() || !isa<MatMulOp>(ops[softmaxAt + 1]))
      return ops.front()->emitError("malformed attention group");
    auto mm1 = cast<MatMulOp>(ops[at]);
    auto mm2 = cast<MatMulOp>(ops[softmaxAt + 1]);
    ArrayRef<Operation *> prologue = ops.slice(at + 1, softmaxAt - at - 1);
    ArrayRef<Operation *> epilogue = ops.drop_front(softmaxAt + 2);
    auto outT = epilogue.size() == 1 ? dyn_cast<TransposeOp>(epilogue.front())
                                     : TransposeOp();
    if (outT)
      epilogue = {};
    Value sv = mm1.getResult(), ov = mm2.getResult();
    ArrayRef<int64_t> sShape = shapeOf(sv), oShape = shapeOf(ov);
    int64_t rank = sShape.size();
    int64_t batch = numElements(sShape.drop_back(2));
    int64_t L = sShape[rank - 2], L2 = sShape[rank - 1];
    int64_t D = shapeOf(mm1.getLhs()).back(), Dv = oShape.back();
    Block *body = &kernel.getBody().front();
    // Each operand as a strided view of the value outside the kernel that
    // it is read from: the per-block batch offset and the row/column strides.
    auto viewOf = [&](Value v, std::string &param, std::string &offset,
                      int64_t &rowStride, int64_t &colStride,
                      bool *aligned4 = nullptr) -> LogicalResult {
      SmallVector<std::pair<Operation *, unsigned>> chain;
      while (Operation *def = v.getDefiningOp()) {
        if (def->getBlock() != body || !isa<SplitOp, TransposeOp, ReshapeOp>(def))
          break;
        chain.push_back({def, cast<OpResult>(v).getResultNumber()});
        v = def->getOperand(0);
      }
      std::optional<StridedView> view = contiguousView(shapeOf(v));
      for (auto [op, result] : llvm::reverse(chain))
        if (view)
          view = applyView(*view, op, result);
      if (!view)
        return ops.front()->emitError("attention operand is no strided view");
      param = inputParam(v);
      SmallVector<std::string> terms = {ll(view->offset)};
      int64_t outStride = 1;
      for (int64_t d = rank - 3; d >= 0; --d) {
        terms.push_back("((bt / " + ll(outStride) + ") % " +
                        ll(view->shape[d]) + ") * " + ll(view->strides[d]));
        outStride *= view->shape[d];
      }
      offset = llvm::join(terms, " + ");
      rowStride = view->strides[rank - 2];
      colStride = view->strides[rank - 1];
      // Whether (row, 4c) is 16-byte aligned for every batch index and row.
      if (aligned4) {
        *aligned4 = plannedOffset(v) % 16 == 0 && view->offset % 4 == 0 &&
                    rowStride % 4 == 0;
        for (int64_t d = 0; d < rank - 2; ++d)
          *aligned4 = *aligned4 && (view->shape[d] == 1 ||
                                    view->strides[d] % 4 == 0);
      }
      return success();
    };
    std::string q, kt, v, qOff, kOff, vOff;
    bool vAligned = false;
    int64_t qR, qC, kR, kC, vR, vC;
    if (failed(viewOf(mm1.getLhs(), q, qOff, qR, qC)) ||
        failed(viewOf(mm1.getRhs(), kt, kOff, kR, kC)) ||
        failed(viewOf(mm2.getRhs(), v, vOff, vR, vC, &vAligned)))
      return failure();
    // Where O(bt, r, c) is stored: contiguous, or through the transpose.
    StridedView oView = contiguousView(oShape);
    if (outT) {
      StridedView tView = contiguousView(shapeOf(outT.getResult()));
      for (auto [d, p] : llvm::enumerate(outT.getPerm()))
        oView.strides[p] = tView.strides[d];
    }
    std::string oOff;
    {
      SmallVector<std::string> terms = {"0ll"};
      int64_t outStride = 1;
      for (int64_t d = rank - 3; d >= 0; --d) {
        terms.push_back("((bt / " + ll(outStride) + ") % " +
                        ll(oShape[d]) + ") * " + ll(oView.strides[d]));
        outStride *= oShape[d];
      }
      oOff = llvm::join(terms, " + ");
    }
    // Rows per block: the most that still gives 132 blocks (8, 16 or 32),
    // within 48 KB of shared memory. Both products are register-tiled: a
    // thread computes up to 4 rows x 2 keys of the scores (Q stored
    // d-major, so its 4 rows are one float4; keys staged KC at a time, read
    // as float2) and up to 4 rows x 2 columns of O (P stored key-major, so
    // 4 rows of a key are one float4; V staged KC keys at a time where K
    // was). At 4 x 2, shared memory is read about four times less per
    // multiply-add than with a thread per output row segment.
    const bool vVec = vC == 1 && Dv % 4 == 0 && vAligned;
    auto smemFloats = [&](int64_t r, int64_t kc) {
      return attentionSharedFloats(r, D, L2, Dv, kc);
    };
    const int64_t kSmemFloats = kStaticSharedFloats;
    int64_t R = 8;
    for (int64_t r : {16, 32})
      if (batch * ((L + r - 1) / r) >= 132 && smemFloats(r, 32) <= kSmemFloats)
        R = r;
    // The fuse pass merged it only where this fits
    // (attentionFitsSharedMemory).
    if (smemFloats(R, 32) > kSmemFloats)
      return ops.front()->emitError()
             << "attention rows too long for shared memory (ONNX node '"
             << nodeName(ops.front()) << "'): a fuse pass bug";
    // Keys a chunk: 64 where shared memory allows, never (much) more than
    // there are keys; even, for the float2 reads.
    const int64_t KC = std::min<int64_t>(
        smemFloats(R, 64) <= kSmemFloats ? 64 : 32, (L2 + 1) / 2 * 2);
    const int64_t RT = (L + R - 1) / R, RS = R + 4, KS = KC + 2;
    // A thread's tile, rows x keys (columns): the largest that still keeps
    // 256 threads busy (4 x 2 on BERT b8's 32 rows; small blocks take
    // smaller tiles rather than leave threads idle).
    auto tileFor = [&](int64_t cols, bool pairs) -> std::pair<int64_t, int64_t> {
      for (auto [tr, tc] : {std::pair<int64_t, int64_t>{4, 2}, {2, 2}, {2, 1},
                            {1, 2}, {1, 1}})
        if ((tc == 1 || pairs) && (R / tr) * ((cols + tc - 1) / tc) >= 256)
          return {tr, tc};
      return {1, 1};
    };
    const auto [SR, SK] = tileFor(KC, true);
    const auto [OR, OC] = tileFor(Dv, Dv % 2 == 0);
    auto n = [](int64_t v) { return std::to_string(v); };
    // `const float NAME[W] = {...};` from W consecutive floats at ADDR.
    auto readVector = [&](int64_t w, StringRef name, const std::string &addr) {
      static const char *const lanes[] = {"x", "y", "z", "w"};
      if (w == 1)
        return "const float " + name.str() + "[1] = {" + addr + "};\n";
      std::string type = "float" + n(w), r = "const " + type + " " +
                                             name.str() + "v = *reinterpret_cast<const " +
                                             type + " *>(&" + addr + ");\n        const float " +
                                             name.str() + "[" + n(w) + "] = {";
      for (int64_t i = 0; i < w; ++i)
        r += (i ? ", " : "") + name.str() + "v." + lanes[i];
      return r + "};\n";
    };
    std::string t;
    t += "  // attention: batch=" + n(batch) + " L=" + n(L) + " keys=" + n(L2) +
         " D=" + n(D) + " Dv=" + n(Dv) + ", " + n(R) + " rows a block, " +
         n(KC) + " keys a chunk\n";
    t += "  __shared__ __align__(16) float cgcQt[" + n(D) + "][" + n(RS) + "];\n";
    t += "  __shared__ __align__(16) float cgcSt[" + n(L2) + "][" + n(RS) +
         "];\n";
    t += "  __shared__ __align__(16) float cgcKV[" +
         n(std::max(D * KS, KC * Dv)) + "];\n";
    t += "  const int tid = threadIdx.x;\n";
    t += "  const long long bt = blockIdx.x / " + ll(RT) +
         ", row0 = (blockIdx.x % " + ll(RT) + ") * " + ll(R) + ";\n";
    t += "  const long long qoff = " + qOff + ", koff = " + kOff +
         ", voff = " + vOff + ", ooff = " + oOff + ";\n";
    // Loads as unrolled loops of a fixed count (all of a thread's loads in
    // flight at once).
    auto each = [&](int64_t count, const std::string &indent) {
      std::string r = indent + "#pragma unroll\n" + indent +
                      "for (int cgcI = 0; cgcI < " + n((count + 255) / 256) +
                      "; ++cgcI) {\n" + indent +
                      "  const int e = tid + cgcI * 256;\n";
      if (count % 256)
        r += indent + "  if (e >= " + n(count) + ") break;\n";
      return r;
    };
    t += each(R * D, "  ") + "    const int r = e / " + n(D) + ", d = e % " +
         n(D) + ";\n    cgcQt[d][r] = row0 + r < " + ll(L) + " ? (float)" + q +
         "[qoff + (row0 + r) * " + ll(qR) + " + d * " + ll(qC) +
         "] : 0.0f;\n  }\n";
    // Scores and the elementwise ops on them, KC keys at a time: K's chunk
    // is stored d-major (cgcKV[d * KS + key]), loaded along whichever of
    // its dims is contiguous.
    bool dAlong = kR == 1;
    t += "  for (int j0 = 0; j0 < " + n(L2) + "; j0 += " + n(KC) +
         ") {\n    if (j0 > 0) __syncthreads();\n";
    t += each(KC * D, "    ") + "      const int jj = " +
         (dAlong ? "e / " + n(D) : "e % " + n(KC)) +
         ", d = " + (dAlong ? "e % " + n(D) : "e / " + n(KC)) +
         ";\n      cgcKV[d * " + n(KS) + " + jj] = j0 + jj < " + n(L2) +
         " ? (float)" + kt + "[koff + d * " + ll(kR) + " + (j0 + jj) * " +
         ll(kC) + "] : 0.0f;\n    }\n    __syncthreads();\n";
    const int64_t SG = R / SR;
    t += "    for (int e = tid; e < " + n(SG * ((KC + SK - 1) / SK)) +
         "; e += 256) {\n      const int rg = e % " + n(SG) + ", kg = e / " +
         n(SG) + ";\n      float acc[" + n(SR) + "][" + n(SK) +
         "] = {};\n#pragma unroll 8\n      for (int d = 0; d < " + n(D) +
         "; ++d) {\n        " +
         readVector(SR, "qs", "cgcQt[d][rg * " + n(SR) + "]") + "        " +
         readVector(SK, "ks", "cgcKV[d * " + n(KS) + " + kg * " + n(SK) + "]") +
         "#pragma unroll\n        for (int u = 0; u < " + n(SR * SK) +
         "; ++u) acc[u / " + n(SK) + "][u % " + n(SK) + "] = fmaf(qs[u / " +
         n(SK) + "], ks[u % " + n(SK) + "], acc[u / " + n(SK) + "][u % " +
         n(SK) + "]);\n      }\n#pragma unroll\n      for (int u = 0; u < " +
         n(SR * SK) + "; ++u) {\n      const int r = rg * " + n(SR) + " + u / " +
         n(SK) + ";\n      const long long j = j0 + kg * " + n(SK) + " + u % " +
         n(SK) + ";\n      if (j >= " + ll(L2) +
         ") continue;\n      if (row0 + r >= " + ll(L) +
         ") { cgcSt[j][r] = 0.0f; continue; }\n      const long long i = (bt * " +
         ll(L) + " + row0 + r) * " + ll(L2) +
         " + j;\n      const float cgc_s = acc[u / " + n(SK) + "][u % " +
         n(SK) + "];\n";
    vars[sv] = "cgc_s";
    if (failed(writeElements(prologue, sShape, "i", t, /*storeResults=*/false)))
      return failure();
    t += "      cgcSt[j][r] = (float)" +
         vars.lookup(ops[softmaxAt]->getOperand(0)) + ";\n      }\n    }\n  }\n";
    t += "  __syncthreads();\n";
    // Softmax: 256 / R threads a row, keys interleaved between them (their
    // reads of a key-major row fall in different banks).
    const int64_t T = 256 / R;
    t += "  {\n    const int r = tid / " + n(T) + ", sub = tid % " + n(T) +
         ";\n    float mx = -__int_as_float(0x7f800000);\n    for (int j = sub; "
         "j < " + n(L2) + "; j += " + n(T) + ") mx = fmaxf(mx, cgcSt[j][r]);\n"
         "    for (int o = " + n(T / 2) + "; o > 0; o >>= 1) mx = fmaxf(mx, "
         "__shfl_xor_sync(0xffffffffu, mx, o));\n    float sum = 0.0f;\n"
         "    for (int j = sub; j < " + n(L2) + "; j += " + n(T) +
         ") { const float x = expf(cgcSt[j][r] - mx); cgcSt[j][r] = x; sum += "
         "x; }\n    for (int o = " + n(T / 2) + "; o > 0; o >>= 1) sum += "
         "__shfl_xor_sync(0xffffffffu, sum, o);\n    const float inv = 1.0f / "
         "sum;\n    for (int j = sub; j < " + n(L2) + "; j += " + n(T) +
         ") cgcSt[j][r] *= inv;\n  }\n";
    // O = P x V, KC keys of V at a time in shared memory (where K's chunk
    // was; the barrier after the softmax ends the last reads of K), the
    // sums of a thread's tiles in registers across the chunks.
    const int64_t OG = R / OR, PG = OG * (Dv / OC), IT = (PG + 255) / 256;
    std::string vChunk;
    if (vVec) {
      const std::string dq = n(Dv / 4);
      vChunk = each(KC * Dv / 4, "    ") + "      const int jj = e / " + dq +
               ", c = (e % " + dq + ") * 4;\n      *reinterpret_cast<float4 *>("
               "&cgcKV[jj * " + n(Dv) + " + c]) = j0 + jj < " + n(L2) +
               " ? *reinterpret_cast<const float4 *>(&" + v +
               "[voff + (j0 + jj) * " + ll(vR) +
               " + c]) : make_float4(0.f, 0.f, 0.f, 0.f);\n    }\n";
    } else {
      vChunk = each(KC * Dv, "    ") + "      const int jj = e / " + n(Dv) +
               ", c = e % " + n(Dv) + ";\n      cgcKV[jj * " + n(Dv) +
               " + c] = j0 + jj < " + n(L2) + " ? (float)" + v +
               "[voff + (j0 + jj) * " + ll(vR) + " + c * " + ll(vC) +
               "] : 0.0f;\n    }\n";
    }
    t += "  __syncthreads();\n  float cgcO[" + n(IT) + "][" + n(OR * OC) +
         "] = {};\n";
    t += "  for (int j0 = 0; j0 < " + n(L2) + "; j0 += " + n(KC) +
         ") {\n    if (j0 > 0) __syncthreads();\n" + vChunk +
         "    __syncthreads();\n";
    t += "    const int jn = " + n(L2) + " - j0 < " + n(KC) + " ? " + n(L2) +
         " - j0 : " + n(KC) + ";\n";
    t += "#pragma unroll\n    for (int it = 0; it < " + n(IT) +
         "; ++it) {\n      const int e = tid + it * 256;\n      if (e >= " +
         n(PG) + ") continue;\n      const int rg = e % " + n(OG) +
         ", cg = e / " + n(OG) + ";\n#pragma unroll 4\n      for (int j = 0; "
         "j < jn; ++j) {\n        " +
         readVector(OR, "ps", "cgcSt[j0 + j][rg * " + n(OR) + "]") +
         "        " +
         readVector(OC, "vs", "cgcKV[j * " + n(Dv) + " + cg * " + n(OC) + "]") +
         "#pragma unroll\n        for (int u = 0; u < " + n(OR * OC) +
         "; ++u) cgcO[it][u] = fmaf(ps[u / " + n(OC) + "], vs[u % " + n(OC) +
         "], cgcO[it][u]);\n      }\n    }\n  }\n";
    // The epilogue per output element of the thread's tiles.
    std::string wExpr = "ooff + (row0 + r) * " + ll(oView.strides[rank - 2]) +
                        " + c * " + ll(oView.strides[rank - 1]);
    t += "#pragma unroll\n  for (int it = 0; it < " + n(IT) +
         "; ++it) {\n    const int e = tid + it * 256;\n    if (e >= " +
         n(PG) + ") continue;\n    const int rg = e % " + n(OG) +
         ", cg = e / " + n(OG) + ";\n#pragma unroll\n    for (int u = 0; u < " +
         n(OR * OC) + "; ++u) {\n    const int r = rg * " + n(OR) + " + u / " +
         n(OC) + ";\n    const long long c = cg * " + n(OC) + " + u % " + n(OC) +
         ";\n    if (row0 + r >= " + ll(L) + ") continue;\n    {\n    const "
         "long long w = " + wExpr + ";\n    {\n    const " +
         cType(elementType(ov)) + " cgc_o = cgcO[it][u];\n";
    vars[ov] = "cgc_o";
    if (outT)
      vars[outT.getResult()] = "cgc_o";
    if (failed(writeElements(epilogue, oShape, "w", t)))
      return failure();
    t += "    }\n    }\n    }\n  }\n";
    launches.push_back(Launch{t, {batch * RT, 1, 1}, {kThreads, 1, 1}});
    return success();
  }

  /// Normalizations: one block per normalized row; block reductions in
  /// float (double for f64); the epilogue runs per element of the row.
  LogicalResult writeNorm(ArrayRef<Operation *> ops) {
    // Elementwise producers of the normalized input (a prologue) come before
    // the anchor; they are evaluated wherever the template reads its input.
    size_t anchorIndex = 0;
    while (anchorIndex < ops.size() &&
           !isa<LayerNormOp, SoftmaxOp, LogSoftmaxOp>(ops[anchorIndex]))
      ++anchorIndex;
    if (anchorIndex == ops.size())
      return ops.front()->emitError("norm kernel without a normalization");
    ArrayRef<Operation *> prologue = ops.take_front(anchorIndex);
    ops = ops.drop_front(anchorIndex);
    Operation *anchor = ops.front();
    Value out = anchor->getResult(0);
    if (failed(checkType(out, anchor)))
      return failure();
    std::string t = cType(elementType(out));
    // Statistics in double for f64, else in float.
    std::string a = elementType(out).isF64() ? "double" : "float";
    ArrayRef<int64_t> shape = shapeOf(out);
    int64_t rows = 1, length = 1, inner = 1;
    std::string x = prologue.empty() ? inputParam(anchor->getOperand(0)) : "";
    std::string element; // value of the anchor at (row, j) given mean/rstd
    std::string stats;
    if (auto ln = dyn_cast<LayerNormOp>(anchor)) {
      int64_t axis = ln.getAxis();
      if (axis < 0)
        axis += shape.size();
      rows = numElements(shape.take_front(axis));
      length = numElements(shape.drop_front(axis));
      stats = "  " + a + " s = 0;\n  for (long long j = threadIdx.x; j < L; j "
              "+= blockDim.x) s += (" + a + ")X(j);\n  const " + a +
              " mean = cgc_block_reduce(s, (" + a + ")0, scratch, "
              "cgc_sum_op()) / (" + a + ")L;\n  " + a +
              " q = 0;\n  for (long long j = threadIdx.x; j < L; j += "
              "blockDim.x) { " + a + " d = (" + a +
              ")X(j) - mean; q += d * d; }\n  const " + a + " rstd = (" + a +
              ")1 / cgc_sqrt(cgc_block_reduce(q, (" + a +
              ")0, scratch, cgc_sum_op()) / (" + a + ")L + (" + a + ")" +
              llvm::formatv("{0:e17}", ln.getEpsilon().convertToDouble())
                  .str() +
              ");\n";
      // Scale and bias broadcast against the normalized dims.
      SmallVector<int64_t> normalized(shape.drop_front(axis));
      element = "((" + a + ")X(j) - mean) * rstd * (" + a + ")" +
                load(ln.getScale(), normalized, "j");
      if (Value bias = ln.getBias())
        element += " + (" + a + ")" + load(bias, normalized, "j");
    } else if (isa<SoftmaxOp, LogSoftmaxOp>(anchor)) {
      int64_t axis = anchor->getAttrOfType<IntegerAttr>("axis").getInt();
      if (axis < 0)
        axis += shape.size();
      rows = numElements(shape.take_front(axis)) *
             numElements(shape.drop_front(axis + 1));
      length = shape[axis];
      inner = numElements(shape.drop_front(axis + 1));
      stats = "  " + a + " mx = cgc_limits<" + a +
              ">::lowest();\n  for (long long j = threadIdx.x; j < L; j += "
              "blockDim.x) mx = cgc_max(mx, (" + a + ")X(j));\n  mx = "
              "cgc_block_reduce(mx, cgc_limits<" + a +
              ">::lowest(), scratch, cgc_max_op());\n  " + a +
              " s = 0;\n  for (long long j = threadIdx.x; j < L; j += "
              "blockDim.x) s += cgc_exp((" + a + ")X(j) - mx);\n  s = "
              "cgc_block_reduce(s, (" + a + ")0, scratch, cgc_sum_op());\n";
      element = isa<SoftmaxOp>(anchor)
                    ? "cgc_exp((" + a + ")X(j) - mx) / s"
                    : "(" + a + ")X(j) - mx - cgc_log(s)";
    } else {
      return anchor->emitError() << "no GPU kernel for '" << anchor->getName()
                                 << "' yet";
    }
    std::string innerStr = std::to_string(inner) + "ll";
    std::string input = "#define X(j) " + x + "[base + (j) * " + innerStr +
                        "]\n";
    if (!prologue.empty()) {
      std::string body;
      if (failed(writeElements(prologue, shapeOf(anchor->getOperand(0)), "i",
                               body, /*storeResults=*/false)))
        return failure();
      input = "  auto cgcInput = [&](long long j) {\n    const long long i = "
              "base + j * " + innerStr + ";\n" + body + "    return " +
              vars.lookup(anchor->getOperand(0)) +
              ";\n  };\n#define X(j) cgcInput(j)\n";
    }
    std::string text =
        "  __shared__ " + a + " scratch[32];\n  const long long row = "
        "blockIdx.x;\n"
        "  const long long L = " +
        std::to_string(length) + "ll;\n  const long long base = (row / " +
        innerStr + ") * L * " + innerStr + " + row % " + innerStr + ";\n" +
        input + stats +
        "  for (long long j = threadIdx.x; j < L; j += blockDim.x) {\n"
        "    const long long i = base + j * " +
        innerStr + ";\n    const " + t + " v0 = (" + t + ")(" + element + ");\n";
    vars[out] = "v0";
    if (failed(writeElements(ops.drop_front(), shape, "i", text)))
      return failure();
    launches.push_back(Launch{text + "  }\n#undef X\n",
                              {std::max<int64_t>(1, rows), 1, 1},
                              {kThreads, 1, 1}});
    return success();
  }

  /// One GeneratedKernel per launch, all with the group's parameters: the
  /// inputs, then the outputs.
  FailureOr<std::vector<GeneratedKernel>> finish() {
    GeneratedKernel common;
    SmallVector<std::string> params;
    for (auto &[value, name] : inputs) {
      params.push_back("const " + storageType(elementType(value)) +
                       " *__restrict__ " + name);
      common.argOffsets.push_back(plannedOffset(value));
      common.argBytes.push_back(tensorBytes(value.getType()));
    }
    common.numInputs = inputs.size();
    Block &body = kernel.getBody().front();
    for (auto [k, value] : llvm::enumerate(body.getTerminator()->getOperands())) {
      params.push_back(storageType(elementType(value)) +
                       " *__restrict__ out" + std::to_string(k));
      common.argOffsets.push_back(plannedOffset(kernel.getResult(k)));
      common.argBytes.push_back(tensorBytes(value.getType()));
    }
    if (llvm::is_contained(common.argOffsets, -1))
      return kernel.emitError(
          "kernel reads or writes a value without a planned buffer (run "
          "--cgc-plan-buffers first)");
    // Kernels are named after their template (the anchor op for groups
    // built on one op's template) and a hash of their source, so identical
    // kernels share one symbol.
    std::string family = kernel.getKind().str();
    if ((family == "single" || family == "conv" || family == "reduce") &&
        !body.without_terminator().empty())
      family = body.front().getName().stripDialect().str();
    std::vector<GeneratedKernel> kernels;
    for (const Launch &launch : launches) {
      for (int d = 0; d < 3; ++d)
        if (launch.grid[d] < 1 || launch.grid[d] > (d == 0 ? INT32_MAX : 65535))
          return kernel.emitError("launch grid out of range for ")
                 << kernel.getName() << " (ONNX node '"
                 << nodeName(&body.front()) << "')";
      if (launch.block[0] * launch.block[1] * launch.block[2] > kThreads)
        return kernel.emitError("launch block too large for ")
               << kernel.getName();
      GeneratedKernel k = common;
      std::string signature =
          "extern \"C\" __global__ void __launch_bounds__(" +
          std::to_string(kThreads) +
          (launch.minBlocks > 1 ? ", " + std::to_string(launch.minBlocks)
                                : std::string()) +
          ") @NAME@(" + llvm::join(params, ", ") +
          ") {\n";
      // The wait comes before any memory access: with programmatic graph
      // edges the kernel may start while the kernels it depends on run.
      // The trigger at the end lets the next kernel launch while this one
      // drains (a block that returns early counts as having triggered).
      std::string source = signature + "  cgc_wait_upstream();\n" +
                           launch.body + "  cgc_launch_dependents();\n}\n";
      k.name = family + "_" +
               llvm::utohexstr(llvm::xxh3_64bits(source), /*LowerCase=*/true);
      size_t at = source.find("@NAME@");
      source.replace(at, 6, k.name);
      k.source = std::move(source);
      k.grid = launch.grid;
      k.block = launch.block;
      kernels.push_back(std::move(k));
    }
    return kernels;
  }

  KernelOp kernel;
  SmallVector<std::pair<Value, std::string>> inputs;
  llvm::DenseMap<Value, std::string> vars;
  SmallVector<Launch> launches;
};

} // namespace

FailureOr<std::vector<GeneratedKernel>> cgc::generateKernels(KernelOp kernel) {
  return KernelWriter(kernel).run();
}
