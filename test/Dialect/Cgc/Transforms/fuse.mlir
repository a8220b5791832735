// RUN: cgc-opt %s -split-input-file --cgc-fuse | FileCheck %s

// The MLP layer: gemm + GELU chain is one matmul kernel, layer_norm +
// residual add is one norm kernel.
// CHECK-LABEL: func @mlp_layer
// CHECK: %[[G:.+]] = cgc.kernel "gemm_0" matmul -> tensor<1x8xf32> {
// CHECK-NEXT: cgc.gemm
// CHECK-NEXT: cgc.div
// CHECK-NEXT: cgc.erf
// CHECK-NEXT: cgc.add
// CHECK-NEXT: cgc.mul
// CHECK-NEXT: cgc.mul
// CHECK-NEXT: cgc.yield
// CHECK: cgc.kernel "layer_norm_1" norm -> tensor<1x8xf32> {
// CHECK-NEXT: cgc.layer_norm %[[G]]
// CHECK-NEXT: cgc.add
// CHECK-NEXT: cgc.yield
func.func @mlp_layer(%x: tensor<1x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> tensor<1x8xf32> {
  %r = cgc.island "island0" -> tensor<1x8xf32> {
    %0 = cgc.gemm %x, %w, %b {trans_b = true} : (tensor<1x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
    %1 = cgc.div %0, %s : tensor<1x8xf32>, tensor<f32>
    %2 = cgc.erf %1 : tensor<1x8xf32>
    %3 = cgc.add %2, %s : tensor<1x8xf32>, tensor<f32>
    %4 = cgc.mul %0, %3 : tensor<1x8xf32>, tensor<1x8xf32>
    %5 = cgc.mul %4, %s : tensor<1x8xf32>, tensor<f32>
    %6 = cgc.layer_norm %5, %b, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
    %7 = cgc.add %x, %6 : tensor<1x8xf32>, tensor<1x8xf32>
    cgc.yield %7 : tensor<1x8xf32>
  }
  return %r : tensor<1x8xf32>
}

// -----

// A value of the group used after it is yielded too: fusion drops nothing.
// An op whose result has another shape starts a new kernel (a reduction
// over the first axis: over the last, mergeRowReductions would join it and
// the subtraction).
// CHECK-LABEL: func @escaping_and_shape_change
// CHECK: %[[K:.+]]:2 = cgc.kernel "exp_0" elementwise -> tensor<4x8xf32>, tensor<4x8xf32> {
// CHECK-NEXT: %[[E:.+]] = cgc.exp
// CHECK-NEXT: %[[N:.+]] = cgc.neg %[[E]]
// CHECK-NEXT: cgc.yield %[[E]], %[[N]]
// CHECK: cgc.kernel "reduce_sum_1" reduce -> tensor<1x8xf32>
// CHECK: cgc.kernel "sub_2" elementwise -> tensor<4x8xf32>
// CHECK-NEXT: cgc.sub %[[K]]#0
func.func @escaping_and_shape_change(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r:2 = cgc.island "island0" -> tensor<4x8xf32>, tensor<4x8xf32> {
    %0 = cgc.exp %x : tensor<4x8xf32>
    %1 = cgc.neg %0 : tensor<4x8xf32>
    %2 = cgc.reduce_sum %1 {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32>
    %3 = cgc.sub %0, %2 : tensor<4x8xf32>, tensor<1x8xf32>
    cgc.yield %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Reshapes are views, not kernels; a transpose has a kernel of its own.
// CHECK-LABEL: func @views_and_singles
// CHECK: cgc.kernel "transpose_0" single -> tensor<8x4xf32>
// CHECK-NOT: cgc.kernel
// CHECK: cgc.reshape
// CHECK: cgc.yield
func.func @views_and_singles(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %r = cgc.island "island0" -> tensor<32xf32> {
    %0 = cgc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32>
    %1 = cgc.reshape %0 : tensor<8x4xf32> -> tensor<32xf32>
    cgc.yield %1 : tensor<32xf32>
  }
  return %r : tensor<32xf32>
}

// -----

// A concat along the outermost non-unit dim whose inputs are made here for
// it alone needs no kernel: it is marked in place and its producers will
// write into their chunks. A concat of a function argument does need one.
// CHECK-LABEL: func @concat_in_place
// CHECK: cgc.concat {{.*}} {axis = 1 : i64, cgc.in_place}
// CHECK: cgc.kernel "concat_{{[0-9]+}}" single -> tensor<1x8xf32>
func.func @concat_in_place(%x: tensor<1x4xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %r:2 = cgc.island "island0" -> tensor<1x8xf32>, tensor<1x8xf32> {
    %0 = cgc.exp %x : tensor<1x4xf32>
    %1 = cgc.transpose %x {perm = array<i64: 0, 1>} : tensor<1x4xf32>
    %2 = cgc.concat %0, %1 {axis = 1 : i64} : tensor<1x4xf32>, tensor<1x4xf32>
    %3 = cgc.concat %x, %x {axis = 1 : i64} : tensor<1x4xf32>, tensor<1x4xf32>
    cgc.yield %2, %3 : tensor<1x8xf32>, tensor<1x8xf32>
  }
  return %r#0, %r#1 : tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// A conv absorbs its epilogue: bias is an operand, then the activation and
// the residual add run in the same kernel.
// CHECK-LABEL: func @conv_epilogue
// CHECK: cgc.kernel "conv_{{[0-9]+}}" conv -> tensor<1x4x8x8xf32> {
// CHECK-NEXT: cgc.conv
// CHECK-NEXT: cgc.clip
// CHECK-NEXT: cgc.add
// CHECK-NEXT: cgc.yield
func.func @conv_epilogue(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %r = cgc.island "island0" -> tensor<1x4x8x8xf32> {
    %0 = cgc.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    %1 = cgc.clip %0 {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x4x8x8xf32>
    %2 = cgc.add %1, %x : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
    cgc.yield %2 : tensor<1x4x8x8xf32>
  }
  return %r : tensor<1x4x8x8xf32>
}

// -----

// Elementwise producers of a softmax's input (the attention mask) become
// its prologue, and its consumers its epilogue.
// CHECK-LABEL: func @softmax_prologue
// CHECK: cgc.kernel "where_{{[0-9]+}}" norm -> tensor<4x4xf32>, tensor<4x4xf32> {
// CHECK-NEXT: cgc.where
// CHECK-NEXT: cgc.softmax
// CHECK-NEXT: cgc.mul
// CHECK: cgc.kernel "softmax_{{[0-9]+}}" norm -> tensor<4x4xf32>
func.func @softmax_prologue(%s: tensor<4x4xf32>, %m: tensor<4x4xi1>, %n: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %r:3 = cgc.island "island0" -> tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> {
    %0 = cgc.where %m, %n, %s : tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>
    %1 = cgc.softmax %0 {axis = 1 : i64} : tensor<4x4xf32>
    %2 = cgc.mul %1, %1 : tensor<4x4xf32>, tensor<4x4xf32>
    %3 = cgc.softmax %2 {axis = 1 : i64} : tensor<4x4xf32>
    cgc.yield %1, %2, %3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A producer whose value is also used elsewhere must be stored, so it is
// not taken as a prologue (the template would recompute it, not keep it).
// CHECK-LABEL: func @escaping_producer
// CHECK: cgc.kernel "where_{{[0-9]+}}" elementwise -> tensor<4x4xf32>
// CHECK: cgc.kernel "softmax_{{[0-9]+}}" norm -> tensor<4x4xf32>
func.func @escaping_producer(%s: tensor<4x4xf32>, %m: tensor<4x4xi1>, %n: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %r:2 = cgc.island "island0" -> tensor<4x4xf32>, tensor<4x4xf32> {
    %0 = cgc.where %m, %n, %s : tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>
    %1 = cgc.softmax %0 {axis = 1 : i64} : tensor<4x4xf32>
    cgc.yield %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
  }
  return %r#0, %r#1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A consumer with the reduction's input shape (x - sum(x)) is not its
// epilogue: the reduce kernel's index space is the reduction's result. But
// a reduction over the last axis and the elementwise group that reads it
// back over the rows become one norm kernel over the input's shape
// (mergeRowReductions), where nothing else reads the reduced value.
// CHECK-LABEL: func @reduce_index_space
// CHECK: cgc.kernel "exp_{{[0-9]+}}" norm -> tensor<4x8xf32> {
// CHECK-NEXT: cgc.exp
// CHECK-NEXT: cgc.reduce_sum
// CHECK-NEXT: cgc.sub
// CHECK-NEXT: cgc.yield
// CHECK-NOT: cgc.kernel
func.func @reduce_index_space(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = cgc.island "island0" -> tensor<4x8xf32> {
    %0 = cgc.exp %x : tensor<4x8xf32>
    %1 = cgc.reduce_sum %0 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32>
    %2 = cgc.sub %x, %1 : tensor<4x8xf32>, tensor<4x1xf32>
    cgc.yield %2 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// The reduced value is an output too (it must be stored in its own shape),
// or the reduction is not over the last axis: a reduce kernel and an
// elementwise one, as before.
// CHECK-LABEL: func @row_reduction_kept
// CHECK: cgc.kernel "reduce_mean_{{[0-9]+}}" reduce -> tensor<4x1xf32>
// CHECK: cgc.kernel "sub_{{[0-9]+}}" elementwise -> tensor<4x8xf32>
// CHECK: cgc.kernel "reduce_max_{{[0-9]+}}" reduce -> tensor<1x8xf32>
// CHECK: cgc.kernel "sub_{{[0-9]+}}" elementwise -> tensor<4x8xf32>
func.func @row_reduction_kept(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %r:3 = cgc.island "island0" -> tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32> {
    %0 = cgc.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32>
    %1 = cgc.sub %x, %0 : tensor<4x8xf32>, tensor<4x1xf32>
    %2 = cgc.reduce_max %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32>
    %3 = cgc.sub %x, %2 : tensor<4x8xf32>, tensor<1x8xf32>
    cgc.yield %0, %1, %3 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The kernel count of every island is a remark too (what --explain prints).
// RUN: cgc-opt %s -split-input-file --cgc-fuse --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// REMARK: remark: island0: 2 kernel(s)
func.func @remark_kernel_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = cgc.island "island0" -> tensor<4xf32> {
    %0 = cgc.transpose %x {perm = array<i64: 0>} : tensor<4xf32>
    %1 = cgc.relu %0 : tensor<4xf32>
    cgc.yield %1 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An optimizer's chains interleave in program order: the moment's update
// m' = b m + (1 - b) g starts with g's scaling, which the next op (m's
// scaling) does not read. The first group joins the later group that reads
// it, and the weight's update joins too: one kernel with m' and w'.
// CHECK-LABEL: func @interleaved_chains
// CHECK: %[[K:.+]]:2 = cgc.kernel "mul_0" elementwise -> tensor<64xf32>, tensor<64xf32> {
// CHECK-NEXT: cgc.mul %arg2
// CHECK-NEXT: cgc.mul %arg1
// CHECK-NEXT: cgc.add
// CHECK-NEXT: cgc.mul
// CHECK-NEXT: cgc.sub %arg0
// CHECK-NEXT: cgc.yield
// CHECK-NOT: cgc.kernel
// CHECK: cgc.yield %[[K]]#0, %[[K]]#1
func.func @interleaved_chains(%w: tensor<64xf32>, %m: tensor<64xf32>, %g: tensor<64xf32>, %c: tensor<f32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %r:2 = cgc.island "island0" -> tensor<64xf32>, tensor<64xf32> {
    %0 = cgc.mul %g, %c : tensor<64xf32>, tensor<f32>
    %1 = cgc.mul %m, %c : tensor<64xf32>, tensor<f32>
    %2 = cgc.add %1, %0 : tensor<64xf32>, tensor<64xf32>
    %3 = cgc.mul %2, %c : tensor<64xf32>, tensor<f32>
    %4 = cgc.sub %w, %3 : tensor<64xf32>, tensor<64xf32>
    cgc.yield %2, %4 : tensor<64xf32>, tensor<64xf32>
  }
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Scalar work (AdamW's bias correction 1 - b^t) is copied into each kernel
// that reads it instead of running as a kernel of its own; the scalar that
// is also an output (t) keeps its kernel.
// CHECK-LABEL: func @scalar_producers
// CHECK: cgc.kernel "add_0" elementwise -> tensor<f32> {
// CHECK-NEXT: cgc.add %arg0
// CHECK: cgc.kernel "add_1" elementwise -> tensor<64xf32> {
// CHECK-NEXT: cgc.add %arg0
// CHECK-NEXT: cgc.pow
// CHECK-NEXT: cgc.sub
// CHECK-NEXT: cgc.div %arg1
// CHECK-NOT: cgc.kernel
func.func @scalar_producers(%t: tensor<f32>, %x: tensor<64xf32>, %one: tensor<f32>, %b: tensor<f32>) -> (tensor<f32>, tensor<64xf32>) {
  %r:2 = cgc.island "island0" -> tensor<f32>, tensor<64xf32> {
    %0 = cgc.add %t, %one : tensor<f32>, tensor<f32>
    %1 = cgc.pow %b, %0 : tensor<f32>, tensor<f32>
    %2 = cgc.sub %one, %1 : tensor<f32>, tensor<f32>
    %3 = cgc.div %x, %2 : tensor<64xf32>, tensor<f32>
    cgc.yield %0, %3 : tensor<f32>, tensor<64xf32>
  }
  return %r#0, %r#1 : tensor<f32>, tensor<64xf32>
}
