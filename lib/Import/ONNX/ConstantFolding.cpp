//===- ConstantFolding.cpp - partially known shape vectors at import ------===//
//
// Exporters compute reshape targets at run time (Shape -> Gather -> Concat ->
// Reshape). Once dims are bound those values are compile-time facts: ops on
// constants fold through their fold hooks (lib/Dialect/Cgc/IR/CgcFolds.cpp,
// evaluated by the interpreter's kernels). This file tracks shape vectors
// whose entries are only partly known (a symbolic batch dim) so a Reshape to
// [N, -1] still gets its static dims.
//
//===----------------------------------------------------------------------===//

#include "ImporterCore.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;
} // namespace

//===----------------------------------------------------------------------===//
// Partially known shape vectors
//===----------------------------------------------------------------------===//

namespace {
std::optional<SmallVector<int64_t>> knownInts(GraphImporter &graph, Value v) {
  if (auto constant = v.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.getElementType().isInteger(64))
      return std::nullopt;
    SmallVector<int64_t> ints;
    for (const APInt &value : dense.getValues<APInt>())
      ints.push_back(value.getSExtValue());
    return ints;
  }
  return graph.partialInts(v);
}

bool isSmallI64Vector(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isInteger(64) && type.getRank() <= 1 &&
         type.hasStaticShape() && type.getNumElements() <= 64;
}
} // namespace

void cgc::onnx_import::propagatePartialInts(GraphImporter &graph,
                                            Operation *op) {
  if (op->getNumResults() != 1 || !isSmallI64Vector(op->getResult(0)))
    return;
  Value result = op->getResult(0);
  std::optional<SmallVector<int64_t>> known;
  if (auto shape = dyn_cast<ShapeOp>(op)) {
    auto type = cast<RankedTensorType>(shape.getInput().getType());
    known = SmallVector<int64_t>(type.getShape().slice(
        shape.getStart(), shape.getEnd() - shape.getStart()));
  } else if (auto concat = dyn_cast<ConcatOp>(op)) {
    known.emplace();
    for (Value input : concat.getInputs()) {
      std::optional<SmallVector<int64_t>> part = knownInts(graph, input);
      auto type = cast<RankedTensorType>(input.getType());
      if (part)
        llvm::append_range(*known, *part);
      else
        known->append(type.getNumElements(), kDyn);
    }
  } else if (auto gather = dyn_cast<GatherOp>(op)) {
    std::optional<SmallVector<int64_t>> data =
        knownInts(graph, gather.getInput());
    std::optional<SmallVector<int64_t>> indices =
        knownInts(graph, gather.getIndices());
    if (!data || !indices || llvm::any_of(*indices, ShapedType::isDynamic))
      return;
    known.emplace();
    for (int64_t i : *indices) {
      int64_t index = i < 0 ? i + (int64_t)data->size() : i;
      if (index < 0 || index >= (int64_t)data->size())
        return;
      known->push_back((*data)[index]);
    }
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    std::optional<SmallVector<int64_t>> data =
        knownInts(graph, slice.getInput());
    if (!data || slice.getStarts().size() != 1)
      return;
    known.emplace();
    int64_t count = cast<RankedTensorType>(slice.getType()).getNumElements();
    for (int64_t k = 0; k < count; ++k)
      known->push_back(
          (*data)[slice.getStarts()[0] + k * slice.getSteps()[0]]);
  } else if (isa<ReshapeOp, CastOp>(op)) {
    Value input = op->getOperand(0);
    if (!isSmallI64Vector(input))
      return;
    known = knownInts(graph, input);
  }
  if (known && (int64_t)known->size() ==
                   cast<RankedTensorType>(result.getType()).getNumElements())
    graph.setPartialInts(result, *known);
}
