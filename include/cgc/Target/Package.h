//===- Package.h - write a runnable package ---------------------*- C++ -*-===//
//
// A package is a folder: model.h (typed C API), model.cpp (one function per
// CUDA graph with explicit cuGraphAdd*Node calls, and the descriptor that
// libcgrt reads), kernels.cu with its NVRTC-compiled kernels.cubin and
// kernels.ptx, weights.bin, metadata.json, and, when asked, libmodel.so.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_TARGET_PACKAGE_H
#define CGC_TARGET_PACKAGE_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace cgc {

struct PackageOptions {
  std::string modelName = "model";
  /// Also compile model.cpp into libmodel.so with the host C++ compiler.
  bool compileLibrary = true;
};

/// Writes the package of `module` (after the cgc pipeline down to cgraph)
/// into `directory`, creating it. The kernels are compiled for the
/// module's cgc.target; programmatic edges are those the IR marks
/// (cgraph.kernel_node's `programmatic`). Errors are emitted as
/// diagnostics.
mlir::LogicalResult emitPackage(mlir::ModuleOp module,
                                llvm::StringRef directory,
                                const PackageOptions &options);

} // namespace cgc

#endif // CGC_TARGET_PACKAGE_H
