//===- MoveTransposes.cpp - transposes across row-wise products ----------===//
//
// A matrix product with a 2-d weight (`matmul(x, W)`, a Gemm of [M, K]
// rows) computes each row of its result from the same row of its input, so
// a transpose that reorders only the rows (it keeps the last dim) may stand
// on either side of it. Sequence-first attention (torch's
// nn.MultiheadAttention, the ViT of torchvision) transposes [N, L, E] to
// [L, N, E] before the in-projection and back after the out-projection;
// at batch 1 those move no data (--cgc-reshape-unit-transposes), at batch
// N each is a copy kernel. This pass moves them to where they meet other
// views:
//
//   matmul(T(x), W) [e(., b) ...]  ->  T(matmul(x, W) [e(., b) ...])
//       where the moved transpose then reaches only views (the reshapes,
//       transposes and gathers through which an attention reads q, k, v,
//       or another transpose it merges with); `e` elementwise with
//       operands that broadcast along the last dim (the bias);
//   T(reshape(P(reshape(T0(z)))))  ->  reshape(P(reshape(T1(z))))
//       for a product P whose rows the outer transpose reorders, where
//       its input is itself a transpose T0 (the attention's output
//       layout): the two merge into T1, which the attention writes, and
//       P's result reaches the residual add without a copy;
//   reshape(T(x))  ->  T'(reshape'(x))  where the reshape merges dims that
//       are neighbours in x too (so the transpose meets the next one);
//   T2(T1(x))  ->  T(x), and a transpose that keeps every dim goes away.
//
// Values do not change: only where rows are stored moves.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace cgc {
#define GEN_PASS_DEF_CGCMOVETRANSPOSES
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

