//===- ONNXImporter.cpp - ONNX ModelProto to the cgc dialect --------------===//

#include "ImporterCore.h"
#include "ProtoLoader.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {
constexpr int64_t kMinOpset = 7;
/// The one domain besides the default whose ops cgc imports (version 1:
/// Adagrad, Momentum, Adam).
constexpr const char *kTrainingDomain = "ai.onnx.preview.training";

/// ONNX 1.23's newest default-domain opset. The versions of ops cgc imports
/// that are newer than opset 21 add types (bf16 from 22; float4, float8e8m0,
/// int2 from 23-28; float6, refused by type) or semantics the importers
/// follow by ctx.opset(): Mod fmod=0 on floats (28), SpaceToDepth `mode`
/// (28), Range `stash_type` (27), Cast `round_mode` (24, float8e8m0 only).
constexpr int64_t kMaxOpset = 28;
/// IR versions 3 (ONNX 1.0, opset_import) to 14 (ONNX 1.23, opset 28).
/// Versions 11-14 add element types (float6 refused where used) and
/// multi-device configuration fields (placement hints; the graph's meaning
/// is the same without them). A newer file may use what this importer does not know.
constexpr int64_t kMinIRVersion = 3;
constexpr int64_t kMaxIRVersion = 14;
} // namespace

bool cgc::onnx_import::isWithinSizeLimit(ArrayRef<int64_t> shape,
                                         Type elementType) {
  int64_t bytes = 8;
  if (elementType.isIntOrFloat())
    bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  for (int64_t dim : shape) {
    if (dim <= 0) // kDynamic is negative; 0 does not make a size overflow
      continue;
    if (bytes > kMaxTensorBytes / dim)
      return false;
    bytes *= dim;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type cgc::onnx_import::convertElementType(MLIRContext *ctx, int32_t onnxType) {
  return interp::elementTypeOfOnnx(ctx, onnxType);
}

std::string cgc::onnx_import::onnxTypeName(int32_t onnxType) {
  // The data types newer than the installed onnx.proto knows.
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",        "INT4",           "FLOAT4E2M1", "FLOAT8E8M0",
      "UINT2",        "INT2",           "FLOAT6E2M3", "FLOAT6E3M2"};
  if (onnxType >= 17 && onnxType < 17 + (int32_t)std::size(newer) &&
      !onnx::TensorProto::DataType_IsValid(onnxType))
    return newer[onnxType - 17];
  if (onnx::TensorProto::DataType_IsValid(onnxType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(onnxType));
  return "type #" + std::to_string(onnxType);
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(MLIRContext *ctx, const ImportOptions &options,
                             StringRef modelPath, StringRef modelDir,
                             int64_t opset, GraphImporter *parent)
    : ctx_(ctx), options_(options), modelPath_(modelPath.str()),
      modelDir_(modelDir.str()), opset_(opset), parent_(parent) {}

Location GraphImporter::fileLoc() {
  return FileLineColLoc::get(ctx_, modelPath_, 0, 0);
}

InFlightDiagnostic GraphImporter::error() { return mlir::emitError(fileLoc()); }

bool GraphImporter::isGraphInput(StringRef name) const {
  auto arg = dyn_cast_if_present<BlockArgument>(lookup(name));
  return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp());
}

SmallVector<std::string>
GraphImporter::graphInputsFeeding(ArrayRef<Value> values) const {
  llvm::DenseMap<Value, StringRef> inputNames;
  for (const GraphImporter *g = this; g; g = g->parent_)
    for (const auto &entry : g->values_)
      if (isGraphInput(entry.getKey()))
        inputNames.try_emplace(entry.getValue(), entry.getKey());
  std::set<std::string> found;
  llvm::DenseSet<Value> seen;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!v || !seen.insert(v).second)
      continue;
    if (auto it = inputNames.find(v); it != inputNames.end()) {
      found.insert(it->second.str());
      continue;
    }
    if (Operation *def = v.getDefiningOp())
      llvm::append_range(work, def->getOperands());
  }
  return SmallVector<std::string>(found.begin(), found.end());
}

SmallVector<std::string>
GraphImporter::graphInputsShaping(ArrayRef<Value> values) const {
  auto isDynamic = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && !type.hasStaticShape();
  };
  SmallVector<Value> made; // values whose operands' values shape them
  llvm::DenseSet<Value> seen;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!v || !isDynamic(v) || !seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    SmallVector<Value> dynamicOperands;
    for (Value operand : def->getOperands())
      if (isDynamic(operand))
        dynamicOperands.push_back(operand);
    // An op with only static operands made the dynamic dim from the values
    // of its integer ones (a target shape, a count: not the data it
    // expands); otherwise the dim came in through its dynamic operands.
    if (dynamicOperands.empty()) {
      for (Value operand : def->getOperands())
        if (isa<IntegerType>(getElementTypeOrSelf(operand.getType())))
          made.push_back(operand);
    } else {
      llvm::append_range(work, dynamicOperands);
    }
  }
  SmallVector<std::string> inputs = graphInputsFeeding(made);
  llvm::erase_if(inputs, [&](const std::string &name) {
    return isDynamic(lookup(name));
  });
  return inputs;
}

