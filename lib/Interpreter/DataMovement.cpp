//===- DataMovement.cpp - reshape, gather, scatter, pad and friends -------===//
//
// These ops move elements without arithmetic (scatter reductions aside):
// every output element is copied from one input element found by index
// arithmetic. Negative indices count from the end where ONNX allows them;
// an index out of range is a run-time error.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

Results runConstant(OpCall &call) {
  std::string error;
  FailureOr<HostTensor> t =
      tensorFromAttr(call.get<ConstantOp>().getValue(), error);
  if (failed(t)) {
    call.error() << error;
    return failure();
  }
  return single(std::move(*t));
}

/// A copy of `x` with another shape of the same element count.
HostTensor withShape(const HostTensor &x, ArrayRef<int64_t> shape) {
  HostTensor y = x;
  y.shape.assign(shape.begin(), shape.end());
  return y;
}

/// Static dims come from the result type; dynamic ones from the shape
/// operand with ONNX Reshape semantics (0 copies the input dim unless
/// allowzero, -1 is inferred).
Results runReshape(OpCall &call) {
  auto op = call.get<ReshapeOp>();
  const HostTensor &x = call.in(0);
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t, 4> shape(type.getShape());
  if (!type.hasStaticShape()) {
    const HostTensor *target = call.optional(op.getShape());
    if (!target || target->numElements() != type.getRank()) {
      call.error() << "the target shape has "
                   << (target ? target->numElements() : 0)
                   << " entries for a result of rank " << type.getRank();
      return failure();
    }
    int64_t infer = -1, known = 1;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        known *= shape[d];
        continue;
      }
      int64_t v = target->getI(d);
      if (v == -1) {
        if (infer >= 0) {
          call.error() << "the target shape has two -1 entries";
          return failure();
        }
        infer = d;
        continue;
      }
      if (v == 0 && !op.getAllowzero()) {
        if (d >= x.rank()) {
          call.error() << "target entry " << d << " is 0 but the input has "
                       << "rank " << x.rank();
          return failure();
        }
        v = x.shape[d];
      }
      if (v < 0) {
        call.error() << "invalid target dim " << v;
        return failure();
      }
      shape[d] = v;
      known *= v;
    }
    if (infer >= 0) {
      if (known == 0 || x.numElements() % known != 0) {
        call.error() << "cannot infer the -1 dim reshaping "
                     << formatDims(x.shape);
        return failure();
      }
      shape[infer] = x.numElements() / known;
    }
  }
  if (product(shape) != x.numElements()) {
    call.error() << "cannot reshape " << formatDims(x.shape) << " to "
                 << formatDims(shape);
    return failure();
  }
  return single(withShape(x, shape));
}

/// Broadcasts `x` to `shape` (numpy rules; `shape` must be the result).
Results broadcastTo(OpCall &call, const HostTensor &x,
                    ArrayRef<int64_t> shape) {
  FailureOr<SmallVector<int64_t, 4>> b =
      broadcastRuntime(call, {x.shape, shape});
  if (failed(b))
    return failure();
  SmallVector<int64_t, 4> strides = broadcastStrides(x.shape, *b);
  HostTensor out = call.makeResult(*b);
  int64_t flat = 0;
  forEachIndex(*b, [&](ArrayRef<int64_t> index) {
    out.copyElement(flat++, x, offsetOf(index, strides));
  });
  return single(std::move(out));
}

Results runExpand(OpCall &call) {
  auto type = cast<RankedTensorType>(call.op->getResult(0).getType());
  if (!type.hasStaticShape()) {
    call.error() << "the result shape must be static";
    return failure();
  }
  return broadcastTo(call, call.in(0), type.getShape());
}

Results runDynamicExpand(OpCall &call) {
  const HostTensor &shapeTensor = call.in(1);
  SmallVector<int64_t, 4> target;
  for (int64_t i = 0; i < shapeTensor.numElements(); ++i) {
    target.push_back(shapeTensor.getI(i));
    if (target.back() < 0) {
      call.error() << "negative dim " << target.back() << " in the shape";
      return failure();
    }
  }
  return broadcastTo(call, call.in(0), target);
}

