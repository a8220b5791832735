// RUN: cgc-opt %s -split-input-file -cgc-check-static-shapes -verify-diagnostics

func.func @static(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = cgc.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expected-error@+1 {{input 'input_0' has dim 0 'N' unbound: give its size with --dim N=SIZE (several sizes, --dim N=1,2,4,8, compile shape buckets)}}
func.func @unbound(%x: tensor<?x3xf32> {cgc.dim_names = ["N", ""]}) -> tensor<?x3xf32> {
  // expected-error@+1 {{result has an unbound dim}}
  %0 = cgc.relu %x : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Data-dependent shapes are expected on eager ops and are not reported.
func.func @eager_is_exempt(%x: tensor<4x16xf32>) -> tensor<2x?xi64> {
  %0 = cgc.nonzero %x : tensor<4x16xf32> -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// -----

// A dim without an ONNX name can only be set through the whole shape.
// expected-error@+1 {{input 'ids' has dim 0, dim 1 'seq' unbound: give its shape with --shape ids=D0xD1x...}}
func.func @unnamed(%x: tensor<?x?xf32> {cgc.name = "ids", cgc.dim_names = ["?", "seq"]}) -> tensor<?x?xf32> {
  return %x : tensor<?x?xf32>
}
