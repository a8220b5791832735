//===- SignalOps.cpp - DFT, STFT and MelWeightMatrix -----------------------===//
//
// DFT (opsets 17, 20) as the linear map it is: the signal axis moved next
// to the [re, im] (or [re]) dim, flattened, and multiplied by a constant
// matrix of cosines and sines built here in double. That is O(n^2) work a
// signal but a single matmul the GPU path runs on its matmul kernels; a
// signal longer than kMaxDftLength is refused rather than given a huge
// matrix.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

constexpr int64_t kMaxDftLength = 2048;
/// Most frames an STFT is unrolled into (a slice op each).
constexpr int64_t kMaxFrames = 1 << 16;

/// What the transform maps: `inLength` input samples of `inParts`
/// components (1 real, 2 complex) to `outLength` of `outParts`.
struct DftPlan {
  int64_t inLength, inParts, outLength, outParts, length;
  bool inverse, onesided;
};

/// The [inLength * inParts, outLength * outParts] matrix of the
/// transform: forward, e^(-2 pi i k n / L); inverse, e^(+...) / L; inverse
/// one-sided (irfft), the Hermitian extension of the first L / 2 + 1 bins
/// to a real signal. Samples beyond L are dropped (the signal is cut or
/// zero-padded to L).
SmallVector<double> dftMatrix(const DftPlan &p) {
  int64_t rows = p.inLength * p.inParts, cols = p.outLength * p.outParts;
  SmallVector<double> m(rows * cols, 0.0);
  double L = (double)p.length;
  auto at = [&](int64_t n, int64_t part, int64_t k, int64_t outPart) -> double & {
    return m[(n * p.inParts + part) * cols + k * p.outParts + outPart];
  };
  if (!p.inverse) {
    for (int64_t n = 0; n < std::min(p.inLength, p.length); ++n)
      for (int64_t k = 0; k < p.outLength; ++k) {
        double theta = 2 * M_PI * (double)((k * n) % p.length) / L;
        double c = std::cos(theta), s = std::sin(theta);
        at(n, 0, k, 0) = c; // re += x_re cos + x_im sin
        at(n, 0, k, 1) = -s; // im += -x_re sin + x_im cos
        if (p.inParts == 2) {
          at(n, 1, k, 0) = s;
          at(n, 1, k, 1) = c;
        }
      }
    return m;
  }
  // Inverse: input bins k, output samples n.
  int64_t bins = p.onesided ? std::min(p.inLength, p.length / 2 + 1)
                            : std::min(p.inLength, p.length);
  for (int64_t k = 0; k < bins; ++k) {
    // irfft counts the bins strictly between 0 and L / 2 twice.
    double weight =
        !p.onesided || k == 0 || 2 * k == p.length ? 1.0 : 2.0;
    for (int64_t n = 0; n < p.outLength; ++n) {
      double theta = 2 * M_PI * (double)((k * n) % p.length) / L;
      double c = weight * std::cos(theta) / L, s = weight * std::sin(theta) / L;
      at(k, 0, n, 0) = c; // re += X_re cos - X_im sin
      if (p.inParts == 2)
        at(k, 1, n, 0) = -s;
      if (p.outParts == 2) {
        at(k, 0, n, 1) = s; // im += X_re sin + X_im cos
        if (p.inParts == 2)
          at(k, 1, n, 1) = c;
      }
    }
  }
  return m;
}

/// x [rows..., inLength * inParts] times the plan's constant matrix, as
/// [rows..., outLength * outParts].
FailureOr<Value> applyDft(NodeContext &ctx, Value rows, const DftPlan &plan) {
  auto matrixType = RankedTensorType::get(
      {plan.inLength * plan.inParts, plan.outLength * plan.outParts},
      Float64Type::get(ctx.context()));
  SmallVector<double> matrix = dftMatrix(plan);
  FailureOr<Value> m = castTo(
      ctx, ctx.constant(DenseElementsAttr::get(matrixType, ArrayRef(matrix))),
      tensorType(rows).getElementType());
  if (failed(m))
    return failure();
  return ctx.create1<MatMulOp>({rows, *m});
}