/// The bytes of every element, unchanged; a sub-byte int keeps its low
/// bits, re-extended as the result's signedness says.
Results runBitCast(OpCall &call) {
  const HostTensor &x = call.in(0);
  HostTensor y = call.makeResult(x.shape);
  if (x.elementBytes() != y.elementBytes()) {
    call.error() << "element widths differ: " << x.typeString() << " and "
                 << y.typeString();
    return failure();
  }
  if (subByteBits(y.scalar)) {
    for (int64_t i = 0, n = x.numElements(); i < n; ++i)
      y.setI(i, x.bytes[i]);
    return single(std::move(y));
  }
  copyBytes(y.bytes.data(), x.bytes.data(), x.bytes.size());
  return single(std::move(y));
}

} // namespace

HostTensor cgc::interp::transposed(const HostTensor &x,
                                   ArrayRef<int64_t> perm) {
  SmallVector<int64_t, 4> shape, strides, inStrides = stridesOf(x.shape);
  for (int64_t p : perm) {
    shape.push_back(x.shape[p]);
    strides.push_back(inStrides[p]);
  }
  HostTensor out(x.dtype, shape);
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    out.copyElement(flat++, x, offsetOf(index, strides));
  });
  return out;
}

namespace {

Results runTranspose(OpCall &call) {
  ArrayRef<int64_t> perm = call.get<TransposeOp>().getPerm();
  const HostTensor &x = call.in(0);
  if ((int64_t)perm.size() != x.rank()) {
    call.error() << "perm does not match the rank";
    return failure();
  }
  return single(transposed(x, perm));
}

Results runConcat(OpCall &call) {
  int64_t axis = call.get<ConcatOp>().getAxis();
  const HostTensor &first = call.in(0);
  if (axis < 0 || axis >= first.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  SmallVector<int64_t, 4> shape(first.shape);
  shape[axis] = 0;
  for (const TensorRef &t : call.operands) {
    bool ok = t->rank() == first.rank() && t->dtype == first.dtype;
    for (int64_t d = 0; ok && d < first.rank(); ++d)
      ok = d == axis || t->shape[d] == first.shape[d];
    if (!ok) {
      call.error() << "input " << t->typeString() << " does not match "
                   << first.typeString() << " outside axis " << axis;
      return failure();
    }
    shape[axis] += t->shape[axis];
  }
  HostTensor out = call.makeResult(shape);
  int64_t outer = product(ArrayRef<int64_t>(shape).take_front(axis));
  int64_t inner = product(ArrayRef<int64_t>(shape).drop_front(axis + 1));
  unsigned bytes = out.elementBytes();
  int64_t offset = 0;
  for (const TensorRef &t : call.operands) {
    int64_t chunk = t->shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      copyBytes(out.bytes.data() + (o * shape[axis] * inner + offset) * bytes,
                  t->bytes.data() + o * chunk * bytes, chunk * bytes);
    offset += chunk;
  }
  return single(std::move(out));
}

Results runSplit(OpCall &call) {
  auto op = call.get<SplitOp>();
  const HostTensor &x = call.in(0);
  int64_t axis = op.getAxis();
  ArrayRef<int64_t> sizes = op.getSizes();
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  if (axis < 0 || axis >= x.rank() || total != x.shape[axis]) {
    call.error() << "sizes " << formatDims(sizes) << " do not split dim " << axis
                 << " of " << formatDims(x.shape);
    return failure();
  }
  int64_t outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  unsigned bytes = x.elementBytes();
  SmallVector<TensorRef> results;
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    SmallVector<int64_t, 4> shape(x.shape);
    shape[axis] = size;
    HostTensor out = call.makeResult(shape, i);
    for (int64_t o = 0; o < outer; ++o)
      copyBytes(out.bytes.data() + o * size * inner * bytes,
                  x.bytes.data() + (o * x.shape[axis] * inner + offset) * bytes,
                  size * inner * bytes);
    offset += size * inner;
    results.push_back(share(std::move(out)));
  }
  return results;
}

/// Starts, ends and steps are already clamped; an end of kDynamic keeps
/// the whole (dynamic) dim.
Results runSlice(OpCall &call) {
  auto op = call.get<SliceOp>();
  const HostTensor &x = call.in(0);
  ArrayRef<int64_t> starts = op.getStarts(), ends = op.getEnds(),
                    steps = op.getSteps();
  if ((int64_t)starts.size() != x.rank()) {
    call.error() << "needs one start per dim";
    return failure();
  }
  SmallVector<int64_t, 4> shape, begin, step;
  for (int64_t d = 0; d < x.rank(); ++d) {
    int64_t s = starts[d], e = ends[d], st = steps[d];
    if (e == kDyn) {
      s = 0;
      e = x.shape[d];
      st = 1;
    }
    int64_t span = st > 0 ? e - s : s - e;
    int64_t n = span <= 0 ? 0 : (span + std::abs(st) - 1) / std::abs(st);
    if (n > 0 && (s < 0 || s >= x.shape[d] || s + (n - 1) * st < 0 ||
                  s + (n - 1) * st >= x.shape[d])) {
      call.error() << "slice [" << s << ":" << e << ":" << st
                   << "] is out of range for dim " << d << " of size "
                   << x.shape[d];
      return failure();
    }
    shape.push_back(n);
    begin.push_back(s);
    step.push_back(st);
  }
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult(shape);
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      src += (begin[d] + index[d] * step[d]) * strides[d];
    out.copyElement(flat++, x, src);
  });
  return single(std::move(out));
}

