//===- CgcParallelOps.td - one program over several ranks --*- tablegen -*-===//
//
// A program that `--cgc-tensor-parallel` split over N ranks (one GPU each)
// is still one function: every rank runs it, and these ops say where a
// rank's values differ from the others' (its shard of a weight) and where
// the ranks combine theirs (an all-reduce, an all-gather).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_PARALLEL_OPS_TD
#define CGC_PARALLEL_OPS_TD

def Cgc_ShardOp : Cgc_Op<"shard", [Pure, InferTypeOpAdaptor]> {
  let summary = "this rank's part of a tensor split over the ranks";
  let description = [{
    The input cut along `axis` into `ranks` equal parts; rank r gets part r.
    A weight column-split for a column-parallel product, row-split for the
    row-parallel one after it. With `groups` = G the axis is G equal
    segments, each cut so: rank r gets part r of every segment, in order (a
    fused QKV weight's columns are the Q, K and V segments, and each rank
    takes its heads of all three). The axis must divide evenly.

    ```mlir
    %w = cgc.shard %w_full {axis = 1 : i64, ranks = 2 : i64} : tensor<64x256xf32> -> tensor<64x128xf32>
    %qkv = cgc.shard %w_qkv {axis = 1 : i64, groups = 3 : i64, ranks = 2 : i64} : tensor<64x192xf32> -> tensor<64x96xf32>
    ```
  }];
  let arguments = (ins Cgc_Tensor:$input, I64Attr:$axis, I64Attr:$ranks,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Cgc_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Cgc_AllReduceOp : Cgc_Op<"all_reduce", [SameOperandsAndResultType]> {
  let summary = "the elementwise sum of a tensor over the ranks";
  let description = [{
    Every rank contributes its tensor and receives the sum of all `ranks`
    of them (NCCL's all-reduce with ncclSum): the partial products of a
    row-parallel matmul become the full product on every rank. A collective:
    every rank must reach the same all-reduces in the same order, so the op
    is kept where it is (it declares no memory effects to move it by).

    ```mlir
    %y = cgc.all_reduce %partial {ranks = 2 : i64} : tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, I64Attr:$ranks);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Cgc_AllGatherOp : Cgc_Op<"all_gather"> {
  let summary = "every rank's tensor, stacked along a new leading axis";
  let description = [{
    Every rank contributes its tensor and receives all `ranks` of them,
    rank r's at index r of a new leading axis (NCCL's all-gather, whose
    buffer holds the ranks' parts one after another). A column-parallel
    product whose result is needed whole (a language model's vocabulary
    projection) gathers its parts so; a transpose and a reshape then put
    the ranks' columns side by side. A collective, kept where it is as
    `cgc.all_reduce` is.

    ```mlir
    %parts = cgc.all_gather %logits {ranks = 2 : i64} : tensor<8x500xf32> -> tensor<2x8x500xf32>
    ```
  }];
  let arguments = (ins Cgc_FloatTensor:$input, I64Attr:$ranks);
  let results = (outs Cgc_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

#endif // CGC_PARALLEL_OPS_TD
