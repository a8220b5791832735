//===- GatherScatterOps.cpp - importers of gather and scatter ops ---------===//

#include "TensorHelpers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

/// ONNX index inputs are int64 (or int32 where `allowI32`).
LogicalResult checkIndices(NodeContext &ctx, Value indices, bool allowI32) {
  Type element = tensorType(indices).getElementType();
  if (element.isSignlessInteger(64) ||
      (allowI32 && element.isSignlessInteger(32)))
    return success();
  ctx.error() << "indices must be " << (allowI32 ? "int32 or int64" : "int64")
              << ", got " << indices.getType();
  return failure();
}

Results importGather(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/true)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), tensorType((*in)[0]).getRank());
  if (failed(axis))
    return failure();
  return single(ctx.create1<GatherOp>(*in, {ctx.namedI64("axis", *axis)}));
}

Results importGatherElements(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/true)))
    return failure();
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]);
  if (data.getRank() != indices.getRank()) {
    ctx.error() << "indices " << indices << " must have the rank of the data "
                << data;
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), data.getRank());
  if (failed(axis))
    return failure();
  return single(
      ctx.create1<GatherElementsOp>(*in, {ctx.namedI64("axis", *axis)}));
}

Results importGatherND(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/false)))
    return failure();
  int64_t batchDims = ctx.getInt("batch_dims", 0);
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]);
  if (batchDims < 0 ||
      batchDims >= std::min(data.getRank(), indices.getRank())) {
    ctx.error() << "batch_dims " << batchDims << " is out of range for data "
                << data << " and indices " << indices;
    return failure();
  }
  for (int64_t d = 0; d < batchDims; ++d) {
    if (!data.isDynamicDim(d) && !indices.isDynamicDim(d) &&
        data.getDimSize(d) != indices.getDimSize(d)) {
      ctx.error() << "batch dim " << d << " differs between data " << data
                  << " and indices " << indices;
      return failure();
    }
  }
  return single(
      ctx.create1<GatherNDOp>(*in, {ctx.namedI64("batch_dims", batchDims)}));
}

/// The reduction attribute of ScatterElements/ScatterND (opset 16+).
FailureOr<std::string> scatterReduction(NodeContext &ctx) {
  std::string reduction = ctx.getString("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction)) {
    ctx.error() << "unknown reduction '" << reduction << "'";
    return failure();
  }
  return reduction;
}

/// Static dims that must agree (dynamic dims agree with anything).
bool dimsDiffer(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// ScatterElements, and the deprecated Scatter (opset 9-10).
Results importScatterElements(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/true)))
    return failure();
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]),
                   updates = tensorType((*in)[2]);
  if (indices.getRank() != data.getRank() ||
      updates.getRank() != data.getRank() ||
      llvm::any_of(llvm::seq<int64_t>(0, data.getRank()), [&](int64_t d) {
        return dimsDiffer(indices.getDimSize(d), updates.getDimSize(d));
      })) {
    ctx.error() << "indices " << indices << " and updates " << updates
                << " must have the same shape and the rank of the data "
                << data;
    return failure();
  }
  if (updates.getElementType() != data.getElementType()) {
    ctx.error() << "updates element type " << updates.getElementType()
                << " differs from the data's " << data.getElementType();
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), data.getRank());
  if (failed(axis))
    return failure();
  FailureOr<std::string> reduction =
      ctx.node().op_type() == "Scatter"
          ? FailureOr<std::string>(std::string("none"))
          : scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  return single(ctx.create1<ScatterElementsOp>(
      *in,
      {ctx.namedI64("axis", *axis), ctx.namedStr("reduction", *reduction)}));
}

Results importScatterND(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 3);
  if (failed(in))
    return failure();
  if (failed(checkIndices(ctx, (*in)[1], /*allowI32=*/false)))
    return failure();
  RankedTensorType data = tensorType((*in)[0]), indices = tensorType((*in)[1]),
                   updates = tensorType((*in)[2]);
  if (indices.getRank() < 1 || indices.isDynamicDim(indices.getRank() - 1)) {
    ctx.error() << "indices " << indices
                << " must have a static last dim (the index tuple length)";
    return failure();
  }
  int64_t tuple = indices.getShape().back();
  if (tuple > data.getRank()) {
    ctx.error() << "index tuples of " << tuple << " exceed the data rank "
                << data.getRank();
    return failure();
  }
  // updates.shape == indices.shape[:-1] + data.shape[tuple:]
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(tuple));
  if ((int64_t)expected.size() != updates.getRank() ||
      llvm::any_of(llvm::zip(expected, updates.getShape()), [](auto pair) {
        return dimsDiffer(std::get<0>(pair), std::get<1>(pair));
      })) {
    ctx.error() << "updates " << updates << " do not match indices " << indices
                << " and data " << data;
    return failure();
  }
  if (updates.getElementType() != data.getElementType()) {
    ctx.error() << "updates element type " << updates.getElementType()
                << " differs from the data's " << data.getElementType();
    return failure();
  }
  FailureOr<std::string> reduction = scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  return single(
      ctx.create1<ScatterNDOp>(*in, {ctx.namedStr("reduction", *reduction)}));
}

} // namespace

void cgc::onnx_import::registerGatherScatterOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("Gather", importGather, "`cgc.gather`");
  add("GatherElements", importGatherElements, "`cgc.gather_elements`");
  add("GatherND", importGatherND, "`cgc.gather_nd`");
  add("ScatterElements", importScatterElements, "`cgc.scatter_elements`");
  add("Scatter", importScatterElements,
      "`cgc.scatter_elements` (deprecated op name)");
  add("ScatterND", importScatterND, "`cgc.scatter_nd`");
}
