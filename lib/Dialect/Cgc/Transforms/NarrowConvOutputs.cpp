//===- NarrowConvOutputs.cpp - cuDNN convolutions in 16 bits --------------===//
//
// Under --precision=fp16|bf16 a convolution cuDNN computes still reads and
// writes f32 tensors: the legacy API's 16-bit modes take one type for
// input, filter and output, and the f32 call runs TF32 kernels (PyTorch's
// ResNet-50 in NHWC: bf16 1.14-1.38x faster than TF32 on an H100, see
// docs/kernels.md). This pass splits each such conv group
//
//   %y = cgc.kernel "conv_7" conv {conv(x, w, b); relu; add r; ...}
//
// into the convolution rounded to 16 bits and an elementwise group that
// finishes it in f32:
//
//   %c = cgc.kernel "conv_7" conv {conv(x, w); cast to bf16}
//   %y = cgc.kernel "conv_7_epilogue" elementwise {cast to f32; add b; relu; ...}
//
// --cgc-narrow-storage then stores x and w in bf16 (x's producer writes a
// 16-bit copy), and the cuDNN node of the first group reads and writes
// 16-bit tensors only. The rounding of the convolution before its bias is
// the one value this changes, as PyTorch's bf16 convolutions round it.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/ConstantData.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace cgc {
#define GEN_PASS_DEF_CGCNARROWCONVOUTPUTS
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// The convolution of conv group `kernel` when the group should be split:
/// cuDNN will compute it in 16 bits (the `cudnn` policy), its filter is a
/// constant and its bias a constant or absent, and its input can be stored
/// narrow; an f16 group only where `fp16` allows. Null otherwise.
ConvOp splittableConv(KernelOp kernel, StringRef cudnn, bool fp16) {
  Type narrow = narrowTypeOf(kernel);
  if (kernel.getKind() != KernelKind::conv || !narrow ||
      (narrow.isF16() && !fp16) || narrowConvOutput(kernel))
    return ConvOp();
  std::string reason;
  FailureOr<LibraryConv> p = describeLibraryConv(kernel, reason);
  if (failed(p) || !p->type.isF32() || !cudnnWillTake(kernel, *p, cudnn))
    return ConvOp();
  ConvOp conv = p->conv;
  Value bias = conv.getBias();
  if (!conv.getWeight().getDefiningOp<ConstantOp>() ||
      (bias && !bias.getDefiningOp<ConstantOp>()) ||
      !canStoreNarrow(conv.getWeight(), kernel))
    return ConvOp();
  if (!canStoreNarrow(conv.getInput(), kernel)) {
    // The common reason a model keeps some f32 cuDNN calls (one reading a
    // model input): say so under --remarks.
    kernel.emitRemark() << "'" << kernel.getName()
                        << "' stays an f32 cuDNN call: its input cannot be "
                           "stored in "
                        << (narrowTypeOf(kernel).isBF16() ? "bf16" : "f16")
                        << " (a model input, or a kernel that writes no "
                           "16-bit copy)";
    return ConvOp();
  }
  return conv;
}

/// The bias of `conv` shaped to broadcast along its output's channel dim:
/// as it is for channels last, [K, 1, ..., 1] (a new constant of the same
/// elements, after the old) for channels first; null where its elements
/// cannot be read.
Value channelBias(ConvOp conv) {
  Value bias = conv.getBias();
  if (conv.getChannelsLast())
    return bias;
  auto constant = bias.getDefiningOp<ConstantOp>();
  RankedTensorType type = tensorTypeOf(bias);
  SmallVector<int64_t> shape(tensorTypeOf(conv.getOutput()).getRank() - 1, 1);
  shape.front() = type.getNumElements();
  RankedTensorType shaped = type.clone(shape);
  // A dense attribute (a splat too) keeps its form.
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    OpBuilder b(constant);
    b.setInsertionPointAfter(constant);
    return ConstantOp::create(b, constant.getLoc(), shaped,
                              dense.reshape(shaped))
        .getOutput();
  }
  std::optional<ArrayRef<char>> bytes = rawConstantData(constant);
  if (!bytes || int64_t(bytes->size()) !=
                    type.getNumElements() *
                        int64_t(type.getElementTypeBitWidth() / 8))
    return Value();
  return createConstantLike(constant, shaped, *bytes, ".channel");
}

