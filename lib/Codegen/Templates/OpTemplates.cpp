//===- OpTemplates.cpp - the per-op template of a `single` group ----------===//
//
// Picks the template of an op (one per op, grouped by family in the files
// of this folder, see OpTemplates.h) and holds what they share.
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace cgc {
namespace codegen {

LogicalResult OpContext::unsupported(const Twine &why) {
  return op->emitError() << "no GPU kernel for '" << op->getName() << "' "
                         << why << " (ONNX node '" << nodeName(op) << "')";
}

void OpContext::perElement(int64_t count, const std::string &body) {
  std::string text = "  const long long i = (long long)blockIdx.x * "
                     "blockDim.x + threadIdx.x;\n  if (i >= " +
                     ll(count) + ") return;\n" + body;
  launches.push_back(
      Launch{text,
             {std::max<int64_t>(1, (count + kThreads - 1) / kThreads), 1, 1},
             {kThreads, 1, 1}});
}

void OpContext::perRow(int64_t rows, int64_t block, const std::string &body) {
  std::string text =
      "  const long long row = blockIdx.x;\n  if (row >= " + ll(rows) +
      ") return;\n" + body;
  launches.push_back(
      Launch{text, {std::max<int64_t>(1, rows), 1, 1}, {block, 1, 1}});
}

LineGeometry lineOf(ArrayRef<int64_t> shape, int64_t axis) {
  LineGeometry g;
  g.outer = numElements(shape.take_front(axis));
  g.length = shape[axis];
  g.inner = numElements(shape.drop_front(axis + 1));
  return g;
}

int64_t blockFor(int64_t n) { return blockThreadsFor(n); }

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

std::string str(int64_t v) { return std::to_string(v); }

/// Nested loops over a window: for every spatial dim d a loop over
/// `k<d>` in [0, K[d]) computing `x<d> = o<d+2> * stride - pad + k * dil`.
/// `skip(d)` is the condition (on x<d>) that skips the position.
std::string windowLoops(ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> padsBegin,
                        ArrayRef<int64_t> dilations,
                        llvm::function_ref<std::string(int64_t)> skip,
                        const std::string &inner, int indent) {
  std::string s;
  for (size_t d = 0; d < kernel.size(); ++d) {
    std::string pad(indent + 2 * d, ' ');
    std::string k = "k" + str(d), x = "x" + str(d);
    s += pad + "for (long long " + k + " = 0; " + k + " < " + ll(kernel[d]) +
         "; ++" + k + ") {\n" + pad + "  const long long " + x + " = o" +
         str(d + 2) + " * " + ll(strides[d]) + " - " + ll(padsBegin[d]) +
         " + " + k + " * " + ll(dilations[d]) + ";\n";
    std::string cond = skip(d);
    if (!cond.empty())
      s += pad + "  if (" + cond + ") continue;\n";
  }
  s += inner;
  for (int64_t d = kernel.size() - 1; d >= 0; --d)
    s += std::string(indent + 2 * d, ' ') + "}\n";
  return s;
}

SmallVector<std::string> prefixed(StringRef p, int64_t n) {
  SmallVector<std::string> v;
  for (int64_t d = 0; d < n; ++d)
    v.push_back(p.str() + str(d));
  return v;
}

FailureOr<SmallVector<Launch>> writeSingleOpKernel(Operation *op,
                                                   ParamResolver &params,
                                                   KernelConfigAttr config) {
  OpContext ctx(op, params, config);
  LogicalResult status =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](ConvOp o) { return writeConv(ctx, o); })
          .Case([&](ConvTransposeOp o) { return writeConvTranspose(ctx, o); })
          .Case([&](MaxPoolOp o) { return writeMaxPool(ctx, o); })
          .Case([&](AveragePoolOp o) { return writeAveragePool(ctx, o); })
          .Case([&](ReductionOpInterface r) {
            return writeReduce(ctx,
                               stringifyReductionKind(r.getReductionKind()));
          })
          .Case([&](ArgMaxOp o) {
            return writeArg(ctx, o.getInput(), o.getAxis(), true,
                            o.getSelectLastIndex());
          })
          .Case([&](ArgMinOp o) {
            return writeArg(ctx, o.getInput(), o.getAxis(), false,
                            o.getSelectLastIndex());
          })
          .Case([&](HardmaxOp o) {
            return writeArg(ctx, o.getInput(), o.getAxis(), true, false);
          })
          .Case([&](CumSumOp o) { return writeCumSum(ctx, o); })
          .Case([&](CumProdOp o) { return writeCumProd(ctx, o); })
          .Case([&](TopKOp o) { return writeTopK(ctx, o); })
          .Case([&](SoftmaxOp o) { return writeSoftmax(ctx, o, false); })
          .Case([&](LogSoftmaxOp o) { return writeSoftmax(ctx, o, true); })
          .Case([&](LayerNormOp o) { return writeLayerNorm(ctx, o); })
          .Case([&](LayerNormGradOp o) { return writeLayerNormGrad(ctx, o); })
          .Case([&](BatchNormOp o) { return writeBatchNorm(ctx, o); })
          .Case([&](InstanceNormOp o) { return writeInstanceNorm(ctx, o); })
          .Case([&](LRNOp o) { return writeLRN(ctx, o); })
          .Case([&](TransposeOp o) { return writeTranspose(ctx, o); })
          .Case([&](BitCastOp o) { return writeBitCast(ctx, o); })
          .Case([&](ExpandOp o) { return writeExpand(ctx, o); })
          .Case([&](TileOp o) { return writeTile(ctx, o); })
          .Case([&](SliceOp o) { return writeSlice(ctx, o); })
          .Case([&](PadOp o) { return writePad(ctx, o); })
          .Case([&](ConcatOp o) { return writeConcat(ctx, o); })
          .Case([&](SplitOp o) { return writeSplit(ctx, o); })
          .Case([&](GatherOp o) { return writeGather(ctx, o); })
          .Case([&](GatherElementsOp o) { return writeGatherElements(ctx, o); })
          .Case([&](GatherNDOp o) { return writeGatherND(ctx, o); })
          .Case(
              [&](ScatterElementsOp o) { return writeScatterElements(ctx, o); })
          .Case([&](ScatterNDOp o) { return writeScatterND(ctx, o); })
          .Case([&](DepthToSpaceOp o) { return writeDepthToSpace(ctx, o); })
          .Case([&](SpaceToDepthOp o) { return writeSpaceToDepth(ctx, o); })
          .Case([&](ResizeOp o) { return writeResize(ctx, o); })
          .Case([&](TriluOp o) { return writeTrilu(ctx, o); })
          .Case([&](OneHotOp o) { return writeOneHot(ctx, o); })
          .Case([&](EinsumOp o) { return writeEinsum(ctx, o); })
          .Case([&](NegativeLogLikelihoodLossOp o) {
            return writeNLLLoss(ctx, o);
          })
          .Case([&](ShapeOp o) { return writeShape(ctx, o); })
          .Case([&](SizeOp o) { return writeSize(ctx, o); })
          .Default([&](Operation *) { return ctx.unsupported("yet"); });
  if (failed(status))
    return failure();
  if (ctx.launches.empty()) // no result is used: nothing to compute
    ctx.launches.push_back(Launch{"", {1, 1, 1}, {32, 1, 1}});
  return std::move(ctx.launches);
}

} // namespace codegen
} // namespace cgc
