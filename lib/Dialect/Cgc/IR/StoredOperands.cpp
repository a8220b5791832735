//===- StoredOperands.cpp - product operands stored narrow ----------------===//

#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

using namespace mlir;
using namespace cgc;

namespace {

Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// Whether `use` is the lhs/rhs of a matmul or the A/B of a gemm.
bool isProductOperand(OpOperand &use) {
  return isa<MatMulOp, GemmOp>(use.getOwner()) && use.getOperandNumber() < 2;
}

} // namespace

bool cgc::isOperandWidening(Operation *op) {
  auto widening = dyn_cast_or_null<CastOp>(op);
  if (!widening)
    return false;
  auto kernel = dyn_cast_or_null<KernelOp>(op->getParentOp());
  if (!kernel)
    return false;
  Value narrow = widening.getInput();
  Type from = elementTypeOf(narrow), to = elementTypeOf(widening.getOutput());
  if (!(from.isBF16() || from.isF16()) || !to.isF32() ||
      kernel->isAncestor(narrow.getParentRegion()->getParentOp()))
    return false;
  return !widening->use_empty() &&
         llvm::all_of(widening->getUses(), isProductOperand);
}

Value cgc::storedOperand(Value v) {
  Operation *def = v.getDefiningOp();
  return isOperandWidening(def) ? cast<CastOp>(def).getInput() : v;
}

SmallVector<Operation *> cgc::kernelComputeOps(KernelOp kernel) {
  SmallVector<Operation *> ops;
  for (Operation &op : kernel.getBody().front().without_terminator())
    if (!isOperandWidening(&op))
      ops.push_back(&op);
  return ops;
}
