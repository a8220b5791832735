//===- Passes.h - cgc conversion passes -------------------------*- C++ -*-===//
#ifndef CGC_CONVERSION_PASSES_H
#define CGC_CONVERSION_PASSES_H

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cgc {
#define GEN_PASS_DECL
#include "cgc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cgc/Conversion/Passes.h.inc"
} // namespace cgc

#endif // CGC_CONVERSION_PASSES_H
