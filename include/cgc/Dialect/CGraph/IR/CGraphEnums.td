//===- CGraphEnums.td - cgraph enum attributes -------------*- tablegen -*-===//
//
// Enums passed between the conversion and the package printer: typed, so a
// misspelt kind is a parse error rather than a string the printer does not
// recognize.
//
//===----------------------------------------------------------------------===//

#ifndef CGRAPH_ENUMS_TD
#define CGRAPH_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def CGraph_ConditionKind : I32EnumAttr<"ConditionKind",
    "what a conditional node does with its condition", [
      I32EnumAttrCase<"If", 0, "if">,
      I32EnumAttrCase<"While", 1, "while">
    ]> {
  let cppNamespace = "::cgc::cgraph";
  let genSpecializedAttr = 0;
}

#endif // CGRAPH_ENUMS_TD
