//===- CgcOps.cpp - cgc op verifiers, folders and interfaces --------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cgc;

#include "cgc/Dialect/Cgc/IR/CgcInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "cgc/Dialect/Cgc/IR/CgcOps.cpp.inc"

namespace {
bool isStaticallyDifferent(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// Checks that a per-channel parameter is a 1-D tensor of `channels`.
LogicalResult verifyChannelParam(Operation *op, Value param, StringRef name,
                                 int64_t channels) {
  auto type = cast<RankedTensorType>(param.getType());
  if (type.getRank() != 1 || isStaticallyDifferent(type.getDimSize(0), channels))
    return op->emitOpError() << name << " must be 1-D with " << channels
                             << " elements, got " << type;
  return success();
}
} // namespace

StringRef cgc::stringifyReductionKind(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return "sum";
  case ReductionKind::Mean:
    return "mean";
  case ReductionKind::Max:
    return "max";
  case ReductionKind::Min:
    return "min";
  case ReductionKind::Prod:
    return "prod";
  case ReductionKind::L1:
    return "l1";
  case ReductionKind::L2:
    return "l2";
  case ReductionKind::SumSquare:
    return "sum_square";
  case ReductionKind::LogSum:
    return "log_sum";
  case ReductionKind::LogSumExp:
    return "lse";
  }
  llvm_unreachable("unknown reduction kind");
}

//===----------------------------------------------------------------------===//
// Constants and shape queries
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto type = cast<RankedTensorType>(getInput().getType());
  ArrayRef<int64_t> dims =
      type.getShape().slice(getStart(), getEnd() - getStart());
  if (llvm::any_of(dims, ShapedType::isDynamic))
    return {};
  return DenseIntElementsAttr::get(cast<ShapedType>(getType()), dims);
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (!type.hasStaticShape())
    return {};
  return DenseIntElementsAttr::get(cast<ShapedType>(getType()),
                                   {type.getNumElements()});
}

LogicalResult AllReduceOp::verify() {
  if (getRanks() < 2)
    return emitOpError() << "combines 2 or more ranks, got " << getRanks();
  return success();
}

LogicalResult AllGatherOp::verify() {
  if (getRanks() < 2)
    return emitOpError() << "combines 2 or more ranks, got " << getRanks();
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  SmallVector<int64_t> stacked{static_cast<int64_t>(getRanks())};
  llvm::append_range(stacked, in.getShape());
  if (out.getElementType() != in.getElementType() ||
      out.getShape() != ArrayRef<int64_t>(stacked))
    return emitOpError() << "stacks " << getRanks() << " tensors of type "
                         << in << " into "
                         << RankedTensorType::get(stacked, in.getElementType())
                         << ", not " << out;
  return success();
}

LogicalResult CastOp::verify() {
  if (!llvm::is_contained({"up", "down", "nearest"}, getRoundMode()))
    return emitOpError("round_mode must be \"up\", \"down\" or "
                       "\"nearest\", got \"")
           << getRoundMode() << "\"";
  return success();
}

LogicalResult RandomMaskOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0 && ratio < 1))
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  if (Value offset = getOffset();
      offset && cast<RankedTensorType>(offset.getType()).getRank() != 0)
    return emitOpError("offset must be a rank-0 tensor<i64>");
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto output = cast<RankedTensorType>(getType());
  if (input.getElementType() != output.getElementType())
    return emitOpError("cannot change the element type");
  if (input.hasStaticShape() && output.hasStaticShape() &&
      input.getNumElements() != output.getNumElements())
    return emitOpError("element count changes from ")
           << input.getNumElements() << " to " << output.getNumElements();
  if (!output.hasStaticShape() && !getShape())
    return emitOpError("a dynamic result shape needs the shape operand");
  if (Value shape = getShape()) {
    auto shapeType = cast<RankedTensorType>(shape.getType());
    if (shapeType.getRank() != 1 ||
        isStaticallyDifferent(shapeType.getDimSize(0), output.getRank()))
      return emitOpError("shape operand must be 1-D with one entry per dim");
  }
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // A constant first: the importer replaces the op only by an attribute.
  auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (dense && cast<RankedTensorType>(getType()).hasStaticShape())
    return dense.reshape(cast<ShapedType>(getType()));
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult ExpandOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto output = cast<RankedTensorType>(getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(input.getShape(), output.getShape());
  if (input.getElementType() != output.getElementType() || failed(shape) ||
      shape->size() != (size_t)output.getRank() ||
      llvm::any_of(llvm::zip(*shape, output.getShape()), [](auto pair) {
        return isStaticallyDifferent(std::get<0>(pair), std::get<1>(pair));
      }))
    return emitOpError("cannot broadcast ") << input << " to " << output;
  return success();
}

