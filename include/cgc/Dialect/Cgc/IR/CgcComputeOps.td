//===- CgcComputeOps.td - products, convolutions, pooling --*- tablegen -*-===//
//
// Matrix products, convolutions and pooling: the anchors of fused kernels.
// Included from CgcOps.td, which defines the base classes.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_COMPUTEOPS_TD
#define CGC_COMPUTEOPS_TD

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

    With `channels_last` (set by `--cgc-channels-last`, never by the
    importer) the channel dim is stored last instead of second: input
    [N, spatial..., C], weight [M, kernel..., C / group], output
    [N, spatial..., M]; the attributes keep their meaning.

    ```mlir
    %y = cgc.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
    %z = cgc.conv %u, %v {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, channels_last} : (tensor<1x56x56x64xf32>, tensor<64x3x3x64xf32>) -> tensor<1x56x56x64xf32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, Cgc_FloatTensor:$weight,
                       Optional<Cgc_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group,
                       UnitAttr:$channels_last);
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

#endif // CGC_COMPUTEOPS_TD
