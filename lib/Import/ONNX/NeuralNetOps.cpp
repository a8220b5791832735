//===- NeuralNetOps.cpp - importers of matmul/conv/norm/reduce ops --------===//

#include "ImportHelpers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// Renders a list for diagnostics: [1, 2, 3].
std::string listStr(ArrayRef<int64_t> values) {
  std::string s = "[";
  for (auto [i, v] : llvm::enumerate(values)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(v) ? "?" : std::to_string(v);
  }
  return s + "]";
}

/// Fails with a diagnostic when any output from `first` on is used (training
/// outputs, indices, ...).
LogicalResult checkOutputsUnused(NodeContext &ctx, size_t first,
                                 StringRef what) {
  for (size_t i = first; i < ctx.numOutputs(); ++i) {
    if (ctx.isOutputUsed(i)) {
      ctx.error() << "output #" << i << " ('" << ctx.node().output(i)
                  << "') is used but " << what << " is not supported";
      return failure();
    }
  }
  return success();
}

/// Normalizes (and sorts) a list of axes; duplicates are an error.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext &ctx,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = normalizeAxis(ctx, axis, rank);
    if (failed(a))
      return failure();
    result.push_back(*a);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end()) {
    ctx.error() << "axes " << listStr(axes) << " repeat an axis";
    return failure();
  }
  return result;
}

/// The axes [first, rank).
SmallVector<int64_t> axesFrom(int64_t first, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

Results importMatMul(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  return single(ctx.create1<MatMulOp>({(*in)[0], (*in)[1]}));
}

Results importGemm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  SmallVector<Value> operands = *in;
  if (Value c = ctx.input(2))
    operands.push_back(c);
  return single(ctx.create1<GemmOp>(
      operands, {ctx.namedF64("alpha", ctx.getFloat("alpha", 1.0)),
                 ctx.namedF64("beta", ctx.getFloat("beta", 1.0)),
                 ctx.namedBool("trans_a", ctx.getInt("transA", 0) != 0),
                 ctx.namedBool("trans_b", ctx.getInt("transB", 0) != 0)}));
}

/// One parsed Einsum term: its labels and where "..." stands (or -1).
struct EinsumTerm {
  std::string labels;
  int64_t ellipsis = -1;
};

FailureOr<EinsumTerm> parseEinsumTerm(NodeContext &ctx, StringRef text) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '.') {
      if (!text.substr(i).starts_with("...") || term.ellipsis >= 0) {
        ctx.error() << "malformed ellipsis in einsum term '" << text << "'";
        return failure();
      }
      term.ellipsis = term.labels.size();
      i += 3;
      continue;
    }
    if (!llvm::isAlpha(c)) {
      ctx.error() << "invalid character '" << c << "' in einsum term '"
                  << text << "'";
      return failure();
    }
    term.labels.push_back(c);
    ++i;
  }
  return term;
}

