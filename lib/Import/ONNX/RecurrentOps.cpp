//===- RecurrentOps.cpp - RNN, GRU and LSTM --------------------------------===//
//
// The recurrent layers unrolled over their static sequence: the input
// projection of every step is one matmul ([S, B, I] x [I, gates*H]), then
// each step adds H x R^T and applies the gates' activations. Directions
// run separately (reverse reads the steps backwards) and their outputs are
// stacked as ONNX lays them out. Activations follow the `activations`
// attribute (alpha/beta taken in order by the functions that use them),
// `clip` bounds every activation's input, and `layout` = 1 (batch first)
// is transposed in and out.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

#include "llvm/Support/InterleavedRange.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

enum class Cell { rnn, gru, lstm };

/// An activation function of the `activations` attribute, with its
/// parameters.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// The sizes, attributes and per-direction activations of one layer.
struct Layer {
  Cell cell;
  int64_t gates, hidden, directions, steps, batch;
  bool reverseOnly, batchFirst, linearBeforeReset, inputForget;
  std::optional<double> clip;
  SmallVector<SmallVector<Activation>> activations; // [direction][function]
};

/// Defaults of the activation parameters (those of the ONNX ops).
bool takesAlpha(StringRef f) {
  return llvm::is_contained({"LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                             "HardSigmoid", "Elu", "Affine"},
                            f);
}
bool takesBeta(StringRef f) {
  return llvm::is_contained({"ScaledTanh", "HardSigmoid", "Affine"}, f);
}
double defaultAlpha(StringRef f) {
  return f == "LeakyRelu"  ? 0.01
         : f == "HardSigmoid" ? 0.2
                              : 1.0;
}
double defaultBeta(StringRef f) { return f == "HardSigmoid" ? 0.5 : 0.0; }

/// The activations of every direction: the attribute's (functions per
/// direction in a row), else the cell's defaults.
FailureOr<SmallVector<SmallVector<Activation>>>
readActivations(NodeContext &ctx, Cell cell, int64_t directions) {
  SmallVector<StringRef> defaults =
      cell == Cell::rnn   ? SmallVector<StringRef>{"Tanh"}
      : cell == Cell::gru ? SmallVector<StringRef>{"Sigmoid", "Tanh"}
                          : SmallVector<StringRef>{"Sigmoid", "Tanh", "Tanh"};
  size_t perDirection = defaults.size();
  SmallVector<std::string> names;
  if (std::optional<SmallVector<std::string>> given =
          ctx.getStrings("activations")) {
    names = *given;
    if (names.size() != perDirection * directions) {
      ctx.error() << "activations lists " << names.size() << " functions, "
                  << perDirection * directions << " expected ("
                  << perDirection << " a direction)";
      return failure();
    }
  } else {
    for (int64_t d = 0; d < directions; ++d)
      for (StringRef f : defaults)
        names.push_back(f.str());
  }
  SmallVector<double> alphas = ctx.getFloats("activation_alpha").value_or(
                          SmallVector<double>{}),
                      betas = ctx.getFloats("activation_beta").value_or(
                          SmallVector<double>{});
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<SmallVector<Activation>> result(directions);
  for (size_t i = 0; i < names.size(); ++i) {
    Activation a{names[i], defaultAlpha(names[i]), defaultBeta(names[i])};
    if (takesAlpha(a.name) && nextAlpha < alphas.size())
      a.alpha = alphas[nextAlpha++];
    if (takesBeta(a.name) && nextBeta < betas.size())
      a.beta = betas[nextBeta++];
    result[i / perDirection].push_back(a);
  }
  return result;
}

/// f(x) for an activation of the recurrent ops.
FailureOr<Value> activate(NodeContext &ctx, const Activation &f, Value x) {
  Type type = x.getType();
  Type element = tensorType(x).getElementType();
  auto scalar = [&](double v) { return ctx.constScalar(v, element); };
  StringRef n = f.name;
  if (n == "Sigmoid")
    return ctx.create1<SigmoidOp>({x}, {}, {type});
  if (n == "Tanh")
    return ctx.create1<TanhOp>({x}, {}, {type});
  if (n == "Relu")
    return ctx.create1<ReluOp>({x}, {}, {type});
  if (n == "Softsign")
    return ctx.create1<SoftsignOp>({x}, {}, {type});
  if (n == "Softplus")
    return ctx.create1<SoftplusOp>({x}, {}, {type});
  if (n == "LeakyRelu")
    return ctx.create1<LeakyReluOp>({x}, {ctx.namedF64("alpha", f.alpha)},
                                    {type});
  if (n == "ThresholdedRelu")
    return ctx.create1<ThresholdedReluOp>(
        {x}, {ctx.namedF64("alpha", f.alpha)}, {type});
  if (n == "Elu")
    return ctx.create1<EluOp>({x}, {ctx.namedF64("alpha", f.alpha)}, {type});
  if (n == "HardSigmoid")
    return ctx.create1<HardSigmoidOp>(
        {x}, {ctx.namedF64("alpha", f.alpha), ctx.namedF64("beta", f.beta)},
        {type});
  if (n == "Affine" || n == "ScaledTanh") {
    // Affine: alpha * x + beta; ScaledTanh: alpha * tanh(beta * x).
    FailureOr<Value> inner = n == "Affine"
                                 ? ctx.create1<MulOp>({x, scalar(f.alpha)})
                                 : ctx.create1<MulOp>({x, scalar(f.beta)});
    if (failed(inner))
      return failure();
    if (n == "Affine")
      return ctx.create1<AddOp>({*inner, scalar(f.beta)});
    FailureOr<Value> t = ctx.create1<TanhOp>({*inner}, {}, {type});
    if (failed(t))
      return failure();
    return ctx.create1<MulOp>({*t, scalar(f.alpha)});
  }
  ctx.error() << "unsupported activation function '" << n << "'";
  return failure();
}

/// f(clip(x)).
FailureOr<Value> gate(NodeContext &ctx, const Layer &layer,
                      const Activation &f, Value x) {
  if (layer.clip) {
    FailureOr<Value> clipped = ctx.create1<ClipOp>(
        {x},
        {ctx.namedF64("min", -*layer.clip), ctx.namedF64("max", *layer.clip)},
        {x.getType()});
    if (failed(clipped))
      return failure();
    x = *clipped;
  }
  return activate(ctx, f, x);
}

/// Columns [k * H, (k + 1) * H) of the last dim: gate k.
FailureOr<Value> gatePart(NodeContext &ctx, Value v, int64_t k,
                          int64_t hidden) {
  return sliceAlong(ctx, v, tensorType(v).getRank() - 1, k * hidden,
                    (k + 1) * hidden);
}

/// [D, rows, cols] weights of direction d, transposed: [cols, rows].
FailureOr<Value> directionWeights(NodeContext &ctx, Value w, int64_t d) {
  FailureOr<Value> wd = takeStep(ctx, w, 0, d);
  if (failed(wd))
    return failure();
  return ctx.create1<TransposeOp>({*wd},
                                  {ctx.namedI64Array("perm", {1, 0})});
}

/// One direction's weights and biases.
struct DirectionParams {
  Value wT, rT;       // [I, G*H], [H, G*H]
  Value wBias, rBias; // [G*H] each, or null
  Value peephole;     // [3H] or null (LSTM)
  Value h0, c0;       // [B, H]
};

/// The state and outputs of one direction.
struct DirectionResult {
  SmallVector<Value> hs; // H of every step, in sequence order
  Value h, c;
};

/// One LSTM step: gates i, o, f, c of xw + H R^T; returns {H, C}.
FailureOr<std::pair<Value, Value>>
lstmStep(NodeContext &ctx, const Layer &layer, ArrayRef<Activation> fs,
         const DirectionParams &p, Value xw, Value h, Value c) {
  FailureOr<Value> hr = ctx.create1<MatMulOp>({h, p.rT});
  FailureOr<Value> all = succeeded(hr) ? ctx.create1<AddOp>({xw, *hr}) : hr;
  if (failed(all))
    return failure();
  int64_t H = layer.hidden;
  auto part = [&](int64_t k) { return gatePart(ctx, *all, k, H); };
  FailureOr<Value> i = part(0), o = part(1), f = part(2), cand = part(3);
  if (failed(i) || failed(o) || failed(f) || failed(cand))
    return failure();
  // Peepholes p_i, p_o, p_f look at C (the new C for the output gate).
  auto peep = [&](Value pre, int64_t k, Value state) -> FailureOr<Value> {
    if (!p.peephole)
      return pre;
    FailureOr<Value> pk = gatePart(ctx, p.peephole, k, H);
    FailureOr<Value> term =
        succeeded(pk) ? ctx.create1<MulOp>({*pk, state}) : pk;
    return succeeded(term) ? ctx.create1<AddOp>({pre, *term}) : term;
  };
  FailureOr<Value> iPre = peep(*i, 0, c);
  FailureOr<Value> iGate = succeeded(iPre) ? gate(ctx, layer, fs[0], *iPre)
                                           : iPre;
  if (failed(iGate))
    return failure();
  FailureOr<Value> fGate;
  if (layer.inputForget) {
    Value one = ctx.constScalar(1.0, tensorType(h).getElementType());
    fGate = ctx.create1<SubOp>({one, *iGate});
  } else {
    FailureOr<Value> fPre = peep(*f, 2, c);
    fGate = succeeded(fPre) ? gate(ctx, layer, fs[0], *fPre) : fPre;
  }
  FailureOr<Value> cGate = gate(ctx, layer, fs[1], *cand);
  if (failed(fGate) || failed(cGate))
    return failure();
  FailureOr<Value> kept = ctx.create1<MulOp>({*fGate, c}),
                   added = ctx.create1<MulOp>({*iGate, *cGate});
  if (failed(kept) || failed(added))
    return failure();
  FailureOr<Value> newC = ctx.create1<AddOp>({*kept, *added});
  if (failed(newC))
    return failure();
  FailureOr<Value> oPre = peep(*o, 1, *newC);
  FailureOr<Value> oGate =
      succeeded(oPre) ? gate(ctx, layer, fs[0], *oPre) : oPre;
  FailureOr<Value> hc = activate(ctx, fs[2], *newC);
  if (failed(oGate) || failed(hc))
    return failure();
  FailureOr<Value> newH = ctx.create1<MulOp>({*oGate, *hc});
  if (failed(newH))
    return failure();
  return std::make_pair(*newH, *newC);
}

/// One GRU step: z, r, then the candidate (its recurrence before or after
/// the reset gate), H = (1 - z) h + z H.
FailureOr<Value> gruStep(NodeContext &ctx, const Layer &layer,
                         ArrayRef<Activation> fs, const DirectionParams &p,
                         Value xw, Value h) {
  int64_t H = layer.hidden;
  FailureOr<Value> hr = ctx.create1<MatMulOp>({h, p.rT});
  if (succeeded(hr) && p.rBias)
    hr = ctx.create1<AddOp>({*hr, p.rBias});
  if (failed(hr))
    return failure();
  FailureOr<Value> xz = gatePart(ctx, xw, 0, H), xr = gatePart(ctx, xw, 1, H),
                   xh = gatePart(ctx, xw, 2, H), hz = gatePart(ctx, *hr, 0, H),
                   hrr = gatePart(ctx, *hr, 1, H);
  if (failed(xz) || failed(xr) || failed(xh) || failed(hz) || failed(hrr))
    return failure();
  FailureOr<Value> zPre = ctx.create1<AddOp>({*xz, *hz}),
                   rPre = ctx.create1<AddOp>({*xr, *hrr});
  if (failed(zPre) || failed(rPre))
    return failure();
  FailureOr<Value> z = gate(ctx, layer, fs[0], *zPre),
                   r = gate(ctx, layer, fs[0], *rPre);
  if (failed(z) || failed(r))
    return failure();
  FailureOr<Value> recurrent;
  if (layer.linearBeforeReset) {
    FailureOr<Value> hh = gatePart(ctx, *hr, 2, H); // includes Rb_h
    recurrent = succeeded(hh) ? ctx.create1<MulOp>({*r, *hh}) : hh;
  } else {
    // (r * H) x Rh^T + Rb_h.
    FailureOr<Value> reset = ctx.create1<MulOp>({*r, h});
    FailureOr<Value> rh = gatePart(ctx, p.rT, 2, H);
    if (failed(reset) || failed(rh))
      return failure();
    recurrent = ctx.create1<MatMulOp>({*reset, *rh});
    if (succeeded(recurrent) && p.rBias) {
      FailureOr<Value> rbh = gatePart(ctx, p.rBias, 2, H);
      recurrent = succeeded(rbh) ? ctx.create1<AddOp>({*recurrent, *rbh})
                                 : rbh;
    }
  }
  if (failed(recurrent))
    return failure();
  FailureOr<Value> hPre = ctx.create1<AddOp>({*xh, *recurrent});
  FailureOr<Value> cand =
      succeeded(hPre) ? gate(ctx, layer, fs[1], *hPre) : hPre;
  if (failed(cand))
    return failure();
  // (1 - z) * h + z * H = h + z * (H - h).
  FailureOr<Value> diff = ctx.create1<SubOp>({h, *cand});
  FailureOr<Value> scaled =
      succeeded(diff) ? ctx.create1<MulOp>({*z, *diff}) : diff;
  if (failed(scaled))
    return failure();
  return ctx.create1<AddOp>({*cand, *scaled});
}

/// Runs one direction over the steps of xw ([S, B, G*H], input
/// projection plus the biases that add there).
FailureOr<DirectionResult> runDirection(NodeContext &ctx, const Layer &layer,
                                        ArrayRef<Activation> fs,
                                        const DirectionParams &p, Value xw,
                                        bool reverse) {
  DirectionResult result;
  result.hs.resize(layer.steps);
  Value h = p.h0, c = p.c0;
  for (int64_t s = 0; s < layer.steps; ++s) {
    int64_t t = reverse ? layer.steps - 1 - s : s;
    FailureOr<Value> x = takeStep(ctx, xw, 0, t);
    if (failed(x))
      return failure();
    if (layer.cell == Cell::lstm) {
      FailureOr<std::pair<Value, Value>> hc =
          lstmStep(ctx, layer, fs, p, *x, h, c);
      if (failed(hc))
        return failure();
      std::tie(h, c) = *hc;
    } else if (layer.cell == Cell::gru) {
      FailureOr<Value> next = gruStep(ctx, layer, fs, p, *x, h);
      if (failed(next))
        return failure();
      h = *next;
    } else {
      FailureOr<Value> hr = ctx.create1<MatMulOp>({h, p.rT});
      FailureOr<Value> pre =
          succeeded(hr) ? ctx.create1<AddOp>({*x, *hr}) : hr;
      FailureOr<Value> next =
          succeeded(pre) ? gate(ctx, layer, fs[0], *pre) : pre;
      if (failed(next))
        return failure();
      h = *next;
    }
    result.hs[t] = h;
  }
  result.h = h;
  result.c = c;
  return result;
}

/// An optional [D, B, H] initial state (batch first: [B, D, H]) as
/// direction d's [B, H], or zeros.
FailureOr<Value> initialState(NodeContext &ctx, const Layer &layer,
                              Value state, int64_t d, Type element) {
  if (!state)
    return ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({layer.batch, layer.hidden}, element),
        Attribute(FloatAttr::get(element, 0.0))));
  SmallVector<int64_t> want =
      layer.batchFirst
          ? SmallVector<int64_t>{layer.batch, layer.directions, layer.hidden}
          : SmallVector<int64_t>{layer.directions, layer.batch, layer.hidden};
  if (tensorType(state).getShape() != ArrayRef(want)) {
    ctx.error() << "initial state " << tensorType(state) << " must be ["
                << want[0] << ", " << want[1] << ", " << want[2] << "]";
    return failure();
  }
  return takeStep(ctx, state, layer.batchFirst ? 1 : 0, d);
}

