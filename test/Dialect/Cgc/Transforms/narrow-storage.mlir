// RUN: cgc-opt %s -split-input-file --cgc-narrow-storage=policy=always | FileCheck %s
// RUN: cgc-opt %s -split-input-file --cgc-narrow-storage=policy=always --cgc-plan-buffers --cgc-select-kernel-config | FileCheck %s --check-prefix=CONFIG
// By default only the products cuBLASLt will compute (the same rule as
// --cgc-select-kernel-config's: every one it can take under
// --cublaslt=always) and those the generated kernel stages as stored
// (@half_stages) are narrowed: none of the small ones before it.
// RUN: cgc-opt %s -split-input-file --cgc-narrow-storage | FileCheck %s --check-prefix=AUTO
// RUN: cgc-opt %s -split-input-file "--cgc-narrow-storage=cublaslt=always" | FileCheck %s --check-prefix=LIBRARY
// RUN: not cgc-opt %s -split-input-file "--cgc-narrow-storage=policy=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD
// AUTO-NOT: bf16>
// AUTO-NOT: f16>
// LIBRARY-LABEL: func @norm_into_product
// LIBRARY: cgc.kernel "ln" norm -> tensor<4x2xbf16>
// BAD: error: --cgc-narrow-storage: policy 'sometimes' is none of auto, always