/// The DFT's axis and length: opset 17 takes the axis as an attribute
/// (default 1), opset 20 as input 2 (default -2); dft_length is input 1.
FailureOr<std::pair<int64_t, int64_t>> axisAndLength(NodeContext &ctx,
                                                     RankedTensorType xt,
                                                     bool inverse,
                                                     bool onesided) {
  int64_t axis = ctx.opset() < 20 ? ctx.getInt("axis", 1) : -2;
  if (ctx.opset() >= 20 && ctx.input(2)) {
    std::optional<SmallVector<int64_t>> given = ctx.constInts(ctx.input(2));
    if (!given || given->size() != 1) {
      ctx.error() << "the axis input must be a constant scalar";
      return failure();
    }
    axis = given->front();
  }
  int64_t rank = xt.getRank();
  FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank);
  if (failed(normalized))
    return failure();
  if (*normalized == rank - 1) {
    ctx.error() << "the axis cannot be the last ([re, im]) dim";
    return failure();
  }
  int64_t n = xt.getDimSize(*normalized);
  int64_t length = inverse && onesided ? 2 * (n - 1) : n;
  if (Value given = ctx.input(1)) {
    std::optional<SmallVector<int64_t>> v = ctx.constInts(given);
    if (!v || v->size() != 1) {
      ctx.error() << "dft_length must be a constant scalar";
      return failure();
    }
    length = v->front();
  }
  if (length < 1 || length > kMaxDftLength || n > kMaxDftLength) {
    ctx.error() << "the DFT length must be 1 to " << kMaxDftLength
                << " (a matrix of cosines is built for it), got " << length;
    return failure();
  }
  return std::make_pair(*normalized, length);
}

Results importDFT(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  bool inverse = ctx.getInt("inverse", 0) != 0;
  bool onesided = ctx.getInt("onesided", 0) != 0;
  if (ctx.hadAttributeError())
    return failure();
  int64_t rank = xt.getRank();
  if (rank < 2 || !xt.hasStaticShape() ||
      (xt.getShape().back() != 1 && xt.getShape().back() != 2) ||
      !isa<FloatType>(xt.getElementType())) {
    ctx.error() << "expects a static float [..., 1 or 2] input, got " << xt;
    return failure();
  }
  FailureOr<std::pair<int64_t, int64_t>> al =
      axisAndLength(ctx, xt, inverse, onesided);
  if (failed(al))
    return failure();
  auto [axis, length] = *al;
  DftPlan plan{xt.getDimSize(axis), xt.getShape().back(), 0, 2, length,
               inverse, onesided};
  plan.outLength = !inverse && onesided ? length / 2 + 1 : length;
  if (inverse && onesided)
    plan.outParts = 1;

  // [..., axis, ..., parts] -> [rest..., axis, parts].
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  perm.push_back(rank - 1);
  FailureOr<Value> moved = ctx.create1<TransposeOp>(
      {*x}, {ctx.namedI64Array("perm", perm)});
  if (failed(moved))
    return failure();
  ArrayRef<int64_t> ms = tensorType(*moved).getShape();
  SmallVector<int64_t> flat(ms.drop_back(2));
  flat.push_back(plan.inLength * plan.inParts);
  FailureOr<Value> rows = reshapeTo(ctx, *moved, flat);
  FailureOr<Value> product =
      succeeded(rows) ? applyDft(ctx, *rows, plan) : rows;
  if (failed(product))
    return failure();
  SmallVector<int64_t> outMoved(ms.drop_back(2));
  outMoved.push_back(plan.outLength);
  outMoved.push_back(plan.outParts);
  FailureOr<Value> shaped = reshapeTo(ctx, *product, outMoved);
  if (failed(shaped))
    return failure();
  SmallVector<int64_t> inverseOrder(rank);
  for (int64_t i = 0; i < rank; ++i)
    inverseOrder[perm[i]] = i;
  return single(ctx.create1<TransposeOp>(
      {*shaped}, {ctx.namedI64Array("perm", inverseOrder)}));
}