Value GraphImporter::lookup(StringRef name) const {
  for (const GraphImporter *g = this; g; g = g->parent_) {
    auto it = g->values_.find(name);
    if (it != g->values_.end())
      return it->second;
  }
  return nullptr;
}

const SmallVector<Value> *
GraphImporter::lookupSequence(StringRef name) const {
  for (const GraphImporter *g = this; g; g = g->parent_) {
    auto it = g->sequences_.find(name);
    if (it != g->sequences_.end())
      return &it->second;
  }
  return nullptr;
}

bool GraphImporter::isEmptyOptional(StringRef name) const {
  for (const GraphImporter *g = this; g; g = g->parent_) {
    if (g->values_.count(name) || g->sequences_.count(name))
      return false; // a nearer definition shadows it
    if (g->emptyOptionals_.contains(name))
      return true;
  }
  return false;
}

std::optional<SmallVector<int64_t>>
GraphImporter::partialInts(Value v) const {
  for (const GraphImporter *g = this; g; g = g->parent_) {
    auto it = g->partial_.find(v);
    if (it != g->partial_.end())
      return it->second;
  }
  return std::nullopt;
}

FailureOr<RankedTensorType>
GraphImporter::convertValueInfo(const onnx::ValueInfoProto &info,
                                SmallVectorImpl<std::string> &dimNames) {
  if (!info.has_type()) {
    error() << "graph value '" << info.name()
            << "' has no type (an input whose initializer is missing?)";
    return failure();
  }
  if (!info.type().has_tensor_type()) {
    error() << "graph value '" << info.name()
            << "' is not a tensor (sequences, maps and optionals are not "
               "supported)";
    return failure();
  }
  const onnx::TypeProto::Tensor &tensor = info.type().tensor_type();
  Type elementType = convertElementType(ctx_, tensor.elem_type());
  if (!elementType) {
    error() << "graph value '" << info.name() << "' has unsupported element "
            << "type " << onnxTypeName(tensor.elem_type());
    return failure();
  }
  if (!tensor.has_shape()) {
    auto it = options_.inputShapes.find(info.name());
    if (it == options_.inputShapes.end()) {
      error() << "graph value '" << info.name()
              << "' has no shape; give one with --shape " << info.name()
              << "=DIMS";
      return failure();
    }
    dimNames.assign(it->second.size(), "");
    return RankedTensorType::get(it->second, elementType);
  }
  SmallVector<int64_t> shape;
  for (const onnx::TensorShapeProto::Dimension &dim : tensor.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        error() << "graph value '" << info.name() << "' has negative dim "
                << dim.dim_value();
        return failure();
      }
      shape.push_back(dim.dim_value());
      dimNames.push_back("");
      continue;
    }
    auto bound = options_.dimBindings.find(dim.dim_param());
    if (!dim.dim_param().empty() && bound != options_.dimBindings.end())
      shape.push_back(bound->second);
    else
      shape.push_back(ShapedType::kDynamic);
    dimNames.push_back(dim.dim_param().empty() ? "?" : dim.dim_param());
  }
  auto explicitShape = options_.inputShapes.find(info.name());
  if (explicitShape != options_.inputShapes.end()) {
    if (explicitShape->second.size() != shape.size()) {
      error() << "--shape " << info.name() << " has "
              << explicitShape->second.size() << " dims but the model says "
              << shape.size();
      return failure();
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!ShapedType::isDynamic(shape[i]) &&
          shape[i] != explicitShape->second[i]) {
        // A dim fixed by --dim is the user's conflict, not the model's.
        InFlightDiagnostic diag = error();
        diag << "--shape " << info.name() << " sets dim " << i << " to "
             << explicitShape->second[i];
        if (dimNames[i].empty())
          diag << " but the model fixes it to " << shape[i];
        else
          diag << " but --dim " << dimNames[i] << "=" << shape[i]
               << " binds it";
        return failure();
      }
    }
    shape.assign(explicitShape->second.begin(), explicitShape->second.end());
  }
  if (!isWithinSizeLimit(shape, elementType)) {
    error() << "graph value '" << info.name()
            << "': the product of the dims overflows (more than "
            << kMaxTensorBytes << " bytes)";
    return failure();
  }
  return RankedTensorType::get(shape, elementType);
}

