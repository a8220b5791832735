// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config --cgc-lower-to-cgraph 2>/dev/null | FileCheck %s

// A cublaslt_matmul group: the bias row and the residual join the call
// (bias, C with beta 1), the ReLU left over runs as an elementwise kernel
// that rewrites D in place. Reading a model input, the node makes the
// schedule copy the I/O through its slots (the runtime rebinds only kernel
// nodes to a caller's buffers).
// CHECK: cgraph.kernel @[[EPI:matmul_[0-9a-f]+]] {source = "{{.*}}const float v0 = (float)(out0[i]);
// CHECK-LABEL: cgraph.graph @island0
// CHECK: %[[L:.+]] = cgraph.cublaslt_matmul_node deps() {a = [[A:[0-9]+]] : i64, a_type = f32, alpha = 1.000000e+00 : f32, b = [[B:[0-9]+]] : i64, b_type = f32, batch = 1 : i64, beta = 1.000000e+00 : f32, bias = [[BIAS:[0-9]+]] : i64, c = [[C:[0-9]+]] : i64, d = [[D:[0-9]+]] : i64, d_type = f32, k = 32 : i64, label = "mm", m = 64 : i64, n = 16 : i64, operand = bf16, stride_a = 0 : i64, stride_b = 0 : i64, stride_d = 0 : i64, trans_a = false, trans_b = false}
// CHECK: cgraph.kernel_node @[[EPI]] deps(%[[L]]) {args = array<i64: [[D]]>
// CHECK: cgraph.schedule @bias_residual_relu copy_io
func.func @bias_residual_relu(%a: tensor<64x32xf32>, %w: tensor<32x16xf32>,
                              %bias: tensor<16xf32>, %res: tensor<64x16xf32>)
    -> tensor<64x16xf32> {
  %r = cgc.island "island0" -> tensor<64x16xf32> {
    %k = cgc.kernel "mm" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32, operand = bf16> -> tensor<64x16xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %a, %w : tensor<64x32xf32>, tensor<32x16xf32>
      %1 = cgc.add %0, %bias : tensor<64x16xf32>, tensor<16xf32>
      %2 = cgc.add %res, %1 : tensor<64x16xf32>, tensor<64x16xf32>
      %3 = cgc.relu %2 : tensor<64x16xf32>
      cgc.yield %3 : tensor<64x16xf32>
    }
    cgc.yield %k : tensor<64x16xf32>
  }
  return %r : tensor<64x16xf32>
}

// -----

// Library nodes share the model's cuBLASLt workspace: two independent
// products still run one after the other. A batched product with a shared
// weight is one matrix of batch x M rows; a batched one of two activations
// keeps its batch with strides. Nodes between kernels leave the I/O to
// zero-copy.
// CHECK-LABEL: cgraph.graph @island0
// CHECK: %[[E:.+]] = cgraph.kernel_node
// CHECK: %[[P:.+]] = cgraph.cublaslt_matmul_node deps(%[[E]]) {{{.*}}batch = 1 : i64{{.*}}k = 16 : i64, label = "p", m = 128 : i64, n = 8 : i64,
// CHECK: cgraph.cublaslt_matmul_node deps(%{{[0-9]+}}, %[[P]]) {{{.*}}batch = 4 : i64{{.*}}label = "q", m = 32 : i64, n = 32 : i64, stride_a = 512 : i64, stride_b = 512 : i64, stride_d = 1024 : i64, trans_a = false, trans_b = false}
// CHECK: cgraph.schedule @two_products {
func.func @two_products(%x: tensor<4x32x16xf32>, %y: tensor<4x16x32xf32>)
    -> (tensor<4x32x8xf32>, tensor<4x32x32xf32>) {
  %w = cgc.constant dense<0.5> : tensor<16x8xf32>
  %r:2 = cgc.island "island0" -> tensor<4x32x8xf32>, tensor<4x32x32xf32> {
    %e = cgc.kernel "e" elementwise -> tensor<4x32x16xf32> {
      %0 = cgc.exp %x : tensor<4x32x16xf32>
      cgc.yield %0 : tensor<4x32x16xf32>
    }
    %f = cgc.kernel "f" elementwise -> tensor<4x16x32xf32> {
      %0 = cgc.exp %y : tensor<4x16x32xf32>
      cgc.yield %0 : tensor<4x16x32xf32>
    }
    %p = cgc.kernel "p" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32> -> tensor<4x32x8xf32> {
      %0 = cgc.matmul %e, %w : tensor<4x32x16xf32>, tensor<16x8xf32>
      cgc.yield %0 : tensor<4x32x8xf32>
    }
    %q = cgc.kernel "q" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32> -> tensor<4x32x32xf32> {
      %0 = cgc.matmul %e, %f : tensor<4x32x16xf32>, tensor<4x16x32xf32>
      cgc.yield %0 : tensor<4x32x32xf32>
    }
    %o1 = cgc.kernel "o1" elementwise -> tensor<4x32x8xf32> {
      %0 = cgc.neg %p : tensor<4x32x8xf32>
      cgc.yield %0 : tensor<4x32x8xf32>
    }
    %o2 = cgc.kernel "o2" elementwise -> tensor<4x32x32xf32> {
      %0 = cgc.neg %q : tensor<4x32x32xf32>
      cgc.yield %0 : tensor<4x32x32xf32>
    }
    cgc.yield %o1, %o2 : tensor<4x32x8xf32>, tensor<4x32x32xf32>
  }
  return %r#0, %r#1 : tensor<4x32x8xf32>, tensor<4x32x32xf32>
}

