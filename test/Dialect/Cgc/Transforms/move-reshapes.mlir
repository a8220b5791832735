// RUN: cgc-opt %s -split-input-file --cgc-move-reshapes | FileCheck %s

// A sequence-first block at batch 1: the residual add of the reshaped
// out-projection runs on the projection's shape with one reshape after it
// (the residual reshaped before the product); the two reshapes of the
// projection's result collapse first. The reshape after the layer norm
// stays where it is (the norm keeps its own kernel).
// CHECK-LABEL: func @block
// CHECK: %[[N:.+]] = cgc.layer_norm %arg0
// CHECK-NEXT: %[[NR:.+]] = cgc.reshape %[[N]] : tensor<1x10x32xf32> -> tensor<10x1x32xf32>
// CHECK-NEXT: %[[P:.+]] = cgc.matmul %[[NR]], %arg2
// CHECK-NEXT: %[[F:.+]] = cgc.reshape %[[P]] : tensor<10x1x32xf32> -> tensor<10x32xf32>
// CHECK-NEXT: %[[RR:.+]] = cgc.reshape %arg0 : tensor<1x10x32xf32> -> tensor<10x32xf32>
// CHECK-NEXT: %[[G:.+]] = cgc.gemm %[[F]], %arg3
// CHECK-NEXT: %[[A:.+]] = cgc.add %[[G]], %[[RR]] : tensor<10x32xf32>, tensor<10x32xf32>
// CHECK-NEXT: %[[B:.+]] = cgc.reshape %[[A]] : tensor<10x32xf32> -> tensor<1x10x32xf32>
// CHECK-NEXT: return %[[B]]
func.func @block(%x: tensor<1x10x32xf32>, %s: tensor<32xf32>, %w: tensor<32x32xf32>, %wo: tensor<32x32xf32>) -> tensor<1x10x32xf32> {
  %0 = cgc.layer_norm %x, %s, %s {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x10x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x10x32xf32>
  %1 = cgc.reshape %0 : tensor<1x10x32xf32> -> tensor<10x1x32xf32>
  %2 = cgc.matmul %1, %w : tensor<10x1x32xf32>, tensor<32x32xf32>
  %3 = cgc.reshape %2 : tensor<10x1x32xf32> -> tensor<10x32xf32>
  %4 = cgc.gemm %3, %wo : (tensor<10x32xf32>, tensor<32x32xf32>) -> tensor<10x32xf32>
  %5 = cgc.reshape %4 : tensor<10x32xf32> -> tensor<10x1x32xf32>
  %6 = cgc.reshape %5 : tensor<10x1x32xf32> -> tensor<1x10x32xf32>
  %7 = cgc.add %6, %x : tensor<1x10x32xf32>, tensor<1x10x32xf32>
  return %7 : tensor<1x10x32xf32>
}

// -----

// Left alone: reshapes of layer norms, a reshaped value that no product
// made, an operand that broadcasts ([32] against [1, 10, 32]).
// CHECK-LABEL: func @kept
// CHECK-COUNT-3: cgc.layer_norm %arg0
// CHECK-NOT: cgc.layer_norm %{{[0-9]+}}
// CHECK: %[[R:.+]] = cgc.reshape %{{.+}} : tensor<10x32xf32> -> tensor<1x10x32xf32>
// CHECK-NEXT: cgc.add %[[R]], %arg1 : tensor<1x10x32xf32>, tensor<32xf32>
// CHECK: %[[E:.+]] = cgc.reshape %arg0 : tensor<1x10x32xf32> -> tensor<10x1x32xf32>
// CHECK-NEXT: cgc.neg %[[E]] : tensor<10x1x32xf32>
func.func @kept(%x: tensor<1x10x32xf32>, %s: tensor<32xf32>, %w: tensor<32x32xf32>) -> (tensor<1x320xf32>, tensor<10x1x32xf32>, tensor<1x10x32xf32>, tensor<10x1x32xf32>, tensor<1x10x32xf32>, tensor<10x1x32xf32>) {
  %0 = cgc.layer_norm %x, %s, %s {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x10x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x10x32xf32>
  %1 = cgc.reshape %0 : tensor<1x10x32xf32> -> tensor<1x320xf32>
  %t = cgc.constant dense<1.0> : tensor<10x32xf32>
  %2 = cgc.layer_norm %x, %t, %t {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x10x32xf32>, tensor<10x32xf32>, tensor<10x32xf32>) -> tensor<1x10x32xf32>
  %3 = cgc.reshape %2 : tensor<1x10x32xf32> -> tensor<10x1x32xf32>
  %4 = cgc.layer_norm %x, %s, %s {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x10x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x10x32xf32>
  %5 = cgc.reshape %4 : tensor<1x10x32xf32> -> tensor<10x1x32xf32>
  %f = cgc.reshape %x : tensor<1x10x32xf32> -> tensor<10x32xf32>
  %g = cgc.gemm %f, %w : (tensor<10x32xf32>, tensor<32x32xf32>) -> tensor<10x32xf32>
  %6 = cgc.reshape %g : tensor<10x32xf32> -> tensor<1x10x32xf32>
  %7 = cgc.add %6, %s : tensor<1x10x32xf32>, tensor<32xf32>
  %8 = cgc.reshape %x : tensor<1x10x32xf32> -> tensor<10x1x32xf32>
  %9 = cgc.neg %8 : tensor<10x1x32xf32>
  return %1, %3, %4, %5, %7, %9 : tensor<1x320xf32>, tensor<10x1x32xf32>, tensor<1x10x32xf32>, tensor<10x1x32xf32>, tensor<1x10x32xf32>, tensor<10x1x32xf32>
}
