//===- ScheduleJson.cpp - the host schedule for machines ------------------===//

#include "ScheduleJson.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace cgc;

namespace {

/// An attribute as JSON: numbers, booleans and arrays as themselves,
/// enums by name, anything else (types) as the text MLIR prints for it.
llvm::json::Value attrJson(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (isa<UnitAttr>(attr))
    return true;
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getValue().getSExtValue();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue();
  if (auto s = dyn_cast<FlatSymbolRefAttr>(attr))
    return s.getValue();
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return llvm::json::Array(a.asArrayRef());
  if (auto a = dyn_cast<DenseBoolArrayAttr>(attr))
    return llvm::json::Array(a.asArrayRef());
  if (auto kind = dyn_cast<cgraph::ConditionKindAttr>(attr))
    return cgraph::stringifyConditionKind(kind.getValue());
  if (auto t = dyn_cast<TypeAttr>(attr)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t.getValue().print(os);
    return s;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os, /*elideType=*/true);
  return s;
}

class Printer {
public:
  explicit Printer(KernelIndexFn kernelIndex) : kernelIndex(kernelIndex) {}

  /// The ops of `block`; graph nodes are numbered in one sequence per
  /// graph, bodies of conditional nodes included (as the builder does).
  llvm::json::Array block(Block &block) {
    llvm::json::Array ops;
    for (Operation &op : block)
      ops.push_back(this->op(op));
    return ops;
  }

  void startGraph() {
    number.clear();
    next = 0;
  }

private:
  llvm::json::Object op(Operation &op) {
    llvm::json::Object o{{"op", op.getName().stripDialect()}};
    for (NamedAttribute attr : op.getAttrs()) {
      o[attr.getName().getValue()] = attrJson(attr.getValue());
      if (auto symbol = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
        if (attr.getName() == "kernel")
          o["kernel_index"] = static_cast<int64_t>(kernelIndex(symbol));
    }
    if (op.getNumResults() == 1) { // a graph node
      number[op.getResult(0)] = next;
      o["node"] = next++;
      llvm::json::Array deps;
      for (Value d : op.getOperands())
        deps.push_back(number.lookup(d));
      o["deps"] = std::move(deps);
    }
    if (op.getNumRegions()) {
      llvm::json::Array regions;
      for (Region &region : op.getRegions())
        regions.push_back(region.empty() ? llvm::json::Array()
                                         : block(region.front()));
      o["regions"] = std::move(regions);
    }
    return o;
  }

  KernelIndexFn kernelIndex;
  llvm::DenseMap<Value, int64_t> number;
  int64_t next = 0;
};

} // namespace

llvm::json::Object cgc::scheduleJson(ModuleOp module,
                                     ArrayRef<cgraph::ScheduleOp> schedules,
                                     KernelIndexFn kernelIndex) {
  Printer printer(kernelIndex);
  llvm::json::Array graphs, steps;
  for (auto graph : module.getOps<cgraph::GraphOp>()) {
    printer.startGraph();
    graphs.push_back(llvm::json::Object{
        {"name", graph.getSymName()},
        {"nodes", printer.block(graph.getBody().front())}});
  }
  for (cgraph::ScheduleOp schedule : schedules) {
    llvm::json::Object s{{"function", schedule.getFunction()},
                         {"copy_io", schedule.getCopyIo()},
                         {"steps", printer.block(schedule.getBody().front())}};
    if (IntegerAttr bucket = schedule.getBucketAttr())
      s["bucket"] = bucket.getInt();
    steps.push_back(std::move(s));
  }
  return llvm::json::Object{{"graphs", std::move(graphs)},
                            {"schedules", std::move(steps)}};
}
