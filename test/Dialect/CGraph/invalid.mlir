// RUN: cgc-opt %s -split-input-file -verify-diagnostics

cgraph.graph @g {
  // expected-error@+1 {{block has more than 1024 threads}}
  %k = cgraph.kernel_node @k deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1024, 2, 1>, args = array<i64: 0>}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{grid must be three positive extents}}
  %k = cgraph.kernel_node @k deps() {grid = array<i64: 0, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{source and destination overlap}}
  %c = cgraph.memcpy_node deps() {dst = 0 : i64, src = 1024 : i64, bytes = 2048 : i64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{value must be one byte}}
  %z = cgraph.memset_node deps() {offset = 0 : i64, bytes = 16 : i64, value = 256 : i64}
}

// -----

cgraph.graph @bad_kind {
  // expected-error@+1 {{kind must be "if" or "while", got "switch"}}
  %c = cgraph.conditional_node "switch" handle 0 deps() {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
}

// -----

cgraph.graph @while_with_else {
  // expected-error@+1 {{a while node has no else body}}
  %c = cgraph.conditional_node "while" handle 0 deps() {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  } else {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
}
