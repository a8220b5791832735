//===- Scatter.cpp - scatter_elements, scatter_nd -------------------------===//
//
// Updates apply in index order, so duplicate indices resolve
// deterministically (the last write wins for reduction none).
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {

namespace {

/// `v = v (reduction) u` for a scatter.
FailureOr<std::string> scatterCombine(StringRef reduction) {
  if (reduction == "none")
    return std::string("v = u;");
  if (reduction == "add")
    return std::string("v = v + u;");
  if (reduction == "mul")
    return std::string("v = v * u;");
  if (reduction == "max")
    return std::string("v = cgc_max(v, u);");
  if (reduction == "min")
    return std::string("v = cgc_min(v, u);");
  return failure();
}

} // namespace

/// One thread per output element: starts from the input and applies, in
/// index order, every update whose index along `axis` hits it (updates
/// that can hit an element share all its other coordinates).
LogicalResult writeScatterElements(OpContext &ctx, ScatterElementsOp scatter) {
  Value x = scatter.getInput(), idx = scatter.getIndices(),
        upd = scatter.getUpdates(), y = scatter.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  FailureOr<std::string> combine = scatterCombine(scatter.getReduction());
  if (failed(combine))
    return ctx.unsupported("with reduction '" + scatter.getReduction() + "'");
  ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
  int64_t rank = xs.size();
  int64_t axis = normalizeAxis(scatter.getAxis(), rank);
  std::string t = ctx.T(y);
  std::string body =
      coords("i", xs, "o") + "  " + t + " v = " + ctx.in(x) + "[i];\n";
  SmallVector<std::string> within, updCoord;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) {
      updCoord.push_back("j");
      continue;
    }
    updCoord.push_back("o" + str(d));
    if (is[d] < xs[d])
      within.push_back("o" + str(d) + " < " + ll(is[d]));
  }
  if (numElements(is) > 0) {
    body +=
        "  if (" + (within.empty() ? "true" : llvm::join(within, " && ")) +
        ") {\n    for (long long j = 0; j < " + ll(is[axis]) +
        "; ++j) {\n      const long long u_at = " + linearIndex(updCoord, is) +
        ";\n      long long k = " + ctx.in(idx) +
        "[u_at];\n      if (k < 0) k += " + ll(xs[axis]) +
        ";\n      if (k != o" + str(axis) + ") continue;\n      const " + t +
        " u = " + ctx.in(upd) + "[u_at];\n      " + *combine + "\n    }\n  }\n";
  }
  body += "  " + o + "[i] = v;\n";
  ctx.perElement(numElements(xs), body);
  return success();
}

/// Two launches: copy the input, then one thread per (index tuple,
/// element of its slice). The first tuple that hits a slice applies every
/// update of that slice in order, so duplicates resolve deterministically
/// (the last write wins for reduction none).
LogicalResult writeScatterND(OpContext &ctx, ScatterNDOp scatter) {
  Value x = scatter.getInput(), idx = scatter.getIndices(),
        upd = scatter.getUpdates(), y = scatter.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  FailureOr<std::string> combine = scatterCombine(scatter.getReduction());
  if (failed(combine))
    return ctx.unsupported("with reduction '" + scatter.getReduction() + "'");
  ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
  if (is.empty())
    return ctx.unsupported("with scalar indices");
  int64_t kk = is.back();
  if (kk > (int64_t)xs.size())
    return ctx.unsupported("with index tuples longer than the data rank");
  int64_t tuples = numElements(is.drop_back());
  int64_t tail = numElements(xs.drop_front(kk));
  SmallVector<int64_t> strides = stridesOf(xs);
  ctx.perElement(numElements(xs), "  " + o + "[i] = " + ctx.in(x) + "[i];\n");
  if (tuples == 0 || tail == 0)
    return success();
  std::string rowOf = "  auto slice_of = [&](long long tt) {\n    long "
                      "long off = 0;\n";
  for (int64_t j = 0; j < kk; ++j)
    rowOf += "    { long long k = " + ctx.in(idx) + "[tt * " + ll(kk) + " + " +
             ll(j) + "]; if (k < 0) k += " + ll(xs[j]) + "; off += k * " +
             ll(strides[j]) + "; }\n";
  rowOf += "    return off;\n  };\n";
  std::string t = ctx.T(y);
  std::string body =
      "  const long long s = i % " + ll(tail) + ", tt = i / " + ll(tail) +
      ";\n" + rowOf +
      "  const long long target = slice_of(tt);\n  for (long long e = 0; e "
      "< tt; ++e)\n    if (slice_of(e) == target) return;\n  " +
      t + " v = " + o + "[target + s];\n  for (long long e = tt; e < " +
      ll(tuples) +
      "; ++e) {\n    if (slice_of(e) != target) continue;\n    "
      "const " +
      t + " u = " + ctx.in(upd) + "[e * " + ll(tail) + " + s];\n    " +
      *combine + "\n  }\n  " + o + "[target + s] = v;\n";
  ctx.perElement(tuples * tail, body);
  return success();
}

} // namespace codegen
} // namespace cgc
