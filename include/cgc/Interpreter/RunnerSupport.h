//===- RunnerSupport.h - shared by the interpreter tools --------*- C++ -*-===//
//
// Loading a program (ONNX binary or text, or cgc MLIR), the optional plan
// pipeline, tensor files (ONNX TensorProto .pb as in the ONNX backend tests,
// NumPy .npy), deterministic random inputs and the numpy.allclose-style
// comparison of outputs with references.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_INTERPRETER_RUNNERSUPPORT_H
#define CGC_INTERPRETER_RUNNERSUPPORT_H

#include "cgc/Import/ONNXImporter.h"
#include "cgc/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <set>
#include <string>

namespace cgc::interp {

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

/// Imports MODEL.onnx / MODEL.onnxtxt or parses FILE.mlir. Errors are
/// emitted as diagnostics; returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp> loadProgram(llvm::StringRef path,
                                              mlir::MLIRContext *context,
                                              const ImportOptions &options);

/// Runs partitioning, fusion and buffer planning (PipelineStop::Plan).
mlir::LogicalResult runPlanPipeline(mlir::ModuleOp module);

/// The `main` function of the module (or its only function), or null.
mlir::func::FuncOp findMain(mlir::ModuleOp module);

/// The `cgc.name` of argument / result `i`, or "input_<i>" / "output_<i>".
std::string argName(mlir::func::FuncOp func, unsigned i);
std::string resultName(mlir::func::FuncOp func, unsigned i);

//===----------------------------------------------------------------------===//
// Tensor files
//===----------------------------------------------------------------------===//

/// Reads an ONNX TensorProto file; `name` receives the tensor's name.
bool readTensorProto(const std::string &path, mlir::MLIRContext *context,
                     HostTensor &tensor, std::string &name, std::string &error);
bool writeTensorProto(const std::string &path, const HostTensor &tensor,
                      const std::string &name, std::string &error);

bool readNpy(const std::string &path, mlir::MLIRContext *context,
             HostTensor &tensor, std::string &error);
bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string &error);

/// Reads a .pb or .npy file by its extension.
bool readTensorFile(const std::string &path, mlir::MLIRContext *context,
                    HostTensor &tensor, std::string &error);

/// A tensor name as a file name: characters outside [A-Za-z0-9._-] become
/// '_' (as cgc-run names its files).
std::string sanitizeFileName(llvm::StringRef name);

/// The op types a model uses, subgraphs included; ops outside the default
/// domain are written `domain.Op`.
bool collectModelOps(const std::string &path, std::set<std::string> &ops,
                     std::string &error);

/// The names of a binary model's graph inputs that are not initializers, in
/// order (the order of the backend tests' input_<i>.pb files).
bool modelInputNames(const std::string &path, std::vector<std::string> &names,
                     std::string &error);

//===----------------------------------------------------------------------===//
// Inputs and comparison
//===----------------------------------------------------------------------===//

/// Fills `t` with values derived from `seed` exactly as cgc-run does
/// (splitmix64): floats uniform in [-1, 1), integers in [0, 8), bools 0/1.
/// Input #i of a run with --seed S uses seed S * 0x9E3779B97F4A7C15 + i.
void fillRandom(HostTensor &t, uint64_t seed);

struct Comparison {
  bool ok = true;
  std::string message; ///< why not ok
  double maxAbsError = 0;
  int64_t mismatches = 0;
};

/// numpy.allclose per element: |got - expected| <= atol + rtol * |expected|,
/// NaN equals NaN, infinities equal themselves; integers and bools must be
/// equal. Element types and shapes must agree.
Comparison compareTensors(const HostTensor &got, const HostTensor &expected,
                          double rtol, double atol);

/// Prints `error: op 'node': message` for a diagnostic (the node name comes
/// from the NameLoc the importer attaches).
std::string formatDiagnostic(mlir::Diagnostic &diag);

} // namespace cgc::interp

#endif // CGC_INTERPRETER_RUNNERSUPPORT_H
