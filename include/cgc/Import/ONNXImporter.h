//===- ONNXImporter.h - ONNX to cgc dialect ---------------------*- C++ -*-===//
//
// Public entry point of the ONNX importer. Errors are reported through the
// context's diagnostic engine and name the file and the ONNX node.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_IMPORT_ONNXIMPORTER_H
#define CGC_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace cgc {

struct ImportOptions {
  /// Symbolic dim name -> value (`--dim N=4`).
  llvm::StringMap<int64_t> dimBindings;
  /// Graph input name -> full shape (`--shape image=1x3x224x224`).
  llvm::StringMap<std::vector<int64_t>> inputShapes;
  /// Graph input name -> TensorProto file whose value the input takes at
  /// compile time (`--bind k=k.pb`): the input becomes a constant.
  std::map<std::string, std::string> boundInputs;
  /// Initializers with at most this many elements are printed inline
  /// (`dense`) so shape constants stay readable and foldable; larger ones
  /// become `dense_resource` blobs.
  int64_t inlineConstantLimit = 16;
  /// Keep If and Loop on the host (eager regions) even when their shapes
  /// are static, instead of CUDA conditional nodes: for drivers older than
  /// CUDA 12.3. Recorded as the module attribute cgc.control_flow = "host".
  bool hostControlFlow = false;
  /// The GPU architecture the module is compiled for: its entry of the
  /// known-GPU table becomes the module's #cgc.target. Must be one of
  /// cgc::knownArchitectures().
  std::string arch = "sm_90";
  /// A graph input, output or value_info whose declared type disagrees with
  /// the inferred one is an error; with this set it is a warning and the
  /// inferred type is used (`--allow-declared-type-mismatch`).
  bool allowDeclaredTypeMismatch = false;
  /// `--io-precision`: "fp16" or "bf16" declares the graph's f32 inputs and
  /// outputs in that type (casts at the boundary); "" or "fp32" keeps them.
  std::string ioPrecision;
  /// `cgc --train`: each float initializer's constant is marked
  /// `cgc.initializer` (cgc-build-train-step turns it into a trained
  /// parameter) and nothing folds through it at import, so every weight
  /// stays a tensor of its own.
  bool keepInitializers = false;
  /// `--device-configuration`: which of the model's IR 11 multi-device
  /// configurations its sharding annotations are taken from ("" : the
  /// model's only one).
  std::string deviceConfiguration;
};

/// Imports an ONNX model file (binary protobuf, or the ONNX text format when
/// the file name ends in `.onnxtxt`). Returns null after emitting errors.
mlir::OwningOpRef<mlir::ModuleOp> importONNXModel(llvm::StringRef path,
                                                  mlir::MLIRContext *context,
                                                  const ImportOptions &options);

/// Imports a model held in memory. `bufferName` stands for the file name:
/// it names the model in messages, `.onnxtxt` selects the text format, and
/// external data is looked up in its folder (under the same rules as for
/// files). Returns null after emitting errors.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModelFromBytes(llvm::StringRef bytes, llvm::StringRef bufferName,
                         mlir::MLIRContext *context,
                         const ImportOptions &options);

/// Parses `NAME=V` (dims) and `NAME=AxBxC` (shapes) command-line bindings.
/// Returns false and sets `error` on malformed text.
bool parseDimBinding(llvm::StringRef text, ImportOptions &options,
                     std::string &error);
bool parseShapeBinding(llvm::StringRef text, ImportOptions &options,
                       std::string &error);
bool parseValueBinding(llvm::StringRef text, ImportOptions &options,
                       std::string &error);

/// Writes docs/ops.md: every supported ONNX op and how it is imported.
void printSupportedOpsMarkdown(llvm::raw_ostream &os);

/// Names of all supported ONNX ops (default domain).
std::vector<std::string> supportedONNXOps();

} // namespace cgc

#endif // CGC_IMPORT_ONNXIMPORTER_H
