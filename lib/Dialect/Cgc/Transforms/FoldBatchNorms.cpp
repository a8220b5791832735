//===- FoldBatchNorms.cpp - inference batch norms into convolutions ------===//
//
// An inference BatchNormalization scales and shifts each channel by
// constants: y = (x - mean) * k + beta with k = scale / sqrt(var + eps).
// After a convolution with constant weights that nothing else reads, it is
// the same convolution with W'[o] = W[o] * k[o] and b'[o] = (b[o] - mean[o])
// * k[o] + beta[o], computed once here:
//
//   batch_norm(conv(x, W, b), scale, beta, mean, var)  ->  conv(x, W', b')
//
// PyTorch's TorchScript exporter folds them itself; the dynamo exporter
// (torch.onnx.export(dynamo=True), opset 18+) keeps them, and each was a
// kernel of its own after the convolution's, reading and writing the whole
// activation. The folded weights differ from the two steps' result by
// rounding only (k and the products in double, stored as f32).
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/ConstantData.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace cgc {
#define GEN_PASS_DEF_CGCFOLDBATCHNORMS
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// The f32 elements of `v` where it is a readable constant with `count`
/// of them, else nothing.
std::optional<SmallVector<float>> floatsOf(Value v, int64_t count) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  std::optional<SmallVector<float>> floats = constantFloats(constant);
  if (!floats || int64_t(floats->size()) != count)
    return std::nullopt;
  return floats;
}

ArrayRef<char> bytesOf(ArrayRef<float> floats) {
  return ArrayRef<char>(reinterpret_cast<const char *>(floats.data()),
                        floats.size() * sizeof(float));
}

/// Folds `bn` into the convolution it normalizes, where it can.
void fold(BatchNormOp bn) {
  auto conv = bn.getInput().getDefiningOp<ConvOp>();
  if (!conv || !conv.getOutput().hasOneUse() || conv.getChannelsLast())
    return;
  auto filterType = cast<RankedTensorType>(conv.getWeight().getType());
  if (!filterType.hasStaticShape() || !filterType.getElementType().isF32())
    return;
  int64_t channels = filterType.getDimSize(0);
  int64_t perChannel =
      filterType.getNumElements() / std::max<int64_t>(channels, 1);
  std::optional<SmallVector<float>> w =
      floatsOf(conv.getWeight(), filterType.getNumElements());
  std::optional<SmallVector<float>> scale = floatsOf(bn.getScale(), channels),
                                    beta = floatsOf(bn.getBias(), channels),
                                    mean = floatsOf(bn.getMean(), channels),
                                    var = floatsOf(bn.getVariance(), channels);
  std::optional<SmallVector<float>> bias =
      conv.getBias() ? floatsOf(conv.getBias(), channels)
                     : SmallVector<float>(channels, 0.0f);
  if (!w || !scale || !beta || !mean || !var || !bias)
    return;
  SmallVector<float> folded(w->size()), shift(channels);
  double epsilon = bn.getEpsilon().convertToDouble();
  for (int64_t o = 0; o < channels; ++o) {
    double k = double((*scale)[o]) / std::sqrt(double((*var)[o]) + epsilon);
    for (int64_t i = 0; i < perChannel; ++i)
      folded[o * perChannel + i] = float(double((*w)[o * perChannel + i]) * k);
    shift[o] = float((double((*bias)[o]) - double((*mean)[o])) * k +
                     double((*beta)[o]));
  }
  Value filter =
      createConstantLike(conv.getWeight().getDefiningOp<ConstantOp>(),
                         filterType, bytesOf(folded), ".bn_folded");
  Value shiftValue = createConstantLike(
      bn.getBias().getDefiningOp<ConstantOp>(),
      RankedTensorType::get({channels}, filterType.getElementType()),
      bytesOf(shift), ".bn_folded");
  OpBuilder b(bn);
  auto merged = ConvOp::create(b, conv.getLoc(), conv.getInput(), filter,
                               shiftValue, conv.getStrides(), conv.getPads(),
                               conv.getDilations(), conv.getGroup());
  bn.getOutput().replaceAllUsesWith(merged.getOutput());
  bn.erase();
  conv.erase();
}

struct CgcFoldBatchNormsPass
    : public cgc::impl::CgcFoldBatchNormsBase<CgcFoldBatchNormsPass> {
  void runOnOperation() override {
    SmallVector<BatchNormOp> norms;
    getOperation().walk([&](BatchNormOp bn) { norms.push_back(bn); });
    for (BatchNormOp bn : norms)
      fold(bn);
    // Weights and parameters the folds left unread.
    SmallVector<Operation *> dead;
    getOperation().walk([&](ConstantOp c) {
      if (c->use_empty())
        dead.push_back(c);
    });
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
