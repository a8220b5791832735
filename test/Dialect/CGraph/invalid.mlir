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
  // expected-error@+2 {{expected ::cgc::cgraph::ConditionKind to be one of: if, while}}
  // expected-error@+1 {{failed to parse CGraph_ConditionKindAttr parameter 'value'}}
  %c = cgraph.conditional_node switch handle 0 deps() {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
}

// -----

cgraph.graph @while_with_else {
  // expected-error@+1 {{a while node has no else body}}
  %c = cgraph.conditional_node while handle 0 deps() {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  } else {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
}

// -----

func.func private @main()
// expected-error@+1 {{'cgraph.schedule' op names @missing, which is not a function of the module}}
cgraph.schedule @missing {
}

// -----

func.func private @main()
cgraph.schedule @main {
  // expected-error@+1 {{'cgraph.replay' op names @island7, which is not a cgraph.graph of the module}}
  cgraph.replay @island7
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{'cgraph.launch' op names @relu, which is not a cgraph.kernel of the module}}
    cgraph.launch @relu "relu" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 0, 256>}
  }
}

// -----

cgraph.kernel @relu {source = ""}
func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{block has more than 1024 threads}}
    cgraph.launch @relu "relu" {grid = array<i64: 1, 1, 1>, block = array<i64: 2048, 1, 1>, args = array<i64: 0, 256>}
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  // expected-error@+1 {{'cgraph.host_copy' op expects parent op to be one of 'cgraph.eager, cgraph.host_if, cgraph.host_loop'}}
  cgraph.host_copy "If" {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{copies a buffer onto itself}}
    cgraph.host_copy "If" {dst = 256 : i64, src = 256 : i64, bytes = 256 : i64}
  }
}

// -----

cgraph.kernel @tanh {source = ""}
func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    cgraph.host_loop "Loop" {max_trips = 0 : i64, condition = 8 : i64, iteration = 16 : i64, condition_arg = 24 : i64, condition_out = 32 : i64} init {
      // expected-error@+1 {{is not a copy; a loop's init and exit only move values into place}}
      cgraph.launch @tanh "tanh" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 512, 768>}
    } body {
    } exit {
    }
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{has no host type for elements of 'f16'}}
    cgraph.host_nonzero "NonZero" {element_type = f16, shape = array<i64: 8>, input = 0 : i64, output = 256 : i64, shape_outputs = array<i64: 0>}
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{axis 3 is not a dim of the 3-d result}}
    cgraph.host_compress "Compress" {input = 0 : i64, condition = 96 : i64, output = 128 : i64, input_bytes = 96 : i64, conditions = 3 : i64, outer = 2 : i64, count = 3 : i64, inner = 4 : i64, element_bytes = 4 : i64, result_shape = array<i64: 2, 3, 4>, axis = 3 : i64, shape_outputs = array<i64: 0>}
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{needs the offsets of its four results (-1 for unused ones)}}
    cgraph.host_unique "Unique" {element_type = i32, input = 0 : i64, outer = 1 : i64, count = 6 : i64, inner = 1 : i64, sorted = false, results = array<i64: 32, 64>, result_shape = array<i64: 6>, axis = 0 : i64, shape_outputs = array<i64: 1>, count_outputs = array<i64>}
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{has no host type for boxes of 'f16'}}
    cgraph.host_non_max_suppression "NMS" {element_type = f16, boxes = 0 : i64, scores = 256 : i64, max_output = 512 : i64, iou_threshold = 768 : i64, score_threshold = 1024 : i64, output = 1280 : i64, batches = 1 : i64, classes = 1 : i64, count = 6 : i64, center_point_box = false, score_threshold_given = true, shape_outputs = array<i64: 0>}
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{needs non-negative extents}}
    cgraph.host_non_max_suppression "NMS" {element_type = f32, boxes = 0 : i64, scores = 256 : i64, max_output = 512 : i64, iou_threshold = 768 : i64, score_threshold = 1024 : i64, output = 1280 : i64, batches = -1 : i64, classes = 1 : i64, count = 6 : i64, center_point_box = false, score_threshold_given = true, shape_outputs = array<i64: 0>}
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{needs a static input shape}}
    cgraph.host_reshape "Reshape" {shape = 64 : i64, input_shape = array<i64: 2, -1>, rank = 2 : i64, allowzero = false, shape_outputs = array<i64: 0>}
  }
}

