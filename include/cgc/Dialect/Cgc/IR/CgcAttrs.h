//===- CgcAttrs.h - target and kernel-config attributes ---------*- C++ -*-===//
#ifndef CGC_DIALECT_CGC_IR_CGCATTRS_H
#define CGC_DIALECT_CGC_IR_CGCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"

#include "cgc/Dialect/Cgc/IR/CgcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cgc/Dialect/Cgc/IR/CgcAttrs.h.inc"

namespace cgc {

/// The entry of the table of known GPUs for `arch` (sm_80, sm_86, sm_89,
/// sm_90, sm_100), or null.
TargetAttr knownTarget(mlir::MLIRContext *context, llvm::StringRef arch);

/// The architectures of that table, for messages.
llvm::ArrayRef<llvm::StringRef> knownArchitectures();

/// The module's target, or sm_90's (the default of `cgc --arch`) for IR
/// written without one.
TargetAttr lookupTargetOrDefault(mlir::Operation *op);

/// Bytes of one element of a tensor-core operand type (tf32: 4, f16 and
/// bf16: 2); 0 for a type tensor cores do not take, or null.
int64_t tensorCoreOperandBytes(mlir::Type operand);

/// The architecture `cgc --arch` takes by default.
constexpr llvm::StringLiteral kDefaultArch = "sm_90";

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_CGCATTRS_H
