//===- AttentionOps.cpp - Attention and LinearAttention --------------------===//
//
// Attention (opsets 23-25) as the ops of its ONNX function: heads split out
// of rank-3 inputs, past K/V concatenated in front, KV heads repeated for
// grouped-query attention, S = Q x Kt times scale, softcap, an additive
// bias, softmax, P x V. The bias gathers
// every mask the op knows: attn_mask (boolean or additive, padded to the
// key length), the causal frontier, the sliding window and the padding of
// nonpad_kv_seqlen. The causal and window frontiers are aligned bottom
// right: query i sits at position i + offset, where the offset is the past
// length (or, with nonpad_kv_seqlen, that batch's valid keys minus the
// query length). A query row whose bias masks every key yields zeros, not
// the NaN of a softmax of -inf.
//
// The GPU path's fuse pass merges S = Q x Kt, its elementwise ops, the
// softmax and P x V into one attention kernel, so the composition costs no
// materialized score matrix there.
//
// LinearAttention (opset 26), a recurrence over the sequence, is unrolled
// over its static length as the reference computes it, in float32.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// The inputs as [batch, heads, sequence, head size] (values: value size).
struct HeadsView {
  Value q, k, v;
  int64_t batch, qHeads, kvHeads, qLen;
  bool rank3;
};

/// x [B, S, H*D] as [B, H, S, D].
FailureOr<Value> splitHeads(NodeContext &ctx, Value x, int64_t heads,
                            StringRef what) {
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  if (heads <= 0 || shape[2] % heads != 0) {
    ctx.error() << "the hidden size " << shape[2] << " of " << what
                << " is not a multiple of its head count " << heads;
    return failure();
  }
  FailureOr<Value> split =
      reshapeTo(ctx, x, {shape[0], shape[1], heads, shape[2] / heads});
  if (failed(split))
    return failure();
  return ctx.create1<TransposeOp>(
      {*split}, {ctx.namedI64Array("perm", {0, 2, 1, 3})});
}

/// Checks Q, K, V and brings rank-3 inputs to [B, H, S, D].
FailureOr<HeadsView> viewHeads(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  int64_t rank = tensorType((*in)[0]).getRank();
  const char *names[] = {"Q", "K", "V"};
  for (auto [value, name] : llvm::zip((*in), names)) {
    RankedTensorType type = tensorType(value);
    if (!type.hasStaticShape() || type.getRank() != rank ||
        (rank != 3 && rank != 4)) {
      ctx.error() << "Q, K and V must be static tensors of rank 3 or 4 "
                     "alike, got "
                  << name << " of type " << type;
      return failure();
    }
  }
  bool hasQHeads = ctx.hasAttr("q_num_heads"),
       hasKvHeads = ctx.hasAttr("kv_num_heads");
  int64_t qHeads = ctx.getInt("q_num_heads", 0),
          kvHeads = ctx.getInt("kv_num_heads", 0);
  if (ctx.hadAttributeError())
    return failure();
  HeadsView view{(*in)[0], (*in)[1], (*in)[2], 0, 0, 0, 0, rank == 3};
  if (rank == 3) {
    if (!hasQHeads || !hasKvHeads) {
      ctx.error() << "rank-3 inputs need the q_num_heads and kv_num_heads "
                     "attributes";
      return failure();
    }
    FailureOr<Value> q = splitHeads(ctx, view.q, qHeads, "Q"),
                     k = splitHeads(ctx, view.k, kvHeads, "K"),
                     v = splitHeads(ctx, view.v, kvHeads, "V");
    if (failed(q) || failed(k) || failed(v))
      return failure();
    view.q = *q;
    view.k = *k;
    view.v = *v;
  } else if ((hasQHeads && qHeads != tensorType(view.q).getDimSize(1)) ||
             (hasKvHeads && kvHeads != tensorType(view.k).getDimSize(1))) {
    ctx.error() << "q_num_heads/kv_num_heads disagree with the head dims of "
                   "the rank-4 inputs";
    return failure();
  }
  ArrayRef<int64_t> q = tensorType(view.q).getShape(),
                    k = tensorType(view.k).getShape(),
                    v = tensorType(view.v).getShape();
  if (k[0] != q[0] || v[0] != q[0] || k[1] != v[1] || k[2] != v[2] ||
      k[3] != q[3]) {
    ctx.error() << "Q " << tensorType(view.q) << ", K " << tensorType(view.k)
                << " and V " << tensorType(view.v)
                << " (as [batch, heads, sequence, head size]) do not match";
    return failure();
  }
  if (k[1] <= 0 || q[1] < 0) {
    ctx.error() << "needs static head counts and at least one key/value "
                   "head, got Q "
                << tensorType(view.q) << " and K " << tensorType(view.k);
    return failure();
  }
  if (q[1] % k[1] != 0) {
    ctx.error() << "the " << q[1] << " query heads are not a multiple of the "
                << k[1] << " key/value heads";
    return failure();
  }
  view.batch = q[0];
  view.qHeads = q[1];
  view.kvHeads = k[1];
  view.qLen = q[2];
  return view;
}

