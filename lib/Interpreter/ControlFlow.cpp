//===- ControlFlow.cpp - if, loop and the structural region ops -----------===//

#include "Kernels.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

/// Island, eager region and kernel: run the body, the yielded values are
/// the results.
Results runRegionOp(OpCall &call) {
  return call.interp.runBlock(call.op->getRegion(0).front(), {});
}

Results runIf(OpCall &call) {
  auto op = call.get<IfOp>();
  const HostTensor &condition = call.in(0);
  if (condition.numElements() != 1) {
    call.error() << "the condition must hold one element, got "
                 << condition.typeString();
    return failure();
  }
  Region &region = condition.getU(0) ? op.getThenRegion() : op.getElseRegion();
  return call.interp.runBlock(region.front(), {});
}

/// ONNX Loop: runs while iteration < max_trip_count and the condition
/// holds (both checked before each iteration). The body yields (condition,
/// carried..., scan...); scan outputs are stacked along a new leading dim.
Results runLoop(OpCall &call) {
  auto op = call.get<LoopOp>();
  Block &body = op.getBody().front();
  int64_t maxTrips = call.in(0).getI(0);
  bool condition = call.in(1).getU(0) != 0;
  size_t carried = op.getInitialValues().size();
  size_t scans = op.getNumResults() - carried;
  SmallVector<TensorRef> values(call.operands.begin() + 2, call.operands.end());
  std::vector<std::vector<TensorRef>> scanned(scans);
  Type i64 = IntegerType::get(op.getContext(), 64);
  Type i1 = IntegerType::get(op.getContext(), 1);
  for (int64_t i = 0; i < maxTrips && condition; ++i) {
    HostTensor iteration(i64, {}), cond(i1, {});
    iteration.setI(0, i);
    cond.setU(0, 1);
    SmallVector<TensorRef> args = {share(std::move(iteration)),
                                   share(std::move(cond))};
    args.append(values.begin(), values.end());
    FailureOr<SmallVector<TensorRef>> yielded =
        call.interp.runBlock(body, args);
    if (failed(yielded))
      return failure();
    condition = (*yielded)[0]->getU(0) != 0;
    for (size_t j = 0; j < carried; ++j)
      values[j] = (*yielded)[1 + j];
    for (size_t j = 0; j < scans; ++j) {
      const TensorRef &s = (*yielded)[1 + carried + j];
      if (!scanned[j].empty() && scanned[j].front()->shape != s->shape) {
        call.error() << "scan output #" << j << " changes shape from "
                     << formatDims(scanned[j].front()->shape) << " to "
                     << formatDims(s->shape) << " in iteration " << i;
        return failure();
      }
      scanned[j].push_back(s);
    }
  }
  SmallVector<TensorRef> results(values);
  for (size_t j = 0; j < scans; ++j) {
    auto type = cast<RankedTensorType>(op.getResult(carried + j).getType());
    SmallVector<int64_t, 4> shape = {(int64_t)scanned[j].size()};
    if (!scanned[j].empty()) {
      llvm::append_range(shape, scanned[j].front()->shape);
    } else {
      // No iteration: the per-iteration shape comes from the type.
      for (int64_t d : type.getShape().drop_front())
        shape.push_back(ShapedType::isDynamic(d) ? 0 : d);
    }
    HostTensor out(type.getElementType(), shape);
    size_t offset = 0;
    for (const TensorRef &s : scanned[j]) {
      copyBytes(out.bytes.data() + offset, s->bytes.data(), s->bytes.size());
      offset += s->bytes.size();
    }
    results.push_back(share(std::move(out)));
  }
  return results;
}

} // namespace

void cgc::interp::registerControlFlowKernels(KernelTable &t) {
  addKernel<IfOp>(t, runIf);
  addKernel<LoopOp>(t, runLoop);
  addKernel<IslandOp>(t, runRegionOp);
  addKernel<EagerRegionOp>(t, runRegionOp);
  addKernel<KernelOp>(t, runRegionOp);
}
