//===- NodeContext.cpp - what an op importer sees of its node -------------===//

#include "ImporterCore.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {
/// Whether `op` computes a float value from an initializer marked to train:
/// folding would merge the weight into a constant no one can train. (Shape
/// and other integer results of a weight still fold.)
bool readsInitializerToTrain(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return false;
  return llvm::any_of(op->getOperands(), [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && isInitializer(def);
  });
}

const char *attributeKindName(int kind) {
  switch (kind) {
  case onnx::AttributeProto::FLOAT: return "FLOAT";
  case onnx::AttributeProto::INT: return "INT";
  case onnx::AttributeProto::STRING: return "STRING";
  case onnx::AttributeProto::TENSOR: return "TENSOR";
  case onnx::AttributeProto::GRAPH: return "GRAPH";
  case onnx::AttributeProto::FLOATS: return "FLOATS";
  case onnx::AttributeProto::INTS: return "INTS";
  case onnx::AttributeProto::STRINGS: return "STRINGS";
  case onnx::AttributeProto::TENSORS: return "TENSORS";
  case onnx::AttributeProto::GRAPHS: return "GRAPHS";
  case onnx::AttributeProto::SPARSE_TENSOR: return "SPARSE_TENSOR";
  case onnx::AttributeProto::TYPE_PROTO: return "TYPE_PROTO";
  default: return "UNDEFINED";
  }
}

DenseElementsAttr inlineConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return nullptr;
  return dyn_cast<DenseElementsAttr>(constant.getValue());
}
} // namespace

std::string cgc::onnx_import::describeNode(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return "node '" + node.name() + "' (" + node.op_type() + ")";
  for (const std::string &output : node.output())
    if (!output.empty())
      return "node producing '" + output + "' (" + node.op_type() + ")";
  return "unnamed node (" + node.op_type() + ")";
}

NodeContext::NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
                         OpBuilder &builder, Location loc, int64_t opset)
    : graph_(graph), node_(node), builder_(builder), loc_(loc),
      opset_(opset) {}

InFlightDiagnostic NodeContext::error() {
  InFlightDiagnostic diag = mlir::emitError(graph_.fileLoc());
  diag << describeNode(node_) << ": ";
  return diag;
}

bool NodeContext::hasInput(size_t i) const {
  return i < (size_t)node_.input_size() && !node_.input(i).empty();
}

Value NodeContext::input(size_t i) const {
  if (!hasInput(i))
    return nullptr;
  return graph_.lookup(node_.input(i));
}

FailureOr<SmallVector<Value>> NodeContext::sequenceInput(size_t i) {
  if (i < numInputs() && !node_.input(i).empty())
    if (const SmallVector<Value> *seq = graph_.lookupSequence(node_.input(i)))
      return *seq;
  error() << "input #" << i << " must be a sequence built in the graph";
  return failure();
}

void NodeContext::defineSequenceOutput(size_t i, SmallVector<Value> values) {
  graph_.defineSequence(node_.output(i), std::move(values));
}

bool NodeContext::isEmptyOptionalInput(size_t i) const {
  return i < numInputs() && !node_.input(i).empty() &&
         graph_.isEmptyOptional(node_.input(i));
}

void NodeContext::defineEmptyOptionalOutput(size_t i) {
  graph_.defineEmptyOptional(node_.output(i));
}

FailureOr<Value> NodeContext::requiredInput(size_t i) {
  if (Value v = input(i))
    return v;
  error() << "input #" << i << " is required";
  return failure();
}

bool NodeContext::isOutputUsed(size_t i) const {
  return i < (size_t)node_.output_size() && !node_.output(i).empty();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *NodeContext::findAttr(StringRef name) const {
  for (const onnx::AttributeProto &attr : node_.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

bool NodeContext::hasAttr(StringRef name) const {
  return findAttr(name) != nullptr;
}

bool NodeContext::checkAttrType(const onnx::AttributeProto *attr,
                                int expected) {
  // Old exporters leave `type` unset; trust the populated field then.
  if (attr->type() == expected ||
      attr->type() == onnx::AttributeProto::UNDEFINED)
    return true;
  error() << "attribute '" << attr->name() << "' must be "
          << attributeKindName(expected) << ", got "
          << attributeKindName(attr->type());
  attributeError_ = true;
  return false;
}

int64_t NodeContext::getInt(StringRef name, int64_t defaultValue) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::INT))
    return defaultValue;
  return attr->i();
}

