// RUN: cgc-opt %s -split-input-file --cgc-channels-last="policy=always cudnn=always" | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-channels-last="policy=auto cudnn=always" | FileCheck %s --check-prefix=AUTO
// RUN: cgc-opt %s -split-input-file --cgc-channels-last="cudnn=auto precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: cgc-opt %s -split-input-file --cgc-channels-last="cudnn=auto precision=fp32" | FileCheck %s --check-prefix=FP32
// RUN: cgc-opt %s -split-input-file --cgc-channels-last="cudnn=auto precision=bf16 keep-fp32=Conv" | FileCheck %s --check-prefix=FP32

// A chain of two convolutions, a ReLU between, a bias-like constant and a
// residual add after: one transpose in, one out. The filter is stored
// [K, R, S, C] (w[k][c][r][s] at [k][r][s][c]), the [K, 1, 1] constant as
// [1, 1, 1, K]; the ops between run on the channels-last values.
// CHECK-LABEL: func @chain
// CHECK-DAG: %[[B:.+]] = cgc.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK-DAG: %[[V:.+]] = cgc.constant dense<5.000000e-01> : tensor<2x3x3x2xf32>
// CHECK-DAG: %[[W:.+]] = cgc.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]], {{\[\[\[}}5.000000e+00, 7.000000e+00], [6.000000e+00, 8.000000e+00]]]]> : tensor<2x1x2x2xf32>
// CHECK: cgc.island
// CHECK-NEXT: %[[X:.+]] = cgc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x2x4x5xf32>
// CHECK-NEXT: %[[C0:.+]] = cgc.conv %[[X]], %[[W]] {channels_last, {{.*}}} : (tensor<1x4x5x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT: %[[R:.+]] = cgc.relu %[[C0]] : tensor<1x4x4x2xf32>
// CHECK-NEXT: %[[C1:.+]] = cgc.conv %[[R]], %[[V]] {channels_last, {{.*}}} : (tensor<1x4x4x2xf32>, tensor<2x3x3x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT: %[[A:.+]] = cgc.add %[[C1]], %[[B]] : tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[S:.+]] = cgc.add %[[A]], %[[R]] : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
// CHECK-NEXT: %[[Y:.+]] = cgc.transpose %[[S]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x2xf32>
// CHECK-NEXT: cgc.yield %[[Y]]
// Under auto, two transposes left for two convolutions are too many
// (one a kConvsPerLayoutTranspose = 4): the function keeps its layout.
// AUTO-LABEL: func @chain
// AUTO-NOT: channels_last
// AUTO: return
func.func @chain(%x: tensor<1x2x4x5xf32>) -> tensor<1x2x4x4xf32> {
  %w = cgc.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]], [[[5.0, 6.0]], [[7.0, 8.0]]]]> : tensor<2x2x1x2xf32>
  %v = cgc.constant dense<0.5> : tensor<2x2x3x3xf32>
  %b = cgc.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %y = cgc.island "island0" -> tensor<1x2x4x4xf32> {
    %0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x5xf32>, tensor<2x2x1x2xf32>) -> tensor<1x2x4x4xf32>
    %1 = cgc.relu %0 : tensor<1x2x4x4xf32>
    %2 = cgc.conv %1, %v {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %3 = cgc.add %2, %b : tensor<1x2x4x4xf32>, tensor<2x1x1xf32>
    %4 = cgc.add %3, %1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
    cgc.yield %4 : tensor<1x2x4x4xf32>
  }
  return %y : tensor<1x2x4x4xf32>
}

// -----

