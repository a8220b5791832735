//===- ReverseMode.cpp - the backward ops of a value in a block -----------===//
//
// Finds the ops a gradient flows through (those that read a source, or a
// value computed from one, and that the target depends on), then applies
// their gradient rules from the target back to the sources.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/Gradients.h"

#include <algorithm>

using namespace mlir;
using namespace cgc;

ReverseMode::ReverseMode(Block &block, ArrayRef<Value> sources, Value target)
    : target(target) {
  // Forward: every op reading a source or a value computed from one.
  llvm::DenseSet<Value> fromSources(sources.begin(), sources.end());
  SmallVector<Operation *> forward;
  for (Operation &op : block.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return fromSources.contains(v); })) {
      forward.push_back(&op);
      for (Value r : op.getResults())
        fromSources.insert(r);
    }
  // Backward: of those, the ones the target depends on.
  activeValues.insert(target);
  for (Operation *op : llvm::reverse(forward))
    if (llvm::any_of(op->getResults(),
                     [&](Value r) { return activeValues.contains(r); })) {
      active.push_back(op);
      for (Value v : op->getOperands())
        if (fromSources.contains(v))
          activeValues.insert(v);
    }
  std::reverse(active.begin(), active.end());
}

LogicalResult ReverseMode::build(GradientBuilder &g, Value seed,
                                 Operation *&failedOp, bool &hasRule) {
  gradients.clear();
  gradients[target] = seed;
  for (Operation *op : llvm::reverse(active)) {
    SmallVector<Value> resultGradients;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGradients.push_back(gradients.lookup(r));
      any |= static_cast<bool>(resultGradients.back());
    }
    if (!any)
      continue;
    auto rule = dyn_cast<DifferentiableOpInterface>(op);
    SmallVector<bool> wanted;
    for (Value v : op->getOperands())
      wanted.push_back(activeValues.contains(v));
    SmallVector<Value> operandGradients;
    if (!rule || failed(rule.buildGradients(g.builder(), resultGradients,
                                            wanted, operandGradients))) {
      failedOp = op;
      hasRule = static_cast<bool>(rule);
      return failure();
    }
    for (auto [operand, grad] :
         llvm::zip(op->getOperands(), operandGradients)) {
      if (!grad || !activeValues.contains(operand))
        continue;
      Value &sum = gradients[operand];
      sum = sum ? g.add(sum, grad) : grad;
    }
  }
  return success();
}