double NodeContext::getFloat(StringRef name, double defaultValue) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::FLOAT))
    return defaultValue;
  return attr->f();
}

std::string NodeContext::getString(StringRef name, StringRef defaultValue) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::STRING))
    return defaultValue.str();
  return attr->s();
}

std::optional<SmallVector<int64_t>> NodeContext::getInts(StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::INTS))
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::optional<SmallVector<double>> NodeContext::getFloats(StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::FLOATS))
    return std::nullopt;
  return SmallVector<double>(attr->floats().begin(), attr->floats().end());
}

std::optional<SmallVector<std::string>>
NodeContext::getStrings(StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::STRINGS))
    return std::nullopt;
  return SmallVector<std::string>(attr->strings().begin(),
                                  attr->strings().end());
}

const onnx::TensorProto *NodeContext::getTensor(StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::TENSOR))
    return nullptr;
  return &attr->t();
}

const onnx::GraphProto *NodeContext::getGraph(StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(attr, onnx::AttributeProto::GRAPH))
    return nullptr;
  return &attr->g();
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>> NodeContext::constInts(Value v) {
  if (!v)
    return std::nullopt;
  if (DenseElementsAttr dense = inlineConstant(v)) {
    if (!isa<IntegerType>(dense.getElementType()))
      return std::nullopt;
    SmallVector<int64_t> ints;
    for (const APInt &value : dense.getValues<APInt>())
      ints.push_back(dense.getElementType().isUnsignedInteger()
                         ? (int64_t)value.getZExtValue()
                         : value.getSExtValue());
    return ints;
  }
  std::optional<SmallVector<int64_t>> partial = graph_.partialInts(v);
  if (partial && llvm::none_of(*partial, ShapedType::isDynamic))
    return partial;
  return std::nullopt;
}

std::optional<SmallVector<double>> NodeContext::constFloats(Value v) {
  if (!v)
    return std::nullopt;
  DenseElementsAttr dense = inlineConstant(v);
  if (!dense) {
    // Small float initializers may be resources; read their blob.
    auto constant = v.getDefiningOp<ConstantOp>();
    auto resource = constant ? dyn_cast<DenseResourceElementsAttr>(
                                   constant.getValue())
                             : nullptr;
    if (!resource || !resource.getRawHandle().getBlob())
      return std::nullopt;
    ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
    Type elementType = resource.getElementType();
    SmallVector<double> values;
    if (elementType.isF32()) {
      for (size_t i = 0; i + 4 <= data.size(); i += 4) {
        float f;
        memcpy(&f, data.data() + i, 4);
        values.push_back(f);
      }
      return values;
    }
    if (elementType.isF64()) {
      for (size_t i = 0; i + 8 <= data.size(); i += 8) {
        double d;
        memcpy(&d, data.data() + i, 8);
        values.push_back(d);
      }
      return values;
    }
    return std::nullopt;
  }
  SmallVector<double> values;
  if (isa<FloatType>(dense.getElementType())) {
    for (const APFloat &value : dense.getValues<APFloat>())
      values.push_back(value.convertToDouble());
    return values;
  }
  if (std::optional<SmallVector<int64_t>> ints = constInts(v)) {
    for (int64_t i : *ints)
      values.push_back((double)i);
    return values;
  }
  return std::nullopt;
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeContext::intsFromInputOrAttr(size_t inputIndex, StringRef attrName) {
  if (hasInput(inputIndex)) {
    std::optional<SmallVector<int64_t>> ints = constInts(input(inputIndex));
    if (!ints) {
      error() << "input #" << inputIndex << " ('" << node_.input(inputIndex)
              << "') must be a constant (or computable from static shapes)";
      return failure();
    }
    return ints;
  }
  return getInts(attrName);
}

Value NodeContext::constant(DenseElementsAttr value) {
  return ConstantOp::create(builder_, loc_, value).getResult();
}

Value NodeContext::constI64(ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, builder_.getI64Type());
  return constant(DenseIntElementsAttr::get(type, values));
}