/// Normalizes index `i` into [0, size) (negative counts from the end);
/// reports an error on the call otherwise.
bool normalizeIndex(OpCall &call, int64_t &i, int64_t size) {
  if (i < -size || i >= size) {
    call.error() << "index " << i << " is out of range [" << -size << ", "
                 << size << ")";
    return false;
  }
  if (i < 0)
    i += size;
  return true;
}

Results runGather(OpCall &call) {
  int64_t axis = call.get<GatherOp>().getAxis();
  const HostTensor &x = call.in(0), &indices = call.in(1);
  if (axis < 0 || axis >= x.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  int64_t outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  int64_t count = indices.numElements(), extent = x.shape[axis];
  SmallVector<int64_t, 4> shape(x.shape.begin(), x.shape.begin() + axis);
  shape.append(indices.shape.begin(), indices.shape.end());
  shape.append(x.shape.begin() + axis + 1, x.shape.end());
  HostTensor out = call.makeResult(shape);
  unsigned bytes = x.elementBytes();
  for (int64_t j = 0; j < count; ++j) {
    int64_t index = indices.getI(j);
    if (!normalizeIndex(call, index, extent))
      return failure();
    for (int64_t o = 0; o < outer; ++o)
      copyBytes(out.bytes.data() + ((o * count + j) * inner) * bytes,
                  x.bytes.data() + ((o * extent + index) * inner) * bytes,
                  inner * bytes);
  }
  return single(std::move(out));
}

Results runGatherElements(OpCall &call) {
  int64_t axis = call.get<GatherElementsOp>().getAxis();
  const HostTensor &x = call.in(0), &indices = call.in(1);
  if (indices.rank() != x.rank() || axis < 0 || axis >= x.rank()) {
    call.error() << "indices must have the data's rank";
    return failure();
  }
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult(indices.shape);
  int64_t flat = 0;
  bool ok = true;
  forEachIndex(indices.shape, [&](ArrayRef<int64_t> index) {
    if (!ok)
      return;
    int64_t i = indices.getI(flat);
    if (!(ok = normalizeIndex(call, i, x.shape[axis])))
      return;
    int64_t src = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t coord = d == axis ? i : index[d];
      if (coord >= x.shape[d]) {
        call.error() << "indices shape " << formatDims(indices.shape)
                     << " exceeds the data " << formatDims(x.shape);
        ok = false;
        return;
      }
      src += coord * strides[d];
    }
    out.copyElement(flat++, x, src);
  });
  if (!ok)
    return failure();
  return single(std::move(out));
}

Results runGatherND(OpCall &call) {
  int64_t batch = call.get<GatherNDOp>().getBatchDims();
  const HostTensor &x = call.in(0), &indices = call.in(1);
  if (indices.rank() < 1) {
    call.error() << "indices must have rank >= 1";
    return failure();
  }
  int64_t tuple = indices.shape.back();
  if (batch < 0 || batch + tuple > x.rank() || batch >= indices.rank()) {
    call.error() << "index tuples of " << tuple << " do not fit the data "
                 << formatDims(x.shape);
    return failure();
  }
  for (int64_t d = 0; d < batch; ++d)
    if (x.shape[d] != indices.shape[d]) {
      call.error() << "batch dim " << d << " differs between data and indices";
      return failure();
    }
  SmallVector<int64_t, 4> shape(indices.shape.begin(), indices.shape.end() - 1);
  ArrayRef<int64_t> rest = ArrayRef<int64_t>(x.shape).drop_front(batch + tuple);
  shape.append(rest.begin(), rest.end());
  int64_t sliceSize = product(rest);
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult(shape);
  unsigned bytes = x.elementBytes();
  ArrayRef<int64_t> positions = ArrayRef<int64_t>(indices.shape).drop_back();
  int64_t p = 0;
  bool ok = true;
  forEachIndex(positions, [&](ArrayRef<int64_t> index) {
    if (!ok)
      return;
    int64_t src = 0;
    for (int64_t d = 0; d < batch; ++d)
      src += index[d] * strides[d];
    for (int64_t t = 0; t < tuple; ++t) {
      int64_t i = indices.getI(p * tuple + t);
      if (!(ok = normalizeIndex(call, i, x.shape[batch + t])))
        return;
      src += i * strides[batch + t];
    }
    copyBytes(out.bytes.data() + p * sliceSize * bytes,
                x.bytes.data() + src * bytes, sliceSize * bytes);
    ++p;
  });
  if (!ok)
    return failure();
  return single(std::move(out));
}

