//===- Reduce.cpp - reductions, arg reductions, scans, topk ---------------===//
//
// reduce_*: one thread per output element, or one block per output element
// over many reduced elements (block reductions of the prelude), as the
// kernel's config says (block_tile = [threads]).
// arg_max/arg_min/hardmax: one thread per line, one block per long line.
// cumsum and topk: one block per line.
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {

namespace {

/// The dims of a reduction's input: those kept (one output element each)
/// and those reduced, with their strides in the input.
struct ReducedDims {
  SmallVector<int64_t> keptShape, redShape, keptStride, redStride;
};

ReducedDims splitDims(ArrayRef<int64_t> xs,
                      const llvm::SmallSetVector<int64_t, 8> &axes) {
  SmallVector<int64_t> strides = stridesOf(xs);
  ReducedDims r;
  for (int64_t d = 0; d < (int64_t)xs.size(); ++d) {
    if (axes.contains(d)) {
      r.redShape.push_back(xs[d]);
      r.redStride.push_back(strides[d]);
    } else {
      r.keptShape.push_back(xs[d]);
      r.keptStride.push_back(strides[d]);
    }
  }
  return r;
}

/// `sum_d name<d> * stride[d]` over the dims of `shape` not of size 1.
std::string stridedOffset(StringRef name, ArrayRef<int64_t> shape,
                          ArrayRef<int64_t> stride) {
  SmallVector<std::string> terms;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      terms.push_back(name.str() + str(d) + " * " + ll(stride[d]));
  return terms.empty() ? std::string("0ll") : llvm::join(terms, " + ");
}

/// How a reduction of `kind` (all but lse) treats its `nRed` elements `v`
/// in accumulator type `a` (input type `t`): `map` of each element, folded
/// by the prelude functor `combine` from `identity`, `finalExpr` of the
/// folded `acc`.
struct Combination {
  std::string map = "v", combine = "cgc_sum_op", identity, finalExpr = "acc";
};

Combination combinationOf(StringRef kind, const std::string &a,
                          const std::string &t, int64_t nRed) {
  Combination c;
  if (kind == "l1")
    c.map = "cgc_abs(v)";
  else if (kind == "l2" || kind == "sum_square")
    c.map = "v * v";
  c.identity = "(" + a + ")0";
  if (kind == "prod") {
    c.combine = "cgc_prod_op";
    c.identity = "(" + a + ")1";
  } else if (kind == "max") {
    c.combine = "cgc_max_op";
    c.identity = "(" + a + ")cgc_limits<" + t + ">::lowest()";
  } else if (kind == "min") {
    c.combine = "cgc_min_op";
    c.identity = "(" + a + ")cgc_limits<" + t + ">::highest()";
  }
  if (kind == "mean")
    c.finalExpr = "acc / (" + a + ")" + ll(nRed);
  else if (kind == "l2")
    c.finalExpr = "cgc_sqrt(acc)";
  else if (kind == "log_sum")
    c.finalExpr = "cgc_log(acc)";
  return c;
}

} // namespace

LogicalResult writeReduce(OpContext &ctx, StringRef kind) {
  Value x = ctx.op->getOperand(0), y = ctx.op->getResult(0);
  if (!ctx.params.needed(y))
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  llvm::SmallSetVector<int64_t, 8> axes;
  for (int64_t axis :
       ctx.op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef())
    axes.insert(normalizeAxis(axis, rank));
  ReducedDims dims = splitDims(xs, axes);
  const SmallVector<int64_t> &keptShape = dims.keptShape,
                             &redShape = dims.redShape;
  int64_t nOut = numElements(keptShape), nRed = numElements(redShape);
  if (nOut != numElements(shapeOf(y)))
    return ctx.unsupported("with an unexpected result shape");
  Type et = elementType(x);
  std::string t = ctx.T(x), a = ctx.A(x);
  bool isInt = !isa<FloatType>(et);
  if (isInt && (kind == "l2" || kind == "log_sum" || kind == "lse"))
    a = "double";
  Combination c = combinationOf(kind, a, t, nRed);
  const std::string &combine = c.combine, &identity = c.identity,
                    &finalExpr = c.finalExpr;
  std::string result = "(" + t + ")(" + finalExpr + ")";
  if (isInt && a == "double")
    result = "cgc_saturate<" + t + ">(" + finalExpr + ")";

  // The loop over the reduced elements from `first` by `step`.
  auto loop = [&](StringRef first, StringRef step, StringRef stmt) {
    return "  for (long long r = " + first.str() + "; r < " + ll(nRed) +
           "; r += " + step.str() + ") {\n" + coords("r", redShape, "q") +
           "    const " + a + " v = (" + a + ")" +
           ctx.params.read(
               x, "base + " + stridedOffset("q", redShape, dims.redStride)) +
           ";\n    " + stmt.str() + "\n  }\n";
  };
  // A block of the config's threads per output (long reductions), or a
  // thread per output.
  const int64_t blockThreads = ctx.config.blockTile(0);
  bool block = blockThreads > 1;
  std::string first = block ? "threadIdx.x" : "0";
  std::string step = block ? "blockDim.x" : "1";
  std::string outIndex = block ? "row" : "i";
  std::string body = coords(outIndex, keptShape, "k") +
                     "  const long long base = " +
                     stridedOffset("k", keptShape, dims.keptStride) + ";\n";
  if (block)
    body += "  __shared__ " + a + " scratch[32];\n";
  auto reduce = [&](StringRef var, StringRef fn, StringRef id) {
    return block ? "  " + var.str() + " = cgc_block_reduce(" + var.str() +
                       ", " + id.str() + ", scratch, " + fn.str() + "());\n"
                 : std::string();
  };
  if (kind == "lse") {
    body += "  " + a + " m = (" + a + ")cgc_limits<" + t + ">::lowest();\n" +
            loop(first, step, "m = cgc_max(m, v);") +
            reduce("m", "cgc_max_op",
                   "(" + a + ")cgc_limits<" + t + ">::lowest()") +
            "  " + a + " acc = 0;\n" +
            loop(first, step, "acc += cgc_exp(v - m);") +
            reduce("acc", "cgc_sum_op", "(" + a + ")0");
    result = "(" + t + ")((m == (" + a + ")cgc_limits<" + t +
             ">::lowest() || m == (" + a + ")cgc_limits<" + t +
             ">::highest()) ? m : m + cgc_log(acc))";
  } else {
    body += "  " + a + " acc = " + identity + ";\n" +
            loop(first, step, "acc = " + combine + "()(acc, " + c.map + ");") +
            reduce("acc", combine, identity);
  }
  if (block) {
    body += "  if (threadIdx.x == 0)\n" + ctx.params.store(y, result, "row");
    ctx.perRow(nOut, blockThreads, body);
  } else {
    body += ctx.params.store(y, result, "i");
    ctx.perElement(nOut, body);
  }
  return success();
}

/// arg_max/arg_min (index output) and hardmax (one-hot output) along an
/// axis: one thread per line, or one block per line where the config says
/// so (long lines).
LogicalResult writeArg(OpContext &ctx, Value x, int64_t axis, bool largest,
                       bool last) {
  Value y = ctx.op->getResult(0);
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  axis = normalizeAxis(axis, xs.size());
  LineGeometry g = lineOf(xs, axis);
  bool hardmax = isa<HardmaxOp>(ctx.op);
  std::string t = ctx.T(x);
  std::string cmp = "cgc_before<" + t + ", " + (largest ? "true" : "false") +
                    ", " + (last ? "true" : "false") + ">";
  std::string geometry = "  const long long base = (row / " + ll(g.inner) +
                         ") * " + ll(g.length * g.inner) + " + row % " +
                         ll(g.inner) + ";\n";
  std::string X = ctx.in(x) + "[base + j * " + ll(g.inner) + "]";
  std::string write = hardmax ? "for (long long j = FIRST; j < " +
                                    ll(g.length) + "; j += STEP) " + o +
                                    "[base + j * " + ll(g.inner) + "] = (" +
                                    ctx.T(y) + ")(j == bi);\n"
                              : o + "[row] = bi;\n";
  const int64_t blockThreads = ctx.config.blockTile(0);
  bool block = blockThreads > 1;
  std::string body =
      geometry + "  " + t + " best = " + t + "();\n  long long bi = -1;\n";
  auto replaceAll = [](std::string s, StringRef from, StringRef to) {
    size_t at;
    while ((at = s.find(from.str())) != std::string::npos)
      s.replace(at, from.size(), to.str());
    return s;
  };
  if (block) {
    int64_t threads = blockThreads;
    body += "  __shared__ " + t + " sv[" + str(threads) +
            "];\n  __shared__ long long si[" + str(threads) +
            "];\n  for (long long j = threadIdx.x; j < " + ll(g.length) +
            "; j += blockDim.x) {\n    const " + t + " v = " + X +
            ";\n    if (" + cmp +
            "(v, j, best, bi)) { best = v; bi = j; }\n  }\n  "
            "cgc_block_best<" +
            t + ", " + (largest ? "true" : "false") + ", " +
            (last ? "true" : "false") + ">(best, bi, sv, si);\n";
    if (hardmax)
      body += "  " + replaceAll(replaceAll(write, "FIRST", "threadIdx.x"),
                                "STEP", "blockDim.x");
    else
      body += "  if (threadIdx.x == 0) " + write;
    ctx.perRow(g.lines(), threads, body);
  } else {
    body = "  const long long row = i;\n" + body +
           "  for (long long j = 0; j < " + ll(g.length) +
           "; ++j) {\n    const " + t + " v = " + X + ";\n    if (" + cmp +
           "(v, j, best, bi)) { best = v; bi = j; }\n  }\n  " +
           replaceAll(replaceAll(write, "FIRST", "0"), "STEP", "1");
    ctx.perElement(g.lines(), body);
  }
  return success();
}

namespace {
/// The running sum (or product) of every line along `axis`: chunks of
/// blockDim.x elements, each an inclusive block scan in shared memory,
/// plus the carry of the chunks before.
template <typename OpTy>
LogicalResult writeCumulative(OpContext &ctx, OpTy op, bool product) {
  Value x = op.getInput(), y = op.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t axis = normalizeAxis(op.getAxis(), xs.size());
  LineGeometry g = lineOf(xs, axis);
  int64_t threads = blockFor(g.length);
  std::string a = ctx.A(x), L = ll(g.length);
  std::string identity = "(" + a + ")" + (product ? "1" : "0");
  std::string combine = product ? " *= " : " += ";
  std::string body =
      "  const long long base = (row / " + ll(g.inner) + ") * " +
      ll(g.length * g.inner) + " + row % " + ll(g.inner) + ";\n  __shared__ " +
      a + " s[" + str(threads) + "];\n  " + a + " carry = " + identity +
      ";\n  for (long long c0 = 0; c0 < " + L +
      "; c0 += blockDim.x) {\n    const long long p = c0 + threadIdx.x;\n"
      "    const long long j = " +
      (op.getReverse() ? L + " - 1 - p" : std::string("p")) +
      ";\n    s[threadIdx.x] = p < " + L + " ? (" + a + ")" + ctx.in(x) +
      "[base + j * " + ll(g.inner) + "] : " + identity +
      ";\n    __syncthreads();\n    for (int d = 1; d < (int)blockDim.x; "
      "d <<= 1) {\n      const " +
      a + " t = (int)threadIdx.x >= d ? s[threadIdx.x - d] : " + identity +
      ";\n      __syncthreads();\n      s[threadIdx.x]" + combine +
      "t;\n      __syncthreads();\n    }\n    if (p < " + L + ") " + o +
      "[base + j * " + ll(g.inner) + "] = (" + ctx.T(y) + ")(carry " +
      (product ? "*" : "+") + " " +
      (op.getExclusive()
           ? "(threadIdx.x > 0 ? s[threadIdx.x - 1] : " + identity + ")"
           : std::string("s[threadIdx.x]")) +
      ");\n    const " + a +
      " total = s[blockDim.x - 1];\n    __syncthreads();\n    carry" +
      combine + "total;\n  }\n";
  ctx.perRow(g.lines(), threads, body);
  return success();
}
} // namespace

LogicalResult writeCumSum(OpContext &ctx, CumSumOp cumsum) {
  return writeCumulative(ctx, cumsum, /*product=*/false);
}

LogicalResult writeCumProd(OpContext &ctx, CumProdOp cumprod) {
  return writeCumulative(ctx, cumprod, /*product=*/true);
}

LogicalResult writeTopK(OpContext &ctx, TopKOp topk) {
  Value x = topk.getInput();
  std::string ov = ctx.out(topk.getValues()), oi = ctx.out(topk.getIndices());
  if (ov.empty() && oi.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t axis = normalizeAxis(topk.getAxis(), xs.size());
  LineGeometry g = lineOf(xs, axis);
  int64_t k = topk.getK();
  if (k > g.length)
    return ctx.unsupported("with k larger than the axis");
  int64_t threads = blockFor(g.length);
  std::string t = ctx.T(x);
  std::string targs =
      t + ", " + (topk.getLargest() ? "true" : "false") + ", false";
  std::string body =
      "  const long long base = (row / " + ll(g.inner) + ") * " +
      ll(g.length * g.inner) + " + row % " + ll(g.inner) +
      ";\n  const long long obase = (row / " + ll(g.inner) + ") * " +
      ll(k * g.inner) + " + row % " + ll(g.inner) + ";\n  __shared__ " + t +
      " sv[" + str(threads) + "];\n  __shared__ long long si[" + str(threads) +
      "];\n  " + t + " lastv = " + t +
      "();\n  long long lasti = -1;\n  for (long long p = "
      "0; p < " +
      ll(k) + "; ++p) {\n    " + t + " best = " + t +
      "();\n    long long bi = -1;\n    for (long long j = threadIdx.x; j < " +
      ll(g.length) + "; j += blockDim.x) {\n      const " + t +
      " v = " + ctx.in(x) + "[base + j * " + ll(g.inner) +
      "];\n      if (lasti >= 0 && !cgc_before<" + targs +
      ">(lastv, lasti, v, j)) continue;\n      if (cgc_before<" + targs +
      ">(v, j, best, bi)) { best = v; bi = j; }\n    }\n    cgc_block_best<" +
      targs + ">(best, bi, sv, si);\n    if (threadIdx.x == 0) {\n";
  if (!ov.empty())
    body += "      " + ov + "[obase + p * " + ll(g.inner) + "] = best;\n";
  if (!oi.empty())
    body += "      " + oi + "[obase + p * " + ll(g.inner) + "] = bi;\n";
  body += "    }\n    lastv = best;\n    lasti = bi;\n  }\n";
  ctx.perRow(g.lines(), threads, body);
  return success();
}

} // namespace codegen
} // namespace cgc
