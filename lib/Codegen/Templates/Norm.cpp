//===- Norm.cpp - normalization templates ---------------------------------===//
//
// A `norm` group (layer norm, softmax or log softmax as anchor, or a
// reduction over the last axis whose value the group's elementwise ops read
// back over the row; elementwise producers as its prologue and consumers as
// its epilogue) normalizes each
// row by a block (block reductions) or, where its config's thread_tile says
// so, by a warp whose lanes keep the row in registers (the input and its
// prologue read once, warp reductions); statistics in float (double for
// f64), then the epilogue per element of the row. Normalizations that
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

/// How a norm kernel's threads cover a row of L elements: a block a row,
/// its partial results meeting in shared memory (`scratch`), or a warp a
/// row (`lane`, `live`: the warp has a row) whose lanes hold `values` of it
/// each, in `xs` once read.
struct RowLayout {
  int64_t values = 0;

  bool byWarp() const { return values > 0; }
  /// A loop over the thread's elements j of the row; by warp, unrolled so
  /// that xs[k] stays in registers.
  std::string forEach() const {
    if (!byWarp())
      return "for (long long j = threadIdx.x; j < L; j += blockDim.x)";
    return "_Pragma(\"unroll\") for (int k = 0; k < " +
           std::to_string(values) +
           "; ++k) if (const long long j = lane + 32ll * k; live && j < L)";
  }
  /// `v` combined over the row's threads by `op` (a cgc_*_op).
  std::string reduce(const std::string &v, const std::string &identity,
                     const std::string &op) const {
    if (byWarp())
      return "cgc_warp_reduce(" + v + ", " + op + "())";
    return "cgc_block_reduce(" + v + ", " + identity + ", scratch, " + op +
           "())";
  }
};

/// A row's `mean` and `rstd` (1 / sqrt(variance + epsilon)) from the
/// element expression X (of j) and the row length L, in `a`.
std::string layerNormStatistics(const RowLayout &layout, const std::string &a,
                                const std::string &X, double epsilon) {
  const std::string zero = "(" + a + ")0", each = layout.forEach();
  return "  " + a + " s = 0;\n  " + each + " s += " + X + ";\n  const " + a +
         " mean = " + layout.reduce("s", zero, "cgc_sum_op") + " / (" + a +
         ")L;\n  " + a + " q = 0;\n  " + each + " { const " + a + " d = " +
         X + " - mean; q += d * d; }\n  const " + a + " rstd = (" + a +
         ")1 / cgc_sqrt(" + layout.reduce("q", zero, "cgc_sum_op") + " / (" +
         a + ")L + (" + a + ")" + doubleLiteral(epsilon) + ");\n";
}

/// How a norm group's anchor treats a row (normRowsOf says which rows):
/// `stats` computes the row's statistics from X(j) (the input at element j
/// of the row), `element` is the anchor's value at (row, j) given them.
struct NormRows {
  std::string stats, element;
};

/// Layer norm over the dims from its axis: mean and 1/stddev, then scale
/// and bias (broadcast against the normalized dims).
NormRows layerNormRows(GroupWriter &w, LayerNormOp ln, ArrayRef<int64_t> shape,
                       const std::string &a, const RowLayout &layout) {
  NormRows r;
  int64_t axis = ln.getAxis();
  if (axis < 0)
    axis += shape.size();
  r.stats = layerNormStatistics(layout, a, "(" + a + ")X(j)",
                                ln.getEpsilon().convertToDouble());
  SmallVector<int64_t> normalized(shape.drop_front(axis));
  r.element = "((" + a + ")X(j) - mean) * rstd * (" + a + ")" +
              w.load(ln.getScale(), normalized, "j");
  if (Value bias = ln.getBias())
    r.element += " + (" + a + ")" + w.load(bias, normalized, "j");
  return r;
}

/// Softmax or log softmax along its axis: the row's maximum, then the sum
/// of the exponentials.
NormRows softmaxRows(Operation *anchor, const std::string &a,
                     const RowLayout &layout) {
  NormRows r;
  const std::string lowest = "cgc_limits<" + a + ">::lowest()",
                    each = layout.forEach();
  r.stats = "  " + a + " mx = " + lowest + ";\n  " + each +
            " mx = cgc_max(mx, (" + a + ")X(j));\n  mx = " +
            layout.reduce("mx", lowest, "cgc_max_op") + ";\n  " + a +
            " s = 0;\n  " + each + " s += cgc_exp((" + a +
            ")X(j) - mx);\n  s = " +
            layout.reduce("s", "(" + a + ")0", "cgc_sum_op") + ";\n";
  r.element = isa<SoftmaxOp>(anchor) ? "cgc_exp((" + a + ")X(j) - mx) / s"
                                     : "(" + a + ")X(j) - mx - cgc_log(s)";
  return r;
}

