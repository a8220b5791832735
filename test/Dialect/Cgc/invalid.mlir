// RUN: cgc-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{operands are not broadcast-compatible}}
  %0 = cgc.add %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<3xf32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{operand element types differ}}
  %0 = cgc.mul %a, %b : tensor<3xf32>, tensor<3xi64>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+1 {{matmul contraction dims differ: 3 vs 4}}
  %0 = cgc.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

func.func @wrong_result_type(%a: tensor<2x3xf32>, %w: tensor<4x3xf32>) {
  // expected-error@+2 {{inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x5xf32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = cgc.gemm %a, %w {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error@+2 {{conv input has 4 channels but weight expects 3 x group 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = cgc.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{reduction axis 2 is out of range for rank 2}}
  %0 = cgc.reduce_sum %x {axes = array<i64: 2>, keepdims = true} : tensor<2x3xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{element count changes from 6 to 8}}
  %0 = cgc.reshape %x : tensor<2x3xf32> -> tensor<8xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{transpose perm is not a permutation}}
  %0 = cgc.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32>
  return
}

// -----

func.func @unary_float_only(%x: tensor<3xi64>) {
  // expected-error@+1 {{must be ranked tensor of floating-point values}}
  %0 = cgc.exp %x : tensor<3xi64>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<1x3x4x4xf32>, %p: tensor<4xf32>) {
  // expected-error@+1 {{scale must be 1-D with 3 elements}}
  %0 = cgc.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f64} : (tensor<1x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @if_branch_types(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<5xf32>) {
  // expected-error@+1 {{else branch yields}}
  %0 = cgc.if %c : tensor<i1> -> tensor<4xf32> {
    cgc.yield %x : tensor<4xf32>
  } else {
    cgc.yield %y : tensor<5xf32>
  }
  return
}

// -----

func.func @expand_bad(%x: tensor<3x2xf32>) {
  // expected-error@+1 {{cannot broadcast}}
  %0 = cgc.expand %x : tensor<3x2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @kernel_config_no_such_tile(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{the GEMM template has no 48x48 tile of 4x4 a thread; it offers 128x128/8x8}}
  %k = cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [48, 48, 16], thread_tile = [4, 4], stages = 2, element = f32, accumulator = f32> -> tensor<64x64xf32> {
    %0 = cgc.matmul %a, %a : tensor<64x64xf32>, tensor<64x64xf32>
    cgc.yield %0 : tensor<64x64xf32>
  }
  return %k : tensor<64x64xf32>
}

// -----

func.func @kernel_config_wrong_template(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'cgc.kernel' op 'ew': config attention cannot compute a elementwise group}}
  %k = cgc.kernel "ew" elementwise config <strategy = attention, block_tile = [8, 32], thread_tile = [1, 1, 1, 1], element = f32, accumulator = f32> -> tensor<64xf32> {
    %0 = cgc.exp %a : tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %k : tensor<64xf32>
}

// -----

func.func @kernel_config_split_k_not_linear(%a: tensor<32x1000xf32>, %b: tensor<1000x256xf32>) -> tensor<32x256xf32> {
  // expected-error@+1 {{'cgc.kernel' op 'mm': config gemm splits K, but the group stores more than the product plus terms independent of it}}
  %k = cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [32, 32, 64], thread_tile = [4, 4], slices = 4, stages = 2, split_k = 4, element = f32, accumulator = f32> -> tensor<32x256xf32> {
    %0 = cgc.matmul %a, %b : tensor<32x1000xf32>, tensor<1000x256xf32>
    %1 = cgc.relu %0 : tensor<32x256xf32>
    cgc.yield %1 : tensor<32x256xf32>
  }
  return %k : tensor<32x256xf32>
}

// -----

module attributes {cgc.target = #cgc.target<arch = "sm_90", gpu = "H100/H200", multiprocessors = 132, static_shared_bytes = 49152, max_shared_bytes_per_block = 232448, shared_bytes_per_multiprocessor = 233472, registers_per_multiprocessor = 65536, max_threads_per_multiprocessor = 2048, fp32_lanes_per_multiprocessor = 128, tensor_cores = wgmma>} {
  func.func @kernel_config_too_much_shared_memory(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
    // expected-error@+1 {{'mm': config gemm needs 65536 bytes of shared memory; the target's blocks have 49152}}
    %k = cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [128, 128, 16], thread_tile = [8, 8], stages = 4, async_copy = true, element = f32, accumulator = f32> -> tensor<256x256xf32> {
      %0 = cgc.matmul %a, %a : tensor<256x256xf32>, tensor<256x256xf32>
      cgc.yield %0 : tensor<256x256xf32>
    }
    return %k : tensor<256x256xf32>
  }
}