RankedTensorType staticType(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

int64_t elementCount(ArrayRef<int64_t> sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Whether `t` moves only rows: its last dim stays last.
bool keepsLastDim(TransposeOp t) {
  ArrayRef<int64_t> perm = t.getPerm();
  return !perm.empty() && perm.back() == (int64_t)perm.size() - 1 &&
         staticType(t.getInput());
}

/// The operand whose rows a product's result rows are computed from, or
/// nothing where the product mixes rows (a batched weight, a transposed A).
Value rowOperand(Operation *product) {
  if (auto mm = dyn_cast<MatMulOp>(product)) {
    auto rhs = staticType(mm.getRhs());
    auto lhs = staticType(mm.getLhs());
    return rhs && lhs && rhs.getRank() == 2 && lhs.getRank() >= 2
               ? mm.getLhs()
               : Value();
  }
  auto gemm = dyn_cast<GemmOp>(product);
  if (!gemm || gemm.getTransA() || !staticType(gemm.getResult()))
    return Value();
  // C must be the same for every row: one element or one per column.
  if (Value c = gemm.getC()) {
    auto type = staticType(c);
    if (!type || type.getNumElements() !=
                     (type.getRank() == 0 ? 1 : type.getShape().back()) ||
        (type.getRank() == 2 && type.getDimSize(0) != 1))
      return Value();
  }
  return gemm.getA();
}

/// Whether `operand` of an elementwise op with result `type` is the same
/// for every row: one element, or dims of 1 but the last.
bool sameForEveryRow(Value operand, RankedTensorType type) {
  auto t = staticType(operand);
  if (!t || t.getRank() > type.getRank())
    return false;
  ArrayRef<int64_t> shape = t.getShape();
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (shape[d] != 1)
      return false;
  return true;
}

/// The elementwise op that reads `v` once as its only value that differs
/// by row, where `v` has no other use.
Operation *rowwiseUser(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  auto type = staticType(v);
  if (!user->hasTrait<Elementwise>() || user->getNumResults() != 1 || !type ||
      staticType(user->getResult(0)) == RankedTensorType() ||
      staticType(user->getResult(0)).getShape() != type.getShape())
    return nullptr;
  for (Value operand : user->getOperands())
    if (operand != v && !sameForEveryRow(operand, type))
      return nullptr;
  if (llvm::count(user->getOperands(), v) != 1)
    return nullptr;
  return user;
}

bool isViewOp(Operation *op) {
  return isa<ReshapeOp, TransposeOp, GatherOp>(op);
}

/// `op` recomputed on `rows` (the same rows in another order) in place of
/// `replaced`; its result type follows.
Operation *cloneOnRows(OpBuilder &b, Operation *op, Value replaced,
                       Value rows) {
  Operation *copy = b.clone(*op);
  for (OpOperand &operand : copy->getOpOperands())
    if (operand.get() == replaced)
      operand.set(rows);
  auto rowsType = cast<RankedTensorType>(rows.getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> shape(rowsType.getShape());
  shape.back() = resultType.getShape().back();
  copy->getResult(0).setType(
      RankedTensorType::get(shape, resultType.getElementType()));
  return copy;
}

/// matmul(T(x), W) and the row-wise elementwise ops after it computed on
/// x's rows, T after them (see the file comment).
bool sinkBelowProduct(TransposeOp t) {
  if (!keepsLastDim(t) || !t->hasOneUse())
    return false;
  Operation *product = *t->getUsers().begin();
  if (!isa<MatMulOp>(product) || rowOperand(product) != t.getResult() ||
      product->getBlock() != t->getBlock())
    return false;
  SmallVector<Operation *> path = {product};
  while (Operation *next = rowwiseUser(path.back()->getResult(0)))
    path.push_back(next);
  Value last = path.back()->getResult(0);
  if (last.use_empty() ||
      !llvm::all_of(last.getUsers(), [](Operation *u) { return isViewOp(u); }))
    return false;
  Value rows = t.getInput(), replaced = t.getResult();
  for (Operation *op : path) {
    OpBuilder b(op);
    Operation *copy = cloneOnRows(b, op, replaced, rows);
    replaced = op->getResult(0);
    rows = copy->getResult(0);
  }
  OpBuilder b(path.back());
  b.setInsertionPointAfter(rows.getDefiningOp());
  Value moved = TransposeOp::create(b, t.getLoc(), rows, t.getPerm());
  last.replaceAllUsesWith(moved);
  for (Operation *op : llvm::reverse(path))
    op->erase();
  t.erase();
  return true;
}

/// `v` through reshapes that nothing else reads (`chain`: them, from `v`
/// up), or `v` itself.
Value throughReshapes(Value v, SmallVector<Operation *> &chain) {
  while (auto r = v.getDefiningOp<ReshapeOp>()) {
    if (r.getShape() || !r->hasOneUse())
      break;
    chain.push_back(r);
    v = r.getInput();
  }
  return v;
}

/// Erases `ops` (each reading the next) that nothing reads any more.
void eraseUnread(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    if (!op->use_empty())
      return;
    op->erase();
  }
}

/// T(reshape(P(reshape(T0(z))))) -> reshape(P(reshape(T1(z)))) (see the
/// file comment): the rows of P's input reordered where T0 makes them.
bool hoistAboveProduct(TransposeOp t) {
  if (!keepsLastDim(t))
    return false;
  SmallVector<Operation *> below, above;
  Value out = throughReshapes(t.getInput(), below);
  Operation *product = out.getDefiningOp();
  if (!product || !isa<MatMulOp, GemmOp>(product) || !out.hasOneUse())
    return false;
  Value rowsIn = rowOperand(product);
  if (!rowsIn || !rowsIn.hasOneUse())
    return false;
  auto inner = throughReshapes(rowsIn, above).getDefiningOp<TransposeOp>();
  if (!inner || !inner->hasOneUse() || !staticType(inner.getInput()))
    return false;
  // The outer transpose's row dims must be P's rows (the reshapes below P
  // keep its columns as the last dim) and the first dims of T0's result
  // (the rest of which are P's depth K): else T moves columns or depth
  // (an ONNX DFT is a product whose columns split into [N, 2]).
  auto outType = staticType(out), rowsType = staticType(rowsIn);
  ArrayRef<int64_t> tShape = staticType(t.getInput()).getShape();
  ArrayRef<int64_t> rows = tShape.drop_back();
  ArrayRef<int64_t> innerShape = staticType(inner.getResult()).getShape();
  if (!outType || !rowsType || tShape.back() != outType.getShape().back() ||
      innerShape.size() < rows.size() ||
      innerShape.take_front(rows.size()) != rows ||
      elementCount(innerShape.drop_front(rows.size())) !=
          rowsType.getShape().back())
    return false;
  // T1 = (T's row permutation, then T0's other dims in place) after T0.
  ArrayRef<int64_t> perm = t.getPerm(), innerPerm = inner.getPerm();
  SmallVector<int64_t> merged;
  for (size_t d = 0; d < innerShape.size(); ++d)
    merged.push_back(innerPerm[d < rows.size() ? perm[d] : d]);
  OpBuilder b(inner);
  Value reordered =
      TransposeOp::create(b, inner.getLoc(), inner.getInput(), merged);
  Value newRows = reordered;
  if (!above.empty())
    newRows = ReshapeOp::create(b, inner.getLoc(), staticType(rowsIn),
                                reordered, Value(), false);
  rowsIn.replaceAllUsesWith(newRows);
  above.push_back(inner);
  eraseUnread(above);
  // A batched matmul's result has its input's row dims: now T's.
  if (newRows == reordered) {
    auto type = cast<RankedTensorType>(out.getType());
    SmallVector<int64_t> shape(staticType(reordered).getShape());
    shape.back() = type.getShape().back();
    out.setType(RankedTensorType::get(shape, type.getElementType()));
  }
  // P now computes the rows in T's order: its result, reshaped to T's.
  b.setInsertionPoint(t);
  Value result = ReshapeOp::create(b, t.getLoc(), staticType(t.getResult()),
                                   out, Value(), false);
  t.getResult().replaceAllUsesWith(result);
  t.erase();
  eraseUnread(below);
  return true;
}

/// reshape(T(x)) -> T'(reshape'(x)) where the reshape only merges runs of
/// T's dims that are also neighbours, in order, in x (a convolution's
/// patches [N, O, P1, P2] flattened to [N, O, P]): the transpose then
/// meets the one after the reshape.
bool moveReshapeAbove(ReshapeOp r) {
  auto t = r.getInput().getDefiningOp<TransposeOp>();
  auto out = staticType(r.getResult());
  if (!t || !t->hasOneUse() || r.getShape() || !out ||
      !staticType(t.getInput()))
    return false;
  ArrayRef<int64_t> shape = staticType(t.getResult()).getShape();
  ArrayRef<int64_t> inShape = staticType(t.getInput()).getShape();
  ArrayRef<int64_t> perm = t.getPerm();
  // Runs of T's dims, one per result dim: [first, end).
  SmallVector<std::pair<int64_t, int64_t>> runs;
  int64_t at = 0;
  for (int64_t size : out.getShape()) {
    int64_t first = at, count = 1;
    // A dim of 1 is its own run where T has one there too (the batch of a
    // batch-1 model: [1, O, P1, P2] flattened to [1, O, P]).
    if (size == 1 && at < (int64_t)shape.size() && shape[at] == 1) {
      runs.push_back({at, at + 1});
      ++at;
      continue;
    }
    while (at < (int64_t)shape.size() && count < size)
      count *= shape[at++];
    if (count != size || (at == first && size != 1))
      return false;
    if (at == first)
      return false; // a new dim of 1: leave it to the reshape
    for (int64_t d = first + 1; d < at; ++d)
      if (perm[d] != perm[d - 1] + 1)
        return false;
    runs.push_back({first, at});
  }
  if (at != (int64_t)shape.size())
    return false;
  // x's dims merged run by run, the runs in x's order; the new transpose
  // puts them in T's.
  SmallVector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](size_t i, size_t j) {
    return perm[runs[i].first] < perm[runs[j].first];
  });
  SmallVector<int64_t> merged, newPerm(runs.size());
  for (auto [k, i] : llvm::enumerate(order)) {
    int64_t size = 1;
    for (int64_t d = runs[i].first; d < runs[i].second; ++d)
      size *= inShape[perm[d]];
    merged.push_back(size);
    newPerm[i] = k;
  }
  OpBuilder b(r);
  auto type = RankedTensorType::get(merged, out.getElementType());
  Value flat =
      ReshapeOp::create(b, r.getLoc(), type, t.getInput(), Value(), false);
  Value moved = TransposeOp::create(b, r.getLoc(), flat, newPerm);
  r.getResult().replaceAllUsesWith(moved);
  r.erase();
  t.erase();
  return true;
}

