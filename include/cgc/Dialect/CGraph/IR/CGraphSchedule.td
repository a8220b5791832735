//===- CGraphSchedule.td - the host program of a package ---*- tablegen -*-===//
//
// What the host runs, in order: graph replays and, between them, eager
// steps whose work (kernel launches outside any graph, copies, branches and
// loops decided on the host, data-dependent ops computed on the host) is
// spelled out op by op with its arena offsets. The conversion decides all
// of it; the package printer prints it.
//
//===----------------------------------------------------------------------===//

#ifndef CGRAPH_SCHEDULE_TD
#define CGRAPH_SCHEDULE_TD

/// Ops of an eager step: directly in it or in a host branch or loop.
def CGraph_InHostCode
    : ParentOneOf<["EagerOp", "HostIfOp", "HostLoopOp"]>;

def CGraph_ScheduleOp : CGraph_Op<"schedule", [NoTerminator, SingleBlock,
    IsolatedFromAbove, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the steps one graph set runs, in order";
  let description = [{
    One per graph set: the whole model, or one value of the bucketed dim
    (`bucket`). `function` names the function whose inputs and outputs the
    steps compute. The body lists the steps in program order: graph replays
    (`cgraph.replay`) and eager steps (`cgraph.eager`).

    `copy_io`: the inputs and outputs are copied through the arena's slots
    instead of the runtime rebinding the kernel nodes to the caller's
    buffers (zero-copy I/O), which a graph with conditional nodes does not
    allow (its condition kernels take a handle by value, its bodies' nodes
    are in child graphs). Required when a replayed graph has a conditional
    node.

    ```mlir
    cgraph.schedule @main_N4 bucket 4 {
      cgraph.replay @N4_island0
      cgraph.eager "N4_eager0" {
        cgraph.host_nonzero "NonZero -> nz" {element_type = f32, shape = array<i64: 8, 8>, input = 0 : i64, output = 256 : i64, shape_outputs = array<i64: 1>}
      }
    }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$function,
                       OptionalAttr<CGraph_I64Attr>:$bucket,
                       UnitAttr:$copy_io);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $function (`bucket` $bucket^)? (`copy_io` $copy_io^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def CGraph_ReplayOp : CGraph_Op<"replay", [HasParent<"ScheduleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a step that launches one CUDA graph";
  let description = [{
    `graph` must name a `cgraph.graph` of the module.

    ```mlir
    cgraph.replay @island0
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$graph);
  let assemblyFormat = "$graph attr-dict";
}

def CGraph_EagerOp : CGraph_Op<"eager", [HasParent<"ScheduleOp">,
    NoTerminator, SingleBlock]> {
  let summary = "a step run by host code between graph replays";
  let description = [{
    The package gets one host function per eager step, named after `name`,
    which does the body's work in order.

    ```mlir
    cgraph.eager "eager0" {
      cgraph.launch @relu_1f2e "relu" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 0, 256>}
    }
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name attr-dict-with-keyword $body";
}

def CGraph_LaunchOp : CGraph_Op<"launch", [CGraph_InHostCode,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a kernel launched by host code, outside any graph";
  let description = [{
    Like `cgraph.kernel_node`: `kernel` names a `cgraph.kernel`, `args` are
    the arena offsets of its pointer parameters. `label` names the fused
    kernel it runs, for error messages.

    ```mlir
    cgraph.launch @elementwise_1f2e "relu_1" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 0, 256>}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, StrAttr:$label,
                       DenseI64ArrayAttr:$grid, DenseI64ArrayAttr:$block,
                       DenseI64ArrayAttr:$args);
  let assemblyFormat = "$kernel $label attr-dict";
  let hasVerifier = 1;
}

def CGraph_HostCopyOp : CGraph_Op<"host_copy", [CGraph_InHostCode]> {
  let summary = "a copy between two arena buffers, issued by host code";
  let description = [{
    Moves a branch's or an iteration's result into the buffer of the value
    it becomes. `label` names the ONNX node it belongs to.

    ```mlir
    cgraph.host_copy "If -> b" {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
    ```
  }];
  let arguments = (ins StrAttr:$label, CGraph_I64Attr:$dst, CGraph_I64Attr:$src,
                       CGraph_I64Attr:$bytes);
  let assemblyFormat = "$label attr-dict";
  let hasVerifier = 1;
}

def CGraph_HostIfOp : CGraph_Op<"host_if", [CGraph_InHostCode,
    NoTerminator, SingleBlock]> {
  let summary = "a branch chosen on the host";
  let description = [{
    Reads the condition byte at arena offset `condition` and runs
    `then_body` when it is nonzero, `else_body` otherwise. Each body ends by
    copying its results into place.

    ```mlir
    cgraph.host_if "If -> b" condition 0 {
      cgraph.launch @relu_1f2e "relu" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 64, 256>}
    } else {
      cgraph.launch @neg_9a0b "neg" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 64, 256>}
    }
    ```
  }];
  let arguments = (ins StrAttr:$label, CGraph_I64Attr:$condition);
  let regions = (region SizedRegion<1>:$then_body, SizedRegion<1>:$else_body);
  let assemblyFormat = [{
    $label `condition` $condition attr-dict-with-keyword $then_body `else`
    $else_body
  }];
  let hasVerifier = 1;
}

def CGraph_HostLoopOp : CGraph_Op<"host_loop", [CGraph_InHostCode,
    NoTerminator, SingleBlock]> {
  let summary = "an ONNX Loop counted on the host";
  let description = [{
    Reads the trip count (i64 at `max_trips`) and the condition (byte at
    `condition`), runs `init` (copies of the initial values into the
    carried buffers), then while `iteration < trips` and the condition
    holds: writes the iteration number to `iteration` and the condition to
    `condition_arg`, runs `body` (ending with the copies of the yielded
    values into the carried buffers) and reads the next condition at
    `condition_out`. `exit` copies the carried buffers to the results.

    ```mlir
    cgraph.host_loop "Loop -> y" {max_trips = 0 : i64, condition = 8 : i64, iteration = 16 : i64, condition_arg = 24 : i64, condition_out = 32 : i64} init {
      cgraph.host_copy "Loop -> y" {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
    } body {
      cgraph.launch @tanh_77aa "tanh" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 512, 768>}
    } exit {
    }
    ```
  }];
  let arguments = (ins StrAttr:$label, CGraph_I64Attr:$max_trips, CGraph_I64Attr:$condition,
                       CGraph_I64Attr:$iteration, CGraph_I64Attr:$condition_arg,
                       CGraph_I64Attr:$condition_out);
  let regions = (region SizedRegion<1>:$init, SizedRegion<1>:$body,
                        SizedRegion<1>:$exit);
  let assemblyFormat = [{
    $label attr-dict `init` $init `body` $body `exit` $exit
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data-dependent ops computed on the host. Each reads its inputs from the
// arena, writes its results into buffers planned at their largest size and
// reports the data-dependent shape of the model outputs it becomes
// (`shape_outputs`, indices into the model's outputs).
//===----------------------------------------------------------------------===//

def CGraph_HostNonZeroOp : CGraph_Op<"host_nonzero", [CGraph_InHostCode]> {
  let summary = "ONNX NonZero on the host";
  let description = [{
    The indices of the nonzero elements of the `shape` tensor of
    `element_type` at `input`, one row per dim (i64 at `output`).

    ```mlir
    cgraph.host_nonzero "NonZero -> nz" {element_type = f32, shape = array<i64: 8, 8>, input = 0 : i64, output = 256 : i64, shape_outputs = array<i64: 1>}
    ```
  }];
  let arguments = (ins StrAttr:$label, TypeAttr:$element_type,
                       DenseI64ArrayAttr:$shape, CGraph_I64Attr:$input,
                       CGraph_I64Attr:$output, DenseI64ArrayAttr:$shape_outputs);
  let assemblyFormat = "$label attr-dict";
  let hasVerifier = 1;
}

def CGraph_HostCompressOp : CGraph_Op<"host_compress", [CGraph_InHostCode]> {
  let summary = "ONNX Compress on the host";
  let description = [{
    The input (`input_bytes` at `input`) is `outer` x `count` x `inner`
    elements of `element_bytes`; the slices k < `conditions` whose condition
    byte (at `condition`) is set are written to `output`. The result's
    shape is `result_shape` with dim `axis` replaced by the kept count.

    ```mlir
    cgraph.host_compress "Compress -> c" {input = 0 : i64, condition = 96 : i64, output = 128 : i64, input_bytes = 96 : i64, conditions = 3 : i64, outer = 2 : i64, count = 3 : i64, inner = 4 : i64, element_bytes = 4 : i64, result_shape = array<i64: 2, 3, 4>, axis = 1 : i64, shape_outputs = array<i64: 0>}
    ```
  }];
  let arguments = (ins StrAttr:$label, CGraph_I64Attr:$input, CGraph_I64Attr:$condition,
                       CGraph_I64Attr:$output, CGraph_I64Attr:$input_bytes,
                       CGraph_I64Attr:$conditions, CGraph_I64Attr:$outer, CGraph_I64Attr:$count,
                       CGraph_I64Attr:$inner, CGraph_I64Attr:$element_bytes,
                       DenseI64ArrayAttr:$result_shape, CGraph_I64Attr:$axis,
                       DenseI64ArrayAttr:$shape_outputs);
  let assemblyFormat = "$label attr-dict";
  let hasVerifier = 1;
}

def CGraph_HostUniqueOp : CGraph_Op<"host_unique", [CGraph_InHostCode]> {
  let summary = "ONNX Unique on the host";
  let description = [{
    The unique slices of the `outer` x `count` x `inner` input of
    `element_type` at `input` (sorted or in order of first occurrence).
    `results` are the offsets of Y, indices, inverse indices and counts; -1
    for one nothing uses (not written). Y's shape is `result_shape` with dim
    `axis` replaced by the unique count; `shape_outputs` get Y's shape,
    `count_outputs` the count (the indices and counts outputs, in order).

    ```mlir
    cgraph.host_unique "Unique -> u" {element_type = i32, input = 0 : i64, outer = 1 : i64, count = 6 : i64, inner = 1 : i64, sorted = false, results = array<i64: 32, 64, -1, 128>, result_shape = array<i64: 6>, axis = 0 : i64, shape_outputs = array<i64: 1>, count_outputs = array<i64: 2, 4>}
    ```
  }];
  let arguments = (ins StrAttr:$label, TypeAttr:$element_type, CGraph_I64Attr:$input,
                       CGraph_I64Attr:$outer, CGraph_I64Attr:$count, CGraph_I64Attr:$inner,
                       BoolAttr:$sorted, DenseI64ArrayAttr:$results,
                       DenseI64ArrayAttr:$result_shape, CGraph_I64Attr:$axis,
                       DenseI64ArrayAttr:$shape_outputs,
                       DenseI64ArrayAttr:$count_outputs);
  let assemblyFormat = "$label attr-dict";
  let hasVerifier = 1;
}

def CGraph_HostNonMaxSuppressionOp : CGraph_Op<"host_non_max_suppression", [CGraph_InHostCode]> {
  let summary = "ONNX NonMaxSuppression on the host";
  let description = [{
    `boxes` ([batches, count, 4]) and `scores` ([batches, classes, count])
    of `element_type`, the scalars `max_output` (i64), `iou_threshold` and
    `score_threshold` (of `element_type`; the latter only with
    `score_threshold_given`): the kept (batch, class, box) rows, i64 at
    `output`; `shape_outputs` get the result's shape [rows, 3].

    ```mlir
    cgraph.host_non_max_suppression "NonMaxSuppression -> s" {element_type = f32, boxes = 0 : i64, scores = 256 : i64, max_output = 512 : i64, iou_threshold = 768 : i64, score_threshold = 1024 : i64, output = 1280 : i64, batches = 1 : i64, classes = 1 : i64, count = 6 : i64, center_point_box = false, score_threshold_given = true, shape_outputs = array<i64: 0>}
    ```
  }];
  let arguments = (ins StrAttr:$label, TypeAttr:$element_type,
                       CGraph_I64Attr:$boxes, CGraph_I64Attr:$scores,
                       CGraph_I64Attr:$max_output, CGraph_I64Attr:$iou_threshold,
                       CGraph_I64Attr:$score_threshold, CGraph_I64Attr:$output,
                       CGraph_I64Attr:$batches, CGraph_I64Attr:$classes,
                       CGraph_I64Attr:$count, BoolAttr:$center_point_box,
                       BoolAttr:$score_threshold_given,
                       DenseI64ArrayAttr:$shape_outputs);
  let assemblyFormat = "$label attr-dict";
  let hasVerifier = 1;
}

def CGraph_HostReshapeOp : CGraph_Op<"host_reshape", [CGraph_InHostCode]> {
  let summary = "the dims of a Reshape to a run-time shape, on the host";
  let description = [{
    The data is a view (the plan aliases the buffers); the host reads the
    `rank` i64 dims at `shape`, resolves 0 and -1 against `input_shape`
    (ONNX `allowzero`) and reports the result's dims.

    ```mlir
    cgraph.host_reshape "Reshape -> r" {shape = 64 : i64, input_shape = array<i64: 2, 3, 4>, rank = 2 : i64, allowzero = false, shape_outputs = array<i64: 5>}
    ```
  }];
  let arguments = (ins StrAttr:$label, CGraph_I64Attr:$shape,
                       DenseI64ArrayAttr:$input_shape, CGraph_I64Attr:$rank,
                       BoolAttr:$allowzero, DenseI64ArrayAttr:$shape_outputs);
  let assemblyFormat = "$label attr-dict";
  let hasVerifier = 1;
}

#endif // CGRAPH_SCHEDULE_TD
