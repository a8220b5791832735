//===- Norm.cpp - normalization templates ---------------------------------===//
//
// A `norm` group (layer norm, softmax or log softmax as anchor, elementwise
// producers as its prologue and consumers as its epilogue) is one block per
// normalized row: block reductions in float (double for f64) for the row
// statistics, then the epilogue per element of the row. Normalizations that
// are not a norm group (batch_norm, instance_norm, lrn; softmax and
// layer_norm of `single` groups) have per-op templates.
//
//===----------------------------------------------------------------------===//

#include "GroupWriter.h"
#include "OpTemplates.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

/// The rows a norm group normalizes: `rows` rows of `length` elements,
/// `inner` apart; `stats` computes the row's statistics from X(j) (the
/// input at element j of the row), `element` is the anchor's value at
/// (row, j) given them.
struct NormRows {
  int64_t rows = 1, length = 1, inner = 1;
  std::string stats, element;
};

/// Layer norm over the dims from its axis: mean and 1/stddev, then scale
/// and bias (broadcast against the normalized dims).
NormRows layerNormRows(GroupWriter &w, LayerNormOp ln, ArrayRef<int64_t> shape,
                       const std::string &a) {
  NormRows r;
  int64_t axis = ln.getAxis();
  if (axis < 0)
    axis += shape.size();
  r.rows = numElements(shape.take_front(axis));
  r.length = numElements(shape.drop_front(axis));
  r.stats = "  " + a +
            " s = 0;\n  for (long long j = threadIdx.x; j < L; j "
            "+= blockDim.x) s += (" +
            a + ")X(j);\n  const " + a + " mean = cgc_block_reduce(s, (" + a +
            ")0, scratch, "
            "cgc_sum_op()) / (" +
            a + ")L;\n  " + a +
            " q = 0;\n  for (long long j = threadIdx.x; j < L; j += "
            "blockDim.x) { " +
            a + " d = (" + a + ")X(j) - mean; q += d * d; }\n  const " + a +
            " rstd = (" + a + ")1 / cgc_sqrt(cgc_block_reduce(q, (" + a +
            ")0, scratch, cgc_sum_op()) / (" + a + ")L + (" + a + ")" +
            llvm::formatv("{0:e17}", ln.getEpsilon().convertToDouble()).str() +
            ");\n";
  SmallVector<int64_t> normalized(shape.drop_front(axis));
  r.element = "((" + a + ")X(j) - mean) * rstd * (" + a + ")" +
              w.load(ln.getScale(), normalized, "j");
  if (Value bias = ln.getBias())
    r.element += " + (" + a + ")" + w.load(bias, normalized, "j");
  return r;
}

/// Softmax or log softmax along its axis: the row's maximum, then the sum
/// of the exponentials.
NormRows softmaxRows(Operation *anchor, ArrayRef<int64_t> shape,
                     const std::string &a) {
  NormRows r;
  int64_t axis = anchor->getAttrOfType<IntegerAttr>("axis").getInt();
  if (axis < 0)
    axis += shape.size();
  r.rows = numElements(shape.take_front(axis)) *
           numElements(shape.drop_front(axis + 1));
  r.length = shape[axis];
  r.inner = numElements(shape.drop_front(axis + 1));
  r.stats = "  " + a + " mx = cgc_limits<" + a +
            ">::lowest();\n  for (long long j = threadIdx.x; j < L; j += "
            "blockDim.x) mx = cgc_max(mx, (" +
            a +
            ")X(j));\n  mx = "
            "cgc_block_reduce(mx, cgc_limits<" +
            a + ">::lowest(), scratch, cgc_max_op());\n  " + a +
            " s = 0;\n  for (long long j = threadIdx.x; j < L; j += "
            "blockDim.x) s += cgc_exp((" +
            a +
            ")X(j) - mx);\n  s = "
            "cgc_block_reduce(s, (" +
            a + ")0, scratch, cgc_sum_op());\n";
  r.element = isa<SoftmaxOp>(anchor) ? "cgc_exp((" + a + ")X(j) - mx) / s"
                                     : "(" + a + ")X(j) - mx - cgc_log(s)";
  return r;
}

/// `X(j)`, the input at element j of the row: a load of `x`, or with a
/// prologue a lambda computing it.
FailureOr<std::string> rowInput(GroupWriter &w, ArrayRef<Operation *> prologue,
                                Value input, const std::string &x,
                                const std::string &innerStr) {
  if (prologue.empty())
    return "#define X(j) " + x + "[base + (j) * " + innerStr + "]\n";
  std::string code;
  if (failed(w.writeElements(prologue, shapeOf(input), "i", code,
                             /*storeResults=*/false)))
    return failure();
  return "  auto cgcInput = [&](long long j) {\n    const long long i = "
         "base + j * " +
         innerStr + ";\n" + code + "    return " + w.vars.lookup(input) +
         ";\n  };\n#define X(j) cgcInput(j)\n";
}

} // namespace

