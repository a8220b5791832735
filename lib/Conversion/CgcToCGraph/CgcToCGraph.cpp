//===- CgcToCGraph.cpp - islands to explicit CUDA graphs ------------------===//
//
// Every island becomes a cgraph.graph. Its kernels become kernel nodes; an
// If becomes a conditional IF node (with ELSE) and a Loop a conditional
// WHILE node, each preceded by a small kernel that sets the node's
// condition on the device from the condition tensor, so no host round trip
// chooses a branch. Bodies are graphs of their own, built the same way;
// copies that move a branch's or an iteration's results into place are
// memcpy nodes. Dependencies come from arena accesses.
//
// Every function then becomes a cgraph.schedule: its islands' replays and
// its eager regions' host work (HostSchedule.cpp) in program order.
//
//===----------------------------------------------------------------------===//

#include "HostSchedule.h"

#include "cgc/Codegen/KernelGen.h"
#include "cgc/Conversion/Passes.h"
#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcAttrs.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace cgc {
#define GEN_PASS_DEF_CGCLOWERTOCGRAPH
#include "cgc/Conversion/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

struct Access {
  int64_t begin, end; // [begin, end) bytes of the arena
  bool write;
};

bool conflicts(ArrayRef<Access> a, ArrayRef<Access> b) {
  for (const Access &x : a)
    for (const Access &y : b)
      if ((x.write || y.write) && x.begin < y.end && y.begin < x.end)
        return true;
  return false;
}

/// Direct dependencies of node `n` among nodes [0, n): every conflicting
/// earlier node, minus those already reached through another dependency.
SmallVector<size_t> necessaryDeps(size_t n,
                                  ArrayRef<SmallVector<Access>> access,
                                  SmallVectorImpl<llvm::BitVector> &ancestors) {
  SmallVector<size_t> deps;
  for (size_t d = 0; d < n; ++d)
    if (conflicts(access[n], access[d]))
      deps.push_back(d);
  llvm::BitVector implied(n + 1);
  for (size_t d : deps)
    implied |= ancestors[d];
  SmallVector<size_t> direct;
  ancestors[n] = llvm::BitVector(ancestors.size());
  for (size_t d : deps) {
    if (!implied.test(d))
      direct.push_back(d);
    ancestors[n].set(d);
    ancestors[n] |= ancestors[d];
  }
  return direct;
}

/// A node to add to a graph (or a conditional node's body), with the arena
/// ranges it reads and writes.
struct NodeSpec {
  enum class Kind { Kernel, Memcpy, Conditional, Library } kind = Kind::Kernel;
  Operation *origin = nullptr; // for the location
  SmallVector<Access> access;
  // Kernel nodes.
  std::string kernel, label;
  std::array<int64_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  SmallVector<int64_t> args;
  int64_t handle = -1; // the condition this kernel sets, if any
  // Memcpy nodes.
  int64_t dst = 0, src = 0, bytes = 0;
  // Conditional nodes.
  cgraph::ConditionKind conditionKind = cgraph::ConditionKind::If;
  std::vector<NodeSpec> body, elseBody;
  // Library nodes: the cgraph op and its attributes.
  StringRef libraryOp;
  NamedAttrList attributes;
};

/// Setting a condition and testing it must be ordered like a write and a
/// read: each handle gets a byte of its own below the arena.
Access handleAccess(int64_t handle, bool write) {
  return {-2 * handle - 2, -2 * handle - 1, write};
}

/// cuBLASLt nodes share the model's workspace: each writes this byte, so
/// they run one after another.
constexpr Access kLibraryWorkspace = {INT64_MIN / 2, INT64_MIN / 2 + 1, true};
/// NCCL nodes write this byte: every rank's graph issues its collectives
/// one after another in the same order (two running at once could meet
/// different partners on different ranks and hang).
constexpr Access kCollectiveOrder = {INT64_MIN / 2 + 2, INT64_MIN / 2 + 3,
                                     true};
