// RUN: cgc-opt %s -split-input-file --cgc-tensor-parallel=ranks=2 -verify-diagnostics | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-tensor-parallel=ranks=4 2>/dev/null | FileCheck %s --check-prefix=FOUR
// RUN: cgc-opt %s -split-input-file --cgc-tensor-parallel=ranks=4 2>&1 >/dev/null | FileCheck %s --check-prefix=FOURDIAG
// RUN: not cgc-opt %s -split-input-file --cgc-tensor-parallel=ranks=1 2>&1 >/dev/null | FileCheck %s --check-prefix=ONE

// An MLP (fc1, bias, GELU, fc2, bias): fc1's weight and bias by columns,
// the GELU on this rank's columns, fc2's weight by rows, its partial
// product summed before fc2's bias; the residual stays whole.
// CHECK-LABEL: func @mlp
// CHECK: %[[W1:.*]] = cgc.shard %arg1 {axis = 1 : i64, ranks = 2 : i64} : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK: %[[H:.*]] = cgc.matmul %arg0, %[[W1]] : tensor<2x3x8xf32>, tensor<8x8xf32>
// CHECK: %[[B1:.*]] = cgc.shard %arg2 {axis = 0 : i64, ranks = 2 : i64} : tensor<16xf32> -> tensor<8xf32>
// CHECK: %[[HB:.*]] = cgc.add %[[B1]], %[[H]] : tensor<8xf32>, tensor<2x3x8xf32>
// CHECK: %[[G:.*]] = cgc.gelu %[[HB]] {{.*}}: tensor<2x3x8xf32>
// CHECK: %[[W2:.*]] = cgc.shard %arg3 {axis = 0 : i64, ranks = 2 : i64} : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK: %[[P:.*]] = cgc.matmul %[[G]], %[[W2]] : tensor<2x3x8xf32>, tensor<8x8xf32>
// CHECK: %[[S:.*]] = cgc.all_reduce %[[P]] {ranks = 2 : i64} : tensor<2x3x8xf32>
// CHECK: %[[O:.*]] = cgc.add %arg4, %[[S]]
// CHECK: cgc.add %arg0, %[[O]]
// Four ranks take 4 of the 16 columns each.
// FOUR-LABEL: func @mlp
// FOUR: cgc.shard %arg1 {axis = 1 : i64, ranks = 4 : i64} : tensor<8x16xf32> -> tensor<8x4xf32>
// FOUR: cgc.all_reduce {{.*}} {ranks = 4 : i64} : tensor<2x3x8xf32>
// expected-remark@below {{tensor parallelism over 2 ranks: 2 of 2 products split (column- then row-parallel), 0 by columns alone (results gathered), the others computed on every rank}}
module {
func.func @mlp(%x: tensor<2x3x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
               %w2: tensor<16x8xf32>, %b2: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %h = cgc.matmul %x, %w1 : tensor<2x3x8xf32>, tensor<8x16xf32>
  %hb = cgc.add %b1, %h : tensor<16xf32>, tensor<2x3x16xf32>
  %g = cgc.gelu %hb {approximate = "none"} : tensor<2x3x16xf32>
  %o = cgc.matmul %g, %w2 : tensor<2x3x16xf32>, tensor<16x8xf32>
  %ob = cgc.add %b2, %o : tensor<8xf32>, tensor<2x3x8xf32>
  %y = cgc.add %x, %ob : tensor<2x3x8xf32>, tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}
}

// -----