/// past [B, H, P, D] in front of x [B, H, S, D] along the sequence.
FailureOr<Value> withPast(NodeContext &ctx, Value past, Value x,
                          StringRef what) {
  if (!past)
    return x;
  RankedTensorType pt = tensorType(past), xt = tensorType(x);
  if (pt.getRank() != 4 || !pt.hasStaticShape() ||
      pt.getElementType() != xt.getElementType() ||
      pt.getDimSize(0) != xt.getDimSize(0) ||
      pt.getDimSize(1) != xt.getDimSize(1) ||
      pt.getDimSize(3) != xt.getDimSize(3)) {
    ctx.error() << what << " " << pt << " does not match " << xt
                << " (as [batch, heads, sequence, head size])";
    return failure();
  }
  return ctx.create1<ConcatOp>({past, x}, {ctx.namedI64("axis", 2)});
}

/// Each KV head repeated for the `groups` query heads that share it:
/// [B, H, S, D] -> [B, H * groups, S, D], heads h0 h0 h1 h1 ...
FailureOr<Value> repeatHeads(NodeContext &ctx, Value x, int64_t groups) {
  if (groups == 1)
    return x;
  ArrayRef<int64_t> s = tensorType(x).getShape();
  FailureOr<Value> five = reshapeTo(ctx, x, {s[0], s[1], 1, s[2], s[3]});
  if (failed(five))
    return failure();
  auto expanded = RankedTensorType::get({s[0], s[1], groups, s[2], s[3]},
                                        tensorType(x).getElementType());
  FailureOr<Value> copies = ctx.create1<ExpandOp>({*five}, {}, {expanded});
  if (failed(copies))
    return failure();
  return reshapeTo(ctx, *copies, {s[0], s[1] * groups, s[2], s[3]});
}

/// Where query i sits among the keys: i + offset, with one offset for all
/// (the past length) or one a batch (a [B] tensor: nonpad_kv_seqlen, the
/// valid keys of each batch, minus the query length).
struct Frontier {
  int64_t qLen, kvLen, offset = 0;
  Value perBatch, validKeys;
};

