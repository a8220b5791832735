//===- Gather.cpp - gather, gather_elements, gather_nd --------------------===//
//
// One thread per output element; out-of-range indices read 0. A gather
// stores through the resolver: its group may fuse elementwise ops after it.
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

using namespace mlir;

namespace cgc {
namespace codegen {

namespace {

SmallVector<std::string> outCoords(int64_t rank) {
  SmallVector<std::string> c;
  for (int64_t d = 0; d < rank; ++d)
    c.push_back("o" + str(d));
  return c;
}

/// `k` as a checked index into a dim of `size`: negative counts from the
/// end; out of range sets `bad`.
std::string wrapIndex(StringRef k, int64_t size) {
  return "  if (" + k.str() + " < 0) " + k.str() + " += " + ll(size) +
         ";\n  if (" + k.str() + " < 0 || " + k.str() + " >= " + ll(size) +
         ") bad = true;\n";
}

} // namespace

LogicalResult writeGather(OpContext &ctx, GatherOp gather) {
  Value x = gather.getInput(), idx = gather.getIndices(),
        y = gather.getOutput();
  // Stored through the resolver: a group may fuse elementwise ops after
  // the gather (an embedding plus a position term).
  if (!ctx.params.needed(y))
    return success();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t axis = normalizeAxis(gather.getAxis(), xs.size());
  LineGeometry g = lineOf(xs, axis);
  int64_t nIdx = numElements(shapeOf(idx));
  std::string body =
      "  const long long n = i % " + ll(g.inner) + ", j = (i / " + ll(g.inner) +
      ") % " + ll(nIdx) + ", outer = i / " + ll(nIdx * g.inner) +
      ";\n  long long k = (long long)" + ctx.in(idx) +
      "[j];\n  bool bad = false;\n" + wrapIndex("k", g.length) +
      ctx.params.store(y,
                       "(bad ? (" + ctx.T(y) + ")0 : " + ctx.in(x) +
                           "[(outer * " + ll(g.length) + " + k) * " +
                           ll(g.inner) + " + n])",
                       "i");
  ctx.perElement(numElements(shapeOf(y)), body);
  return success();
}

LogicalResult writeGatherElements(OpContext &ctx, GatherElementsOp gather) {
  Value x = gather.getInput(), idx = gather.getIndices(),
        y = gather.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
  int64_t axis = normalizeAxis(gather.getAxis(), xs.size());
  SmallVector<std::string> inCoord = outCoords(xs.size());
  inCoord[axis] = "k";
  std::string body = coords("i", is, "o") + "  long long k = (long long)" +
                     ctx.in(idx) + "[i];\n  bool bad = false;\n" +
                     wrapIndex("k", xs[axis]) + "  " + o + "[i] = bad ? (" +
                     ctx.T(y) + ")0 : " + ctx.in(x) + "[" +
                     linearIndex(inCoord, xs) + "];\n";
  ctx.perElement(numElements(is), body);
  return success();
}

LogicalResult writeGatherND(OpContext &ctx, GatherNDOp gather) {
  Value x = gather.getInput(), idx = gather.getIndices(),
        y = gather.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
  int64_t b = gather.getBatchDims();
  if (is.empty())
    return ctx.unsupported("with scalar indices");
  int64_t kk = is.back();
  if (b + kk > (int64_t)xs.size())
    return ctx.unsupported("with index tuples longer than the data rank");
  int64_t tail = numElements(xs.drop_front(b + kk));
  int64_t perBatch = numElements(is.drop_back().drop_front(b));
  SmallVector<int64_t> strides = stridesOf(xs);
  std::string body =
      "  const long long s = i % " + ll(tail) + ", t = i / " + ll(tail) +
      ";\n  const long long batch = t / " + ll(std::max<int64_t>(perBatch, 1)) +
      ";\n  long long off = batch * " + ll(numElements(xs.drop_front(b))) +
      " + s;\n  bool bad = false;\n";
  for (int64_t j = 0; j < kk; ++j)
    body += "  {\n    long long k = " + ctx.in(idx) + "[t * " + ll(kk) + " + " +
            ll(j) + "];\n  " + wrapIndex("k", xs[b + j]) + "    off += k * " +
            ll(strides[b + j]) + ";\n  }\n";
  body +=
      "  " + o + "[i] = bad ? (" + ctx.T(y) + ")0 : " + ctx.in(x) + "[off];\n";
  ctx.perElement(numElements(shapeOf(y)), body);
  return success();
}

} // namespace codegen
} // namespace cgc
