//===- CgcShapeInference.cpp - result types of cgc ops --------------------===//
//
// Every cgc op with the InferTypeOpAdaptor trait gets its result type here.
// Because the generated verifier compares the declared result types against
// these, this file is also the dialect's shape checker. Dynamic dims (`?`)
// propagate: an op only fails when static facts contradict each other.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace cgc;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Multiplies two dims, propagating dynamic.
int64_t mulDims(int64_t a, int64_t b) {
  return (a == kDyn || b == kDyn) ? kDyn : a * b;
}

LogicalResult inferBroadcast(std::optional<Location> loc, ValueRange operands,
                             Type elementType,
                             SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape;
  for (Value operand : operands) {
    FailureOr<SmallVector<int64_t>> next =
        broadcastShapes(shape, rankedType(operand).getShape());
    if (failed(next))
      return emitOptionalError(loc, "operands are not broadcast-compatible");
    shape = *next;
  }
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

/// Binary op whose operands share the element type and whose result keeps it
/// (or is i1 for comparisons).
LogicalResult inferBinary(std::optional<Location> loc, Value lhs, Value rhs,
                          bool isComparison, SmallVectorImpl<Type> &inferred) {
  Type elementType = rankedType(lhs).getElementType();
  if (elementType != rankedType(rhs).getElementType())
    return emitOptionalError(loc, "operand element types differ: ",
                             elementType, " vs ",
                             rankedType(rhs).getElementType());
  Type resultElement =
      isComparison ? IntegerType::get(lhs.getContext(), 1) : elementType;
  return inferBroadcast(loc, {lhs, rhs}, resultElement, inferred);
}

LogicalResult inferReduction(std::optional<Location> loc, Value input,
                             ArrayRef<int64_t> axes, bool keepdims,
                             Type elementType,
                             SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = rankedType(input);
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(loc, "reduction axis ", axis,
                               " is out of range for rank ", rank);
    if (reduced[axis])
      return emitOptionalError(loc, "reduction axis ", axis, " is repeated");
    reduced[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      shape.push_back(type.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

/// Shared by conv and pooling: the spatial attributes must have one entry per
/// spatial dim (pads two).
LogicalResult checkWindowAttrs(std::optional<Location> loc, int64_t spatial,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> pads,
                               ArrayRef<int64_t> dilations) {
  if ((int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return emitOptionalError(loc, "expected ", spatial,
                             " strides/dilations and ", 2 * spatial,
                             " pads for ", spatial, " spatial dims");
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(dilations, [](int64_t s) { return s <= 0; }))
    return emitOptionalError(loc, "strides and dilations must be positive");
  return success();
}

FailureOr<SmallVector<int64_t>>
inferPooledShape(std::optional<Location> loc, RankedTensorType input,
                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                 bool ceilMode) {
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1)
    return emitOptionalError(loc, "expected an N x C x spatial... input");
  if ((int64_t)kernel.size() != spatial)
    return emitOptionalError(loc, "expected ", spatial, " kernel dims");
  if (failed(checkWindowAttrs(loc, spatial, strides, pads, dilations)))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t out = slidingWindowOutputSize(input.getDimSize(i + 2), kernel[i],
                                          strides[i], pads[i],
                                          pads[i + spatial], dilations[i],
                                          ceilMode);
    if (out != kDyn && out <= 0)
      return emitOptionalError(loc, "window does not fit spatial dim ", i);
    shape.push_back(out);
  }
  return shape;
}

} // namespace

//===----------------------------------------------------------------------===//
// Shared helpers (declared in CgcOps.h)
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> cgc::broadcastShapes(ArrayRef<int64_t> lhs,
                                                     ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (a == 1)
      result[i] = b;
    else if (b == 1)
      result[i] = a;
    else if (a == kDyn)
      result[i] = b;
    else if (b == kDyn || a == b)
      result[i] = a;
    else
      return failure();
  }
  return result;
}

int64_t cgc::slidingWindowOutputSize(int64_t input, int64_t kernel,
                                     int64_t stride, int64_t padBegin,
                                     int64_t padEnd, int64_t dilation,
                                     bool ceilMode) {
  if (input == kDyn || kernel == kDyn)
    return kDyn;
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = input + padBegin + padEnd - span;
  if (room < 0)
    return 0;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  // With ceil mode the last window must start inside the input or the
  // begin padding (ONNX and PyTorch drop a window that starts in end padding).
  if (ceilMode && (out - 1) * stride >= input + padBegin)
    --out;
  return out;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define CGC_BINARY_INFERENCE(OP, IS_COMPARISON)                                \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc,\
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &inferred) {        \
    return inferBinary(loc, adaptor.getLhs(), adaptor.getRhs(),                \
                       IS_COMPARISON, inferred);                               \
  }

CGC_BINARY_INFERENCE(AddOp, false)
CGC_BINARY_INFERENCE(SubOp, false)
CGC_BINARY_INFERENCE(MulOp, false)
CGC_BINARY_INFERENCE(DivOp, false)
CGC_BINARY_INFERENCE(PowOp, false)
CGC_BINARY_INFERENCE(MaxOp, false)
CGC_BINARY_INFERENCE(MinOp, false)
CGC_BINARY_INFERENCE(ModOp, false)
CGC_BINARY_INFERENCE(PReluOp, false)
CGC_BINARY_INFERENCE(BitShiftOp, false)
CGC_BINARY_INFERENCE(AndOp, false)
CGC_BINARY_INFERENCE(OrOp, false)
CGC_BINARY_INFERENCE(XorOp, false)
CGC_BINARY_INFERENCE(BitwiseAndOp, false)
CGC_BINARY_INFERENCE(BitwiseOrOp, false)
CGC_BINARY_INFERENCE(BitwiseXorOp, false)
CGC_BINARY_INFERENCE(EqualOp, true)
CGC_BINARY_INFERENCE(LessOp, true)
CGC_BINARY_INFERENCE(LessEqualOp, true)
CGC_BINARY_INFERENCE(GreaterOp, true)
CGC_BINARY_INFERENCE(GreaterEqualOp, true)
#undef CGC_BINARY_INFERENCE

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  Type elementType = rankedType(adaptor.getTrueValue()).getElementType();
  if (elementType != rankedType(adaptor.getFalseValue()).getElementType())
    return emitOptionalError(loc, "where: branch element types differ");
  return inferBroadcast(loc, adaptor.getOperands(), elementType, inferred);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType lhs = rankedType(adaptor.getLhs());
  RankedTensorType rhs = rankedType(adaptor.getRhs());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc, "matmul operand element types differ");
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return emitOptionalError(loc, "matmul operands must have rank >= 1");
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t k1 = a.back(), k2 = b[b.size() - 2];
  if (k1 != kDyn && k2 != kDyn && k1 != k2)
    return emitOptionalError(loc, "matmul contraction dims differ: ", k1,
                             " vs ", k2);
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
      ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(b).drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "matmul batch dims do not broadcast");
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(a[a.size() - 2]);
  if (!rhsVector)
    shape.push_back(b.back());
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  RankedTensorType a = rankedType(adaptor.getA());
  RankedTensorType b = rankedType(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "gemm operands A and B must be 2-D");
  if (a.getElementType() != b.getElementType())
    return emitOptionalError(loc, "gemm operand element types differ");
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t k1 = a.getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t k2 = b.getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  if (k1 != kDyn && k2 != kDyn && k1 != k2)
    return emitOptionalError(loc, "gemm contraction dims differ: ", k1, " vs ",
                             k2);
  SmallVector<int64_t> shape = {m, n};
  if (Value c = adaptor.getC()) {
    FailureOr<SmallVector<int64_t>> bc =
        broadcastShapes(shape, rankedType(c).getShape());
    if (failed(bc) || bc->size() != 2 ||
        (m != kDyn && (*bc)[0] != m) || (n != kDyn && (*bc)[1] != n))
      return emitOptionalError(loc, "gemm C does not broadcast to [", m, ", ",
                               n, "]");
  }
  inferred.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

