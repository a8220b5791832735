//===- TensorParallel.cpp - split products over ranks (Megatron) ---------===//
//
// The program stays one function that every rank runs. A product whose
// result reaches other products only through ops that keep one of its
// dims split is split as Megatron-LM splits a transformer: the first
// weight by columns, the values after it to this rank's part (a dim each:
// the columns, then after a reshape to heads the heads dim, followed
// through transposes, softmax and the batched products of attention), the
// weights of the products it reaches by rows (each rank's partial product
// over its part), and the partial products summed by one all-reduce; a
// bias of those products is added after the sum, once. A fused QKV
// product's columns are three segments (a split separates them): each
// rank takes its heads of all three. An MLP (fc1, bias, GELU, fc2) and an
// attention block (QKV, heads, the output projection) are each one such
// block. A product that starts no block but whose weight is big (a
// language model's vocabulary projection) is split by columns alone, its
// parts gathered by an all-gather: its result is the single-GPU one
// exactly. Everything else runs on every rank in full, so each rank's
// result equals the single-GPU program's up to the order of the
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

/// How a value of a block is split: its dim `dim` holds this rank's part,
/// cut from each of `groups` equal segments (a fused QKV product's columns
/// are Q, K and V until a split separates them).
struct Split {
  int64_t dim, groups = 1;
};

/// A column-parallel product, the row-parallel products that read what it
/// leads to, and the ops between them with how each value is split.
struct ParallelBlock {
  Product first;
  /// Products met as another operand of an elementwise op of the block
  /// (SwiGLU's up projection beside the gate): column-parallel too.
  SmallVector<Product> alsoFirst;
  SmallVector<Product> seconds;
  SetVector<Operation *> between;
  DenseMap<Value, Split> splits;
};

/// For a reshape without a shape operand: the result's split, where the
/// input's split dim leads its group of reshaped dims (its parts stay
/// contiguous). Ungrouped, the group's leading result dim takes it (the
/// columns to [heads, head size]); grouped by G, a leading result dim of G
/// is the segments and the next takes it ([3, heads x head size] of a
/// fused QKV). An ungrouped split reshaped to a leading dim that does not
/// divide by `ranks`, followed by one that does, may be segments:
/// `groupsSeen` says how many, and the finder starts again.
std::optional<Split> reshapedSplit(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                   Split split, int64_t ranks,
                                   int64_t &groupsSeen) {
  // Walk both shapes in groups of equal products.
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    size_t groupIn = i, groupOut = j;
    int64_t a = i < in.size() ? in[i++] : 1, b = j < out.size() ? out[j++] : 1;
    while (a != b) {
      if (a < b && i < in.size())
        a *= in[i++];
      else if (b < a && j < out.size())
        b *= out[j++];
      else
        return std::nullopt;
    }
    if (split.dim < (int64_t)groupIn || split.dim >= (int64_t)i)
      continue;
    auto leadingIn = llvm::find_if(in.slice(groupIn, i - groupIn),
                                   [](int64_t d) { return d != 1; });
    if (leadingIn - in.begin() != split.dim)
      return std::nullopt;
    SmallVector<int64_t> leadingOut;
    for (size_t d = groupOut; d < j; ++d)
      if (out[d] != 1)
        leadingOut.push_back(d);
    if (leadingOut.empty())
      return std::nullopt;
    int64_t first = out[leadingOut[0]];
    bool secondDivides =
        leadingOut.size() > 1 && out[leadingOut[1]] % ranks == 0;
    if (split.groups == 1) {
      if (first % ranks == 0)
        return Split{leadingOut[0], 1};
      if (secondDivides)
        groupsSeen = first;
      return std::nullopt;
    }
    if (first != split.groups || !secondDivides)
      return std::nullopt;
    return Split{leadingOut[1], 1};
  }
  return std::nullopt;
}

/// Block discovery: follows values from the first product forward, giving
/// each its Split, until every path ends in a row-parallel product.
class BlockFinder {
public:
  BlockFinder(const Product &first, int64_t ranks, int64_t groups)
      : ranks(ranks) {
    block.first = first;
    Value result = first.op->getResult(0);
    block.splits[result] = {typeOf(result).getRank() - 1, groups};
    work.push_back(result);
  }

