// RUN: cgc-opt %s -split-input-file --cgc-hoist-product-scales | FileCheck %s

// Q and K scaled by a one-element constant before the product (torch's
// scaled_dot_product_attention): both scales move after it (each new op
// right after the product: the rhs's first).
// CHECK-LABEL: func @attention_scores
// CHECK: %[[S:.+]] = cgc.matmul %arg0, %arg1 : tensor<2x8x16xf32>, tensor<2x16x8xf32>
// CHECK-NEXT: %[[A:.+]] = cgc.div %[[S]], %[[C:.+]] : tensor<2x8x8xf32>, tensor<1xf32>
// CHECK-NEXT: %[[B:.+]] = cgc.mul %[[A]], %[[C]] : tensor<2x8x8xf32>, tensor<1xf32>
// CHECK-NEXT: cgc.softmax %[[B]]
func.func @attention_scores(%q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>) -> tensor<2x8x8xf32> {
  %c = cgc.constant dense<0.5> : tensor<1xf32>
  %0 = cgc.mul %c, %q : tensor<1xf32>, tensor<2x8x16xf32>
  %1 = cgc.div %k, %c : tensor<2x16x8xf32>, tensor<1xf32>
  %2 = cgc.matmul %0, %1 : tensor<2x8x16xf32>, tensor<2x16x8xf32>
  %3 = cgc.softmax %2 {axis = 2 : i64} : tensor<2x8x8xf32>
  return %3 : tensor<2x8x8xf32>
}

// -----

// Left alone: products that feed no softmax (here every one: a scale in a
// GEMM's epilogue would cost split-K), and in any case a scale another op
// reads too, a scale that is not constant,
// a constant of more than one element, a scale that broadcasts its operand
// to a new shape, c / x, and integer products.
// CHECK-LABEL: func @kept
// CHECK: cgc.mul %arg0, %{{.+}} : tensor<8x16xf32>, tensor<1xf32>
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: cgc.mul %arg0, %arg1
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: cgc.mul %arg2
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: cgc.mul %arg0, %{{.+}} : tensor<8x16xf32>, tensor<1x1x1xf32>
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: cgc.div
// CHECK-NEXT: cgc.matmul
// CHECK-NEXT: return
// CHECK-LABEL: func @integers
// CHECK: cgc.mul
// CHECK: cgc.matmul
func.func @kept(%x: tensor<8x16xf32>, %s: tensor<1xf32>, %w: tensor<16x8xf32>) -> (tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<1x8x8xf32>) {
  %c = cgc.constant dense<0.5> : tensor<1xf32>
  %eight = cgc.constant dense<[0.5, 2.0, 0.5, 2.0, 0.5, 2.0, 0.5, 2.0]> : tensor<8xf32>
  %high = cgc.constant dense<0.5> : tensor<1x1x1xf32>
  %shared = cgc.mul %x, %c : tensor<8x16xf32>, tensor<1xf32>
  %m0 = cgc.matmul %shared, %w : tensor<8x16xf32>, tensor<16x8xf32>
  %dynamic = cgc.mul %x, %s : tensor<8x16xf32>, tensor<1xf32>
  %m1 = cgc.matmul %dynamic, %w : tensor<8x16xf32>, tensor<16x8xf32>
  %wide = cgc.mul %w, %eight : tensor<16x8xf32>, tensor<8xf32>
  %m2 = cgc.matmul %x, %wide : tensor<8x16xf32>, tensor<16x8xf32>
  %ranked = cgc.mul %x, %high : tensor<8x16xf32>, tensor<1x1x1xf32>
  %m4 = cgc.matmul %ranked, %w : tensor<1x8x16xf32>, tensor<16x8xf32>
  %inverse = cgc.div %c, %w : tensor<1xf32>, tensor<16x8xf32>
  %m3 = cgc.matmul %x, %inverse : tensor<8x16xf32>, tensor<16x8xf32>
  return %shared, %m0, %m1, %m2, %m3, %m4 : tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<1x8x8xf32>
}
func.func @integers(%x: tensor<8x16xi32>, %w: tensor<16x8xi32>) -> tensor<8x8xi32> {
  %c = cgc.constant dense<2> : tensor<1xi32>
  %0 = cgc.mul %x, %c : tensor<8x16xi32>, tensor<1xi32>
  %1 = cgc.matmul %0, %w : tensor<8x16xi32>, tensor<16x8xi32>
  return %1 : tensor<8x8xi32>
}
