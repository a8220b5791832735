//===- MoveReshapes.cpp - reshapes off the edges fusion needs ------------===//
//
// A reshape costs nothing (it is a view), but fusion groups ops by their
// shapes and producers, and a reshape between two ops that would share a
// kernel keeps them apart. Sequence-first models put them exactly there:
// [L, E] -> [1, L, E] between a projection and its residual add.
// This pass moves such reshapes out of the way, keeping every value's
// elements as they were:
//
//   reshape(reshape(x))     ->  reshape(x)   (first, so the rule below sees
//                                              one reshape where there were
//                                              several);
//   e(reshape(p), y)        ->  reshape(e(p, reshape(y)))
//       for an elementwise e of the reshape's shape whose other operands
//       have that shape or one element, where p is a product (matmul,
//       gemm, conv) that can take e as its epilogue.
//
// A reshape between a layer norm and the product reading it stays: moving
// it above the norm lets --cgc-fuse fold the norm into the GEMM's operand
// loads, which the H200 measured slower on these shapes (BERT b1 bf16:
// the QKV projection with its norm 73.8 us against 27.8 + 31.7 apart,
// 2026-12-03).
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cgc {
#define GEN_PASS_DEF_CGCMOVERESHAPES
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

RankedTensorType tensorType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  auto to = RankedTensorType::get(
      type.getShape(), cast<RankedTensorType>(v.getType()).getElementType());
  return ReshapeOp::create(b, loc, to, v, Value(), false).getResult();
}

/// reshape(reshape(x)) -> reshape(x), and a reshape to its input's own type
/// goes away.
void collapseChain(ReshapeOp reshape) {
  auto inner = reshape.getInput().getDefiningOp<ReshapeOp>();
  if (inner && !inner.getShape() && !reshape.getShape()) {
    reshape.getInputMutable().assign(inner.getInput());
    if (inner->use_empty())
      inner.erase();
  }
  if (reshape.getInput().getType() == reshape.getType()) {
    reshape.getResult().replaceAllUsesWith(reshape.getInput());
    reshape.erase();
  }
}

/// e(reshape(p), y...) -> reshape(e(p, reshape(y)...)) for the elementwise
/// op `e` reading a product's reshaped result (see the file comment).
bool moveBelowElementwise(Operation *e) {
  if (!e->hasTrait<Elementwise>() || e->getNumResults() != 1)
    return false;
  RankedTensorType outType = tensorType(e->getResult(0));
  if (!outType || !outType.hasStaticShape())
    return false;
  ReshapeOp reshape;
  for (Value v : e->getOperands())
    if (auto r = v.getDefiningOp<ReshapeOp>();
        r && r->hasOneUse() && !r.getShape() &&
        isa_and_nonnull<MatMulOp, GemmOp, ConvOp>(
            r.getInput().getDefiningOp())) {
      if (reshape)
        return false; // two reshaped operands: leave them
      reshape = r;
    }
  if (!reshape || tensorType(reshape.getResult()).getShape() !=
                      outType.getShape())
    return false;
  RankedTensorType productType = tensorType(reshape.getInput());
  if (!productType || !productType.hasStaticShape())
    return false;
  for (Value v : e->getOperands()) {
    RankedTensorType t = tensorType(v);
    if (v != reshape.getResult() &&
        (!t || !t.hasStaticShape() ||
         (t.getShape() != outType.getShape() && t.getNumElements() != 1)))
      return false;
  }
  // The other operands' reshapes go before the product where they can, so
  // that nothing stands between the product and `e` (fusion groups ops
  // that follow each other).
  Operation *product = reshape.getInput().getDefiningOp();
  // Fusion joins ops of one block only (and the operands' reshapes are
  // placed in the product's block).
  if (product->getBlock() != e->getBlock())
    return false;
  SmallVector<Value> operands;
  for (Value v : e->getOperands()) {
    if (v == reshape.getResult()) {
      operands.push_back(reshape.getInput());
      continue;
    }
    if (tensorType(v).getShape() != outType.getShape()) {
      operands.push_back(v);
      continue;
    }
    Operation *def = v.getDefiningOp();
    OpBuilder at(product);
    if (def && def->getBlock() == product->getBlock() &&
        product->isBeforeInBlock(def))
      at.setInsertionPointAfter(def);
    operands.push_back(reshapeTo(at, e->getLoc(), v, productType));
  }
  OpBuilder b(e);
  Operation *moved = b.clone(*e);
  moved->setOperands(operands);
  moved->getResult(0).setType(RankedTensorType::get(
      productType.getShape(), outType.getElementType()));
  Value back = reshapeTo(b, e->getLoc(), moved->getResult(0), outType);
  e->getResult(0).replaceAllUsesWith(back);
  e->erase();
  reshape.erase();
  return true;
}

struct CgcMoveReshapesPass
    : cgc::impl::CgcMoveReshapesBase<CgcMoveReshapesPass> {
  void runOnOperation() override {
    SmallVector<ReshapeOp> reshapes;
    getOperation().walk([&](ReshapeOp op) { reshapes.push_back(op); });
    // Program order: an inner reshape is collapsed into its reader after
    // its own input was.
    for (ReshapeOp r : reshapes)
      collapseChain(r);
    SmallVector<Operation *> elementwise;
    getOperation().walk([&](Operation *op) {
      if (op->hasTrait<Elementwise>())
        elementwise.push_back(op);
    });
    for (Operation *op : elementwise)
      moveBelowElementwise(op);
  }
};

} // namespace
