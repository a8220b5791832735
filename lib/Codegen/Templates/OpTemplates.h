//===- OpTemplates.h - one CUDA template per non-fused op -------*- C++ -*-===//
//
// Private to lib/Codegen. Ops that fusion leaves alone (`single` kernel
// groups, and the anchors of `conv` and `reduce` groups) get a template of
// their own, specialized with the static shapes and attributes of the op:
//
//   one thread per output element  conv, conv_transpose, pooling, resize,
//                                  einsum, data movement, gathers, lrn,
//                                  batch_norm, one_hot, trilu, scatter_elements
//   one block per output element   reductions over more than 64 elements
//   one block per line             arg_max/arg_min/hardmax over long lines,
//                                  topk, cumsum, instance_norm
//   two launches                   scatter_nd (copy, then ordered updates)
//
// Index arithmetic is unrolled with constant extents and strides, in 64
// bits. Sums accumulate in float (f32), double (f64) or long long (ints).
// Whatever a template cannot do is reported with the ONNX node's name.
//
// Each template is a free function of an OpContext (the op, its parameter
// resolver and the launches written so far), grouped by family into one
// file each; writeSingleOpKernel (OpTemplates.cpp) picks the template.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CODEGEN_TEMPLATES_OPTEMPLATES_H
#define CGC_LIB_CODEGEN_TEMPLATES_OPTEMPLATES_H

#include "../KernelUtils.h"

#include <string>

namespace cgc {
namespace codegen {

/// What a per-op template writes with: the op, the resolver of its pointer
/// parameters, and the launches written so far.
class OpContext {
public:
  OpContext(mlir::Operation *op, ParamResolver &params,
            KernelConfigAttr config)
      : op(op), params(params), config(config) {}

  mlir::Operation *op;
  ParamResolver &params;
  /// The kernel's config: reductions read from its block_tile whether a
  /// block cooperates on each output, and how many threads.
  KernelConfigAttr config;
  llvm::SmallVector<Launch> launches;

  /// An error naming the op and its ONNX node: "no GPU kernel for ... why".
  mlir::LogicalResult unsupported(const llvm::Twine &why);

  std::string in(mlir::Value v) { return params.input(v); }
  std::string out(mlir::Value result) { return params.output(result); }
  /// The compute type and the accumulator type of `v`'s elements.
  std::string T(mlir::Value v) { return cType(elementType(v)); }
  std::string A(mlir::Value v) { return accType(elementType(v)); }

