//===- ResizeOps.cpp - importers of Resize and Upsample -------------------===//

#include "TensorHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

//===----------------------------------------------------------------------===//
// Resize and Upsample
//===----------------------------------------------------------------------===//

struct ResizeParams {
  std::string mode = "nearest";
  std::string coordinateMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
};

/// Builds cgc.resize from per-dim output sizes and scales.
Results buildResize(NodeContext &ctx, Value x, const ResizeParams &p,
                    ArrayRef<int64_t> shape, ArrayRef<double> scales) {
  RankedTensorType type = tensorType(x);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Builder &b = ctx.builder();
  return single(ctx.create1<ResizeOp>(
      {x},
      {ctx.named("scales", b.getF64ArrayAttr(scales)),
       ctx.namedStr("mode", p.mode),
       ctx.namedStr("coordinate_transformation_mode", p.coordinateMode),
       ctx.namedStr("nearest_mode", p.nearestMode),
       ctx.namedF64("cubic_coeff_a", p.cubicCoeffA),
       ctx.namedBool("exclude_outside", p.excludeOutside),
       ctx.namedF64("extrapolation_value", p.extrapolationValue)},
      {resultType}));
}

/// Output shape floor(in * scale) per dim (dynamic stays dynamic).
FailureOr<SmallVector<int64_t>>
scaledShape(NodeContext &ctx, RankedTensorType type, ArrayRef<double> scales) {
  SmallVector<int64_t> shape;
  for (auto [d, scale] : llvm::enumerate(scales)) {
    if (!(scale > 0) || !std::isfinite(scale)) {
      ctx.error() << "scale " << scale << " of dim " << d
                  << " must be positive";
      return failure();
    }
    int64_t in = type.getDimSize(d);
    if (ShapedType::isDynamic(in)) {
      shape.push_back(kDyn);
      continue;
    }
    double out = std::floor((double)in * scale);
    if (out > (double)(int64_t(1) << 40)) {
      ctx.error() << "output dim " << d << " is too large";
      return failure();
    }
    shape.push_back((int64_t)out);
  }
  return shape;
}

