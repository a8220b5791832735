//===- NeuralNetOps.cpp - importers of matmul, conv and pooling ops -------===//

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

/// Largest kernel size, stride, dilation, pad or group a window takes: far
/// past any real model, and small enough that the window arithmetic on
/// dims (at most 2^40) cannot overflow.
constexpr int64_t kMaxWindowValue = int64_t(1) << 20;

/// Whether every entry is within [min, kMaxWindowValue]; else an error
/// naming `what`.
LogicalResult checkWindowValues(NodeContext &ctx, StringRef what,
                                ArrayRef<int64_t> values, int64_t min) {
  if (llvm::all_of(values, [&](int64_t v) {
        return v >= min && v <= kMaxWindowValue;
      }))
    return success();
  ctx.error() << "attribute '" << what << "' = " << formatDims(values)
              << " has an entry outside [" << min << ", 2^20]";
  return failure();
}

/// An ints attribute with one entry per spatial dim (or `count`), defaulting
/// to `fill`; entries must be at least `min` (and at most 2^20).
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
  if (failed(checkWindowValues(ctx, name, *values, min)))
    return failure();
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
    ctx.error() << "kernel_shape " << formatDims(*attr) << " does not match the "
                << kernel.size() << " spatial dims of the weight";
    return failure();
  }
  if (failed(checkWindowValues(ctx, "kernel_shape", *attr, 1)))
    return failure();
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (kernel[i] == kDyn) {
      kernel[i] = (*attr)[i];
    } else if (kernel[i] != (*attr)[i]) {
      ctx.error() << "kernel_shape " << formatDims(*attr)
                  << " differs from the weight's spatial dims "
                  << formatDims(weight.getShape().drop_front(2));
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
  return single(convOf(ctx, (*in)[0], (*in)[1], ctx.input(2)));
}

} // namespace

FailureOr<Value> cgc::onnx_import::convOf(NodeContext &ctx, Value x, Value w,
                                          Value bias) {
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
  if (failed(checkWindowValues(ctx, "group", {group}, 1)))
    return failure();
  SmallVector<Value> operands = {x, w};
  if (bias)
    operands.push_back(bias);
  return ctx.create1<ConvOp>(
      operands, {ctx.namedI64Array("strides", window.strides),
                 ctx.namedI64Array("pads", window.pads),
                 ctx.namedI64Array("dilations", window.dilations),
                 ctx.namedI64("group", group)});
}

namespace {

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
  if (failed(checkWindowValues(ctx, "group", {group}, 1)))
    return failure();
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
    ctx.error() << "output_shape " << formatDims(*outputShape) << " does not have "
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
      if (target <= 0 || target > kMaxTensorBytes) {
        ctx.error() << "output_shape " << formatDims(*outputShape)
                    << " has an entry outside [1, 2^40]";
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

/// A MaxPool or AveragePool of x with the node's window attributes
/// (`countPads` overrides an AveragePool's count_include_pad).
template <typename OpTy>
FailureOr<Value> poolOf(NodeContext &ctx, Value x,
                        std::optional<bool> countPads = std::nullopt) {
  constexpr bool isMax = std::is_same_v<OpTy, MaxPoolOp>;
  RankedTensorType xt = tensorType(x);
  if (xt.getRank() < 3) {
    ctx.error() << "expects an N x C x D1... input, got " << xt;
    return failure();
  }
  size_t spatial = xt.getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (ctx.hadAttributeError())
    return failure();
  if (!kernel || kernel->size() != spatial ||
      llvm::any_of(*kernel, [](int64_t k) {
        return k <= 0 || k > kMaxWindowValue;
      })) {
    ctx.error() << "kernel_shape must have " << spatial
                << " entries from 1 to 2^20";
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
    attrs.push_back(ctx.namedBool(
        "count_include_pad",
        countPads.value_or(ctx.getInt("count_include_pad", 0) != 0)));
  return ctx.create1<OpTy>({x}, attrs);
}

/// MaxPool (values only) and AveragePool.
template <typename OpTy> Results importPool(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  if (std::is_same_v<OpTy, MaxPoolOp> &&
      failed(checkOutputsUnused(ctx, 1, "the Indices output")))
    return failure();
  return single(poolOf<OpTy>(ctx, *x));
}

/// LpPool: (sum of |x|^p over the window)^(1/p), pads counting as zeros:
/// an average pool that counts the pads, times the window size.
Results importLpPool(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  double p = (double)ctx.getInt("p", 2);
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (ctx.hadAttributeError())
    return failure();
  if (p <= 0 || !kernel) {
    ctx.error() << "needs kernel_shape and a positive p";
    return failure();
  }
  Type element = tensorType(*x).getElementType();
  FailureOr<Value> magnitude =
      ctx.create1<AbsOp>({*x}, {}, {x->getType()});
  if (failed(magnitude))
    return failure();
  FailureOr<Value> powered =
      p == 2 ? ctx.create1<MulOp>({*magnitude, *magnitude})
             : ctx.create1<PowOp>({*magnitude, ctx.constScalar(p, element)});
  if (failed(powered))
    return failure();
  FailureOr<Value> mean =
      poolOf<AveragePoolOp>(ctx, *powered, /*countPads=*/true);
  if (failed(mean))
    return failure();
  int64_t count = 1;
  for (int64_t k : *kernel) {
    if (k < 1 || k > (1 << 20) || count > (1 << 30) / k) {
      ctx.error() << "kernel_shape entries must be positive and their "
                     "product at most 2^30";
      return failure();
    }
    count *= k;
  }
  FailureOr<Value> sum = ctx.create1<MulOp>(
      {*mean, ctx.constScalar((double)count, element)});
  if (failed(sum))
    return failure();
  if (p == 2)
    return single(ctx.create1<SqrtOp>({*sum}, {}, {sum->getType()}));
  return single(
      ctx.create1<PowOp>({*sum, ctx.constScalar(1.0 / p, element)}));
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
  add("LpPool", importLpPool,
      "`cgc.average_pool` of |x|^p times the window size, then ^(1/p)");
  add("AveragePool", importPool<AveragePoolOp>,
      "`cgc.average_pool` (auto_pad resolved to explicit pads)");
  add("GlobalAveragePool", importGlobalPool<ReduceMeanOp>,
      "`cgc.reduce_mean` over the spatial axes, keepdims");
  add("GlobalMaxPool", importGlobalPool<ReduceMaxOp>,
      "`cgc.reduce_max` over the spatial axes, keepdims");
  add("GlobalLpPool", importGlobalLpPool,
      "`cgc.reduce_l1`/`cgc.reduce_l2` (p=1/2), else abs, pow, "
      "`cgc.reduce_sum`, pow 1/p");
}
