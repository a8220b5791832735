//===- HoistProductScales.cpp - scalar scales move past matmuls ----------===//
//
// (x * c) @ y = (x @ y) * c for a one-element constant c, and likewise for
// x / c and for the rhs. Exporters scale attention's Q and K before the
// product (torch's scaled_dot_product_attention: q * s^0.5, k * s^0.5):
// there the scale is an elementwise kernel of its own between the views of
// Q or K and the product, which keeps the attention kernel from reading
// them in place. After the product the scale is an elementwise op of the
// product's result, which fusion folds into the matmul's (or attention's)
// epilogue, where it costs nothing. Rounding differs only by where one f32
// multiplication happens.
//
// Only for products whose scores go to a softmax (through elementwise ops
// read once): elsewhere the scale would land in a GEMM's epilogue after
// the product, where it costs split-K (the selector splits K only under a
// bias and residual epilogue): BERT b1's fc2 with GELU's last * 0.5 moved
// after it took 73.8 us on the H200 instead of 31.7 (2026-12-03).
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace cgc {
#define GEN_PASS_DEF_CGCHOISTPRODUCTSCALES
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// Whether `c` is a constant float tensor of one element, which broadcasts
/// to a result of `rank` dims without changing its shape.
bool isScalarConstant(Value c, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(c.getType());
  DenseFPElementsAttr value;
  return type && type.hasStaticShape() && type.getNumElements() == 1 &&
         type.getRank() <= rank && matchPattern(c, m_Constant(&value));
}

/// An operand x * c, c * x or x / c of a product: the scaled value x, the
/// one-element constant c and the op.
struct Scale {
  Value x, c;
  Operation *op;
};

/// `operand` as a Scale (f32, read only by the product, c a one-element
/// constant, x of the operand's type); nothing when it is no such scale.
std::optional<Scale> scaledOperand(Value operand) {
  Operation *def = operand.getDefiningOp();
  if (!def || !isa<MulOp, DivOp>(def) || !operand.hasOneUse())
    return std::nullopt;
  auto type = cast<RankedTensorType>(operand.getType());
  if (!type.getElementType().isF32())
    return std::nullopt;
  Value a = def->getOperand(0), b = def->getOperand(1);
  int64_t rank = type.getRank();
  if (a.getType() == type && isScalarConstant(b, rank))
    return Scale{a, b, def};
  if (isa<MulOp>(def) && b.getType() == type && isScalarConstant(a, rank))
    return Scale{b, a, def};
  return std::nullopt;
}

/// Whether `product`'s result reaches a softmax through elementwise ops,
/// each the only reader of the one before (attention's scores).
bool feedsSoftmax(MatMulOp product) {
  Value v = product.getResult();
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    if (isa<SoftmaxOp>(user))
      return true;
    if (!user->hasTrait<Elementwise>() || user->getNumResults() != 1)
      return false;
    v = user->getResult(0);
  }
  return false;
}

/// Moves the scales of `product`'s operands after it.
void hoistScales(MatMulOp product) {
  if (!feedsSoftmax(product))
    return;
  for (OpOperand &use : product->getOpOperands()) {
    std::optional<Scale> scale = scaledOperand(use.get());
    if (!scale)
      continue;
    use.set(scale->x);
    OpBuilder b(product);
    b.setInsertionPointAfter(product);
    Value result = product.getResult();
    Location loc = scale->op->getLoc();
    Operation *after =
        isa<DivOp>(scale->op)
            ? DivOp::create(b, loc, result.getType(), result, scale->c)
                  .getOperation()
            : MulOp::create(b, loc, result.getType(), result, scale->c)
                  .getOperation();
    result.replaceAllUsesExcept(after->getResult(0), after);
    scale->op->erase();
  }
}

struct CgcHoistProductScalesPass
    : cgc::impl::CgcHoistProductScalesBase<CgcHoistProductScalesPass> {
  void runOnOperation() override {
    SmallVector<MatMulOp> products;
    getOperation().walk([&](MatMulOp op) { products.push_back(op); });
    for (MatMulOp product : products)
      hoistScales(product);
  }
};

} // namespace