/// cgc.einsum needs its result type: labels get their sizes from the inputs,
/// "..." dims broadcast; the implicit output is the broadcast dims, then the
/// labels used exactly once, in alphabetical (ASCII) order.
Results importEinsum(NodeContext &ctx) {
  std::string raw = ctx.getString("equation", "");
  std::string equation;
  for (char c : raw)
    if (!llvm::isSpace(c))
      equation.push_back(c);
  if (equation.empty()) {
    ctx.error() << "the equation attribute is required";
    return failure();
  }
  if (ctx.numInputs() == 0) {
    ctx.error() << "needs at least one input";
    return failure();
  }
  FailureOr<SmallVector<Value>> inputs = requiredInputs(ctx, ctx.numInputs());
  if (failed(inputs))
    return failure();

  StringRef eq(equation);
  size_t arrow = eq.find("->");
  StringRef lhs = eq.substr(0, arrow);
  std::optional<StringRef> rhs;
  if (arrow != StringRef::npos) {
    rhs = eq.substr(arrow + 2);
    if (rhs->contains("->")) {
      ctx.error() << "equation '" << equation << "' has more than one '->'";
      return failure();
    }
  }
  SmallVector<StringRef> termTexts;
  lhs.split(termTexts, ',');
  if (termTexts.size() != inputs->size()) {
    ctx.error() << "equation '" << equation << "' has " << termTexts.size()
                << " input terms for " << inputs->size() << " inputs";
    return failure();
  }

  Type elementType = tensorType(inputs->front()).getElementType();
  std::map<char, int64_t> labelDims;
  std::map<char, int64_t> labelCounts;
  SmallVector<int64_t> broadcastDims;
  for (auto [index, text] : llvm::enumerate(termTexts)) {
    FailureOr<EinsumTerm> term = parseEinsumTerm(ctx, text);
    if (failed(term))
      return failure();
    RankedTensorType type = tensorType((*inputs)[index]);
    if (type.getElementType() != elementType) {
      ctx.error() << "inputs have different element types";
      return failure();
    }
    int64_t rank = type.getRank(), numLabels = term->labels.size();
    int64_t numEllipsis = term->ellipsis >= 0 ? rank - numLabels : 0;
    if (numEllipsis < 0 || (term->ellipsis < 0 && rank != numLabels)) {
      ctx.error() << "einsum term '" << text << "' does not match input #"
                  << index << " of rank " << rank;
      return failure();
    }
    ArrayRef<int64_t> shape = type.getShape();
    for (auto [i, label] : llvm::enumerate(term->labels)) {
      int64_t pos = (term->ellipsis >= 0 && (int64_t)i >= term->ellipsis)
                        ? i + numEllipsis
                        : i;
      int64_t dim = shape[pos];
      ++labelCounts[label];
      auto [it, inserted] = labelDims.try_emplace(label, dim);
      if (inserted || dim == kDyn)
        continue;
      if (it->second == kDyn) {
        it->second = dim;
      } else if (it->second != dim) {
        ctx.error() << "einsum label '" << label << "' has sizes "
                    << it->second << " and " << dim;
        return failure();
      }
    }
    if (term->ellipsis >= 0) {
      FailureOr<SmallVector<int64_t>> b = broadcastShapes(
          broadcastDims, shape.slice(term->ellipsis, numEllipsis));
      if (failed(b)) {
        ctx.error() << "the '...' dims of the inputs do not broadcast";
        return failure();
      }
      broadcastDims = *b;
    }
  }

  SmallVector<int64_t> resultShape;
  if (rhs) {
    FailureOr<EinsumTerm> out = parseEinsumTerm(ctx, *rhs);
    if (failed(out))
      return failure();
    if (out->ellipsis < 0 && !broadcastDims.empty()) {
      ctx.error() << "the output of '" << equation
                  << "' needs '...' for the broadcast dims";
      return failure();
    }
    std::string seen;
    for (auto [i, label] : llvm::enumerate(out->labels)) {
      if ((int64_t)i == out->ellipsis)
        llvm::append_range(resultShape, broadcastDims);
      auto it = labelDims.find(label);
      if (it == labelDims.end() || seen.find(label) != std::string::npos) {
        ctx.error() << "output label '" << label
                    << "' is repeated or not used by any input";
        return failure();
      }
      seen.push_back(label);
      resultShape.push_back(it->second);
    }
    if (out->ellipsis == (int64_t)out->labels.size())
      llvm::append_range(resultShape, broadcastDims);
  } else {
    resultShape = broadcastDims;
    for (auto [label, count] : labelCounts) // std::map: sorted by char
      if (count == 1)
        resultShape.push_back(labelDims[label]);
  }
  return single(ctx.create1<EinsumOp>(
      *inputs, {ctx.namedStr("equation", equation)},
      {RankedTensorType::get(resultShape, elementType)}));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// An ints attribute with one entry per spatial dim (or `count`), defaulting
/// to `fill`; entries must be at least `min`.
FailureOr<SmallVector<int64_t>> spatialInts(NodeContext &ctx, StringRef name,
                                            size_t count, int64_t fill,
                                            int64_t min) {
  std::optional<SmallVector<int64_t>> values = ctx.getInts(name);
  if (ctx.hadAttributeError())
    return failure();
  if (!values || values->empty())
    return SmallVector<int64_t>(count, fill);
  if (values->size() != count) {
    ctx.error() << "attribute '" << name << "' has " << values->size()
                << " entries, expected " << count;
    return failure();
  }
  if (llvm::any_of(*values, [&](int64_t v) { return v < min; })) {
    ctx.error() << "attribute '" << name << "' = " << listStr(*values)
                << " has an entry below " << min;
    return failure();
  }
  return *values;
}

/// Window parameters of a conv or pool; `pads` holds the begins, then ends.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

/// Reads strides and dilations (default 1) for `spatial` dims.
LogicalResult readStridesDilations(NodeContext &ctx, Window &w,
                                   size_t spatial) {
  FailureOr<SmallVector<int64_t>> strides =
      spatialInts(ctx, "strides", spatial, 1, 1);
  if (failed(strides))
    return failure();
  FailureOr<SmallVector<int64_t>> dilations =
      spatialInts(ctx, "dilations", spatial, 1, 1);
  if (failed(dilations))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  return success();
}

/// Resolves auto_pad into explicit pads for Conv and the pools (the output
/// of SAME_* is ceil(input / stride); odd padding goes to the end for
/// SAME_UPPER, to the beginning for SAME_LOWER).
LogicalResult resolvePads(NodeContext &ctx, RankedTensorType input,
                          Window &w) {
  size_t spatial = w.kernel.size();
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    FailureOr<SmallVector<int64_t>> pads =
        spatialInts(ctx, "pads", 2 * spatial, 0, 0);
    if (failed(pads))
      return failure();
    w.pads = *pads;
    return success();
  }
  w.pads.assign(2 * spatial, 0);
  if (autoPad == "VALID")
    return success();
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    ctx.error() << "unknown auto_pad '" << autoPad << "'";
    return failure();
  }
  for (size_t i = 0; i < spatial; ++i) {
    int64_t in = input.getDimSize(i + 2), k = w.kernel[i];
    if (in == kDyn || k == kDyn) {
      ctx.error() << "auto_pad " << autoPad
                  << " needs static spatial dims and kernel, got input "
                  << input;
      return failure();
    }
    int64_t s = w.strides[i];
    int64_t out = (in + s - 1) / s;
    int64_t span = (k - 1) * w.dilations[i] + 1;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
    int64_t small = total / 2, large = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    w.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
  }
  return success();
}