  /// The block, or nothing when a path leaves it unsplittable; `groups`
  /// set when a split op says the first product's columns are segments.
  std::optional<ParallelBlock> run(int64_t &groupsSeen) {
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers())
        if (!visit(user, v, groupsSeen))
          return std::nullopt;
    }
    if (block.seconds.empty())
      return std::nullopt;
    // Every use of a split value is in the block (a product left waiting
    // for its other operand is not).
    for (auto &entry : block.splits)
      for (Operation *user : entry.first.getUsers())
        if (!seen(user))
          return std::nullopt;
    return std::move(block);
  }

private:
  int64_t ranks;
  ParallelBlock block;
  SmallVector<Value> work;

  bool seen(Operation *op) const {
    return block.between.contains(op) ||
           llvm::any_of(block.seconds,
                        [&](const Product &p) { return p.op == op; });
  }

  /// Records `v`'s split (its dim must divide by ranks x groups).
  bool give(Value v, Split split) {
    int64_t size = typeOf(v).getDimSize(split.dim);
    if (ShapedType::isDynamic(size) || size % (ranks * split.groups) != 0)
      return false;
    auto [it, inserted] = block.splits.try_emplace(v, split);
    if (!inserted)
      return it->second.dim == split.dim && it->second.groups == split.groups;
    work.push_back(v);
    return true;
  }

  bool visit(Operation *user, Value v, int64_t &groupsSeen) {
    // Ops of other blocks (a loop's body) are not followed.
    if (user->getBlock() != block.first.op->getBlock())
      return false;
    // An elementwise op is checked again as each split operand arrives.
    if (seen(user))
      return !user->hasTrait<Elementwise>() || visitElementwise(user);
    Split split = block.splits.lookup(v);
    std::optional<Product> second = asProduct(user);
    if (second && user->getOperand(0) == v &&
        !block.splits.count(user->getOperand(second->weight)) &&
        typeOf(user->getOperand(second->weight)).hasStaticShape()) {
      if (split.dim != typeOf(v).getRank() - 1 || split.groups != 1)
        return false;
      block.seconds.push_back(*second);
      return true;
    }
    if (auto matmul = dyn_cast<MatMulOp>(user)) {
      // Waits for its other operand; run() refuses it if that never comes.
      if (!block.splits.count(matmul.getLhs()) ||
          !block.splits.count(matmul.getRhs()))
        return true;
      block.between.insert(user);
      return visitBatchedProduct(matmul);
    }
    if (user->getNumResults() != 1 && !isa<SplitOp>(user))
      return false;
    block.between.insert(user);
    if (user->hasTrait<Elementwise>())
      return visitElementwise(user);
    if (auto splitOp = dyn_cast<SplitOp>(user))
      return visitSplit(splitOp, split, groupsSeen);
    Value out = user->getResult(0);
    if (auto reshape = dyn_cast<ReshapeOp>(user)) {
      if (reshape.getShape())
        return false;
      std::optional<Split> reshaped =
          reshapedSplit(typeOf(v).getShape(), typeOf(out).getShape(), split,
                        ranks, groupsSeen);
      return reshaped && give(out, *reshaped);
    }
    if (auto gather = dyn_cast<GatherOp>(user)) {
      // Along another dim, with indices from outside (Q, K or V of a
      // stacked QKV): the split dim moves by the indices' rank less one.
      int64_t axis = gather.getAxis();
      if (gather.getInput() != v || block.splits.count(gather.getIndices()) ||
          axis == split.dim)
        return false;
      int64_t shift = typeOf(gather.getIndices()).getRank() - 1;
      return give(out, {split.dim < axis ? split.dim : split.dim + shift,
                        split.groups});
    }
    if (auto transpose = dyn_cast<TransposeOp>(user)) {
      auto at = llvm::find(transpose.getPerm(), split.dim);
      return give(out, {at - transpose.getPerm().begin(), split.groups});
    }
    if (isa<SoftmaxOp, LogSoftmaxOp>(user)) {
      int64_t axis = user->getAttrOfType<IntegerAttr>("axis").getInt();
      if (axis < 0)
        axis += typeOf(v).getRank();
      return axis != split.dim && give(out, split);
    }
    return false;
  }

  /// An elementwise op: its split operands agree on the (right-aligned)
  /// dim; its other operands are sharded where they span that dim.
  bool visitElementwise(Operation *op) {
    Value out = op->getResult(0);
    int64_t rank = typeOf(out).getRank();
    std::optional<Split> result;
    for (Value operand : op->getOperands()) {
      auto it = block.splits.find(operand);
      if (it == block.splits.end())
        continue;
      Split aligned{it->second.dim + rank - typeOf(operand).getRank(),
                    it->second.groups};
      if (result && (result->dim != aligned.dim ||
                     result->groups != aligned.groups))
        return false;
      result = aligned;
    }
    if (!result || !give(out, *result))
      return false;
    // A value beside the split operands computed from another product by
    // elementwise ops alone (SwiGLU's up projection, or its gate, beside
    // the other) starts from a product split by columns as well: else
    // every rank would compute it whole to use its part. Its ops join the
    // block as the walk reaches them from that product.
    for (Value operand : op->getOperands()) {
      int64_t operandRank = typeOf(operand).getRank();
      if (operandRank == 0 || block.splits.count(operand) ||
          result->dim - (rank - operandRank) != operandRank - 1)
        continue;
      std::optional<Product> product = upstreamProduct(operand);
      if (!product)
        continue;
      Value columns = product->op->getResult(0);
      if (block.splits.count(columns) ||
          typeOf(columns).getShape() != typeOf(operand).getShape() ||
          product->op->getBlock() != block.first.op->getBlock() ||
          !typeOf(product->op->getOperand(product->weight)).hasStaticShape())
        continue;
      if (!give(columns, {operandRank - 1, result->groups}))
        return false;
      block.alsoFirst.push_back(*product);
    }
    return true;
  }

  /// The one product that `v` is computed from by elementwise ops alone
  /// (constants and broadcast operands aside), within a few ops.
  std::optional<Product> upstreamProduct(Value v) {
    SmallVector<Value> work{v};
    DenseSet<Value> visited;
    std::optional<Product> found;
    while (!work.empty()) {
      Value at = work.pop_back_val();
      if (!visited.insert(at).second)
        continue;
      Operation *def = at.getDefiningOp();
      if (!def || visited.size() > 16)
        return std::nullopt;
      if (std::optional<Product> p = asProduct(def)) {
        if (found && found->op != def)
          return std::nullopt;
        found = p;
        continue;
      }
      if (isa<ConstantOp>(def))
        continue;
      if (!def->hasTrait<Elementwise>())
        return std::nullopt;
      for (Value operand : def->getOperands())
        if (typeOf(operand).getShape() == typeOf(at).getShape())
          work.push_back(operand);
    }
    return found;
  }

  /// A split along the split dim into as many equal parts as it has groups
  /// (Q, K and V) gives each part its own split; along another dim each
  /// part keeps it. A split into equal parts of ungrouped columns says
  /// they were groups: `groupsSeen`, and the finder starts again.
  bool visitSplit(SplitOp op, Split split, int64_t &groupsSeen) {
    int64_t parts = op.getNumResults();
    bool equal = llvm::all_equal(op.getSizes());
    if ((int64_t)op.getAxis() != split.dim) {
      for (Value out : op.getResults())
        if (!give(out, split))
          return false;
      return true;
    }
    if (!equal)
      return false;
    if (split.groups != parts) {
      if (split.groups == 1 && parts > 1)
        groupsSeen = parts;
      return false;
    }
    for (Value out : op.getResults())
      if (!give(out, {split.dim, 1}))
        return false;
    return true;
  }

  /// A product of two split values (attention's Q K^T and P V): both split
  /// on the same batch dim (heads), which the result keeps.
  bool visitBatchedProduct(MatMulOp op) {
    auto lhs = block.splits.find(op.getLhs()),
         rhs = block.splits.find(op.getRhs());
    int64_t rank = typeOf(op.getResult()).getRank();
    if (lhs == block.splits.end() || rhs == block.splits.end() ||
        typeOf(op.getLhs()).getRank() != rank ||
        typeOf(op.getRhs()).getRank() != rank ||
        lhs->second.dim != rhs->second.dim || lhs->second.dim >= rank - 2 ||
        lhs->second.groups != 1 || rhs->second.groups != 1)
      return false;
    return give(op.getResult(), lhs->second);
  }
};

