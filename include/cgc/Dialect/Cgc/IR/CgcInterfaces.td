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

def Cgc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let description = [{
    The op's gradient rule, for reverse-mode differentiation
    (`--cgc-build-train-step`): given the gradient of the loss with respect
    to each result (null where a result does not reach the loss), builds at
    the builder's insertion point the ops that compute the gradient with
    respect to each operand in `wanted` (null for the others, and for
    operands that carry none: indices, shapes, conditions). A rule that
    cannot handle a configuration of its op emits an error on the op that
    says why and fails. The rules are attached to the ops in
    CgcGradients.cpp; an op without one is reported by the pass, naming its
    ONNX node.
  }];
  let cppNamespace = "::cgc";
  let methods = [
    InterfaceMethod<
      /*desc=*/"Builds the operands' gradients from the results' gradients.",
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"buildGradients",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::llvm::ArrayRef<::mlir::Value>":$resultGradients,
                    "::llvm::ArrayRef<bool>":$wanted,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>
  ];
}

#endif // CGC_INTERFACES_TD
