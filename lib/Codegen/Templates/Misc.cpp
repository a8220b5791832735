//===- Misc.cpp - templates of ops that are a family of one ---------------===//
//
// trilu and one_hot (one thread per output element), einsum (one thread per
// output element, a loop per summed label), the negative log likelihood
// loss (per element, or one block for its sum or mean), and the shape
// queries (constants of the static shapes).
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace cgc {
namespace codegen {

LogicalResult writeTrilu(OpContext &ctx, TriluOp trilu) {
  Value x = trilu.getInput(), y = trilu.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 2)
    return ctx.unsupported("on a tensor of rank below 2");
  int64_t R = xs[xs.size() - 2], C = xs.back();
  std::string keep = trilu.getUpper() ? "c - r >= " + ll(trilu.getK())
                                      : "c - r <= " + ll(trilu.getK());
  std::string body = "  const long long c = i % " + ll(C) + ", r = (i / " +
                     ll(C) + ") % " + ll(R) + ";\n  " + o + "[i] = (" + keep +
                     ") ? " + ctx.in(x) + "[i] : (" + ctx.T(y) + ")0;\n";
  ctx.perElement(numElements(xs), body);
  return success();
}

LogicalResult writeOneHot(OpContext &ctx, OneHotOp oneHot) {
  Value idx = oneHot.getIndices(), y = oneHot.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> ys = shapeOf(y);
  int64_t axis = normalizeAxis(oneHot.getAxis(), ys.size());
  int64_t depth = oneHot.getDepth();
  LineGeometry g = lineOf(ys, axis);
  Type et = elementType(y);
  std::string body =
      "  const long long n = i % " + ll(g.inner) + ", j = (i / " + ll(g.inner) +
      ") % " + ll(g.length) + ", outer = i / " + ll(g.length * g.inner) +
      ";\n  long long k = (long long)" + ctx.in(idx) + "[outer * " +
      ll(g.inner) + " + n];\n  if (k < 0) k += " + ll(depth) + ";\n  " + o +
      "[i] = k == j ? " + literal(oneHot.getOnValue().convertToDouble(), et) +
      " : " + literal(oneHot.getOffValue().convertToDouble(), et) + ";\n";
  ctx.perElement(numElements(ys), body);
  return success();
}

namespace {

/// An einsum equation resolved against its operands' shapes: the labels of
/// each input and of the output (ellipsis dims as '0', '1', ...), the
/// summed labels, and every label's size.
struct EinsumLabels {
  SmallVector<std::string> inputs;
  std::string output, summed;
  std::map<char, int64_t> size;
};

FailureOr<EinsumLabels> resolveEinsum(OpContext &ctx, EinsumOp einsum) {
  EinsumLabels r;
  std::string eq;
  for (char c : einsum.getEquation())
    if (c != ' ')
      eq += c;
  std::string lhs = eq, rhs;
  bool explicitOutput = false;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    explicitOutput = true;
  }
  SmallVector<std::string> terms;
  for (StringRef t : llvm::split(StringRef(lhs), ','))
    terms.push_back(t.str());
  ValueRange inputs = einsum.getInputs();
  if (terms.size() != inputs.size())
    return ctx.unsupported("with " + Twine(terms.size()) + " terms for " +
                           Twine(inputs.size()) + " inputs");
  // Ellipsis dims become labels '0', '1', ... (right-aligned, broadcast).
  int64_t ellipsisRank = 0;
  for (auto [t, v] : llvm::zip(terms, inputs)) {
    size_t at = t.find("...");
    if (at == std::string::npos)
      continue;
    int64_t letters = t.size() - 3;
    ellipsisRank =
        std::max<int64_t>(ellipsisRank, (int64_t)shapeOf(v).size() - letters);
  }
  auto expand = [&](const std::string &t, int64_t rank) -> std::string {
    size_t at = t.find("...");
    if (at == std::string::npos)
      return t;
    int64_t n = rank - (int64_t)(t.size() - 3);
    std::string e;
    for (int64_t k = ellipsisRank - n; k < ellipsisRank; ++k)
      e += (char)('0' + k);
    return t.substr(0, at) + e + t.substr(at + 3);
  };
  std::map<char, int64_t> &size = r.size;
  SmallVector<std::string> &labels = r.inputs;
  for (auto [t, v] : llvm::zip(terms, inputs)) {
    ArrayRef<int64_t> s = shapeOf(v);
    std::string e = expand(t, s.size());
    if ((int64_t)e.size() != (int64_t)s.size() || ellipsisRank > 10)
      return ctx.unsupported("with equation '" + eq +
                             "' that does not match the input ranks");
    for (auto [c, n] : llvm::zip(e, s)) {
      if (!llvm::isAlpha(c) && !llvm::isDigit(c))
        return ctx.unsupported("with label '" + Twine(c) + "'");
      auto [it, inserted] = size.insert({c, n});
      if (!inserted && it->second != n) {
        if (it->second == 1)
          it->second = n;
        else if (n != 1)
          return ctx.unsupported("with label '" + Twine(c) +
                                 "' of different sizes");
      }
    }
    labels.push_back(e);
  }
  std::string &outLabels = r.output;
  if (explicitOutput) {
    outLabels = expand(rhs, ellipsisRank + (int64_t)rhs.size() -
                                (rhs.find("...") == std::string::npos ? 0 : 3));
  } else {
    for (int64_t k = 0; k < ellipsisRank; ++k)
      outLabels += (char)('0' + k);
    std::map<char, int> count;
    for (const std::string &e : labels)
      for (char c : e)
        if (llvm::isAlpha(c))
          ++count[c];
    for (auto [c, n] : count)
      if (n == 1)
        outLabels += c;
  }
  ArrayRef<int64_t> ys = shapeOf(einsum.getOutput());
  if (outLabels.size() != ys.size())
    return ctx.unsupported("whose output labels do not match the result rank");
  for (auto [c, n] : llvm::zip(outLabels, ys))
    if (!size.count(c) || size[c] != n)
      return ctx.unsupported("whose output labels do not match the result "
                             "shape");
  std::string &summed = r.summed;
  for (auto [c, n] : size)
    if (outLabels.find(c) == std::string::npos)
      summed += c;
  return r;
}

} // namespace

