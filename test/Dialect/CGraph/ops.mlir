// RUN: cgc-opt %s | cgc-opt | FileCheck %s

// CHECK-LABEL: cgraph.graph @island0
cgraph.graph @island0 {
  // CHECK: %[[Z:.+]] = cgraph.memset_node deps() {bytes = 2048 : i64, offset = 0 : i64, value = 0 : i64}
  %z = cgraph.memset_node deps() {offset = 0 : i64, bytes = 2048 : i64, value = 0 : i64}
  // CHECK: %[[K:.+]] = cgraph.kernel_node @gemm_bias deps(%[[Z]])
  %k = cgraph.kernel_node @gemm_bias deps(%z) {grid = array<i64: 4, 1, 1>, block = array<i64: 256, 1, 1>, args = array<i64: 4096, 0>}
  // CHECK: cgraph.memcpy_node deps(%[[K]])
  %c = cgraph.memcpy_node deps(%k) {dst = 8192 : i64, src = 0 : i64, bytes = 2048 : i64}
}