/// The keys j each query i may see by position: minRel <= j - i - offset
/// <= maxRel (either bound may be absent). [q, kv] when the offset is
/// static, else [B, 1, q, kv].
FailureOr<Value> positionsAllowed(NodeContext &ctx, const Frontier &f,
                                  std::optional<int64_t> minRel,
                                  std::optional<int64_t> maxRel) {
  if (f.qLen < 0 || f.kvLen < 0 ||
      (f.qLen > 0 && f.kvLen > (int64_t(1) << 26) / f.qLen)) {
    ctx.error() << "a causal or window mask needs static lengths and at most "
                   "2^26 positions, got "
                << f.qLen << " x " << f.kvLen;
    return failure();
  }
  auto inRange = [&](int64_t rel) {
    return (!minRel || rel >= *minRel) && (!maxRel || rel <= *maxRel);
  };
  Builder b(ctx.context());
  if (!f.perBatch) {
    SmallVector<bool> allowed;
    for (int64_t i = 0; i < f.qLen; ++i)
      for (int64_t j = 0; j < f.kvLen; ++j)
        allowed.push_back(inRange(j - i - f.offset));
    auto type = RankedTensorType::get({f.qLen, f.kvLen}, b.getI1Type());
    return ctx.constant(DenseElementsAttr::get(type, ArrayRef(allowed)));
  }
  SmallVector<int64_t> rel;
  for (int64_t i = 0; i < f.qLen; ++i)
    for (int64_t j = 0; j < f.kvLen; ++j)
      rel.push_back(j - i);
  int64_t batch = tensorType(f.perBatch).getDimSize(0);
  FailureOr<Value> offsets = reshapeTo(ctx, f.perBatch, {batch, 1, 1});
  if (failed(offsets))
    return failure();
  FailureOr<Value> shifted = ctx.create1<SubOp>(
      {ctx.constI64(rel, {f.qLen, f.kvLen}), *offsets});
  if (failed(shifted))
    return failure();
  Value allowed;
  if (minRel) {
    FailureOr<Value> above = ctx.create1<GreaterEqualOp>(
        {*shifted, ctx.constInt(*minRel, b.getI64Type())});
    if (failed(above))
      return failure();
    allowed = *above;
  }
  if (maxRel) {
    FailureOr<Value> below = ctx.create1<LessEqualOp>(
        {*shifted, ctx.constInt(*maxRel, b.getI64Type())});
    if (failed(below))
      return failure();
    if (allowed) {
      below = ctx.create1<AndOp>({allowed, *below});
      if (failed(below))
        return failure();
    }
    allowed = *below;
  }
  return reshapeTo(ctx, allowed, {batch, 1, f.qLen, f.kvLen});
}

/// Keys j < nonpad_kv_seqlen[b]: [B, 1, 1, kv].
FailureOr<Value> keysBeforePadding(NodeContext &ctx, Value nonpad,
                                   int64_t kvLen) {
  int64_t batch = tensorType(nonpad).getDimSize(0);
  if (kvLen < 0 || kvLen > (int64_t(1) << 26)) {
    ctx.error() << "nonpad_kv_seqlen needs a static key length of at most "
                   "2^26, got "
                << kvLen;
    return failure();
  }
  SmallVector<int64_t> keys;
  for (int64_t j = 0; j < kvLen; ++j)
    keys.push_back(j);
  FailureOr<Value> lengths = reshapeTo(ctx, nonpad, {batch, 1});
  if (failed(lengths))
    return failure();
  FailureOr<Value> valid =
      ctx.create1<LessOp>({ctx.constI64(keys, {1, kvLen}), *lengths});
  if (failed(valid))
    return failure();
  return reshapeTo(ctx, *valid, {batch, 1, 1, kvLen});
}

/// attn_mask with its last dim padded to kvLen by `fill` (a scalar of its
/// element type): masks may cover only the past and current keys.
FailureOr<Value> padMaskKeys(NodeContext &ctx, Value mask, int64_t kvLen,
                             Value fill) {
  RankedTensorType type = tensorType(mask);
  if (type.getRank() < 1 || type.getRank() > 4) {
    ctx.error() << "attn_mask must have rank 1 to 4, got " << type;
    return failure();
  }
  int64_t have = type.getShape().back();
  if (ShapedType::isDynamic(have) || ShapedType::isDynamic(kvLen)) {
    ctx.error() << "attn_mask " << type
                << " needs a static key dim, as the keys have";
    return failure();
  }
  if (have > kvLen) {
    ctx.error() << "attn_mask " << type << " covers more than the " << kvLen
                << " keys";
    return failure();
  }
  if (have == kvLen)
    return mask;
  SmallVector<int64_t> padShape(type.getShape());
  padShape.back() = kvLen - have;
  auto padType = RankedTensorType::get(padShape, type.getElementType());
  FailureOr<Value> pad = ctx.create1<ExpandOp>({fill}, {}, {padType});
  if (failed(pad))
    return failure();
  return ctx.create1<ConcatOp>(
      {mask, *pad}, {ctx.namedI64("axis", type.getRank() - 1)});
}

/// a && b where both are present, else whichever is.
FailureOr<Value> both(NodeContext &ctx, Value a, Value b) {
  if (!a || !b)
    return a ? a : b;
  return ctx.create1<AndOp>({a, b});
}

/// The additive bias of the scores (null when nothing is masked) and
/// whether a query row may end up with every key masked.
struct Bias {
  Value value;
  bool mayMaskRows = false;
};

