// RUN: cgc-opt %s -split-input-file --cgc-fold-batch-norms | FileCheck %s

// k = scale / sqrt(var + eps) = [2 / sqrt(4), 0.5 / sqrt(1)] = [1, 0.5]:
// W' = W * k per output channel, b' = (b - mean) * k + beta.
// CHECK-LABEL: func @folded
// CHECK-DAG: %[[W:.+]] = cgc.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]], {{\[\[\[}}1.500000e+00, 2.000000e+00]]]]> : tensor<2x1x1x2xf32>
// CHECK-DAG: %[[B:.+]] = cgc.constant dense<[1.500000e+00, -5.000000e-01]> : tensor<2xf32>
// CHECK: %[[Y:.+]] = cgc.conv %arg0, %[[W]], %[[B]]
// CHECK-NOT: cgc.batch_norm
// CHECK: return %[[Y]]
func.func @folded(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x2xf32> {
  %w = cgc.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %b = cgc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %scale = cgc.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %beta = cgc.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %mean = cgc.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %var = cgc.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %0 = cgc.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  %1 = cgc.batch_norm %0, %scale, %beta, %mean, %var {epsilon = 1.0 : f64} : (tensor<1x2x3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  return %1 : tensor<1x2x3x2xf32>
}

// -----

// Batch norms that stay: after a convolution something else reads too,
// after one whose filter is not a constant, and with statistics that are
// not constants.
// CHECK-LABEL: func @kept
// CHECK-COUNT-3: cgc.batch_norm
func.func @kept(%x: tensor<1x1x3x3xf32>, %u: tensor<2x1x1x2xf32>, %m: tensor<2xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) {
  %w = cgc.constant dense<1.0> : tensor<2x1x1x2xf32>
  %p = cgc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x3x2xf32>
  %1 = cgc.batch_norm %0, %p, %p, %p, %p {epsilon = 1.0e-05 : f64} : (tensor<1x2x3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  %2 = cgc.conv %x, %u {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x3x2xf32>
  %3 = cgc.batch_norm %2, %p, %p, %p, %p {epsilon = 1.0e-05 : f64} : (tensor<1x2x3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  %4 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x3x2xf32>
  %5 = cgc.batch_norm %4, %p, %p, %m, %p {epsilon = 1.0e-05 : f64} : (tensor<1x2x3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  return %0, %1, %3, %5 : tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>
}
