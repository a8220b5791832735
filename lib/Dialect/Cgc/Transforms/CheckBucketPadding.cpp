//===- CheckBucketPadding.cpp - may a symbolic dim be padded? -------------===//
//
// Follows the padded dim from the inputs to the outputs. Each value either
// has it at one axis or not at all; an op whose result at a real index could
// read a padded index is rejected with the reason. Ops the pass does not know
// are rejected too: a wrong "yes" would silently corrupt results.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace cgc {
#define GEN_PASS_DEF_CGCCHECKBUCKETPADDING
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

constexpr int64_t kNone = -1;

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }
int64_t dimOf(Value v, int64_t axis) {
  return cast<RankedTensorType>(v.getType()).getDimSize(axis);
}

/// Whether an op computes each output element from the same position of its
/// (broadcast) operands.
bool isElementwise(Operation *op) { return op->hasTrait<Elementwise>(); }

class PaddingChecker {
public:
  PaddingChecker(StringRef dim) : dim(dim) {}

  LogicalResult run(func::FuncOp func) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      int64_t axis = inputAxis(func, i);
      if (axis == -2)
        return failure();
      axisOf[func.getArgument(i)] = axis;
      setInputBucketAxis(func, i, axis);
    }
    WalkResult walk = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<func::FuncOp>(op))
        return WalkResult::advance();
      if (isa<func::ReturnOp>(op))
        return WalkResult::skip();
      if (failed(visit(op)))
        return WalkResult::interrupt();
      // Region bodies were judged with their op.
      return WalkResult::skip();
    });
    if (walk.wasInterrupted())
      return failure();
    Operation *ret = func.getBody().front().getTerminator();
    for (auto [i, v] : llvm::enumerate(ret->getOperands()))
      setOutputBucketAxis(func, i, axisOf.lookup(v));
    return success();
  }