/// One thread per output element, a loop per summed label.
LogicalResult writeEinsum(OpContext &ctx, EinsumOp einsum) {
  Value y = einsum.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  FailureOr<EinsumLabels> r = resolveEinsum(ctx, einsum);
  if (failed(r))
    return failure();
  const std::string &outLabels = r->output, &summed = r->summed;
  ValueRange inputs = einsum.getInputs();
  ArrayRef<int64_t> ys = shapeOf(y);
  auto var = [](char c) { return std::string("l_") + c; };
  std::string a = ctx.A(y);
  std::string body;
  body += "  long long e_r = i;\n";
  for (int64_t d = (int64_t)outLabels.size() - 1; d >= 0; --d)
    body += "  const long long " + var(outLabels[d]) + " = e_r % " + ll(ys[d]) +
            "; e_r /= " + ll(ys[d]) + ";\n";
  body += "  " + a + " acc = 0;\n";
  for (auto [k, c] : llvm::enumerate(summed))
    body += std::string(2 + 2 * k, ' ') + "for (long long " + var(c) +
            " = 0; " + var(c) + " < " + ll(r->size.at(c)) + "; ++" + var(c) +
            ") {\n";
  std::string product = "(" + a + ")1";
  for (auto [e, v] : llvm::zip(r->inputs, inputs)) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<std::string> c;
    for (char l : e)
      c.push_back(var(l));
    product += " * (" + a + ")" + ctx.in(v) + "[" + linearIndex(c, s) + "]";
  }
  body += std::string(2 + 2 * summed.size(), ' ') + "acc += " + product + ";\n";
  for (int64_t k = (int64_t)summed.size() - 1; k >= 0; --k)
    body += std::string(2 + 2 * k, ' ') + "}\n";
  body += "  " + o + "[i] = (" + ctx.T(y) + ")acc;\n";
  ctx.perElement(numElements(ys), body);
  return success();
}

