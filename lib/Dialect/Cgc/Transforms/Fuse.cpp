//===- Fuse.cpp - group island ops into kernels ---------------------------===//
//
// Each island becomes a sequence of `cgc.kernel` groups, one GPU kernel each.
// Grouping is greedy over program order: a group is opened by its anchor
// (gemm/matmul, a normalization, or an elementwise op) and absorbs the
// following elementwise ops whose result has the group's output shape and
// that read at least one value of the group. Everything the group computes
// that is used later is yielded, so fusion never drops a value. Merges
// follow: elementwise groups into the later elementwise group that reads
// them (mergeElementwiseChains: program order interleaves independent
// chains, as a training step's optimizer does), scalar computations copied
// into the groups that read them (copyScalarProducers), attention
// (mergeAttention), a reduction over the last axis with the elementwise
// group that reads it back over the rows (mergeRowReductions) and a layer
// norm into the matmul that reads it (mergeNormIntoMatmul).
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"
#include "cgc/Dialect/Cgc/Analysis/Views.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/Dialect/Cgc/Transforms/PrecisionPolicy.h"
#include "cgc/Dialect/Cgc/Transforms/RegionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace cgc {
#define GEN_PASS_DEF_CGCFUSE
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// Ops codegen can emit as a per-element expression over broadcast operands.
bool isElementwise(Operation *op) { return op->hasTrait<Elementwise>(); }

/// A concat needs no kernel when each input is a contiguous chunk of the
/// result (every dim before the axis is 1) and each input is computed by a
/// kernel of the same block for this concat alone: the producers then write
/// straight into their chunk (the buffer plan places them there).
bool isInPlaceConcat(ConcatOp concat) {
  auto type = cast<RankedTensorType>(concat.getType());
  if (!type.hasStaticShape())
    return false;
  for (int64_t d = 0; d < (int64_t)concat.getAxis(); ++d)
    if (type.getDimSize(d) != 1)
      return false;
  llvm::SmallPtrSet<Value, 4> seen;
  for (Value input : concat.getInputs()) {
    Operation *def = input.getDefiningOp();
    if (!def || isa<ConstantOp, ReshapeOp>(def) ||
        def->getBlock() != concat->getBlock() || !input.hasOneUse() ||
        !seen.insert(input).second)
      return false;
    auto safety = dyn_cast<CaptureSafetyOpInterface>(def);
    if (safety && !safety.getCaptureUnsafeReason().empty())
      return false;
  }
  return true;
}

/// Ops that need no kernel: the result is a view of the input's buffer
/// (reshape), or the inputs are views of the result's (in-place concat).
bool isAlias(Operation *op) {
  if (isa<ReshapeOp>(op))
    return true;
  // Only islands are planned chunk by chunk; eager bodies copy instead.
  auto concat = dyn_cast<ConcatOp>(op);
  if (!concat || !isa<IslandOp>(op->getParentOp()) || !isInPlaceConcat(concat))
    return false;
  setInPlace(op);
  return true;
}

KernelKind anchorKind(Operation *op) {
  if (isa<MatMulOp, GemmOp>(op))
    return KernelKind::matmul;
  if (isa<ConvOp>(op))
    return KernelKind::conv;
  if (isa<ReductionOpInterface>(op))
    return KernelKind::reduce;
  if (isa<LayerNormOp, SoftmaxOp, LogSoftmaxOp>(op))
    return KernelKind::norm;
  if (isElementwise(op))
    return KernelKind::elementwise;
  return KernelKind::single;
}

int64_t numElementsOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

ArrayRef<int64_t> outputShape(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getShape();
}

struct Group {
  SmallVector<Operation *> ops;
  KernelKind kind = KernelKind::single;
  llvm::SmallPtrSet<Value, 8> values;
  /// The index space of the kernel: its anchor's result shape, which every
  /// absorbed consumer must have.
  SmallVector<int64_t> shape;
};

bool canAbsorb(const Group &group, Operation *op) {
  // Of the single-op templates only the gather stores each element once
  // through the epilogue-aware store (an embedding lookup plus positions).
  bool singleTakesEpilogue =
      group.kind == KernelKind::single && isa<GatherOp>(group.ops.front());
  if ((group.kind == KernelKind::single && !singleTakesEpilogue) || !isElementwise(op) ||
      op->getNumResults() != 1 ||
      outputShape(op) != ArrayRef<int64_t>(group.shape))
    return false;
  return llvm::any_of(op->getOperands(),
                      [&](Value v) { return group.values.contains(v); });
}

