//===- CgcTraits.h - op facts asked of the op -------------------*- C++ -*-===//
//
// The C++ side of the traits and interface types declared in
// CgcInterfaces.td, so that "is this op elementwise" and "which reduction is
// this" are asked of the op instead of hand-written op lists.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_CGCTRAITS_H
#define CGC_DIALECT_CGC_IR_CGCTRAITS_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/StringRef.h"

namespace cgc {

/// Marks an op whose result elements each depend only on the operand
/// elements at the same position after numpy broadcasting (Cgc_Elementwise).
template <typename ConcreteType>
class Elementwise : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {
};

/// How a reduction (ReductionOpInterface) combines the elements it reduces.
enum class ReductionKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  SumSquare,
  LogSum,
  LogSumExp
};

/// The short name of a reduction kind ("sum", "sum_square", "lse", ...),
/// used in generated kernel names.
llvm::StringRef stringifyReductionKind(ReductionKind kind);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_CGCTRAITS_H