private:
  /// The axis of input `i` named `dim`, kNone, or -2 after an error (the
  /// dim twice in one input).
  int64_t inputAxis(func::FuncOp func, unsigned i) {
    auto names = getInputDimNames(func, i);
    int64_t axis = kNone;
    if (!names)
      return axis;
    for (auto [k, name] : llvm::enumerate(names)) {
      if (cast<StringAttr>(name).getValue() != dim)
        continue;
      if (axis != kNone) {
        func.emitError("--pad-to-bucket: input ")
            << i << " has the padded dim '" << dim << "' twice (axes "
            << axis << " and " << k << ")";
        return -2;
      }
      axis = k;
    }
    return axis;
  }

  int64_t axis(Value v) const {
    auto it = axisOf.find(v);
    return it == axisOf.end() ? kNone : it->second;
  }

  InFlightDiagnostic reject(Operation *op, const Twine &why) {
    return op->emitError("--pad-to-bucket: ")
           << op->getName().stripDialect() << " " << why << ", so padded '"
           << dim << "' rows could change real results";
  }

  LogicalResult visit(Operation *op) {
    bool anyPadded = llvm::any_of(op->getOperands(), [&](Value v) {
      return axis(v) != kNone;
    });
    // Regions may read padded values defined outside of them.
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        anyPadded |= axis(v) != kNone && inner != op;
    });
    if (!anyPadded) {
      for (Value r : op->getResults())
        axisOf[r] = kNone;
      return success();
    }
    FailureOr<int64_t> result = resultAxis(op);
    if (failed(result))
      return failure();
    for (Value r : op->getResults())
      axisOf[r] = *result;
    return success();
  }

  /// Elementwise with broadcasting: operands align at the right.
  FailureOr<int64_t> broadcastAxis(Operation *op) {
    int64_t rank = rankOf(op->getResult(0));
    int64_t result = kNone;
    for (Value v : op->getOperands()) {
      if (axis(v) == kNone)
        continue;
      int64_t moved = axis(v) + rank - rankOf(v);
      if (result != kNone && result != moved)
        return reject(op, "combines the padded dim at two different axes");
      result = moved;
    }
    return result;
  }

  FailureOr<int64_t> matmulAxis(MatMulOp op) {
    int64_t rank = rankOf(op.getResult());
    int64_t lhsRank = rankOf(op.getLhs()), rhsRank = rankOf(op.getRhs());
    int64_t result = kNone;
    if (int64_t a = axis(op.getLhs()); a != kNone) {
      if (a == lhsRank - 1)
        return reject(op, "contracts over the padded dim (its K)");
      result = a == lhsRank - 2 ? rank - 2 : a + rank - lhsRank;
    }
    if (int64_t a = axis(op.getRhs()); a != kNone) {
      if (rhsRank == 1 || a == rhsRank - 2)
        return reject(op, "contracts over the padded dim (its K)");
      int64_t moved = a == rhsRank - 1 ? rank - 1 : a + rank - rhsRank;
      if (result != kNone && result != moved)
        return reject(op, "combines the padded dim at two different axes");
      result = moved;
    }
    return result;
  }

  FailureOr<int64_t> gemmAxis(GemmOp op) {
    int64_t result = kNone;
    if (int64_t a = axis(op.getA()); a != kNone) {
      if (a != (op.getTransA() ? 1 : 0))
        return reject(op, "contracts over the padded dim (its K)");
      result = 0;
    }
    if (int64_t a = axis(op.getB()); a != kNone) {
      if (a != (op.getTransB() ? 0 : 1))
        return reject(op, "contracts over the padded dim (its K)");
      if (result != kNone)
        return reject(op, "combines the padded dim at two different axes");
      result = 1;
    }
    if (Value c = op.getC(); c && axis(c) != kNone) {
      int64_t moved = axis(c) + 2 - rankOf(c);
      if (result != kNone && result != moved)
        return reject(op, "combines the padded dim at two different axes");
      result = moved;
    }
    return result;
  }

  /// A reshape keeps the padded dim when it stays one whole dim with the
  /// same number of elements before it.
  FailureOr<int64_t> reshapeAxis(Operation *op, Value input, Value output) {
    auto in = cast<RankedTensorType>(input.getType());
    auto out = cast<RankedTensorType>(output.getType());
    int64_t a = axis(input);
    int64_t before = 1;
    for (int64_t k = 0; k < a; ++k)
      before *= in.getDimSize(k);
    int64_t outBefore = 1;
    for (int64_t k = 0; k < out.getRank(); ++k) {
      if (outBefore == before && out.getDimSize(k) == in.getDimSize(a))
        return k;
      outBefore *= out.getDimSize(k);
    }
    return reject(op, "merges or splits the padded dim");
  }

  FailureOr<int64_t> reduceAxis(Operation *op, ArrayRef<int64_t> axes,
                                bool keepdims, int64_t a) {
    int64_t rank = rankOf(op->getOperand(0));
    int64_t removed = 0;
    if (axes.empty())
      return reject(op, "reduces over every axis, the padded dim included");
    for (int64_t r : axes) {
      int64_t norm = r < 0 ? r + rank : r;
      if (norm == a)
        return reject(op, "reduces over the padded dim (axis " +
                              Twine(a) + ")");
      removed += norm < a;
    }
    return keepdims ? a : a - removed;
  }

  FailureOr<int64_t> resultAxis(Operation *op) {
    if (isElementwise(op))
      return broadcastAxis(op);
    Value in = op->getNumOperands() ? op->getOperand(0) : Value();
    int64_t a = in ? axis(in) : kNone;
    auto onlyFirstOperandPadded = [&]() {
      return llvm::all_of(op->getOperands().drop_front(),
                          [&](Value v) { return axis(v) == kNone; });
    };
    return llvm::TypeSwitch<Operation *, FailureOr<int64_t>>(op)
        .Case([&](MatMulOp m) { return matmulAxis(m); })
        .Case([&](GemmOp g) { return gemmAxis(g); })
        .Case<ConvOp, ConvTransposeOp, MaxPoolOp, AveragePoolOp,
              InstanceNormOp, LRNOp, BatchNormOp>(
            [&](Operation *) -> FailureOr<int64_t> {
              if (a != 0 || !onlyFirstOperandPadded())
                return reject(op, "mixes along the padded dim (axis " +
                                      Twine(a) + "; only axis 0, the batch, "
                                      "is independent)");
              return 0;
            })
        .Case<SoftmaxOp, LogSoftmaxOp, HardmaxOp, CumSumOp, CumProdOp, ArgMaxOp,
              ArgMinOp>([&](Operation *) -> FailureOr<int64_t> {
          int64_t along = cast<IntegerAttr>(op->getAttr("axis")).getInt();
          if (along < 0)
            along += rankOf(in);
          if (along == a)
            return reject(op, "works along the padded dim (axis " + Twine(a) +
                                  ")");
          if (auto keep = op->getAttrOfType<BoolAttr>("keepdims");
              keep && !keep.getValue() && along < a)
            return a - 1;
          return a;
        })
        .Case([&](LayerNormOp n) -> FailureOr<int64_t> {
          int64_t from = n.getAxis() < 0 ? (int64_t)n.getAxis() + rankOf(in)
                                         : (int64_t)n.getAxis();
          if (a >= from || !onlyFirstOperandPadded())
            return reject(op, "normalizes over the padded dim");
          return a;
        })
        .Case([&](ReductionOpInterface r) {
          return reduceAxis(op, r.getAxes(), r.getKeepdims(), a);
        })
        .Case([&](TransposeOp t) -> FailureOr<int64_t> {
          for (auto [k, p] : llvm::enumerate(t.getPerm()))
            if (p == a)
              return (int64_t)k;
          return reject(op, "has a permutation without the padded dim");
        })
        .Case([&](ReshapeOp r) -> FailureOr<int64_t> {
          if (!onlyFirstOperandPadded())
            return reject(op, "takes its shape from padded data");
          return reshapeAxis(op, r.getInput(), r.getResult());
        })
        .Case([&](ExpandOp e) -> FailureOr<int64_t> {
          int64_t moved = a + rankOf(e.getResult()) - rankOf(in);
          if (dimOf(e.getResult(), moved) != dimOf(in, a))
            return reject(op, "broadcasts the padded dim");
          return moved;
        })
        .Case([&](ConcatOp c) -> FailureOr<int64_t> {
          FailureOr<int64_t> moved = broadcastAxis(op);
          if (succeeded(moved) && *moved == (int64_t)c.getAxis())
            return reject(op, "concatenates along the padded dim");
          return moved;
        })
        .Case([&](SplitOp s) -> FailureOr<int64_t> {
          if ((int64_t)s.getAxis() == a)
            return reject(op, "splits the padded dim");
          return a;
        })
        .Case([&](SliceOp s) -> FailureOr<int64_t> {
          if (s.getStarts()[a] != 0 || s.getSteps()[a] != 1 ||
              s.getEnds()[a] < dimOf(in, a))
            return reject(op, "slices the padded dim");
          return a;
        })
        .Case([&](PadOp p) -> FailureOr<int64_t> {
          int64_t rank = rankOf(in);
          if (p.getPads()[a] != 0 || p.getPads()[a + rank] != 0)
            return reject(op, "pads the padded dim");
          return a;
        })
        .Case([&](ResizeOp r) -> FailureOr<int64_t> {
          if (!onlyFirstOperandPadded() ||
              dimOf(r.getResult(), a) != dimOf(in, a))
            return reject(op, "resizes the padded dim");
          return a;
        })
        .Case([&](GatherOp g) -> FailureOr<int64_t> {
          int64_t along = g.getAxis();
          int64_t dataAxis = axis(g.getInput());
          int64_t indexAxis = axis(g.getIndices());
          if (dataAxis != kNone && indexAxis != kNone)
            return reject(op, "indexes padded data with padded indices");
          if (indexAxis != kNone)
            return along + indexAxis;
          if (dataAxis == along)
            return reject(op, "gathers along the padded dim");
          return dataAxis < along
                     ? dataAxis
                     : dataAxis + rankOf(g.getIndices()) - 1;
        })
        .Default([&](Operation *) -> FailureOr<int64_t> {
          return reject(op, "is not known to keep rows independent");
        });
  }

  std::string dim;
  llvm::DenseMap<Value, int64_t> axisOf;
};

struct CgcCheckBucketPaddingPass
    : cgc::impl::CgcCheckBucketPaddingBase<CgcCheckBucketPaddingPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(PaddingChecker(dim).run(getOperation())))
      signalPassFailure();
  }
};

} // namespace