LogicalResult writeNLLLoss(OpContext &ctx, NegativeLogLikelihoodLossOp loss) {
  Value x = loss.getInput(), target = loss.getTarget(), y = loss.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 2)
    return ctx.unsupported("on an input of rank below 2");
  int64_t N = xs[0], C = xs[1], D = numElements(xs.drop_front(2));
  Value weight = loss.getWeight();
  std::optional<int64_t> ignore;
  if (auto attr = loss.getIgnoreIndexAttr())
    ignore = attr.getInt();
  StringRef reduction = loss.getReduction();
  if (!llvm::is_contained({"none", "sum", "mean"}, reduction))
    return ctx.unsupported("with reduction '" + reduction + "'");
  // Element e = n * D + d: its loss and weight.
  std::string term =
      "    const long long n = e / " + ll(D) + ", d = e % " + ll(D) +
      ";\n    const long long t = (long long)" + ctx.in(target) +
      "[e];\n    double w = 0.0, l = 0.0;\n    if (" +
      (ignore ? "t != " + ll(*ignore) + " && " : std::string()) +
      "t >= 0 && t < " + ll(C) + ") {\n      w = " +
      (weight ? "(double)" + ctx.in(weight) + "[t]" : std::string("1.0")) +
      ";\n      l = -(double)" + ctx.in(x) + "[(n * " + ll(C) + " + t) * " +
      ll(D) + " + d] * w;\n    }\n";
  if (reduction == "none") {
    ctx.perElement(N * D, "  const long long e = i;\n  {\n" + term + "    " +
                              o + "[i] = (" + ctx.T(y) + ")l;\n  }\n");
    return success();
  }
  std::string body =
      "  __shared__ double scratch[32];\n  double ls = 0.0, ws = 0.0;\n  "
      "for (long long e = threadIdx.x; e < " +
      ll(N * D) + "; e += blockDim.x) {\n" + term +
      "    ls += l;\n    ws += w;\n  }\n  ls = cgc_block_reduce(ls, 0.0, "
      "scratch, cgc_sum_op());\n  ws = cgc_block_reduce(ws, 0.0, scratch, "
      "cgc_sum_op());\n  if (threadIdx.x == 0) " +
      o + "[0] = (" + ctx.T(y) + ")(" +
      (reduction == "mean" ? std::string("ls / ws") : std::string("ls")) +
      ");\n";
  ctx.perRow(1, kThreads, body);
  return success();
}

namespace {

/// The constant `values` (shape and size queries).
LogicalResult writeConstants(OpContext &ctx, Value y,
                             ArrayRef<int64_t> values) {
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  SmallVector<std::string> items;
  for (int64_t v : values)
    items.push_back(ll(v));
  if (items.empty()) {
    ctx.perElement(0, "");
    return success();
  }
  ctx.perElement(values.size(), "  const long long v[] = {" +
                                    llvm::join(items, ", ") + "};\n  " + o +
                                    "[i] = v[i];\n");
  return success();
}

} // namespace

LogicalResult writeShape(OpContext &ctx, ShapeOp shape) {
  ArrayRef<int64_t> xs = shapeOf(shape.getInput());
  int64_t rank = xs.size();
  auto clampAxis = [&](int64_t a) {
    a = a < 0 ? a + rank : a;
    return std::clamp<int64_t>(a, 0, rank);
  };
  int64_t start = clampAxis(shape.getStart()), end = clampAxis(shape.getEnd());
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(xs[d]);
  if ((int64_t)dims.size() != numElements(shapeOf(shape.getOutput())))
    return ctx.unsupported("with an unexpected result shape");
  return writeConstants(ctx, shape.getOutput(), dims);
}

LogicalResult writeSize(OpContext &ctx, SizeOp size) {
  return writeConstants(ctx, size.getOutput(),
                        {numElements(shapeOf(size.getInput()))});
}

} // namespace codegen
} // namespace cgc
