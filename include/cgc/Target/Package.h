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

#include <functional>
#include <string>

namespace cgc {

struct PackageOptions {
  std::string modelName = "model";
  /// Also compile model.cpp into libmodel.so with the host C++ compiler.
  bool compileLibrary = true;
  /// Told when a long step starts ("compiling 54 kernels with NVRTC"), for
  /// the CLI's progress lines; may be empty.
  std::function<void(llvm::StringRef)> onStage;
  /// A program split over several GPUs: `module` is rank 0's program and
  /// these ranks 1, 2, ... (each from --cgc-materialize-rank, lowered by
  /// the same pipeline). They must have become the same graphs and kernels;
  /// the package holds those once and a weights file per rank.
  std::vector<mlir::ModuleOp> otherRanks;
};

/// Writes the package of `module` (after the cgc pipeline down to cgraph)
/// into `directory`, atomically: into a new folder beside it, renamed to
/// `directory` at the end, so a failed compile leaves no partial package
/// and an earlier package at `directory` is replaced whole. `directory`
/// must be new, empty or an earlier package (checkPackageTarget). The
/// kernels are compiled for the module's cgc.target; programmatic edges
/// are those the IR marks (cgraph.kernel_node's `programmatic`). Errors are
/// emitted as diagnostics.
mlir::LogicalResult emitPackage(mlir::ModuleOp module,
                                llvm::StringRef directory,
                                const PackageOptions &options);

/// Fails, with the reason in `error`, where writing a package to
/// `directory` would overwrite something that is not an earlier package: a
/// file, or a folder with other files.
bool checkPackageTarget(llvm::StringRef directory, std::string &error);

} // namespace cgc

#endif // CGC_TARGET_PACKAGE_H