//===----------------------------------------------------------------------===//
// Tensors and external data
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::readExternalData(const onnx::TensorProto &tensor,
                                              StringRef what,
                                              std::string &bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t value;
      if (!llvm::to_integer(entry.value(), value, 10) || value < 0) {
        error() << what << ": external data " << entry.key() << " '"
                << entry.value() << "' is not a non-negative integer";
        return failure();
      }
      (entry.key() == "offset" ? offset : length) = value;
    }
  }
  if (location.empty()) {
    error() << what << ": external data has no location";
    return failure();
  }
  // The data file must be inside the model's folder: reject absolute paths
  // and `..` outright, then compare real paths so symlinks cannot escape.
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](StringRef part) { return part == ".."; })) {
    error() << what << ": external data path '" << location
            << "' escapes the model folder";
    return failure();
  }
  SmallString<256> joined(modelDir_);
  llvm::sys::path::append(joined, location);
  SmallString<256> realData, realDir;
  if (llvm::sys::fs::real_path(joined, realData) ||
      llvm::sys::fs::real_path(modelDir_, realDir)) {
    error() << what << ": cannot open external data file '" << location
            << "'";
    return failure();
  }
  if (!StringRef(realData).starts_with((realDir + "/").str())) {
    error() << what << ": external data path '" << location
            << "' resolves outside the model folder (" << realData << ")";
    return failure();
  }
  // A FIFO or a device inside the folder would block or never end.
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(realData, status) ||
      status.type() != llvm::sys::fs::file_type::regular_file) {
    error() << what << ": external data '" << location
            << "' is not a regular file";
    return failure();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(realData, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file) {
    error() << what << ": cannot read external data file '" << location
            << "': " << file.getError().message();
    return failure();
  }
  int64_t size = (*file)->getBufferSize();
  if (length < 0)
    length = size - std::min(offset, size);
  if (offset > size || length > size - offset) {
    // Both are non-negative int64, so their sum fits in uint64.
    error() << what << ": external data range [" << offset << ", "
            << (uint64_t)offset + (uint64_t)length << ") is past the end of '"
            << location << "' (" << size << " bytes)";
    return failure();
  }
  bytes.assign((*file)->getBufferStart() + offset, length);
  return success();
}

namespace {
/// Appends the typed repeated fields of a TensorProto as raw little-endian
/// bytes of the element type.
void appendTypedFields(const onnx::TensorProto &tensor, Type elementType,
                       std::string &bytes) {
  auto append = [&](const void *p, size_t n) {
    bytes.append(static_cast<const char *>(p), n);
  };
  unsigned width = elementType.getIntOrFloatBitWidth();
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float f : tensor.float_data())
      append(&f, 4);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double d : tensor.double_data())
      append(&d, 8);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t i : tensor.int64_data())
      append(&i, 8);
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    for (uint64_t u : tensor.uint64_data())
      append(&u, width / 8);
    break;
  default:
    // int32_data carries every narrower type (and fp16/bf16/float8 bit
    // patterns; one packed byte each for the 4- and 2-bit types).
    for (int32_t i : tensor.int32_data()) {
      if (width < 8) {
        char b = width == 1 ? i != 0 : (char)i;
        append(&b, 1);
      } else {
        append(&i, width / 8);
      }
    }
    break;
  }
}
} // namespace

FailureOr<ElementsAttr>
GraphImporter::convertTensor(const onnx::TensorProto &tensor, StringRef what) {
  Type elementType = convertElementType(ctx_, tensor.data_type());
  if (!elementType) {
    error() << what << ": unsupported tensor element type "
            << onnxTypeName(tensor.data_type());
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) {
      error() << what << ": negative dim " << dim;
      return failure();
    }
    shape.push_back(dim);
  }
  // Zero dims are skipped, so [0, 2^62, 2^62] is refused too: code that
  // multiplies the trailing dims (strides) would overflow.
  if (!isWithinSizeLimit(shape, elementType)) {
    error() << what << ": the product of the dims overflows (more than "
            << kMaxTensorBytes << " bytes)";
    return failure();
  }
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  unsigned width = elementType.getIntOrFloatBitWidth();
  int64_t byteWidth = width < 8 ? 1 : width / 8;

  std::string bytes;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    if (failed(readExternalData(tensor, what, bytes)))
      return failure();
  } else if (tensor.has_raw_data()) {
    bytes = tensor.raw_data();
  } else {
    appendTypedFields(tensor, elementType, bytes);
  }
  if (width > 1 && width < 8) {
    // ONNX packs 4- and 2-bit elements; constants hold one byte each.
    std::string unpacked;
    if (!interp::unpackSubByte(bytes, width, elementType.isSignedInteger() ||
                                                 elementType.isSignlessInteger(),
                               count, unpacked)) {
      error() << what << ": holds " << bytes.size() << " bytes of packed "
              << width << "-bit data but its shape needs "
              << (count * width + 7) / 8;
      return failure();
    }
    bytes = std::move(unpacked);
  }
  if ((int64_t)bytes.size() != count * byteWidth) {
    error() << what << ": holds " << bytes.size() << " bytes of data but its "
            << "shape and type need " << count * byteWidth;
    return failure();
  }

  auto type = RankedTensorType::get(shape, elementType);
  if (width == 1) {
    SmallVector<bool> bits;
    for (char c : bytes)
      bits.push_back(c != 0);
    return cast<ElementsAttr>(DenseElementsAttr::get(type, bits));
  }
  if (count <= options_.inlineConstantLimit) {
    bool detectedSplat = false;
    if (DenseElementsAttr::isValidRawBuffer(type, ArrayRef<char>(bytes),
                                            detectedSplat))
      return cast<ElementsAttr>(
          DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(bytes)));
  }
  std::string blobName = tensor.name().empty() ? what.str() : tensor.name();
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(
      ArrayRef<char>(bytes.data(), bytes.size()));
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
}

FailureOr<ElementsAttr>
GraphImporter::loadBoundInput(StringRef name, StringRef path) {
  onnx::TensorProto tensor;
  std::string message;
  if (!loadTensorProto(path.str(), tensor, message)) {
    error() << "--bind " << name << "=" << path << ": " << message;
    return failure();
  }
  tensor.set_name(name.str());
  return convertTensor(tensor, "bound input '" + name.str() + "'");
}