/// Builds the bias from attn_mask, is_causal, the window attributes and
/// nonpad_kv_seqlen, in the element type of the scores.
FailureOr<Bias> buildBias(NodeContext &ctx, const Frontier &frontier,
                          Type element) {
  bool causal = ctx.getInt("is_causal", 0) != 0;
  int64_t left = ctx.getInt("left_window_size", -1),
          right = ctx.getInt("right_window_size", -1);
  if (ctx.hadAttributeError())
    return failure();
  if (left < -1 || right < -1) {
    ctx.error() << "left_window_size and right_window_size must be -1 or "
                   "nonnegative, got "
                << left << " and " << right;
    return failure();
  }
  Bias bias;
  Value allowed, additive;
  std::optional<int64_t> minRel, maxRel;
  if (causal)
    maxRel = 0;
  if (right >= 0)
    maxRel = maxRel ? std::min(*maxRel, right) : right;
  if (left >= 0)
    minRel = -left;
  if (minRel || maxRel) {
    FailureOr<Value> byPosition =
        positionsAllowed(ctx, frontier, minRel, maxRel);
    if (failed(byPosition))
      return failure();
    allowed = *byPosition;
    // With a static offset (>= 0) an upper bound leaves key 0 to every
    // query; a lower bound or a per-batch offset may leave a row nothing.
    bias.mayMaskRows = minRel || frontier.perBatch;
  }
  if (frontier.perBatch) {
    FailureOr<Value> valid =
        keysBeforePadding(ctx, frontier.validKeys, frontier.kvLen);
    if (failed(valid) || failed(valid = both(ctx, allowed, *valid)))
      return failure();
    allowed = *valid;
    bias.mayMaskRows = true;
  }
  if (Value mask = ctx.input(3)) {
    bias.mayMaskRows = true;
    Type maskElement = tensorType(mask).getElementType();
    bool boolean = maskElement.isInteger(1);
    Value fill = boolean ? ctx.constInt(0, maskElement)
                         : ctx.constScalar(-INFINITY, maskElement);
    FailureOr<Value> padded = padMaskKeys(ctx, mask, frontier.kvLen, fill);
    if (failed(padded))
      return failure();
    if (boolean) {
      if (failed(padded = both(ctx, allowed, *padded)))
        return failure();
      allowed = *padded;
    } else {
      FailureOr<Value> cast = castTo(ctx, *padded, element);
      if (failed(cast))
        return failure();
      additive = *cast;
    }
  }
  if (allowed) {
    FailureOr<Value> masked = ctx.create1<WhereOp>(
        {allowed, ctx.constScalar(0.0, element),
         ctx.constScalar(-INFINITY, element)});
    if (failed(masked))
      return failure();
    if (additive && failed(masked = ctx.create1<AddOp>({*masked, additive})))
      return failure();
    additive = *masked;
  }
  bias.value = additive;
  return bias;
}

/// The offset of the causal/window frontier: the past length, or with
/// nonpad_kv_seqlen (an external cache) each batch's valid keys minus the
/// query length.
FailureOr<Frontier> frontierOf(NodeContext &ctx, const HeadsView &view,
                               int64_t pastLen, int64_t kvLen) {
  Frontier frontier{view.qLen, kvLen, pastLen, Value(), Value()};
  Value nonpad = ctx.input(6);
  if (!nonpad)
    return frontier;
  RankedTensorType type = tensorType(nonpad);
  if (ctx.input(4)) {
    ctx.error() << "nonpad_kv_seqlen cannot be combined with past_key and "
                   "past_value";
    return failure();
  }
  if (type.getShape() != ArrayRef<int64_t>{view.batch} ||
      !type.getElementType().isInteger(64)) {
    ctx.error() << "nonpad_kv_seqlen must be an int64 tensor [" << view.batch
                << "], got " << type;
    return failure();
  }
  FailureOr<Value> offsets = ctx.create1<SubOp>(
      {nonpad, ctx.constInt(view.qLen, type.getElementType())});
  if (failed(offsets))
    return failure();
  frontier.perBatch = *offsets;
  frontier.validKeys = nonpad;
  return frontier;
}