LogicalResult writeNormGroup(GroupWriter &w, ArrayRef<Operation *> ops) {
  // Elementwise producers of the normalized input (a prologue) come before
  // the anchor; they are evaluated wherever the template reads its input.
  size_t anchorIndex = 0;
  while (anchorIndex < ops.size() &&
         !isa<LayerNormOp, SoftmaxOp, LogSoftmaxOp>(ops[anchorIndex]))
    ++anchorIndex;
  if (anchorIndex == ops.size())
    return ops.front()->emitError("norm kernel without a normalization");
  ArrayRef<Operation *> prologue = ops.take_front(anchorIndex);
  ops = ops.drop_front(anchorIndex);
  Operation *anchor = ops.front();
  Value out = anchor->getResult(0);
  if (failed(w.checkType(out, anchor)))
    return failure();
  std::string t = cType(elementType(out));
  // Statistics in double for f64, else in float.
  std::string a = elementType(out).isF64() ? "double" : "float";
  ArrayRef<int64_t> shape = shapeOf(out);
  std::string x = prologue.empty() ? w.inputParam(anchor->getOperand(0)) : "";
  NormRows r;
  if (auto ln = dyn_cast<LayerNormOp>(anchor))
    r = layerNormRows(w, ln, shape, a);
  else if (isa<SoftmaxOp, LogSoftmaxOp>(anchor))
    r = softmaxRows(anchor, shape, a);
  else
    return anchor->emitError()
           << "no GPU kernel for '" << anchor->getName() << "' yet";
  std::string innerStr = std::to_string(r.inner) + "ll";
  FailureOr<std::string> input =
      rowInput(w, prologue, anchor->getOperand(0), x, innerStr);
  if (failed(input))
    return failure();
  std::string text =
      "  __shared__ " + a +
      " scratch[32];\n  const long long row = "
      "blockIdx.x;\n"
      "  const long long L = " +
      std::to_string(r.length) + "ll;\n  const long long base = (row / " +
      innerStr + ") * L * " + innerStr + " + row % " + innerStr + ";\n" +
      *input + r.stats +
      "  for (long long j = threadIdx.x; j < L; j += blockDim.x) {\n"
      "    const long long i = base + j * " +
      innerStr + ";\n    const " + t + " v0 = (" + t + ")(" + r.element +
      ");\n";
  w.vars[out] = "v0";
  if (failed(w.writeElements(ops.drop_front(), shape, "i", text)))
    return failure();
  w.launches.push_back(Launch{text + "  }\n#undef X\n",
                              {std::max<int64_t>(1, r.rows), 1, 1},
                              {w.config.getThreads(), 1, 1}});
  return success();
}

/// softmax/log_softmax when they are not a norm group (kept for
/// completeness; fusion normally anchors a norm group on them).
LogicalResult writeSoftmax(OpContext &ctx, Operation *softmax, bool log) {
  Value x = softmax->getOperand(0), y = softmax->getResult(0);
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t axis = normalizeAxis(
      softmax->getAttrOfType<IntegerAttr>("axis").getInt(), xs.size());
  LineGeometry g = lineOf(xs, axis);
  std::string a = ctx.A(x);
  std::string X =
      "(" + a + ")" + ctx.in(x) + "[base + j * " + ll(g.inner) + "]";
  std::string loop = "  for (long long j = threadIdx.x; j < " + ll(g.length) +
                     "; j += blockDim.x)";
  std::string body =
      "  const long long base = (row / " + ll(g.inner) + ") * " +
      ll(g.length * g.inner) + " + row % " + ll(g.inner) + ";\n  __shared__ " +
      a + " scratch[32];\n  " + a + " m = cgc_limits<" + a + ">::lowest();\n" +
      loop + " m = cgc_max(m, " + X +
      ");\n  m = cgc_block_reduce(m, cgc_limits<" + a +
      ">::lowest(), scratch, cgc_max_op());\n  " + a + " s = 0;\n" + loop +
      " s += cgc_exp(" + X + " - m);\n  s = cgc_block_reduce(s, (" + a +
      ")0, scratch, cgc_sum_op());\n" + loop + " " + o + "[base + j * " +
      ll(g.inner) + "] = (" + ctx.T(y) + ")(" +
      (log ? X + " - m - cgc_log(s)" : "cgc_exp(" + X + " - m) / s") + ");\n";
  ctx.perRow(g.lines(), blockFor(g.length), body);
  return success();
}

