//===- GatherSlicedConcats.cpp - concats of slices of one tensor ----------===//
//
// Rotary embeddings as torch exports them (transformers' rotate_half):
// Concat(-x[..., h:], x[..., :h]) along the last axis, then multiplied by
// the sines and added to x times the cosines. Each of slice, neg, slice and
// concat is a kernel of its own (a copy of x each), four per rotated tensor,
// eight a layer for q and k. Every element of such a concat is an element
// of x, maybe negated: it is Gather(x, indices) along the axis, times a
// constant of -1 and 1 where a piece is negated. A gather kernel takes its
// elementwise consumers (the sine product and the sum) as its epilogue, so
// the rotation becomes one kernel.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace cgc {
#define GEN_PASS_DEF_CGCGATHERSLICEDCONCATS
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// One piece of the concat: a unit-step slice of `source` along the
/// concat's axis alone (whole along the others), maybe negated.
struct Piece {
  Value source;
  int64_t begin = 0, end = 0;
  bool negated = false;
};

/// `v` as a piece along `axis`, or nothing. The slice and the negation
/// must be read by the concat alone (they go away with it).
std::optional<Piece> pieceOf(Value v, int64_t axis) {
  Piece piece;
  if (auto neg = v.getDefiningOp<NegOp>()) {
    if (!neg->hasOneUse())
      return std::nullopt;
    piece.negated = true;
    v = neg.getInput();
  }
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || !slice->hasOneUse())
    return std::nullopt;
  auto input = cast<RankedTensorType>(slice.getInput().getType());
  if (!input.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> starts = slice.getStarts(), ends = slice.getEnds(),
                    steps = slice.getSteps();
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (steps[d] != 1)
      return std::nullopt;
    if (d != axis && (starts[d] != 0 || ends[d] != input.getDimSize(d)))
      return std::nullopt;
  }
  piece.source = slice.getInput();
  piece.begin = starts[axis];
  piece.end = ends[axis];
  return piece.begin < piece.end ? std::optional<Piece>(piece) : std::nullopt;
}

/// The constant [n] of `type`'s element type that is -1 where a piece is
/// negated, else 1.
Value signs(OpBuilder &b, Location loc, ArrayRef<Piece> pieces,
            Type element) {
  SmallVector<Attribute> values;
  for (const Piece &p : pieces)
    for (int64_t i = p.begin; i < p.end; ++i)
      values.push_back(b.getFloatAttr(element, p.negated ? -1.0 : 1.0));
  auto type = RankedTensorType::get({(int64_t)values.size()}, element);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
}

/// Replaces `concat` by `value` and erases it and its pieces (each read by
/// the concat alone).
void replaceAndErase(ConcatOp concat, Value value) {
  SmallVector<Operation *> dead;
  for (Value input : concat.getInputs())
    for (Operation *op = input.getDefiningOp(); op;
         op = isa<NegOp>(op) ? op->getOperand(0).getDefiningOp() : nullptr)
      dead.push_back(op);
  concat.getResult().replaceAllUsesWith(value);
  concat.erase();
  for (Operation *op : dead)
    op->erase();
}

/// Rewrites `concat` as a gather of its pieces' source (times the signs),
/// where every input is a piece of one float tensor.
void rewrite(ConcatOp concat) {
  auto type = cast<RankedTensorType>(concat.getType());
  if (!type.hasStaticShape() || !isa<FloatType>(type.getElementType()) ||
      concat.getInputs().size() < 2)
    return;
  int64_t axis = concat.getAxis();
  if (axis < 0)
    axis += type.getRank();
  SmallVector<Piece> pieces;
  for (Value input : concat.getInputs()) {
    std::optional<Piece> piece = pieceOf(input, axis);
    if (!piece || (!pieces.empty() && piece->source != pieces[0].source))
      return;
    pieces.push_back(*piece);
  }
  // Constants live at the function's top level, as the importer puts
  // weights (the buffer plan gives those, not island values, weight slots).
  Block &top = concat->getParentOfType<func::FuncOp>().getBody().front();
  OpBuilder b(top.findAncestorOpInBlock(*concat));
  Location loc = concat.getLoc();
  SmallVector<int64_t> indices;
  for (const Piece &p : pieces)
    for (int64_t i = p.begin; i < p.end; ++i)
      indices.push_back(i);
  // The pieces in order, none negated: the concat is its source.
  bool identity =
      llvm::none_of(pieces, [](const Piece &p) { return p.negated; });
  for (auto [i, index] : llvm::enumerate(indices))
    identity = identity && index == (int64_t)i;
  if (identity && pieces[0].source.getType() == type) {
    replaceAndErase(concat, pieces[0].source);
    return;
  }
  auto indexType =
      RankedTensorType::get({(int64_t)indices.size()}, b.getI64Type());
  Value index = ConstantOp::create(
      b, loc, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(indices)));
  // The gather and the product adjacent: the fuse pass then puts them in
  // one kernel.
  Value sign;
  if (llvm::any_of(pieces, [](const Piece &p) { return p.negated; }))
    sign = signs(b, loc, pieces, type.getElementType());
  b.setInsertionPoint(concat);
  Value result = GatherOp::create(b, loc, type, pieces[0].source, index,
                                  b.getI64IntegerAttr(axis));
  if (sign)
    result = MulOp::create(b, loc, type, result, sign);
  replaceAndErase(concat, result);
}

struct CgcGatherSlicedConcatsPass
    : cgc::impl::CgcGatherSlicedConcatsBase<CgcGatherSlicedConcatsPass> {
  void runOnOperation() override {
    SmallVector<ConcatOp> concats;
    getOperation().walk([&](ConcatOp op) { concats.push_back(op); });
    for (ConcatOp concat : concats)
      rewrite(concat);
  }
};

} // namespace
