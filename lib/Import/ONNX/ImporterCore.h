//===- ImporterCore.h - shared state of the ONNX importer -------*- C++ -*-===//
//
// GraphImporter walks one ONNX graph (the main graph or an If/Loop body) and
// maps ONNX value names to MLIR values. Each ONNX op has an importer function
// that reads a NodeContext (inputs, typed attribute access, diagnostics) and
// returns the node's outputs. Importers build ops through NodeContext::create,
// which runs shape inference first, so a malformed model gets a diagnostic
// naming the node rather than a builder assertion, and which folds ops whose
// operands are all small constants (shape subgraphs).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_IMPORT_ONNX_IMPORTERCORE_H
#define CGC_LIB_IMPORT_ONNX_IMPORTERCORE_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Import/ONNXImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <optional>

namespace cgc::onnx_import {

class GraphImporter;
class NodeContext;

/// Result of one ONNX op importer: the values of the node's outputs, in
/// order. Trailing outputs the importer does not produce must be unused.
using ImportFn =
    std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
        NodeContext &)>;

struct OpImporter {
  ImportFn fn;
  /// One line for docs/ops.md: how the op is imported.
  std::string note;
};

/// The table of ONNX op importers, filled by the register*Ops functions.
using ImporterTable = llvm::StringMap<OpImporter>;
void registerElementwiseOps(ImporterTable &table);
void registerNeuralNetOps(ImporterTable &table);
void registerReductionOps(ImporterTable &table);
void registerNormalizationOps(ImporterTable &table);
void registerPositionalOps(ImporterTable &table);
void registerAttentionOps(ImporterTable &table);
void registerQuantizationOps(ImporterTable &table);
void registerRecurrentOps(ImporterTable &table);
void registerSignalOps(ImporterTable &table);
void registerTrainingOps(ImporterTable &table);
/// Whether `node` is ai.onnx.preview.training's Gradient.
bool isGradientNode(const onnx::NodeProto &node);
/// The tensors a Gradient node of `graph` differentiates with respect to
/// (its `xs`): their initializers must not fold into constants at import.
llvm::StringSet<> tensorsDifferentiatedByGradient(const onnx::GraphProto &graph);
void registerSequenceOps(ImporterTable &table);
void registerTensorOps(ImporterTable &table);
void registerGatherScatterOps(ImporterTable &table);
void registerResizeOps(ImporterTable &table);
void registerGeneratorOps(ImporterTable &table);
void registerDataDependentOps(ImporterTable &table);
void registerControlFlowOps(ImporterTable &table);
const ImporterTable &getImporterTable();

/// `add(name, fn, note)` for the register*Ops functions.
inline auto importerAdder(ImporterTable &table) {
  return [&table](const char *name, ImportFn fn, std::string note) {
    table[name] = OpImporter{std::move(fn), std::move(note)};
  };
}

/// How messages name a node: `node 'NAME' (Op)`, or for an unnamed node
/// `node producing 'OUT' (Op)`.
std::string describeNode(const onnx::NodeProto &node);

/// Largest tensor the importer accepts, in bytes: no real tensor comes close,
/// and it keeps element counts and byte sizes far from int64 overflow.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;
/// Most dims a tensor may have. It bounds the ranks made from a shape
/// tensor's length (Reshape, Expand, ConstantOfShape with run-time shapes).
constexpr int64_t kMaxRank = 64;
/// Deepest nesting of subgraphs (If/Loop bodies) the importer accepts; real
/// models nest a few levels, and it bounds the importer's recursion.
constexpr int kMaxSubgraphDepth = 16;

/// True when the nonzero static dims of `shape` times the element size stay
/// within kMaxTensorBytes (dynamic dims count as 1).
bool isWithinSizeLimit(llvm::ArrayRef<int64_t> shape, mlir::Type elementType);

/// Maps an ONNX TensorProto data type to an MLIR element type, or null.
mlir::Type convertElementType(mlir::MLIRContext *ctx, int32_t onnxType);
/// Human name of an ONNX data type for messages.
std::string onnxTypeName(int32_t onnxType);

