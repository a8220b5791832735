//===- ExplainGraph.cpp - the planned program as a graph ------------------===//
//
// The graph is read off the IR after --cgc-plan-buffers: islands and eager
// regions from their ops, kernels from --cgc-fuse's KernelOps, the arena
// from planBuffers (the analysis --cgc-plan-buffers runs), with the same
// schedule steps the plan uses (every op of an island body, every eager
// region, in program order).
//
//===----------------------------------------------------------------------===//

#include "cgc/Explain/Explain.h"

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace mlir;
using namespace cgc;

namespace {

using Node = ExplainGraph::Node;
using NodeKind = ExplainGraph::NodeKind;

/// `1x32x112x112 f32`; `scalar f32` for rank 0, `?` for a dynamic dim.
std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    os << type;
    return s;
  }
  if (tensor.getRank() == 0)
    os << "scalar";
  for (auto [i, dim] : llvm::enumerate(tensor.getShape()))
    os << (i ? "x" : "")
       << (ShapedType::isDynamic(dim) ? std::string("?") : std::to_string(dim));
  os << " " << tensor.getElementType();
  return s;
}

std::string argName(func::FuncOp func, unsigned index, bool result) {
  auto name = result ? getOutputName(func, index) : getInputName(func, index);
  if (name)
    return name.str();
  return (result ? "output" : "input") + std::to_string(index);
}

class GraphBuilder {
public:
  GraphBuilder(func::FuncOp func, ExplainGraph &g) : func(func), g(g) {}

  LogicalResult build() {
    Block &body = func.getBody().front();
    for (BlockArgument arg : body.getArguments()) {
      Node node;
      node.kind = NodeKind::Input;
      node.name = argName(func, arg.getArgNumber(), /*result=*/false);
      node.kindName = "input";
      node.shapes.push_back(typeString(arg.getType()));
      node.step = -1;
      inputNodes.push_back(addNode(std::move(node), nullptr));
    }
    int64_t step = 0;
    for (Operation &op : body) {
      if (auto island = dyn_cast<IslandOp>(op))
        addIsland(island, step);
      else if (auto eager = dyn_cast<EagerRegionOp>(op))
        addEager(eager, step++);
    }
    g.steps = step;
    Operation *ret = body.getTerminator();
    for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
      Node node;
      node.kind = NodeKind::Output;
      node.name = argName(func, i, /*result=*/true);
      node.kindName = "output";
      node.shapes.push_back(typeString(value.getType()));
      node.step = g.steps;
      outputs.push_back({value, addNode(std::move(node), nullptr)});
    }
    // (Structured bindings are not captured: C++17 compilers refuse it.)
    for (const auto &entry : nodeOps) {
      int id = entry.second;
      entry.first->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          addEdge(producerOf(operand), id, operand);
      });
    }
    for (auto [value, id] : outputs)
      addEdge(producerOf(value), id, value);
    return addBuffers();
  }

