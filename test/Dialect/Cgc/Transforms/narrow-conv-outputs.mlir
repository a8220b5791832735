// RUN: cgc-opt %s -split-input-file --cgc-narrow-conv-outputs=cudnn=always | FileCheck %s
// Under auto these small convolutions are cuDNN's only with 64 channels
// each way: nothing is split before @after_depthwise (the last case);
// under never nothing at all.
// RUN: cgc-opt %s -split-input-file --cgc-narrow-conv-outputs | FileCheck %s --check-prefix=AUTO
// RUN: cgc-opt %s -split-input-file --cgc-narrow-conv-outputs=cudnn=never | FileCheck %s --check-prefix=NEVER
// Then --cgc-narrow-storage stores the split convolution's input and
// filter in bf16: the f32 convolution before it writes a bf16 copy in its
// in-place epilogue, and the cuDNN node reads and writes bf16 only.
// RUN: cgc-opt %s -split-input-file --cgc-narrow-conv-outputs=cudnn=always "--cgc-narrow-storage=cudnn=always" | FileCheck %s --check-prefix=STORED
// RUN: cgc-opt %s -split-input-file --cgc-narrow-conv-outputs=cudnn=always "--cgc-narrow-storage=cudnn=always" --cgc-plan-buffers "--cgc-select-kernel-config=cudnn=always" --cgc-lower-to-cgraph | FileCheck %s --check-prefix=NODES
// With fp16=false (cgc's --narrow-storage=auto) the f16 group of @last
// stays whole and the bf16 ones are split as before.
// RUN: cgc-opt %s -split-input-file "--cgc-narrow-conv-outputs=cudnn=always fp16=false" | FileCheck %s --check-prefix=BF16
// RUN: not cgc-opt %s -split-input-file --cgc-narrow-conv-outputs=cudnn=sometimes 2>&1 | FileCheck %s --check-prefix=BAD
// AUTO-NOT: _epilogue
// AUTO-NOT: bf16>
// AUTO-LABEL: func @after_depthwise
// NEVER-NOT: _epilogue
// NEVER-NOT: bf16>
// BAD: error: --cgc-narrow-conv-outputs: cudnn 'sometimes' is none of auto, always, never

