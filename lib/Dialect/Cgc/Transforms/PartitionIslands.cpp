//===- PartitionIslands.cpp - capture-safe islands and eager regions ------===//
//
// A CUDA graph needs fixed shapes, control flow and addresses. This pass
// decides, per op, whether it can be captured, schedules the program so
// that capture-safe ops come before an eager op whenever the dependencies
// allow (so islands are as large as possible), and wraps the resulting runs
// into `cgc.island` / `cgc.eager` regions.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/Dialect/Cgc/Transforms/RegionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "cgc-partition-islands"

namespace cgc {
#define GEN_PASS_DEF_CGCPARTITIONISLANDS
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// The top-level ops of `block` that `op` depends on, including through
/// values used inside its regions.
SmallVector<Operation *> dependencies(Operation *op, Block &block) {
  llvm::SetVector<Operation *> deps;
  op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      if (Operation *top = block.findAncestorOpInBlock(*def))
        if (top != op)
          deps.insert(top);
    }
  });
  return deps.takeVector();
}

struct Scheduled {
  Operation *op;
  std::string reason; // "" = capture-safe
};

/// List scheduling that prefers capture-safe ops: an eager op is only
/// scheduled when no capture-safe op is ready, so independent safe work
/// moves across it. Ties keep program order.
SmallVector<Scheduled> scheduleOps(ArrayRef<Operation *> ops, Block &block) {
  llvm::DenseMap<Operation *, int> pending;
  llvm::DenseMap<Operation *, SmallVector<Operation *>> users;
  llvm::DenseMap<Operation *, size_t> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;
  for (Operation *op : ops) {
    pending[op] = 0;
    for (Operation *dep : dependencies(op, block)) {
      if (!position.count(dep))
        continue; // constants and other hoisted ops are always available
      ++pending[op];
      users[dep].push_back(op);
    }
  }
  std::vector<std::string> reasons(ops.size());
  for (auto [i, op] : llvm::enumerate(ops))
    reasons[i] = captureUnsafeReason(op);
  auto byPosition = [&](Operation *a, Operation *b) {
    return position[a] < position[b];
  };
  std::set<Operation *, decltype(byPosition)> safeReady(byPosition),
      eagerReady(byPosition);
  auto makeReady = [&](Operation *op) {
    (reasons[position[op]].empty() ? safeReady : eagerReady).insert(op);
  };
  for (Operation *op : ops)
    if (pending[op] == 0)
      makeReady(op);
  SmallVector<Scheduled> order;
  while (!safeReady.empty() || !eagerReady.empty()) {
    auto &from = safeReady.empty() ? eagerReady : safeReady;
    Operation *op = *from.begin();
    from.erase(from.begin());
    order.push_back({op, reasons[position[op]]});
    for (Operation *user : users[op])
      if (--pending[user] == 0)
        makeReady(user);
  }
  return order;
}

struct CgcPartitionIslandsPass
    : cgc::impl::CgcPartitionIslandsBase<CgcPartitionIslandsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    Block &block = func.getBody().front();
    Operation *terminator = block.getTerminator();

    // Constants go first, in program order: weights get their own region,
    // not an island.
    SmallVector<Operation *> ops, constants;
    for (Operation &op : block.without_terminator())
      (isa<ConstantOp>(op) ? constants : ops).push_back(&op);
    for (Operation *c : llvm::reverse(constants))
      c->moveBefore(&block, block.begin());

    SmallVector<Scheduled> order = scheduleOps(ops, block);
    for (const Scheduled &s : order)
      s.op->moveBefore(terminator);

    int islands = 0, eagers = 0;
    OpBuilder builder(func.getContext());
    for (size_t begin = 0; begin < order.size();) {
      bool eager = !order[begin].reason.empty();
      size_t end = begin + 1;
      while (end < order.size() && order[end].reason.empty() != eager)
        ++end;
      SmallVector<Operation *> run;
      for (size_t i = begin; i < end; ++i)
        run.push_back(order[i].op);
      if (eager) {
        SmallVector<StringRef> nodes;
        std::vector<std::string> names;
        std::string reason;
        for (size_t i = begin; i < end; ++i) {
          names.push_back(nodeName(order[i].op));
          if (reason.find(order[i].reason) == std::string::npos)
            reason += (reason.empty() ? "" : "; ") + order[i].reason;
        }
        for (const std::string &n : names)
          nodes.push_back(n);
        std::string name = "eager" + std::to_string(eagers++);
        auto region = wrapInRegionOp<EagerRegionOp>(
            run, builder, [&](OpBuilder &b, Location loc, TypeRange types) {
              return EagerRegionOp::create(b, loc, types, name, reason,
                                           b.getStrArrayAttr(nodes));
            });
        region->emitRemark() << name << ": " << run.size()
                             << " op(s) stay eager (" << reason << ")";
      } else {
        std::string name = "island" + std::to_string(islands++);
        auto region = wrapInRegionOp<IslandOp>(
            run, builder, [&](OpBuilder &b, Location loc, TypeRange types) {
              return IslandOp::create(b, loc, types, name);
            });
        region->emitRemark() << name << ": " << run.size()
                             << " capture-safe op(s)";
      }
      begin = end;
    }
  }
};

} // namespace
