// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-lower-to-cgraph -verify-diagnostics

// The kernel writers print what the config says; where the problem cannot
// take it they say so instead of printing wrong code. A kernel without a
// config has not been through --cgc-select-kernel-config.
// expected-remark@+1 {{arena:}}
func.func @no_config(%x: tensor<64xf32>) -> tensor<64xf32> {
  %r = cgc.island "island0" -> tensor<64xf32> {
    // expected-error@+1 {{kernel 'k' has no #cgc.kernel_config (run --cgc-select-kernel-config first)}}
    %k = cgc.kernel "k" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %k : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// 4-float loads a lane need K to be a multiple of 4.
// expected-remark@+1 {{arena:}}
func.func @warp_vector_ragged(%x: tensor<1x6xf32>, %w: tensor<8x6xf32>) -> tensor<1x8xf32> {
  %r = cgc.island "island0" -> tensor<1x8xf32> {
    // expected-error@+1 {{kernel config asks for 4-float loads a lane, but the operands are not contiguous 16-byte-aligned float32 rows of a multiple of 4}}
    %k = cgc.kernel "g" matmul config <strategy = warp_dot, vector_width = 4, element = f32, accumulator = f32> -> tensor<1x8xf32> {
      %0 = cgc.gemm %x, %w {trans_b = true} : (tensor<1x6xf32>, tensor<8x6xf32>) -> tensor<1x8xf32>
      cgc.yield %0 : tensor<1x8xf32>
    }
    cgc.yield %k : tensor<1x8xf32>
  }
  return %r : tensor<1x8xf32>
}

// -----

// The cp.async loop copies 16 bytes at a time: K = 30 rows of A are not.
// expected-remark@+1 {{arena:}}
func.func @async_copy_ragged(%a: tensor<128x30xf32>, %b: tensor<30x128xf32>) -> tensor<128x128xf32> {
  %r = cgc.island "island0" -> tensor<128x128xf32> {
    // expected-error@+1 {{kernel config asks for the cp.async loop, but an operand is not a plain 16-byte-aligned array read 4 elements at a time}}
    %k = cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [96, 96, 16], thread_tile = [6, 6], stages = 4, async_copy = true, element = f32, accumulator = f32> -> tensor<128x128xf32> {
      %0 = cgc.matmul %a, %b : tensor<128x30xf32>, tensor<30x128xf32>
      cgc.yield %0 : tensor<128x128xf32>
    }
    cgc.yield %k : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}

// -----

// K slices of 32 with async_copy stage the operands as stored, 16-bit
// values of the operand type: f32 operands cannot take them.
// expected-remark@+1 {{arena:}}
func.func @half_stages_of_f32(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = cgc.island "island0" -> tensor<64x64xf32> {
    // expected-error@+1 {{kernel config asks for the cp.async loop over 16-bit stages (K slices of 32), but an operand is not a plain 16-byte-aligned array of the operand type read 8 elements at a time (A along K)}}
    %k = cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [64, 64, 32], thread_tile = [32, 16], stages = 4, async_copy = true, element = f32, accumulator = f32, operand = bf16> -> tensor<64x64xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
      cgc.yield %0 : tensor<64x64xf32>
    }
    cgc.yield %k : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// A warp a row holds thread_tile[0] values a lane: 3 x 32 is short of a
// row of 100.
// expected-remark@+1 {{arena:}}
func.func @warp_rows_short(%x: tensor<2x100xf32>, %s: tensor<100xf32>) -> tensor<2x100xf32> {
  %r = cgc.island "island0" -> tensor<2x100xf32> {
    %n = cgc.kernel "ln" norm config <strategy = row_norm, thread_tile = [3], element = f32, accumulator = f32> -> tensor<2x100xf32> {
      // expected-error@+1 {{a norm config's thread_tile [3] (values a lane, a warp a row) must hold rows of 100 contiguous elements (at most 96)}}
      %0 = cgc.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x100xf32>, tensor<100xf32>) -> tensor<2x100xf32>
      cgc.yield %0 : tensor<2x100xf32>
    }
    cgc.yield %n : tensor<2x100xf32>
  }
  return %r : tensor<2x100xf32>
}

// -----

// A softmax along dim 0 has no contiguous rows for a warp to hold.
// expected-remark@+1 {{arena:}}
func.func @warp_rows_strided(%x: tensor<2x100xf32>) -> tensor<2x100xf32> {
  %r = cgc.island "island0" -> tensor<2x100xf32> {
    %m = cgc.kernel "sm" norm config <strategy = row_norm, thread_tile = [1], element = f32, accumulator = f32> -> tensor<2x100xf32> {
      // expected-error@+1 {{a norm config's thread_tile [1] (values a lane, a warp a row) must hold rows of 2 contiguous elements (at most 32)}}
      %0 = cgc.softmax %x {axis = 0 : i64} : tensor<2x100xf32>
      cgc.yield %0 : tensor<2x100xf32>
    }
    cgc.yield %m : tensor<2x100xf32>
  }
  return %r : tensor<2x100xf32>
}
