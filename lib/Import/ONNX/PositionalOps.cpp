//===- PositionalOps.cpp - RotaryEmbedding ---------------------------------===//
//
// RotaryEmbedding (opset 23) as the data movement and arithmetic it is:
// heads split out of the hidden dim (or a [B, H, S, D] input transposed to
// [B, S, H, D]), cos/sin rows gathered by position, the rotated part of each
// head split in halves (or even/odd lanes when interleaved), rotated, and
// put back. Every step is an op the GPU path fuses or moves already.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// The elements [start, end) by `step` of v's last dim.
FailureOr<Value> sliceLast(NodeContext &ctx, Value v, int64_t start,
                           int64_t end, int64_t step) {
  return sliceAlong(ctx, v, tensorType(v).getRank() - 1, start, end, step);
}

/// a*b - c*d (minus) or a*b + c*d.
FailureOr<Value> crossSum(NodeContext &ctx, Value a, Value b, Value c, Value d,
                          bool minus) {
  FailureOr<Value> ab = ctx.create1<MulOp>({a, b}),
                   cd = ctx.create1<MulOp>({c, d});
  if (failed(ab) || failed(cd))
    return failure();
  return minus ? ctx.create1<SubOp>({*ab, *cd}) : ctx.create1<AddOp>({*ab, *cd});
}

/// x as [B, S, H, D]: a rank-4 input is [B, H, S, D] (transposed), a rank-3
/// one [B, S, H*D] with H = num_heads (reshaped).
FailureOr<Value> toSequenceMajor(NodeContext &ctx, Value x, int64_t numHeads) {
  RankedTensorType type = tensorType(x);
  if (type.getRank() == 4)
    return ctx.create1<TransposeOp>(
        {x}, {ctx.namedI64Array("perm", {0, 2, 1, 3})});
  ArrayRef<int64_t> shape = type.getShape();
  if (numHeads <= 0 || shape[2] % numHeads != 0) {
    ctx.error() << "a rank-3 input needs num_heads dividing its hidden size "
                << shape[2] << ", got num_heads=" << numHeads;
    return failure();
  }
  return reshapeTo(ctx, x,
                   {shape[0], shape[1], numHeads, shape[2] / numHeads});
}

Results importRotaryEmbedding(NodeContext &ctx) {
  FailureOr<Value> input = ctx.requiredInput(0), cosCache = ctx.requiredInput(1),
                   sinCache = ctx.requiredInput(2);
  if (failed(input) || failed(cosCache) || failed(sinCache))
    return failure();
  RankedTensorType inputType = tensorType(*input);
  if ((inputType.getRank() != 3 && inputType.getRank() != 4) ||
      !inputType.hasStaticShape()) {
    ctx.error() << "the input must be a static rank-3 or rank-4 tensor, got "
                << inputType;
    return failure();
  }
  int64_t numHeads = ctx.getInt("num_heads", 0);
  bool interleaved = ctx.getInt("interleaved", 0) != 0;
  int64_t rotaryDim = ctx.getInt("rotary_embedding_dim", 0);
  if (ctx.hadAttributeError())
    return failure();
  FailureOr<Value> x = toSequenceMajor(ctx, *input, numHeads);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = tensorType(*x).getShape(); // [B, S, H, D]
  int64_t batch = shape[0], sequence = shape[1], headSize = shape[3];
  if (rotaryDim == 0)
    rotaryDim = headSize;
  if (rotaryDim < 0 || rotaryDim > headSize || rotaryDim % 2 != 0) {
    ctx.error() << "rotary_embedding_dim must be even and at most the head "
                   "size "
                << headSize << ", got " << rotaryDim;
    return failure();
  }
  int64_t half = rotaryDim / 2;

  // cos/sin rows per (batch, position): gathered by position_ids, or given.
  Value cos = *cosCache, sin = *sinCache;
  if (Value positions = ctx.input(3)) {
    FailureOr<Value> c = ctx.create1<GatherOp>({cos, positions},
                                               {ctx.namedI64("axis", 0)}),
                     s = ctx.create1<GatherOp>({sin, positions},
                                               {ctx.namedI64("axis", 0)});
    if (failed(c) || failed(s))
      return failure();
    cos = *c;
    sin = *s;
  }
  for (Value table : {cos, sin}) {
    RankedTensorType t = tensorType(table);
    if (t.getRank() != 3 || !t.hasStaticShape() || t.getDimSize(2) != half ||
        t.getDimSize(0) != batch || t.getDimSize(1) != sequence) {
      ctx.error() << "cos/sin (gathered by position_ids where given) must be ["
                  << batch << ", " << sequence << ", " << half
                  << "] (batch, sequence, rotary_embedding_dim/2), got " << t;
      return failure();
    }
  }
  FailureOr<Value> cos4 = reshapeTo(ctx, cos, {batch, sequence, 1, half}),
                   sin4 = reshapeTo(ctx, sin, {batch, sequence, 1, half});
  if (failed(cos4) || failed(sin4))
    return failure();

  FailureOr<Value> rotated = sliceLast(ctx, *x, 0, rotaryDim, 1);
  if (failed(rotated))
    return failure();
  FailureOr<Value> x1 = interleaved ? sliceLast(ctx, *rotated, 0, rotaryDim, 2)
                                    : sliceLast(ctx, *rotated, 0, half, 1);
  FailureOr<Value> x2 = interleaved
                            ? sliceLast(ctx, *rotated, 1, rotaryDim, 2)
                            : sliceLast(ctx, *rotated, half, rotaryDim, 1);
  if (failed(x1) || failed(x2))
    return failure();
  FailureOr<Value> real = crossSum(ctx, *cos4, *x1, *sin4, *x2, true),
                   imag = crossSum(ctx, *sin4, *x1, *cos4, *x2, false);
  if (failed(real) || failed(imag))
    return failure();

  FailureOr<Value> joined;
  if (interleaved) {
    // real and imag back into even and odd lanes: stacked on a new last dim
    // of 2, then merged with the one before it.
    SmallVector<int64_t> lanes = {batch, sequence, shape[2], half, 1};
    FailureOr<Value> r5 = reshapeTo(ctx, *real, lanes),
                     i5 = reshapeTo(ctx, *imag, lanes);
    if (failed(r5) || failed(i5))
      return failure();
    FailureOr<Value> pairs =
        ctx.create1<ConcatOp>({*r5, *i5}, {ctx.namedI64("axis", 4)});
    if (failed(pairs))
      return failure();
    joined = reshapeTo(ctx, *pairs, {batch, sequence, shape[2], rotaryDim});
  } else {
    joined = ctx.create1<ConcatOp>({*real, *imag}, {ctx.namedI64("axis", 3)});
  }
  if (failed(joined))
    return failure();
  if (rotaryDim < headSize) {
    FailureOr<Value> rest = sliceLast(ctx, *x, rotaryDim, headSize, 1);
    if (failed(rest))
      return failure();
    joined = ctx.create1<ConcatOp>({*joined, *rest}, {ctx.namedI64("axis", 3)});
    if (failed(joined))
      return failure();
  }
  if (inputType.getRank() == 4)
    return single(ctx.create1<TransposeOp>(
        {*joined}, {ctx.namedI64Array("perm", {0, 2, 1, 3})}));
  return single(reshapeTo(ctx, *joined, inputType.getShape()));
}

} // namespace

void cgc::onnx_import::registerPositionalOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("RotaryEmbedding", importRotaryEmbedding,
      "transpose/reshape to heads, `cgc.gather` of cos/sin by position, "
      "`cgc.slice` halves (even/odd lanes when interleaved), mul/add/sub, "
      "`cgc.concat` back");
}