/// The block starting at `first`, if every path from its result ends in a
/// row-parallel product; the first product's columns may be grouped (a
/// fused QKV).
std::optional<ParallelBlock> findBlock(const Product &first, int64_t ranks) {
  int64_t columns = typeOf(first.op->getResult(0)).getShape().back();
  if (!typeOf(first.op->getOperand(first.weight)).hasStaticShape() ||
      ShapedType::isDynamic(columns) || columns % ranks != 0)
    return std::nullopt;
  int64_t seen = 0;
  std::optional<ParallelBlock> block =
      BlockFinder(first, ranks, /*groups=*/1).run(seen);
  if (!block && seen > 1 && columns % (ranks * seen) == 0)
    block = BlockFinder(first, ranks, seen).run(seen);
  return block;
}

/// `v` cut along `axis` (of `groups` segments): this rank's part, a
/// cgc.shard before `user`.
Value shardBefore(OpBuilder &b, Operation *user, Value v, Split split,
                  int64_t ranks) {
  b.setInsertionPoint(user);
  return ShardOp::create(b, user->getLoc(), v,
                         b.getI64IntegerAttr(split.dim),
                         b.getI64IntegerAttr(ranks),
                         b.getI64IntegerAttr(split.groups))
      .getResult();
}

/// The type of `v` with its split dim divided by `ranks`.
RankedTensorType partType(Value v, Split split, int64_t ranks) {
  RankedTensorType type = typeOf(v);
  SmallVector<int64_t> shape(type.getShape());
  shape[split.dim] /= ranks;
  return type.clone(shape);
}

