//===- ImportHelpers.h - small helpers shared by op importers ---*- C++ -*-===//

#ifndef CGC_LIB_IMPORT_ONNX_IMPORTHELPERS_H
#define CGC_LIB_IMPORT_ONNX_IMPORTHELPERS_H

#include "ImporterCore.h"

namespace cgc::onnx_import {

using Results = mlir::FailureOr<llvm::SmallVector<mlir::Value>>;

/// Wraps one value (or a failure) as an importer result.
inline Results single(mlir::FailureOr<mlir::Value> value) {
  if (mlir::failed(value))
    return mlir::failure();
  return llvm::SmallVector<mlir::Value>{*value};
}

/// Fetches required inputs [0, n); fails (with a diagnostic) if any is absent.
inline mlir::FailureOr<llvm::SmallVector<mlir::Value>>
requiredInputs(NodeContext &ctx, size_t n) {
  llvm::SmallVector<mlir::Value> values;
  for (size_t i = 0; i < n; ++i) {
    mlir::FailureOr<mlir::Value> v = ctx.requiredInput(i);
    if (mlir::failed(v))
      return mlir::failure();
    values.push_back(*v);
  }
  return values;
}

/// Reshape to a static shape.
inline mlir::FailureOr<mlir::Value> reshapeTo(NodeContext &ctx, mlir::Value v,
                                              llvm::ArrayRef<int64_t> shape) {
  auto type = mlir::RankedTensorType::get(shape, tensorType(v).getElementType());
  if (type == v.getType())
    return v;
  return ctx.create1<ReshapeOp>({v}, {}, {type});
}

/// The elements [start, end) by `step` of x along `axis` (the other dims
/// whole).
mlir::FailureOr<mlir::Value> sliceAlong(NodeContext &ctx, mlir::Value x,
                                        int64_t axis, int64_t start,
                                        int64_t end, int64_t step = 1);

/// Element `index` of `x` along `axis`, with that dim dropped (a step of
/// a sequence).
mlir::FailureOr<mlir::Value> takeStep(NodeContext &ctx, mlir::Value x,
                                      int64_t axis, int64_t index);

/// A Conv of x by w (and bias) with the node's window attributes (strides,
/// pads or auto_pad, dilations, group, kernel_shape).
mlir::FailureOr<mlir::Value> convOf(NodeContext &ctx, mlir::Value x,
                                    mlir::Value w, mlir::Value bias);

/// Chains of elementwise ops over one element type, for compositions with
/// many steps: every scalar is a constant of that type, and a failed step
/// makes the later ones no-ops (check `ok` once at the end).
struct Arith {
  NodeContext &ctx;
  mlir::Type element;
  bool ok = true;

  Arith(NodeContext &ctx, mlir::Type element) : ctx(ctx), element(element) {}
  mlir::Value c(double v) { return ctx.constScalar(v, element); }
  template <typename OpTy> mlir::Value op(mlir::ValueRange operands) {
    if (!ok)
      return mlir::Value();
    mlir::FailureOr<mlir::Value> v = ctx.create1<OpTy>(operands);
    ok = mlir::succeeded(v);
    return ok ? *v : mlir::Value();
  }
  /// A unary op whose result type is its operand's.
  template <typename OpTy> mlir::Value unary(mlir::Value a) {
    if (!ok)
      return mlir::Value();
    mlir::FailureOr<mlir::Value> v = ctx.create1<OpTy>({a}, {}, {a.getType()});
    ok = mlir::succeeded(v);
    return ok ? *v : mlir::Value();
  }
  mlir::Value add(mlir::Value a, mlir::Value b) { return op<AddOp>({a, b}); }
  mlir::Value sub(mlir::Value a, mlir::Value b) { return op<SubOp>({a, b}); }
  mlir::Value mul(mlir::Value a, mlir::Value b) { return op<MulOp>({a, b}); }
  mlir::Value div(mlir::Value a, mlir::Value b) { return op<DivOp>({a, b}); }
  mlir::Value sqrt(mlir::Value a) { return unary<SqrtOp>(a); }
  mlir::Value floor(mlir::Value a) { return unary<FloorOp>(a); }
  /// cond ? a : b.
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value b) {
    return op<WhereOp>({cond, a, b});
  }
  /// min(max(a, lo), hi).
  mlir::Value clamp(mlir::Value a, double lo, double hi) {
    if (!ok)
      return mlir::Value();
    mlir::FailureOr<mlir::Value> v = ctx.create1<ClipOp>(
        {a}, {ctx.namedF64("min", lo), ctx.namedF64("max", hi)},
        {a.getType()});
    ok = mlir::succeeded(v);
    return ok ? *v : mlir::Value();
  }
};

/// Casts v to `element` when its element type differs.
mlir::FailureOr<mlir::Value> castTo(NodeContext &ctx, mlir::Value v,
                                    mlir::Type element);

/// The `stash_type` attribute of RMSNormalization and Range (opsets 23, 27):
/// f32 for FLOAT (the default), f64 for DOUBLE; any other value is an error.
mlir::FailureOr<mlir::Type> stashType(NodeContext &ctx);

/// Fails with a diagnostic when any output from `first` on is used (training
/// outputs, indices, ...).
mlir::LogicalResult checkOutputsUnused(NodeContext &ctx, size_t first,
                                       llvm::StringRef what);

/// Normalizes (and sorts) a list of axes; duplicates are an error.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeSortedAxes(NodeContext &ctx, llvm::ArrayRef<int64_t> axes,
                    int64_t rank);

/// The axes [first, rank).
llvm::SmallVector<int64_t> axesFrom(int64_t first, int64_t rank);

} // namespace cgc::onnx_import

#endif // CGC_LIB_IMPORT_ONNX_IMPORTHELPERS_H
