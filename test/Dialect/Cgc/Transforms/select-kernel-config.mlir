// RUN: cgc-opt %s -split-input-file --cgc-select-kernel-config | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-select-kernel-config=gemm-tile=64x64x4x4 2>&1 >/dev/null | FileCheck %s --check-prefix=FORCED
// RUN: not cgc-opt %s -split-input-file --cgc-select-kernel-config=gemm-tile=7x7 2>&1 | FileCheck %s --check-prefix=BADTILE
// RUN: cgc-opt %s -split-input-file --cgc-select-kernel-config=norm-rows=warp | FileCheck %s --check-prefix=WARP
// RUN: cgc-opt %s -split-input-file --cgc-select-kernel-config=norm-rows=block | FileCheck %s --check-prefix=BLOCK
// RUN: not cgc-opt %s -split-input-file --cgc-select-kernel-config=norm-rows=lane 2>&1 | FileCheck %s --check-prefix=BADROWS
// BADROWS: norm-rows must be auto, warp or block, got 'lane'

// A config written by hand is kept as it is; a kernel without one gets the
// template its kind and shapes call for.
// CHECK-LABEL: func @hand_written
// CHECK: cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [32, 32, 64], thread_tile = [4, 4], slices = 4, stages = 2, element = f32, accumulator = f32>
// CHECK: cgc.kernel "ew" elementwise config <strategy = elementwise, element = f32, accumulator = f32>
// FORCED-NOT: warning
func.func @hand_written(%a: tensor<64x64xf32> {cgc.arena_offset = 0 : i64},
                        %b: tensor<64x64xf32> {cgc.arena_offset = 16384 : i64})
    -> tensor<64x64xf32> {
  %r = cgc.island "island0" -> tensor<64x64xf32> {
    %k = cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [32, 32, 64], thread_tile = [4, 4], slices = 4, stages = 2, element = f32, accumulator = f32> -> tensor<64x64xf32> attributes {cgc.result_offsets = array<i64: 32768>} {
      %0 = cgc.matmul %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
      cgc.yield %0 : tensor<64x64xf32>
    }
    %e = cgc.kernel "ew" elementwise -> tensor<64x64xf32> attributes {cgc.result_offsets = array<i64: 49152>} {
      %0 = cgc.exp %k : tensor<64x64xf32>
      cgc.yield %0 : tensor<64x64xf32>
    }
    cgc.yield %e : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// Few rows against a weight stored [N, K] (gemm transB): one warp an
// output, 4 floats a lane where K is a multiple of 4 and both operands are
// 16-byte aligned. The layer norm's one row gets a block (a warp a row
// only once the rows fill the machine, see @norm_rows_fill); under
// norm-rows=warp a warp, 8 of its 256 values a lane.
// CHECK-LABEL: func @warp_dot
// CHECK: cgc.kernel "gemm" matmul config <strategy = warp_dot, vector_width = 4, element = f32, accumulator = f32>
// CHECK: cgc.kernel "ln" norm config <strategy = row_norm, element = f32, accumulator = f32>
// WARP-LABEL: func @warp_dot
// WARP: cgc.kernel "ln" norm config <strategy = row_norm, thread_tile = [8], element = f32, accumulator = f32>
func.func @warp_dot(%x: tensor<1x512xf32> {cgc.arena_offset = 0 : i64},
                    %w: tensor<256x512xf32> {cgc.arena_offset = 2048 : i64},
                    %s: tensor<256xf32> {cgc.arena_offset = 526336 : i64})
    -> tensor<1x256xf32> {
  %r = cgc.island "island0" -> tensor<1x256xf32> {
    %k = cgc.kernel "gemm" matmul -> tensor<1x256xf32> attributes {cgc.result_offsets = array<i64: 527360>} {
      %0 = cgc.gemm %x, %w {trans_b = true} : (tensor<1x512xf32>, tensor<256x512xf32>) -> tensor<1x256xf32>
      cgc.yield %0 : tensor<1x256xf32>
    }
    %n = cgc.kernel "ln" norm -> tensor<1x256xf32> attributes {cgc.result_offsets = array<i64: 528384>} {
      %0 = cgc.layer_norm %k, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x256xf32>, tensor<256xf32>) -> tensor<1x256xf32>
      cgc.yield %0 : tensor<1x256xf32>
    }
    cgc.yield %n : tensor<1x256xf32>
  }
  return %r : tensor<1x256xf32>
}

// -----

// A warp can normalize a contiguous row of up to 1024 values (32 a lane,
// rounded up); a longer row, or a softmax along an inner dim, gets a block.
// Under norm-rows=warp every row that fits takes a warp; by default these
// few rows (2 and 8) take a block each.
// WARP-LABEL: func @norm_rows
// WARP: cgc.kernel "ln_1024" norm config <strategy = row_norm, thread_tile = [32], element = f32, accumulator = f32>
// WARP: cgc.kernel "ln_1025" norm config <strategy = row_norm, element = f32, accumulator = f32>
// WARP: cgc.kernel "softmax_last" norm config <strategy = row_norm, thread_tile = [4], element = f32, accumulator = f32>
// WARP: cgc.kernel "softmax_inner" norm config <strategy = row_norm, element = f32, accumulator = f32>
// CHECK-LABEL: func @norm_rows
// CHECK: cgc.kernel "ln_1024" norm config <strategy = row_norm, element = f32, accumulator = f32>
// CHECK: cgc.kernel "ln_1025" norm config <strategy = row_norm, element = f32, accumulator = f32>
// CHECK: cgc.kernel "softmax_last" norm config <strategy = row_norm, element = f32, accumulator = f32>
// CHECK: cgc.kernel "softmax_inner" norm config <strategy = row_norm, element = f32, accumulator = f32>
// norm-rows=block (for timing the two apart): a block per row, always.
// BLOCK-LABEL: func @norm_rows
// BLOCK: cgc.kernel "ln_1024" norm config <strategy = row_norm, element = f32, accumulator = f32>
// BLOCK: cgc.kernel "ln_1025" norm config <strategy = row_norm, element = f32, accumulator = f32>
// BLOCK: cgc.kernel "softmax_last" norm config <strategy = row_norm, element = f32, accumulator = f32>
// BLOCK: cgc.kernel "softmax_inner" norm config <strategy = row_norm, element = f32, accumulator = f32>
func.func @norm_rows(%a: tensor<2x1024xf32> {cgc.arena_offset = 0 : i64},
                     %s: tensor<1024xf32> {cgc.arena_offset = 8192 : i64},
                     %b: tensor<2x1025xf32> {cgc.arena_offset = 12288 : i64},
                     %t: tensor<1025xf32> {cgc.arena_offset = 20608 : i64},
                     %c: tensor<8x100xf32> {cgc.arena_offset = 24832 : i64})
    -> (tensor<2x1024xf32>, tensor<2x1025xf32>, tensor<8x100xf32>, tensor<8x100xf32>) {
  %r:4 = cgc.island "island0" -> tensor<2x1024xf32>, tensor<2x1025xf32>, tensor<8x100xf32>, tensor<8x100xf32> {
    %n0 = cgc.kernel "ln_1024" norm -> tensor<2x1024xf32> attributes {cgc.result_offsets = array<i64: 28160>} {
      %0 = cgc.layer_norm %a, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x1024xf32>, tensor<1024xf32>) -> tensor<2x1024xf32>
      cgc.yield %0 : tensor<2x1024xf32>
    }
    %n1 = cgc.kernel "ln_1025" norm -> tensor<2x1025xf32> attributes {cgc.result_offsets = array<i64: 36352>} {
      %0 = cgc.layer_norm %b, %t {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x1025xf32>, tensor<1025xf32>) -> tensor<2x1025xf32>
      cgc.yield %0 : tensor<2x1025xf32>
    }
    %n2 = cgc.kernel "softmax_last" norm -> tensor<8x100xf32> attributes {cgc.result_offsets = array<i64: 44672>} {
      %0 = cgc.softmax %c {axis = 1 : i64} : tensor<8x100xf32>
      cgc.yield %0 : tensor<8x100xf32>
    }
    %n3 = cgc.kernel "softmax_inner" norm -> tensor<8x100xf32> attributes {cgc.result_offsets = array<i64: 47872>} {
      %0 = cgc.softmax %c {axis = 0 : i64} : tensor<8x100xf32>
      cgc.yield %0 : tensor<8x100xf32>
    }
    cgc.yield %n0, %n1, %n2, %n3 : tensor<2x1024xf32>, tensor<2x1025xf32>, tensor<8x100xf32>, tensor<8x100xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<2x1024xf32>, tensor<2x1025xf32>, tensor<8x100xf32>, tensor<8x100xf32>
}

// -----

// By default a warp takes each row once the rows fill every multiprocessor
// at 8 a block: 1056 rows are 132 blocks, one for each of the default
// target's 132 multiprocessors; 1048 rows leave one idle and take a block
// a row (measured on an H100: SelectKernelConfig.cpp, normLaneValues).
// CHECK-LABEL: func @norm_rows_fill
// CHECK: cgc.kernel "ln_1056_rows" norm config <strategy = row_norm, thread_tile = [2], element = f32, accumulator = f32>
// CHECK: cgc.kernel "ln_1048_rows" norm config <strategy = row_norm, element = f32, accumulator = f32>
// BLOCK-LABEL: func @norm_rows_fill
// BLOCK: cgc.kernel "ln_1056_rows" norm config <strategy = row_norm, element = f32, accumulator = f32>
func.func @norm_rows_fill(%a: tensor<1056x64xf32> {cgc.arena_offset = 0 : i64},
                          %s: tensor<64xf32> {cgc.arena_offset = 270336 : i64},
                          %b: tensor<1048x64xf32> {cgc.arena_offset = 270592 : i64})
    -> (tensor<1056x64xf32>, tensor<1048x64xf32>) {
  %r:2 = cgc.island "island0" -> tensor<1056x64xf32>, tensor<1048x64xf32> {
    %n0 = cgc.kernel "ln_1056_rows" norm -> tensor<1056x64xf32> attributes {cgc.result_offsets = array<i64: 538880>} {
      %0 = cgc.layer_norm %a, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1056x64xf32>, tensor<64xf32>) -> tensor<1056x64xf32>
      cgc.yield %0 : tensor<1056x64xf32>
    }
    %n1 = cgc.kernel "ln_1048_rows" norm -> tensor<1048x64xf32> attributes {cgc.result_offsets = array<i64: 809216>} {
      %0 = cgc.layer_norm %b, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1048x64xf32>, tensor<64xf32>) -> tensor<1048x64xf32>
      cgc.yield %0 : tensor<1048x64xf32>
    }
    cgc.yield %n0, %n1 : tensor<1056x64xf32>, tensor<1048x64xf32>
  }
  return %r#0, %r#1 : tensor<1056x64xf32>, tensor<1048x64xf32>
}

