//===- CGraphDialect.cpp - cgraph dialect ---------------------------------===//

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgc::cgraph;

#include "cgc/Dialect/CGraph/IR/CGraphOpsDialect.cpp.inc"
#include "cgc/Dialect/CGraph/IR/CGraphOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOpsAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOps.cpp.inc"

void CGraphDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOpsAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOps.cpp.inc"
      >();
}

LogicalResult cgc::cgraph::detail::verifyLaunch(Operation *op,
                                                ArrayRef<int64_t> grid,
                                                ArrayRef<int64_t> block,
                                                ArrayRef<int64_t> args) {
  auto positive3 = [](ArrayRef<int64_t> dims) {
    return dims.size() == 3 &&
           llvm::all_of(dims, [](int64_t d) { return d > 0; });
  };
  if (!positive3(grid))
    return op->emitOpError("grid must be three positive extents");
  if (!positive3(block))
    return op->emitOpError("block must be three positive extents");
  if (block[0] * block[1] * block[2] > 1024)
    return op->emitOpError("block has more than 1024 threads");
  if (llvm::any_of(args, [](int64_t offset) { return offset < 0; }))
    return op->emitOpError("arena offsets must be non-negative");
  return success();
}

/// The package builder makes these edges programmatic as they are: only
/// kernel -> kernel edges of a top-level graph into a kernel that waits.
static LogicalResult verifyProgrammatic(KernelNodeOp op) {
  std::optional<ArrayRef<bool>> flags = op.getProgrammatic();
  if (!flags)
    return success();
  if (flags->size() != op.getDeps().size())
    return op.emitOpError("programmatic needs one flag per dependency");
  if (!llvm::is_contained(*flags, true))
    return op.emitOpError("programmatic must mark an edge (omit it "
                          "otherwise)");
  if (op.getConditionHandle())
    return op.emitOpError("a condition kernel has no programmatic edges");
  if (op->getParentOfType<ConditionalNodeOp>())
    return op.emitOpError("a conditional body has no programmatic edges");
  for (auto [dep, flag] : llvm::zip(op.getDeps(), *flags))
    if (flag && !dep.getDefiningOp<KernelNodeOp>())
      return op.emitOpError("only an edge from a kernel node may be "
                            "programmatic");
  return success();
}

LogicalResult KernelNodeOp::verify() {
  if (failed(detail::verifyLaunch(*this, getGrid(), getBlock(), getArgs())))
    return failure();
  return verifyProgrammatic(*this);
}

LogicalResult MemcpyNodeOp::verify() {
  if (getDst() < 0 || getSrc() < 0 || getBytes() <= 0)
    return emitOpError("needs non-negative offsets and a positive size");
  if (getDst() < getSrc() + getBytes() && getSrc() < getDst() + getBytes())
    return emitOpError("source and destination overlap");
  return success();
}

LogicalResult ConditionalNodeOp::verify() {
  if (getKind() == ConditionKind::While && !getElseBody().empty())
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
