//===- Views.h - strided views through transpose/reshape/split --*- C++ -*-===//
//
// A value computed from another only by transposes, reshapes, splits and
// gathers of one constant index (torch's `select`, x[i]) is a strided view
// of it: element (c0, c1, ...) is source element
// offset + sum_d c_d * strides[d]. The fuse pass uses this to let an
// attention kernel read Q, K and V (and write its output) through such ops
// instead of launching a kernel per op; codegen uses it to index.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_ANALYSIS_VIEWS_H
#define CGC_DIALECT_CGC_ANALYSIS_VIEWS_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/IR/Matchers.h"

#include <optional>

namespace cgc {

struct StridedView {
  llvm::SmallVector<int64_t> shape, strides;
  int64_t offset = 0;
};

/// The row-major view of a whole tensor of `shape`.
inline StridedView contiguousView(llvm::ArrayRef<int64_t> shape) {
  StridedView v;
  v.shape.assign(shape.begin(), shape.end());
  v.strides.resize(shape.size());
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

/// The index of a gather that picks one slice by a constant scalar index
/// (a 0-d indices tensor: the axis goes away), in [0, size of the axis);
/// nothing for any other gather.
inline std::optional<int64_t> constantSliceIndex(GatherOp gather) {
  auto indicesType =
      llvm::cast<mlir::RankedTensorType>(gather.getIndices().getType());
  auto inputType = llvm::cast<mlir::RankedTensorType>(gather.getInput().getType());
  mlir::DenseIntElementsAttr index;
  if (indicesType.getRank() != 0 || !inputType.hasStaticShape() ||
      !mlir::matchPattern(gather.getIndices(), mlir::m_Constant(&index)))
    return std::nullopt;
  int64_t axis = gather.getAxis();
  if (axis < 0)
    axis += inputType.getRank();
  int64_t size = inputType.getDimSize(axis);
  int64_t i = (*index.getValues<llvm::APInt>().begin()).getSExtValue();
  if (i < 0)
    i += size;
  if (i < 0 || i >= size)
    return std::nullopt;
  return i;
}

/// Whether `op` makes a strided view of its first operand (applyView may
/// still refuse a reshape whose strides do not line up).
inline bool isViewOp(mlir::Operation *op) {
  if (auto gather = llvm::dyn_cast<GatherOp>(op))
    return constantSliceIndex(gather).has_value();
  return llvm::isa<SplitOp, TransposeOp, ReshapeOp>(op);
}

/// `view` after `op` (a transpose, a reshape, a split result `result` or a
/// gather of one constant index),
/// or nothing when the result is no strided view of the same memory (a
/// reshape that merges dims whose strides do not line up).
inline std::optional<StridedView> applyView(const StridedView &view,
                                            mlir::Operation *op,
                                            unsigned result = 0) {
  StridedView out = view;
  if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
    llvm::ArrayRef<int64_t> perm = t.getPerm();
    for (size_t d = 0; d < perm.size(); ++d) {
      out.shape[d] = view.shape[perm[d]];
      out.strides[d] = view.strides[perm[d]];
    }
    return out;
  }
  if (auto g = llvm::dyn_cast<GatherOp>(op)) {
    std::optional<int64_t> index = constantSliceIndex(g);
    if (!index)
      return std::nullopt;
    int64_t axis = g.getAxis();
    if (axis < 0)
      axis += view.shape.size();
    out.offset += *index * view.strides[axis];
    out.shape.erase(out.shape.begin() + axis);
    out.strides.erase(out.strides.begin() + axis);
    return out;
  }
  if (auto s = llvm::dyn_cast<SplitOp>(op)) {
    int64_t axis = s.getAxis();
    if (axis < 0)
      axis += view.shape.size();
    llvm::ArrayRef<int64_t> sizes = s.getSizes();
    for (unsigned k = 0; k < result; ++k)
      out.offset += sizes[k] * view.strides[axis];
    out.shape[axis] = sizes[result];
    return out;
  }
  auto r = llvm::dyn_cast<ReshapeOp>(op);
  if (!r)
    return std::nullopt;
  auto type = llvm::cast<mlir::RankedTensorType>(r.getResult().getType());
  if (!type.hasStaticShape())
    return std::nullopt;
  // Walk old and new dims in groups of equal element count; inside a group
  // the old dims (size-1 dims aside) must be contiguous with each other.
  llvm::ArrayRef<int64_t> newShape = type.getShape();
  llvm::ArrayRef<int64_t> oldShape = view.shape;
  out.shape.assign(newShape.begin(), newShape.end());
  out.strides.assign(newShape.size(), 1);
  size_t i = 0, j = 0;
  while (i < oldShape.size() && j < newShape.size()) {
    size_t i0 = i, j0 = j;
    int64_t oldCount = oldShape[i++], newCount = newShape[j++];
    while (oldCount != newCount) {
      if (oldCount < newCount && i < oldShape.size())
        oldCount *= oldShape[i++];
      else if (newCount < oldCount && j < newShape.size())
        newCount *= newShape[j++];
      else
        return std::nullopt;
    }
    int64_t inner = -1, expected = -1;
    for (size_t k = i; k-- > i0;) {
      if (oldShape[k] == 1)
        continue;
      if (inner < 0)
        inner = view.strides[k];
      else if (view.strides[k] != expected)
        return std::nullopt;
      expected = view.strides[k] * oldShape[k];
    }
    int64_t stride = inner < 0 ? 1 : inner;
    for (size_t k = j; k-- > j0;) {
      out.strides[k] = stride;
      stride *= newShape[k];
    }
  }
  // What is left on either side is dims of size 1.
  for (; i < oldShape.size(); ++i)
    if (oldShape[i] != 1)
      return std::nullopt;
  for (; j < newShape.size(); ++j)
    if (newShape[j] != 1)
      return std::nullopt;
  return out;
}


/// A view whose dims may each stand for several strided factors (outer
/// first): what a reshape makes when it merges dims whose strides do not
/// line up. torch's multi-head attention merges the batch with the heads
/// ([L, N, E] -> [L, N*H, D]) and splits them again after a transpose
/// ([N*H, L, D] -> [N, H, L, D]): no step but the whole chain is a
/// strided view.
struct FactoredView {
  struct Factor {
    int64_t size, stride;
  };
  llvm::SmallVector<llvm::SmallVector<Factor, 2>> dims;
  int64_t offset = 0;
};

inline FactoredView factored(const StridedView &view) {
  FactoredView f;
  f.offset = view.offset;
  for (size_t d = 0; d < view.shape.size(); ++d)
    f.dims.push_back({{view.shape[d], view.strides[d]}});
  return f;
}

/// The factors of one dim without those of size 1, adjacent ones merged
/// where they are one stride apart.
inline llvm::SmallVector<FactoredView::Factor, 2>
simplified(llvm::ArrayRef<FactoredView::Factor> factors) {
  llvm::SmallVector<FactoredView::Factor, 2> out;
  for (FactoredView::Factor f : factors) {
    if (f.size == 1)
      continue;
    if (!out.empty() && out.back().stride == f.size * f.stride)
      out.back() = {out.back().size * f.size, f.stride};
    else
      out.push_back(f);
  }
  return out;
}

/// `view` after `op` (see applyView), with merged dims kept as factors.
inline std::optional<FactoredView> applyFactoredView(const FactoredView &view,
                                                     mlir::Operation *op,
                                                     unsigned result = 0) {
  FactoredView out = view;
  if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
    for (auto [d, p] : llvm::enumerate(t.getPerm()))
      out.dims[d] = view.dims[p];
    return out;
  }
  if (auto g = llvm::dyn_cast<GatherOp>(op)) {
    std::optional<int64_t> index = constantSliceIndex(g);
    if (!index)
      return std::nullopt;
    int64_t axis = g.getAxis();
    if (axis < 0)
      axis += view.dims.size();
    // The index in the mixed radix of the dim's factors, inner first.
    int64_t rest = *index;
    for (const FactoredView::Factor &f : llvm::reverse(view.dims[axis])) {
      out.offset += (rest % f.size) * f.stride;
      rest /= f.size;
    }
    out.dims.erase(out.dims.begin() + axis);
    return out;
  }
  if (auto s = llvm::dyn_cast<SplitOp>(op)) {
    int64_t axis = s.getAxis();
    if (axis < 0)
      axis += view.dims.size();
    auto factors = simplified(view.dims[axis]);
    if (factors.size() > 1)
      return std::nullopt;
    int64_t stride = factors.empty() ? 1 : factors.front().stride;
    llvm::ArrayRef<int64_t> sizes = s.getSizes();
    for (unsigned k = 0; k < result; ++k)
      out.offset += sizes[k] * stride;
    out.dims[axis] = {{sizes[result], stride}};
    return out;
  }
  auto r = llvm::dyn_cast<ReshapeOp>(op);
  if (!r)
    return std::nullopt;
  auto type = llvm::cast<mlir::RankedTensorType>(r.getResult().getType());
  if (!type.hasStaticShape())
    return std::nullopt;
  // All factors outer to inner, then dealt to the new dims from the
  // outermost: a dim takes factors until it has its size, splitting one
  // whose outer part completes it.
  llvm::SmallVector<FactoredView::Factor> flat;
  for (auto &dim : view.dims)
    for (FactoredView::Factor f : dim)
      if (f.size != 1)
        flat.push_back(f);
  size_t next = 0;
  out.dims.clear();
  for (int64_t size : type.getShape()) {
    llvm::SmallVector<FactoredView::Factor, 2> dim;
    int64_t need = size;
    while (need > 1) {
      if (next == flat.size())
        return std::nullopt;
      FactoredView::Factor &f = flat[next];
      if (f.size <= need) {
        if (need % f.size != 0)
          return std::nullopt;
        dim.push_back(f);
        need /= f.size;
        ++next;
        continue;
      }
      if (f.size % need != 0)
        return std::nullopt;
      // The outer `need` of this factor; its inner part stays for the next
      // dims.
      int64_t inner = f.size / need;
      dim.push_back({need, f.stride * inner});
      f = {inner, f.stride};
      need = 1;
    }
    out.dims.push_back(std::move(dim));
  }
  if (next != flat.size())
    return std::nullopt;
  return out;
}

