// RUN: cgc-opt %s -split-input-file --cgc-plan-buffers --cgc-lower-to-cgraph -verify-diagnostics

// The package allocates every output once, at its largest size: one whose
// data-dependent shape the plan cannot bound is an error, before any host
// step is built.
// expected-remark@+2 {{arena:}}
// expected-error@+1 {{output 'output_0' has a data-dependent shape whose size cgc cannot bound at compile time}}
func.func @unbounded(%x: tensor<64xf32>) -> tensor<1x?xi64> {
  %nz = cgc.eager "eager0" -> tensor<1x?xi64> attributes {nodes = ["nz"], reason = "data-dependent output shape"} {
    %0 = cgc.nonzero %x : tensor<64xf32> -> tensor<1x?xi64>
    %1 = cgc.abs %0 : tensor<1x?xi64>
    cgc.yield %1 : tensor<1x?xi64>
  }
  return %nz : tensor<1x?xi64>
}

// -----

// Eager regions run what the host can: kernels, If, Loop and the
// data-dependent ops.
// expected-remark@+1 {{arena:}}
func.func @no_host_code(%x: tensor<64xf32>) -> tensor<64xf32> {
  %r = cgc.eager "eager0" -> tensor<64xf32> attributes {nodes = ["e"], reason = "test"} {
    // expected-error@+1 {{the GPU backend has no eager implementation of 'cgc.exp' (ONNX node 'cgc.exp')}}
    %0 = cgc.exp %x : tensor<64xf32>
    cgc.yield %0 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}