/// The kernel of a conv: the weight's spatial dims, checked against (or,
/// where the weight dim is dynamic, taken from) kernel_shape.
FailureOr<SmallVector<int64_t>> convKernel(NodeContext &ctx,
                                           RankedTensorType weight) {
  SmallVector<int64_t> kernel(weight.getShape().drop_front(2));
  std::optional<SmallVector<int64_t>> attr = ctx.getInts("kernel_shape");
  if (ctx.hadAttributeError())
    return failure();
  if (!attr || attr->empty())
    return kernel;
  if (attr->size() != kernel.size()) {
    ctx.error() << "kernel_shape " << listStr(*attr) << " does not match the "
                << kernel.size() << " spatial dims of the weight";
    return failure();
  }
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (kernel[i] == kDyn) {
      kernel[i] = (*attr)[i];
    } else if (kernel[i] != (*attr)[i]) {
      ctx.error() << "kernel_shape " << listStr(*attr)
                  << " differs from the weight's spatial dims "
                  << listStr(weight.getShape().drop_front(2));
      return failure();
    }
  }
  return kernel;
}

/// Checks the N x C x D1... input and same-rank weight of Conv/ConvTranspose.
LogicalResult checkConvOperands(NodeContext &ctx, Value x, Value w) {
  RankedTensorType xt = tensorType(x), wt = tensorType(w);
  if (xt.getRank() < 3 || wt.getRank() != xt.getRank()) {
    ctx.error() << "expects an N x C x D1... input and a weight of the same "
                   "rank, got "
                << xt << " and " << wt;
    return failure();
  }
  return success();
}

Results importConv(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], w = (*in)[1];
  if (failed(checkConvOperands(ctx, x, w)))
    return failure();
  size_t spatial = tensorType(x).getRank() - 2;
  Window window;
  FailureOr<SmallVector<int64_t>> kernel = convKernel(ctx, tensorType(w));
  if (failed(kernel) || failed(readStridesDilations(ctx, window, spatial)))
    return failure();
  window.kernel = *kernel;
  if (failed(resolvePads(ctx, tensorType(x), window)))
    return failure();
  int64_t group = ctx.getInt("group", 1);
  if (group <= 0) {
    ctx.error() << "group must be positive, got " << group;
    return failure();
  }
  SmallVector<Value> operands = {x, w};
  if (Value b = ctx.input(2))
    operands.push_back(b);
  return single(ctx.create1<ConvOp>(
      operands, {ctx.namedI64Array("strides", window.strides),
                 ctx.namedI64Array("pads", window.pads),
                 ctx.namedI64Array("dilations", window.dilations),
                 ctx.namedI64("group", group)}));
}