// -----

// A product plus a residual may split K; with the forced tile each tiled
// GEMM says which tile it took.
// CHECK-LABEL: func @split_k
// CHECK: cgc.kernel "mm" matmul config <strategy = gemm, {{.*}}split_k = 8
// FORCED: warning: gemm-tile: GEMM M=32 N=256 K=1000 batch=1 takes 64x64 (4x4 a thread), split-K 1
// BADTILE: error: gemm-tile='7x7' names no tile of the GEMM template (BMxBNxTMxTN[/SPLIT], SPLIT 1-64, with one of: 128x128x8x8 {{.*}} 16x16x4x4; or on tensor cores, BMxBNxWMxWN with one of: 128x128x64x32 {{.*}} 16x64x16x8)
func.func @split_k(%a: tensor<32x1000xf32> {cgc.arena_offset = 0 : i64},
                   %b: tensor<1000x256xf32> {cgc.arena_offset = 128000 : i64},
                   %c: tensor<256xf32> {cgc.arena_offset = 1152000 : i64})
    -> tensor<32x256xf32> {
  %r = cgc.island "island0" -> tensor<32x256xf32> {
    %k = cgc.kernel "mm" matmul -> tensor<32x256xf32> attributes {cgc.result_offsets = array<i64: 1153024>} {
      %0 = cgc.matmul %a, %b : tensor<32x1000xf32>, tensor<1000x256xf32>
      %1 = cgc.add %0, %c : tensor<32x256xf32>, tensor<256xf32>
      cgc.yield %1 : tensor<32x256xf32>
    }
    cgc.yield %k : tensor<32x256xf32>
  }
  return %r : tensor<32x256xf32>
}