LogicalResult GraphImporter::importInitializers(const onnx::GraphProto &graph,
                                                OpBuilder &builder) {
  llvm::StringSet<> differentiated = tensorsDifferentiatedByGradient(graph);
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (values_.count(init.name())) {
      error() << "initializer '" << init.name()
              << "' is defined more than once";
      return failure();
    }
    FailureOr<ElementsAttr> value =
        convertTensor(init, "initializer '" + init.name() + "'");
    if (failed(value))
      return failure();
    Location loc = NameLoc::get(StringAttr::get(ctx_, init.name()), fileLoc());
    auto constant = ConstantOp::create(builder, loc, *value);
    if ((options_.keepInitializers || differentiated.contains(init.name())) &&
        isa<FloatType>(value->getElementType()))
      setInitializer(constant);
    define(init.name(), constant.getResult());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

namespace {
/// The names `node` reads: its inputs, and the names its subgraphs (If and
/// Loop bodies, nested ones too) use from enclosing graphs. An If whose
/// branch reads another node's output must be imported after that node,
/// though no input says so; nor does a Gradient's `y`, named by an
/// attribute.
void collectReads(const onnx::NodeProto &node, llvm::StringSet<> &reads) {
  for (const std::string &in : node.input())
    if (!in.empty())
      reads.insert(in);
  if (isGradientNode(node))
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == "y" && !attr.s().empty())
        reads.insert(attr.s());
  auto visit = [&](const onnx::GraphProto &graph) {
    llvm::StringSet<> local, inner;
    for (const onnx::ValueInfoProto &info : graph.input())
      local.insert(info.name());
    for (const onnx::TensorProto &init : graph.initializer())
      local.insert(init.name());
    for (const onnx::NodeProto &n : graph.node()) {
      for (const std::string &out : n.output())
        local.insert(out);
      collectReads(n, inner);
    }
    for (const onnx::ValueInfoProto &info : graph.output())
      inner.insert(info.name());
    for (const auto &name : inner)
      if (!local.contains(name.getKey()))
        reads.insert(name.getKey());
  };
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.has_g())
      visit(attr.g());
    for (const onnx::GraphProto &graph : attr.graphs())
      visit(graph);
  }
}
} // namespace

LogicalResult GraphImporter::checkNodeOrder(
    const onnx::GraphProto &graph,
    SmallVectorImpl<const onnx::NodeProto *> &order) {
  // Kahn's algorithm over the producer relation inside this graph finds a
  // cycle, which gets its own message. Names defined outside the graph
  // (inputs, initializers, enclosing graphs) are ready.
  llvm::StringMap<int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const std::string &out : graph.node(i).output())
      if (!out.empty())
        producer[out] = i;
  std::vector<int> pending(graph.node_size(), 0);
  std::vector<std::vector<int>> users(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    llvm::StringSet<> reads;
    collectReads(graph.node(i), reads);
    for (const auto &in : reads) {
      auto it = producer.find(in.getKey());
      // A subgraph may name a value as its node does (a Loop body's output);
      // only an explicit input makes a node its own producer (a self-loop).
      if (it == producer.end() ||
          (it->second == i && !llvm::is_contained(graph.node(i).input(),
                                                   in.getKey().str())))
        continue;
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  std::vector<int> ready;
  for (int i = graph.node_size() - 1; i >= 0; --i)
    if (pending[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    int i = ready.back();
    ready.pop_back();
    order.push_back(&graph.node(i));
    for (int user : users[i])
      if (--pending[user] == 0)
        ready.push_back(user);
  }
  if ((int)order.size() != graph.node_size()) {
    for (int i = 0; i < graph.node_size(); ++i) {
      if (pending[i] > 0) {
        error() << "graph '" << graph.name() << "' has a cycle through "
                << describeNode(graph.node(i));
        return failure();
      }
    }
  }
  // Without a cycle, the file's order must itself be topological, as ONNX
  // requires (and its checker enforces): a consumer before its producer is
  // an invalid model, not one to reorder silently. The nodes are still
  // imported in Kahn's order (depth first from the first node), which the
  // order of the generated kernels follows.
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string &in : graph.node(i).input()) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end() || it->second < i)
        continue;
      error() << describeNode(graph.node(i)) << ": input '" << in
              << "' is produced by a later node, "
              << describeNode(graph.node(it->second))
              << " (ONNX requires the nodes of a graph in topological order)";
      return failure();
    }
  }
  return success();
}