/// T2(T1(x)) -> T(x) where T1 has no other use; a transpose that keeps
/// every dim where it is goes away.
bool mergeTransposes(TransposeOp t) {
  if (auto first = t.getInput().getDefiningOp<TransposeOp>();
      first && first->hasOneUse()) {
    SmallVector<int64_t> perm = composedPerm(first.getPerm(), t.getPerm());
    t.getInputMutable().assign(first.getInput());
    t.setPerm(perm);
    first.erase();
  }
  if (isIdentityPerm(t.getPerm())) {
    t.getResult().replaceAllUsesWith(t.getInput());
    t.erase();
    return true;
  }
  return false;
}

struct CgcMoveTransposesPass
    : cgc::impl::CgcMoveTransposesBase<CgcMoveTransposesPass> {
  void runOnOperation() override {
    SmallVector<TransposeOp> transposes;
    getOperation().walk([&](TransposeOp op) { transposes.push_back(op); });
    for (TransposeOp t : transposes)
      if (!sinkBelowProduct(t))
        hoistAboveProduct(t);
    SmallVector<ReshapeOp> reshapes;
    getOperation().walk([&](ReshapeOp op) { reshapes.push_back(op); });
    for (ReshapeOp r : reshapes)
      moveReshapeAbove(r);
    SmallVector<TransposeOp> all;
    getOperation().walk([&](TransposeOp op) { all.push_back(op); });
    for (TransposeOp t : all)
      mergeTransposes(t);
  }
};

} // namespace