/// A normalization may take the elementwise group right before it as its
/// prologue: the group computes exactly the normalized input, of the same
/// shape, and nothing it computes is used anywhere else (the template
/// recomputes the prologue in each of its passes and stores nothing of it).
bool canTakeAsPrologue(const Group &group, Operation *op) {
  if (group.kind != KernelKind::elementwise ||
      !(isa<LayerNormOp, SoftmaxOp, LogSoftmaxOp>(op) ||
        anchorKind(op) == KernelKind::reduce))
    return false;
  Value input = op->getOperand(0);
  if (!group.values.contains(input) ||
      ArrayRef<int64_t>(group.shape) !=
          cast<RankedTensorType>(input.getType()).getShape())
    return false;
  for (Operation *member : group.ops)
    for (Value v : member->getResults())
      for (Operation *user : v.getUsers())
        if (user != op && !llvm::is_contained(group.ops, user))
          return false;
  // Scale and bias must come from outside the group.
  return llvm::all_of(op->getOperands().drop_front(), [&](Value v) {
    return !group.values.contains(v);
  });
}

/// Keeps the groups not marked `erased` (merged into others), in order.
void dropErased(SmallVector<Group> &groups, ArrayRef<bool> erased) {
  SmallVector<Group> kept;
  for (auto [i, g] : llvm::enumerate(groups))
    if (!erased[i])
      kept.push_back(std::move(g));
  groups = std::move(kept);
}

/// Group `a` may join `b`, a later group, by moving its ops down to just
/// before b's first op: both elementwise over one shape, b reads a value of
/// a, and nothing between them reads one (every other user is after b's
/// first op, so the moved ops still dominate their uses).
bool canMergeDown(const Group &a, const Group &b) {
  if (a.kind != KernelKind::elementwise || b.kind != KernelKind::elementwise ||
      a.shape != b.shape)
    return false;
  Operation *bFront = b.ops.front();
  Block *block = bFront->getBlock();
  bool read = false;
  for (Operation *op : a.ops)
    for (Value v : op->getResults())
      for (Operation *user : v.getUsers()) {
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top || llvm::is_contained(a.ops, top))
          continue;
        if (llvm::is_contained(b.ops, top)) {
          read = true;
          continue;
        }
        if (top->isBeforeInBlock(bFront))
          return false;
      }
  return read;
}

/// Elementwise groups over one shape that feed a later elementwise group
/// join it, one kernel instead of several (AdamW's moments, denominator
/// and update, which program order interleaves with the other weights').
void mergeElementwiseChains(SmallVector<Group> &groups) {
  SmallVector<bool> erased(groups.size(), false);
  for (size_t i = 0; i < groups.size(); ++i) {
    for (size_t j = i + 1; j < groups.size(); ++j) {
      if (erased[j] || !canMergeDown(groups[i], groups[j]))
        continue;
      Group &b = groups[j];
      Operation *front = b.ops.front();
      for (Operation *op : groups[i].ops)
        op->moveBefore(front);
      b.ops.insert(b.ops.begin(), groups[i].ops.begin(), groups[i].ops.end());
      b.values.insert(groups[i].values.begin(), groups[i].values.end());
      erased[i] = true;
      break;
    }
  }
  dropErased(groups, erased);
}