LogicalResult ResizeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto output = cast<RankedTensorType>(getType());
  if ((int64_t)getScales().size() != input.getRank() ||
      input.getRank() != output.getRank())
    return emitOpError("needs one scale per dim and an output of equal rank");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, getMode()))
    return emitOpError("unknown mode '") << getMode() << "'";
  return success();
}

LogicalResult OneHotOp::verify() {
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto output = cast<RankedTensorType>(getType());
  if (output.getRank() != indices.getRank() + 1)
    return emitOpError("result rank must be indices rank + 1");
  // I64Attr getters are unsigned; read signed values explicitly.
  int64_t depth = getDepthAttr().getInt(), axis = getAxisAttr().getInt();
  if (depth <= 0)
    return emitOpError("depth must be positive");
  if (axis < 0)
    axis += output.getRank();
  if (axis < 0 || axis >= output.getRank())
    return emitOpError("axis ") << getAxisAttr().getInt() << " out of range";
  if (isStaticallyDifferent(output.getDimSize(axis), depth))
    return emitOpError("result dim ") << axis << " must equal depth "
                                      << depth;
  return success();
}

LogicalResult EinsumOp::verify() {
  StringRef equation = getEquation();
  StringRef inputs = equation.split("->").first;
  SmallVector<StringRef> terms;
  inputs.split(terms, ',');
  if (terms.size() != getInputs().size())
    return emitOpError("equation '")
           << equation << "' has " << terms.size() << " input terms for "
           << getInputs().size() << " operands";
  for (char c : equation)
    if (!llvm::isAlpha(c) && !llvm::is_contained(StringRef(",->."), c))
      return emitOpError("unexpected character '") << c << "' in equation";
  return success();
}

LogicalResult NegativeLogLikelihoodLossOp::verify() {
  if (!llvm::is_contained({"none", "sum", "mean"}, getReduction()))
    return emitOpError("reduction must be none, sum or mean, got '")
           << getReduction() << "'";
  auto input = cast<RankedTensorType>(getInput().getType());
  auto target = cast<RankedTensorType>(getTarget().getType());
  if (input.getRank() < 2 || target.getRank() != input.getRank() - 1)
    return emitOpError("expects input [N, C, ...] and target [N, ...]");
  return success();
}

namespace {
LogicalResult verifyScatterReduction(Operation *op, StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return op->emitOpError("unknown reduction '") << reduction << "'";
  return success();
}
} // namespace

LogicalResult ScatterElementsOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto updates = cast<RankedTensorType>(getUpdates().getType());
  if (indices.getShape() != updates.getShape() ||
      indices.getRank() != input.getRank())
    return emitOpError("indices and updates must have one shape, of the "
                       "input's rank");
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= input.getRank())
    return emitOpError("axis out of range");
  if (updates.getElementType() != input.getElementType())
    return emitOpError("updates must have the input's element type");
  return verifyScatterReduction(*this, getReduction());
}

LogicalResult ScatterNDOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto updates = cast<RankedTensorType>(getUpdates().getType());
  if (indices.getRank() < 1 || indices.isDynamicDim(indices.getRank() - 1))
    return emitOpError("indices need a static last dim");
  int64_t tuple = indices.getShape().back();
  if (tuple > input.getRank())
    return emitOpError("index tuples longer than the input's rank");
  // updates = indices.shape[:-1] + input.shape[tuple:]
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, input.getShape().drop_front(tuple));
  if ((int64_t)expected.size() != updates.getRank() ||
      llvm::any_of(llvm::zip(expected, updates.getShape()), [](auto pair) {
        return isStaticallyDifferent(std::get<0>(pair), std::get<1>(pair));
      }))
    return emitOpError("updates must have shape indices[:-1] + input[")
           << tuple << ":]";
  if (updates.getElementType() != input.getElementType())
    return emitOpError("updates must have the input's element type");
  return verifyScatterReduction(*this, getReduction());
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOpError("axis ") << axis << " out of range";
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  for (Value param : {getScale(), getBias()}) {
    if (!param)
      continue;
    FailureOr<SmallVector<int64_t>> shape = broadcastShapes(
        normalized, cast<RankedTensorType>(param.getType()).getShape());
    if (failed(shape) || shape->size() != normalized.size())
      return emitOpError("scale/bias do not broadcast to the normalized dims");
  }
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOpError("axis ") << axis << " out of range";
  if (getOutputGrad().getType() != input)
    return emitOpError("output_grad must have the input's type");
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(
      input.getShape().drop_front(axis),
      cast<RankedTensorType>(getScale().getType()).getShape());
  if (failed(shape) || (int64_t)shape->size() != input.getRank() - axis)
    return emitOpError("scale does not broadcast to the normalized dims");
  return success();
}