/// A reduction over the last axis (`isRowReduction`): its value, the
/// same for every element of the row, is what the group's elementwise ops
/// read (broadcast back over the row).
NormRows rowReductionRows(ReductionOpInterface reduction,
                          const std::string &a, const RowLayout &layout) {
  NormRows r;
  const std::string each = layout.forEach(), zero = "(" + a + ")0",
                    x = "(" + a + ")X(j)";
  switch (reduction.getReductionKind()) {
  case ReductionKind::Max:
  case ReductionKind::Min: {
    bool max = reduction.getReductionKind() == ReductionKind::Max;
    std::string start = max ? "cgc_limits<" + a + ">::lowest()"
                            : "cgc_limits<" + a + ">::highest()";
    r.stats = "  " + a + " stat = " + start + ";\n  " + each + " stat = " +
              (max ? "cgc_max" : "cgc_min") + "(stat, " + x +
              ");\n  stat = " +
              layout.reduce("stat", start, max ? "cgc_max_op" : "cgc_min_op") +
              ";\n";
    break;
  }
  default: {
    bool squares = reduction.getReductionKind() == ReductionKind::SumSquare ||
                   reduction.getReductionKind() == ReductionKind::L2;
    r.stats = "  " + a + " stat = 0;\n  " + each + " { const " + a +
              " e = " + x + "; stat += " + (squares ? "e * e" : "e") +
              "; }\n  stat = " + layout.reduce("stat", zero, "cgc_sum_op") +
              ";\n";
    if (reduction.getReductionKind() == ReductionKind::Mean)
      r.stats += "  stat /= (" + a + ")L;\n";
    if (reduction.getReductionKind() == ReductionKind::L2)
      r.stats += "  stat = cgc_sqrt(stat);\n";
  }
  }
  r.element = "stat";
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

/// A warp a row: the warp's row of `rows` (`live` while there is one;
/// a warp past the last still joins the shuffles).
std::string warpRowStart(int64_t rows, int64_t rowsPerBlock) {
  return "  const int lane = threadIdx.x & 31;\n  const long long row = "
         "blockIdx.x * " +
         std::to_string(rowsPerBlock) +
         "ll + (threadIdx.x >> 5);\n  const bool live = row < " +
         std::to_string(rows) + "ll;\n";
}

/// A warp a row: the lane's elements of the row (X, with its prologue)
/// read once into xs; X(j) is xs[k] from here on.
std::string rowIntoRegisters(const RowLayout &layout, const std::string &a) {
  return "  " + a + " xs[" + std::to_string(layout.values) + "] = {};\n  " +
         layout.forEach() + " xs[k] = (" + a +
         ")X(j);\n#undef X\n#define X(j) xs[k]\n";
}

} // namespace

LogicalResult writeNormGroup(GroupWriter &w, ArrayRef<Operation *> ops) {
  // Elementwise producers of the normalized input (a prologue) come before
  // the anchor; they are evaluated wherever the template reads its input.
  size_t anchorIndex = 0;
  while (anchorIndex < ops.size() && !isNormAnchor(ops[anchorIndex]))
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
  // The index space: the normalized tensor's elements (a row reduction's
  // input: the ops after it read its value broadcast over the row).
  ArrayRef<int64_t> shape = shapeOf(anchor->getOperand(0));
  const NormRowShape rows = normRowsOf(anchor);
  std::string x = prologue.empty() ? w.inputParam(anchor->getOperand(0)) : "";
  const RowLayout layout{w.config.threadTile(0)};
  NormRows r;
  if (auto ln = dyn_cast<LayerNormOp>(anchor))
    r = layerNormRows(w, ln, shape, a, layout);
  else if (isa<SoftmaxOp, LogSoftmaxOp>(anchor))
    r = softmaxRows(anchor, a, layout);
  else if (isRowReduction(anchor))
    r = rowReductionRows(cast<ReductionOpInterface>(anchor), a, layout);
  else
    return anchor->emitError()
           << "no GPU kernel for '" << anchor->getName() << "' yet";
  if (layout.byWarp() && (rows.inner != 1 || 32 * layout.values < rows.length))
    return anchor->emitError()
           << "a norm config's thread_tile [" << layout.values
           << "] (values a lane, a warp a row) must hold rows of "
           << rows.length << " contiguous elements (at most "
           << 32 * layout.values << ")";
  std::string innerStr = std::to_string(rows.inner) + "ll";
  FailureOr<std::string> input =
      rowInput(w, prologue, anchor->getOperand(0), x, innerStr);
  if (failed(input))
    return failure();
  const int64_t rowsPerBlock =
      layout.byWarp() ? w.config.getThreads() / 32 : 1;
  std::string text =
      (layout.byWarp() ? warpRowStart(rows.rows, rowsPerBlock)
                       : "  __shared__ " + a +
                             " scratch[32];\n  const long long row = "
                             "blockIdx.x;\n") +
      "  const long long L = " + std::to_string(rows.length) +
      "ll;\n  const long long base = (row / " + innerStr + ") * L * " +
      innerStr + " + row % " + innerStr + ";\n" + *input +
      (layout.byWarp() ? rowIntoRegisters(layout, a) : "") + r.stats + "  " +
      layout.forEach() +
      " {\n"
      "    const long long i = base + j * " +
      innerStr + ";\n    const " + t + " v0 = (" + t + ")(" + r.element +
      ");\n";
  w.vars[out] = "v0";
  if (failed(w.writeElements(ops.drop_front(), shape, "i", text)))
    return failure();
  const int64_t blocks =
      std::max<int64_t>(1, (rows.rows + rowsPerBlock - 1) / rowsPerBlock);
  w.launches.push_back(Launch{text + "  }\n#undef X\n",
                              {blocks, 1, 1},
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
  return "  __shared__ " + a + " scratch[32];\n  const long long L = " +
         ll(L) + ";\n" + layerNormStatistics(RowLayout{}, a, X, epsilon);
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
