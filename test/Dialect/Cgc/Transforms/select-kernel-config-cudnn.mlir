// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cudnn=always 2>/dev/null | FileCheck %s --check-prefix=ALWAYS
// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cudnn=always 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config 2>/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cudnn=never 2>/dev/null | FileCheck %s --check-prefix=NEVER
// RUN: not cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cudnn=maybe 2>&1 | FileCheck %s --check-prefix=BAD

// Under auto, dense convolutions on tensor cores of 64 channels or more
// each way and from 2^23 multiply-adds go to cuDNN (a ResNet 3x3 here, 115
// M, in tf32); a small one, a depthwise one, one of few channels and f32
// ones on FMAs stay generated.
// ALWAYS-LABEL: func @convs
// ALWAYS: cgc.kernel "big" conv config <strategy = cudnn_conv, element = f32, accumulator = f32, operand = tf32>
// ALWAYS: cgc.kernel "small" conv config <strategy = cudnn_conv, element = f32, accumulator = f32>
// ALWAYS: cgc.kernel "depthwise" conv config <strategy = cudnn_conv, element = f32, accumulator = f32>
// AUTO-LABEL: func @convs
// AUTO: cgc.kernel "big" conv config <strategy = cudnn_conv, element = f32, accumulator = f32, operand = tf32>
// AUTO: cgc.kernel "small" conv config <strategy = conv_gemm
// AUTO: cgc.kernel "depthwise" conv config <strategy = depthwise
// NEVER-LABEL: func @convs
// NEVER-NOT: cudnn_conv
// BAD: error: cudnn must be auto, always or never, got 'maybe'
func.func @convs(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>,
                 %b: tensor<64xf32>, %s: tensor<1x4x8x8xf32>,
                 %sw: tensor<4x4x3x3xf32>, %dw: tensor<64x1x3x3xf32>)
    -> (tensor<1x64x56x56xf32>, tensor<1x4x8x8xf32>, tensor<1x64x56x56xf32>) {
  %r:3 = cgc.island "island0" -> tensor<1x64x56x56xf32>, tensor<1x4x8x8xf32>, tensor<1x64x56x56xf32> {
    %big = cgc.kernel "big" conv -> tensor<1x64x56x56xf32> attributes {precision = tf32} {
      %0 = cgc.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
      %1 = cgc.relu %0 : tensor<1x64x56x56xf32>
      cgc.yield %1 : tensor<1x64x56x56xf32>
    }
    %small = cgc.kernel "small" conv -> tensor<1x4x8x8xf32> {
      %0 = cgc.conv %s, %sw {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
      cgc.yield %0 : tensor<1x4x8x8xf32>
    }
    %dwc = cgc.kernel "depthwise" conv -> tensor<1x64x56x56xf32> {
      %0 = cgc.conv %x, %dw {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 64 : i64} : (tensor<1x64x56x56xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x56x56xf32>
      cgc.yield %0 : tensor<1x64x56x56xf32>
    }
    cgc.yield %big, %small, %dwc : tensor<1x64x56x56xf32>, tensor<1x4x8x8xf32>, tensor<1x64x56x56xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<1x64x56x56xf32>, tensor<1x4x8x8xf32>, tensor<1x64x56x56xf32>
}

// -----

// WARN: warning: --cudnn=always: 'asym' stays a generated kernel: its padding differs between the two sides of a dim
// WARN: warning: --cudnn=always: 'conv1d' stays a generated kernel: cuDNN nodes take 2-d convolutions only
func.func @not_taken(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x2x2xf32>,
                     %x1: tensor<1x4x16xf32>, %w1: tensor<4x4x3xf32>)
    -> (tensor<1x4x8x8xf32>, tensor<1x4x14xf32>) {
  %r:2 = cgc.island "island0" -> tensor<1x4x8x8xf32>, tensor<1x4x14xf32> {
    %a = cgc.kernel "asym" conv -> tensor<1x4x8x8xf32> {
      %0 = cgc.conv %x, %w {pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x8x8xf32>
      cgc.yield %0 : tensor<1x4x8x8xf32>
    }
    %c = cgc.kernel "conv1d" conv -> tensor<1x4x14xf32> {
      %0 = cgc.conv %x1, %w1 {pads = array<i64: 0, 0>, strides = array<i64: 1>, dilations = array<i64: 1>, group = 1 : i64} : (tensor<1x4x16xf32>, tensor<4x4x3xf32>) -> tensor<1x4x14xf32>
      cgc.yield %0 : tensor<1x4x14xf32>
    }
    cgc.yield %a, %c : tensor<1x4x8x8xf32>, tensor<1x4x14xf32>
  }
  return %r#0, %r#1 : tensor<1x4x8x8xf32>, tensor<1x4x14xf32>
}

// -----

// AUTO-LABEL: func @few_channels
// AUTO: cgc.kernel "narrow" conv config <strategy = conv_gemm
func.func @few_channels(%x: tensor<8x24x56x56xf32>, %w: tensor<144x24x1x1xf32>) -> tensor<8x144x56x56xf32> {
  %r = cgc.island "island0" -> tensor<8x144x56x56xf32> {
    %k = cgc.kernel "narrow" conv -> tensor<8x144x56x56xf32> attributes {precision = tf32} {
      %0 = cgc.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<8x24x56x56xf32>, tensor<144x24x1x1xf32>) -> tensor<8x144x56x56xf32>
      cgc.yield %0 : tensor<8x144x56x56xf32>
    }
    cgc.yield %k : tensor<8x144x56x56xf32>
  }
  return %r : tensor<8x144x56x56xf32>
}

// -----

// AUTO-LABEL: func @f32_fma
// AUTO: cgc.kernel "big_f32" conv config <strategy = conv_gemm
func.func @f32_fma(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %r = cgc.island "island0" -> tensor<1x64x56x56xf32> {
    %k = cgc.kernel "big_f32" conv -> tensor<1x64x56x56xf32> {
      %0 = cgc.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
      cgc.yield %0 : tensor<1x64x56x56xf32>
    }
    cgc.yield %k : tensor<1x64x56x56xf32>
  }
  return %r : tensor<1x64x56x56xf32>
}