LogicalResult BatchNormOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.getRank() < 2)
    return emitOpError("input must have a channel dim");
  int64_t channels = input.getDimSize(1);
  Value params[] = {getScale(), getBias(), getMean(), getVariance()};
  StringRef names[] = {"scale", "bias", "mean", "variance"};
  for (auto [param, name] : llvm::zip(params, names))
    if (failed(verifyChannelParam(*this, param, name, channels)))
      return failure();
  return success();
}

LogicalResult InstanceNormOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.getRank() < 3)
    return emitOpError("input must be N x C x spatial...");
  int64_t channels = input.getDimSize(1);
  if (failed(verifyChannelParam(*this, getScale(), "scale", channels)) ||
      failed(verifyChannelParam(*this, getBias(), "bias", channels)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

namespace {
LogicalResult verifyYield(Operation *op, Region &region, TypeRange expected,
                          StringRef what) {
  auto yield = cast<YieldOp>(region.front().getTerminator());
  if (yield.getValues().getTypes() != expected)
    return op->emitOpError() << what << " yields " << yield.getValues().getTypes()
                             << " but " << expected << " is expected";
  return success();
}
} // namespace

LogicalResult IfOp::verify() {
  auto condition = cast<RankedTensorType>(getCondition().getType());
  if (condition.getNumElements() != 1)
    return emitOpError("condition must hold exactly one element");
  if (failed(verifyYield(*this, getThenRegion(), getResultTypes(),
                         "then branch")) ||
      failed(verifyYield(*this, getElseRegion(), getResultTypes(),
                         "else branch")))
    return failure();
  return success();
}

LogicalResult LoopOp::verify() {
  Block &body = getBody().front();
  size_t carried = getInitialValues().size();
  if (body.getNumArguments() != carried + 2)
    return emitOpError("body takes (iteration, condition, carried...) = ")
           << carried + 2 << " arguments, got " << body.getNumArguments();
  auto yield = cast<YieldOp>(body.getTerminator());
  size_t yielded = yield.getValues().size();
  if (yielded < carried + 1 || getNumResults() != yielded - 1)
    return emitOpError("body must yield (condition, carried..., scan...) "
                       "and the loop returns (carried..., scan...)");
  for (size_t i = 0; i < carried; ++i)
    if (getResult(i).getType() != getInitialValues()[i].getType())
      return emitOpError("carried value ") << i << " changes type";
  return success();
}

bool cgc::isRowReduction(Operation *op) {
  auto reduction = dyn_cast<ReductionOpInterface>(op);
  if (!reduction || !reduction.getKeepdims() || op->getNumOperands() < 1)
    return false;
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!input || !input.hasStaticShape() || input.getRank() < 1 ||
      !isa<FloatType>(input.getElementType()) ||
      input.getElementType().isF64())
    return false;
  switch (reduction.getReductionKind()) {
  case ReductionKind::Sum:
  case ReductionKind::Mean:
  case ReductionKind::Max:
  case ReductionKind::Min:
  case ReductionKind::SumSquare:
  case ReductionKind::L2:
    break;
  default:
    return false;
  }
  ArrayRef<int64_t> axes = reduction.getAxes();
  return axes.size() == 1 && axes[0] == input.getRank() - 1;
}

bool cgc::isNormAnchor(Operation *op) {
  return isa<LayerNormOp, SoftmaxOp, LogSoftmaxOp>(op) || isRowReduction(op);
}

NormRowShape cgc::normRowsOf(Operation *anchor) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(anchor->getOperand(0).getType()).getShape();
  if (isRowReduction(anchor))
    return normRowShape(shape, -1, /*layerNorm=*/true);
  return normRowShape(shape,
                      anchor->getAttrOfType<IntegerAttr>("axis").getInt(),
                      isa<LayerNormOp>(anchor));
}

static bool hasDynamicShape(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && !tensor.hasStaticShape();
}

std::string cgc::captureUnsafeReason(Operation *op) {
  if (auto safety = dyn_cast<CaptureSafetyOpInterface>(op)) {
    StringRef reason = safety.getCaptureUnsafeReason();
    if (!reason.empty())
      return reason.str();
  }
  if (llvm::any_of(op->getOperandTypes(), hasDynamicShape) ||
      llvm::any_of(op->getResultTypes(), hasDynamicShape))
    return "unbound symbolic dim";
  return "";
}

