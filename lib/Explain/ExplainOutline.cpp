//===- ExplainOutline.cpp - what --explain says of a planned program ------===//
//
// Reads the islands, eager regions and kernels of a function after
// --cgc-plan-buffers, and the plan's sizes from its attributes, into an
// ExplainOutline; cgc's text renderer prints it.
//
//===----------------------------------------------------------------------===//

#include "cgc/Explain/Explain.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace cgc;

namespace {

using Entry = ExplainOutline::Entry;

/// The ONNX nodes of a kernel, deduplicated in order (decompositions turn
/// one node into several ops).
std::vector<std::string> kernelNodes(KernelOp kernel) {
  std::vector<std::string> names;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    std::string name = nodeName(&op);
    if (!llvm::is_contained(names, name))
      names.push_back(name);
  }
  return names;
}

/// The kernels of a graph body, and If/Loop as the conditional nodes they
/// become, with their bodies. Returns the kernel count.
int64_t outlineGraphBody(Block &block, std::vector<Entry> &entries) {
  int64_t kernels = 0;
  for (Operation &op : block.without_terminator()) {
    Entry entry;
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      ++kernels;
      entry.kind = Entry::Kind::Kernel;
      entry.name = kernel.getName().str();
      // A collective is a group of its own that NCCL runs: say so.
      entry.kernelKind = kernel.getAllReduce()   ? "NCCL all-reduce"
                         : kernel.getAllGather() ? "NCCL all-gather"
                         : stringifyKernelKind(kernel.getKind()).str();
      entry.precision = describeKernelPrecision(kernel);
      entry.onnxNodes = kernelNodes(kernel);
    } else if (auto ifOp = dyn_cast<IfOp>(op)) {
      entry.kind = Entry::Kind::If;
      entry.name = nodeName(&op);
      entry.bodies.resize(2);
      kernels += outlineGraphBody(ifOp.getThenRegion().front(), entry.bodies[0]);
      kernels += outlineGraphBody(ifOp.getElseRegion().front(), entry.bodies[1]);
    } else if (auto loop = dyn_cast<LoopOp>(op)) {
      entry.kind = Entry::Kind::Loop;
      entry.name = nodeName(&op);
      entry.bodies.resize(1);
      kernels += outlineGraphBody(loop.getBody().front(), entry.bodies[0]);
    } else {
      continue;
    }
    entries.push_back(std::move(entry));
  }
  return kernels;
}

ExplainOutline::Region outlineIsland(IslandOp island) {
  ExplainOutline::Region region;
  region.name = island.getName().str();
  island.getBody().walk([&](Operation *op) {
    if (!isa<KernelOp, YieldOp>(op))
      ++region.ops;
  });
  region.kernels = outlineGraphBody(island.getBody().front(), region.entries);
  return region;
}

/// Each op of an eager region with the reason it cannot be captured.
ExplainOutline::Region outlineEager(EagerRegionOp eager) {
  ExplainOutline::Region region;
  region.name = eager.getName().str();
  region.eager = true;
  for (Operation &op : eager.getBody().front().without_terminator()) {
    region.eagerOps.push_back({nodeName(&op), captureUnsafeReason(&op)});
    // Kernels of eager If/Loop bodies, launched by the host code.
    op.walk([&](KernelOp) { ++region.kernels; });
  }
  region.ops = region.eagerOps.size();
  return region;
}

} // namespace

std::vector<ExplainOutline> cgc::buildExplainOutline(ModuleOp module) {
  std::vector<ExplainOutline> outlines;
  for (auto func : module.getOps<func::FuncOp>()) {
    ExplainOutline outline;
    for (Operation &op : func.getBody().front()) {
      if (auto island = dyn_cast<IslandOp>(op)) {
        outline.regions.push_back(outlineIsland(island));
        outline.kernels += outline.regions.back().kernels;
      } else if (auto eager = dyn_cast<EagerRegionOp>(op)) {
        outline.regions.push_back(outlineEager(eager));
        outline.kernels += outline.regions.back().kernels;
      }
    }
    outline.arenaBytes = getArenaBytes(func).value_or(0);
    outline.intermediateBytes = getIntermediateBytes(func).value_or(0);
    outline.intermediateLowerBound =
        getIntermediateLowerBound(func).value_or(0);
    outline.intermediateNaiveBytes =
        getIntermediateNaiveBytes(func).value_or(0);
    outline.weightsBytes = getWeightsBytes(func).value_or(0);
    outlines.push_back(std::move(outline));
  }
  return outlines;
}

std::string cgc::describeKernelPrecision(Operation *op) {
  auto kernel = dyn_cast<KernelOp>(op);
  if (!kernel)
    return "";
  std::optional<Type> requested = kernel.getPrecision();
  if (!requested)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  KernelConfigAttr config = kernel.getConfigAttr();
  if (config && config.usesTensorCores())
    os << config.getOperand() << " tensor cores";
  else if (config && getTunedFrom(kernel))
    os << "f32 FMAs (the tuning cache measured them faster; " << *requested
       << " requested)";
  else if (config)
    os << "f32 FMAs (the " << stringifyKernelStrategy(config.getStrategy())
       << " template has no tensor-core form; " << *requested
       << " requested)";
  else
    os << *requested << " requested";
  // --cgc-narrow-storage stored the product's operands in 16 bits.
  if (llvm::any_of(kernel.getBody().front(),
                   [](Operation &op) { return isOperandWidening(&op); }))
    os << ", operands stored " << *requested;
  // --cgc-narrow-conv-outputs rounded the convolution's output to 16 bits.
  if (narrowConvOutput(kernel))
    os << ", output stored " << *requested;
  return text;
}
