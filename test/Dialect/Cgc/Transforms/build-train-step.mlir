// RUN: cgc-opt %s -split-input-file --cgc-build-train-step='optimizer=sgd:lr=0.5,momentum=0.9' | FileCheck %s --check-prefix=SGD
// RUN: cgc-opt %s -split-input-file --cgc-build-train-step='optimizer=adamw' | FileCheck %s --check-prefix=ADAM
// RUN: cgc-opt %s -split-input-file --cgc-build-train-step='optimizer=none trainable=w' | FileCheck %s --check-prefix=GRAD
// RUN: cgc-opt %s -split-input-file --cgc-build-train-step='loss=cross_entropy optimizer=none' | FileCheck %s --check-prefix=CE
// RUN: cgc-opt %s -split-input-file --cgc-build-train-step='optimizer=sgd:lr=0.5,accumulate=4' | FileCheck %s --check-prefix=ACC

// The initializers become state arguments after the new label; the results
// are the loss and each updated state tensor, named for what it replaces.
// SGD-LABEL: func.func @main
// SGD-SAME: {cgc.name = "x"}
// SGD-SAME: {cgc.name = "label"}
// SGD-SAME: {cgc.name = "w", cgc.state = dense<
// SGD-SAME: {cgc.name = "b", cgc.state = dense<
// SGD-SAME: {cgc.name = "w.momentum_buffer", cgc.state = dense<0.000000e+00>
// SGD-SAME: -> (tensor<f32> {cgc.name = "loss"}, tensor<3x2xf32> {cgc.name = "w.momentum_buffer", cgc.updates = "w.momentum_buffer"}, tensor<3x2xf32> {cgc.name = "w", cgc.updates = "w"}
// SGD-NOT: cgc.constant {{.*}}cgc.initializer
// SGD: %[[Y:.*]] = cgc.add
// SGD: %[[D:.*]] = cgc.sub %[[Y]], %arg1
// SGD: cgc.reduce_mean
// SGD: %[[GW:.*]] = cgc.gemm %arg0, {{.*}} {trans_a = true}
// SGD: %[[M:.*]] = cgc.constant dense<0.899999976>
// SGD: %[[BUF:.*]] = cgc.add {{.*}}, %[[GW]]
// SGD: %[[LR:.*]] = cgc.constant dense<5.000000e-01>
// SGD: %[[STEP:.*]] = cgc.mul %[[BUF]], %[[LR]]
// SGD: %[[W2:.*]] = cgc.sub %arg2, %[[STEP]]
// A step whose loss or gradients are not finite keeps the state and counts
// itself in skipped_steps.
// SGD: %[[OK:.*]] = cgc.less_equal
// SGD: %[[NEWBUF:.*]] = cgc.where %[[OK]], %[[BUF]], %arg4
// SGD: %[[NEWW:.*]] = cgc.where %[[OK]], %[[W2]], %arg2
// SGD: return {{.*}}, %[[NEWBUF]], %[[NEWW]],

// AdamW keeps two moments per tensor and one step count.
// ADAM-LABEL: func.func @main
// ADAM-SAME: {cgc.name = "step", cgc.state = dense<0.000000e+00> : tensor<f32>}
// ADAM-SAME: {cgc.name = "w.exp_avg", cgc.state = dense<0.000000e+00>
// ADAM-SAME: {cgc.name = "w.exp_avg_sq", cgc.state = dense<0.000000e+00>
// ADAM-SAME: {cgc.name = "step", cgc.updates = "step"}
// ADAM: cgc.sqrt
// ADAM: cgc.pow

// optimizer=none returns gradients; `b` is frozen (not in trainable) and
// stays a constant.
// GRAD-LABEL: func.func @main
// GRAD-NOT: cgc.name = "b"
// GRAD-SAME: -> (tensor<f32> {cgc.name = "loss"}, tensor<3x2xf32> {cgc.name = "grad.w"})
// GRAD: cgc.constant {{.*}}tensor<2xf32>

// cross_entropy: class indices, the classes recorded for the runners.
// CE-LABEL: func.func @main
// CE-SAME: tensor<4xi64> {cgc.label_classes = 2 : i64, cgc.name = "label"}
// CE: cgc.log_softmax
// CE: cgc.one_hot
// accumulate=4: each step adds its gradient into NAME.grad_sum; the fourth
// (micro_steps + 1 >= 4) updates with the mean and clears the sums and the
// count, the others keep the weights.
// ACC-LABEL: func.func @main
// ACC-SAME: {cgc.name = "micro_steps", cgc.state = dense<0.000000e+00> : tensor<f32>}
// ACC-SAME: {cgc.name = "w.grad_sum", cgc.state = dense<0.000000e+00> : tensor<3x2xf32>}
// ACC-SAME: {cgc.name = "b.grad_sum", cgc.state = dense<0.000000e+00> : tensor<2xf32>}
// ACC: %[[GW:.*]] = cgc.gemm %arg0, {{.*}} {trans_a = true}
// ACC: %[[COUNT:.*]] = cgc.add %arg4,
// ACC: %[[K:.*]] = cgc.constant dense<4.000000e+00>
// ACC: %[[DONE:.*]] = cgc.less_equal %[[K]], %[[COUNT]]
// ACC: %[[SUM:.*]] = cgc.add %arg5, %[[GW]]
// ACC: %[[QUARTER:.*]] = cgc.constant dense<2.500000e-01>
// ACC: %[[MEAN:.*]] = cgc.mul %[[SUM]], %[[QUARTER]]
// ACC: %[[LR:.*]] = cgc.constant dense<5.000000e-01>
// ACC: %[[DW:.*]] = cgc.mul %[[MEAN]], %[[LR]]
// ACC: %[[W2:.*]] = cgc.sub %arg2, %[[DW]]
// ACC: %[[NEWW:.*]] = cgc.where %[[DONE]], %[[W2]], %arg2
// ACC: %[[ZERO:.*]] = cgc.constant dense<0.000000e+00>
// ACC: %[[NEWSUM:.*]] = cgc.where %[[DONE]], %[[ZERO]], %[[SUM]]
// ACC: %[[ZERO2:.*]] = cgc.constant dense<0.000000e+00>
// ACC: cgc.where %[[DONE]], {{.*}}, %[[COUNT]]
// The finite test then guards the sums and the count too.
// ACC: %[[OK:.*]] = cgc.less_equal
// ACC: cgc.where %[[OK]], %[[NEWW]], %arg2
// ACC: cgc.where %[[OK]], {{.*}}, %arg3
// ACC: cgc.where %[[OK]], %[[NEWSUM]], %arg5
func.func @main(%x: tensor<4x3xf32> {cgc.name = "x"}) -> (tensor<4x2xf32> {cgc.name = "y"}) {
  %w = cgc.constant {cgc.initializer} dense<[[0.1, -0.2], [0.3, 0.05], [-0.1, 0.2]]> : tensor<3x2xf32> loc("w")
  %b = cgc.constant {cgc.initializer} dense<[0.01, -0.02]> : tensor<2xf32> loc("b")
  %0 = cgc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32>
  %1 = cgc.add %0, %b : tensor<4x2xf32>, tensor<2xf32>
  return %1 : tensor<4x2xf32>
}