/// Launches of a kernel with static device state (split-K's tile counters)
/// share it: the kernel's `index`-th byte above the collectives' is
/// written by each, so they run one after another.
Access staticStateAccess(int64_t index) {
  return {INT64_MIN / 2 + 4 + index, INT64_MIN / 2 + 5 + index, true};
}

void addAccesses(NodeSpec &into, const std::vector<NodeSpec> &nested) {
  for (const NodeSpec &n : nested)
    into.access.append(n.access.begin(), n.access.end());
}

/// Condition kernels: each sets a conditional node's handle from tensors in
/// the arena. cudaGraphSetConditional is a device built-in of the driver.
constexpr const char *kSetConditional =
    "extern \"C\" __device__ void cudaGraphSetConditional(unsigned long long "
    "handle, unsigned int value);\n";

struct ConditionKernel {
  const char *name;
  const char *body;
};

constexpr ConditionKernel kIfCondition = {
    "cgc_if_condition",
    "extern \"C\" __global__ void cgc_if_condition(const unsigned char *cond, "
    "unsigned long long handle) {\n"
    "  cudaGraphSetConditional(handle, cond[0] != 0);\n}\n"};

// ONNX Loop: the body runs while iteration < max_trip_count and the
// condition holds, both tested before every iteration.
constexpr ConditionKernel kLoopInit = {
    "cgc_loop_init",
    "extern \"C\" __global__ void cgc_loop_init(const long long *max_trips, "
    "const unsigned char *cond, long long *iteration, unsigned char "
    "*cond_arg, unsigned long long handle) {\n"
    "  unsigned char c = cond[0];\n"
    "  iteration[0] = 0;\n  cond_arg[0] = c;\n"
    "  cudaGraphSetConditional(handle, max_trips[0] > 0 && c != 0);\n}\n"};

constexpr ConditionKernel kLoopNext = {
    "cgc_loop_next",
    "extern \"C\" __global__ void cgc_loop_next(const long long *max_trips, "
    "const unsigned char *cond_out, long long *iteration, unsigned char "
    "*cond_arg, unsigned long long handle) {\n"
    "  unsigned char c = cond_out[0];\n"
    "  long long i = iteration[0] + 1;\n"
    "  iteration[0] = i;\n  cond_arg[0] = c;\n"
    "  cudaGraphSetConditional(handle, i < max_trips[0] && c != 0);\n}\n"};

/// Declares a kernel symbol once per module, after everything before it.
void declareKernel(ModuleOp module, llvm::StringSet<> &emitted, Location loc,
                   StringRef name, StringRef source) {
  if (!emitted.insert(name).second)
    return;
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  cgraph::KernelOp::create(builder, loc, name, source);
}

class GraphLowering {
public:
  /// `programmatic`: kernel -> kernel edges of the top-level graph are
  /// programmatic.
  GraphLowering(ModuleOp module, llvm::StringSet<> &emitted,
                bool programmatic)
      : module(module), emitted(emitted), programmatic(programmatic) {}

  /// The nodes of one island body (or one conditional body).
  LogicalResult collect(Block &block, std::vector<NodeSpec> &specs) {
    for (Operation &op : block.without_terminator()) {
      LogicalResult result = success();
      if (auto kernel = dyn_cast<KernelOp>(op))
        result = collectKernel(kernel, specs);
      else if (auto ifOp = dyn_cast<IfOp>(op))
        result = collectIf(ifOp, specs);
      else if (auto loop = dyn_cast<LoopOp>(op))
        result = collectLoop(loop, specs);
      if (failed(result))
        return failure();
    }
    return success();
  }