/// ConvTranspose. An output_shape (or auto_pad SAME_*, whose output is
/// input * stride) becomes pads by the ONNX formula: the total padding is
/// split with the odd element at the end for SAME_UPPER, at the beginning
/// otherwise. An output larger than the full result (negative total
/// padding) is extended at the end through output_padding.
Results importConvTranspose(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0], w = (*in)[1];
  if (failed(checkConvOperands(ctx, x, w)))
    return failure();
  RankedTensorType xt = tensorType(x);
  size_t spatial = xt.getRank() - 2;
  Window window;
  FailureOr<SmallVector<int64_t>> kernel = convKernel(ctx, tensorType(w));
  if (failed(kernel) || failed(readStridesDilations(ctx, window, spatial)))
    return failure();
  window.kernel = *kernel;
  FailureOr<SmallVector<int64_t>> outputPadding =
      spatialInts(ctx, "output_padding", spatial, 0, 0);
  if (failed(outputPadding))
    return failure();
  SmallVector<int64_t> outPad = *outputPadding;
  int64_t group = ctx.getInt("group", 1);
  if (group <= 0) {
    ctx.error() << "group must be positive, got " << group;
    return failure();
  }
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER") {
    ctx.error() << "unknown auto_pad '" << autoPad << "'";
    return failure();
  }
  std::optional<SmallVector<int64_t>> outputShape = ctx.getInts("output_shape");
  if (ctx.hadAttributeError())
    return failure();
  if (outputShape && outputShape->empty())
    outputShape.reset();
  if (outputShape && outputShape->size() == spatial + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->size() != spatial) {
    ctx.error() << "output_shape " << listStr(*outputShape) << " does not have "
                << spatial << " spatial dims";
    return failure();
  }

  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (outputShape || same) {
    window.pads.assign(2 * spatial, 0);
    for (size_t i = 0; i < spatial; ++i) {
      int64_t inDim = xt.getDimSize(i + 2), k = window.kernel[i];
      if (inDim == kDyn || k == kDyn) {
        ctx.error() << (outputShape ? "output_shape" : "auto_pad SAME")
                    << " needs static spatial dims and kernel, got input "
                    << xt;
        return failure();
      }
      int64_t s = window.strides[i];
      int64_t target = outputShape ? (*outputShape)[i] : inDim * s;
      if (target <= 0) {
        ctx.error() << "output_shape " << listStr(*outputShape)
                    << " has a non-positive entry";
        return failure();
      }
      int64_t full = s * (inDim - 1) + outPad[i] +
                     (k - 1) * window.dilations[i] + 1;
      int64_t total = full - target;
      if (total < 0) {
        // A larger output than the full result: zeros (plus bias) at the
        // end, as the reference implementation and onnxruntime do.
        outPad[i] -= total;
        total = 0;
      }
      int64_t begin = total - total / 2, end = total / 2;
      if (autoPad == "SAME_UPPER")
        std::swap(begin, end);
      window.pads[i] = begin;
      window.pads[i + spatial] = end;
    }
  } else if (autoPad == "VALID") {
    window.pads.assign(2 * spatial, 0);
  } else {
    FailureOr<SmallVector<int64_t>> pads =
        spatialInts(ctx, "pads", 2 * spatial, 0, 0);
    if (failed(pads))
      return failure();
    window.pads = *pads;
  }
  SmallVector<Value> operands = {x, w};
  if (Value b = ctx.input(2))
    operands.push_back(b);
  return single(ctx.create1<ConvTransposeOp>(
      operands, {ctx.namedI64Array("strides", window.strides),
                 ctx.namedI64Array("pads", window.pads),
                 ctx.namedI64Array("dilations", window.dilations),
                 ctx.namedI64Array("output_padding", outPad),
                 ctx.namedI64("group", group)}));
}

/// MaxPool (values only) and AveragePool.
template <typename OpTy> Results importPool(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  constexpr bool isMax = std::is_same_v<OpTy, MaxPoolOp>;
  if (isMax && failed(checkOutputsUnused(ctx, 1, "the Indices output")))
    return failure();
  RankedTensorType xt = tensorType(*x);
  if (xt.getRank() < 3) {
    ctx.error() << "expects an N x C x D1... input, got " << xt;
    return failure();
  }
  size_t spatial = xt.getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (ctx.hadAttributeError())
    return failure();
  if (!kernel || kernel->size() != spatial ||
      llvm::any_of(*kernel, [](int64_t k) { return k <= 0; })) {
    ctx.error() << "kernel_shape must have " << spatial
                << " positive entries";
    return failure();
  }
  Window window;
  window.kernel = *kernel;
  if (failed(readStridesDilations(ctx, window, spatial)) ||
      failed(resolvePads(ctx, xt, window)))
    return failure();
  SmallVector<NamedAttribute> attrs = {
      ctx.namedI64Array("kernel_shape", window.kernel),
      ctx.namedI64Array("strides", window.strides),
      ctx.namedI64Array("pads", window.pads),
      ctx.namedI64Array("dilations", window.dilations),
      ctx.namedBool("ceil_mode", ctx.getInt("ceil_mode", 0) != 0)};
  if (!isMax)
    attrs.push_back(ctx.namedBool("count_include_pad",
                                  ctx.getInt("count_include_pad", 0) != 0));
  return single(ctx.create1<OpTy>({*x}, attrs));
}

