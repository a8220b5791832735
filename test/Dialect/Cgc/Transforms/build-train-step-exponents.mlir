// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd:lr=0.5' | FileCheck %s
// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd:lr=0.5 trainable=w,p' | FileCheck %s --check-prefix=NAMED

// An initializer read only as a power's exponent (x^p, as a model re-saved
// with its scalars as initializers has it) is a setting of the model, not
// a parameter: trained by default, its gradient x^p ln x is NaN at every
// negative x and the step would skip every update. It trains only when
// --trainable names it.
// CHECK-LABEL: func.func @main
// CHECK-SAME: cgc.name = "w", cgc.state
// CHECK-NOT: cgc.name = "p", cgc.state
// CHECK: cgc.pow
// NAMED-LABEL: func.func @main
// NAMED-SAME: cgc.name = "w", cgc.state
// NAMED-SAME: cgc.name = "p", cgc.state
func.func @main(%x: tensor<4x3xf32> {cgc.name = "x"}) -> (tensor<4x2xf32> {cgc.name = "y"}) {
  %w = cgc.constant {cgc.initializer} dense<[[0.1, -0.2], [0.3, 0.05], [-0.1, 0.2]]> : tensor<3x2xf32> loc("w")
  %p = cgc.constant {cgc.initializer} dense<2.0> : tensor<f32> loc("p")
  %0 = cgc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32>
  %1 = cgc.pow %0, %p : tensor<4x2xf32>, tensor<f32>
  return %1 : tensor<4x2xf32>
}
