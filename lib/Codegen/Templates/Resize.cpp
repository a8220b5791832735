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
  bool exclude = resize.getExcludeOutside();
  double cubicA = resize.getCubicCoeffA().convertToDouble();
  Type et = elementType(y);
  std::string a = et.isF32() ? "float" : "double";
  std::string body = coords("i", ys, "o");
  SmallVector<int64_t> taps(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    std::string D = str(d), od = "(double)o" + D;
    std::string xi = "x" + D, w = "w" + D;
    double scale = scales[d];
    bool identity =
        ys[d] == xs[d] &&
        std::fabs(scale - 1.0) <= 1e-9 * std::max(std::fabs(scale), 1.0);
    if (identity || xs[d] == 1) {
      // An identity axis, or one input element that edge padding repeats.
      body += "  const long long " + xi + "[1] = {" +
              (identity ? "o" + D : std::string("0")) + "};\n  const " + a +
              " " + w + "[1] = {(" + a + ")1};\n";
      continue;
    }
    double outF = scale * (double)xs[d];
    std::string s = doubleLiteral(scale);
    std::string xo;
    if (ctm == "half_pixel")
      xo = "(" + od + " + 0.5) / " + s + " - 0.5";
    else if (ctm == "half_pixel_symmetric") {
      double adjustment = (double)ys[d] / outF;
      double center = (double)xs[d] / 2.0;
      double offset = center * (1 - adjustment);
      xo = doubleLiteral(offset) + " + ((" + od + " + 0.5) / " + s + " - 0.5)";
    } else if (ctm == "pytorch_half_pixel")
      xo = outF == 1.0 ? "-0.5" : "(" + od + " + 0.5) / " + s + " - 0.5";
    else if (ctm == "align_corners")
      xo = outF == 1.0 ? "0.0"
                       : od + " * " + doubleLiteral((double)(xs[d] - 1)) +
                             " / " + doubleLiteral(outF - 1.0);
    else if (ctm == "asymmetric")
      xo = od + " / " + s;
    else // tf_half_pixel_for_nn
      xo = "(" + od + " + 0.5) / " + s;
    std::string hi = ll(xs[d] - 1);
    auto clamp = [&](StringRef e) {
      return "cgc_clampi(" + e.str() + ", " + hi + ")";
    };
    body += "  const double xo" + D + " = " + xo + ";\n  const double fl" + D +
            " = floor(xo" + D + ");\n  const double r" + D + " = xo" + D +
            " - fl" + D + ";\n  const long long b" + D + " = (long long)fl" +
            D + ";\n";
    if (mode == "nearest") {
      std::string pick;
      if (nearest == "round_prefer_floor")
        pick = "r" + D + " <= 0.5";
      else if (nearest == "round_prefer_ceil")
        pick = "r" + D + " < 0.5";
      else if (nearest == "floor")
        pick = "true";
      else
        pick = "false";
      // An exact coordinate is itself in every nearest mode.
      body += "  const long long n" + D + " = (r" + D + " == 0.0 || " + pick +
              ") ? b" + D + " : b" + D + " + 1;\n  const long long " + xi +
              "[1] = {" + clamp("n" + D) + "};\n  const " + a + " " + w +
              "[1] = {(" + a + ")" +
              (exclude ? "(n" + D + " >= 0 && n" + D + " <= " + hi + ")"
                       : std::string("1")) +
              "};\n";
      continue;
    }
    std::vector<std::string> coeffs;
    int64_t first;
    if (mode == "linear") {
      coeffs = {"1.0 - r" + D, "r" + D};
      first = 0;
    } else {
      std::string A = doubleLiteral(cubicA);
      std::string r = "r" + D, r1 = "(r" + D + " + 1.0)",
                  q = "(1.0 - r" + D + ")", q1 = "(2.0 - r" + D + ")";
      coeffs = {"((" + A + " * " + r1 + " - 5.0 * " + A + ") * " + r1 +
                    " + 8.0 * " + A + ") * " + r1 + " - 4.0 * " + A,
                "((" + A + " + 2.0) * " + r + " - (" + A + " + 3.0)) * " + r +
                    " * " + r + " + 1.0",
                "((" + A + " + 2.0) * " + q + " - (" + A + " + 3.0)) * " + q +
                    " * " + q + " + 1.0",
                "((" + A + " * " + q1 + " - 5.0 * " + A + ") * " + q1 +
                    " + 8.0 * " + A + ") * " + q1 + " - 4.0 * " + A};
      first = -1;
    }
    int64_t n = coeffs.size();
    taps[d] = n;
    body += "  long long " + xi + "[" + str(n) + "];\n  " + a + " " + w + "[" +
            str(n) + "];\n  {\n    double c[" + str(n) + "] = {" +
            llvm::join(coeffs, ", ") + "};\n    double sum = 0.0;\n";
    body += "    for (int t = 0; t < " + str(n) +
            "; ++t) {\n      const long long p = b" + D + " + " + str(first) +
            " + t;\n";
    if (exclude)
      body += "      if (p < 0 || p > " + hi + ") c[t] = 0.0;\n";
    body += "      sum += c[t];\n      " + xi + "[t] = " + clamp("p") +
            ";\n    }\n";
    body += "    for (int t = 0; t < " + str(n) + "; ++t) " + w + "[t] = (" +
            a + ")(" +
            (exclude ? std::string("sum != 0.0 ? c[t] / sum : 0.0")
                     : std::string("c[t]")) +
            ");\n  }\n";
  }
  // The weighted sum over every combination of taps.
  body += "  " + a + " acc = 0;\n";
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
          ")" + ctx.in(x) + "[" + linearIndex(idx, xs) + "];\n";
  for (int64_t d = rank - 1; d >= 0; --d)
    body += std::string(2 + 2 * d, ' ') + "}\n";
  body += "  " + o + "[i] = cgc_saturate<" + ctx.T(y) + ">(acc);\n";
  ctx.perElement(numElements(ys), body);
  return success();
}

} // namespace codegen
} // namespace cgc