namespace {

bool isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

/// The importer table's key: the op type, qualified by the domain outside
/// the default one.
std::string importerKey(const onnx::NodeProto &node) {
  return isDefaultDomain(node) ? node.op_type()
                               : node.domain() + "." + node.op_type();
}

/// Whether cgc imports ops of `node`'s domain at all.
bool isKnownDomain(const onnx::NodeProto &node) {
  return isDefaultDomain(node) || node.domain() == kTrainingDomain;
}

/// "" when cgc imports `node`'s op, else why not.
std::string unsupportedOpReason(const onnx::NodeProto &node) {
  if (!isKnownDomain(node))
    return "unsupported op domain '" + node.domain() + "'";
  if (!getImporterTable().count(importerKey(node)))
    return "unsupported ONNX op '" + importerKey(node) + "'";
  return "";
}

/// An unsupported op type (or domain) and the nodes that use it.
struct UnsupportedOp {
  std::string label; ///< 'NotARealOp' or domain 'com.example'
  SmallVector<const onnx::NodeProto *> nodes;
};

/// The node without its op type: node 'n', or node producing 'y'.
std::string nodeIdentity(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return "node '" + node.name() + "'";
  for (const std::string &output : node.output())
    if (!output.empty())
      return "node producing '" + output + "'";
  return "an unnamed node";
}

/// Each unsupported op of `graph` and its subgraphs, with the nodes that
/// use it, in the order first met.
void collectUnsupportedOps(const onnx::GraphProto &graph,
                           std::vector<UnsupportedOp> &ops) {
  for (const onnx::NodeProto &node : graph.node()) {
    if (!unsupportedOpReason(node).empty()) {
      std::string label = isKnownDomain(node)
                              ? "'" + importerKey(node) + "'"
                              : "domain '" + node.domain() + "'";
      auto it = llvm::find_if(
          ops, [&](const UnsupportedOp &op) { return op.label == label; });
      if (it == ops.end())
        it = ops.insert(ops.end(), UnsupportedOp{label, {}});
      it->nodes.push_back(&node);
    }
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectUnsupportedOps(attr.g(), ops);
      for (const onnx::GraphProto &body : attr.graphs())
        collectUnsupportedOps(body, ops);
    }
  }
}

} // namespace

LogicalResult GraphImporter::checkSupportedOps(const onnx::GraphProto &graph) {
  std::vector<UnsupportedOp> ops;
  collectUnsupportedOps(graph, ops);
  // One unsupported node is reported where it is met, in importNode.
  if (ops.empty() || (ops.size() == 1 && ops.front().nodes.size() == 1))
    return success();
  InFlightDiagnostic diag = error();
  diag << "the model uses " << ops.size() << " unsupported op"
       << (ops.size() > 1 ? "s" : "") << ": ";
  llvm::interleaveComma(ops, diag, [&](const UnsupportedOp &op) {
    diag << op.label << " (" << nodeIdentity(*op.nodes.front());
    if (op.nodes.size() > 1)
      diag << " and " << op.nodes.size() - 1 << " more";
    diag << ")";
  });
  diag << "; cgc --list-ops lists the supported ops";
  return failure();
}

LogicalResult GraphImporter::importNodes(const onnx::GraphProto &graph,
                                         OpBuilder &builder) {
  SmallVector<const onnx::NodeProto *> order;
  if (failed(checkNodeOrder(graph, order)))
    return failure();
  for (const onnx::NodeProto *node : order)
    if (failed(importNode(*node, builder)))
      return failure();
  return success();
}

/// Whether a node's first input may be a sequence or an optional (the ops
/// that read or forward one).
static bool takesSequenceOrOptional(const onnx::NodeProto &node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return false;
  return llvm::is_contained(
      {"SequenceAt", "SequenceErase", "SequenceInsert", "SequenceLength",
       "ConcatFromSequence", "Optional", "OptionalGetElement",
       "OptionalHasElement", "Identity"},
      StringRef(node.op_type()));
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        OpBuilder &builder) {
  auto nodeError = [&]() -> InFlightDiagnostic {
    InFlightDiagnostic diag = error();
    diag << describeNode(node) << ": ";
    return diag;
  };
  if (std::string why = unsupportedOpReason(node); !why.empty()) {
    nodeError() << why << "; cgc --list-ops lists the supported ops";
    return failure();
  }
  const ImporterTable &table = getImporterTable();
  auto it = table.find(importerKey(node));
  if (failed(checkRemovedAttributes(node, opset_, *this)))
    return failure();
  // Every supported op has an output; importers may read output(0).
  if (node.output_size() == 0) {
    nodeError() << "has no outputs";
    return failure();
  }
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty() && !lookup(node.input(i)) &&
        !lookupSequence(node.input(i)) && !isEmptyOptional(node.input(i))) {
      nodeError() << "input '" << node.input(i)
                  << "' is not defined by any node, initializer or graph "
                     "input";
      return failure();
    }
  }
  // Sequences and empty optionals are held by the importer, not values: only
  // the sequence and optional ops take one, as their first input.
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string &input = node.input(i);
    if (input.empty() || lookup(input))
      continue;
    if (i == 0 && takesSequenceOrOptional(node))
      continue;
    nodeError() << "input '" << input << "' is "
                << (lookupSequence(input) ? "a sequence" : "an empty optional")
                << "; " << node.op_type() << " takes a tensor there";
    return failure();
  }
  // Unnamed nodes are named after their op and first output, so remarks
  // and --explain can still point at them.
  std::string name = node.name();
  if (name.empty())
    name = node.op_type() + (node.output_size() ? " -> " + node.output(0) : "");
  Location loc = NameLoc::get(StringAttr::get(ctx_, name), fileLoc());
  NodeContext ctx(*this, node, builder, loc, opset_);
  // When an op needs an input's value at compile time and that input is a
  // graph input, say how to provide it.
  // Input 0 is the data in every such op; the parameters come after it.
  auto bindHints = [](Diagnostic &diag, const auto &inputs) {
    for (StringRef input : inputs)
      diag << "; '" << input << "' is a graph input: fix its value at "
           << "compile time with --bind " << input << "=FILE.pb";
  };
  ScopedDiagnosticHandler hint(ctx_, [&](Diagnostic &diag) {
    std::string text = diag.str();
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    // A dim that must be static but is not comes from values that graph
    // inputs decide (a target shape computed from an input, say).
    if (StringRef(text).contains("is dynamic")) {
      SmallVector<Value> operands;
      for (int i = 0; i < node.input_size(); ++i)
        if (!node.input(i).empty())
          operands.push_back(lookup(node.input(i)));
      bindHints(diag, graphInputsShaping(operands));
      return failure();
    }
    if (!StringRef(text).contains("constant"))
      return failure();
    SmallVector<StringRef> all, parameters, named;
    for (int i = 0; i < node.input_size(); ++i) {
      if (!isGraphInput(node.input(i)))
        continue;
      all.push_back(node.input(i));
      if (i > 0)
        parameters.push_back(node.input(i));
      if (StringRef(text).contains("'" + node.input(i) + "'"))
        named.push_back(node.input(i));
    }
    // A parameter computed from graph inputs (shape arithmetic on a target
    // shape, say) is constant once they are: name those before the data.
    SmallVector<std::string> feeding;
    if (named.empty() && parameters.empty()) {
      SmallVector<Value> computed;
      for (int i = 1; i < node.input_size(); ++i)
        if (!node.input(i).empty())
          computed.push_back(lookup(node.input(i)));
      feeding = graphInputsFeeding(computed);
      named.append(feeding.begin(), feeding.end());
    }
    if (named.empty())
      named = parameters.empty() ? all : parameters;
    bindHints(diag, named);
    return failure(); // keep propagating to the caller's handler
  });
  FailureOr<SmallVector<Value>> results = it->second.fn(ctx);
  if (failed(results) || ctx.hadAttributeError())
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    bool isSequence = sequences_.count(node.output(i)) ||
                      emptyOptionals_.contains(node.output(i));
    if ((i >= (int)results->size() || !(*results)[i]) && isSequence)
      continue;
    if (i >= (int)results->size() || !(*results)[i]) {
      nodeError() << "output #" << i << " ('" << node.output(i)
                  << "') is not supported";
      return failure();
    }
    // ONNX graphs assign each name once (subgraphs may shadow).
    if (values_.count(node.output(i))) {
      nodeError() << "output '" << node.output(i)
                  << "' is already defined in this graph";
      return failure();
    }
    define(node.output(i), (*results)[i]);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

