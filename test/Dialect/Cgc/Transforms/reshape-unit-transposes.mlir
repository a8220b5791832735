// RUN: cgc-opt %s --cgc-reshape-unit-transposes | FileCheck %s

// [1, L, E] -> [L, 1, E] and a transpose of two unit dims move no element:
// reshapes. Swapping two dims of more than one element stays a transpose,
// as does one that moves a unit dim past such a swap.
// CHECK-LABEL: func @transposes
// CHECK-NEXT: %[[A:.+]] = cgc.reshape %arg0 : tensor<1x197x384xf32> -> tensor<197x1x384xf32>
// CHECK-NEXT: %[[B:.+]] = cgc.reshape %arg1 : tensor<1x4x1x8xf32> -> tensor<1x4x1x8xf32>
// CHECK-NEXT: %[[C:.+]] = cgc.transpose %arg0 {perm = array<i64: 0, 2, 1>} : tensor<1x197x384xf32>
// CHECK-NEXT: %[[D:.+]] = cgc.transpose %arg1 {perm = array<i64: 2, 3, 0, 1>} : tensor<1x4x1x8xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @transposes(%x: tensor<1x197x384xf32>, %y: tensor<1x4x1x8xf32>) -> (tensor<197x1x384xf32>, tensor<1x4x1x8xf32>, tensor<1x384x197xf32>, tensor<1x8x1x4xf32>) {
  %0 = cgc.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<1x197x384xf32>
  %1 = cgc.transpose %y {perm = array<i64: 2, 1, 0, 3>} : tensor<1x4x1x8xf32>
  %2 = cgc.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<1x197x384xf32>
  %3 = cgc.transpose %y {perm = array<i64: 2, 3, 0, 1>} : tensor<1x4x1x8xf32>
  return %0, %1, %2, %3 : tensor<197x1x384xf32>, tensor<1x4x1x8xf32>, tensor<1x384x197xf32>, tensor<1x8x1x4xf32>
}
