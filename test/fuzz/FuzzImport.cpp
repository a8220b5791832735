//===- FuzzImport.cpp - fuzz target: model bytes -> ONNX importer ---------===//
//
// One input is the bytes of an ONNX model: binary, or the text format when it
// starts with '<' (`<ir_version: 8, ...>`). It is imported in a fresh
// context; the importer must either return a module that verifies (and
// prints) or report at least one error. A crash, a sanitizer report or a
// failure without a message is a bug.
//
// Built three ways (test/fuzz/CMakeLists.txt): with libFuzzer as
// cgc-fuzz-bytes, with libFuzzer and the structure-aware mutator of
// FuzzMutator.cpp as cgc-fuzz-proto, and with StandaloneMain.cpp as
// cgc-fuzz-replay, which runs saved inputs (seed corpus, regressions) in any
// build.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "cgc/Import/ONNXImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fstream>
#include <string>

namespace {
/// The folder the fuzzed model "lives" in, so external data references are
/// resolved against real files: a 64-byte weights.bin and a sub/ folder.
std::string &modelFolder() {
  static std::string folder;
  return folder;
}
} // namespace

void cgc::fuzz::initialize() {
  if (!modelFolder().empty())
    return;
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("cgc-fuzz", dir))
    std::abort();
  modelFolder() = std::string(dir);
  std::ofstream(modelFolder() + "/weights.bin", std::ios::binary)
      << std::string(64, '\x3f');
  llvm::sys::fs::create_directory(modelFolder() + "/sub");
  std::ofstream(modelFolder() + "/sub/w.bin", std::ios::binary)
      << std::string(16, '\0');
  std::atexit([] { llvm::sys::fs::remove_directories(modelFolder()); });
}

bool cgc::fuzz::importOnce(llvm::StringRef bytes) {
  initialize();
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  unsigned errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors;
    return mlir::success();
  });
  cgc::ImportOptions options;
  // No binary ModelProto starts with '<' (field 7, end-group), so such
  // inputs go to the text parser: one target covers both formats.
  std::string name = bytes.starts_with("<") ? "model.onnxtxt" : "model.onnx";
  mlir::OwningOpRef<mlir::ModuleOp> module = cgc::importONNXModelFromBytes(
      bytes, modelFolder() + "/" + name, &context, options);
  if (!module) {
    if (errors == 0) {
      llvm::errs() << "cgc-fuzz: the import failed without an error\n";
      std::abort();
    }
    return false;
  }
  // The module verified; printing walks every op and attribute once more.
  module->print(llvm::nulls());
  return true;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  cgc::fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cgc::fuzz::importOnce(
      llvm::StringRef(reinterpret_cast<const char *>(data), size));
  return 0;
}