/// A layer norm's rows: how many, and the normalized dims (from `axis`).
std::pair<int64_t, SmallVector<int64_t>> normalizedRows(Value x,
                                                        int64_t axis) {
  ArrayRef<int64_t> xs = shapeOf(x);
  axis = normalizeAxis(axis, xs.size());
  return {numElements(xs.take_front(axis)),
          SmallVector<int64_t>(xs.drop_front(axis))};
}

/// The flat index `idx` into a scale or bias `v` broadcast against the
/// normalized dims, at element `j` of the row.
std::string normalizedParamIndex(ArrayRef<int64_t> normalized, Value v) {
  ArrayRef<int64_t> s = shapeOf(v);
  SmallVector<std::string> c;
  int64_t offset = normalized.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d)
    c.push_back("n" + str(d + offset));
  return coords("j", normalized, "n") + "      const long long " +
         "idx = " + linearIndex(c, s) + ";\n";
}

/// A row's `mean` and `rstd` (1 / sqrt(variance + epsilon)) from the
/// element expression X (of j), by two block reductions into `scratch`.
std::string rowStatistics(const std::string &a, const std::string &X,
                          int64_t L, double epsilon) {
  return "  __shared__ " + a + " scratch[32];\n  " + a +
         " s = 0;\n  for (long long j = threadIdx.x; j < " + ll(L) +
         "; j += blockDim.x) s += " + X + ";\n  const " + a +
         " mean = cgc_block_reduce(s, (" + a +
         ")0, scratch, cgc_sum_op()) / (" + a + ")" + ll(L) + ";\n  " + a +
         " q = 0;\n  for (long long j = threadIdx.x; j < " + ll(L) +
         "; j += blockDim.x) { const " + a + " d = " + X +
         " - mean; q += d * d; }\n  const " + a + " rstd = (" + a +
         ")1 / cgc_sqrt(cgc_block_reduce(q, (" + a +
         ")0, scratch, "
         "cgc_sum_op()) / (" +
         a + ")" + ll(L) + " + (" + a + ")" + doubleLiteral(epsilon) + ");\n";
}

LogicalResult writeLayerNorm(OpContext &ctx, LayerNormOp ln) {
  Value x = ln.getInput(), y = ln.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  auto [rows, normalized] = normalizedRows(x, ln.getAxis());
  int64_t L = numElements(normalized);
  std::string a = ctx.A(x);
  std::string X = "(" + a + ")" + ctx.in(x) + "[row * " + ll(L) + " + j]";
  std::string body =
      rowStatistics(a, X, L, ln.getEpsilon().convertToDouble()) +
      "  for (long long j = threadIdx.x; j < " + ll(L) +
      "; j += blockDim.x) {\n" +
      normalizedParamIndex(normalized, ln.getScale()) + "    " + a +
      " v = (" + X + " - mean) * rstd * (" + a + ")" +
      ctx.in(ln.getScale()) + "[idx];\n";
  if (Value b = ln.getBias())
    body += "    {\n" + normalizedParamIndex(normalized, b) + "    v += (" +
            a + ")" + ctx.in(b) + "[idx];\n    }\n";
  body +=
      "    " + o + "[row * " + ll(L) + " + j] = (" + ctx.T(y) + ")v;\n  }\n";
  ctx.perRow(rows, kThreads, body);
  return success();
}

/// One block a row: the row's statistics again, then the two means of
/// g = dy scale that the input gradient needs, then the gradient.
LogicalResult writeLayerNormGrad(OpContext &ctx, LayerNormGradOp op) {
  Value x = op.getInput(), dy = op.getOutputGrad(), y = op.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  auto [rows, normalized] = normalizedRows(x, op.getAxis());
  int64_t L = numElements(normalized);
  std::string a = ctx.A(x);
  std::string at = "[row * " + ll(L) + " + j]";
  std::string X = "(" + a + ")" + ctx.in(x) + at;
  std::string loop = "  for (long long j = threadIdx.x; j < " + ll(L) +
                     "; j += blockDim.x) {\n" +
                     normalizedParamIndex(normalized, op.getScale()) +
                     "    const " + a + " g = (" + a + ")" + ctx.in(dy) + at +
                     " * (" + a + ")" + ctx.in(op.getScale()) +
                     "[idx];\n    const " + a + " xhat = (" + X +
                     " - mean) * rstd;\n";
  std::string body =
      rowStatistics(a, X, L, op.getEpsilon().convertToDouble()) + "  " + a +
      " sg = 0, sgx = 0;\n" + loop +
      "    sg += g; sgx += g * xhat;\n  }\n  const " + a +
      " meanG = cgc_block_reduce(sg, (" + a +
      ")0, scratch, cgc_sum_op()) / (" + a + ")" + ll(L) + ";\n  const " +
      a + " meanGX = cgc_block_reduce(sgx, (" + a +
      ")0, scratch, cgc_sum_op()) / (" + a + ")" + ll(L) + ";\n" + loop +
      "    " + o + at + " = (" + ctx.T(y) +
      ")(rstd * (g - meanG - xhat * meanGX));\n  }\n";
  ctx.perRow(rows, kThreads, body);
  return success();
}

