//===- CgcStructureOps.td - eager, control flow, regions ---*- tablegen -*-===//
//
// Eager ops (data-dependent shapes), control flow, and the island / eager /
// kernel regions made by partitioning and fusion.
// Included from CgcOps.td, which defines the base classes.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_STRUCTUREOPS_TD
#define CGC_STRUCTUREOPS_TD

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

def Cgc_NonMaxSuppressionOp : Cgc_EagerOp<"non_max_suppression", [Pure]> {
  let summary = "boxes kept by greedy non-maximum suppression (data-dependent shape)";
  let description = [{
    ONNX NonMaxSuppression: for each batch and class, boxes in descending
    score (the lower index first among equal scores) are kept unless their
    IoU with a kept box exceeds `iou_threshold`, at most
    `max_output_boxes_per_class` of them, and only boxes scoring above
    `score_threshold` when `score_threshold_given`. `boxes` is
    [batches, boxes, 4] (corners y1, x1, y2, x2 in any order, or centre x, y,
    width, height with `center_point_box`), `scores` [batches, classes,
    boxes]; each result row is (batch, class, box).

    ```mlir
    %s = cgc.non_max_suppression %b, %sc, %m, %iou, %st {center_point_box = 0 : i64, score_threshold_given = true} : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$boxes, Cgc_Tensor:$scores,
                       Cgc_I64Tensor:$max_output_boxes_per_class,
                       Cgc_Tensor:$iou_threshold, Cgc_Tensor:$score_threshold,
                       I64Attr:$center_point_box,
                       BoolAttr:$score_threshold_given);
  let results = (outs Cgc_I64Tensor:$selected);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
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
    config whose template cannot compute the group. `precision` (set by
    `--cgc-assign-precision`) is the type a matmul, convolution or
    attention group's product inputs are rounded to on tensor cores
    (`tf32`, `f16`, `bf16`); absent, the group computes in its own types.

    ```mlir
    %y = cgc.kernel "gemm_0" matmul config <strategy = warp_dot, vector_width = 4, element = f32, accumulator = f32> -> tensor<1x512xf32> {
      %g = cgc.gemm %x, %w, %b {trans_b = true} : (tensor<1x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1x512xf32>
      %r = cgc.relu %g : tensor<1x512xf32>
      cgc.yield %r : tensor<1x512xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, Cgc_KernelKindAttr:$kind,
                       OptionalAttr<Cgc_KernelConfigAttr>:$config,
                       OptionalAttr<TypeAttr>:$precision);
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
    /// The group's cgc.all_reduce when it holds one and nothing else (a
    /// collective is a group of its own); else null.
    AllReduceOp getAllReduce();
    /// The same for a cgc.all_gather.
    AllGatherOp getAllGather();
  }];
}

#endif // CGC_STRUCTUREOPS_TD
