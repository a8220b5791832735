//===- CgcGradients.cpp - gradient rules of the cgc ops -------------------===//
//
// One rule per differentiable op, attached as its DifferentiableOpInterface.
// A rule reads the op's operands and results (the forward values stay live
// until the backward pass reads them) and writes the operands' gradients in
// ordinary cgc ops through GradientBuilder, so a training step is fused and
// planned like inference. Rules build only the gradients that are wanted:
// the first layer's input needs none.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/Gradients.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace cgc;

//===----------------------------------------------------------------------===//
// GradientBuilder
//===----------------------------------------------------------------------===//

Value GradientBuilder::scalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element = b.getFloatAttr(elementType, value);
  return ConstantOp::create(b, loc,
                            DenseElementsAttr::get(type, element))
      .getResult();
}

Value GradientBuilder::splat(double value, RankedTensorType type) {
  Attribute element = b.getFloatAttr(type.getElementType(), value);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, element))
      .getResult();
}

#define CGC_BINARY(NAME, OP)                                                   \
  Value GradientBuilder::NAME(Value lhs, Value rhs) {                          \
    return OP::create(b, loc, lhs, rhs).getResult();                           \
  }
CGC_BINARY(add, AddOp)
CGC_BINARY(sub, SubOp)
CGC_BINARY(mul, MulOp)
CGC_BINARY(div, DivOp)
CGC_BINARY(pow, PowOp)
CGC_BINARY(greater, GreaterOp)
CGC_BINARY(greaterOrEqual, GreaterEqualOp)
CGC_BINARY(lessOrEqual, LessEqualOp)
CGC_BINARY(logicalAnd, AndOp)
CGC_BINARY(logicalOr, OrOp)
CGC_BINARY(equal, EqualOp)
CGC_BINARY(matmul, MatMulOp)
#undef CGC_BINARY

#define CGC_UNARY(NAME, OP)                                                    \
  Value GradientBuilder::NAME(Value a) {                                       \
    return OP::create(b, loc, a).getResult();                                  \
  }
CGC_UNARY(neg, NegOp)
CGC_UNARY(abs, AbsOp)
CGC_UNARY(exp, ExpOp)
CGC_UNARY(log, LogOp)
CGC_UNARY(sqrt, SqrtOp)
CGC_UNARY(reciprocal, ReciprocalOp)
CGC_UNARY(erf, ErfOp)
CGC_UNARY(tanh, TanhOp)
CGC_UNARY(sign, SignOp)
CGC_UNARY(logicalNot, NotOp)
#undef CGC_UNARY

Value GradientBuilder::where(Value condition, Value a, Value other) {
  return WhereOp::create(b, loc, condition, a, other).getResult();
}

Value GradientBuilder::cast(Value a, Type elementType) {
  if (typeOf(a).getElementType() == elementType)
    return a;
  return CastOp::create(b, loc, typeOf(a).clone(elementType), a)
      .getResult();
}

Value GradientBuilder::transpose(Value a, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= (int64_t)i == p;
  if (identity)
    return a;
  return TransposeOp::create(b, loc, a, perm).getResult();
}

Value GradientBuilder::product(Value x, Value y, bool transX, bool transY) {
  if (typeOf(x).getRank() == 2 && typeOf(y).getRank() == 2 &&
      (transX || transY))
    return GemmOp::create(b, loc, x, y, Value(), llvm::APFloat(1.0),
                          llvm::APFloat(1.0), transX, transY)
        .getResult();
  return matmul(transX ? transposeLastTwo(x) : x,
                transY ? transposeLastTwo(y) : y);
}

Value GradientBuilder::scatterAdd(Value into, Value tuples, Value updates) {
  return ScatterNDOp::create(b, loc, into, tuples, updates,
                             b.getStringAttr("add"))
      .getResult();
}

Value GradientBuilder::oneHot(Value indices, int64_t depth, Type elementType) {
  SmallVector<int64_t> shape(shapeOf(indices));
  shape.push_back(depth);
  return OneHotOp::create(b, loc, RankedTensorType::get(shape, elementType),
                          indices, b.getI64IntegerAttr(depth),
                          b.getI64IntegerAttr(shape.size() - 1),
                          b.getF64FloatAttr(0),
                          b.getF64FloatAttr(1))
      .getResult();
}

Value GradientBuilder::transposeLastTwo(Value a) {
  int64_t rank = typeOf(a).getRank();
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(a, perm);
}

Value GradientBuilder::reshape(Value a, ArrayRef<int64_t> shape) {
  if (shapeOf(a) == shape)
    return a;
  return ReshapeOp::create(b, loc, typeOf(a).clone(shape), a, Value(),
                           /*allowzero=*/false)
      .getResult();
}

Value GradientBuilder::expand(Value a, ArrayRef<int64_t> shape) {
  if (shapeOf(a) == shape)
    return a;
  return ExpandOp::create(b, loc, typeOf(a).clone(shape), a).getResult();
}

Value GradientBuilder::reduceSum(Value a, ArrayRef<int64_t> axes,
                                 bool keepdims) {
  if (axes.empty())
    return a;
  return ReduceSumOp::create(b, loc, a, axes, keepdims).getResult();
}

Value GradientBuilder::reduceMean(Value a, ArrayRef<int64_t> axes,
                                  bool keepdims) {
  if (axes.empty())
    return a;
  return ReduceMeanOp::create(b, loc, a, axes, keepdims).getResult();
}

