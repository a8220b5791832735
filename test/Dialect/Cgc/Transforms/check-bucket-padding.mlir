// RUN: cgc-opt %s -split-input-file -cgc-check-bucket-padding=dim=N -verify-diagnostics | FileCheck %s

// Rows stay independent through a gemm on the batch side, broadcasting, a
// transpose and a reshape that keeps N a whole dim: every input and result
// gets the axis of N.
// CHECK-LABEL: func.func @rows_independent
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {cgc.bucket_axis = 0 : i64, cgc.dim_names = ["N", ""]}
// CHECK-SAME: %{{.*}}: tensor<8x16xf32> {cgc.bucket_axis = -1 : i64}
// CHECK-SAME: -> (tensor<16x4xf32> {cgc.bucket_axis = 1 : i64}, tensor<4x2x8xf32> {cgc.bucket_axis = 0 : i64})
func.func @rows_independent(%x: tensor<4x8xf32> {cgc.dim_names = ["N", ""]},
                            %w: tensor<8x16xf32>)
    -> (tensor<16x4xf32>, tensor<4x2x8xf32>) {
  %g = cgc.gemm %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %b = cgc.constant dense<1.0> : tensor<16xf32>
  %a = cgc.add %g, %b : tensor<4x16xf32>, tensor<16xf32>
  %r = cgc.relu %a : tensor<4x16xf32>
  %t = cgc.transpose %r {perm = array<i64: 1, 0>} : tensor<4x16xf32>
  %s = cgc.reshape %r : tensor<4x16xf32> -> tensor<4x2x8xf32>
  return %t, %s : tensor<16x4xf32>, tensor<4x2x8xf32>
}

// -----

func.func @reduce_over_rows(%x: tensor<4x8xf32> {cgc.dim_names = ["N", ""]}) -> tensor<1x8xf32> {
  // expected-error@+1 {{--pad-to-bucket: reduce_mean reduces over the padded dim (axis 0), so padded 'N' rows could change real results}}
  %m = cgc.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32>
  return %m : tensor<1x8xf32>
}

// -----

func.func @contract_over_rows(%x: tensor<4x8xf32> {cgc.dim_names = ["N", ""]},
                              %w: tensor<8x4xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{--pad-to-bucket: matmul contracts over the padded dim (its K)}}
  %y = cgc.matmul %w, %x : tensor<8x4xf32>, tensor<4x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @softmax_along_rows(%x: tensor<4x8xf32> {cgc.dim_names = ["N", ""]}) -> tensor<4x8xf32> {
  // expected-error@+1 {{--pad-to-bucket: softmax works along the padded dim (axis 0)}}
  %y = cgc.softmax %x {axis = 0 : i64} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @reshape_merges_rows(%x: tensor<4x8xf32> {cgc.dim_names = ["N", ""]}) -> tensor<32xf32> {
  // expected-error@+1 {{--pad-to-bucket: reshape merges or splits the padded dim}}
  %y = cgc.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

func.func @conv_batch_is_fine(%x: tensor<2x3x8x8xf32> {cgc.dim_names = ["N", "", "", ""]},
                              %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %y = cgc.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}
// CHECK-LABEL: func.func @conv_batch_is_fine
// CHECK-SAME: -> (tensor<2x4x6x6xf32> {cgc.bucket_axis = 0 : i64})

// -----

func.func @unknown_op(%x: tensor<4x8xf32> {cgc.dim_names = ["N", ""]}) -> tensor<4x8xf32> {
  // expected-error@+1 {{--pad-to-bucket: cumsum works along the padded dim (axis 0)}}
  %y = cgc.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
