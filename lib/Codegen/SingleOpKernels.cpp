//===- SingleOpKernels.cpp - one CUDA template per non-fused op -----------===//
//
// Ops that fusion leaves alone (`single` kernel groups) get a template of
// their own, specialized with the static shapes and attributes of the op:
//
//   one thread per output element  conv, conv_transpose, pooling, resize,
//                                  einsum, data movement, gathers, lrn,
//                                  batch_norm, one_hot, trilu, scatter_elements
//   one block per output element   reductions over more than 64 elements
//   one block per line             arg_max/arg_min/hardmax over long lines,
//                                  topk, cumsum, instance_norm
//   two launches                   scatter_nd (copy, then ordered updates)
//
// Index arithmetic is unrolled with constant extents and strides, in 64
// bits. Sums accumulate in float (f32), double (f64) or long long (ints).
// Whatever a template cannot do is reported with the ONNX node's name.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <map>

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

/// Extent of a line along `axis`: `outer` lines of `length` elements, each
/// `inner` apart.
struct LineGeometry {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t lines() const { return outer * inner; }
};

LineGeometry lineOf(ArrayRef<int64_t> shape, int64_t axis) {
  LineGeometry g;
  g.outer = numElements(shape.take_front(axis));
  g.length = shape[axis];
  g.inner = numElements(shape.drop_front(axis + 1));
  return g;
}