// -----

func.func private @main()
cgraph.schedule @main {
  // expected-error@+1 {{'cgraph.memset_node' op is not a step; a schedule holds graph replays and eager steps}}
  cgraph.memset_node deps() {offset = 0 : i64, bytes = 16 : i64, value = 0 : i64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{'cgraph.kernel_node' op names @gone, which is not a cgraph.kernel of the module}}
  %k = cgraph.kernel_node @gone deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs non-negative offsets and a positive size}}
  %c = cgraph.memcpy_node deps() {dst = -256 : i64, src = 0 : i64, bytes = 64 : i64}
}

// -----

func.func private @main()
cgraph.schedule @main {
  cgraph.eager "eager0" {
    // expected-error@+1 {{arena offsets must be non-negative}}
    cgraph.host_if "If" condition -1 {
    } else {
    }
  }
}

// -----

cgraph.kernel @k {source = ""}
cgraph.graph @g {
  %a = cgraph.kernel_node @k deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>}
  // expected-error@+1 {{programmatic needs one flag per dependency}}
  %b = cgraph.kernel_node @k deps(%a) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, programmatic = array<i1: true, true>}
}

// -----

cgraph.kernel @k {source = ""}
cgraph.graph @g {
  %a = cgraph.kernel_node @k deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>}
  // expected-error@+1 {{programmatic must mark an edge (omit it otherwise)}}
  %b = cgraph.kernel_node @k deps(%a) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, programmatic = array<i1: false>}
}

// -----

// Only a kernel -> kernel edge can be programmatic.
cgraph.kernel @k {source = ""}
cgraph.graph @g {
  %z = cgraph.memset_node deps() {offset = 0 : i64, bytes = 16 : i64, value = 0 : i64}
  // expected-error@+1 {{only an edge from a kernel node may be programmatic}}
  %b = cgraph.kernel_node @k deps(%z) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, programmatic = array<i1: true>}
}

// -----

// A condition kernel takes its handle by value and does not wait.
cgraph.kernel @k {source = ""}
cgraph.graph @g {
  %a = cgraph.kernel_node @k deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>}
  // expected-error@+1 {{a condition kernel has no programmatic edges}}
  %s = cgraph.kernel_node @k deps(%a) {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 0>, condition_handle = 0 : i64, programmatic = array<i1: true>}
  %c = cgraph.conditional_node if handle 0 deps(%s) {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
}

// -----

cgraph.kernel @k {source = ""}
cgraph.graph @g {
  %s = cgraph.kernel_node @k deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 0>, condition_handle = 0 : i64}
  %c = cgraph.conditional_node if handle 0 deps(%s) {
    %a = cgraph.kernel_node @k deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>}
    // expected-error@+1 {{a conditional body has no programmatic edges}}
    %b = cgraph.kernel_node @k deps(%a) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, programmatic = array<i1: true>}
  }
}

// -----