/// A group of scalar elementwise ops over scalars (a bias correction
/// 1 - b^t, a step size) is copied into every elementwise group that reads
/// it: each thread recomputes a few scalar operations instead of the step
/// launching a kernel for them. The group goes away when nothing else
/// reads it.
void copyScalarProducers(SmallVector<Group> &groups) {
  auto isScalar = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() == 0;
  };
  SmallVector<bool> erased(groups.size(), false);
  for (size_t i = 0; i < groups.size(); ++i) {
    Group &a = groups[i];
    bool scalar = a.kind == KernelKind::elementwise &&
                  llvm::all_of(a.ops, [&](Operation *op) {
                    return llvm::all_of(op->getOperands(), isScalar) &&
                           llvm::all_of(op->getResults(), isScalar);
                  });
    if (!scalar)
      continue;
    Block *block = a.ops.front()->getBlock();
    for (size_t j = i + 1; j < groups.size(); ++j) {
      Group &b = groups[j];
      if (erased[j] || b.kind != KernelKind::elementwise)
        continue;
      bool reads = llvm::any_of(a.ops, [&](Operation *op) {
        return llvm::any_of(op->getUsers(), [&](Operation *user) {
          return llvm::is_contained(b.ops, block->findAncestorOpInBlock(*user));
        });
      });
      if (!reads)
        continue;
      IRMapping copies;
      OpBuilder builder(b.ops.front());
      SmallVector<Operation *> cloned;
      for (Operation *op : a.ops)
        cloned.push_back(builder.clone(*op, copies));
      for (Operation *op : b.ops)
        for (OpOperand &use : op->getOpOperands())
          if (Value copy = copies.lookupOrNull(use.get()))
            use.set(copy);
      b.ops.insert(b.ops.begin(), cloned.begin(), cloned.end());
      for (Operation *op : cloned)
        b.values.insert(op->getResult(0));
    }
    bool unread = llvm::all_of(a.ops, [&](Operation *op) {
      return llvm::all_of(op->getUsers(), [&](Operation *user) {
        return llvm::is_contained(a.ops, user);
      });
    });
    if (unread) {
      for (Operation *op : llvm::reverse(a.ops))
        op->erase();
      erased[i] = true;
    }
  }
  dropErased(groups, erased);
}

/// Whether the ops of `chain` (from the last, which reads `root`, to the
/// first) make a strided view of `root` (a split's result: of its input).
bool isStridedViewOf(Value root, ArrayRef<Operation *> chain) {
  auto type = cast<RankedTensorType>(root.getType());
  if (!type.hasStaticShape())
    return false;
  SmallVector<std::pair<Operation *, unsigned>> steps;
  StridedView start = contiguousView(type.getShape());
  if (auto split = root.getDefiningOp<SplitOp>()) {
    start = contiguousView(
        cast<RankedTensorType>(split.getInput().getType()).getShape());
    steps.push_back({split, cast<OpResult>(root).getResultNumber()});
  }
  for (Operation *op : llvm::reverse(chain))
    steps.push_back({op, 0});
  return viewThrough(start, steps).has_value();
}

