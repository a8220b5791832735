//===- ConvPool.cpp - convolution and pooling (N-d, NCHW) -----------------===//
//
// Direct loops over the output positions and the kernel window; the input
// position of window element k at output o is o*stride - pad_begin +
// k*dilation, and positions outside the input are padding. Accumulation is
// in double.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

std::vector<double> toDoubles(const HostTensor &t) {
  std::vector<double> v(t.numElements());
  for (int64_t i = 0, n = v.size(); i < n; ++i)
    v[i] = t.getF(i);
  return v;
}

/// The window geometry of one conv/pool over `spatial` dims.
struct Window {
  SmallVector<int64_t> in, out, kernel, strides, padBegin, padEnd, dilations;
  SmallVector<int64_t, 4> inStrides;

  /// Calls fn(inputFlat, valid, insidePadded) for every kernel position of
  /// output position `outIndex`; inputFlat is the flat spatial offset (only
  /// meaningful when valid).
  template <typename Fn>
  void forEachTap(ArrayRef<int64_t> outIndex, Fn &&fn) const {
    size_t rank = in.size();
    forEachIndex(kernel, [&](ArrayRef<int64_t> k) {
      int64_t flat = 0;
      bool valid = true, padded = true;
      for (size_t d = 0; d < rank; ++d) {
        int64_t pos =
            outIndex[d] * strides[d] - padBegin[d] + k[d] * dilations[d];
        if (pos < 0 || pos >= in[d])
          valid = false;
        if (pos < -padBegin[d] || pos >= in[d] + padEnd[d])
          padded = false;
        flat += pos * inStrides[d];
      }
      fn(flat, valid, padded);
    });
  }
};

/// Spatial dims of an N x C x D... tensor.
ArrayRef<int64_t> spatialDims(const HostTensor &t) {
  return ArrayRef<int64_t>(t.shape).drop_front(2);
}

FailureOr<Window> makeWindow(OpCall &call, const HostTensor &x,
                             ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                             ArrayRef<int64_t> dilations, bool ceilMode) {
  size_t spatial = x.rank() - 2;
  if (x.rank() < 3 || kernel.size() != spatial || strides.size() != spatial ||
      dilations.size() != spatial || pads.size() != 2 * spatial) {
    call.error() << "window attributes do not match the input "
                 << formatDims(x.shape);
    return failure();
  }
  Window w;
  w.in.assign(spatialDims(x).begin(), spatialDims(x).end());
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides.assign(strides.begin(), strides.end());
  w.dilations.assign(dilations.begin(), dilations.end());
  w.padBegin.assign(pads.begin(), pads.begin() + spatial);
  w.padEnd.assign(pads.begin() + spatial, pads.end());
  w.inStrides = stridesOf(w.in);
  for (size_t d = 0; d < spatial; ++d) {
    int64_t out =
        slidingWindowOutputSize(w.in[d], kernel[d], strides[d], w.padBegin[d],
                                w.padEnd[d], dilations[d], ceilMode);
    if (out <= 0) {
      call.error() << "the window does not fit spatial dim " << d
                   << " of the input " << formatDims(x.shape);
      return failure();
    }
    w.out.push_back(out);
  }
  return w;
}

