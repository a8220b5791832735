//===- ControlFlowOps.cpp - importers of If, Loop and Scan ----------------===//
//
// ONNX subgraphs become regions. Bodies may use any value of the enclosing
// graphs by name, which maps directly onto MLIR's region visibility, so the
// body importer simply chains to its parent for lookups. Scan, whose trip
// count is the static length of its sequences, is unrolled instead: each
// step's body is imported inline, so the steps fuse and graph like any
// other ops. So is a Loop whose body cgc.loop cannot take (it needs the
// iteration number as a constant) when its trip count and condition are
// known at import.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// Imports `graph` with `builder` (into a region, or inline), its inputs
/// bound to `inputs`; returns the values its outputs name.
FailureOr<SmallVector<Value>> importSubgraph(NodeContext &ctx,
                                             const onnx::GraphProto &graph,
                                             ValueRange inputs,
                                             OpBuilder &builder,
                                             StringRef what) {
  if (ctx.graph().depth() >= kMaxSubgraphDepth) {
    ctx.error() << "subgraphs are nested more than " << kMaxSubgraphDepth
                << " deep";
    return failure();
  }
  if ((size_t)graph.input_size() != inputs.size()) {
    ctx.error() << what << " takes " << graph.input_size()
                << " inputs but must take " << inputs.size();
    return failure();
  }
  GraphImporter body(ctx.context(), ctx.graph().options(),
                     ctx.graph().modelPath(), ctx.graph().modelDir(),
                     ctx.opset(), &ctx.graph());
  for (auto [info, value] : llvm::zip(graph.input(), inputs))
    body.define(info.name(), value);
  if (failed(body.importInitializers(graph, builder)) ||
      failed(body.importNodes(graph, builder)) ||
      failed(checkDeclaredTypes(body, graph))) {
    ctx.error() << "while importing the " << what;
    return failure();
  }
  SmallVector<Value> outputs;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value v = body.lookup(output.name());
    if (!v && (body.lookupSequence(output.name()) ||
               body.isEmptyOptional(output.name()))) {
      ctx.error() << what << " output '" << output.name()
                  << "' is a sequence or an empty optional (they are not "
                     "supported across If, Loop and Scan bodies)";
      return failure();
    }
    if (!v) {
      ctx.error() << what << " output '" << output.name()
                  << "' is not defined";
      return failure();
    }
    outputs.push_back(v);
  }
  return outputs;
}

/// Imports `graph` into `block` with (already created) block arguments bound
/// to the graph's inputs, and terminates it with cgc.yield of its outputs.
FailureOr<SmallVector<Value>> importBody(NodeContext &ctx,
                                         const onnx::GraphProto &graph,
                                         Block &block, StringRef what) {
  OpBuilder builder = OpBuilder::atBlockEnd(&block);
  FailureOr<SmallVector<Value>> outputs =
      importSubgraph(ctx, graph, block.getArguments(), builder, what);
  if (failed(outputs))
    return failure();
  YieldOp::create(builder, ctx.loc(), *outputs);
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

/// Imports `graph` at the builder's insertion point with its inputs bound
/// to `inputs` (one step of an unrolled Scan); returns its outputs.
FailureOr<SmallVector<Value>> importInline(NodeContext &ctx,
                                           const onnx::GraphProto &graph,
                                           ArrayRef<Value> inputs,
                                           StringRef what) {
  return importSubgraph(ctx, graph, inputs, ctx.builder(), what);
}

/// Scans (and Loops that must be unrolled) longer than this are refused
/// rather than unrolled.
constexpr int64_t kMaxScanSteps = 4096;

/// The per-input (or per-output) axes or directions of a Scan: `count`
/// values, 0 when the attribute is absent.
FailureOr<SmallVector<int64_t>> scanInts(NodeContext &ctx, StringRef name,
                                         size_t count) {
  std::optional<SmallVector<int64_t>> values = ctx.getInts(name);
  if (!values)
    return SmallVector<int64_t>(count, 0);
  if (values->size() != count) {
    ctx.error() << name << " has " << values->size() << " entries, expected "
                << count;
    return failure();
  }
  return *values;
}

/// The step outputs of one scan output stacked along `axis` (of the
/// stacked rank), last step first when `reverse`.
FailureOr<Value> stackSteps(NodeContext &ctx, SmallVector<Value> steps,
                            int64_t axis, bool reverse) {
  if (reverse)
    std::reverse(steps.begin(), steps.end());
  int64_t rank = tensorType(steps.front()).getRank() + 1;
  FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank);
  if (failed(normalized))
    return failure();
  SmallVector<Value> pieces;
  for (Value step : steps) {
    RankedTensorType t = tensorType(step);
    if (t != tensorType(steps.front()) || !t.hasStaticShape()) {
      ctx.error() << "scan output steps must share one static type, got "
                  << t << " and " << tensorType(steps.front());
      return failure();
    }
    SmallVector<int64_t> shape(t.getShape());
    shape.insert(shape.begin() + *normalized, 1);
    FailureOr<Value> piece = reshapeTo(ctx, step, shape);
    if (failed(piece))
      return failure();
    pieces.push_back(*piece);
  }
  if (pieces.size() == 1)
    return pieces.front();
  return ctx.create1<ConcatOp>(pieces, {ctx.namedI64("axis", *normalized)});
}