std::string cgc::formatDims(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Partitioning and fusion structure
//===----------------------------------------------------------------------===//

LogicalResult IslandOp::verify() {
  return verifyYield(*this, getBody(), getResultTypes(), "island");
}

LogicalResult EagerRegionOp::verify() {
  return verifyYield(*this, getBody(), getResultTypes(), "eager region");
}

/// The strategies that can compute a group of `kind`.
static bool strategyServesKind(KernelStrategy strategy, KernelKind kind) {
  switch (strategy) {
  case KernelStrategy::none:
    return true;
  case KernelStrategy::elementwise:
    return kind == KernelKind::elementwise;
  case KernelStrategy::warp_dot:
  case KernelStrategy::gemm:
    return kind == KernelKind::matmul;
  case KernelStrategy::conv_gemm:
  case KernelStrategy::depthwise:
    return kind == KernelKind::conv;
  case KernelStrategy::row_norm:
    return kind == KernelKind::norm;
  case KernelStrategy::attention:
    return kind == KernelKind::attention;
  case KernelStrategy::single_op:
    return kind == KernelKind::single || kind == KernelKind::conv ||
           kind == KernelKind::reduce;
  case KernelStrategy::cublaslt_matmul:
    return kind == KernelKind::matmul;
  case KernelStrategy::cudnn_conv:
    return kind == KernelKind::conv;
  case KernelStrategy::nccl_all_reduce:
  case KernelStrategy::nccl_all_gather:
    return kind == KernelKind::single;
  }
  return false;
}

/// Shared memory a config's template declares, where it depends on the
/// config (the GEMM tiles); 0 for templates of fixed small use.
static int64_t configSharedBytes(KernelConfigAttr config) {
  if (config.getStrategy() != KernelStrategy::gemm &&
      config.getStrategy() != KernelStrategy::conv_gemm)
    return 0;
  if (config.usesTensorCores())
    return tensorCoreSharedBytes(config.blockTile(0), config.blockTile(1),
                                 config.blockTile(2),
                                 tensorCoreOperandBytes(config.getOperand()),
                                 config.getStages(), config.getAsyncCopy());
  return gemmSharedBytes(config.blockTile(0), config.blockTile(1),
                         config.blockTile(2), config.threadTile(0),
                         config.threadTile(1), config.getSlices(),
                         config.getStages(), config.getAsyncCopy());
}

LogicalResult KernelOp::verify() {
  if (failed(verifyYield(*this, getBody(), getResultTypes(), "kernel")))
    return failure();
  KernelConfigAttr config = getConfigAttr();
  if (!config)
    return success();
  auto fail = [&]() {
    return emitOpError() << "'" << getName() << "': config "
                         << stringifyKernelStrategy(config.getStrategy())
                         << " ";
  };
  if (!strategyServesKind(config.getStrategy(), getKind()))
    return fail() << "cannot compute a " << stringifyKernelKind(getKind())
                  << " group";
  if (TargetAttr target = lookupTarget(*this)) {
    int64_t shared = configSharedBytes(config);
    if (shared > target.getStaticSharedBytes())
      return fail() << "needs " << shared
                    << " bytes of shared memory; the target's blocks have "
                    << target.getStaticSharedBytes();
    if (config.getThreads() * config.getMinBlocksPerMultiprocessor() >
        target.getMaxThreadsPerMultiprocessor())
      return fail() << "asks for more resident threads than "
                    << target.getArch() << " has";
  }
  if (config.usesTensorCores() && getPrecision() &&
      config.getOperand() != *getPrecision())
    return fail() << "rounds the product's inputs to " << config.getOperand()
                  << ", but the kernel's precision is " << *getPrecision();
  if (config.getStrategy() == KernelStrategy::cublaslt_matmul) {
    std::string reason;
    if (failed(describeLibraryMatmul(*this, reason)))
      return fail() << "cannot take this group: " << reason;
  }
  if (config.getStrategy() == KernelStrategy::cudnn_conv) {
    std::string reason;
    if (failed(describeLibraryConv(*this, reason)))
      return fail() << "cannot take this group: " << reason;
  }
  if (config.getStrategy() == KernelStrategy::nccl_all_reduce &&
      !getAllReduce())
    return fail() << "needs a group of one cgc.all_reduce";
  if (getAllReduce() &&
      config.getStrategy() != KernelStrategy::nccl_all_reduce)
    return fail() << "cannot compute an all-reduce (nccl_all_reduce does)";
  if (config.getStrategy() == KernelStrategy::nccl_all_gather &&
      !getAllGather())
    return fail() << "needs a group of one cgc.all_gather";
  if (getAllGather() &&
      config.getStrategy() != KernelStrategy::nccl_all_gather)
    return fail() << "cannot compute an all-gather (nccl_all_gather does)";
  if (config.getSplitK() > 1 && !getLinearEpilogueResult())
    return fail() << "splits K, but the group stores more than the product "
                     "plus terms independent of it";
  return success();
}

/// The only op of `kernel`'s group, if it is an OpT.
template <typename OpT>
static OpT soleOpOf(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  auto ops = body.without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 1)
    return nullptr;
  return dyn_cast<OpT>(*ops.begin());
}

