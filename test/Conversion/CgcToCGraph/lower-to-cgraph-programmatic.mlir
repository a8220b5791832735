// Kernel -> kernel edges of a top-level graph are programmatic where the
// target has programmatic launch (sm_90 or newer; sm_90 without a target)
// and `programmatic-launch` is on.
// RUN: cgc-opt %s -split-input-file --cgc-partition-islands --cgc-fuse --cgc-plan-buffers --cgc-select-kernel-config --cgc-lower-to-cgraph 2>/dev/null | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-partition-islands --cgc-fuse --cgc-plan-buffers --cgc-select-kernel-config --cgc-lower-to-cgraph=programmatic-launch=false 2>/dev/null | FileCheck %s --check-prefix=OFF

// The first kernel depends on nothing; the next ones get one flag per
// dependency.
// CHECK-LABEL: cgraph.graph @island0
// CHECK: %[[A:.+]] = cgraph.kernel_node @{{.+}} deps() {{{.*}}label = "matmul_0"}
// CHECK: %[[B:.+]] = cgraph.kernel_node @{{.+}} deps(%[[A]]) {{{.*}}programmatic = array<i1: true>}
// CHECK: cgraph.kernel_node @{{.+}} deps(%[[B]]) {{{.*}}programmatic = array<i1: true>}
// OFF-LABEL: cgraph.graph @island0
// OFF-NOT: programmatic
// OFF-LABEL: cgraph.schedule @chain
func.func @chain(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x1xf32> {
  %m = cgc.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32>
  %s = cgc.reduce_sum %m {axes = array<i64: 1>, keepdims = true} : tensor<64x64xf32>
  %r = cgc.matmul %m, %s : tensor<64x64xf32>, tensor<64x1xf32>
  return %r : tensor<64x1xf32>
}

// -----

// Below sm_90 the kernels' griddepcontrol compiles to nothing: ordinary
// edges.
// CHECK-LABEL: cgraph.graph @island0
// CHECK-NOT: programmatic
// CHECK-LABEL: cgraph.schedule @chain_sm80
module attributes {cgc.target = #cgc.target<arch = "sm_80", gpu = "A100",
    multiprocessors = 108, static_shared_bytes = 49152,
    max_shared_bytes_per_block = 166912,
    shared_bytes_per_multiprocessor = 167936,
    registers_per_multiprocessor = 65536,
    max_threads_per_multiprocessor = 2048,
    fp32_lanes_per_multiprocessor = 64, tensor_cores = mma_sync>} {
func.func @chain_sm80(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x1xf32> {
  %m = cgc.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32>
  %s = cgc.reduce_sum %m {axes = array<i64: 1>, keepdims = true} : tensor<64x64xf32>
  %r = cgc.matmul %m, %s : tensor<64x64xf32>, tensor<64x1xf32>
  return %r : tensor<64x1xf32>
}
}

// -----

// A condition kernel (no wait; its handle by value) and the nodes of a
// conditional body keep ordinary edges; the kernel after the conditional
// node depends on a conditional node, not on a kernel.
// CHECK-LABEL: cgraph.graph @island0
// CHECK-NOT: programmatic
// CHECK-LABEL: cgraph.schedule @branch
func.func @branch(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  %a = cgc.relu %x : tensor<4xf32>
  %b = cgc.if %c : tensor<i1> -> tensor<4xf32> {
    %n = cgc.reduce_sum %a {axes = array<i64: 0>, keepdims = true} : tensor<4xf32>
    %t = cgc.add %a, %n : tensor<4xf32>, tensor<1xf32>
    cgc.yield %t : tensor<4xf32>
  } else {
    cgc.yield %x : tensor<4xf32>
  }
  %d = cgc.exp %b : tensor<4xf32>
  return %d : tensor<4xf32>
}