/// The length of every scan input along its axis (all must agree).
FailureOr<int64_t> scanLength(NodeContext &ctx, ArrayRef<Value> scans,
                              SmallVectorImpl<int64_t> &axes) {
  int64_t length = -1;
  for (auto [x, axis] : llvm::zip(scans, axes)) {
    RankedTensorType t = tensorType(x);
    FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, t.getRank());
    if (failed(normalized))
      return failure();
    axis = *normalized;
    if (!t.hasStaticShape()) {
      ctx.error() << "scan inputs must have static shapes, got " << t;
      return failure();
    }
    if (length >= 0 && t.getDimSize(axis) != length) {
      ctx.error() << "scan inputs differ in length: " << length << " and "
                  << t.getDimSize(axis);
      return failure();
    }
    length = t.getDimSize(axis);
  }
  if (length <= 0 || length > kMaxScanSteps) {
    ctx.error() << "the scan length must be 1 to " << kMaxScanSteps
                << " to unroll, got " << length;
    return failure();
  }
  return length;
}

/// How a Scan reads its sequences and writes its scan outputs.
struct ScanLayout {
  SmallVector<int64_t> inAxes, inDirections, outAxes, outDirections;
};

/// The body run over every step of `scans` (their lengths along
/// inAxes agree), `state` carried through: the final states, then each
/// scan output stacked along its axis.
FailureOr<SmallVector<Value>> unrollScan(NodeContext &ctx,
                                         const onnx::GraphProto &body,
                                         SmallVector<Value> state,
                                         ArrayRef<Value> scans,
                                         ScanLayout layout) {
  size_t numState = state.size();
  size_t numScanOutputs = body.output_size() - numState;
  FailureOr<int64_t> length = scanLength(ctx, scans, layout.inAxes);
  if (failed(length))
    return failure();
  SmallVector<SmallVector<Value>> scanned(numScanOutputs);
  for (int64_t step = 0; step < *length; ++step) {
    SmallVector<Value> bodyInputs(state);
    for (size_t j = 0; j < scans.size(); ++j) {
      int64_t index = layout.inDirections[j] ? *length - 1 - step : step;
      FailureOr<Value> x = takeStep(ctx, scans[j], layout.inAxes[j], index);
      if (failed(x))
        return failure();
      bodyInputs.push_back(*x);
    }
    FailureOr<SmallVector<Value>> outputs =
        importInline(ctx, body, bodyInputs, "scan body");
    if (failed(outputs))
      return failure();
    for (size_t i = 0; i < numState; ++i) {
      if ((*outputs)[i].getType() != state[i].getType()) {
        ctx.error() << "state " << i << " changes type from "
                    << state[i].getType() << " to " << (*outputs)[i].getType();
        return failure();
      }
      state[i] = (*outputs)[i];
    }
    for (size_t k = 0; k < numScanOutputs; ++k)
      scanned[k].push_back((*outputs)[numState + k]);
  }
  SmallVector<Value> results(state);
  for (size_t k = 0; k < numScanOutputs; ++k) {
    FailureOr<Value> stacked = stackSteps(ctx, scanned[k], layout.outAxes[k],
                                          layout.outDirections[k] != 0);
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return results;
}

/// Scan-8: dim 0 of every state and scan input is a batch, dim 1 of the
/// scan inputs the sequence; each batch is scanned on its own and the
/// results stacked. sequence_lens (input 0) must be absent or a constant
/// giving every batch the full length.
FailureOr<SmallVector<Value>> unrollBatchedScan(NodeContext &ctx,
                                                const onnx::GraphProto &body,
                                                ArrayRef<Value> state,
                                                ArrayRef<Value> scans,
                                                ScanLayout layout) {
  SmallVector<Value> all(state);
  llvm::append_range(all, scans);
  int64_t batch = -1;
  for (auto [i, v] : llvm::enumerate(all)) {
    RankedTensorType t = tensorType(v);
    // A scan input is [batch, sequence, ...]: its rank is at least 2.
    int64_t minRank = i < state.size() ? 1 : 2;
    if (t.getRank() < minRank || !t.hasStaticShape() ||
        (batch >= 0 && t.getDimSize(0) != batch)) {
      ctx.error() << "Scan-8 states and scan inputs need one static batch "
                     "dim (and scan inputs a sequence dim after it), got "
                  << t;
      return failure();
    }
    batch = t.getDimSize(0);
  }
  if (batch < 1) {
    ctx.error() << "Scan-8 needs a batch of at least one, got " << batch;
    return failure();
  }
  if (Value lengths = ctx.input(0)) {
    std::optional<SmallVector<int64_t>> known = ctx.constInts(lengths);
    int64_t full = scans.empty() ? 0 : tensorType(scans[0]).getDimSize(1);
    if (!known || llvm::any_of(*known, [&](int64_t n) { return n != full; })) {
      ctx.error() << "sequence_lens must be absent or a constant of the full "
                     "length "
                  << full << " (ragged batches are not supported)";
      return failure();
    }
  }
  SmallVector<SmallVector<Value>> perBatch;
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Value> stateB, scansB;
    for (Value v : state) {
      FailureOr<Value> x = takeStep(ctx, v, 0, b);
      if (failed(x))
        return failure();
      stateB.push_back(*x);
    }
    for (Value v : scans) {
      FailureOr<Value> x = takeStep(ctx, v, 0, b);
      if (failed(x))
        return failure();
      scansB.push_back(*x);
    }
    FailureOr<SmallVector<Value>> results =
        unrollScan(ctx, body, stateB, scansB, layout);
    if (failed(results))
      return failure();
    perBatch.push_back(*results);
  }
  SmallVector<Value> results;
  for (size_t i = 0; i < perBatch.front().size(); ++i) {
    SmallVector<Value> items;
    for (SmallVector<Value> &r : perBatch)
      items.push_back(r[i]);
    FailureOr<Value> stacked = stackSteps(ctx, items, 0, false);
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return results;
}

/// Scan: the body applied to each step of the scan inputs, the state
/// carried through, unrolled (Scan-8's batch dim unrolled too).
Results importScan(NodeContext &ctx) {
  const onnx::GraphProto *bodyGraph = ctx.getGraph("body");
  int64_t numScanInputs = ctx.getInt("num_scan_inputs", 0);
  if (ctx.hadAttributeError())
    return failure();
  bool batched = ctx.opset() < 9;
  // Scan-8's first input is sequence_lens.
  size_t first = batched ? 1 : 0;
  if (!bodyGraph || numScanInputs < 1 ||
      numScanInputs > (int64_t)(ctx.numInputs() - first)) {
    ctx.error() << "needs a body graph and 1 to " << ctx.numInputs() - first
                << " num_scan_inputs, got " << numScanInputs;
    return failure();
  }
  size_t numState = ctx.numInputs() - first - numScanInputs;
  if ((size_t)bodyGraph->output_size() < numState) {
    ctx.error() << "the body must return the " << numState << " states";
    return failure();
  }
  size_t numScanOutputs = bodyGraph->output_size() - numState;
  SmallVector<Value> inputs;
  for (size_t i = first; i < ctx.numInputs(); ++i) {
    FailureOr<Value> v = ctx.requiredInput(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  ScanLayout layout;
  FailureOr<SmallVector<int64_t>> inAxes =
      scanInts(ctx, "scan_input_axes", numScanInputs);
  FailureOr<SmallVector<int64_t>> inDirections = scanInts(
      ctx, batched ? "directions" : "scan_input_directions", numScanInputs);
  FailureOr<SmallVector<int64_t>> outAxes =
      scanInts(ctx, "scan_output_axes", numScanOutputs);
  FailureOr<SmallVector<int64_t>> outDirections =
      scanInts(ctx, "scan_output_directions", numScanOutputs);
  if (failed(inAxes) || failed(inDirections) || failed(outAxes) ||
      failed(outDirections))
    return failure();
  layout = {*inAxes, *inDirections, *outAxes, *outDirections};
  SmallVector<Value> state(inputs.begin(), inputs.begin() + numState);
  ArrayRef<Value> scans = ArrayRef(inputs).drop_front(numState);
  if (batched)
    return unrollBatchedScan(ctx, *bodyGraph, state, scans, layout);
  return unrollScan(ctx, *bodyGraph, state, scans, layout);
}

/// A Loop body returns its condition, then the carried values, then its
/// scan outputs.
LogicalResult checkLoopBodyArity(NodeContext &ctx, ArrayRef<Value> outputs,
                                 size_t numCarried) {
  if (outputs.size() >= numCarried + 1)
    return success();
  ctx.error() << "the body must return the condition and " << numCarried
              << " carried values";
  return failure();
}

/// Each carried value keeps its type through the body.
LogicalResult checkCarriedTypes(NodeContext &ctx, ArrayRef<Value> outputs,
                                ArrayRef<Value> carried) {
  for (size_t i = 0; i < carried.size(); ++i) {
    if (outputs[i + 1].getType() != carried[i].getType()) {
      ctx.error() << "carried value " << i << " changes type from "
                  << carried[i].getType() << " to "
                  << outputs[i + 1].getType();
      return failure();
    }
  }
  return success();
}

/// A Loop whose trip count and condition are known at import, its body
/// imported inline once per iteration with the iteration number as a
/// constant (for bodies that need it as one: a Slice at the iteration, say).
/// The body's condition must stay a constant true. Returns the final carried
/// values, then each scan output stacked along a new dim 0.
FailureOr<SmallVector<Value>> unrollLoop(NodeContext &ctx,
                                         const onnx::GraphProto &body,
                                         int64_t trips,
                                         SmallVector<Value> carried) {
  OpBuilder &b = ctx.builder();
  size_t numCarried = carried.size();
  SmallVector<SmallVector<Value>> scanned;
  for (int64_t step = 0; step < trips; ++step) {
    SmallVector<Value> inputs = {ctx.constInt(step, b.getI64Type()),
                                 ctx.constScalar(1, b.getI1Type())};
    llvm::append_range(inputs, carried);
    FailureOr<SmallVector<Value>> outputs =
        importInline(ctx, body, inputs, "loop body");
    if (failed(outputs) || failed(checkLoopBodyArity(ctx, *outputs,
                                                     numCarried)))
      return failure();
    std::optional<SmallVector<int64_t>> cond = ctx.constInts((*outputs)[0]);
    if (!cond || cond->size() != 1 || (*cond)[0] == 0) {
      ctx.error() << "unrolling needs the body's condition to stay true, "
                     "but it is computed at run time or false at iteration "
                  << step;
      return failure();
    }
    if (failed(checkCarriedTypes(ctx, *outputs, carried)))
      return failure();
    for (size_t i = 0; i < numCarried; ++i)
      carried[i] = (*outputs)[i + 1];
    scanned.resize(outputs->size() - numCarried - 1);
    for (size_t k = 0; k < scanned.size(); ++k)
      scanned[k].push_back((*outputs)[numCarried + 1 + k]);
  }
  SmallVector<Value> results(carried);
  for (SmallVector<Value> &steps : scanned) {
    FailureOr<Value> stacked = stackSteps(ctx, steps, 0, /*reverse=*/false);
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return results;
}

/// The errors of a Loop body that cgc.loop cannot take, reported as one
/// error of the Loop (the first body error in it, the others as notes)
/// with what unrolling would need: the trip count and condition as
/// constants.
LogicalResult reportLoopBody(NodeContext &ctx,
                             ArrayRef<std::pair<Location, std::string>> errors,
                             std::optional<int64_t> trips, bool condTrue) {
  const onnx::NodeProto &node = ctx.node();
  InFlightDiagnostic diag = ctx.error();
  diag << "the body cannot run as a cgc.loop ("
       << (errors.empty() ? std::string("no reason given") : errors[0].second)
       << ")";
  for (auto &[loc, text] : ArrayRef(errors).drop_front(errors.empty() ? 0 : 1))
    diag.attachNote(loc) << text;
  if (trips && *trips > kMaxScanSteps)
    diag << ", and unrolling it stops at " << kMaxScanSteps
         << " iterations, got " << *trips;
  else if (!trips || !condTrue)
    diag << "; cgc unrolls a Loop whose trip count"
         << (node.input_size() > 0 && !node.input(0).empty()
                 ? " '" + node.input(0) + "'"
                 : std::string())
         << " and condition"
         << (node.input_size() > 1 && !node.input(1).empty()
                 ? " '" + node.input(1) + "'"
                 : std::string())
         << " are constant (a true condition) at compile time";
  return failure();
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
  // A body cgc.loop cannot take (one that needs the iteration number as a
  // constant) is unrolled when the trip count and condition are known;
  // its errors are held until that is decided.
  SmallVector<std::pair<Location, std::string>> bodyErrors;
  FailureOr<SmallVector<Value>> yielded = failure();
  {
    ScopedDiagnosticHandler hold(ctx.context(), [&](Diagnostic &d) {
      if (d.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      bodyErrors.push_back({d.getLocation(), d.str()});
      return success();
    });
    yielded = importBody(ctx, *bodyGraph, *block, "loop body");
  }
  if (failed(yielded)) {
    std::optional<SmallVector<int64_t>> trips = ctx.constInts(*scalarTrips);
    std::optional<SmallVector<int64_t>> cond = ctx.constInts(*scalarCondition);
    bool condTrue = cond && cond->size() == 1 && (*cond)[0] != 0;
    std::optional<int64_t> tripCountValue;
    if (trips && trips->size() == 1)
      tripCountValue = (*trips)[0];
    if (bodyErrors.empty() || !tripCountValue || !condTrue ||
        *tripCountValue < 1 || *tripCountValue > kMaxScanSteps)
      return reportLoopBody(ctx, bodyErrors, tripCountValue, condTrue);
    return unrollLoop(ctx, *bodyGraph, *tripCountValue, carried);
  }
  if (failed(checkLoopBodyArity(ctx, *yielded, carried.size())))
    return failure();
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
  if (failed(checkCarriedTypes(ctx, *yielded, carried)))
    return failure();
  SmallVector<Type> resultTypes(ValueRange(carried).getTypes());
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
                         "`cgc.loop` (eager); scan outputs get a `?` dim; "
                         "unrolled when the body needs the iteration number "
                         "as a constant and the trip count and condition are "
                         "known"};
  t["Scan"] = OpImporter{importScan,
                         "unrolled over the static scan length (and Scan-8's "
                         "batch): `cgc.slice` of each step, the body inline, "
                         "`cgc.concat` of the scan outputs"};
}