AllReduceOp KernelOp::getAllReduce() { return soleOpOf<AllReduceOp>(*this); }

AllGatherOp KernelOp::getAllGather() { return soleOpOf<AllGatherOp>(*this); }

Value KernelOp::getLinearEpilogueResult() {
  Block &body = getBody().front();
  Operation *terminator = body.getTerminator();
  if (terminator->getNumOperands() != 1 || body.without_terminator().empty())
    return nullptr;
  SmallVector<Operation *> ops = kernelComputeOps(*this);
  // A layer norm folded into the product's rows comes first.
  auto it = ops.begin();
  if (it != ops.end() && isa<LayerNormOp>(*it))
    ++it;
  if (it == ops.end() || !isa<MatMulOp, GemmOp>(*it))
    return nullptr;
  Value chain = (*it)->getResult(0);
  llvm::SmallPtrSet<Value, 8> inGroup = {chain};
  for (++it; it != ops.end(); ++it) {
    Operation *op = *it;
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
  return terminator->getOperand(0) == chain ? chain : nullptr;
}

//===----------------------------------------------------------------------===//
// Capture safety of eager ops
//===----------------------------------------------------------------------===//

StringRef NonZeroOp::getCaptureUnsafeReason() {
  return "data-dependent output shape";
}
StringRef CompressOp::getCaptureUnsafeReason() {
  return "data-dependent output shape";
}
StringRef UniqueOp::getCaptureUnsafeReason() {
  return "data-dependent output shape";
}
StringRef NonMaxSuppressionOp::getCaptureUnsafeReason() {
  return "data-dependent output shape";
}
StringRef RangeOp::getCaptureUnsafeReason() {
  return "output shape depends on run-time values";
}
StringRef ConstantOfShapeOp::getCaptureUnsafeReason() {
  return "output shape depends on run-time values";
}
StringRef DynamicExpandOp::getCaptureUnsafeReason() {
  return "output shape depends on run-time values";
}
namespace {
bool allStatic(TypeRange types) {
  return llvm::all_of(types, [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return !tensor || tensor.hasStaticShape();
  });
}

/// Whether every op nested in `op`'s regions may run inside a CUDA graph:
/// capture-safe with static shapes, so a conditional node's body graph can
/// hold it.
bool bodiesFitGraphs(Operation *op) {
  WalkResult walk = op->walk([&](Operation *inner) {
    if (inner == op)
      return WalkResult::advance();
    auto safety = dyn_cast<CaptureSafetyOpInterface>(inner);
    if ((safety && !safety.getCaptureUnsafeReason().empty()) ||
        !allStatic(inner->getResultTypes()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// `cgc --control-flow=host` (module attribute cgc.control_flow = "host")
/// keeps If and Loop on the host, for drivers without conditional nodes.
bool hostControlFlow(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  return module && hasHostControlFlow(module);
}
} // namespace

// With static shapes, If and Loop become CUDA conditional nodes (IF with
// ELSE, WHILE) whose condition a kernel sets on the device.
StringRef IfOp::getCaptureUnsafeReason() {
  if (hostControlFlow(*this))
    return "branch on a run-time value (--control-flow=host)";
  if (!allStatic(getResultTypes()))
    return "branch with a data-dependent result shape";
  if (!bodiesFitGraphs(*this))
    return "branch holds work that must run eagerly";
  return "";
}
StringRef LoopOp::getCaptureUnsafeReason() {
  if (hostControlFlow(*this))
    return "loop with a run-time trip count or condition "
           "(--control-flow=host)";
  if (getNumResults() != getInitialValues().size())
    return "loop with scan outputs, whose size depends on the trip count";
  if (!allStatic(getResultTypes()))
    return "loop with a data-dependent carried shape";
  if (!bodiesFitGraphs(*this))
    return "loop body holds work that must run eagerly";
  return "";
}
