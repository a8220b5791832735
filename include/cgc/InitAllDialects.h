//===- InitAllDialects.h - every dialect cgc tools parse --------*- C++ -*-===//
//
// One registration point for cgc, cgc-opt and tests, so every tool accepts
// the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_INITALLDIALECTS_H
#define CGC_INITALLDIALECTS_H

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"
#include "cgc/Dialect/Cgc/IR/CgcDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace cgc {
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<cgc::CgcDialect, cgc::cgraph::CGraphDialect,
                  mlir::func::FuncDialect>();
}
} // namespace cgc

#endif // CGC_INITALLDIALECTS_H
