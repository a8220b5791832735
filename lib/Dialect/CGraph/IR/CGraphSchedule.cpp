//===- CGraphSchedule.cpp - verifiers of the host program ops -------------===//

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"

using namespace mlir;
using namespace cgc::cgraph;

namespace {

/// Symbol `name` of op kind `OpT`, or an error naming what is missing.
template <typename OpT>
LogicalResult verifyReference(Operation *user, FlatSymbolRefAttr name,
                              SymbolTableCollection &symbols, StringRef what) {
  if (symbols.lookupNearestSymbolFrom<OpT>(user, name))
    return success();
  return user->emitOpError()
         << "names " << name << ", which is not a " << what << " of the module";
}

LogicalResult verifyOffsets(Operation *op, ArrayRef<int64_t> offsets) {
  if (llvm::any_of(offsets, [](int64_t o) { return o < 0; }))
    return op->emitOpError("arena offsets must be non-negative");
  return success();
}

LogicalResult verifyHostElement(Operation *op, Type type) {
  if (isHostElementType(type))
    return success();
  return op->emitOpError() << "has no host type for elements of " << type;
}

LogicalResult verifyAxis(Operation *op, int64_t axis, ArrayRef<int64_t> shape) {
  if (axis < 0 ||
      axis >= static_cast<int64_t>(std::max<size_t>(1, shape.size())))
    return op->emitOpError() << "axis " << axis << " is not a dim of the "
                             << shape.size() << "-d result";
  return success();
}

} // namespace

bool cgc::cgraph::isHostElementType(Type type) {
  if (type.isF32() || type.isF64())
    return true;
  auto i = dyn_cast<IntegerType>(type);
  return i && llvm::is_contained({1u, 8u, 16u, 32u, 64u}, i.getWidth());
}

LogicalResult ScheduleOp::verifyRegions() {
  for (Operation &op : getBody().front())
    if (!isa<ReplayOp, EagerOp>(op))
      return op.emitOpError("is not a step; a schedule holds graph replays "
                            "and eager steps");
  return success();
}

LogicalResult ScheduleOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (!symbols.lookupNearestSymbolFrom(*this, getFunctionAttr()))
    return emitOpError() << "names " << getFunctionAttr()
                         << ", which is not a function of the module";
  if (getCopyIo())
    return success();
  for (auto replay : getBody().getOps<ReplayOp>()) {
    auto graph =
        symbols.lookupNearestSymbolFrom<GraphOp>(*this, replay.getGraphAttr());
    bool conditional = false;
    if (graph)
      graph.walk([&](ConditionalNodeOp) { conditional = true; });
    if (conditional)
      return emitOpError() << "replays " << replay.getGraphAttr()
                           << ", which has conditional nodes: needs copy_io";
  }
  return success();
}

LogicalResult ReplayOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyReference<GraphOp>(*this, getGraphAttr(), symbols,
                                  "cgraph.graph");
}

LogicalResult KernelNodeOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyReference<KernelOp>(*this, getKernelAttr(), symbols,
                                   "cgraph.kernel");
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyReference<KernelOp>(*this, getKernelAttr(), symbols,
                                   "cgraph.kernel");
}

LogicalResult LaunchOp::verify() {
  return detail::verifyLaunch(*this, getGrid(), getBlock(), getArgs());
}

LogicalResult HostCopyOp::verify() {
  if (getDst() < 0 || getSrc() < 0 || getBytes() <= 0)
    return emitOpError("needs non-negative offsets and a positive size");
  if (getDst() == getSrc())
    return emitOpError("copies a buffer onto itself");
  return success();
}

LogicalResult HostIfOp::verify() {
  return verifyOffsets(*this, {getCondition()});
}

LogicalResult HostLoopOp::verify() {
  if (failed(
          verifyOffsets(*this, {getMaxTrips(), getCondition(), getIteration(),
                                getConditionArg(), getConditionOut()})))
    return failure();
  for (Region *region : {&getInit(), &getExit()})
    for (Operation &op : region->front())
      if (!isa<HostCopyOp>(op))
        return op.emitOpError("is not a copy; a loop's init and exit only "
                              "move values into place");
  return success();
}

LogicalResult HostNonZeroOp::verify() {
  if (llvm::any_of(getShape(), [](int64_t d) { return d < 0; }))
    return emitOpError("needs a static input shape");
  if (failed(verifyOffsets(*this, {getInput(), getOutput()})))
    return failure();
  return verifyHostElement(*this, getElementType());
}

LogicalResult HostNonMaxSuppressionOp::verify() {
  if (failed(verifyOffsets(*this, {getBoxes(), getScores(), getMaxOutput(),
                                   getIouThreshold(), getScoreThreshold(),
                                   getOutput()})))
    return failure();
  if (getBatches() < 0 || getClasses() < 0 || getCount() < 0)
    return emitOpError("needs non-negative extents");
  Type element = getElementType();
  if (!element.isF32() && !element.isF64())
    return emitOpError() << "has no host type for boxes of " << element;
  return success();
}

LogicalResult HostCompressOp::verify() {
  if (failed(verifyOffsets(*this, {getInput(), getCondition(), getOutput()})))
    return failure();
  if (getOuter() < 0 || getCount() < 0 || getInner() < 0 ||
      getElementBytes() <= 0 || getConditions() < 0)
    return emitOpError("needs non-negative extents");
  return verifyAxis(*this, getAxis(), getResultShape());
}

LogicalResult HostUniqueOp::verify() {
  if (getResults().size() != 4)
    return emitOpError("needs the offsets of its four results (-1 for "
                       "unused ones)");
  if (llvm::any_of(getResults(), [](int64_t o) { return o < -1; }) ||
      getInput() < 0)
    return emitOpError("arena offsets must be non-negative");
  if (failed(verifyHostElement(*this, getElementType())))
    return failure();
  return verifyAxis(*this, getAxis(), getResultShape());
}

LogicalResult HostReshapeOp::verify() {
  if (getRank() < 0)
    return emitOpError("needs a non-negative rank");
  if (llvm::any_of(getInputShape(), [](int64_t d) { return d < 0; }))
    return emitOpError("needs a static input shape");
  return verifyOffsets(*this, {getShape()});
}