/// Combines an existing element with an update per the scatter reduction.
void scatterInto(HostTensor &out, int64_t i, const HostTensor &updates,
                 int64_t u, StringRef reduction) {
  if (reduction == "none") {
    out.copyElement(i, updates, u);
    return;
  }
  visitScalar(out.scalar, [&](auto tag) {
    using T = decltype(tag);
    T a = out.get<T>(i), b = updates.get<T>(u);
    T r = a;
    if (reduction == "add")
      r = std::is_same_v<T, double> ? a + b : (T)((uint64_t)a + (uint64_t)b);
    else if (reduction == "mul")
      r = std::is_same_v<T, double> ? a * b : (T)((uint64_t)a * (uint64_t)b);
    else if (reduction == "max")
      r = std::max(a, b);
    else if (reduction == "min")
      r = std::min(a, b);
    out.set<T>(i, r);
  });
}

Results runScatterElements(OpCall &call) {
  auto op = call.get<ScatterElementsOp>();
  int64_t axis = op.getAxis();
  StringRef reduction = op.getReduction();
  const HostTensor &x = call.in(0), &indices = call.in(1),
                   &updates = call.in(2);
  if (indices.rank() != x.rank() || updates.shape != indices.shape ||
      axis < 0 || axis >= x.rank()) {
    call.error() << "indices " << formatDims(indices.shape) << " and updates "
                 << formatDims(updates.shape) << " do not fit the data "
                 << formatDims(x.shape);
    return failure();
  }
  HostTensor out = x;
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  int64_t flat = 0;
  bool ok = true;
  forEachIndex(indices.shape, [&](ArrayRef<int64_t> index) {
    if (!ok)
      return;
    int64_t i = indices.getI(flat);
    if (!(ok = normalizeIndex(call, i, x.shape[axis])))
      return;
    int64_t dst = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t coord = d == axis ? i : index[d];
      if (coord >= x.shape[d]) {
        call.error() << "indices exceed the data " << formatDims(x.shape);
        ok = false;
        return;
      }
      dst += coord * strides[d];
    }
    scatterInto(out, dst, updates, flat++, reduction);
  });
  if (!ok)
    return failure();
  return single(std::move(out));
}

Results runScatterND(OpCall &call) {
  StringRef reduction = call.get<ScatterNDOp>().getReduction();
  const HostTensor &x = call.in(0), &indices = call.in(1),
                   &updates = call.in(2);
  if (indices.rank() < 1 || indices.shape.back() > x.rank()) {
    call.error() << "indices " << formatDims(indices.shape)
                 << " do not fit the data " << formatDims(x.shape);
    return failure();
  }
  int64_t tuple = indices.shape.back();
  SmallVector<int64_t, 4> expected(indices.shape.begin(),
                                   indices.shape.end() - 1);
  expected.append(x.shape.begin() + tuple, x.shape.end());
  if (ArrayRef<int64_t>(expected) != ArrayRef<int64_t>(updates.shape)) {
    call.error() << "updates " << formatDims(updates.shape) << " should be "
                 << formatDims(expected);
    return failure();
  }
  int64_t sliceSize = product(ArrayRef<int64_t>(x.shape).drop_front(tuple));
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = x;
  int64_t positions = product(ArrayRef<int64_t>(indices.shape).drop_back());
  for (int64_t p = 0; p < positions; ++p) {
    int64_t dst = 0;
    for (int64_t t = 0; t < tuple; ++t) {
      int64_t i = indices.getI(p * tuple + t);
      if (!normalizeIndex(call, i, x.shape[t]))
        return failure();
      dst += i * strides[t];
    }
    for (int64_t s = 0; s < sliceSize; ++s)
      scatterInto(out, dst + s, updates, p * sliceSize + s, reduction);
  }
  return single(std::move(out));
}

