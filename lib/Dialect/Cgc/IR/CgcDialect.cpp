//===- CgcDialect.cpp - cgc dialect registration --------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcDialect.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/Gradients.h"

using namespace mlir;
using namespace cgc;

#include "cgc/Dialect/Cgc/IR/CgcOpsDialect.cpp.inc"

void CgcDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "cgc/Dialect/Cgc/IR/CgcOps.cpp.inc"
      >();
  registerGradientRules(getContext());
}

Operation *CgcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}
