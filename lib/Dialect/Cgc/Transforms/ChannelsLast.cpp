//===- ChannelsLast.cpp - cuDNN's convolutions in NHWC --------------------===//
//
// cuDNN's tensor-core convolutions work in NHWC. Given NCHW tensors they
// convert input, filter and output on every call (ResNet-50 b1 on an H200:
// cuDNN's nchwToNhwc kernels took 17% of the GPU time), and PyTorch's own
// graph of ResNet-50 with BatchNorm folded runs 1.25x faster in TF32 and
// 1.3-1.4x in bf16 when its tensors are channels last (H100, 2026-12-07,
// docs/kernels.md). This pass stores those convolutions' tensors that way:
//
//   conv(x, W)  ->  T_first(conv_cl(T_last(x), W'))
//       for each convolution the cuDNN policy will take (cudnnAutoTakes
//       under auto), W' the constant filter stored [K, R, S, C] at compile
//       time, T_last / T_first the transposes to and from channels last;
//   e(T_first(a), T_first(b), c)  ->  T_first(e(a, b, c'))
//       for an elementwise e whose other operands are transposed the same
//       way, single elements (they broadcast the same in any order), or
//       constants (c' transposed at compile time: a bias [K, 1, 1] becomes
//       [1, 1, 1, K]);
//   reduce(T_first(a), axes)  ->  reduce(a, axes') [then a view]
//       the same reduction over the axes T_first moved (a global pool's
//       [N, 1, 1, C] is its [N, C, 1, 1] as a reshape);
//   T_last(T_first(a))  ->  a.
//
// So a chain of convolutions, activations and residual adds runs channels
// last, and only where it meets ops that stay channels first (max pooling, a
// depthwise convolution cuDNN does not take, the head) is a transpose
// left, a copy kernel. Under `auto` a function keeps the rewrite only if
// few are left (kConvsPerLayoutTranspose); it is tried on a copy first.
//
// Values do not change: only the order in which they are stored.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/CgcTraits.h"
#include "cgc/Dialect/Cgc/IR/ConstantData.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/Dialect/Cgc/Transforms/PrecisionPolicy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

