// RUN: cgc-opt %s | cgc-opt | FileCheck %s

cgraph.kernel @gemm_bias {source = ""}
cgraph.kernel @set_if {source = ""}
cgraph.kernel @step {source = ""}
cgraph.kernel @relu {source = ""}

// CHECK-LABEL: cgraph.graph @island0
cgraph.graph @island0 {
  // CHECK: %[[Z:.+]] = cgraph.memset_node deps() {bytes = 2048 : i64, offset = 0 : i64, value = 0 : i64}
  %z = cgraph.memset_node deps() {offset = 0 : i64, bytes = 2048 : i64, value = 0 : i64}
  // CHECK: %[[K:.+]] = cgraph.kernel_node @gemm_bias deps(%[[Z]])
  %k = cgraph.kernel_node @gemm_bias deps(%z) {grid = array<i64: 4, 1, 1>, block = array<i64: 256, 1, 1>, args = array<i64: 4096, 0>}
  // CHECK: cgraph.memcpy_node deps(%[[K]])
  %c = cgraph.memcpy_node deps(%k) {dst = 8192 : i64, src = 0 : i64, bytes = 2048 : i64}
  // CHECK: cgraph.kernel_node @relu deps(%[[K]], %[[Z]]) {{.*}}programmatic = array<i1: true, false>
  %r = cgraph.kernel_node @relu deps(%k, %z) {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 8192, 4096>, programmatic = array<i1: true, false>}
}

// A cuBLASLt product: bias and C optional, operand only when it rounds.
// CHECK-LABEL: cgraph.graph @library
// CHECK: %[[L:.+]] = cgraph.cublaslt_matmul_node deps() {a = 0 : i64, {{.*}}bias = 8192 : i64, {{.*}}operand = bf16
// CHECK: cgraph.cublaslt_matmul_node deps(%[[L]]) {{{.*}}c = 4096 : i64
// CHECK-NOT: operand
cgraph.graph @library {
  %l = cgraph.cublaslt_matmul_node deps() {label = "mm", m = 32 : i64, n = 16 : i64, k = 8 : i64, batch = 1 : i64, trans_a = false, trans_b = true, a = 0 : i64, b = 1024 : i64, d = 2048 : i64, bias = 8192 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, alpha = 1.0 : f32, beta = 0.0 : f32, a_type = f32, b_type = f32, d_type = f32, operand = bf16}
  %m = cgraph.cublaslt_matmul_node deps(%l) {label = "mm2", m = 32 : i64, n = 16 : i64, k = 16 : i64, batch = 2 : i64, trans_a = false, trans_b = false, a = 2048 : i64, b = 1024 : i64, c = 4096 : i64, d = 6144 : i64, stride_a = 512 : i64, stride_b = 0 : i64, stride_d = 512 : i64, alpha = 0.5 : f32, beta = 1.0 : f32, a_type = f32, b_type = f32, d_type = f32}
}

// A cuDNN convolution: bias optional, operand only for tensor cores.
// CHECK-LABEL: cgraph.graph @convolution
// CHECK: cgraph.cudnn_conv_node deps() {bias = 9000 : i64, dilations = array<i64: 1, 1>, filter = array<i64: 8, 3, 3, 3>, groups = 2 : i64, input = array<i64: 1, 6, 8, 8>, label = "conv", operand = tf32, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, type = f32, w = 4000 : i64, x = 0 : i64, y = 8000 : i64}
cgraph.graph @convolution {
  %c = cgraph.cudnn_conv_node deps() {label = "conv", input = array<i64: 1, 6, 8, 8>, filter = array<i64: 8, 3, 3, 3>, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64, x = 0 : i64, w = 4000 : i64, y = 8000 : i64, bias = 9000 : i64, type = f32, operand = tf32}
}

// An NCCL all-reduce, in place or into another buffer.
// CHECK-LABEL: cgraph.graph @all_reduce
// CHECK: cgraph.nccl_all_reduce_node deps() {count = 1024 : i64, label = "ar", ranks = 2 : i64, recv = 4096 : i64, send = 4096 : i64, type = f32}
// CHECK: cgraph.nccl_all_reduce_node deps(%{{.*}}) {count = 1024 : i64, label = "ar2", ranks = 4 : i64, recv = 8192 : i64, send = 4096 : i64, type = bf16}
cgraph.graph @all_reduce {
  %a = cgraph.nccl_all_reduce_node deps() {label = "ar", send = 4096 : i64, recv = 4096 : i64, count = 1024 : i64, type = f32, ranks = 2 : i64}
  %b = cgraph.nccl_all_reduce_node deps(%a) {label = "ar2", send = 4096 : i64, recv = 8192 : i64, count = 1024 : i64, type = bf16, ranks = 4 : i64}
}

// An NCCL all-gather: 2 ranks x 1024 elements at recv.
// CHECK-LABEL: cgraph.graph @all_gather
// CHECK: cgraph.nccl_all_gather_node deps() {count = 1024 : i64, label = "ag", ranks = 2 : i64, recv = 4096 : i64, send = 0 : i64, type = f32}
cgraph.graph @all_gather {
  %a = cgraph.nccl_all_gather_node deps() {label = "ag", send = 0 : i64, recv = 4096 : i64, count = 1024 : i64, type = f32, ranks = 2 : i64}
}