SmallVector<int64_t> cgc::channelsLastPerm(int64_t rank) {
  SmallVector<int64_t> perm = {0};
  for (int64_t d = 2; d < rank; ++d)
    perm.push_back(d);
  perm.push_back(1);
  return perm;
}

SmallVector<int64_t> cgc::channelsFirstPerm(int64_t rank) {
  SmallVector<int64_t> perm = {0, rank - 1};
  for (int64_t d = 1; d + 1 < rank; ++d)
    perm.push_back(d);
  return perm;
}

SmallVector<int64_t> cgc::permuteDims(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return out;
}

SmallVector<int64_t> cgc::composedPerm(ArrayRef<int64_t> first,
                                       ArrayRef<int64_t> second) {
  // Dim i of the result is dim second[i] of T_first(x), dim
  // first[second[i]] of x.
  return permuteDims(first, second);
}

bool cgc::isIdentityPerm(ArrayRef<int64_t> perm) {
  return llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()));
}

SmallVector<int64_t> cgc::convDimsChannelsFirst(ConvOp conv, Value v) {
  ArrayRef<int64_t> shape = rankedType(v).getShape();
  if (!conv.getChannelsLast() || shape.size() < 3)
    return SmallVector<int64_t>(shape);
  return permuteDims(shape, channelsFirstPerm(shape.size()));
}

