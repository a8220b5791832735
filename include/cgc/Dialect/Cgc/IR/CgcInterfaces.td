//===- CgcInterfaces.td - cgc op interfaces ----------------*- tablegen -*-===//

#ifndef CGC_INTERFACES_TD
#define CGC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Cgc_CaptureSafetyOpInterface : OpInterface<"CaptureSafetyOpInterface"> {
  let description = [{
    Says whether an op can run inside a CUDA graph, where shapes, control flow
    and addresses are fixed when the graph is built. An op that cannot returns
    a short human-readable reason, used verbatim by `--explain` and remarks.
  }];
  let cppNamespace = "::cgc";
  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns an empty string if the op is capture-safe, else why not.",
      /*retTy=*/"::llvm::StringRef",
      /*methodName=*/"getCaptureUnsafeReason",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{ return ""; }]>
  ];
}

#endif // CGC_INTERFACES_TD
