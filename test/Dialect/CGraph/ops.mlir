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

// CHECK-LABEL: cgraph.graph @conditionals
// CHECK: cgraph.kernel_node @set_if deps() {{.*}}condition_handle = 0 : i64
// CHECK: cgraph.conditional_node "if" handle 0 deps(%{{.*}}) {
// CHECK: } else {
// CHECK: cgraph.conditional_node "while" handle 1 deps(%{{.*}}) {
cgraph.graph @conditionals {
  %s = cgraph.kernel_node @set_if deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 0>, condition_handle = 0 : i64}
  %c = cgraph.conditional_node "if" handle 0 deps(%s) {
    %k = cgraph.kernel_node @relu deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 256, 512>}
  } else {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
  %w = cgraph.conditional_node "while" handle 1 deps(%c) {
    %k = cgraph.kernel_node @step deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 768>, condition_handle = 1 : i64}
  }
}
