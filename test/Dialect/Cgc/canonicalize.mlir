// RUN: cgc-opt %s -split-input-file -canonicalize | FileCheck %s
// Folds of cgc ops on constants. The arithmetic is the interpreter's
// (CgcFolds.cpp through cgc::ConstantEvaluatorInterface); what stays an op
// is what the importer also leaves to run time.

// The exporter's reshape target: Shape -> Gather -> Concat, all constant
// once the dims are static.
// CHECK-LABEL: func @shape_chain
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  // CHECK-DAG: %[[SHAPE:.+]] = cgc.constant dense<[2, 12]> : tensor<2xi64>
  // CHECK: %[[R:.+]] = cgc.reshape %{{.+}}, %[[SHAPE]]
  // CHECK-NOT: cgc.gather
  // CHECK-NOT: cgc.concat
  // CHECK: return %[[R]]
  %s = cgc.shape %x {start = 0 : i64, end = 3 : i64} : tensor<2x3x4xf32>
  %i = cgc.constant dense<0> : tensor<1xi64>
  %d0 = cgc.gather %s, %i {axis = 0 : i64} : tensor<3xi64>, tensor<1xi64>
  %j = cgc.constant dense<[1, 2]> : tensor<2xi64>
  %rest = cgc.gather %s, %j {axis = 0 : i64} : tensor<3xi64>, tensor<2xi64>
  %n = cgc.reduce_prod %rest {axes = array<i64: 0>, keepdims = true} : tensor<2xi64>
  %t = cgc.concat %d0, %n {axis = 0 : i64} : tensor<1xi64>, tensor<1xi64>
  %r = cgc.reshape %x, %t : tensor<2xi64> : tensor<2x3x4xf32> -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

// Integer arithmetic with numpy broadcasting; division truncates.
// CHECK-LABEL: func @int_arith
func.func @int_arith() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) {
  // CHECK-DAG: cgc.constant dense<[12, 22, 32]> : tensor<3xi64>
  // CHECK-DAG: cgc.constant dense<[20, 40, 60]> : tensor<3xi64>
  // CHECK-DAG: cgc.constant dense<[-5, -10, -15]> : tensor<3xi64>
  // CHECK-DAG: cgc.constant dense<[3, 6, 10]> : tensor<3xi64>
  // CHECK-NOT: cgc.add
  // CHECK-NOT: cgc.mul
  // CHECK-NOT: cgc.div
  // CHECK-NOT: cgc.neg
  %a = cgc.constant dense<[10, 20, 30]> : tensor<3xi64>
  %b = cgc.constant dense<2> : tensor<i64>
  %c = cgc.constant dense<3> : tensor<1xi64>
  %0 = cgc.add %a, %b : tensor<3xi64>, tensor<i64>
  %1 = cgc.mul %a, %b : tensor<3xi64>, tensor<i64>
  %h = cgc.div %a, %b : tensor<3xi64>, tensor<i64>
  %2 = cgc.neg %h : tensor<3xi64>
  %3 = cgc.div %a, %c : tensor<3xi64>, tensor<1xi64>
  return %0, %1, %2, %3 : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>
}

// -----

