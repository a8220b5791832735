//===- CGraphDialect.h - cgraph dialect -------------------------*- C++ -*-===//
#ifndef CGC_DIALECT_CGRAPH_IR_CGRAPHDIALECT_H
#define CGC_DIALECT_CGRAPH_IR_CGRAPHDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "cgc/Dialect/CGraph/IR/CGraphOpsDialect.h.inc"
#include "cgc/Dialect/CGraph/IR/CGraphOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOpsAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOpsTypes.h.inc"

namespace cgc::cgraph {
/// Element types host code reads and writes as C scalars: f32, f64 and
/// integers of 1 (as bytes), 8, 16, 32 or 64 bits.
bool isHostElementType(mlir::Type type);
} // namespace cgc::cgraph

namespace cgc::cgraph::detail {
/// Grid and block are three positive extents (at most 1024 threads) and
/// every argument a non-negative arena offset: kernel nodes and launches.
mlir::LogicalResult verifyLaunch(mlir::Operation *op,
                                 llvm::ArrayRef<int64_t> grid,
                                 llvm::ArrayRef<int64_t> block,
                                 llvm::ArrayRef<int64_t> args);
} // namespace cgc::cgraph::detail

#define GET_OP_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOps.h.inc"

#endif // CGC_DIALECT_CGRAPH_IR_CGRAPHDIALECT_H