Value NodeContext::constScalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat converted(value);
    bool lost;
    converted.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &lost);
    return constant(DenseElementsAttr::get(type, converted));
  }
  // Saturate: converting an out-of-range double to int64 is undefined.
  int64_t integer = 0;
  if (value >= 0x1p63)
    integer = INT64_MAX;
  else if (value <= -0x1p63)
    integer = INT64_MIN;
  else if (!std::isnan(value))
    integer = (int64_t)value;
  return constInt(integer, elementType);
}

Value NodeContext::constInt(int64_t value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  auto intType = cast<IntegerType>(elementType);
  APInt bits(intType.getWidth(), (uint64_t)value,
             /*isSigned=*/!intType.isUnsigned(), /*implicitTrunc=*/true);
  return constant(DenseElementsAttr::get(type, bits));
}

//===----------------------------------------------------------------------===//
// Building ops
//===----------------------------------------------------------------------===//

FailureOr<Operation *> NodeContext::createOp(StringRef name,
                                             ValueRange operands,
                                             ArrayRef<NamedAttribute> attrs,
                                             TypeRange resultTypes,
                                             const InferFn &infer) {
  // Inference and verification report through diagnostics at the op's
  // location; collect them and re-emit once with the node's name.
  std::string messages;
  Operation *op = nullptr;
  {
    ScopedDiagnosticHandler capture(context(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error) {
        if (!messages.empty())
          messages += "; ";
        messages += diag.str();
      }
      return success();
    });
    SmallVector<Type> types(resultTypes);
    DictionaryAttr dict = DictionaryAttr::get(context(), attrs);
    auto oversized = [](Type type) {
      auto shaped = dyn_cast<ShapedType>(type);
      return shaped && shaped.hasRank() &&
             !isWithinSizeLimit(shaped.getShape(), shaped.getElementType());
    };
    if (infer && types.empty() &&
        failed(infer(context(), loc_, operands, dict, types))) {
      if (messages.empty())
        messages = "cannot infer the result type";
    } else if (auto it = llvm::find_if(types, oversized); it != types.end()) {
      // Every type in the program stays below the limit, so size arithmetic
      // in later ops cannot overflow.
      llvm::raw_string_ostream os(messages);
      os << "the result type " << *it << " holds more than "
         << kMaxTensorBytes << " bytes";
    } else {
      OperationState state(loc_, name);
      state.addOperands(operands);
      state.addAttributes(attrs);
      state.addTypes(types);
      op = builder_.create(state);
      if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
        op->erase();
        op = nullptr;
        if (messages.empty())
          messages = "the imported op does not verify";
      }
    }
  }
  if (!op) {
    error() << messages;
    return failure();
  }

  // Constant operands fold through the ops' fold hooks, which evaluate them
  // with the interpreter's kernels (CgcFolds.cpp); not a weight to train,
  // which must stay a tensor of its own (ImportOptions::keepInitializers).
  if (op->getNumResults() == 1 && !readsInitializerToTrain(op)) {
    SmallVector<OpFoldResult> foldResults;
    if (succeeded(op->fold(foldResults)) && foldResults.size() == 1) {
      if (auto attr = dyn_cast<Attribute>(foldResults[0])) {
        if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
          Value replacement = constant(dense);
          op->getResult(0).replaceAllUsesWith(replacement);
          op->erase();
          return replacement.getDefiningOp();
        }
      }
    }
  }
  propagatePartialInts(graph_, op);
  return op;
}

FailureOr<int64_t> cgc::onnx_import::normalizeAxis(NodeContext &ctx,
                                                   int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    ctx.error() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}
