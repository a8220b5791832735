//===- CgcFolds.cpp - fold hooks that evaluate constants ------------------===//
//
// The ops the ONNX importer meets in shape computations (Shape -> Gather ->
// Concat -> Reshape, arithmetic on i64 dims) fold when their operands are
// constants, so Reshape/Expand/Slice see constant shapes. The arithmetic is
// the interpreter's (CgcConstantEvaluator.h); the checks here only keep
// folding to small tensors and to the cases the importer folded before.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcConstantEvaluator.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include <cmath>

using namespace mlir;
using namespace cgc;

namespace {
/// Largest tensor folded (shape subgraphs are tiny; folding real data would
/// bloat the IR).
constexpr int64_t kMaxFoldElements = 1 << 16;
} // namespace

DenseElementsAttr cgc::evaluateConstantOp(Operation *op,
                                          ArrayRef<Attribute> operands) {
  if (op->getNumResults() != 1 || operands.empty())
    return nullptr;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldElements)
    return nullptr;
  SmallVector<DenseElementsAttr> dense;
  for (Attribute operand : operands) {
    auto value = dyn_cast_if_present<DenseElementsAttr>(operand);
    if (!value || value.getNumElements() > kMaxFoldElements)
      return nullptr;
    dense.push_back(value);
  }
  auto *evaluator =
      op->getDialect()->getRegisteredInterface<ConstantEvaluatorInterface>();
  if (!evaluator)
    return nullptr;
  return evaluator->evaluate(op, dense);
}

#define CGC_FOLD_BY_EVALUATION(OpTy)                                           \
  OpFoldResult OpTy::fold(FoldAdaptor adaptor) {                               \
    return evaluateConstantOp(*this, adaptor.getOperands());                   \
  }

CGC_FOLD_BY_EVALUATION(AddOp)
CGC_FOLD_BY_EVALUATION(SubOp)
CGC_FOLD_BY_EVALUATION(MulOp)
CGC_FOLD_BY_EVALUATION(DivOp)
CGC_FOLD_BY_EVALUATION(MaxOp)
CGC_FOLD_BY_EVALUATION(MinOp)
CGC_FOLD_BY_EVALUATION(EqualOp)
CGC_FOLD_BY_EVALUATION(LessOp)
CGC_FOLD_BY_EVALUATION(GreaterOp)
CGC_FOLD_BY_EVALUATION(NegOp)
CGC_FOLD_BY_EVALUATION(WhereOp)
CGC_FOLD_BY_EVALUATION(GatherOp)
CGC_FOLD_BY_EVALUATION(ConcatOp)
CGC_FOLD_BY_EVALUATION(SliceOp)
CGC_FOLD_BY_EVALUATION(ExpandOp)
CGC_FOLD_BY_EVALUATION(TransposeOp)
CGC_FOLD_BY_EVALUATION(TileOp)
// Exporters compute slice bounds and sizes with these too (torch's
// TorchScript export of nn.MultiheadAttention: Reshape(Mod(c, c)) as a
// Slice bound).
CGC_FOLD_BY_EVALUATION(ModOp)
CGC_FOLD_BY_EVALUATION(AbsOp)
CGC_FOLD_BY_EVALUATION(SignOp)
CGC_FOLD_BY_EVALUATION(FloorOp)
CGC_FOLD_BY_EVALUATION(CeilOp)
CGC_FOLD_BY_EVALUATION(PowOp)
CGC_FOLD_BY_EVALUATION(NotOp)
CGC_FOLD_BY_EVALUATION(AndOp)
CGC_FOLD_BY_EVALUATION(OrOp)
CGC_FOLD_BY_EVALUATION(XorOp)
CGC_FOLD_BY_EVALUATION(LessEqualOp)
CGC_FOLD_BY_EVALUATION(GreaterEqualOp)

#undef CGC_FOLD_BY_EVALUATION

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  // A NaN or infinity has no integer value; the cast is left to run time,
  // where the device gives whatever its conversion gives.
  auto input = dyn_cast_if_present<DenseFPElementsAttr>(adaptor.getInput());
  if (input && isa<IntegerType>(getType().getElementType()) &&
      llvm::any_of(input.getValues<APFloat>(),
                   [](const APFloat &v) { return !v.isFinite(); }))
    return {};
  return evaluateConstantOp(*this, adaptor.getOperands());
}

/// Only whole-tensor reductions fold (ReduceProd of a shape is the element
/// count); partial ones stay ops.
static OpFoldResult foldReduceAll(Operation *op, ArrayRef<Attribute> operands) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return {};
  return evaluateConstantOp(op, operands);
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor adaptor) {
  return foldReduceAll(*this, adaptor.getOperands());
}

OpFoldResult ReduceProdOp::fold(FoldAdaptor adaptor) {
  return foldReduceAll(*this, adaptor.getOperands());
}
