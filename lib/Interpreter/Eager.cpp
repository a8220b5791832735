//===- Eager.cpp - ops whose result shape depends on run-time values ------===//

#include "Kernels.h"

#include <cmath>
#include <map>
#include <numeric>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

/// [rank, count] indices of the non-zero elements in row-major order.
Results runNonZero(OpCall &call) {
  const HostTensor &x = call.in(0);
  std::vector<SmallVector<int64_t, 4>> found;
  int64_t flat = 0;
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index) {
    if (x.getF(flat++) != 0)
      found.emplace_back(index.begin(), index.end());
  });
  int64_t count = found.size();
  HostTensor out = call.makeResult({x.rank(), count});
  for (int64_t d = 0; d < x.rank(); ++d)
    for (int64_t j = 0; j < count; ++j)
      out.setI(d * count + j, found[j][d]);
  return single(std::move(out));
}

/// Keeps the slices along `axis` (or the elements of the flattened input)
/// whose condition entry is true; a shorter condition leaves the rest out.
Results runCompress(OpCall &call) {
  auto op = call.get<CompressOp>();
  const HostTensor &x = call.in(0), &condition = call.in(1);
  std::optional<uint64_t> axisAttr = op.getAxis();
  SmallVector<int64_t, 4> shape;
  int64_t axis = 0;
  if (axisAttr) {
    axis = (int64_t)*axisAttr;
    if (axis < 0 || axis >= x.rank()) {
      call.error() << "axis " << axis << " out of range";
      return failure();
    }
    shape.assign(x.shape.begin(), x.shape.end());
  } else {
    shape.push_back(x.numElements());
  }
  int64_t extent = shape[axis];
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < condition.numElements(); ++i) {
    if (!condition.getU(i))
      continue;
    if (i >= extent) {
      call.error() << "condition entry " << i << " is true but the axis has "
                   << extent << " entries";
      return failure();
    }
    kept.push_back(i);
  }
  int64_t outer = product(ArrayRef<int64_t>(shape).take_front(axis));
  int64_t inner = product(ArrayRef<int64_t>(shape).drop_front(axis + 1));
  shape[axis] = kept.size();
  HostTensor out = call.makeResult(shape);
  unsigned bytes = x.elementBytes();
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : kept) {
      copyBytes(out.bytes.data() + dst * bytes,
                  x.bytes.data() + (o * extent + i) * inner * bytes,
                  inner * bytes);
      dst += inner;
    }
  return single(std::move(out));
}

/// Unique elements (or slices along `axis`): values, the index of each
/// value's first occurrence, the inverse indices and the counts. With
/// `sorted` the values ascend (slices compare lexicographically), else they
/// keep the order of first occurrence.
Results runUnique(OpCall &call) {
  auto op = call.get<UniqueOp>();
  const HostTensor &x = call.in(0);
  std::optional<int64_t> axisAttr;
  if (op.getAxis())
    axisAttr = (int64_t)*op.getAxis();
  SmallVector<int64_t, 4> shape =
      axisAttr ? SmallVector<int64_t, 4>(x.shape)
               : SmallVector<int64_t, 4>{x.numElements()};
  int64_t axis = axisAttr.value_or(0);
  if (axis < 0 || axis >= (int64_t)shape.size()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  int64_t outer = product(ArrayRef<int64_t>(shape).take_front(axis));
  int64_t inner = product(ArrayRef<int64_t>(shape).drop_front(axis + 1));
  int64_t extent = shape[axis];
  // Slice j as a vector of doubles (exact for the test types) for ordering,
  // and its first flat element to copy from.
  auto element = [&](int64_t j, int64_t o, int64_t i) {
    return (o * extent + j) * inner + i;
  };
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double va = x.getF(element(a, o, i)), vb = x.getF(element(b, o, i));
        if (va != vb)
          return va < vb;
      }
    return false;
  };
  auto equal = [&](int64_t a, int64_t b) { return !less(a, b) && !less(b, a); };
  SmallVector<int64_t> firsts; // first occurrence of each unique slice
  SmallVector<int64_t> inverse(extent);
  SmallVector<int64_t> counts;
  for (int64_t j = 0; j < extent; ++j) {
    auto it = llvm::find_if(firsts, [&](int64_t f) { return equal(f, j); });
    if (it == firsts.end()) {
      firsts.push_back(j);
      counts.push_back(1);
      inverse[j] = firsts.size() - 1;
    } else {
      ++counts[it - firsts.begin()];
      inverse[j] = it - firsts.begin();
    }
  }
  SmallVector<int64_t> order(firsts.size());
  std::iota(order.begin(), order.end(), 0);
  if (op.getSorted())
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return less(firsts[a], firsts[b]);
    });
  SmallVector<int64_t> rank(order.size());
  for (auto [position, u] : llvm::enumerate(order))
    rank[u] = position;
  int64_t unique = order.size();
  SmallVector<int64_t, 4> valuesShape(shape);
  valuesShape[axis] = unique;
  HostTensor values = call.makeResult(valuesShape, 0);
  HostTensor indices = call.makeResult({unique}, 1);
  HostTensor inverseOut = call.makeResult({extent}, 2);
  HostTensor countsOut = call.makeResult({unique}, 3);
  for (int64_t p = 0; p < unique; ++p) {
    int64_t u = order[p];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        values.copyElement((o * unique + p) * inner + i, x,
                           element(firsts[u], o, i));
    indices.setI(p, firsts[u]);
    countsOut.setI(p, counts[u]);
  }
  for (int64_t j = 0; j < extent; ++j)
    inverseOut.setI(j, rank[inverse[j]]);
  return SmallVector<TensorRef>{
      share(std::move(values)), share(std::move(indices)),
      share(std::move(inverseOut)), share(std::move(countsOut))};
}

