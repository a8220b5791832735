//===- Normalization.cpp - softmax family, norms, LRN and NLL loss --------===//
//
// Statistics (max, sums, means, variances) are computed in double. The
// variance is the population variance mean((x - mean)^2).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

enum class Softmax { Plain, Log, Hard };

template <typename OpTy, Softmax kind> Results runSoftmax(OpCall &call) {
  const HostTensor &x = call.in(0);
  int64_t axis = call.get<OpTy>().getAxis();
  if (x.rank() == 0) {
    HostTensor out = call.makeResult({});
    out.setF(0, kind == Softmax::Log ? 0.0 : 1.0);
    return single(std::move(out));
  }
  if (axis < 0 || axis >= x.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  HostTensor out = call.makeResult(x.shape);
  forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    double maxValue = -INFINITY;
    int64_t argMax = 0;
    for (int64_t j = 0; j < n; ++j) {
      double v = x.getF(base + j * stride);
      if (v > maxValue) {
        maxValue = v;
        argMax = j;
      }
    }
    if (kind == Softmax::Hard) {
      for (int64_t j = 0; j < n; ++j)
        out.setF(base + j * stride, j == argMax ? 1.0 : 0.0);
      return;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j)
      sum += std::exp(x.getF(base + j * stride) - maxValue);
    for (int64_t j = 0; j < n; ++j) {
      double v = x.getF(base + j * stride) - maxValue;
      out.setF(base + j * stride,
               kind == Softmax::Log ? v - std::log(sum) : std::exp(v) / sum);
    }
  });
  return single(std::move(out));
}

/// The mean and 1 / sqrt(variance + epsilon) of the `inner` elements of
/// row `o` of `x`.
std::pair<double, double> rowStatistics(const HostTensor &x, int64_t o,
                                        int64_t inner, double epsilon) {
  double mean = 0, var = 0;
  for (int64_t i = 0; i < inner; ++i)
    mean += x.getF(o * inner + i);
  mean /= inner;
  for (int64_t i = 0; i < inner; ++i) {
    double d = x.getF(o * inner + i) - mean;
    var += d * d;
  }
  return {mean, 1.0 / std::sqrt(var / inner + epsilon)};
}

/// `index` becomes the multi-index of the element `flat` of `shape`.
void unflattenIndex(int64_t flat, ArrayRef<int64_t> shape,
                    SmallVectorImpl<int64_t> &index) {
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
}

/// Normalizes over dims [axis, rank); scale and bias broadcast (aligned
/// right) to the input.
Results runLayerNorm(OpCall &call) {
  auto op = call.get<LayerNormOp>();
  const HostTensor &x = call.in(0), &scale = call.in(1);
  const HostTensor *bias = call.optional(op.getBias());
  int64_t axis = op.getAxis();
  double epsilon = op.getEpsilon().convertToDouble();
  if (axis < 0 || axis >= x.rank()) {
    call.error() << "axis " << axis << " out of range";
    return failure();
  }
  ArrayRef<int64_t> normalized = ArrayRef<int64_t>(x.shape).drop_front(axis);
  for (const HostTensor *p : {&scale, bias}) {
    if (!p)
      continue;
    FailureOr<SmallVector<int64_t, 4>> b =
        broadcastRuntime(call, {normalized, p->shape});
    if (failed(b))
      return failure();
    if (ArrayRef<int64_t>(*b) != normalized) {
      call.error() << "scale/bias " << formatDims(p->shape)
                   << " do not broadcast to " << formatDims(normalized);
      return failure();
    }
  }
  SmallVector<int64_t, 4> scaleStrides = broadcastStrides(scale.shape, x.shape);
  SmallVector<int64_t, 4> biasStrides =
      bias ? broadcastStrides(bias->shape, x.shape) : SmallVector<int64_t, 4>();
  int64_t inner = product(normalized),
          outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  HostTensor out = call.makeResult(x.shape);
  SmallVector<int64_t, 4> index(x.rank(), 0);
  for (int64_t o = 0; o < outer; ++o) {
    auto [mean, inv] = rowStatistics(x, o, inner, epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      int64_t flat = o * inner + i;
      unflattenIndex(flat, x.shape, index);
      double y = (x.getF(flat) - mean) * inv *
                 scale.getF(offsetOf(index, scaleStrides));
      if (bias)
        y += bias->getF(offsetOf(index, biasStrides));
      out.setF(flat, y);
    }
  }
  return single(std::move(out));
}

