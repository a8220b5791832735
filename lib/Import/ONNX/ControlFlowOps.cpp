//===- ControlFlowOps.cpp - importers of If and Loop ----------------------===//
//
// ONNX subgraphs become regions. Bodies may use any value of the enclosing
// graphs by name, which maps directly onto MLIR's region visibility, so the
// body importer simply chains to its parent for lookups.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// Imports `graph` into `block` with (already created) block arguments bound
/// to the graph's inputs, and terminates it with cgc.yield of its outputs.
FailureOr<SmallVector<Value>> importBody(NodeContext &ctx,
                                         const onnx::GraphProto &graph,
                                         Block &block, StringRef what) {
  if (ctx.graph().depth() >= kMaxSubgraphDepth) {
    ctx.error() << "subgraphs are nested more than " << kMaxSubgraphDepth
                << " deep";
    return failure();
  }
  if ((size_t)graph.input_size() != block.getNumArguments()) {
    ctx.error() << what << " takes " << graph.input_size()
                << " inputs but must take " << block.getNumArguments();
    return failure();
  }
  GraphImporter body(ctx.context(), ctx.graph().options(),
                     ctx.graph().modelPath(), ctx.graph().modelDir(), ctx.opset(), &ctx.graph());
  for (auto [info, arg] : llvm::zip(graph.input(), block.getArguments()))
    body.define(info.name(), arg);
  OpBuilder builder = OpBuilder::atBlockEnd(&block);
  if (failed(body.importInitializers(graph, builder)) ||
      failed(body.importNodes(graph, builder))) {
    ctx.error() << "while importing the " << what;
    return failure();
  }
  SmallVector<Value> outputs;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value v = body.lookup(output.name());
    if (!v) {
      ctx.error() << what << " output '" << output.name()
                  << "' is not defined";
      return failure();
    }
    outputs.push_back(v);
  }
  if (failed(checkDeclaredTypes(body, graph))) {
    ctx.error() << "while importing the " << what;
    return failure();
  }
  YieldOp::create(builder, ctx.loc(), outputs);
  return outputs;
}

Results importIf(NodeContext &ctx) {
  FailureOr<Value> condition = ctx.requiredInput(0);
  const onnx::GraphProto *thenGraph = ctx.getGraph("then_branch");
  const onnx::GraphProto *elseGraph = ctx.getGraph("else_branch");
  if (failed(condition))
    return failure();
  if (!thenGraph || !elseGraph) {
    ctx.error() << "needs then_branch and else_branch graphs";
    return failure();
  }
  if (!tensorType(*condition).getElementType().isInteger(1) ||
      !hasOneElement(*condition)) {
    ctx.error() << "the condition must be a single bool";
    return failure();
  }
  // Result types are only known once the branches are imported, so they are
  // imported into a result-less placeholder whose regions then move over.
  OpBuilder &b = ctx.builder();
  auto placeholder = IfOp::create(b, ctx.loc(), TypeRange{}, *condition);
  auto eraseOnExit = llvm::make_scope_exit([&] { placeholder.erase(); });
  Block *thenBlock = new Block(), *elseBlock = new Block();
  placeholder.getThenRegion().push_back(thenBlock);
  placeholder.getElseRegion().push_back(elseBlock);
  // A condition known at import (shape arithmetic on static shapes, as in
  // ONNX functions that branch on a rank) takes one branch: only that one is
  // imported, in place, since the other may not type-check on these shapes
  // (AffineGrid's 3-D branch splits a 4-element size into five).
  if (std::optional<SmallVector<int64_t>> known = ctx.constInts(*condition)) {
    bool taken = (*known)[0] != 0;
    Block *block = taken ? thenBlock : elseBlock;
    FailureOr<SmallVector<Value>> values =
        importBody(ctx, taken ? *thenGraph : *elseGraph, *block,
                   taken ? "then branch" : "else branch");
    if (failed(values))
      return failure();
    if ((size_t)ctx.numOutputs() != values->size()) {
      ctx.error() << "branches must yield one value per output";
      return failure();
    }
    for (Operation &op : llvm::make_early_inc_range(block->without_terminator()))
      op.moveBefore(placeholder);
    return *values;
  }
  FailureOr<SmallVector<Value>> thenValues =
      importBody(ctx, *thenGraph, *thenBlock, "then branch");
  if (failed(thenValues))
    return failure();
  FailureOr<SmallVector<Value>> elseValues =
      importBody(ctx, *elseGraph, *elseBlock, "else branch");
  if (failed(elseValues))
    return failure();
  SmallVector<Type> types;
  for (auto [t, e] : llvm::zip(*thenValues, *elseValues)) {
    if (t.getType() != e.getType()) {
      ctx.error() << "branches yield different types " << t.getType()
                  << " and " << e.getType()
                  << " (branch-dependent shapes are not supported)";
      return failure();
    }
    types.push_back(t.getType());
  }
  if (thenValues->size() != elseValues->size() ||
      (size_t)ctx.numOutputs() != types.size()) {
    ctx.error() << "branches must yield one value per output";
    return failure();
  }
  auto op = IfOp::create(b, ctx.loc(), types, *condition);
  op.getThenRegion().takeBody(placeholder.getThenRegion());
  op.getElseRegion().takeBody(placeholder.getElseRegion());
  return SmallVector<Value>(op.getResults());
}