/// max(ceil((limit - start) / delta), 0) elements start + i * delta.
Results runRange(OpCall &call) {
  const HostTensor &start = call.in(0), &limit = call.in(1),
                   &delta = call.in(2);
  for (const HostTensor *t : {&start, &limit, &delta})
    if (t->numElements() != 1) {
      call.error() << "start, limit and delta must be scalars";
      return failure();
    }
  HostTensor out;
  if (isFloat(start.scalar)) {
    double s = start.getF(0), l = limit.getF(0), d = delta.getF(0);
    if (d == 0) {
      call.error() << "delta must not be 0";
      return failure();
    }
    double count = std::ceil((l - s) / d);
    int64_t n = count > 0 ? (int64_t)count : 0;
    out = call.makeResult({n});
    for (int64_t i = 0; i < n; ++i)
      out.setF(i, s + (double)i * d);
  } else {
    int64_t s = start.getI(0), l = limit.getI(0), d = delta.getI(0);
    if (d == 0) {
      call.error() << "delta must not be 0";
      return failure();
    }
    __int128 span = (__int128)l - s, q = span / d;
    if (q * d != span && ((span > 0) == (d > 0)))
      ++q;
    int64_t n = q > 0 ? (int64_t)q : 0;
    out = call.makeResult({n});
    for (int64_t i = 0; i < n; ++i)
      out.setI(i, s + i * d);
  }
  return single(std::move(out));
}

Results runConstantOfShape(OpCall &call) {
  const HostTensor &shapeTensor = call.in(0);
  SmallVector<int64_t, 4> shape;
  for (int64_t i = 0; i < shapeTensor.numElements(); ++i) {
    shape.push_back(shapeTensor.getI(i));
    if (shape.back() < 0) {
      call.error() << "negative dim " << shape.back() << " in the shape";
      return failure();
    }
  }
  HostTensor out = call.makeResult(shape);
  double value = call.get<ConstantOfShapeOp>().getValue().convertToDouble();
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    out.setF(i, value);
  return single(std::move(out));
}

/// Whether box `a` overlaps box `b` by an IoU above `threshold` (ONNX's
/// reference: corners in any order, or centre and size; arithmetic in T).
template <typename T>
bool suppresses(const T *a, const T *b, bool centerPointBox, T threshold) {
  auto extent = [&](const T *box, int lo, int hi, int centre, int size,
                    T &min, T &max) {
    if (centerPointBox) {
      min = box[centre] - box[size] / 2;
      max = box[centre] + box[size] / 2;
    } else {
      min = std::min(box[lo], box[hi]);
      max = std::max(box[lo], box[hi]);
    }
  };
  T ax0, ax1, bx0, bx1, ay0, ay1, by0, by1;
  extent(a, 1, 3, 0, 2, ax0, ax1);
  extent(b, 1, 3, 0, 2, bx0, bx1);
  extent(a, 0, 2, 1, 3, ay0, ay1);
  extent(b, 0, 2, 1, 3, by0, by1);
  T ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  T iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  T intersection = (ix1 - ix0) * (iy1 - iy0);
  T areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  T unionArea = areaA + areaB - intersection;
  if (intersection <= 0 || areaA <= 0 || areaB <= 0 || unionArea <= 0)
    return false;
  return intersection / unionArea > threshold;
}

