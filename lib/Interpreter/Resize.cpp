//===- Resize.cpp - ONNX Resize (nearest, linear, cubic) ------------------===//
//
// Follows the ONNX reference implementation: each output coordinate x is
// mapped to an input coordinate x_ori by the coordinate transformation
// mode, then interpolated from the n nearest input positions (n = 2 for
// nearest and linear, 4 for cubic) of the edge-padded input with per-dim
// coefficients. The N-d result is the tensor product of the 1-D rules.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

/// The input positions (clamped to the input: edge padding) and their
/// weights for one output coordinate along one dim.
struct Taps {
  SmallVector<int64_t, 4> index;
  SmallVector<double, 4> weight;
};

struct ResizeParams {
  StringRef mode, coordinateMode, nearestMode;
  double cubicA;
  bool excludeOutside;
};

/// The input coordinate of output coordinate `x`.
double originalCoordinate(StringRef mode, double x, double scale,
                          int64_t inSize, int64_t outSize) {
  double outWidth = scale * (double)inSize;
  if (mode == "align_corners")
    return outWidth == 1 ? 0.0 : x * (double)(inSize - 1) / (outWidth - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "pytorch_half_pixel")
    return outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (mode == "half_pixel_symmetric") {
    double adjustment = (double)outSize / outWidth;
    double center = (double)inSize / 2;
    double offset = center * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

/// The n integers nearest to x among [lo, hi), ties to the smaller one,
/// in increasing order (the reference's _get_neighbor_idxes).
SmallVector<int64_t, 4> nearestIndices(double x, int64_t n, int64_t lo,
                                       int64_t hi) {
  SmallVector<int64_t, 16> candidates;
  int64_t center = (int64_t)std::floor(x);
  int64_t from = std::max(lo, std::min(center - n, hi - n));
  int64_t to = std::min(hi, std::max(center + n + 1, lo + n));
  for (int64_t i = from; i < to; ++i)
    candidates.push_back(i);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int64_t a, int64_t b) {
                     double da = std::fabs(x - a), db = std::fabs(x - b);
                     return da < db || (da == db && a < b);
                   });
  candidates.resize(std::min<size_t>(n, candidates.size()));
  llvm::sort(candidates);
  return SmallVector<int64_t, 4>(candidates.begin(), candidates.end());
}

SmallVector<double, 4> coefficients(const ResizeParams &p, double ratio) {
  if (p.mode == "nearest") {
    if (ratio == 1.0) // x_ori is an integer
      return {0, 1};
    bool ceil = p.nearestMode == "round_prefer_floor" ? ratio > 0.5
                : p.nearestMode == "round_prefer_ceil"
                    ? ratio >= 0.5
                    : p.nearestMode == "ceil";
    return {ceil ? 0.0 : 1.0, ceil ? 1.0 : 0.0};
  }
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  double a = p.cubicA, r = ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
          ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a};
}

Taps tapsFor(const ResizeParams &p, double x, double scale, int64_t inSize,
             int64_t outSize) {
  double xOri = originalCoordinate(p.coordinateMode, x, scale, inSize, outSize);
  double floorOri = std::floor(xOri);
  // The ratio lies in (0, 1]: the reference prefers the left pixel.
  double ratio = xOri == floorOri ? 1.0 : xOri - floorOri;
  SmallVector<double, 4> coeffs = coefficients(p, ratio);
  int64_t n = coeffs.size();
  int64_t pad = (n + 1) / 2;
  SmallVector<int64_t, 4> idx = nearestIndices(xOri, n, -pad, inSize + pad);
  Taps taps;
  double total = 0;
  for (int64_t k = 0; k < n; ++k) {
    double w = coeffs[k];
    if (p.excludeOutside && (idx[k] < 0 || idx[k] >= inSize))
      w = 0;
    total += w;
    taps.index.push_back(std::clamp<int64_t>(idx[k], 0, inSize - 1));
    taps.weight.push_back(w);
  }
  if (p.excludeOutside && total != 0)
    for (double &w : taps.weight)
      w /= total;
  return taps;
}

Results runResize(OpCall &call) {
  auto op = call.get<ResizeOp>();
  const HostTensor &x = call.in(0);
  auto type = cast<RankedTensorType>(op.getType());
  ResizeParams p{op.getMode(), op.getCoordinateTransformationMode(),
                 op.getNearestMode(), op.getCubicCoeffA().convertToDouble(),
                 op.getExcludeOutside()};
  SmallVector<double, 4> scales;
  for (Attribute a : op.getScales())
    scales.push_back(cast<FloatAttr>(a).getValueAsDouble());
  if ((int64_t)scales.size() != x.rank()) {
    call.error() << "needs one scale per dim";
    return failure();
  }
  SmallVector<int64_t, 4> shape;
  for (int64_t d = 0; d < x.rank(); ++d)
    shape.push_back(type.isDynamicDim(d)
                        ? (int64_t)std::floor(x.shape[d] * scales[d])
                        : type.getDimSize(d));
  for (int64_t d = 0; d < x.rank(); ++d)
    if (x.shape[d] == 0 && shape[d] != 0) {
      call.error() << "cannot resize empty dim " << d;
      return failure();
    }
  // Taps per dim and output coordinate.
  std::vector<std::vector<Taps>> taps(x.rank());
  for (int64_t d = 0; d < x.rank(); ++d)
    for (int64_t o = 0; o < shape[d]; ++o)
      taps[d].push_back(tapsFor(p, (double)o, scales[d], x.shape[d], shape[d]));
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  HostTensor out = call.makeResult(shape);
  int64_t flat = 0;
  bool nearest = p.mode == "nearest";
  forEachIndex(shape, [&](ArrayRef<int64_t> o) {
    if (nearest) {
      int64_t src = 0;
      for (int64_t d = 0; d < x.rank(); ++d) {
        const Taps &t = taps[d][o[d]];
        src += t.index[t.weight[0] != 0 ? 0 : 1] * strides[d];
      }
      out.copyElement(flat++, x, src);
      return;
    }
    // Sum over every combination of taps.
    double sum = 0;
    SmallVector<int64_t, 4> tapShape;
    for (int64_t d = 0; d < x.rank(); ++d)
      tapShape.push_back(taps[d][o[d]].index.size());
    forEachIndex(tapShape, [&](ArrayRef<int64_t> k) {
      double w = 1;
      int64_t src = 0;
      for (int64_t d = 0; d < x.rank() && w != 0; ++d) {
        const Taps &t = taps[d][o[d]];
        w *= t.weight[k[d]];
        src += t.index[k[d]] * strides[d];
      }
      if (w != 0)
        sum += w * x.getF(src);
    });
    out.setF(flat++, sum);
  });
  return single(std::move(out));
}

} // namespace

void cgc::interp::registerResizeKernels(KernelTable &t) {
  addKernel<ResizeOp>(t, runResize);
}