/// Checks the inputs and reads the attributes of a layer.
FailureOr<Layer> readLayer(NodeContext &ctx, Cell cell, Value x, Value w) {
  Layer layer;
  layer.cell = cell;
  layer.gates = cell == Cell::lstm ? 4 : cell == Cell::gru ? 3 : 1;
  layer.hidden = ctx.getInt("hidden_size", 0);
  std::string direction = ctx.getString("direction", "forward");
  layer.batchFirst = ctx.getInt("layout", 0) != 0;
  layer.linearBeforeReset = ctx.getInt("linear_before_reset", 0) != 0;
  layer.inputForget = ctx.getInt("input_forget", 0) != 0;
  if (ctx.hasAttr("clip"))
    layer.clip = ctx.getFloat("clip", 0.0);
  if (ctx.hadAttributeError())
    return failure();
  if (!llvm::is_contained({"forward", "reverse", "bidirectional"},
                          direction)) {
    ctx.error() << "direction must be forward, reverse or bidirectional, "
                   "got '"
                << direction << "'";
    return failure();
  }
  layer.directions = direction == "bidirectional" ? 2 : 1;
  layer.reverseOnly = direction == "reverse";
  RankedTensorType xt = tensorType(x), wt = tensorType(w);
  if (xt.getRank() != 3 || !xt.hasStaticShape() ||
      !isa<FloatType>(xt.getElementType())) {
    ctx.error() << "X must be a static float [seq, batch, input] tensor, got "
                << xt;
    return failure();
  }
  if (layer.hidden < 0 || layer.hidden > (1 << 24)) {
    ctx.error() << "hidden_size must be 0 to 2^24, got " << layer.hidden;
    return failure();
  }
  layer.steps = xt.getDimSize(layer.batchFirst ? 1 : 0);
  layer.batch = xt.getDimSize(layer.batchFirst ? 0 : 1);
  if (layer.hidden <= 0 && wt.getRank() == 3)
    layer.hidden = wt.getDimSize(1) / layer.gates;
  if (wt.getRank() != 3 ||
      wt.getShape() != ArrayRef<int64_t>{layer.directions,
                                         layer.gates * layer.hidden,
                                         xt.getDimSize(2)}) {
    ctx.error() << "W " << wt << " must be [" << layer.directions << ", "
                << layer.gates * layer.hidden << ", " << xt.getDimSize(2)
                << "]";
    return failure();
  }
  if (layer.steps < 1 || layer.steps > 4096) {
    ctx.error() << "the sequence length must be 1 to 4096 to unroll, got "
                << layer.steps;
    return failure();
  }
  FailureOr<SmallVector<SmallVector<Activation>>> activations =
      readActivations(ctx, cell, layer.directions);
  if (failed(activations))
    return failure();
  layer.activations = *activations;
  return layer;
}