Value GradientBuilder::slice(Value a, ArrayRef<int64_t> starts,
                             ArrayRef<int64_t> ends, ArrayRef<int64_t> steps) {
  SmallVector<int64_t> ones(starts.size(), 1);
  if (steps.empty())
    steps = ones;
  bool whole = llvm::all_of(steps, [](int64_t s) { return s == 1; });
  for (auto [d, n] : llvm::enumerate(shapeOf(a)))
    whole &= starts[d] == 0 && ends[d] == n;
  if (whole)
    return a;
  return SliceOp::create(b, loc, a, starts, ends, steps).getResult();
}

Value GradientBuilder::pad(Value a, ArrayRef<int64_t> pads, double value) {
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return a;
  return PadOp::create(b, loc, a, b.getDenseI64ArrayAttr(pads),
                       b.getStringAttr("constant"), b.getF64FloatAttr(value))
      .getResult();
}

Value GradientBuilder::sumTo(Value g, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = shapeOf(g);
  if (from == shape)
    return g;
  // Leading dims the operand did not have, then dims it had as 1.
  size_t extra = from.size() - shape.size();
  SmallVector<int64_t> axes;
  for (size_t d = 0; d < from.size(); ++d)
    if (d < extra || (shape[d - extra] == 1 && from[d] != 1))
      axes.push_back(d);
  // Summing dims of size 1 (a batch of one) moves no data: a view.
  if (llvm::all_of(axes, [&](int64_t d) { return from[d] == 1; }))
    return reshape(g, shape);
  return reshape(reduceSum(g, axes, /*keepdims=*/true), shape);
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

namespace {

/// What a rule sees: the op's values, the incoming gradient of its (first)
/// result, which operand gradients to build, and where to put them.
struct RuleContext {
  GradientBuilder g;
  Value dy;                 ///< the first result's gradient (null: none)
  ArrayRef<Value> dys;      ///< every result's, for ops with several
  ArrayRef<bool> wanted;
  SmallVectorImpl<Value> &out;

  /// Rules build an operand's gradient only where want(i): nothing erases
  /// dead ops later, and an unwanted sum stays in the step as a kernel
  /// (GPT-2's GELU: the gradient of its constant 1, a full sum over the MLP
  /// activations in one block, 84 us a layer at batch 8 on an H100).
  bool want(unsigned i) const { return i < wanted.size() && wanted[i]; }
  void set(unsigned i, Value v) {
    if (want(i))
      out[i] = v;
  }
};

using ShapeRef = ArrayRef<int64_t>;

ShapeRef shapeOf(Value v) { return GradientBuilder::shapeOf(v); }

LogicalResult rule(AddOp op, RuleContext &c) {
  if (c.want(0))
    c.set(0, c.g.sumTo(c.dy, shapeOf(op.getLhs())));
  if (c.want(1))
    c.set(1, c.g.sumTo(c.dy, shapeOf(op.getRhs())));
  return success();
}

LogicalResult rule(SubOp op, RuleContext &c) {
  if (c.want(0))
    c.set(0, c.g.sumTo(c.dy, shapeOf(op.getLhs())));
  if (c.want(1))
    c.set(1, c.g.sumTo(c.g.neg(c.dy), shapeOf(op.getRhs())));
  return success();
}

LogicalResult rule(MulOp op, RuleContext &c) {
  if (op.getLhs() == op.getRhs()) {
    // x * x (a variance, a squared error): one gradient, 2 dy x, where the
    // general rule would build dy x for each operand and then their sum.
    if (c.want(0))
      c.set(0, c.g.sumTo(c.g.scale(c.g.mul(c.dy, op.getLhs()), 2.0),
                         shapeOf(op.getLhs())));
    return success();
  }
  if (c.want(0))
    c.set(0, c.g.sumTo(c.g.mul(c.dy, op.getRhs()), shapeOf(op.getLhs())));
  if (c.want(1))
    c.set(1, c.g.sumTo(c.g.mul(c.dy, op.getLhs()), shapeOf(op.getRhs())));
  return success();
}

LogicalResult rule(DivOp op, RuleContext &c) {
  if (c.want(0))
    c.set(0, c.g.sumTo(c.g.div(c.dy, op.getRhs()), shapeOf(op.getLhs())));
  if (c.want(1)) {
    // d(a/b)/db = -(a/b)/b.
    Value t = c.g.div(c.g.mul(c.dy, op.getResult()), op.getRhs());
    c.set(1, c.g.sumTo(c.g.neg(t), shapeOf(op.getRhs())));
  }
  return success();
}

LogicalResult rule(PowOp op, RuleContext &c) {
  Value a = op.getLhs(), e = op.getRhs();
  if (c.want(0)) {
    Value one = c.g.scalarLike(1.0, e);
    Value d = c.g.mul(e, c.g.pow(a, c.g.sub(e, one)));
    c.set(0, c.g.sumTo(c.g.mul(c.dy, d), shapeOf(a)));
  }
  if (c.want(1))
    c.set(1, c.g.sumTo(c.g.mul(c.dy, c.g.mul(op.getResult(), c.g.log(a))),
                       shapeOf(e)));
  return success();
}

LogicalResult rule(NegOp, RuleContext &c) {
  c.set(0, c.g.neg(c.dy));
  return success();
}

LogicalResult rule(ReluOp op, RuleContext &c) {
  Value x = op.getInput();
  c.set(0, c.g.where(c.g.greater(x, c.g.scalarLike(0.0, x)), c.dy,
                     c.g.scalarLike(0.0, x)));
  return success();
}

LogicalResult rule(SigmoidOp op, RuleContext &c) {
  Value y = op.getResult();
  Value oneMinus = c.g.sub(c.g.scalarLike(1.0, y), y);
  c.set(0, c.g.mul(c.dy, c.g.mul(y, oneMinus)));
  return success();
}

LogicalResult rule(TanhOp op, RuleContext &c) {
  Value y = op.getResult();
  c.set(0, c.g.mul(c.dy, c.g.sub(c.g.scalarLike(1.0, y), c.g.mul(y, y))));
  return success();
}

LogicalResult rule(ExpOp op, RuleContext &c) {
  c.set(0, c.g.mul(c.dy, op.getResult()));
  return success();
}

LogicalResult rule(LogOp op, RuleContext &c) {
  c.set(0, c.g.div(c.dy, op.getInput()));
  return success();
}

LogicalResult rule(SqrtOp op, RuleContext &c) {
  // d sqrt(x) = 1 / (2 sqrt(x)).
  c.set(0, c.g.div(c.g.scale(c.dy, 0.5), op.getResult()));
  return success();
}

LogicalResult rule(ReciprocalOp op, RuleContext &c) {
  Value y = op.getResult();
  c.set(0, c.g.neg(c.g.mul(c.dy, c.g.mul(y, y))));
  return success();
}

LogicalResult rule(AbsOp op, RuleContext &c) {
  c.set(0, c.g.mul(c.dy, c.g.sign(op.getInput())));
  return success();
}

LogicalResult rule(ErfOp op, RuleContext &c) {
  // d erf(x) = 2/sqrt(pi) exp(-x^2).
  Value x = op.getInput();
  Value e = c.g.exp(c.g.neg(c.g.mul(x, x)));
  c.set(0, c.g.mul(c.dy, c.g.scale(e, 2.0 / std::sqrt(M_PI))));
  return success();
}

LogicalResult rule(GeluOp op, RuleContext &c) {
  Value x = op.getInput();
  Value half = c.g.scalarLike(0.5, x), one = c.g.scalarLike(1.0, x);
  Value d;
  if (op.getApproximate() == "tanh") {
    // y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
    double k = std::sqrt(2.0 / M_PI);
    Value x2 = c.g.mul(x, x);
    Value u = c.g.scale(c.g.add(x, c.g.scale(c.g.mul(x2, x), 0.044715)), k);
    Value t = c.g.tanh(u);
    Value du = c.g.scale(c.g.add(one, c.g.scale(x2, 3 * 0.044715)), k);
    Value sech2 = c.g.sub(one, c.g.mul(t, t));
    d = c.g.add(c.g.mul(half, c.g.add(one, t)),
                c.g.mul(c.g.mul(half, x), c.g.mul(sech2, du)));
  } else {
    // y = x Phi(x): Phi(x) + x phi(x).
    Value cdf = c.g.mul(half, c.g.add(one, c.g.erf(c.g.scale(x, M_SQRT1_2))));
    Value pdf = c.g.scale(c.g.exp(c.g.scale(c.g.mul(x, x), -0.5)),
                          1.0 / std::sqrt(2.0 * M_PI));
    d = c.g.add(cdf, c.g.mul(x, pdf));
  }
  c.set(0, c.g.mul(c.dy, d));
  return success();
}

LogicalResult rule(CastOp op, RuleContext &c) {
  Type from = GradientBuilder::typeOf(op.getInput()).getElementType();
  if (!isa<FloatType>(from))
    return success(); // an integer input carries no gradient
  c.set(0, c.g.cast(c.dy, from));
  return success();
}

LogicalResult rule(WhereOp op, RuleContext &c) {
  Value zero = c.g.scalarLike(0.0, c.dy);
  if (c.want(1))
    c.set(1, c.g.sumTo(c.g.where(op.getCondition(), c.dy, zero),
                       shapeOf(op.getTrueValue())));
  if (c.want(2))
    c.set(2, c.g.sumTo(c.g.where(op.getCondition(), zero, c.dy),
                       shapeOf(op.getFalseValue())));
  return success();
}

LogicalResult rule(ClipOp op, RuleContext &c) {
  Value x = op.getInput();
  Value inside;
  auto both = [&](Value cond) {
    inside = inside ? c.g.logicalAnd(inside, cond) : cond;
  };
  if (std::optional<APFloat> lo = op.getMin())
    both(c.g.greaterOrEqual(x, c.g.scalarLike(lo->convertToDouble(), x)));
  if (std::optional<APFloat> hi = op.getMax())
    both(c.g.lessOrEqual(x, c.g.scalarLike(hi->convertToDouble(), x)));
  c.set(0, inside ? c.g.where(inside, c.dy, c.g.scalarLike(0.0, x)) : c.dy);
  return success();
}

/// numpy matmul: 1-d operands promoted to matrices, batch dims broadcast.
LogicalResult rule(MatMulOp op, RuleContext &c) {
  Value a = op.getLhs(), b = op.getRhs();
  ShapeRef aShape = shapeOf(a), bShape = shapeOf(b);
  Value a2 = aShape.size() == 1 ? c.g.reshape(a, {1, aShape[0]}) : a;
  Value b2 = bShape.size() == 1 ? c.g.reshape(b, {bShape[0], 1}) : b;
  // The result as the promoted operands give it.
  SmallVector<int64_t> promoted(shapeOf(c.dy));
  if (aShape.size() == 1)
    promoted.insert(promoted.end() - (bShape.size() == 1 ? 0 : 1), 1);
  if (bShape.size() == 1)
    promoted.push_back(1);
  Value dy = c.g.reshape(c.dy, promoted);
  if (c.want(0)) {
    Value da = c.g.product(dy, b2, false, true);
    c.set(0, c.g.reshape(c.g.sumTo(da, shapeOf(a2)), aShape));
  }
  if (c.want(1)) {
    Value db;
    if (shapeOf(b2).size() == 2 && shapeOf(a2).size() > 2) {
      // A weight shared by every batch entry: one product over all rows.
      int64_t k = shapeOf(a2).back(), n = shapeOf(dy).back();
      int64_t rows =
          k ? GradientBuilder::typeOf(a2).getNumElements() / k : 0;
      db = c.g.product(c.g.reshape(a2, {rows, k}), c.g.reshape(dy, {rows, n}),
                       true, false);
    } else {
      db = c.g.sumTo(c.g.product(a2, dy, true, false), shapeOf(b2));
    }
    c.set(1, c.g.reshape(db, bShape));
  }
  return success();
}

/// y = alpha op(A) op(B) + beta C.
LogicalResult rule(GemmOp op, RuleContext &c) {
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  Value a = op.getA(), b = op.getB();
  bool transA = op.getTransA(), transB = op.getTransB();
  Value dy = c.g.scale(c.dy, alpha);
  // dA = dy op(B)^T (its transpose when A is stored transposed), dB =
  // op(A)^T dy (likewise): GEMMs that read their operands transposed.
  if (c.want(0))
    c.set(0, transA ? c.g.product(b, dy, transB, true)
                    : c.g.product(dy, b, false, !transB));
  if (c.want(1))
    c.set(1, transB ? c.g.product(dy, a, true, transA)
                    : c.g.product(a, dy, !transA, false));
  if (op.getC() && c.want(2))
    c.set(2, c.g.sumTo(c.g.scale(c.dy, beta), shapeOf(op.getC())));
  return success();
}

LogicalResult rule(TransposeOp op, RuleContext &c) {
  ArrayRef<int64_t> perm = op.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  c.set(0, c.g.transpose(c.dy, inverse));
  return success();
}

LogicalResult rule(ReshapeOp op, RuleContext &c) {
  c.set(0, c.g.reshape(c.dy, shapeOf(op.getInput())));
  return success();
}

LogicalResult rule(ExpandOp op, RuleContext &c) {
  c.set(0, c.g.sumTo(c.dy, shapeOf(op.getInput())));
  return success();
}

/// The gradient of a reduction's result spread back over the input's
/// shape: the reduced dims restored as 1, then broadcast.
Value spreadOver(RuleContext &c, Value dy, ShapeRef input,
                 ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(input);
  for (int64_t axis : axes)
    kept[axis] = 1;
  return c.g.expand(c.g.reshape(dy, kept), input);
}

LogicalResult rule(ReduceSumOp op, RuleContext &c) {
  c.set(0, spreadOver(c, c.dy, shapeOf(op.getInput()), op.getAxes()));
  return success();
}

LogicalResult rule(ReduceMeanOp op, RuleContext &c) {
  ShapeRef input = shapeOf(op.getInput());
  int64_t count = 1;
  for (int64_t axis : op.getAxes())
    count *= input[axis];
  c.set(0, spreadOver(c, c.g.scale(c.dy, 1.0 / count), input, op.getAxes()));
  return success();
}

LogicalResult rule(SoftmaxOp op, RuleContext &c) {
  // dx = y (dy - sum(dy y)).
  Value y = op.getResult();
  int64_t axis = op.getAxis();
  Value dot = c.g.reduceSum(c.g.mul(c.dy, y), {axis}, /*keepdims=*/true);
  c.set(0, c.g.mul(y, c.g.sub(c.dy, dot)));
  return success();
}

LogicalResult rule(LogSoftmaxOp op, RuleContext &c) {
  // dx = dy - softmax(x) sum(dy).
  int64_t axis = op.getAxis();
  Value total = c.g.reduceSum(c.dy, {axis}, /*keepdims=*/true);
  c.set(0, c.g.sub(c.dy, c.g.mul(c.g.exp(op.getResult()), total)));
  return success();
}

/// Normalized over the axes from `axis` on. The input's gradient is one
/// cgc.layer_norm_grad (one kernel that recomputes the row statistics);
/// scale's and bias's are row sums of dy xhat and dy, xhat = layer_norm(x)
/// with a scale of ones (one norm kernel).
LogicalResult rule(LayerNormOp op, RuleContext &c) {
  Value x = op.getInput();
  OpBuilder &b = c.g.builder();
  Location loc = c.g.location();
  if (c.want(0))
    c.set(0, LayerNormGradOp::create(b, loc, x, op.getScale(), c.dy,
                                     op.getAxis(), op.getEpsilon())
                 .getResult());
  bool wantScale = c.want(1), wantBias = op.getBias() && c.want(2);
  if (wantScale) {
    Value ones = c.g.splat(1.0, GradientBuilder::typeOf(op.getScale()));
    Value xhat = LayerNormOp::create(b, loc, x, ones, Value(), op.getAxis(),
                                     op.getEpsilon())
                     .getResult();
    c.set(1, c.g.sumTo(c.g.mul(c.dy, xhat), shapeOf(op.getScale())));
  }
  if (wantBias)
    c.set(2, c.g.sumTo(c.dy, shapeOf(op.getBias())));
  return success();
}

LogicalResult rule(ConcatOp op, RuleContext &c) {
  int64_t rank = shapeOf(c.dy).size(), axis = op.getAxis();
  SmallVector<int64_t> starts(rank, 0), ends(shapeOf(c.dy));
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    int64_t size = shapeOf(input)[axis];
    starts[axis] = offset;
    ends[axis] = offset + size;
    if (c.want(i))
      c.set(i, c.g.slice(c.dy, starts, ends));
    offset += size;
  }
  return success();
}

/// The pieces' gradients side by side; a piece that does not reach the
/// loss contributes zeros.
LogicalResult rule(SplitOp op, RuleContext &c) {
  SmallVector<Value> pieces;
  for (auto [result, dy] : llvm::zip(op.getOutputs(), c.dys))
    pieces.push_back(dy ? dy : c.g.zeros(GradientBuilder::typeOf(result)));
  c.set(0, ConcatOp::create(c.g.builder(), c.g.location(), pieces,
                            op.getAxis())
               .getResult());
  return success();
}

LogicalResult rule(SliceOp op, RuleContext &c) {
  ShapeRef input = shapeOf(op.getInput());
  SmallVector<int64_t> pads(2 * input.size(), 0);
  for (size_t d = 0; d < input.size(); ++d) {
    if (op.getSteps()[d] != 1)
      return op.emitError() << "no gradient rule for a slice with step "
                            << op.getSteps()[d] << " (only step 1)";
    int64_t start = std::clamp<int64_t>(op.getStarts()[d], 0, input[d]);
    pads[d] = start;
    pads[input.size() + d] = input[d] - start - shapeOf(c.dy)[d];
  }
  c.set(0, c.g.pad(c.dy, pads));
  return success();
}

/// The gradient of the gathered slices, added into zeros of the input's
/// shape at the indices they came from (a slice gathered twice gets both):
/// an embedding's gradient. The gathered axis is moved first so the
/// indices are ScatterND tuples of one element.
/// The largest one-hot matrix (picks x table rows) Gather's gradient
/// builds for a GEMM: 4M elements, 16 MB in fp32; larger tables of many
/// picks take the scatter.
constexpr int64_t kMaxOneHotElements = int64_t(1) << 22;

LogicalResult rule(GatherOp op, RuleContext &c) {
  if (!c.want(0))
    return success();
  Value data = op.getInput();
  ShapeRef ds = shapeOf(data);
  int64_t rank = ds.size(), axis = op.getAxis() < 0 ? op.getAxis() + rank
                                                    : op.getAxis();
  Value idx = c.g.cast(op.getIndices(),
                       IntegerType::get(op.getContext(), 64));
  int64_t q = shapeOf(idx).size();
  SmallVector<int64_t> tupleShape(shapeOf(idx));
  tupleShape.push_back(1);
  Value tuples = c.g.reshape(idx, tupleShape);
  // data [d_<axis, n, d_>axis] -> [n, d_<axis, d_>axis]; dy [d_<axis,
  // i..., d_>axis] -> [i..., d_<axis, d_>axis].
  SmallVector<int64_t> dataPerm{axis}, dyPerm, movedShape{ds[axis]};
  for (int64_t i = 0; i < q; ++i)
    dyPerm.push_back(axis + i);
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis)
      continue;
    dataPerm.push_back(d);
    movedShape.push_back(ds[d]);
    dyPerm.push_back(d < axis ? d : d - 1 + q);
  }
  auto movedType = GradientBuilder::typeOf(data).clone(movedShape);
  Value moved = c.g.transpose(c.dy, dyPerm);
  int64_t picks = GradientBuilder::typeOf(idx).getNumElements();
  int64_t rows = movedShape.front(),
          rest = rows ? movedType.getNumElements() / rows : 0;
  Value summed;
  if (rows * picks <= kMaxOneHotElements) {
    // An embedding table's gradient as one GEMM: onehot(ids)^T dy, which
    // adds the rows of dy picking the same entry in a fixed order (the
    // scatter's deterministic form compares every pair of picks).
    Value hot = c.g.oneHot(c.g.reshape(idx, {picks}), rows,
                           movedType.getElementType());
    summed = c.g.reshape(c.g.product(hot, c.g.reshape(moved, {picks, rest}),
                                     /*transX=*/true, /*transY=*/false),
                         movedShape);
  } else {
    summed = c.g.scatterAdd(c.g.zeros(movedType), tuples, moved);
  }
  SmallVector<int64_t> back(rank);
  for (int64_t i = 0; i < rank; ++i)
    back[dataPerm[i]] = i;
  c.set(0, c.g.transpose(summed, back));
  return success();
}


