//===- TuningCandidates.h - print what a tuner may measure ------*- C++ -*-===//
#ifndef CGC_LIB_TOOLS_CGC_TUNINGCANDIDATES_H
#define CGC_LIB_TOOLS_CGC_TUNINGCANDIDATES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace cgc {

/// The JSON of `--emit=tuning-candidates` (TuningCandidates.cpp).
void printTuningCandidates(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace cgc

#endif // CGC_LIB_TOOLS_CGC_TUNINGCANDIDATES_H