/// The view chains through which an attention reads its operands Q, Kt
/// and V (`operands`): from each operand up through transposes and
/// one-index gathers that are kernels of their own (`lone`) and reshapes
/// that are in no group (`grouped`), to its root, the first value that is
/// not such a view, in `block`. The chains may share ops (torch's multi-head
/// attention picks q, k and v by gathers from one transposed projection),
/// but every value on them must be read by the chains alone: a chain is cut
/// below an op whose result something else reads, and above the ops
/// without which it is a strided view of its root. `views`: the chains'
/// ops, each once, in program order; `roots`: one per operand.
void viewChains(ArrayRef<Value> operands, Block *block,
                function_ref<bool(Operation *)> lone,
                function_ref<bool(Operation *)> grouped,
                SmallVector<Operation *> &views, SmallVector<Value> &roots) {
  SmallVector<SmallVector<Operation *>> chains;
  for (Value operand : operands) {
    SmallVector<Operation *> chain;
    Value v = operand;
    while (Operation *def = v.getDefiningOp()) {
      if (def->getBlock() != block ||
          !((isa<TransposeOp, GatherOp>(def) && isViewOp(def) && lone(def)) ||
            (isa<ReshapeOp>(def) && !grouped(def))))
        break;
      chain.push_back(def);
      v = def->getOperand(0);
    }
    chains.push_back(std::move(chain));
  }
  // Cut every chain below the first op whose result is read outside the
  // chains (the operand itself: by anything but its product), and drop
  // the chains that are no strided view of their roots, until neither
  // changes anything.
  auto rootOf = [&](size_t c) {
    return chains[c].empty() ? operands[c]
                             : chains[c].back()->getOperand(0);
  };
  for (bool changed = true; changed;) {
    changed = false;
    llvm::SmallPtrSet<Operation *, 16> members, rootProducers;
    for (auto &chain : chains)
      members.insert(chain.begin(), chain.end());
    // A chain trimmed below a shared op reads that op's result from
    // memory: the op must then stay a kernel, out of every chain.
    for (size_t c = 0; c < chains.size(); ++c)
      if (Operation *def = rootOf(c).getDefiningOp())
        rootProducers.insert(def);
    for (SmallVector<Operation *> &chain : chains)
      for (size_t k = 0; k < chain.size(); ++k) {
        Value result = chain[k]->getResult(0);
        bool readOutside =
            rootProducers.contains(chain[k]) ||
            (k == 0 ? !result.hasOneUse()
                    : llvm::any_of(result.getUsers(), [&](Operation *user) {
                        return !members.contains(user);
                      }));
        if (readOutside) {
          chain.resize(k);
          changed = true;
          break;
        }
      }
    // The longest part of each chain next to its operand that is a
    // strided view of its own root.
    for (size_t c = 0; c < chains.size(); ++c)
      while (!chains[c].empty() && !isStridedViewOf(rootOf(c), chains[c])) {
        chains[c].pop_back();
        changed = true;
      }
  }
  llvm::SmallPtrSet<Operation *, 16> seen;
  for (size_t c = 0; c < chains.size(); ++c) {
    roots.push_back(rootOf(c));
    for (Operation *op : chains[c])
      if (seen.insert(op).second)
        views.push_back(op);
  }
  llvm::sort(views, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
}

/// The element types an attention group computes on: f32, and the 16-bit
/// types of models that are f16 or bf16 already.
bool isAttentionElement(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// Attention: a matmul group of one MatMul (S = Q x Kt), a norm group that
/// computes elementwise ops of S and a softmax over its last axis (P), and a
/// matmul group anchored on MatMul(P, V), where S and P and everything
/// between have no other use and Q, Kt, V share S's batch dims, merge into
/// one `attention` group (S and P never leave the kernel). In a model that
/// is f16 or bf16 already the elementwise ops may cast S to f32 and a cast
/// after the softmax take P back to the model's type (transformers' softmax
/// in f32; the kernel keeps P in f32 until the product rounds it). The first two
/// groups' ops move down to just before the last group (they depend only on
/// values defined before them and feed only the group).
void mergeAttention(SmallVector<Group> &groups, int64_t sharedBytes) {
  llvm::DenseMap<Operation *, size_t> groupOf;
  for (auto [i, g] : llvm::enumerate(groups))
    for (Operation *op : g.ops)
      groupOf[op] = i;
  SmallVector<bool> erased(groups.size(), false);
  for (size_t i = 0; i < groups.size(); ++i) {
    Group &norm = groups[i];
    if (erased[i] || norm.kind != KernelKind::norm)
      continue;
    // P, or (a 16-bit model that takes its softmax in f32, as transformers
    // does) P cast back to the model's type for the second product.
    Operation *pOp = norm.ops.back();
    auto softmax = dyn_cast<SoftmaxOp>(pOp);
    if (auto back = dyn_cast<CastOp>(pOp); back && norm.ops.size() >= 2)
      softmax = dyn_cast<SoftmaxOp>(norm.ops[norm.ops.size() - 2]);
    if (!softmax || (pOp != softmax.getOperation() &&
                     cast<CastOp>(pOp).getInput() != softmax.getResult()))
      continue;
    auto pType = cast<RankedTensorType>(softmax.getType());
    int64_t rank = pType.getRank(), axis = softmax.getAxis();
    if (rank < 2 || (axis != -1 && axis != rank - 1) ||
        !isAttentionElement(pType.getElementType()) || !softmax->hasOneUse() ||
        !pOp->hasOneUse())
      continue;
    // S: made by the MatMul that opens a matmul group whose values (S and
    // its elementwise epilogue) feed only that group and the norm group.
    auto first = norm.ops.front();
    MatMulOp mm1;
    size_t g1 = 0;
    for (Value v : first->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || !groupOf.count(def))
        continue;
      size_t g = groupOf[def];
      auto front = dyn_cast<MatMulOp>(groups[g].ops.front());
      if (g != i && !erased[g] && groups[g].kind == KernelKind::matmul && front)
        mm1 = front, g1 = g;
    }
    if (!mm1 ||
        cast<RankedTensorType>(mm1.getType()).getShape() != pType.getShape())
      continue;
    bool feedsOnly = llvm::all_of(groups[g1].ops, [&](Operation *op) {
      return llvm::all_of(op->getUsers(), [&](Operation *user) {
        return llvm::is_contained(groups[g1].ops, user) ||
               llvm::is_contained(norm.ops, user);
      });
    });
    if (!feedsOnly)
      continue;
    auto mm2 = dyn_cast<MatMulOp>(*pOp->getUsers().begin());
    if (!mm2 || mm2.getLhs() != pOp->getResult(0) || !groupOf.count(mm2))
      continue;
    size_t g3 = groupOf[mm2];
    if (groups[g3].ops.front() != mm2.getOperation() || erased[g3] ||
        g3 == i || g3 == g1)
      continue;
    // Everything the norm group computes feeds only the group.
    bool closed = llvm::all_of(norm.ops, [&](Operation *op) {
      return llvm::all_of(op->getUsers(), [&](Operation *user) {
        return user == mm2.getOperation() || llvm::is_contained(norm.ops, user);
      });
    });
    // Q, Kt and V have S's batch dims, no broadcasting.
    ArrayRef<int64_t> batch = pType.getShape().drop_back(2);
    auto sameBatch = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      return t.getRank() == rank && t.getShape().drop_back(2) == batch &&
             isAttentionElement(t.getElementType());
    };
    // The kernel's smallest block fits the 48 KB of shared memory.
    int64_t keys = pType.getShape().back(),
            headDim = cast<RankedTensorType>(mm1.getLhs().getType())
                          .getShape()
                          .back(),
            valueDim = cast<RankedTensorType>(mm2.getRhs().getType())
                           .getShape()
                           .back();
    bool fits = attentionFitsSharedMemory(headDim, keys, valueDim,
                                          sharedBytes);
    if (!closed || !fits || !sameBatch(mm1.getLhs()) ||
        !sameBatch(mm1.getRhs()) || !sameBatch(mm2.getRhs()))
      continue;
    // Q, Kt and V may be strided views (transposes, reshapes and one-index
    // gathers, down to a split) that nothing but the three views reads: the
    // kernel reads through them, and those ops' kernels go away.
    auto lone = [&](Operation *op) {
      return groupOf.count(op) && !erased[groupOf[op]] &&
             groups[groupOf[op]].ops.size() == 1;
    };
    SmallVector<Operation *> views;
    SmallVector<Value> roots;
    viewChains({mm1.getLhs(), mm1.getRhs(), mm2.getRhs()}, mm2->getBlock(),
               lone,
               [&](Operation *op) { return groupOf.count(op) != 0; }, views,
               roots);
    // A split whose every result is one of the roots, read once.
    SplitOp split = roots[0].getDefiningOp<SplitOp>();
    if (split && lone(split) &&
        llvm::all_of(split.getResults(), [&](Value r) {
          return r.hasOneUse() && llvm::is_contained(roots, r);
        }))
      views.insert(views.begin(), split);
    Group merged;
    merged.kind = KernelKind::attention;
    for (Operation *op : views)
      merged.ops.push_back(op);
    for (Operation *op : groups[g1].ops)
      merged.ops.push_back(op);
    for (Operation *op : norm.ops)
      merged.ops.push_back(op);
    for (Operation *op : merged.ops)
      op->moveBefore(mm2);
    for (Operation *op : groups[g3].ops)
      merged.ops.push_back(op);
    // The output through a transpose read by nothing else.
    Operation *outT = nullptr;
    if (groups[g3].ops.size() == 1 && mm2->hasOneUse() &&
        isa<TransposeOp>(*mm2->getUsers().begin()) &&
        lone(*mm2->getUsers().begin())) {
      outT = *mm2->getUsers().begin();
      outT->moveAfter(mm2);
      merged.ops.push_back(outT);
    }
    for (Operation *op : views)
      if (groupOf.count(op))
        erased[groupOf[op]] = true;
    if (outT)
      erased[groupOf[outT]] = true;
    for (Operation *op : merged.ops)
      for (Value v : op->getResults())
        merged.values.insert(v);
    merged.shape.assign(outputShape(merged.ops.back()).begin(),
                        outputShape(merged.ops.back()).end());
    groups[g3] = std::move(merged);
    erased[g1] = erased[i] = true;
  }
  dropErased(groups, erased);
}