Results runTile(OpCall &call) {
  ArrayRef<int64_t> repeats = call.get<TileOp>().getRepeats();
  const HostTensor &x = call.in(0);
  if ((int64_t)repeats.size() != x.rank()) {
    call.error() << "needs one repeat per dim";
    return failure();
  }
  SmallVector<int64_t, 4> shape;
  for (auto [d, r] : llvm::zip(x.shape, repeats))
    shape.push_back(d * r);
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult(shape);
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      src += (index[d] % x.shape[d]) * strides[d];
    out.copyElement(flat++, x, src);
  });
  return single(std::move(out));
}

/// Pads (or, with negative pads, crops). Out-of-range positions take the
/// constant, the nearest edge element, the mirror image without repeating
/// the edge (reflect), or wrap around.
Results runPad(OpCall &call) {
  auto op = call.get<PadOp>();
  const HostTensor &x = call.in(0);
  ArrayRef<int64_t> pads = op.getPads();
  StringRef mode = op.getMode();
  int64_t rank = x.rank();
  if ((int64_t)pads.size() != 2 * rank) {
    call.error() << "needs 2 x rank pads";
    return failure();
  }
  SmallVector<int64_t, 4> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = x.shape[d] + pads[d] + pads[d + rank];
    if (n < 0) {
      call.error() << "pads crop dim " << d << " below zero";
      return failure();
    }
    if (mode != "constant" && x.shape[d] == 0 && n > 0) {
      call.error() << "cannot " << mode << "-pad empty dim " << d;
      return failure();
    }
    shape.push_back(n);
  }
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult(shape);
  double value = op.getValue().convertToDouble();
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t src = 0;
    bool inside = true;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t n = x.shape[d], i = index[d] - pads[d];
      if (i < 0 || i >= n) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (mode == "edge") {
          i = std::clamp<int64_t>(i, 0, n - 1);
        } else if (mode == "wrap") {
          i = ((i % n) + n) % n;
        } else if (n == 1) { // reflect
          i = 0;
        } else {
          int64_t period = 2 * (n - 1);
          i = ((i % period) + period) % period;
          if (i >= n)
            i = period - i;
        }
      }
      src += i * strides[d];
    }
    if (inside)
      out.copyElement(flat, x, src);
    else
      out.setF(flat, value);
    ++flat;
  });
  return single(std::move(out));
}

/// DCR: channel (i*b + j)*C' + c; CRD: c*b*b + i*b + j, for output
/// channel c and block offsets (i, j).
Results runDepthToSpace(OpCall &call) {
  auto op = call.get<DepthToSpaceOp>();
  const HostTensor &x = call.in(0);
  int64_t b = op.getBlocksize();
  bool dcr = op.getMode() == "DCR";
  if (x.rank() != 4 || b <= 0 || x.shape[1] % (b * b) != 0) {
    call.error() << "cannot move blocks of " << b << " from "
                 << formatDims(x.shape);
    return failure();
  }
  int64_t n = x.shape[0], c = x.shape[1] / (b * b), h = x.shape[2],
          w = x.shape[3];
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult({n, c, h * b, w * b});
  int64_t flat = 0;
  forEachIndex(out.shape, [&](ArrayRef<int64_t> o) {
    int64_t i = o[2] % b, j = o[3] % b;
    int64_t channel = dcr ? (i * b + j) * c + o[1] : o[1] * b * b + i * b + j;
    out.copyElement(flat++, x,
                    o[0] * strides[0] + channel * strides[1] +
                        (o[2] / b) * strides[2] + (o[3] / b) * strides[3]);
  });
  return single(std::move(out));
}