/// A channels-last conv's operand seen in ONNX's channels-first order.
static RankedTensorType channelsFirstType(RankedTensorType t) {
  if (t.getRank() < 3)
    return t;
  return RankedTensorType::get(
      permuteDims(t.getShape(), channelsFirstPerm(t.getRank())),
      t.getElementType());
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType weight = rankedType(adaptor.getWeight());
  if (adaptor.getChannelsLast()) {
    // Inferred as the channels-first conv it stores differently.
    input = channelsFirstType(input);
    weight = channelsFirstType(weight);
  }
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1 || weight.getRank() != input.getRank())
    return emitOptionalError(loc, "conv expects N x C x spatial... input and "
                                  "a weight of the same rank");
  if (failed(checkWindowAttrs(loc, spatial, adaptor.getStrides(),
                              adaptor.getPads(), adaptor.getDilations())))
    return failure();
  int64_t group = adaptor.getGroup();
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  if (group <= 0)
    return emitOptionalError(loc, "conv group must be positive");
  if (channels != kDyn && weight.getDimSize(1) != kDyn &&
      channels != weight.getDimSize(1) * group)
    return emitOptionalError(loc, "conv input has ", channels,
                             " channels but weight expects ",
                             weight.getDimSize(1), " x group ", group);
  if (filters != kDyn && filters % group != 0)
    return emitOptionalError(loc, "conv filters ", filters,
                             " not divisible by group ", group);
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = rankedType(bias);
    if (biasType.getRank() != 1 || (filters != kDyn &&
                                    biasType.getDimSize(0) != kDyn &&
                                    biasType.getDimSize(0) != filters))
      return emitOptionalError(loc, "conv bias must be 1-D of size ", filters);
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), filters};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t out = slidingWindowOutputSize(
        input.getDimSize(i + 2), weight.getDimSize(i + 2),
        adaptor.getStrides()[i], adaptor.getPads()[i],
        adaptor.getPads()[i + spatial], adaptor.getDilations()[i], false);
    if (out != kDyn && out <= 0)
      return emitOptionalError(loc, "conv kernel does not fit spatial dim ", i);
    shape.push_back(out);
  }
  if (adaptor.getChannelsLast())
    shape = permuteDims(shape, channelsLastPerm(shape.size()));
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType weight = rankedType(adaptor.getWeight());
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1 || weight.getRank() != input.getRank())
    return emitOptionalError(loc, "conv_transpose expects N x C x spatial... "
                                  "input and a weight of the same rank");
  if (failed(checkWindowAttrs(loc, spatial, adaptor.getStrides(),
                              adaptor.getPads(), adaptor.getDilations())))
    return failure();
  if ((int64_t)adaptor.getOutputPadding().size() != spatial)
    return emitOptionalError(loc, "expected ", spatial, " output_padding");
  int64_t group = adaptor.getGroup();
  if (group <= 0)
    return emitOptionalError(loc, "conv_transpose group must be positive");
  if (input.getDimSize(1) != kDyn && weight.getDimSize(0) != kDyn &&
      input.getDimSize(1) != weight.getDimSize(0))
    return emitOptionalError(loc, "conv_transpose input channels ",
                             input.getDimSize(1), " != weight dim 0 ",
                             weight.getDimSize(0));
  SmallVector<int64_t> shape = {input.getDimSize(0),
                                mulDims(weight.getDimSize(1), group)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.getDimSize(i + 2), k = weight.getDimSize(i + 2);
    if (in == kDyn || k == kDyn) {
      shape.push_back(kDyn);
      continue;
    }
    int64_t out = adaptor.getStrides()[i] * (in - 1) +
                  adaptor.getOutputPadding()[i] +
                  (k - 1) * adaptor.getDilations()[i] + 1 -
                  adaptor.getPads()[i] - adaptor.getPads()[i + spatial];
    if (out <= 0)
      return emitOptionalError(loc, "conv_transpose output dim ", i,
                               " is not positive");
    shape.push_back(out);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  FailureOr<SmallVector<int64_t>> shape = inferPooledShape(
      loc, input, adaptor.getKernelShape(), adaptor.getStrides(),
      adaptor.getPads(), adaptor.getDilations(), adaptor.getCeilMode());
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult AveragePoolOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  FailureOr<SmallVector<int64_t>> shape = inferPooledShape(
      loc, input, adaptor.getKernelShape(), adaptor.getStrides(),
      adaptor.getPads(), adaptor.getDilations(), adaptor.getCeilMode());
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

#define CGC_REDUCE_INFERENCE(OP)                                               \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc,\
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &inferred) {        \
    return inferReduction(loc, adaptor.getInput(), adaptor.getAxes(),          \
                          adaptor.getKeepdims(),                               \
                          rankedType(adaptor.getInput()).getElementType(),     \
                          inferred);                                           \
  }
