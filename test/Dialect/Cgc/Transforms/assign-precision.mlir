// RUN: cgc-opt %s -split-input-file --cgc-assign-precision | FileCheck %s --check-prefix=FP32
// RUN: cgc-opt %s -split-input-file --cgc-assign-precision=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: cgc-opt %s -split-input-file --cgc-assign-precision=precision=tf32 | FileCheck %s --check-prefix=TF32
// RUN: cgc-opt %s -split-input-file "--cgc-assign-precision=precision=fp16 keep-fp32=conv,head" 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: cgc-opt %s -split-input-file "--cgc-assign-precision=precision=bf16 keep-fp32=Softmax" 2>&1 | FileCheck %s --check-prefix=UNUSED
// RUN: not cgc-opt %s -split-input-file --cgc-assign-precision=precision=int8 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: cgc-opt %s -split-input-file "--cgc-assign-precision=keep-fp32=conv" 2>&1 | FileCheck %s --check-prefix=NOEFFECT

// f32 products and convolutions take the requested precision; everything
// else (here a softmax group) keeps its types; fp32 stamps nothing.
// FP32-LABEL: func @policy
// FP32-NOT: precision
// BF16-LABEL: func @policy
// BF16: cgc.kernel "mm" matmul -> tensor<64x64xf32> attributes {precision = bf16
// BF16: cgc.kernel "cv" conv -> tensor<1x8x8x8xf32> attributes {precision = bf16
// BF16: cgc.kernel "head" matmul -> tensor<64x64xf32> attributes {precision = bf16
// BF16: cgc.kernel "sm" norm -> tensor<64x64xf32> {
// TF32-LABEL: func @policy
// TF32: cgc.kernel "mm" matmul {{.*}}precision = tf32
// KEEP-LABEL: func @policy
// KEEP: cgc.kernel "mm" matmul {{.*}}precision = f16
// KEEP: cgc.kernel "cv" conv -> tensor<1x8x8x8xf32> {
// KEEP: cgc.kernel "head" matmul -> tensor<64x64xf32> {
// KEEP-NOT: warning
// UNUSED: warning: keep-fp32 entry 'Softmax' names no matrix product or convolution
// BAD: error: precision 'int8' is none of fp32, tf32, fp16, bf16
// NOEFFECT: warning: keep-fp32 has no effect at precision fp32
// NOEFFECT-NOT: names no matrix product
func.func @policy(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>,
                  %x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>)
    -> (tensor<64x64xf32>, tensor<1x8x8x8xf32>, tensor<64x64xf32>) {
  %r:3 = cgc.island "island0" -> tensor<64x64xf32>, tensor<1x8x8x8xf32>, tensor<64x64xf32> {
    %m = cgc.kernel "mm" matmul -> tensor<64x64xf32> {
      %0 = cgc.matmul %a, %b : tensor<64x64xf32>, tensor<64x64xf32> loc("mm_node")
      cgc.yield %0 : tensor<64x64xf32>
    }
    %c = cgc.kernel "cv" conv -> tensor<1x8x8x8xf32> {
      %0 = cgc.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
      cgc.yield %0 : tensor<1x8x8x8xf32>
    }
    %h = cgc.kernel "head" matmul -> tensor<64x64xf32> {
      %0 = cgc.matmul %m, %b : tensor<64x64xf32>, tensor<64x64xf32> loc("head")
      cgc.yield %0 : tensor<64x64xf32>
    }
    %s = cgc.kernel "sm" norm -> tensor<64x64xf32> {
      %0 = cgc.softmax %h {axis = -1 : i64} : tensor<64x64xf32>
      cgc.yield %0 : tensor<64x64xf32>
    }
    cgc.yield %s, %c, %h : tensor<64x64xf32>, tensor<1x8x8x8xf32>, tensor<64x64xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<64x64xf32>, tensor<1x8x8x8xf32>, tensor<64x64xf32>
}

// -----

// A product whose inputs are already f16 or bf16 computes in that type
// whatever the option says; a mixed one keeps its types.
// FP32-LABEL: func @half_model
// FP32: cgc.kernel "h" matmul {{.*}}precision = f16
// FP32: cgc.kernel "bh" matmul {{.*}}precision = bf16
// FP32: cgc.kernel "mixed" matmul -> tensor<8x8xf32> {
// TF32-LABEL: func @half_model
// TF32: cgc.kernel "h" matmul {{.*}}precision = f16
func.func @half_model(%a: tensor<8x8xf16>, %b: tensor<8x8xbf16>, %c: tensor<8x8xf32>)
    -> (tensor<8x8xf16>, tensor<8x8xbf16>, tensor<8x8xf32>) {
  %r:3 = cgc.island "island0" -> tensor<8x8xf16>, tensor<8x8xbf16>, tensor<8x8xf32> {
    %h = cgc.kernel "h" matmul -> tensor<8x8xf16> {
      %0 = cgc.matmul %a, %a : tensor<8x8xf16>, tensor<8x8xf16>
      cgc.yield %0 : tensor<8x8xf16>
    }
    %bh = cgc.kernel "bh" matmul -> tensor<8x8xbf16> {
      %0 = cgc.matmul %b, %b : tensor<8x8xbf16>, tensor<8x8xbf16>
      cgc.yield %0 : tensor<8x8xbf16>
    }
    %m = cgc.kernel "mixed" matmul -> tensor<8x8xf32> {
      %0 = cgc.matmul %c, %c : tensor<8x8xf32>, tensor<8x8xf32>
      cgc.yield %0 : tensor<8x8xf32>
    }
    cgc.yield %h, %bh, %m : tensor<8x8xf16>, tensor<8x8xbf16>, tensor<8x8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8x8xf16>, tensor<8x8xbf16>, tensor<8x8xf32>
}

// -----

// An attention group takes the precision when both of its products do: a
// keep-fp32 entry naming either product's node keeps the whole group in
// f32 (the softmax inside stays f32 either way). A head dim whose
// tensor-core block (8 warps of 16 rows, one 16-key warp) would not fit the
// target's 48 KB of shared memory keeps f32 too.
// BF16-LABEL: func @attention
// BF16: cgc.kernel "att" attention -> tensor<2x8x16xf32> attributes {precision = bf16}
// BF16: cgc.kernel "wide" attention -> tensor<1x8x16xf32> {
// TF32-LABEL: func @attention
// TF32: cgc.kernel "att" attention {{.*}}precision = tf32
// KEEPATT-LABEL: func @attention
// KEEPATT: cgc.kernel "att" attention -> tensor<2x8x16xf32> {
// KEEPATT-NOT: names no matrix product
// RUN: cgc-opt %s -split-input-file "--cgc-assign-precision=precision=bf16 keep-fp32=pv" 2>&1 | FileCheck %s --check-prefix=KEEPATT
func.func @attention(%q: tensor<2x8x16xf32>, %kt: tensor<2x16x8xf32>, %v: tensor<2x8x16xf32>,
                     %wq: tensor<1x8x2048xf32>, %wkt: tensor<1x2048x8xf32>, %wv: tensor<1x8x16xf32>)
    -> (tensor<2x8x16xf32>, tensor<1x8x16xf32>) {
  %r:2 = cgc.island "island0" -> tensor<2x8x16xf32>, tensor<1x8x16xf32> {
    %a = cgc.kernel "att" attention -> tensor<2x8x16xf32> {
      %0 = cgc.matmul %q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32> loc("qk")
      %1 = cgc.softmax %0 {axis = 2 : i64} : tensor<2x8x8xf32>
      %2 = cgc.matmul %1, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32> loc("pv")
      cgc.yield %2 : tensor<2x8x16xf32>
    }
    %w = cgc.kernel "wide" attention -> tensor<1x8x16xf32> {
      %0 = cgc.matmul %wq, %wkt : tensor<1x8x2048xf32>, tensor<1x2048x8xf32>
      %1 = cgc.softmax %0 {axis = 2 : i64} : tensor<1x8x8xf32>
      %2 = cgc.matmul %1, %wv : tensor<1x8x8xf32>, tensor<1x8x16xf32>
      cgc.yield %2 : tensor<1x8x16xf32>
    }
    cgc.yield %a, %w : tensor<2x8x16xf32>, tensor<1x8x16xf32>
  }
  return %r#0, %r#1 : tensor<2x8x16xf32>, tensor<1x8x16xf32>
}