LogicalResult writeBatchNorm(OpContext &ctx, BatchNormOp bn) {
  Value x = bn.getInput(), y = bn.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t C = xs.size() > 1 ? xs[1] : 1;
  int64_t inner = xs.size() > 2 ? numElements(xs.drop_front(2)) : 1;
  std::string a = ctx.A(x);
  auto P = [&](Value v) { return "(" + a + ")" + ctx.in(v) + "[c]"; };
  std::string body = "  const long long c = (i / " + ll(inner) + ") % " +
                     ll(C) + ";\n  " + o + "[i] = (" + ctx.T(y) + ")(" +
                     P(bn.getScale()) + " * ((" + a + ")" + ctx.in(x) +
                     "[i] - " + P(bn.getMean()) + ") / cgc_sqrt(" +
                     P(bn.getVariance()) + " + (" + a + ")" +
                     doubleLiteral(bn.getEpsilon().convertToDouble()) + ") + " +
                     P(bn.getBias()) + ");\n";
  ctx.perElement(numElements(xs), body);
  return success();
}

LogicalResult writeInstanceNorm(OpContext &ctx, InstanceNormOp norm) {
  Value x = norm.getInput(), y = norm.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 2)
    return ctx.unsupported("on a tensor of rank below 2");
  int64_t C = xs[1], rows = xs[0] * C, L = numElements(xs.drop_front(2));
  std::string a = ctx.A(x);
  std::string X = "(" + a + ")" + ctx.in(x) + "[row * " + ll(L) + " + j]";
  std::string body =
      "  const long long c = row % " + ll(C) + ";\n  __shared__ " + a +
      " scratch[32];\n  " + a +
      " s = 0;\n  for (long long j = threadIdx.x; "
      "j < " +
      ll(L) + "; j += blockDim.x) s += " + X + ";\n  const " + a +
      " mean = cgc_block_reduce(s, (" + a + ")0, scratch, cgc_sum_op()) / (" +
      a + ")" + ll(L) + ";\n  " + a +
      " q = 0;\n  for (long long j = threadIdx.x; j < " + ll(L) +
      "; j += blockDim.x) { const " + a + " d = " + X +
      " - mean; q += d * d; }\n  const " + a + " rstd = (" + a +
      ")1 / cgc_sqrt(cgc_block_reduce(q, (" + a +
      ")0, scratch, cgc_sum_op()) / (" + a + ")" + ll(L) + " + (" + a + ")" +
      doubleLiteral(norm.getEpsilon().convertToDouble()) + ");\n  const " + a +
      " scale = (" + a + ")" + ctx.in(norm.getScale()) + "[c], bias = (" + a +
      ")" + ctx.in(norm.getBias()) +
      "[c];\n  for (long long j = threadIdx.x; j < " + ll(L) +
      "; j += blockDim.x) " + o + "[row * " + ll(L) + " + j] = (" + ctx.T(y) +
      ")((" + X + " - mean) * rstd * scale + bias);\n";
  ctx.perRow(rows, kThreads, body);
  return success();
}

LogicalResult writeLRN(OpContext &ctx, LRNOp lrn) {
  Value x = lrn.getInput(), y = lrn.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 2)
    return ctx.unsupported("on a tensor of rank below 2");
  int64_t C = xs[1], inner = numElements(xs.drop_front(2));
  int64_t size = lrn.getSize();
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::string a = ctx.A(x);
  std::string body =
      "  const long long c = (i / " + ll(inner) + ") % " + ll(C) +
      ";\n  const long long plane = i - c * " + ll(inner) + ";\n  " + a +
      " sq = 0;\n  for (long long cc = c - " + ll(before) + "; cc <= c + " +
      ll(after) + "; ++cc) {\n    if (cc < 0 || cc >= " + ll(C) +
      ") continue;\n    const " + a + " v = (" + a + ")" + ctx.in(x) +
      "[plane + cc * " + ll(inner) + "];\n    sq += v * v;\n  }\n  " + o +
      "[i] = (" + ctx.T(y) + ")((" + a + ")" + ctx.in(x) + "[i] / cgc_pow((" +
      a + ")" + doubleLiteral(lrn.getBias().convertToDouble()) + " + (" + a +
      ")" + doubleLiteral(lrn.getAlpha().convertToDouble() / (double)size) +
      " * sq, (" + a + ")" + doubleLiteral(lrn.getBeta().convertToDouble()) +
      "));\n";
  ctx.perElement(numElements(xs), body);
  return success();
}

} // namespace codegen
} // namespace cgc
