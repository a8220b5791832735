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

// An op that computes every result element from the elements at the same
// position of its operands after numpy (multidirectional) broadcasting: unary
// ops, binary ops, `where`, `cast` and predicates. Fusion chains such ops into
// one kernel, codegen inlines them as expressions and the bucket padding
// check follows the broadcast; the C++ class is cgc::Elementwise (CgcTraits.h).
def Cgc_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::cgc";
}

def Cgc_ReductionOpInterface : OpInterface<"ReductionOpInterface"> {
  let description = [{
    An op that combines the elements of its input over `axes` with one
    associative operation (its kind, a cgc::ReductionKind), keeping the
    reduced dims with size 1 when `keepdims` is set. Fusion anchors a
    reduce group on it (the elementwise ops before it are its prologue),
    codegen and the interpreter dispatch on the kind, and the bucket padding
    check follows the axes.
  }];
  let cppNamespace = "::cgc";
  let methods = [
    StaticInterfaceMethod<
      /*desc=*/"How the elements are combined.",
      /*retTy=*/"::cgc::ReductionKind",
      /*methodName=*/"getReductionKind">,
    InterfaceMethod<
      /*desc=*/"The reduced axes of the input, normalized and sorted.",
      /*retTy=*/"::llvm::ArrayRef<int64_t>",
      /*methodName=*/"getAxes",
      /*args=*/(ins),
      /*methodBody=*/[{ return $_op.getAxes(); }]>,
    InterfaceMethod<
      /*desc=*/"Whether the reduced axes stay in the result with size 1.",
      /*retTy=*/"bool",
      /*methodName=*/"getKeepdims",
      /*args=*/(ins),
      /*methodBody=*/[{ return $_op.getKeepdims(); }]>
  ];
}

#endif // CGC_INTERFACES_TD
