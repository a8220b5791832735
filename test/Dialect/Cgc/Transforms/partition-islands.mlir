// RUN: cgc-opt %s -split-input-file --cgc-partition-islands --mlir-print-op-on-diagnostic=false | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-partition-islands --mlir-print-op-on-diagnostic=false -verify-diagnostics -o /dev/null

// Everything capture-safe: one island; constants stay outside it.
// CHECK-LABEL: func @all_safe
// CHECK: %[[W:.+]] = cgc.constant
// CHECK: %[[I:.+]] = cgc.island "island0" -> tensor<4xf32> {
// CHECK:   cgc.relu
// CHECK:   cgc.add %{{.+}}, %[[W]]
// CHECK:   cgc.yield
// CHECK: return %[[I]]
func.func @all_safe(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark@+1 {{island0: 2 capture-safe op(s)}}
  %a = cgc.relu %x : tensor<4xf32>
  %w = cgc.constant dense<1.0> : tensor<4xf32>
  %b = cgc.add %a, %w : tensor<4xf32>, tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// Work that does not depend on the eager op moves before it, so there is
// one island, then the eager region: not island, eager, island.
// CHECK-LABEL: func @independent_work_moves_before_eager
// CHECK: %[[I:.+]]:3 = cgc.island "island0"
// CHECK:   cgc.relu
// CHECK:   cgc.exp
// CHECK:   cgc.neg
// CHECK: %[[E:.+]] = cgc.eager "eager0" -> tensor<2x?xi64> attributes {nodes = ["cgc.nonzero"], reason = "data-dependent output shape"}
// CHECK:   cgc.nonzero %[[I]]#0
// CHECK-NOT: cgc.island
// CHECK: return %[[E]], %[[I]]#2, %[[I]]#1
func.func @independent_work_moves_before_eager(%x: tensor<4x16xf32>, %y: tensor<8xf32>) -> (tensor<2x?xi64>, tensor<4x16xf32>, tensor<8xf32>) {
  // expected-remark@+1 {{island0: 3 capture-safe op(s)}}
  %a = cgc.relu %x : tensor<4x16xf32>
  // expected-remark@+1 {{eager0: 1 op(s) stay eager (data-dependent output shape)}}
  %n = cgc.nonzero %a : tensor<4x16xf32> -> tensor<2x?xi64>
  %b = cgc.exp %y : tensor<8xf32>
  %c = cgc.neg %a : tensor<4x16xf32>
  return %n, %c, %b : tensor<2x?xi64>, tensor<4x16xf32>, tensor<8xf32>
}

// -----

// Work that depends on the eager op must wait for it: a second island.
// CHECK-LABEL: func @dependent_work_after_eager
// CHECK: cgc.island "island0"
// CHECK: cgc.eager "eager0"
// CHECK: cgc.island "island1"
// CHECK:   cgc.add
func.func @dependent_work_after_eager(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  // expected-remark@+1 {{island0: 1 capture-safe op(s)}}
  %a = cgc.relu %x : tensor<4xf32>
  // expected-remark@+1 {{eager0: 1 op(s) stay eager (branch holds work that must run eagerly)}}
  %b = cgc.if %c : tensor<i1> -> tensor<4xf32> {
    %n = cgc.nonzero %a : tensor<4xf32> -> tensor<1x?xi64>
    %s = cgc.size %n : tensor<1x?xi64>
    %f = cgc.cast %s : tensor<i64> -> tensor<f32>
    %e = cgc.add %a, %f : tensor<4xf32>, tensor<f32>
    cgc.yield %e : tensor<4xf32>
  } else {
    cgc.yield %x : tensor<4xf32>
  }
  // expected-remark@+1 {{island1: 1 capture-safe op(s)}}
  %d = cgc.add %b, %a : tensor<4xf32>, tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// If and Loop with static shapes stay in the island: they become CUDA
// conditional nodes.
// CHECK-LABEL: func @static_control_flow_in_graphs
// CHECK: cgc.island "island0"
// CHECK:   cgc.if
// CHECK:   cgc.loop
// CHECK-NOT: cgc.eager
func.func @static_control_flow_in_graphs(%x: tensor<4xf32>, %c: tensor<i1>, %m: tensor<i64>) -> tensor<4xf32> {
  // expected-remark@+1 {{island0: 3 capture-safe op(s)}}
  %a = cgc.relu %x : tensor<4xf32>
  %b = cgc.if %c : tensor<i1> -> tensor<4xf32> {
    %n = cgc.neg %a : tensor<4xf32>
    cgc.yield %n : tensor<4xf32>
  } else {
    cgc.yield %x : tensor<4xf32>
  }
  %l = cgc.loop %m, %c iter_args(%b) : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<4xf32>):
    %t = cgc.tanh %v : tensor<4xf32>
    cgc.yield %k, %t : tensor<i1>, tensor<4xf32>
  }
  return %l : tensor<4xf32>
}

// -----

// An unbound symbolic dim keeps an op out of graphs, and says so.
// CHECK-LABEL: func @unbound_dim
// CHECK: cgc.eager "eager0" -> tensor<?x4xf32> attributes {{{.*}}reason = "unbound symbolic dim"}
func.func @unbound_dim(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-remark@+1 {{eager0: 1 op(s) stay eager (unbound symbolic dim)}}
  %a = cgc.relu %x : tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}