// CHECK-LABEL: cgraph.graph @conditionals
// CHECK: cgraph.kernel_node @set_if deps() {{.*}}condition_handle = 0 : i64
// CHECK: cgraph.conditional_node if handle 0 deps(%{{.*}}) {
// CHECK: } else {
// CHECK: cgraph.conditional_node while handle 1 deps(%{{.*}}) {
cgraph.graph @conditionals {
  %s = cgraph.kernel_node @set_if deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 0>, condition_handle = 0 : i64}
  %c = cgraph.conditional_node if handle 0 deps(%s) {
    %k = cgraph.kernel_node @relu deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 256, 512>}
  } else {
    %m = cgraph.memcpy_node deps() {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
  }
  %w = cgraph.conditional_node while handle 1 deps(%c) {
    %k = cgraph.kernel_node @step deps() {grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>, args = array<i64: 768>, condition_handle = 1 : i64}
  }
}

// The host program: one schedule per graph set, its steps in order.
// CHECK-LABEL: cgraph.schedule @main {
// CHECK: cgraph.replay @island0
// CHECK-NEXT: cgraph.eager "eager0" {
// CHECK-NEXT: cgraph.launch @relu "relu_1" {args = array<i64: 0, 256>, block = array<i64: 64, 1, 1>, grid = array<i64: 1, 1, 1>}
// CHECK-NEXT: cgraph.host_if "If -> b" condition 0 {
// CHECK-NEXT: cgraph.launch @relu
// CHECK-NEXT: cgraph.host_copy "If -> b" {bytes = 256 : i64, dst = 512 : i64, src = 256 : i64}
// CHECK-NEXT: } else {
// CHECK: cgraph.host_loop "Loop -> y" {condition = 8 : i64, condition_arg = 24 : i64, condition_out = 32 : i64, iteration = 16 : i64, max_trips = 0 : i64} init {
// CHECK-NEXT: cgraph.host_copy
// CHECK-NEXT: } body {
// CHECK-NEXT: cgraph.launch @relu
// CHECK-NEXT: } exit {
// CHECK-NEXT: }
// CHECK-NEXT: cgraph.host_nonzero "NonZero -> nz" {element_type = f32, input = 0 : i64, output = 256 : i64, shape = array<i64: 8, 8>, shape_outputs = array<i64: 1>}
// CHECK-NEXT: cgraph.host_compress "Compress -> c"
// CHECK-NEXT: cgraph.host_unique "Unique -> u"
// CHECK-NEXT: cgraph.host_non_max_suppression "NonMaxSuppression -> s" {batches = 1 : i64, boxes = 0 : i64, center_point_box = false, classes = 2 : i64, count = 6 : i64, element_type = f32, iou_threshold = 768 : i64, max_output = 512 : i64, output = 1280 : i64, score_threshold = 1024 : i64, score_threshold_given = true, scores = 256 : i64, shape_outputs = array<i64: 0>}
// CHECK-NEXT: cgraph.host_reshape "Reshape -> r"
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT: cgraph.replay @island1
cgraph.graph @island1 {
}
func.func private @main()
cgraph.schedule @main {
  cgraph.replay @island0
  cgraph.eager "eager0" {
    cgraph.launch @relu "relu_1" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 0, 256>}
    cgraph.host_if "If -> b" condition 0 {
      cgraph.launch @relu "relu_2" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 64, 256>}
      cgraph.host_copy "If -> b" {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
    } else {
    }
    cgraph.host_loop "Loop -> y" {max_trips = 0 : i64, condition = 8 : i64, iteration = 16 : i64, condition_arg = 24 : i64, condition_out = 32 : i64} init {
      cgraph.host_copy "Loop -> y" {dst = 512 : i64, src = 256 : i64, bytes = 256 : i64}
    } body {
      cgraph.launch @relu "tanh" {grid = array<i64: 1, 1, 1>, block = array<i64: 64, 1, 1>, args = array<i64: 512, 768>}
    } exit {
    }
    cgraph.host_nonzero "NonZero -> nz" {element_type = f32, shape = array<i64: 8, 8>, input = 0 : i64, output = 256 : i64, shape_outputs = array<i64: 1>}
    cgraph.host_compress "Compress -> c" {input = 0 : i64, condition = 96 : i64, output = 128 : i64, input_bytes = 96 : i64, conditions = 3 : i64, outer = 2 : i64, count = 3 : i64, inner = 4 : i64, element_bytes = 4 : i64, result_shape = array<i64: 2, 3, 4>, axis = 1 : i64, shape_outputs = array<i64: 0>}
    cgraph.host_unique "Unique -> u" {element_type = i32, input = 0 : i64, outer = 1 : i64, count = 6 : i64, inner = 1 : i64, sorted = false, results = array<i64: 32, 64, -1, 128>, result_shape = array<i64: 6>, axis = 0 : i64, shape_outputs = array<i64: 1>, count_outputs = array<i64: 2, 4>}
    cgraph.host_non_max_suppression "NonMaxSuppression -> s" {element_type = f32, boxes = 0 : i64, scores = 256 : i64, max_output = 512 : i64, iou_threshold = 768 : i64, score_threshold = 1024 : i64, output = 1280 : i64, batches = 1 : i64, classes = 2 : i64, count = 6 : i64, center_point_box = false, score_threshold_given = true, shape_outputs = array<i64: 0>}
    cgraph.host_reshape "Reshape -> r" {shape = 64 : i64, input_shape = array<i64: 2, 3, 4>, rank = 2 : i64, allowzero = false, shape_outputs = array<i64: 5>}
  }
  cgraph.replay @island1
}

// A bucket's schedule carries the value of the bucketed dim.
// CHECK-LABEL: cgraph.schedule @main_N4 bucket 4 {
// CHECK: cgraph.replay @island1
func.func private @main_N4()

cgraph.schedule @main_N4 bucket 4 {
  cgraph.replay @island1
}

// A graph with conditional nodes copies its inputs and outputs.
// CHECK-LABEL: cgraph.schedule @branchy copy_io {
// CHECK: cgraph.replay @conditionals
func.func private @branchy()
cgraph.schedule @branchy copy_io {
  cgraph.replay @conditionals
}