//===----------------------------------------------------------------------===//
// Convolution, pooling and batch normalization (N x C x spatial...)
//===----------------------------------------------------------------------===//

/// The spatial dims of an N x C x ... shape.
ShapeRef spatialOf(Value v) { return shapeOf(v).drop_front(2); }

/// The permutation swapping dims 0 and 1 (N x C -> C x N).
SmallVector<int64_t> swapFirstTwo(size_t rank) {
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[1]);
  return perm;
}

/// Channels [begin, end) of an N x C x ... tensor.
Value channels(GradientBuilder &g, Value v, int64_t begin, int64_t end) {
  SmallVector<int64_t> starts(shapeOf(v).size(), 0), ends(shapeOf(v));
  starts[1] = begin;
  ends[1] = end;
  return g.slice(v, starts, ends);
}

/// y = conv(x, w) + b. dx is the transposed convolution of dy by the same
/// weight (output padding restores the rows the strides dropped); dw of
/// each group is a convolution of x by dy with the batch as the reduced
/// channel (x as C x N x ..., dy as M x N x ..., strides and dilations
/// swapped), cut to the kernel's size; db sums dy over all but channels.
LogicalResult rule(ConvOp op, RuleContext &c) {
  // --cgc-channels-last runs after differentiation, so a channels-last
  // conv here is one written by hand.
  if (op.getChannelsLast())
    return op.emitError() << "no gradient rule for a channels-last conv";
  Value x = op.getInput(), w = op.getWeight();
  ShapeRef xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(c.dy);
  size_t spatial = xs.size() - 2;
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(),
                    dilations = op.getDilations();
  int64_t group = op.getGroup();
  OpBuilder &b = c.g.builder();
  if (c.want(0)) {
    SmallVector<int64_t> outputPadding;
    for (size_t d = 0; d < spatial; ++d) {
      int64_t made = (ys[2 + d] - 1) * strides[d] - pads[d] -
                     pads[spatial + d] + dilations[d] * (ws[2 + d] - 1) + 1;
      outputPadding.push_back(xs[2 + d] - made);
    }
    auto dx = ConvTransposeOp::create(b, c.g.location(), c.dy, w, Value(),
                                      strides, pads, dilations, outputPadding,
                                      group);
    if (dx.getType() != x.getType())
      return op.emitError() << "the input gradient came out as "
                            << dx.getType() << ", not " << x.getType();
    c.set(0, dx.getResult());
  }
  if (c.want(1)) {
    int64_t cg = xs[1] / group, mg = ws[0] / group;
    SmallVector<int64_t> swap = swapFirstTwo(xs.size());
    SmallVector<Value> perGroup;
    for (int64_t k = 0; k < group; ++k) {
      Value xt = c.g.transpose(channels(c.g, x, k * cg, (k + 1) * cg), swap);
      Value dyt =
          c.g.transpose(channels(c.g, c.dy, k * mg, (k + 1) * mg), swap);
      Value full = ConvOp::create(b, c.g.location(), xt, dyt, Value(),
                                  dilations, pads, strides, /*group=*/1)
                       .getResult();
      SmallVector<int64_t> starts(xs.size(), 0), ends(shapeOf(full));
      for (size_t d = 0; d < spatial; ++d)
        ends[2 + d] = ws[2 + d];
      perGroup.push_back(c.g.transpose(c.g.slice(full, starts, ends), swap));
    }
    c.set(1, perGroup.size() == 1
                 ? perGroup.front()
                 : ConcatOp::create(b, c.g.location(), perGroup, 0)
                       .getResult());
  }
  if (op.getBias() && c.want(2)) {
    SmallVector<int64_t> axes{0};
    for (size_t d = 0; d < spatial; ++d)
      axes.push_back(2 + d);
    c.set(2, c.g.reduceSum(c.dy, axes, /*keepdims=*/false));
  }
  return success();
}