// -----

func.func @kernel_config_deterministic_split(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{a deterministic config cannot split K}}
  %k = cgc.kernel "ew" elementwise config <strategy = elementwise, split_k = 2, element = f32, accumulator = f32, deterministic = true> -> tensor<64xf32> {
    %0 = cgc.exp %a : tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %k : tensor<64xf32>
}

// -----

// expected-error@+1 {{target arch 'gfx90a' is not sm_XY}}
module attributes {cgc.target = #cgc.target<arch = "gfx90a", gpu = "MI250", multiprocessors = 104, static_shared_bytes = 49152, max_shared_bytes_per_block = 65536, shared_bytes_per_multiprocessor = 65536, registers_per_multiprocessor = 65536, max_threads_per_multiprocessor = 2048, fp32_lanes_per_multiprocessor = 128, tensor_cores = mma_sync>} {
}

// -----

func.func @kernel_config_reduction_threads(%a: tensor<4x100xf32>) -> tensor<4x1xf32> {
  // expected-error@+1 {{a single_op block_tile is [threads a block spends on one output]: a power of two from 32 to 256}}
  %k = cgc.kernel "r" reduce config <strategy = single_op, block_tile = [100], element = f32, accumulator = f32> -> tensor<4x1xf32> {
    %0 = cgc.reduce_sum %a {axes = array<i64: 1>, keepdims = true} : tensor<4x100xf32>
    cgc.yield %0 : tensor<4x1xf32>
  }
  return %k : tensor<4x1xf32>
}

// -----

func.func @row_norm_values(%a: tensor<4x100xf32>) -> tensor<4x100xf32> {
  // expected-error@+1 {{a row_norm config takes no block_tile and at most thread_tile [V]: a warp a row, 1 to 32 values a lane}}
  %k = cgc.kernel "sm" norm config <strategy = row_norm, thread_tile = [33], element = f32, accumulator = f32> -> tensor<4x100xf32> {
    %0 = cgc.softmax %a {axis = 1 : i64} : tensor<4x100xf32>
    cgc.yield %0 : tensor<4x100xf32>
  }
  return %k : tensor<4x100xf32>
}

// -----

func.func @cublaslt_with_tiles(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{a library config (cublaslt_matmul, cudnn_conv) has no tiles, slices, stages or split_k: the library picks its algorithm}}
  %k = cgc.kernel "mm" matmul config <strategy = cublaslt_matmul, block_tile = [32, 32, 64], element = f32, accumulator = f32> -> tensor<64x64xf32> {
    %0 = cgc.matmul %a, %a : tensor<64x64xf32>, tensor<64x64xf32>
    cgc.yield %0 : tensor<64x64xf32>
  }
  return %k : tensor<64x64xf32>
}

// -----

