//===- Explain.h - the explain model of a planned program -------*- C++ -*-===//
//
// `cgc --explain` reads the program after --cgc-plan-buffers into the plain
// structs of ExplainModel.h; cgc's renderers (lib/Tools/cgc) print them as
// text, Graphviz or HTML. Nothing here formats output.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_EXPLAIN_EXPLAIN_H
#define CGC_EXPLAIN_EXPLAIN_H

#include "cgc/Explain/ExplainModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace cgc {

/// One outline per function of a module after --cgc-plan-buffers: each
/// island with its op and kernel counts and the ONNX nodes of each kernel,
/// each eager region with its ops and their reasons, and the arena plan.
std::vector<ExplainOutline> buildExplainOutline(mlir::ModuleOp module);

/// What a cgc.kernel's products compute in, where --cgc-assign-precision
/// gave it a precision: "bf16 tensor cores" (its config's operand type), or
/// why FMAs stay; empty for a kernel without one.
std::string describeKernelPrecision(mlir::Operation *kernel);

/// Builds the graph of a function after --cgc-plan-buffers; fails (with a
/// diagnostic) where the plan cannot be recomputed.
mlir::FailureOr<ExplainGraph> buildExplainGraph(mlir::func::FuncOp func,
                                                llvm::StringRef model);

} // namespace cgc

#endif // CGC_EXPLAIN_EXPLAIN_H