/// A pooling window's geometry: the input padded so that every tap of
/// every output is inside it (ceil_mode may reach past the end pad).
struct PoolWindow {
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padded, out;

  template <typename PoolOp>
  static PoolWindow of(PoolOp op, Value dy) {
    PoolWindow w;
    ShapeRef in = spatialOf(op.getInput());
    size_t spatial = in.size();
    w.kernel.assign(op.getKernelShape().begin(), op.getKernelShape().end());
    w.strides.assign(op.getStrides().begin(), op.getStrides().end());
    w.dilations.assign(op.getDilations().begin(), op.getDilations().end());
    w.out.assign(spatialOf(dy).begin(), spatialOf(dy).end());
    for (size_t d = 0; d < spatial; ++d) {
      w.padBegin.push_back(op.getPads()[d]);
      int64_t reach = (w.out[d] - 1) * w.strides[d] +
                      (w.kernel[d] - 1) * w.dilations[d] + 1;
      w.padded.push_back(std::max(
          in[d] + op.getPads()[d] + op.getPads()[spatial + d], reach));
    }
    return w;
  }

  /// Every tap offset (per spatial dim, in kernel elements), row-major:
  /// the order a pool scans its window in.
  SmallVector<SmallVector<int64_t>> taps() const {
    SmallVector<SmallVector<int64_t>> all{{}};
    for (int64_t k : kernel) {
      SmallVector<SmallVector<int64_t>> next;
      for (const auto &prefix : all)
        for (int64_t i = 0; i < k; ++i) {
          next.push_back(prefix);
          next.back().push_back(i);
        }
      all = std::move(next);
    }
    return all;
  }