Results importResize(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t rank = type.getRank();
  ResizeParams p;
  p.mode = ctx.getString("mode", "nearest");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, p.mode) ||
      (ctx.opset() < 11 && p.mode == "cubic")) {
    ctx.error() << "unknown mode '" << p.mode << "'";
    return failure();
  }
  Value scalesValue, sizesValue;
  if (ctx.opset() < 11) {
    // Resize-10: scales is input 1; asymmetric coordinates, floor for nearest
    // (the semantics of the Upsample op it replaced).
    p.coordinateMode = "asymmetric";
    p.nearestMode = "floor";
    if (!ctx.hasInput(1)) {
      ctx.error() << "the scales input is required";
      return failure();
    }
    scalesValue = ctx.input(1);
  } else {
    p.coordinateMode =
        ctx.getString("coordinate_transformation_mode", "half_pixel");
    p.nearestMode = ctx.getString("nearest_mode", "round_prefer_floor");
    p.cubicCoeffA = ctx.getFloat("cubic_coeff_a", -0.75);
    p.excludeOutside = ctx.getInt("exclude_outside", 0) != 0;
    p.extrapolationValue = ctx.getFloat("extrapolation_value", 0.0);
    scalesValue = ctx.input(2);
    sizesValue = ctx.input(3);
  }
  if (ctx.hadAttributeError())
    return failure();
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          p.coordinateMode)) {
    ctx.error() << "unknown coordinate_transformation_mode '"
                << p.coordinateMode << "'";
    return failure();
  }
  if (p.coordinateMode == "tf_crop_and_resize") {
    ctx.error() << "coordinate_transformation_mode tf_crop_and_resize is not "
                   "supported (cgc.resize has no roi)";
    return failure();
  }
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          p.nearestMode)) {
    ctx.error() << "unknown nearest_mode '" << p.nearestMode << "'";
    return failure();
  }
  if (ctx.getInt("antialias", 0) != 0 && p.mode != "nearest") {
    ctx.error() << "antialias is not supported";
    return failure();
  }
  // Opset 18: axes select the dims that scales/sizes refer to.
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("axes")) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(ctx, *given, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    if (ctx.hadAttributeError())
      return failure();
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  std::optional<SmallVector<double>> scales;
  std::optional<SmallVector<int64_t>> sizes;
  if (scalesValue) {
    scales = ctx.constFloats(scalesValue);
    if (!scales) {
      ctx.error() << "the scales input must be a constant";
      return failure();
    }
    if (scales->empty())
      scales.reset();
  }
  if (sizesValue) {
    sizes = ctx.constInts(sizesValue);
    if (!sizes) {
      ctx.error() << "the sizes input must be a constant (or computable from "
                     "static shapes)";
      return failure();
    }
    if (sizes->empty())
      sizes.reset();
  }
  if ((bool)scales == (bool)sizes) {
    ctx.error() << "exactly one of scales and sizes must be given";
    return failure();
  }
  size_t given = scales ? scales->size() : sizes->size();
  if (given != axes.size()) {
    ctx.error() << (scales ? "scales" : "sizes") << " has " << given
                << " entries, expected " << axes.size();
    return failure();
  }
  SmallVector<double> allScales(rank, 1.0);
  SmallVector<int64_t> shape(type.getShape());
  if (scales) {
    for (auto [i, axis] : llvm::enumerate(axes))
      allScales[axis] = (*scales)[i];
    FailureOr<SmallVector<int64_t>> out = scaledShape(ctx, type, allScales);
    if (failed(out))
      return failure();
    shape = *out;
  } else {
    std::string policy = ctx.getString("keep_aspect_ratio_policy", "stretch");
    if (!llvm::is_contained({"stretch", "not_larger", "not_smaller"}, policy)) {
      ctx.error() << "unknown keep_aspect_ratio_policy '" << policy << "'";
      return failure();
    }
    for (auto [i, axis] : llvm::enumerate(axes)) {
      int64_t in = type.getDimSize(axis), out = (*sizes)[i];
      // No dim is above 2^40, nor may a size be.
      if (out < 0 || out > kMaxTensorBytes) {
        ctx.error() << "sizes entry " << out << " is outside [0, 2^40]";
        return failure();
      }
      if (ShapedType::isDynamic(in) || in == 0) {
        ctx.error() << "cannot resize dim " << axis << " of " << type
                    << " to a given size: the input dim must be static and "
                       "non-zero";
        return failure();
      }
      allScales[axis] = (double)out / (double)in;
      shape[axis] = out;
    }
    if (policy != "stretch" && !axes.empty()) {
      double scale = allScales[axes.front()];
      for (int64_t axis : axes)
        scale = policy == "not_larger" ? std::min(scale, allScales[axis])
                                       : std::max(scale, allScales[axis]);
      for (int64_t axis : axes) {
        allScales[axis] = scale;
        double out = scale * (double)type.getDimSize(axis) + 0.5;
        if (out > (double)kMaxTensorBytes) {
          ctx.error() << "output dim " << axis << " is too large";
          return failure();
        }
        shape[axis] = (int64_t)out;
      }
    }
  }
  if (failed(checkElementCount(ctx, shape)))
    return failure();
  return buildResize(ctx, *x, p, shape, allScales);
}

/// Upsample (opset 7-9; deprecated after): nearest or linear with
/// asymmetric coordinates.
Results importUpsample(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  ResizeParams p;
  p.mode = ctx.getString("mode", "nearest");
  if (p.mode == "bilinear" || p.mode == "trilinear")
    p.mode = "linear";
  if (p.mode != "nearest" && p.mode != "linear") {
    ctx.error() << "unknown mode '" << p.mode << "'";
    return failure();
  }
  p.coordinateMode = "asymmetric";
  p.nearestMode = "floor";
  std::optional<SmallVector<double>> scales;
  if (ctx.opset() >= 9 || ctx.hasInput(1)) {
    if (!ctx.hasInput(1)) {
      ctx.error() << "the scales input is required";
      return failure();
    }
    scales = ctx.constFloats(ctx.input(1));
    if (!scales) {
      ctx.error() << "the scales input must be a constant";
      return failure();
    }
  } else {
    scales = ctx.getFloats("scales");
    if (!scales) {
      if (!ctx.hadAttributeError())
        ctx.error() << "the scales attribute is required";
      return failure();
    }
  }
  if (ctx.hadAttributeError())
    return failure();
  if ((int64_t)scales->size() != type.getRank()) {
    ctx.error() << "scales has " << scales->size() << " entries but the "
                << "input has rank " << type.getRank();
    return failure();
  }
  FailureOr<SmallVector<int64_t>> shape = scaledShape(ctx, type, *scales);
  if (failed(shape) || failed(checkElementCount(ctx, *shape)))
    return failure();
  return buildResize(ctx, *x, p, *shape, *scales);
}

