//===- RegionUtils.h - wrap a run of ops into a region op -------*- C++ -*-===//

#ifndef CGC_DIALECT_CGC_TRANSFORMS_REGIONUTILS_H
#define CGC_DIALECT_CGC_TRANSFORMS_REGIONUTILS_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace cgc {

/// Moves `run` (consecutive ops of one block, in order) into the single
/// block of a new region op created by `create` right before the run, yields
/// every value that is used after the run, and redirects those uses to the
/// region op's results.
template <typename RegionOpTy, typename CreateFn>
RegionOpTy wrapInRegionOp(llvm::ArrayRef<mlir::Operation *> run,
                          mlir::OpBuilder &builder, CreateFn create) {
  llvm::SmallPtrSet<mlir::Operation *, 16> inRun(run.begin(), run.end());
  llvm::SmallVector<mlir::Value> escaping;
  for (mlir::Operation *op : run)
    for (mlir::Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](mlir::Operation *user) {
            mlir::Operation *top = op->getBlock()->findAncestorOpInBlock(*user);
            return !top || !inRun.contains(top);
          }))
        escaping.push_back(result);

  builder.setInsertionPoint(run.front());
  llvm::SmallVector<mlir::Type> types;
  for (mlir::Value v : escaping)
    types.push_back(v.getType());
  RegionOpTy regionOp = create(builder, run.front()->getLoc(), types);
  mlir::Block *body = new mlir::Block();
  regionOp->getRegion(0).push_back(body);
  for (mlir::Operation *op : run)
    op->moveBefore(body, body->end());
  builder.setInsertionPointToEnd(body);
  YieldOp::create(builder, regionOp->getLoc(), escaping);
  for (auto [value, result] : llvm::zip(escaping, regionOp->getResults()))
    value.replaceUsesWithIf(result, [&](mlir::OpOperand &use) {
      return !regionOp->isAncestor(use.getOwner());
    });
  return regionOp;
}

} // namespace cgc

#endif // CGC_DIALECT_CGC_TRANSFORMS_REGIONUTILS_H
