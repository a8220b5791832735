//===- Explain.cpp - a readable account of a compiled program -------------===//

#include "cgc/Tools/cgc/Explain.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cgc;

namespace {

std::string nodeName(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return op->getName().getStringRef().str();
}

/// The ONNX nodes of a kernel, deduplicated in order (decompositions turn
/// one node into several ops).
SmallVector<std::string> kernelNodes(KernelOp kernel) {
  SmallVector<std::string> names;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    std::string name = nodeName(&op);
    if (!llvm::is_contained(names, name))
      names.push_back(name);
  }
  return names;
}

/// The kernels of a graph body, and If/Loop as the conditional nodes they
/// become, their bodies indented under them. Returns the kernel count.
int64_t explainGraphBody(Block &block, StringRef indent,
                         llvm::raw_ostream &os) {
  int64_t kernels = 0;
  std::string inner = (indent + "    ").str();
  for (Operation &op : block.without_terminator()) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      ++kernels;
      os << indent << kernel.getName() << " [" << stringifyKernelKind(kernel.getKind()) << "] "
         << llvm::join(kernelNodes(kernel), ", ") << "\n";
    } else if (auto ifOp = dyn_cast<IfOp>(op)) {
      os << indent << nodeName(&op)
         << ": IF node with ELSE (condition set on the GPU)\n";
      os << indent << "  then:\n";
      kernels += explainGraphBody(ifOp.getThenRegion().front(), inner, os);
      os << indent << "  else:\n";
      kernels += explainGraphBody(ifOp.getElseRegion().front(), inner, os);
    } else if (auto loop = dyn_cast<LoopOp>(op)) {
      os << indent << nodeName(&op)
         << ": WHILE node (trip count and condition tested on the GPU)\n";
      os << indent << "  body:\n";
      kernels += explainGraphBody(loop.getBody().front(), inner, os);
    }
  }
  return kernels;
}

void explainIsland(IslandOp island, llvm::raw_ostream &os, int64_t &kernels) {
  int64_t ops = 0;
  island.getBody().walk([&](Operation *op) {
    if (!isa<KernelOp, YieldOp>(op))
      ++ops;
  });
  std::string body;
  llvm::raw_string_ostream lines(body);
  int64_t islandKernels =
      explainGraphBody(island.getBody().front(), "  ", lines);
  kernels += islandKernels;
  os << island.getName() << ": " << ops << " ops in " << islandKernels
     << " kernels (one CUDA graph)\n"
     << body;
}

/// Each op of an eager region with the reason it cannot be captured.
void explainEager(EagerRegionOp eager, llvm::raw_ostream &os) {
  Block &body = eager.getBody().front();
  os << eager.getName() << ": eager region, "
     << llvm::range_size(body.without_terminator()) << " ops (run outside "
     << "CUDA graphs)\n";
  for (Operation &op : body.without_terminator()) {
    StringRef reason = "depends on an eager op's data-dependent shape";
    if (auto safety = dyn_cast<CaptureSafetyOpInterface>(op))
      if (!safety.getCaptureUnsafeReason().empty())
        reason = safety.getCaptureUnsafeReason();
    os << "  " << nodeName(&op) << ": " << reason << "\n";
  }
}

} // namespace

void cgc::explainText(ModuleOp module, llvm::raw_ostream &os) {
  for (auto func : module.getOps<func::FuncOp>()) {
    int64_t kernels = 0;
    for (Operation &op : func.getBody().front()) {
      if (auto island = dyn_cast<IslandOp>(op))
        explainIsland(island, os, kernels);
      else if (auto eager = dyn_cast<EagerRegionOp>(op))
        explainEager(eager, os);
    }
    int64_t arena = getArenaBytes(func).value_or(0);
    int64_t intermediates = getIntermediateBytes(func).value_or(0);
    int64_t lowerBound = getIntermediateLowerBound(func).value_or(0);
    int64_t naive = getIntermediateNaiveBytes(func).value_or(0);
    int64_t fixed = arena - intermediates;
    os << "kernels: " << kernels << "\n";
    os << "arena: " << arena << " bytes, lower bound " << fixed + lowerBound
       << ", naive " << fixed + naive << "\n";
    os << "intermediates: " << intermediates << " bytes, lower bound "
       << lowerBound << ", naive " << naive << " (weights "
       << getWeightsBytes(func).value_or(0) << " bytes)\n";
  }
}