  /// The padded input's values that tap `tap` of every output reads
  /// (N x C x out...): a strided slice.
  Value read(GradientBuilder &g, Value padded, ArrayRef<int64_t> tap) const {
    ShapeRef shape = shapeOf(padded);
    SmallVector<int64_t> starts{0, 0}, ends{shape[0], shape[1]}, steps{1, 1};
    for (size_t d = 0; d < tap.size(); ++d) {
      starts.push_back(tap[d] * dilations[d]);
      ends.push_back(starts.back() + (out[d] - 1) * strides[d] + 1);
      steps.push_back(strides[d]);
    }
    return g.slice(padded, starts, ends, steps);
  }

  /// `v` (N x C x out...) placed where tap `tap` read it in the padded
  /// input, zeros elsewhere: the strides' gaps inserted by a reshape, a pad
  /// and a reshape, then the tap's offset by a pad.
  Value place(GradientBuilder &g, Value v, ArrayRef<int64_t> tap) const {
    ShapeRef shape = shapeOf(v);
    size_t spatial = tap.size();
    // N x C x (out, 1)... padded at the end of each unit dim to
    // N x C x (out, stride)..., then merged to N x C x (out * stride)...
    size_t splitRank = 2 + 2 * spatial;
    SmallVector<int64_t> split{shape[0], shape[1]}, gaps(2 * splitRank, 0),
        spread{shape[0], shape[1]};
    for (size_t d = 0; d < spatial; ++d) {
      split.append({out[d], 1});
      gaps[splitRank + 2 + 2 * d + 1] = strides[d] - 1;
      spread.push_back(out[d] * strides[d]);
    }
    Value spaced = g.reshape(g.pad(g.reshape(v, split), gaps), spread);
    SmallVector<int64_t> pads(2 * (2 + spatial), 0);
    SmallVector<int64_t> starts(2 + spatial, 0), ends{shape[0], shape[1]};
    for (size_t d = 0; d < spatial; ++d) {
      int64_t begin = tap[d] * dilations[d];
      pads[2 + d] = begin;
      pads[2 + spatial + 2 + d] =
          std::max<int64_t>(0, padded[d] - begin - spread[2 + d]);
      ends.push_back(padded[d]);
    }
    return g.slice(g.pad(spaced, pads), starts, ends);
  }

