//===- CgcOps.td - cgc tensor ops --------------------------*- tablegen -*-===//
//
// Op families share a tablegen class so that the ~120 ops stay declarative:
// the class fixes traits, operands and the assembly format, and the C++ side
// supplies one shape-inference function per family (CgcOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_OPS_TD
#define CGC_OPS_TD

include "cgc/Dialect/Cgc/IR/CgcAttrs.td"
include "cgc/Dialect/Cgc/IR/CgcDialect.td"
include "cgc/Dialect/Cgc/IR/CgcInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Cgc_Tensor : RankedTensorOf<[AnyFloat, AnyInteger]>;
def Cgc_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Cgc_BoolTensor : RankedTensorOf<[I1]>;
def Cgc_IntTensor : RankedTensorOf<[AnyInteger]>;
def Cgc_IndexTensor : RankedTensorOf<[I32, I64]>;
def Cgc_I64Tensor : RankedTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Cgc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Cgc_Dialect, mnemonic,
         !listconcat(traits, [Cgc_CaptureSafetyOpInterface])>;

// An op that must stay outside CUDA graphs. Its reason is returned by
// getCaptureUnsafeReason(), defined in CgcOps.cpp.
class Cgc_EagerOp<string mnemonic, list<Trait> traits = []>
    : Op<Cgc_Dialect, mnemonic,
         !listconcat(traits, [DeclareOpInterfaceMethods<
             Cgc_CaptureSafetyOpInterface, ["getCaptureUnsafeReason"]>])>;

// Elementwise op whose result has the operand's type.
class Cgc_UnaryOp<string mnemonic, string what,
                  Type tensorType = Cgc_FloatTensor>
    : Cgc_Op<mnemonic, [Pure, SameOperandsAndResultType, Cgc_Elementwise]> {
  let summary = "elementwise " # what;
  let description = "Applies " # what # " to every element.\n\n"
    "```mlir\n%y = cgc." # mnemonic # " %x : tensor<2x3xf32>\n```";
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

// Elementwise float op with scalar parameters given as attributes.
class Cgc_UnaryParamOp<string mnemonic, string what, dag params>
    : Cgc_Op<mnemonic, [Pure, SameOperandsAndResultType, Cgc_Elementwise]> {
  let summary = "elementwise " # what;
  let description = "Applies " # what # " to every element; the ONNX "
    "attributes of the same name are its parameters.\n\n"
    "```mlir\n%y = cgc." # mnemonic # " %x {...} : tensor<2x3xf32>\n```";
  let arguments = !con((ins Cgc_FloatTensor:$input), params);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

// Elementwise predicate: result is i1 with the operand's shape.
class Cgc_PredicateOp<string mnemonic, string what, Type operandType,
                      dag params = (ins)>
    : Cgc_Op<mnemonic, [Pure, SameOperandsAndResultShape, Cgc_Elementwise]> {
  let summary = "elementwise " # what # " (result is i1)";
  let description = "Tests every element for " # what # ".\n\n"
    "```mlir\n%b = cgc." # mnemonic # " %x : tensor<4xf32> -> tensor<4xi1>\n```";
  let arguments = !con((ins operandType:$input), params);
  let results = (outs Cgc_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

// Binary elementwise op with numpy (multidirectional) broadcasting. Operand
// element types must match; the result element type is the operands' or i1.
class Cgc_BinaryOp<string mnemonic, string what, Type operandType,
                   dag params = (ins)>
    : Cgc_Op<mnemonic, [Pure, InferTypeOpAdaptor, Cgc_Elementwise]> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = "Computes " # what # " of the broadcast operands.\n\n"
    "```mlir\n%z = cgc." # mnemonic # " %x, %y : tensor<2x3xf32>, tensor<3xf32>\n```";
  let arguments = !con((ins operandType:$lhs, operandType:$rhs), params);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

// Reduction over `axes` (normalized and sorted; an empty list reduces
// nothing, which the importer never emits). `kind` names the
// cgc::ReductionKind enumerator the op reports through its interface.
class Cgc_ReduceOp<string mnemonic, string what, string kind,
                   Type tensorType = Cgc_Tensor>
    : Cgc_Op<mnemonic, [Pure, InferTypeOpAdaptor, Cgc_ReductionOpInterface]> {
  let extraClassDeclaration = [{
    static ::cgc::ReductionKind getReductionKind() {
      return ::cgc::ReductionKind::}] # kind # [{;
    }
  }];
  let summary = what # " over the given axes";
  let description = "Reduces `input` with " # what # " over `axes`; "
    "`keepdims` keeps the reduced axes with size 1.\n\n"
    "```mlir\n%r = cgc." # mnemonic # " %x {axes = array<i64: 1>, keepdims = true} : tensor<2x3xf32>\n```";
  let arguments = (ins tensorType:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs tensorType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

// Normalization along trailing or channel axes; result type is the input's.
class Cgc_NormOp<string mnemonic, string what, dag args>
    : Cgc_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = what;
  let arguments = args;
  let results = (outs Cgc_FloatTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Cgc_ConstantOp : Cgc_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "output"]>]> {
  let summary = "constant tensor (weights are dense_resource)";
  let description = [{
    A constant tensor. Initializers of the ONNX graph are imported as
    `dense_resource` blobs so that the printed IR stays small; small
    constants (shapes, scalars) are inline `dense` attributes.

    ```mlir
    %w = cgc.constant dense_resource<fc1.weight> : tensor<512x512xf32>
    %s = cgc.constant dense<[1, 512]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Op families, in this order (the generated docs list ops in it)
//===----------------------------------------------------------------------===//

include "cgc/Dialect/Cgc/IR/CgcElementwiseOps.td"
include "cgc/Dialect/Cgc/IR/CgcComputeOps.td"
include "cgc/Dialect/Cgc/IR/CgcReductionOps.td"
include "cgc/Dialect/Cgc/IR/CgcDataMovementOps.td"
include "cgc/Dialect/Cgc/IR/CgcStructureOps.td"
include "cgc/Dialect/Cgc/IR/CgcParallelOps.td"

#endif // CGC_OPS_TD
