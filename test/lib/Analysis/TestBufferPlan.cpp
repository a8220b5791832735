//===- TestBufferPlan.cpp - print the arena plan for FileCheck ------------===//
//
// `--cgc-test-print-buffer-plan` prints every buffer of the plan: its kind,
// size, offset, lifetime (in doubled kernel steps) and the values that live
// in it, then the totals. The plan itself is computed by the analysis that
// --cgc-plan-buffers uses; this pass only shows it.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace cgc;

namespace {

const char *kindName(BufferPlan::Kind kind) {
  switch (kind) {
  case BufferPlan::Kind::Weight: return "weight";
  case BufferPlan::Kind::Input: return "input";
  case BufferPlan::Kind::Output: return "output";
  case BufferPlan::Kind::Intermediate: return "intermediate";
  }
  return "?";
}

struct TestPrintBufferPlanPass
    : PassWrapper<TestPrintBufferPlanPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintBufferPlanPass)

  StringRef getArgument() const final { return "cgc-test-print-buffer-plan"; }
  StringRef getDescription() const final {
    return "Print the buffers of the arena plan (test only)";
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<BufferPlan> plan = planBuffers(func);
    if (failed(plan))
      return signalPassFailure();
    llvm::raw_ostream &os = llvm::outs();
    AsmState state(func);
    // Values in program order, so the listing is deterministic.
    SmallVector<Value> values(func.getArguments());
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          if (op != func.getOperation())
            llvm::append_range(values, block.getArguments());
      llvm::append_range(values, op->getResults());
    });
    os << "plan @" << func.getSymName() << "\n";
    for (auto [index, buffer] : llvm::enumerate(plan->buffers)) {
      if (buffer.absorbed)
        continue;
      os << "  buffer " << index << " " << kindName(buffer.kind)
         << " bytes=" << buffer.bytes << " offset=" << buffer.offset;
      if (buffer.kind == BufferPlan::Kind::Intermediate)
        os << " live=[" << buffer.begin << ", " << buffer.end << "]";
      os << " values:";
      for (Value value : values) {
        if (plan->bufferOf.lookup(value) != index ||
            !plan->bufferOf.count(value))
          continue;
        os << " ";
        value.printAsOperand(os, state);
        if (int64_t inner = plan->offsetInBuffer.lookup(value))
          os << "+" << inner;
      }
      os << "\n";
    }
    os << "  arena=" << plan->arenaBytes << " weights=" << plan->weightsBytes
       << " intermediates=" << plan->intermediateBytes
       << " lower_bound=" << plan->intermediateLowerBound
       << " naive=" << plan->intermediateNaiveBytes << "\n";
  }
};

} // namespace

namespace cgc::test {
void registerTestBufferPlanPass() {
  PassRegistration<TestPrintBufferPlanPass>();
}
} // namespace cgc::test
