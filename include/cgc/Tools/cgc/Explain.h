//===- Explain.h - a readable account of a compiled program -----*- C++ -*-===//
#ifndef CGC_TOOLS_CGC_EXPLAIN_H
#define CGC_TOOLS_CGC_EXPLAIN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace cgc {

/// Prints, for a module after --cgc-plan-buffers, each island with its op
/// and kernel counts and the ONNX nodes of each kernel, each eager region
/// with its nodes and reason, and the summary lines `kernels: K` and
/// `arena: A bytes, lower bound L, naive S`.
void explainText(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace cgc

#endif // CGC_TOOLS_CGC_EXPLAIN_H
