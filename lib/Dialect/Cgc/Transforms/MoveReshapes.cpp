//===- MoveReshapes.cpp - reshapes off the edges fusion needs ------------===//
//
// A reshape costs nothing (it is a view), but fusion groups ops by their
// shapes and producers, and a reshape between two ops that would share a
// kernel keeps them apart. Sequence-first models put them exactly there:
// [1, L, E] -> [L, 1, E] between a layer norm and the projection that
// reads it, [L, E] -> [1, L, E] between a projection and its residual add.
// This pass moves such reshapes out of the way, keeping every value's
// elements as they were:
//
//   reshape(reshape(x))     ->  reshape(x)   (first, so the rules below see
//                                              one reshape where there were
//                                              several);
//   reshape(layer_norm(x))  ->  layer_norm(reshape(x))
//       when the reshape keeps the normalized last dim last;
//   e(reshape(p), y)        ->  reshape(e(p, reshape(y)))
//       for an elementwise e of the reshape's shape whose other operands
//       have that shape or one element, where p is a product (matmul,
//       gemm, conv) that can take e as its epilogue.
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

/// reshape(layer_norm(x)) -> layer_norm(reshape(x)) where the norm's axis is
/// the last one before and after and the norm has no other reader.
bool moveAboveNorm(ReshapeOp reshape) {
  auto norm = reshape.getInput().getDefiningOp<LayerNormOp>();
  RankedTensorType from = tensorType(reshape.getInput()),
                   to = tensorType(reshape.getResult());
  if (!norm || !norm->hasOneUse() || reshape.getShape() || !from || !to ||
      !from.hasStaticShape() || !to.hasStaticShape() || to.getRank() == 0 ||
      from.getShape().back() != to.getShape().back())
    return false;
  int64_t axis = norm.getAxis();
  if (axis < 0)
    axis += from.getRank();
  // Scale and bias of the last dim alone broadcast the same at any rank.
  auto ofLastDim = [](Value v) {
    RankedTensorType t = v ? tensorType(v) : RankedTensorType();
    return !v || (t && t.getRank() == 1);
  };
  if (axis != from.getRank() - 1 || !ofLastDim(norm.getScale()) ||
      !ofLastDim(norm.getBias()))
    return false;
  OpBuilder b(reshape);
  Value input = reshapeTo(b, reshape.getLoc(), norm.getInput(), to);
  Operation *moved = b.clone(*norm);
  moved->setOperand(0, input);
  moved->setAttr("axis", b.getI64IntegerAttr(to.getRank() - 1));
  moved->getResult(0).setType(to);
  reshape.getResult().replaceAllUsesWith(moved->getResult(0));
  reshape.erase();
  norm.erase();
  return true;
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
    reshapes.clear();
    getOperation().walk([&](ReshapeOp op) { reshapes.push_back(op); });
    for (ReshapeOp r : reshapes)
      moveAboveNorm(r);
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
