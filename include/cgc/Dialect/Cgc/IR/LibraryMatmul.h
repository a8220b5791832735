//===- LibraryMatmul.h - a matmul group as cuBLASLt takes it ----*- C++ -*-===//
//
// A `matmul` kernel group may run as a cuBLASLt call (kernel strategy
// `cublaslt_matmul`) instead of a generated kernel: the product, alpha,
// a bias row and beta * C in the library, and the rest of the group's
// epilogue (activations, residuals, ...) as an elementwise kernel that
// rewrites the product's buffer in place. Which groups qualify, and the
// problem cuBLASLt is given, is decided here once, for the config
// selection, the kernel verifier and the lowering alike.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_LIBRARYMATMUL_H
#define CGC_DIALECT_CGC_IR_LIBRARYMATMUL_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include <string>

namespace cgc {

/// D = alpha * op(A) x op(B) + beta * C + bias over `batch` row-major
/// matrices (cgraph.cublaslt_matmul_node).
struct LibraryMatmul {
  mlir::Operation *product = nullptr; ///< the cgc.matmul or cgc.gemm
  mlir::Value a, b;
  mlir::Value c;    ///< beta * C with C of D's shape; null when absent
  mlir::Value bias; ///< a row [N] added to every row; null when absent
  int64_t m = 1, n = 1, k = 1, batch = 1;
  bool transA = false, transB = false;
  /// Elements from one matrix of the batch to the next (0: one matrix
  /// serves every batch index).
  int64_t strideA = 0, strideB = 0, strideD = 0;
  double alpha = 1.0, beta = 0.0;
  /// The value cuBLASLt's D holds: the product, or the last add of a row
  /// (bias) or of a tensor of D's shape (beta = 1) that it absorbed.
  mlir::Value d;
  /// The group's ops after `d`, all elementwise and computing D's shape and
  /// type: the in-place epilogue kernel's work (empty: none).
  llvm::SmallVector<mlir::Operation *> epilogue;
};

/// Products of at least this many multiply-adds go to cuBLASLt under
/// --cublaslt=auto (and keep their layer norm out of the group, which the
/// library cannot fuse). Measured on the H200 (docs/kernels.md): every BERT
/// and ViT product at batch 8 (1024-1576 rows, 151-905 M multiply-adds) is
/// faster in cuBLASLt in every precision, while at batch 1 (128-197 rows,
/// up to 116 M) and on GPT and the MLP the generated kernels win: their
/// fused epilogues, layer norms and programmatic launches outweigh the
/// library's faster main loop.
constexpr int64_t kLibraryMinMultiplyAdds = int64_t(1) << 27;

/// How cuBLASLt computes `kernel`, or the reason it cannot (in `reason`,
/// a phrase: "its layer norm is fused before the product").
mlir::FailureOr<LibraryMatmul> describeLibraryMatmul(KernelOp kernel,
                                                     std::string &reason);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_LIBRARYMATMUL_H