/// The element type softmax_precision names, or the scores' own.
FailureOr<Type> softmaxType(NodeContext &ctx, Type element) {
  if (!ctx.hasAttr("softmax_precision"))
    return element;
  int64_t code = ctx.getInt("softmax_precision", 0);
  Type type = convertElementType(ctx.context(), (int32_t)code);
  if (!type || !isa<FloatType>(type)) {
    ctx.error() << "softmax_precision must name a float type, got "
                << onnxTypeName((int32_t)code);
    return failure();
  }
  return type;
}

/// x with the rows that `rowMasked` ([..., q, 1]) marks set to zero.
FailureOr<Value> zeroRows(NodeContext &ctx, Value rowMasked, Value x) {
  if (!rowMasked)
    return x;
  return ctx.create1<WhereOp>(
      {rowMasked, ctx.constScalar(0.0, tensorType(x).getElementType()), x});
}

/// The rows of the bias that mask every key: max over keys is -inf.
FailureOr<Value> fullyMaskedRows(NodeContext &ctx, Value bias) {
  int64_t last = tensorType(bias).getRank() - 1;
  FailureOr<Value> rowMax = ctx.create1<ReduceMaxOp>(
      {bias},
      {ctx.namedI64Array("axes", {last}), ctx.namedBool("keepdims", true)});
  if (failed(rowMax))
    return failure();
  return ctx.create1<EqualOp>(
      {*rowMax,
       ctx.constScalar(-INFINITY, tensorType(bias).getElementType())});
}

/// tanh(x / cap) * cap.
FailureOr<Value> applySoftcap(NodeContext &ctx, Value x, double cap) {
  Value c = ctx.constScalar(cap, tensorType(x).getElementType());
  FailureOr<Value> scaled = ctx.create1<DivOp>({x, c});
  if (failed(scaled))
    return failure();
  FailureOr<Value> bounded =
      ctx.create1<TanhOp>({*scaled}, {}, {scaled->getType()});
  if (failed(bounded))
    return failure();
  return ctx.create1<MulOp>({*bounded, c});
}

/// S = (Q x K^T) * scale. The ONNX function scales Q and K by sqrt(scale)
/// each; one scaling of S is the same product (rounded once, not twice) and
/// stays inside the fused attention kernel, where scaling Q and K would
/// take two kernels of their own.
FailureOr<Value> scores(NodeContext &ctx, Value q, Value k) {
  Type element = tensorType(q).getElementType();
  double scale =
      ctx.getFloat("scale", 1.0 / std::sqrt((double)tensorType(q).getDimSize(3)));
  if (ctx.hadAttributeError())
    return failure();
  FailureOr<Value> kt = ctx.create1<TransposeOp>(
      {k}, {ctx.namedI64Array("perm", {0, 1, 3, 2})});
  if (failed(kt))
    return failure();
  FailureOr<Value> product = ctx.create1<MatMulOp>({q, *kt});
  if (failed(product))
    return failure();
  return ctx.create1<MulOp>({*product, ctx.constScalar(scale, element)});
}

/// Y [B, H, q, Dv] back to [B, q, H*Dv] for rank-3 inputs.
FailureOr<Value> mergeHeads(NodeContext &ctx, Value y) {
  ArrayRef<int64_t> s = tensorType(y).getShape();
  FailureOr<Value> t = ctx.create1<TransposeOp>(
      {y}, {ctx.namedI64Array("perm", {0, 2, 1, 3})});
  if (failed(t))
    return failure();
  return reshapeTo(ctx, *t, {s[0], s[2], s[1] * s[3]});
}

