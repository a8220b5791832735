//===- Resize.cpp - resize (nearest, linear, cubic) -----------------------===//
//
// One thread per output element: per axis the input taps and their
// weights, then the weighted sum over every combination of taps.
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;

namespace cgc {
namespace codegen {

namespace {

/// The attributes of a resize that every axis's taps depend on; `a` is the
/// C type the weights and the sum are in.
struct ResizeMode {
  StringRef mode, ctm, nearest;
  bool exclude;
  double cubicA;
  std::string a;
};

/// The input coordinate (a double expression) of output coordinate o<d>
/// along an axis of `in` input and `out` output elements, by the
/// coordinate transformation mode `ctm`.
std::string sourceCoordinate(StringRef ctm, const std::string &D, int64_t in,
                             int64_t out, double scale) {
  std::string od = "(double)o" + D;
  double outF = scale * (double)in;
  std::string s = doubleLiteral(scale);
  if (ctm == "half_pixel")
    return "(" + od + " + 0.5) / " + s + " - 0.5";
  if (ctm == "half_pixel_symmetric") {
    double adjustment = (double)out / outF;
    double center = (double)in / 2.0;
    double offset = center * (1 - adjustment);
    return doubleLiteral(offset) + " + ((" + od + " + 0.5) / " + s + " - 0.5)";
  }
  if (ctm == "pytorch_half_pixel")
    return outF == 1.0 ? "-0.5" : "(" + od + " + 0.5) / " + s + " - 0.5";
  if (ctm == "align_corners")
    return outF == 1.0 ? "0.0"
                       : od + " * " + doubleLiteral((double)(in - 1)) + " / " +
                             doubleLiteral(outF - 1.0);
  if (ctm == "asymmetric")
    return od + " / " + s;
  return "(" + od + " + 0.5) / " + s; // tf_half_pixel_for_nn
}

/// The coefficients of the taps of a linear (2) or cubic (4) interpolation
/// at fraction r<d>; the first tap is b<d> + `first`.
std::vector<std::string> tapCoefficients(const ResizeMode &m,
                                         const std::string &D, int64_t &first) {
  if (m.mode == "linear") {
    first = 0;
    return {"1.0 - r" + D, "r" + D};
  }
  first = -1;
  std::string A = doubleLiteral(m.cubicA);
  std::string r = "r" + D, r1 = "(r" + D + " + 1.0)", q = "(1.0 - r" + D + ")",
              q1 = "(2.0 - r" + D + ")";
  return {"((" + A + " * " + r1 + " - 5.0 * " + A + ") * " + r1 + " + 8.0 * " +
              A + ") * " + r1 + " - 4.0 * " + A,
          "((" + A + " + 2.0) * " + r + " - (" + A + " + 3.0)) * " + r + " * " +
              r + " + 1.0",
          "((" + A + " + 2.0) * " + q + " - (" + A + " + 3.0)) * " + q + " * " +
              q + " + 1.0",
          "((" + A + " * " + q1 + " - 5.0 * " + A + ") * " + q1 + " + 8.0 * " +
              A + ") * " + q1 + " - 4.0 * " + A};
}

/// Declares x<d>[n] and w<d>[n], the input positions and weights of the n
/// taps of axis d, into `body`; returns n.
int64_t axisTaps(const ResizeMode &m, int64_t d, int64_t in, int64_t out,
                 double scale, std::string &body) {
  const std::string &a = m.a;
  std::string D = str(d), xi = "x" + D, w = "w" + D;
  bool identity = out == in && std::fabs(scale - 1.0) <=
                                   1e-9 * std::max(std::fabs(scale), 1.0);
  if (identity || in == 1) {
    // An identity axis, or one input element that edge padding repeats.
    body += "  const long long " + xi + "[1] = {" +
            (identity ? "o" + D : std::string("0")) + "};\n  const " + a + " " +
            w + "[1] = {(" + a + ")1};\n";
    return 1;
  }
  std::string xo = sourceCoordinate(m.ctm, D, in, out, scale);
  std::string hi = ll(in - 1);
  auto clamp = [&](StringRef e) {
    return "cgc_clampi(" + e.str() + ", " + hi + ")";
  };
  body += "  const double xo" + D + " = " + xo + ";\n  const double fl" + D +
          " = floor(xo" + D + ");\n  const double r" + D + " = xo" + D +
          " - fl" + D + ";\n  const long long b" + D + " = (long long)fl" + D +
          ";\n";
  if (m.mode == "nearest") {
    std::string pick;
    if (m.nearest == "round_prefer_floor")
      pick = "r" + D + " <= 0.5";
    else if (m.nearest == "round_prefer_ceil")
      pick = "r" + D + " < 0.5";
    else if (m.nearest == "floor")
      pick = "true";
    else
      pick = "false";
    // An exact coordinate is itself in every nearest mode.
    body += "  const long long n" + D + " = (r" + D + " == 0.0 || " + pick +
            ") ? b" + D + " : b" + D + " + 1;\n  const long long " + xi +
            "[1] = {" + clamp("n" + D) + "};\n  const " + a + " " + w +
            "[1] = {(" + a + ")" +
            (m.exclude ? "(n" + D + " >= 0 && n" + D + " <= " + hi + ")"
                       : std::string("1")) +
            "};\n";
    return 1;
  }
  int64_t first;
  std::vector<std::string> coeffs = tapCoefficients(m, D, first);
  int64_t n = coeffs.size();
  body += "  long long " + xi + "[" + str(n) + "];\n  " + a + " " + w + "[" +
          str(n) + "];\n  {\n    double c[" + str(n) + "] = {" +
          llvm::join(coeffs, ", ") + "};\n    double sum = 0.0;\n";
  body += "    for (int t = 0; t < " + str(n) +
          "; ++t) {\n      const long long p = b" + D + " + " + str(first) +
          " + t;\n";
  if (m.exclude)
    body += "      if (p < 0 || p > " + hi + ") c[t] = 0.0;\n";
  body +=
      "      sum += c[t];\n      " + xi + "[t] = " + clamp("p") + ";\n    }\n";
  body += "    for (int t = 0; t < " + str(n) + "; ++t) " + w + "[t] = (" + a +
          ")(" +
          (m.exclude ? std::string("sum != 0.0 ? c[t] / sum : 0.0")
                     : std::string("c[t]")) +
          ");\n  }\n";
  return n;
}

/// `acc`, the weighted sum of input `x` over every combination of taps.
std::string weightedSum(const std::string &a, const std::string &x,
                        ArrayRef<int64_t> xs, ArrayRef<int64_t> taps) {
  int64_t rank = xs.size();
  std::string body = "  " + a + " acc = 0;\n";
  std::string weight = "(" + a + ")1";
  SmallVector<std::string> idx;
  for (int64_t d = 0; d < rank; ++d) {
    std::string pad(2 + 2 * d, ' ');
    body += pad + "for (int t" + str(d) + " = 0; t" + str(d) + " < " +
            str(taps[d]) + "; ++t" + str(d) + ") {\n";
    weight += " * w" + str(d) + "[t" + str(d) + "]";
    idx.push_back("x" + str(d) + "[t" + str(d) + "]");
  }
  body += std::string(2 + 2 * rank, ' ') + "acc += " + weight + " * (" + a +
          ")" + x + "[" + linearIndex(idx, xs) + "];\n";
  for (int64_t d = rank - 1; d >= 0; --d)
    body += std::string(2 + 2 * d, ' ') + "}\n";
  return body;
}

} // namespace

LogicalResult writeResize(OpContext &ctx, ResizeOp resize) {
  Value x = resize.getInput(), y = resize.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  int64_t rank = xs.size();
  StringRef mode = resize.getMode();
  StringRef ctm = resize.getCoordinateTransformationMode();
  StringRef nearest = resize.getNearestMode();
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, mode))
    return ctx.unsupported("with mode '" + mode + "'");
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn"},
                          ctm))
    return ctx.unsupported("with coordinate_transformation_mode '" + ctm + "'");
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          nearest))
    return ctx.unsupported("with nearest_mode '" + nearest + "'");
  SmallVector<double> scales;
  for (Attribute s : resize.getScales())
    scales.push_back(cast<FloatAttr>(s).getValueAsDouble());
  if ((int64_t)scales.size() != rank)
    return ctx.unsupported("with a scale count other than the rank");
  ResizeMode m{mode,
               ctm,
               nearest,
               resize.getExcludeOutside(),
               resize.getCubicCoeffA().convertToDouble(),
               elementType(y).isF32() ? "float" : "double"};
  std::string body = coords("i", ys, "o");
  SmallVector<int64_t> taps;
  for (int64_t d = 0; d < rank; ++d)
    taps.push_back(axisTaps(m, d, xs[d], ys[d], scales[d], body));
  body += weightedSum(m.a, ctx.in(x), xs, taps);
  body += "  " + o + "[i] = cgc_saturate<" + ctx.T(y) + ">(acc);\n";
  ctx.perElement(numElements(ys), body);
  return success();
}

} // namespace codegen
} // namespace cgc
