//===- GroupWriter.cpp - parameters and fused elementwise code ------------===//
//
// What every group template shares: parameter names, loads with numpy
// broadcasting, the element writer that chains fused elementwise ops as C
// variables, and the groups anchored on a per-op template.
//
//===----------------------------------------------------------------------===//

#include "GroupWriter.h"
#include "OpTemplates.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

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

/// In a reduce group, ops before the reduction are its prologue.
bool isPrologueOp(Operation *op) {
  return !isa<ReductionOpInterface>(op);
}

} // namespace

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

std::string GroupWriter::output(Value result) {
  for (auto [k, value] : llvm::enumerate(results()))
    if (value == result)
      return "out" + std::to_string(k);
  return "";
}

std::string GroupWriter::read(Value v, StringRef index) {
  if (!prologue.empty() && v == prologueOutput())
    return "cgcInput(" + index.str() + ")";
  return ParamResolver::read(v, index);
}

bool GroupWriter::needed(Value result) {
  return (result == anchor && !epilogue.empty()) || !output(result).empty();
}

std::string GroupWriter::store(Value result, StringRef value, StringRef index) {
  if (result != anchor || epilogue.empty())
    return ParamResolver::store(result, value, index);
  std::string text = "  {\n    const " + cType(elementType(result)) +
                     " v0 = " + value.str() + ";\n";
  vars[result] = "v0";
  if (failed(writeElements(epilogue, shapeOf(result), index, text)))
    epilogueFailed = true;
  return text + "  }\n";
}

std::string GroupWriter::inputParam(Value v) {
  // A product operand stored narrow is read as stored; the template's
  // float expressions convert it as they load.
  v = storedOperand(v);
  for (auto &[value, name] : inputs)
    if (value == v)
      return name;
  std::string name = "in" + std::to_string(inputs.size());
  inputs.push_back({v, name});
  return name;
}

LogicalResult GroupWriter::checkType(Value v, Operation *where) {
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

//===----------------------------------------------------------------------===//
// The element writer
//===----------------------------------------------------------------------===//

std::string GroupWriter::broadcastIndex(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> outShape,
                                        StringRef index) {
  if (shape == outShape)
    return index.str();
  if (numElements(shape) == 1)
    return "0";
  // Sum over the operand's non-broadcast dims of coord * stride.
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
  return llvm::join(terms, " + ");
}

std::string GroupWriter::load(Value v, ArrayRef<int64_t> outShape,
                              StringRef index) {
  if (std::optional<double> splat = splatValue(v))
    return literal(*splat, elementType(v));
  std::string e =
      inputParam(v) + "[" + broadcastIndex(shapeOf(v), outShape, index) + "]";
  // Narrower floats load as float, so every expression computes in float.
  return loadsAsFloat(elementType(v)) ? "((float)" + e + ")" : e;
}

LogicalResult GroupWriter::writeElements(ArrayRef<Operation *> ops,
                                         ArrayRef<int64_t> outShape,
                                         StringRef index, std::string &out,
                                         bool storeResults) {
  for (Operation *op : ops) {
    if (failed(checkType(op->getResult(0), op)))
      return failure();
    SmallVector<std::string> args;
    for (Value operand : op->getOperands()) {
      auto known = vars.find(operand);
      args.push_back(known != vars.end() ? known->second
                                         : load(operand, outShape, index));
    }
    // A random mask is a function of the element's index in its own shape.
    if (isa<RandomMaskOp>(op))
      args.push_back(broadcastIndex(shapeOf(op->getResult(0)), outShape,
                                    index));
    FailureOr<std::string> e = elementExpression(op, args);
    if (failed(e))
      return failure();
    std::string var = "v" + std::to_string(vars.size());
    out += "    const " + cType(elementType(op->getResult(0))) + " " + var +
           " = " + *e + ";\n";
    vars[op->getResult(0)] = var;
  }
  if (!storeResults)
    return success();
  for (auto [k, result] : llvm::enumerate(results()))
    if (!unstored.contains(result))
      out += "    out" + std::to_string(k) + "[" + index.str() +
             "] = " + vars.lookup(result) + ";\n";
  return success();
}

FailureOr<std::string> GroupWriter::prologueLambda(Value input) {
  std::string code;
  if (failed(writeElements(prologue, shapeOf(input), "i", code,
                           /*storeResults=*/false)))
    return failure();
  return "  auto cgcInput = [&](long long i) {\n" + code + "    return " +
         vars.lookup(input) + ";\n  };\n";
}

//===----------------------------------------------------------------------===//
// Groups anchored on one op's template
//===----------------------------------------------------------------------===//

LogicalResult writeAnchoredGroup(GroupWriter &w, ArrayRef<Operation *> ops) {
  // Conv, reduce and gather groups run their fused elementwise ops in
  // store(); a reduce group's producers (prologue) run where it reads its
  // input.
  size_t anchorIndex = 0;
  if (w.kernel.getKind() == KernelKind::reduce)
    while (anchorIndex + 1 < ops.size() && isPrologueOp(ops[anchorIndex]))
      ++anchorIndex;
  Operation *anchorOp = ops[anchorIndex];
  w.prologue.assign(ops.begin(), ops.begin() + anchorIndex);
  w.epilogue.assign(ops.begin() + anchorIndex + 1, ops.end());
  w.anchor = anchorOp->getResult(0);
  // 2-d f32 convolutions run as (implicit) GEMMs or on the depthwise
  // template where their config says so, everything else on the op's own.
  FailureOr<SmallVector<Launch>> single = failure();
  auto conv = dyn_cast<ConvOp>(anchorOp);
  KernelStrategy strategy = w.config.getStrategy();
  if (conv && strategy == KernelStrategy::conv_gemm)
    single = writeGemmConv(conv, w, w.config);
  else if (conv && strategy == KernelStrategy::depthwise)
    single = writeDepthwiseConv(conv, w);
  else
    single = writeSingleOpKernel(anchorOp, w, w.config);
  if (failed(single) && strategy != KernelStrategy::single_op)
    return w.kernel.emitError("kernel config ")
           << stringifyKernelStrategy(strategy)
           << " cannot compute this convolution (ONNX node '"
           << nodeName(anchorOp) << "')";
  if (failed(single) || w.epilogueFailed)
    return failure();
  w.launches = std::move(*single);
  if (w.prologue.empty())
    return success();
  FailureOr<std::string> lambda = w.prologueLambda(anchorOp->getOperand(0));
  if (failed(lambda))
    return failure();
  for (Launch &launch : w.launches)
    launch.body = *lambda + launch.body;
  return success();
}

} // namespace codegen
} // namespace cgc
