// RUN: cgc-opt %s -split-input-file --cgc-loop-train-steps='steps=4' -verify-diagnostics | FileCheck %s

// A step (as --cgc-build-train-step writes it) becomes a 4-iteration loop:
// each batch input a ring of 4, the updated state carried, the frozen
// state read from outside, the losses written one per iteration.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x2x3xf32> {cgc.name = "x"}
// CHECK-SAME: %[[LABEL:[^:]+]]: tensor<4x2xf32> {cgc.name = "label"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<3xf32> {cgc.name = "w", cgc.state
// CHECK-SAME: %[[FROZEN:[^:]+]]: tensor<f32> {cgc.name = "frozen", cgc.state
// CHECK-SAME: -> (tensor<4xf32> {cgc.name = "loss"}, tensor<3xf32> {cgc.name = "w", cgc.updates = "w"})
// CHECK: %[[TRIP:.+]] = cgc.constant dense<4> : tensor<i64>
// CHECK: %[[GO:.+]] = cgc.constant dense<true> : tensor<i1>
// CHECK: %[[ZEROS:.+]] = cgc.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[LOOP:.+]]:2 = cgc.loop %[[TRIP]], %[[GO]] iter_args(%[[W]], %[[ZEROS]])
// CHECK: ^bb0(%[[I:[^:]+]]: tensor<i64>, %[[C:[^:]+]]: tensor<i1>, %[[WI:[^:]+]]: tensor<3xf32>, %[[LOSSES:[^:]+]]: tensor<4xf32>):
// CHECK: %[[XI:.+]] = cgc.gather %[[X]], %[[I]] {axis = 0 : i64} : tensor<4x2x3xf32>, tensor<i64>
// CHECK: %[[LI:.+]] = cgc.gather %[[LABEL]], %[[I]] {axis = 0 : i64}
// CHECK: %[[Y:.+]] = cgc.mul %[[XI]], %[[WI]]
// CHECK: cgc.mul %{{.+}}, %[[FROZEN]]
// CHECK: %[[NEW:.+]] = cgc.sub %[[WI]]
// CHECK: %[[IOTA:.+]] = cgc.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK: %[[HERE:.+]] = cgc.equal %[[IOTA]], %[[I]]
// CHECK: %[[RECORDED:.+]] = cgc.where %[[HERE]], %{{.+}}, %[[LOSSES]]
// CHECK: cgc.yield %[[C]], %[[NEW]], %[[RECORDED]]
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#0
func.func @main(%x: tensor<2x3xf32> {cgc.name = "x"}, %label: tensor<2xf32> {cgc.name = "label"},
                %w: tensor<3xf32> {cgc.name = "w", cgc.state = dense<1.0> : tensor<3xf32>},
                %frozen: tensor<f32> {cgc.name = "frozen", cgc.state = dense<2.0> : tensor<f32>})
    -> (tensor<f32> {cgc.name = "loss"}, tensor<3xf32> {cgc.name = "w", cgc.updates = "w"}) {
  %y = cgc.mul %x, %w : tensor<2x3xf32>, tensor<3xf32>
  %s = cgc.reduce_sum %y {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32>
  %d = cgc.sub %s, %label : tensor<2xf32>, tensor<2xf32>
  %l = cgc.reduce_mean %d {axes = array<i64: 0>, keepdims = false} : tensor<2xf32>
  %g = cgc.mul %l, %frozen : tensor<f32>, tensor<f32>
  %w2 = cgc.sub %w, %g : tensor<3xf32>, tensor<f32>
  return %l, %w2 : tensor<f32>, tensor<3xf32>
}

// -----

// expected-error@+1 {{--steps-per-launch needs a training step (cgc --train)}}
func.func @main(%x: tensor<2xf32> {cgc.name = "x"}) -> (tensor<2xf32> {cgc.name = "y"}) {
  return %x : tensor<2xf32>
}

// -----

// expected-error@+1 {{--steps-per-launch needs an optimizer: output 'grad.w' updates no state (optimizer=none returns gradients)}}
func.func @main(%x: tensor<3xf32> {cgc.name = "x"},
                %w: tensor<3xf32> {cgc.name = "w", cgc.state = dense<1.0> : tensor<3xf32>})
    -> (tensor<f32> {cgc.name = "loss"}, tensor<3xf32> {cgc.name = "grad.w"}) {
  %y = cgc.mul %x, %w : tensor<3xf32>, tensor<3xf32>
  %l = cgc.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : tensor<3xf32>
  return %l, %x : tensor<f32>, tensor<3xf32>
}