/// The strided view a chain of view ops makes of `start` (`chain`: each op
/// and the result of it that the next reads, first applied first), or
/// nothing where it makes none. Each step as applyView where that can
/// follow it; a merge of dims that applyView refuses is kept as factors
/// until a later reshape or transpose undoes it.
inline std::optional<StridedView> viewThrough(
    const StridedView &start,
    llvm::ArrayRef<std::pair<mlir::Operation *, unsigned>> chain) {
  std::optional<StridedView> view = start;
  for (auto [op, result] : chain)
    if (view)
      view = applyView(*view, op, result);
  if (view)
    return view;
  std::optional<FactoredView> f = factored(start);
  for (auto [op, result] : chain)
    if (f)
      f = applyFactoredView(*f, op, result);
  if (!f)
    return std::nullopt;
  StridedView out;
  out.offset = f->offset;
  for (auto &dim : f->dims) {
    auto factors = simplified(dim);
    if (factors.size() > 1)
      return std::nullopt;
    int64_t size = 1;
    for (FactoredView::Factor x : dim)
      size *= x.size;
    out.shape.push_back(size);
    out.strides.push_back(factors.empty() ? 0 : factors.front().stride);
  }
  // A dim of one element never moves: give it the stride contiguousView
  // would (the dims inside it), as the step-by-step views do.
  int64_t inner = 1;
  for (size_t d = out.shape.size(); d-- > 0;) {
    if (out.shape[d] == 1)
      out.strides[d] = inner;
    inner = out.shape[d] * out.strides[d];
  }
  return out;
}

} // namespace cgc

#endif // CGC_DIALECT_CGC_ANALYSIS_VIEWS_H
