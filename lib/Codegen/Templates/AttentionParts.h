//===- AttentionParts.h - what the attention templates share ----*- C++ -*-===//
//
// Private to the attention templates: Attention.cpp writes the FMA kernel
// (the scores of a block's rows in shared memory), AttentionTensorCore.cpp
// the mma.sync kernel (an online softmax over key chunks). Both read the
// same group, operands and output.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CODEGEN_TEMPLATES_ATTENTIONPARTS_H
#define CGC_LIB_CODEGEN_TEMPLATES_ATTENTIONPARTS_H

#include "GroupWriter.h"
#include "cgc/Dialect/Cgc/Analysis/Views.h"

namespace cgc {
namespace codegen {

/// The parts of an attention group: [views of Q, Kt, V] S = Q x Kt,
/// [elementwise ops of S], softmax, O = P x V, [epilogue | a transpose of
/// O], and its sizes: `batch` products of L queries against L2 keys, head
/// dim D, value dim Dv.
struct AttentionGroup {
  MatMulOp mm1, mm2;
  /// What the softmax normalizes: S after its elementwise ops.
  mlir::Value softmaxInput;
  llvm::ArrayRef<mlir::Operation *> prologue, epilogue;
  /// A transpose of O that the kernel stores through (no epilogue then).
  TransposeOp outT;
  int64_t rank, batch, L, L2, D, Dv;
};

/// The parts of `ops`, or an error when they are not an attention.
mlir::FailureOr<AttentionGroup>
matchAttentionGroup(llvm::ArrayRef<mlir::Operation *> ops);

/// An operand as a strided view of the value outside the kernel that it is
/// read from: its parameter, the per-block batch offset (of `bt`) and the
/// row/column strides; `aligned4`: (row, 4c) is 16-byte aligned for every
/// batch index and row; `rowsAligned4`: (4r, col) is, for every column.
struct OperandView {
  std::string param, offset;
  int64_t rowStride = 0, colStride = 0;
  bool aligned4 = false, rowsAligned4 = false;
};

/// The view of Q, Kt or V (`v`, an operand of a product in the group), or
/// an error at `where` when the ops between it and the kernel's input are
/// no strided view.
mlir::FailureOr<OperandView> operandView(GroupWriter &w, mlir::Value v,
                                         int64_t rank, mlir::Operation *where);

/// Where O(bt, r, c) is stored (contiguous, or through the transpose) and
/// the per-block batch offset.
struct OutputView {
  StridedView view;
  std::string offset;
};

OutputView outputView(AttentionGroup g);

/// Adds the launch of an attention kernel, one block of the config's
/// threads per `blocks`, whose body `print` writes; an error naming the
/// ONNX node where the block needs more than the target's static shared
/// memory (a config written by hand; the selector's always fit).
mlir::LogicalResult
launchAttention(GroupWriter &w, const AttentionGroup &g,
                llvm::StringRef kernelName, int64_t sharedBytes,
                int64_t blocks,
                llvm::function_ref<mlir::FailureOr<std::string>()> print);

/// The mma.sync kernel of a group whose config has an operand type
/// (AttentionTensorCore.cpp).
mlir::LogicalResult writeTensorCoreAttention(GroupWriter &w,
                                             const AttentionGroup &g,
                                             const OperandView &q,
                                             const OperandView &k,
                                             const OperandView &v);

} // namespace codegen
} // namespace cgc

#endif // CGC_LIB_CODEGEN_TEMPLATES_ATTENTIONPARTS_H
