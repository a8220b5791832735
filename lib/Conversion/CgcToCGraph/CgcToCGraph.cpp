//===- CgcToCGraph.cpp - islands to explicit CUDA graphs ------------------===//

#include "cgc/Codegen/KernelGen.h"
#include "cgc/Conversion/Passes.h"
#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"
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

SmallVector<Access> accesses(const GeneratedKernel &k) {
  SmallVector<Access> result;
  for (auto [i, offset] : llvm::enumerate(k.argOffsets))
    result.push_back({offset, offset + k.argBytes[i], i >= k.numInputs});
  return result;
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

struct CgcLowerToCGraphPass
    : cgc::impl::CgcLowerToCGraphBase<CgcLowerToCGraphPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder builder(module.getContext());
    llvm::StringSet<> emitted;
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      for (auto island : func.getOps<IslandOp>()) {
        SmallVector<std::pair<GeneratedKernel, KernelOp>> kernels;
        for (auto kernel : island.getBody().front().getOps<KernelOp>()) {
          FailureOr<GeneratedKernel> generated = generateKernel(kernel);
          if (failed(generated))
            return signalPassFailure();
          kernels.push_back({std::move(*generated), kernel});
        }
        builder.setInsertionPointToEnd(module.getBody());
        for (auto &[k, op] : kernels)
          if (emitted.insert(k.name).second)
            cgraph::KernelOp::create(builder, island.getLoc(), k.name,
                                     k.source);
        auto graph = cgraph::GraphOp::create(builder, island.getLoc(),
                                             island.getName());
        Block *body = new Block();
        graph.getBody().push_back(body);
        builder.setInsertionPointToEnd(body);
        SmallVector<SmallVector<Access>> access;
        for (auto &[k, op] : kernels)
          access.push_back(accesses(k));
        SmallVector<llvm::BitVector> ancestors(kernels.size());
        SmallVector<Value> nodes;
        for (auto [n, entry] : llvm::enumerate(kernels)) {
          auto &[k, op] = entry;
          SmallVector<Value> deps;
          for (size_t d : necessaryDeps(n, access, ancestors))
            deps.push_back(nodes[d]);
          auto node = cgraph::KernelNodeOp::create(
              builder, op.getLoc(), cgraph::NodeType::get(&getContext()),
              k.name, deps, k.grid, k.block,
              k.argOffsets, builder.getStringAttr(op.getName()),
              /*shared_bytes=*/0);
          nodes.push_back(node.getNode());
        }
      }
    }
  }
};

} // namespace