/// The sampling positions of one dim of AffineGrid in [-1, 1]: the pixel
/// corners (align_corners) or centers.
double gridCoordinate(int64_t i, int64_t n, bool alignCorners) {
  if (alignCorners)
    return n == 1 ? -1.0 : -1.0 + (double)i * 2.0 / (double)(n - 1);
  return -1.0 + (2.0 * (double)i + 1.0) / (double)n;
}

/// AffineGrid (opset 20): the homogeneous coordinates (x, y[, z], 1) of
/// every output position, a constant [positions, k + 1], times theta^T:
/// one batched matmul.
Results importAffineGrid(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value theta = (*in)[0];
  std::optional<SmallVector<int64_t>> size = ctx.constInts((*in)[1]);
  bool alignCorners = ctx.getInt("align_corners", 0) != 0;
  if (ctx.hadAttributeError())
    return failure();
  RankedTensorType tt = tensorType(theta);
  if (!size || (size->size() != 4 && size->size() != 5)) {
    ctx.error() << "the size input must be a constant [N, C, H, W] or "
                   "[N, C, D, H, W]";
    return failure();
  }
  int64_t k = size->size() - 2;
  if (tt.getRank() != 3 || !tt.hasStaticShape() ||
      tt.getDimSize(0) != (*size)[0] || tt.getDimSize(1) != k ||
      tt.getDimSize(2) != k + 1) {
    ctx.error() << "theta must be [" << (*size)[0] << ", " << k << ", "
                << k + 1 << "], got " << tt;
    return failure();
  }
  SmallVector<int64_t> dims(size->begin() + 2, size->end()); // [D,] H, W
  int64_t positions = 1;
  for (int64_t d : dims) {
    if (d < 1 || d > (1 << 24)) {
      positions = 0;
      break;
    }
    positions *= d;
    if (positions > (1 << 24))
      break;
  }
  if (positions <= 0 || positions > (1 << 24)) {
    ctx.error() << "the grid must have 1 to 2^24 positions";
    return failure();
  }
  // Row p: (x, y[, z], 1), x along the last dim.
  SmallVector<double> base;
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    SmallVector<double> coords(k);
    for (int64_t d = k - 1; d >= 0; --d) {
      coords[k - 1 - d] = gridCoordinate(rest % dims[d], dims[d], alignCorners);
      rest /= dims[d];
    }
    llvm::append_range(base, coords);
    base.push_back(1.0);
  }
  auto baseType =
      RankedTensorType::get({positions, k + 1}, Float64Type::get(ctx.context()));
  FailureOr<Value> grid = castTo(
      ctx, ctx.constant(DenseElementsAttr::get(baseType, ArrayRef(base))),
      tt.getElementType());
  FailureOr<Value> thetaT = ctx.create1<TransposeOp>(
      {theta}, {ctx.namedI64Array("perm", {0, 2, 1})});
  if (failed(grid) || failed(thetaT))
    return failure();
  FailureOr<Value> points = ctx.create1<MatMulOp>({*grid, *thetaT});
  if (failed(points))
    return failure();
  SmallVector<int64_t> shape = {(*size)[0]};
  llvm::append_range(shape, dims);
  shape.push_back(k);
  return single(reshapeTo(ctx, *points, shape));
}

//===----------------------------------------------------------------------===//
// GridSample
//===----------------------------------------------------------------------===//

/// How GridSample reads one spatial dim: its size and the interval
/// ([-0.5, L - 0.5], or [0, L - 1] with align_corners) outside which the
/// padding mode applies.
struct SampleAxis {
  int64_t size;
  double lo, hi;
};

/// v reflected by the interval's ends until it lies inside, as ONNX's
/// reference reflects (whole periods dropped, the parity picks the end).
Value reflectInto(Arith &a, Value v, const SampleAxis &axis) {
  double range = axis.hi - axis.lo;
  Value below = a.op<LessOp>({v, a.c(axis.lo)}),
        above = a.op<GreaterOp>({v, a.c(axis.hi)});
  Value dx = a.select(below, a.sub(a.c(axis.lo), v), a.sub(v, a.c(axis.hi)));
  Value periods = a.floor(a.div(dx, a.c(range)));
  Value rest = a.sub(dx, a.mul(periods, a.c(range)));
  Value half = a.floor(a.mul(periods, a.c(0.5)));
  Value even = a.op<EqualOp>({a.sub(periods, a.mul(half, a.c(2.0))), a.c(0.0)});
  Value fromLo = a.add(a.c(axis.lo), rest), fromHi = a.sub(a.c(axis.hi), rest);
  return a.select(below, a.select(even, fromLo, fromHi),
                  a.select(above, a.select(even, fromHi, fromLo), v));
}

