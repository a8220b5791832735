//===- NormalizationOps.cpp - importers of softmax and norm ops -----------===//

#include "ImportHelpers.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"

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

/// RMSNormalization (opset 23), as its ONNX function: x / sqrt(mean(x^2
/// over axis..rank-1) + epsilon) computed in stash_type (float, or double
/// with 11), cast back to x's type, then times scale.
Results importRMSNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  Value x = (*in)[0];
  RankedTensorType xt = tensorType(x);
  int64_t rank = xt.getRank();
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  FailureOr<Type> compute = stashType(ctx);
  if (failed(compute))
    return failure();
  FailureOr<Value> xc = castTo(ctx, x, *compute);
  if (failed(xc))
    return failure();
  FailureOr<Value> squared = ctx.create1<MulOp>({*xc, *xc});
  if (failed(squared))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  FailureOr<Value> meanSquare = ctx.create1<ReduceMeanOp>(
      {*squared},
      {ctx.namedI64Array("axes", axes), ctx.namedBool("keepdims", true)});
  if (failed(meanSquare))
    return failure();
  FailureOr<Value> shifted = ctx.create1<AddOp>(
      {*meanSquare, ctx.constScalar(epsilon, *compute)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> rms =
      ctx.create1<SqrtOp>({*shifted}, {}, {shifted->getType()});
  if (failed(rms))
    return failure();
  FailureOr<Value> normalized = ctx.create1<DivOp>({*xc, *rms});
  if (failed(normalized))
    return failure();
  FailureOr<Value> back = castTo(ctx, *normalized, xt.getElementType());
  FailureOr<Value> scale = castTo(ctx, (*in)[1], xt.getElementType());
  if (failed(back) || failed(scale))
    return failure();
  return single(ctx.create1<MulOp>({*back, *scale}));
}

/// A [G] (opset 18) or [C] parameter of GroupNormalization as [C, 1, ...]
/// (rank - 1 dims) in `element`: a per-group one repeated over its
/// channels.
FailureOr<Value> perChannel(NodeContext &ctx, Value param, int64_t channels,
                            int64_t groups, int64_t rank, Type element) {
  RankedTensorType t = tensorType(param);
  if (t.getRank() != 1 ||
      (t.getDimSize(0) != channels && t.getDimSize(0) != groups)) {
    ctx.error() << "scale and bias must be [" << channels << "] (or ["
                << groups << "] before opset 21), got " << t;
    return failure();
  }
  FailureOr<Value> v = castTo(ctx, param, element);
  if (failed(v))
    return failure();
  if (t.getDimSize(0) != channels) {
    int64_t perGroup = channels / groups;
    FailureOr<Value> column = reshapeTo(ctx, *v, {groups, 1});
    if (failed(column) ||
        failed(v = ctx.create1<ExpandOp>(
                   {*column}, {},
                   {RankedTensorType::get({groups, perGroup}, element)})))
      return failure();
  }
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = channels;
  return reshapeTo(ctx, *v, shape);
}

/// GroupNormalization (opsets 18, 21): each group of C / num_groups
/// channels normalized over its channels and positions (an instance norm
/// of [N, G, rest]), in stash_type, then a per-channel scale and bias.
Results importGroupNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  Value x = (*in)[0];
  RankedTensorType xt = tensorType(x);
  int64_t groups = ctx.getInt("num_groups", 0);
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  FailureOr<Type> compute = stashType(ctx);
  if (failed(compute))
    return failure();
  if (xt.getRank() < 2 || !xt.hasStaticShape() || groups <= 0 ||
      xt.getNumElements() == 0 || xt.getDimSize(1) % groups != 0) {
    ctx.error() << "expects a static, non-empty [N, C, ...] input with C a "
                   "multiple of num_groups ("
                << groups << "), got " << xt;
    return failure();
  }
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1);
  int64_t rest = xt.getNumElements() / (n * groups);
  FailureOr<Value> xc = castTo(ctx, x, *compute);
  FailureOr<Value> grouped =
      succeeded(xc) ? reshapeTo(ctx, *xc, {n, groups, rest}) : xc;
  if (failed(grouped))
    return failure();
  auto groupType = RankedTensorType::get({groups}, *compute);
  Value ones = ctx.constant(DenseElementsAttr::get(
            groupType, Attribute(FloatAttr::get(*compute, 1.0)))),
        zeros = ctx.constant(DenseElementsAttr::get(
            groupType, Attribute(FloatAttr::get(*compute, 0.0))));
  FailureOr<Value> normalized = ctx.create1<InstanceNormOp>(
      {*grouped, ones, zeros}, {ctx.namedF64("epsilon", epsilon)});
  if (failed(normalized) ||
      failed(normalized = reshapeTo(ctx, *normalized, xt.getShape())) ||
      failed(normalized = castTo(ctx, *normalized, xt.getElementType())))
    return failure();
  Type element = xt.getElementType();
  FailureOr<Value> scale =
      perChannel(ctx, (*in)[1], c, groups, xt.getRank(), element);
  FailureOr<Value> bias =
      perChannel(ctx, (*in)[2], c, groups, xt.getRank(), element);
  if (failed(scale) || failed(bias))
    return failure();
  FailureOr<Value> scaled = ctx.create1<MulOp>({*normalized, *scale});
  if (failed(scaled))
    return failure();
  return single(ctx.create1<AddOp>({*scaled, *bias}));
}

