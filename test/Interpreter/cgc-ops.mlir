// RUN: cgc-interp %s --print | FileCheck %s
// Programs in the cgc dialect run directly (no import-time folding): Resize
// with align_corners, Unique's four outputs, NonZero.

func.func @main() -> (tensor<4xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>, tensor<2x?xi64>, tensor<?xf32>) {
  %x = cgc.constant dense<[2.0, 1.0, 2.0, 3.0, 1.0, 2.0]> : tensor<6xf32>
  %small = cgc.constant dense<[0.0, 3.0]> : tensor<2xf32>
  %r = cgc.resize %small {scales = [2.0], mode = "linear", coordinate_transformation_mode = "align_corners", nearest_mode = "floor", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : tensor<2xf32> -> tensor<4xf32>
  %u, %i, %inv, %c = cgc.unique %x {sorted = true} : tensor<6xf32> -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  %m = cgc.constant dense<[[0.0, 1.0], [2.0, 0.0]]> : tensor<2x2xf32>
  %nz = cgc.nonzero %m : tensor<2x2xf32> -> tensor<2x?xi64>
  return %r, %i, %inv, %c, %nz, %u : tensor<4xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>, tensor<2x?xi64>, tensor<?xf32>
}
// CHECK: output 0 'output_0': tensor<4xf32> = [0, 1, 2, 3]
// CHECK: output 1 'output_1': tensor<3xi64> = [1, 0, 3]
// CHECK: output 2 'output_2': tensor<6xi64> = [1, 0, 1, 2, 0, 1]
// CHECK: output 3 'output_3': tensor<3xi64> = [2, 3, 1]
// CHECK: output 4 'output_4': tensor<2x2xi64> = {{\[}}[0, 1], [1, 0]]
// CHECK: output 5 'output_5': tensor<3xf32> = [1, 2, 3]
