//===- Passes.td - cgc passes ------------------------------*- tablegen -*-===//

#ifndef CGC_PASSES_TD
#define CGC_PASSES_TD

include "mlir/Pass/PassBase.td"

def CgcBuildTrainStep : Pass<"cgc-build-train-step", "mlir::ModuleOp"> {
  let summary = "Turn the forward program into one training step";
  let description = [{
    `cgc --train`. The float initializers the importer tagged
    `cgc.initializer` (all of them, or those `trainable` names) become state
    arguments, each with its initial value in `cgc.state`; the loss is built
    on the model's only output (or `loss-output`): `mse` against a new
    `label` argument of the output's type, `cross_entropy` of logits
    [N, C, d...] against class indices [N, d...] (i64, the mean over the
    N x d entries, as torch.nn.CrossEntropyLoss), or `none` when the output
    already is the loss (one element). Reverse-mode differentiation then
    walks the ops between the parameters and the loss backwards, each op
    building its operands' gradients with its gradient rule
    (DifferentiableOpInterface, CgcGradients.cpp); an op without one is an
    error naming its ONNX node. Last the optimizer's update, as PyTorch's:
    `sgd[:lr=0.01,momentum=0,weight_decay=0]` or
    `adamw[:lr=1e-3,betas=0.9/0.999,eps=1e-8,weight_decay=0.01]`, whose
    buffers (`NAME.momentum_buffer`, `NAME.exp_avg`, `NAME.exp_avg_sq`, the
    `step` count) are state arguments starting at zero. Either also takes
    a learning-rate schedule (`warmup=W,decay=none|linear|cosine,
    total_steps=T`, computed in the step from `step`) and gradient
    accumulation (`accumulate=K`: each step adds its gradients into
    `NAME.grad_sum`, every K-th updates with their mean; `micro_steps`
    counts them). Dropout's masks (`cgc.random_mask`) read the state
    `rng.offset`, which each step advances by one, so every step draws
    new masks. An initializer whose next value the importer marked
    (`cgc.running_statistic`: training BatchNormalization's running mean
    and variance) is not trained: it is state whose result is that value,
    on every micro-batch. An initializer marked `cgc.statistic` (an
    inference BatchNormalization's running mean and variance) trains only
    when `trainable` names it. The results are the
    loss (`cgc.name = "loss"`) and every updated state tensor, marked
    `cgc.updates = STATE NAME`: the caller (cgc-interp, the runtime) writes
    it back before the next step. `optimizer=none` returns the loss and the
    gradients (`grad.NAME`) instead. Last, the ops nothing reads are
    erased (unread ONNX outputs, unused backward values). Needs static
    shapes and no control flow. With `data-parallel=N` each of N ranks runs
    the step on its part of the batch (`cgc.ranks = N`): the loss and every
    gradient are summed over the ranks by a `cgc.all_reduce` and divided by
    N before the update (the gradients in buckets of at most `bucket-bytes`,
    in the order the backward computes them: each bucket flattened, joined,
    summed by one all-reduce that follows its last gradient, and split
    back) (the mean loss of the whole batch, as PyTorch's
    DistributedDataParallel averages), so every rank keeps the same
    state; running statistics, which would differ between ranks, are
    refused.
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"mse\"",
           "mse, cross_entropy or none">,
    Option<"lossOutput", "loss-output", "std::string", /*default=*/"\"\"",
           "The output the loss is taken on (default: the only one)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, adamw or none, with settings: adamw:lr=1e-3,betas=0.9/0.999">,
    ListOption<"trainable", "trainable", "std::string",
               "The initializers to train (default: every float one)">,
    Option<"dataParallel", "data-parallel", "int64_t", /*default=*/"1",
           "Ranks that each take a part of the batch: every gradient and "
           "the loss are averaged over them by a cgc.all_reduce before the "
           "update">,
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"25 << 20",
           "With data-parallel: the gradients are averaged in buckets of at "
           "most this many bytes, one cgc.all_reduce each (0: one a "
           "gradient)">
  ];
  let dependentDialects = ["cgc::CgcDialect", "mlir::func::FuncDialect"];
}

def CgcLoopTrainSteps : Pass<"cgc-loop-train-steps", "mlir::ModuleOp"> {
  let summary = "Run K training steps per launch over a ring of batches";
  let description = [{
    `cgc --train --steps-per-launch=K`. Runs after `--cgc-build-train-step`:
    each input of the step (the batch and the label) gains a leading dim of
    K (a ring of K batches the caller fills on the device), and the step
    becomes the body of a `cgc.loop` of K iterations whose carried values
    are the updated state: iteration i reads batch i (`cgc.gather` at the
    iteration number), takes one step and hands the state it computed to
    the next. The loss output holds the K losses in order (the loop's scan
    output); the state outputs are the state after the K-th step. On the
    GPU the loop is a WHILE conditional node, so K steps are one graph
    launch. State that no step updates stays outside the loop. Needs a
    step with an optimizer (`optimizer=none` has no state to carry).
  }];
  let options = [
    Option<"steps", "steps", "int64_t", /*default=*/"1",
           "Steps per launch (1: the step as it is)">
  ];
  let dependentDialects = ["cgc::CgcDialect", "mlir::func::FuncDialect"];
}

def CgcCheckStaticShapes : Pass<"cgc-check-static-shapes", "mlir::ModuleOp"> {
  let summary = "Require every tensor to have a static shape";
  let description = [{
    Graph islands need fixed shapes. This pass reports every value whose
    type still has an unbound symbolic dim (`?`), naming the op and, for
    function arguments, the ONNX symbolic dim names, so the user knows which
    `--dim NAME=V` to add. Ops that must stay eager (data-dependent shapes)
    and everything inside their regions are exempt.
  }];
}

def CgcCheckBucketPadding : Pass<"cgc-check-bucket-padding", "mlir::func::FuncOp"> {
  let summary = "Prove that padding a symbolic dim never changes real results";
  let description = [{
    `cgc --dim N=1,2,4,8 --pad-to-bucket` lets the runtime run a size between
    buckets (N=3) in the next bucket (N=4), the extra rows filled with zeros.
    That is only right when no element of a real row depends on a padded
    row. This pass follows the padded dim (the inputs' axes whose ONNX
    symbolic name is `dim`) through the imported program, op by op: it may
    move (transpose, reshapes that keep it a whole dim, broadcasting,
    gather indices) but never be reduced, normalized, contracted (matmul K),
    convolved or pooled over (axis 0 of a convolution is fine), sliced,
    split, concatenated, scattered or read as a size. Any op that would mix
    rows, or that the pass cannot reason about, is an error naming the ONNX
    node. On success every argument and result gets `cgc.bucket_axis`: the
    axis of the padded dim, or -1 when it has none.
  }];
  let options = [
    Option<"dim", "dim", "std::string", /*default=*/"\"N\"",
           "The ONNX symbolic dim that is padded">
  ];
}

def CgcPartitionIslands : Pass<"cgc-partition-islands", "mlir::func::FuncOp"> {
  let summary = "Group the program into capture-safe islands and eager regions";
  let description = [{
    Classifies every op through the CaptureSafetyOpInterface (and unbound
    symbolic dims), reorders independent ops so that capture-safe work is
    scheduled before an eager op whenever dependencies allow (islands grow),
    and wraps maximal runs into `cgc.island` and `cgc.eager` regions. Eager
    regions record the ONNX node names and the reason. Constants are hoisted
    to the function entry: weights live in their own read-only region.
    A remark is emitted for every island and eager region.
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcReshapeUnitTransposes
    : Pass<"cgc-reshape-unit-transposes", "mlir::func::FuncOp"> {
  let summary = "Turn transposes that move only dims of size 1 into reshapes";
  let description = [{
    A transpose that keeps the order of the dims of more than one element
    moves no element (`[1, L, E] -> [L, 1, E]`, as sequence-first exports
    write at batch 1): it becomes a `cgc.reshape`, a view of its input's
    buffer instead of a copy kernel.
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcGatherSlicedConcats
    : Pass<"cgc-gather-sliced-concats", "mlir::func::FuncOp"> {
  let summary = "Turn concats of slices of one tensor into a gather";
  let description = [{
    A `cgc.concat` along an axis whose every input is a unit-step slice of
    one float tensor along that axis alone, maybe negated, each read by
    the concat only, becomes `cgc.gather` of that tensor with the sliced
    indices (a constant), times a constant of -1 where a piece was negated
    and 1 elsewhere (the tensor itself where the pieces cover it in order,
    none negated). Rotary embeddings as torch exports them
    (`Concat(-x[..., h:], x[..., :h])`, transformers' `rotate_half`) take
    four copy kernels a rotated tensor (slice, neg, slice, concat); as a
    gather, one kernel that also takes the sine product and the sum after
    it as its epilogue.
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcFoldBatchNorms : Pass<"cgc-fold-batch-norms", "mlir::func::FuncOp"> {
  let summary = "Fold inference batch norms into the convolutions before them";
  let description = [{
    `batch_norm(conv(x, W, b), scale, beta, mean, var)` with constant
    weights and parameters, where nothing else reads the convolution,
    becomes `conv(x, W', b')` with `W'[o] = W[o] * k[o]` and `b'[o] =
    (b[o] - mean[o]) * k[o] + beta[o]`, `k = scale / sqrt(var + epsilon)`
    (computed in double, stored f32). The dynamo ONNX exporter keeps a
    model's batch norms; folded, each costs nothing at run time instead of
    a kernel over the whole activation.
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcPatchConvs : Pass<"cgc-patch-convs", "mlir::func::FuncOp"> {
  let summary = "Turn convolutions whose kernel tiles the input into matrix products";
  let description = [{
    A convolution with stride equal to its kernel (more than one element),
    no padding, no dilation and one group reads each input element once,
    so its im2col matrix is a permutation of the input: it becomes a
    transpose of the input into patches [N P1 P2..., C k1 k2...] and a
    `cgc.gemm` with the weights as [O, C k1 k2...] (and the bias), whose
    rows go back to [N, O, P1, P2...] by a reshape and a transpose. Only
    where the result is then flattened into tokens ([N, O, P] transposed to
    [N, P, O], as vision transformers' patch embeddings do), so that
    --cgc-move-transposes merges the two transposes and the product's rows
    are the tokens; a convolutional network going on in [N, C, H, W] keeps
    its convolutions.
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcChannelsLast : Pass<"cgc-channels-last", "mlir::func::FuncOp"> {
  let summary = "Store the tensors of cuDNN's convolutions channels last";
  let description = [{
    cuDNN's tensor-core convolutions read and write NHWC; given NCHW
    tensors it converts input, filter and output on every call. Each 2-d
    convolution that --cgc-select-kernel-config will give to cuDNN (the
    `cudnn` policy and the precision options predict it) becomes a
    `channels_last` conv: its constant filter is stored KRSC at compile
    time, its input is transposed to NHWC and its output back to NCHW.
    The transposes then move down through elementwise ops (operands that
    are transposed the same way, constants, which are transposed at
    compile time, and single elements) and cancel where they meet, so a
    chain of convolutions, activations and residual adds stays NHWC and
    only its ends transpose.

    `policy=always` keeps every such rewrite; `auto` keeps a function's
    rewrite only where at most one transpose is left for every
    `kConvsPerLayoutTranspose` converted convolutions (ResNet's chains:
    one at each end; MobileNetV2's depthwise convolutions, which cuDNN
    does not take, would need two around each).
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"auto\"",
           "auto or always">,
    Option<"cudnn", "cudnn", "std::string", /*default=*/"\"auto\"",
           "As --cgc-select-kernel-config's: auto, always or never">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "As --cgc-assign-precision's: fp32, tf32, fp16 or bf16">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "As --cgc-assign-precision's">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcMoveTransposes : Pass<"cgc-move-transposes", "mlir::func::FuncOp"> {
  let summary = "Move transposes of rows across row-wise matrix products";
  let description = [{
    A product with a 2-d weight computes each row of its result from the
    same row of its input, so a transpose that keeps the last dim may
    stand on either side of it. Sequence-first attention (torch's
    nn.MultiheadAttention at batch N > 1) transposes [N, L, E] to
    [L, N, E] before the in-projection and back after the out-projection:
    two copy kernels a layer. The first moves below the in-projection and
    its row-wise elementwise ops (the bias) where it then reaches only
    views (q, k, v read by the attention through it); the second moves
    above the out-projection where its input is itself a transpose (the
    attention's output), and the two merge into the layout the attention
    writes. Transposes of transposes merge; one that keeps every dim goes
    away; a reshape that only merges dims that are neighbours on both
    sides of a transpose moves above it. Values do not change.
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcMoveReshapes : Pass<"cgc-move-reshapes", "mlir::func::FuncOp"> {
  let summary = "Move reshapes off the edges between ops that fusion joins";
  let description = [{
    Reshapes are views, but one between two ops keeps them in separate
    kernels. Chains of reshapes collapse into one; an elementwise op
    reading a product's (matmul, gemm, conv) reshaped result, whose other
    operands have its shape or one element, runs on the product's shape
    with the reshape after it, so the product takes it as its epilogue
    (sequence-first models: the out-projection's residual add).
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcTensorParallel : Pass<"cgc-tensor-parallel", "mlir::ModuleOp"> {
  let summary = "Split products over ranks, Megatron-style, with all-reduces";
  let description = [{
    `cgc --tensor-parallel=N`. The program stays one function that each of
    N ranks runs (`cgc.ranks = N` on the module). A product (matmul of a
    2-D weight, or gemm) whose result reaches other products only through
    ops that keep one dim split is split as Megatron-LM splits a
    transformer: its weight by columns (`cgc.shard`: each rank computes
    N-th of the columns), the values after it to the rank's part of one
    dim (elementwise ops, their operands that span it sharded too; a split
    into Q, K and V, whose fused weight is then sharded by heads of each
    segment; reshapes that keep the split dim leading its group, such as
    columns to heads; transposes; softmax along another dim; batched
    products of two split values, attention's), the weights of the
    products it reaches by rows (each rank's partial product), and each
    such partial product summed over the ranks by a `cgc.all_reduce`; a
    gemm's bias C is added once, after the sum. A product that starts no
    such block but reads a constant weight of `gather-min-bytes` or more (a
    language model's vocabulary projection) is split by columns alone and
    its parts joined on every rank: `cgc.all_gather` (the ranks' parts
    stacked), a transpose and a reshape. Everything else runs on every rank
    in full, and so does every product inside an If or Loop body (its
    collectives would run inside a conditional graph node, where NCCL
    calls cannot). A remark says how many products were split; a warning,
    when none was. A module with an ONNX model's multi-device
    annotations (`cgc.devices`, `cgc.shard_axis` on weights) is split only
    where they say: a block whose first products' weights are annotated by
    columns and second products' by rows; an annotated weight left uncut,
    or cut along another axis, is an error at its product; a product
    whose weight alone is annotated by columns is split and gathered
    whatever its size; the annotations are dropped.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "Ranks (GPUs) the products are split over">,
    Option<"gatherMinBytes", "gather-min-bytes", "int64_t",
           /*default=*/"16777216",
           "A product outside the blocks is split by columns, its result "
           "gathered, when its weight has at least this many bytes">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcMaterializeRank : Pass<"cgc-materialize-rank", "mlir::ModuleOp"> {
  let summary = "One rank's program: each cgc.shard of a weight becomes that rank's part";
  let description = [{
    A program split over N ranks (`cgc.ranks = N`) is one function that
    every rank runs; only the shards of its weights differ. For rank
    `rank`, each `cgc.shard` of a constant becomes a constant holding that
    rank's part (its `groups` segments cut as the op says), and a constant
    no longer read is erased. The module gets `cgc.rank`. `cgc` compiles
    the N rank programs of `--tensor-parallel=N` one after another and
    checks that they became the same graphs and kernels, so that every
    rank reaches the same all-reduces in the same order; the package keeps
    one set of graphs and a weights file per rank.

    A shard of a value computed at run time has no package form yet and is
    refused, naming the op.
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"0",
           "The rank (0 to cgc.ranks - 1) whose program to make">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcHoistProductScales
    : Pass<"cgc-hoist-product-scales", "mlir::func::FuncOp"> {
  let summary = "Move one-element constant scales of matmul operands after the product";
  let description = [{
    Rewrites `matmul(x * c, y)` (also `c * x`, `x / c`, and the same on the
    rhs) into `matmul(x, y) * c` where `c` is a one-element f32 constant and
    the scaled operand has no other use, for products whose result goes to
    a softmax through elementwise ops (attention's scores). Exporters scale
    attention's Q and K before the product (torch's
    scaled_dot_product_attention); after the product the scale is an
    elementwise op of the scores in the attention kernel, which can then
    read Q and K in place through their views instead of from a scaling
    kernel's output. Other products keep their scaled operands: a scale in
    a GEMM's epilogue would cost it split-K.
  }];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcFuse : Pass<"cgc-fuse", "mlir::func::FuncOp"> {
  let summary = "Group the ops of each island into kernels";
  let description = [{
    Wraps runs of ops inside islands into `cgc.kernel` regions: chains of
    elementwise ops with broadcasting become one `elementwise` kernel;
    gemm/matmul absorb their elementwise epilogue (bias, activation,
    residual) as a `matmul` kernel; layer_norm and softmax absorb their
    elementwise epilogue as a `norm` kernel; other ops get a `single` kernel.
    Reshapes are not kernels: they alias their input's buffer. Then the
    merges: matmul, elementwise ops and a last-axis softmax of its result,
    and a matmul of that (with the split/reshape/transpose views of its
    operands and a transpose of its output) become one `attention` kernel
    (in f32, or the 16-bit type of a model that is f16/bf16 already, with
    its softmax cast to f32 and back where it takes it so); a reduction
    over the last axis (sum, mean, max, min, sum of squares, L2) and the
    elementwise ops after it, with the elementwise kernel right after that
    reads it back over the rows, become one `norm` kernel over the rows
    where nothing else reads the reduced values (torch's decomposed RMSNorm:
    one kernel instead of two);
    a last-axis layer_norm read only by a matmul joins the matmul's kernel
    where the product runs on FMAs: not where cuBLASLt is to compute it
    (`cublaslt`: `always`, or `auto` and a product of at least 2^27
    multiply-adds; the library cannot normalize its operand as it loads
    it), and not where `precision` and `keep-fp32` (read as
    --cgc-assign-precision reads them) put it on tensor cores: the
    tensor-core GEMM loads a normalized A element by element instead of in
    vectors, and measured on the H200 the separate norm kernel is faster
    (ViT-S/4 layers bf16 batch 1: 301 against 235 us, GPT 2 layers bf16:
    55 against 51 us).
  }];
  let options = [
    Option<"cublaslt", "cublaslt", "std::string", /*default=*/"\"auto\"",
           "As --cgc-select-kernel-config's: auto, always or never">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "As --cgc-assign-precision's: fp32, tf32, fp16 or bf16">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "As --cgc-assign-precision's">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcAssignPrecision : Pass<"cgc-assign-precision", "mlir::ModuleOp"> {
  let summary = "Choose the precision of every matrix product and convolution";
  let description = [{
    Stamps `precision` on each matmul, convolution and attention
    `cgc.kernel`: the type its products' inputs are rounded to on tensor
    cores, accumulating in f32. A group whose inputs are already f16 or bf16
    (an exporter's `model.half()`) takes that type whatever the option says;
    a group of f32 inputs takes `precision` (`tf32`, `fp16` or `bf16`;
    `fp32`, the default, leaves it in f32 on FMAs) unless `keep-fp32` names
    its ONNX op type (`MatMul`, `Gemm`, `Conv`, any case) or its node. An
    attention group takes it when both of its products do (Q x K^T and the
    weights x V) and the tensor-core attention's smallest block fits the
    target's shared memory. Everything else (softmax, norms' statistics,
    reductions, elementwise chains, the softmax inside an attention) stays
    in f32 or its own types, and so do the tensors between kernels: a
    kernel rounds its operands as it loads them (`--cgc-narrow-storage`
    then stores those of fp16/bf16 products rounded already).
    `--cgc-select-kernel-config` gives a group with a precision the
    tensor-core template where the group runs the tiled GEMM template, and
    keeps FMAs where it does not (one-warp dot products, depthwise and
    direct convolutions: `--explain` names each kernel's precision). A
    `keep-fp32` entry that names no group is reported as a warning.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32, tf32, fp16 or bf16: what f32 matrix products and "
           "convolutions compute in">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "ONNX op types or node names whose groups stay in f32">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcNarrowConvOutputs : Pass<"cgc-narrow-conv-outputs", "mlir::ModuleOp"> {
  let summary = "Let cuDNN convolve fp16/bf16 groups in that type";
  let description = [{
    cuDNN's 16-bit convolutions read and write 16-bit tensors: given f32
    ones it takes TF32 kernels on twice the bytes (PyTorch's ResNet-50 runs
    1.14-1.38x faster in bf16 than in TF32, docs/kernels.md).
    So a conv group with `precision` f16 or bf16 that cuDNN will compute
    (by the `cudnn` option, as `--cgc-select-kernel-config` decides) is
    split in two: a conv group that yields only the convolution (without
    bias) rounded to the 16-bit type, which cuDNN computes from the 16-bit
    input and filter `--cgc-narrow-storage` then stores, and an elementwise
    group that widens that result, adds the bias and runs the rest of the
    group (activation, residual, ...) in f32. This is the one rounding the
    precision policy adds: the convolution's output is rounded to 16 bits
    before the bias (as PyTorch's 16-bit convolutions round it), where the
    f32 cuDNN call kept it f32. A group is split only where its filter is a
    constant, its bias a constant or absent, and its input can be stored
    narrow (a weight, a kernel that can write a 16-bit copy, another such
    convolution, or a view of one); the others stay f32 calls. `cgc` runs
    it unless `--narrow-storage=never`; fp16 groups are split only under
    `--narrow-storage=always` (`fp16=false` otherwise): an fp16 output
    flushes what falls below fp16's range, which bf16 shares with f32.
    On an H100, ResNet-50 bf16 channels last went from 749 to 424 us at
    batch 1 and from 1428 to 840 us at batch 8 (docs/kernels.md).
  }];
  let options = [
    Option<"cudnn", "cudnn", "std::string", /*default=*/"\"auto\"",
           "--cgc-select-kernel-config's cudnn option: auto, always or never">,
    Option<"fp16", "fp16", "bool", /*default=*/"true",
           "split fp16 conv groups too (bf16 ones always)">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcNarrowStorage : Pass<"cgc-narrow-storage", "mlir::ModuleOp"> {
  let summary = "Store the operands of fp16/bf16 products in that type";
  let description = [{
    A matmul or gemm group with `precision` f16 or bf16 (set by
    `--cgc-assign-precision`) that runs on tensor cores (all but a gemm of
    8 rows or fewer against a [N, K] weight, which takes one warp per
    output on FMAs) rounds its f32 operands to that type as it loads them; storing them rounded instead gives the same numbers with
    half the bytes, and cuBLASLt then multiplies 16-bit operands on the
    tensor cores (it takes TF32 kernels for f32 operands). Where both
    operands of such a product can be stored narrow, this pass does so:
    an f32 weight becomes a 16-bit constant (rounded to nearest even, as
    the device rounds), and an elementwise, norm, matmul, attention,
    convolution, pooling or Concat kernel that computes the other operand
    also writes its 16-bit copy (dropping the f32 result when nothing else reads it, except a matmul group's, where
    a cuBLASLt call writes its product before the in-place epilogue writes
    both), through static reshapes and transpose kernels between them. The product's kernel widens the copy with
    a `cgc.cast` at the top of its body; templates, configs and library
    calls read the narrow value through it (`StoredOperands.h`). A conv
    group that cuDNN will compute (the `cudnn` option) keeps its f32
    result, which the library writes in place before the epilogue writes
    the copy; a generated one writes the copy in its template's store
    (alone where nothing else reads the result). Convolutions are
    narrowed only where `--cgc-narrow-conv-outputs` rounded their output
    (a cuDNN node takes one type for input, filter and output): their input
    and filter always. Every narrowed tensor is read only by products that
    round it to the same type, so no result changes.

    `policy`: `auto` (the default) narrows the operands of the products
    that `--cgc-select-kernel-config` will give to cuBLASLt (by the same
    `cublaslt` option and size threshold), where it was measured to pay
    (BERT b8 bf16 on an H100: 325 -> 251 us), and of the products whose
    generated tensor-core kernel then copies its 16-bit operands as
    stored (A contiguous along K, K and N multiples of 8: the cp.async
    loop over 16-bit stages); `always` every tensor-core product's (the
    others then load 16-bit scalars).
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"auto\"",
           "auto (the products cuBLASLt will compute) or always (every "
           "tensor-core product)">,
    Option<"cublaslt", "cublaslt", "std::string", /*default=*/"\"auto\"",
           "--cgc-select-kernel-config's cublaslt option: auto, always or "
           "never">,
    Option<"cudnn", "cudnn", "std::string", /*default=*/"\"auto\"",
           "--cgc-select-kernel-config's cudnn option: auto, always or never">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

def CgcPlanBuffers : Pass<"cgc-plan-buffers", "mlir::ModuleOp"> {
  let summary = "Give every tensor a fixed offset in one arena";
  let description = [{
    Lays out one arena per model: a read-only weights region (every
    constant), static slots for the inputs and outputs, and the
    intermediates, whose offsets are reused according to liveness over the
    kernel order (best fit, 256-byte aligned for vectorized access).
    Reshape results alias their input. Annotates kernels
    (`cgc.result_offsets`), loop bodies (`cgc.body_arg_offsets`), constants
    (`cgc.weight_offset`), arguments and results (`cgc.arena_offset`) and
    the function (`cgc.arena_bytes`, `cgc.weights_bytes`,
    `cgc.intermediate_bytes`, `cgc.intermediate_lower_bound`,
    `cgc.intermediate_naive_bytes`); CgcAnnotations.h reads them. Requires
    static shapes.
  }];
}

def CgcSelectKernelConfig
    : Pass<"cgc-select-kernel-config", "mlir::ModuleOp"> {
  let summary = "Choose how every fused kernel is generated";
  let description = [{
    Stamps a `#cgc.kernel_config` on every `cgc.kernel` that has none: the
    template (`strategy`), its block and register tiles, pipeline stages,
    split-K and launch bounds, from the kernel's shapes, the buffer plan's
    alignment and the module's `#cgc.target` (sm_90's when it has none).
    Tiled GEMMs (matmuls and implicit-GEMM convolutions) take the tile a
    small cost model of the target predicts fastest: waves of resident
    blocks over the multiprocessors times the K steps, each the larger of
    a load latency and the tile's FMA time. A group that
    `--cgc-assign-precision` gave a precision and that runs a tiled GEMM
    takes the tensor-core template (`operand` set; tiles of 8 warps chosen
    by the same model at the target's mma rate). Configs already present (written
    by hand) are kept; the kernel verifier checks that their template can
    serve them. The kernel writers read the configs and decide nothing.
    Runs after `--cgc-plan-buffers`: cp.async and vector loads need
    16-byte-aligned operands, and only the plan knows the offsets.
  }];
  let options = [
    Option<"gemmTile", "gemm-tile", "std::string", /*default=*/"\"\"",
           "Force BMxBNxTMxTN[/SPLIT] on every tiled GEMM (for measuring "
           "tiles against each other; BMxBNxWMxWN, a warp's tile, for "
           "products on tensor cores); each forced kernel gets a warning">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "Bit-identical results run to run: never split K across blocks "
           "(their partial sums would be added atomically, in any order)">,
    Option<"tuningCache", "tuning-cache", "std::string", /*default=*/"\"\"",
           "A tuning cache (JSON, utils/tune/cgc_tune.py): a kernel whose "
           "signature it lists takes the config measured fastest (marked "
           "cgc.tuned)">,
    Option<"tuningCandidates", "tuning-candidates", "bool",
           /*default=*/"false",
           "Mark each tiled GEMM kernel with its signature (cgc.tuning_key) "
           "and every config the templates offer it "
           "(cgc.tuning_candidates), for a tuner">,
    Option<"cublaslt", "cublaslt", "std::string", /*default=*/"\"auto\"",
           "Which matmul groups cuBLASLt computes (kernel strategy "
           "cublaslt_matmul): 'auto' (where the cost model expects it to "
           "win), 'always' (every group it can take; a warning for each "
           "one it cannot) or 'never'">,
    Option<"cudnn", "cudnn", "std::string", /*default=*/"\"auto\"",
           "Which conv groups cuDNN computes (kernel strategy cudnn_conv): "
           "'auto' (dense convolutions the cost model expects it to win), "
           "'always' (every one it can take; a warning for each one it "
           "cannot) or 'never'">,
    Option<"normRows", "norm-rows", "std::string", /*default=*/"\"auto\"",
           "How a norm kernel (layer norm, softmax) spreads its rows: "
           "'auto' (a warp per contiguous row of at most 1024 values, held "
           "in registers, where the blocks of 8 such rows cover every "
           "multiprocessor; else a block per row), 'warp' (a warp per row "
           "wherever the row fits) or 'block' (a block per row always)">
  ];
  let dependentDialects = ["cgc::CgcDialect"];
}

#endif // CGC_PASSES_TD