// -----

// A reduction over many elements gets a block per output (block_tile: its
// threads), a short one a thread per output.
// CHECK-LABEL: func @reductions
// CHECK: cgc.kernel "long" reduce config <strategy = single_op, block_tile = [256], element = f32, accumulator = f32>
// CHECK: cgc.kernel "short" reduce config <strategy = single_op, element = f32, accumulator = f32>
func.func @reductions(%x: tensor<4x1000xf32> {cgc.arena_offset = 0 : i64},
                      %y: tensor<1000x4xf32> {cgc.arena_offset = 16384 : i64})
    -> (tensor<4x1xf32>, tensor<1000x1xf32>) {
  %r:2 = cgc.island "island0" -> tensor<4x1xf32>, tensor<1000x1xf32> {
    %a = cgc.kernel "long" reduce -> tensor<4x1xf32> attributes {cgc.result_offsets = array<i64: 32768>} {
      %0 = cgc.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<4x1000xf32>
      cgc.yield %0 : tensor<4x1xf32>
    }
    %b = cgc.kernel "short" reduce -> tensor<1000x1xf32> attributes {cgc.result_offsets = array<i64: 33024>} {
      %0 = cgc.reduce_sum %y {axes = array<i64: 1>, keepdims = true} : tensor<1000x4xf32>
      cgc.yield %0 : tensor<1000x1xf32>
    }
    cgc.yield %a, %b : tensor<4x1xf32>, tensor<1000x1xf32>
  }
  return %r#0, %r#1 : tensor<4x1xf32>, tensor<1000x1xf32>
}

// -----

// An all-reduce is NCCL's: a config of its own, no tiles.
// CHECK-LABEL: func @all_reduce
// CHECK: cgc.kernel "ar" single config <strategy = nccl_all_reduce, element = f32, accumulator = f32>
func.func @all_reduce(%a: tensor<64xf32>) -> tensor<64xf32> attributes {cgc.arena_bytes = 512 : i64} {
  %k = cgc.kernel "ar" single -> tensor<64xf32> {
    %0 = cgc.all_reduce %a {ranks = 2 : i64} : tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %k : tensor<64xf32>
}

// -----

// So is an all-gather.
// CHECK-LABEL: func @all_gather
// CHECK: cgc.kernel "ag" single config <strategy = nccl_all_gather, element = f16, accumulator = f32>
func.func @all_gather(%a: tensor<64xf16>) -> tensor<2x64xf16> attributes {cgc.arena_bytes = 512 : i64} {
  %k = cgc.kernel "ag" single -> tensor<2x64xf16> {
    %0 = cgc.all_gather %a {ranks = 2 : i64} : tensor<64xf16> -> tensor<2x64xf16>
    cgc.yield %0 : tensor<2x64xf16>
  }
  return %k : tensor<2x64xf16>
}