  /// The input's part of a gradient over the padded input.
  Value unpad(GradientBuilder &g, Value v, ShapeRef input) const {
    SmallVector<int64_t> starts{0, 0}, ends{input[0], input[1]};
    for (size_t d = 0; d < padBegin.size(); ++d) {
      starts.push_back(padBegin[d]);
      ends.push_back(padBegin[d] + input[2 + d]);
    }
    return g.slice(v, starts, ends);
  }

  /// The pads taking the input to the padded shape.
  SmallVector<int64_t> padsOf(ShapeRef input) const {
    size_t spatial = padBegin.size();
    SmallVector<int64_t> pads(2 * (2 + spatial), 0);
    for (size_t d = 0; d < spatial; ++d) {
      pads[2 + d] = padBegin[d];
      pads[2 + spatial + 2 + d] = padded[d] - padBegin[d] - input[2 + d];
    }
    return pads;
  }
};

/// Each output's gradient goes to the first tap (in scan order) that holds
/// the window's maximum, as PyTorch's max pooling routes it; the padding
/// is -inf, so it never holds one.
LogicalResult rule(MaxPoolOp op, RuleContext &c) {
  if (!c.want(0))
    return success();
  Value x = op.getInput();
  PoolWindow w = PoolWindow::of(op, c.dy);
  Value padded = c.g.pad(x, w.padsOf(shapeOf(x)),
                         -std::numeric_limits<double>::infinity());
  Value zero = c.g.scalarLike(0.0, c.dy), taken, sum;
  SmallVector<SmallVector<int64_t>> taps = w.taps();
  for (auto [i, tap] : llvm::enumerate(taps)) {
    Value hit = c.g.equal(w.read(c.g, padded, tap), op.getResult());
    if (taken)
      hit = c.g.logicalAnd(hit, c.g.logicalNot(taken));
    // The last tap's mask is read by no later tap (it would be a dead op).
    if (i + 1 < taps.size())
      taken = taken ? c.g.logicalOr(taken, hit) : hit;
    Value placed = w.place(c.g, c.g.where(hit, c.dy, zero), tap);
    sum = sum ? c.g.add(sum, placed) : placed;
  }
  c.set(0, w.unpad(c.g, sum, shapeOf(x)));
  return success();
}

