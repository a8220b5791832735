//===- ReductionOps.cpp - reductions, CumSum, CumProd, TopK ---------------===//

#include "ImportHelpers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Reduce*: axes from the attribute (older opsets) or input 1 (ReduceSum
/// from 13, the others from 18). Empty axes reduce everything unless
/// noop_with_empty_axes, which makes the op the identity.
template <typename OpTy> Results importReduce(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  // An axes input whose type has no elements is known to be empty even when
  // it is not a constant (a graph input of shape [0]).
  FailureOr<std::optional<SmallVector<int64_t>>> axesOr =
      std::optional<SmallVector<int64_t>>{};
  Value axesInput = ctx.input(1);
  if (!axesInput || !tensorType(axesInput).hasStaticShape() ||
      tensorType(axesInput).getNumElements() != 0)
    axesOr = ctx.intsFromInputOrAttr(1, "axes");
  if (failed(axesOr) || ctx.hadAttributeError())
    return failure();
  bool keepdims = ctx.getInt("keepdims", 1) != 0;
  bool noop = ctx.getInt("noop_with_empty_axes", 0) != 0;
  Value input = *x;
  int64_t rank = tensorType(input).getRank();
  SmallVector<int64_t> axes;
  if (!*axesOr || (*axesOr)->empty()) {
    if (noop)
      return SmallVector<Value>{input};
    axes = axesFrom(0, rank);
  } else {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeSortedAxes(ctx, **axesOr, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  }
  if (rank == 0) {
    // Reducing a scalar: reduce it as a 1-element vector.
    FailureOr<Value> vector = reshapeTo(ctx, input, {1});
    if (failed(vector))
      return failure();
    input = *vector;
    axes = {0};
    keepdims = false;
  }
  return single(ctx.create1<OpTy>({input},
                                  {ctx.namedI64Array("axes", axes),
                                   ctx.namedBool("keepdims", keepdims)}));
}

template <typename OpTy> Results importArgReduce(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), tensorType(*x).getRank());
  if (failed(axis))
    return failure();
  return single(ctx.create1<OpTy>(
      {*x}, {ctx.namedI64("axis", *axis),
             ctx.namedBool("keepdims", ctx.getInt("keepdims", 1) != 0),
             ctx.namedBool("select_last_index",
                           ctx.getInt("select_last_index", 0) != 0)}));
}

/// CumSum and CumProd (opset 26).
template <typename OpTy> Results importCumulative(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0];
  std::optional<SmallVector<int64_t>> axisValues = ctx.constInts((*in)[1]);
  if (!axisValues || axisValues->size() != 1) {
    ctx.error() << "the axis input ('" << ctx.node().input(1)
                << "') must be a constant with one integer";
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, axisValues->front(), tensorType(x).getRank());
  if (failed(axis))
    return failure();
  return single(ctx.create1<OpTy>(
      {x},
      {ctx.namedI64("axis", *axis),
       ctx.namedBool("exclusive", ctx.getInt("exclusive", 0) != 0),
       ctx.namedBool("reverse", ctx.getInt("reverse", 0) != 0)},
      {tensorType(x)}));
}