/// Greedy non-maximum suppression per batch and class: (batch, class, box)
/// rows of the kept boxes, in the order they are kept.
template <typename T>
SmallVector<int64_t> nonMaxSuppression(const HostTensor &boxes,
                                       const HostTensor &scores,
                                       int64_t maxPerClass, T iou,
                                       std::optional<T> scoreThreshold,
                                       bool centerPointBox) {
  int64_t batches = boxes.shape[0], count = boxes.shape[1],
          classes = scores.shape[1];
  SmallVector<T> box(boxes.numElements());
  for (int64_t i = 0; i < (int64_t)box.size(); ++i)
    box[i] = (T)boxes.getF(i);
  SmallVector<int64_t> rows;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      SmallVector<std::pair<T, int64_t>> candidates;
      for (int64_t i = 0; i < count; ++i) {
        T score = (T)scores.getF((b * classes + c) * count + i);
        if (!scoreThreshold || score > *scoreThreshold)
          candidates.push_back({score, i});
      }
      // Highest score first; the lower index first among equal scores.
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](auto &x, auto &y) { return x.first > y.first; });
      SmallVector<int64_t> kept;
      for (auto &[score, i] : candidates) {
        if ((int64_t)kept.size() >= maxPerClass)
          break;
        const T *candidate = &box[(b * count + i) * 4];
        if (llvm::any_of(kept, [&](int64_t k) {
              return suppresses(candidate, &box[(b * count + k) * 4],
                                centerPointBox, iou);
            }))
          continue;
        kept.push_back(i);
        rows.append({b, c, i});
      }
    }
  return rows;
}

Results runNonMaxSuppression(OpCall &call) {
  auto op = call.get<NonMaxSuppressionOp>();
  const HostTensor &boxes = call.in(0), &scores = call.in(1);
  if (boxes.shape.size() != 3 || boxes.shape[2] != 4 ||
      scores.shape.size() != 3 || scores.shape[0] != boxes.shape[0] ||
      scores.shape[2] != boxes.shape[1]) {
    call.error() << "boxes [" << boxes.shape[0] << ", ...] and scores do "
                 << "not have the shapes [batches, boxes, 4] and [batches, "
                    "classes, boxes]";
    return failure();
  }
  int64_t maxPerClass = std::max<int64_t>(0, call.in(2).getI(0));
  bool centre = op.getCenterPointBox() != 0;
  SmallVector<int64_t> rows;
  if (boxes.scalar == Scalar::F64) {
    std::optional<double> st;
    if (op.getScoreThresholdGiven())
      st = call.in(4).getF(0);
    rows = nonMaxSuppression<double>(boxes, scores, maxPerClass,
                                     call.in(3).getF(0), st, centre);
  } else { // float32, and the half types as the reference: in float
    std::optional<float> st;
    if (op.getScoreThresholdGiven())
      st = (float)call.in(4).getF(0);
    rows = nonMaxSuppression<float>(boxes, scores, maxPerClass,
                                    (float)call.in(3).getF(0), st, centre);
  }
  HostTensor out = call.makeResult({(int64_t)rows.size() / 3, 3});
  for (int64_t i = 0; i < (int64_t)rows.size(); ++i)
    out.setI(i, rows[i]);
  return single(std::move(out));
}

} // namespace

void cgc::interp::registerEagerKernels(KernelTable &t) {
  addKernel<NonMaxSuppressionOp>(t, runNonMaxSuppression);
  addKernel<NonZeroOp>(t, runNonZero);
  addKernel<CompressOp>(t, runCompress);
  addKernel<UniqueOp>(t, runUnique);
  addKernel<RangeOp>(t, runRange);
  addKernel<ConstantOfShapeOp>(t, runConstantOfShape);
}