/// Keys' cubic convolution weights (alpha -0.75) of the taps -1..2 at
/// fraction t.
SmallVector<Value> cubicWeights(Arith &a, Value t) {
  const double A = -0.75;
  auto outer = [&](Value x) { // for |x| in [1, 2)
    return a.sub(
        a.mul(a.add(a.mul(a.sub(a.mul(a.c(A), x), a.c(5 * A)), x), a.c(8 * A)),
              x),
        a.c(4 * A));
  };
  auto inner = [&](Value x) { // for |x| in [0, 1)
    return a.add(
        a.mul(a.mul(a.sub(a.mul(a.c(A + 2), x), a.c(A + 3)), x), x), a.c(1.0));
  };
  Value one = a.c(1.0);
  return {outer(a.add(t, one)), inner(t), inner(a.sub(one, t)),
          outer(a.sub(a.c(2.0), t))};
}

/// One tap of one axis: its (clamped) index as i64 and its weight (0
/// outside the input with zeros padding).
struct Tap {
  Value index, weight;
};

/// The taps of one spatial axis for pixel coordinate p.
FailureOr<SmallVector<Tap>> axisTaps(NodeContext &ctx, Arith &a, Value p,
                                     const SampleAxis &axis, StringRef mode,
                                     StringRef padding) {
  Type i64 = ctx.builder().getI64Type();
  SmallVector<std::pair<Value, Value>> raw; // (float index, weight)
  if (mode == "nearest") {
    raw.push_back({p, a.c(1.0)});
  } else {
    Value base = a.floor(p), t = a.sub(p, base);
    if (mode == "linear") {
      raw.push_back({base, a.sub(a.c(1.0), t)});
      raw.push_back({a.add(base, a.c(1.0)), t});
    } else {
      SmallVector<Value> w = cubicWeights(a, t);
      for (int k = 0; k < 4; ++k)
        raw.push_back({a.add(base, a.c(k - 1.0)), w[k]});
    }
  }
  SmallVector<Tap> taps;
  double last = (double)axis.size - 1;
  for (auto [index, weight] : raw) {
    if (padding == "zeros") {
      Value inside = a.op<AndOp>({a.op<GreaterEqualOp>({index, a.c(0.0)}),
                                  a.op<LessEqualOp>({index, a.c(last)})});
      weight = a.select(inside, weight, a.c(0.0));
    } else if (padding == "reflection") {
      index = reflectInto(a, index, axis);
    }
    Value clamped = a.clamp(index, 0.0, last);
    if (!a.ok)
      return failure();
    FailureOr<Value> asInt = castTo(ctx, clamped, i64);
    if (failed(asInt))
      return failure();
    taps.push_back({*asInt, weight});
  }
  return taps;
}