private:
  int addNode(Node node, Operation *op) {
    g.nodes.push_back(std::move(node));
    int id = g.nodes.size() - 1;
    if (op) {
      nodeOf[op] = id;
      nodeOps.push_back({op, id});
    }
    return id;
  }

  void addIsland(IslandOp island, int64_t &step) {
    ExplainGraph::Region region;
    region.name = island.getName().str();
    island.getBody().walk([&](Operation *op) {
      if (!isa<KernelOp, YieldOp>(op))
        ++region.ops;
    });
    g.regions.push_back(region);
    int regionId = g.regions.size() - 1;
    for (Operation &op : island.getBody().front().without_terminator()) {
      Node node;
      node.region = regionId;
      node.step = step++;
      if (auto kernel = dyn_cast<KernelOp>(op)) {
        describeKernel(kernel, node);
        ++g.regions[regionId].kernels;
        ++g.kernels;
      } else if (isa<IfOp, LoopOp>(op)) {
        node.kind = NodeKind::Conditional;
        node.kindName = isa<IfOp>(op) ? "if" : "while";
        node.name = nodeName(&op);
        node.onnxNodes.push_back(node.name);
        addBodyKernels(op, node, regionId);
        for (Value r : op.getResults())
          node.shapes.push_back(typeString(r.getType()));
      } else {
        node.kind = NodeKind::View;
        node.kindName = "view";
        node.name = nodeName(&op);
        node.ops.push_back(op.getName().stripDialect().str() +
                           (isInPlace(&op) ? " (in place)" : ""));
        node.onnxNodes.push_back(nodeName(&op));
        for (Value r : op.getResults())
          node.shapes.push_back(typeString(r.getType()));
      }
      addNode(std::move(node), &op);
    }
  }

  /// The kernels inside an If/Loop's bodies, listed as the node's ops and
  /// counted in its region and the total.
  void addBodyKernels(Operation &op, Node &node, int regionId) {
    op.walk([&](KernelOp inner) {
      node.ops.push_back(inner.getName().str());
      ++node.kernels;
      ++g.regions[regionId].kernels;
      ++g.kernels;
    });
  }

  void describeKernel(KernelOp kernel, Node &node) {
    node.kind = NodeKind::Kernel;
    node.name = kernel.getName().str();
    node.kindName = stringifyKernelKind(kernel.getKind()).str();
    node.precision = describeKernelPrecision(kernel);
    for (Operation &op : kernel.getBody().front().without_terminator()) {
      node.ops.push_back(op.getName().stripDialect().str());
      std::string name = nodeName(&op);
      if (!llvm::is_contained(node.onnxNodes, name))
        node.onnxNodes.push_back(name);
    }
    for (Value r : kernel.getResults())
      node.shapes.push_back(typeString(r.getType()));
  }

  void addEager(EagerRegionOp eager, int64_t step) {
    ExplainGraph::Region region;
    region.name = eager.getName().str();
    region.eager = true;
    region.reason = eager.getReason().str();
    Block &body = eager.getBody().front();
    g.regions.push_back(region);
    int regionId = g.regions.size() - 1;
    for (Operation &op : body.without_terminator()) {
      if (isa<ConstantOp>(op))
        continue;
      ++g.regions[regionId].ops;
      Node node;
      node.region = regionId;
      node.step = step;
      if (auto kernel = dyn_cast<KernelOp>(op)) {
        describeKernel(kernel, node);
        ++g.regions[regionId].kernels;
        ++g.kernels;
      } else if (isa<ReshapeOp>(op)) {
        node.kind = NodeKind::View;
        node.kindName = "view";
        node.name = nodeName(&op);
        node.ops.push_back("reshape");
        node.onnxNodes.push_back(node.name);
      } else {
        node.kind = NodeKind::EagerOp;
        node.kindName = "eager";
        node.name = nodeName(&op);
        node.ops.push_back(op.getName().stripDialect().str());
        node.onnxNodes.push_back(node.name);
        // Kernels inside If/Loop bodies, launched by the host code.
        addBodyKernels(op, node, regionId);
        node.reason = captureUnsafeReason(&op);
      }
      for (Value r : op.getResults())
        node.shapes.push_back(typeString(r.getType()));
      addNode(std::move(node), &op);
    }
  }

  /// The node whose result `v` is (through island and eager region
  /// results), or -1 for weights and values internal to a node.
  int producerOf(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner()->getParentOp() == func.getOperation())
        return inputNodes[arg.getArgNumber()];
      return -1;
    }
    Operation *def = v.getDefiningOp();
    if (isa<IslandOp, EagerRegionOp>(def))
      return producerOf(def->getRegion(0).front().getTerminator()->getOperand(
          cast<OpResult>(v).getResultNumber()));
    return nodeOf.lookup_or(def, -1);
  }

  /// The producing node, or for a value inside a node (an If branch's
  /// kernel, a Loop body argument) what makes it and in which node.
  std::string describeValue(Value v) {
    int producer = producerOf(v);
    std::string name;
    Operation *parent;
    if (auto result = dyn_cast<OpResult>(v)) {
      Operation *def = result.getOwner();
      if (producer >= 0)
        name = g.nodes[producer].name;
      else if (auto kernel = dyn_cast<KernelOp>(def))
        name = kernel.getName().str();
      else
        name = def->getName().stripDialect().str();
      if (def->getNumResults() > 1)
        name += "#" + std::to_string(result.getResultNumber());
      if (producer >= 0)
        return name;
      parent = def->getParentOp();
    } else {
      auto arg = cast<BlockArgument>(v);
      parent = arg.getOwner()->getParentOp();
      name = parent->getName().stripDialect().str() + " body arg " +
             std::to_string(arg.getArgNumber());
    }
    for (; parent && parent != func.getOperation();
         parent = parent->getParentOp())
      if (int node = nodeOf.lookup_or(parent, -1); node >= 0)
        return name + " (in " + g.nodes[node].name + ")";
    return name;
  }

  void addEdge(int from, int to, Value value) {
    if (from < 0 || from == to)
      return;
    for (const ExplainGraph::Edge &e : g.edges)
      if (e.from == from && e.to == to)
        return;
    g.edges.push_back({from, to, typeString(value.getType())});
  }

  LogicalResult addBuffers() {
    FailureOr<BufferPlan> plan = planBuffers(func);
    if (failed(plan))
      return failure();
    g.arenaBytes = plan->arenaBytes;
    g.weightsBytes = plan->weightsBytes;
    g.intermediateBytes = plan->intermediateBytes;
    g.intermediateLowerBound = plan->intermediateLowerBound;
    g.intermediateNaiveBytes = plan->intermediateNaiveBytes;
    g.intermediateBase = plan->arenaBytes;

    // Readers: every node that reads a value of the buffer; outputs read
    // the values they return.
    std::vector<std::vector<int>> readers(plan->buffers.size());
    auto addReader = [&](Value v, int node) {
      auto it = plan->bufferOf.find(v);
      if (it != plan->bufferOf.end() &&
          !llvm::is_contained(readers[it->second], node))
        readers[it->second].push_back(node);
    };
    for (const auto &entry : nodeOps) {
      int id = entry.second;
      entry.first->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (producerOf(operand) != id)
            addReader(operand, id);
      });
    }
    Operation *ret = func.getBody().front().getTerminator();
    std::vector<std::string> outputNames(plan->buffers.size());
    for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
      int outputNode = g.nodes.size() - ret->getNumOperands() + i;
      addReader(value, outputNode);
      auto it = plan->bufferOf.find(value);
      if (it != plan->bufferOf.end() && outputNames[it->second].empty())
        outputNames[it->second] = g.nodes[outputNode].name;
    }

    for (auto [index, b] : llvm::enumerate(plan->buffers)) {
      if (b.absorbed)
        continue;
      ExplainGraph::Buffer buffer;
      buffer.offset = b.offset;
      buffer.bytes = b.bytes;
      buffer.shape = typeString(b.value.getType());
      buffer.readers = readers[index];
      buffer.producer = producerOf(b.value);
      if (b.begin < 0) {
        buffer.firstStep = -1;
        buffer.lastStep = g.steps;
      } else {
        buffer.firstStep = std::min<int64_t>(b.begin / 2, g.steps);
        buffer.lastStep = std::min<int64_t>(b.end / 2, g.steps);
      }
      switch (b.kind) {
      case BufferPlan::Kind::Weight:
        buffer.kind = ExplainGraph::BufferKind::Weight;
        buffer.name = nodeName(b.value.getDefiningOp());
        buffer.firstStep = -1;
        buffer.lastStep = g.steps;
        break;
      case BufferPlan::Kind::State: // a trained weight, in the weights region
        buffer.kind = ExplainGraph::BufferKind::Weight;
        buffer.name = g.nodes[buffer.producer].name;
        buffer.firstStep = -1;
        buffer.lastStep = g.steps;
        break;
      case BufferPlan::Kind::Input:
        buffer.kind = ExplainGraph::BufferKind::Input;
        buffer.name = g.nodes[buffer.producer].name;
        buffer.firstStep = -1;
        buffer.lastStep = g.steps;
        break;
      case BufferPlan::Kind::Output:
        buffer.kind = ExplainGraph::BufferKind::Output;
        buffer.name = outputNames[index].empty() ? "output" : outputNames[index];
        if (buffer.producer >= 0)
          buffer.name += " (" + g.nodes[buffer.producer].name + ")";
        buffer.lastStep = g.steps;
        break;
      case BufferPlan::Kind::Intermediate:
        buffer.kind = ExplainGraph::BufferKind::Intermediate;
        buffer.name = describeValue(b.value);
        g.intermediateBase = std::min(g.intermediateBase, b.offset);
        break;
      }
      g.buffers.push_back(std::move(buffer));
    }
    std::stable_sort(g.buffers.begin(), g.buffers.end(),
                     [](const ExplainGraph::Buffer &a,
                        const ExplainGraph::Buffer &b) {
                       return std::make_pair(a.offset, a.firstStep) <
                              std::make_pair(b.offset, b.firstStep);
                     });
    return success();
  }

  func::FuncOp func;
  ExplainGraph &g;
  std::vector<int> inputNodes;
  llvm::DenseMap<Operation *, int> nodeOf;
  std::vector<std::pair<Operation *, int>> nodeOps;
  std::vector<std::pair<Value, int>> outputs;
};

} // namespace

FailureOr<ExplainGraph> cgc::buildExplainGraph(func::FuncOp func,
                                               StringRef model) {
  ExplainGraph g;
  g.model = model.str();
  if (failed(GraphBuilder(func, g).build()))
    return failure();
  return g;
}