Results importLoop(NodeContext &ctx) {
  const onnx::GraphProto *bodyGraph = ctx.getGraph("body");
  if (!bodyGraph) {
    ctx.error() << "needs a body graph";
    return failure();
  }
  OpBuilder &b = ctx.builder();
  Value tripCount = ctx.input(0), condition = ctx.input(1);
  // A missing trip count or condition means "unbounded" / "true".
  if (!tripCount)
    tripCount = ctx.constInt(INT64_MAX, b.getI64Type());
  if (!condition)
    condition = ctx.constScalar(1, b.getI1Type());
  if (!hasOneElement(tripCount) ||
      !tensorType(tripCount).getElementType().isInteger(64) ||
      !hasOneElement(condition) ||
      !tensorType(condition).getElementType().isInteger(1)) {
    ctx.error() << "the trip count must be one int64 and the condition one "
                   "bool";
    return failure();
  }
  FailureOr<Value> scalarTrips = reshapeTo(ctx, tripCount, {});
  FailureOr<Value> scalarCondition = reshapeTo(ctx, condition, {});
  if (failed(scalarTrips) || failed(scalarCondition))
    return failure();
  SmallVector<Value> carried;
  for (size_t i = 2; i < ctx.numInputs(); ++i) {
    FailureOr<Value> v = ctx.requiredInput(i);
    if (failed(v))
      return failure();
    carried.push_back(*v);
  }

  auto placeholder = LoopOp::create(b, ctx.loc(), TypeRange{}, *scalarTrips,
                                    *scalarCondition, carried);
  auto eraseOnExit = llvm::make_scope_exit([&] { placeholder.erase(); });
  Block *block = new Block();
  placeholder.getBody().push_back(block);
  block->addArgument(RankedTensorType::get({}, b.getI64Type()), ctx.loc());
  block->addArgument(RankedTensorType::get({}, b.getI1Type()), ctx.loc());
  for (Value v : carried)
    block->addArgument(v.getType(), ctx.loc());
  FailureOr<SmallVector<Value>> yielded =
      importBody(ctx, *bodyGraph, *block, "loop body");
  if (failed(yielded))
    return failure();
  if (yielded->size() < carried.size() + 1) {
    ctx.error() << "the body must return the condition and "
                << carried.size() << " carried values";
    return failure();
  }
  auto yield = cast<YieldOp>(block->getTerminator());
  // The condition output may be any single-element bool; normalize to i1[].
  Value cond = (*yielded)[0];
  if (tensorType(cond) != RankedTensorType::get({}, b.getI1Type())) {
    if (!tensorType(cond).getElementType().isInteger(1) ||
        !hasOneElement(cond)) {
      ctx.error() << "the body's condition output must be one bool";
      return failure();
    }
    OpBuilder inner = OpBuilder::atBlockTerminator(block);
    cond = ReshapeOp::create(inner, ctx.loc(),
                             RankedTensorType::get({}, b.getI1Type()), cond,
                             Value())
               .getResult();
    yield->setOperand(0, cond);
  }
  SmallVector<Type> resultTypes;
  for (size_t i = 0; i < carried.size(); ++i) {
    if ((*yielded)[i + 1].getType() != carried[i].getType()) {
      ctx.error() << "carried value " << i << " changes type from "
                  << carried[i].getType() << " to "
                  << (*yielded)[i + 1].getType();
      return failure();
    }
    resultTypes.push_back(carried[i].getType());
  }
  for (size_t i = carried.size() + 1; i < yielded->size(); ++i) {
    RankedTensorType scan = tensorType((*yielded)[i]);
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    llvm::append_range(shape, scan.getShape());
    resultTypes.push_back(RankedTensorType::get(shape, scan.getElementType()));
  }
  auto op = LoopOp::create(b, ctx.loc(), resultTypes, *scalarTrips,
                           *scalarCondition, carried);
  op.getBody().takeBody(placeholder.getBody());
  return SmallVector<Value>(op.getResults());
}

} // namespace

void cgc::onnx_import::registerControlFlowOps(ImporterTable &t) {
  t["If"] = OpImporter{importIf, "`cgc.if` with two regions (eager)"};
  t["Loop"] = OpImporter{importLoop,
                         "`cgc.loop` (eager); scan outputs get a `?` dim"};
}
