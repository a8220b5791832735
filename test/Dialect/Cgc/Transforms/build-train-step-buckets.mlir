// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd data-parallel=2 bucket-bytes=40' | FileCheck %s
// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd data-parallel=2' | FileCheck %s --check-prefix=ONE
// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd data-parallel=2 bucket-bytes=0' | FileCheck %s --check-prefix=EACH
// RUN: cgc-opt %s --cgc-build-train-step='optimizer=sgd' | FileCheck %s --check-prefix=RANK1

// Data parallel: the loss and the gradients averaged over the ranks in
// buckets of at most bucket-bytes, in the order the backward computes them
// (loss 4 bytes, b2 8, w2 40, b1 20, w1 60): [loss, b2], [w2], [b1], [w1]
// (a gradient larger than a bucket alone). A bucket of several is
// flattened, joined, summed by one all-reduce and split back; each bucket
// follows its last gradient, so the first ones are summed while the
// backward goes on (before w1's gradient, the gemm of x).
// CHECK-LABEL: func.func @main
// CHECK: %[[J:.*]] = cgc.concat {{.*}} {axis = 0 : i64} : tensor<1xf32>, tensor<2xf32>
// CHECK-NEXT: %[[S:.*]] = cgc.all_reduce %[[J]] {ranks = 2 : i64} : tensor<3xf32>
// CHECK: cgc.split {{.*}} {axis = 0 : i64, sizes = array<i64: 1, 2>} : tensor<3xf32>
// CHECK: cgc.all_reduce {{.*}} {ranks = 2 : i64} : tensor<5x2xf32>
// CHECK: cgc.all_reduce {{.*}} {ranks = 2 : i64} : tensor<5xf32>
// CHECK: cgc.gemm %arg0
// CHECK: cgc.all_reduce {{.*}} {ranks = 2 : i64} : tensor<3x5xf32>
// CHECK-NOT: cgc.all_reduce

// ONE: cgc.concat {{.*}} : tensor<1xf32>, tensor<2xf32>, tensor<10xf32>, tensor<5xf32>, tensor<15xf32>
// ONE-NEXT: cgc.all_reduce {{.*}} : tensor<33xf32>
// ONE-NOT: cgc.all_reduce

// EACH-COUNT-5: cgc.all_reduce
// EACH-NOT: cgc.all_reduce
// EACH-NOT: cgc.concat {{.*}} : tensor<1xf32>

// RANK1-NOT: cgc.all_reduce
// RANK1-NOT: cgc.concat {{.*}} : tensor<1xf32>

func.func @main(%x: tensor<2x3xf32> {cgc.name = "x"}) -> (tensor<2x2xf32> {cgc.name = "y"}) {
  %w1 = cgc.constant {cgc.initializer} dense<[[0.1, -0.2, 0.3, 0.05, -0.1], [0.2, 0.1, -0.3, 0.25, 0.0], [-0.15, 0.2, 0.1, -0.05, 0.3]]> : tensor<3x5xf32> loc("w1")
  %b1 = cgc.constant {cgc.initializer} dense<[0.01, 0.02, -0.01, 0.0, 0.03]> : tensor<5xf32> loc("b1")
  %w2 = cgc.constant {cgc.initializer} dense<[[0.2, -0.1], [0.1, 0.3], [-0.2, 0.1], [0.05, -0.25], [0.15, 0.2]]> : tensor<5x2xf32> loc("w2")
  %b2 = cgc.constant {cgc.initializer} dense<[0.0, 0.1]> : tensor<2xf32> loc("b2")
  %0 = cgc.matmul %x, %w1 : tensor<2x3xf32>, tensor<3x5xf32>
  %1 = cgc.add %0, %b1 : tensor<2x5xf32>, tensor<5xf32>
  %2 = cgc.relu %1 : tensor<2x5xf32>
  %3 = cgc.matmul %2, %w2 : tensor<2x5xf32>, tensor<5x2xf32>
  %4 = cgc.add %3, %b2 : tensor<2x2xf32>, tensor<2xf32>
  return %4 : tensor<2x2xf32>
}
