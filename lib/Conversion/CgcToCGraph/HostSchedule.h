//===- HostSchedule.h - eager regions to host ops ---------------*- C++ -*-===//
//
// The host work of an eager region as cgraph host ops: kernel launches,
// copies, branches and loops decided on the host, and data-dependent ops
// computed there, each with the arena offsets and extents it needs. Every
// check of what the GPU backend can run on the host is made here, so the
// package printer only prints.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CONVERSION_CGCTOCGRAPH_HOSTSCHEDULE_H
#define CGC_LIB_CONVERSION_CGCTOCGRAPH_HOSTSCHEDULE_H

#include "cgc/Codegen/KernelGen.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace cgc {

/// The launches of a kernel of an eager region (generated, and declared as
/// `cgraph.kernel`s, before the schedule is built).
using EagerLaunchesFn =
    llvm::function_ref<llvm::ArrayRef<GeneratedKernel>(KernelOp)>;

/// Adds a `cgraph.eager` step for `eager` at the builder's insertion point
/// (inside a `cgraph.schedule`), its body the region's host work in order.
mlir::LogicalResult lowerEagerRegion(EagerRegionOp eager,
                                     mlir::OpBuilder &builder,
                                     EagerLaunchesFn launches);

/// Fails, naming the output and the --bind that would fix it, when an input
/// or output of `func` has a data-dependent shape its plan cannot bound:
/// the package allocates each once, at its largest size.
mlir::LogicalResult checkBoundedIO(mlir::func::FuncOp func);

} // namespace cgc

#endif // CGC_LIB_CONVERSION_CGCTOCGRAPH_HOSTSCHEDULE_H
