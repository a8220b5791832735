//===- EagerRegions.h - host code for eager regions -------------*- C++ -*-===//
//
// An eager region becomes a C++ function of the package that the runtime
// calls between graph replays: kernels of If/Loop bodies are launched one
// by one, branches and trip counts are decided on the host after reading
// the condition from the arena, and data-dependent ops (NonZero) run on the
// host and report their output's shape.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_TARGET_PACKAGE_EAGERREGIONS_H
#define CGC_LIB_TARGET_PACKAGE_EAGERREGIONS_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace cgc {

/// Helpers the generated runners use (emitted once into model.cpp).
const char *eagerPrelude();

/// Writes the runner of `eager` to `os` and returns its name in `runner`.
/// `kernelIndex` maps kernel symbols to their index in the package.
mlir::LogicalResult emitEagerRunner(EagerRegionOp eager,
                                    const llvm::StringMap<size_t> &kernelIndex,
                                    llvm::raw_ostream &os,
                                    std::string &runner);

/// For a model output whose data-dependent shape cgc cannot bound (Range,
/// ConstantOfShape or Expand of run-time values, Loop scan outputs, and the
/// ops computed on them): "; its shape comes from graph input 'x': fix its
/// value at compile time with --bind x=FILE.pb" naming every graph input
/// the shape depends on, or "" when it depends on none.
std::string unboundedShapeHint(mlir::Value output);

} // namespace cgc

#endif // CGC_LIB_TARGET_PACKAGE_EAGERREGIONS_H
