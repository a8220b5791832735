// RUN: cgc-opt %s -split-input-file --cgc-gather-sliced-concats | FileCheck %s

// rotate_half as torch exports it: Concat(-x[..., 8:], x[..., :8]) along
// the last axis is a gather of x at [8..15, 0..7] times -1 on the first
// half; the slices, the negation and the concat go away.
// CHECK-LABEL: func @rotate_half
// CHECK: %[[I:.+]] = cgc.constant dense<[8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]> : tensor<16xi64>
// CHECK: %[[S:.+]] = cgc.constant dense<[-1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00]> : tensor<16xf32>
// CHECK: %[[G:.+]] = cgc.gather %arg0, %[[I]] {axis = 3 : i64} : tensor<2x4x6x16xf32>, tensor<16xi64>
// CHECK: %[[M:.+]] = cgc.mul %[[G]], %[[S]]
// CHECK-NOT: cgc.slice
// CHECK-NOT: cgc.neg
// CHECK-NOT: cgc.concat
// CHECK: return %[[M]]
func.func @rotate_half(%x: tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32> {
  %0 = cgc.slice %x {starts = array<i64: 0, 0, 0, 8>, ends = array<i64: 2, 4, 6, 16>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x6x16xf32>
  %1 = cgc.neg %0 : tensor<2x4x6x8xf32>
  %2 = cgc.slice %x {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 2, 4, 6, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x6x16xf32>
  %3 = cgc.concat %1, %2 {axis = 3 : i64} : tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>
  return %3 : tensor<2x4x6x16xf32>
}

// -----

// Without a negation: a gather alone (in bf16, along the first axis).
// CHECK-LABEL: func @swap_rows
// CHECK: %[[G:.+]] = cgc.gather %arg0, %{{.+}} {axis = 0 : i64} : tensor<4x3xbf16>, tensor<4xi64>
// CHECK-NOT: cgc.mul
// CHECK: return %[[G]]
func.func @swap_rows(%x: tensor<4x3xbf16>) -> tensor<4x3xbf16> {
  %0 = cgc.slice %x {starts = array<i64: 3, 0>, ends = array<i64: 4, 3>, steps = array<i64: 1, 1>} : tensor<4x3xbf16>
  %1 = cgc.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 3, 3>, steps = array<i64: 1, 1>} : tensor<4x3xbf16>
  %2 = cgc.concat %0, %1 {axis = 0 : i64} : tensor<1x3xbf16>, tensor<3x3xbf16>
  return %2 : tensor<4x3xbf16>
}

// -----

// The pieces in order and none negated: the concat is the tensor itself.
// CHECK-LABEL: func @whole
// CHECK-NEXT: return %arg0
func.func @whole(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = cgc.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 3>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %1 = cgc.slice %x {starts = array<i64: 0, 3>, ends = array<i64: 4, 8>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %2 = cgc.concat %0, %1 {axis = 1 : i64} : tensor<4x3xf32>, tensor<4x5xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Left alone: slices of two tensors, a slice that is read elsewhere too, a
// slice with a step, one that also cuts another axis, and integers.
// CHECK-LABEL: func @kept
// CHECK-COUNT-5: cgc.concat
// CHECK-NOT: cgc.gather
func.func @kept(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<4x8xi64>) -> (tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x6xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xi64>) {
  %a = cgc.slice %x {starts = array<i64: 0, 4>, ends = array<i64: 4, 8>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %b = cgc.slice %y {starts = array<i64: 0, 0>, ends = array<i64: 4, 4>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %0 = cgc.concat %a, %b {axis = 1 : i64} : tensor<4x4xf32>, tensor<4x4xf32>
  %c = cgc.slice %x {starts = array<i64: 0, 4>, ends = array<i64: 4, 8>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %d = cgc.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 4>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %1 = cgc.concat %c, %d {axis = 1 : i64} : tensor<4x4xf32>, tensor<4x4xf32>
  %e = cgc.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 8>, steps = array<i64: 1, 2>} : tensor<4x8xf32>
  %f = cgc.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 2>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %2 = cgc.concat %e, %f {axis = 1 : i64} : tensor<4x4xf32>, tensor<4x2xf32>
  %g = cgc.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %h = cgc.slice %x {starts = array<i64: 2, 4>, ends = array<i64: 4, 8>, steps = array<i64: 1, 1>} : tensor<4x8xf32>
  %3 = cgc.concat %g, %h {axis = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32>
  %j = cgc.slice %i {starts = array<i64: 0, 4>, ends = array<i64: 4, 8>, steps = array<i64: 1, 1>} : tensor<4x8xi64>
  %k = cgc.slice %i {starts = array<i64: 0, 0>, ends = array<i64: 4, 4>, steps = array<i64: 1, 1>} : tensor<4x8xi64>
  %4 = cgc.concat %j, %k {axis = 1 : i64} : tensor<4x4xi64>, tensor<4x4xi64>
  return %0, %c, %2, %3, %1, %4 : tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x6xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xi64>
}