/// A reduce group over its input's last axis (`isRowReduction`, with
/// elementwise ops of the reduced value after it) and the elementwise
/// group right after it that reads those values broadcast back over the
/// rows merge into one `norm` group over the input's shape: a block or
/// warp reduces a row, then computes the elementwise ops of that row. The
/// decomposed RMSNorm that torch exports (mean of squares, +eps, sqrt,
/// reciprocal; then x times it times the weight), an L2 normalization or a
/// softmax written out lose a kernel each. Only where nothing outside the
/// two groups reads a value of the reduce group (its row values are not
/// stored: the merged kernel's index space is the rows' elements).
void mergeRowReductions(SmallVector<Group> &groups) {
  SmallVector<bool> erased(groups.size(), false);
  for (size_t i = 0; i + 1 < groups.size(); ++i) {
    Group &reduce = groups[i], &rows = groups[i + 1];
    if (reduce.kind != KernelKind::reduce ||
        rows.kind != KernelKind::elementwise)
      continue;
    auto anchor = llvm::find_if(reduce.ops, [](Operation *op) {
      return isa<ReductionOpInterface>(op);
    });
    if (anchor == reduce.ops.end() || !isRowReduction(*anchor) ||
        ArrayRef<int64_t>(rows.shape) !=
            cast<RankedTensorType>((*anchor)->getOperand(0).getType())
                .getShape())
      continue;
    bool reads = false, closed = true;
    for (Operation *op : reduce.ops)
      for (Operation *user : op->getUsers()) {
        if (llvm::is_contained(rows.ops, user))
          reads = true;
        else if (!llvm::is_contained(reduce.ops, user))
          closed = false;
      }
    Operation *front = rows.ops.front();
    // The reduce group's ops move down to the rows' first op: they must be
    // before it (then what they read is too).
    if (!reads || !closed || llvm::any_of(reduce.ops, [&](Operation *op) {
          return !op->isBeforeInBlock(front);
        }))
      continue;
    for (Operation *op : reduce.ops)
      op->moveBefore(front);
    rows.ops.insert(rows.ops.begin(), reduce.ops.begin(), reduce.ops.end());
    rows.values.insert(reduce.values.begin(), reduce.values.end());
    rows.kind = KernelKind::norm;
    erased[i] = true;
  }
  dropErased(groups, erased);
}

