// RUN: cgc-opt %s -split-input-file --cgc-tensor-parallel=ranks=2 -verify-diagnostics | FileCheck %s
// RUN: not cgc-opt %s -split-input-file --cgc-tensor-parallel=ranks=4 2>&1 >/dev/null | FileCheck %s --check-prefix=FOUR

// ONNX multi-device annotations (cgc.devices, cgc.shard_axis from the
// importer) choose the products: the annotated pair is split as it says,
// the other pair (which the pass would split unannotated) is left whole,
// and the annotations are dropped.
// CHECK-LABEL: func.func @annotated
// CHECK-NOT: cgc.shard_axis
// CHECK: cgc.shard %{{.*}} {axis = 1 : i64, ranks = 2 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK: cgc.shard %{{.*}} {axis = 0 : i64, ranks = 2 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: cgc.all_reduce
// CHECK: cgc.matmul %{{.*}} : tensor<2x4xf32>, tensor<4x8xf32>
// CHECK: cgc.matmul %{{.*}} : tensor<2x8xf32>, tensor<8x4xf32>
// CHECK-NOT: cgc.all_reduce
// FOUR: error: the model's multi-device annotations shard its weights over 2 devices, not 4
// expected-remark@+1 {{tensor parallelism over 2 ranks: 2 of 4 products split}}
module attributes {cgc.devices = 2 : i64} {
func.func @annotated(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w1 = cgc.constant {cgc.shard_axis = 1 : i64} dense<1.0> : tensor<4x8xf32>
  %w2 = cgc.constant {cgc.shard_axis = 0 : i64} dense<1.0> : tensor<8x4xf32>
  %w3 = cgc.constant dense<2.0> : tensor<4x8xf32>
  %w4 = cgc.constant dense<2.0> : tensor<8x4xf32>
  %h = cgc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x8xf32>
  %g = cgc.relu %h : tensor<2x8xf32>
  %y = cgc.matmul %g, %w2 : tensor<2x8xf32>, tensor<8x4xf32>
  %h2 = cgc.matmul %y, %w3 : tensor<2x4xf32>, tensor<4x8xf32>
  %g2 = cgc.relu %h2 : tensor<2x8xf32>
  %z = cgc.matmul %g2, %w4 : tensor<2x8xf32>, tensor<8x4xf32>
  return %z : tensor<2x4xf32>
}
}

// -----

// An annotated weight the pass cannot split as it says: the first
// product's weight by rows.
module attributes {cgc.devices = 2 : i64} {
func.func @rows_first(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w1 = cgc.constant {cgc.shard_axis = 0 : i64} dense<1.0> : tensor<4x8xf32>
  %w2 = cgc.constant dense<1.0> : tensor<8x4xf32>
  // expected-error@+1 {{the ONNX annotation shards this product's weight along axis 0 over 2 devices, but cgc cannot split this product so}}
  %h = cgc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x8xf32>
  %y = cgc.matmul %h, %w2 : tensor<2x8xf32>, tensor<8x4xf32>
  return %y : tensor<2x4xf32>
}
}