/// sequence_lens (input 4) must be absent or give every batch the full
/// length: ragged batches are not unrolled.
LogicalResult checkFullLengths(NodeContext &ctx, const Layer &layer) {
  Value lengths = ctx.input(4);
  if (!lengths)
    return success();
  std::optional<SmallVector<int64_t>> known = ctx.constInts(lengths);
  if (known && llvm::all_of(*known, [&](int64_t n) {
        return n == layer.steps;
      }))
    return success();
  ctx.error() << "sequence_lens must be absent or a constant of the full "
                 "length "
              << layer.steps << " (ragged batches are not supported)";
  return failure();
}

/// Direction d's parameters.
FailureOr<DirectionParams> directionParams(NodeContext &ctx,
                                           const Layer &layer, Value w,
                                           Value r, int64_t d, Type element) {
  DirectionParams p;
  int64_t gh = layer.gates * layer.hidden;
  auto checkShape = [&](Value v, ArrayRef<int64_t> want, StringRef what) {
    if (tensorType(v).getShape() == want)
      return success();
    ctx.error() << what << " " << tensorType(v) << " must be ["
                << llvm::interleaved(want) << "]";
    return failure();
  };
  // Shapes first: the direction's slices index them.
  if (failed(checkShape(r, {layer.directions, gh, layer.hidden}, "R")) ||
      (ctx.input(3) &&
       failed(checkShape(ctx.input(3), {layer.directions, 2 * gh}, "B"))) ||
      (layer.cell == Cell::lstm && ctx.input(7) &&
       failed(checkShape(ctx.input(7), {layer.directions, 3 * layer.hidden},
                         "P"))))
    return failure();
  FailureOr<Value> wT = directionWeights(ctx, w, d),
                   rT = directionWeights(ctx, r, d);
  if (failed(wT) || failed(rT))
    return failure();
  p.wT = *wT;
  p.rT = *rT;
  if (Value b = ctx.input(3)) {
    FailureOr<Value> bd = takeStep(ctx, b, 0, d);
    if (failed(bd))
      return failure();
    FailureOr<Value> wb = gatePart(ctx, *bd, 0, gh),
                     rb = gatePart(ctx, *bd, 1, gh);
    if (failed(wb) || failed(rb))
      return failure();
    p.wBias = *wb;
    p.rBias = *rb;
  }
  if (layer.cell == Cell::lstm && ctx.input(7)) {
    FailureOr<Value> pd = takeStep(ctx, ctx.input(7), 0, d);
    if (failed(pd))
      return failure();
    p.peephole = *pd;
  }
  FailureOr<Value> h0 = initialState(ctx, layer, ctx.input(5), d, element);
  if (failed(h0))
    return failure();
  p.h0 = *h0;
  if (layer.cell == Cell::lstm) {
    FailureOr<Value> c0 = initialState(ctx, layer, ctx.input(6), d, element);
    if (failed(c0))
      return failure();
    p.c0 = *c0;
  }
  return p;
}

