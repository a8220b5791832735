//===- CgcConstantEvaluator.h - constant evaluation for folds ---*- C++ -*-===//
//
// The `fold` hooks of cgc ops compute on constants through one evaluator,
// the interpreter's kernels, so that folding and the reference interpreter
// cannot disagree. The interpreter library depends on this dialect, so the
// dialect reaches it through a dialect interface that the interpreter
// attaches (cgc::interp::registerConstantEvaluator); without it the ops
// that need arithmetic do not fold.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_CGCCONSTANTEVALUATOR_H
#define CGC_DIALECT_CGC_IR_CGCCONSTANTEVALUATOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectInterface.h"
#include "mlir/IR/Operation.h"

namespace cgc {

class ConstantEvaluatorInterface
    : public mlir::DialectInterface::Base<ConstantEvaluatorInterface> {
public:
  ConstantEvaluatorInterface(mlir::Dialect *dialect) : Base(dialect) {}

  /// The single result of `op` applied to `operands`, or null when it cannot
  /// be computed now (a run-time error such as an index out of range or a
  /// division by zero is left to run time; no diagnostic is emitted).
  virtual mlir::DenseElementsAttr
  evaluate(mlir::Operation *op,
           llvm::ArrayRef<mlir::DenseElementsAttr> operands) const = 0;
};

/// Folds a one-result op whose operands are all small dense constants by
/// evaluating it; null when an operand is not constant, a tensor is larger
/// than the fold limit, the result type is not static or no evaluator is
/// attached.
mlir::DenseElementsAttr
evaluateConstantOp(mlir::Operation *op,
                   llvm::ArrayRef<mlir::Attribute> operands);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_CGCCONSTANTEVALUATOR_H
