// RUN: cgc-opt %s -split-input-file --cgc-test-print-buffer-plan -o /dev/null | FileCheck %s

// Lifetimes are in doubled kernel steps: %k1 reads %k0 at step 1's first
// half (2, in place) and writes at 3, so they share offset 512.
// CHECK-LABEL: plan @in_place
// CHECK-NEXT: buffer 0 input bytes=256 offset=0 values: %arg0
// CHECK-NEXT: buffer 1 intermediate bytes=256 offset=512 live=[1, 2] values: %1
// CHECK-NEXT: buffer 2 intermediate bytes=256 offset=512 live=[3, 4] values: %2
// CHECK-NEXT: buffer 3 output bytes=256 offset=256 values: %0 %3
// CHECK-NEXT: arena=768 weights=0 intermediates=256 lower_bound=256 naive=512
func.func @in_place(%x: tensor<64xf32>) -> tensor<64xf32> {
  %r = cgc.island "island0" -> tensor<64xf32> {
    %k0 = cgc.kernel "k0" elementwise -> tensor<64xf32> {
      %0 = cgc.exp %x : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k1 = cgc.kernel "k1" elementwise -> tensor<64xf32> {
      %0 = cgc.neg %k0 : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k2 = cgc.kernel "k2" elementwise -> tensor<64xf32> {
      %0 = cgc.mul %k1, %k1 : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %k2 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// A weight never shares memory; a value read after a later kernel keeps
// its buffer alive across it.
// CHECK-LABEL: plan @must_not_share
// CHECK: buffer 1 weight bytes=256 offset=0 values: %0
// CHECK-NEXT: buffer 2 intermediate bytes=256 offset=768 live=[1, 4] values: %2
// CHECK-NEXT: buffer 3 intermediate bytes=256 offset=1024 live=[3, 4] values: %3
func.func @must_not_share(%x: tensor<64xf32>) -> tensor<64xf32> {
  %w = cgc.constant dense<2.0> : tensor<64xf32>
  %r = cgc.island "island0" -> tensor<64xf32> {
    %k0 = cgc.kernel "k0" elementwise -> tensor<64xf32> {
      %0 = cgc.mul %x, %w : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k1 = cgc.kernel "k1" elementwise -> tensor<64xf32> {
      %0 = cgc.neg %k0 : tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    %k2 = cgc.kernel "k2" elementwise -> tensor<64xf32> {
      %0 = cgc.add %k0, %k1 : tensor<64xf32>, tensor<64xf32>
      cgc.yield %0 : tensor<64xf32>
    }
    cgc.yield %k2 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// The inputs of an in-place concat are chunks of its buffer (+256 bytes).
// CHECK-LABEL: plan @concat_chunks
// CHECK: buffer 3 intermediate bytes=512 offset=768 live=[1, 6] values: %1 %2+256 %3
func.func @concat_chunks(%x: tensor<1x64xf32>) -> tensor<1x128xf32> {
  %r = cgc.island "island0" -> tensor<1x128xf32> {
    %a = cgc.kernel "a" elementwise -> tensor<1x64xf32> {
      %0 = cgc.exp %x : tensor<1x64xf32>
      cgc.yield %0 : tensor<1x64xf32>
    }
    %b = cgc.kernel "b" elementwise -> tensor<1x64xf32> {
      %0 = cgc.neg %x : tensor<1x64xf32>
      cgc.yield %0 : tensor<1x64xf32>
    }
    %c = cgc.concat %a, %b {axis = 1 : i64, cgc.in_place} : tensor<1x64xf32>, tensor<1x64xf32>
    %k = cgc.kernel "k" elementwise -> tensor<1x128xf32> {
      %0 = cgc.abs %c : tensor<1x128xf32>
      cgc.yield %0 : tensor<1x128xf32>
    }
    cgc.yield %k : tensor<1x128xf32>
  }
  return %r : tensor<1x128xf32>
}
