//===- Pooling.cpp - max and average pooling ------------------------------===//
//
// One thread per output element; the window as nested loops (windowLoops).
// The result goes through the group's store, which also writes a 16-bit
// copy where --cgc-narrow-storage gave the group one (a convolution after
// the pool reads it).
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {

LogicalResult writeMaxPool(OpContext &ctx, MaxPoolOp pool) {
  Value x = pool.getInput(), y = pool.getOutput();
  if (!ctx.params.needed(y))
    return success();
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  int64_t spatial = xs.size() - 2;
  SmallVector<int64_t> inSpatial(xs.drop_front(2));
  SmallVector<int64_t> padsBegin(pool.getPads().take_front(spatial));
  std::string t = ctx.T(y);
  std::string body = coords("i", ys, "o") + "  const long long plane = o0 * " +
                     ll(xs[1]) + " + o1;\n  " + t + " best = cgc_limits<" + t +
                     ">::lowest();\n";
  std::string inner = std::string(2 + 2 * spatial, ' ') +
                      "best = cgc_max(best, " + ctx.in(x) + "[plane * " +
                      ll(numElements(inSpatial)) + " + " +
                      linearIndex(prefixed("x", spatial), inSpatial) + "]);\n";
  body += windowLoops(
      pool.getKernelShape(), pool.getStrides(), padsBegin, pool.getDilations(),
      [&](int64_t d) {
        return "x" + str(d) + " < 0 || x" + str(d) + " >= " + ll(inSpatial[d]);
      },
      inner, 2);
  body += ctx.params.store(y, "best", "i");
  ctx.perElement(numElements(ys), body);
  return success();
}

LogicalResult writeAveragePool(OpContext &ctx, AveragePoolOp pool) {
  Value x = pool.getInput(), y = pool.getOutput();
  if (!ctx.params.needed(y))
    return success();
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  int64_t spatial = xs.size() - 2;
  SmallVector<int64_t> inSpatial(xs.drop_front(2));
  ArrayRef<int64_t> pads = pool.getPads();
  SmallVector<int64_t> padsBegin(pads.take_front(spatial));
  std::string a = ctx.A(y);
  // Positions inside the padded input count when count_include_pad; the
  // ones past the end padding (ceil_mode) never do.
  SmallVector<std::string> inside;
  for (int64_t d = 0; d < spatial; ++d)
    inside.push_back("x" + str(d) + " >= 0 && x" + str(d) + " < " +
                     ll(inSpatial[d]));
  std::string inner =
      std::string(2 + 2 * spatial, ' ') + "++padded;\n" +
      std::string(2 + 2 * spatial, ' ') + "if (" +
      (inside.empty() ? std::string("true") : llvm::join(inside, " && ")) +
      ") { sum += (" + a + ")" + ctx.in(x) + "[plane * " +
      ll(numElements(inSpatial)) + " + " +
      linearIndex(prefixed("x", spatial), inSpatial) + "]; ++count; }\n";
  std::string body = coords("i", ys, "o") + "  const long long plane = o0 * " +
                     ll(xs[1]) + " + o1;\n  " + a +
                     " sum = 0;\n  long long count = 0, padded = 0;\n";
  body += windowLoops(
      pool.getKernelShape(), pool.getStrides(), padsBegin, pool.getDilations(),
      [&](int64_t d) {
        return "x" + str(d) + " < " + ll(-pads[d]) + " || x" + str(d) +
               " >= " + ll(inSpatial[d] + pads[spatial + d]);
      },
      inner, 2);
  body += ctx.params.store(
      y,
      "(" + ctx.T(y) + ")(sum / (" + a + ")(" +
          (pool.getCountIncludePad() ? "padded" : "count") + "))",
      "i");
  ctx.perElement(numElements(ys), body);
  return success();
}

} // namespace codegen
} // namespace cgc