  /// Adds the nodes of `specs` at the builder's insertion point, each
  /// depending only on the earlier nodes it must wait for. `topLevel`: the
  /// graph itself, not a conditional node's body.
  void emit(OpBuilder &builder, const std::vector<NodeSpec> &specs,
            bool topLevel = true) {
    SmallVector<SmallVector<Access>> access;
    for (const NodeSpec &s : specs)
      access.push_back(s.access);
    SmallVector<llvm::BitVector> ancestors(specs.size());
    SmallVector<Value> nodes;
    for (auto [n, spec] : llvm::enumerate(specs)) {
      SmallVector<Value> deps;
      for (size_t d : necessaryDeps(n, access, ancestors))
        deps.push_back(nodes[d]);
      nodes.push_back(emitOne(builder, spec, deps, topLevel));
    }
  }

private:
  /// Which of a kernel node's `deps` get a programmatic edge: those on
  /// kernel nodes, in the top-level graph (a conditional body's nodes are
  /// launched by the node), into a generated kernel (a condition kernel has
  /// no wait and takes its handle by value). Null when none does.
  DenseBoolArrayAttr programmaticEdges(OpBuilder &builder,
                                       const NodeSpec &spec, ValueRange deps,
                                       bool topLevel) const {
    if (!programmatic || !topLevel || spec.handle >= 0)
      return nullptr;
    SmallVector<bool> edges;
    for (Value d : deps)
      edges.push_back(isa_and_nonnull<cgraph::KernelNodeOp>(d.getDefiningOp()));
    if (!llvm::is_contained(edges, true))
      return nullptr;
    return builder.getDenseBoolArrayAttr(edges);
  }

