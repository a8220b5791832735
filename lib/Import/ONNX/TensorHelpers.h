//===- TensorHelpers.h - shared by the data movement importers --*- C++ -*-===//
//
// Helpers of the importers of data movement, gather/scatter, resize, tensor
// generator and data-dependent ops (TensorOps.cpp and its neighbours).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_IMPORT_ONNX_TENSORHELPERS_H
#define CGC_LIB_IMPORT_ONNX_TENSORHELPERS_H

#include "ImportHelpers.h"

#include <optional>

namespace cgc::onnx_import {

/// Most elements the importer folds into a constant.
constexpr int64_t kMaxFoldElements = 1 << 16;

/// Normalizes ONNX axes against `rank`; rejects out-of-range and repeated
/// entries.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(NodeContext &ctx, llvm::ArrayRef<int64_t> axes, int64_t rank,
              llvm::StringRef what = "axes");

/// Rejects result shapes whose static dims multiply past 2^40 elements (the
/// importer's tensor size limit), so that no later size arithmetic
/// overflows.
mlir::LogicalResult checkElementCount(NodeContext &ctx,
                                      llvm::ArrayRef<int64_t> shape);

/// Rejects a target-shape input (Expand, ConstantOfShape) that is not a 1-D
/// i64 tensor of static length, or that names more than kMaxRank dims.
mlir::LogicalResult checkShapeInput(NodeContext &ctx,
                                    mlir::RankedTensorType shapeType);

/// Reshapes `x` to `shape`. A kDynamic entry of `shape` is input dim
/// `source[i]` (source is -1 for static entries); when any entry is dynamic
/// the target shape is computed at run time from Shape slices.
mlir::FailureOr<mlir::Value> reshapeKeepingDims(NodeContext &ctx,
                                                mlir::Value x,
                                                llvm::ArrayRef<int64_t> shape,
                                                llvm::ArrayRef<int64_t> source);

/// The inline dense value of a constant, or null.
mlir::DenseElementsAttr inlineDense(mlir::Value v);

/// Integer (or i1) elements of `type` from int64 values.
mlir::DenseElementsAttr intElements(mlir::RankedTensorType type,
                                    llvm::ArrayRef<int64_t> values);

/// Floating-point elements of `type` from doubles.
mlir::DenseElementsAttr floatElements(mlir::RankedTensorType type,
                                      llvm::ArrayRef<double> values);

/// Elements of `type` (any supported element type) from doubles.
mlir::DenseElementsAttr numericElements(mlir::RankedTensorType type,
                                        llvm::ArrayRef<double> values);

/// A scalar read from a one-element constant (int or float) as a double.
std::optional<double> constScalarValue(NodeContext &ctx, mlir::Value v);

/// Reads the ONNX `axes`-like ints from input `index` (newer opsets) or the
/// attribute `name`; absent or empty gives nullopt.
mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
optionalInts(NodeContext &ctx, size_t index, llvm::StringRef name);

} // namespace cgc::onnx_import

#endif // CGC_LIB_IMPORT_ONNX_TENSORHELPERS_H