Results importAttention(NodeContext &ctx) {
  FailureOr<HeadsView> view = viewHeads(ctx);
  if (failed(view))
    return failure();
  Value pastKey = ctx.input(4), pastValue = ctx.input(5);
  if (!pastKey != !pastValue) {
    ctx.error() << "past_key and past_value must be given together";
    return failure();
  }
  FailureOr<Value> key = withPast(ctx, pastKey, view->k, "past_key"),
                   value = withPast(ctx, pastValue, view->v, "past_value");
  if (failed(key) || failed(value))
    return failure();
  int64_t pastLen = pastKey ? tensorType(pastKey).getDimSize(2) : 0;
  int64_t kvLen = tensorType(*key).getDimSize(2);
  Type element = tensorType(view->q).getElementType();
  int64_t mode = ctx.getInt("qk_matmul_output_mode", 0);
  double softcap = ctx.getFloat("softcap", 0.0);
  if (ctx.hadAttributeError())
    return failure();
  if (mode < 0 || mode > 3) {
    ctx.error() << "qk_matmul_output_mode must be 0-3, got " << mode;
    return failure();
  }
  FailureOr<Frontier> frontier = frontierOf(ctx, *view, pastLen, kvLen);
  if (failed(frontier))
    return failure();
  FailureOr<Bias> bias = buildBias(ctx, *frontier, element);
  FailureOr<Type> probType = softmaxType(ctx, element);
  if (failed(bias) || failed(probType))
    return failure();

  int64_t groups = view->qHeads / view->kvHeads;
  FailureOr<Value> k = repeatHeads(ctx, *key, groups),
                   v = repeatHeads(ctx, *value, groups);
  if (failed(k) || failed(v))
    return failure();
  FailureOr<Value> s = scores(ctx, view->q, *k);
  if (succeeded(s) && softcap > 0)
    s = applySoftcap(ctx, *s, softcap);
  if (failed(s))
    return failure();
  Value qkOutput = *s;
  if (bias->value) {
    if (failed(s = ctx.create1<AddOp>({*s, bias->value})))
      return failure();
    if (mode == 2)
      qkOutput = *s;
  }
  Value rowMasked;
  if (bias->mayMaskRows) {
    FailureOr<Value> rows = fullyMaskedRows(ctx, bias->value);
    if (failed(rows))
      return failure();
    rowMasked = *rows;
  }
  FailureOr<Value> logits = castTo(ctx, *s, *probType);
  if (failed(logits))
    return failure();
  FailureOr<Value> probs = ctx.create1<SoftmaxOp>(
      {*logits}, {ctx.namedI64("axis", 3)}, {logits->getType()});
  if (failed(probs) || failed(probs = castTo(ctx, *probs, element)))
    return failure();
  if (mode == 3 && ctx.isOutputUsed(3)) {
    FailureOr<Value> guarded = zeroRows(ctx, rowMasked, *probs);
    if (failed(guarded))
      return failure();
    qkOutput = *guarded;
  }
  // Guarding Y instead of P keeps the softmax and P x V one fused kernel;
  // a masked row's NaN probabilities are replaced all the same.
  FailureOr<Value> y = ctx.create1<MatMulOp>({*probs, *v});
  if (failed(y) || failed(y = zeroRows(ctx, rowMasked, *y)))
    return failure();
  if (view->rank3 && failed(y = mergeHeads(ctx, *y)))
    return failure();
  return SmallVector<Value>{*y, *key, *value, qkOutput};
}

//===----------------------------------------------------------------------===//
// LinearAttention
//===----------------------------------------------------------------------===//

/// Longest sequence LinearAttention is unrolled over.
constexpr int64_t kMaxLinearAttentionSteps = 1 << 14;

/// The inputs of a LinearAttention as [B, H, T, D] float32, the gates too.
struct LinearInputs {
  Value q, k, v, decay, beta, state;
  int64_t batch, qHeads, kvHeads, steps, keyDim, valueDim;
};

/// A [B, T, G] gate (G = kv heads, or kv heads * key dim with `perKey`) as
/// [B, H, T, G / H] in float32.
FailureOr<Value> gateHeads(NodeContext &ctx, Value gate, int64_t heads,
                           StringRef what) {
  FailureOr<Value> split = splitHeads(ctx, gate, heads, what);
  if (failed(split))
    return failure();
  return castTo(ctx, *split, Float32Type::get(ctx.context()));
}