namespace {
/// The default-domain opset of `model`. Models older than kMinOpset are
/// upgraded in place with the ONNX version converter, so the importers only
/// deal with opset 7 and later semantics.
FailureOr<int64_t> findDefaultOpset(onnx::ModelProto &model,
                                    GraphImporter &importer) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    if (!opset.domain().empty() && opset.domain() != "ai.onnx")
      continue;
    if (opset.version() >= 1 && opset.version() < kMinOpset) {
      int64_t old = opset.version();
      std::string error;
      if (!upgradeOpset(model, kMinOpset, error)) {
        importer.error() << "opset " << old << " is older than " << kMinOpset
                         << " and the ONNX version converter cannot upgrade "
                            "this model: "
                         << error;
        return failure();
      }
      return kMinOpset;
    }
    if (opset.version() < kMinOpset || opset.version() > kMaxOpset) {
      importer.error() << "unsupported opset " << opset.version()
                       << " of the default domain (supported: " << kMinOpset
                       << " to " << kMaxOpset << ")";
      return failure();
    }
    return opset.version();
  }
  // A model of training-domain ops only uses no default op: any opset
  // serves its (absent) default-domain nodes.
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    if (opset.domain() == kTrainingDomain)
      return kMaxOpset;
  importer.error() << "the model imports no opset of the default domain";
  return failure();
}

/// A --dim naming no symbolic dim of the model's inputs is a typo, not a
/// no-op; the message lists the names the model does have.
static LogicalResult checkDimIsSymbolic(GraphImporter &importer,
                                        const onnx::GraphProto &graph,
                                        StringRef dim) {
  SmallVector<std::string> symbols;
  for (const onnx::ValueInfoProto &info : graph.input())
    for (const auto &d : info.type().tensor_type().shape().dim())
      if (!d.dim_param().empty() && !llvm::is_contained(symbols, d.dim_param()))
        symbols.push_back(d.dim_param());
  if (llvm::is_contained(symbols, dim))
    return success();
  InFlightDiagnostic diag = importer.error();
  diag << "--dim " << dim << ": no input of the model has the symbolic dim '"
       << dim << "'";
  if (symbols.empty())
    diag << " (its inputs have none)";
  else
    diag << " (its symbolic dims: " << llvm::join(symbols, ", ") << ")";
  return failure();
}

