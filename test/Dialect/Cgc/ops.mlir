// RUN: cgc-opt %s | cgc-opt | FileCheck %s
// Round trip: every op family parses, verifies and prints back.

// CHECK-LABEL: func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x3xi1>) -> tensor<2x3xf32> {
  // CHECK: cgc.add %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>
  %0 = cgc.add %x, %b : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: cgc.exp
  %1 = cgc.exp %0 : tensor<2x3xf32>
  // CHECK: cgc.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f64}
  %2 = cgc.leaky_relu %1 {alpha = 0.1 : f64} : tensor<2x3xf32>
  // CHECK: cgc.gelu %{{.*}} {approximate = "tanh"}
  %3 = cgc.gelu %2 {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK: cgc.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %4 = cgc.clip %3 {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3xf32>
  // CHECK: cgc.less %{{.*}} : tensor<2x3xf32>, tensor<3xf32>
  %5 = cgc.less %4, %b : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: cgc.where
  %6 = cgc.where %5, %4, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>
  // CHECK: cgc.is_nan %{{.*}} : tensor<2x3xf32> -> tensor<2x3xi1>
  %7 = cgc.is_nan %6 : tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: cgc.cast %{{.*}} : tensor<2x3xi1> -> tensor<2x3xf32>
  %8 = cgc.cast %7 : tensor<2x3xi1> -> tensor<2x3xf32>
  return %8 : tensor<2x3xf32>
}

// CHECK-LABEL: func @linalg
func.func @linalg(%a: tensor<8x16x32xf32>, %b: tensor<32x64xf32>, %x: tensor<1x512xf32>, %w: tensor<256x512xf32>, %bias: tensor<256xf32>) -> (tensor<8x16x64xf32>, tensor<1x256xf32>) {
  // CHECK: cgc.matmul {{.*}} : tensor<8x16x32xf32>, tensor<32x64xf32>
  %0 = cgc.matmul %a, %b : tensor<8x16x32xf32>, tensor<32x64xf32>
  // CHECK: cgc.gemm {{.*}} {trans_b = true} : (tensor<1x512xf32>, tensor<256x512xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  %1 = cgc.gemm %x, %w, %bias {trans_b = true} : (tensor<1x512xf32>, tensor<256x512xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  return %0, %1 : tensor<8x16x64xf32>, tensor<1x256xf32>
}

// CHECK-LABEL: func @conv_pool
func.func @conv_pool(%x: tensor<1x3x224x224xf32>, %w: tensor<32x3x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x56x56xf32> {
  // CHECK: cgc.conv {{.*}} -> tensor<1x32x112x112xf32>
  %0 = cgc.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
  // CHECK: cgc.max_pool
  %1 = cgc.max_pool %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x32x112x112xf32>
  return %1 : tensor<1x32x56x56xf32>
}

// CHECK-LABEL: func @reductions_and_norms
func.func @reductions_and_norms(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>) -> (tensor<2x1x4xf32>, tensor<2x4xi64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: cgc.reduce_sum {{.*}} {axes = array<i64: 1>, keepdims = true}
  %0 = cgc.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<2x3x4xf32>
  // CHECK: cgc.arg_max
  %1 = cgc.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<2x3x4xf32>
  // CHECK: cgc.softmax {{.*}} {axis = 2 : i64}
  %2 = cgc.softmax %x {axis = 2 : i64} : tensor<2x3x4xf32>
  // CHECK: cgc.layer_norm
  %3 = cgc.layer_norm %2, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2, %3 : tensor<2x1x4xf32>, tensor<2x4xi64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> (tensor<6xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) {
  // CHECK: cgc.reshape {{.*}} : tensor<2x3xf32> -> tensor<6xf32>
  %0 = cgc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  // CHECK: cgc.transpose {{.*}} {perm = array<i64: 1, 0>}
  %1 = cgc.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32>
  // CHECK: cgc.concat
  %2 = cgc.concat %x, %x {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x3xf32>
  // CHECK: cgc.slice
  %3 = cgc.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : tensor<2x3xf32>
  // CHECK: cgc.gather
  %4 = cgc.gather %x, %i {axis = 0 : i64} : tensor<2x3xf32>, tensor<4xi64>
  return %0, %1, %2, %3, %4 : tensor<6xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func @constants_fold_shape
func.func @constants_fold_shape(%x: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<3xf32>) {
  // CHECK: cgc.shape
  %0 = cgc.shape %x {start = 0 : i64, end = 2 : i64} : tensor<?x3xf32>
  // CHECK: cgc.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>
  %1 = cgc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %0, %1 : tensor<2xi64>, tensor<3xf32>
}

// CHECK-LABEL: func @eager
func.func @eager(%x: tensor<4x16xf32>, %c: tensor<i1>, %n: tensor<i64>) -> (tensor<2x?xi64>, tensor<4x16xf32>, tensor<4x16xf32>) {
  // CHECK: cgc.nonzero {{.*}} -> tensor<2x?xi64>
  %0 = cgc.nonzero %x : tensor<4x16xf32> -> tensor<2x?xi64>
  // CHECK: cgc.if
  %1 = cgc.if %c : tensor<i1> -> tensor<4x16xf32> {
    %e = cgc.exp %x : tensor<4x16xf32>
    cgc.yield %e : tensor<4x16xf32>
  } else {
    cgc.yield %x : tensor<4x16xf32>
  }
  // CHECK: cgc.loop
  %2 = cgc.loop %n, %c iter_args(%x) : (tensor<i64>, tensor<i1>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<4x16xf32>):
    %r = cgc.relu %v : tensor<4x16xf32>
    cgc.yield %cond, %r : tensor<i1>, tensor<4x16xf32>
  }
  return %0, %1, %2 : tensor<2x?xi64>, tensor<4x16xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func @random_mask
func.func @random_mask(%offset: tensor<i64>) -> (tensor<4x8xi1>, tensor<3xi1>) {
  // CHECK: cgc.random_mask %{{.*}} : tensor<i64> {ratio = 1.000000e-01 : f64, seed = 0 : i64, stream = 7 : i64} -> tensor<4x8xi1>
  %0 = cgc.random_mask %offset : tensor<i64> {ratio = 0.1 : f64, seed = 0 : i64, stream = 7 : i64} -> tensor<4x8xi1>
  // CHECK: cgc.random_mask {ratio = 5.000000e-01 : f64, seed = 3 : i64, stream = 1 : i64} -> tensor<3xi1>
  %1 = cgc.random_mask {ratio = 0.5 : f64, seed = 3 : i64, stream = 1 : i64} -> tensor<3xi1>
  return %0, %1 : tensor<4x8xi1>, tensor<3xi1>
}

// CHECK-LABEL: func @layer_norm_grad
func.func @layer_norm_grad(%x: tensor<8x512xf32>, %g: tensor<512xf32>, %dy: tensor<8x512xf32>) -> tensor<8x512xf32> {
  // CHECK: cgc.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-05 : f64}
  %0 = cgc.layer_norm_grad %x, %g, %dy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<8x512xf32>, tensor<512xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
  return %0 : tensor<8x512xf32>
}

// CHECK-LABEL: func @parallel
func.func @parallel(%w: tensor<64x256xf32>, %x: tensor<8x128xf32>) -> (tensor<64x128xf32>, tensor<8x128xf32>) {
  // CHECK: cgc.shard %{{.*}} {axis = 1 : i64, ranks = 2 : i64} : tensor<64x256xf32> -> tensor<64x128xf32>
  %0 = cgc.shard %w {axis = 1 : i64, ranks = 2 : i64} : tensor<64x256xf32> -> tensor<64x128xf32>
  // CHECK: cgc.all_reduce %{{.*}} {ranks = 2 : i64} : tensor<8x128xf32>
  %1 = cgc.all_reduce %x {ranks = 2 : i64} : tensor<8x128xf32>
  return %0, %1 : tensor<64x128xf32>, tensor<8x128xf32>
}

// CHECK-LABEL: func @gather
func.func @gather(%x: tensor<8x64xbf16>) -> tensor<4x8x64xbf16> {
  // CHECK: cgc.all_gather %{{.*}} {ranks = 4 : i64} : tensor<8x64xbf16> -> tensor<4x8x64xbf16>
  %0 = cgc.all_gather %x {ranks = 4 : i64} : tensor<8x64xbf16> -> tensor<4x8x64xbf16>
  return %0 : tensor<4x8x64xbf16>
}