/// Each output's gradient, divided by the count the average took (the
/// valid taps, or with count_include_pad those inside the padded input),
/// goes to every tap of its window.
LogicalResult rule(AveragePoolOp op, RuleContext &c) {
  if (!c.want(0))
    return success();
  Value x = op.getInput();
  ShapeRef in = spatialOf(x);
  PoolWindow w = PoolWindow::of(op, c.dy);
  size_t spatial = in.size();
  // The count is a product of per-dim counts: 1 x 1 x out... constants.
  SmallVector<int64_t> countShape{1, 1};
  llvm::append_range(countShape, w.out);
  SmallVector<double> inverse(1, 1.0);
  for (size_t d = 0; d < spatial; ++d) {
    int64_t limit = op.getCountIncludePad()
                        ? in[d] + op.getPads()[d] + op.getPads()[spatial + d]
                        : in[d];
    int64_t shift = op.getCountIncludePad() ? 0 : w.padBegin[d];
    SmallVector<double> next;
    for (double before : inverse)
      for (int64_t o = 0; o < w.out[d]; ++o) {
        int64_t count = 0;
        for (int64_t k = 0; k < w.kernel[d]; ++k) {
          int64_t at = o * w.strides[d] + k * w.dilations[d] - shift;
          count += at >= 0 && at < limit;
        }
        next.push_back(count ? before / count : 0.0);
      }
    inverse = std::move(next);
  }
  auto countType = GradientBuilder::typeOf(c.dy).clone(countShape);
  SmallVector<Attribute> values;
  for (double v : inverse)
    values.push_back(
        c.g.builder().getFloatAttr(countType.getElementType(), v));
  Value scaled = c.g.mul(
      c.dy, ConstantOp::create(c.g.builder(), c.g.location(),
                               DenseElementsAttr::get(countType, values))
                .getResult());
  Value sum;
  for (const SmallVector<int64_t> &tap : w.taps()) {
    Value placed = w.place(c.g, scaled, tap);
    sum = sum ? c.g.add(sum, placed) : placed;
  }
  c.set(0, w.unpad(c.g, sum, shapeOf(x)));
  return success();
}

