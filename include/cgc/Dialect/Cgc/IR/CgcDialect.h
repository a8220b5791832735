//===- CgcDialect.h - cgc dialect -------------------------------*- C++ -*-===//
#ifndef CGC_DIALECT_CGC_IR_CGCDIALECT_H
#define CGC_DIALECT_CGC_IR_CGCDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

// The dialect's discardable attributes name #cgc.target.
#include "cgc/Dialect/Cgc/IR/CgcAttrs.h"

#include "cgc/Dialect/Cgc/IR/CgcOpsDialect.h.inc"

#endif // CGC_DIALECT_CGC_IR_CGCDIALECT_H
