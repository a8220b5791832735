//===- DeclaredTypes.cpp - declared graph types against inferred ones -----===//
//
// An ONNX graph declares the types of its inputs, its outputs and, in
// value_info, of intermediate values; the importer infers every type from
// the ops. A declaration that disagrees with the inference means the model
// is invalid (or the importer is wrong): either way the compiled program is
// not what the model describes, so the mismatch is an error. With
// ImportOptions::allowDeclaredTypeMismatch it is a warning and the inferred
// type is kept. The main graph and every If/Loop body are checked.
//
// A declared dim matches when it is unknown, when the inferred dim is
// dynamic (nothing is known to contradict it), when both are the same
// number, or when it is a symbol that takes one value throughout the graph
// (seeded by --dim bindings).
//
//===----------------------------------------------------------------------===//

#include "ImporterCore.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// The ONNX name of an MLIR element type (FLOAT, INT64, ...).
std::string elementTypeName(Type type) {
  for (int32_t t = 1; t <= onnx::TensorProto::DataType_MAX; ++t)
    if (onnx::TensorProto::DataType_IsValid(t) &&
        convertElementType(type.getContext(), t) == type)
      return onnxTypeName(t);
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return text;
}

/// `FLOAT[N,3]`, `?` for an unknown dim, no brackets without a shape.
std::string declaredText(const onnx::TypeProto::Tensor &tensor) {
  std::string text = tensor.elem_type() == onnx::TensorProto::UNDEFINED
                         ? std::string("?")
                         : onnxTypeName(tensor.elem_type());
  if (!tensor.has_shape())
    return text;
  text += "[";
  for (auto [i, dim] : llvm::enumerate(tensor.shape().dim())) {
    text += i ? "," : "";
    if (dim.has_dim_value())
      text += std::to_string(dim.dim_value());
    else
      text += dim.dim_param().empty() ? "?" : dim.dim_param();
  }
  return text + "]";
}

/// `FLOAT[2,?]`: the inferred type in the declaration's notation.
std::string inferredText(RankedTensorType type) {
  std::string text = elementTypeName(type.getElementType()) + "[";
  for (auto [i, dim] : llvm::enumerate(type.getShape())) {
    text += i ? "," : "";
    text += ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
  }
  return text + "]";
}

class DeclaredTypeChecker {
public:
  DeclaredTypeChecker(GraphImporter &importer, const onnx::GraphProto &graph)
      : importer_(importer), graph_(graph) {
    for (const auto &entry : importer.options().dimBindings)
      symbols_[entry.getKey()] = entry.getValue();
    for (const onnx::NodeProto &node : graph.node())
      for (const std::string &output : node.output())
        if (!output.empty())
          producers_[output] = &node;
  }

  /// Checks the inputs (bound ones may come from a file of another shape),
  /// then value_info, then the outputs.
  LogicalResult run() {
    bool ok = true;
    for (const onnx::ValueInfoProto &info : graph_.input())
      ok &= succeeded(check(info, "graph input"));
    for (const onnx::ValueInfoProto &info : graph_.value_info())
      ok &= succeeded(check(info, "value_info"));
    for (const onnx::ValueInfoProto &info : graph_.output())
      ok &= succeeded(check(info, "graph output"));
    return success(ok);
  }

private:
  LogicalResult check(const onnx::ValueInfoProto &info, StringRef what) {
    // value_info may name values of subgraphs or of nothing: there is no
    // inferred type to compare with. Non-tensor values are refused
    // elsewhere.
    Value value = importer_.lookup(info.name());
    if (!value || !info.has_type() || !info.type().has_tensor_type())
      return success();
    auto inferred = dyn_cast<RankedTensorType>(value.getType());
    if (!inferred)
      return success();
    std::string reason = mismatch(info.type().tensor_type(), inferred);
    if (reason.empty())
      return success();
    bool relaxed = importer_.options().allowDeclaredTypeMismatch;
    InFlightDiagnostic diag = relaxed ? emitWarning(importer_.fileLoc())
                                      : importer_.error();
    diag << what << " '" << info.name() << "' (" << producer(info.name())
         << ") is declared " << declaredText(info.type().tensor_type())
         << " but its inferred type is " << inferredText(inferred) << ": "
         << reason;
    if (relaxed)
      diag << "; the inferred type is used";
    else
      diag << " (--allow-declared-type-mismatch makes this a warning and "
              "uses the inferred type)";
    return relaxed ? success() : failure();
  }

  /// Why `declared` does not describe `inferred`; empty when it does.
  std::string mismatch(const onnx::TypeProto::Tensor &declared,
                       RankedTensorType inferred) {
    if (declared.elem_type() != onnx::TensorProto::UNDEFINED &&
        convertElementType(importer_.context(), declared.elem_type()) !=
            inferred.getElementType())
      return "the element types differ";
    if (!declared.has_shape())
      return "";
    if (declared.shape().dim_size() != inferred.getRank())
      return "the ranks differ";
    for (auto [i, dim] : llvm::enumerate(declared.shape().dim())) {
      int64_t size = inferred.getDimSize(i);
      if (ShapedType::isDynamic(size))
        continue;
      if (dim.has_dim_value() && dim.dim_value() != size)
        return "dim " + std::to_string(i) + " differs";
      if (!dim.has_dim_param() || dim.dim_param().empty())
        continue;
      auto [it, inserted] = symbols_.try_emplace(dim.dim_param(), size);
      if (!inserted && it->second != size)
        return "dim " + std::to_string(i) + " ('" + dim.dim_param() +
               "') is " + std::to_string(size) + " here but " +
               std::to_string(it->second) + " elsewhere in the graph";
    }
    return "";
  }

  std::string producer(StringRef name) const {
    if (const onnx::NodeProto *node = producers_.lookup(name))
      return node->name().empty()
                 ? "produced by an unnamed " + node->op_type() + " node"
                 : "produced by " + describeNode(*node);
    for (const onnx::TensorProto &init : graph_.initializer())
      if (init.name() == name)
        return "an initializer";
    return importer_.options().boundInputs.count(name.str())
               ? "a graph input bound with --bind"
               : "a graph input";
  }

  GraphImporter &importer_;
  const onnx::GraphProto &graph_;
  llvm::StringMap<const onnx::NodeProto *> producers_;
  /// Symbolic dim -> the size it took first.
  llvm::StringMap<int64_t> symbols_;
};

} // namespace

LogicalResult
cgc::onnx_import::checkDeclaredTypes(GraphImporter &importer,
                                     const onnx::GraphProto &graph) {
  return DeclaredTypeChecker(importer, graph).run();
}
