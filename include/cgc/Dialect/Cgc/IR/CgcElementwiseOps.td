//===- CgcElementwiseOps.td - elementwise cgc ops ----------*- tablegen -*-===//
//
// Unary, binary and ternary elementwise ops (numpy broadcasting); each carries
// the Cgc_Elementwise trait that fusion, codegen and the bucket padding check
// query.
// Included from CgcOps.td, which defines the base classes.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_ELEMENTWISEOPS_TD
#define CGC_ELEMENTWISEOPS_TD

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

def Cgc_AbsOp : Cgc_UnaryOp<"abs", "absolute value", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_NegOp : Cgc_UnaryOp<"neg", "negation", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_SignOp : Cgc_UnaryOp<"sign", "sign (-1, 0 or 1)", Cgc_Tensor> {
  let hasFolder = 1;
}
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
def Cgc_FloorOp : Cgc_UnaryOp<"floor", "rounding down"> {
  let hasFolder = 1;
}
def Cgc_CeilOp : Cgc_UnaryOp<"ceil", "rounding up"> {
  let hasFolder = 1;
}
def Cgc_RoundOp : Cgc_UnaryOp<"round", "rounding half to even">;
def Cgc_SoftplusOp : Cgc_UnaryOp<"softplus", "log(1+e^x)">;
def Cgc_SoftsignOp : Cgc_UnaryOp<"softsign", "x/(1+|x|)">;
def Cgc_MishOp : Cgc_UnaryOp<"mish", "x*tanh(softplus(x))">;
def Cgc_HardSwishOp : Cgc_UnaryOp<"hard_swish", "x*max(0,min(1,x/6+1/2))">;
def Cgc_NotOp : Cgc_UnaryOp<"not", "logical negation", Cgc_BoolTensor> {
  let hasFolder = 1;
}
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

def Cgc_ClipOp : Cgc_Op<"clip", [Pure, SameOperandsAndResultType,
                                 Cgc_Elementwise]> {
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

def Cgc_CastOp : Cgc_Op<"cast", [Pure, SameOperandsAndResultShape,
                                 Cgc_Elementwise]> {
  let summary = "element type conversion";
  let description = [{
    Converts every element to the result's element type with ONNX Cast
    semantics (float to int truncates toward zero; to bool tests != 0).

    To the float8 types, `saturate` (ONNX's default) clamps values beyond
    the largest finite one (infinities included) to it; without it they
    become NaN, or infinity for f8E5M2. To f8E8M0FNU, a power of two, the
    float32 exponent is taken and `round_mode` ("up", "down", "nearest")
    says which way a fraction goes. To f4E2M1FN, values always saturate.
    Floats to int4/int2 truncate, and values outside the target's range
    become 0 (ONNX's reference, through ml_dtypes).

    ```mlir
    %y = cgc.cast %x : tensor<4xi64> -> tensor<4xf32>
    %z = cgc.cast %x {saturate = false} : tensor<4xf32> -> tensor<4xf8E4M3FN>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input,
                   DefaultValuedAttr<BoolAttr, "true">:$saturate,
                   DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary and ternary
//===----------------------------------------------------------------------===//

def Cgc_AddOp : Cgc_BinaryOp<"add", "a + b", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_SubOp : Cgc_BinaryOp<"sub", "a - b", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_MulOp : Cgc_BinaryOp<"mul", "a * b", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_DivOp : Cgc_BinaryOp<"div", "a / b (integers truncate)", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_PowOp : Cgc_BinaryOp<"pow", "a ^ b", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_MaxOp : Cgc_BinaryOp<"max", "max(a, b)", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_MinOp : Cgc_BinaryOp<"min", "min(a, b)", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_ModOp : Cgc_BinaryOp<"mod", "a mod b (fmod: C fmod, else Python %)",
    Cgc_Tensor, (ins BoolAttr:$fmod)> {
  let hasFolder = 1;
}
def Cgc_PReluOp : Cgc_BinaryOp<"prelu", "a if a>=0 else slope*a", Cgc_Tensor>;
def Cgc_BitShiftOp : Cgc_BinaryOp<"bit_shift", "a << b or a >> b", Cgc_IntTensor,
    (ins BoolAttr:$left)>;
def Cgc_AndOp : Cgc_BinaryOp<"and", "logical and", Cgc_BoolTensor> {
  let hasFolder = 1;
}
def Cgc_OrOp : Cgc_BinaryOp<"or", "logical or", Cgc_BoolTensor> {
  let hasFolder = 1;
}
def Cgc_XorOp : Cgc_BinaryOp<"xor", "logical xor", Cgc_BoolTensor> {
  let hasFolder = 1;
}
def Cgc_BitwiseAndOp : Cgc_BinaryOp<"bitwise_and", "a & b", Cgc_IntTensor>;
def Cgc_BitwiseOrOp : Cgc_BinaryOp<"bitwise_or", "a | b", Cgc_IntTensor>;
def Cgc_BitwiseXorOp : Cgc_BinaryOp<"bitwise_xor", "a ^ b", Cgc_IntTensor>;
def Cgc_EqualOp : Cgc_BinaryOp<"equal", "a == b (result i1)", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_LessOp : Cgc_BinaryOp<"less", "a < b (result i1)", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_LessEqualOp : Cgc_BinaryOp<"less_equal", "a <= b (result i1)", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_GreaterOp : Cgc_BinaryOp<"greater", "a > b (result i1)", Cgc_Tensor> {
  let hasFolder = 1;
}
def Cgc_GreaterEqualOp : Cgc_BinaryOp<"greater_equal", "a >= b (result i1)", Cgc_Tensor> {
  let hasFolder = 1;
}

def Cgc_WhereOp : Cgc_Op<"where", [Pure, InferTypeOpAdaptor,
                                   Cgc_Elementwise]> {
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
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Random
//===----------------------------------------------------------------------===//

def Cgc_RandomMaskOp : Cgc_Op<"random_mask", [Pure, Cgc_Elementwise]> {
  let summary = "a random boolean mask, true with probability 1 - ratio";
  let description = [{
    Dropout's mask: element k (row-major) is true when u >= `ratio`, where
    u in [0, 1) is the top 24 bits of word 0 of Philox4x32-10 with key
    (`seed`, `stream`) and counter (k mod 2^32, k / 2^32, offset mod 2^32,
    offset / 2^32), divided by 2^24. A pure function of its inputs, the
    same in the interpreter and the kernels (so CI checks the kernels bit
    for bit), and recomputable wherever it is used: the backward recomputes
    the forward's mask instead of storing it. `stream` tells the masks of
    one program apart; the `offset` operand (absent: 0) tells steps apart:
    a training step passes its state `rng.offset`, which advances by one
    every step.

    ```mlir
    %keep = cgc.random_mask %offset : tensor<i64> {ratio = 1.000000e-01 : f64, seed = 0 : i64, stream = 0 : i64} -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Optional<RankedTensorOf<[I64]>>:$offset, F64Attr:$ratio,
                       I64Attr:$stream, I64Attr:$seed);
  let results = (outs Cgc_BoolTensor:$mask);
  let assemblyFormat = [{
    ($offset^ `:` type($offset))? attr-dict `->` type($mask)
  }];
  let hasVerifier = 1;
}

#endif // CGC_ELEMENTWISEOPS_TD