/// Everything an op importer needs about the node being imported.
class NodeContext {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
              mlir::OpBuilder &builder, mlir::Location loc, int64_t opset);

  const onnx::NodeProto &node() const { return node_; }
  mlir::OpBuilder &builder() { return builder_; }
  mlir::MLIRContext *context() { return builder_.getContext(); }
  mlir::Location loc() const { return loc_; }
  int64_t opset() const { return opset_; }
  GraphImporter &graph() { return graph_; }

  /// Emits an error prefixed with the node name and op type.
  mlir::InFlightDiagnostic error();

  //--- Inputs -------------------------------------------------------------//
  size_t numInputs() const { return node_.input_size(); }
  bool hasInput(size_t i) const;
  /// The i-th input, or null if absent (missing or empty name).
  mlir::Value input(size_t i) const;
  /// The i-th input, or an error naming it if absent.
  mlir::FailureOr<mlir::Value> requiredInput(size_t i);
  /// The i-th input as a sequence, or an error naming it.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> sequenceInput(size_t i);
  /// Makes output `i` the sequence `values` (the importer then returns a
  /// null Value for it).
  void defineSequenceOutput(size_t i, llvm::SmallVector<mlir::Value> values);
  /// Whether input `i` names an empty optional made in the graph.
  bool isEmptyOptionalInput(size_t i) const;
  /// Makes output `i` an empty optional (the importer then returns a null
  /// Value for it).
  void defineEmptyOptionalOutput(size_t i);
  size_t numOutputs() const { return node_.output_size(); }
  bool isOutputUsed(size_t i) const;

  //--- Attributes (a present attribute of the wrong kind is an error) -----//
  bool hasAttr(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t defaultValue);
  double getFloat(llvm::StringRef name, double defaultValue);
  std::string getString(llvm::StringRef name, llvm::StringRef defaultValue);
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name);
  std::optional<llvm::SmallVector<double>> getFloats(llvm::StringRef name);
  std::optional<llvm::SmallVector<std::string>>
  getStrings(llvm::StringRef name);
  const onnx::TensorProto *getTensor(llvm::StringRef name);
  const onnx::GraphProto *getGraph(llvm::StringRef name);
  /// True once an attribute accessor reported an error.
  bool hadAttributeError() const { return attributeError_; }

  //--- Constants ----------------------------------------------------------//
  /// Values of a fully known integer tensor (constant or folded shape).
  std::optional<llvm::SmallVector<int64_t>> constInts(mlir::Value v);
  /// Values of a constant floating tensor.
  std::optional<llvm::SmallVector<double>> constFloats(mlir::Value v);
  /// Ints from an input when present (newer opsets) or else an attribute;
  /// an error if the input is present but not constant.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  intsFromInputOrAttr(size_t inputIndex, llvm::StringRef attrName);

  mlir::Value constI64(llvm::ArrayRef<int64_t> values,
                       llvm::ArrayRef<int64_t> shape);
  /// A rank-0 constant; integer types get the value saturated to int64
  /// (then truncated to their width).
  mlir::Value constScalar(double value, mlir::Type elementType);
  /// A rank-0 integer constant, exact (truncated to the type's width).
  mlir::Value constInt(int64_t value, mlir::Type elementType);
  mlir::Value constant(mlir::DenseElementsAttr value);

  //--- Building ops -------------------------------------------------------//
  /// Creates an op with inferred result types (InferTypeOpAdaptor ops) or the
  /// given ones, verifies it and folds it when all operands are constants.
  /// Failures become diagnostics naming this node.
  template <typename OpTy>
  mlir::FailureOr<mlir::Operation *>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
         mlir::TypeRange resultTypes = {}) {
    return createOp(OpTy::getOperationName(), operands, attrs, resultTypes,
                    inferFn<OpTy>());
  }
  /// Like create() for single-result ops; returns the result value.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create1(mlir::ValueRange operands,
          llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
          mlir::TypeRange resultTypes = {}) {
    mlir::FailureOr<mlir::Operation *> op =
        create<OpTy>(operands, attrs, resultTypes);
    if (mlir::failed(op))
      return mlir::failure();
    return (*op)->getResult(0);
  }

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return builder_.getNamedAttr(name, value);
  }
  mlir::NamedAttribute namedI64(llvm::StringRef name, int64_t value) {
    return named(name, builder_.getI64IntegerAttr(value));
  }
  mlir::NamedAttribute namedF64(llvm::StringRef name, double value) {
    return named(name, builder_.getF64FloatAttr(value));
  }
  mlir::NamedAttribute namedBool(llvm::StringRef name, bool value) {
    return named(name, builder_.getBoolAttr(value));
  }
  mlir::NamedAttribute namedI64Array(llvm::StringRef name,
                                     llvm::ArrayRef<int64_t> values) {
    return named(name, builder_.getDenseI64ArrayAttr(values));
  }
  mlir::NamedAttribute namedStr(llvm::StringRef name, llvm::StringRef value) {
    return named(name, builder_.getStringAttr(value));
  }

  using InferFn = std::function<llvm::LogicalResult(
      mlir::MLIRContext *, std::optional<mlir::Location>, mlir::ValueRange,
      mlir::DictionaryAttr, llvm::SmallVectorImpl<mlir::Type> &)>;