namespace cgc {
#define GEN_PASS_DEF_CGCCHANNELSLAST
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// Under `auto`, converted convolutions per transpose left in the end. A
/// transpose is one copy kernel of an activation; a converted convolution
/// saves cuDNN's conversions of its input, filter and output (PyTorch's
/// ResNet-50 graph lost 20-27% to them, docs/kernels.md). The ratio is a
/// judgement, not a measurement: chains like ResNet's leave one transpose
/// for 52 convolutions, MobileNetV2's about two for each.
constexpr int64_t kConvsPerLayoutTranspose = 4;

/// Marks the transposes the pass made, to count those left.
constexpr StringLiteral kLayoutMark = "cgc.layout_transpose";

RankedTensorType staticType(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

/// Bytes of one element of `type`, or 0 for sub-byte and other types.
int64_t elementBytes(RankedTensorType type) {
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8)
    return 0;
  return element.getIntOrFloatBitWidth() / 8;
}

/// `constant` (of static shape `shape`, its own or a reshape of it)
/// transposed by `perm` at compile time, or a null value when its elements
/// cannot be read.
Value transposedConstant(OpBuilder &b, ConstantOp constant,
                         ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  RankedTensorType type = staticType(constant.getOutput());
  std::optional<ArrayRef<char>> raw = rawConstantData(constant);
  int64_t bytes = type ? elementBytes(type) : 0;
  if (!raw || bytes == 0)
    return Value();
  int64_t count = type.getNumElements();
  auto result = RankedTensorType::get(permuteDims(shape, perm),
                                      type.getElementType());
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (dense && dense.isSplat())
    return ConstantOp::create(b, constant.getLoc(), result,
                              dense.resizeSplat(result))
        .getOutput();
  if (int64_t(raw->size()) != count * bytes)
    return Value();
  // Element i of the result is element sum(index[perm[d]] * strides[perm[d]])
  // of the input.
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  ArrayRef<int64_t> outShape = result.getShape();
  std::vector<char> out(raw->size());
  SmallVector<int64_t> index(outShape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t from = 0;
    for (size_t d = 0; d < index.size(); ++d)
      from += index[d] * strides[perm[d]];
    std::memcpy(out.data() + i * bytes, raw->data() + from * bytes, bytes);
    for (int64_t d = int64_t(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return createConstantLike(constant, result,
                            ArrayRef<char>(out.data(), out.size()),
                            ".channels_last");
}

bool isPermOf(TransposeOp t, ArrayRef<int64_t> perm) {
  return t && t.getPerm() == perm;
}

class Rewriter {
public:
  Rewriter(StringRef cudnn, Type precision, ArrayRef<std::string> keepFp32)
      : cudnn(cudnn), precision(precision), keepFp32(keepFp32) {}

  /// Converts the function's convolutions and moves the transposes; the
  /// number of convolutions converted.
  int64_t run(func::FuncOp func) {
    SmallVector<ConvOp> convs;
    func.walk([&](ConvOp conv) {
      if (takes(conv))
        convs.push_back(conv);
    });
    int64_t converted = llvm::count_if(
        convs, [&](ConvOp conv) { return succeeded(convert(conv)); });
    while (!worklist.empty()) {
      TransposeOp t = worklist.pop_back_val();
      sinkBelowUsers(t);
    }
    eraseDead(func);
    return converted;
  }

  /// Whether `func` has a convolution to convert.
  bool hasCandidate(func::FuncOp func) const {
    return func
        .walk([&](ConvOp conv) {
          return takes(conv) ? WalkResult::interrupt() : WalkResult::advance();
        })
        .wasInterrupted();
  }

private:
  StringRef cudnn;
  Type precision;
  ArrayRef<std::string> keepFp32;
  SmallVector<TransposeOp> worklist;
  /// Constants (filters, broadcast operands) already reordered.
  DenseMap<Value, Value> lastOf;
  /// Convolution inputs already transposed, per block.
  DenseMap<std::pair<Value, Block *>, Value> inputsLast;

  /// Whether cuDNN will compute `conv` (--cgc-select-kernel-config's
  /// convLibraryConfig and describeLibraryConv, as far as a lone conv
  /// shows it) and its filter can be reordered at compile time.
  bool takes(ConvOp conv) const {
    RankedTensorType x = staticType(conv.getInput()),
                     w = staticType(conv.getWeight()),
                     y = staticType(conv.getOutput());
    std::string reason;
    if (conv.getChannelsLast() || !x || !w || !y ||
        !isa<IslandOp>(conv->getParentOp()) ||
        failed(cudnnCanConvolve(conv, reason)))
      return false;
    Type t = y.getElementType();
    auto filter = conv.getWeight().getDefiningOp<ConstantOp>();
    if (!filter || !rawConstantData(filter))
      return false;
    if (cudnn == "always")
      return true;
    if (cudnn != "auto")
      return false;
    bool tensorCores =
        !t.isF32() || productPrecision(conv, precision, keepFp32);
    ArrayRef<int64_t> ws = w.getShape();
    int64_t multiplyAdds = y.getNumElements() * ws[1] * ws[2] * ws[3];
    return cudnnAutoTakes(conv.getGroup(), tensorCores, ws, multiplyAdds);
  }

  TransposeOp transpose(OpBuilder &b, Location loc, Value v,
                        ArrayRef<int64_t> perm) {
    auto t = TransposeOp::create(b, loc, v, perm);
    t->setAttr(kLayoutMark, b.getUnitAttr());
    return t;
  }

  /// `v` (channels first) stored channels last for a convolution in
  /// `block`: the value a channels-first transpose read, or one transpose
  /// per value and block, after v where v is defined in the block, else at
  /// its start (an island's inputs are defined outside it, and its work
  /// must stay inside).
  Value channelsLast(OpBuilder &b, Location loc, Value v, Block *block) {
    auto first = v.getDefiningOp<TransposeOp>();
    if (isPermOf(first, channelsFirstPerm(4)))
      return first.getInput();
    Value &cached = inputsLast[{v, block}];
    if (!cached) {
      OpBuilder::InsertionGuard guard(b);
      if (v.getParentBlock() == block)
        b.setInsertionPointAfterValue(v);
      else
        b.setInsertionPointToStart(block);
      cached = transpose(b, loc, v, channelsLastPerm(4)).getOutput();
    }
    return cached;
  }

  /// Fails, changing nothing, where the filter's elements cannot be read
  /// (a resource blob of the wrong size).
  LogicalResult convert(ConvOp conv) {
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    auto filter = conv.getWeight().getDefiningOp<ConstantOp>();
    Value &w = lastOf[filter.getOutput()];
    if (!w) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfter(filter);
      w = transposedConstant(b, filter, shapeOf(filter.getOutput()),
                             channelsLastPerm(4));
    }
    if (!w)
      return failure();
    Value x = channelsLast(b, loc, conv.getInput(), conv->getBlock());
    auto converted = ConvOp::create(
        b, loc, x, w, conv.getBias(), conv.getStrides(), conv.getPads(),
        conv.getDilations(), conv.getGroup(), /*channels_last=*/true);
    TransposeOp back =
        transpose(b, loc, converted.getOutput(), channelsFirstPerm(4));
    conv.getOutput().replaceAllUsesWith(back.getOutput());
    conv.erase();
    worklist.push_back(back);
    return success();
  }

  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }

  /// The operand of `e` at the channels-last side of a moved transpose
  /// `t` (perm P, undone by `inverse`), or a null value where it has none.
  Value operandBelow(OpBuilder &b, Value operand, TransposeOp t,
                     ArrayRef<int64_t> inverse) {
    auto other = operand.getDefiningOp<TransposeOp>();
    if (other && other.getPerm() == t.getPerm() &&
        shapeOf(other.getInput()) == shapeOf(t.getInput()))
      return other.getInput();
    RankedTensorType type = staticType(operand);
    if (!type || type.getRank() > 4)
      return Value();
    if (type.getNumElements() == 1)
      return operand;
    auto constant = operand.getDefiningOp<ConstantOp>();
    if (!constant)
      return Value();
    Value &cached = lastOf[operand];
    if (!cached) {
      // Aligned right to the rank of the result, as broadcasting reads it.
      SmallVector<int64_t> shape(4 - type.getRank(), 1);
      llvm::append_range(shape, type.getShape());
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfter(constant);
      cached = transposedConstant(b, constant, shape, inverse);
    }
    return cached;
  }

  /// Moves `t` below each elementwise user it can pass and folds it into
  /// the transposes that undo it.
  void sinkBelowUsers(TransposeOp t) {
    // Each user once: an op reading t twice is rewritten (and erased) once.
    llvm::SetVector<Operation *> users(t->getUsers().begin(),
                                       t->getUsers().end());
    for (Operation *user : users) {
      if (auto next = dyn_cast<TransposeOp>(user))
        foldPair(t, next);
      else if (isa<ReductionOpInterface>(user))
        sinkBelowReduction(t, user);
      else
        sinkBelow(t, user);
    }
  }

  /// `r` of `t` (a reduction over `axes`, keeping them or not) as the same
  /// reduction of t's input over the axes t moves them from; the result
  /// then needs only the rest of the transpose, often none: a global
  /// pool's [N, 1, 1, C] is its [N, C, 1, 1] as a view.
  void sinkBelowReduction(TransposeOp t, Operation *r) {
    auto axes = r->getAttrOfType<DenseI64ArrayAttr>("axes");
    auto keepdims = r->getAttrOfType<BoolAttr>("keepdims");
    RankedTensorType result = staticType(r->getResult(0));
    if (!axes || !keepdims || r->getNumOperands() != 1 || !result ||
        r->getBlock() != t->getBlock())
      return;
    ArrayRef<int64_t> perm = t.getPerm(), in = shapeOf(t.getInput());
    int64_t rank = perm.size();
    SmallVector<bool> reduced(rank, false); // by the input's dims
    for (int64_t axis : axes.asArrayRef()) {
      if (axis < -rank || axis >= rank)
        return;
      reduced[perm[axis < 0 ? axis + rank : axis]] = true;
    }
    SmallVector<int64_t> inputAxes, shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d])
        inputAxes.push_back(d);
      if (!reduced[d] || keepdims.getValue())
        shape.push_back(reduced[d] ? 1 : in[d]);
    }
    // Dim k of the result is dim positionOf[perm[i_k]] of the moved
    // reduction's, i_k the k-th dim of t's output it keeps.
    SmallVector<int64_t> positionOf(rank, -1), rest;
    for (int64_t d = 0, next = 0; d < rank; ++d)
      if (!reduced[d] || keepdims.getValue())
        positionOf[d] = next++;
    for (int64_t i = 0; i < rank; ++i)
      if (positionOf[perm[i]] >= 0)
        rest.push_back(positionOf[perm[i]]);
    OpBuilder b(r);
    Operation *moved = b.clone(*r);
    moved->setOperand(0, t.getInput());
    moved->setAttr("axes", b.getDenseI64ArrayAttr(inputAxes));
    Value below = moved->getResult(0);
    below.setType(RankedTensorType::get(shape, result.getElementType()));
    r->getResult(0).replaceAllUsesWith(
        reordered(b, r->getLoc(), below, rest, result));
    r->erase();
  }

  /// `v` transposed by `perm` (giving `type`): v itself for the identity,
  /// a reshape (a view) where only dims of size 1 move, else a transpose.
  Value reordered(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm,
                  RankedTensorType type) {
    if (isIdentityPerm(perm))
      return v;
    SmallVector<int64_t> moving;
    for (int64_t p : perm)
      if (shapeOf(v)[p] != 1)
        moving.push_back(p);
    if (llvm::is_sorted(moving))
      return ReshapeOp::create(b, loc, type, v, Value(), false).getResult();
    return transpose(b, loc, v, perm).getOutput();
  }

  void foldPair(TransposeOp t, TransposeOp next) {
    if (!isIdentityPerm(composedPerm(t.getPerm(), next.getPerm())))
      return;
    next.getOutput().replaceAllUsesWith(t.getInput());
    next.erase();
  }

  void sinkBelow(TransposeOp t, Operation *e) {
    RankedTensorType result = e->getNumResults() == 1
                                  ? staticType(e->getResult(0))
                                  : RankedTensorType();
    // A random mask draws by flat index: reordering would change the mask.
    if (!e->hasTrait<Elementwise>() || isa<RandomMaskOp>(e) || !result ||
        result.getShape() != shapeOf(t.getOutput()) ||
        e->getBlock() != t->getBlock())
      return;
    SmallVector<int64_t> inverse = channelsLastPerm(4);
    if (t.getPerm() != ArrayRef<int64_t>(channelsFirstPerm(4)))
      return;
    OpBuilder b(e);
    SmallVector<Value> operands;
    for (Value operand : e->getOperands()) {
      Value below = operandBelow(b, operand, t, inverse);
      if (!below)
        return;
      operands.push_back(below);
    }
    Operation *moved = b.clone(*e);
    moved->setOperands(operands);
    moved->getResult(0).setType(RankedTensorType::get(
        permuteDims(result.getShape(), inverse), result.getElementType()));
    TransposeOp back =
        transpose(b, e->getLoc(), moved->getResult(0), t.getPerm());
    e->getResult(0).replaceAllUsesWith(back.getOutput());
    e->erase();
    worklist.push_back(back);
  }

  /// Transposes and constants the rewrite left without uses, latest first
  /// (a transpose may be the last use of a constant).
  void eraseDead(func::FuncOp func) {
    SmallVector<Operation *> dead;
    func.walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (isa<TransposeOp, ConstantOp>(op) && op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead))
      op->erase();
  }
};

