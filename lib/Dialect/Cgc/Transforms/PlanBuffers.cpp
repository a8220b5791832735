//===- PlanBuffers.cpp - annotate the arena plan on the IR ----------------===//

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

namespace cgc {
#define GEN_PASS_DEF_CGCPLANBUFFERS
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

void annotateResults(Operation *op, const BufferPlan &plan) {
  SmallVector<int64_t> offsets;
  for (Value r : op->getResults())
    offsets.push_back(plan.offsetOf(r));
  setResultOffsets(op, offsets);
}

void annotate(func::FuncOp func, const BufferPlan &plan) {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    setInputArenaOffset(func, arg.getArgNumber(), plan.offsetOf(arg));
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands()))
    setOutputArenaOffset(func, i, plan.offsetOf(v));
  func.walk([&](ConstantOp constant) {
    setWeightOffset(constant, plan.offsetOf(constant));
  });
  for (Operation &op : body) {
    if (isa<IslandOp, EagerRegionOp>(op)) {
      annotateResults(&op, plan);
      // Kernels, and the work of If and Loop (conditional nodes in islands,
      // host code in eager regions), need the offsets too.
      op.walk([&](Operation *inner) {
        if (inner == &op || isa<YieldOp, ConstantOp>(inner) ||
            inner->getNumResults() == 0 ||
            isa<KernelOp>(inner->getParentOp()))
          return;
        annotateResults(inner, plan);
        if (auto loop = dyn_cast<LoopOp>(inner)) {
          SmallVector<int64_t> args;
          for (BlockArgument arg : loop.getBody().getArguments())
            args.push_back(plan.offsetOf(arg));
          setBodyArgOffsets(inner, args);
        }
      });
    }
  }
  setWeightsBytes(func, plan.weightsBytes);
  setArenaBytes(func, plan.arenaBytes);
  setIntermediateStats(func, plan.intermediateBytes,
                       plan.intermediateLowerBound,
                       plan.intermediateNaiveBytes);
}

/// A training step's state updates: how many the step writes in place
/// (the rest are copied over their state after the step).
void reportStateUpdates(func::FuncOp func, const BufferPlan &plan) {
  if (plan.stateUpdates.empty())
    return;
  int64_t inPlace = llvm::count_if(plan.stateUpdates,
                                   [](auto &u) { return u.inPlace; });
  InFlightDiagnostic remark = func.emitRemark()
                              << "training state: " << inPlace << " of "
                              << plan.stateUpdates.size()
                              << " updates written in place";
  for (const BufferPlan::StateUpdate &u : plan.stateUpdates)
    if (!u.inPlace)
      remark << "; '" << getInputName(func, u.input).getValue()
             << "' copied after the step";
}

struct CgcPlanBuffersPass
    : cgc::impl::CgcPlanBuffersBase<CgcPlanBuffersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<BufferPlan> plan = planBuffers(func);
      if (failed(plan))
        return signalPassFailure();
      annotate(func, *plan);
      func.emitRemark() << "arena: " << plan->arenaBytes << " bytes ("
                        << plan->weightsBytes << " weights); intermediates "
                        << plan->intermediateBytes << " bytes, lower bound "
                        << plan->intermediateLowerBound << ", naive "
                        << plan->intermediateNaiveBytes;
      reportStateUpdates(func, *plan);
    }
  }
};

} // namespace
