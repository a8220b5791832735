// RUN: cgc-opt %s -split-input-file --cgc-move-transposes | FileCheck %s

// The in-projection of sequence-first attention at batch 2: the transpose
// of its input moves below the product and its bias add, where only views
// read it.
// CHECK-LABEL: func @sink_into_views
// CHECK-NEXT: %[[P:.+]] = cgc.matmul %arg0, %arg1 : tensor<2x5x8xf32>, tensor<8x24xf32>
// CHECK-NEXT: %[[B:.+]] = cgc.add %[[P]], %arg2 : tensor<2x5x24xf32>, tensor<24xf32>
// CHECK-NEXT: %[[T:.+]] = cgc.transpose %[[B]] {perm = array<i64: 1, 0, 2>} : tensor<2x5x24xf32>
// CHECK-NEXT: %[[R:.+]] = cgc.reshape %[[T]] : tensor<5x2x24xf32> -> tensor<5x2x3x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @sink_into_views(%x: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>) -> tensor<5x2x3x8xf32> {
  %0 = cgc.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32>
  %1 = cgc.matmul %0, %w : tensor<5x2x8xf32>, tensor<8x24xf32>
  %2 = cgc.add %1, %b : tensor<5x2x24xf32>, tensor<24xf32>
  %3 = cgc.reshape %2 : tensor<5x2x24xf32> -> tensor<5x2x3x8xf32>
  return %3 : tensor<5x2x3x8xf32>
}

// -----

// Where a computation reads the product, the transpose stays before it
// (moved, it would copy the wider result for nothing); an operand that
// differs by row (a residual) stops it too.
// CHECK-LABEL: func @stays
// CHECK-NEXT: cgc.transpose %arg0
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: cgc.tanh
// CHECK-NEXT: cgc.transpose %arg0
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: cgc.add
// CHECK-NEXT: cgc.reshape
func.func @stays(%x: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %r: tensor<5x2x24xf32>) -> (tensor<5x2x24xf32>, tensor<5x2x3x8xf32>) {
  %0 = cgc.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32>
  %1 = cgc.matmul %0, %w : tensor<5x2x8xf32>, tensor<8x24xf32>
  %2 = cgc.tanh %1 : tensor<5x2x24xf32>
  %3 = cgc.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32>
  %4 = cgc.matmul %3, %w : tensor<5x2x8xf32>, tensor<8x24xf32>
  %5 = cgc.add %4, %r : tensor<5x2x24xf32>, tensor<5x2x24xf32>
  %6 = cgc.reshape %5 : tensor<5x2x24xf32> -> tensor<5x2x3x8xf32>
  return %2, %6 : tensor<5x2x24xf32>, tensor<5x2x3x8xf32>
}

// -----

// The out-projection: the attention's output [N, H, L, D] goes to
// [L, N, H, D] rows for a Gemm whose result goes back to [N, L, E]. The
// transpose back moves above the Gemm and merges with the first: the
// Gemm's rows are [N, L] and its result is the residual's shape.
// CHECK-LABEL: func @hoist_into_the_producer
// CHECK-NEXT: %[[T:.+]] = cgc.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x5x4xf32>
// CHECK-NEXT: %[[R:.+]] = cgc.reshape %[[T]] : tensor<2x5x3x4xf32> -> tensor<10x12xf32>
// CHECK-NEXT: %[[G:.+]] = cgc.gemm %[[R]], %arg1, %arg2 {trans_b = true}
// CHECK-NEXT: %[[B:.+]] = cgc.reshape %[[G]] : tensor<10x12xf32> -> tensor<2x5x12xf32>
// CHECK-NEXT: %[[A:.+]] = cgc.add %[[B]], %arg3
func.func @hoist_into_the_producer(%o: tensor<2x3x5x4xf32>, %w: tensor<12x12xf32>, %b: tensor<12xf32>, %x: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %0 = cgc.transpose %o {perm = array<i64: 2, 0, 1, 3>} : tensor<2x3x5x4xf32>
  %1 = cgc.reshape %0 : tensor<5x2x3x4xf32> -> tensor<5x2x12xf32>
  %2 = cgc.reshape %1 : tensor<5x2x12xf32> -> tensor<10x12xf32>
  %3 = cgc.gemm %2, %w, %b {trans_b = true} : (tensor<10x12xf32>, tensor<12x12xf32>, tensor<12xf32>) -> tensor<10x12xf32>
  %4 = cgc.reshape %3 : tensor<10x12xf32> -> tensor<5x2x12xf32>
  %5 = cgc.transpose %4 {perm = array<i64: 1, 0, 2>} : tensor<5x2x12xf32>
  %6 = cgc.add %5, %x : tensor<2x5x12xf32>, tensor<2x5x12xf32>
  return %6 : tensor<2x5x12xf32>
}

// -----

// A batched matmul reading transposed rows whose result only a transpose
// reads: the first moves below the product and the two merge. A Gemm
// whose C differs by row, or whose input is no transpose, keeps the
// transpose after it.
// CHECK-LABEL: func @sink_and_merge
// CHECK-NEXT: %[[M:.+]] = cgc.matmul %arg0, %arg1 : tensor<2x3x5x4xf32>, tensor<4x6xf32>
// CHECK-NEXT: %[[T:.+]] = cgc.transpose %[[M]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x5x6xf32>
// CHECK-NEXT: return %[[T]] : tensor<2x5x3x6xf32>
func.func @sink_and_merge(%o: tensor<2x3x5x4xf32>, %w: tensor<4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = cgc.transpose %o {perm = array<i64: 1, 0, 2, 3>} : tensor<2x3x5x4xf32>
  %1 = cgc.matmul %0, %w : tensor<3x2x5x4xf32>, tensor<4x6xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 1, 2, 0, 3>} : tensor<3x2x5x6xf32>
  return %2 : tensor<2x5x3x6xf32>
}