// The runtime cannot rebind a graph with conditional nodes to the caller's
// buffers.
cgraph.kernel @k {source = ""}
cgraph.graph @g {
  %s = cgraph.kernel_node @k deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 0>, condition_handle = 0 : i64}
  %c = cgraph.conditional_node if handle 0 deps(%s) {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
}
func.func private @main()
// expected-error@+1 {{'cgraph.schedule' op replays @g, which has conditional nodes: needs copy_io}}
cgraph.schedule @main {
  cgraph.replay @g
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs M, N, K and batch of at least 1}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 0 : i64, batch = 1 : i64, trans_a = false, trans_b = false, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f32, b_type = f32, d_type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs non-negative arena offsets}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 1 : i64, trans_a = false, trans_b = false, a = -8 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = -8 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f32, b_type = f32, d_type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{takes f32, f16 or bf16 operands, not 'i8', 'i8' -> 'i32'}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 1 : i64, trans_a = false, trans_b = false, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = i8, b_type = i8, d_type = i32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs A and B of one type}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 1 : i64, trans_a = false, trans_b = false, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f16, b_type = f32, d_type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{operand must be tf32, f16 or bf16, not 'f64'}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 1 : i64, trans_a = false, trans_b = false, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f32, b_type = f32, d_type = f32, operand = f64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{cannot round 'f16' operands to 'bf16'}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 1 : i64, trans_a = false, trans_b = false, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f16, b_type = f16, d_type = f16, operand = bf16}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{multiplies 'bf16' operands on tensor cores: operand must say so}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 1 : i64, trans_a = false, trans_b = false, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = bf16, b_type = bf16, d_type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{writes every batch index into one D matrix}}
  %m = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 2 : i64, trans_a = false, trans_b = false, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f32, b_type = f32, d_type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs positive 4-d input, filter and output shapes}}
  %c = cgraph.cudnn_conv_node deps() {label = "c", input = array<i64: 1, 6, 8>, filter = array<i64: 8, 3, 3, 3>, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64, x = 0 : i64, w = 4000 : i64, y = 8000 : i64, type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs two pads (non-negative), strides and dilations (positive)}}
  %c = cgraph.cudnn_conv_node deps() {label = "c", input = array<i64: 1, 6, 8, 8>, filter = array<i64: 8, 3, 3, 3>, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 0, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64, x = 0 : i64, w = 4000 : i64, y = 8000 : i64, type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{has shapes that do not agree: input 1, 6, 8, 8, filter 8, 3, 3, 3, output 1, 8, 4, 4, groups 3}}
  %c = cgraph.cudnn_conv_node deps() {label = "c", input = array<i64: 1, 6, 8, 8>, filter = array<i64: 8, 3, 3, 3>, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 3 : i64, x = 0 : i64, w = 4000 : i64, y = 8000 : i64, type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{output dim 2 is 5, the convolution gives 4}}
  %c = cgraph.cudnn_conv_node deps() {label = "c", input = array<i64: 1, 6, 8, 8>, filter = array<i64: 8, 3, 3, 3>, output = array<i64: 1, 8, 5, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64, x = 0 : i64, w = 4000 : i64, y = 8000 : i64, type = f32}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{takes f32, f16 or bf16 tensors, not 'i8'}}
  %c = cgraph.cudnn_conv_node deps() {label = "c", input = array<i64: 1, 6, 8, 8>, filter = array<i64: 8, 3, 3, 3>, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64, x = 0 : i64, w = 4000 : i64, y = 8000 : i64, type = i8}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{operand must be tf32, f16 or bf16, not 'f64'}}
  %c = cgraph.cudnn_conv_node deps() {label = "c", input = array<i64: 1, 6, 8, 8>, filter = array<i64: 8, 3, 3, 3>, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64, x = 0 : i64, w = 4000 : i64, y = 8000 : i64, type = f32, operand = f64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs a count of at least 1}}
  %a = cgraph.nccl_all_reduce_node deps() {label = "ar", send = 0 : i64, recv = 0 : i64, count = 0 : i64, type = f32, ranks = 2 : i64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{sums f32, f16, bf16 or f64, not 'i32'}}
  %a = cgraph.nccl_all_reduce_node deps() {label = "ar", send = 0 : i64, recv = 0 : i64, count = 4 : i64, type = i32, ranks = 2 : i64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{reads and writes overlapping bytes that are not the same buffer}}
  %a = cgraph.nccl_all_reduce_node deps() {label = "ar", send = 0 : i64, recv = 8 : i64, count = 4 : i64, type = f32, ranks = 2 : i64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{needs non-negative arena offsets}}
  %a = cgraph.nccl_all_reduce_node deps() {label = "ar", send = -4 : i64, recv = 0 : i64, count = 4 : i64, type = f32, ranks = 2 : i64}
}

// -----

// The last rank's part (bytes 16-31 of recv) would overlap send.
cgraph.graph @g {
  // expected-error@+1 {{'cgraph.nccl_all_gather_node' op reads and writes overlapping bytes}}
  %a = cgraph.nccl_all_gather_node deps() {label = "ag", send = 16 : i64, recv = 0 : i64, count = 4 : i64, type = f32, ranks = 2 : i64}
}

// -----

cgraph.graph @g {
  // expected-error@+1 {{gathers f32, f16, bf16 or f64, not 'i8'}}
  %a = cgraph.nccl_all_gather_node deps() {label = "ag", send = 0 : i64, recv = 64 : i64, count = 4 : i64, type = i8, ranks = 2 : i64}
}
