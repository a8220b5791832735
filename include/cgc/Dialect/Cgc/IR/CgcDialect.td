//===- CgcDialect.td - cgc tensor dialect ------------------*- tablegen -*-===//
//
// The `cgc` dialect is the compiler's view of an ONNX program: value-semantic
// ops on ranked tensors, one op per ONNX concept (composites decompose into
// these at import). Shapes are fully inferred; a `?` dim is a symbolic dim that
// has not been bound yet.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_TD
#define CGC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Cgc_Dialect : Dialect {
  let name = "cgc";
  let summary = "Value-semantic tensor ops imported from ONNX";
  let description = [{
    The `cgc` dialect holds an ONNX model after import. Every op works on
    ranked tensors and infers its result type from its operands and
    attributes, so the verifier is also the shape checker. Weights are
    `dense_resource` constants so that printing a large model stays small.
    Ops that cannot live in a CUDA graph (data-dependent shapes, control
    flow) say so through the `CaptureSafetyOpInterface`.
  }];
  let cppNamespace = "::cgc";
  let dependentDialects = ["::mlir::func::FuncDialect"];
  // Attributes stay in the attribute dictionary so the importer can run
  // shape inference on (operands, attributes) before creating an op and
  // report a failure as a diagnostic instead of a builder assertion.
  let usePropertiesForAttributes = 0;
  // #cgc.target and #cgc.kernel_config (CgcAttrs.td).
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // CGC_DIALECT_TD