/// TopK: k is an attribute before opset 10, then a constant input.
Results importTopK(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t k;
  if (ctx.opset() < 10) {
    if (!ctx.hasAttr("k")) {
      ctx.error() << "the k attribute is required";
      return failure();
    }
    k = ctx.getInt("k", 0);
  } else {
    FailureOr<Value> kInput = ctx.requiredInput(1);
    if (failed(kInput))
      return failure();
    std::optional<SmallVector<int64_t>> kValues = ctx.constInts(*kInput);
    if (!kValues || kValues->size() != 1) {
      ctx.error() << "k (input '" << ctx.node().input(1)
                  << "') must be a constant with one integer";
      return failure();
    }
    k = kValues->front();
  }
  if (ctx.hadAttributeError())
    return failure();
  if (k < 0) {
    ctx.error() << "k must be non-negative, got " << k;
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", -1), tensorType(*x).getRank());
  if (failed(axis))
    return failure();
  FailureOr<Operation *> op = ctx.create<TopKOp>(
      {*x}, {ctx.namedI64("k", k), ctx.namedI64("axis", *axis),
             ctx.namedBool("largest", ctx.getInt("largest", 1) != 0),
             ctx.namedBool("sorted", ctx.getInt("sorted", 1) != 0)});
  if (failed(op))
    return failure();
  return SmallVector<Value>{(*op)->getResult(0), (*op)->getResult(1)};
}

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

/// Matrices up to this size get a determinant (Laplace expansion: n!
/// products).
constexpr int64_t kMaxDetSize = 4;

/// The determinant of the rows [row, n) and the columns in `columns` (a
/// bit set) of `entries` (entries[i][j]: [...] each), by Laplace expansion
/// along the first row; minors are shared through `memo`.
FailureOr<Value> laplace(NodeContext &ctx,
                         ArrayRef<SmallVector<Value>> entries, int64_t row,
                         unsigned columns, DenseMap<unsigned, Value> &memo) {
  if (Value known = memo.lookup(columns))
    return known;
  int64_t n = entries.size();
  Value sum;
  int sign = 1;
  for (int64_t j = 0; j < n; ++j) {
    if (!(columns & (1u << j)))
      continue;
    FailureOr<Value> term = entries[row][j];
    if (row + 1 < n) {
      FailureOr<Value> minor =
          laplace(ctx, entries, row + 1, columns & ~(1u << j), memo);
      if (failed(minor) || failed(term = ctx.create1<MulOp>({*term, *minor})))
        return failure();
    }
    // The signs alternate over the remaining columns; the first is +.
    FailureOr<Value> next = !sum          ? term
                            : sign > 0 ? ctx.create1<AddOp>({sum, *term})
                                       : ctx.create1<SubOp>({sum, *term});
    if (failed(next))
      return failure();
    sum = *next;
    sign = -sign;
  }
  memo[columns] = sum;
  return sum;
}

/// Det: the determinant of the last two dims (square, up to 4 x 4) by
/// Laplace expansion over the matrix entries.
Results importDet(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  int64_t rank = xt.getRank();
  if (rank < 2 || !xt.hasStaticShape() ||
      xt.getDimSize(rank - 1) != xt.getDimSize(rank - 2) ||
      xt.getDimSize(rank - 1) < 1 || xt.getDimSize(rank - 1) > kMaxDetSize ||
      !isa<FloatType>(xt.getElementType())) {
    ctx.error() << "expects static float [..., n, n] matrices with n from 1 "
                   "to "
                << kMaxDetSize << ", got " << xt;
    return failure();
  }
  int64_t n = xt.getDimSize(rank - 1);
  SmallVector<SmallVector<Value>> entries(n);
  for (int64_t i = 0; i < n; ++i) {
    FailureOr<Value> rowI = takeStep(ctx, *x, rank - 2, i);
    if (failed(rowI))
      return failure();
    for (int64_t j = 0; j < n; ++j) {
      FailureOr<Value> e = takeStep(ctx, *rowI, rank - 2, j);
      if (failed(e))
        return failure();
      entries[i].push_back(*e);
    }
  }
  DenseMap<unsigned, Value> memo;
  return single(laplace(ctx, entries, 0, (1u << n) - 1, memo));
}

} // namespace

void cgc::onnx_import::registerReductionOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("ReduceSum", importReduce<ReduceSumOp>,
      "`cgc.reduce_sum` (axes must be constant)");
  add("ReduceMean", importReduce<ReduceMeanOp>,
      "`cgc.reduce_mean` (axes must be constant)");
  add("ReduceMax", importReduce<ReduceMaxOp>,
      "`cgc.reduce_max` (axes must be constant)");
  add("ReduceMin", importReduce<ReduceMinOp>,
      "`cgc.reduce_min` (axes must be constant)");
  add("ReduceProd", importReduce<ReduceProdOp>,
      "`cgc.reduce_prod` (axes must be constant)");
  add("ReduceL1", importReduce<ReduceL1Op>,
      "`cgc.reduce_l1` (axes must be constant)");
  add("ReduceL2", importReduce<ReduceL2Op>,
      "`cgc.reduce_l2` (axes must be constant)");
  add("ReduceSumSquare", importReduce<ReduceSumSquareOp>,
      "`cgc.reduce_sum_square` (axes must be constant)");
  add("ReduceLogSum", importReduce<ReduceLogSumOp>,
      "`cgc.reduce_log_sum` (axes must be constant)");
  add("ReduceLogSumExp", importReduce<ReduceLogSumExpOp>,
      "`cgc.reduce_log_sum_exp` (axes must be constant)");
  add("ArgMax", importArgReduce<ArgMaxOp>, "`cgc.arg_max`");
  add("ArgMin", importArgReduce<ArgMinOp>, "`cgc.arg_min`");
  add("CumSum", importCumulative<CumSumOp>,
      "`cgc.cumsum` (axis must be constant)");
  add("Det", importDet,
      "Laplace expansion over the entries (`cgc.slice`, mul, add, sub), up "
      "to 4 x 4");
  add("CumProd", importCumulative<CumProdOp>,
      "`cgc.cumprod` (axis must be constant)");
  add("TopK", importTopK, "`cgc.topk` (k must be constant)");
}