/// A power-of-two block size of at least 32 threads covering `n` (at most
/// kThreads).
int64_t blockFor(int64_t n) {
  int64_t b = 32;
  while (b < n && b < kThreads)
    b <<= 1;
  return b;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

std::string str(int64_t v) { return std::to_string(v); }

class SingleOpWriter {
public:
  SingleOpWriter(Operation *op, ParamResolver &params)
      : op(op), params(params) {}

  FailureOr<SmallVector<Launch>> run() {
    LogicalResult status =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case([&](ConvOp o) { return writeConv(o); })
            .Case([&](ConvTransposeOp o) { return writeConvTranspose(o); })
            .Case([&](MaxPoolOp o) { return writeMaxPool(o); })
            .Case([&](AveragePoolOp o) { return writeAveragePool(o); })
            .Case([&](ReduceSumOp) { return writeReduce("sum"); })
            .Case([&](ReduceMeanOp) { return writeReduce("mean"); })
            .Case([&](ReduceMaxOp) { return writeReduce("max"); })
            .Case([&](ReduceMinOp) { return writeReduce("min"); })
            .Case([&](ReduceProdOp) { return writeReduce("prod"); })
            .Case([&](ReduceL1Op) { return writeReduce("l1"); })
            .Case([&](ReduceL2Op) { return writeReduce("l2"); })
            .Case([&](ReduceSumSquareOp) { return writeReduce("sum_square"); })
            .Case([&](ReduceLogSumOp) { return writeReduce("log_sum"); })
            .Case([&](ReduceLogSumExpOp) { return writeReduce("lse"); })
            .Case([&](ArgMaxOp o) {
              return writeArg(o.getInput(), o.getAxis(), true,
                              o.getSelectLastIndex());
            })
            .Case([&](ArgMinOp o) {
              return writeArg(o.getInput(), o.getAxis(), false,
                              o.getSelectLastIndex());
            })
            .Case([&](HardmaxOp o) {
              return writeArg(o.getInput(), o.getAxis(), true, false);
            })
            .Case([&](CumSumOp o) { return writeCumSum(o); })
            .Case([&](TopKOp o) { return writeTopK(o); })
            .Case([&](SoftmaxOp o) { return writeSoftmax(o, false); })
            .Case([&](LogSoftmaxOp o) { return writeSoftmax(o, true); })
            .Case([&](LayerNormOp o) { return writeLayerNorm(o); })
            .Case([&](BatchNormOp o) { return writeBatchNorm(o); })
            .Case([&](InstanceNormOp o) { return writeInstanceNorm(o); })
            .Case([&](LRNOp o) { return writeLRN(o); })
            .Case([&](TransposeOp o) { return writeTranspose(o); })
            .Case([&](ExpandOp o) { return writeExpand(o); })
            .Case([&](TileOp o) { return writeTile(o); })
            .Case([&](SliceOp o) { return writeSlice(o); })
            .Case([&](PadOp o) { return writePad(o); })
            .Case([&](ConcatOp o) { return writeConcat(o); })
            .Case([&](SplitOp o) { return writeSplit(o); })
            .Case([&](GatherOp o) { return writeGather(o); })
            .Case([&](GatherElementsOp o) { return writeGatherElements(o); })
            .Case([&](GatherNDOp o) { return writeGatherND(o); })
            .Case([&](ScatterElementsOp o) { return writeScatterElements(o); })
            .Case([&](ScatterNDOp o) { return writeScatterND(o); })
            .Case([&](DepthToSpaceOp o) { return writeDepthToSpace(o); })
            .Case([&](SpaceToDepthOp o) { return writeSpaceToDepth(o); })
            .Case([&](ResizeOp o) { return writeResize(o); })
            .Case([&](TriluOp o) { return writeTrilu(o); })
            .Case([&](OneHotOp o) { return writeOneHot(o); })
            .Case([&](EinsumOp o) { return writeEinsum(o); })
            .Case([&](NegativeLogLikelihoodLossOp o) { return writeNLLLoss(o); })
            .Case([&](ShapeOp o) { return writeShape(o); })
            .Case([&](SizeOp o) { return writeSize(o); })
            .Default([&](Operation *) { return unsupported("yet"); });
    if (failed(status))
      return failure();
    if (launches.empty()) // no result is used: nothing to compute
      launches.push_back(Launch{"", {1, 1, 1}, {32, 1, 1}});
    return launches;
  }

private:
  LogicalResult unsupported(const Twine &why) {
    return op->emitError() << "no GPU kernel for '" << op->getName() << "' "
                           << why << " (ONNX node '" << nodeName(op) << "')";
  }

  std::string in(Value v) { return params.input(v); }
  std::string out(Value result) { return params.output(result); }
  std::string T(Value v) { return cType(elementType(v)); }
  std::string A(Value v) { return accType(elementType(v)); }

  /// One thread per element of a `count`-element index space `i`.
  void perElement(int64_t count, const std::string &body) {
    std::string text = "  const long long i = (long long)blockIdx.x * "
                       "blockDim.x + threadIdx.x;\n  if (i >= " +
                       ll(count) + ") return;\n" + body;
    launches.push_back(
        Launch{text,
               {std::max<int64_t>(1, (count + kThreads - 1) / kThreads), 1, 1},
               {kThreads, 1, 1}});
  }

  /// One block of `block` threads per row `row` of `rows`.
  void perRow(int64_t rows, int64_t block, const std::string &body) {
    std::string text = "  const long long row = blockIdx.x;\n  if (row >= " +
                       ll(rows) + ") return;\n" + body;
    launches.push_back(
        Launch{text, {std::max<int64_t>(1, rows), 1, 1}, {block, 1, 1}});
  }

  /// out[i] = input[inCoord(o0, o1, ...)] over the elements of `result`.
  LogicalResult writeIndexedCopy(Value input, Value result,
                                 ArrayRef<std::string> inCoord,
                                 const std::string &prologue = "") {
    std::string o = out(result);
    if (o.empty())
      return success();
    ArrayRef<int64_t> shape = shapeOf(result);
    std::string body = coords("i", shape, "o") + prologue + "  " + o +
                       "[i] = " + in(input) + "[" +
                       linearIndex(inCoord, shapeOf(input)) + "];\n";
    perElement(numElements(shape), body);
    return success();
  }

  static SmallVector<std::string> outCoords(int64_t rank) {
    SmallVector<std::string> c;
    for (int64_t d = 0; d < rank; ++d)
      c.push_back("o" + str(d));
    return c;
  }

  //===--------------------------------------------------------------------===//
  // Convolution and pooling
  //===--------------------------------------------------------------------===//

  /// Nested loops over a window: for every spatial dim d a loop over
  /// `k<d>` in [0, K[d]) computing `x<d> = o<d+2> * stride - pad + k * dil`.
  /// `skip(d)` is the condition (on x<d>) that skips the position.
  std::string windowLoops(ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> padsBegin,
                          ArrayRef<int64_t> dilations,
                          llvm::function_ref<std::string(int64_t)> skip,
                          const std::string &inner, int indent) {
    std::string s;
    for (size_t d = 0; d < kernel.size(); ++d) {
      std::string pad(indent + 2 * d, ' ');
      std::string k = "k" + str(d), x = "x" + str(d);
      s += pad + "for (long long " + k + " = 0; " + k + " < " + ll(kernel[d]) +
           "; ++" + k + ") {\n" + pad + "  const long long " + x + " = o" +
           str(d + 2) + " * " + ll(strides[d]) + " - " + ll(padsBegin[d]) +
           " + " + k + " * " + ll(dilations[d]) + ";\n";
      std::string cond = skip(d);
      if (!cond.empty())
        s += pad + "  if (" + cond + ") continue;\n";
    }
    s += inner;
    for (int64_t d = kernel.size() - 1; d >= 0; --d)
      s += std::string(indent + 2 * d, ' ') + "}\n";
    return s;
  }

  static SmallVector<std::string> prefixed(StringRef p, int64_t n) {
    SmallVector<std::string> v;
    for (int64_t d = 0; d < n; ++d)
      v.push_back(p.str() + str(d));
    return v;
  }

  LogicalResult writeConv(ConvOp conv) {
    Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
    if (!params.needed(y))
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
    int64_t rank = xs.size(), spatial = rank - 2;
    int64_t group = conv.getGroup();
    int64_t C = xs[1], M = ys[1], CG = ws[1];
    if (group < 1 || M % group || C != CG * group)
      return unsupported("with inconsistent group/channel counts");
    SmallVector<int64_t> inSpatial(xs.drop_front(2)), kernel(ws.drop_front(2));
    ArrayRef<int64_t> pads = conv.getPads();
    SmallVector<int64_t> padsBegin(pads.take_front(spatial));
    std::string a = A(y);
    std::string body = coords("i", ys, "o") +
                       "  const long long g = o1 / " + ll(M / group) +
                       ";\n  " + a + " acc = 0;\n  for (long long c = 0; c < " +
                       ll(CG) + "; ++c) {\n    const long long xc = o0 * " +
                       ll(C) + " + g * " + ll(CG) +
                       " + c;\n    const long long wc = o1 * " + ll(CG) +
                       " + c;\n";
    std::string inner =
        std::string(4 + 2 * spatial, ' ') + "acc += (" + a + ")" + in(x) +
        "[xc * " + ll(numElements(inSpatial)) + " + " +
        linearIndex(prefixed("x", spatial), inSpatial) + "] * (" + a + ")" +
        in(w) + "[wc * " + ll(numElements(kernel)) + " + " +
        linearIndex(prefixed("k", spatial), kernel) + "];\n";
    body += windowLoops(
        kernel, conv.getStrides(), padsBegin, conv.getDilations(),
        [&](int64_t d) {
          return "x" + str(d) + " < 0 || x" + str(d) + " >= " +
                 ll(inSpatial[d]);
        },
        inner, 4);
    body += "  }\n";
    if (Value b = conv.getBias())
      body += "  acc += (" + a + ")" + in(b) + "[o1];\n";
    body += params.store(y, "(" + T(y) + ")acc", "i");
    perElement(numElements(ys), body);
    return success();
  }

  LogicalResult writeConvTranspose(ConvTransposeOp conv) {
    Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
    int64_t rank = xs.size(), spatial = rank - 2;
    int64_t group = conv.getGroup();
    int64_t C = xs[1], M = ys[1], MG = ws[1];
    if (group < 1 || C % group || M != MG * group || ws[0] != C)
      return unsupported("with inconsistent group/channel counts");
    int64_t CG = C / group;
    SmallVector<int64_t> inSpatial(xs.drop_front(2)), kernel(ws.drop_front(2));
    ArrayRef<int64_t> strides = conv.getStrides(),
                      dilations = conv.getDilations(), pads = conv.getPads();
    std::string a = A(y);
    std::string body = coords("i", ys, "o") + "  const long long g = o1 / " +
                       ll(MG) + ", mm = o1 % " + ll(MG) + ";\n  " + a +
                       " acc = 0;\n  for (long long c = 0; c < " + ll(CG) +
                       "; ++c) {\n    const long long ci = g * " + ll(CG) +
                       " + c;\n";
    std::string loops;
    for (int64_t d = 0; d < spatial; ++d) {
      std::string pad(4 + 2 * d, ' ');
      std::string k = "k" + str(d), t = "t" + str(d), xv = "x" + str(d);
      loops += pad + "for (long long " + k + " = 0; " + k + " < " +
               ll(kernel[d]) + "; ++" + k + ") {\n" + pad +
               "  const long long " + t + " = o" + str(d + 2) + " + " +
               ll(pads[d]) + " - " + k + " * " + ll(dilations[d]) + ";\n" +
               pad + "  if (" + t + " < 0 || " + t + " % " + ll(strides[d]) +
               " != 0) continue;\n" + pad + "  const long long " + xv + " = " +
               t + " / " + ll(strides[d]) + ";\n" + pad + "  if (" + xv +
               " >= " + ll(inSpatial[d]) + ") continue;\n";
    }
    loops += std::string(4 + 2 * spatial, ' ') + "acc += (" + a + ")" + in(x) +
             "[(o0 * " + ll(C) + " + ci) * " + ll(numElements(inSpatial)) +
             " + " + linearIndex(prefixed("x", spatial), inSpatial) + "] * (" +
             a + ")" + in(w) + "[(ci * " + ll(MG) + " + mm) * " +
             ll(numElements(kernel)) + " + " +
             linearIndex(prefixed("k", spatial), kernel) + "];\n";
    for (int64_t d = spatial - 1; d >= 0; --d)
      loops += std::string(4 + 2 * d, ' ') + "}\n";
    body += loops + "  }\n";
    if (Value b = conv.getBias())
      body += "  acc += (" + a + ")" + in(b) + "[o1];\n";
    body += params.store(y, "(" + T(y) + ")acc", "i");
    perElement(numElements(ys), body);
    return success();
  }

  LogicalResult writeMaxPool(MaxPoolOp pool) {
    Value x = pool.getInput(), y = pool.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
    int64_t spatial = xs.size() - 2;
    SmallVector<int64_t> inSpatial(xs.drop_front(2));
    SmallVector<int64_t> padsBegin(pool.getPads().take_front(spatial));
    std::string t = T(y);
    std::string body = coords("i", ys, "o") +
                       "  const long long plane = o0 * " + ll(xs[1]) +
                       " + o1;\n  " + t + " best = cgc_limits<" + t +
                       ">::lowest();\n";
    std::string inner = std::string(2 + 2 * spatial, ' ') + "best = cgc_max(best, " +
                        in(x) + "[plane * " + ll(numElements(inSpatial)) +
                        " + " + linearIndex(prefixed("x", spatial), inSpatial) +
                        "]);\n";
    body += windowLoops(
        pool.getKernelShape(), pool.getStrides(), padsBegin,
        pool.getDilations(),
        [&](int64_t d) {
          return "x" + str(d) + " < 0 || x" + str(d) + " >= " +
                 ll(inSpatial[d]);
        },
        inner, 2);
    body += "  " + o + "[i] = best;\n";
    perElement(numElements(ys), body);
    return success();
  }

  LogicalResult writeAveragePool(AveragePoolOp pool) {
    Value x = pool.getInput(), y = pool.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
    int64_t spatial = xs.size() - 2;
    SmallVector<int64_t> inSpatial(xs.drop_front(2));
    ArrayRef<int64_t> pads = pool.getPads();
    SmallVector<int64_t> padsBegin(pads.take_front(spatial));
    std::string a = A(y);
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
        ") { sum += (" + a + ")" + in(x) + "[plane * " +
        ll(numElements(inSpatial)) + " + " +
        linearIndex(prefixed("x", spatial), inSpatial) + "]; ++count; }\n";
    std::string body = coords("i", ys, "o") +
                       "  const long long plane = o0 * " + ll(xs[1]) +
                       " + o1;\n  " + a +
                       " sum = 0;\n  long long count = 0, padded = 0;\n";
    body += windowLoops(
        pool.getKernelShape(), pool.getStrides(), padsBegin,
        pool.getDilations(),
        [&](int64_t d) {
          return "x" + str(d) + " < " + ll(-pads[d]) + " || x" + str(d) +
                 " >= " + ll(inSpatial[d] + pads[spatial + d]);
        },
        inner, 2);
    body += "  " + o + "[i] = (" + T(y) + ")(sum / (" + a + ")(" +
            (pool.getCountIncludePad() ? "padded" : "count") + "));\n";
    perElement(numElements(ys), body);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Reductions
  //===--------------------------------------------------------------------===//

  LogicalResult writeReduce(StringRef kind) {
    Value x = op->getOperand(0), y = op->getResult(0);
    if (!params.needed(y))
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t rank = xs.size();
    llvm::SmallSetVector<int64_t, 8> axes;
    for (int64_t axis : op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef())
      axes.insert(normalizeAxis(axis, rank));
    SmallVector<int64_t> strides = stridesOf(xs);
    SmallVector<int64_t> keptShape, redShape, keptStride, redStride;
    for (int64_t d = 0; d < rank; ++d) {
      if (axes.contains(d)) {
        redShape.push_back(xs[d]);
        redStride.push_back(strides[d]);
      } else {
        keptShape.push_back(xs[d]);
        keptStride.push_back(strides[d]);
      }
    }
    int64_t nOut = numElements(keptShape), nRed = numElements(redShape);
    if (nOut != numElements(shapeOf(y)))
      return unsupported("with an unexpected result shape");
    Type et = elementType(x);
    std::string t = T(x), a = A(x);
    bool isInt = !isa<FloatType>(et);
    if (isInt && (kind == "l2" || kind == "log_sum" || kind == "lse"))
      a = "double";
    auto offset = [&](StringRef name, ArrayRef<int64_t> shape,
                      ArrayRef<int64_t> stride) {
      SmallVector<std::string> terms;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] != 1)
          terms.push_back(name.str() + str(d) + " * " + ll(stride[d]));
      return terms.empty() ? std::string("0ll") : llvm::join(terms, " + ");
    };
    std::string map = "v";
    if (kind == "l1")
      map = "cgc_abs(v)";
    else if (kind == "l2" || kind == "sum_square")
      map = "v * v";
    std::string combine = "cgc_sum_op", identity = "(" + a + ")0";
    if (kind == "prod") {
      combine = "cgc_prod_op";
      identity = "(" + a + ")1";
    } else if (kind == "max") {
      combine = "cgc_max_op";
      identity = "(" + a + ")cgc_limits<" + t + ">::lowest()";
    } else if (kind == "min") {
      combine = "cgc_min_op";
      identity = "(" + a + ")cgc_limits<" + t + ">::highest()";
    }
    std::string finalExpr = "acc";
    if (kind == "mean")
      finalExpr = "acc / (" + a + ")" + ll(nRed);
    else if (kind == "l2")
      finalExpr = "cgc_sqrt(acc)";
    else if (kind == "log_sum")
      finalExpr = "cgc_log(acc)";
    std::string result = "(" + t + ")(" + finalExpr + ")";
    if (isInt && a == "double")
      result = "cgc_saturate<" + t + ">(" + finalExpr + ")";

    // The loop over the reduced elements from `first` by `step`.
    auto loop = [&](StringRef first, StringRef step, StringRef stmt) {
      return "  for (long long r = " + first.str() + "; r < " + ll(nRed) +
             "; r += " + step.str() + ") {\n" +
             coords("r", redShape, "q") + "    const " + a + " v = (" + a +
             ")" +
             params.read(x, "base + " + offset("q", redShape, redStride)) +
             ";\n    " + stmt.str() + "\n  }\n";
    };
    bool block = nRed > 64;
    std::string first = block ? "threadIdx.x" : "0";
    std::string step = block ? "blockDim.x" : "1";
    std::string outIndex = block ? "row" : "i";
    std::string body = coords(outIndex, keptShape, "k") +
                       "  const long long base = " +
                       offset("k", keptShape, keptStride) + ";\n";
    if (block)
      body += "  __shared__ " + a + " scratch[32];\n";
    auto reduce = [&](StringRef var, StringRef fn, StringRef id) {
      return block ? "  " + var.str() + " = cgc_block_reduce(" + var.str() +
                         ", " + id.str() + ", scratch, " + fn.str() +
                         "());\n"
                   : std::string();
    };
    if (kind == "lse") {
      body += "  " + a + " m = (" + a + ")cgc_limits<" + t +
              ">::lowest();\n" + loop(first, step, "m = cgc_max(m, v);") +
              reduce("m", "cgc_max_op", "(" + a + ")cgc_limits<" + t +
                                            ">::lowest()") +
              "  " + a + " acc = 0;\n" +
              loop(first, step, "acc += cgc_exp(v - m);") +
              reduce("acc", "cgc_sum_op", "(" + a + ")0");
      result = "(" + t + ")((m == (" + a + ")cgc_limits<" + t +
               ">::lowest() || m == (" + a + ")cgc_limits<" + t +
               ">::highest()) ? m : m + cgc_log(acc))";
    } else {
      body += "  " + a + " acc = " + identity + ";\n" +
              loop(first, step, "acc = " + combine + "()(acc, " + map + ");") +
              reduce("acc", combine, identity);
    }
    if (block) {
      body += "  if (threadIdx.x == 0)\n" + params.store(y, result, "row");
      perRow(nOut, blockFor(nRed), body);
    } else {
      body += params.store(y, result, "i");
      perElement(nOut, body);
    }
    return success();
  }

  /// arg_max/arg_min (index output) and hardmax (one-hot output) along an
  /// axis: one thread per line for short lines, else one block per line.
  LogicalResult writeArg(Value x, int64_t axis, bool largest, bool last) {
    Value y = op->getResult(0);
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    axis = normalizeAxis(axis, xs.size());
    LineGeometry g = lineOf(xs, axis);
    bool hardmax = isa<HardmaxOp>(op);
    std::string t = T(x);
    std::string cmp = "cgc_before<" + t + ", " + (largest ? "true" : "false") +
                      ", " + (last ? "true" : "false") + ">";
    std::string geometry = "  const long long base = (row / " + ll(g.inner) +
                           ") * " + ll(g.length * g.inner) + " + row % " +
                           ll(g.inner) + ";\n";
    std::string X = in(x) + "[base + j * " + ll(g.inner) + "]";
    std::string write =
        hardmax ? "for (long long j = FIRST; j < " + ll(g.length) +
                      "; j += STEP) " + o + "[base + j * " + ll(g.inner) +
                      "] = (" + T(y) + ")(j == bi);\n"
                : o + "[row] = bi;\n";
    bool block = g.length > 128;
    std::string body = geometry + "  " + t + " best = " + t +
                       "();\n  long long bi = -1;\n";
    auto replaceAll = [](std::string s, StringRef from, StringRef to) {
      size_t at;
      while ((at = s.find(from.str())) != std::string::npos)
        s.replace(at, from.size(), to.str());
      return s;
    };
    if (block) {
      int64_t threads = blockFor(g.length);
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
      perRow(g.lines(), threads, body);
    } else {
      body = "  const long long row = i;\n" + body +
             "  for (long long j = 0; j < " + ll(g.length) +
             "; ++j) {\n    const " + t + " v = " + X + ";\n    if (" + cmp +
             "(v, j, best, bi)) { best = v; bi = j; }\n  }\n  " +
             replaceAll(replaceAll(write, "FIRST", "0"), "STEP", "1");
      perElement(g.lines(), body);
    }
    return success();
  }

  LogicalResult writeCumSum(CumSumOp cumsum) {
    Value x = cumsum.getInput(), y = cumsum.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t axis = normalizeAxis(cumsum.getAxis(), xs.size());
    LineGeometry g = lineOf(xs, axis);
    int64_t threads = blockFor(g.length);
    std::string a = A(x), L = ll(g.length);
    // Chunks of blockDim.x elements: an inclusive block scan in shared
    // memory, plus the carry of the chunks before.
    std::string body =
        "  const long long base = (row / " + ll(g.inner) + ") * " +
        ll(g.length * g.inner) + " + row % " + ll(g.inner) +
        ";\n  __shared__ " + a + " s[" + str(threads) + "];\n  " + a +
        " carry = 0;\n  for (long long c0 = 0; c0 < " + L +
        "; c0 += blockDim.x) {\n    const long long p = c0 + threadIdx.x;\n"
        "    const long long j = " +
        (cumsum.getReverse() ? L + " - 1 - p" : std::string("p")) +
        ";\n    s[threadIdx.x] = p < " + L + " ? (" + a + ")" + in(x) +
        "[base + j * " + ll(g.inner) + "] : (" + a +
        ")0;\n    __syncthreads();\n    for (int d = 1; d < (int)blockDim.x; "
        "d <<= 1) {\n      const " +
        a + " t = (int)threadIdx.x >= d ? s[threadIdx.x - d] : (" + a +
        ")0;\n      __syncthreads();\n      s[threadIdx.x] += t;\n      "
        "__syncthreads();\n    }\n    if (p < " +
        L + ") " + o + "[base + j * " + ll(g.inner) + "] = (" + T(y) +
        ")(carry + " +
        (cumsum.getExclusive()
             ? "(threadIdx.x > 0 ? s[threadIdx.x - 1] : (" + a + ")0)"
             : std::string("s[threadIdx.x]")) +
        ");\n    const " + a +
        " total = s[blockDim.x - 1];\n    __syncthreads();\n    carry += "
        "total;\n  }\n";
    perRow(g.lines(), threads, body);
    return success();
  }

  LogicalResult writeTopK(TopKOp topk) {
    Value x = topk.getInput();
    std::string ov = out(topk.getValues()), oi = out(topk.getIndices());
    if (ov.empty() && oi.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t axis = normalizeAxis(topk.getAxis(), xs.size());
    LineGeometry g = lineOf(xs, axis);
    int64_t k = topk.getK();
    if (k > g.length)
      return unsupported("with k larger than the axis");
    int64_t threads = blockFor(g.length);
    std::string t = T(x);
    std::string targs = t + ", " + (topk.getLargest() ? "true" : "false") +
                        ", false";
    std::string body =
        "  const long long base = (row / " + ll(g.inner) + ") * " +
        ll(g.length * g.inner) + " + row % " + ll(g.inner) +
        ";\n  const long long obase = (row / " + ll(g.inner) + ") * " +
        ll(k * g.inner) + " + row % " + ll(g.inner) + ";\n  __shared__ " + t +
        " sv[" + str(threads) + "];\n  __shared__ long long si[" +
        str(threads) + "];\n  " + t +
        " lastv = " + t + "();\n  long long lasti = -1;\n  for (long long p = "
        "0; p < " +
        ll(k) + "; ++p) {\n    " + t + " best = " + t +
        "();\n    long long bi = -1;\n    for (long long j = threadIdx.x; j < " +
        ll(g.length) + "; j += blockDim.x) {\n      const " + t + " v = " +
        in(x) + "[base + j * " + ll(g.inner) +
        "];\n      if (lasti >= 0 && !cgc_before<" + targs +
        ">(lastv, lasti, v, j)) continue;\n      if (cgc_before<" + targs +
        ">(v, j, best, bi)) { best = v; bi = j; }\n    }\n    cgc_block_best<" +
        targs + ">(best, bi, sv, si);\n    if (threadIdx.x == 0) {\n";
    if (!ov.empty())
      body += "      " + ov + "[obase + p * " + ll(g.inner) + "] = best;\n";
    if (!oi.empty())
      body += "      " + oi + "[obase + p * " + ll(g.inner) + "] = bi;\n";
    body += "    }\n    lastv = best;\n    lasti = bi;\n  }\n";
    perRow(g.lines(), threads, body);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Normalizations
  //===--------------------------------------------------------------------===//

  /// softmax/log_softmax when they are not a norm group (kept for
  /// completeness; fusion normally anchors a norm group on them).
  LogicalResult writeSoftmax(Operation *softmax, bool log) {
    Value x = softmax->getOperand(0), y = softmax->getResult(0);
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t axis = normalizeAxis(
        softmax->getAttrOfType<IntegerAttr>("axis").getInt(), xs.size());
    LineGeometry g = lineOf(xs, axis);
    std::string a = A(x);
    std::string X = "(" + a + ")" + in(x) + "[base + j * " + ll(g.inner) + "]";
    std::string loop = "  for (long long j = threadIdx.x; j < " +
                       ll(g.length) + "; j += blockDim.x)";
    std::string body =
        "  const long long base = (row / " + ll(g.inner) + ") * " +
        ll(g.length * g.inner) + " + row % " + ll(g.inner) +
        ";\n  __shared__ " + a + " scratch[32];\n  " + a + " m = cgc_limits<" +
        a + ">::lowest();\n" + loop + " m = cgc_max(m, " + X +
        ");\n  m = cgc_block_reduce(m, cgc_limits<" + a +
        ">::lowest(), scratch, cgc_max_op());\n  " + a + " s = 0;\n" + loop +
        " s += cgc_exp(" + X + " - m);\n  s = cgc_block_reduce(s, (" + a +
        ")0, scratch, cgc_sum_op());\n" + loop + " " + o + "[base + j * " +
        ll(g.inner) + "] = (" + T(y) + ")(" +
        (log ? X + " - m - cgc_log(s)" : "cgc_exp(" + X + " - m) / s") +
        ");\n";
    perRow(g.lines(), blockFor(g.length), body);
    return success();
  }

  LogicalResult writeLayerNorm(LayerNormOp ln) {
    Value x = ln.getInput(), y = ln.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t axis = normalizeAxis(ln.getAxis(), xs.size());
    int64_t rows = numElements(xs.take_front(axis));
    SmallVector<int64_t> normalized(xs.drop_front(axis));
    int64_t L = numElements(normalized);
    std::string a = A(x);
    // Scale and bias broadcast against the normalized dims.
    auto broadcastIndex = [&](Value v) {
      ArrayRef<int64_t> s = shapeOf(v);
      SmallVector<std::string> c;
      int64_t offset = normalized.size() - s.size();
      for (size_t d = 0; d < s.size(); ++d)
        c.push_back("n" + str(d + offset));
      return coords("j", normalized, "n") + "      const long long " +
             "idx = " + linearIndex(c, s) + ";\n";
    };
    std::string X = "(" + a + ")" + in(x) + "[row * " + ll(L) + " + j]";
    std::string body =
        "  __shared__ " + a + " scratch[32];\n  " + a +
        " s = 0;\n  for (long long j = threadIdx.x; j < " + ll(L) +
        "; j += blockDim.x) s += " + X +
        ";\n  const " + a + " mean = cgc_block_reduce(s, (" + a +
        ")0, scratch, cgc_sum_op()) / (" + a + ")" + ll(L) + ";\n  " + a +
        " q = 0;\n  for (long long j = threadIdx.x; j < " + ll(L) +
        "; j += blockDim.x) { const " + a + " d = " + X +
        " - mean; q += d * d; }\n  const " + a + " rstd = (" + a +
        ")1 / cgc_sqrt(cgc_block_reduce(q, (" + a + ")0, scratch, "
        "cgc_sum_op()) / (" +
        a + ")" + ll(L) + " + (" + a + ")" +
        doubleLiteral(ln.getEpsilon().convertToDouble()) +
        ");\n  for (long long j = threadIdx.x; j < " + ll(L) +
        "; j += blockDim.x) {\n" + broadcastIndex(ln.getScale()) +
        "    " + a + " v = (" + X + " - mean) * rstd * (" + a + ")" +
        in(ln.getScale()) + "[idx];\n";
    if (Value b = ln.getBias())
      body += "    {\n" + broadcastIndex(b) + "    v += (" + a + ")" + in(b) +
              "[idx];\n    }\n";
    body += "    " + o + "[row * " + ll(L) + " + j] = (" + T(y) + ")v;\n  }\n";
    perRow(rows, kThreads, body);
    return success();
  }

  LogicalResult writeBatchNorm(BatchNormOp bn) {
    Value x = bn.getInput(), y = bn.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t C = xs.size() > 1 ? xs[1] : 1;
    int64_t inner = xs.size() > 2 ? numElements(xs.drop_front(2)) : 1;
    std::string a = A(x);
    auto P = [&](Value v) { return "(" + a + ")" + in(v) + "[c]"; };
    std::string body =
        "  const long long c = (i / " + ll(inner) + ") % " + ll(C) + ";\n  " +
        o + "[i] = (" + T(y) + ")(" + P(bn.getScale()) + " * ((" + a + ")" +
        in(x) + "[i] - " + P(bn.getMean()) + ") / cgc_sqrt(" +
        P(bn.getVariance()) + " + (" + a + ")" +
        doubleLiteral(bn.getEpsilon().convertToDouble()) + ") + " +
        P(bn.getBias()) + ");\n";
    perElement(numElements(xs), body);
    return success();
  }

  LogicalResult writeInstanceNorm(InstanceNormOp norm) {
    Value x = norm.getInput(), y = norm.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    if (xs.size() < 2)
      return unsupported("on a tensor of rank below 2");
    int64_t C = xs[1], rows = xs[0] * C, L = numElements(xs.drop_front(2));
    std::string a = A(x);
    std::string X = "(" + a + ")" + in(x) + "[row * " + ll(L) + " + j]";
    std::string body =
        "  const long long c = row % " + ll(C) + ";\n  __shared__ " + a +
        " scratch[32];\n  " + a + " s = 0;\n  for (long long j = threadIdx.x; "
        "j < " +
        ll(L) + "; j += blockDim.x) s += " + X + ";\n  const " + a +
        " mean = cgc_block_reduce(s, (" + a + ")0, scratch, cgc_sum_op()) / (" +
        a + ")" + ll(L) + ";\n  " + a +
        " q = 0;\n  for (long long j = threadIdx.x; j < " + ll(L) +
        "; j += blockDim.x) { const " + a + " d = " + X +
        " - mean; q += d * d; }\n  const " + a + " rstd = (" + a +
        ")1 / cgc_sqrt(cgc_block_reduce(q, (" + a +
        ")0, scratch, cgc_sum_op()) / (" + a + ")" + ll(L) + " + (" + a +
        ")" + doubleLiteral(norm.getEpsilon().convertToDouble()) +
        ");\n  const " + a + " scale = (" + a + ")" + in(norm.getScale()) +
        "[c], bias = (" + a + ")" + in(norm.getBias()) +
        "[c];\n  for (long long j = threadIdx.x; j < " + ll(L) +
        "; j += blockDim.x) " + o + "[row * " + ll(L) + " + j] = (" + T(y) +
        ")((" + X + " - mean) * rstd * scale + bias);\n";
    perRow(rows, kThreads, body);
    return success();
  }

  LogicalResult writeLRN(LRNOp lrn) {
    Value x = lrn.getInput(), y = lrn.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    if (xs.size() < 2)
      return unsupported("on a tensor of rank below 2");
    int64_t C = xs[1], inner = numElements(xs.drop_front(2));
    int64_t size = lrn.getSize();
    int64_t before = (size - 1) / 2, after = size - 1 - before;
    std::string a = A(x);
    std::string body =
        "  const long long c = (i / " + ll(inner) + ") % " + ll(C) +
        ";\n  const long long plane = i - c * " + ll(inner) + ";\n  " + a +
        " sq = 0;\n  for (long long cc = c - " + ll(before) + "; cc <= c + " +
        ll(after) + "; ++cc) {\n    if (cc < 0 || cc >= " + ll(C) +
        ") continue;\n    const " + a + " v = (" + a + ")" + in(x) +
        "[plane + cc * " + ll(inner) + "];\n    sq += v * v;\n  }\n  " + o +
        "[i] = (" + T(y) + ")((" + a + ")" + in(x) + "[i] / cgc_pow((" + a +
        ")" + doubleLiteral(lrn.getBias().convertToDouble()) + " + (" + a +
        ")" +
        doubleLiteral(lrn.getAlpha().convertToDouble() / (double)size) +
        " * sq, (" + a + ")" +
        doubleLiteral(lrn.getBeta().convertToDouble()) + "));\n";
    perElement(numElements(xs), body);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Data movement
  //===--------------------------------------------------------------------===//

  LogicalResult writeTranspose(TransposeOp transpose) {
    ArrayRef<int64_t> perm = transpose.getPerm();
    SmallVector<std::string> inCoord(perm.size());
    for (auto [d, p] : llvm::enumerate(perm))
      inCoord[p] = "o" + str(d);
    return writeIndexedCopy(transpose.getInput(), transpose.getOutput(),
                            inCoord);
  }

  LogicalResult writeExpand(ExpandOp expand) {
    ArrayRef<int64_t> xs = shapeOf(expand.getInput()),
                      ys = shapeOf(expand.getOutput());
    SmallVector<std::string> inCoord;
    int64_t offset = ys.size() - xs.size();
    for (size_t j = 0; j < xs.size(); ++j)
      inCoord.push_back(xs[j] == 1 ? "0" : "o" + str(j + offset));
    return writeIndexedCopy(expand.getInput(), expand.getOutput(), inCoord);
  }

  LogicalResult writeTile(TileOp tile) {
    ArrayRef<int64_t> xs = shapeOf(tile.getInput());
    SmallVector<std::string> inCoord;
    for (size_t d = 0; d < xs.size(); ++d)
      inCoord.push_back(xs[d] == 1 ? "0" : "o" + str(d) + " % " + ll(xs[d]));
    return writeIndexedCopy(tile.getInput(), tile.getOutput(), inCoord);
  }

  LogicalResult writeSlice(SliceOp slice) {
    ArrayRef<int64_t> starts = slice.getStarts(), steps = slice.getSteps();
    SmallVector<std::string> inCoord;
    for (size_t d = 0; d < starts.size(); ++d)
      inCoord.push_back(ll(starts[d]) + " + o" + str(d) + " * " +
                        ll(steps[d]));
    return writeIndexedCopy(slice.getInput(), slice.getOutput(), inCoord);
  }

  LogicalResult writeDepthToSpace(DepthToSpaceOp d2s) {
    ArrayRef<int64_t> ys = shapeOf(d2s.getOutput());
    if (ys.size() != 4)
      return unsupported("on a tensor of rank other than 4");
    int64_t b = d2s.getBlocksize();
    std::string channel =
        d2s.getMode() == "CRD"
            ? "o1 * " + ll(b * b) + " + (o2 % " + ll(b) + ") * " + ll(b) +
                  " + o3 % " + ll(b)
            : "((o2 % " + ll(b) + ") * " + ll(b) + " + o3 % " + ll(b) +
                  ") * " + ll(ys[1]) + " + o1";
    return writeIndexedCopy(d2s.getInput(), d2s.getOutput(),
                            {"o0", channel, "o2 / " + ll(b), "o3 / " + ll(b)});
  }

  LogicalResult writeSpaceToDepth(SpaceToDepthOp s2d) {
    ArrayRef<int64_t> xs = shapeOf(s2d.getInput());
    if (xs.size() != 4)
      return unsupported("on a tensor of rank other than 4");
    int64_t b = s2d.getBlocksize(), C = xs[1];
    std::string blk = "(o1 / " + ll(C) + ")";
    return writeIndexedCopy(
        s2d.getInput(), s2d.getOutput(),
        {"o0", "o1 % " + ll(C), "o2 * " + ll(b) + " + " + blk + " / " + ll(b),
         "o3 * " + ll(b) + " + " + blk + " % " + ll(b)});
  }

  LogicalResult writePad(PadOp pad) {
    Value x = pad.getInput(), y = pad.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
    ArrayRef<int64_t> pads = pad.getPads();
    int64_t rank = xs.size();
    StringRef mode = pad.getMode();
    if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
      return unsupported("with mode '" + mode + "'");
    std::string body = coords("i", ys, "o");
    SmallVector<std::string> inCoord;
    SmallVector<std::string> outside;
    for (int64_t d = 0; d < rank; ++d) {
      std::string c = "x" + str(d), D = ll(xs[d]);
      inCoord.push_back(c);
      body += "  long long " + c + " = o" + str(d) + " - " + ll(pads[d]) +
              ";\n";
      if (mode == "constant") {
        outside.push_back(c + " < 0 || " + c + " >= " + D);
        continue;
      }
      if (xs[d] == 0 && ys[d] != 0)
        return unsupported("in mode '" + mode + "' of an empty dim");
      if (mode == "edge")
        body += "  " + c + " = " + c + " < 0 ? 0 : " + c + " >= " + D + " ? " +
                D + " - 1 : " + c + ";\n";
      else if (mode == "wrap")
        body += "  " + c + " = ((" + c + " % " + D + ") + " + D + ") % " + D +
                ";\n";
      else if (xs[d] == 1)
        body += "  " + c + " = 0;\n";
      else
        body += "  { const long long p = " + ll(2 * (xs[d] - 1)) + "; " + c +
                " %= p; if (" + c + " < 0) " + c + " += p; if (" + c +
                " >= " + D + ") " + c + " = p - " + c + "; }\n";
    }
    std::string read = in(x) + "[" + linearIndex(inCoord, xs) + "]";
    if (mode == "constant" && !outside.empty())
      read = "(" + llvm::join(outside, " || ") + ") ? " +
             literal(pad.getValue().convertToDouble(), elementType(y)) +
             " : " + read;
    body += "  " + o + "[i] = " + read + ";\n";
    perElement(numElements(ys), body);
    return success();
  }

  LogicalResult writeConcat(ConcatOp concat) {
    Value y = concat.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> ys = shapeOf(y);
    int64_t axis = normalizeAxis(concat.getAxis(), ys.size());
    LineGeometry g = lineOf(ys, axis);
    std::string body = "  const long long n = i % " + ll(g.inner) +
                       ", ca = (i / " + ll(g.inner) + ") % " + ll(g.length) +
                       ", outer = i / " + ll(g.length * g.inner) + ";\n";
    int64_t start = 0;
    SmallVector<std::pair<int64_t, Value>> parts;
    for (Value v : concat.getInputs()) {
      int64_t len = shapeOf(v)[axis];
      if (len > 0)
        parts.push_back({start, v});
      start += len;
    }
    for (auto [k, part] : llvm::enumerate(parts)) {
      auto [first, v] = part;
      int64_t len = shapeOf(v)[axis];
      std::string assign = o + "[i] = " + in(v) + "[(outer * " + ll(len) +
                           " + (ca - " + ll(first) + ")) * " + ll(g.inner) +
                           " + n];\n";
      if (k + 1 == parts.size())
        body += "  " + std::string(k ? "else " : "") + assign;
      else
        body += "  " + std::string(k ? "else " : "") + "if (ca < " +
                ll(first + len) + ") " + assign;
    }
    perElement(numElements(ys), body);
    return success();
  }

  LogicalResult writeSplit(SplitOp split) {
    Value x = split.getInput();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t axis = normalizeAxis(split.getAxis(), xs.size());
    LineGeometry g = lineOf(xs, axis);
    std::string body = "  const long long n = i % " + ll(g.inner) +
                       ", ca = (i / " + ll(g.inner) + ") % " + ll(g.length) +
                       ", outer = i / " + ll(g.length * g.inner) +
                       ";\n  const " + T(x) + " v = " + in(x) + "[i];\n";
    int64_t start = 0;
    bool any = false;
    for (Value r : split.getOutputs()) {
      int64_t len = shapeOf(r)[axis];
      std::string o = out(r);
      if (len > 0 && !o.empty()) {
        body += "  if (ca >= " + ll(start) + " && ca < " + ll(start + len) +
                ") " + o + "[(outer * " + ll(len) + " + (ca - " + ll(start) +
                ")) * " + ll(g.inner) + " + n] = v;\n";
        any = true;
      }
      start += len;
    }
    if (any)
      perElement(numElements(xs), body);
    return success();
  }

  /// `k` as a checked index into a dim of `size`: negative counts from the
  /// end; out of range sets `bad`.
  static std::string wrapIndex(StringRef k, int64_t size) {
    return "  if (" + k.str() + " < 0) " + k.str() + " += " + ll(size) +
           ";\n  if (" + k.str() + " < 0 || " + k.str() + " >= " + ll(size) +
           ") bad = true;\n";
  }

  LogicalResult writeGather(GatherOp gather) {
    Value x = gather.getInput(), idx = gather.getIndices(),
          y = gather.getOutput();
    // Stored through the resolver: a group may fuse elementwise ops after
    // the gather (an embedding plus a position term).
    if (!params.needed(y))
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t axis = normalizeAxis(gather.getAxis(), xs.size());
    LineGeometry g = lineOf(xs, axis);
    int64_t nIdx = numElements(shapeOf(idx));
    std::string body = "  const long long n = i % " + ll(g.inner) +
                       ", j = (i / " + ll(g.inner) + ") % " + ll(nIdx) +
                       ", outer = i / " + ll(nIdx * g.inner) +
                       ";\n  long long k = (long long)" + in(idx) +
                       "[j];\n  bool bad = false;\n" +
                       wrapIndex("k", g.length) +
                       params.store(y, "(bad ? (" + T(y) + ")0 : " + in(x) +
                                           "[(outer * " + ll(g.length) +
                                           " + k) * " + ll(g.inner) + " + n])",
                                    "i");
    perElement(numElements(shapeOf(y)), body);
    return success();
  }

  LogicalResult writeGatherElements(GatherElementsOp gather) {
    Value x = gather.getInput(), idx = gather.getIndices(),
          y = gather.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
    int64_t axis = normalizeAxis(gather.getAxis(), xs.size());
    SmallVector<std::string> inCoord = outCoords(xs.size());
    inCoord[axis] = "k";
    std::string body = coords("i", is, "o") + "  long long k = (long long)" +
                       in(idx) + "[i];\n  bool bad = false;\n" +
                       wrapIndex("k", xs[axis]) + "  " + o + "[i] = bad ? (" +
                       T(y) + ")0 : " + in(x) + "[" +
                       linearIndex(inCoord, xs) + "];\n";
    perElement(numElements(is), body);
    return success();
  }

  LogicalResult writeGatherND(GatherNDOp gather) {
    Value x = gather.getInput(), idx = gather.getIndices(),
          y = gather.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
    int64_t b = gather.getBatchDims();
    if (is.empty())
      return unsupported("with scalar indices");
    int64_t kk = is.back();
    if (b + kk > (int64_t)xs.size())
      return unsupported("with index tuples longer than the data rank");
    int64_t tail = numElements(xs.drop_front(b + kk));
    int64_t perBatch = numElements(is.drop_back().drop_front(b));
    SmallVector<int64_t> strides = stridesOf(xs);
    std::string body =
        "  const long long s = i % " + ll(tail) + ", t = i / " + ll(tail) +
        ";\n  const long long batch = t / " + ll(std::max<int64_t>(perBatch, 1)) +
        ";\n  long long off = batch * " + ll(numElements(xs.drop_front(b))) +
        " + s;\n  bool bad = false;\n";
    for (int64_t j = 0; j < kk; ++j)
      body += "  {\n    long long k = " + in(idx) + "[t * " + ll(kk) + " + " +
              ll(j) + "];\n  " + wrapIndex("k", xs[b + j]) + "    off += k * " +
              ll(strides[b + j]) + ";\n  }\n";
    body += "  " + o + "[i] = bad ? (" + T(y) + ")0 : " + in(x) + "[off];\n";
    perElement(numElements(shapeOf(y)), body);
    return success();
  }

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

  /// One thread per output element: starts from the input and applies, in
  /// index order, every update whose index along `axis` hits it (updates
  /// that can hit an element share all its other coordinates).
  LogicalResult writeScatterElements(ScatterElementsOp scatter) {
    Value x = scatter.getInput(), idx = scatter.getIndices(),
          upd = scatter.getUpdates(), y = scatter.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    FailureOr<std::string> combine = scatterCombine(scatter.getReduction());
    if (failed(combine))
      return unsupported("with reduction '" + scatter.getReduction() + "'");
    ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
    int64_t rank = xs.size();
    int64_t axis = normalizeAxis(scatter.getAxis(), rank);
    std::string t = T(y);
    std::string body = coords("i", xs, "o") + "  " + t + " v = " + in(x) +
                       "[i];\n";
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
      body += "  if (" + (within.empty() ? "true" : llvm::join(within, " && ")) +
              ") {\n    for (long long j = 0; j < " + ll(is[axis]) +
              "; ++j) {\n      const long long u_at = " +
              linearIndex(updCoord, is) + ";\n      long long k = " + in(idx) +
              "[u_at];\n      if (k < 0) k += " + ll(xs[axis]) +
              ";\n      if (k != o" + str(axis) + ") continue;\n      const " +
              t + " u = " + in(upd) + "[u_at];\n      " + *combine +
              "\n    }\n  }\n";
    }
    body += "  " + o + "[i] = v;\n";
    perElement(numElements(xs), body);
    return success();
  }

  /// Two launches: copy the input, then one thread per (index tuple,
  /// element of its slice). The first tuple that hits a slice applies every
  /// update of that slice in order, so duplicates resolve deterministically
  /// (the last write wins for reduction none).
  LogicalResult writeScatterND(ScatterNDOp scatter) {
    Value x = scatter.getInput(), idx = scatter.getIndices(),
          upd = scatter.getUpdates(), y = scatter.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    FailureOr<std::string> combine = scatterCombine(scatter.getReduction());
    if (failed(combine))
      return unsupported("with reduction '" + scatter.getReduction() + "'");
    ArrayRef<int64_t> xs = shapeOf(x), is = shapeOf(idx);
    if (is.empty())
      return unsupported("with scalar indices");
    int64_t kk = is.back();
    if (kk > (int64_t)xs.size())
      return unsupported("with index tuples longer than the data rank");
    int64_t tuples = numElements(is.drop_back());
    int64_t tail = numElements(xs.drop_front(kk));
    SmallVector<int64_t> strides = stridesOf(xs);
    perElement(numElements(xs), "  " + o + "[i] = " + in(x) + "[i];\n");
    if (tuples == 0 || tail == 0)
      return success();
    std::string rowOf = "  auto slice_of = [&](long long tt) {\n    long "
                        "long off = 0;\n";
    for (int64_t j = 0; j < kk; ++j)
      rowOf += "    { long long k = " + in(idx) + "[tt * " + ll(kk) + " + " +
               ll(j) + "]; if (k < 0) k += " + ll(xs[j]) + "; off += k * " +
               ll(strides[j]) + "; }\n";
    rowOf += "    return off;\n  };\n";
    std::string t = T(y);
    std::string body =
        "  const long long s = i % " + ll(tail) + ", tt = i / " + ll(tail) +
        ";\n" + rowOf +
        "  const long long target = slice_of(tt);\n  for (long long e = 0; e "
        "< tt; ++e)\n    if (slice_of(e) == target) return;\n  " +
        t + " v = " + o + "[target + s];\n  for (long long e = tt; e < " +
        ll(tuples) + "; ++e) {\n    if (slice_of(e) != target) continue;\n    "
                     "const " +
        t + " u = " + in(upd) + "[e * " + ll(tail) + " + s];\n    " + *combine +
        "\n  }\n  " + o + "[target + s] = v;\n";
    perElement(tuples * tail, body);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Resize
  //===--------------------------------------------------------------------===//

  LogicalResult writeResize(ResizeOp resize) {
    Value x = resize.getInput(), y = resize.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
    int64_t rank = xs.size();
    StringRef mode = resize.getMode();
    StringRef ctm = resize.getCoordinateTransformationMode();
    StringRef nearest = resize.getNearestMode();
    if (!llvm::is_contained({"nearest", "linear", "cubic"}, mode))
      return unsupported("with mode '" + mode + "'");
    if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                             "pytorch_half_pixel", "align_corners",
                             "asymmetric", "tf_half_pixel_for_nn"},
                            ctm))
      return unsupported("with coordinate_transformation_mode '" + ctm + "'");
    if (!llvm::is_contained(
            {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
            nearest))
      return unsupported("with nearest_mode '" + nearest + "'");
    SmallVector<double> scales;
    for (Attribute s : resize.getScales())
      scales.push_back(cast<FloatAttr>(s).getValueAsDouble());
    if ((int64_t)scales.size() != rank)
      return unsupported("with a scale count other than the rank");
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
      bool identity = ys[d] == xs[d] &&
                      std::fabs(scale - 1.0) <=
                          1e-9 * std::max(std::fabs(scale), 1.0);
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
        xo = doubleLiteral(offset) + " + ((" + od + " + 0.5) / " + s +
             " - 0.5)";
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
      body += "  const double xo" + D + " = " + xo + ";\n  const double fl" +
              D + " = floor(xo" + D + ");\n  const double r" + D + " = xo" +
              D + " - fl" + D + ";\n  const long long b" + D +
              " = (long long)fl" + D + ";\n";
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
        body += "  const long long n" + D + " = (r" + D + " == 0.0 || " +
                pick + ") ? b" + D + " : b" + D + " + 1;\n  const long long " +
                xi + "[1] = {" + clamp("n" + D) + "};\n  const " + a + " " + w +
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
        coeffs = {
            "((" + A + " * " + r1 + " - 5.0 * " + A + ") * " + r1 +
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
      body += "  long long " + xi + "[" + str(n) + "];\n  " + a + " " + w +
              "[" + str(n) + "];\n  {\n    double c[" + str(n) + "] = {" +
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
            ")" + in(x) + "[" + linearIndex(idx, xs) + "];\n";
    for (int64_t d = rank - 1; d >= 0; --d)
      body += std::string(2 + 2 * d, ' ') + "}\n";
    body += "  " + o + "[i] = cgc_saturate<" + T(y) + ">(acc);\n";
    perElement(numElements(ys), body);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Trilu, OneHot, Einsum, NLL loss, shape queries
  //===--------------------------------------------------------------------===//

  LogicalResult writeTrilu(TriluOp trilu) {
    Value x = trilu.getInput(), y = trilu.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    if (xs.size() < 2)
      return unsupported("on a tensor of rank below 2");
    int64_t R = xs[xs.size() - 2], C = xs.back();
    std::string keep = trilu.getUpper() ? "c - r >= " + ll(trilu.getK())
                                        : "c - r <= " + ll(trilu.getK());
    std::string body = "  const long long c = i % " + ll(C) + ", r = (i / " +
                       ll(C) + ") % " + ll(R) + ";\n  " + o + "[i] = (" +
                       keep + ") ? " + in(x) + "[i] : (" + T(y) + ")0;\n";
    perElement(numElements(xs), body);
    return success();
  }

  LogicalResult writeOneHot(OneHotOp oneHot) {
    Value idx = oneHot.getIndices(), y = oneHot.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> ys = shapeOf(y);
    int64_t axis = normalizeAxis(oneHot.getAxis(), ys.size());
    int64_t depth = oneHot.getDepth();
    LineGeometry g = lineOf(ys, axis);
    Type et = elementType(y);
    std::string body =
        "  const long long n = i % " + ll(g.inner) + ", j = (i / " +
        ll(g.inner) + ") % " + ll(g.length) + ", outer = i / " +
        ll(g.length * g.inner) + ";\n  long long k = (long long)" + in(idx) +
        "[outer * " + ll(g.inner) + " + n];\n  if (k < 0) k += " + ll(depth) +
        ";\n  " + o + "[i] = k == j ? " +
        literal(oneHot.getOnValue().convertToDouble(), et) + " : " +
        literal(oneHot.getOffValue().convertToDouble(), et) + ";\n";
    perElement(numElements(ys), body);
    return success();
  }

  LogicalResult writeEinsum(EinsumOp einsum) {
    Value y = einsum.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
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
      return unsupported("with " + Twine(terms.size()) + " terms for " +
                         Twine(inputs.size()) + " inputs");
    // Ellipsis dims become labels '0', '1', ... (right-aligned, broadcast).
    int64_t ellipsisRank = 0;
    for (auto [t, v] : llvm::zip(terms, inputs)) {
      size_t at = t.find("...");
      if (at == std::string::npos)
        continue;
      int64_t letters = t.size() - 3;
      ellipsisRank = std::max<int64_t>(ellipsisRank,
                                       (int64_t)shapeOf(v).size() - letters);
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
    std::map<char, int64_t> size;
    SmallVector<std::string> labels;
    for (auto [t, v] : llvm::zip(terms, inputs)) {
      ArrayRef<int64_t> s = shapeOf(v);
      std::string e = expand(t, s.size());
      if ((int64_t)e.size() != (int64_t)s.size() || ellipsisRank > 10)
        return unsupported("with equation '" + eq +
                           "' that does not match the input ranks");
      for (auto [c, n] : llvm::zip(e, s)) {
        if (!llvm::isAlpha(c) && !llvm::isDigit(c))
          return unsupported("with label '" + Twine(c) + "'");
        auto [it, inserted] = size.insert({c, n});
        if (!inserted && it->second != n) {
          if (it->second == 1)
            it->second = n;
          else if (n != 1)
            return unsupported("with label '" + Twine(c) +
                               "' of different sizes");
        }
      }
      labels.push_back(e);
    }
    std::string outLabels;
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
    ArrayRef<int64_t> ys = shapeOf(y);
    if (outLabels.size() != ys.size())
      return unsupported("whose output labels do not match the result rank");
    for (auto [c, n] : llvm::zip(outLabels, ys))
      if (!size.count(c) || size[c] != n)
        return unsupported("whose output labels do not match the result "
                           "shape");
    std::string summed;
    for (auto [c, n] : size)
      if (outLabels.find(c) == std::string::npos)
        summed += c;
    auto var = [](char c) { return std::string("l_") + c; };
    std::string a = A(y);
    std::string body;
    body += "  long long e_r = i;\n";
    for (int64_t d = (int64_t)outLabels.size() - 1; d >= 0; --d)
      body += "  const long long " + var(outLabels[d]) + " = e_r % " +
              ll(ys[d]) + "; e_r /= " + ll(ys[d]) + ";\n";
    body += "  " + a + " acc = 0;\n";
    for (auto [k, c] : llvm::enumerate(summed))
      body += std::string(2 + 2 * k, ' ') + "for (long long " + var(c) +
              " = 0; " + var(c) + " < " + ll(size[c]) + "; ++" + var(c) +
              ") {\n";
    std::string product = "(" + a + ")1";
    for (auto [e, v] : llvm::zip(labels, inputs)) {
      ArrayRef<int64_t> s = shapeOf(v);
      SmallVector<std::string> c;
      for (char l : e)
        c.push_back(var(l));
      product += " * (" + a + ")" + in(v) + "[" + linearIndex(c, s) + "]";
    }
    body += std::string(2 + 2 * summed.size(), ' ') + "acc += " + product +
            ";\n";
    for (int64_t k = (int64_t)summed.size() - 1; k >= 0; --k)
      body += std::string(2 + 2 * k, ' ') + "}\n";
    body += "  " + o + "[i] = (" + T(y) + ")acc;\n";
    perElement(numElements(ys), body);
    return success();
  }

  LogicalResult writeNLLLoss(NegativeLogLikelihoodLossOp loss) {
    Value x = loss.getInput(), target = loss.getTarget(), y = loss.getOutput();
    std::string o = out(y);
    if (o.empty())
      return success();
    ArrayRef<int64_t> xs = shapeOf(x);
    if (xs.size() < 2)
      return unsupported("on an input of rank below 2");
    int64_t N = xs[0], C = xs[1], D = numElements(xs.drop_front(2));
    Value weight = loss.getWeight();
    std::optional<int64_t> ignore;
    if (auto attr = loss.getIgnoreIndexAttr())
      ignore = attr.getInt();
    StringRef reduction = loss.getReduction();
    if (!llvm::is_contained({"none", "sum", "mean"}, reduction))
      return unsupported("with reduction '" + reduction + "'");
    // Element e = n * D + d: its loss and weight.
    std::string term =
        "    const long long n = e / " + ll(D) + ", d = e % " + ll(D) +
        ";\n    const long long t = (long long)" + in(target) +
        "[e];\n    double w = 0.0, l = 0.0;\n    if (" +
        (ignore ? "t != " + ll(*ignore) + " && " : std::string()) + "t >= 0 && t < " +
        ll(C) + ") {\n      w = " +
        (weight ? "(double)" + in(weight) + "[t]" : std::string("1.0")) +
        ";\n      l = -(double)" + in(x) + "[(n * " + ll(C) + " + t) * " +
        ll(D) + " + d] * w;\n    }\n";
    if (reduction == "none") {
      perElement(N * D, "  const long long e = i;\n  {\n" + term + "    " + o +
                            "[i] = (" + T(y) + ")l;\n  }\n");
      return success();
    }
    std::string body =
        "  __shared__ double scratch[32];\n  double ls = 0.0, ws = 0.0;\n  "
        "for (long long e = threadIdx.x; e < " +
        ll(N * D) + "; e += blockDim.x) {\n" + term +
        "    ls += l;\n    ws += w;\n  }\n  ls = cgc_block_reduce(ls, 0.0, "
        "scratch, cgc_sum_op());\n  ws = cgc_block_reduce(ws, 0.0, scratch, "
        "cgc_sum_op());\n  if (threadIdx.x == 0) " +
        o + "[0] = (" + T(y) + ")(" +
        (reduction == "mean" ? std::string("ls / ws") : std::string("ls")) +
        ");\n";
    perRow(1, kThreads, body);
    return success();
  }

  LogicalResult writeConstants(Value y, ArrayRef<int64_t> values) {
    std::string o = out(y);
    if (o.empty())
      return success();
    SmallVector<std::string> items;
    for (int64_t v : values)
      items.push_back(ll(v));
    if (items.empty()) {
      perElement(0, "");
      return success();
    }
    perElement(values.size(), "  const long long v[] = {" +
                                  llvm::join(items, ", ") + "};\n  " + o +
                                  "[i] = v[i];\n");
    return success();
  }

  LogicalResult writeShape(ShapeOp shape) {
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
      return unsupported("with an unexpected result shape");
    return writeConstants(shape.getOutput(), dims);
  }

  LogicalResult writeSize(SizeOp size) {
    return writeConstants(size.getOutput(),
                          {numElements(shapeOf(size.getInput()))});
  }

  Operation *op;
  ParamResolver &params;
  SmallVector<Launch> launches;
};

} // namespace

FailureOr<SmallVector<Launch>> writeSingleOpKernel(Operation *op,
                                                   ParamResolver &params) {
  return SingleOpWriter(op, params).run();
}

} // namespace codegen
} // namespace cgc