// An integer division by zero is a run-time error: it is not folded (and
// folding reports nothing).
// CHECK-LABEL: func @div_by_zero
func.func @div_by_zero() -> tensor<2xi64> {
  // CHECK: cgc.div
  %a = cgc.constant dense<[1, 2]> : tensor<2xi64>
  %z = cgc.constant dense<[1, 0]> : tensor<2xi64>
  %0 = cgc.div %a, %z : tensor<2xi64>, tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Comparisons give i1; where selects with broadcasting.
// CHECK-LABEL: func @compare_select
func.func @compare_select() -> (tensor<3xi1>, tensor<3xf32>) {
  // CHECK-DAG: cgc.constant dense<[true, false, false]> : tensor<3xi1>
  // CHECK-DAG: cgc.constant dense<[1.000000e+00, 5.000000e+00, 5.000000e+00]> : tensor<3xf32>
  // CHECK-NOT: cgc.less
  // CHECK-NOT: cgc.where
  %a = cgc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = cgc.constant dense<2.0> : tensor<f32>
  %f = cgc.constant dense<5.0> : tensor<f32>
  %0 = cgc.less %a, %b : tensor<3xf32>, tensor<f32>
  %1 = cgc.where %0, %a, %f : tensor<3xi1>, tensor<3xf32>, tensor<f32>
  return %0, %1 : tensor<3xi1>, tensor<3xf32>
}

// -----

// Cast truncates toward zero; a NaN has no integer value and stays a cast.
// CHECK-LABEL: func @cast
func.func @cast() -> (tensor<2xi64>, tensor<2xi64>) {
  // CHECK-DAG: %[[C:.+]] = cgc.constant dense<[1, -2]> : tensor<2xi64>
  // CHECK-DAG: %[[NAN:.+]] = cgc.cast %{{.+}} : tensor<2xf32> -> tensor<2xi64>
  // CHECK: return %[[C]], %[[NAN]]
  %a = cgc.constant dense<[1.5, -2.5]> : tensor<2xf32>
  %n = cgc.constant dense<[0x7FC00000, 1.0]> : tensor<2xf32>
  %0 = cgc.cast %a : tensor<2xf32> -> tensor<2xi64>
  %1 = cgc.cast %n : tensor<2xf32> -> tensor<2xi64>
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

// -----

// Data movement on constants: slice, transpose, tile and expand.
// CHECK-LABEL: func @data_movement
func.func @data_movement() -> (tensor<1x2xi64>, tensor<3x2xi64>, tensor<2x6xi64>, tensor<2x2x3xi64>) {
  // CHECK-DAG: cgc.constant dense<{{\[}}[4, 6]]> : tensor<1x2xi64>
  // CHECK-DAG: cgc.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
  // CHECK-DAG: cgc.constant dense<{{\[}}[1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6]]> : tensor<2x6xi64>
  // CHECK-DAG: cgc.constant dense<{{\[}}{{\[}}[1, 2, 3], [4, 5, 6]], {{\[}}[1, 2, 3], [4, 5, 6]]]> : tensor<2x2x3xi64>
  // CHECK-NOT: cgc.slice
  // CHECK-NOT: cgc.transpose
  // CHECK-NOT: cgc.tile
  // CHECK-NOT: cgc.expand
  %a = cgc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = cgc.slice %a {starts = array<i64: 1, 0>, ends = array<i64: 2, 3>, steps = array<i64: 1, 2>} : tensor<2x3xi64>
  %1 = cgc.transpose %a {perm = array<i64: 1, 0>} : tensor<2x3xi64>
  %2 = cgc.tile %a {repeats = array<i64: 1, 2>} : tensor<2x3xi64>
  %3 = cgc.expand %a : tensor<2x3xi64> -> tensor<2x2x3xi64>
  return %0, %1, %2, %3 : tensor<1x2xi64>, tensor<3x2xi64>, tensor<2x6xi64>, tensor<2x2x3xi64>
}

// -----

// An index out of range is a run-time error: the gather stays.
// CHECK-LABEL: func @gather_out_of_range
func.func @gather_out_of_range() -> tensor<1xi64> {
  // CHECK: cgc.gather
  %a = cgc.constant dense<[1, 2, 3]> : tensor<3xi64>
  %i = cgc.constant dense<7> : tensor<1xi64>
  %0 = cgc.gather %a, %i {axis = 0 : i64} : tensor<3xi64>, tensor<1xi64>
  return %0 : tensor<1xi64>
}

// -----

// Only whole-tensor sums and products fold (an element count); a partial
// reduction stays an op.
// CHECK-LABEL: func @reductions
func.func @reductions() -> (tensor<i64>, tensor<2xi64>) {
  // CHECK-DAG: %[[SUM:.+]] = cgc.constant dense<21> : tensor<i64>
  // CHECK-DAG: %[[PART:.+]] = cgc.reduce_sum %{{.+}} {axes = array<i64: 1>, keepdims = false}
  // CHECK: return %[[SUM]], %[[PART]]
  %a = cgc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = cgc.reduce_sum %a {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xi64>
  %1 = cgc.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : tensor<2x3xi64>
  return %0, %1 : tensor<i64>, tensor<2xi64>
}

// -----

// Bounds exporters compute with Mod, Abs, comparisons and logic (torch's
// TorchScript export of nn.MultiheadAttention slices with Mod(c, c)).
// CHECK-LABEL: func @bound_arith
func.func @bound_arith() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi1>, tensor<2xi1>) {
  // CHECK-DAG: %[[MOD:.+]] = cgc.constant dense<[4, 5]> : tensor<2xi64>
  // CHECK-DAG: %[[FMOD:.+]] = cgc.constant dense<[1, -1]> : tensor<2xi64>
  // CHECK-DAG: %[[ABS:.+]] = cgc.constant dense<[10, 7]> : tensor<2xi64>
  // CHECK-DAG: %[[GE:.+]] = cgc.constant dense<[true, false]> : tensor<2xi1>
  // CHECK-DAG: %[[AND:.+]] = cgc.constant dense<false> : tensor<2xi1>
  // CHECK-NOT: cgc.mod
  // CHECK-NOT: cgc.abs
  // CHECK: return %[[MOD]], %[[FMOD]], %[[ABS]], %[[GE]], %[[AND]]
  %a = cgc.constant dense<[10, -7]> : tensor<2xi64>
  %b = cgc.constant dense<3> : tensor<i64>
  %six = cgc.constant dense<6> : tensor<i64>
  %t = cgc.constant dense<[false, true]> : tensor<2xi1>
  %m = cgc.mod %a, %six {fmod = false} : tensor<2xi64>, tensor<i64>
  %f = cgc.mod %a, %b {fmod = true} : tensor<2xi64>, tensor<i64>
  %x = cgc.abs %a : tensor<2xi64>
  %ge = cgc.greater_equal %a, %b : tensor<2xi64>, tensor<i64>
  %and = cgc.and %ge, %t : tensor<2xi1>, tensor<2xi1>
  return %m, %f, %x, %ge, %and : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi1>, tensor<2xi1>
}

// -----

// Operands that are not constants leave the op alone.
// CHECK-LABEL: func @not_constant
func.func @not_constant(%x: tensor<3xi64>) -> tensor<3xi64> {
  // CHECK: cgc.add
  %b = cgc.constant dense<2> : tensor<i64>
  %0 = cgc.add %x, %b : tensor<3xi64>, tensor<i64>
  return %0 : tensor<3xi64>
}