/// Checks and shapes the inputs of a LinearAttention.
FailureOr<LinearInputs> linearInputs(NodeContext &ctx, bool gating,
                                     bool delta) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  int64_t qHeads = ctx.getInt("q_num_heads", 0),
          kvHeads = ctx.getInt("kv_num_heads", 0);
  if (ctx.hadAttributeError())
    return failure();
  for (Value x : *in)
    if (tensorType(x).getRank() != 3 || !tensorType(x).hasStaticShape()) {
      ctx.error() << "query, key and value must be static [B, T, H*D], got "
                  << tensorType(x);
      return failure();
    }
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0) {
    ctx.error() << "q_num_heads (" << qHeads << ") must be a positive "
                << "multiple of kv_num_heads (" << kvHeads << ")";
    return failure();
  }
  Type f32 = Float32Type::get(ctx.context());
  LinearInputs li;
  FailureOr<Value> q = gateHeads(ctx, (*in)[0], qHeads, "query"),
                   k = gateHeads(ctx, (*in)[1], kvHeads, "key"),
                   v = gateHeads(ctx, (*in)[2], kvHeads, "value");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  ArrayRef<int64_t> qs = tensorType(*q).getShape(),
                    vs = tensorType(*v).getShape();
  li = {*q, *k, *v, Value(), Value(), Value(), qs[0], qHeads, kvHeads,
        qs[2], qs[3], vs[3]};
  // The recurrence is unrolled, a few ops a step.
  if (li.steps > kMaxLinearAttentionSteps) {
    ctx.error() << "unrolls " << li.steps << " steps (at most "
                << kMaxLinearAttentionSteps << ")";
    return failure();
  }
  Value decay = ctx.input(4), beta = ctx.input(5);
  if (gating != (bool)decay || delta != (bool)beta) {
    ctx.error() << "the update rule needs " << (gating ? "" : "no ")
                << "decay and " << (delta ? "" : "no ") << "beta input";
    return failure();
  }
  for (Value gate : {decay, beta})
    if (gate && (tensorType(gate).getRank() != 3 ||
                 !tensorType(gate).hasStaticShape())) {
      ctx.error() << "decay and beta must be static rank-3 tensors, got "
                  << tensorType(gate);
      return failure();
    }
  if (decay) {
    int64_t last = tensorType(decay).getShape().back();
    if (last != kvHeads && last != kvHeads * li.keyDim) {
      ctx.error() << "decay's last dim must be kv_num_heads or kv_num_heads "
                     "* the key head size, got "
                  << last;
      return failure();
    }
    FailureOr<Value> d = gateHeads(ctx, decay, kvHeads, "decay");
    if (failed(d))
      return failure();
    li.decay = *d;
  }
  if (beta) {
    int64_t last = tensorType(beta).getShape().back();
    if (last != kvHeads && last != 1) {
      ctx.error() << "beta's last dim must be kv_num_heads or 1, got "
                  << last;
      return failure();
    }
    FailureOr<Value> b =
        gateHeads(ctx, beta, last == 1 ? 1 : kvHeads, "beta");
    if (failed(b))
      return failure();
    li.beta = *b;
  }
  auto stateType = RankedTensorType::get(
      {li.batch, kvHeads, li.keyDim, li.valueDim}, f32);
  if (Value past = ctx.input(3)) {
    if (tensorType(past).getShape() != stateType.getShape()) {
      ctx.error() << "past_state must be " << stateType.getShape().size()
                  << "-D [B, kv heads, key size, value size] = "
                  << stateType << " in shape, got " << tensorType(past);
      return failure();
    }
    FailureOr<Value> s = castTo(ctx, past, f32);
    if (failed(s))
      return failure();
    li.state = *s;
  } else {
    li.state = ctx.constant(DenseElementsAttr::get(stateType, 0.0f));
  }
  return li;
}

/// a [.., n] as [.., n, 1] (`column`) or [.., 1, n].
FailureOr<Value> lift(NodeContext &ctx, Value a, bool column) {
  SmallVector<int64_t> shape(tensorType(a).getShape());
  shape.insert(column ? shape.end() : shape.end() - 1, 1);
  return reshapeTo(ctx, a, shape);
}

