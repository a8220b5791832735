//===- StoredOperands.cpp - product operands stored narrow ----------------===//

#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

using namespace mlir;
using namespace cgc;

namespace {

Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// Whether `use` is the lhs/rhs of a matmul, the A/B of a gemm or the
/// input/filter of a convolution.
bool isProductOperand(OpOperand &use) {
  return isa<MatMulOp, GemmOp, ConvOp>(use.getOwner()) &&
         use.getOperandNumber() < 2;
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

bool cgc::isNarrowingCast(CastOp cast) {
  Type to = elementTypeOf(cast.getOutput());
  return elementTypeOf(cast.getInput()).isF32() && (to.isBF16() || to.isF16());
}

Type cgc::narrowTypeOf(KernelOp kernel) {
  std::optional<Type> precision = kernel.getPrecision();
  if (!precision || !(precision->isBF16() || precision->isF16()))
    return Type();
  return *precision;
}

CastOp cgc::narrowConvOutput(KernelOp kernel) {
  if (kernel.getKind() != KernelKind::conv)
    return CastOp();
  SmallVector<Operation *> ops = kernelComputeOps(kernel);
  Operation *yield = kernel.getBody().front().getTerminator();
  if (ops.size() != 2 || yield->getNumOperands() != 1)
    return CastOp();
  auto conv = dyn_cast<ConvOp>(ops[0]);
  auto rounding = dyn_cast<CastOp>(ops[1]);
  if (!conv || !rounding || conv.getBias() ||
      rounding.getInput() != conv.getOutput() ||
      yield->getOperand(0) != rounding.getOutput() ||
      !isNarrowingCast(rounding))
    return CastOp();
  return rounding;
}

TransposeOp cgc::soleTransposeOf(Operation *op) {
  auto kernel = dyn_cast_or_null<KernelOp>(op);
  if (!kernel || kernel.getKind() != KernelKind::single)
    return TransposeOp();
  Block &body = kernel.getBody().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return TransposeOp();
  auto transpose = dyn_cast<TransposeOp>(body.front());
  Operation *yield = body.getTerminator();
  if (!transpose || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != transpose.getResult() ||
      kernel->isAncestor(transpose.getInput().getParentRegion()->getParentOp()))
    return TransposeOp();
  return transpose;
}

bool cgc::writesThroughStore(Operation *op) {
  return isa<MaxPoolOp, AveragePoolOp, ConcatOp>(op) &&
         elementTypeOf(op->getResult(0)).isF32();
}

bool cgc::isSingleWithNarrowCopy(ArrayRef<Operation *> ops) {
  if (ops.size() != 2 || !writesThroughStore(ops[0]))
    return false;
  auto copy = dyn_cast<CastOp>(ops[1]);
  return copy && copy.getInput() == ops[0]->getResult(0) &&
         isNarrowingCast(copy);
}

bool cgc::canWriteNarrowCopy(KernelOp producer) {
  switch (producer.getKind()) {
  case KernelKind::elementwise:
  case KernelKind::norm:
  case KernelKind::matmul:
  case KernelKind::attention:
    return true;
  case KernelKind::conv:
    return !narrowConvOutput(producer);
  case KernelKind::single: {
    SmallVector<Operation *> ops = kernelComputeOps(producer);
    return ops.size() == 1 && writesThroughStore(ops[0]);
  }
  default:
    return false;
  }
}

bool cgc::canStoreNarrow(Value v, KernelOp reader) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return false;
  Operation *def = v.getDefiningOp();
  if (!def || reader->isAncestor(def))
    return false;
  if (auto constant = dyn_cast<ConstantOp>(def))
    return isa<DenseElementsAttr, DenseResourceElementsAttr>(
        constant.getValue());
  // A static reshape between kernels is a view: its narrow copy is the
  // same view of the input's.
  if (auto reshape = dyn_cast<ReshapeOp>(def))
    return !reshape.getShape() &&
           canStoreNarrow(reshape.getInput(), reader);
  auto producer = dyn_cast<KernelOp>(def);
  if (!producer)
    return false;
  if (TransposeOp transpose = soleTransposeOf(producer))
    return canStoreNarrow(transpose.getInput(), reader);
  return canWriteNarrowCopy(producer);
}