/// X x W^T plus the biases that add there: every bias but GRU's
/// recurrent one, which gruStep adds to H x R^T.
FailureOr<Value> inputProjection(NodeContext &ctx, const Layer &layer,
                                 const DirectionParams &p, Value x) {
  FailureOr<Value> xw = ctx.create1<MatMulOp>({x, p.wT});
  if (failed(xw) || !p.wBias)
    return xw;
  FailureOr<Value> bias = layer.cell == Cell::gru
                              ? FailureOr<Value>(p.wBias)
                              : ctx.create1<AddOp>({p.wBias, p.rBias});
  if (failed(bias))
    return failure();
  return ctx.create1<AddOp>({*xw, *bias});
}

/// Stacks per-direction values along a new axis.
FailureOr<Value> stackOn(NodeContext &ctx, ArrayRef<Value> values,
                         int64_t axis) {
  SmallVector<Value> pieces;
  for (Value v : values) {
    SmallVector<int64_t> shape(tensorType(v).getShape());
    shape.insert(shape.begin() + axis, 1);
    FailureOr<Value> piece = reshapeTo(ctx, v, shape);
    if (failed(piece))
      return failure();
    pieces.push_back(*piece);
  }
  if (pieces.size() == 1)
    return pieces.front();
  return ctx.create1<ConcatOp>(pieces, {ctx.namedI64("axis", axis)});
}