  Value emitOne(OpBuilder &builder, const NodeSpec &spec, ValueRange deps,
                bool topLevel) {
    MLIRContext *ctx = builder.getContext();
    Location loc = spec.origin->getLoc();
    auto nodeType = cgraph::NodeType::get(ctx);
    switch (spec.kind) {
    case NodeSpec::Kind::Kernel: {
      auto node = cgraph::KernelNodeOp::create(
          builder, loc, nodeType, spec.kernel, deps, spec.grid, spec.block,
          spec.args, builder.getStringAttr(spec.label), /*shared_bytes=*/0,
          spec.handle >= 0 ? builder.getI64IntegerAttr(spec.handle)
                           : IntegerAttr(),
          programmaticEdges(builder, spec, deps, topLevel));
      return node.getNode();
    }
    case NodeSpec::Kind::Memcpy:
      return cgraph::MemcpyNodeOp::create(builder, loc, nodeType, deps,
                                          spec.dst, spec.src, spec.bytes)
          .getNode();
    case NodeSpec::Kind::Library: {
      OperationState state(loc, spec.libraryOp, deps, TypeRange{nodeType},
                           spec.attributes.getAttrs());
      return builder.create(state)->getResult(0);
    }
    case NodeSpec::Kind::Conditional:
      break;
    }
    auto node = cgraph::ConditionalNodeOp::create(
        builder, loc, nodeType, spec.conditionKind, spec.handle, deps,
        builder.getStringAttr(spec.label));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&node.getBody().emplaceBlock());
    emit(builder, spec.body, /*topLevel=*/false);
    if (!spec.elseBody.empty()) {
      builder.setInsertionPointToEnd(&node.getElseBody().emplaceBlock());
      emit(builder, spec.elseBody, /*topLevel=*/false);
    }
    return node.getNode();
  }

  void declareKernel(Location loc, StringRef name, StringRef source) {
    ::declareKernel(module, emitted, loc, name, source);
  }

  LogicalResult collectKernel(KernelOp kernel, std::vector<NodeSpec> &specs) {
    KernelStrategy strategy = kernel.getConfigAttr()
                                  ? kernel.getConfigAttr().getStrategy()
                                  : KernelStrategy::none;
    if (strategy == KernelStrategy::cublaslt_matmul &&
        failed(collectLibraryMatmul(kernel, specs)))
      return failure();
    if (strategy == KernelStrategy::cudnn_conv &&
        failed(collectLibraryConv(kernel, specs)))
      return failure();
    if (strategy == KernelStrategy::nccl_all_reduce)
      return collectCollective(
          kernel, kernel.getAllReduce(),
          cgraph::NcclAllReduceNodeOp::getOperationName(), specs);
    if (strategy == KernelStrategy::nccl_all_gather)
      return collectCollective(
          kernel, kernel.getAllGather(),
          cgraph::NcclAllGatherNodeOp::getOperationName(), specs);
    FailureOr<std::vector<GeneratedKernel>> generated = generateKernels(kernel);
    if (failed(generated))
      return failure();
    // A group's later launches get a label of their own and depend on the
    // earlier ones through their accesses.
    for (auto [i, k] : llvm::enumerate(*generated)) {
      declareKernel(kernel.getLoc(), k.name, k.source);
      NodeSpec spec;
      spec.origin = kernel;
      spec.kernel = k.name;
      spec.label = kernel.getName().str();
      if (i > 0)
        spec.label += "." + std::to_string(i);
      spec.grid = k.grid;
      spec.block = k.block;
      spec.args.assign(k.argOffsets.begin(), k.argOffsets.end());
      for (auto [a, offset] : llvm::enumerate(k.argOffsets))
        spec.access.push_back(
            {offset, offset + k.argBytes[a], a >= k.numInputs});
      if (k.staticState)
        spec.access.push_back(staticStateAccess(
            statefulKernels.try_emplace(k.name, statefulKernels.size())
                .first->second));
      specs.push_back(std::move(spec));
    }
    return success();
  }

  /// The cuBLASLt node of a `cublaslt_matmul` group: it writes the
  /// product (with alpha, bias and beta * C) into the group's result
  /// buffer, where the group's epilogue kernel, if any, finishes it.
  LogicalResult collectLibraryMatmul(KernelOp kernel,
                                     std::vector<NodeSpec> &specs) {
    std::string reason;
    FailureOr<LibraryMatmul> p = describeLibraryMatmul(kernel, reason);
    if (failed(p))
      return kernel.emitError("cuBLASLt cannot compute '")
             << kernel.getName() << "': " << reason;
    NodeSpec spec = librarySpec(kernel,
                                cgraph::CublasLtMatmulNodeOp::getOperationName(),
                                "d");
    Builder b(kernel.getContext());
    NamedAttrList &attrs = spec.attributes;
    if (failed(offsetOf(kernel, p->a, "a", spec)) ||
        failed(offsetOf(kernel, p->b, "b", spec)) ||
        (p->c && failed(offsetOf(kernel, p->c, "c", spec))) ||
        (p->bias && failed(offsetOf(kernel, p->bias, "bias", spec))))
      return failure();
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    auto elementOf = [](Value v) {
      return TypeAttr::get(cast<RankedTensorType>(v.getType()).getElementType());
    };
    attrs.set("m", i64(p->m));
    attrs.set("n", i64(p->n));
    attrs.set("k", i64(p->k));
    attrs.set("batch", i64(p->batch));
    attrs.set("trans_a", b.getBoolAttr(p->transA));
    attrs.set("trans_b", b.getBoolAttr(p->transB));
    attrs.set("stride_a", i64(p->strideA));
    attrs.set("stride_b", i64(p->strideB));
    attrs.set("stride_d", i64(p->strideD));
    attrs.set("alpha", b.getF32FloatAttr(p->alpha));
    attrs.set("beta", b.getF32FloatAttr(p->beta));
    attrs.set("a_type", elementOf(p->a));
    attrs.set("b_type", elementOf(p->b));
    attrs.set("d_type", elementOf(p->product->getResult(0)));
    if (Type operand = libraryOperand(kernel, p->a))
      attrs.set("operand", TypeAttr::get(operand));
    specs.push_back(std::move(spec));
    return success();
  }

  /// The cuDNN node of a `cudnn_conv` group: the convolution into the
  /// group's result buffer, where the epilogue kernel adds the bias and
  /// finishes the group (cuDNN's own bias add is a launch of its own).
  LogicalResult collectLibraryConv(KernelOp kernel,
                                   std::vector<NodeSpec> &specs) {
    std::string reason;
    FailureOr<LibraryConv> p = describeLibraryConv(kernel, reason);
    if (failed(p))
      return kernel.emitError("cuDNN cannot compute '")
             << kernel.getName() << "': " << reason;
    NodeSpec spec = librarySpec(
        kernel, cgraph::CudnnConvNodeOp::getOperationName(), "y");
    ConvOp conv = p->conv;
    // Operands stored narrow (--cgc-narrow-storage) are read as stored.
    if (failed(offsetOf(kernel, storedOperand(conv.getInput()), "x", spec)) ||
        failed(offsetOf(kernel, storedOperand(conv.getWeight()), "w", spec)))
      return failure();
    Builder b(kernel.getContext());
    NamedAttrList &attrs = spec.attributes;
    attrs.set("input", b.getDenseI64ArrayAttr(p->input));
    attrs.set("filter", b.getDenseI64ArrayAttr(p->filter));
    attrs.set("output", b.getDenseI64ArrayAttr(p->output));
    attrs.set("pads", b.getDenseI64ArrayAttr(p->pads));
    attrs.set("strides", b.getDenseI64ArrayAttr(p->strides));
    attrs.set("dilations", b.getDenseI64ArrayAttr(p->dilations));
    attrs.set("groups", b.getI64IntegerAttr(p->groups));
    attrs.set("type", TypeAttr::get(p->type));
    if (Type operand = libraryOperand(kernel, conv.getInput()))
      attrs.set("operand", TypeAttr::get(operand));
    if (p->channelsLast)
      attrs.set("channels_last", b.getUnitAttr());
    specs.push_back(std::move(spec));
    return success();
  }

  /// The NCCL node of an `nccl_all_reduce` or `nccl_all_gather` group (its
  /// one op, `collective`, as KernelOp's verifier ensures): the op's
  /// operand over the ranks, summed or gathered into its result's buffer.
  /// No kernel follows.
  LogicalResult collectCollective(KernelOp kernel, Operation *collective,
                                  StringRef nodeOp,
                                  std::vector<NodeSpec> &specs) {
    NodeSpec spec = librarySpec(kernel, nodeOp, "recv");
    spec.access.front() = kCollectiveOrder;
    if (failed(offsetOf(kernel, collective->getOperand(0), "send", spec)))
      return failure();
    // Both count what each rank sends: the operand.
    auto type = cast<RankedTensorType>(collective->getOperand(0).getType());
    Builder b(kernel.getContext());
    spec.attributes.set("count", b.getI64IntegerAttr(type.getNumElements()));
    spec.attributes.set("type", TypeAttr::get(type.getElementType()));
    spec.attributes.set("ranks", collective->getAttr("ranks"));
    specs.push_back(std::move(spec));
    return success();
  }

  /// A library node writing the kernel's result (attribute `output`),
  /// ordered with the other library nodes by their shared workspace.
  static NodeSpec librarySpec(KernelOp kernel, StringRef op,
                              StringRef output) {
    Value result = kernel.getResult(0);
    int64_t offset = plannedOffset(result);
    NodeSpec spec;
    spec.kind = NodeSpec::Kind::Library;
    spec.libraryOp = op;
    spec.origin = kernel;
    spec.label = kernel.getName().str();
    spec.access.push_back(kLibraryWorkspace);
    spec.access.push_back(
        {offset, offset + tensorBytes(result.getType()), true});
    Builder b(kernel.getContext());
    spec.attributes.set("label", b.getStringAttr(spec.label));
    spec.attributes.set(output, b.getI64IntegerAttr(offset));
    return spec;
  }

  /// Sets attribute `name` of a library node to the arena offset of `v`,
  /// which it reads.
  static LogicalResult offsetOf(KernelOp kernel, Value v, StringRef name,
                                NodeSpec &spec) {
    int64_t offset = plannedOffset(v);
    if (offset < 0)
      return kernel.emitError("an operand of '")
             << kernel.getName() << "' has no planned buffer";
    spec.attributes.set(name, Builder(kernel.getContext()).getI64IntegerAttr(offset));
    spec.access.push_back({offset, offset + tensorBytes(v.getType()), false});
    return success();
  }

  /// The type cuBLASLt rounds the inputs to: the config's, or the stored
  /// type of 16-bit operands (which multiply on tensor cores as they are).
  static Type libraryOperand(KernelOp kernel, Value a) {
    if (Type operand = kernel.getConfigAttr().getOperand())
      return operand;
    Type stored = cast<RankedTensorType>(a.getType()).getElementType();
    return stored.isF32() ? Type() : stored;
  }

  /// A one-thread kernel that sets condition `handle`; `inputs` and
  /// `outputs` are the tensors it reads and writes.
  LogicalResult conditionKernel(Operation *origin, const ConditionKernel &k,
                                int64_t handle, ValueRange inputs,
                                ValueRange outputs, NodeSpec &spec) {
    declareKernel(origin->getLoc(), k.name,
                  std::string(kSetConditional) + k.body);
    spec.origin = origin;
    spec.kernel = k.name;
    spec.label = k.name;
    spec.handle = handle;
    spec.access.push_back(handleAccess(handle, /*write=*/true));
    SmallVector<Value> values(inputs.begin(), inputs.end());
    values.append(outputs.begin(), outputs.end());
    for (auto [i, v] : llvm::enumerate(values)) {
      int64_t offset = plannedOffset(v);
      if (offset < 0)
        return origin->emitError("a value of the condition has no planned "
                                 "buffer");
      spec.args.push_back(offset);
      spec.access.push_back({offset, offset + tensorBytes(v.getType()),
                             i >= inputs.size()});
    }
    return success();
  }

  /// Copies `from` into the buffer of `to` (nothing if they share it).
  LogicalResult copySpec(Operation *origin, Value from, Value to,
                         std::vector<NodeSpec> &specs) {
    int64_t src = plannedOffset(from), dst = plannedOffset(to);
    if (src < 0 || dst < 0)
      return origin->emitError("a result of the control flow has no planned "
                               "buffer");
    if (src == dst)
      return success();
    NodeSpec spec;
    spec.kind = NodeSpec::Kind::Memcpy;
    spec.origin = origin;
    spec.src = src;
    spec.dst = dst;
    spec.bytes = tensorBytes(to.getType());
    spec.access = {{src, src + spec.bytes, false},
                   {dst, dst + spec.bytes, true}};
    specs.push_back(std::move(spec));
    return success();
  }

  /// A branch: its kernels, then its yielded values copied to the results.
  LogicalResult collectBranch(IfOp op, Region &region,
                              std::vector<NodeSpec> &specs) {
    Block &block = region.front();
    if (failed(collect(block, specs)))
      return failure();
    for (auto [yielded, result] : llvm::zip(
             block.getTerminator()->getOperands(), op.getResults()))
      if (failed(copySpec(op, yielded, result, specs)))
        return failure();
    return success();
  }

  static NodeSpec conditionalSpec(Operation *op, cgraph::ConditionKind kind,
                                  int64_t handle) {
    NodeSpec node;
    node.kind = NodeSpec::Kind::Conditional;
    node.origin = op;
    node.conditionKind = kind;
    node.handle = handle;
    node.label = kind == cgraph::ConditionKind::If ? "if" : "loop";
    return node;
  }

  LogicalResult collectIf(IfOp op, std::vector<NodeSpec> &specs) {
    int64_t handle = nextHandle++;
    NodeSpec set;
    if (failed(conditionKernel(op, kIfCondition, handle, op.getCondition(),
                               ValueRange(), set)))
      return failure();
    NodeSpec node = conditionalSpec(op, cgraph::ConditionKind::If, handle);
    if (failed(collectBranch(op, op.getThenRegion(), node.body)) ||
        failed(collectBranch(op, op.getElseRegion(), node.elseBody)))
      return failure();
    node.access = set.access; // reads the condition
    node.access.push_back(handleAccess(handle, /*write=*/false));
    addAccesses(node, node.body);
    addAccesses(node, node.elseBody);
    specs.push_back(std::move(set));
    specs.push_back(std::move(node));
    return success();
  }

  /// Loop: an init kernel (iteration 0, first test) and the initial values
  /// copied into the carried buffers; a WHILE node whose body runs the
  /// iteration, copies what it yields back into the carried buffers and
  /// tests again; the carried buffers copied to the results.
  LogicalResult collectLoop(LoopOp op, std::vector<NodeSpec> &specs) {
    Block &body = op.getBody().front();
    Value iteration = body.getArgument(0), condArg = body.getArgument(1);
    auto carried = body.getArguments().drop_front(2);
    Operation *yield = body.getTerminator();
    int64_t handle = nextHandle++;
    NodeSpec init;
    Value initInputs[] = {op.getMaxTripCount(), op.getInitialCondition()};
    Value state[] = {iteration, condArg};
    if (failed(conditionKernel(op, kLoopInit, handle, initInputs, state,
                               init)))
      return failure();
    specs.push_back(std::move(init));
    for (auto [initial, arg] : llvm::zip(op.getInitialValues(), carried))
      if (failed(copySpec(op, initial, arg, specs)))
        return failure();

    NodeSpec node = conditionalSpec(op, cgraph::ConditionKind::While, handle);
    if (failed(collect(body, node.body)))
      return failure();
    for (auto [next, arg] :
         llvm::zip(yield->getOperands().drop_front(), carried))
      if (failed(copySpec(op, next, arg, node.body)))
        return failure();
    NodeSpec test;
    Value testInputs[] = {op.getMaxTripCount(), yield->getOperand(0)};
    if (failed(conditionKernel(op, kLoopNext, handle, testInputs, state,
                               test)))
      return failure();
    node.body.push_back(std::move(test));
    node.access.push_back(handleAccess(handle, /*write=*/false));
    addAccesses(node, node.body);
    specs.push_back(std::move(node));
    for (auto [arg, result] : llvm::zip(carried, op.getResults()))
      if (failed(copySpec(op, arg, result, specs)))
        return failure();
    return success();
  }

  ModuleOp module;
  llvm::StringSet<> &emitted;
  bool programmatic;
  /// The kernels with static device state met so far, numbered in order
  /// (staticStateAccess).
  llvm::StringMap<int64_t> statefulKernels;
  int64_t nextHandle = 0; // per graph: handles are numbered in its builder
};

