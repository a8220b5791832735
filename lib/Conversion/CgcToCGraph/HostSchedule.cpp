//===- HostSchedule.cpp - eager regions to host ops -----------------------===//
//
// Walks an eager region in program order. Constants (uploaded weights) and
// reshapes to static shapes (views) need no host work; kernels become
// launches, If and Loop host branches and loops whose bodies are built the
// same way, data-dependent ops host ops that report the shapes of the model
// outputs they become.
//
//===----------------------------------------------------------------------===//

#include "HostSchedule.h"

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace cgc;

namespace {

/// The bodies of host branches and loops are single blocks.
Block &newBlock(Region &region) { return region.emplaceBlock(); }

class HostLowering {
public:
  HostLowering(EagerRegionOp eager, EagerLaunchesFn launches)
      : eager(eager), launches(launches),
        func(eager->getParentOfType<func::FuncOp>()) {}

  /// Appends the host ops of `block` at the builder's insertion point.
  LogicalResult lowerBlock(Block &block, OpBuilder &b) {
    for (Operation &op : block.without_terminator())
      if (failed(lowerOp(op, b)))
        return failure();
    return success();
  }

private:
  LogicalResult lowerOp(Operation &op, OpBuilder &b) {
    auto reshape = dyn_cast<ReshapeOp>(op);
    if (isa<ConstantOp>(op) || (reshape && reshape.getType().hasStaticShape()))
      return success(); // weights are uploaded; reshapes are views
    if (reshape)
      return lowerReshape(reshape, b);
    if (auto kernel = dyn_cast<KernelOp>(op))
      return lowerKernel(kernel, b);
    if (auto branch = dyn_cast<IfOp>(op))
      return lowerIf(branch, b);
    if (auto loop = dyn_cast<LoopOp>(op))
      return lowerLoop(loop, b);
    if (auto nonzero = dyn_cast<NonZeroOp>(op))
      return lowerNonZero(nonzero, b);
    if (auto compress = dyn_cast<CompressOp>(op))
      return lowerCompress(compress, b);
    if (auto unique = dyn_cast<UniqueOp>(op))
      return lowerUnique(unique, b);
    if (auto nms = dyn_cast<NonMaxSuppressionOp>(op))
      return lowerNonMaxSuppression(nms, b);
    return op.emitError() << "the GPU backend has no eager implementation of '"
                          << op.getName() << "' (ONNX node '" << nodeName(&op)
                          << "')";
  }

  /// Offset of a value, or an error naming the op that needs it.
  FailureOr<int64_t> offset(Value v, Operation *user) {
    int64_t o = plannedOffset(v);
    if (o < 0)
      return user->emitError() << "eager op '" << nodeName(user)
                               << "' uses a value without a planned buffer";
    return o;
  }

  /// Copies `from` into `to`'s buffer when they live apart.
  LogicalResult copyValue(Value from, Value to, Operation *op, OpBuilder &b) {
    FailureOr<int64_t> src = offset(from, op), dst = offset(to, op);
    if (failed(src) || failed(dst))
      return failure();
    if (*src != *dst)
      cgraph::HostCopyOp::create(b, op->getLoc(), nodeName(op), *dst, *src,
                                 tensorBytes(to.getType()));
    return success();
  }

  LogicalResult lowerKernel(KernelOp kernel, OpBuilder &b) {
    for (const GeneratedKernel &k : launches(kernel))
      cgraph::LaunchOp::create(b, kernel.getLoc(), k.name, kernel.getName(),
                               k.grid, k.block, k.argOffsets);
    return success();
  }

  LogicalResult lowerIf(IfOp op, OpBuilder &b) {
    FailureOr<int64_t> cond = offset(op.getCondition(), op);
    if (failed(cond))
      return failure();
    auto host = cgraph::HostIfOp::create(b, op.getLoc(), nodeName(op), *cond);
    auto branch = [&](Region &from, Region &to) -> LogicalResult {
      Block &block = from.front();
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(&newBlock(to));
      if (failed(lowerBlock(block, b)))
        return failure();
      for (auto [yielded, result] :
           llvm::zip(block.getTerminator()->getOperands(), op.getResults()))
        if (failed(copyValue(yielded, result, op, b)))
          return failure();
      return success();
    };
    if (failed(branch(op.getThenRegion(), host.getThenBody())) ||
        failed(branch(op.getElseRegion(), host.getElseBody())))
      return failure();
    return success();
  }

