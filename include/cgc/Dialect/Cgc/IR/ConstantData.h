//===- ConstantData.h - weights read and written -----------*- C++ -*-===//
//
// Passes that rewrite weights at compile time (16-bit copies, filters
// reordered channels last, batch norms folded into convolutions) read a
// cgc.constant's elements, dense or a resource blob (an initializer), and
// write new ones of the same kind.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_CONSTANTDATA_H
#define CGC_DIALECT_CGC_IR_CONSTANTDATA_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include <optional>

namespace cgc {

/// The raw bytes of a constant's elements (one element for a dense
/// splat), or nothing where they cannot be read (a resource without data).
std::optional<llvm::ArrayRef<char>> rawConstantData(ConstantOp constant);

/// The elements of an f32 constant, or nothing where they cannot be read.
std::optional<llvm::SmallVector<float>> constantFloats(ConstantOp constant);

/// A constant of `type` with `bytes` (row-major elements of `type`), of
/// `like`'s kind: a resource blob named after like's with `suffix` (".bf16",
/// ".channels_last"), or a dense attribute. Created after `like`.
mlir::Value createConstantLike(ConstantOp like, mlir::RankedTensorType type,
                               llvm::ArrayRef<char> bytes,
                               llvm::StringRef suffix);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_CONSTANTDATA_H