CGC_REDUCE_INFERENCE(ReduceSumOp)
CGC_REDUCE_INFERENCE(ReduceMeanOp)
CGC_REDUCE_INFERENCE(ReduceMaxOp)
CGC_REDUCE_INFERENCE(ReduceMinOp)
CGC_REDUCE_INFERENCE(ReduceProdOp)
CGC_REDUCE_INFERENCE(ReduceL1Op)
CGC_REDUCE_INFERENCE(ReduceL2Op)
CGC_REDUCE_INFERENCE(ReduceSumSquareOp)
CGC_REDUCE_INFERENCE(ReduceLogSumOp)
CGC_REDUCE_INFERENCE(ReduceLogSumExpOp)
#undef CGC_REDUCE_INFERENCE

#define CGC_ARG_REDUCE_INFERENCE(OP)                                           \
  LogicalResult OP::inferReturnTypes(MLIRContext *ctx,                         \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &inferred) {        \
    int64_t rank = rankedType(adaptor.getInput()).getRank();                   \
    int64_t axis = adaptor.getAxis();                                          \
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1))                        \
      return emitOptionalError(loc, "axis ", axis, " out of range");           \
    SmallVector<int64_t> axes;                                                 \
    if (rank > 0)                                                              \
      axes.push_back(axis);                                                    \
    return inferReduction(loc, adaptor.getInput(), axes,                       \
                          adaptor.getKeepdims(), IntegerType::get(ctx, 64),    \
                          inferred);                                           \
  }