  LogicalResult lowerLoop(LoopOp op, OpBuilder &b) {
    Block &block = op.getBody().front();
    size_t carried = op.getInitialValues().size();
    auto yield = cast<YieldOp>(block.getTerminator());
    if (yield.getValues().size() != carried + 1)
      return op.emitError() << "the GPU backend does not run Loop scan "
                               "outputs yet (ONNX node '"
                            << nodeName(op) << "')";
    FailureOr<int64_t> trips = offset(op.getMaxTripCount(), op);
    FailureOr<int64_t> cond = offset(op.getInitialCondition(), op);
    FailureOr<int64_t> iterArg = offset(block.getArgument(0), op);
    FailureOr<int64_t> condArg = offset(block.getArgument(1), op);
    FailureOr<int64_t> condOut = offset(yield.getValues()[0], op);
    if (failed(trips) || failed(cond) || failed(iterArg) || failed(condArg) ||
        failed(condOut))
      return failure();
    auto host = cgraph::HostLoopOp::create(b, op.getLoc(), nodeName(op), *trips,
                                           *cond, *iterArg, *condArg, *condOut);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(&newBlock(host.getInit()));
    for (size_t i = 0; i < carried; ++i)
      if (failed(copyValue(op.getInitialValues()[i], block.getArgument(i + 2),
                           op, b)))
        return failure();
    b.setInsertionPointToEnd(&newBlock(host.getBody()));
    if (failed(lowerBlock(block, b)))
      return failure();
    for (size_t i = 0; i < carried; ++i)
      if (failed(copyValue(yield.getValues()[i + 1], block.getArgument(i + 2),
                           op, b)))
        return failure();
    b.setInsertionPointToEnd(&newBlock(host.getExit()));
    for (size_t i = 0; i < carried; ++i)
      if (failed(copyValue(block.getArgument(i + 2), op.getResult(i), op, b)))
        return failure();
    return success();
  }

  /// The function outputs that a value of this region becomes.
  SmallVector<int64_t> outputsOf(Value v) {
    SmallVector<int64_t> outputs;
    Operation *yield = eager.getBody().front().getTerminator();
    Operation *ret = func.getBody().front().getTerminator();
    for (auto [r, yielded] : llvm::enumerate(yield->getOperands())) {
      if (yielded != v)
        continue;
      for (auto [i, returned] : llvm::enumerate(ret->getOperands()))
        if (returned == eager.getResult(r))
          outputs.push_back(i);
    }
    return outputs;
  }

  /// A data-dependent result may only leave the model: the runtime learns
  /// its shape from set_output_shape, nothing after it could.
  LogicalResult checkOnlyReturned(Operation *op, bool staticToo = false) {
    for (Value result : op->getResults())
      if (staticToo ||
          !cast<RankedTensorType>(result.getType()).hasStaticShape())
        for (OpOperand &use : result.getUses())
          if (!isa<YieldOp>(use.getOwner()) ||
              use.getOwner()->getParentOp() != eager)
            return op->emitError()
                   << "the result of '" << nodeName(op)
                   << "' is used by another op; the GPU backend only "
                      "returns data-dependent shapes";
    return success();
  }

  LogicalResult lowerNonZero(NonZeroOp op, OpBuilder &b) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    FailureOr<int64_t> in = offset(op.getInput(), op);
    FailureOr<int64_t> out = offset(op.getResult(), op);
    if (failed(in) || failed(out))
      return failure();
    if (!cgraph::isHostElementType(input.getElementType()) ||
        !input.hasStaticShape())
      return op.emitError() << "NonZero of " << input
                            << " is not supported by the GPU backend";
    // The result's shape is only known here; it may only leave the model.
    if (failed(checkOnlyReturned(op, /*staticToo=*/true)))
      return failure();
    cgraph::HostNonZeroOp::create(b, op.getLoc(), nodeName(op),
                                  input.getElementType(), input.getShape(), *in,
                                  *out, outputsOf(op.getResult()));
    return success();
  }

  /// The slices of `shape` around `axis` (or all elements as one run when
  /// there is none): outer x n x inner, the result's shape before its
  /// data-dependent dim is known, and that dim.
  struct Slicing {
    int64_t outer = 1, n, inner = 1, axis = 0;
    SmallVector<int64_t> resultShape;
  };
  static Slicing slicing(RankedTensorType input, std::optional<int64_t> a) {
    Slicing s;
    ArrayRef<int64_t> shape = input.getShape();
    s.n = input.getNumElements();
    s.resultShape = {s.n};
    if (a) {
      s.axis = *a < 0 ? *a + input.getRank() : *a;
      s.outer = ShapedType::getNumElements(shape.take_front(s.axis));
      s.n = shape[s.axis];
      s.inner = ShapedType::getNumElements(shape.drop_front(s.axis + 1));
      s.resultShape.assign(shape.begin(), shape.end());
    }
    return s;
  }