/// A kernel named `name` of `kind` with `types`, after `b`'s insertion
/// point; its body is built by `fill`, which returns the values to yield.
KernelOp createKernel(OpBuilder &b, Location loc, TypeRange types,
                      StringRef name, KernelKind kind, TypeAttr precision,
                      function_ref<SmallVector<Value>(OpBuilder &)> fill) {
  auto kernel = KernelOp::create(b, loc, types, name, kind,
                                 /*config=*/nullptr, precision);
  Block *body = new Block();
  kernel.getBody().push_back(body);
  OpBuilder inner = OpBuilder::atBlockBegin(body);
  SmallVector<Value> yielded = fill(inner);
  YieldOp::create(inner, loc, yielded);
  return kernel;
}

/// Splits conv group `kernel` (of convolution `conv`, the group's first op)
/// into the convolution rounded to `narrow` and an elementwise group for
/// the bias and the rest; fails (changing nothing) where the bias cannot
/// be reshaped.
LogicalResult split(KernelOp kernel, ConvOp conv, Type narrow) {
  Location loc = kernel.getLoc();
  Value bias;
  if (conv.getBias() && !(bias = channelBias(conv)))
    return failure();
  OpBuilder b(kernel);
  auto rounded = tensorTypeOf(conv.getOutput()).clone(narrow);
  KernelOp product = createKernel(
      b, loc, rounded, kernel.getName(), KernelKind::conv,
      kernel.getPrecisionAttr(), [&](OpBuilder &in) -> SmallVector<Value> {
        auto bare = ConvOp::create(in, conv.getLoc(), conv.getInput(),
                                   conv.getWeight(), /*bias=*/Value(),
                                   conv.getStrides(), conv.getPads(),
                                   conv.getDilations(), conv.getGroup(),
                                   conv.getChannelsLast());
        return {CastOp::create(in, conv.getLoc(), rounded, bare.getOutput())
                    .getOutput()};
      });
  Block &body = kernel.getBody().front();
  KernelOp epilogue = createKernel(
      b, loc, kernel.getResultTypes(), (kernel.getName() + "_epilogue").str(),
      KernelKind::elementwise, /*precision=*/nullptr,
      [&](OpBuilder &in) -> SmallVector<Value> {
        Value v = CastOp::create(in, conv.getLoc(),
                                 tensorTypeOf(conv.getOutput()),
                                 product.getResult(0))
                      .getOutput();
        if (bias)
          v = AddOp::create(in, conv.getLoc(), v, bias).getResult();
        IRMapping mapping;
        mapping.map(conv.getOutput(), v);
        for (Operation &op : body.without_terminator())
          if (&op != conv.getOperation())
            in.clone(op, mapping);
        SmallVector<Value> yielded;
        for (Value r : body.getTerminator()->getOperands())
          yielded.push_back(mapping.lookupOrDefault(r));
        return yielded;
      });
  kernel.replaceAllUsesWith(epilogue.getResults());
  kernel.erase();
  return success();
}

struct CgcNarrowConvOutputsPass
    : cgc::impl::CgcNarrowConvOutputsBase<CgcNarrowConvOutputsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!isLibraryPolicy(cudnn)) {
      getOperation().emitError() << "--cgc-narrow-conv-outputs: cudnn '"
                                 << cudnn
                                 << "' is none of auto, always, never";
      return signalPassFailure();
    }
    // Decide every group on the IR as fused (a producer conv counts as one
    // that can write a 16-bit copy whether it is split or not), then split.
    SmallVector<std::pair<KernelOp, ConvOp>> chosen;
    getOperation().walk([&](KernelOp kernel) {
      if (ConvOp conv = splittableConv(kernel, cudnn, fp16))
        chosen.push_back({kernel, conv});
    });
    for (auto [kernel, conv] : chosen)
      (void)split(kernel, conv, narrowTypeOf(kernel));
  }
};

} // namespace
