//===- ScheduleJson.h - the host schedule for machines ----------*- C++ -*-===//
//
// metadata.json's "cgraph" section: every graph with its nodes and every
// schedule with its steps, as the cgraph IR says them, so tools that run a
// package without the CUDA driver (utils/ci/emulate.py) read the launches
// instead of parsing the generated model.cpp. Printed generically from the
// ops: an op's name, its attributes, its dependencies and its regions.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_TARGET_PACKAGE_SCHEDULEJSON_H
#define CGC_LIB_TARGET_PACKAGE_SCHEDULEJSON_H

#include "EagerRegions.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace cgc {

/// {"graphs": [{"name", "nodes": [...]}], "schedules": [{..., "steps"}]}:
/// graphs in module order (the package's graph indices), schedules in the
/// order of `schedules`. Each op is an object with "op" (its name without
/// the dialect), its attributes ("kernel_index" added beside a kernel
/// symbol), "node" and "deps" (node numbers within its graph, numbered as
/// the package's builder numbers them) for graph nodes, and "regions" (a
/// list of op lists) where it has any.
llvm::json::Object
scheduleJson(mlir::ModuleOp module,
             llvm::ArrayRef<cgraph::ScheduleOp> schedules,
             KernelIndexFn kernelIndex);

} // namespace cgc

#endif // CGC_LIB_TARGET_PACKAGE_SCHEDULEJSON_H