// Two bf16 convolutions, the second reading the first's ReLU. The first
// reads a model input, which cannot be stored narrow: it stays an f32
// cuDNN call. The second is split: the convolution without its bias,
// rounded to bf16, then an elementwise group adding the bias (reshaped to
// [K, 1, 1] for channels first), the residual and the ReLU in f32.
// CHECK-LABEL: func @chain
// CHECK: %[[B:.+]] = cgc.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[BC:.+]] = cgc.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK: %[[F:.+]] = cgc.kernel "first" conv -> tensor<1x2x4x4xf32> attributes {precision = bf16}
// CHECK-NEXT: cgc.conv %arg0, %{{.+}}, %[[B]]
// CHECK: %[[S:.+]] = cgc.kernel "second" conv -> tensor<1x2x4x4xbf16> attributes {precision = bf16} {
// CHECK-NEXT: %[[C:.+]] = cgc.conv %[[F]], %{{[^,]+}} {{{.*}}} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT: %[[R:.+]] = cgc.cast %[[C]] : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xbf16>
// CHECK-NEXT: cgc.yield %[[R]]
// CHECK: %[[E:.+]] = cgc.kernel "second_epilogue" elementwise -> tensor<1x2x4x4xf32> {
// CHECK-NEXT: %[[W:.+]] = cgc.cast %[[S]] : tensor<1x2x4x4xbf16> -> tensor<1x2x4x4xf32>
// CHECK-NEXT: %[[A:.+]] = cgc.add %[[W]], %[[BC]] : tensor<1x2x4x4xf32>, tensor<2x1x1xf32>
// CHECK-NEXT: %[[D:.+]] = cgc.add %[[A]], %[[F]]
// CHECK-NEXT: %[[Z:.+]] = cgc.relu %[[D]]
// CHECK-NEXT: cgc.yield %[[Z]]
// CHECK: cgc.yield %[[E]]
// STORED-LABEL: func @chain
// STORED: %[[K:.+]] = cgc.constant dense<1.000000e+00> : tensor<2x2x1x1xbf16>
// STORED: %[[F:.+]]:2 = cgc.kernel "first" conv -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xbf16>
// STORED: %[[S:.+]] = cgc.kernel "second" conv -> tensor<1x2x4x4xbf16>
// STORED-DAG: %[[X:.+]] = cgc.cast %[[F]]#1 : tensor<1x2x4x4xbf16> -> tensor<1x2x4x4xf32>
// STORED-DAG: %[[Y:.+]] = cgc.cast %[[K]] : tensor<2x2x1x1xbf16> -> tensor<2x2x1x1xf32>
// STORED: cgc.conv %[[X]], %[[Y]]
// STORED: cgc.kernel "second_epilogue" elementwise
// STORED: cgc.add %{{.+}}, %[[F]]#0
// NODES-LABEL: func @chain
// NODES: cgraph.cudnn_conv_node {{.*}}label = "first"{{.*}}type = f32
// NODES: cgraph.cudnn_conv_node {{.*}}label = "second"{{.*}}type = bf16
// NODES-NOT: cgraph.cudnn_conv_node
func.func @chain(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %k = cgc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = cgc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = cgc.island "island0" -> tensor<1x2x4x4xf32> {
    %f = cgc.kernel "first" conv -> tensor<1x2x4x4xf32> attributes {precision = bf16} {
      %0 = cgc.conv %x, %k, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
      %1 = cgc.relu %0 : tensor<1x2x4x4xf32>
      cgc.yield %1 : tensor<1x2x4x4xf32>
    }
    %s = cgc.kernel "second" conv -> tensor<1x2x4x4xf32> attributes {precision = bf16} {
      %0 = cgc.conv %f, %k, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
      %1 = cgc.add %0, %f : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      %2 = cgc.relu %1 : tensor<1x2x4x4xf32>
      cgc.yield %2 : tensor<1x2x4x4xf32>
    }
    cgc.yield %s : tensor<1x2x4x4xf32>
  }
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Channels last: the bias broadcasts along the last dim as it is. An f16
// convolution without bias reading a weight-free elementwise group's
// output: split, its epilogue only the widening.
// CHECK-LABEL: func @last
// NODES-LABEL: func @last
// NODES: cgraph.cudnn_conv_node {{.*}}label = "cv"{{.*}}type = f16
// CHECK: cgc.kernel "cv" conv -> tensor<1x4x4x2xf16>
// BF16-LABEL: func @last
// BF16-NOT: _epilogue
// BF16: cgc.kernel "cv" conv -> tensor<1x4x4x2xf32> attributes {precision = f16}
// BF16-NOT: _epilogue
// BF16-LABEL: func @splat_bias
// BF16: cgc.kernel "cv_epilogue" elementwise
// CHECK: cgc.kernel "cv_epilogue" elementwise -> tensor<1x4x4x2xf32> {
// CHECK-NEXT: %[[W:.+]] = cgc.cast %{{.+}} : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK-NEXT: cgc.yield %[[W]]
func.func @last(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = cgc.constant dense<1.0> : tensor<2x1x1x2xf32>
  %r = cgc.island "island0" -> tensor<1x4x4x2xf32> {
    %e = cgc.kernel "relu" elementwise -> tensor<1x4x4x2xf32> {
      %0 = cgc.relu %x : tensor<1x4x4x2xf32>
      cgc.yield %0 : tensor<1x4x4x2xf32>
    }
    %c = cgc.kernel "cv" conv -> tensor<1x4x4x2xf32> attributes {precision = f16} {
      %0 = cgc.conv %e, %k {channels_last, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
      cgc.yield %0 : tensor<1x4x4x2xf32>
    }
    cgc.yield %c : tensor<1x4x4x2xf32>
  }
  return %r : tensor<1x4x4x2xf32>
}

// -----

// A splat bias (a zero-initialized one) keeps its form, reshaped.
// CHECK-LABEL: func @splat_bias
// CHECK: %[[BC:.+]] = cgc.constant dense<5.000000e-01> : tensor<2x1x1xf32>
// CHECK: cgc.kernel "cv_epilogue" elementwise
// CHECK: cgc.add %{{.+}}, %[[BC]] : tensor<1x2x4x4xf32>, tensor<2x1x1xf32>
func.func @splat_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %k = cgc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = cgc.constant dense<0.5> : tensor<2xf32>
  %r = cgc.island "island0" -> tensor<1x2x4x4xf32> {
    %e = cgc.kernel "relu" elementwise -> tensor<1x2x4x4xf32> {
      %0 = cgc.relu %x : tensor<1x2x4x4xf32>
      cgc.yield %0 : tensor<1x2x4x4xf32>
    }
    %c = cgc.kernel "cv" conv -> tensor<1x2x4x4xf32> attributes {precision = bf16} {
      %0 = cgc.conv %e, %k, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
      cgc.yield %0 : tensor<1x2x4x4xf32>
    }
    cgc.yield %c : tensor<1x2x4x4xf32>
  }
  return %r : tensor<1x2x4x4xf32>
}

// -----

// A convolution after a max pool: the pool's kernel can write a 16-bit copy
// (its template stores through the group's writer), so the convolution is
// split, and the pool then writes only bf16 (nothing else reads it).
// CHECK-LABEL: func @after_pool
// CHECK: cgc.kernel "cv" conv -> tensor<1x2x2x2xbf16>
// CHECK: cgc.kernel "cv_epilogue" elementwise
// STORED-LABEL: func @after_pool
// STORED: %[[P:.+]] = cgc.kernel "pool" single -> tensor<1x2x2x2xbf16> {
// STORED-NEXT: %[[M:.+]] = cgc.max_pool
// STORED-NEXT: %[[C:.+]] = cgc.cast %[[M]] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xbf16>
// STORED-NEXT: cgc.yield %[[C]]
// STORED: cgc.cast %[[P]] : tensor<1x2x2x2xbf16> -> tensor<1x2x2x2xf32>
// NODES-LABEL: func @after_pool
// NODES: cgraph.kernel_node @max_pool
// NODES: cgraph.cudnn_conv_node {{.*}}label = "cv"{{.*}}type = bf16
func.func @after_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %k = cgc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %r = cgc.island "island0" -> tensor<1x2x2x2xf32> {
    %p = cgc.kernel "pool" single -> tensor<1x2x2x2xf32> {
      %0 = cgc.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32>
      cgc.yield %0 : tensor<1x2x2x2xf32>
    }
    %c = cgc.kernel "cv" conv -> tensor<1x2x2x2xf32> attributes {precision = bf16} {
      %0 = cgc.conv %p, %k {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
      cgc.yield %0 : tensor<1x2x2x2xf32>
    }
    cgc.yield %c : tensor<1x2x2x2xf32>
  }
  return %r : tensor<1x2x2x2xf32>
}

// -----

// Left alone: a tf32 convolution (tf32 is no storage type), a bf16 one
// whose filter is a model input (not a constant to store in bf16), and a
// bf16 one with asymmetric pads (cuDNN does not take it).
// CHECK-LABEL: func @left_alone
// CHECK-NOT: _epilogue
// CHECK-NOT: bf16>
// CHECK: return
func.func @left_alone(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>)
    -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5x5xf32>) {
  %k = cgc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %r:3 = cgc.island "island0" -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5x5xf32> {
    %e = cgc.kernel "relu" elementwise -> tensor<1x2x4x4xf32> {
      %0 = cgc.relu %x : tensor<1x2x4x4xf32>
      cgc.yield %0 : tensor<1x2x4x4xf32>
    }
    %t = cgc.kernel "tf32" conv -> tensor<1x2x4x4xf32> attributes {precision = tf32} {
      %0 = cgc.conv %e, %k {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
      cgc.yield %0 : tensor<1x2x4x4xf32>
    }
    %i = cgc.kernel "input_filter" conv -> tensor<1x2x4x4xf32> attributes {precision = bf16} {
      %0 = cgc.conv %e, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
      cgc.yield %0 : tensor<1x2x4x4xf32>
    }
    %a = cgc.kernel "asymmetric" conv -> tensor<1x2x5x5xf32> attributes {precision = bf16} {
      %0 = cgc.conv %e, %k {pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x5x5xf32>
      cgc.yield %0 : tensor<1x2x5x5xf32>
    }
    cgc.yield %t, %i, %a : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5x5xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5x5xf32>
}

// -----

// A generated convolution's template writes the 16-bit copy too: under
// cudnn=auto the depthwise group (cuDNN's auto rule takes no grouped
// convolution) feeds a 64-channel 1x1 projection cuDNN takes, as in
// MobileNetV2; the projection is split, and --cgc-narrow-storage has the
// depthwise group write a bf16 copy, and only that (no cuDNN call writes
// its f32 result in place, and nothing else reads it).
// RUN: cgc-opt %s -split-input-file --cgc-narrow-conv-outputs --cgc-narrow-storage | FileCheck %s --check-prefix=DEPTHWISE
// DEPTHWISE-LABEL: func @after_depthwise
// DEPTHWISE: %[[D:.+]] = cgc.kernel "dw" conv -> tensor<1x64x64x64xbf16>
// DEPTHWISE: cgc.kernel "proj" conv -> tensor<1x64x64x64xbf16>
// DEPTHWISE: cgc.cast %[[D]] : tensor<1x64x64x64xbf16> -> tensor<1x64x64x64xf32>
// DEPTHWISE: cgc.kernel "proj_epilogue" elementwise
func.func @after_depthwise(%x: tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32> {
  %kd = cgc.constant dense<0.5> : tensor<64x1x3x3xf32>
  %kp = cgc.constant dense<0.25> : tensor<64x64x1x1xf32>
  %r = cgc.island "island0" -> tensor<1x64x64x64xf32> {
    %d = cgc.kernel "dw" conv -> tensor<1x64x64x64xf32> {
      %0 = cgc.conv %x, %kd {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 64 : i64} : (tensor<1x64x64x64xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x64x64xf32>
      %1 = cgc.relu %0 : tensor<1x64x64x64xf32>
      cgc.yield %1 : tensor<1x64x64x64xf32>
    }
    %p = cgc.kernel "proj" conv -> tensor<1x64x64x64xf32> attributes {precision = bf16} {
      %0 = cgc.conv %d, %kp {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x64x64x64xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x64x64xf32>
      cgc.yield %0 : tensor<1x64x64x64xf32>
    }
    cgc.yield %p : tensor<1x64x64x64xf32>
  }
  return %r : tensor<1x64x64x64xf32>
}