/// Whether cuBLASLt will compute the product (`libraryPolicy`: always, or
/// auto and a large product).
bool libraryTakes(MatMulOp mm, StringRef libraryPolicy) {
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
  return cublasltPolicyTakes(libraryPolicy, numElementsOf(lhs.getShape()) *
                                                rhs.getShape().back());
}

/// A layer norm over the last axis (a norm group of that op alone, f32)
/// whose result only a MatMul reads as its lhs, with more than 8 rows, runs
/// inside that matmul group: the GEMM template normalizes its A operand as
/// it loads it (row statistics first, per block). Pre-LN transformers
/// (LN -> QKV, LN -> MLP) lose one kernel per norm.
///
/// Only where the product runs on FMAs: not where cuBLASLt will compute
/// it (`libraryPolicy`: always, or auto and a large product; the library
/// cannot normalize its operand), nor on tensor cores (`onTensorCores`),
/// where loading a normalized A element by element is slower than a norm
/// kernel of its own.
void mergeNormIntoMatmul(SmallVector<Group> &groups, StringRef libraryPolicy,
                         function_ref<bool(MatMulOp)> onTensorCores) {
  for (size_t i = 0; i + 1 < groups.size(); ++i) {
    Group &norm = groups[i], &next = groups[i + 1];
    if (norm.kind != KernelKind::norm || norm.ops.size() != 1 || next.kind != KernelKind::matmul)
      continue;
    auto ln = dyn_cast<LayerNormOp>(norm.ops.front());
    auto mm = dyn_cast<MatMulOp>(next.ops.front());
    if (!ln || !mm || mm.getLhs() != ln.getResult() || !ln->hasOneUse() ||
        ln.getResult() == mm.getRhs())
      continue;
    auto type = cast<RankedTensorType>(ln.getType());
    int64_t rank = type.getRank(), axis = ln.getAxis();
    if (axis < 0)
      axis += rank;
    if (rank < 2 || axis != rank - 1 || !type.getElementType().isF32() ||
        numElementsOf(type.getShape().drop_back()) <= 8 ||
        cast<RankedTensorType>(mm.getRhs().getType()).getRank() != 2)
      continue;
    auto lastDim = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      return t.getRank() == 1 && t.getDimSize(0) == type.getShape().back();
    };
    if (!lastDim(ln.getScale()) || (ln.getBias() && !lastDim(ln.getBias())) ||
        libraryTakes(mm, libraryPolicy) || onTensorCores(mm))
      continue;
    ln->moveBefore(mm);
    next.ops.insert(next.ops.begin(), ln);
    next.values.insert(ln.getResult());
    norm.ops.clear();
  }
  llvm::erase_if(groups, [](const Group &g) { return g.ops.empty(); });
}

