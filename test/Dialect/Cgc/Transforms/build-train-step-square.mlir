// RUN: cgc-opt %s --cgc-build-train-step='loss=none optimizer=sgd:lr=0.5' | FileCheck %s

// x * x takes one gradient, 2 dy x: not dy x for each operand and their sum
// (the squared error of --loss=mse is such a product too).
// CHECK-LABEL: func.func @main
// CHECK: %[[SQ:.*]] = cgc.mul %[[D:.*]], %[[D]]
// CHECK: %[[TWO:.*]] = cgc.constant dense<2.000000e+00>
// CHECK-NEXT: cgc.mul %{{.*}}, %[[TWO]]
// CHECK-NOT: cgc.add
// CHECK: cgc.sub %arg1
func.func @main(%x: tensor<4x3xf32> {cgc.name = "x"}) -> (tensor<f32> {cgc.name = "y"}) {
  %w = cgc.constant {cgc.initializer} dense<[0.5, -0.5, 0.25]> : tensor<3xf32> loc("w")
  %d = cgc.mul %x, %w : tensor<4x3xf32>, tensor<3xf32>
  %sq = cgc.mul %d, %d : tensor<4x3xf32>, tensor<4x3xf32>
  %y = cgc.reduce_sum %sq {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x3xf32>
  return %y : tensor<f32>
}
