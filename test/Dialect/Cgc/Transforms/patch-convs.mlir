// RUN: cgc-opt %s -split-input-file --cgc-patch-convs | FileCheck %s

// A ViT's patch embedding (2 x 2 patches of a 4 x 6 image, bias): the
// input as patches [N P1 P2, C k1 k2], a Gemm with the weights as
// [O, C k1 k2], and the rows back to [N, O, P1, P2] for the flattening.
// CHECK-LABEL: func @patches
// CHECK-NEXT: %[[S:.+]] = cgc.reshape %arg0 : tensor<2x3x4x6xf32> -> tensor<2x3x2x2x3x2xf32>
// CHECK-NEXT: %[[T:.+]] = cgc.transpose %[[S]] {perm = array<i64: 0, 2, 4, 1, 3, 5>} : tensor<2x3x2x2x3x2xf32>
// CHECK-NEXT: %[[A:.+]] = cgc.reshape %[[T]] : tensor<2x2x3x3x2x2xf32> -> tensor<12x12xf32>
// CHECK-NEXT: %[[W:.+]] = cgc.reshape %arg1 : tensor<5x3x2x2xf32> -> tensor<5x12xf32>
// CHECK-NEXT: %[[G:.+]] = cgc.gemm %[[A]], %[[W]], %arg2 {trans_b = true} : (tensor<12x12xf32>, tensor<5x12xf32>, tensor<5xf32>) -> tensor<12x5xf32>
// CHECK-NEXT: %[[P:.+]] = cgc.reshape %[[G]] : tensor<12x5xf32> -> tensor<2x2x3x5xf32>
// CHECK-NEXT: %[[Y:.+]] = cgc.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>} : tensor<2x2x3x5xf32>
// CHECK-NEXT: cgc.reshape %[[Y]] : tensor<2x5x2x3xf32> -> tensor<2x5x6xf32>
func.func @patches(%x: tensor<2x3x4x6xf32>, %w: tensor<5x3x2x2xf32>, %b: tensor<5xf32>) -> tensor<2x6x5xf32> {
  %0 = cgc.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x3x4x6xf32>, tensor<5x3x2x2xf32>, tensor<5xf32>) -> tensor<2x5x2x3xf32>
  %1 = cgc.reshape %0 : tensor<2x5x2x3xf32> -> tensor<2x5x6xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<2x5x6xf32>
  return %2 : tensor<2x6x5xf32>
}

// -----

// Convolutions that stay, each flattened into tokens: overlapping
// (stride 1), padded, grouped, dilated, pointwise; then one whose input
// does not divide into patches, and a tiling one whose result goes on in
// [N, C, H, W] (a relu reads it).
// CHECK-LABEL: func @overlapping
// CHECK-NEXT: cgc.conv
func.func @overlapping(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x2x2xf32>) -> tensor<1x25x4xf32> {
  %0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x5x5xf32>
  %1 = cgc.reshape %0 : tensor<1x4x5x5xf32> -> tensor<1x4x25xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x4x25xf32>
  return %2 : tensor<1x25x4xf32>
}

// CHECK-LABEL: func @padded
// CHECK-NEXT: cgc.conv
func.func @padded(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x2x2xf32>) -> tensor<1x16x4xf32> {
  %0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x4x4xf32>
  %1 = cgc.reshape %0 : tensor<1x4x4x4xf32> -> tensor<1x4x16xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x4x16xf32>
  return %2 : tensor<1x16x4xf32>
}

// CHECK-LABEL: func @grouped
// CHECK-NEXT: cgc.conv
func.func @grouped(%x: tensor<1x4x6x6xf32>, %g: tensor<4x2x2x2xf32>) -> tensor<1x9x4xf32> {
  %0 = cgc.conv %x, %g {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<4x2x2x2xf32>) -> tensor<1x4x3x3xf32>
  %1 = cgc.reshape %0 : tensor<1x4x3x3xf32> -> tensor<1x4x9xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x4x9xf32>
  return %2 : tensor<1x9x4xf32>
}

// CHECK-LABEL: func @dilated
// CHECK-NEXT: cgc.conv
func.func @dilated(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x2x2xf32>) -> tensor<1x4x4xf32> {
  %0 = cgc.conv %x, %w {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %1 = cgc.reshape %0 : tensor<1x4x2x2xf32> -> tensor<1x4x4xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x4x4xf32>
  return %2 : tensor<1x4x4xf32>
}

// CHECK-LABEL: func @pointwise
// CHECK-NEXT: cgc.conv
func.func @pointwise(%x: tensor<1x4x6x6xf32>, %p: tensor<4x4x1x1xf32>) -> tensor<1x36x4xf32> {
  %0 = cgc.conv %x, %p {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %1 = cgc.reshape %0 : tensor<1x4x6x6xf32> -> tensor<1x4x36xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x4x36xf32>
  return %2 : tensor<1x36x4xf32>
}

// CHECK-LABEL: func @ragged
// CHECK-NEXT: cgc.conv
func.func @ragged(%x: tensor<1x4x7x6xf32>, %w: tensor<4x4x2x2xf32>) -> tensor<1x9x4xf32> {
  %0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x7x6xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x3x3xf32>
  %1 = cgc.reshape %0 : tensor<1x4x3x3xf32> -> tensor<1x4x9xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x4x9xf32>
  return %2 : tensor<1x9x4xf32>
}

// CHECK-LABEL: func @feature_map
// CHECK-NEXT: cgc.conv
func.func @feature_map(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x2x2xf32>) -> tensor<1x4x3x3xf32> {
  %0 = cgc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x3x3xf32>
  %1 = cgc.relu %0 : tensor<1x4x3x3xf32>
  return %1 : tensor<1x4x3x3xf32>
}
