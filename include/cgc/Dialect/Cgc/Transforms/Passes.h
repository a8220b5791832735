//===- Passes.h - cgc passes ------------------------------------*- C++ -*-===//
#ifndef CGC_DIALECT_CGC_TRANSFORMS_PASSES_H
#define CGC_DIALECT_CGC_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cgc {
#define GEN_PASS_DECL
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

#endif // CGC_DIALECT_CGC_TRANSFORMS_PASSES_H