/// Operands of `op` from outside the block that span the split dim of its
/// result (a bias) are sharded with it; broadcast ones are kept.
void shardOuterOperands(OpBuilder &b, Operation *op, Split resultSplit,
                        const DenseMap<Value, Split> &splits, int64_t ranks) {
  int64_t rank = typeOf(op->getResult(0)).getRank();
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    if (splits.count(v))
      continue;
    RankedTensorType type = typeOf(v);
    int64_t dim = resultSplit.dim - (rank - type.getRank());
    if (dim >= 0 && type.getDimSize(dim) != 1)
      operand.set(shardBefore(b, op, v, {dim, resultSplit.groups}, ranks));
  }
}

/// A column-parallel product: its weight (and a gemm's C) cut by columns
/// (of `groups` segments), so that it computes this rank's columns.
void shardColumns(OpBuilder &b, const Product &product, int64_t groups,
                  int64_t ranks) {
  Operation *op = product.op;
  OpOperand &w = op->getOpOperand(product.weight);
  w.set(shardBefore(b, op, w.get(), {product.columnAxis, groups}, ranks));
  // A gemm's C spans the columns unless it broadcasts along them.
  if (auto gemm = dyn_cast<GemmOp>(op); gemm && gemm.getC()) {
    OpOperand &c = op->getOpOperand(2);
    RankedTensorType type = typeOf(c.get());
    if (type.getRank() > 0 && type.getShape().back() != 1)
      c.set(shardBefore(b, op, c.get(), {type.getRank() - 1, groups}, ranks));
  }
}