/// One step of the recurrence: the state decayed, delta-corrected and
/// updated with k v^T; returns the new state.
FailureOr<Value> linearStep(NodeContext &ctx, const LinearInputs &li,
                            Value state, int64_t t) {
  FailureOr<Value> k = takeStep(ctx, li.k, 2, t), v = takeStep(ctx, li.v, 2, t);
  if (failed(k) || failed(v))
    return failure();
  if (li.decay) {
    FailureOr<Value> g = takeStep(ctx, li.decay, 2, t);
    if (failed(g) || failed(g = ctx.create1<ExpOp>({*g}, {}, {g->getType()})) ||
        failed(g = lift(ctx, *g, true)) ||
        failed(g = ctx.create1<MulOp>({state, *g})))
      return failure();
    state = *g;
  }
  if (li.beta) {
    // v - k^T S, scaled by beta.
    FailureOr<Value> kRow = lift(ctx, *k, false);
    FailureOr<Value> retrieved =
        succeeded(kRow) ? ctx.create1<MatMulOp>({*kRow, state}) : kRow;
    FailureOr<Value> b = takeStep(ctx, li.beta, 2, t);
    if (failed(retrieved) || failed(b) ||
        failed(retrieved = reshapeTo(ctx, *retrieved,
                                     tensorType(*v).getShape())) ||
        failed(v = ctx.create1<SubOp>({*v, *retrieved})) ||
        failed(v = ctx.create1<MulOp>({*b, *v})))
      return failure();
  }
  FailureOr<Value> kCol = lift(ctx, *k, true), vRow = lift(ctx, *v, false);
  if (failed(kCol) || failed(vRow))
    return failure();
  FailureOr<Value> outer = ctx.create1<MulOp>({*kCol, *vRow});
  if (failed(outer))
    return failure();
  return ctx.create1<AddOp>({state, *outer});
}

/// LinearAttention (opset 26): the recurrent state S (per KV head, key size
/// x value size) updated step by step (linear, gated by exp(decay), delta
/// rule with beta, or both), each query read against it; unrolled over
/// the static sequence, in float32.
Results importLinearAttention(NodeContext &ctx) {
  std::string rule = ctx.getString("update_rule", "gated_delta");
  if (!llvm::is_contained({"linear", "gated", "delta", "gated_delta"}, rule)) {
    ctx.error() << "update_rule must be linear, gated, delta or gated_delta, "
                   "got '"
                << rule << "'";
    return failure();
  }
  bool gating = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  FailureOr<LinearInputs> li = linearInputs(ctx, gating, delta);
  if (failed(li))
    return failure();
  double scale = ctx.getFloat("scale", 0.0);
  if (scale == 0.0)
    scale = 1.0 / std::sqrt((double)li->keyDim);
  Type f32 = Float32Type::get(ctx.context());
  Value state = li->state;
  SmallVector<Value> outputs;
  for (int64_t t = 0; t < li->steps; ++t) {
    FailureOr<Value> next = linearStep(ctx, *li, state, t);
    if (failed(next))
      return failure();
    state = *next;
    FailureOr<Value> read = repeatHeads(ctx, state, li->qHeads / li->kvHeads);
    FailureOr<Value> q = takeStep(ctx, li->q, 2, t);
    if (failed(read) || failed(q) || failed(q = lift(ctx, *q, false)))
      return failure();
    FailureOr<Value> out = ctx.create1<MatMulOp>({*q, *read});
    if (failed(out) || failed(out = ctx.create1<MulOp>(
                                 {*out, ctx.constScalar(scale, f32)})))
      return failure();
    outputs.push_back(*out); // [B, Hq, 1, dv]
  }
  FailureOr<Value> y =
      outputs.size() == 1
          ? FailureOr<Value>(outputs.front())
          : ctx.create1<ConcatOp>(outputs, {ctx.namedI64("axis", 2)});
  if (failed(y) || failed(y = mergeHeads(ctx, *y)))
    return failure();
  Type outType = tensorType(*ctx.requiredInput(0)).getElementType();
  Type stateType = ctx.input(3)
                       ? tensorType(ctx.input(3)).getElementType()
                       : outType;
  FailureOr<Value> yOut = castTo(ctx, *y, outType),
                   present = castTo(ctx, state, stateType);
  if (failed(yOut) || failed(present))
    return failure();
  return SmallVector<Value>{*yOut, *present};
}

} // namespace

void cgc::onnx_import::registerAttentionOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Attention", importAttention,
      "heads split, past K/V concatenated, KV heads expanded for GQA, "
      "matmul times scale, softcap, one additive bias of "
      "every mask (where of the boolean parts, plus attn_mask), softmax "
      "(softmax_precision), matmul; rows with every key masked give 0. The "
      "fuse pass makes it one attention kernel");
  add("LinearAttention", importLinearAttention,
      "unrolled over the sequence in f32: the state decayed (exp), "
      "delta-corrected (matmul, beta) and updated by k v^T (mul, add), "
      "each query read with a matmul");
}