/// Global pools reduce the spatial axes [2, rank) with keepdims.
template <typename OpTy> Results importGlobalPool(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank < 2) {
    ctx.error() << "expects an N x C x D1... input, got " << tensorType(*x);
    return failure();
  }
  if (rank == 2)
    return SmallVector<Value>{*x};
  return single(ctx.create1<OpTy>(
      {*x}, {ctx.namedI64Array("axes", axesFrom(2, rank)),
             ctx.namedBool("keepdims", true)}));
}

/// GlobalLpPool: reduce_l1 / reduce_l2 for p = 1 / 2, otherwise
/// (sum |x|^p)^(1/p) over the spatial axes.
Results importGlobalLpPool(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  if (xt.getRank() < 3) {
    ctx.error() << "expects an N x C x D1... input, got " << xt;
    return failure();
  }
  int64_t p = ctx.getInt("p", 2);
  if (p <= 0) {
    ctx.error() << "p must be positive, got " << p;
    return failure();
  }
  SmallVector<NamedAttribute> attrs = {
      ctx.namedI64Array("axes", axesFrom(2, xt.getRank())),
      ctx.namedBool("keepdims", true)};
  if (p == 1)
    return single(ctx.create1<ReduceL1Op>({*x}, attrs));
  if (p == 2)
    return single(ctx.create1<ReduceL2Op>({*x}, attrs));
  Type element = xt.getElementType();
  FailureOr<Value> abs = ctx.create1<AbsOp>({*x}, {}, {xt});
  if (failed(abs))
    return failure();
  FailureOr<Value> powered =
      ctx.create1<PowOp>({*abs, ctx.constScalar((double)p, element)});
  if (failed(powered))
    return failure();
  FailureOr<Value> sum = ctx.create1<ReduceSumOp>({*powered}, attrs);
  if (failed(sum))
    return failure();
  return single(
      ctx.create1<PowOp>({*sum, ctx.constScalar(1.0 / (double)p, element)}));
}

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
        normalizeAxes(ctx, **axesOr, rank);
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

