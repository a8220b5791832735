//===- GeneratorOps.cpp - importers of ops that make tensors --------------===//

#include "TensorHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

//===----------------------------------------------------------------------===//
// Trilu, OneHot, EyeLike, ConstantOfShape, Size, Range
//===----------------------------------------------------------------------===//

/// Trilu with a k only known at run time: the shape does not depend on k,
/// so it becomes where(col - row >= k (upper) or <= k (lower), x, 0) with a
/// constant col - row table over the last two dims.
Results importTriluWithRuntimeK(NodeContext &ctx, Value x, Value k,
                                bool upper) {
  RankedTensorType type = tensorType(x);
  if (!tensorType(k).getElementType().isInteger(64) ||
      !hasOneElement(k)) {
    ctx.error() << "k must be one int64";
    return failure();
  }
  int64_t rows = type.getDimSize(type.getRank() - 2);
  int64_t cols = type.getDimSize(type.getRank() - 1);
  // The col - row table is built here.
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols) ||
      (rows > 0 && cols > (int64_t(1) << 24) / rows)) {
    ctx.error() << "a run-time k needs static matrix dims of at most 2^24 "
                   "elements, got "
                << type;
    return failure();
  }
  SmallVector<int64_t> diagonal;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      diagonal.push_back(j - i);
  Value table = ctx.constI64(diagonal, {rows, cols});
  FailureOr<Value> scalarK = reshapeTo(ctx, k, {});
  if (failed(scalarK))
    return failure();
  FailureOr<Value> keep = upper ? ctx.create1<GreaterEqualOp>({table, *scalarK})
                                : ctx.create1<LessEqualOp>({table, *scalarK});
  if (failed(keep))
    return failure();
  Value zero = ctx.constScalar(0, type.getElementType());
  return single(ctx.create1<WhereOp>({*keep, x, zero}));
}

Results importTrilu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  if (tensorType(*x).getRank() < 2) {
    ctx.error() << "the input must have rank >= 2, got " << x->getType();
    return failure();
  }
  int64_t k = 0;
  bool upper = ctx.getInt("upper", 1) != 0;
  if (ctx.hasInput(1)) {
    Value kValue = ctx.input(1);
    std::optional<SmallVector<int64_t>> given = ctx.constInts(kValue);
    if (!given)
      return importTriluWithRuntimeK(ctx, *x, kValue, upper);
    if (given->size() != 1) {
      ctx.error() << "k must hold one integer";
      return failure();
    }
    k = (*given)[0];
  }
  return single(ctx.create1<TriluOp>(
      {*x}, {ctx.namedBool("upper", upper), ctx.namedI64("k", k)},
      {x->getType()}));
}

Results importOneHot(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  Value indices = (*in)[0];
  std::optional<double> depth = constScalarValue(ctx, (*in)[1]);
  if (!depth) {
    ctx.error() << "depth must be a constant scalar";
    return failure();
  }
  std::optional<SmallVector<double>> values = ctx.constFloats((*in)[2]);
  if (!values || values->size() != 2) {
    ctx.error() << "values must be a constant [off_value, on_value]";
    return failure();
  }
  if (!(*depth >= 1) || *depth > (double)(int64_t(1) << 40)) {
    ctx.error() << "depth must be positive (and not huge), got " << *depth;
    return failure();
  }
  int64_t d = (int64_t)*depth;
  if (d <= 0) {
    ctx.error() << "depth must be positive, got " << *depth;
    return failure();
  }
  RankedTensorType type = tensorType(indices);
  int64_t outRank = type.getRank() + 1;
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", -1), outRank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + *axis, d);
  if (failed(checkElementCount(ctx, shape)))
    return failure();
  Type element = tensorType((*in)[2]).getElementType();
  return single(ctx.create1<OneHotOp>({indices},
                                      {ctx.namedI64("depth", d),
                                       ctx.namedI64("axis", *axis),
                                       ctx.namedF64("off_value", (*values)[0]),
                                       ctx.namedF64("on_value", (*values)[1])},
                                      {RankedTensorType::get(shape, element)}));
}