/// A channels-first convolution of x by w (ONNX's Conv).
FailureOr<HostTensor> convolve(OpCall &call, ConvOp op, const HostTensor &x,
                               const HostTensor &w, const HostTensor *bias) {
  if (w.rank() != x.rank()) {
    call.error() << "weight rank differs from the input's";
    return failure();
  }
  int64_t group = op.getGroup();
  int64_t n = x.shape[0], c = x.shape[1], m = w.shape[0], cg = w.shape[1];
  if (group <= 0 || c != cg * group || m % group != 0) {
    call.error() << "input " << formatDims(x.shape) << " and weight "
                 << formatDims(w.shape) << " do not fit group " << group;
    return failure();
  }
  if (bias && (bias->rank() != 1 || bias->shape[0] != m)) {
    call.error() << "bias must have " << m << " elements";
    return failure();
  }
  FailureOr<Window> win =
      makeWindow(call, x, ArrayRef<int64_t>(w.shape).drop_front(2),
                 op.getStrides(), op.getPads(), op.getDilations(), false);
  if (failed(win))
    return failure();
  std::vector<double> xv = toDoubles(x), wv = toDoubles(w);
  int64_t inSize = product(win->in), outSize = product(win->out);
  int64_t kSize = product(win->kernel);
  SmallVector<int64_t, 4> shape = {n, m};
  shape.append(win->out.begin(), win->out.end());
  HostTensor out(call.resultElementType(), shape);
  int64_t mPerGroup = m / group;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t f = 0; f < m; ++f) {
      int64_t g = f / mPerGroup;
      int64_t outFlat = (b * m + f) * outSize;
      forEachIndex(win->out, [&](ArrayRef<int64_t> o) {
        double acc = bias ? bias->getF(f) : 0.0;
        int64_t tap = 0;
        win->forEachTap(o, [&](int64_t inFlat, bool valid, bool) {
          if (valid)
            for (int64_t ci = 0; ci < cg; ++ci)
              acc += xv[(b * c + g * cg + ci) * inSize + inFlat] *
                     wv[(f * cg + ci) * kSize + tap];
          ++tap;
        });
        out.setF(outFlat++, acc);
      });
    }
  return out;
}

/// A channels-last conv computes the channels-first one of its operands
/// moved into that order, its result moved back: the interpreter is the
/// oracle, so it shares the one loop nest rather than indexing twice.
Results runConv(OpCall &call) {
  auto op = call.get<ConvOp>();
  const HostTensor &x = call.in(0), &w = call.in(1);
  const HostTensor *bias = call.optional(op.getBias());
  if (!op.getChannelsLast()) {
    FailureOr<HostTensor> y = convolve(call, op, x, w, bias);
    return failed(y) ? Results(failure()) : single(std::move(*y));
  }
  if (x.rank() < 3 || w.rank() != x.rank()) {
    call.error() << "weight rank differs from the input's";
    return failure();
  }
  SmallVector<int64_t> first = channelsFirstPerm(x.rank());
  FailureOr<HostTensor> y = convolve(call, op, transposed(x, first),
                                     transposed(w, first), bias);
  if (failed(y))
    return failure();
  return single(transposed(*y, channelsLastPerm(x.rank())));
}

/// Each input element scatters into the output positions
/// i*stride + k*dilation - pad_begin.
Results runConvTranspose(OpCall &call) {
  auto op = call.get<ConvTransposeOp>();
  const HostTensor &x = call.in(0), &w = call.in(1);
  const HostTensor *bias = call.optional(op.getBias());
  int64_t group = op.getGroup();
  size_t spatial = x.rank() - 2;
  if (x.rank() < 3 || w.rank() != x.rank() || group <= 0 ||
      w.shape[0] != x.shape[1] || x.shape[1] % group != 0) {
    call.error() << "input " << formatDims(x.shape) << " and weight "
                 << formatDims(w.shape) << " do not fit group " << group;
    return failure();
  }
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(),
                    dilations = op.getDilations(),
                    outPad = op.getOutputPadding();
  if (strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial || outPad.size() != spatial) {
    call.error() << "window attributes do not match the input";
    return failure();
  }
  int64_t n = x.shape[0], c = x.shape[1], mg = w.shape[1], m = mg * group;
  int64_t cPerGroup = c / group;
  SmallVector<int64_t> in(spatialDims(x)), kernel(spatialDims(w)), outDims;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t o = strides[d] * (in[d] - 1) + outPad[d] +
                (kernel[d] - 1) * dilations[d] + 1 - pads[d] -
                pads[d + spatial];
    if (o <= 0) {
      call.error() << "output dim " << d << " is not positive";
      return failure();
    }
    outDims.push_back(o);
  }
  if (bias && (bias->rank() != 1 || bias->shape[0] != m)) {
    call.error() << "bias must have " << m << " elements";
    return failure();
  }
  std::vector<double> xv = toDoubles(x), wv = toDoubles(w);
  int64_t inSize = product(in), outSize = product(outDims);
  int64_t kSize = product(kernel);
  SmallVector<int64_t, 4> outStrides = stridesOf(outDims);
  std::vector<double> acc(n * m * outSize, 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < c; ++ci) {
      int64_t g = ci / cPerGroup;
      int64_t inFlat = 0;
      forEachIndex(in, [&](ArrayRef<int64_t> i) {
        double v = xv[(b * c + ci) * inSize + inFlat++];
        int64_t tap = 0;
        forEachIndex(kernel, [&](ArrayRef<int64_t> k) {
          int64_t outFlat = 0;
          bool valid = true;
          for (size_t d = 0; d < spatial; ++d) {
            int64_t pos = i[d] * strides[d] + k[d] * dilations[d] - pads[d];
            valid &= pos >= 0 && pos < outDims[d];
            outFlat += pos * outStrides[d];
          }
          if (valid)
            for (int64_t mo = 0; mo < mg; ++mo)
              acc[(b * m + g * mg + mo) * outSize + outFlat] +=
                  v * wv[(ci * mg + mo) * kSize + tap];
          ++tap;
        });
      });
    }
  SmallVector<int64_t, 4> shape = {n, m};
  shape.append(outDims.begin(), outDims.end());
  HostTensor out = call.makeResult(shape);
  for (int64_t i = 0, e = acc.size(); i < e; ++i)
    out.setF(i, acc[i] + (bias ? bias->getF((i / outSize) % m) : 0.0));
  return single(std::move(out));
}