/// The launches of every kernel of the eager regions.
using EagerLaunches = llvm::DenseMap<Operation *, std::vector<GeneratedKernel>>;

struct CgcLowerToCGraphPass
    : cgc::impl::CgcLowerToCGraphBase<CgcLowerToCGraphPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder builder(module.getContext());
    llvm::StringSet<> emitted;
    EagerLaunches eagerLaunches;
    bool programmatic = programmaticLaunch &&
                        lookupTargetOrDefault(module).hasProgrammaticLaunch();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    // Kernels first (a function's graphs, then its eager kernels), so their
    // order in the package follows the program.
    for (func::FuncOp func : funcs) {
      for (auto island : func.getOps<IslandOp>()) {
        GraphLowering lowering(module, emitted, programmatic);
        std::vector<NodeSpec> specs;
        if (failed(lowering.collect(island.getBody().front(), specs)))
          return signalPassFailure();
        builder.setInsertionPointToEnd(module.getBody());
        auto graph = cgraph::GraphOp::create(builder, island.getLoc(),
                                             island.getName());
        builder.setInsertionPointToEnd(&graph.getBody().emplaceBlock());
        lowering.emit(builder, specs);
      }
      if (failed(generateEagerKernels(func, emitted, eagerLaunches)))
        return signalPassFailure();
    }
    for (func::FuncOp func : funcs)
      if (failed(checkBoundedIO(func)))
        return signalPassFailure();
    for (func::FuncOp func : funcs)
      if (failed(buildSchedule(func, builder, eagerLaunches)))
        return signalPassFailure();
  }

  /// Kernels inside eager regions (If/Loop bodies, kernels among host ops)
  /// are launched one by one by the host: their launches, in order.
  LogicalResult generateEagerKernels(func::FuncOp func,
                                     llvm::StringSet<> &emitted,
                                     EagerLaunches &launches) {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels;
    func.walk([&](KernelOp kernel) {
      if (kernel->getParentOfType<EagerRegionOp>())
        kernels.push_back(kernel);
    });
    for (KernelOp kernel : kernels) {
      FailureOr<std::vector<GeneratedKernel>> generated =
          generateKernels(kernel);
      if (failed(generated))
        return failure();
      for (const GeneratedKernel &k : *generated)
        declareKernel(module, emitted, kernel.getLoc(), k.name, k.source);
      launches[kernel] = std::move(*generated);
    }
    return success();
  }

  /// The steps of `func` in program order: a replay per island, an eager
  /// step per eager region.
  LogicalResult buildSchedule(func::FuncOp func, OpBuilder &builder,
                              const EagerLaunches &eagerLaunches) {
    builder.setInsertionPointToEnd(getOperation().getBody());
    std::optional<int64_t> value = getBucketValue(func);
    auto schedule = cgraph::ScheduleOp::create(
        builder, func.getLoc(), func.getSymName(),
        value ? builder.getI64IntegerAttr(*value) : IntegerAttr());
    builder.setInsertionPointToEnd(&schedule.getBody().emplaceBlock());
    auto launches = [&](KernelOp kernel) -> ArrayRef<GeneratedKernel> {
      return eagerLaunches.at(kernel);
    };
    for (Operation &op : func.getBody().front()) {
      if (auto island = dyn_cast<IslandOp>(op))
        cgraph::ReplayOp::create(builder, island.getLoc(), island.getName());
      else if (auto eager = dyn_cast<EagerRegionOp>(op))
        if (failed(lowerEagerRegion(eager, builder, launches)))
          return failure();
    }
    if (replaysConditionalNodes(schedule) ||
        libraryNodeTouchesIo(schedule, func))
      schedule.setCopyIo(true);
    return success();
  }

  /// The runtime rebinds only kernel nodes to the caller's buffers; a
  /// captured library call keeps the pointers it was captured with.
  bool libraryNodeTouchesIo(cgraph::ScheduleOp schedule, func::FuncOp func) {
    SmallVector<Access> io;
    auto slot = [&](Value v) {
      if (int64_t offset = plannedOffset(v); offset >= 0)
        io.push_back({offset, offset + tensorBytes(v.getType()), true});
    };
    for (Value arg : func.getArguments())
      slot(arg);
    for (Value result : func.getBody().front().getTerminator()->getOperands())
      slot(result);
    bool touches = false;
    for (auto replay : schedule.getBody().getOps<cgraph::ReplayOp>()) {
      auto graph = SymbolTable::lookupNearestSymbolFrom<cgraph::GraphOp>(
          schedule, replay.getGraphAttr());
      if (!graph)
        continue;
      graph.walk([&](Operation *node) {
        if (!isa<cgraph::CublasLtMatmulNodeOp, cgraph::CudnnConvNodeOp,
                 cgraph::NcclAllReduceNodeOp, cgraph::NcclAllGatherNodeOp>(
                node))
          return;
        // Every buffer a library node reads or writes is an i64 offset
        // attribute (a, b, c, d, bias; x, w, y; send, recv).
        for (StringRef name :
             {"a", "b", "c", "d", "bias", "x", "w", "y", "send", "recv"})
          if (auto offset = node->getAttrOfType<IntegerAttr>(name))
            for (const Access &slot : io)
              touches |= offset.getInt() >= slot.begin &&
                         offset.getInt() < slot.end;
      });
    }
    return touches;
  }

  /// Kernels that set conditions take a handle by value and the bodies'
  /// nodes live in child graphs: the runtime cannot rebind such a graph to
  /// the caller's buffers.
  bool replaysConditionalNodes(cgraph::ScheduleOp schedule) {
    bool conditional = false;
    for (auto replay : schedule.getBody().getOps<cgraph::ReplayOp>()) {
      auto graph = SymbolTable::lookupNearestSymbolFrom<cgraph::GraphOp>(
          schedule, replay.getGraphAttr());
      if (graph)
        graph.walk([&](cgraph::ConditionalNodeOp) { conditional = true; });
    }
    return conditional;
  }
};

} // namespace
