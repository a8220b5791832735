// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd:lr=0.5' --split-input-file --verify-diagnostics | FileCheck %s

// An initializer whose next value the importer marked (cgc.running_statistic)
// is state updated by the step, not a trained parameter; what nothing reads
// (the dead %unread, a node output no one took) is swept.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2xf32> {cgc.name = "x"}
// CHECK-SAME: %[[W:[^:]*]]: tensor<2xf32> {cgc.name = "w", cgc.state
// CHECK-SAME: %[[M:[^:]*]]: tensor<2xf32> {cgc.name = "m", cgc.state = dense<[1.000000e+00, 2.000000e+00]>
// CHECK-SAME: {cgc.name = "w", cgc.updates = "w"}
// CHECK-SAME: {cgc.name = "m", cgc.updates = "m"}
// CHECK-NOT: cgc.running_statistic
// CHECK-NOT: cgc.sqrt
// CHECK: %[[MEAN:.*]] = cgc.reduce_mean %[[X]]
// CHECK: %[[NEXT:.*]] = cgc.add %[[M]], %[[MEAN]]
// CHECK: cgc.where %{{.*}}, %[[NEXT]], %[[M]]
// CHECK: return
func.func @main(%x: tensor<4x2xf32> {cgc.name = "x"}) -> (tensor<4x2xf32> {cgc.name = "y"}) {
  %w = cgc.constant {cgc.initializer} dense<[0.5, -0.5]> : tensor<2xf32> loc("w")
  %m = cgc.constant {cgc.initializer} dense<[1.0, 2.0]> : tensor<2xf32> loc("m")
  %mean = cgc.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : tensor<4x2xf32>
  %next = cgc.add %m, %mean {cgc.running_statistic = "m"} : tensor<2xf32>, tensor<2xf32>
  %unread = cgc.sqrt %mean : tensor<2xf32>
  %y = cgc.mul %x, %w : tensor<4x2xf32>, tensor<2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @main(%x: tensor<4x2xf32> {cgc.name = "x"}) -> (tensor<4x2xf32> {cgc.name = "y"}) {
  %w = cgc.constant {cgc.initializer} dense<[0.5, -0.5]> : tensor<2xf32> loc("w")
  %m = cgc.constant {cgc.initializer} dense<[1.0, 2.0]> : tensor<2xf32> loc("m")
  %mean = cgc.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : tensor<4x2xf32>
  %next = cgc.add %m, %mean {cgc.running_statistic = "m"} : tensor<2xf32>, tensor<2xf32>
  // expected-error @+1 {{the running statistic 'm' is updated by two nodes; a tensor of state takes one update a step}}
  %again = cgc.sub %m, %mean {cgc.running_statistic = "m"} : tensor<2xf32>, tensor<2xf32>
  %y = cgc.mul %x, %w : tensor<4x2xf32>, tensor<2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @main(%x: tensor<4x2xf32> {cgc.name = "x"}) -> (tensor<4x2xf32> {cgc.name = "y"}) {
  %w = cgc.constant {cgc.initializer} dense<[0.5, -0.5]> : tensor<2xf32> loc("w")
  %mean = cgc.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : tensor<4x2xf32>
  // expected-error @+1 {{the running statistic 'gone' is not an initializer of the model}}
  %next = cgc.add %w, %mean {cgc.running_statistic = "gone"} : tensor<2xf32>, tensor<2xf32>
  %y = cgc.mul %x, %w : tensor<4x2xf32>, tensor<2xf32>
  return %y : tensor<4x2xf32>
}
