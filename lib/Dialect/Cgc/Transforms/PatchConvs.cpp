//===- PatchConvs.cpp - convolutions whose kernel tiles the input ---------===//
//
// A convolution whose stride equals its kernel in every spatial dim, with
// no padding, no dilation and one group, reads every input element exactly
// once: output pixel p sees the patch of k1 x k2 ... pixels that starts at
// p * k. Its im2col matrix is then a permutation of the input, not the
// k-fold copy it is for overlapping kernels, so the convolution is one
// transpose of the input and one matrix product:
//
//   x [N, C, P1 k1, P2 k2]  -> reshape [N, C, P1, k1, P2, k2]
//                           -> transpose [N, P1, P2, C, k1, k2]
//                           -> reshape [N P1 P2, C k1 k2]
//   gemm(that, w as [O, C k1 k2], bias, transB)        [N P1 P2, O]
//                           -> reshape [N, P1, P2, O] -> transpose [N, O, P1, P2]
//
// The patch embedding of every vision transformer is such a convolution
// (16 x 16, stride 16), and the model's next step flattens the patches and
// transposes them to [N, P, O], which --cgc-move-transposes merges with the
// transpose back: the product's rows are the tokens. As a product it runs
// on tensor cores or cuBLASLt like every other; as a convolution it ran on
// the direct or implicit-GEMM convolution template (ViT b8 bf16: 42.6 us).
// Only such convolutions become products (feedsTokens); and kernels of one
// element (pointwise convolutions) are left alone: there the transposes
// would be all the work.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cgc {
#define GEN_PASS_DEF_CGCPATCHCONVS
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// The kernel sizes of a convolution whose kernel tiles its input (see the
/// file comment), or nothing.
std::optional<SmallVector<int64_t>> patchSizes(ConvOp conv) {
  auto x = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto w = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  if (!x || !w || !x.hasStaticShape() || !w.hasStaticShape() ||
      x.getRank() < 3 || conv.getGroup() != 1 || conv.getChannelsLast() ||
      !x.getElementType().isF32() || !w.getElementType().isF32())
    return std::nullopt;
  ArrayRef<int64_t> kernel = w.getShape().drop_front(2);
  int64_t elements = 1;
  for (auto [d, k] : llvm::enumerate(kernel)) {
    int64_t size = x.getDimSize(d + 2);
    if (conv.getStrides()[d] != k || conv.getDilations()[d] != 1 ||
        conv.getPads()[d] != 0 || conv.getPads()[d + kernel.size()] != 0 ||
        size % k != 0)
      return std::nullopt;
    elements *= k;
  }
  if (elements == 1)
    return std::nullopt;
  return SmallVector<int64_t>(kernel);
}

/// Whether the convolution's result is only flattened into tokens:
/// [N, O, P1, P2...] reshaped to [N, O, P] (unless it has one spatial dim)
/// and transposed to [N, P, O], as vision transformers do. Then the
/// product's rows already are the tokens and the transpose back merges
/// away; elsewhere (a convolutional network going on in [N, C, H, W])
/// the patch transpose and the transpose back would be two copies more
/// than the convolution, unmeasured against it.
bool feedsTokens(ConvOp conv) {
  Value v = conv.getResult();
  if (!v.hasOneUse())
    return false;
  auto type = cast<RankedTensorType>(v.getType());
  if (auto r = dyn_cast<ReshapeOp>(*v.getUsers().begin())) {
    auto flat = dyn_cast<RankedTensorType>(r.getType());
    if (r.getShape() || !flat || !flat.hasStaticShape() ||
        flat.getRank() != 3 || flat.getDimSize(0) != type.getDimSize(0) ||
        flat.getDimSize(1) != type.getDimSize(1) || !r->hasOneUse())
      return false;
    v = r.getResult();
  }
  auto t = dyn_cast<TransposeOp>(*v.getUsers().begin());
  return t && cast<RankedTensorType>(v.getType()).getRank() == 3 &&
         llvm::equal(t.getPerm(), ArrayRef<int64_t>{0, 2, 1});
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  return ReshapeOp::create(b, loc, type, v, Value(), false).getResult();
}

/// The convolution as transpose + gemm (see the file comment).
void rewriteAsProduct(ConvOp conv, ArrayRef<int64_t> kernel) {
  auto x = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  int64_t n = x.getDimSize(0), c = x.getDimSize(1), o = w.getDimSize(0);
  int64_t spatial = kernel.size();
  // [N, C, P1, k1, P2, k2, ...] and the order [N, P1, P2, ..., C, k1, k2, ...].
  SmallVector<int64_t> split = {n, c}, perm = {0}, patches = {n};
  int64_t rows = n, depth = c;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t p = x.getDimSize(d + 2) / kernel[d];
    split.append({p, kernel[d]});
    perm.push_back(2 + 2 * d);
    patches.push_back(p);
    rows *= p;
    depth *= kernel[d];
  }
  perm.push_back(1);
  for (int64_t d = 0; d < spatial; ++d)
    perm.push_back(3 + 2 * d);
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  Value tiles = TransposeOp::create(
      b, loc, reshape(b, loc, conv.getInput(), split), perm);
  Value a = reshape(b, loc, tiles, {rows, depth});
  Value weights = reshape(b, loc, conv.getWeight(), {o, depth});
  auto productType = RankedTensorType::get({rows, o}, x.getElementType());
  Value product =
      GemmOp::create(b, loc, productType, a, weights, conv.getBias(),
                     b.getF64FloatAttr(1.0), b.getF64FloatAttr(1.0),
                     b.getBoolAttr(false), b.getBoolAttr(true))
          .getResult();
  // [N, P1, P2, ..., O] -> [N, O, P1, P2, ...].
  patches.push_back(o);
  SmallVector<int64_t> back = {0, spatial + 1};
  for (int64_t d = 0; d < spatial; ++d)
    back.push_back(1 + d);
  Value y = TransposeOp::create(b, loc, reshape(b, loc, product, patches),
                                back);
  conv.getResult().replaceAllUsesWith(y);
  conv.erase();
}

struct CgcPatchConvsPass
    : cgc::impl::CgcPatchConvsBase<CgcPatchConvsPass> {
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp op) { convs.push_back(op); });
    for (ConvOp conv : convs)
      if (std::optional<SmallVector<int64_t>> kernel = patchSizes(conv);
          kernel && feedsTokens(conv))
        rewriteAsProduct(conv, *kernel);
  }
};

} // namespace