Results importCumSum(NodeContext &ctx) {
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
  return single(ctx.create1<CumSumOp>(
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
// Softmax family and losses
//===----------------------------------------------------------------------===//

/// Reshapes x to [prod(dims[:axis]), prod(dims[axis:])]; with dynamic dims
/// the target shape is computed at run time from cgc.shape.
FailureOr<Value> flattenTo2D(NodeContext &ctx, Value x, int64_t axis) {
  RankedTensorType xt = tensorType(x);
  ArrayRef<int64_t> shape = xt.getShape();
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t p = 1;
    for (int64_t d : dims) {
      if (d == kDyn)
        return kDyn;
      p *= d;
    }
    return p;
  };
  int64_t rows = product(shape.take_front(axis));
  int64_t cols = product(shape.drop_front(axis));
  if (xt.hasStaticShape())
    return reshapeTo(ctx, x, {rows, cols});
  auto part = [&](int64_t start, int64_t end) -> FailureOr<Value> {
    int64_t known = product(shape.slice(start, end - start));
    if (known != kDyn)
      return ctx.constI64({known}, {1});
    FailureOr<Value> dims = ctx.create1<ShapeOp>(
        {x}, {ctx.namedI64("start", start), ctx.namedI64("end", end)});
    if (failed(dims))
      return failure();
    return ctx.create1<ReduceProdOp>({*dims},
                                     {ctx.namedI64Array("axes", {0}),
                                      ctx.namedBool("keepdims", true)});
  };
  FailureOr<Value> rowsValue = part(0, axis);
  if (failed(rowsValue))
    return failure();
  FailureOr<Value> colsValue = part(axis, xt.getRank());
  if (failed(colsValue))
    return failure();
  FailureOr<Value> target = ctx.create1<ConcatOp>(
      {*rowsValue, *colsValue}, {ctx.namedI64("axis", 0)});
  if (failed(target))
    return failure();
  return ctx.create1<ReshapeOp>(
      {x, *target}, {},
      {RankedTensorType::get({rows, cols}, xt.getElementType())});
}

/// Softmax, LogSoftmax, Hardmax. From opset 13 the op works on one axis
/// (default -1). Before, the input is coerced to 2-D at `axis` (default 1):
/// [prod(dims[:axis]), prod(dims[axis:])], the op runs on axis 1 and the
/// result is reshaped back; that is the same as the op on `axis` when all
/// later dims are 1, which needs no reshape.
template <typename OpTy> Results importSoftmax(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  int64_t rank = xt.getRank();
  bool legacy = ctx.opset() < 13;
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", legacy ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> shape = xt.getShape();
  if (!legacy || llvm::all_of(shape.drop_front(*axis + 1),
                              [](int64_t d) { return d == 1; }))
    return single(
        ctx.create1<OpTy>({*x}, {ctx.namedI64("axis", *axis)}, {xt}));
  FailureOr<Value> flat = flattenTo2D(ctx, *x, *axis);
  if (failed(flat))
    return failure();
  FailureOr<Value> y = ctx.create1<OpTy>(
      {*flat}, {ctx.namedI64("axis", 1)}, {tensorType(*flat)});
  if (failed(y))
    return failure();
  if (xt.hasStaticShape())
    return single(reshapeTo(ctx, *y, shape));
  FailureOr<Value> fullShape = ctx.create1<ShapeOp>(
      {*x}, {ctx.namedI64("start", 0), ctx.namedI64("end", rank)});
  if (failed(fullShape))
    return failure();
  return single(ctx.create1<ReshapeOp>({*y, *fullShape}, {}, {xt}));
}

/// Reads reduction and ignore_index, checks the [N, C, d...] input against
/// the [N, d...] target and builds cgc.nll_loss (result: the target's shape
/// for reduction none, else a scalar).
FailureOr<Value> buildNllLoss(NodeContext &ctx, Value input, Value target,
                              Value weight) {
  std::string reduction = ctx.getString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    ctx.error() << "unknown reduction '" << reduction << "'";
    return failure();
  }
  RankedTensorType it = tensorType(input), tt = tensorType(target);
  if (it.getRank() < 2 || tt.getRank() != it.getRank() - 1) {
    ctx.error() << "expects an [N, C, d1...] input and an [N, d1...] target, "
                   "got "
                << it << " and " << tt;
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < tt.getRank(); ++d) {
    int64_t a = it.getDimSize(d == 0 ? 0 : d + 1), b = tt.getDimSize(d);
    if (a != kDyn && b != kDyn && a != b) {
      ctx.error() << "target " << tt << " does not match input " << it;
      return failure();
    }
    shape.push_back(b == kDyn ? a : b);
  }
  SmallVector<Value> operands = {input, target};
  if (weight) {
    RankedTensorType wt = tensorType(weight);
    int64_t c = it.getDimSize(1);
    if (wt.getRank() != 1 ||
        (c != kDyn && wt.getDimSize(0) != kDyn && wt.getDimSize(0) != c)) {
      ctx.error() << "weight must be 1-D with " << c << " entries, got " << wt;
      return failure();
    }
    operands.push_back(weight);
  }
  SmallVector<NamedAttribute> attrs = {ctx.namedStr("reduction", reduction)};
  if (ctx.hasAttr("ignore_index"))
    attrs.push_back(ctx.namedI64("ignore_index", ctx.getInt("ignore_index", 0)));
  if (reduction != "none")
    shape.clear();
  return ctx.create1<NegativeLogLikelihoodLossOp>(
      operands, attrs, {RankedTensorType::get(shape, it.getElementType())});
}

Results importNllLoss(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  return single(buildNllLoss(ctx, (*in)[0], (*in)[1], ctx.input(2)));
}

/// SoftmaxCrossEntropyLoss = nll_loss(log_softmax(scores, axis 1)); output 1
/// is the log-probabilities.
Results importSoftmaxCrossEntropy(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value scores = (*in)[0];
  if (tensorType(scores).getRank() < 2) {
    ctx.error() << "expects [N, C, d1...] scores, got " << tensorType(scores);
    return failure();
  }
  FailureOr<Value> logProb = ctx.create1<LogSoftmaxOp>(
      {scores}, {ctx.namedI64("axis", 1)}, {tensorType(scores)});
  if (failed(logProb))
    return failure();
  FailureOr<Value> loss = buildNllLoss(ctx, *logProb, (*in)[1], ctx.input(2));
  if (failed(loss))
    return failure();
  return SmallVector<Value>{*loss, *logProb};
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

/// The optional Mean and InvStdDev outputs of LayerNormalization, computed
/// apart from the fused op (they are rarely used at inference): reductions
/// over the normalized axes with keepdims.
FailureOr<std::pair<Value, Value>>
layerNormStatistics(NodeContext &ctx, Value x, int64_t axis, double epsilon) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  auto reduceMean = [&](Value v) {
    return ctx.create1<ReduceMeanOp>(
        {v}, {ctx.namedI64Array("axes", axes), ctx.namedBool("keepdims", true)});
  };
  FailureOr<Value> mean = reduceMean(x);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = ctx.create1<SubOp>({x, *mean});
  if (failed(centered))
    return failure();
  FailureOr<Value> squared = ctx.create1<MulOp>({*centered, *centered});
  if (failed(squared))
    return failure();
  FailureOr<Value> variance = reduceMean(*squared);
  if (failed(variance))
    return failure();
  Type element = tensorType(x).getElementType();
  FailureOr<Value> shifted =
      ctx.create1<AddOp>({*variance, ctx.constScalar(epsilon, element)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> deviation =
      ctx.create1<SqrtOp>({*shifted}, {}, {shifted->getType()});
  if (failed(deviation))
    return failure();
  FailureOr<Value> inverse =
      ctx.create1<ReciprocalOp>({*deviation}, {}, {deviation->getType()});
  if (failed(inverse))
    return failure();
  return std::make_pair(*mean, *inverse);
}

Results importLayerNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  int64_t rank = tensorType((*in)[0]).getRank();
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  if (ctx.getInt("stash_type", 1) != 1) {
    ctx.error() << "only stash_type=1 (float32 statistics) is supported";
    return failure();
  }
  SmallVector<Value> operands = *in;
  if (Value bias = ctx.input(2))
    operands.push_back(bias);
  FailureOr<Value> y = ctx.create1<LayerNormOp>(
      operands,
      {ctx.namedI64("axis", *axis), ctx.namedF64("epsilon", epsilon)});
  if (failed(y))
    return failure();
  if (!ctx.isOutputUsed(1) && !ctx.isOutputUsed(2))
    return SmallVector<Value>{*y};
  FailureOr<std::pair<Value, Value>> stats =
      layerNormStatistics(ctx, (*in)[0], *axis, epsilon);
  if (failed(stats))
    return failure();
  return SmallVector<Value>{*y, stats->first, stats->second};
}

/// Casts v to `element` when its element type differs.
FailureOr<Value> castTo(NodeContext &ctx, Value v, Type element) {
  RankedTensorType type = tensorType(v);
  if (type.getElementType() == element)
    return v;
  return ctx.create1<CastOp>(
      {v}, {}, {RankedTensorType::get(type.getShape(), element)});
}

/// BatchNormalization in inference mode (running statistics). The
/// parameters are cast to the input's element type (opset 15 allows them
/// to differ).
Results importBatchNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 5);
  if (failed(in))
    return failure();
  if (failed(checkOutputsUnused(ctx, 1, "training mode (statistics outputs)")))
    return failure();
  if (ctx.getInt("training_mode", 0) != 0) {
    ctx.error() << "training_mode=1 is not supported (inference only)";
    return failure();
  }
  Value x = (*in)[0];
  RankedTensorType xt = tensorType(x);
  if (ctx.getInt("spatial", 1) == 0 && xt.getRank() > 2) {
    ctx.error() << "spatial=0 (per-activation statistics) is not supported";
    return failure();
  }
  SmallVector<Value> operands = {x};
  for (size_t i = 1; i < 5; ++i) {
    FailureOr<Value> param = castTo(ctx, (*in)[i], xt.getElementType());
    if (failed(param))
      return failure();
    operands.push_back(*param);
  }
  return single(ctx.create1<BatchNormOp>(
      operands, {ctx.namedF64("epsilon", ctx.getFloat("epsilon", 1e-5))}));
}