/// cgc.layer_norm_grad: per row, rstd (g - mean(g) - xhat mean(g xhat))
/// with g = dy scale, in double.
Results runLayerNormGrad(OpCall &call) {
  auto op = call.get<LayerNormGradOp>();
  const HostTensor &x = call.in(0), &scale = call.in(1), &dy = call.in(2);
  int64_t axis = op.getAxis();
  double epsilon = op.getEpsilon().convertToDouble();
  SmallVector<int64_t, 4> scaleStrides = broadcastStrides(scale.shape, x.shape);
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(axis)),
          outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  HostTensor out = call.makeResult(x.shape);
  SmallVector<int64_t, 4> index(x.rank(), 0);
  std::vector<double> g(inner), xhat(inner);
  for (int64_t o = 0; o < outer; ++o) {
    auto [mean, rstd] = rowStatistics(x, o, inner, epsilon);
    double meanG = 0, meanGX = 0;
    for (int64_t i = 0; i < inner; ++i) {
      int64_t flat = o * inner + i;
      unflattenIndex(flat, x.shape, index);
      xhat[i] = (x.getF(flat) - mean) * rstd;
      g[i] = dy.getF(flat) * scale.getF(offsetOf(index, scaleStrides));
      meanG += g[i];
      meanGX += g[i] * xhat[i];
    }
    meanG /= inner;
    meanGX /= inner;
    for (int64_t i = 0; i < inner; ++i)
      out.setF(o * inner + i, rstd * (g[i] - meanG - xhat[i] * meanGX));
  }
  return single(std::move(out));
}

/// Checks that a per-channel parameter holds `channels` elements.
LogicalResult checkChannelParam(OpCall &call, const HostTensor &p,
                                int64_t channels, StringRef name) {
  if (p.numElements() == channels)
    return success();
  call.error() << name << " has " << p.numElements() << " elements, "
               << channels << " channels expected";
  return failure();
}

Results runBatchNorm(OpCall &call) {
  auto op = call.get<BatchNormOp>();
  const HostTensor &x = call.in(0);
  double epsilon = op.getEpsilon().convertToDouble();
  if (x.rank() < 2) {
    call.error() << "the input needs a channel dim";
    return failure();
  }
  int64_t channels = x.shape[1];
  const char *names[] = {"scale", "bias", "mean", "variance"};
  for (int i = 0; i < 4; ++i)
    if (failed(checkChannelParam(call, call.in(i + 1), channels, names[i])))
      return failure();
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(2));
  HostTensor out = call.makeResult(x.shape);
  for (int64_t flat = 0, n = x.numElements(); flat < n; ++flat) {
    int64_t c = (flat / inner) % channels;
    double scale = call.in(1).getF(c), bias = call.in(2).getF(c);
    double mean = call.in(3).getF(c), var = call.in(4).getF(c);
    out.setF(flat,
             scale * (x.getF(flat) - mean) / std::sqrt(var + epsilon) + bias);
  }
  return single(std::move(out));
}

Results runInstanceNorm(OpCall &call) {
  auto op = call.get<InstanceNormOp>();
  const HostTensor &x = call.in(0);
  double epsilon = op.getEpsilon().convertToDouble();
  if (x.rank() < 3) {
    call.error() << "the input must be N x C x spatial...";
    return failure();
  }
  int64_t channels = x.shape[1];
  if (failed(checkChannelParam(call, call.in(1), channels, "scale")) ||
      failed(checkChannelParam(call, call.in(2), channels, "bias")))
    return failure();
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(2));
  int64_t planes = x.shape[0] * channels;
  HostTensor out = call.makeResult(x.shape);
  for (int64_t p = 0; p < planes; ++p) {
    int64_t c = p % channels;
    auto [mean, rstd] = rowStatistics(x, p, inner, epsilon);
    double scale = call.in(1).getF(c), bias = call.in(2).getF(c);
    for (int64_t i = 0; i < inner; ++i)
      out.setF(p * inner + i,
               scale * (x.getF(p * inner + i) - mean) * rstd + bias);
  }
  return single(std::move(out));
}

