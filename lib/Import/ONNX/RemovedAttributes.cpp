//===- RemovedAttributes.cpp - attributes a newer opset no longer has -----===//
//
// Several ONNX ops turned an attribute into an input in a later opset
// (Reduce*'s axes, Split's split, Pad's pads, ...). A node that still
// carries the attribute at such an opset is invalid ONNX (the checker
// refuses it); reading the attribute anyway would silently give the model
// the old semantics, so the node is refused with the opset that removed it.
// Removals before opset 7 are left out: older models are upgraded by the
// version converter first.
//
//===----------------------------------------------------------------------===//

#include "ImporterCore.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

struct RemovedAttribute {
  llvm::StringLiteral op, attribute;
  int64_t removedIn;
  int input; ///< the input that took its place, or -1
};

constexpr RemovedAttribute kRemoved[] = {
    {"BatchNormalization", "spatial", 9, -1},
    {"Upsample", "scales", 9, 1},
    {"Slice", "starts", 10, 1},
    {"Slice", "ends", 10, 2},
    {"Slice", "axes", 10, 3},
    {"TopK", "k", 10, 1},
    {"Clip", "min", 11, 1},
    {"Clip", "max", 11, 2},
    {"Pad", "pads", 11, 1},
    {"Pad", "value", 11, 2},
    {"Dropout", "ratio", 12, 1},
    {"ReduceSum", "axes", 13, 1},
    {"Split", "split", 13, 1},
    {"Squeeze", "axes", 13, 1},
    {"Unsqueeze", "axes", 13, 1},
    {"ReduceL1", "axes", 18, 1},
    {"ReduceL2", "axes", 18, 1},
    {"ReduceLogSum", "axes", 18, 1},
    {"ReduceLogSumExp", "axes", 18, 1},
    {"ReduceMax", "axes", 18, 1},
    {"ReduceMean", "axes", 18, 1},
    {"ReduceMin", "axes", 18, 1},
    {"ReduceProd", "axes", 18, 1},
    {"ReduceSumSquare", "axes", 18, 1},
};

} // namespace

LogicalResult cgc::onnx_import::checkRemovedAttributes(
    const onnx::NodeProto &node, int64_t opset, GraphImporter &importer) {
  for (const RemovedAttribute &removed : kRemoved) {
    if (removed.op != node.op_type() || opset < removed.removedIn)
      continue;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.name() != removed.attribute)
        continue;
      InFlightDiagnostic diag = importer.error();
      diag << describeNode(node) << ": attribute '" << attr.name()
           << "' was removed in opset " << removed.removedIn;
      if (removed.input >= 0)
        diag << " (it is input #" << removed.input << " from then on)";
      diag << " and the model imports opset " << opset;
      return failure();
    }
  }
  return success();
}
