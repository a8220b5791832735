// RUN: cgc-opt %s -split-input-file -cgc-check-static-shapes -verify-diagnostics

func.func @static(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = cgc.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expected-error@+1 {{input #0 has type 'tensor<?x3xf32>' with unbound dims ["N", ""]; bind them with --dim NAME=VALUE}}
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