/// DCR: output channel (i*b + j)*C + c; CRD: c*b*b + i*b + j, for input
/// channel c and block offsets (i, j).
Results runSpaceToDepth(OpCall &call) {
  auto op = call.get<SpaceToDepthOp>();
  int64_t b = op.getBlocksize();
  bool dcr = op.getMode() == "DCR";
  const HostTensor &x = call.in(0);
  if (x.rank() != 4 || b <= 0 || x.shape[2] % b || x.shape[3] % b) {
    call.error() << "cannot move blocks of " << b << " from "
                 << formatDims(x.shape);
    return failure();
  }
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2] / b,
          w = x.shape[3] / b;
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult({n, c * b * b, h, w});
  int64_t flat = 0;
  forEachIndex(out.shape, [&](ArrayRef<int64_t> o) {
    int64_t block = dcr ? o[1] / c : o[1] % (b * b),
            channel = dcr ? o[1] % c : o[1] / (b * b);
    int64_t i = block / b, j = block % b;
    out.copyElement(flat++, x,
                    o[0] * strides[0] + channel * strides[1] +
                        (o[2] * b + i) * strides[2] +
                        (o[3] * b + j) * strides[3]);
  });
  return single(std::move(out));
}

Results runTrilu(OpCall &call) {
  auto op = call.get<TriluOp>();
  const HostTensor &x = call.in(0);
  if (x.rank() < 2) {
    call.error() << "needs rank >= 2";
    return failure();
  }
  bool upper = op.getUpper();
  int64_t k = op.getK();
  HostTensor out = call.makeResult(x.shape);
  int64_t flat = 0;
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index) {
    int64_t i = index[x.rank() - 2], j = index[x.rank() - 1];
    if (upper ? j - i >= k : j - i <= k)
      out.copyElement(flat, x, flat);
    ++flat;
  });
  return single(std::move(out));
}

Results runOneHot(OpCall &call) {
  auto op = call.get<OneHotOp>();
  const HostTensor &indices = call.in(0);
  int64_t depth = op.getDepth(), axis = op.getAxis();
  if (axis < 0 || axis > indices.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  SmallVector<int64_t, 4> shape(indices.shape);
  shape.insert(shape.begin() + axis, depth);
  HostTensor out = call.makeResult(shape);
  double off = op.getOffValue().convertToDouble();
  double on = op.getOnValue().convertToDouble();
  int64_t inner = product(ArrayRef<int64_t>(indices.shape).drop_front(axis));
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> o) {
    int64_t outerIndex = flat / (depth * inner), innerIndex = flat % inner;
    double v = indices.getF(outerIndex * inner + innerIndex);
    int64_t index = (int64_t)v;
    if (index < 0)
      index += depth;
    out.setF(flat++, index == o[axis] ? on : off);
  });
  return single(std::move(out));
}

Results runShape(OpCall &call) {
  auto op = call.get<ShapeOp>();
  const HostTensor &x = call.in(0);
  int64_t start = op.getStart(), end = op.getEnd();
  if (start < 0 || end > x.rank() || start > end) {
    call.error() << "range [" << start << ", " << end << ") is outside rank "
                 << x.rank();
    return failure();
  }
  HostTensor out = call.makeResult({end - start});
  for (int64_t d = start; d < end; ++d)
    out.setI(d - start, x.shape[d]);
  return single(std::move(out));
}

Results runSize(OpCall &call) {
  HostTensor out = call.makeResult({});
  out.setI(0, call.in(0).numElements());
  return single(std::move(out));
}

} // namespace

void cgc::interp::registerDataMovementKernels(KernelTable &t) {
  addKernel<ConstantOp>(t, runConstant);
  addKernel<ReshapeOp>(t, runReshape);
  addKernel<ExpandOp>(t, runExpand);
  addKernel<DynamicExpandOp>(t, runDynamicExpand);
  addKernel<TransposeOp>(t, runTranspose);
  addKernel<BitCastOp>(t, runBitCast);
  addKernel<ConcatOp>(t, runConcat);
  addKernel<SplitOp>(t, runSplit);
  addKernel<SliceOp>(t, runSlice);
  addKernel<GatherOp>(t, runGather);
  addKernel<GatherElementsOp>(t, runGatherElements);
  addKernel<GatherNDOp>(t, runGatherND);
  addKernel<ScatterElementsOp>(t, runScatterElements);
  addKernel<ScatterNDOp>(t, runScatterND);
  addKernel<TileOp>(t, runTile);
  addKernel<PadOp>(t, runPad);
  addKernel<DepthToSpaceOp>(t, runDepthToSpace);
  addKernel<SpaceToDepthOp>(t, runSpaceToDepth);
  addKernel<TriluOp>(t, runTrilu);
  addKernel<OneHotOp>(t, runOneHot);
  addKernel<ShapeOp>(t, runShape);
  addKernel<SizeOp>(t, runSize);
}
