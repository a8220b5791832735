//===- CheckStaticShapes.cpp - reject unbound symbolic dims ---------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace cgc {
#define GEN_PASS_DEF_CGCCHECKSTATICSHAPES
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;

namespace {

bool isDynamicTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && !tensor.hasStaticShape();
}

/// Data-dependent ops (and what they compute) legitimately have `?` dims.
bool isEagerOp(Operation *op) {
  auto safety = dyn_cast<cgc::CaptureSafetyOpInterface>(op);
  return safety && !safety.getCaptureUnsafeReason().empty();
}

struct CgcCheckStaticShapesPass
    : cgc::impl::CgcCheckStaticShapesBase<CgcCheckStaticShapesPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](func::FuncOp func) {
      failedAny |= failed(cgc::emitUnboundInputErrors(func));
    });
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isEagerOp(op))
        return WalkResult::skip();
      if (!isa<func::FuncOp>(op) &&
          llvm::any_of(op->getResultTypes(), isDynamicTensor)) {
        op->emitError() << "result has an unbound dim: "
                        << op->getResultTypes();
        failedAny = true;
      }
      return WalkResult::advance();
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
