//===- StoredOperands.h - product operands stored narrow --------*- C++ -*-===//
//
// Under --precision=fp16|bf16, --cgc-narrow-storage stores an f32 value
// that tensor-core products read in the 16-bit type they round it to
// anyway, and the product's kernel widens it back with a `cgc.cast` at the
// top of its body (so the IR stays typed as before and the interpreter
// needs nothing new). Templates and library calls read the narrow value
// itself: these helpers say where such a widening is, for code generation,
// config selection and the library-call descriptions alike.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_STOREDOPERANDS_H
#define CGC_DIALECT_CGC_IR_STOREDOPERANDS_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

namespace cgc {

/// Whether `op` is a `cgc.cast` in a kernel body that widens an f16/bf16
/// value from outside the kernel to f32 and whose every use is an operand
/// of a matmul or gemm (never a gemm's C): a narrowed product operand.
bool isOperandWidening(mlir::Operation *op);

/// The value a product operand is stored as: the narrow input of an
/// operand widening, else `v` itself.
mlir::Value storedOperand(mlir::Value v);

/// The ops of `kernel`'s body that templates compute: all but the
/// terminator and the operand widenings.
llvm::SmallVector<mlir::Operation *> kernelComputeOps(KernelOp kernel);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_STOREDOPERANDS_H
