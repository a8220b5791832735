//===- PlanBuffers.cpp - annotate the arena plan on the IR ----------------===//

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
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
  op->setAttr("cgc.result_offsets",
              DenseI64ArrayAttr::get(op->getContext(), offsets));
}

void annotate(func::FuncOp func, const BufferPlan &plan) {
  Builder b(func.getContext());
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    func.setArgAttr(arg.getArgNumber(), "cgc.arena_offset",
                    b.getI64IntegerAttr(plan.offsetOf(arg)));
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands()))
    func.setResultAttr(i, "cgc.arena_offset",
                       b.getI64IntegerAttr(plan.offsetOf(v)));
  func.walk([&](ConstantOp constant) {
    constant->setAttr("cgc.weight_offset",
                      b.getI64IntegerAttr(plan.offsetOf(constant)));
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
          inner->setAttr("cgc.body_arg_offsets",
                         DenseI64ArrayAttr::get(inner->getContext(), args));
        }
      });
    }
  }
  func->setAttr("cgc.weights_bytes", b.getI64IntegerAttr(plan.weightsBytes));
  func->setAttr("cgc.arena_bytes", b.getI64IntegerAttr(plan.arenaBytes));
  func->setAttr("cgc.intermediate_bytes",
                b.getI64IntegerAttr(plan.intermediateBytes));
  func->setAttr("cgc.intermediate_lower_bound",
                b.getI64IntegerAttr(plan.intermediateLowerBound));
  func->setAttr("cgc.intermediate_naive_bytes",
                b.getI64IntegerAttr(plan.intermediateNaiveBytes));
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
    }
  }
};

} // namespace