template <Cell cell> Results importRecurrent(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  Value x = (*in)[0], w = (*in)[1], r = (*in)[2];
  FailureOr<Layer> layer = readLayer(ctx, cell, x, w);
  if (failed(layer) || failed(checkFullLengths(ctx, *layer)))
    return failure();
  Type element = tensorType(x).getElementType();
  if (layer->batchFirst) {
    FailureOr<Value> seqFirst = ctx.create1<TransposeOp>(
        {x}, {ctx.namedI64Array("perm", {1, 0, 2})});
    if (failed(seqFirst))
      return failure();
    x = *seqFirst;
  }
  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < layer->directions; ++d) {
    FailureOr<DirectionParams> p =
        directionParams(ctx, *layer, w, r, d, element);
    if (failed(p))
      return failure();
    FailureOr<Value> xw = inputProjection(ctx, *layer, *p, x);
    if (failed(xw))
      return failure();
    bool reverse = d == 1 || layer->reverseOnly;
    FailureOr<DirectionResult> run = runDirection(
        ctx, *layer, layer->activations[d], *p, *xw, reverse);
    if (failed(run))
      return failure();
    FailureOr<Value> y = stackOn(ctx, run->hs, 0); // [S, B, H]
    if (failed(y))
      return failure();
    ys.push_back(*y);
    hs.push_back(run->h);
    cs.push_back(run->c);
  }
  // Y [S, D, B, H] (batch first: [B, S, D, H]); Y_h, Y_c [D, B, H]
  // (batch first: [B, D, H]).
  bool bf = layer->batchFirst;
  FailureOr<Value> y = stackOn(ctx, ys, 1);
  FailureOr<Value> yh = stackOn(ctx, hs, bf ? 1 : 0);
  if (failed(y) || failed(yh))
    return failure();
  if (bf && failed(y = ctx.create1<TransposeOp>(
                       {*y}, {ctx.namedI64Array("perm", {2, 0, 1, 3})})))
    return failure();
  SmallVector<Value> results = {*y, *yh};
  if (cell == Cell::lstm) {
    FailureOr<Value> yc = stackOn(ctx, cs, bf ? 1 : 0);
    if (failed(yc))
      return failure();
    results.push_back(*yc);
  }
  return results;
}

} // namespace

void cgc::onnx_import::registerRecurrentOps(ImporterTable &t) {
  auto add = importerAdder(t);
  const char *note = "unrolled over the static sequence: one `cgc.matmul` "
                     "for every step's input projection, then per step a "
                     "matmul by R^T and the gates' activations";
  add("RNN", importRecurrent<Cell::rnn>, note);
  add("GRU", importRecurrent<Cell::gru>, note);
  add("LSTM", importRecurrent<Cell::lstm>, note);
}
