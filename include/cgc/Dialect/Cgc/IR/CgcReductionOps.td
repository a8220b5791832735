//===- CgcReductionOps.td - reductions and normalizations --*- tablegen -*-===//
//
// Reductions (Cgc_ReductionOpInterface: kind and axes), arg-reductions,
// scans, top-k, softmax and normalizations.
// Included from CgcOps.td, which defines the base classes.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_REDUCTIONOPS_TD
#define CGC_REDUCTIONOPS_TD

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Cgc_ReduceSumOp : Cgc_ReduceOp<"reduce_sum", "sum", "Sum"> {
  let hasFolder = 1;
}
def Cgc_ReduceMeanOp : Cgc_ReduceOp<"reduce_mean", "mean", "Mean">;
def Cgc_ReduceMaxOp : Cgc_ReduceOp<"reduce_max", "maximum", "Max">;
def Cgc_ReduceMinOp : Cgc_ReduceOp<"reduce_min", "minimum", "Min">;
def Cgc_ReduceProdOp : Cgc_ReduceOp<"reduce_prod", "product", "Prod"> {
  let hasFolder = 1;
}
def Cgc_ReduceL1Op : Cgc_ReduceOp<"reduce_l1", "sum of absolute values", "L1">;
def Cgc_ReduceL2Op : Cgc_ReduceOp<"reduce_l2", "Euclidean norm", "L2">;
def Cgc_ReduceSumSquareOp : Cgc_ReduceOp<"reduce_sum_square", "sum of squares", "SumSquare">;
def Cgc_ReduceLogSumOp : Cgc_ReduceOp<"reduce_log_sum", "log of the sum", "LogSum", Cgc_FloatTensor>;
def Cgc_ReduceLogSumExpOp : Cgc_ReduceOp<"reduce_log_sum_exp", "log-sum-exp", "LogSumExp", Cgc_FloatTensor>;

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

def Cgc_CumProdOp : Cgc_Op<"cumprod", [Pure, SameOperandsAndResultType]> {
  let summary = "cumulative product along an axis";
  let description = [{
    ONNX CumProd (opset 26) with a constant axis; `exclusive` starts from
    1, `reverse` runs from the end.

    ```mlir
    %y = cgc.cumprod %x {axis = 0 : i64, exclusive = false, reverse = false} : tensor<5xf32>
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

def Cgc_LayerNormGradOp : Cgc_NormOp<"layer_norm_grad",
    "the input gradient of layer normalization",
    (ins Cgc_FloatTensor:$input, Cgc_FloatTensor:$scale,
         Cgc_FloatTensor:$output_grad, I64Attr:$axis, F64Attr:$epsilon)> {
  let description = [{
    `cgc.layer_norm`'s gradient with respect to its input, for the output
    gradient `output_grad` (the shape of `input`): per row of the
    normalized dims, with xhat = (x - mean) rstd and g = output_grad *
    scale, `rstd (g - mean(g) - xhat mean(g xhat))`. The row's statistics
    are computed again from `input`, so one kernel (one block a row)
    does the whole input gradient; the gradients of scale and bias are
    sums over the rows, built apart.

    ```mlir
    %dx = cgc.layer_norm_grad %x, %g, %dy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<8x512xf32>, tensor<512xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
    ```
  }];
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
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

#endif // CGC_REDUCTIONOPS_TD
