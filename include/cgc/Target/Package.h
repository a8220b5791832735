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
  std::string arch = "sm_90";
  /// Also compile model.cpp into libmodel.so with the host C++ compiler.
  bool compileLibrary = true;
  /// Kernel -> kernel edges of a top-level graph are programmatic: a
  /// kernel triggers the next one's launch at its end
  /// (cgc_launch_dependents) and that one waits for it to complete in its
  /// first instruction (cgc_wait_upstream), which hides much of the launch
  /// latency between kernels. Needs a CUDA 12.3 driver; older ones get
  /// ordinary edges.
  bool programmaticLaunch = true;
};

/// Writes the package of `module` (after the cgc pipeline down to cgraph)
/// into `directory`, creating it. Errors are emitted as diagnostics.
mlir::LogicalResult emitPackage(mlir::ModuleOp module,
                                llvm::StringRef directory,
                                const PackageOptions &options);

} // namespace cgc

#endif // CGC_TARGET_PACKAGE_H
