// RUN: cgc-opt %s -split-input-file --cgc-tensor-parallel="ranks=2 gather-min-bytes=1024" -verify-diagnostics | FileCheck %s

// A product that starts no column/row pair (a vocabulary projection whose
// result is returned) with a weight of gather-min-bytes or more: its
// weight cut by columns, each rank's part gathered, the ranks' columns put
// side by side. A smaller one stays whole.
// CHECK-LABEL: func @head
// CHECK: %[[W:.*]] = cgc.shard %{{.*}} {axis = 1 : i64, ranks = 2 : i64} : tensor<16x64xf32> -> tensor<16x32xf32>
// CHECK: %[[P:.*]] = cgc.matmul %arg0, %[[W]] : tensor<2x3x16xf32>, tensor<16x32xf32>
// CHECK: %[[G:.*]] = cgc.all_gather %[[P]] {ranks = 2 : i64} : tensor<2x3x32xf32> -> tensor<2x2x3x32xf32>
// CHECK: %[[T:.*]] = cgc.transpose %[[G]] {perm = array<i64: 1, 2, 0, 3>} : tensor<2x2x3x32xf32>
// CHECK: %[[Y:.*]] = cgc.reshape %[[T]] : tensor<2x3x2x32xf32> -> tensor<2x3x64xf32>
// CHECK: %[[S:.*]] = cgc.matmul %arg0, %{{.*}} : tensor<2x3x16xf32>, tensor<16x4xf32>
// CHECK-NOT: cgc.all_gather
// CHECK: return %[[Y]], %[[S]]
// expected-remark@below {{tensor parallelism over 2 ranks: 0 of 2 products split (column- then row-parallel), 1 by columns alone (results gathered), the others computed on every rank}}
module {
func.func @head(%x: tensor<2x3x16xf32>) -> (tensor<2x3x64xf32>, tensor<2x3x4xf32>) {
  %cw = cgc.constant dense<0.5> : tensor<16x64xf32>
  %y = cgc.matmul %x, %cw : tensor<2x3x16xf32>, tensor<16x64xf32>
  %cs = cgc.constant dense<0.25> : tensor<16x4xf32>
  %s = cgc.matmul %x, %cs : tensor<2x3x16xf32>, tensor<16x4xf32>
  return %y, %s : tensor<2x3x64xf32>, tensor<2x3x4xf32>
}
}

// -----

// A gemm with B transposed and a bias C over the columns: B cut along its
// rows (the output's columns), C with it; a weight that is an argument
// (not a constant) is never cut, and neither are columns that do not
// divide over the ranks.
// CHECK-LABEL: func @gemm
// CHECK: %[[B:.*]] = cgc.shard %{{.*}} {axis = 0 : i64, ranks = 2 : i64} : tensor<64x16xf32> -> tensor<32x16xf32>
// CHECK: %[[C:.*]] = cgc.shard %{{.*}} {axis = 0 : i64, ranks = 2 : i64} : tensor<64xf32> -> tensor<32xf32>
// CHECK: cgc.gemm %arg0, %[[B]], %[[C]] {trans_b = true} : (tensor<3x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<3x32xf32>
// CHECK: cgc.all_gather %{{.*}} : tensor<3x32xf32> -> tensor<2x3x32xf32>
// CHECK: cgc.transpose %{{.*}} {perm = array<i64: 1, 0, 2>}
// CHECK-NOT: cgc.all_gather
// CHECK-NOT: cgc.shard
// expected-remark@below {{0 of 3 products split (column- then row-parallel), 1 by columns alone}}
module {
func.func @gemm(%x: tensor<3x16xf32>, %w: tensor<16x64xf32>) -> (tensor<3x64xf32>, tensor<3x64xf32>, tensor<3x65xf32>) {
  %b = cgc.constant dense<0.5> : tensor<64x16xf32>
  %c = cgc.constant dense<1.0> : tensor<64xf32>
  %y = cgc.gemm %x, %b, %c {trans_b = true} : (tensor<3x16xf32>, tensor<64x16xf32>, tensor<64xf32>) -> tensor<3x64xf32>
  %z = cgc.matmul %x, %w : tensor<3x16xf32>, tensor<16x64xf32>
  %odd = cgc.constant dense<0.5> : tensor<16x65xf32>
  %o = cgc.matmul %x, %odd : tensor<3x16xf32>, tensor<16x65xf32>
  return %y, %z, %o : tensor<3x64xf32>, tensor<3x64xf32>, tensor<3x65xf32>
}
}

// -----

// Products inside an If body are neither split in pairs nor gathered: the
// collectives would run inside a conditional graph node, where NCCL calls
// cannot.
// CHECK-LABEL: func @conditional
// CHECK-NOT: cgc.shard
// CHECK-NOT: cgc.all_reduce
// CHECK-NOT: cgc.all_gather
// expected-warning@below {{tensor parallelism over 2 ranks found no product whose result reaches other products through ops it can split, and no weight of 1024 bytes or more to split by columns alone: every rank computes the whole model}}
module {
func.func @conditional(%c: tensor<i1>, %x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = cgc.if %c : tensor<i1> -> tensor<4x16xf32> {
    %w1 = cgc.constant dense<0.5> : tensor<16x64xf32>
    %h = cgc.matmul %x, %w1 : tensor<4x16xf32>, tensor<16x64xf32>
    %g = cgc.relu %h : tensor<4x64xf32>
    %w2 = cgc.constant dense<0.25> : tensor<64x16xf32>
    %y = cgc.matmul %g, %w2 : tensor<4x64xf32>, tensor<64x16xf32>
    cgc.yield %y : tensor<4x16xf32>
  } else {
    cgc.yield %x : tensor<4x16xf32>
  }
  return %r : tensor<4x16xf32>
}
}