/// STFT (opset 17): frames of the signal every frame_step samples, each
/// weighted by the window and transformed (onesided by default) by one
/// matmul with the DFT matrix.
Results importSTFT(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value signal = (*in)[0], window = ctx.input(2);
  RankedTensorType st = tensorType(signal);
  std::optional<SmallVector<int64_t>> step = ctx.constInts((*in)[1]);
  bool onesided = ctx.getInt("onesided", 1) != 0;
  if (ctx.hadAttributeError())
    return failure();
  if (st.getRank() != 3 || !st.hasStaticShape() ||
      (st.getDimSize(2) != 1 && st.getDimSize(2) != 2) || !step ||
      step->size() != 1 || step->front() < 1) {
    ctx.error() << "expects a static [batch, length, 1 or 2] signal and a "
                   "positive constant frame_step, got "
                << st;
    return failure();
  }
  int64_t frameLength =
      window && tensorType(window).getRank() == 1 ? tensorType(window).getDimSize(0) : 0;
  if (Value given = ctx.input(3)) {
    std::optional<SmallVector<int64_t>> v = ctx.constInts(given);
    if (!v || v->size() != 1) {
      ctx.error() << "frame_length must be a constant scalar";
      return failure();
    }
    frameLength = v->front();
  }
  int64_t batch = st.getDimSize(0), length = st.getDimSize(1),
          parts = st.getDimSize(2);
  if (frameLength < 1 || frameLength > std::min(length, kMaxDftLength) ||
      (window && tensorType(window).getShape() !=
                     ArrayRef<int64_t>{frameLength})) {
    ctx.error() << "the frame length (" << frameLength
                << ") must be 1 to the signal length, and the window's";
    return failure();
  }
  int64_t frames = 1 + (length - frameLength) / step->front();
  // A slice op a frame.
  if (frames > kMaxFrames) {
    ctx.error() << "makes " << frames << " frames (at most " << kMaxFrames
                << ")";
    return failure();
  }
  SmallVector<Value> pieces;
  for (int64_t f = 0; f < frames; ++f) {
    int64_t begin = f * step->front();
    FailureOr<Value> piece =
        sliceAlong(ctx, signal, 1, begin, begin + frameLength);
    if (failed(piece) ||
        failed(piece = reshapeTo(ctx, *piece, {batch, 1, frameLength, parts})))
      return failure();
    pieces.push_back(*piece);
  }
  FailureOr<Value> framed =
      pieces.size() == 1
          ? FailureOr<Value>(pieces.front())
          : ctx.create1<ConcatOp>(pieces, {ctx.namedI64("axis", 1)});
  if (failed(framed))
    return failure();
  if (window) {
    FailureOr<Value> w = castTo(ctx, window, st.getElementType());
    if (failed(w) || failed(w = reshapeTo(ctx, *w, {1, 1, frameLength, 1})) ||
        failed(framed = ctx.create1<MulOp>({*framed, *w})))
      return failure();
  }
  DftPlan plan{frameLength, parts, onesided ? frameLength / 2 + 1 : frameLength,
               2, frameLength, false, onesided};
  FailureOr<Value> rows =
      reshapeTo(ctx, *framed, {batch, frames, frameLength * parts});
  FailureOr<Value> spectrum =
      succeeded(rows) ? applyDft(ctx, *rows, plan) : rows;
  if (failed(spectrum))
    return failure();
  return single(
      reshapeTo(ctx, *spectrum, {batch, frames, plan.outLength, 2}));
}