private:
  template <typename OpTy> static InferFn inferFn() {
    if constexpr (OpTy::template hasTrait<
                      mlir::InferTypeOpInterface::Trait>()) {
      return [](mlir::MLIRContext *ctx, std::optional<mlir::Location> loc,
                mlir::ValueRange operands, mlir::DictionaryAttr attrs,
                llvm::SmallVectorImpl<mlir::Type> &types) {
        return OpTy::inferReturnTypes(ctx, loc, operands, attrs, nullptr, {},
                                      types);
      };
    } else {
      return nullptr;
    }
  }
  mlir::FailureOr<mlir::Operation *>
  createOp(llvm::StringRef name, mlir::ValueRange operands,
           llvm::ArrayRef<mlir::NamedAttribute> attrs,
           mlir::TypeRange resultTypes, const InferFn &infer);
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  bool checkAttrType(const onnx::AttributeProto *attr, int expected);

  GraphImporter &graph_;
  const onnx::NodeProto &node_;
  mlir::OpBuilder &builder_;
  mlir::Location loc_;
  int64_t opset_;
  bool attributeError_ = false;
};

/// Imports one ONNX graph body into the current insertion point.
class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext *ctx, const ImportOptions &options,
                llvm::StringRef modelPath, llvm::StringRef modelDir,
                int64_t opset, GraphImporter *parent = nullptr);

  /// Imports the nodes of `graph` in order. ONNX requires them in
  /// topological order (the ONNX checker refuses others): a cycle, or an
  /// input produced by a later node, is an error naming the node.
  /// Reports every unsupported op of the model (subgraphs included) in one
  /// error, so a user sees the whole list at once; a lone unsupported node
  /// is left to importNode, whose message names it.
  mlir::LogicalResult checkSupportedOps(const onnx::GraphProto &graph);
  mlir::LogicalResult importNodes(const onnx::GraphProto &graph,
                                  mlir::OpBuilder &builder);
  /// Imports the initializers of `graph` as constants.
  mlir::LogicalResult importInitializers(const onnx::GraphProto &graph,
                                         mlir::OpBuilder &builder);
  /// Converts a TensorProto (initializer, Constant attribute) to an elements
  /// attribute; large tensors become dense_resource blobs.
  mlir::FailureOr<mlir::ElementsAttr>
  convertTensor(const onnx::TensorProto &tensor, llvm::StringRef what);
  /// The MLIR type of a graph input/output ValueInfo, binding symbolic dims.
  /// `dimNames` receives the symbolic name of each dim ("" when static).
  mlir::FailureOr<mlir::RankedTensorType>
  convertValueInfo(const onnx::ValueInfoProto &info,
                   llvm::SmallVectorImpl<std::string> &dimNames);

  void define(llvm::StringRef name, mlir::Value value) {
    values_[name] = value;
  }
  /// Reads a `--bind NAME=FILE` value as a constant.
  mlir::FailureOr<mlir::ElementsAttr> loadBoundInput(llvm::StringRef name,
                                                     llvm::StringRef path);
  /// True if `name` is an input of the main graph (a function argument).
  bool isGraphInput(llvm::StringRef name) const;
  /// The main graph's inputs that `values` are computed from (through any
  /// chain of ops), sorted by name.
  llvm::SmallVector<std::string>
  graphInputsFeeding(llvm::ArrayRef<mlir::Value> values) const;
  /// The main graph's inputs whose values decide the dynamic dims of
  /// `values`: dynamic shapes are followed to the op that made them, whose
  /// integer operands (a target shape, a count) are then followed whole. A
  /// dynamic graph input is not named (its shape is --shape's, not
  /// --bind's).
  llvm::SmallVector<std::string>
  graphInputsShaping(llvm::ArrayRef<mlir::Value> values) const;
  /// Looks a name up here and in enclosing graphs; null if undefined.
  mlir::Value lookup(llvm::StringRef name) const;
  /// A sequence value (its tensors, known at import), or nullptr.
  const llvm::SmallVector<mlir::Value> *
  lookupSequence(llvm::StringRef name) const;
  void defineSequence(llvm::StringRef name,
                      llvm::SmallVector<mlir::Value> values) {
    sequences_[name] = std::move(values);
  }
  /// An empty optional made in the graph (Optional without an input); a
  /// full one is simply its tensor or sequence.
  bool isEmptyOptional(llvm::StringRef name) const;
  void defineEmptyOptional(llvm::StringRef name) {
    emptyOptionals_.insert(name);
  }

  /// Known entries of a 1-D i64 tensor whose values are partly known
  /// (kDynamic where not), e.g. Shape of a tensor with a symbolic dim.
  std::optional<llvm::SmallVector<int64_t>> partialInts(mlir::Value v) const;
  void setPartialInts(mlir::Value v, llvm::ArrayRef<int64_t> ints) {
    partial_[v] = llvm::SmallVector<int64_t>(ints);
  }

  mlir::MLIRContext *context() { return ctx_; }
  const ImportOptions &options() const { return options_; }
  /// 0 for the main graph, 1 for its subgraphs, and so on.
  int depth() const { return parent_ ? parent_->depth() + 1 : 0; }
  llvm::StringRef modelPath() const { return modelPath_; }
  llvm::StringRef modelDir() const { return modelDir_; }
  int64_t opset() const { return opset_; }
  mlir::Location fileLoc();
  /// Emits an error about the model file.
  mlir::InFlightDiagnostic error();

