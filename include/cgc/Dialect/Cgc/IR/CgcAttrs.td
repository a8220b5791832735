//===- CgcAttrs.td - target and kernel-config attributes ---*- tablegen -*-===//
//
// The decisions code generation used to make in C++ strings, as typed IR:
// which GPU the module is compiled for (`#cgc.target`), which template a
// fused kernel uses (`KernelKind`, `KernelStrategy`) and with which tiles
// (`#cgc.kernel_config`). `--cgc-select-kernel-config` stamps the configs;
// the kernel writers only read them.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_ATTRS_TD
#define CGC_ATTRS_TD

include "cgc/Dialect/Cgc/IR/CgcDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Cgc_KernelKind : I32EnumAttr<"KernelKind",
    "what a fusion group computes (set by --cgc-fuse)", [
  I32EnumAttrCase<"elementwise", 0>, I32EnumAttrCase<"matmul", 1>,
  I32EnumAttrCase<"norm", 2>, I32EnumAttrCase<"conv", 3>,
  I32EnumAttrCase<"reduce", 4>, I32EnumAttrCase<"attention", 5>,
  I32EnumAttrCase<"single", 6>]> {
  let cppNamespace = "::cgc";
  let genSpecializedAttr = 0;
}
def Cgc_KernelKindAttr : EnumAttr<Cgc_Dialect, Cgc_KernelKind, "kernel_kind">;

def Cgc_KernelStrategy : I32EnumAttr<"KernelStrategy",
    "the code template a kernel is written with", [
  // A group whose results nobody reads: an empty launch keeps the graph's
  // nodes in step with the kernels.
  I32EnumAttrCase<"none", 0>,
  // One thread per element of a broadcast elementwise chain.
  I32EnumAttrCase<"elementwise", 1>,
  // Matmul/gemm with one warp per output element (few rows, or not f32).
  I32EnumAttrCase<"warp_dot", 2>,
  // The tiled fp32 GEMM template (block and register tiles, split-K).
  I32EnumAttrCase<"gemm", 3>,
  // A 2-d convolution as an implicit GEMM on the tiled template.
  I32EnumAttrCase<"conv_gemm", 4>,
  // A 2-d depthwise convolution, 4 outputs of a row a thread.
  I32EnumAttrCase<"depthwise", 5>,
  // LayerNorm / Softmax / LogSoftmax: one block per normalized row.
  I32EnumAttrCase<"row_norm", 6>,
  // Q x K^T, softmax, x V fused, R query rows a block.
  I32EnumAttrCase<"attention", 7>,
  // One op's own template (reductions, data movement, pooling, direct
  // convolution, ...), with any fused prologue and epilogue.
  I32EnumAttrCase<"single_op", 8>,
  // A matmul group's product by cuBLASLt (a child graph node), the rest of
  // its epilogue by an elementwise kernel in place (LibraryCalls.h).
  I32EnumAttrCase<"cublaslt_matmul", 9>,
  // A conv group's convolution by cuDNN (a child graph node), its bias and
  // the rest of its epilogue by an elementwise kernel in place.
  I32EnumAttrCase<"cudnn_conv", 10>,
  // A `single` group holding one cgc.all_reduce: NCCL's all-reduce (sum)
  // over the ranks, a child graph node of the rank's graph; no kernel.
  I32EnumAttrCase<"nccl_all_reduce", 11>,
  // A `single` group holding one cgc.all_gather: NCCL's all-gather, a child
  // graph node as the all-reduce is; no kernel.
  I32EnumAttrCase<"nccl_all_gather", 12>]> {
  let cppNamespace = "::cgc";
  let genSpecializedAttr = 0;
}
def Cgc_KernelStrategyAttr
    : EnumAttr<Cgc_Dialect, Cgc_KernelStrategy, "kernel_strategy">;