/// running * momentum + batch * (1 - momentum), in the batch's type.
FailureOr<Value> blendRunning(NodeContext &ctx, Value running, Value batch,
                              double momentum) {
  Type element = tensorType(batch).getElementType();
  FailureOr<Value> r = castTo(ctx, running, element);
  FailureOr<Value> kept =
      succeeded(r)
          ? ctx.create1<MulOp>({*r, ctx.constScalar(momentum, element)})
          : r;
  FailureOr<Value> added =
      succeeded(kept)
          ? ctx.create1<MulOp>({batch, ctx.constScalar(1 - momentum, element)})
          : kept;
  if (failed(added))
    return failure();
  return ctx.create1<AddOp>({*kept, *added});
}

/// Under --train (initializers kept), the running mean and variance that
/// are initializers get their next values marked for the training step,
/// which keeps them as state (ONNX has no mutable tensors: an exporter
/// leaves the node's statistics outputs unread). The variance blended in is
/// the unbiased one, n / (n - 1) times the batch's, as PyTorch and cuDNN
/// keep it (ONNX's reference blends the biased one into the node's output,
/// which stays as ONNX defines it).
LogicalResult markRunningStatistics(NodeContext &ctx, ArrayRef<Value> in,
                                    Value mean, Value var, double momentum) {
  auto isKeptInitializer = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && isa<ConstantOp>(def) && isInitializer(def);
  };
  if (!isKeptInitializer(in[3]) && !isKeptInitializer(in[4]))
    return success();
  RankedTensorType xt = tensorType(in[0]);
  if (!xt.hasStaticShape())
    return success(); // the training step refuses dynamic shapes itself
  // Rank < 2 or no channels: no value per channel (and no division by 0).
  int64_t perChannel = xt.getRank() >= 2 && xt.getDimSize(1) > 0
                           ? xt.getNumElements() / xt.getDimSize(1)
                           : 0;
  if (perChannel < 2) {
    ctx.error() << "training needs more than one value per channel (input "
                << xt << "): the running variance's unbiased estimate is "
                << "undefined";
    return failure();
  }
  Type element = xt.getElementType();
  FailureOr<Value> unbiased = ctx.create1<MulOp>(
      {var, ctx.constScalar((double)perChannel / (perChannel - 1), element)});
  if (failed(unbiased))
    return failure();
  for (auto [index, batch] : {std::make_pair(3, mean),
                              std::make_pair(4, *unbiased)}) {
    Value running = in[index];
    if (!isKeptInitializer(running))
      continue;
    FailureOr<Value> next = blendRunning(ctx, running, batch, momentum);
    if (succeeded(next))
      next = castTo(ctx, *next, tensorType(running).getElementType());
    if (failed(next))
      return failure();
    setRunningStatistic(next->getDefiningOp(), ctx.node().input(index));
  }
  return success();
}

/// BatchNormalization in inference mode (running statistics). The
/// parameters are cast to the input's element type (opset 15 allows them
/// to differ).
/// BatchNormalization with training_mode=1 (opset 14+): normalized by the
/// batch's own mean and (population) variance over every axis but the
/// channel's, and the running statistics blended by momentum:
/// {Y, running_mean, running_var}.
Results importBatchNormTraining(NodeContext &ctx, ArrayRef<Value> in) {
  Value x = in[0];
  RankedTensorType xt = tensorType(x);
  if (xt.getRank() < 2) {
    ctx.error() << "expects an N x C x ... input, got " << xt;
    return failure();
  }
  Type element = xt.getElementType();
  SmallVector<int64_t> axes = {0};
  llvm::append_range(axes, axesFrom(2, xt.getRank()));
  auto meanOver = [&](Value v, bool keep) {
    return ctx.create1<ReduceMeanOp>(
        {v}, {ctx.namedI64Array("axes", axes), ctx.namedBool("keepdims", keep)});
  };
  // One reduction for the mean: its [C] form reshaped to broadcast (a
  // second reduction would cost a pass over x, and another in the
  // backward). With a dynamic channel count the kept form is its own.
  FailureOr<Value> mean = meanOver(x, false);
  FailureOr<Value> meanKept = mean;
  if (succeeded(mean)) {
    SmallVector<int64_t> kept(xt.getRank(), 1);
    kept[1] = xt.getDimSize(1);
    meanKept = ShapedType::isDynamic(kept[1]) ? meanOver(x, true)
                                             : reshapeTo(ctx, *mean, kept);
  }
  FailureOr<Value> centered =
      succeeded(meanKept) ? ctx.create1<SubOp>({x, *meanKept}) : meanKept;
  FailureOr<Value> squared =
      succeeded(centered) ? ctx.create1<MulOp>({*centered, *centered})
                          : centered;
  FailureOr<Value> var =
      succeeded(squared) ? meanOver(*squared, false) : squared;
  if (failed(var))
    return failure();
  SmallVector<Value> operands = {x};
  for (Value param : {in[1], in[2]}) {
    FailureOr<Value> p = castTo(ctx, param, element);
    if (failed(p))
      return failure();
    operands.push_back(*p);
  }
  operands.push_back(*mean);
  operands.push_back(*var);
  FailureOr<Value> y = ctx.create1<BatchNormOp>(
      operands, {ctx.namedF64("epsilon", ctx.getFloat("epsilon", 1e-5))});
  double momentum = ctx.getFloat("momentum", 0.9);
  if (failed(y) || ctx.hadAttributeError())
    return failure();
  SmallVector<Value> results = {*y};
  for (auto [running, batch] : {std::make_pair(in[3], *mean),
                                std::make_pair(in[4], *var)}) {
    FailureOr<Value> blended = blendRunning(ctx, running, batch, momentum);
    if (failed(blended))
      return failure();
    results.push_back(*blended);
  }
  if (failed(markRunningStatistics(ctx, in, *mean, *var, momentum)))
    return failure();
  return results;
}