// Gemms storing their weights [N, K] (trans_b): the first's rows are its
// output columns; the second's bias (beta 0.5) moves after the sum, added
// once. A value read twice between them (x * sigmoid(x)) is split too.
// CHECK-LABEL: func @gemms
// CHECK: %[[W1:.*]] = cgc.shard %arg1 {axis = 0 : i64, ranks = 2 : i64} : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK: %[[C1:.*]] = cgc.shard %arg2 {axis = 0 : i64, ranks = 2 : i64} : tensor<16xf32> -> tensor<8xf32>
// CHECK: %[[H:.*]] = cgc.gemm %arg0, %[[W1]], %[[C1]] {trans_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: cgc.sigmoid %[[H]] : tensor<4x8xf32>
// CHECK: %[[A:.*]] = cgc.mul %[[H]], {{.*}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: %[[W2:.*]] = cgc.shard %arg3 {axis = 1 : i64, ranks = 2 : i64} : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK: %[[P:.*]] = cgc.gemm %[[A]], %[[W2]] {alpha = 2.000000e+00 : f64, trans_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[S:.*]] = cgc.all_reduce %[[P]] {ranks = 2 : i64} : tensor<4x8xf32>
// CHECK: %[[HALF:.*]] = cgc.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[C2:.*]] = cgc.mul %arg4, %[[HALF]]
// CHECK: %[[Y:.*]] = cgc.add %[[S]], %[[C2]]
// CHECK: return %[[Y]]
// expected-remark@below {{2 of 2 products split}}
module {
func.func @gemms(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %c1: tensor<16xf32>,
                 %w2: tensor<8x16xf32>, %c2: tensor<8xf32>) -> tensor<4x8xf32> {
  %h = cgc.gemm %x, %w1, %c1 {trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %s = cgc.sigmoid %h : tensor<4x16xf32>
  %a = cgc.mul %h, %s : tensor<4x16xf32>, tensor<4x16xf32>
  %y = cgc.gemm %a, %w2, %c2 {alpha = 2.0 : f64, beta = 0.5 : f64, trans_b = true} : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
}

// -----

// Not split: a layer norm between the products needs every column, a
// first product's columns (6) do not divide over 4 ranks in the FOUR run
// (they do over 2), and a product whose result is returned has no second.
// CHECK-LABEL: func @kept
// CHECK-NOT: cgc.all_reduce
// CHECK: cgc.layer_norm
// CHECK: cgc.all_reduce {{.*}} : tensor<4x8xf32>
// CHECK-NOT: cgc.all_reduce
// FOURDIAG: remark: tensor parallelism over 4 ranks: 2 of 2 products split
// FOURDIAG: remark: tensor parallelism over 4 ranks: 2 of 2 products split
// FOURDIAG: warning: tensor parallelism over 4 ranks found no product whose result reaches other products through ops it can split, and no weight of 16777216 bytes or more to split by columns alone: every rank computes the whole model
// ONE: error: tensor parallelism needs 2 to 1024 ranks, got 1
// FOUR-LABEL: func @kept
// FOUR-NOT: cgc.shard
// expected-remark@below {{2 of 4 products split}}
module {
func.func @kept(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %s: tensor<16xf32>,
                %w2: tensor<16x8xf32>, %w3: tensor<8x6xf32>, %w4: tensor<6x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x16xf32>) {
  %h = cgc.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>
  %n = cgc.layer_norm %h, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %o = cgc.matmul %n, %w2 : tensor<4x16xf32>, tensor<16x8xf32>
  %k = cgc.matmul %x, %w3 : tensor<4x8xf32>, tensor<8x6xf32>
  %r = cgc.relu %k : tensor<4x6xf32>
  %p = cgc.matmul %r, %w4 : tensor<4x6xf32>, tensor<6x8xf32>
  return %o, %p, %h : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x16xf32>
}
}

// -----

// Attention, 2 heads of 4 from a fused QKV product: its columns are three
// segments (the split says so), so each rank takes its head of Q, K and V
// (groups = 3), the split's sizes halve, the reshapes give one head, the
// transposes, batched products and softmax follow the heads dim, and the
// output projection is row-parallel. A softmax over the heads dim would
// keep the block whole (@heads_softmax).
// CHECK-LABEL: func @attention
// CHECK: %[[W:.*]] = cgc.shard %arg1 {axis = 1 : i64, groups = 3 : i64, ranks = 2 : i64} : tensor<8x24xf32> -> tensor<8x12xf32>
// CHECK: %[[QKV:.*]] = cgc.matmul %arg0, %[[W]] : tensor<1x4x8xf32>, tensor<8x12xf32>
// CHECK: %[[B:.*]] = cgc.shard %arg2 {axis = 0 : i64, groups = 3 : i64, ranks = 2 : i64} : tensor<24xf32> -> tensor<12xf32>
// CHECK: %[[QKVB:.*]] = cgc.add %[[QKV]], %[[B]]
// CHECK: cgc.split %[[QKVB]] {axis = 2 : i64, sizes = array<i64: 4, 4, 4>} : tensor<1x4x12xf32>
// CHECK: cgc.reshape {{.*}} : tensor<1x4x4xf32> -> tensor<1x4x1x4xf32>
// CHECK: cgc.matmul {{.*}} : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
// CHECK: cgc.softmax {{.*}} {axis = 3 : i64} : tensor<1x1x4x4xf32>
// CHECK: cgc.reshape {{.*}} : tensor<1x4x1x4xf32> -> tensor<1x4x4xf32>
// CHECK: %[[WO:.*]] = cgc.shard %arg3 {axis = 0 : i64, ranks = 2 : i64} : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[P:.*]] = cgc.matmul {{.*}}, %[[WO]] : tensor<1x4x4xf32>, tensor<4x8xf32>
// CHECK: cgc.all_reduce %[[P]] {ranks = 2 : i64} : tensor<1x4x8xf32>
// CHECK-LABEL: func @heads_softmax
// CHECK-NOT: cgc.shard
// expected-remark@below {{2 of 4 products split}}
module {
func.func @attention(%x: tensor<1x4x8xf32>, %wqkv: tensor<8x24xf32>, %bqkv: tensor<24xf32>,
                     %wo: tensor<8x8xf32>, %scale: tensor<f32>) -> tensor<1x4x8xf32> {
  %0 = cgc.matmul %x, %wqkv : tensor<1x4x8xf32>, tensor<8x24xf32>
  %1 = cgc.add %0, %bqkv : tensor<1x4x24xf32>, tensor<24xf32>
  %2:3 = cgc.split %1 {axis = 2 : i64, sizes = array<i64: 8, 8, 8>} : tensor<1x4x24xf32>
  %3 = cgc.reshape %2#2 : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %4 = cgc.transpose %3 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32>
  %5 = cgc.reshape %2#1 : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %6 = cgc.transpose %5 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x2x4xf32>
  %7 = cgc.reshape %2#0 : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %8 = cgc.transpose %7 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32>
  %9 = cgc.matmul %8, %6 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  %10 = cgc.mul %9, %scale : tensor<1x2x4x4xf32>, tensor<f32>
  %11 = cgc.softmax %10 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %12 = cgc.matmul %11, %4 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  %13 = cgc.transpose %12 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x4xf32>
  %14 = cgc.reshape %13 : tensor<1x4x2x4xf32> -> tensor<1x4x8xf32>
  %15 = cgc.matmul %14, %wo : tensor<1x4x8xf32>, tensor<8x8xf32>
  return %15 : tensor<1x4x8xf32>
}
func.func @heads_softmax(%x: tensor<1x4x8xf32>, %wqk: tensor<8x16xf32>, %wo: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  %0 = cgc.matmul %x, %wqk : tensor<1x4x8xf32>, tensor<8x16xf32>
  %1:2 = cgc.split %0 {axis = 2 : i64, sizes = array<i64: 8, 8>} : tensor<1x4x16xf32>
  %2 = cgc.reshape %1#0 : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %3 = cgc.softmax %2 {axis = 2 : i64} : tensor<1x4x2x4xf32>
  %4 = cgc.reshape %3 : tensor<1x4x2x4xf32> -> tensor<1x4x8xf32>
  %5 = cgc.add %4, %1#1 : tensor<1x4x8xf32>, tensor<1x4x8xf32>
  %6 = cgc.matmul %5, %wo : tensor<1x4x8xf32>, tensor<8x8xf32>
  return %6 : tensor<1x4x8xf32>
}
}

// -----

// torchvision's ViT: Q, K and V stacked by a reshape to [3, hidden] and
// taken by gathers along it. The reshape says the columns are three
// segments (3 does not divide over 2 ranks, the 8 after it does): the
// finder starts again with groups = 3, the split moves to the 8 (a head of
// 4 a rank), and each gather along the stacked dim keeps it.
// CHECK-LABEL: func @stacked_qkv
// CHECK: cgc.shard %arg1 {axis = 1 : i64, groups = 3 : i64, ranks = 2 : i64} : tensor<8x24xf32> -> tensor<8x12xf32>
// CHECK: cgc.shard %arg2 {axis = 0 : i64, groups = 3 : i64, ranks = 2 : i64} : tensor<24xf32> -> tensor<12xf32>
// CHECK: cgc.reshape {{.*}} : tensor<4x1x12xf32> -> tensor<4x1x3x4xf32>
// CHECK: cgc.gather {{.*}} {axis = 0 : i64} : tensor<3x4x1x4xf32>, tensor<i64>
// CHECK: cgc.reshape {{.*}} : tensor<4x1x4xf32> -> tensor<4x1x4xf32>
// CHECK: cgc.softmax {{.*}} : tensor<1x1x4x4xf32>
// CHECK: cgc.reshape {{.*}} : tensor<4x1x1x4xf32> -> tensor<4x4xf32>
// CHECK: cgc.shard %arg3 {axis = 1 : i64, ranks = 2 : i64} : tensor<8x8xf32> -> tensor<8x4xf32>
// CHECK: cgc.all_reduce {{.*}} : tensor<4x8xf32>
// expected-remark@below {{2 of 2 products split}}
module {
func.func @stacked_qkv(%x: tensor<4x1x8xf32>, %wqkv: tensor<8x24xf32>, %bqkv: tensor<24xf32>,
                       %wo: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %q_at = cgc.constant dense<0> : tensor<i64>
  %k_at = cgc.constant dense<1> : tensor<i64>
  %v_at = cgc.constant dense<2> : tensor<i64>
  %0 = cgc.matmul %x, %wqkv : tensor<4x1x8xf32>, tensor<8x24xf32>
  %1 = cgc.add %0, %bqkv : tensor<4x1x24xf32>, tensor<24xf32>
  %2 = cgc.reshape %1 : tensor<4x1x24xf32> -> tensor<4x1x3x8xf32>
  %3 = cgc.reshape %2 : tensor<4x1x3x8xf32> -> tensor<1x4x1x3x8xf32>
  %4 = cgc.transpose %3 {perm = array<i64: 3, 1, 2, 0, 4>} : tensor<1x4x1x3x8xf32>
  %5 = cgc.reshape %4 : tensor<3x4x1x1x8xf32> -> tensor<3x4x1x8xf32>
  %q = cgc.gather %5, %q_at {axis = 0 : i64} : tensor<3x4x1x8xf32>, tensor<i64>
  %k = cgc.gather %5, %k_at {axis = 0 : i64} : tensor<3x4x1x8xf32>, tensor<i64>
  %v = cgc.gather %5, %v_at {axis = 0 : i64} : tensor<3x4x1x8xf32>, tensor<i64>
  %q2 = cgc.reshape %q : tensor<4x1x8xf32> -> tensor<4x2x4xf32>
  %q3 = cgc.transpose %q2 {perm = array<i64: 1, 0, 2>} : tensor<4x2x4xf32>
  %q4 = cgc.reshape %q3 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %k2 = cgc.reshape %k : tensor<4x1x8xf32> -> tensor<4x2x4xf32>
  %k3 = cgc.transpose %k2 {perm = array<i64: 1, 2, 0>} : tensor<4x2x4xf32>
  %k4 = cgc.reshape %k3 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %v2 = cgc.reshape %v : tensor<4x1x8xf32> -> tensor<4x2x4xf32>
  %v3 = cgc.transpose %v2 {perm = array<i64: 1, 0, 2>} : tensor<4x2x4xf32>
  %v4 = cgc.reshape %v3 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %s = cgc.matmul %q4, %k4 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  %p = cgc.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = cgc.matmul %p, %v4 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  %o2 = cgc.transpose %o {perm = array<i64: 2, 0, 1, 3>} : tensor<1x2x4x4xf32>
  %o3 = cgc.reshape %o2 : tensor<4x1x2x4xf32> -> tensor<4x8xf32>
  %y = cgc.gemm %o3, %wo {trans_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
}