/// GridSample (opsets 16, 20, 22): every output position reads the input at
/// the grid's normalized coordinates (x along the last dim), nearest,
/// linear or cubic, with zeros, border or reflection padding. Each
/// combination of taps is a `cgc.gather_elements` of the flattened input,
/// weighted and summed.
Results importGridSample(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], grid = (*in)[1];
  RankedTensorType xt = tensorType(x), gt = tensorType(grid);
  std::string mode = ctx.getString("mode", ctx.opset() < 20 ? "bilinear"
                                                            : "linear");
  std::string padding = ctx.getString("padding_mode", "zeros");
  bool alignCorners = ctx.getInt("align_corners", 0) != 0;
  if (ctx.hadAttributeError())
    return failure();
  if (mode == "bilinear")
    mode = "linear";
  if (mode == "bicubic")
    mode = "cubic";
  int64_t k = xt.getRank() - 2;
  // Every combination of a tap an axis is built: up to 4^k (k <= 3 in
  // ONNX's own uses; 4 leaves room).
  if (k > 4) {
    ctx.error() << "samples at most 4 spatial dims, got " << xt;
    return failure();
  }
  if (k < 1 || !xt.hasStaticShape() || !gt.hasStaticShape() ||
      xt.getNumElements() == 0 || gt.getNumElements() == 0 ||
      gt.getRank() != k + 2 || gt.getShape().back() != k ||
      gt.getDimSize(0) != xt.getDimSize(0) ||
      !isa<FloatType>(xt.getElementType())) {
    ctx.error() << "expects static, non-empty X [N, C, D...] and grid [N, O..., "
                << std::max<int64_t>(k, 1) << "], got " << xt << " and " << gt;
    return failure();
  }
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, mode) ||
      !llvm::is_contained({"zeros", "border", "reflection"}, padding)) {
    ctx.error() << "unsupported mode '" << mode << "' or padding_mode '"
                << padding << "'";
    return failure();
  }
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1);
  int64_t points = gt.getNumElements() / (n * k);
  int64_t pixels = xt.getNumElements() / (n * c);
  Type element = gt.getElementType();
  Arith a(ctx, element);
  // Per spatial dim s (x = grid[..., k - 1] reads the last one).
  SmallVector<SmallVector<Tap>> taps(k);
  for (int64_t s = 0; s < k; ++s) {
    int64_t size = xt.getDimSize(2 + s);
    SampleAxis axis{size, alignCorners ? 0.0 : -0.5,
                    alignCorners ? size - 1.0 : size - 0.5};
    FailureOr<Value> coord = takeStep(ctx, grid, k + 1, k - 1 - s);
    FailureOr<Value> flat =
        succeeded(coord) ? reshapeTo(ctx, *coord, {n, 1, points}) : coord;
    if (failed(flat))
      return failure();
    // Normalized [-1, 1] to pixels.
    Value p = alignCorners
                  ? a.mul(a.add(*flat, a.c(1.0)), a.c((size - 1) / 2.0))
                  : a.mul(a.sub(a.mul(a.add(*flat, a.c(1.0)), a.c(size)),
                                a.c(1.0)),
                          a.c(0.5));
    if (mode == "nearest")
      p = a.unary<RoundOp>(p);
    Value outside = a.op<OrOp>(
        {a.op<LessOp>({p, a.c(axis.lo)}), a.op<GreaterOp>({p, a.c(axis.hi)})});
    if (padding == "border")
      p = a.select(outside, a.clamp(p, 0.0, size - 1.0), p);
    else if (padding == "reflection")
      p = reflectInto(a, p, axis);
    if (!a.ok)
      return failure();
    FailureOr<SmallVector<Tap>> axisT = axisTaps(ctx, a, p, axis, mode, padding);
    if (failed(axisT))
      return failure();
    taps[s] = *axisT;
  }
  FailureOr<Value> source = reshapeTo(ctx, x, {n, c, pixels});
  if (failed(source))
    return failure();
  auto indexType = RankedTensorType::get({n, c, points},
                                         ctx.builder().getI64Type());
  // Every combination of one tap an axis.
  Value sum;
  SmallVector<int64_t> choice(k, 0);
  while (true) {
    Value flatIndex, weight;
    int64_t stride = 1;
    for (int64_t s = k - 1; s >= 0; --s) {
      const Tap &t = taps[s][choice[s]];
      Value scaled =
          stride == 1 ? t.index
                      : a.op<MulOp>({t.index, ctx.constInt(stride, ctx.builder().getI64Type())});
      flatIndex = flatIndex ? a.op<AddOp>({flatIndex, scaled}) : scaled;
      weight = weight ? a.mul(weight, t.weight) : t.weight;
      stride *= xt.getDimSize(2 + s);
    }
    if (!a.ok)
      return failure();
    FailureOr<Value> index = ctx.create1<ExpandOp>({flatIndex}, {}, {indexType});
    FailureOr<Value> values =
        succeeded(index) ? ctx.create1<GatherElementsOp>(
                               {*source, *index}, {ctx.namedI64("axis", 2)})
                         : index;
    if (failed(values))
      return failure();
    // (Nearest taps weigh 1, or 0 outside the input with zeros padding.)
    Value term = a.mul(*values, weight);
    sum = sum ? a.add(sum, term) : term;
    int64_t s = k - 1;
    while (s >= 0 && ++choice[s] == (int64_t)taps[s].size())
      choice[s--] = 0;
    if (s < 0)
      break;
  }
  if (!a.ok)
    return failure();
  SmallVector<int64_t> outShape = {n, c};
  llvm::append_range(outShape, gt.getShape().drop_front().drop_back());
  return single(reshapeTo(ctx, sum, outShape));
}

} // namespace

void cgc::onnx_import::registerResizeOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Resize", importResize,
      "`cgc.resize` (constant scales/sizes; no roi or antialias)");
  add("Upsample", importUpsample, "`cgc.resize` (asymmetric coordinates)");
  add("GridSample", importGridSample,
      "per axis the taps' indices and weights (nearest, linear, cubic; "
      "zeros, border, reflection), a `cgc.gather_elements` of the "
      "flattened input per tap combination, weighted sum");
  add("AffineGrid", importAffineGrid,
      "a constant grid of homogeneous coordinates times theta^T "
      "(`cgc.matmul`)");
}
