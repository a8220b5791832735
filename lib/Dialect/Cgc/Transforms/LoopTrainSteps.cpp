//===- LoopTrainSteps.cpp - K training steps per launch -------------------===//
//
// `cgc --train --steps-per-launch=K`: the step built by
// --cgc-build-train-step becomes the body of a K-iteration `cgc.loop`
// (a WHILE conditional node on the GPU), so one graph launch runs K steps:
//
//   @main(ring inputs [K, ...]..., state...) -> (losses [K], state...)
//     %r:N+1 = cgc.loop K, true iter_args(updated state..., zeros [K]) {
//     ^bb0(%i, %c, %s..., %losses):
//       batch = cgc.gather ring, %i        (each input of the step)
//       ... the step, reading %s ...
//       cgc.yield %c, updates..., where(iota == %i, loss, %losses)
//     }
//
// The caller fills the ring of K batches on the device; state no step
// updates is read from outside the loop. The losses are carried (an
// elementwise select writes the i-th), not a scan output: carried values
// are what the WHILE node's lowering keeps in place.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <numeric>

namespace cgc {
#define GEN_PASS_DEF_CGCLOOPTRAINSTEPS
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// Which arguments are batches (one per step) and which state the loop
/// carries (those an output updates), with the outputs that update them.
struct StepSignature {
  SmallVector<unsigned> batchArgs;
  SmallVector<unsigned> carriedArgs;    ///< state arguments, in output order
  SmallVector<unsigned> carriedResults; ///< the outputs updating them
};

FailureOr<StepSignature> readSignature(func::FuncOp func) {
  StepSignature sig;
  llvm::StringMap<unsigned> stateArgs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (getInputState(func, i))
      stateArgs[getInputName(func, i).getValue()] = i;
    else
      sig.batchArgs.push_back(i);
  }
  if (stateArgs.empty())
    return func.emitError()
           << "--steps-per-launch needs a training step (cgc --train)";
  for (unsigned r = 1; r < func.getNumResults(); ++r) {
    StringAttr updates = getOutputUpdates(func, r);
    if (!updates)
      return func.emitError()
             << "--steps-per-launch needs an optimizer: output '"
             << getOutputName(func, r).getValue()
             << "' updates no state (optimizer=none returns gradients)";
    sig.carriedArgs.push_back(stateArgs.lookup(updates.getValue()));
    sig.carriedResults.push_back(r);
  }
  if (sig.carriedResults.empty())
    return func.emitError() << "--steps-per-launch needs an optimizer: the "
                               "step updates no state";
  return sig;
}

RankedTensorType ringOf(Type type, int64_t steps) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape{steps};
  llvm::append_range(shape, tensor.getShape());
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// `losses` with element `iteration` replaced by `loss`.
Value recordLoss(OpBuilder &b, Location loc, Value loss, Value iteration,
                 Value losses) {
  int64_t steps = cast<RankedTensorType>(losses.getType()).getDimSize(0);
  auto indexType = RankedTensorType::get({steps}, b.getI64Type());
  SmallVector<int64_t> indices(steps);
  std::iota(indices.begin(), indices.end(), 0);
  Value iota = ConstantOp::create(
      b, loc, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(indices)));
  Value here = EqualOp::create(b, loc, iota, iteration);
  return WhereOp::create(b, loc, here, loss, losses);
}

struct CgcLoopTrainStepsPass
    : cgc::impl::CgcLoopTrainStepsBase<CgcLoopTrainStepsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (steps == 1)
      return;
    ModuleOp module = getOperation();
    if (steps < 1) {
      module.emitError() << "--steps-per-launch must be 1 or more, got "
                         << static_cast<int64_t>(steps);
      return signalPassFailure();
    }
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (failed(loopSteps(func)))
        return signalPassFailure();
  }

  LogicalResult loopSteps(func::FuncOp func) {
    FailureOr<StepSignature> sig = readSignature(func);
    if (failed(sig))
      return failure();
    Block &block = func.getBody().front();
    auto ret = cast<func::ReturnOp>(block.getTerminator());
    SmallVector<Operation *> stepOps;
    for (Operation &op : block.without_terminator())
      stepOps.push_back(&op);

    OpBuilder b(ret);
    Location loc = NameLoc::get(StringAttr::get(&getContext(),
                                                "steps per launch"));
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    auto i1 = RankedTensorType::get({}, b.getI1Type());
    Value trip = ConstantOp::create(
        b, loc, DenseElementsAttr::get(i64, b.getI64IntegerAttr(steps)));
    Value run = ConstantOp::create(
        b, loc, DenseElementsAttr::get(i1, b.getBoolAttr(true)));
    Value loss = ret.getOperand(0);
    auto lossesType = ringOf(loss.getType(), steps);
    SmallVector<Value> initial;
    for (unsigned arg : sig->carriedArgs)
      initial.push_back(func.getArgument(arg));
    initial.push_back(ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            lossesType, b.getFloatAttr(lossesType.getElementType(), 0.0))));
    auto loop = LoopOp::create(b, loc, ValueRange(initial).getTypes(), trip,
                               run, initial);

    // The body: (iteration, condition, carried state...).
    Block *body = new Block();
    loop.getBody().push_back(body);
    Value iteration = body->addArgument(i64, loc);
    Value condition = body->addArgument(i1, loc);
    for (Value v : initial)
      body->addArgument(v.getType(), loc);
    for (Operation *op : stepOps)
      op->moveBefore(body, body->end());
    auto insideLoop = [&](OpOperand &use) {
      return loop->isProperAncestor(use.getOwner());
    };
    for (auto [k, arg] : llvm::enumerate(sig->carriedArgs))
      func.getArgument(arg).replaceUsesWithIf(body->getArgument(2 + k),
                                              insideLoop);
    // Each batch input becomes a ring; the step reads its iteration's.
    OpBuilder inner = OpBuilder::atBlockBegin(body);
    for (unsigned arg : sig->batchArgs) {
      BlockArgument ring = func.getArgument(arg);
      Type batchType = ring.getType();
      ring.setType(ringOf(batchType, steps));
      Value batch = GatherOp::create(inner, loc, batchType, ring, iteration,
                                     inner.getI64IntegerAttr(0));
      ring.replaceUsesWithIf(batch, [&](OpOperand &use) {
        return use.getOwner() != batch.getDefiningOp();
      });
    }
    SmallVector<Value> yielded{condition};
    for (unsigned r : sig->carriedResults)
      yielded.push_back(ret.getOperand(r));
    inner.setInsertionPointToEnd(body);
    yielded.push_back(recordLoss(inner, loc, loss, iteration,
                                 body->getArguments().back()));
    YieldOp::create(inner, loc, yielded);

    // The losses first, then the state after the last step.
    SmallVector<Value> results(ret.getNumOperands());
    results[0] = loop.getResults().back();
    for (auto [k, r] : llvm::enumerate(sig->carriedResults))
      results[r] = loop.getResult(k);
    ret->setOperands(results);
    SmallVector<Type> types;
    for (Value v : results)
      types.push_back(v.getType());
    func.setType(FunctionType::get(&getContext(),
                                   block.getArgumentTypes(), types));
    return success();
  }
};

} // namespace