/// y = scale (x - mean) rstd + bias per channel, rstd = 1/sqrt(var + eps).
/// With the batch's own statistics (training_mode), mean and var are
/// reductions of x and their gradients flow on through them.
LogicalResult rule(BatchNormOp op, RuleContext &c) {
  Value x = op.getInput();
  ShapeRef xs = shapeOf(x);
  SmallVector<int64_t> perChannel(xs.size(), 1);
  perChannel[1] = xs[1];
  auto channel = [&](Value v) { return c.g.reshape(v, perChannel); };
  Value scale = channel(op.getScale()), mean = channel(op.getMean());
  Value varEps = c.g.add(channel(op.getVariance()),
                         c.g.scalarLike(op.getEpsilon().convertToDouble(), x));
  Value rstd = c.g.reciprocal(c.g.sqrt(varEps));
  Value centered = c.g.sub(x, mean);
  auto toParam = [&](Value v, Value param) {
    return c.g.reshape(c.g.sumTo(v, perChannel), shapeOf(param));
  };
  Value dxhat = c.g.mul(c.dy, scale);
  Value dx = c.g.mul(dxhat, rstd);
  c.set(0, dx);
  if (c.want(1))
    c.set(1, toParam(c.g.mul(c.dy, c.g.mul(centered, rstd)), op.getScale()));
  if (c.want(2))
    c.set(2, toParam(c.dy, op.getBias()));
  if (c.want(3))
    c.set(3, c.g.neg(toParam(dx, op.getMean())));
  if (c.want(4)) {
    // d/dvar of (x - mean) (var + eps)^-1/2 = -(x - mean) rstd^3 / 2.
    Value rstd3 = c.g.mul(rstd, c.g.mul(rstd, rstd));
    c.set(4, toParam(c.g.scale(c.g.mul(c.g.mul(dxhat, centered), rstd3), -0.5),
                     op.getVariance()));
  }
  return success();
}

template <typename OpT>
struct GradientModel
    : DifferentiableOpInterface::ExternalModel<GradientModel<OpT>, OpT> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ArrayRef<Value> resultGradients,
                               ArrayRef<bool> wanted,
                               SmallVectorImpl<Value> &operandGradients) const {
    operandGradients.assign(op->getNumOperands(), Value());
    if (llvm::none_of(resultGradients, [](Value g) { return bool(g); }))
      return success();
    // Named after the forward node, marked as its backward: --explain,
    // remarks and profiles then say which node a backward kernel serves.
    Location loc = NameLoc::get(
        StringAttr::get(op->getContext(), cgc::nodeName(op) + " (backward)"),
        op->getLoc());
    RuleContext context{GradientBuilder(builder, loc),
                        resultGradients.front(), resultGradients, wanted,
                        operandGradients};
    return rule(cast<OpT>(op), context);
  }
};

template <typename... OpTs> void attach(MLIRContext *context) {
  (OpTs::template attachInterface<GradientModel<OpTs>>(*context), ...);
}

} // namespace

void cgc::registerGradientRules(MLIRContext *context) {
  attach<AddOp, SubOp, MulOp, DivOp, PowOp, NegOp, ReluOp, SigmoidOp, TanhOp,
         ExpOp, LogOp, SqrtOp, ReciprocalOp, AbsOp, ErfOp, GeluOp, CastOp,
         WhereOp, ClipOp, MatMulOp, GemmOp, TransposeOp, ReshapeOp, ExpandOp,
         ReduceSumOp, ReduceMeanOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
         ConcatOp, SliceOp, SplitOp, GatherOp, ConvOp, MaxPoolOp,
         AveragePoolOp, BatchNormOp>(context);
}

std::vector<std::string> cgc::differentiableOps(MLIRContext *context) {
  std::vector<std::string> names;
  for (RegisteredOperationName name : context->getRegisteredOperations())
    if (name.getDialectNamespace() == "cgc" &&
        name.hasInterface<DifferentiableOpInterface>())
      names.push_back(name.getStringRef().str());
  llvm::sort(names);
  return names;
}