/// Splits one block: the first product by columns, the values between to
/// their parts (and the split ops' sizes with them), the second products
/// by rows, then their partial products summed.
void splitBlock(OpBuilder &b, const ParallelBlock &block, int64_t ranks) {
  SmallVector<Product> firsts{block.first};
  firsts.append(block.alsoFirst.begin(), block.alsoFirst.end());
  for (const Product &product : firsts)
    shardColumns(b, product,
                 block.splits.lookup(product.op->getResult(0)).groups, ranks);
  for (auto &entry : block.splits) {
    Value value = entry.first;
    value.setType(partType(value, entry.second, ranks));
  }
  for (Operation *op : block.between) {
    if (op->hasTrait<Elementwise>())
      shardOuterOperands(b, op, block.splits.lookup(op->getResult(0)),
                         block.splits, ranks);
    if (auto splitOp = dyn_cast<SplitOp>(op)) {
      Split in = block.splits.lookup(splitOp.getInput());
      if ((int64_t)splitOp.getAxis() == in.dim) {
        SmallVector<int64_t> sizes(splitOp.getSizes());
        for (int64_t &size : sizes)
          size /= ranks;
        splitOp.setSizes(sizes);
      }
    }
  }
  for (const Product &second : block.seconds) {
    Operation *op = second.op;
    OpOperand &w2 = op->getOpOperand(second.weight);
    w2.set(shardBefore(b, op, w2.get(), {second.rowAxis, 1}, ranks));
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
}

/// Splits a product that starts no block by columns and gathers the parts:
/// rank r computes its N/R columns, an all-gather stacks the ranks' parts
/// ([R, ..., N/R]), a transpose puts each rank's beside the others' ([...,
/// R, N/R]) and a reshape joins them ([..., N]) on every rank.
void splitGathered(OpBuilder &b, const Product &product, int64_t ranks) {
  Operation *op = product.op;
  Value result = op->getResult(0);
  RankedTensorType whole = typeOf(result);
  int64_t last = whole.getRank() - 1;
  shardColumns(b, product, /*groups=*/1, ranks);
  result.setType(partType(result, {last, 1}, ranks));
  Location loc = op->getLoc();
  b.setInsertionPointAfter(op);
  SmallVector<int64_t> stacked{ranks};
  llvm::append_range(stacked, typeOf(result).getShape());
  auto gathered = AllGatherOp::create(
      b, loc, RankedTensorType::get(stacked, whole.getElementType()), result,
      b.getI64IntegerAttr(ranks));
  SmallVector<int64_t> perm;
  for (int64_t d = 1; d <= last; ++d)
    perm.push_back(d);
  perm.push_back(0);
  perm.push_back(last + 1);
  auto beside = TransposeOp::create(b, loc, gathered.getResult(),
                                    b.getDenseI64ArrayAttr(perm));
  auto joined = ReshapeOp::create(b, loc, whole, beside.getResult(), Value());
  result.replaceUsesWithIf(joined.getResult(), [&](OpOperand &use) {
    return use.getOwner() != gathered;
  });
}

/// The bytes of the weight a product reads.
int64_t weightBytes(const Product &p) {
  RankedTensorType type = typeOf(p.op->getOperand(p.weight));
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// The annotated axis of the weight a product reads (cgc.shard_axis from
/// an ONNX multi-device annotation), if its weight is such a constant.
std::optional<int64_t> annotatedAxis(const Product &p) {
  auto constant = p.op->getOperand(p.weight).getDefiningOp<ConstantOp>();
  return constant ? getShardAxis(constant) : std::nullopt;
}

/// Whether `block` splits its products' weights exactly as their
/// annotations say: the first products' by columns, the seconds' by rows.
bool followsAnnotations(const ParallelBlock &block) {
  auto is = [](const Product &p, int64_t axis) {
    return annotatedAxis(p) == axis;
  };
  if (!is(block.first, block.first.columnAxis))
    return false;
  for (const Product &p : block.alsoFirst)
    if (!is(p, p.columnAxis))
      return false;
  return llvm::all_of(block.seconds,
                      [&](const Product &p) { return is(p, p.rowAxis); });
}

/// After an annotated split: every annotated weight must be read through
/// cgc.shard ops along its axis only. The first one that is not is an
/// error at the product that reads it.
LogicalResult checkAnnotationsFollowed(ModuleOp module, int64_t ranks) {
  WalkResult result = module.walk([&](ConstantOp constant) {
    std::optional<int64_t> axis = getShardAxis(constant);
    if (!axis)
      return WalkResult::advance();
    for (Operation *user : constant->getUsers()) {
      auto shard = dyn_cast<ShardOp>(user);
      if (shard && (int64_t)shard.getAxis() == *axis)
        continue;
      auto name = dyn_cast<NameLoc>(constant.getLoc());
      InFlightDiagnostic diag = user->emitError();
      diag << "the ONNX annotation shards "
           << (name ? "the weight '" + name.getName().getValue().str() + "'"
                    : std::string("this product's weight"))
           << " along axis " << *axis << " over " << ranks
           << " devices, but cgc cannot split this product so: it splits a "
              "product of a weight by columns where its result reaches "
              "other products through ops it can split, and those by rows, "
              "or a product by columns alone, its result gathered "
              "(docs/multi-gpu.md)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct TensorParallelPass
    : public cgc::impl::CgcTensorParallelBase<TensorParallelPass> {
  using CgcTensorParallelBase::CgcTensorParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 2 || ranks > kMaxRanks) {
      module.emitError() << "tensor parallelism needs 2 to " << kMaxRanks
                         << " ranks, got " << (int64_t)ranks;
      return signalPassFailure();
    }
    // An ONNX model's multi-device annotations decide which products are
    // split; without them the pass finds every block it can.
    std::optional<int64_t> devices = getDevices(module);
    if (devices && *devices != ranks) {
      module.emitError() << "the model's multi-device annotations shard its "
                            "weights over "
                         << *devices << " devices, not " << (int64_t)ranks;
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    setRanks(module, ranks);
    int64_t split = 0, products = 0, gathered = 0;
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
        // Not inside an If or Loop body: the all-reduce would run inside
        // a conditional graph node, where NCCL calls cannot.
        if (taken.contains(op) || op->getParentOp() != func)
          return;
        if (devices && !annotatedAxis(*p))
          return;
        std::optional<ParallelBlock> block = findBlock(*p, ranks);
        auto isTaken = [&](const Product &s) { return taken.contains(s.op); };
        if (!block || llvm::any_of(block->seconds, isTaken) ||
            llvm::any_of(block->alsoFirst, isTaken) ||
            (devices && !followsAnnotations(*block)))
          return;
        taken.insert(op);
        for (const Product &s : block->seconds)
          taken.insert(s.op);
        for (const Product &s : block->alsoFirst)
          taken.insert(s.op);
        blocks.push_back(std::move(*block));
      });
      for (const ParallelBlock &block : blocks) {
        splitBlock(b, block, ranks);
        split += 1 + block.alsoFirst.size() + block.seconds.size();
      }
      SmallVector<Product> alone =
          gatheredProducts(func, taken, devices.has_value());
      for (const Product &p : alone)
        splitGathered(b, p, ranks);
      gathered += alone.size();
    }
    if (devices) {
      if (failed(checkAnnotationsFollowed(module, ranks)))
        return signalPassFailure();
      module.walk([](ConstantOp constant) { clearShardAxis(constant); });
      clearDevices(module);
    }
    if (split + gathered == 0)
      module.emitWarning()
          << "tensor parallelism over " << (int64_t)ranks
          << " ranks found no product whose result reaches other products "
             "through ops it can split, and no weight of "
          << (int64_t)gatherMinBytes
          << " bytes or more to split by columns alone: every rank computes "
             "the whole model";
    else
      module.emitRemark() << "tensor parallelism over " << (int64_t)ranks
                          << " ranks: " << split << " of " << products
                          << " products split (column- then row-parallel), "
                          << gathered
                          << " by columns alone (results gathered), the "
                             "others computed on every rank";
  }

  /// The products, outside every block and in the function's own body,
  /// that are split by columns with their results gathered: with annotations, those whose weight is
  /// annotated by columns; without, those whose weight has at least
  /// gatherMinBytes. Their columns must divide by the ranks.
  SmallVector<Product> gatheredProducts(func::FuncOp func,
                                        const DenseSet<Operation *> &taken,
                                        bool annotated) {
    SmallVector<Product> chosen;
    func.walk([&](Operation *op) {
      std::optional<Product> p = asProduct(op);
      // Not inside an If or Loop body: NCCL calls cannot run inside
      // conditional graph nodes.
      if (!p || taken.contains(op) || op->getParentOp() != func)
        return;
      Value weight = op->getOperand(p->weight);
      int64_t columns = typeOf(weight).getDimSize(p->columnAxis);
      if (!weight.getDefiningOp<ConstantOp>() ||
          ShapedType::isDynamic(columns) || columns % ranks != 0)
        return;
      bool wanted = annotated ? annotatedAxis(*p) == p->columnAxis
                              : weightBytes(*p) >= gatherMinBytes;
      if (wanted)
        chosen.push_back(*p);
    });
    return chosen;
  }
};

} // namespace