Results importEyeLike(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  if (type.getRank() != 2 || !type.hasStaticShape()) {
    ctx.error() << "the input must be 2-D with a static shape, got " << type;
    return failure();
  }
  Type element = type.getElementType();
  if (ctx.hasAttr("dtype")) {
    int64_t dtype = ctx.getInt("dtype", 0);
    element = convertElementType(ctx.context(), (int32_t)dtype);
    if (!element) {
      ctx.error() << "unsupported dtype " << onnxTypeName((int32_t)dtype);
      return failure();
    }
  }
  if (ctx.hadAttributeError())
    return failure();
  // A diagonal past every column is as empty as one just past them; the
  // clamp keeps r + k from overflowing.
  int64_t k = std::clamp<int64_t>(ctx.getInt("k", 0), -kMaxTensorBytes,
                                  kMaxTensorBytes);
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  if (rows * cols > (int64_t(1) << 24)) {
    ctx.error() << "the input " << type << " is too large to fold";
    return failure();
  }
  SmallVector<double> values(rows * cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t c = r + k;
    if (c >= 0 && c < cols)
      values[r * cols + c] = 1.0;
  }
  auto resultType = RankedTensorType::get(type.getShape(), element);
  return SmallVector<Value>{ctx.constant(numericElements(resultType, values))};
}

Results importConstantOfShape(NodeContext &ctx) {
  FailureOr<Value> shapeValue = ctx.requiredInput(0);
  if (failed(shapeValue))
    return failure();
  DenseElementsAttr value;
  if (const onnx::TensorProto *tensor = ctx.getTensor("value")) {
    FailureOr<ElementsAttr> converted =
        ctx.graph().convertTensor(*tensor, "the value attribute");
    if (failed(converted))
      return failure();
    value = dyn_cast<DenseElementsAttr>(*converted);
    if (!value || value.getNumElements() != 1) {
      ctx.error() << "the value attribute must hold exactly one element";
      return failure();
    }
  } else {
    if (ctx.hadAttributeError())
      return failure();
    value = DenseElementsAttr::get(
        RankedTensorType::get({1}, ctx.builder().getF32Type()), 0.0f);
  }
  Type element = value.getElementType();
  RankedTensorType shapeType = tensorType(*shapeValue);
  if (failed(checkShapeInput(ctx, shapeType)))
    return failure();
  if (std::optional<SmallVector<int64_t>> shape = ctx.constInts(*shapeValue)) {
    if (llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
      ctx.error() << "shape entries must be non-negative";
      return failure();
    }
    if (failed(checkElementCount(ctx, *shape)))
      return failure();
    auto type = RankedTensorType::get(*shape, element);
    return SmallVector<Value>{ctx.constant(value.resizeSplat(type))};
  }
  double fill =
      isa<FloatType>(element)
          ? (*value.getValues<APFloat>().begin()).convertToDouble()
          : (element.isUnsignedInteger() || element.isInteger(1)
                 ? (double)(*value.getValues<APInt>().begin()).getZExtValue()
                 : (double)(*value.getValues<APInt>().begin()).getSExtValue());
  SmallVector<int64_t> dims =
      ctx.graph()
          .partialInts(*shapeValue)
          .value_or(SmallVector<int64_t>(shapeType.getDimSize(0), kDyn));
  for (int64_t &d : dims)
    if (!ShapedType::isDynamic(d) && d < 0) {
      ctx.error() << "shape entries must be non-negative";
      return failure();
    }
  return single(ctx.create1<ConstantOfShapeOp>(
      {*shapeValue}, {ctx.namedF64("value", fill)},
      {RankedTensorType::get(dims, element)}));
}

Results importSize(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  return single(ctx.create1<SizeOp>({*x}));
}

