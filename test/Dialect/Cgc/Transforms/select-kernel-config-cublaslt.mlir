// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cublaslt=always 2>/dev/null | FileCheck %s --check-prefix=ALWAYS
// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cublaslt=always 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config 2>/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cublaslt=never 2>/dev/null | FileCheck %s --check-prefix=NEVER
// RUN: not cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-select-kernel-config=cublaslt=sometimes 2>&1 | FileCheck %s --check-prefix=BAD

// A large product on tensor cores (2^27 multiply-adds) goes to cuBLASLt
// under auto, with its bias add and GELU; a small one stays generated
// (a generated kernel's single launch wins there, docs/kernels.md).
// ALWAYS-LABEL: func @sizes
// ALWAYS: cgc.kernel "big" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32, operand = bf16>
// ALWAYS: cgc.kernel "small" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32, operand = bf16>
// AUTO-LABEL: func @sizes
// AUTO: cgc.kernel "big" matmul config <strategy = cublaslt_matmul, element = f32, accumulator = f32, operand = bf16>
// AUTO: cgc.kernel "small" matmul config <strategy = gemm
// NEVER-LABEL: func @sizes
// NEVER-NOT: cublaslt_matmul
// BAD: error: cublaslt must be auto, always or never, got 'sometimes'
func.func @sizes(%a: tensor<1024x512xf32>, %w: tensor<512x256xf32>,
                 %bias: tensor<256xf32>, %x: tensor<64x64xf32>,
                 %v: tensor<64x64xf32>)
    -> (tensor<1024x256xf32>, tensor<64x64xf32>) {
  %r:2 = cgc.island "island0" -> tensor<1024x256xf32>, tensor<64x64xf32> {
    %big = cgc.kernel "big" matmul -> tensor<1024x256xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %a, %w : tensor<1024x512xf32>, tensor<512x256xf32>
      %1 = cgc.add %0, %bias : tensor<1024x256xf32>, tensor<256xf32>
      %2 = cgc.relu %1 : tensor<1024x256xf32>
      cgc.yield %2 : tensor<1024x256xf32>
    }
    %small = cgc.kernel "small" matmul -> tensor<64x64xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %x, %v : tensor<64x64xf32>, tensor<64x64xf32>
      cgc.yield %0 : tensor<64x64xf32>
    }
    cgc.yield %big, %small : tensor<1024x256xf32>, tensor<64x64xf32>
  }
  return %r#0, %r#1 : tensor<1024x256xf32>, tensor<64x64xf32>
}

// -----

// f32 products: cuBLASLt's f32 kernels win on large products too (H200:
// BERT b8 674 -> 640 us), so auto takes them at the same size.
// AUTO-LABEL: func @f32_product
// AUTO: config <strategy = cublaslt_matmul, element = f32, accumulator = f32>
func.func @f32_product(%a: tensor<1024x512xf32>, %w: tensor<512x256xf32>)
    -> tensor<1024x256xf32> {
  %r = cgc.island "island0" -> tensor<1024x256xf32> {
    %k = cgc.kernel "mm" matmul -> tensor<1024x256xf32> {
      %0 = cgc.matmul %a, %w : tensor<1024x512xf32>, tensor<512x256xf32>
      cgc.yield %0 : tensor<1024x256xf32>
    }
    cgc.yield %k : tensor<1024x256xf32>
  }
  return %r : tensor<1024x256xf32>
}

// -----

// Groups cuBLASLt cannot take stay generated; `always` says why.
// WARN: warning: --cublaslt=always: 'ln_mm' stays a generated kernel: its layer norm is fused before the product
// WARN: warning: --cublaslt=always: 'bcast' stays a generated kernel: its operands broadcast only some batch dims
// WARN: warning: --cublaslt=always: 'transpose' stays a generated kernel: its epilogue has 'cgc.transpose', which is not elementwise
// ALWAYS-LABEL: func @not_taken
// ALWAYS: cgc.kernel "ln_mm" matmul config <strategy = gemm
// ALWAYS: cgc.kernel "bcast" matmul config <strategy = gemm
func.func @not_taken(%a: tensor<256x64xf32>, %s: tensor<64xf32>,
                     %w: tensor<64x64xf32>, %x: tensor<2x1x32x16xf32>,
                     %y: tensor<1x3x16x8xf32>)
    -> (tensor<256x64xf32>, tensor<2x3x32x8xf32>, tensor<64x256xf32>) {
  %r:3 = cgc.island "island0" -> tensor<256x64xf32>, tensor<2x3x32x8xf32>, tensor<64x256xf32> {
    %k = cgc.kernel "ln_mm" matmul -> tensor<256x64xf32> {
      %0 = cgc.layer_norm %a, %s, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<256x64xf32>
      %1 = cgc.matmul %0, %w : tensor<256x64xf32>, tensor<64x64xf32>
      cgc.yield %1 : tensor<256x64xf32>
    }
    %b = cgc.kernel "bcast" matmul -> tensor<2x3x32x8xf32> {
      %0 = cgc.matmul %x, %y : tensor<2x1x32x16xf32>, tensor<1x3x16x8xf32>
      cgc.yield %0 : tensor<2x3x32x8xf32>
    }
    %t = cgc.kernel "transpose" matmul -> tensor<64x256xf32> {
      %0 = cgc.matmul %a, %w : tensor<256x64xf32>, tensor<64x64xf32>
      %1 = cgc.transpose %0 {perm = array<i64: 1, 0>} : tensor<256x64xf32>
      cgc.yield %1 : tensor<64x256xf32>
    }
    cgc.yield %k, %b, %t : tensor<256x64xf32>, tensor<2x3x32x8xf32>, tensor<64x256xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<256x64xf32>, tensor<2x3x32x8xf32>, tensor<64x256xf32>
}
