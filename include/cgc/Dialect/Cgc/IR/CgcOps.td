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
    : Cgc_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = "Applies " # what # " to every element.\n\n"
    "```mlir\n%y = cgc." # mnemonic # " %x : tensor<2x3xf32>\n```";
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

// Elementwise float op with scalar parameters given as attributes.
class Cgc_UnaryParamOp<string mnemonic, string what, dag params>
    : Cgc_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
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
    : Cgc_Op<mnemonic, [Pure, SameOperandsAndResultShape]> {
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
    : Cgc_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = "Computes " # what # " of the broadcast operands.\n\n"
    "```mlir\n%z = cgc." # mnemonic # " %x, %y : tensor<2x3xf32>, tensor<3xf32>\n```";
  let arguments = !con((ins operandType:$lhs, operandType:$rhs), params);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

// Reduction over `axes` (normalized and sorted; an empty list reduces
// nothing, which the importer never emits).
class Cgc_ReduceOp<string mnemonic, string what, Type tensorType = Cgc_Tensor>
    : Cgc_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
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
// Elementwise unary
//===----------------------------------------------------------------------===//

def Cgc_AbsOp : Cgc_UnaryOp<"abs", "absolute value", Cgc_Tensor>;
def Cgc_NegOp : Cgc_UnaryOp<"neg", "negation", Cgc_Tensor>;
def Cgc_SignOp : Cgc_UnaryOp<"sign", "sign (-1, 0 or 1)", Cgc_Tensor>;
def Cgc_ReluOp : Cgc_UnaryOp<"relu", "max(x, 0)", Cgc_Tensor>;
def Cgc_ExpOp : Cgc_UnaryOp<"exp", "e^x">;
def Cgc_LogOp : Cgc_UnaryOp<"log", "natural logarithm">;
def Cgc_SqrtOp : Cgc_UnaryOp<"sqrt", "square root">;
def Cgc_ReciprocalOp : Cgc_UnaryOp<"reciprocal", "1/x">;
def Cgc_SigmoidOp : Cgc_UnaryOp<"sigmoid", "1/(1+e^-x)">;
def Cgc_TanhOp : Cgc_UnaryOp<"tanh", "hyperbolic tangent">;
def Cgc_ErfOp : Cgc_UnaryOp<"erf", "the error function">;
def Cgc_SinOp : Cgc_UnaryOp<"sin", "sine">;
def Cgc_CosOp : Cgc_UnaryOp<"cos", "cosine">;
def Cgc_TanOp : Cgc_UnaryOp<"tan", "tangent">;
def Cgc_AsinOp : Cgc_UnaryOp<"asin", "arc sine">;
def Cgc_AcosOp : Cgc_UnaryOp<"acos", "arc cosine">;
def Cgc_AtanOp : Cgc_UnaryOp<"atan", "arc tangent">;
def Cgc_SinhOp : Cgc_UnaryOp<"sinh", "hyperbolic sine">;
def Cgc_CoshOp : Cgc_UnaryOp<"cosh", "hyperbolic cosine">;
def Cgc_AsinhOp : Cgc_UnaryOp<"asinh", "inverse hyperbolic sine">;
def Cgc_AcoshOp : Cgc_UnaryOp<"acosh", "inverse hyperbolic cosine">;
def Cgc_AtanhOp : Cgc_UnaryOp<"atanh", "inverse hyperbolic tangent">;
def Cgc_FloorOp : Cgc_UnaryOp<"floor", "rounding down">;
def Cgc_CeilOp : Cgc_UnaryOp<"ceil", "rounding up">;
def Cgc_RoundOp : Cgc_UnaryOp<"round", "rounding half to even">;
def Cgc_SoftplusOp : Cgc_UnaryOp<"softplus", "log(1+e^x)">;
def Cgc_SoftsignOp : Cgc_UnaryOp<"softsign", "x/(1+|x|)">;
def Cgc_MishOp : Cgc_UnaryOp<"mish", "x*tanh(softplus(x))">;
def Cgc_HardSwishOp : Cgc_UnaryOp<"hard_swish", "x*max(0,min(1,x/6+1/2))">;
def Cgc_NotOp : Cgc_UnaryOp<"not", "logical negation", Cgc_BoolTensor>;
def Cgc_BitwiseNotOp : Cgc_UnaryOp<"bitwise_not", "bitwise negation", Cgc_IntTensor>;

def Cgc_LeakyReluOp : Cgc_UnaryParamOp<"leaky_relu", "x if x>=0 else alpha*x",
    (ins F64Attr:$alpha)>;
def Cgc_EluOp : Cgc_UnaryParamOp<"elu", "x if x>0 else alpha*(e^x-1)",
    (ins F64Attr:$alpha)>;
def Cgc_CeluOp : Cgc_UnaryParamOp<"celu", "max(0,x)+min(0,alpha*(e^(x/alpha)-1))",
    (ins F64Attr:$alpha)>;
def Cgc_SeluOp : Cgc_UnaryParamOp<"selu", "gamma*(x if x>0 else alpha*(e^x-1))",
    (ins F64Attr:$alpha, F64Attr:$gamma)>;
def Cgc_ThresholdedReluOp : Cgc_UnaryParamOp<"thresholded_relu",
    "x if x>alpha else 0", (ins F64Attr:$alpha)>;
def Cgc_HardSigmoidOp : Cgc_UnaryParamOp<"hard_sigmoid",
    "max(0,min(1,alpha*x+beta))", (ins F64Attr:$alpha, F64Attr:$beta)>;
def Cgc_ShrinkOp : Cgc_UnaryParamOp<"shrink",
    "x+bias if x<-lambd, x-bias if x>lambd, else 0",
    (ins F64Attr:$bias, F64Attr:$lambd)>;
def Cgc_GeluOp : Cgc_UnaryParamOp<"gelu",
    "x*Phi(x), exactly (approximate=none) or with the tanh formula",
    (ins DefaultValuedStrAttr<StrAttr, "none">:$approximate)>;

def Cgc_ClipOp : Cgc_Op<"clip", [Pure, SameOperandsAndResultType]> {
  let summary = "clamp every element to [min, max]";
  let description = [{
    Clamps with constant bounds (ONNX Clip with constant min/max inputs or
    attributes). A missing bound is absent.

    ```mlir
    %y = cgc.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def Cgc_IsNaNOp : Cgc_PredicateOp<"is_nan", "NaN", Cgc_FloatTensor>;
def Cgc_IsInfOp : Cgc_PredicateOp<"is_inf", "infinity", Cgc_FloatTensor,
    (ins BoolAttr:$detect_positive, BoolAttr:$detect_negative)>;

def Cgc_CastOp : Cgc_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "element type conversion";
  let description = [{
    Converts every element to the result's element type with ONNX Cast
    semantics (float to int truncates toward zero; to bool tests != 0).

    ```mlir
    %y = cgc.cast %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

//===----------------------------------------------------------------------===//
// Elementwise binary and ternary
//===----------------------------------------------------------------------===//

def Cgc_AddOp : Cgc_BinaryOp<"add", "a + b", Cgc_Tensor>;
def Cgc_SubOp : Cgc_BinaryOp<"sub", "a - b", Cgc_Tensor>;
def Cgc_MulOp : Cgc_BinaryOp<"mul", "a * b", Cgc_Tensor>;
def Cgc_DivOp : Cgc_BinaryOp<"div", "a / b (integers truncate)", Cgc_Tensor>;
def Cgc_PowOp : Cgc_BinaryOp<"pow", "a ^ b", Cgc_Tensor>;
def Cgc_MaxOp : Cgc_BinaryOp<"max", "max(a, b)", Cgc_Tensor>;
def Cgc_MinOp : Cgc_BinaryOp<"min", "min(a, b)", Cgc_Tensor>;
def Cgc_ModOp : Cgc_BinaryOp<"mod", "a mod b (fmod: C fmod, else Python %)",
    Cgc_Tensor, (ins BoolAttr:$fmod)>;
def Cgc_PReluOp : Cgc_BinaryOp<"prelu", "a if a>=0 else slope*a", Cgc_Tensor>;
def Cgc_BitShiftOp : Cgc_BinaryOp<"bit_shift", "a << b or a >> b", Cgc_IntTensor,
    (ins BoolAttr:$left)>;
def Cgc_AndOp : Cgc_BinaryOp<"and", "logical and", Cgc_BoolTensor>;
def Cgc_OrOp : Cgc_BinaryOp<"or", "logical or", Cgc_BoolTensor>;
def Cgc_XorOp : Cgc_BinaryOp<"xor", "logical xor", Cgc_BoolTensor>;
def Cgc_EqualOp : Cgc_BinaryOp<"equal", "a == b (result i1)", Cgc_Tensor>;
def Cgc_LessOp : Cgc_BinaryOp<"less", "a < b (result i1)", Cgc_Tensor>;
def Cgc_LessEqualOp : Cgc_BinaryOp<"less_equal", "a <= b (result i1)", Cgc_Tensor>;
def Cgc_GreaterOp : Cgc_BinaryOp<"greater", "a > b (result i1)", Cgc_Tensor>;
def Cgc_GreaterEqualOp : Cgc_BinaryOp<"greater_equal", "a >= b (result i1)", Cgc_Tensor>;

def Cgc_WhereOp : Cgc_Op<"where", [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise select with broadcasting";
  let description = [{
    `cond ? x : y` elementwise after broadcasting all three operands.

    ```mlir
    %z = cgc.where %c, %x, %y : tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Cgc_BoolTensor:$condition, Cgc_Tensor:$true_value,
                       Cgc_Tensor:$false_value);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    type($condition) `,` type($true_value) `,` type($false_value)
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Cgc_MatMulOp : Cgc_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "matrix product with numpy semantics";
  let description = [{
    ONNX MatMul: 1-D operands are promoted and the promoted dim dropped, the
    batch dims broadcast.

    ```mlir
    %c = cgc.matmul %a, %b : tensor<8x16x32xf32>, tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$lhs, Cgc_Tensor:$rhs);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Cgc_GemmOp : Cgc_Op<"gemm", [Pure, InferTypeOpAdaptor]> {
  let summary = "alpha * op(A) * op(B) + beta * C";
  let description = [{
    ONNX Gemm on 2-D operands; `C` is optional and unidirectionally broadcast
    to the result.

    ```mlir
    %y = cgc.gemm %x, %w, %b {trans_b = true} : (tensor<1x512xf32>, tensor<256x512xf32>, tensor<256xf32>) -> tensor<1x256xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$a, Cgc_Tensor:$b, Optional<Cgc_Tensor>:$c,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
}

def Cgc_EinsumOp : Cgc_Op<"einsum", [Pure]> {
  let summary = "Einstein summation";
  let description = [{
    ONNX Einsum with an explicit or implicit output. The equation is kept as
    written (spaces removed); the result type is inferred at import.

    ```mlir
    %c = cgc.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Cgc_Tensor>:$inputs, StrAttr:$equation);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW, any number of spatial dims)
//===----------------------------------------------------------------------===//

def Cgc_ConvOp : Cgc_Op<"conv", [Pure, InferTypeOpAdaptor]> {
  let summary = "grouped N-d convolution";
  let description = [{
    ONNX Conv with explicit pads (`auto_pad` is resolved at import). `pads`
    holds the begin pads of every spatial dim, then the end pads.

    ```mlir
    %y = cgc.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, Cgc_FloatTensor:$weight,
                       Optional<Cgc_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Cgc_ConvTransposeOp : Cgc_Op<"conv_transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "grouped N-d transposed convolution";
  let description = [{
    ONNX ConvTranspose with explicit pads and output padding (an explicit
    `output_shape` is turned into pads at import).

    ```mlir
    %y = cgc.conv_transpose %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 1 : i64} : (tensor<1x4x8xf32>, tensor<4x2x3xf32>) -> tensor<1x2x17xf32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, Cgc_FloatTensor:$weight,
                       Optional<Cgc_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding, I64Attr:$group);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Cgc_MaxPoolOp : Cgc_Op<"max_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d max pooling";
  let description = [{
    ONNX MaxPool (values only) with explicit pads; `ceil_mode` rounds the
    output size up.

    ```mlir
    %y = cgc.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x64x111x111xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_AveragePoolOp : Cgc_Op<"average_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d average pooling";
  let description = [{
    ONNX AveragePool with explicit pads; `count_include_pad` divides by the
    full window instead of the valid elements.

    ```mlir
    %y = cgc.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<1x8x4x4xf32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                       BoolAttr:$count_include_pad);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Cgc_ReduceSumOp : Cgc_ReduceOp<"reduce_sum", "sum">;
def Cgc_ReduceMeanOp : Cgc_ReduceOp<"reduce_mean", "mean">;
def Cgc_ReduceMaxOp : Cgc_ReduceOp<"reduce_max", "maximum">;
def Cgc_ReduceMinOp : Cgc_ReduceOp<"reduce_min", "minimum">;
def Cgc_ReduceProdOp : Cgc_ReduceOp<"reduce_prod", "product">;
def Cgc_ReduceL1Op : Cgc_ReduceOp<"reduce_l1", "sum of absolute values">;
def Cgc_ReduceL2Op : Cgc_ReduceOp<"reduce_l2", "Euclidean norm">;
def Cgc_ReduceSumSquareOp : Cgc_ReduceOp<"reduce_sum_square", "sum of squares">;
def Cgc_ReduceLogSumOp : Cgc_ReduceOp<"reduce_log_sum", "log of the sum", Cgc_FloatTensor>;
def Cgc_ReduceLogSumExpOp : Cgc_ReduceOp<"reduce_log_sum_exp", "log-sum-exp", Cgc_FloatTensor>;

class Cgc_ArgReduceOp<string mnemonic, string what>
    : Cgc_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "index of the " # what # " along an axis";
  let description = "ONNX Arg" # what # ": i64 indices along `axis`; ties "
    "give the first index unless `select_last_index`.\n\n"
    "```mlir\n%i = cgc." # mnemonic # " %x {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<2x3xf32>\n```";
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$axis, BoolAttr:$keepdims,
                       BoolAttr:$select_last_index);
  let results = (outs Cgc_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Cgc_ArgMaxOp : Cgc_ArgReduceOp<"arg_max", "maximum">;
def Cgc_ArgMinOp : Cgc_ArgReduceOp<"arg_min", "minimum">;

def Cgc_CumSumOp : Cgc_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "cumulative sum along an axis";
  let description = [{
    ONNX CumSum with a constant axis.

    ```mlir
    %y = cgc.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false} : tensor<5xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$axis, BoolAttr:$exclusive,
                       BoolAttr:$reverse);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def Cgc_TopKOp : Cgc_Op<"topk", [Pure, InferTypeOpAdaptor]> {
  let summary = "k largest or smallest elements along an axis";
  let description = [{
    ONNX TopK with a constant k; returns values and i64 indices. Ties keep
    the lower index first.

    ```mlir
    %v, %i = cgc.topk %x {k = 2 : i64, axis = 1 : i64, largest = true, sorted = true} : tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$k, I64Attr:$axis,
                       BoolAttr:$largest, BoolAttr:$sorted);
  let results = (outs Cgc_Tensor:$values, Cgc_I64Tensor:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Normalizations and softmax
//===----------------------------------------------------------------------===//

class Cgc_SoftmaxLikeOp<string mnemonic, string what>
    : Cgc_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what # " along one axis";
  let description = "Computes " # what # " along `axis` (opset-13 "
    "semantics; older opsets are rewritten at import).\n\n"
    "```mlir\n%y = cgc." # mnemonic # " %x {axis = 1 : i64} : tensor<2x10xf32>\n```";
  let arguments = (ins Cgc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}
def Cgc_SoftmaxOp : Cgc_SoftmaxLikeOp<"softmax", "softmax">;
def Cgc_LogSoftmaxOp : Cgc_SoftmaxLikeOp<"log_softmax", "log of softmax">;
def Cgc_HardmaxOp : Cgc_SoftmaxLikeOp<"hardmax", "one-hot of the first maximum">;

def Cgc_LayerNormOp : Cgc_NormOp<"layer_norm", "layer normalization",
    (ins Cgc_FloatTensor:$input, Cgc_FloatTensor:$scale,
         Optional<Cgc_FloatTensor>:$bias, I64Attr:$axis, F64Attr:$epsilon)> {
  let description = [{
    Normalizes over the axes from `axis` to the last, then applies `scale`
    and `bias` (broadcast to those axes).

    ```mlir
    %y = cgc.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<1x512xf32>
    ```
  }];
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Cgc_BatchNormOp : Cgc_NormOp<"batch_norm", "batch normalization (inference)",
    (ins Cgc_FloatTensor:$input, Cgc_FloatTensor:$scale, Cgc_FloatTensor:$bias,
         Cgc_FloatTensor:$mean, Cgc_FloatTensor:$variance, F64Attr:$epsilon)> {
  let description = [{
    `scale * (x - mean) / sqrt(variance + epsilon) + bias` per channel (dim 1).

    ```mlir
    %y = cgc.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Cgc_InstanceNormOp : Cgc_NormOp<"instance_norm", "instance normalization",
    (ins Cgc_FloatTensor:$input, Cgc_FloatTensor:$scale, Cgc_FloatTensor:$bias,
         F64Attr:$epsilon)> {
  let description = [{
    Normalizes each (n, c) slice over the spatial dims, then applies the
    per-channel `scale` and `bias`.

    ```mlir
    %y = cgc.instance_norm %x, %s, %b {epsilon = 1.0e-05 : f64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Cgc_LRNOp : Cgc_Op<"lrn", [Pure, SameOperandsAndResultType]> {
  let summary = "local response normalization across channels";
  let description = [{
    ONNX LRN: `x / (bias + alpha/size * sum(x^2 over size channels))^beta`.

    ```mlir
    %y = cgc.lrn %x {size = 3 : i64, alpha = 1.0e-4 : f64, beta = 0.75 : f64, bias = 1.0 : f64} : tensor<1x8x4x4xf32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, I64Attr:$size, F64Attr:$alpha,
                       F64Attr:$beta, F64Attr:$bias);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Cgc_ReshapeOp : Cgc_Op<"reshape", [Pure]> {
  let summary = "reinterpret the shape of a tensor";
  let description = [{
    The result type is the new shape. When the target shape was only known
    at run time (unbound symbolic dims) the shape tensor stays an operand,
    with ONNX Reshape semantics for its entries: -1 is inferred and 0 copies
    the input's dim unless `allowzero` is set.

    ```mlir
    %y = cgc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Optional<Cgc_I64Tensor>:$shape,
                       UnitAttr:$allowzero);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input (`,` $shape^ `:` type($shape))? attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Cgc_ExpandOp : Cgc_Op<"expand", [Pure]> {
  let summary = "broadcast to a larger shape";
  let description = [{
    ONNX Expand; the result type holds the broadcast shape.

    ```mlir
    %y = cgc.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Cgc_TransposeOp : Cgc_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permute dims";
  let description = [{
    Result dim `i` is input dim `perm[i]`.

    ```mlir
    %y = cgc.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_ConcatOp : Cgc_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "join tensors along an axis";
  let description = [{
    ```mlir
    %y = cgc.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Cgc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

def Cgc_SplitOp : Cgc_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "split a tensor along an axis";
  let description = [{
    ```mlir
    %a, %b = cgc.split %x {axis = 0 : i64, sizes = array<i64: 2, 4>} : tensor<6xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Cgc_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_SliceOp : Cgc_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "strided slice with constant bounds";
  let description = [{
    One start, end and step per dim of the input, already clamped at
    import (a negative step walks backwards; `end` may be -1 then).

    ```mlir
    %y = cgc.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_GatherOp : Cgc_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "gather slices along an axis";
  let description = [{
    ONNX Gather; negative indices count from the end of `axis`.

    ```mlir
    %y = cgc.gather %table, %ids {axis = 0 : i64} : tensor<100x16xf32>, tensor<1x8xi64>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Cgc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` type($input) `,` type($indices)";
}

def Cgc_GatherElementsOp : Cgc_Op<"gather_elements", [Pure, InferTypeOpAdaptor]> {
  let summary = "gather single elements along an axis";
  let description = [{
    ```mlir
    %y = cgc.gather_elements %x, %i {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi64>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Cgc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` type($input) `,` type($indices)";
}

def Cgc_GatherNDOp : Cgc_Op<"gather_nd", [Pure, InferTypeOpAdaptor]> {
  let summary = "gather slices by index tuples";
  let description = [{
    ```mlir
    %y = cgc.gather_nd %x, %i {batch_dims = 0 : i64} : tensor<2x2xf32>, tensor<2x2xi64>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Cgc_I64Tensor:$indices, I64Attr:$batch_dims);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` type($input) `,` type($indices)";
}

def Cgc_ScatterElementsOp : Cgc_Op<"scatter_elements", [Pure, InferTypeOpAdaptor]> {
  let summary = "scatter single elements along an axis";
  let description = [{
    ONNX ScatterElements; `reduction` is none, add, mul, max or min.

    ```mlir
    %y = cgc.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Cgc_IndexTensor:$indices,
                       Cgc_Tensor:$updates, I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input `,` $indices `,` $updates attr-dict `:` type($input) `,` type($indices) `,` type($updates)";
  let hasVerifier = 1;
}

def Cgc_ScatterNDOp : Cgc_Op<"scatter_nd", [Pure, InferTypeOpAdaptor]> {
  let summary = "scatter slices by index tuples";
  let description = [{
    ```mlir
    %y = cgc.scatter_nd %x, %i, %u {reduction = "none"} : tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Cgc_I64Tensor:$indices,
                       Cgc_Tensor:$updates, StrAttr:$reduction);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input `,` $indices `,` $updates attr-dict `:` type($input) `,` type($indices) `,` type($updates)";
  let hasVerifier = 1;
}

def Cgc_TileOp : Cgc_Op<"tile", [Pure, InferTypeOpAdaptor]> {
  let summary = "repeat a tensor along every dim";
  let description = [{
    ```mlir
    %y = cgc.tile %x {repeats = array<i64: 2, 1>} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_PadOp : Cgc_Op<"pad", [Pure, InferTypeOpAdaptor]> {
  let summary = "pad with a constant, edge or reflection";
  let description = [{
    `pads` holds the begin pads of every dim, then the end pads; negative
    pads crop. `mode` is constant, reflect, edge or wrap.

    ```mlir
    %y = cgc.pad %x {pads = array<i64: 0, 1, 0, 1>, mode = "constant", value = 0.0 : f64} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, DenseI64ArrayAttr:$pads, StrAttr:$mode,
                       F64Attr:$value);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_DepthToSpaceOp : Cgc_Op<"depth_to_space", [Pure, InferTypeOpAdaptor]> {
  let summary = "move channel blocks into spatial blocks";
  let description = [{
    ```mlir
    %y = cgc.depth_to_space %x {blocksize = 2 : i64, mode = "DCR"} : tensor<1x8x2x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$blocksize, StrAttr:$mode);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_SpaceToDepthOp : Cgc_Op<"space_to_depth", [Pure, InferTypeOpAdaptor]> {
  let summary = "move spatial blocks into channels";
  let description = [{
    ```mlir
    %y = cgc.space_to_depth %x {blocksize = 2 : i64} : tensor<1x2x4x6xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$blocksize);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cgc_ResizeOp : Cgc_Op<"resize", [Pure]> {
  let summary = "resize by interpolation";
  let description = [{
    ONNX Resize (and Upsample) with the output shape fixed at import. The
    scale per dim (output/input unless given) drives the coordinate
    transformation.

    ```mlir
    %y = cgc.resize %x {scales = [1.0, 1.0, 2.0, 2.0], mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, F64ArrayAttr:$scales, StrAttr:$mode,
                       StrAttr:$coordinate_transformation_mode,
                       StrAttr:$nearest_mode, F64Attr:$cubic_coeff_a,
                       BoolAttr:$exclude_outside, F64Attr:$extrapolation_value);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Cgc_TriluOp : Cgc_Op<"trilu", [Pure, SameOperandsAndResultType]> {
  let summary = "keep the upper or lower triangle of the last two dims";
  let description = [{
    ```mlir
    %y = cgc.trilu %x {upper = true, k = 0 : i64} : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, BoolAttr:$upper, I64Attr:$k);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def Cgc_OneHotOp : Cgc_Op<"one_hot", [Pure]> {
  let summary = "one-hot encoding";
  let description = [{
    ONNX OneHot with constant depth and values; negative indices count from
    `depth`, out-of-range ones give an all-off row.

    ```mlir
    %y = cgc.one_hot %i {depth = 4 : i64, axis = -1 : i64, off_value = 0.0 : f64, on_value = 1.0 : f64} : tensor<3xi64> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$indices, I64Attr:$depth, I64Attr:$axis,
                       F64Attr:$off_value, F64Attr:$on_value);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$indices attr-dict `:` type($indices) `->` type($output)";
  let hasVerifier = 1;
}

def Cgc_NegativeLogLikelihoodLossOp
    : Cgc_Op<"nll_loss", [Pure]> {
  let summary = "negative log-likelihood loss";
  let description = [{
    ONNX NegativeLogLikelihoodLoss; `reduction` is none, sum or mean.

    ```mlir
    %l = cgc.nll_loss %x, %t {reduction = "mean", ignore_index = -100 : i64} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, Cgc_IndexTensor:$target,
                       Optional<Cgc_FloatTensor>:$weight, StrAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input `,` $target (`,` $weight^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape queries (folded when shapes are static)
//===----------------------------------------------------------------------===//

def Cgc_ShapeOp : Cgc_Op<"shape", [Pure, InferTypeOpAdaptor]> {
  let summary = "the shape of a tensor as i64";
  let description = [{
    ONNX Shape over `[start, end)`. Folds to a constant when those dims are
    static.

    ```mlir
    %s = cgc.shape %x {start = 0 : i64, end = 2 : i64} : tensor<?x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs Cgc_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Cgc_SizeOp : Cgc_Op<"size", [Pure, InferTypeOpAdaptor]> {
  let summary = "the element count of a tensor as i64";
  let description = [{
    ```mlir
    %n = cgc.size %x : tensor<?x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input);
  let results = (outs Cgc_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Eager ops: data-dependent shapes and control flow
//===----------------------------------------------------------------------===//

def Cgc_NonZeroOp : Cgc_EagerOp<"nonzero", [Pure]> {
  let summary = "indices of the non-zero elements (data-dependent shape)";
  let description = [{
    Result is `[rank, count]` i64 where count is only known at run time.

    ```mlir
    %i = cgc.nonzero %x : tensor<4x16xf32> -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input);
  let results = (outs Cgc_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Cgc_CompressOp : Cgc_EagerOp<"compress", [Pure]> {
  let summary = "select slices where a condition holds (data-dependent shape)";
  let description = [{
    ONNX Compress; without `axis` the input is flattened first.

    ```mlir
    %y = cgc.compress %x, %c {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<?x2xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Cgc_BoolTensor:$condition,
                       OptionalAttr<I64Attr>:$axis);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input `,` $condition attr-dict `:` functional-type(operands, results)";
}

def Cgc_UniqueOp : Cgc_EagerOp<"unique", [Pure]> {
  let summary = "unique elements or slices (data-dependent shape)";
  let description = [{
    ONNX Unique: values, first-occurrence indices, inverse indices, counts.

    ```mlir
    %y, %i, %inv, %c = cgc.unique %x {sorted = true} : tensor<6xf32> -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, OptionalAttr<I64Attr>:$axis,
                       BoolAttr:$sorted);
  let results = (outs Cgc_Tensor:$output, Cgc_I64Tensor:$indices,
                      Cgc_I64Tensor:$inverse_indices, Cgc_I64Tensor:$counts);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` `(` type(results) `)`";
}

def Cgc_RangeOp : Cgc_EagerOp<"range", [Pure]> {
  let summary = "arithmetic sequence from run-time scalars";
  let description = [{
    ONNX Range whose bounds are not constants (constant ones fold at import).

    ```mlir
    %r = cgc.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$start, Cgc_Tensor:$limit, Cgc_Tensor:$delta);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Cgc_ConstantOfShapeOp : Cgc_EagerOp<"constant_of_shape", [Pure]> {
  let summary = "filled tensor whose shape is a run-time value";
  let description = [{
    ONNX ConstantOfShape with a non-constant shape input.

    ```mlir
    %y = cgc.constant_of_shape %s {value = 0.0 : f64} : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Cgc_I64Tensor:$shape, F64Attr:$value);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$shape attr-dict `:` functional-type(operands, results)";
}

def Cgc_DynamicExpandOp : Cgc_EagerOp<"dynamic_expand", [Pure]> {
  let summary = "Expand to a shape known only at run time";
  let description = [{
    ONNX Expand whose shape input is not a constant.

    ```mlir
    %y = cgc.dynamic_expand %x, %s : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, Cgc_I64Tensor:$shape);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Cgc_YieldOp : Cgc_Op<"yield", [Pure, Terminator,
    ParentOneOf<["IfOp", "LoopOp", "IslandOp", "EagerRegionOp", "KernelOp"]>,
    ReturnLike]> {
  let summary = "terminates a region of a cgc op, yielding its results";
  let description = [{
    ```mlir
    cgc.yield %v : tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<Cgc_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Cgc_IfOp : Cgc_EagerOp<"if", [RecursiveMemoryEffects,
    NoRegionArguments, SingleBlock]> {
  let summary = "branch on a run-time boolean";
  let description = [{
    ONNX If. Both branches yield values of the result types. Values of the
    enclosing function may be used inside the branches.

    ```mlir
    %r = cgc.if %c : tensor<i1> -> tensor<4xf32> {
      cgc.yield %a : tensor<4xf32>
    } else {
      cgc.yield %b : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Cgc_BoolTensor:$condition);
  let results = (outs Variadic<Cgc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$then_region, SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $condition `:` type($condition) (`->` type($results)^)? $then_region `else` $else_region attr-dict
  }];
  let hasVerifier = 1;
}

def Cgc_LoopOp : Cgc_EagerOp<"loop", [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "ONNX Loop: a trip count and a condition";
  let description = [{
    The body block takes `(iteration, condition, carried...)` and yields
    `(condition, carried..., scan...)`. Results are the final carried values,
    then each scan output stacked along a new leading dim. A missing trip
    count is imported as INT64_MAX and a missing condition as true.

    ```mlir
    %r = cgc.loop %n, %c iter_args(%x) : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<4xf32>):
      cgc.yield %cond, %v : tensor<i1>, tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Cgc_I64Tensor:$max_trip_count,
                       Cgc_BoolTensor:$initial_condition,
                       Variadic<Cgc_Tensor>:$initial_values);
  let results = (outs Variadic<Cgc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $max_trip_count `,` $initial_condition (`iter_args` `(` $initial_values^ `)`)?
    attr-dict `:` functional-type(operands, results) $body
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Partitioning and fusion structure
//===----------------------------------------------------------------------===//

def Cgc_IslandOp : Cgc_Op<"island", [RecursiveMemoryEffects, NoRegionArguments,
    SingleBlock]> {
  let summary = "a capture-safe region that becomes one CUDA graph";
  let description = [{
    Everything inside has fixed shapes, control flow and addresses, so the
    region is lowered to one explicitly built CUDA graph. Values defined
    outside are used directly; values used after the island are yielded.

    ```mlir
    %y = cgc.island "island0" -> tensor<1x512xf32> {
      %a = cgc.relu %x : tensor<1x512xf32>
      cgc.yield %a : tensor<1x512xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Variadic<Cgc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name (`->` type($results)^)? attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Cgc_EagerRegionOp : Cgc_Op<"eager", [RecursiveMemoryEffects,
    NoRegionArguments, SingleBlock]> {
  let summary = "ops that run outside CUDA graphs, with the reason";
  let description = [{
    Holds ops that cannot be captured (data-dependent shapes, control flow).
    `nodes` are the ONNX node names and `reason` says why, for `--explain`.

    ```mlir
    %i = cgc.eager "eager0" -> tensor<2x?xi64> attributes {reason = "data-dependent output shape", nodes = ["NonZero_3"]} {
      %n = cgc.nonzero %x : tensor<4x16xf32> -> tensor<2x?xi64>
      cgc.yield %n : tensor<2x?xi64>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$reason, StrArrayAttr:$nodes);
  let results = (outs Variadic<Cgc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name (`->` type($results)^)? attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Cgc_KernelOp : Cgc_Op<"kernel", [RecursiveMemoryEffects, NoRegionArguments,
    SingleBlock]> {
  let summary = "a fusion group that codegen turns into one GPU kernel";
  let description = [{
    `kind` says what the group computes (set by `--cgc-fuse`):
    `elementwise` (broadcast elementwise chain), `matmul` (gemm/matmul with
    an elementwise epilogue), `norm` (layer_norm/softmax with elementwise
    producers and consumers), `conv` (conv with an elementwise epilogue:
    bias, activation, residual), `reduce` (a reduction with its elementwise
    consumers), `attention` (matmul, elementwise ops and a last-axis softmax
    of its result, matmul of that with V, and an epilogue), or `single` (one
    op with its own kernel). `config` says how it is generated (set by
    `--cgc-select-kernel-config`, or by hand); the verifier refuses a
    config whose template cannot compute the group.

    ```mlir
    %y = cgc.kernel "gemm_0" matmul config <strategy = warp_dot, vector_width = 4, element = f32, accumulator = f32> -> tensor<1x512xf32> {
      %g = cgc.gemm %x, %w, %b {trans_b = true} : (tensor<1x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1x512xf32>
      %r = cgc.relu %g : tensor<1x512xf32>
      cgc.yield %r : tensor<1x512xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, Cgc_KernelKindAttr:$kind,
                       OptionalAttr<Cgc_KernelConfigAttr>:$config);
  let results = (outs Variadic<Cgc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name $kind (`config` $config^)? (`->` type($results)^)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The only value the group stores when it is a matmul/gemm product
    /// (after a folded layer norm, if any) plus a chain of additions of
    /// values from outside the group (x + c, c + x, x - c); else null.
    /// Only such groups may split K across blocks.
    ::mlir::Value getLinearEpilogueResult();
  }];
}

#endif // CGC_OPS_TD