// A bf16 product whose lhs only it reads (a layer norm's output) and whose
// rhs is a weight: the norm writes bf16 instead of f32, the weight becomes
// a bf16 constant (1.00390625 rounds to even, 1.0; 3.4e38 overflows to
// inf, as the device rounds), and the product's kernel widens both at the
// top of its body.
// CHECK-LABEL: func @norm_into_product
// CHECK: %[[W:.*]] = cgc.constant dense<{{\[}}[1.000000e+00, 0x7F80], [-2.000000e+00, 5.000000e-01]]> : tensor<2x2xbf16>
// CHECK-NOT: tensor<2x2xf32> = cgc.constant
// CHECK: %[[N:.*]] = cgc.kernel "ln" norm -> tensor<4x2xbf16> {
// CHECK: %[[L:.*]] = cgc.layer_norm
// CHECK: %[[C:.*]] = cgc.cast %[[L]] : tensor<4x2xf32> -> tensor<4x2xbf16>
// CHECK: cgc.yield %[[C]] : tensor<4x2xbf16>
// CHECK: cgc.kernel "mm" matmul -> tensor<4x2xf32> attributes {precision = bf16
// CHECK-DAG: %[[WA:.*]] = cgc.cast %[[N]] : tensor<4x2xbf16> -> tensor<4x2xf32>
// CHECK-DAG: %[[WB:.*]] = cgc.cast %[[W]] : tensor<2x2xbf16> -> tensor<2x2xf32>
// CHECK: cgc.matmul %[[WA]], %[[WB]]
// The config reads the stored operands: 16-bit, so no float4 loads and no
// cp.async loop; the tensor-core template still takes the product.
// CONFIG-LABEL: func @norm_into_product
// CONFIG: cgc.kernel "mm" matmul config <strategy = {{gemm|warp_dot}}
func.func @norm_into_product(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %s = cgc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %w = cgc.constant dense<[[1.00390625, 3.4e38], [-2.0, 0.5]]> : tensor<2x2xf32>
  %r = cgc.island "island0" -> tensor<4x2xf32> {
    %n = cgc.kernel "ln" norm -> tensor<4x2xf32> {
      %0 = cgc.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    %m = cgc.kernel "mm" matmul -> tensor<4x2xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %n, %w : tensor<4x2xf32>, tensor<2x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    cgc.yield %m : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}

// -----

// The norm's output is also a residual (read in f32 by an add): the norm
// keeps its f32 result and writes the f16 copy beside it.
// CHECK-LABEL: func @norm_also_residual
// CHECK: %[[N:.*]]:2 = cgc.kernel "ln" norm -> tensor<4x2xf32>, tensor<4x2xf16> {
// CHECK: cgc.yield %{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<4x2xf16>
// CHECK: cgc.kernel "mm" matmul
// CHECK: cgc.cast %[[N]]#1 : tensor<4x2xf16> -> tensor<4x2xf32>
// CHECK: cgc.kernel "res" elementwise
// CHECK: cgc.add %{{.*}}, %[[N]]#0
func.func @norm_also_residual(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %s = cgc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %w = cgc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r = cgc.island "island0" -> tensor<4x2xf32> {
    %n = cgc.kernel "ln" norm -> tensor<4x2xf32> {
      %0 = cgc.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    %m = cgc.kernel "mm" matmul -> tensor<4x2xf32> attributes {precision = f16} {
      %0 = cgc.matmul %n, %w : tensor<4x2xf32>, tensor<2x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    %a = cgc.kernel "res" elementwise -> tensor<4x2xf32> {
      %0 = cgc.add %m, %n : tensor<4x2xf32>, tensor<4x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    cgc.yield %a : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}

// -----

// Left alone: a product whose lhs is a model input (cuBLASLt takes one
// type, so its weight stays f32 too), a tf32 product (tf32 is no storage
// type), a convolution that --cgc-narrow-conv-outputs did not split
// (cuDNN takes one type for input, filter and output; narrow-conv-outputs.mlir
// has the split ones), and a gemm of 8 rows or fewer against a [N, K] weight (one
// warp per output on FMAs, which do not round their operands).
// CHECK-LABEL: func @left_alone
// CHECK-NOT: bf16>
// CHECK-NOT: tf32>
// CHECK: return
func.func @left_alone(%x: tensor<4x2xf32>, %i: tensor<1x2x4x4xf32>)
    -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2x4x4xf32>, tensor<4x2xf32>) {
  %w = cgc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %k = cgc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %r:4 = cgc.island "island0" -> tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2x4x4xf32>, tensor<4x2xf32> {
    %a = cgc.kernel "input" matmul -> tensor<4x2xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %x, %w : tensor<4x2xf32>, tensor<2x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    %e = cgc.kernel "relu" elementwise -> tensor<4x2xf32> {
      %0 = cgc.relu %x : tensor<4x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    %t = cgc.kernel "tf32" matmul -> tensor<4x2xf32> attributes {precision = tf32} {
      %0 = cgc.matmul %e, %w : tensor<4x2xf32>, tensor<2x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    %c = cgc.kernel "cv" conv -> tensor<1x2x4x4xf32> attributes {precision = bf16} {
      %0 = cgc.conv %i, %k {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
      cgc.yield %0 : tensor<1x2x4x4xf32>
    }
    %f = cgc.kernel "few_rows" matmul -> tensor<4x2xf32> attributes {precision = bf16} {
      %0 = cgc.gemm %e, %w {trans_b = true} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    cgc.yield %a, %t, %c, %f : tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2x4x4xf32>, tensor<4x2xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2x4x4xf32>, tensor<4x2xf32>
}

// -----

// A product of a product: the first matmul group writes the bf16 copy
// beside its f32 result, which it keeps though nothing else reads it (a
// cuBLASLt call would write its product there before the epilogue).
// CHECK-LABEL: func @product_of_product
// CHECK: %[[P:.*]]:2 = cgc.kernel "first" matmul -> tensor<4x2xf32>, tensor<4x2xbf16> attributes {precision = bf16}
// CHECK: cgc.relu
// CHECK: cgc.cast %{{.*}} : tensor<4x2xf32> -> tensor<4x2xbf16>
// CHECK: cgc.kernel "second" matmul
// CHECK: cgc.cast %[[P]]#1 : tensor<4x2xbf16> -> tensor<4x2xf32>
// CONFIG-LABEL: func @product_of_product
// CONFIG: cgc.kernel "first" matmul config <{{.*}}> -> tensor<4x2xf32>, tensor<4x2xbf16>
func.func @product_of_product(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %s = cgc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %w = cgc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r = cgc.island "island0" -> tensor<4x2xf32> {
    %n = cgc.kernel "ln" norm -> tensor<4x2xf32> {
      %0 = cgc.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    %p = cgc.kernel "first" matmul -> tensor<4x2xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %n, %w : tensor<4x2xf32>, tensor<2x2xf32>
      %1 = cgc.relu %0 : tensor<4x2xf32>
      cgc.yield %1 : tensor<4x2xf32>
    }
    %q = cgc.kernel "second" matmul -> tensor<4x2xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %p, %w : tensor<4x2xf32>, tensor<2x2xf32>
      cgc.yield %0 : tensor<4x2xf32>
    }
    cgc.yield %q : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}

// -----

// A static reshape between the norm and the product is a view: the copy
// is viewed the same way, and the f32 view goes with the f32 result.
// CHECK-LABEL: func @through_a_view
// CHECK: %[[N:.*]] = cgc.kernel "ln" norm -> tensor<2x8x2xbf16>
// CHECK-NOT: tensor<2x8x2xf32> -> tensor<16x2xf32>
// CHECK: %[[V:.*]] = cgc.reshape %[[N]] : tensor<2x8x2xbf16> -> tensor<16x2xbf16>
// CHECK: cgc.kernel "mm" matmul
// CHECK: cgc.cast %[[V]] : tensor<16x2xbf16> -> tensor<16x2xf32>
func.func @through_a_view(%x: tensor<2x8x2xf32>) -> tensor<16x2xf32> {
  %s = cgc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %w = cgc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r = cgc.island "island0" -> tensor<16x2xf32> {
    %n = cgc.kernel "ln" norm -> tensor<2x8x2xf32> {
      %0 = cgc.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8x2xf32>, tensor<2xf32>) -> tensor<2x8x2xf32>
      cgc.yield %0 : tensor<2x8x2xf32>
    }
    %v = cgc.reshape %n : tensor<2x8x2xf32> -> tensor<16x2xf32>
    %m = cgc.kernel "mm" matmul -> tensor<16x2xf32> attributes {precision = bf16} {
      %0 = cgc.gemm %v, %w {trans_b = true} : (tensor<16x2xf32>, tensor<2x2xf32>) -> tensor<16x2xf32>
      cgc.yield %0 : tensor<16x2xf32>
    }
    cgc.yield %m : tensor<16x2xf32>
  }
  return %r : tensor<16x2xf32>
}

// -----

// A transpose kernel between the norm and the product moves the bf16 copy
// instead (a kernel of its own beside the f32 one, which goes when nothing
// else reads it).
// CHECK-LABEL: func @through_a_transpose
// CHECK: %[[N:.*]] = cgc.kernel "ln" norm -> tensor<2x8x2xbf16>
// CHECK-NOT: cgc.kernel "t" single
// CHECK: %[[T:.*]] = cgc.kernel "t_bf16" single -> tensor<8x2x2xbf16>
// CHECK-NEXT: cgc.transpose %[[N]] {perm = array<i64: 1, 0, 2>} : tensor<2x8x2xbf16>
// CHECK: cgc.kernel "mm" matmul
// CHECK: cgc.cast %[[T]] : tensor<8x2x2xbf16> -> tensor<8x2x2xf32>
func.func @through_a_transpose(%x: tensor<2x8x2xf32>) -> tensor<8x2x2xf32> {
  %s = cgc.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %w = cgc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r = cgc.island "island0" -> tensor<8x2x2xf32> {
    %n = cgc.kernel "ln" norm -> tensor<2x8x2xf32> {
      %0 = cgc.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8x2xf32>, tensor<2xf32>) -> tensor<2x8x2xf32>
      cgc.yield %0 : tensor<2x8x2xf32>
    }
    %t = cgc.kernel "t" single -> tensor<8x2x2xf32> {
      %0 = cgc.transpose %n {perm = array<i64: 1, 0, 2>} : tensor<2x8x2xf32>
      cgc.yield %0 : tensor<8x2x2xf32>
    }
    %m = cgc.kernel "mm" matmul -> tensor<8x2x2xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %t, %w : tensor<8x2x2xf32>, tensor<2x2xf32>
      cgc.yield %0 : tensor<8x2x2xf32>
    }
    cgc.yield %m : tensor<8x2x2xf32>
  }
  return %r : tensor<8x2x2xf32>
}

// -----

// By default a product whose generated kernel can stage its operands as
// stored (A along K, K and N multiples of 8: halfStagesFit) is narrowed
// too: its cp.async loop then copies 16-bit slices of 32 k, where f32
// operands take the register loop with one slice in flight.
// AUTO-LABEL: func @half_stages
// AUTO: %[[R:.*]] = cgc.kernel "relu" elementwise -> tensor<16x8xbf16>
// AUTO: cgc.kernel "mm" matmul
// AUTO: cgc.cast %[[R]] : tensor<16x8xbf16> -> tensor<16x8xf32>
// CONFIG-LABEL: func @half_stages
// CONFIG: cgc.kernel "mm" matmul config <strategy = gemm, block_tile = [{{[0-9]+}}, {{[0-9]+}}, 32], {{.*}}async_copy = true, {{.*}}operand = bf16>
func.func @half_stages(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %w = cgc.constant dense<0.5> : tensor<8x8xf32>
  %r = cgc.island "island0" -> tensor<16x8xf32> {
    %a = cgc.kernel "relu" elementwise -> tensor<16x8xf32> {
      %0 = cgc.relu %x : tensor<16x8xf32>
      cgc.yield %0 : tensor<16x8xf32>
    }
    %m = cgc.kernel "mm" matmul -> tensor<16x8xf32> attributes {precision = bf16} {
      %0 = cgc.matmul %a, %w : tensor<16x8xf32>, tensor<8x8xf32>
      cgc.yield %0 : tensor<16x8xf32>
    }
    cgc.yield %m : tensor<16x8xf32>
  }
  return %r : tensor<16x8xf32>
}
