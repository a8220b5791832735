//===- CgcDataMovementOps.td - data movement and shapes ----*- tablegen -*-===//
//
// Ops that move or select elements without arithmetic, and shape queries.
// Included from CgcOps.td, which defines the base classes.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DATAMOVEMENTOPS_TD
#define CGC_DATAMOVEMENTOPS_TD

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
  let hasFolder = 1;
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
  let hasFolder = 1;
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
  let hasFolder = 1;
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
  let hasFolder = 1;
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
  let hasFolder = 1;
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
  let hasFolder = 1;
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
    `mode` orders the output channels: DCR (block offset major, then input
    channel; ONNX's only order before opset 28) or CRD (input channel major).

    ```mlir
    %y = cgc.space_to_depth %x {blocksize = 2 : i64, mode = "DCR"} : tensor<1x2x4x6xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$blocksize, StrAttr:$mode);
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

def Cgc_BitCastOp : Cgc_Op<"bitcast", [Pure, SameOperandsAndResultShape]> {
  let summary = "reinterpret the bits of every element as another type";
  let description = [{
    ONNX BitCast (opset 26): each element's bit pattern, unchanged, read as
    the result's element type of the same width (bool counts as 8 bits).

    ```mlir
    %y = cgc.bitcast %x : tensor<4xf32> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
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

#endif // CGC_DATAMOVEMENTOPS_TD