Results importRange(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  Type element = tensorType((*in)[0]).getElementType();
  for (Value v : *in) {
    RankedTensorType t = tensorType(v);
    if (t.getElementType() != element ||
        (t.hasStaticShape() && t.getNumElements() != 1)) {
      ctx.error() << "start, limit and delta must be scalars of one type";
      return failure();
    }
  }
  // Opset 27's stash_type names the type f16/bf16 ranges are computed in,
  // float or double. Every float range is computed in double here (folded,
  // or on the host) and rounded once to its type, which is either up to the
  // rounding of the intermediate.
  if (failed(stashType(ctx)))
    return failure();
  bool isFloat = isa<FloatType>(element);
  std::optional<SmallVector<double>> s = ctx.constFloats((*in)[0]),
                                     l = ctx.constFloats((*in)[1]),
                                     dl = ctx.constFloats((*in)[2]);
  if (s && l && dl) {
    if ((*dl)[0] == 0) {
      ctx.error() << "delta must not be 0";
      return failure();
    }
    int64_t n = 0;
    std::optional<SmallVector<int64_t>> si = ctx.constInts((*in)[0]),
                                        li = ctx.constInts((*in)[1]),
                                        di = ctx.constInts((*in)[2]);
    if (isFloat) {
      double count = std::ceil(((*l)[0] - (*s)[0]) / (*dl)[0]);
      if (count > (double)(int64_t(1) << 40)) {
        ctx.error() << "range has too many elements";
        return failure();
      }
      n = count > 0 ? (int64_t)count : 0;
    } else {
      if (!si || !li || !di || si->empty() || li->empty() || di->empty()) {
        ctx.error() << "start, limit and delta must be integer scalars";
        return failure();
      }
      // Exact integer ceil((limit - start) / delta).
      __int128 span = (__int128)(*li)[0] - (*si)[0], delta = (*di)[0];
      __int128 q = span / delta;
      if (q * delta != span && ((span > 0) == (delta > 0)))
        ++q;
      if (q > ((__int128)1 << 40)) {
        ctx.error() << "range has too many elements";
        return failure();
      }
      n = q > 0 ? (int64_t)q : 0;
    }
    auto type = RankedTensorType::get({n}, element);
    if (n <= kMaxFoldElements) {
      if (isFloat) {
        SmallVector<double> values;
        for (int64_t i = 0; i < n; ++i)
          values.push_back((*s)[0] + (double)i * (*dl)[0]);
        return SmallVector<Value>{ctx.constant(floatElements(type, values))};
      }
      SmallVector<int64_t> values;
      for (int64_t i = 0; i < n; ++i)
        // Between start and limit, though i * delta alone may not fit.
        values.push_back(
            (int64_t)((__int128)(*si)[0] + (__int128)i * (*di)[0]));
      return SmallVector<Value>{ctx.constant(intElements(type, values))};
    }
    return single(ctx.create1<RangeOp>(*in, {}, {type}));
  }
  return single(
      ctx.create1<RangeOp>(*in, {}, {RankedTensorType::get({kDyn}, element)}));
}

/// The cosine-sum windows of opset 17: w[n] = a0 - a1 cos(2 pi n / D) +
/// a2 cos(4 pi n / D), D = size (periodic) or size - 1 (symmetric),
/// folded to a constant of output_datatype.
template <int Kind> Results importWindow(NodeContext &ctx) {
  FailureOr<Value> size = ctx.requiredInput(0);
  if (failed(size))
    return failure();
  std::optional<SmallVector<int64_t>> n = ctx.constInts(*size);
  int64_t code = ctx.getInt("output_datatype", 1);
  bool periodic = ctx.getInt("periodic", 1) != 0;
  if (ctx.hadAttributeError())
    return failure();
  if (!n || n->size() != 1 || n->front() < 0 || n->front() > (1 << 24)) {
    ctx.error() << "the size input ('" << ctx.node().input(0)
                << "') must be a constant from 0 to 2^24";
    return failure();
  }
  Type element = convertElementType(ctx.context(), (int32_t)code);
  if (!element || element.isInteger(1)) {
    ctx.error() << "unsupported output_datatype " << onnxTypeName((int32_t)code);
    return failure();
  }
  // Hann, Hamming (a0 = 25/46), Blackman.
  static const double coefficients[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46.0, 21.0 / 46.0, 0.0}, {0.42, 0.5, 0.08}};
  const double *a = coefficients[Kind];
  int64_t count = n->front();
  double denominator = periodic ? (double)count : (double)count - 1;
  SmallVector<double> values;
  for (int64_t i = 0; i < count; ++i) {
    double phase = 2 * M_PI * (double)i / denominator;
    values.push_back(a[0] - a[1] * std::cos(phase) + a[2] * std::cos(2 * phase));
  }
  auto f64 = RankedTensorType::get({count}, Float64Type::get(ctx.context()));
  Value table = ctx.constant(DenseElementsAttr::get(f64, ArrayRef(values)));
  return single(castTo(ctx, table, element));
}

} // namespace

void cgc::onnx_import::registerGeneratorOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Trilu", importTrilu,
      "`cgc.trilu` (constant k), else `cgc.where` over a diagonal table");
  add("OneHot", importOneHot, "`cgc.one_hot` (constant depth and values)");
  add("EyeLike", importEyeLike, "folded to `cgc.constant`");
  add("ConstantOfShape", importConstantOfShape,
      "`cgc.constant` (constant shape) or `cgc.constant_of_shape`");
  add("Size", importSize, "`cgc.size` (folds when the shape is static)");
  add("Range", importRange, "folded to `cgc.constant`, else `cgc.range`");
  add("HannWindow", importWindow<0>, "folded to `cgc.constant`");
  add("HammingWindow", importWindow<1>, "folded to `cgc.constant`");
  add("BlackmanWindow", importWindow<2>, "folded to `cgc.constant`");
}
