//===- CgcOps.h - cgc dialect ops -------------------------------*- C++ -*-===//
#ifndef CGC_DIALECT_CGC_IR_CGCOPS_H
#define CGC_DIALECT_CGC_IR_CGCOPS_H

#include "cgc/Dialect/Cgc/IR/CgcDialect.h"
#include "cgc/Dialect/Cgc/IR/CgcTraits.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "cgc/Dialect/Cgc/IR/CgcAttrs.h"
#include "cgc/Dialect/Cgc/IR/CgcInterfaces.h.inc"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"

#define GET_OP_CLASSES
#include "cgc/Dialect/Cgc/IR/CgcOps.h.inc"

namespace cgc {

/// Numpy-style broadcast of two shapes; fails when a pair of static dims
/// differs and neither is 1. Dynamic dims broadcast to dynamic unless the
/// other side fixes them.
llvm::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Dims for messages: "[1, ?, 3]" (a dynamic dim as ?).
std::string formatDims(llvm::ArrayRef<int64_t> dims);

/// Why `op` cannot be captured in a CUDA graph, or "" if it can: its own
/// CaptureSafetyOpInterface reason, else "unbound symbolic dim" when an
/// operand or result has a dynamic shape. The partitioning pass splits on
/// it and --explain prints it, so the two always agree.
std::string captureUnsafeReason(mlir::Operation *op);

/// Output length of one pooled/convolved spatial dim, or kDynamic.
int64_t slidingWindowOutputSize(int64_t input, int64_t kernel, int64_t stride,
                                int64_t padBegin, int64_t padEnd,
                                int64_t dilation, bool ceilMode);

/// The permutation that stores the channel dim (dim 1 of N x C x ...)
/// last: [0, 2, ..., rank - 1, 1]; and its inverse, [0, rank - 1, 1, ...].
llvm::SmallVector<int64_t> channelsLastPerm(int64_t rank);
llvm::SmallVector<int64_t> channelsFirstPerm(int64_t rank);

/// `shape` permuted as a transpose by `perm` permutes it.
llvm::SmallVector<int64_t> permuteDims(llvm::ArrayRef<int64_t> shape,
                                       llvm::ArrayRef<int64_t> perm);

/// The perm of `second` applied after `first`, as one transpose:
/// T_second(T_first(x)) = T_composed(x).
llvm::SmallVector<int64_t> composedPerm(llvm::ArrayRef<int64_t> first,
                                        llvm::ArrayRef<int64_t> second);

/// Whether `perm` keeps every dim where it is.
bool isIdentityPerm(llvm::ArrayRef<int64_t> perm);

/// A conv's input, weight and output dims in the channels-first order of
/// ONNX (N x C x ...), whichever order the op stores them in.
llvm::SmallVector<int64_t> convDimsChannelsFirst(ConvOp conv, mlir::Value v);

/// A reduction a norm kernel computes row by row: a sum, mean, maximum,
/// minimum, sum of squares or L2 norm of a float tensor over exactly its
/// last axis, keeping that axis with size 1 (RMSNorm's mean of squares,
/// an L2 normalization's norm, a softmax's maximum written out).
bool isRowReduction(mlir::Operation *op);

/// Whether `op` anchors a `norm` kernel: a layer norm, softmax, log
/// softmax or row reduction (isRowReduction).
bool isNormAnchor(mlir::Operation *op);

/// The rows a norm kernel anchored on `anchor` normalizes in its input
/// (the kernel's index space): a layer norm's dims from its axis, a
/// softmax's axis, a row reduction's last axis. --cgc-select-kernel-config
/// sizes the kernel by them and the norm template writes it over them.
NormRowShape normRowsOf(mlir::Operation *anchor);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_CGCOPS_H