OwningOpRef<ModuleOp> buildModule(const onnx::ModelProto &model,
                                  GraphImporter &importer,
                                  MLIRContext *context) {
  const onnx::GraphProto &graph = model.graph();
  OpBuilder builder(context);
  Location loc = importer.fileLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);

  llvm::DenseSet<StringRef> initializerNames;
  for (const onnx::TensorProto &init : graph.initializer())
    initializerNames.insert(init.name());

  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> inputs;
  SmallVector<SmallVector<std::string>> inputDimNames;
  SmallVector<std::pair<std::string, ElementsAttr>> boundInputs;
  for (const onnx::ValueInfoProto &info : graph.input()) {
    // Old exporters list initializers as inputs too; they are weights.
    if (initializerNames.contains(info.name()))
      continue;
    auto bound = importer.options().boundInputs.find(info.name());
    if (bound != importer.options().boundInputs.end()) {
      FailureOr<ElementsAttr> value =
          importer.loadBoundInput(info.name(), bound->second);
      if (failed(value))
        return nullptr;
      boundInputs.push_back({info.name(), *value});
      continue;
    }
    if (llvm::any_of(inputs, [&](const onnx::ValueInfoProto *other) {
          return other->name() == info.name();
        })) {
      importer.error() << "graph input '" << info.name()
                       << "' is listed more than once";
      return nullptr;
    }
    SmallVector<std::string> dimNames;
    FailureOr<RankedTensorType> type =
        importer.convertValueInfo(info, dimNames);
    if (failed(type))
      return nullptr;
    argTypes.push_back(*type);
    inputs.push_back(&info);
    inputDimNames.push_back(std::move(dimNames));
  }

  // A --shape or --bind naming no graph input is a typo, not a no-op.
  auto isInput = [&](StringRef name) {
    return llvm::any_of(graph.input(), [&](const onnx::ValueInfoProto &i) {
      return i.name() == name;
    });
  };
  for (const auto &entry : importer.options().inputShapes)
    if (!isInput(entry.getKey())) {
      importer.error() << "--shape " << entry.getKey()
                       << ": the model has no input of that name";
      return nullptr;
    }
  for (const auto &entry : importer.options().boundInputs)
    if (!isInput(entry.first)) {
      importer.error() << "--bind " << entry.first
                       << ": the model has no input of that name";
      return nullptr;
    }
  for (const auto &entry : importer.options().dimBindings)
    if (failed(checkDimIsSymbolic(importer, graph, entry.getKey())))
      return nullptr;

  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, loc, "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  for (auto [index, info] : llvm::enumerate(inputs)) {
    importer.define(info->name(), body->getArgument(index));
    setInputName(func, index, info->name());
    if (llvm::any_of(inputDimNames[index],
                     [](const std::string &n) { return !n.empty(); })) {
      SmallVector<StringRef> names(inputDimNames[index].begin(),
                                   inputDimNames[index].end());
      setInputDimNames(func, index, names);
    }
  }
  for (auto &[name, value] : boundInputs)
    importer.define(name, ConstantOp::create(builder, loc, value).getResult());
  if (failed(importer.checkSupportedOps(graph)) ||
      failed(importer.importInitializers(graph, builder)) ||
      failed(importer.importNodes(graph, builder)))
    return nullptr;

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = importer.lookup(output.name());
    if (!value && (importer.lookupSequence(output.name()) ||
                   importer.isEmptyOptional(output.name()))) {
      importer.error() << "graph value '" << output.name()
                       << "' is not a tensor (sequences, maps and optionals "
                          "are not supported as graph outputs)";
      return nullptr;
    }
    if (!value) {
      importer.error() << "graph output '" << output.name()
                       << "' is not produced by any node";
      return nullptr;
    }
    results.push_back(value);
  }
  if (failed(checkDeclaredTypes(importer, graph)) ||
      failed(importShardingAnnotations(importer, model, *module,
                                       importer.options().deviceConfiguration)))
    return nullptr;
  // Initializers kept apart for a Gradient node are ordinary constants
  // once it is built, unless the whole model is to be trained.
  if (!importer.options().keepInitializers)
    func.walk([](ConstantOp constant) { clearInitializer(constant); });
  func::ReturnOp::create(builder, loc, results);
  func.setType(builder.getFunctionType(argTypes, TypeRange(results)));
  for (auto [index, output] : llvm::enumerate(graph.output()))
    setOutputName(func, index, output.name());
  return module;
}
} // namespace

namespace {
/// Imports a parsed model; `path` names it in messages and its folder is
/// where external data is looked up.
OwningOpRef<ModuleOp> importModelProto(onnx::ModelProto &model,
                                       StringRef path, MLIRContext *context,
                                       const ImportOptions &options) {
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  GraphImporter probe(context, options, path, dir, 0);
  if (model.ir_version() < kMinIRVersion ||
      model.ir_version() > kMaxIRVersion) {
    probe.error() << "unsupported IR version " << model.ir_version()
                  << " (supported: " << kMinIRVersion << " to "
                  << kMaxIRVersion << ")";
    return nullptr;
  }
  FailureOr<int64_t> opset = findDefaultOpset(model, probe);
  if (failed(opset))
    return nullptr;
  GraphImporter importer(context, options, path, dir, *opset);
  OwningOpRef<ModuleOp> module = buildModule(model, importer, context);
  if (!module)
    return nullptr;
  if (options.ioPrecision == "fp16" || options.ioPrecision == "bf16")
    applyIoPrecision(module->lookupSymbol<func::FuncOp>("main"),
                     options.ioPrecision == "fp16"
                         ? Type(Float16Type::get(context))
                         : Type(BFloat16Type::get(context)));
  else if (!options.ioPrecision.empty() && options.ioPrecision != "fp32") {
    emitError(UnknownLoc::get(context))
        << "--io-precision must be fp32, fp16 or bf16, got '"
        << options.ioPrecision << "'";
    return nullptr;
  }
  if (options.hostControlFlow)
    setHostControlFlow(*module);
  TargetAttr target = knownTarget(context, options.arch);
  if (!target) {
    emitError(UnknownLoc::get(context))
        << "unknown GPU architecture '" << options.arch << "'";
    return nullptr;
  }
  setTarget(*module, target);
  if (failed(mlir::verify(*module)))
    return nullptr;
  return module;
}
} // namespace

