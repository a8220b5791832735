// RUN: cgc-opt %s -split-input-file -verify-diagnostics

// The discardable cgc.* attributes (CgcAnnotations.h) in every place they
// may appear: accepted.
module attributes {cgc.control_flow = "host", cgc.ranks = 2 : i64,
                   cgc.target = #cgc.target<arch = "sm_90", gpu = "H100/H200", multiprocessors = 132, static_shared_bytes = 49152, max_shared_bytes_per_block = 232448, shared_bytes_per_multiprocessor = 233472, registers_per_multiprocessor = 65536, max_threads_per_multiprocessor = 2048, fp32_lanes_per_multiprocessor = 128, tensor_cores = wgmma>,
                   cgc.bucket_dim = "N", cgc.pad_to_bucket} {
  func.func @main_N8(%x: tensor<4xf32> {cgc.name = "x", cgc.dim_names = ["N"],
                                        cgc.arena_offset = 0 : i64,
                                        cgc.bucket_axis = 0 : i64})
      -> (tensor<4xf32> {cgc.name = "y", cgc.arena_offset = 256 : i64,
                         cgc.bucket_axis = -1 : i64})
      attributes {cgc.arena_bytes = 512 : i64, cgc.weights_bytes = 0 : i64,
                  cgc.intermediate_bytes = 0 : i64,
                  cgc.intermediate_lower_bound = 0 : i64,
                  cgc.intermediate_naive_bytes = 0 : i64,
                  cgc.bucket_value = 8 : i64} {
    %r = cgc.island "island0" -> tensor<4xf32> attributes {cgc.result_offsets = array<i64: 256>} {
      %k = cgc.kernel "k" elementwise -> tensor<4xf32> attributes {cgc.result_offsets = array<i64: 256>} {
        %0 = cgc.exp %x : tensor<4xf32>
        cgc.yield %0 : tensor<4xf32>
      }
      %c = cgc.concat %k, %k {axis = 0 : i64, cgc.in_place} : tensor<4xf32>, tensor<4xf32>
      cgc.yield %k : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}

// -----

// expected-error@+1 {{'cgc.arena_offset' must be an integer, got "zero"}}
func.func @offset_not_integer(%x: tensor<4xf32> {cgc.arena_offset = "zero"}) {
  return
}

// -----

// expected-error@+1 {{'cgc.name' must be a string, got 3 : i64}}
func.func @name_not_string() -> (tensor<4xf32> {cgc.name = 3 : i64}) {
  %0 = cgc.constant dense<0.0> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{'cgc.dim_names' must be an array of strings}}
func.func @dim_names_not_strings(%x: tensor<4xf32> {cgc.dim_names = [4]}) {
  return
}

// -----

// expected-error@+1 {{'cgc.arena_bytes' must be an integer, got 1.000000e+00 : f32}}
func.func @arena_bytes_not_integer() attributes {cgc.arena_bytes = 1.0 : f32} {
  return
}

// -----

// expected-error@+1 {{'cgc.arena_bytes' belongs on a func.func}}
func.func @arena_bytes_on_argument(%x: tensor<4xf32> {cgc.arena_bytes = 0 : i64}) {
  return
}

// -----

// expected-error@+1 {{'cgc.target' belongs on the module}}
func.func @target_on_function() attributes {cgc.target = #cgc.target<arch = "sm_90", gpu = "H100/H200", multiprocessors = 132, static_shared_bytes = 49152, max_shared_bytes_per_block = 232448, shared_bytes_per_multiprocessor = 233472, registers_per_multiprocessor = 65536, max_threads_per_multiprocessor = 2048, fp32_lanes_per_multiprocessor = 128, tensor_cores = wgmma>} {
  return
}

// -----

// expected-error@+1 {{'cgc.target' must be a #cgc.target, got "sm_90"}}
module attributes {cgc.target = "sm_90"} {
}

// -----

// expected-error@+1 {{'cgc.control_flow' must be "host"}}
module attributes {cgc.control_flow = "device"} {
}

// -----

// expected-error@+1 {{'cgc.ranks' must be 1 to 1024, got 5000}}
module attributes {cgc.ranks = 5000 : i64} {
}

// -----

// expected-error@+1 {{'cgc.devices' must be 2 to 1024, got 1}}
module attributes {cgc.devices = 1 : i64} {
}

// -----

func.func @shard_axis_not_on_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'cgc.shard_axis' belongs on a cgc.constant}}
  %y = cgc.relu %x {cgc.shard_axis = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @shard_axis_out_of_range() -> tensor<4x2xf32> {
  // expected-error@+1 {{'cgc.shard_axis' must be an axis of the constant (0 to 1), got 2}}
  %w = cgc.constant {cgc.shard_axis = 2 : i64} dense<1.0> : tensor<4x2xf32>
  return %w : tensor<4x2xf32>
}

// -----

// expected-error@+1 {{unknown attribute 'cgc.arena_ofset'}}
func.func @misspelled(%x: tensor<4xf32> {cgc.arena_ofset = 0 : i64}) {
  return
}

// -----

func.func @weight_offset_not_on_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'cgc.weight_offset' belongs on a cgc.constant}}
  %0 = cgc.exp %x {cgc.weight_offset = 0 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @result_offsets_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'cgc.result_offsets' has 2 offsets for 1 results}}
  %0 = cgc.exp %x {cgc.result_offsets = array<i64: 0, 256>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @in_place_not_concat(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'cgc.in_place' belongs on a cgc.concat}}
  %0 = cgc.exp %x {cgc.in_place} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
