//===- Gradients.h - building gradient, loss and optimizer ops --*- C++ -*-===//
//
// The ops of a training step are ordinary cgc ops (matmul, elementwise,
// reductions), so the rest of the pipeline fuses and plans them like
// inference. GradientBuilder is the vocabulary the gradient rules
// (CgcGradients.cpp) and cgc-build-train-step write them in: static shapes,
// numpy broadcasting, and `sumTo` to undo a broadcast.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_GRADIENTS_H
#define CGC_DIALECT_CGC_IR_GRADIENTS_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>
#include <vector>

namespace cgc {

class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  static mlir::RankedTensorType typeOf(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
    return typeOf(v).getShape();
  }

  /// A rank-0 constant of `elementType` (broadcasts against anything).
  mlir::Value scalar(double value, mlir::Type elementType);
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalarLike(double value, mlir::Value like) {
    return scalar(value, typeOf(like).getElementType());
  }
  /// A zero tensor of `type` (a splat constant).
  mlir::Value zeros(mlir::RankedTensorType type) { return splat(0.0, type); }
  /// A tensor of `type` whose every element is `value` (a splat constant).
  mlir::Value splat(double value, mlir::RankedTensorType type);

  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value pow(mlir::Value a, mlir::Value b);
  mlir::Value scale(mlir::Value a, double factor) {
    return factor == 1.0 ? a : mul(a, scalarLike(factor, a));
  }
  /// op(x) op(y), op transposing the last two dims where asked: one GEMM
  /// reading its operands transposed for matrices (no transpose kernel),
  /// else a transpose and a batched matmul.
  mlir::Value product(mlir::Value x, mlir::Value y, bool transX, bool transY);
  mlir::Value neg(mlir::Value a);
  mlir::Value abs(mlir::Value a);
  mlir::Value exp(mlir::Value a);
  mlir::Value log(mlir::Value a);
  mlir::Value sqrt(mlir::Value a);
  mlir::Value reciprocal(mlir::Value a);
  mlir::Value erf(mlir::Value a);
  mlir::Value tanh(mlir::Value a);
  mlir::Value sign(mlir::Value a);
  mlir::Value greater(mlir::Value a, mlir::Value b);
  mlir::Value greaterOrEqual(mlir::Value a, mlir::Value b);
  mlir::Value lessOrEqual(mlir::Value a, mlir::Value b);
  mlir::Value logicalAnd(mlir::Value a, mlir::Value b);
  mlir::Value logicalOr(mlir::Value a, mlir::Value b);
  mlir::Value logicalNot(mlir::Value a);
  mlir::Value equal(mlir::Value a, mlir::Value b);
  mlir::Value where(mlir::Value condition, mlir::Value a, mlir::Value b);
  mlir::Value cast(mlir::Value a, mlir::Type elementType);

  mlir::Value matmul(mlir::Value a, mlir::Value b);
  mlir::Value transpose(mlir::Value a, llvm::ArrayRef<int64_t> perm);
  /// Swaps the last two dims (a matrix transpose of each batch entry).
  mlir::Value transposeLastTwo(mlir::Value a);
  mlir::Value reshape(mlir::Value a, llvm::ArrayRef<int64_t> shape);
  mlir::Value expand(mlir::Value a, llvm::ArrayRef<int64_t> shape);
  mlir::Value reduceSum(mlir::Value a, llvm::ArrayRef<int64_t> axes,
                        bool keepdims);
  mlir::Value reduceMean(mlir::Value a, llvm::ArrayRef<int64_t> axes,
                         bool keepdims);
  mlir::Value slice(mlir::Value a, llvm::ArrayRef<int64_t> starts,
                    llvm::ArrayRef<int64_t> ends,
                    llvm::ArrayRef<int64_t> steps = {});
  /// `a` padded with `value` (pads: every dim's begin, then every end).
  mlir::Value pad(mlir::Value a, llvm::ArrayRef<int64_t> pads,
                  double value = 0.0);
  /// `into` with `updates` added at the index tuples `tuples` (ScatterND,
  /// reduction add: a tuple given twice adds both).
  mlir::Value scatterAdd(mlir::Value into, mlir::Value tuples,
                         mlir::Value updates);
  /// One row of `depth` a index (`indices` of any shape, a new last dim):
  /// 1 at the index (negative ones count from `depth`), 0 elsewhere.
  mlir::Value oneHot(mlir::Value indices, int64_t depth,
                     mlir::Type elementType);

  /// The gradient of a value broadcast from `shape` to `g`'s shape: `g`
  /// summed over the broadcast dims, in `shape`.
  mlir::Value sumTo(mlir::Value g, llvm::ArrayRef<int64_t> shape);

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// Reverse-mode differentiation inside one block: the gradient of
/// `target` with respect to `sources` (and every value between them),
/// through the ops of the block that read a source (directly or not) and
/// that `target` depends on, each op's rule (DifferentiableOpInterface)
/// applied in reverse program order; a value with several uses gets the
/// sum of its uses' gradients. Used by cgc-build-train-step (the loss with
/// respect to the weights) and by the importer of ONNX's Gradient op.
class ReverseMode {
public:
  ReverseMode(mlir::Block &block, llvm::ArrayRef<mlir::Value> sources,
              mlir::Value target);

  /// The ops the gradient flows through, in program order.
  llvm::ArrayRef<mlir::Operation *> activeOps() const { return active; }
  /// Whether `target` depends on `v` through the active ops.
  bool reaches(mlir::Value v) const { return activeValues.contains(v); }

  /// Builds the backward ops with `g`, `seed` being the gradient of
  /// `target` (of its type, or a scalar). On failure `failedOp` is the op
  /// whose gradient could not be built and `hasRule` says whether it has
  /// a rule at all.
  mlir::LogicalResult build(GradientBuilder &g, mlir::Value seed,
                            mlir::Operation *&failedOp, bool &hasRule);

  /// The gradient of `target` with respect to `v`; null where `target`
  /// does not depend on `v`.
  mlir::Value gradient(mlir::Value v) const { return gradients.lookup(v); }

private:
  mlir::Value target;
  llvm::SmallVector<mlir::Operation *> active;
  llvm::DenseSet<mlir::Value> activeValues;
  llvm::DenseMap<mlir::Value, mlir::Value> gradients;
};

/// Attaches the gradient rules (DifferentiableOpInterface) to the cgc ops
/// that have one; called by the dialect's initialize.
void registerGradientRules(mlir::MLIRContext *context);

/// The cgc ops with a gradient rule, sorted (`cgc --list-gradients`,
/// docs/generated/gradients.md).
std::vector<std::string> differentiableOps(mlir::MLIRContext *context);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_GRADIENTS_H