/// Max over the window's input elements (padding never wins).
Results runMaxPool(OpCall &call) {
  auto op = call.get<MaxPoolOp>();
  const HostTensor &x = call.in(0);
  FailureOr<Window> win =
      makeWindow(call, x, op.getKernelShape(), op.getStrides(), op.getPads(),
                 op.getDilations(), op.getCeilMode());
  if (failed(win))
    return failure();
  int64_t planes = x.shape[0] * x.shape[1];
  int64_t inSize = product(win->in);
  SmallVector<int64_t, 4> shape = {x.shape[0], x.shape[1]};
  shape.append(win->out.begin(), win->out.end());
  HostTensor out = call.makeResult(shape);
  visitScalar(x.scalar, [&](auto tag) {
    using T = decltype(tag);
    int64_t outFlat = 0;
    for (int64_t p = 0; p < planes; ++p)
      forEachIndex(win->out, [&](ArrayRef<int64_t> o) {
        bool any = false;
        T best = std::numeric_limits<T>::lowest();
        if constexpr (std::is_same_v<T, double>)
          best = -std::numeric_limits<double>::infinity();
        win->forEachTap(o, [&](int64_t inFlat, bool valid, bool) {
          if (!valid)
            return;
          T v = x.get<T>(p * inSize + inFlat);
          if (!any || v > best)
            best = v;
          any = true;
        });
        out.set<T>(outFlat++, best);
      });
  });
  return single(std::move(out));
}

/// Average over the valid elements, or with count_include_pad over the
/// window elements inside the padded input.
Results runAveragePool(OpCall &call) {
  auto op = call.get<AveragePoolOp>();
  const HostTensor &x = call.in(0);
  FailureOr<Window> win =
      makeWindow(call, x, op.getKernelShape(), op.getStrides(), op.getPads(),
                 op.getDilations(), op.getCeilMode());
  if (failed(win))
    return failure();
  bool includePad = op.getCountIncludePad();
  int64_t planes = x.shape[0] * x.shape[1];
  int64_t inSize = product(win->in);
  SmallVector<int64_t, 4> shape = {x.shape[0], x.shape[1]};
  shape.append(win->out.begin(), win->out.end());
  HostTensor out = call.makeResult(shape);
  int64_t outFlat = 0;
  for (int64_t p = 0; p < planes; ++p)
    forEachIndex(win->out, [&](ArrayRef<int64_t> o) {
      double sum = 0;
      int64_t count = 0;
      win->forEachTap(o, [&](int64_t inFlat, bool valid, bool padded) {
        if (valid)
          sum += x.getF(p * inSize + inFlat);
        count += includePad ? padded : valid;
      });
      out.setF(outFlat++,
               count ? sum / count : std::numeric_limits<double>::quiet_NaN());
    });
  return single(std::move(out));
}

} // namespace

void cgc::interp::registerConvPoolKernels(KernelTable &t) {
  addKernel<ConvOp>(t, runConv);
  addKernel<ConvTransposeOp>(t, runConvTranspose);
  addKernel<MaxPoolOp>(t, runMaxPool);
  addKernel<AveragePoolOp>(t, runAveragePool);
}