Results importInstanceNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  return single(ctx.create1<InstanceNormOp>(
      *in, {ctx.namedF64("epsilon", ctx.getFloat("epsilon", 1e-5))}));
}

Results importLRN(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  if (xt.getRank() < 2) {
    ctx.error() << "expects an N x C x D1... input, got " << xt;
    return failure();
  }
  int64_t size = ctx.getInt("size", 0);
  if (size <= 0) {
    ctx.error() << "the size attribute is required and must be positive";
    return failure();
  }
  return single(ctx.create1<LRNOp>(
      {*x},
      {ctx.namedI64("size", size),
       ctx.namedF64("alpha", ctx.getFloat("alpha", 1e-4)),
       ctx.namedF64("beta", ctx.getFloat("beta", 0.75)),
       ctx.namedF64("bias", ctx.getFloat("bias", 1.0))},
      {xt}));
}

/// MeanVarianceNormalization as in its ONNX function body:
/// (x - mean) / (sqrt(var) + 1e-9) over `axes` (default [0, 2, 3]); the
/// variance is computed as mean((x - mean)^2), which cannot go negative.
Results importMVN(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  SmallVector<int64_t> rawAxes =
      ctx.getInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  if (ctx.hadAttributeError())
    return failure();
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(ctx, rawAxes, xt.getRank());
  if (failed(axes))
    return failure();
  SmallVector<NamedAttribute> reduceAttrs = {
      ctx.namedI64Array("axes", *axes), ctx.namedBool("keepdims", true)};
  FailureOr<Value> mean = ctx.create1<ReduceMeanOp>({*x}, reduceAttrs);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = ctx.create1<SubOp>({*x, *mean});
  if (failed(centered))
    return failure();
  FailureOr<Value> squared = ctx.create1<MulOp>({*centered, *centered});
  if (failed(squared))
    return failure();
  FailureOr<Value> variance = ctx.create1<ReduceMeanOp>({*squared}, reduceAttrs);
  if (failed(variance))
    return failure();
  FailureOr<Value> stddev =
      ctx.create1<SqrtOp>({*variance}, {}, {tensorType(*variance)});
  if (failed(stddev))
    return failure();
  FailureOr<Value> denominator = ctx.create1<AddOp>(
      {*stddev, ctx.constScalar(1e-9, xt.getElementType())});
  if (failed(denominator))
    return failure();
  return single(ctx.create1<DivOp>({*centered, *denominator}));
}

