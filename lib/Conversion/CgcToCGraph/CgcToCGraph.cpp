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
        // One node per launch; a group's later launches get a label of
        // their own and depend on the earlier ones through their accesses.
        std::vector<std::pair<GeneratedKernel, std::string>> kernels;
        SmallVector<Location> locs;
        for (auto kernel : island.getBody().front().getOps<KernelOp>()) {
          FailureOr<std::vector<GeneratedKernel>> generated =
              generateKernels(kernel);
          if (failed(generated))
            return signalPassFailure();
          for (auto [i, k] : llvm::enumerate(*generated)) {
            std::string label = kernel.getName().str();
            if (i > 0)
              label += "." + std::to_string(i);
            kernels.push_back({std::move(k), label});
            locs.push_back(kernel.getLoc());
          }
        }
        builder.setInsertionPointToEnd(module.getBody());
        for (auto &[k, label] : kernels)
          if (emitted.insert(k.name).second)
            cgraph::KernelOp::create(builder, island.getLoc(), k.name,
                                     k.source);
        auto graph = cgraph::GraphOp::create(builder, island.getLoc(),
                                             island.getName());
        Block *body = new Block();
        graph.getBody().push_back(body);
        builder.setInsertionPointToEnd(body);
        SmallVector<SmallVector<Access>> access;
        for (auto &[k, label] : kernels)
          access.push_back(accesses(k));
        SmallVector<llvm::BitVector> ancestors(kernels.size());
        SmallVector<Value> nodes;
        for (auto [n, entry] : llvm::enumerate(kernels)) {
          auto &[k, label] = entry;
          SmallVector<Value> deps;
          for (size_t d : necessaryDeps(n, access, ancestors))
            deps.push_back(nodes[d]);
          auto node = cgraph::KernelNodeOp::create(
              builder, locs[n], cgraph::NodeType::get(&getContext()), k.name,
              deps, k.grid, k.block, k.argOffsets,
              builder.getStringAttr(label),
              /*shared_bytes=*/0);
          nodes.push_back(node.getNode());
        }
      }
      if (failed(lowerEagerKernels(func, builder, emitted)))
        return signalPassFailure();
    }
  }

  /// Kernels inside eager regions (If/Loop bodies) are launched one by one
  /// by the region's host code: each gets `cgc.launches`, the list of its
  /// launches (kernel symbol, grid, block, arena offsets) in order.
  LogicalResult lowerEagerKernels(func::FuncOp func, OpBuilder &builder,
                                  llvm::StringSet<> &emitted) {
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
      SmallVector<Attribute> launches;
      for (GeneratedKernel &k : *generated) {
        builder.setInsertionPointToEnd(module.getBody());
        if (emitted.insert(k.name).second)
          cgraph::KernelOp::create(builder, kernel.getLoc(), k.name,
                                   k.source);
        launches.push_back(builder.getDictionaryAttr(
            {builder.getNamedAttr("kernel",
                                  FlatSymbolRefAttr::get(&getContext(), k.name)),
             builder.getNamedAttr("grid", builder.getDenseI64ArrayAttr(k.grid)),
             builder.getNamedAttr("block",
                                  builder.getDenseI64ArrayAttr(k.block)),
             builder.getNamedAttr("args",
                                  builder.getDenseI64ArrayAttr(k.argOffsets))}));
      }
      kernel->setAttr("cgc.launches", builder.getArrayAttr(launches));
    }
    return success();
  }
};

} // namespace
