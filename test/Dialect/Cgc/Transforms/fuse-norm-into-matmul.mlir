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

// -----

// On tensor cores the norm keeps a kernel of its own: the tensor-core GEMM
// would load a normalized A element by element. A product kept in fp32
// (its op type or node named by keep-fp32) still takes the prologue, and
// so does fp32.
// RUN: cgc-opt %s -split-input-file --cgc-fuse=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: cgc-opt %s -split-input-file --cgc-fuse="precision=tf32 keep-fp32=matmul" | FileCheck %s --check-prefix=KEEP
// RUN: cgc-opt %s -split-input-file --cgc-fuse="precision=fp16 keep-fp32=qkv" | FileCheck %s --check-prefix=KEEPNODE
// RUN: not cgc-opt %s -split-input-file --cgc-fuse=precision=int4 2>&1 | FileCheck %s --check-prefix=BAD
// BF16-LABEL: func @pre_ln
// BF16: cgc.kernel "layer_norm_{{[0-9]+}}" norm
// BF16: cgc.kernel "matmul_{{[0-9]+}}" matmul
// KEEP-LABEL: func @pre_ln
// KEEP: cgc.kernel "layer_norm_{{[0-9]+}}" matmul
// KEEP-NEXT: cgc.layer_norm
// KEEP-NEXT: cgc.matmul
// KEEPNODE-LABEL: func @pre_ln
// KEEPNODE: cgc.kernel "layer_norm_{{[0-9]+}}" matmul
// BAD: error: precision 'int4' is none of fp32, tf32, fp16, bf16
func.func @pre_ln(%x: tensor<16x64xf32>, %s: tensor<64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %r = cgc.island "island0" -> tensor<16x64xf32> {
    %0 = cgc.layer_norm %x, %s, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    %1 = cgc.matmul %0, %w : tensor<16x64xf32>, tensor<64x64xf32> loc("qkv")
    cgc.yield %1 : tensor<16x64xf32>
  }
  return %r : tensor<16x64xf32>
}