OwningOpRef<ModuleOp> cgc::importONNXModel(StringRef path, MLIRContext *context,
                                           const ImportOptions &options) {
  context->loadDialect<CgcDialect, func::FuncDialect>();
  interp::registerConstantEvaluator(context);
  onnx::ModelProto model;
  std::string message;
  if (!loadModelProto(path.str(), model, message)) {
    emitError(FileLineColLoc::get(context, path, 0, 0)) << message;
    return nullptr;
  }
  return importModelProto(model, path, context, options);
}

OwningOpRef<ModuleOp>
cgc::importONNXModelFromBytes(StringRef bytes, StringRef bufferName,
                              MLIRContext *context,
                              const ImportOptions &options) {
  context->loadDialect<CgcDialect, func::FuncDialect>();
  interp::registerConstantEvaluator(context);
  onnx::ModelProto model;
  std::string message;
  if (!parseModelProto(bytes.str(), bufferName.str(), model, message)) {
    emitError(FileLineColLoc::get(context, bufferName, 0, 0)) << message;
    return nullptr;
  }
  return importModelProto(model, bufferName, context, options);
}

//===----------------------------------------------------------------------===//
// Command-line bindings
//===----------------------------------------------------------------------===//

bool cgc::parseDimBinding(StringRef text, ImportOptions &options,
                          std::string &error) {
  auto [name, value] = text.split('=');
  int64_t dim;
  if (name.empty() || value.getAsInteger(10, dim) || dim < 1) {
    error = "expected --dim NAME=N with N >= 1, got '" + text.str() + "'";
    return false;
  }
  if (!options.dimBindings.try_emplace(name, dim).second) {
    error = "--dim " + name.str() + " is given twice";
    return false;
  }
  return true;
}

bool cgc::parseValueBinding(StringRef text, ImportOptions &options,
                            std::string &error) {
  auto [name, path] = text.split('=');
  if (name.empty() || path.empty()) {
    error = "expected --bind NAME=FILE.pb, got '" + text.str() + "'";
    return false;
  }
  options.boundInputs[name.str()] = path.str();
  return true;
}

bool cgc::parseShapeBinding(StringRef text, ImportOptions &options,
                            std::string &error) {
  auto [name, dims] = text.rsplit('=');
  std::vector<int64_t> shape;
  SmallVector<StringRef> parts;
  if (dims != "scalar")
    dims.split(parts, 'x', -1, /*KeepEmpty=*/true);
  for (StringRef part : parts) {
    int64_t dim;
    if (part.trim().getAsInteger(10, dim) || dim < 0) {
      error = "expected --shape NAME=D0xD1x... with dims >= 0, got '" +
              text.str() + "'";
      return false;
    }
    shape.push_back(dim);
  }
  if (name.empty() || (parts.empty() && dims != "scalar")) {
    error = "expected --shape NAME=D0xD1x... (or NAME=scalar), got '" +
            text.str() + "'";
    return false;
  }
  options.inputShapes[name] = shape;
  return true;
}

//===----------------------------------------------------------------------===//
// Op table
//===----------------------------------------------------------------------===//

const ImporterTable &cgc::onnx_import::getImporterTable() {
  static const ImporterTable table = [] {
    ImporterTable t;
    registerElementwiseOps(t);
    registerNeuralNetOps(t);
    registerReductionOps(t);
    registerNormalizationOps(t);
    registerPositionalOps(t);
    registerAttentionOps(t);
    registerQuantizationOps(t);
    registerRecurrentOps(t);
    registerSignalOps(t);
    registerTrainingOps(t);
    registerSequenceOps(t);
    registerTensorOps(t);
    registerGatherScatterOps(t);
    registerResizeOps(t);
    registerGeneratorOps(t);
    registerDataDependentOps(t);
    registerControlFlowOps(t);
    return t;
  }();
  return table;
}

std::vector<std::string> cgc::supportedONNXOps() {
  std::vector<std::string> names;
  for (const auto &entry : getImporterTable())
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}

void cgc::printSupportedOpsMarkdown(llvm::raw_ostream &os) {
  os << "# Supported ONNX ops\n\n"
     << "Generated by `cgc --list-ops` from the importer's op table; do not "
        "edit.\nDefault domain, opsets " << kMinOpset << " to " << kMaxOpset
     << " (older models are first upgraded to opset " << kMinOpset
     << " with the ONNX version converter). " << getImporterTable().size()
     << " ops.\n\n"
     << "| ONNX op | imported as |\n| --- | --- |\n";
  for (const std::string &name : supportedONNXOps())
    os << "| " << name << " | " << getImporterTable().lookup(name).note
       << " |\n";
}
