//===- BoundedIO.cpp - every model input and output has a capacity -------===//
//
// The package allocates every input and output once, at its largest size,
// so a value whose data-dependent shape the plan cannot bound cannot leave
// the model. The error names the graph inputs the shape comes from and the
// --bind that fixes them.
//
//===----------------------------------------------------------------------===//

#include "HostSchedule.h"

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cgc;

namespace {

/// Collects the graph inputs `v` is computed from, following island, eager
/// region and kernel results to the values they yield.
void graphInputsOf(Value v, llvm::SetVector<BlockArgument> &inputs,
                   llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      inputs.insert(arg);
    return;
  }
  auto result = cast<OpResult>(v);
  Operation *def = result.getOwner();
  if (isa<IslandOp, EagerRegionOp, KernelOp>(def)) {
    Operation *yield = def->getRegion(0).front().getTerminator();
    graphInputsOf(yield->getOperand(result.getResultNumber()), inputs, seen);
    return;
  }
  for (Value operand : def->getOperands())
    graphInputsOf(operand, inputs, seen);
}

/// The values that decide the shape of `v`, a value of data-dependent shape:
/// the shape operands of the op that makes it, else (an op computed on such
/// values) its operands of data-dependent shape.
void shapeSources(Value v, SmallVectorImpl<Value> &sources,
                  llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return;
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return;
  Operation *def = result.getOwner();
  if (isa<IslandOp, EagerRegionOp, KernelOp>(def)) {
    Operation *yield = def->getRegion(0).front().getTerminator();
    shapeSources(yield->getOperand(result.getResultNumber()), sources, seen);
    return;
  }
  if (auto range = dyn_cast<RangeOp>(def)) {
    sources.append({range.getStart(), range.getLimit(), range.getDelta()});
  } else if (auto fill = dyn_cast<ConstantOfShapeOp>(def)) {
    sources.push_back(fill.getShape());
  } else if (isa<DynamicExpandOp>(def)) {
    sources.push_back(def->getOperand(1));
  } else if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    if (Value shape = reshape.getShape())
      sources.push_back(shape);
  } else if (auto loop = dyn_cast<LoopOp>(def)) {
    sources.append({loop.getMaxTripCount(), loop.getInitialCondition()});
  } else {
    for (Value operand : def->getOperands())
      if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
        shapeSources(operand, sources, seen);
  }
}

/// "; its shape comes from graph input 'x': fix its value at compile time
/// with --bind x=FILE.pb" naming every graph input the shape of `output`
/// depends on, or "" when it depends on none (Range, ConstantOfShape or
/// Expand of run-time values, Loop scan outputs, and the ops computed on
/// them).
std::string unboundedShapeHint(Value output) {
  SmallVector<Value> sources;
  llvm::DenseSet<Value> seen;
  shapeSources(output, sources, seen);
  llvm::SetVector<BlockArgument> inputs;
  llvm::DenseSet<Value> visited;
  for (Value source : sources)
    graphInputsOf(source, inputs, visited);
  if (inputs.empty())
    return "";
  auto func = cast<func::FuncOp>(inputs.front().getOwner()->getParentOp());
  SmallVector<std::string> names, binds;
  for (BlockArgument arg : inputs) {
    auto name = getInputName(func, arg.getArgNumber());
    std::string n =
        name ? name.str() : "input_" + std::to_string(arg.getArgNumber());
    names.push_back("'" + n + "'");
    binds.push_back("--bind " + n + "=FILE.pb");
  }
  return "; its shape comes from graph input" +
         std::string(names.size() > 1 ? "s " : " ") + llvm::join(names, ", ") +
         ": fix " + (names.size() > 1 ? "their values" : "its value") +
         " at compile time with " + llvm::join(binds, " ");
}

} // namespace

LogicalResult cgc::checkBoundedIO(func::FuncOp func) {
  auto check = [&](Value value, StringAttr name,
                   StringRef fallback) -> LogicalResult {
    if (capacityBytes(value) >= 0)
      return success();
    return func.emitError("output '")
           << (name ? name.getValue() : fallback)
           << "' has a data-dependent shape whose size cgc cannot bound at "
              "compile time"
           << unboundedShapeHint(value);
  };
  // An input's shape is data-dependent only through an unbound dim.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string unbound = describeUnboundInputDims(func, i);
    if (!unbound.empty())
      return func.emitError(unbound);
  }
  Operation *ret = func.getBody().front().getTerminator();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(check(ret->getOperand(i), getOutputName(func, i),
                     "output_" + std::to_string(i))))
      return failure();
  return success();
}
