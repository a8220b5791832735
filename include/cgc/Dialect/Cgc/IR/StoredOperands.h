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
/// of a matmul or gemm (never a gemm's C) or the input or filter of a
/// convolution: a narrowed product operand.
bool isOperandWidening(mlir::Operation *op);

/// The value a product operand is stored as: the narrow input of an
/// operand widening, else `v` itself.
mlir::Value storedOperand(mlir::Value v);

/// The ops of `kernel`'s body that templates compute: all but the
/// terminator and the operand widenings.
llvm::SmallVector<mlir::Operation *> kernelComputeOps(KernelOp kernel);

/// Whether `cast` rounds f32 to f16 or bf16: a 16-bit copy (a narrow
/// result, a convolution's rounded output).
bool isNarrowingCast(CastOp cast);

/// The 16-bit type `kernel`'s products round to (its `precision`, f16 or
/// bf16), or null.
mlir::Type narrowTypeOf(KernelOp kernel);

/// The rounding of `kernel`'s convolution to 16 bits that a conv group
/// split by --cgc-narrow-conv-outputs yields as its only result (the group
/// is the convolution, without bias, and this cast); null for any other
/// group.
CastOp narrowConvOutput(KernelOp kernel);

/// The transpose that `op`, a `single` kernel of that one op, computes
/// from a value outside it, or null (for any other op too). Moving 16-bit
/// values is the same transpose, so its narrow copy is the same kernel on
/// its input's copy (ViT's and BERT's sequence-first attention transposes
/// the normed tokens before the QKV projection).
TransposeOp soleTransposeOf(mlir::Operation *op);

/// Whether `op` is a single op whose template stores its f32 result
/// through the group's writer, so that its group may also write a 16-bit
/// copy: a max or average pool (a convolution after ResNet's max pool
/// reads the copy) or a Concat (DenseNet's 1x1 convolutions read one).
bool writesThroughStore(mlir::Operation *op);

/// Whether `ops` (a `single` group's) are such an op and the 16-bit copy of
/// its result that --cgc-narrow-storage added.
bool isSingleWithNarrowCopy(llvm::ArrayRef<mlir::Operation *> ops);

/// Whether `producer` can also write a 16-bit copy of one of its results
/// (--cgc-narrow-storage): groups whose templates run every yielded value
/// through the per-element writer (the conv templates' epilogues too: a
/// depthwise convolution writes the copy its 1x1 projection reads in
/// MobileNetV2), a single pool's or Concat's (writesThroughStore), and the
/// in-place epilogues after library calls (a matmul group's, a cuDNN conv
/// group's), which write the copy beside the f32 result the library
/// wrote. Not a convolution already split to a 16-bit output
/// (narrowConvOutput): it has no epilogue.
bool canWriteNarrowCopy(KernelOp producer);

/// Whether `v`, read by `reader`, can be stored narrow: an f32 weight, the
/// f32 result of a kernel that can write a narrow copy, or a static reshape
/// or a transpose kernel of either, from outside `reader`.
bool canStoreNarrow(mlir::Value v, KernelOp reader);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_STOREDOPERANDS_H