std::string kernelName(Operation *anchor, int index) {
  std::string name = anchor->getName().stripDialect().str();
  return name + "_" + std::to_string(index);
}

/// Ops that cannot be inside a kernel: data-dependent or control flow.
bool isEager(Operation *op) {
  auto safety = dyn_cast<CaptureSafetyOpInterface>(op);
  return safety && !safety.getCaptureUnsafeReason().empty();
}

struct CgcFusePass : cgc::impl::CgcFuseBase<CgcFusePass> {
  using Base::Base;

  /// Groups the ops of `block` into kernels; eager ops (control flow,
  /// data-dependent shapes) end a group and stay as they are.
  void fuseBlock(Block &block, OpBuilder &builder, int64_t sharedBytes,
                 Type requestedPrecision) {
    SmallVector<Group> groups;
    for (Operation &op : block.without_terminator()) {
      // Control flow is never inside a kernel: in islands it becomes a
      // conditional node whose bodies hold kernels of their own.
      if (isAlias(&op) || isa<ConstantOp, IfOp, LoopOp>(op) || isEager(&op))
        continue;
      if (!groups.empty() && groups.back().ops.back()->getNextNode() == &op &&
          canAbsorb(groups.back(), &op)) {
        groups.back().ops.push_back(&op);
        groups.back().values.insert(op.getResult(0));
        continue;
      }
      if (!groups.empty() && groups.back().ops.back()->getNextNode() == &op &&
          canTakeAsPrologue(groups.back(), &op)) {
        groups.back().ops.push_back(&op);
        groups.back().kind = anchorKind(&op);
        groups.back().shape.assign(outputShape(&op).begin(),
                                   outputShape(&op).end());
        groups.back().values.insert(op.getResult(0));
        continue;
      }
      Group group;
      group.ops.push_back(&op);
      group.kind = anchorKind(&op);
      group.shape.assign(outputShape(&op).begin(), outputShape(&op).end());
      for (Value v : op.getResults())
        group.values.insert(v);
      groups.push_back(std::move(group));
    }
    copyScalarProducers(groups);
    mergeElementwiseChains(groups);
    mergeAttention(groups, sharedBytes);
    mergeRowReductions(groups);
    mergeNormIntoMatmul(groups, cublaslt, [&](MatMulOp mm) {
      return static_cast<bool>(
          productPrecision(mm, requestedPrecision, keepFp32));
    });
    for (Group &group : groups) {
      std::string name =
          group.kind == KernelKind::attention
              ? "attention_" + std::to_string(counter++)
              : kernelName(group.ops.front(), counter++);
      wrapInRegionOp<KernelOp>(
          group.ops, builder, [&](OpBuilder &b, Location loc, TypeRange types) {
            return KernelOp::create(b, loc, types, name, group.kind,
                                    /*config=*/nullptr, /*precision=*/nullptr);
          });
    }
  }

  void runOnOperation() override {
    OpBuilder builder(&getContext());
    SmallVector<Block *> blocks;
    getOperation().walk([&](IslandOp island) {
      blocks.push_back(&island.getBody().front());
    });
    // The bodies of If and Loop run their ops as kernels too: as the bodies
    // of conditional nodes in islands, as ordinary launches in eager regions.
    getOperation().walk([&](Operation *op) {
      if (isa<IfOp, LoopOp>(op) &&
          (op->getParentOfType<EagerRegionOp>() ||
           op->getParentOfType<IslandOp>()))
        for (Region &region : op->getRegions())
          for (Block &block : region)
            blocks.push_back(&block);
    });
    // Attention merges only where the kernel's smallest block fits the
    // target's shared memory.
    int64_t sharedBytes =
        lookupTargetOrDefault(getOperation()).getStaticSharedBytes();
    FailureOr<Type> requested = precisionType(precision, &getContext());
    if (failed(requested)) {
      getOperation().emitError() << "precision '" << precision
                                 << "' is none of fp32, tf32, fp16, bf16";
      return signalPassFailure();
    }
    for (Block *block : blocks)
      fuseBlock(*block, builder, sharedBytes, *requested);
    // The kernel count per island, as --explain prints it.
    getOperation().walk([&](IslandOp island) {
      int64_t kernels = llvm::range_size(
          island.getBody().front().getOps<KernelOp>());
      island.emitRemark() << island.getName() << ": " << kernels
                          << " kernel(s)";
    });
  }

  int counter = 0;
};

} // namespace
