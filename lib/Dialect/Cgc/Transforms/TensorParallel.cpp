//===- TensorParallel.cpp - split products over ranks (Megatron) ---------===//
//
// The program stays one function that every rank runs. A product whose
// result reaches a second product only through elementwise ops (an MLP:
// fc1, bias, GELU, fc2) is split as Megatron-LM splits it: the first
// weight by columns (each rank computes its N / ranks columns, and the
// elementwise ops between run on those columns alone), the second weight
// by rows (each rank's partial product over its columns), and the partial
// products summed by one all-reduce. A bias of the second product is added
// after the sum, once. Everything else runs on every rank in full, so each
// rank's result equals the single-GPU program's up to the order of the
// all-reduce's additions.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/CgcTraits.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace cgc {
#define GEN_PASS_DEF_CGCTENSORPARALLEL
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A product A x W of a 2-D W: the op, W's operand index and the axes of W
/// that are the product's output columns and its contraction rows.
struct Product {
  Operation *op;
  unsigned weight;
  int64_t columnAxis, rowAxis;
};

/// `op` as a Product: a matmul of a 2-D rhs, or a gemm (not transposing
/// A, whose rows must stay the output's rows).
std::optional<Product> asProduct(Operation *op) {
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    if (typeOf(matmul.getRhs()).getRank() != 2 ||
        typeOf(matmul.getLhs()).getRank() < 2)
      return std::nullopt;
    return Product{op, 1, 1, 0};
  }
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    if (gemm.getTransA())
      return std::nullopt;
    bool t = gemm.getTransB();
    return Product{op, 1, t ? 0 : 1, t ? 1 : 0};
  }
  return std::nullopt;
}

/// A column-parallel product, the row-parallel products that read its
/// result, and the elementwise ops between them.
struct ParallelBlock {
  Product first;
  SmallVector<Product> seconds;
  SetVector<Operation *> between;
};

/// The block starting at `first` split over `ranks`, if its result reaches
/// only row-parallel products, through elementwise ops whose every value
/// keeps the product's N columns as its last dim (N a multiple of ranks).
std::optional<ParallelBlock> findBlock(const Product &first, int64_t ranks) {
  Value result = first.op->getResult(0);
  int64_t columns = typeOf(result).getShape().back();
  if (ShapedType::isDynamic(columns) || columns % ranks != 0 ||
      !typeOf(first.op->getOperand(first.weight)).hasStaticShape())
    return std::nullopt;
  ParallelBlock block{first, {}, {}};
  SmallVector<Value> work{result};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      // Ops of other blocks (a loop's body) are not followed.
      if (user->getBlock() != first.op->getBlock())
        return std::nullopt;
      if (block.between.contains(user) ||
          llvm::any_of(block.seconds,
                       [&](const Product &p) { return p.op == user; }))
        continue;
      std::optional<Product> second = asProduct(user);
      if (second && user->getOperand(0) == v &&
          user->getOperand(second->weight) != v &&
          typeOf(user->getOperand(second->weight)).hasStaticShape()) {
        block.seconds.push_back(*second);
        continue;
      }
      if (!user->hasTrait<Elementwise>() || user->getNumResults() != 1)
        return std::nullopt;
      Value out = user->getResult(0);
      if (typeOf(out).getRank() == 0 || typeOf(out).getShape().back() != columns)
        return std::nullopt;
      block.between.insert(user);
      work.push_back(out);
    }
  }
  if (block.seconds.empty())
    return std::nullopt;
  return block;
}

/// `v` cut along `axis`: this rank's part (a cgc.shard before `user`).
Value shardBefore(OpBuilder &b, Operation *user, Value v, int64_t axis,
                  int64_t ranks) {
  b.setInsertionPoint(user);
  return ShardOp::create(b, user->getLoc(), v, b.getI64IntegerAttr(axis),
                         b.getI64IntegerAttr(ranks))
      .getResult();
}

/// The type of `v` with its last dim divided by `ranks`.
RankedTensorType columnsPart(Value v, int64_t ranks) {
  RankedTensorType type = typeOf(v);
  SmallVector<int64_t> shape(type.getShape());
  shape.back() /= ranks;
  return type.clone(shape);
}

/// Operands from outside the block that carry the N columns as their last
/// dim (a bias) are sharded with them; broadcast ones are kept.
void shardColumnOperands(OpBuilder &b, Operation *op, int64_t columns,
                         const SetVector<Operation *> &between, Value result,
                         int64_t ranks) {
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    if (v == result || between.contains(v.getDefiningOp()))
      continue;
    RankedTensorType type = typeOf(v);
    if (type.getRank() > 0 && type.getShape().back() == columns &&
        columns > 1)
      operand.set(shardBefore(b, op, v, type.getRank() - 1, ranks));
  }
}

