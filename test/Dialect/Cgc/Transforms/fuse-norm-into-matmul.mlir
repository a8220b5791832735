// RUN: cgc-opt %s -split-input-file --cgc-fuse | FileCheck %s --check-prefix=AUTO
// RUN: cgc-opt %s -split-input-file --cgc-fuse=cublaslt=always | FileCheck %s --check-prefix=ALWAYS
// RUN: cgc-opt %s -split-input-file --cgc-fuse=cublaslt=never | FileCheck %s --check-prefix=NEVER

// A last-axis layer norm read only by a matmul joins the matmul's kernel
// (the GEMM template normalizes A as it loads it), unless cuBLASLt is to
// compute the product: always, or under auto from 2^27 multiply-adds on.
// AUTO-LABEL: func @small
// AUTO: cgc.kernel "layer_norm_0" matmul
// AUTO-NEXT: cgc.layer_norm
// AUTO-NEXT: cgc.matmul
// ALWAYS-LABEL: func @small
// ALWAYS: cgc.kernel "layer_norm_0" norm
// ALWAYS: cgc.kernel "matmul_1" matmul
// NEVER-LABEL: func @small
// NEVER: cgc.kernel "layer_norm_0" matmul
func.func @small(%x: tensor<16x64xf32>, %s: tensor<64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %r = cgc.island "island0" -> tensor<16x64xf32> {
    %0 = cgc.layer_norm %x, %s, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    %1 = cgc.matmul %0, %w : tensor<16x64xf32>, tensor<64x64xf32>
    cgc.yield %1 : tensor<16x64xf32>
  }
  return %r : tensor<16x64xf32>
}

// -----

// AUTO-LABEL: func @large
// AUTO: cgc.kernel "layer_norm_0" norm
// AUTO: cgc.kernel "matmul_1" matmul
// NEVER-LABEL: func @large
// NEVER: cgc.kernel "layer_norm_0" matmul
func.func @large(%x: tensor<1024x512xf32>, %s: tensor<512xf32>, %w: tensor<512x256xf32>) -> tensor<1024x256xf32> {
  %r = cgc.island "island0" -> tensor<1024x256xf32> {
    %0 = cgc.layer_norm %x, %s, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1024x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<1024x512xf32>
    %1 = cgc.matmul %0, %w : tensor<1024x512xf32>, tensor<512x256xf32>
    cgc.yield %1 : tensor<1024x256xf32>
  }
  return %r : tensor<1024x256xf32>
}
