//===- PrecisionPolicy.h - the user's precision options as predicates -*- C++ -*-===//
//
// `--precision` and `--keep-fp32` are read by two passes: cgc-assign-precision
// stamps the type on each product's kernel, and cgc-fuse must know before
// that whether a product will run on tensor cores (its layer-norm prologue
// only pays off on FMAs). One reading of the options keeps them agreeing.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_TRANSFORMS_PRECISIONPOLICY_H
#define CGC_DIALECT_CGC_TRANSFORMS_PRECISIONPOLICY_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace cgc {

/// The type `--precision=NAME` rounds f32 products to; null for fp32,
/// failure for a name that is none of the four.
mlir::FailureOr<mlir::Type> precisionType(llvm::StringRef name,
                                          mlir::MLIRContext *context);

/// The ONNX op type of a product (MatMul, Gemm, Conv), or "".
llvm::StringRef onnxOpTypeOf(mlir::Operation *product);

/// Whether a `keep-fp32` entry names `product`'s ONNX op type (any case)
/// or its node; the entry that did is added to `used` when given.
bool keptInFp32(mlir::Operation *product,
                llvm::ArrayRef<std::string> keepFp32,
                llvm::StringSet<> *used = nullptr);

/// The type the product's inputs are rounded to on tensor cores: their own
/// f16/bf16 type, else `requested` for f32 inputs not kept in fp32; null
/// where it stays on FMAs.
mlir::Type productPrecision(mlir::Operation *product, mlir::Type requested,
                            llvm::ArrayRef<std::string> keepFp32,
                            llvm::StringSet<> *used = nullptr);

} // namespace cgc

#endif // CGC_DIALECT_CGC_TRANSFORMS_PRECISIONPOLICY_H