// CHECK-LABEL: func @no_hoist
// CHECK: cgc.gemm
// CHECK-NEXT: cgc.reshape
// CHECK-NEXT: cgc.transpose
// CHECK: cgc.gemm
// CHECK-NEXT: cgc.reshape
// CHECK-NEXT: cgc.transpose
func.func @no_hoist(%o: tensor<2x3x5x4xf32>, %w: tensor<12x12xf32>, %c: tensor<10x12xf32>, %a: tensor<10x12xf32>) -> (tensor<2x5x12xf32>, tensor<2x5x12xf32>) {
  %0 = cgc.transpose %o {perm = array<i64: 2, 0, 1, 3>} : tensor<2x3x5x4xf32>
  %1 = cgc.reshape %0 : tensor<5x2x3x4xf32> -> tensor<10x12xf32>
  %2 = cgc.gemm %1, %w, %c : (tensor<10x12xf32>, tensor<12x12xf32>, tensor<10x12xf32>) -> tensor<10x12xf32>
  %3 = cgc.reshape %2 : tensor<10x12xf32> -> tensor<5x2x12xf32>
  %4 = cgc.transpose %3 {perm = array<i64: 1, 0, 2>} : tensor<5x2x12xf32>
  %5 = cgc.gemm %a, %w : (tensor<10x12xf32>, tensor<12x12xf32>) -> tensor<10x12xf32>
  %6 = cgc.reshape %5 : tensor<10x12xf32> -> tensor<5x2x12xf32>
  %7 = cgc.transpose %6 {perm = array<i64: 1, 0, 2>} : tensor<5x2x12xf32>
  return %4, %7 : tensor<2x5x12xf32>, tensor<2x5x12xf32>
}

// -----

// Patches [N, P1, P2, O] back to [N, O, P1, P2], flattened to [N, O, P]
// and transposed to tokens [N, P, O]: the reshape moves above the first
// transpose (P1 and P2 are neighbours there too), the two transposes
// merge into none.
// CHECK-LABEL: func @tokens
// CHECK-NEXT: %[[R:.+]] = cgc.reshape %arg0 : tensor<2x3x4x6xf32> -> tensor<2x12x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @tokens(%p: tensor<2x3x4x6xf32>) -> tensor<2x12x6xf32> {
  %0 = cgc.transpose %p {perm = array<i64: 0, 3, 1, 2>} : tensor<2x3x4x6xf32>
  %1 = cgc.reshape %0 : tensor<2x6x3x4xf32> -> tensor<2x6x12xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<2x6x12xf32>
  return %2 : tensor<2x12x6xf32>
}

// The same at batch 1: the unit batch dim is a run of its own.
// CHECK-LABEL: func @tokens_batch1
// CHECK-NEXT: %[[R:.+]] = cgc.reshape %arg0 : tensor<1x3x4x6xf32> -> tensor<1x12x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @tokens_batch1(%p: tensor<1x3x4x6xf32>) -> tensor<1x12x6xf32> {
  %0 = cgc.transpose %p {perm = array<i64: 0, 3, 1, 2>} : tensor<1x3x4x6xf32>
  %1 = cgc.reshape %0 : tensor<1x6x3x4xf32> -> tensor<1x6x12xf32>
  %2 = cgc.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x6x12xf32>
  return %2 : tensor<1x12x6xf32>
}

// A unit dim the reshape adds where the transpose has none stays with the
// reshape.
// CHECK-LABEL: func @new_unit_dim
// CHECK-NEXT: cgc.transpose
// CHECK-NEXT: cgc.reshape
func.func @new_unit_dim(%p: tensor<3x4xf32>) -> tensor<1x4x3xf32> {
  %0 = cgc.transpose %p {perm = array<i64: 1, 0>} : tensor<3x4xf32>
  %1 = cgc.reshape %0 : tensor<4x3xf32> -> tensor<1x4x3xf32>
  return %1 : tensor<1x4x3xf32>
}

// A reshape that merges dims which are not neighbours in the input stays.
// CHECK-LABEL: func @not_neighbours
// CHECK-NEXT: cgc.transpose
// CHECK-NEXT: cgc.reshape
func.func @not_neighbours(%p: tensor<2x3x4xf32>) -> tensor<8x3xf32> {
  %0 = cgc.transpose %p {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32>
  %1 = cgc.reshape %0 : tensor<2x4x3xf32> -> tensor<8x3xf32>
  return %1 : tensor<8x3xf32>
}

// -----

// ONNX DFT: the transposes around the product swap a row dim with the
// product's depth (before) and with a factor of its columns (after), so
// neither moves nor merges.
// CHECK-LABEL: func @dft_stays
// CHECK-NEXT: cgc.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: cgc.reshape
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: cgc.reshape
// CHECK-NEXT: cgc.transpose {{.*}} {perm = array<i64: 0, 2, 1, 3>}
func.func @dft_stays(%x: tensor<1x10x10x1xf32>, %w: tensor<10x20xf32>) -> tensor<1x10x10x2xf32> {
  %0 = cgc.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<1x10x10x1xf32>
  %1 = cgc.reshape %0 : tensor<1x10x10x1xf32> -> tensor<1x10x10xf32>
  %2 = cgc.matmul %1, %w : tensor<1x10x10xf32>, tensor<10x20xf32>
  %3 = cgc.reshape %2 : tensor<1x10x20xf32> -> tensor<1x10x10x2xf32>
  %4 = cgc.transpose %3 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x10x10x2xf32>
  return %4 : tensor<1x10x10x2xf32>
}