  /// One thread per element of a `count`-element index space `i`.
  void perElement(int64_t count, const std::string &body);
  /// One block of `block` threads per row `row` of `rows`.
  void perRow(int64_t rows, int64_t block, const std::string &body);
};

//===----------------------------------------------------------------------===//
// Helpers the families share (OpTemplates.cpp)
//===----------------------------------------------------------------------===//

/// Extent of a line along `axis`: `outer` lines of `length` elements, each
/// `inner` apart.
struct LineGeometry {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t lines() const { return outer * inner; }
};

LineGeometry lineOf(llvm::ArrayRef<int64_t> shape, int64_t axis);

/// A power-of-two block size of at least 32 threads covering `n` (at most
/// kThreads).
int64_t blockFor(int64_t n);

int64_t normalizeAxis(int64_t axis, int64_t rank);

std::string str(int64_t v);

/// `p0, p1, ..., p<n-1>`.
llvm::SmallVector<std::string> prefixed(llvm::StringRef p, int64_t n);

/// Nested loops over a window: for every spatial dim d a loop over
/// `k<d>` in [0, K[d]) computing `x<d> = o<d+2> * stride - pad + k * dil`.
/// `skip(d)` is the condition (on x<d>) that skips the position.
std::string windowLoops(llvm::ArrayRef<int64_t> kernel,
                        llvm::ArrayRef<int64_t> strides,
                        llvm::ArrayRef<int64_t> padsBegin,
                        llvm::ArrayRef<int64_t> dilations,
                        llvm::function_ref<std::string(int64_t)> skip,
                        const std::string &inner, int indent);

//===----------------------------------------------------------------------===//
// The templates, by family
//===----------------------------------------------------------------------===//

// Conv.cpp: direct convolutions (any rank and group), transposed ones; the
// f32 2-d ones whose config says conv_gemm or depthwise take writeGemmConv
// or writeDepthwiseConv.
mlir::LogicalResult writeConv(OpContext &ctx, ConvOp conv);
mlir::LogicalResult writeConvTranspose(OpContext &ctx, ConvTransposeOp conv);

/// Writes a 2-d convolution with one group as an implicit GEMM
/// (M = output channels, N = batch x output pixels, K = input channels x
/// window), a 1x1 stride-1 convolution as a plain GEMM, on the tile of
/// `config`; fails when the convolution is not of that form.
mlir::FailureOr<llvm::SmallVector<Launch>>
writeGemmConv(ConvOp conv, ParamResolver &params, KernelConfigAttr config);

/// Writes a 2-d f32 depthwise convolution: 4 outputs of a row a thread, the
/// channel's weights in registers; fails (without a diagnostic) for other
/// convolutions.
mlir::FailureOr<llvm::SmallVector<Launch>>
writeDepthwiseConv(ConvOp conv, ParamResolver &params);

// Pooling.cpp
mlir::LogicalResult writeMaxPool(OpContext &ctx, MaxPoolOp pool);
mlir::LogicalResult writeAveragePool(OpContext &ctx, AveragePoolOp pool);

// Reduce.cpp: reductions, arg_max/arg_min/hardmax, cumsum, topk.
/// A reduce_* op of `kind` (sum, mean, max, min, prod, l1, l2, sum_square,
/// log_sum, lse).
mlir::LogicalResult writeReduce(OpContext &ctx, llvm::StringRef kind);
/// arg_max/arg_min (index output) and hardmax (one-hot output) along an
/// axis: one thread per line, or one block per line where the config says
/// so (long lines).
mlir::LogicalResult writeArg(OpContext &ctx, mlir::Value x, int64_t axis,
                             bool largest, bool last);
mlir::LogicalResult writeCumSum(OpContext &ctx, CumSumOp cumsum);
mlir::LogicalResult writeCumProd(OpContext &ctx, CumProdOp cumprod);
mlir::LogicalResult writeBitCast(OpContext &ctx, BitCastOp bitcast);
mlir::LogicalResult writeTopK(OpContext &ctx, TopKOp topk);

// Norm.cpp: normalizations that are not a fused norm group.
mlir::LogicalResult writeSoftmax(OpContext &ctx, mlir::Operation *softmax,
                                 bool log);
mlir::LogicalResult writeLayerNorm(OpContext &ctx, LayerNormOp ln);
mlir::LogicalResult writeLayerNormGrad(OpContext &ctx, LayerNormGradOp op);
mlir::LogicalResult writeBatchNorm(OpContext &ctx, BatchNormOp bn);
mlir::LogicalResult writeInstanceNorm(OpContext &ctx, InstanceNormOp norm);
mlir::LogicalResult writeLRN(OpContext &ctx, LRNOp lrn);

// DataMovement.cpp
mlir::LogicalResult writeTranspose(OpContext &ctx, TransposeOp transpose);
mlir::LogicalResult writeExpand(OpContext &ctx, ExpandOp expand);
mlir::LogicalResult writeTile(OpContext &ctx, TileOp tile);
mlir::LogicalResult writeSlice(OpContext &ctx, SliceOp slice);
mlir::LogicalResult writeDepthToSpace(OpContext &ctx, DepthToSpaceOp d2s);
mlir::LogicalResult writeSpaceToDepth(OpContext &ctx, SpaceToDepthOp s2d);
mlir::LogicalResult writePad(OpContext &ctx, PadOp pad);
mlir::LogicalResult writeConcat(OpContext &ctx, ConcatOp concat);
mlir::LogicalResult writeSplit(OpContext &ctx, SplitOp split);

// Gather.cpp
mlir::LogicalResult writeGather(OpContext &ctx, GatherOp gather);
mlir::LogicalResult writeGatherElements(OpContext &ctx,
                                        GatherElementsOp gather);
mlir::LogicalResult writeGatherND(OpContext &ctx, GatherNDOp gather);

// Scatter.cpp
mlir::LogicalResult writeScatterElements(OpContext &ctx,
                                         ScatterElementsOp scatter);
mlir::LogicalResult writeScatterND(OpContext &ctx, ScatterNDOp scatter);

// Resize.cpp
mlir::LogicalResult writeResize(OpContext &ctx, ResizeOp resize);

// Misc.cpp: the families of one op.
mlir::LogicalResult writeTrilu(OpContext &ctx, TriluOp trilu);
mlir::LogicalResult writeOneHot(OpContext &ctx, OneHotOp oneHot);
mlir::LogicalResult writeEinsum(OpContext &ctx, EinsumOp einsum);
mlir::LogicalResult writeNLLLoss(OpContext &ctx,
                                 NegativeLogLikelihoodLossOp loss);
mlir::LogicalResult writeShape(OpContext &ctx, ShapeOp shape);
mlir::LogicalResult writeSize(OpContext &ctx, SizeOp size);

} // namespace codegen
} // namespace cgc

#endif // CGC_LIB_CODEGEN_TEMPLATES_OPTEMPLATES_H