/// LpNormalization: x / reduce_l1|l2(x, axis, keepdims).
Results importLpNormalization(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", -1), tensorType(*x).getRank());
  if (failed(axis))
    return failure();
  int64_t p = ctx.getInt("p", 2);
  SmallVector<NamedAttribute> attrs = {ctx.namedI64Array("axes", {*axis}),
                                       ctx.namedBool("keepdims", true)};
  FailureOr<Value> norm;
  if (p == 1)
    norm = ctx.create1<ReduceL1Op>({*x}, attrs);
  else if (p == 2)
    norm = ctx.create1<ReduceL2Op>({*x}, attrs);
  else {
    ctx.error() << "p must be 1 or 2, got " << p;
    return failure();
  }
  if (failed(norm))
    return failure();
  return single(ctx.create1<DivOp>({*x, *norm}));
}

} // namespace

void cgc::onnx_import::registerNeuralNetOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("MatMul", importMatMul, "`cgc.matmul`");
  add("Gemm", importGemm, "`cgc.gemm`");
  add("Einsum", importEinsum,
      "`cgc.einsum` (result type from the equation; implicit output and "
      "`...` supported)");
  add("Conv", importConv, "`cgc.conv` (auto_pad resolved to explicit pads)");
  add("ConvTranspose", importConvTranspose,
      "`cgc.conv_transpose` (auto_pad and output_shape resolved to pads and "
      "output_padding)");
  add("MaxPool", importPool<MaxPoolOp>,
      "`cgc.max_pool` (values only; the Indices output is rejected)");
  add("AveragePool", importPool<AveragePoolOp>,
      "`cgc.average_pool` (auto_pad resolved to explicit pads)");
  add("GlobalAveragePool", importGlobalPool<ReduceMeanOp>,
      "`cgc.reduce_mean` over the spatial axes, keepdims");
  add("GlobalMaxPool", importGlobalPool<ReduceMaxOp>,
      "`cgc.reduce_max` over the spatial axes, keepdims");
  add("GlobalLpPool", importGlobalLpPool,
      "`cgc.reduce_l1`/`cgc.reduce_l2` (p=1/2), else abs, pow, "
      "`cgc.reduce_sum`, pow 1/p");
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
  add("CumSum", importCumSum, "`cgc.cumsum` (axis must be constant)");
  add("TopK", importTopK, "`cgc.topk` (k must be constant)");
  add("Softmax", importSoftmax<SoftmaxOp>,
      "`cgc.softmax` (before opset 13: reshaped to 2-D around it)");
  add("LogSoftmax", importSoftmax<LogSoftmaxOp>,
      "`cgc.log_softmax` (before opset 13: reshaped to 2-D around it)");
  add("Hardmax", importSoftmax<HardmaxOp>,
      "`cgc.hardmax` (before opset 13: reshaped to 2-D around it)");
  add("NegativeLogLikelihoodLoss", importNllLoss, "`cgc.nll_loss`");
  add("SoftmaxCrossEntropyLoss", importSoftmaxCrossEntropy,
      "`cgc.log_softmax` on axis 1, then `cgc.nll_loss`");
  add("LayerNormalization", importLayerNorm,
      "`cgc.layer_norm`; Mean/InvStdDev outputs as reductions");
  add("BatchNormalization", importBatchNorm,
      "`cgc.batch_norm` (inference: running statistics, output 0 only)");
  add("InstanceNormalization", importInstanceNorm, "`cgc.instance_norm`");
  add("LRN", importLRN, "`cgc.lrn`");
  add("MeanVarianceNormalization", importMVN,
      "reduce_mean, sub, mul, reduce_mean, sqrt, add 1e-9, div");
  add("LpNormalization", importLpNormalization,
      "`cgc.div` by `cgc.reduce_l1`/`cgc.reduce_l2` (keepdims)");
}