  LogicalResult lowerCompress(CompressOp op, OpBuilder &b) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto condition = cast<RankedTensorType>(op.getCondition().getType());
    if (!input.hasStaticShape() || !condition.hasStaticShape())
      return op.emitError() << "Compress of " << input
                            << " is not supported by the GPU backend";
    if (failed(checkOnlyReturned(op)))
      return failure();
    FailureOr<int64_t> in = offset(op.getInput(), op);
    FailureOr<int64_t> cond = offset(op.getCondition(), op);
    FailureOr<int64_t> out = offset(op.getResult(), op);
    if (failed(in) || failed(cond) || failed(out))
      return failure();
    Slicing s = slicing(input, op.getAxis());
    int64_t size = std::max<int64_t>(1, input.getElementTypeBitWidth() / 8);
    cgraph::HostCompressOp::create(
        b, op.getLoc(), nodeName(op), *in, *cond, *out, tensorBytes(input),
        condition.getNumElements(), s.outer, s.n, s.inner, size, s.resultShape,
        s.axis, outputsOf(op.getResult()));
    return success();
  }

  LogicalResult lowerUnique(UniqueOp op, OpBuilder &b) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    if (!cgraph::isHostElementType(input.getElementType()) ||
        !input.hasStaticShape())
      return op.emitError()
             << "Unique of " << input << " is not supported by the GPU backend";
    if (failed(checkOnlyReturned(op)))
      return failure();
    FailureOr<int64_t> in = offset(op.getInput(), op);
    if (failed(in))
      return failure();
    // Results nothing uses are not written (-1).
    SmallVector<int64_t> results;
    for (Value r : op->getResults()) {
      FailureOr<int64_t> o = offset(r, op);
      if (failed(o))
        return failure();
      results.push_back(r.use_empty() ? -1 : *o);
    }
    Slicing s = slicing(input, op.getAxis());
    SmallVector<int64_t> countOutputs = outputsOf(op.getResult(1));
    countOutputs.append(outputsOf(op.getResult(3)));
    cgraph::HostUniqueOp::create(
        b, op.getLoc(), nodeName(op), input.getElementType(), *in, s.outer, s.n,
        s.inner, op.getSorted(), results, s.resultShape, s.axis,
        outputsOf(op.getResult(0)), countOutputs);
    return success();
  }

  LogicalResult lowerNonMaxSuppression(NonMaxSuppressionOp op, OpBuilder &b) {
    auto boxes = cast<RankedTensorType>(op.getBoxes().getType());
    auto scores = cast<RankedTensorType>(op.getScores().getType());
    Type element = boxes.getElementType();
    if (!(element.isF32() || element.isF64()) || !boxes.hasStaticShape() ||
        !scores.hasStaticShape())
      return op.emitError() << "NonMaxSuppression of " << boxes
                            << " is not supported by the GPU backend";
    if (failed(checkOnlyReturned(op)))
      return failure();
    SmallVector<int64_t> at;
    for (Value v : op->getOperands()) {
      FailureOr<int64_t> o = offset(v, op);
      if (failed(o))
        return failure();
      at.push_back(*o);
    }
    FailureOr<int64_t> out = offset(op.getResult(), op);
    if (failed(out))
      return failure();
    cgraph::HostNonMaxSuppressionOp::create(
        b, op.getLoc(), nodeName(op), element, at[0], at[1], at[2], at[3],
        at[4], *out, boxes.getDimSize(0), scores.getDimSize(1),
        boxes.getDimSize(1), op.getCenterPointBox() != 0,
        op.getScoreThresholdGiven(), outputsOf(op.getResult()));
    return success();
  }

  /// Reshape to a run-time shape: a view of its input (the plan aliases the
  /// buffers); the host reads the shape tensor and reports the dims.
  LogicalResult lowerReshape(ReshapeOp op, OpBuilder &b) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    Value shapeValue = op.getShape();
    if (!shapeValue || !input.hasStaticShape())
      return op.emitError() << "Reshape of " << input << " to " << op.getType()
                            << " is not supported by the GPU backend";
    if (failed(checkOnlyReturned(op)))
      return failure();
    FailureOr<int64_t> shapeAt = offset(shapeValue, op);
    if (failed(shapeAt))
      return failure();
    cgraph::HostReshapeOp::create(b, op.getLoc(), nodeName(op), *shapeAt,
                                  input.getShape(), op.getType().getRank(),
                                  op.getAllowzero(), outputsOf(op.getResult()));
    return success();
  }

  EagerRegionOp eager;
  EagerLaunchesFn launches;
  func::FuncOp func;
};

} // namespace

LogicalResult cgc::lowerEagerRegion(EagerRegionOp eager, OpBuilder &builder,
                                    EagerLaunchesFn launches) {
  auto step = cgraph::EagerOp::create(builder, eager.getLoc(), eager.getName());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&newBlock(step.getBody()));
  return HostLowering(eager, launches)
      .lowerBlock(eager.getBody().front(), builder);
}
