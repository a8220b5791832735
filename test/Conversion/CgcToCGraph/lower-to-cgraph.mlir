// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config --cgc-lower-to-cgraph 2>/dev/null | FileCheck %s

// Independent kernels get no edge between them; the join depends on both.
// Identical kernels (the two exps) share one generated kernel.
// CHECK: cgraph.kernel @[[EXP:elementwise_[0-9a-f]+]] {source = "extern \22C\22 __global__
// CHECK-LABEL: cgraph.graph @island0
// CHECK: %[[A:.+]] = cgraph.kernel_node @[[EXP]] deps() {{{.*}}label = "a"
// CHECK: %[[B:.+]] = cgraph.kernel_node @[[EXP]] deps() {{{.*}}label = "b"
// CHECK: cgraph.kernel_node @{{.+}} deps(%[[A]], %[[B]]) {{{.*}}label = "c"
func.func @independent(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %r = cgc.island "island0" -> tensor<64xf32> {
    %a = cgc.kernel "a" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %b = cgc.kernel "b" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %y : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %c = cgc.kernel "c" elementwise -> tensor<64xf32> {
      %0 = cgc.add %a, %b : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %c : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// Reused memory adds write-after-read edges: %b writes over %a's buffer
// (in place), which %n still reads, so %b waits for %n. The edge from %a
// to %b is implied by %a -> %n -> %b and is left out.
// CHECK-LABEL: cgraph.graph @island0
// CHECK: %[[A:.+]] = cgraph.kernel_node @{{.+}} deps() {{{.*}}label = "a"
// CHECK: %[[N:.+]] = cgraph.kernel_node @{{.+}} deps(%[[A]]) {{{.*}}label = "n"
// CHECK: %[[B:.+]] = cgraph.kernel_node @{{.+}} deps(%[[N]]) {{{.*}}label = "b"
// CHECK: cgraph.kernel_node @{{.+}} deps(%[[B]]) {{{.*}}label = "c"
func.func @write_after_read(%x: tensor<64xf32>) -> tensor<64xf32> {
  %r = cgc.island "island0" -> tensor<64xf32> {
    %a = cgc.kernel "a" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %n = cgc.kernel "n" elementwise -> tensor<64xf32> {
      %0 = cgc.neg %a : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %b = cgc.kernel "b" elementwise -> tensor<64xf32> {
      %0 = cgc.abs %a : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %c = cgc.kernel "c" elementwise -> tensor<64xf32> {
      %0 = cgc.add %n, %b : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %c : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// The function becomes a schedule: its islands' replays and its eager
// regions' host work, in program order. NonZero runs on the host between
// the two graphs and reports the shape of output 1.
// CHECK-LABEL: cgraph.graph @island0
// CHECK-LABEL: cgraph.graph @island1
// CHECK-LABEL: cgraph.schedule @interleaved {
// CHECK-NEXT: cgraph.replay @island0
// CHECK-NEXT: cgraph.eager "eager0" {
// CHECK-NEXT: cgraph.host_nonzero "cgc.nonzero" {element_type = f32, input = {{[0-9]+}} : i64, output = {{[0-9]+}} : i64, shape = array<i64: 64>, shape_outputs = array<i64: 1>}
// CHECK-NEXT: }
// CHECK-NEXT: cgraph.replay @island1
// CHECK-NEXT: }
func.func @interleaved(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<1x?xi64>) {
  %a = cgc.island "island0" -> tensor<64xf32> {
    %k = cgc.kernel "a" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %k : tensor<64xf32>
  }
  %nz = cgc.eager "eager0" -> tensor<1x?xi64> attributes {nodes = ["nz"], reason = "data-dependent output shape"} {
    %0 = cgc.nonzero %a : tensor<64xf32> -> tensor<1x?xi64>
    cgc.yield %0 : tensor<1x?xi64>
  }
  %b = cgc.island "island1" -> tensor<64xf32> {
    %k = cgc.kernel "b" elementwise -> tensor<64xf32> {
      %0 = cgc.neg %a : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %k : tensor<64xf32>
  }
  return %b, %nz : tensor<64xf32>, tensor<1x?xi64>
}

// -----

// A bucket's function (cgc::compileBuckets) gives its schedule the value.
// CHECK-LABEL: cgraph.schedule @main_N2 bucket 2 {
// CHECK-NEXT: cgraph.replay @N2_island0
func.func @main_N2(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {cgc.bucket_value = 2 : i64} {
  %r = cgc.island "N2_island0" -> tensor<2x8xf32> {
    %k = cgc.kernel "a" elementwise -> tensor<2x8xf32> {
      %0 = cgc.exp %x : tensor<2x8xf32>
      cgc.yield %0 : tensor<2x8xf32>
    }
    cgc.yield %k : tensor<2x8xf32>
  }
  return %r : tensor<2x8xf32>
}