func.func @cublaslt_operand(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{a library config's operand is tf32, f16 or bf16, not 'f64'}}
  %k = cgc.kernel "mm" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32, operand = f64> -> tensor<64x64xf32> {
    %0 = cgc.matmul %a, %a : tensor<64x64xf32>, tensor<64x64xf32>
    cgc.yield %0 : tensor<64x64xf32>
  }
  return %k : tensor<64x64xf32>
}

// -----

// A group cuBLASLt cannot take (a written config is checked like a tuned
// one from a cache).
func.func @cublaslt_layer_norm(%a: tensor<64x64xf32>, %s: tensor<64xf32>) -> tensor<64x64xf32> {
  %r = cgc.island "island0" -> tensor<64x64xf32> {
    // expected-error@+1 {{'cgc.kernel' op 'mm': config cublaslt_matmul cannot take this group: its layer norm is fused before the product}}
    %k = cgc.kernel "mm" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32> -> tensor<64x64xf32> {
      %0 = cgc.layer_norm %a, %s, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
      %1 = cgc.matmul %0, %a : tensor<64x64xf32>, tensor<64x64xf32>
      cgc.yield %1 : tensor<64x64xf32>
    }
    cgc.yield %k : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

func.func @cublaslt_outside_island(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{cannot take this group: it is not a node of an island's own graph}}
  %k = cgc.kernel "mm" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32> -> tensor<64x64xf32> {
    %0 = cgc.matmul %a, %a : tensor<64x64xf32>, tensor<64x64xf32>
    cgc.yield %0 : tensor<64x64xf32>
  }
  return %k : tensor<64x64xf32>
}

// -----

// A convolution cuDNN cannot take: padding that differs between the sides.
func.func @cudnn_asymmetric_pads(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x2x2xf32>) -> tensor<1x4x8x8xf32> {
  %r = cgc.island "island0" -> tensor<1x4x8x8xf32> {
    // expected-error@+1 {{'cgc.kernel' op 'c': config cudnn_conv cannot take this group: its padding differs between the two sides of a dim}}
    %k = cgc.kernel "c" conv config <strategy = cudnn_conv, element = f32, accumulator = f32> -> tensor<1x4x8x8xf32> {
      %0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x8x8xf32>
      cgc.yield %0 : tensor<1x4x8x8xf32>
    }
    cgc.yield %k : tensor<1x4x8x8xf32>
  }
  return %r : tensor<1x4x8x8xf32>
}

// -----

func.func @tensor_core_attention_warps(%q: tensor<2x8x16xf32>, %kt: tensor<2x16x8xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error@+1 {{a tensor-core attention block of 32 rows and 32 keys a chunk is not 8 warps of 16 rows x 16 keys}}
  %k = cgc.kernel "att" attention config <strategy = attention, block_tile = [32, 32], thread_tile = [16, 16], element = f32, accumulator = f32, operand = bf16> -> tensor<2x8x16xf32> {
    %0 = cgc.matmul %q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>
    %1 = cgc.softmax %0 {axis = 2 : i64} : tensor<2x8x8xf32>
    %2 = cgc.matmul %1, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>
    cgc.yield %2 : tensor<2x8x16xf32>
  }
  return %k : tensor<2x8x16xf32>
}

// -----

func.func @tensor_core_attention_tile(%q: tensor<2x8x16xf32>, %kt: tensor<2x16x8xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error@+1 {{a tensor-core attention config needs block_tile [R, KC] and thread_tile [16, WK] (a warp's rows, and its keys of a chunk: 16 or 32)}}
  %k = cgc.kernel "att" attention config <strategy = attention, block_tile = [32, 64], thread_tile = [4, 2, 4, 2], element = f32, accumulator = f32, operand = f16> -> tensor<2x8x16xf32> {
    %0 = cgc.matmul %q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>
    %1 = cgc.softmax %0 {axis = 2 : i64} : tensor<2x8x8xf32>
    %2 = cgc.matmul %1, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>
    cgc.yield %2 : tensor<2x8x16xf32>
  }
  return %k : tensor<2x8x16xf32>
}

// -----

func.func @tensor_core_reduce(%a: tensor<64x64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{only gemm, conv_gemm and attention configs run on tensor cores (take an operand type)}}
  %k = cgc.kernel "r" reduce config <strategy = single_op, element = f32, accumulator = f32, operand = bf16> -> tensor<64xf32> {
    %0 = cgc.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : tensor<64x64xf32> -> tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %k : tensor<64xf32>
}

// -----

func.func @random_mask_ratio() -> tensor<4xi1> {
  // expected-error@+1 {{ratio must be in [0, 1), got 1}}
  %0 = cgc.random_mask {ratio = 1.0 : f64, seed = 0 : i64, stream = 0 : i64} -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @random_mask_offset(%offset: tensor<2xi64>) -> tensor<4xi1> {
  // expected-error@+1 {{offset must be a rank-0 tensor<i64>}}
  %0 = cgc.random_mask %offset : tensor<2xi64> {ratio = 0.5 : f64, seed = 0 : i64, stream = 0 : i64} -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @layer_norm_grad_types(%x: tensor<8x4xf32>, %g: tensor<4xf32>, %dy: tensor<8x2xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{output_grad must have the input's type}}
  %0 = cgc.layer_norm_grad %x, %g, %dy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<8x4xf32>, tensor<4xf32>, tensor<8x2xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @layer_norm_grad_scale(%x: tensor<8x4xf32>, %g: tensor<3xf32>, %dy: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{scale does not broadcast to the normalized dims}}
  %0 = cgc.layer_norm_grad %x, %g, %dy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<8x4xf32>, tensor<3xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @tensor_core_async_slice_depth(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{the tensor-core template takes K slices of 16 'bf16' values with async_copy (f32 stages), or 32 (16-bit stages), not 64}}
  %k = cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [64, 64, 64], thread_tile = [32, 16], stages = 4, async_copy = true, element = f32, accumulator = f32, operand = bf16> -> tensor<64x64xf32> {
    %0 = cgc.matmul %a, %a : tensor<64x64xf32>, tensor<64x64xf32>
    cgc.yield %0 : tensor<64x64xf32>
  }
  return %k : tensor<64x64xf32>
}

// -----

func.func @shard_uneven(%w: tensor<4x6xf32>) -> tensor<4x1xf32> {
  // expected-error@+2 {{shards a static dim into 2 or more equal parts (of each of its groups), got 4 parts of 1 groups of 'tensor<4x6xf32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = cgc.shard %w {axis = 1 : i64, ranks = 4 : i64} : tensor<4x6xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @shard_axis(%w: tensor<4x6xf32>) -> tensor<4x3xf32> {
  // expected-error@+2 {{shard axis 2 out of range}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = cgc.shard %w {axis = 2 : i64, ranks = 2 : i64} : tensor<4x6xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @all_reduce_one_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'cgc.all_reduce' op combines 2 or more ranks, got 1}}
  %0 = cgc.all_reduce %x {ranks = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @all_gather_one_rank(%x: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error@+1 {{'cgc.all_gather' op combines 2 or more ranks, got 1}}
  %0 = cgc.all_gather %x {ranks = 1 : i64} : tensor<4xf32> -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @all_gather_shape(%x: tensor<4x3xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'cgc.all_gather' op stacks 2 tensors of type 'tensor<4x3xf32>' into 'tensor<2x4x3xf32>', not 'tensor<4x6xf32>'}}
  %0 = cgc.all_gather %x {ranks = 2 : i64} : tensor<4x3xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @all_gather_needs_its_strategy(%a: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error@+1 {{'ag': config nccl_all_reduce needs a group of one cgc.all_reduce}}
  %k = cgc.kernel "ag" single config <strategy = nccl_all_reduce, element = f32, accumulator = f32> -> tensor<2x64xf32> {
    %0 = cgc.all_gather %a {ranks = 2 : i64} : tensor<64xf32> -> tensor<2x64xf32>
    cgc.yield %0 : tensor<2x64xf32>
  }
  return %k : tensor<2x64xf32>
}

// -----

func.func @all_gather_not_single_op(%a: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error@+1 {{'ag': config single_op cannot compute an all-gather (nccl_all_gather does)}}
  %k = cgc.kernel "ag" single config <strategy = single_op, element = f32, accumulator = f32> -> tensor<2x64xf32> {
    %0 = cgc.all_gather %a {ranks = 2 : i64} : tensor<64xf32> -> tensor<2x64xf32>
    cgc.yield %0 : tensor<2x64xf32>
  }
  return %k : tensor<2x64xf32>
}

// -----

func.func @all_gather_with_tiles(%a: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error@+1 {{an nccl_all_gather config has no tiles, slices, stages, split_k or operand: NCCL runs its own kernels}}
  %k = cgc.kernel "ag" single config <strategy = nccl_all_gather, block_tile = [32], element = f32, accumulator = f32> -> tensor<2x64xf32> {
    %0 = cgc.all_gather %a {ranks = 2 : i64} : tensor<64xf32> -> tensor<2x64xf32>
    cgc.yield %0 : tensor<2x64xf32>
  }
  return %k : tensor<2x64xf32>
}

// -----

func.func @all_reduce_with_tiles(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{an nccl_all_reduce config has no tiles, slices, stages, split_k or operand: NCCL runs its own kernels}}
  %k = cgc.kernel "ar" single config <strategy = nccl_all_reduce, block_tile = [32], element = f32, accumulator = f32> -> tensor<64xf32> {
    %0 = cgc.all_reduce %a {ranks = 2 : i64} : tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %k : tensor<64xf32>
}

// -----

func.func @all_reduce_needs_its_strategy(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'ar': config single_op cannot compute an all-reduce (nccl_all_reduce does)}}
  %k = cgc.kernel "ar" single config <strategy = single_op, element = f32, accumulator = f32> -> tensor<64xf32> {
    %0 = cgc.all_reduce %a {ranks = 2 : i64} : tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %k : tensor<64xf32>
}

// -----

func.func @all_reduce_strategy_needs_one(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'ex': config nccl_all_reduce needs a group of one cgc.all_reduce}}
  %k = cgc.kernel "ex" single config <strategy = nccl_all_reduce, element = f32, accumulator = f32> -> tensor<64xf32> {
    %0 = cgc.exp %a : tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %k : tensor<64xf32>
}