/// y = x / (bias + alpha/size * sum of x^2 over the channels
/// [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.
Results runLRN(OpCall &call) {
  auto op = call.get<LRNOp>();
  const HostTensor &x = call.in(0);
  if (x.rank() < 2) {
    call.error() << "the input needs a channel dim";
    return failure();
  }
  int64_t size = op.getSize();
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  double bias = op.getBias().convertToDouble();
  int64_t channels = x.shape[1];
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(2));
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  HostTensor out = call.makeResult(x.shape);
  for (int64_t flat = 0, n = x.numElements(); flat < n; ++flat) {
    int64_t c = (flat / inner) % channels;
    int64_t base = flat - c * inner;
    double sum = 0;
    for (int64_t j = std::max<int64_t>(0, c - before);
         j <= std::min(channels - 1, c + after); ++j) {
      double v = x.getF(base + j * inner);
      sum += v * v;
    }
    out.setF(flat, x.getF(flat) / std::pow(bias + alpha / size * sum, beta));
  }
  return single(std::move(out));
}

/// loss[n, d...] = -input[n, target, d...] * weight[target]; targets equal
/// to ignore_index contribute nothing (also to the mean's denominator).
Results runNllLoss(OpCall &call) {
  auto op = call.get<NegativeLogLikelihoodLossOp>();
  const HostTensor &input = call.in(0), &target = call.in(1);
  const HostTensor *weight = call.optional(op.getWeight());
  std::optional<int64_t> ignore = op.getIgnoreIndex();
  if (input.rank() < 2 || target.rank() != input.rank() - 1) {
    call.error() << "expects an [N, C, d...] input and an [N, d...] target";
    return failure();
  }
  int64_t n = input.shape[0], c = input.shape[1];
  int64_t inner = product(ArrayRef<int64_t>(input.shape).drop_front(2));
  SmallVector<int64_t, 4> expected = {n};
  expected.append(input.shape.begin() + 2, input.shape.end());
  if (ArrayRef<int64_t>(expected) != ArrayRef<int64_t>(target.shape)) {
    call.error() << "target " << formatDims(target.shape)
                 << " does not match the input " << formatDims(input.shape);
    return failure();
  }
  if (weight && weight->numElements() != c) {
    call.error() << "weight must have " << c << " elements";
    return failure();
  }
  std::vector<double> losses(n * inner, 0.0);
  double weightSum = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t t = target.getI(b * inner + i);
      if (ignore && t == *ignore)
        continue;
      if (t < 0 || t >= c) {
        call.error() << "target " << t << " is out of range [0, " << c << ")";
        return failure();
      }
      double w = weight ? weight->getF(t) : 1.0;
      losses[b * inner + i] = -input.getF((b * c + t) * inner + i) * w;
      weightSum += w;
    }
  StringRef reduction = op.getReduction();
  if (reduction == "none") {
    HostTensor out = call.makeResult(target.shape);
    for (size_t i = 0; i < losses.size(); ++i)
      out.setF(i, losses[i]);
    return single(std::move(out));
  }
  double sum = 0;
  for (double l : losses)
    sum += l;
  HostTensor out = call.makeResult({});
  out.setF(0, reduction == "mean" ? sum / weightSum : sum);
  return single(std::move(out));
}

} // namespace

void cgc::interp::registerNormalizationKernels(KernelTable &t) {
  addKernel<SoftmaxOp>(t, runSoftmax<SoftmaxOp, Softmax::Plain>);
  addKernel<LogSoftmaxOp>(t, runSoftmax<LogSoftmaxOp, Softmax::Log>);
  addKernel<HardmaxOp>(t, runSoftmax<HardmaxOp, Softmax::Hard>);
  addKernel<LayerNormOp>(t, runLayerNorm);
  addKernel<LayerNormGradOp>(t, runLayerNormGrad);
  addKernel<BatchNormOp>(t, runBatchNorm);
  addKernel<InstanceNormOp>(t, runInstanceNorm);
  addKernel<LRNOp>(t, runLRN);
  addKernel<NegativeLogLikelihoodLossOp>(t, runNllLoss);
}
