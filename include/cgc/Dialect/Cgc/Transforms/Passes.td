//===- Passes.td - cgc passes ------------------------------*- tablegen -*-===//

#ifndef CGC_PASSES_TD
#define CGC_PASSES_TD

include "mlir/Pass/PassBase.td"

def CgcCheckStaticShapes : Pass<"cgc-check-static-shapes", "mlir::ModuleOp"> {
  let summary = "Require every tensor to have a static shape";
  let description = [{
    Graph islands need fixed shapes. This pass reports every value whose
    type still has an unbound symbolic dim (`?`), naming the op and, for
    function arguments, the ONNX symbolic dim names, so the user knows which
    `--dim NAME=V` to add. Ops that must stay eager (data-dependent shapes)
    and everything inside their regions are exempt.
  }];
}

#endif // CGC_PASSES_TD
