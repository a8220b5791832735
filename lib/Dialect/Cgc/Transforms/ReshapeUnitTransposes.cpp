//===- ReshapeUnitTransposes.cpp - transposes that move no data ----------===//
//
// A transpose that keeps the dims of more than one element in their order
// (it moves only dims of size 1) leaves every element where it was: it is
// a reshape. Sequence-first exports produce them at batch 1 (torch's
// nn.MultiheadAttention turns [1, L, E] into [L, 1, E] and back). As a
// transpose it is a copy kernel of its own; as a reshape it is a view of
// its input's buffer, and the kernels around it read through it.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace cgc {
#define GEN_PASS_DEF_CGCRESHAPEUNITTRANSPOSES
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// Whether `perm` keeps the dims of `shape` that are not 1 in their order.
bool movesOnlyUnitDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  int64_t last = -1;
  for (int64_t from : perm) {
    if (shape[from] == 1)
      continue;
    if (from < last)
      return false;
    last = from;
  }
  return true;
}

struct CgcReshapeUnitTransposesPass
    : cgc::impl::CgcReshapeUnitTransposesBase<CgcReshapeUnitTransposesPass> {
  void runOnOperation() override {
    SmallVector<TransposeOp> transposes;
    getOperation().walk([&](TransposeOp op) { transposes.push_back(op); });
    for (TransposeOp t : transposes) {
      auto input = cast<RankedTensorType>(t.getInput().getType());
      auto output = cast<RankedTensorType>(t.getType());
      if (!input.hasStaticShape() || !output.hasStaticShape() ||
          !movesOnlyUnitDims(input.getShape(), t.getPerm()))
        continue;
      OpBuilder b(t);
      Value reshaped =
          ReshapeOp::create(b, t.getLoc(), output, t.getInput(), Value(), false)
              .getResult();
      t.getResult().replaceAllUsesWith(reshaped);
      t.erase();
    }
  }
};

} // namespace