CGC_ARG_REDUCE_INFERENCE(ArgMaxOp)
CGC_ARG_REDUCE_INFERENCE(ArgMinOp)
#undef CGC_ARG_REDUCE_INFERENCE

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis(), k = adaptor.getK();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "topk axis ", axis, " out of range");
  int64_t extent = input.getDimSize(axis);
  if (k < 0 || (extent != kDyn && k > extent))
    return emitOptionalError(loc, "topk k=", k, " exceeds axis size ", extent);
  SmallVector<int64_t> shape(input.getShape());
  shape[axis] = k;
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  inferred.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

#define CGC_SAME_AS_INPUT_INFERENCE(OP)                                        \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location>,   \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &inferred) {        \
    inferred.push_back(adaptor.getInput().getType());                          \
    return success();                                                          \
  }
CGC_SAME_AS_INPUT_INFERENCE(LayerNormOp)
CGC_SAME_AS_INPUT_INFERENCE(LayerNormGradOp)
CGC_SAME_AS_INPUT_INFERENCE(BatchNormOp)
CGC_SAME_AS_INPUT_INFERENCE(InstanceNormOp)
CGC_SAME_AS_INPUT_INFERENCE(ScatterElementsOp)
CGC_SAME_AS_INPUT_INFERENCE(ScatterNDOp)
#undef CGC_SAME_AS_INPUT_INFERENCE

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if ((int64_t)perm.size() != input.getRank())
    return emitOptionalError(loc, "transpose perm has ", perm.size(),
                             " entries for rank ", input.getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)perm.size() || seen[p])
      return emitOptionalError(loc, "transpose perm is not a permutation");
    seen[p] = true;
    shape.push_back(input.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "concat needs at least one input");
  RankedTensorType first = rankedType(inputs.front());
  int64_t rank = first.getRank(), axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "concat axis ", axis, " out of range");
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : inputs.drop_front()) {
    RankedTensorType t = rankedType(v);
    if (t.getRank() != rank || t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "concat inputs differ in rank or type");
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) {
        shape[d] = (shape[d] == kDyn || t.getDimSize(d) == kDyn)
                       ? kDyn
                       : shape[d] + t.getDimSize(d);
      } else if (shape[d] == kDyn) {
        shape[d] = t.getDimSize(d);
      } else if (t.getDimSize(d) != kDyn && t.getDimSize(d) != shape[d]) {
        return emitOptionalError(loc, "concat inputs differ in dim ", d);
      }
    }
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "split axis ", axis, " out of range");
  int64_t total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0)
      return emitOptionalError(loc, "split sizes must be non-negative");
    total += size;
  }
  int64_t extent = input.getDimSize(axis);
  if (extent != kDyn && total != extent)
    return emitOptionalError(loc, "split sizes sum to ", total,
                             " but the axis has ", extent);
  for (int64_t size : adaptor.getSizes()) {
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  }
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds(),
                    steps = adaptor.getSteps();
  int64_t rank = input.getRank();
  if ((int64_t)starts.size() != rank || (int64_t)ends.size() != rank ||
      (int64_t)steps.size() != rank)
    return emitOptionalError(loc, "slice needs one start/end/step per dim");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (steps[d] == 0)
      return emitOptionalError(loc, "slice step must not be 0");
    int64_t extent = input.getDimSize(d);
    // An untouched dynamic dim is encoded as start 0, end kDynamic, step 1.
    if (extent == kDyn || ends[d] == kDyn) {
      shape.push_back(kDyn);
      continue;
    }
    int64_t span = steps[d] > 0 ? ends[d] - starts[d] : starts[d] - ends[d];
    int64_t step = std::abs(steps[d]);
    shape.push_back(span <= 0 ? 0 : (span + step - 1) / step);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "gather axis ", axis, " out of range");
  SmallVector<int64_t> shape(input.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, input.getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  if (indices.getRank() != input.getRank())
    return emitOptionalError(loc, "gather_elements indices rank differs");
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "gather_elements axis out of range");
  inferred.push_back(
      RankedTensorType::get(indices.getShape(), input.getElementType()));
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  int64_t batch = adaptor.getBatchDims();
  if (indices.getRank() < 1 || indices.isDynamicDim(indices.getRank() - 1))
    return emitOptionalError(loc, "gather_nd needs a static last index dim");
  int64_t tuple = indices.getShape().back();
  if (batch < 0 || batch + tuple > input.getRank() ||
      batch >= indices.getRank())
    return emitOptionalError(loc, "gather_nd index tuples of ", tuple,
                             " do not fit rank ", input.getRank());
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, input.getShape().drop_front(batch + tuple));
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if ((int64_t)repeats.size() != input.getRank())
    return emitOptionalError(loc, "tile needs one repeat per dim");
  SmallVector<int64_t> shape;
  for (auto [dim, rep] : llvm::zip(input.getShape(), repeats)) {
    if (rep < 0)
      return emitOptionalError(loc, "tile repeats must be non-negative");
    shape.push_back(mulDims(dim, rep));
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = input.getRank();
  if ((int64_t)pads.size() != 2 * rank)
    return emitOptionalError(loc, "pad needs 2 x rank pads");
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"},
                          adaptor.getMode()))
    return emitOptionalError(loc, "unknown pad mode '", adaptor.getMode(),
                             "'");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = input.getDimSize(d);
    int64_t out = dim == kDyn ? kDyn : dim + pads[d] + pads[d + rank];
    if (out != kDyn && out < 0)
      return emitOptionalError(loc, "pad crops dim ", d, " below zero");
    shape.push_back(out);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult DepthToSpaceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t b = adaptor.getBlocksize();
  if (input.getRank() != 4 || b <= 0)
    return emitOptionalError(loc, "depth_to_space needs a 4-D input");
  int64_t c = input.getDimSize(1);
  if (c != kDyn && c % (b * b) != 0)
    return emitOptionalError(loc, "channels ", c, " not divisible by ", b * b);
  SmallVector<int64_t> shape = {input.getDimSize(0),
                                c == kDyn ? kDyn : c / (b * b),
                                mulDims(input.getDimSize(2), b),
                                mulDims(input.getDimSize(3), b)};
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult SpaceToDepthOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t b = adaptor.getBlocksize();
  if (input.getRank() != 4 || b <= 0)
    return emitOptionalError(loc, "space_to_depth needs a 4-D input");
  SmallVector<int64_t> shape = {input.getDimSize(0),
                                mulDims(input.getDimSize(1), b * b)};
  for (int64_t d = 2; d < 4; ++d) {
    int64_t dim = input.getDimSize(d);
    if (dim != kDyn && dim % b != 0)
      return emitOptionalError(loc, "spatial dim ", dim, " not divisible by ",
                               b);
    shape.push_back(dim == kDyn ? kDyn : dim / b);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape queries
//===----------------------------------------------------------------------===//

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  int64_t rank = rankedType(adaptor.getInput()).getRank();
  int64_t start = adaptor.getStart(), end = adaptor.getEnd();
  if (start < 0 || end > rank || start > end)
    return emitOptionalError(loc, "shape range [", start, ", ", end,
                             ") is outside rank ", rank);
  inferred.push_back(
      RankedTensorType::get({end - start}, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult SizeOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location>, Adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  inferred.push_back(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult ShardOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis(), ranks = adaptor.getRanks(),
          groups = adaptor.getGroups();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "shard axis ", axis, " out of range");
  int64_t extent = input.getDimSize(axis);
  // Both bounded first: their product must not overflow.
  if (ranks < 2 || ranks > (1 << 20) || groups < 1 || groups > (1 << 20) ||
      extent == kDyn || extent % (ranks * groups) != 0)
    return emitOptionalError(loc, "shards a static dim into 2 or more equal "
                                  "parts (of each of its groups), got ",
                             ranks, " parts of ", groups, " groups of ",
                             input);
  SmallVector<int64_t> shape(input.getShape());
  shape[axis] = extent / ranks;
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}
