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