/// MelWeightMatrix (opset 17): the [dft_length / 2 + 1, num_mel_bins]
/// triangular filters, folded to a constant as ONNX's reference builds them
/// (mel points spaced evenly, their frequencies floored to DFT bins).
Results importMelWeightMatrix(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 5);
  if (failed(in))
    return failure();
  std::optional<SmallVector<int64_t>> bins = ctx.constInts((*in)[0]),
                                      length = ctx.constInts((*in)[1]),
                                      rate = ctx.constInts((*in)[2]);
  std::optional<SmallVector<double>> lower = ctx.constFloats((*in)[3]),
                                     upper = ctx.constFloats((*in)[4]);
  int64_t code = ctx.getInt("output_datatype", 1);
  if (ctx.hadAttributeError())
    return failure();
  if (!bins || !length || !rate || !lower || !upper || bins->size() != 1 ||
      length->size() != 1 || rate->size() != 1 || lower->size() != 1 ||
      upper->size() != 1 || bins->front() < 1 || length->front() < 1 ||
      rate->front() < 1 || bins->front() > (1 << 24) ||
      length->front() > (1 << 24) ||
      bins->front() * (length->front() / 2 + 1) > (1 << 24)) {
    ctx.error() << "needs constant scalar inputs (positive bins, length and "
                   "rate; a matrix up to 2^24 entries)";
    return failure();
  }
  Type element = convertElementType(ctx.context(), (int32_t)code);
  if (!element || !isa<FloatType>(element)) {
    ctx.error() << "output_datatype must name a float type";
    return failure();
  }
  // Edges from 0 Hz to the sample rate keep every bin edge within
  // [0, dft + 1] (and the loops below short).
  if (!(lower->front() >= 0 && lower->front() <= upper->front() &&
        upper->front() <= (double)rate->front())) {
    ctx.error() << "needs 0 <= lower_edge_hertz <= upper_edge_hertz <= "
                   "sample_rate, got "
                << lower->front() << " and " << upper->front();
    return failure();
  }
  int64_t melBins = bins->front(), dft = length->front(),
          spectrum = dft / 2 + 1;
  auto toMel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10.0); };
  double low = toMel(lower->front()), high = toMel(upper->front());
  double step = (high - low) / (double)(melBins + 2);
  SmallVector<int64_t> edges;
  for (int64_t i = 0; i < melBins + 2; ++i) {
    double hz = 700 * std::expm1((i * step + low) / 2595 * std::log(10.0));
    edges.push_back((int64_t)std::floor((double)(dft + 1) * hz /
                                        (double)rate->front()));
  }
  SmallVector<double> matrix(spectrum * melBins, 0.0);
  auto at = [&](int64_t j, int64_t i) -> double * {
    return j >= 0 && j < spectrum ? &matrix[j * melBins + i] : nullptr;
  };
  for (int64_t i = 0; i < melBins; ++i) {
    int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
    if (center == left) {
      if (double *e = at(center, i))
        *e = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        if (double *e = at(j, i))
          *e = (double)(j - left) / (double)(center - left);
    }
    for (int64_t j = center; right > center && j < right; ++j)
      if (double *e = at(j, i))
        *e = (double)(right - j) / (double)(right - center);
  }
  auto type = RankedTensorType::get({spectrum, melBins},
                                    Float64Type::get(ctx.context()));
  return single(castTo(
      ctx, ctx.constant(DenseElementsAttr::get(type, ArrayRef(matrix))),
      element));
}

} // namespace

void cgc::onnx_import::registerSignalOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("DFT", importDFT,
      "transpose the axis next to [re, im], `cgc.matmul` by a constant "
      "matrix of cosines and sines (up to 2048 samples)");
  add("STFT", importSTFT,
      "`cgc.slice` frames, times the window, `cgc.matmul` by the DFT "
      "matrix");
  add("MelWeightMatrix", importMelWeightMatrix, "folded to `cgc.constant`");
}