// An op that reads the convolution twice (x * x) moves below it once.
// CHECK-LABEL: func @square
// CHECK: %[[C:.+]] = cgc.conv {{.*}}channels_last
// CHECK-NEXT: %[[M:.+]] = cgc.mul %[[C]], %[[C]] : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
// CHECK-NEXT: cgc.transpose %[[M]] {perm = array<i64: 0, 3, 1, 2>}
func.func @square(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %v = cgc.constant dense<0.5> : tensor<2x2x3x3xf32>
  %y = cgc.island "island0" -> tensor<1x2x4x4xf32> {
    %0 = cgc.conv %x, %v {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = cgc.mul %0, %0 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
    cgc.yield %1 : tensor<1x2x4x4xf32>
  }
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Reductions of a channels-last convolution reduce its NHWC result over
// the axes they name in NCHW: a global pool keeping its dims gives
// [N, 1, 1, C], its [N, C, 1, 1] as a view (a reshape); one dropping
// them gives [N, C] as it is; one over the channels gives [N, H, W].
// CHECK-LABEL: func @pool
// CHECK: %[[C:.+]] = cgc.conv {{.*}}channels_last
// CHECK-DAG: %[[G:.+]] = cgc.reduce_mean %[[C]] {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x4x4x3xf32>
// CHECK-DAG: %[[V:.+]] = cgc.reshape %[[G]] : tensor<2x1x1x3xf32> -> tensor<2x3x1x1xf32>
// CHECK-DAG: %[[F:.+]] = cgc.reduce_max %[[C]] {axes = array<i64: 1, 2>, keepdims = false} : tensor<2x4x4x3xf32>
// CHECK-DAG: %[[S:.+]] = cgc.reduce_sum %[[C]] {axes = array<i64: 3>, keepdims = false} : tensor<2x4x4x3xf32>
// CHECK-NOT: cgc.transpose %[[C]]
// CHECK: cgc.yield %[[V]], %[[F]], %[[S]]
func.func @pool(%x: tensor<2x3x4x4xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3xf32>, tensor<2x4x4xf32>) {
  %v = cgc.constant dense<0.5> : tensor<3x3x3x3xf32>
  %y:3 = cgc.island "island0" -> tensor<2x3x1x1xf32>, tensor<2x3xf32>, tensor<2x4x4xf32> {
    %0 = cgc.conv %x, %v {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x4x4xf32>
    %1 = cgc.reduce_mean %0 {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x4x4xf32>
    %2 = cgc.reduce_max %0 {axes = array<i64: 2, 3>, keepdims = false} : tensor<2x3x4x4xf32>
    %3 = cgc.reduce_sum %0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3x4x4xf32>
    cgc.yield %1, %2, %3 : tensor<2x3x1x1xf32>, tensor<2x3xf32>, tensor<2x4x4xf32>
  }
  return %y#0, %y#1, %y#2 : tensor<2x3x1x1xf32>, tensor<2x3xf32>, tensor<2x4x4xf32>
}

// -----

// Convolutions that stay channels first: a filter that is not a constant
// (a trained weight), asymmetric padding (cuDNN takes one pad a dim), and
// one outside an island.
// CHECK-LABEL: func @stay
// CHECK-NOT: cgc.transpose
// CHECK-NOT: channels_last
func.func @stay(%x: tensor<1x2x4x4xf32>, %u: tensor<2x2x3x3xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) {
  %v = cgc.constant dense<0.5> : tensor<2x2x3x3xf32>
  %y:2 = cgc.island "island0" -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> {
    %0 = cgc.conv %x, %u {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = cgc.conv %x, %v {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 2, 2, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    cgc.yield %0, %1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  }
  %z = cgc.conv %x, %v {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  return %y#0, %y#1, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>
}

// -----

// One convolution between ops that stay channels first: `always` converts
// it, `auto` does not (two transposes, a copy kernel each, for one
// convolution).
// CHECK-LABEL: func @alone
// CHECK: cgc.transpose
// CHECK: channels_last
// CHECK: cgc.transpose
// AUTO-LABEL: func @alone
// AUTO-NOT: cgc.transpose
// AUTO-NOT: channels_last
func.func @alone(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %v = cgc.constant dense<0.5> : tensor<2x2x3x3xf32>
  %y = cgc.island "island0" -> tensor<1x2x4x4xf32> {
    %0 = cgc.conv %x, %v {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = cgc.max_pool %0 {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x2x4x4xf32>
    cgc.yield %1 : tensor<1x2x4x4xf32>
  }
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Eight 64-channel 3x3 convolutions of 32 x 32 pixels (38 M multiply-adds
// each): --cudnn=auto takes them on tensor cores (bf16), so they turn
// channels last; in fp32 (FMAs), or kept f32 by --keep-fp32, cuDNN does
// not take them and they stay.
// BF16-LABEL: func @wide
// BF16: cgc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// BF16-COUNT-8: channels_last
// BF16: cgc.transpose %{{.+}} {perm = array<i64: 0, 3, 1, 2>}
// BF16-NOT: cgc.transpose
// AUTO-LABEL: func @wide
// AUTO-COUNT-8: channels_last
// FP32-LABEL: func @wide
// FP32-NOT: cgc.transpose
// FP32-NOT: channels_last
func.func @wide(%x: tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32> {
  %w = cgc.constant dense<0.01> : tensor<64x64x3x3xf32>
  %y = cgc.island "island0" -> tensor<1x64x32x32xf32> {
    %c0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    %c1 = cgc.conv %c0, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    %c2 = cgc.conv %c1, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    %c3 = cgc.conv %c2, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    %c4 = cgc.conv %c3, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    %c5 = cgc.conv %c4, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    %c6 = cgc.conv %c5, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    %c7 = cgc.conv %c6, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x32x32xf32>
    cgc.yield %c7 : tensor<1x64x32x32xf32>
  }
  return %y : tensor<1x64x32x32xf32>
}
