// RUN: cgc-opt %s -split-input-file --cgc-pipeline 2>/dev/null | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-pipeline 2>/dev/null | FileCheck %s --check-prefix=GATHER

// An all-reduce group becomes an NCCL node (no kernel), reading the
// producer's buffer and writing its own; collectives form one chain, so
// every rank issues them in the same order.
// CHECK: %[[A:.*]] = cgraph.nccl_all_reduce_node deps(%{{[0-9]+}}) {count = 64 : i64, label = "all_reduce_2", ranks = 2 : i64
// CHECK: cgraph.nccl_all_reduce_node deps(%{{[0-9]+}}, %[[A]]) {count = 64 : i64, label = "all_reduce_3", ranks = 2 : i64
// CHECK-NOT: cgraph.kernel @{{.*}}all_reduce
module attributes {cgc.ranks = 2 : i64} {
  func.func @two(%a: tensor<64xf32> {cgc.name = "a"}, %b: tensor<64xf32> {cgc.name = "b"}) -> (tensor<64xf32> {cgc.name = "x"}, tensor<64xf32> {cgc.name = "y"}) {
    %ea = cgc.exp %a : tensor<64xf32>
    %eb = cgc.exp %b : tensor<64xf32>
    %ra = cgc.all_reduce %ea {ranks = 2 : i64} : tensor<64xf32>
    %rb = cgc.all_reduce %eb {ranks = 2 : i64} : tensor<64xf32>
    %x = cgc.neg %ra : tensor<64xf32>
    %y = cgc.neg %rb : tensor<64xf32>
    return %x, %y : tensor<64xf32>, tensor<64xf32>
  }
}

// -----

// An all-gather group: the NCCL node sends the producer's 24 elements and
// writes 2 x 24 into its own buffer (another than the one it reads); the
// transpose and reshape after it are an ordinary kernel.
// GATHER: %[[G:.*]] = cgraph.nccl_all_gather_node deps(%{{[0-9]+}}) {count = 24 : i64, label = "all_gather_{{[0-9]+}}", ranks = 2 : i64, recv = [[RECV:[0-9]+]] : i64, send = [[SEND:[0-9]+]] : i64, type = f32}
// GATHER-NOT: recv = [[SEND]] : i64
// GATHER: cgraph.kernel_node {{.*}}deps(%[[G]])
// GATHER-NOT: cgraph.kernel @{{.*}}all_gather
module attributes {cgc.ranks = 2 : i64} {
  func.func @head(%a: tensor<4x6xf32> {cgc.name = "a"}) -> (tensor<4x12xf32> {cgc.name = "y"}) {
    %e = cgc.exp %a : tensor<4x6xf32>
    %g = cgc.all_gather %e {ranks = 2 : i64} : tensor<4x6xf32> -> tensor<2x4x6xf32>
    %t = cgc.transpose %g {perm = array<i64: 1, 0, 2>} : tensor<2x4x6xf32>
    %y = cgc.reshape %t : tensor<4x2x6xf32> -> tensor<4x12xf32>
    return %y : tensor<4x12xf32>
  }
}