private:
  mlir::LogicalResult importNode(const onnx::NodeProto &node,
                                 mlir::OpBuilder &builder);
  /// Checks that the file lists the nodes of `graph` in topological order
  /// (an error names the offending node) and fills `order` with them in
  /// Kahn's order, the order they are imported in.
  mlir::LogicalResult
  checkNodeOrder(const onnx::GraphProto &graph,
                 llvm::SmallVectorImpl<const onnx::NodeProto *> &order);
  mlir::LogicalResult readExternalData(const onnx::TensorProto &tensor,
                                       llvm::StringRef what,
                                       std::string &bytes);

  mlir::MLIRContext *ctx_;
  const ImportOptions &options_;
  std::string modelPath_, modelDir_;
  int64_t opset_;
  GraphImporter *parent_;
  llvm::StringMap<mlir::Value> values_;
  /// Sequences built inside the graph (SequenceConstruct, SplitToSequence,
  /// ...): a list of tensors fixed at import.
  llvm::StringMap<llvm::SmallVector<mlir::Value>> sequences_;
  llvm::StringSet<> emptyOptionals_;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<int64_t>> partial_;
};

/// Compares the declared types of `graph`'s inputs, value_info and outputs
/// with the imported values' types (after its nodes are imported). A
/// mismatch is an error naming the value and its producer, or a warning
/// under ImportOptions::allowDeclaredTypeMismatch.
mlir::LogicalResult checkDeclaredTypes(GraphImporter &importer,
                                       const onnx::GraphProto &graph);

/// Declares `func`'s f32 inputs and outputs as `half` (f16 or bf16), with
/// casts to and from f32 at the boundary (`--io-precision`; IoPrecision.cpp).
void applyIoPrecision(mlir::func::FuncOp func, mlir::Type half);

/// IR 11 multi-device annotations (Sharding.cpp): the device configuration
/// `wanted` (or the model's only one), and its nodes' shardings of weights
/// as cgc.shard_axis on their constants and cgc.devices on `module`. Errors name the node whose annotation cgc cannot take.
mlir::LogicalResult importShardingAnnotations(GraphImporter &importer,
                                              const onnx::ModelProto &model,
                                              mlir::ModuleOp module,
                                              llvm::StringRef wanted);

/// Fails with an error naming `node` when it carries an attribute that the
/// ONNX spec removed at or before `opset` (most became inputs: Reduce*'s
/// axes, Split's split, Pad's pads, ...).
mlir::LogicalResult checkRemovedAttributes(const onnx::NodeProto &node,
                                           int64_t opset,
                                           GraphImporter &importer);

/// Propagates partially known shape vectors through `op` (Shape, Concat,
/// Gather, Slice, Unsqueeze, Squeeze, Cast, Reshape on 1-D i64 values).
void propagatePartialInts(GraphImporter &graph, mlir::Operation *op);

/// Normalizes an ONNX axis against `rank`; emits an error if out of range.
mlir::FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis,
                                       int64_t rank);

/// Returns the ranked tensor type of v.
inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// True when v has exactly one element; false for dynamic shapes, whose
/// element count is not defined.
inline bool hasOneElement(mlir::Value v) {
  mlir::RankedTensorType type = tensorType(v);
  return type.hasStaticShape() && type.getNumElements() == 1;
}

} // namespace cgc::onnx_import

#endif // CGC_LIB_IMPORT_ONNX_IMPORTERCORE_H
