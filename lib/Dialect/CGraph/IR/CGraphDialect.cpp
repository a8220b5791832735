//===- CGraphDialect.cpp - cgraph dialect ---------------------------------===//

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgc::cgraph;

#include "cgc/Dialect/CGraph/IR/CGraphOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOps.cpp.inc"

void CGraphDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOps.cpp.inc"
      >();
}

namespace {
/// A launch dim triple must be three positive extents.
LogicalResult verifyLaunchDims(Operation *op, ArrayRef<int64_t> dims,
                               StringRef name) {
  if (dims.size() != 3 || llvm::any_of(dims, [](int64_t d) { return d <= 0; }))
    return op->emitOpError() << name << " must be three positive extents";
  return success();
}
} // namespace

LogicalResult KernelNodeOp::verify() {
  if (failed(verifyLaunchDims(*this, getGrid(), "grid")) ||
      failed(verifyLaunchDims(*this, getBlock(), "block")))
    return failure();
  if (getBlock()[0] * getBlock()[1] * getBlock()[2] > 1024)
    return emitOpError("block has more than 1024 threads");
  if (llvm::any_of(getArgs(), [](int64_t offset) { return offset < 0; }))
    return emitOpError("arena offsets must be non-negative");
  return success();
}

LogicalResult MemcpyNodeOp::verify() {
  if (getDst() < 0 || getSrc() < 0 || getBytes() <= 0)
    return emitOpError("needs non-negative offsets and a positive size");
  if (getDst() < getSrc() + getBytes() && getSrc() < getDst() + getBytes())
    return emitOpError("source and destination overlap");
  return success();
}

LogicalResult ConditionalNodeOp::verify() {
  if (getKind() != "if" && getKind() != "while")
    return emitOpError("kind must be \"if\" or \"while\", got \"")
           << getKind() << "\"";
  if (getKind() == "while" && !getElseBody().empty())
    return emitOpError("a while node has no else body");
  if (getHandle() < 0)
    return emitOpError("handle must be non-negative");
  for (Region *region : getRegions())
    for (Block &block : *region)
      for (Operation &op : block)
        if (!isa<KernelNodeOp, MemcpyNodeOp, MemsetNodeOp, ConditionalNodeOp>(
                op))
          return op.emitOpError("is not a graph node; bodies hold nodes only");
  return success();
}

LogicalResult MemsetNodeOp::verify() {
  if (getOffset() < 0 || getBytes() <= 0)
    return emitOpError("needs a non-negative offset and a positive size");
  if (getValue() < 0 || getValue() > 255)
    return emitOpError("value must be one byte");
  return success();
}
