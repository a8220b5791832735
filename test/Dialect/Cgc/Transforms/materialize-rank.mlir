// RUN: not cgc-opt %s -split-input-file --cgc-materialize-rank=rank=0 2>/dev/null | FileCheck %s --check-prefix=R0
// RUN: not cgc-opt %s -split-input-file --cgc-materialize-rank=rank=1 2>/dev/null | FileCheck %s --check-prefix=R1
// RUN: not cgc-opt %s -split-input-file --cgc-materialize-rank=rank=0 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR
// RUN: not cgc-opt %s -split-input-file --cgc-materialize-rank=rank=2 2>&1 >/dev/null | FileCheck %s --check-prefix=BAD-RANK

// A rank's shards become constants: columns of a weight (axis 1), rows
// (axis 0), and a fused QKV's three segments each cut in two (groups = 3).
// The whole weights are erased once nothing reads them; the module says
// which rank it holds.
// R0-LABEL: module attributes {cgc.rank = 0 : i64, cgc.ranks = 2 : i64}
// R0: cgc.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<2x2xf32>
// R0: cgc.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// R0: cgc.constant dense<[1.000000e+00, 3.000000e+00, 5.000000e+00]> : tensor<3xf32>
// R0-NOT: cgc.shard
// R0-NOT: tensor<2x4xf32>
// R1-LABEL: module attributes {cgc.rank = 1 : i64, cgc.ranks = 2 : i64}
// R1: cgc.constant dense<{{\[}}[3.000000e+00, 4.000000e+00], [7.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// R1: cgc.constant dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>
// R1: cgc.constant dense<[2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xf32>
module attributes {cgc.ranks = 2 : i64} {
  func.func @shards(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>, tensor<3xf32>) {
    %w = cgc.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
    %b = cgc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %qkv = cgc.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
    %ws = cgc.shard %w {axis = 1 : i64, ranks = 2 : i64} : tensor<2x4xf32> -> tensor<2x2xf32>
    %y = cgc.matmul %x, %ws : tensor<1x2xf32>, tensor<2x2xf32>
    %bs = cgc.shard %b {axis = 0 : i64, ranks = 2 : i64} : tensor<4xf32> -> tensor<2xf32>
    %qs = cgc.shard %qkv {axis = 0 : i64, groups = 3 : i64, ranks = 2 : i64} : tensor<6xf32> -> tensor<3xf32>
    return %y, %bs, %qs : tensor<1x2xf32>, tensor<2xf32>, tensor<3xf32>
  }
}

// -----

// A weight read beside its shard stays whole.
// R0-LABEL: func @kept
// R0: cgc.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// R0: cgc.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
module attributes {cgc.ranks = 2 : i64} {
  func.func @kept() -> (tensor<4xf32>, tensor<2xf32>) {
    %b = cgc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %bs = cgc.shard %b {axis = 0 : i64, ranks = 2 : i64} : tensor<4xf32> -> tensor<2xf32>
    return %b, %bs : tensor<4xf32>, tensor<2xf32>
  }
}

// -----

// ERR: error: a shard of a value computed at run time has no package form yet: a split package takes shards of weights only
module attributes {cgc.ranks = 2 : i64} {
  func.func @computed(%x: tensor<4xf32>) -> tensor<2xf32> {
    %e = cgc.exp %x : tensor<4xf32>
    %s = cgc.shard %e {axis = 0 : i64, ranks = 2 : i64} : tensor<4xf32> -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
}

// -----

// BAD-RANK: error: --cgc-materialize-rank: rank 2 is not one of the program's 2 ranks (cgc.ranks)
module attributes {cgc.ranks = 2 : i64} {
  func.func @none() {
    return
  }
}