/// The transposes the rewrite left in `func` (copies it made).
int64_t layoutTransposesLeft(func::FuncOp func) {
  int64_t left = 0;
  func.walk([&](TransposeOp t) {
    if (t->hasAttr(kLayoutMark))
      ++left;
  });
  return left;
}

void clearMarks(func::FuncOp func) {
  func.walk([&](TransposeOp t) { t->removeAttr(kLayoutMark); });
}

struct CgcChannelsLastPass
    : public cgc::impl::CgcChannelsLastBase<CgcChannelsLastPass> {
  using CgcChannelsLastBase::CgcChannelsLastBase;

  void runOnOperation() override {
    if (policy != "auto" && policy != "always") {
      getOperation().emitError()
          << "--cgc-channels-last policy must be auto or always, got '"
          << policy << "'";
      return signalPassFailure();
    }
    FailureOr<Type> requested = precisionType(precision, &getContext());
    if (failed(requested)) {
      getOperation().emitError() << "unknown precision '" << precision << "'";
      return signalPassFailure();
    }
    SmallVector<std::string> keep(keepFp32.begin(), keepFp32.end());
    func::FuncOp func = getOperation();
    Rewriter rewriter(cudnn, *requested, keep);
    if (!rewriter.hasCandidate(func))
      return;
    // Tried on a copy: under `auto` the function may keep its layout.
    func::FuncOp trial = func.clone();
    int64_t converted = rewriter.run(trial);
    int64_t left = layoutTransposesLeft(trial);
    bool keepRewrite =
        converted > 0 &&
        (policy == "always" || left * kConvsPerLayoutTranspose <= converted);
    if (keepRewrite) {
      clearMarks(trial);
      func.getBody().takeBody(trial.getBody());
    } else if (converted > 0) {
      // The user asked for auto: say why nothing changed.
      func.emitRemark() << "--channels-last=auto keeps '" << func.getName()
                        << "' channels first: its " << converted
                        << " cuDNN convolution(s) would leave " << left
                        << " transpose(s), more than one for every "
                        << kConvsPerLayoutTranspose;
    }
    trial.erase();
  }
};

} // namespace
