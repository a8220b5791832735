// RUN: cgc-opt %s --cgc-pipeline 2>/dev/null | FileCheck %s

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