/// Splits one block: the first product by columns, the ops between on
/// their part of the columns, the second products by rows, then their
/// partial products summed.
LogicalResult splitBlock(OpBuilder &b, const ParallelBlock &block,
                         int64_t ranks) {
  Operation *first = block.first.op;
  Value result = first->getResult(0);
  int64_t columns = typeOf(result).getShape().back();
  OpOperand &w1 = first->getOpOperand(block.first.weight);
  w1.set(shardBefore(b, first, w1.get(), block.first.columnAxis, ranks));
  if (auto gemm = dyn_cast<GemmOp>(first); gemm && gemm.getC())
    shardColumnOperands(b, first, columns, {}, gemm.getA(), ranks);
  result.setType(columnsPart(result, ranks));
  // Program order keeps every operand's new type set before its user's.
  SmallVector<Operation *> ordered(block.between.begin(), block.between.end());
  llvm::sort(ordered, [](Operation *x, Operation *y) {
    return x->isBeforeInBlock(y);
  });
  for (Operation *op : ordered) {
    shardColumnOperands(b, op, columns, block.between, result, ranks);
    op->getResult(0).setType(columnsPart(op->getResult(0), ranks));
  }
  for (const Product &second : block.seconds) {
    Operation *op = second.op;
    OpOperand &w2 = op->getOpOperand(second.weight);
    w2.set(shardBefore(b, op, w2.get(), second.rowAxis, ranks));
    Value sum = op->getResult(0);
    b.setInsertionPointAfter(op);
    // A gemm's bias is added once, after the sum: the product's own C
    // (times beta) would be added on every rank.
    Value bias;
    double beta = 1;
    if (auto gemm = dyn_cast<GemmOp>(op); gemm && gemm.getC()) {
      bias = gemm.getC();
      beta = gemm.getBeta().convertToDouble();
      auto bare = GemmOp::create(
          b, op->getLoc(), gemm.getA(), gemm.getB(), Value(),
          gemm.getAlphaAttr(), b.getF64FloatAttr(1.0), gemm.getTransAAttr(),
          gemm.getTransBAttr());
      op->getResult(0).replaceAllUsesWith(bare.getResult());
      op->erase();
      op = bare;
      sum = bare.getResult();
    }
    auto reduced = AllReduceOp::create(b, op->getLoc(), sum.getType(), sum,
                                       b.getI64IntegerAttr(ranks));
    Value total = reduced.getResult();
    if (bias) {
      if (beta != 1) {
        auto scale = ConstantOp::create(
            b, op->getLoc(),
            DenseElementsAttr::get(
                RankedTensorType::get({}, typeOf(bias).getElementType()),
                b.getFloatAttr(typeOf(bias).getElementType(), beta)));
        bias = MulOp::create(b, op->getLoc(), bias, scale.getResult());
      }
      total = AddOp::create(b, op->getLoc(), total, bias).getResult();
    }
    sum.replaceUsesWithIf(total, [&](OpOperand &use) {
      return use.getOwner() != reduced;
    });
  }
  return success();
}

struct TensorParallelPass
    : public cgc::impl::CgcTensorParallelBase<TensorParallelPass> {
  using CgcTensorParallelBase::CgcTensorParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 2) {
      module.emitError() << "tensor parallelism needs 2 or more ranks, got "
                         << (int64_t)ranks;
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    setRanks(module, ranks);
    int64_t split = 0, products = 0;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      // Blocks in program order; a product already split as a block's
      // second (its result now whole on every rank) may start the next.
      SmallVector<ParallelBlock> blocks;
      DenseSet<Operation *> taken;
      func.walk([&](Operation *op) {
        std::optional<Product> p = asProduct(op);
        if (!p)
          return;
        ++products;
        if (taken.contains(op))
          return;
        std::optional<ParallelBlock> block = findBlock(*p, ranks);
        if (!block ||
            llvm::any_of(block->seconds, [&](const Product &s) {
              return taken.contains(s.op);
            }))
          return;
        taken.insert(op);
        for (const Product &s : block->seconds)
          taken.insert(s.op);
        blocks.push_back(std::move(*block));
      });
      for (const ParallelBlock &block : blocks) {
        if (failed(splitBlock(b, block, ranks)))
          return signalPassFailure();
        split += 1 + block.seconds.size();
      }
    }
    if (split == 0)
      module.emitWarning()
          << "tensor parallelism over " << (int64_t)ranks
          << " ranks found no product followed (through elementwise ops) by "
             "another to split: every rank computes the whole model";
    else
      module.emitRemark() << "tensor parallelism over " << (int64_t)ranks
                          << " ranks: "
                          << split << " of " << products
                          << " products split (column- then row-parallel), "
                             "the others computed on every rank";
  }
};

} // namespace
