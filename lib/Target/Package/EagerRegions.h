//===- EagerRegions.h - host code for eager regions -------------*- C++ -*-===//
//
// An eager step (`cgraph.eager`) becomes a C++ function of the package that
// the runtime calls between graph replays. Its host ops already say
// everything: kernels launched one by one, branches and trip counts decided
// on the host after reading the condition from the arena, data-dependent
// ops (NonZero, Compress, Unique, Reshape) computed on the host, reporting
// their outputs' shapes. This file only prints them.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_TARGET_PACKAGE_EAGERREGIONS_H
#define CGC_LIB_TARGET_PACKAGE_EAGERREGIONS_H

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace cgc {

/// Helpers the generated runners use (emitted once into model.cpp).
const char *eagerPrelude();

/// The index in the package of a (verified) `cgraph.kernel` symbol.
using KernelIndexFn = llvm::function_ref<size_t(mlir::FlatSymbolRefAttr)>;

/// Writes the runner of `eager` to `os` and returns its name.
std::string emitEagerRunner(cgraph::EagerOp eager, KernelIndexFn kernelIndex,
                            llvm::raw_ostream &os);

} // namespace cgc

#endif // CGC_LIB_TARGET_PACKAGE_EAGERREGIONS_H