// -----

// A cudnn_conv group: the convolution in the node, its bias and the ReLU
// in place after it (one kernel reading the bias, [8] over 1x8x4x4).
// CHECK: cgraph.kernel @[[CEPI:conv_[0-9a-f]+]] {source = "{{.*}}const float v0 = (float)((float)out0[i] + (float)in0[(i / 16ll) % 8ll]);
// CHECK-LABEL: cgraph.graph @island0
// CHECK: %[[E:.+]] = cgraph.kernel_node
// CHECK: %[[C:.+]] = cgraph.cudnn_conv_node deps(%[[E]]) {dilations = array<i64: 1, 1>, filter = array<i64: 8, 4, 3, 3>, groups = 1 : i64, input = array<i64: 1, 4, 8, 8>, label = "c", operand = tf32, output = array<i64: 1, 8, 4, 4>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, type = f32, w = [[W:[0-9]+]] : i64, x = [[X:[0-9]+]] : i64, y = [[Y:[0-9]+]] : i64}
// CHECK: cgraph.kernel_node @[[CEPI]] deps(%[[C]]) {args = array<i64: {{[0-9]+}}, [[Y]]>
func.func @conv_relu(%x: tensor<1x4x8x8xf32>) -> tensor<1x8x4x4xf32> {
  %w = cgc.constant dense<0.25> : tensor<8x4x3x3xf32>
  %b = cgc.constant dense<0.5> : tensor<8xf32>
  %r = cgc.island "island0" -> tensor<1x8x4x4xf32> {
    %e = cgc.kernel "e" elementwise -> tensor<1x4x8x8xf32> {
      %0 = cgc.exp %x : tensor<1x4x8x8xf32>
      cgc.yield %0 : tensor<1x4x8x8xf32>
    }
    %c = cgc.kernel "c" conv config <strategy = cudnn_conv, element = f32, accumulator = f32, operand = tf32> -> tensor<1x8x4x4xf32> attributes {precision = tf32} {
      %0 = cgc.conv %e, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
      %1 = cgc.relu %0 : tensor<1x8x4x4xf32>
      cgc.yield %1 : tensor<1x8x4x4xf32>
    }
    %o = cgc.kernel "o" elementwise -> tensor<1x8x4x4xf32> {
      %0 = cgc.neg %c : tensor<1x8x4x4xf32>
      cgc.yield %0 : tensor<1x8x4x4xf32>
    }
    cgc.yield %o : tensor<1x8x4x4xf32>
  }
  return %r : tensor<1x8x4x4xf32>
}
