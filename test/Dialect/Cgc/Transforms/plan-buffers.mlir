// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers 2>/dev/null | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// Layout: weights first, then the input and output slots, then the
// intermediates. An elementwise kernel may write over an input that dies
// there (in place): %k1 reuses %k0's bytes.
// REMARK: remark: arena: 768 bytes (0 weights); intermediates 256 bytes, lower bound 256, naive 512
// CHECK-LABEL: func @in_place
// CHECK-SAME: cgc.arena_offset = 0
// CHECK-SAME: cgc.arena_offset = 256
// CHECK-SAME: cgc.arena_bytes = 768
// CHECK: cgc.kernel "k0" elementwise -> tensor<64xf32> attributes {cgc.result_offsets = array<i64: 512>
// CHECK: cgc.kernel "k1" elementwise -> tensor<64xf32> attributes {cgc.result_offsets = array<i64: 512>
// CHECK: cgc.kernel "k2" elementwise -> tensor<64xf32> attributes {cgc.result_offsets = array<i64: 256>
func.func @in_place(%x: tensor<64xf32>) -> tensor<64xf32> {
  %r = cgc.island "island0" -> tensor<64xf32> {
    %k0 = cgc.kernel "k0" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k1 = cgc.kernel "k1" elementwise -> tensor<64xf32> {
      %0 = cgc.neg %k0 : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k2 = cgc.kernel "k2" elementwise -> tensor<64xf32> {
      %0 = cgc.mul %k1, %k1 : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %k2 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// %k0 is still read by %k2, so %k1 must not share its memory; a matmul
// never writes over its inputs either. Weights get their own region.
// REMARK: remark: arena: 1280 bytes (256 weights); intermediates 512 bytes, lower bound 512, naive 512
// CHECK-LABEL: func @must_not_share
// CHECK: cgc.constant {cgc.weight_offset = 0 : i64}
// CHECK: cgc.kernel "k0" elementwise -> tensor<64xf32> attributes {cgc.result_offsets = array<i64: 768>
// CHECK: cgc.kernel "k1" elementwise -> tensor<64xf32> attributes {cgc.result_offsets = array<i64: 1024>
// CHECK: cgc.kernel "k2" elementwise -> tensor<64xf32> attributes {cgc.result_offsets = array<i64: 512>
func.func @must_not_share(%x: tensor<64xf32>) -> tensor<64xf32> {
  %w = cgc.constant dense<2.0> : tensor<64xf32>
  %r = cgc.island "island0" -> tensor<64xf32> {
    %k0 = cgc.kernel "k0" elementwise -> tensor<64xf32> {
      %0 = cgc.mul %x, %w : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k1 = cgc.kernel "k1" elementwise -> tensor<64xf32> {
      %0 = cgc.neg %k0 : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k2 = cgc.kernel "k2" elementwise -> tensor<64xf32> {
      %0 = cgc.add %k0, %k1 : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %k2 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// A reshape is a view: its result has its input's offset.
// CHECK-LABEL: func @reshape_aliases
// CHECK: cgc.kernel "k0" elementwise -> tensor<8x8xf32> attributes {cgc.result_offsets = array<i64: [[OFF:[0-9]+]]>
// CHECK: cgc.reshape {{.*}}cgc.result_offsets = array<i64: [[OFF]]>
func.func @reshape_aliases(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %r = cgc.island "island0" -> tensor<8xf32> {
    %k0 = cgc.kernel "k0" elementwise -> tensor<8x8xf32> {
      %0 = cgc.exp %x : tensor<8x8xf32>
      cgc.yield %0 : tensor<8x8xf32>
    }
    %v = cgc.reshape %k0 : tensor<8x8xf32> -> tensor<64xf32>
    %k1 = cgc.kernel "k1" single -> tensor<8xf32> {
      %0 = cgc.slice %v {starts = array<i64: 0>, ends = array<i64: 8>, steps = array<i64: 1>} : tensor<64xf32>
      cgc.yield %0 : tensor<8xf32>
    }
    cgc.yield %k1 : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A data-dependent shape gets a slot of its worst-case size (NonZero of
// 64 elements: 2 x 64 indices = 1024 bytes) that nothing else overlaps.
// CHECK-LABEL: func @data_dependent
// CHECK-SAME: -> (tensor<2x?xi64> {cgc.arena_offset = 256 : i64})
// CHECK-SAME: cgc.arena_bytes = 1536
// CHECK: cgc.kernel "k0" elementwise -> tensor<4x16xf32> attributes {cgc.result_offsets = array<i64: 1280>
// CHECK: cgc.eager "eager0" -> tensor<2x?xi64> attributes {cgc.result_offsets = array<i64: 256>
func.func @data_dependent(%x: tensor<4x16xf32>) -> tensor<2x?xi64> {
  %r = cgc.island "island0" -> tensor<4x16xf32> {
    %k0 = cgc.kernel "k0" elementwise -> tensor<4x16xf32> {
      %0 = cgc.exp %x : tensor<4x16xf32>
      cgc.yield %0 : tensor<4x16xf32>
    }
    cgc.yield %k0 : tensor<4x16xf32>
  }
  %n = cgc.eager "eager0" -> tensor<2x?xi64> attributes {nodes = ["NonZero"], reason = "data-dependent output shape"} {
    %0 = cgc.nonzero %r : tensor<4x16xf32> -> tensor<2x?xi64>
    cgc.yield %0 : tensor<2x?xi64>
  }
  return %n : tensor<2x?xi64>
}

// -----

// The inputs of an in-place concat are planned as chunks of its buffer.
// CHECK-LABEL: func @concat_chunks
// CHECK: cgc.kernel "a" elementwise -> tensor<1x64xf32> attributes {cgc.result_offsets = array<i64: [[BASE:[0-9]+]]>
// CHECK: cgc.kernel "b" elementwise -> tensor<1x64xf32> attributes {cgc.result_offsets = array<i64: [[SECOND:[0-9]+]]>
// CHECK: cgc.concat {{.*}}cgc.result_offsets = array<i64: [[BASE]]>
func.func @concat_chunks(%x: tensor<1x64xf32>) -> tensor<1x128xf32> {
  %r = cgc.island "island0" -> tensor<1x128xf32> {
    %a = cgc.kernel "a" elementwise -> tensor<1x64xf32> {
      %0 = cgc.exp %x : tensor<1x64xf32>
      cgc.yield %0 : tensor<1x64xf32>
    }
    %b = cgc.kernel "b" elementwise -> tensor<1x64xf32> {
      %0 = cgc.neg %x : tensor<1x64xf32>
      cgc.yield %0 : tensor<1x64xf32>
    }
    %c = cgc.concat %a, %b {axis = 1 : i64, cgc.in_place} : tensor<1x64xf32>, tensor<1x64xf32>
    %k = cgc.kernel "k" elementwise -> tensor<1x128xf32> {
      %0 = cgc.abs %c : tensor<1x128xf32>
      cgc.yield %0 : tensor<1x128xf32>
    }
    cgc.yield %k : tensor<1x128xf32>
  }
  return %r : tensor<1x128xf32>
}

// -----

// A training step's state (cgc.state) lives in the weights region, and an
// update (cgc.updates) is written over its state where that is safe: "m"
// and "w" are read only by the elementwise kernel that updates both (one
// thread reads and writes one element of each), "c" by nothing after its
// update. "s" is still read after its update, so the update keeps a slot
// of its own (the runtime copies it after the step).
// REMARK: remark: arena: 2048 bytes (1024 weights); intermediates 256 bytes, lower bound 256, naive 256
// REMARK: remark: training state: 3 of 4 updates written in place; 's' copied after the step
// CHECK-LABEL: func @train_state
// CHECK-SAME: cgc.arena_offset = 0 : i64, cgc.name = "w", cgc.state
// CHECK-SAME: cgc.arena_offset = 256 : i64, cgc.name = "m", cgc.state
// CHECK-SAME: cgc.arena_offset = 512 : i64, cgc.name = "s", cgc.state
// CHECK-SAME: cgc.arena_offset = 768 : i64, cgc.name = "c", cgc.state
// CHECK-SAME: cgc.arena_offset = 1024 : i64, cgc.name = "x"
// CHECK-SAME: cgc.arena_offset = [[LOSS:[0-9]+]] : i64, cgc.name = "loss"
// CHECK-SAME: cgc.arena_offset = 256 : i64, cgc.name = "m", cgc.updates = "m"
// CHECK-SAME: cgc.arena_offset = 0 : i64, cgc.name = "w", cgc.updates = "w"
// CHECK-SAME: cgc.arena_offset = 768 : i64, cgc.name = "c", cgc.updates = "c"
// CHECK-SAME: cgc.arena_offset = [[S:[0-9]+]] : i64, cgc.name = "s", cgc.updates = "s"
// CHECK-SAME: cgc.weights_bytes = 1024
func.func @train_state(%w: tensor<64xf32> {cgc.name = "w", cgc.state = dense<1.0> : tensor<64xf32>},
                       %m: tensor<64xf32> {cgc.name = "m", cgc.state = dense<0.0> : tensor<64xf32>},
                       %s: tensor<64xf32> {cgc.name = "s", cgc.state = dense<0.0> : tensor<64xf32>},
                       %c: tensor<64xf32> {cgc.name = "c", cgc.state = dense<0.0> : tensor<64xf32>},
                       %x: tensor<64xf32> {cgc.name = "x"})
    -> (tensor<64xf32> {cgc.name = "loss"},
        tensor<64xf32> {cgc.name = "m", cgc.updates = "m"},
        tensor<64xf32> {cgc.name = "w", cgc.updates = "w"},
        tensor<64xf32> {cgc.name = "c", cgc.updates = "c"},
        tensor<64xf32> {cgc.name = "s", cgc.updates = "s"}) {
  %r:5 = cgc.island "island0" -> tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> {
    %uses_c = cgc.kernel "uses_c" elementwise -> tensor<64xf32> {
      %0 = cgc.mul %c, %x : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %u:2 = cgc.kernel "update_m_and_w" elementwise -> tensor<64xf32>, tensor<64xf32> {
      %0 = cgc.add %m, %uses_c : tensor<64xf32>, tensor<64xf32>
      %1 = cgc.sub %w, %0 : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0, %1 : tensor<64xf32>, tensor<64xf32>
    }
    %c2 = cgc.kernel "c_new" elementwise -> tensor<64xf32> {
      %0 = cgc.neg %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %s2 = cgc.kernel "s_new" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %loss = cgc.kernel "loss" elementwise -> tensor<64xf32> {
      %0 = cgc.mul %s, %x : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %loss, %u#0, %u#1, %c2, %s2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  }
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// In place means the very same bytes: %r (neg of %a, which dies there) may
// take %a's offset but no offset that overlaps it shifted, or a thread
// would overwrite an element another thread has yet to read. The lowest
// free offset for %r is 512 (%k holds 0-511), which would overlap %a
// (768-1279) by half; %r takes %a's own bytes instead.
// CHECK-LABEL: func @in_place_is_exact
// CHECK: cgc.kernel "h" elementwise -> tensor<192xf32> attributes {cgc.result_offsets = array<i64: [[BASE:[0-9]+]]>
// CHECK: cgc.kernel "a" elementwise -> tensor<128xf32> attributes {cgc.result_offsets = array<i64: [[A:[0-9]+]]>
// CHECK: cgc.kernel "k" elementwise -> tensor<128xf32> attributes {cgc.result_offsets = array<i64: [[BASE]]>
// CHECK: cgc.kernel "r" elementwise -> tensor<128xf32> attributes {cgc.result_offsets = array<i64: [[A]]>
func.func @in_place_is_exact(%x: tensor<192xf32>, %y: tensor<128xf32>) -> (tensor<192xf32>, tensor<128xf32>) {
  %r:2 = cgc.island "island0" -> tensor<192xf32>, tensor<128xf32> {
    %h = cgc.kernel "h" elementwise -> tensor<192xf32> {
      %0 = cgc.exp %x : tensor<192xf32>
      cgc.yield %0 : tensor<192xf32>
    }
    %a = cgc.kernel "a" elementwise -> tensor<128xf32> {
      %0 = cgc.neg %y : tensor<128xf32>
      cgc.yield %0 : tensor<128xf32>
    }
    %z = cgc.kernel "z" elementwise -> tensor<192xf32> {
      %0 = cgc.exp %h : tensor<192xf32>
      cgc.yield %0 : tensor<192xf32>
    }
    %k = cgc.kernel "k" elementwise -> tensor<128xf32> {
      %0 = cgc.exp %y : tensor<128xf32>
      cgc.yield %0 : tensor<128xf32>
    }
    %n = cgc.kernel "r" elementwise -> tensor<128xf32> {
      %0 = cgc.neg %a : tensor<128xf32>
      cgc.yield %0 : tensor<128xf32>
    }
    %o = cgc.kernel "o" elementwise -> tensor<128xf32> {
      %0 = cgc.add %n, %k : tensor<128xf32>, tensor<128xf32>
      cgc.yield %0 : tensor<128xf32>
    }
    cgc.yield %z, %o : tensor<192xf32>, tensor<128xf32>
  }
  return %r#0, %r#1 : tensor<192xf32>, tensor<128xf32>
}
