//===- CGraphOps.td - explicit CUDA graph dialect ----------*- tablegen -*-===//
//
// `cgraph` describes one CUDA graph per island the way the runtime will build
// it: nodes added one by one, each naming the nodes it depends on. Every
// pointer is an offset into the model's arena, so the graph is fully known at
// compile time and the runtime only adds the arena base. The host program
// around the graphs is in CGraphSchedule.td.
//
//===----------------------------------------------------------------------===//

#ifndef CGRAPH_OPS_TD
#define CGRAPH_OPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "cgc/Dialect/CGraph/IR/CGraphEnums.td"

def CGraph_Dialect : Dialect {
  let name = "cgraph";
  let summary = "Explicitly built CUDA graphs over one arena";
  let description = [{
    A `cgraph.graph` holds the nodes of one CUDA graph. Each node yields a
    `!cgraph.node` token; a node's `deps` are the tokens of the nodes that
    must finish before it starts (only the necessary edges). A
    `cgraph.schedule` lists everything the host runs, in order: graph
    replays and eager steps of host work between them.
  }];
  let cppNamespace = "::cgc::cgraph";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

/// `if` or `while`; printed bare in an op (`conditional_node if handle 0`).
def CGraph_ConditionKindAttr
    : EnumAttr<CGraph_Dialect, CGraph_ConditionKind, "condition_kind"> {
  // The op already puts a space before it.
  let assemblyFormat = "`` $value";
}

class CGraph_Type<string name, string typeMnemonic>
    : TypeDef<CGraph_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def CGraph_NodeType : CGraph_Type<"Node", "node"> {
  let summary = "a node of a CUDA graph, used to express dependencies";
}

/// An i64 read back as a signed value (ODS's I64Attr gives uint64_t), so
/// verifiers can see a negative offset.
def CGraph_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
    "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

class CGraph_Op<string mnemonic, list<Trait> traits = []>
    : Op<CGraph_Dialect, mnemonic, traits>;

def CGraph_GraphOp : CGraph_Op<"graph", [Symbol, IsolatedFromAbove,
    NoTerminator, SingleBlock]> {
  let summary = "one CUDA graph";
  let description = [{
    ```mlir
    cgraph.graph @island0 {
      %a = cgraph.memset_node deps() {offset = 0 : i64, bytes = 64 : i64, value = 0 : i64}
      %b = cgraph.kernel_node @k0 deps(%a) {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, args = array<i64: 0, 64>}
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def CGraph_KernelOp : CGraph_Op<"kernel", [Symbol]> {
  let summary = "a generated kernel: CUDA C++ compiled by NVRTC";
  let description = [{
    The source of one `extern "C" __global__` function whose name is the
    symbol. Identical fusion groups share one kernel. A kernel may keep
    state in a static device array that all its launches share (split-K's
    tile counters, cleared by each launch as it ends): the lowering then
    orders every node of it after the one before.

    ```mlir
    cgraph.kernel @elementwise_1f2e {source = "extern \"C\" __global__ void elementwise_1f2e(...) {...}"}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$source);
  let assemblyFormat = "$sym_name attr-dict";
}

def CGraph_KernelNodeOp : CGraph_Op<"kernel_node",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "launch of a generated kernel";
  let description = [{
    `kernel` names a `cgraph.kernel`; `args` are arena byte offsets passed
    as the kernel's pointer parameters, in order; `shared_bytes` is the
    dynamic shared memory. A kernel that sets the condition of a conditional
    node names it by `condition_handle` (the node's `handle`): the handle is
    passed as one more parameter, by value, after the pointers.

    `programmatic`, one flag per dependency, marks the edges that are
    programmatic (programmatic dependent launch: the node is launched once
    every block of that dependency has triggered at its end or returned,
    and waits for it to complete in its first instruction). Only an edge
    from another kernel node of a top-level graph may be programmatic, and
    not into a kernel that sets a condition (it has no wait and takes its
    handle by value); absent when no edge is. `--cgc-lower-to-cgraph` sets
    it where the target has programmatic launch (sm_90 or newer) unless its
    `programmatic-launch` option is off.

    ```mlir
    %n = cgraph.kernel_node @gemm_bias_gelu deps() {grid = array<i64: 4, 1, 1>, block = array<i64: 256, 1, 1>, args = array<i64: 0, 2048>}
    %m = cgraph.kernel_node @softmax deps(%n) {grid = array<i64: 4, 1, 1>, block = array<i64: 256, 1, 1>, args = array<i64: 2048, 4096>, programmatic = array<i1: true>}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<CGraph_NodeType>:$deps,
                       DenseI64ArrayAttr:$grid, DenseI64ArrayAttr:$block,
                       DenseI64ArrayAttr:$args,
                       OptionalAttr<StrAttr>:$label,
                       DefaultValuedAttr<CGraph_I64Attr, "0">:$shared_bytes,
                       OptionalAttr<CGraph_I64Attr>:$condition_handle,
                       OptionalAttr<DenseBoolArrayAttr>:$programmatic);
  let results = (outs CGraph_NodeType:$node);
  let assemblyFormat = "$kernel `deps` `(` $deps `)` attr-dict";
  let hasVerifier = 1;
}

def CGraph_MemcpyNodeOp : CGraph_Op<"memcpy_node"> {
  let summary = "device-to-device copy inside the arena";
  let description = [{
    ```mlir
    %n = cgraph.memcpy_node deps(%a) {dst = 4096 : i64, src = 0 : i64, bytes = 2048 : i64}
    ```
  }];
  let arguments = (ins Variadic<CGraph_NodeType>:$deps, CGraph_I64Attr:$dst,
                       CGraph_I64Attr:$src, CGraph_I64Attr:$bytes);
  let results = (outs CGraph_NodeType:$node);
  let assemblyFormat = "`deps` `(` $deps `)` attr-dict";
  let hasVerifier = 1;
}

def CGraph_ConditionalNodeOp : CGraph_Op<"conditional_node", [NoTerminator]> {
  let summary = "a CUDA conditional node: IF (with ELSE) or WHILE";
  let description = [{
    The bodies are graphs of their own, built into the child graphs the
    driver creates with the node. `handle` numbers the node's condition
    handle within the builder; kernels with that `condition_handle` set it
    on the device (before the node for IF and for WHILE's first test, at the
    end of the body for WHILE's next one), so the host never synchronizes to
    choose. `kind` is `if` (`body` runs when the condition is nonzero,
    `else_body` otherwise; it may be empty) or `while` (`body` runs while it
    is nonzero; no `else_body`).

    ```mlir
    %s = cgraph.kernel_node @cgc_if_condition deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 0>, condition_handle = 0 : i64}
    %c = cgraph.conditional_node if handle 0 deps(%s) {
      %k = cgraph.kernel_node @relu deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 256, 512>}
    } else {
      %k = cgraph.kernel_node @neg deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 256, 512>}
    }
    ```
  }];
  let arguments = (ins CGraph_ConditionKindAttr:$kind, CGraph_I64Attr:$handle,
                       Variadic<CGraph_NodeType>:$deps,
                       OptionalAttr<StrAttr>:$label);
  let results = (outs CGraph_NodeType:$node);
  let regions = (region SizedRegion<1>:$body, AnyRegion:$else_body);
  let assemblyFormat = [{
    $kind `handle` $handle `deps` `(` $deps `)` attr-dict-with-keyword $body
    (`else` $else_body^)?
  }];
  let hasVerifier = 1;
}

def CGraph_CublasLtMatmulNodeOp : CGraph_Op<"cublaslt_matmul_node"> {
  let summary = "a matrix product by cuBLASLt, captured into a child graph";
  let description = [{
    D = alpha * op(A) x op(B) + beta * C + bias over `batch` row-major
    matrices, every one stored contiguously: A [M, K] ([K, M] with
    `trans_a`), B [K, N] ([N, K] with `trans_b`), C and D [M, N], `bias`
    [N] added to every row. `a`, `b`, `c`, `d` and `bias` are arena
    offsets; `stride_a`, `stride_b` and `stride_d` count the elements from
    one matrix of the batch to the next (0: one matrix for every batch
    index). `a_type`, `b_type` and `d_type` are the stored element types
    (C and the bias have D's). `operand`, when set, is the type the
    product's inputs are rounded to on tensor cores (`tf32`, `bf16`, `f16`;
    accumulation in f32); absent, f32 products stay f32.

    The runtime loads cuBLASLt when the package is loaded, takes its first
    heuristic choice of algorithm for the problem, and captures the call
    into a child graph node. Every such node shares the model's workspace,
    so the lowering orders them one after another. `label` names the fused
    kernel the node computes.

    ```mlir
    %n = cgraph.cublaslt_matmul_node deps(%a) {label = "gemm_3", m = 1024 : i64, n = 1536 : i64, k = 384 : i64, batch = 1 : i64, trans_a = false, trans_b = true, a = 0 : i64, b = 4096 : i64, d = 8192 : i64, bias = 16384 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f32, b_type = f32, d_type = f32, operand = bf16}
    ```
  }];
  let arguments = (ins Variadic<CGraph_NodeType>:$deps, StrAttr:$label,
                       CGraph_I64Attr:$m, CGraph_I64Attr:$n,
                       CGraph_I64Attr:$k, CGraph_I64Attr:$batch,
                       BoolAttr:$trans_a, BoolAttr:$trans_b,
                       CGraph_I64Attr:$a, CGraph_I64Attr:$b, CGraph_I64Attr:$d,
                       OptionalAttr<CGraph_I64Attr>:$c,
                       OptionalAttr<CGraph_I64Attr>:$bias,
                       CGraph_I64Attr:$stride_a, CGraph_I64Attr:$stride_b,
                       CGraph_I64Attr:$stride_d,
                       F32Attr:$alpha, F32Attr:$beta,
                       TypeAttr:$a_type, TypeAttr:$b_type, TypeAttr:$d_type,
                       OptionalAttr<TypeAttr>:$operand);
  let results = (outs CGraph_NodeType:$node);
  let assemblyFormat = "`deps` `(` $deps `)` attr-dict";
  let hasVerifier = 1;
}

def CGraph_CudnnConvNodeOp : CGraph_Op<"cudnn_conv_node"> {
  let summary = "a 2-d convolution by cuDNN, captured into a child graph";
  let description = [{
    y = conv(x, w) + bias in NCHW: `input` [N, C, H, W], `filter`
    [K, C / groups, R, S], `output` [N, K, P, Q]; with `channels_last` the
    same dims stored NHWC, KRSC and NPQK (cuDNN's fast tensor-core
    layout; channels first, it converts to it on every call). `pads` the same on both
    sides of each spatial dim; `strides`, `dilations`; `bias` [K] per
    output channel when set. `x`, `w`, `y`, `bias` are arena offsets, all
    of `type` (f32, f16 or bf16). `operand`, when set, lets cuDNN use
    tensor cores (f32 data: TF32, cuDNN cannot round f32 data to 16 bits
    without risking f16 overflow); absent, f32 stays on FMAs.

    Like `cublaslt_matmul_node`: loaded at run time, cuDNN's first
    heuristic algorithm that fits the shared workspace, captured once into
    a child graph node; library nodes run one after another.

    ```mlir
    %n = cgraph.cudnn_conv_node deps(%a) {label = "conv_3", input = array<i64: 1, 64, 56, 56>, filter = array<i64: 64, 64, 3, 3>, output = array<i64: 1, 64, 56, 56>, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, x = 0 : i64, w = 802816 : i64, y = 950272 : i64, bias = 1753088 : i64, type = f32, operand = tf32}
    ```
  }];
  let arguments = (ins Variadic<CGraph_NodeType>:$deps, StrAttr:$label,
                       DenseI64ArrayAttr:$input, DenseI64ArrayAttr:$filter,
                       DenseI64ArrayAttr:$output, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$dilations, CGraph_I64Attr:$groups,
                       CGraph_I64Attr:$x, CGraph_I64Attr:$w, CGraph_I64Attr:$y,
                       OptionalAttr<CGraph_I64Attr>:$bias,
                       TypeAttr:$type, OptionalAttr<TypeAttr>:$operand,
                       UnitAttr:$channels_last);
  let results = (outs CGraph_NodeType:$node);
  let assemblyFormat = "`deps` `(` $deps `)` attr-dict";
  let hasVerifier = 1;
}

// An NCCL collective over the package's ranks: `count` elements of `type`
// each rank sends from arena offset `send`, the result at `recv`.
class CGraph_NcclNodeOp<string mnemonic> : CGraph_Op<mnemonic> {
  let arguments = (ins Variadic<CGraph_NodeType>:$deps, StrAttr:$label,
                       CGraph_I64Attr:$send, CGraph_I64Attr:$recv,
                       CGraph_I64Attr:$count, TypeAttr:$type,
                       CGraph_I64Attr:$ranks);
  let results = (outs CGraph_NodeType:$node);
  let assemblyFormat = "`deps` `(` $deps `)` attr-dict";
  let hasVerifier = 1;
}

def CGraph_NcclAllReduceNodeOp : CGraph_NcclNodeOp<"nccl_all_reduce_node"> {
  let summary = "the sum of a tensor over the ranks by NCCL, captured into a child graph";
  let description = [{
    Every one of `ranks` ranks (a process and a GPU each, running the same
    graphs) contributes the `count` elements of `type` at arena offset
    `send` and receives their sum at `recv` (`send` itself: in place).
    The runtime loads NCCL when the package is loaded, runs the call once
    on the model's communicator, and captures it into a child graph node.
    A rank's collectives must be issued in the same order on every rank:
    the lowering chains them one after another. `label` names the group.

    ```mlir
    %n = cgraph.nccl_all_reduce_node deps(%a) {label = "all_reduce_7", send = 4096 : i64, recv = 8192 : i64, count = 1024 : i64, type = f32, ranks = 2 : i64}
    ```
  }];
}

def CGraph_NcclAllGatherNodeOp : CGraph_NcclNodeOp<"nccl_all_gather_node"> {
  let summary = "every rank's tensor, one after another, by NCCL, captured into a child graph";
  let description = [{
    Every one of `ranks` ranks contributes the `count` elements of `type`
    at arena offset `send` and receives all of them at `recv`, rank r's
    `count` elements at element r x `count` (`ranks` x `count` in all). The
    two buffers do not overlap. Loaded, run once and captured as
    `cgraph.nccl_all_reduce_node` is, in the same chain of collectives.

    ```mlir
    %n = cgraph.nccl_all_gather_node deps(%a) {label = "all_gather_3", send = 0 : i64, recv = 4096 : i64, count = 1024 : i64, type = f32, ranks = 2 : i64}
    ```
  }];
}

def CGraph_MemsetNodeOp : CGraph_Op<"memset_node"> {
  let summary = "fill part of the arena with a byte value";
  let description = [{
    ```mlir
    %n = cgraph.memset_node deps() {offset = 0 : i64, bytes = 64 : i64, value = 0 : i64}
    ```
  }];
  let arguments = (ins Variadic<CGraph_NodeType>:$deps, CGraph_I64Attr:$offset,
                       CGraph_I64Attr:$bytes, CGraph_I64Attr:$value);
  let results = (outs CGraph_NodeType:$node);
  let assemblyFormat = "`deps` `(` $deps `)` attr-dict";
  let hasVerifier = 1;
}

include "cgc/Dialect/CGraph/IR/CGraphSchedule.td"

#endif // CGRAPH_OPS_TD