/// Under --train, an inference BatchNormalization's running mean and
/// variance are statistics, not parameters: no optimizer updates them
/// unless --trainable names them (in PyTorch they are buffers, which an
/// eval-mode module reads and nothing trains).
void markStatistics(NodeContext &ctx, ArrayRef<Value> in) {
  if (!ctx.graph().options().keepInitializers)
    return;
  for (Value statistic : in.slice(3, 2))
    if (Operation *def = statistic.getDefiningOp();
        def && isa<ConstantOp>(def) && isInitializer(def))
      setStatistic(def);
}

Results importBatchNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 5);
  if (failed(in))
    return failure();
  if (ctx.opset() >= 14 && ctx.getInt("training_mode", 0) != 0)
    return importBatchNormTraining(ctx, *in);
  if (failed(checkOutputsUnused(ctx, 1, "training mode (statistics outputs)")))
    return failure();
  if (ctx.getInt("training_mode", 0) != 0) {
    ctx.error() << "training_mode=1 is not supported (inference only)";
    return failure();
  }
  markStatistics(ctx, *in);
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
      normalizeSortedAxes(ctx, rawAxes, xt.getRank());
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

/// LpNormalization: x / reduce_l1|l2(x, axis, keepdims), 0 where the norm
/// is 0.
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
  // A zero norm gives zeros (opset 22 says so; earlier versions left 0/0
  // undefined): divide the all-zero slice by 1 instead.
  Type element = tensorType(*x).getElementType();
  Value zero = ctx.constScalar(0, element), one = ctx.constScalar(1, element);
  FailureOr<Value> isZero = ctx.create1<EqualOp>({*norm, zero});
  if (failed(isZero))
    return failure();
  FailureOr<Value> divisor = ctx.create1<WhereOp>({*isZero, one, *norm});
  if (failed(divisor))
    return failure();
  return single(ctx.create1<DivOp>({*x, *divisor}));
}

} // namespace

void cgc::onnx_import::registerNormalizationOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Softmax", importSoftmax<SoftmaxOp>,
      "`cgc.softmax` (before opset 13: reshaped to 2-D around it)");
  add("LogSoftmax", importSoftmax<LogSoftmaxOp>,
      "`cgc.log_softmax` (before opset 13: reshaped to 2-D around it)");
  add("Hardmax", importSoftmax<HardmaxOp>,
      "`cgc.hardmax` (before opset 13: reshaped to 2-D around it)");
  add("NegativeLogLikelihoodLoss", importNllLoss, "`cgc.nll_loss`");
  add("SoftmaxCrossEntropyLoss", importSoftmaxCrossEntropy,
      "`cgc.log_softmax` on axis 1, then `cgc.nll_loss`");
  add("RMSNormalization", importRMSNorm,
      "mul, `cgc.reduce_mean`, add epsilon, sqrt, div in float (stash_type), "
      "then times scale");
  add("LayerNormalization", importLayerNorm,
      "`cgc.layer_norm`; Mean/InvStdDev outputs as reductions");
  add("BatchNormalization", importBatchNorm,
      "`cgc.batch_norm` (inference: running statistics; training_mode: "
      "batch statistics by `cgc.reduce_mean`, running ones blended)");
  add("InstanceNormalization", importInstanceNorm, "`cgc.instance_norm`");
  add("GroupNormalization", importGroupNorm,
      "`cgc.instance_norm` of [N, groups, rest] (stash_type), then the "
      "per-channel scale and bias");
  add("LRN", importLRN, "`cgc.lrn`");
  add("MeanVarianceNormalization", importMVN,
      "reduce_mean, sub, mul, reduce_mean, sqrt, add 1e-9, div");
  add("LpNormalization", importLpNormalization,
      "`cgc.div` by `cgc.reduce_l1`/`cgc.reduce_l2` (keepdims), 1 where it is "
      "0");
}
