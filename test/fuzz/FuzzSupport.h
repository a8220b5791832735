//===- FuzzSupport.h - shared by the importer fuzz targets ------*- C++ -*-===//

#ifndef CGC_TEST_FUZZ_FUZZSUPPORT_H
#define CGC_TEST_FUZZ_FUZZSUPPORT_H

#include "llvm/ADT/StringRef.h"

namespace cgc::fuzz {
/// Creates the model folder the fuzzed models are imported from.
void initialize();
/// Imports `bytes` as a binary ONNX model in a fresh context. Returns true
/// when it imports; aborts when the import fails without an error.
bool importOnce(llvm::StringRef bytes);
} // namespace cgc::fuzz

#endif // CGC_TEST_FUZZ_FUZZSUPPORT_H
