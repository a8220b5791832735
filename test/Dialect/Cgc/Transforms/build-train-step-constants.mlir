// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd:lr=0.5' | FileCheck %s

// Constants that are not initializers (GELU's 1 and 0.5, written as ONNX
// Add and Mul with scalars) get no gradient: the backward sums dy only for
// the operands on the path from a trained tensor, so neither the Add's nor
// the Sub's constant gets a full reduction over the activations (it would
// stay in the step as a dead kernel).
// CHECK-LABEL: func.func @main
// CHECK-NOT: cgc.reduce_sum {{.*}}axes = array<i64: 0, 1>
// CHECK: %[[GW:.*]] = cgc.gemm %arg0, {{.*}} {trans_a = true}
// CHECK-NOT: cgc.reduce_sum {{.*}}axes = array<i64: 0, 1>
// CHECK: return
func.func @main(%x: tensor<4x3xf32> {cgc.name = "x"}) -> (tensor<4x2xf32> {cgc.name = "y"}) {
  %w = cgc.constant {cgc.initializer} dense<[[0.1, -0.2], [0.3, 0.05], [-0.1, 0.2]]> : tensor<3x2xf32> loc("w")
  %one = cgc.constant dense<1.0> : tensor<f32>
  %half = cgc.constant dense<0.5> : tensor<f32>
  %0 = cgc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32>
  %1 = cgc.tanh %0 : tensor<4x2xf32>
  %2 = cgc.add %1, %one : tensor<4x2xf32>, tensor<f32>
  %3 = cgc.sub %half, %2 : tensor<f32>, tensor<4x2xf32>
  %4 = cgc.mul %3, %half : tensor<4x2xf32>, tensor<f32>
  return %4 : tensor<4x2xf32>
}