def Cgc_TensorCoreGeneration : I32EnumAttr<"TensorCoreGeneration",
    "the tensor-core instructions a GPU offers", [
  I32EnumAttrCase<"mma_sync", 0>, // sm_80, sm_86, sm_89
  I32EnumAttrCase<"wgmma", 1>,    // sm_90
  I32EnumAttrCase<"tcgen05", 2>]> // sm_100
{
  let cppNamespace = "::cgc";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Cgc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Cgc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Cgc_TargetAttr : Cgc_Attr<"Target", "target"> {
  let summary = "the GPU a module is compiled for";
  let description = [{
    Everything code generation needs to know about the GPU, so that no GPU
    constant is written in a kernel writer or a cost model. `cgc --arch=sm_XY`
    puts the entry of the table of known GPUs (`cgc::knownTarget`) on the
    module as `cgc.target`; a test can write one by hand.

    ```mlir
    module attributes {cgc.target = #cgc.target<arch = "sm_90", gpu = "H100/H200",
        multiprocessors = 132, static_shared_bytes = 49152,
        max_shared_bytes_per_block = 232448,
        shared_bytes_per_multiprocessor = 233472,
        registers_per_multiprocessor = 65536,
        max_threads_per_multiprocessor = 2048,
        fp32_lanes_per_multiprocessor = 128, tensor_cores = wgmma>} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the NVRTC architecture, sm_XY">:$arch,
    StringRefParameter<"the GPUs the numbers are taken from">:$gpu,
    "int64_t":$multiprocessors,
    // Static shared memory a block may declare without opting in: the
    // limit of today's templates.
    "int64_t":$static_shared_bytes,
    "int64_t":$max_shared_bytes_per_block,
    "int64_t":$shared_bytes_per_multiprocessor,
    "int64_t":$registers_per_multiprocessor,
    "int64_t":$max_threads_per_multiprocessor,
    // fp32 FMAs a multiprocessor issues a clock.
    "int64_t":$fp32_lanes_per_multiprocessor,
    EnumParameter<Cgc_TensorCoreGeneration>:$tensor_cores
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The XY of sm_XY (90 for sm_90), 0 if the arch does not parse.
    unsigned getComputeCapability() const;
    /// Programmatic dependent launch (griddepcontrol) needs sm_90 or newer:
    /// below it the instructions compile to nothing.
    bool hasProgrammaticLaunch() const;
  }];
}

def Cgc_KernelConfigAttr : Cgc_Attr<"KernelConfig", "kernel_config"> {
  let summary = "how one fused kernel is generated";
  let description = [{
    Chosen by `--cgc-select-kernel-config` (or written by hand) and read by
    the kernel writers, which decide nothing themselves. Fields that a
    strategy does not use keep their defaults and are not printed.

    - `threads`: threads a block.
    - `block_tile`: `gemm`/`conv_gemm`: [BM, BN, BK], the outputs a block
      owns and the K slice a step; `attention`: [R, KC], query rows a block
      and keys a chunk; `single_op` on a reduction or arg-reduction: [T],
      a block of T threads per output (absent: a thread per output).
    - `thread_tile`: `gemm`/`conv_gemm`: [TM, TN] outputs a thread;
      `attention`: [SR, SK, OR, OC], a thread's tile of the scores (rows x
      keys) and of the output (rows x columns); `row_norm`: [V], a warp
      normalizes a row (the block's warps take consecutive rows), each lane
      holding V of its values in registers (absent: a block a row).
    - `slices`: thread groups that split each K slice (their partial sums
      meet in shared memory).
    - `stages`: K slices in flight; with `async_copy` the shared-memory
      stages of the cp.async pipeline, else 2 (registers prefetch the next
      slice while the current one is multiplied). A tensor-core config
      with `async_copy` and a 16-bit `operand` stages f32 slices where
      `block_tile`'s K is 16, and the operands' stored 16-bit values
      (both must be stored in `operand`'s type) where it is 32.
    - `split_k`: blocks sharing one output tile's K range, in one launch:
      the first of a tile's blocks to arrive stores the output's terms
      that do not depend on the product (bias, residual), the others add
      their partial sums atomically once it has (never with
      `deterministic`). The tile counters this takes live in the kernel,
      so the graph runs no two launches of one split kernel at once.
    - `min_blocks_per_multiprocessor`: the second `__launch_bounds__`
      argument (1 leaves registers to ptxas).
    - `vector_width`: `warp_dot`: elements a lane loads at once;
      `elementwise` and the in-place epilogue of `cublaslt_matmul` and
      `cudnn_conv`: elements a thread computes (a block's threads take
      consecutive elements, then the next run), their loads in flight
      together.
    - `element`, `accumulator`: the stored and the accumulated type.
    - `operand`: `gemm`/`conv_gemm` on tensor cores: the type both inputs
      of the product are rounded to (`tf32`, `f16` or `bf16`; accumulation
      stays `accumulator`). `thread_tile` is then [WM, WN], a warp's tile
      of the outputs. `attention` on tensor cores: both products' inputs;
      `thread_tile` is then [16, WK], a warp's query rows and its keys of
      each chunk (16 or 32), and `block_tile` [R, KC] holds 8 such warps.
      Absent: FMAs in `element`'s own precision.
      `cublaslt_matmul` and `cudnn_conv` take it too (the library's
      compute type) and no tiles: the library picks its own.
      `nccl_all_reduce` takes no tiles and no operand; it adds in
      `element`'s own type, as NCCL does. `nccl_all_gather` neither.
    - `deterministic`: results bit-identical run to run.

    ```mlir
    #cgc.kernel_config<strategy = gemm, block_tile = array<i64: 96, 96, 16>,
        thread_tile = array<i64: 6, 6>, stages = 4, async_copy = true,
        element = f32, accumulator = f32>
    #cgc.kernel_config<strategy = gemm, block_tile = array<i64: 64, 64, 32>,
        thread_tile = array<i64: 32, 16>, stages = 2, element = f32,
        accumulator = f32, operand = bf16>
    #cgc.kernel_config<strategy = cublaslt_matmul, element = f32,
        accumulator = f32, operand = bf16>
    ```
  }];
  let parameters = (ins
    EnumParameter<Cgc_KernelStrategy>:$strategy,
    DefaultValuedParameter<"int64_t", "256">:$threads,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$block_tile,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$thread_tile,
    DefaultValuedParameter<"int64_t", "1">:$slices,
    DefaultValuedParameter<"int64_t", "1">:$stages,
    DefaultValuedParameter<"bool", "false">:$async_copy,
    DefaultValuedParameter<"int64_t", "1">:$split_k,
    DefaultValuedParameter<"int64_t", "1">:$min_blocks_per_multiprocessor,
    DefaultValuedParameter<"int64_t", "1">:$vector_width,
    "::mlir::Type":$element,
    "::mlir::Type":$accumulator,
    OptionalParameter<"::mlir::Type">:$operand,
    DefaultValuedParameter<"bool", "false">:$deterministic
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Block/thread tile entry `i`, or 0 where the tile is absent or shorter.
    int64_t blockTile(unsigned i) const;
    int64_t threadTile(unsigned i) const;
    /// Whether the product runs on tensor cores (`operand` is set).
    bool usesTensorCores() const { return static_cast<bool>(getOperand()); }
  }];
}

#endif // CGC_ATTRS_TD
