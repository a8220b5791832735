//===- CgcDialect.cpp - cgc dialect registration --------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcDialect.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

using namespace mlir;
using namespace cgc;

#include "cgc/Dialect/Cgc/IR/CgcOpsDialect.cpp.inc"

void CgcDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "cgc/Dialect/Cgc/IR/CgcOps.cpp.inc"
      >();
}
