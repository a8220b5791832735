//===- TestPackage.cpp - a hand-written package library ---------*- C++ -*-===//
//
// What `cgc --emit=lib` generates, written by hand: the descriptor and one
// builder per graph adding its nodes with explicit cuGraphAdd*Node calls
// through the runtime's driver table.
//
// For the error-path tests, $CGRT_TEST_PACKAGE_MODE makes the descriptor
// return a broken variant: null, abi, slot, bytes, weights_size, step_kind,
// step_index, missing_kernel, builder_fail, ptx_only; or a package with shape
// buckets of the rows (the graphs are elementwise, so rows are independent):
// buckets (rows 1 and 2), buckets_padded (rows 2 only, padding allowed), and
// the broken bucket_unsorted, bucket_step, bucket_axis; zero_copy: one graph
// of kernel nodes only, reported to the runtime, that may be rebound to the
// caller's buffers (zero_copy_identity: its output 2 returns the input);
// training: a training step whose state is w, replaced after every run by
// y2_copy (an update the runtime copies, not written in place), with the
// broken state_outside (the state outside the weights region) and
// state_overlap (the update outside the arena); all_reduce: the main graph
// ends in an NCCL all-reduce of y2 (a one-GPU package: one rank);
// split_all_reduce: the same over 2 ranks (both with the same weights);
// all_gather: the main graph ends in an NCCL all-gather of y2 into y (one
// rank: y becomes a copy of y2); all_gather_outside: its recv past the
// arena's end; all_gather_bad_type: its dtype field a value no cgrt_dtype
// has.
//
//===----------------------------------------------------------------------===//

#include "TestPackage.h"

#include "cgrt/package.h"

#include <cstdlib>
#include <cstring>

using namespace testpkg;

namespace {

/// The main graph's nodes; `last` receives its last node (relu).
const char *addMainNodes(const cgrt_build_env *env, CUgraph graph,
                         CUresult *result, CUgraphNode *last) {
  const cgrt_driver_api &api = *env->api;

  CUgraphNode zeroY;
  CUDA_MEMSET_NODE_PARAMS memset = {};
  memset.dst = env->arena + kYOffset;
  memset.pitch = 0;
  memset.value = 0;
  memset.elementSize = 4;
  memset.width = kElements;
  memset.height = 1;
  *result = api.cuGraphAddMemsetNode(&zeroY, graph, nullptr, 0, &memset,
                                     env->context);
  if (*result != CUDA_SUCCESS)
    return "memset node 'zero_y'";

  CUgraphNode affine;
  CUdeviceptr x = env->arena + kXOffset;
  CUdeviceptr w = env->arena + kWeightsOffset;
  CUdeviceptr y = env->arena + kYOffset;
  int n = kElements;
  void *affineArgs[] = {&x, &w, &y, &n};
  CUDA_KERNEL_NODE_PARAMS kernel = {};
  kernel.func = env->kernels[0];
  kernel.gridDimX = (kElements + 127) / 128;
  kernel.gridDimY = 1;
  kernel.gridDimZ = 1;
  kernel.blockDimX = 128;
  kernel.blockDimY = 1;
  kernel.blockDimZ = 1;
  kernel.sharedMemBytes = 0;
  kernel.kernelParams = affineArgs;
  *result = api.cuGraphAddKernelNode(&affine, graph, &zeroY, 1, &kernel);
  if (*result != CUDA_SUCCESS)
    return "kernel node 'affine' (test_affine_accumulate)";

  CUgraphNode relu;
  CUdeviceptr y2 = env->arena + kY2Offset;
  void *reluArgs[] = {&y, &y2, &n};
  kernel.func = env->kernels[1];
  kernel.kernelParams = reluArgs;
  *result = api.cuGraphAddKernelNode(&relu, graph, &affine, 1, &kernel);
  if (*result != CUDA_SUCCESS)
    return "kernel node 'relu' (test_relu)";
  *last = relu;
  return nullptr;
}

const char *buildMain(const cgrt_build_env *env, CUgraph graph,
                      CUresult *result) {
  CUgraphNode last;
  return addMainNodes(env, graph, result, &last);
}

/// The main graph, then `desc`'s collective after its last node, as cgc's
/// builders add an NCCL node.
const char *addMainThenCollective(const cgrt_build_env *env, CUgraph graph,
                                  CUresult *result,
                                  const cgrt_collective_desc &desc) {
  CUgraphNode relu, collective;
  if (const char *failed = addMainNodes(env, graph, result, &relu))
    return failed;
  return env->add_collective_node(env->runtime, &collective, graph, &relu, 1,
                                  &desc, result);
}

/// All-reduce mode: y2 summed over the ranks in place (one rank:
/// unchanged).
const char *buildMainAllReduce(const cgrt_build_env *env, CUgraph graph,
                               CUresult *result) {
  cgrt_collective_desc desc = {};
  desc.label = "graph 'main', node 'sum_y2' (NCCL all-reduce)";
  desc.kernel = "sum_y2";
  desc.collective = CGRT_ALL_REDUCE_SUM;
  desc.type = CGRT_FLOAT32;
  desc.count = kElements;
  desc.send = desc.recv = kY2Offset;
  return addMainThenCollective(env, graph, result, desc);
}

/// All-gather mode: every rank's y2 gathered into y (one rank: y2 copied
/// over y); all_gather_outside puts y past the arena's end.
const char *buildMainAllGather(const cgrt_build_env *env, CUgraph graph,
                               CUresult *result) {
  cgrt_collective_desc desc = {};
  desc.label = "graph 'main', node 'gather_y2' (NCCL all-gather)";
  desc.kernel = "gather_y2";
  desc.collective = CGRT_ALL_GATHER;
  desc.type = CGRT_FLOAT32;
  desc.count = kElements;
  desc.send = kY2Offset;
  desc.recv = kYOffset;
  const char *mode = std::getenv("CGRT_TEST_PACKAGE_MODE");
  if (mode && !std::strcmp(mode, "all_gather_outside"))
    desc.recv = kArenaBytes - 4;
  if (mode && !std::strcmp(mode, "all_gather_bad_type")) {
    // As a damaged package would hold it: the bytes, not an enum value.
    int bad = 99;
    static_assert(sizeof bad == sizeof desc.type, "dtype is an int");
    std::memcpy(&desc.type, &bad, sizeof bad);
  }
  return addMainThenCollective(env, graph, result, desc);
}

const char *buildCopy(const cgrt_build_env *env, CUgraph graph,
                      CUresult *result) {
  CUgraphNode copyNode;
  CUDA_MEMCPY3D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = env->arena + kY2Offset;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = env->arena + kY2CopyOffset;
  copy.WidthInBytes = kSlotBytes;
  copy.Height = 1;
  copy.Depth = 1;
  *result = env->api->cuGraphAddMemcpyNode(&copyNode, graph, nullptr, 0, &copy,
                                           env->context);
  if (*result != CUDA_SUCCESS)
    return "memcpy node 'copy_y2'";
  return nullptr;
}

/// Zero-copy mode: two kernel nodes whose parameters are all pointers,
/// reported to the runtime as cgc's generated builders do.
const char *buildZeroCopy(const cgrt_build_env *env, CUgraph graph,
                          CUresult *result) {
  CUdeviceptr x = env->arena + kXOffset, w = env->arena + kWeightsOffset;
  CUdeviceptr y = env->arena + kYOffset, y2 = env->arena + kY2Offset;
  CUdeviceptr copy = env->arena + kY2CopyOffset;
  void *affineArgs[] = {&x, &w, &y};
  void *reluArgs[] = {&y, &y2, &copy};
  CUDA_KERNEL_NODE_PARAMS kernel = {};
  kernel.func = env->kernels[2];
  kernel.gridDimX = (kElements + 127) / 128;
  kernel.gridDimY = kernel.gridDimZ = 1;
  kernel.blockDimX = 128;
  kernel.blockDimY = kernel.blockDimZ = 1;
  kernel.kernelParams = affineArgs;
  CUgraphNode affine, relu;
  *result = env->api->cuGraphAddKernelNode(&affine, graph, nullptr, 0, &kernel);
  if (*result != CUDA_SUCCESS)
    return "kernel node 'affine' (test_affine)";
  if (env->kernel_node_added)
    env->kernel_node_added(env->runtime, affine, &kernel, 3);
  kernel.func = env->kernels[3];
  kernel.kernelParams = reluArgs;
  *result = env->api->cuGraphAddKernelNode(&relu, graph, &affine, 1, &kernel);
  if (*result != CUDA_SUCCESS)
    return "kernel node 'relu_copy' (test_relu_copy)";
  if (env->kernel_node_added)
    env->kernel_node_added(env->runtime, relu, &kernel, 3);
  return nullptr;
}

const char *buildBroken(const cgrt_build_env *, CUgraph, CUresult *result) {
  *result = CUDA_ERROR_INVALID_VALUE;
  return "kernel node 'broken_node'";
}

#define SHAPE {kRows, kCols, 0, 0, 0, 0, 0, 0}
const cgrt_io_desc kInputs[] = {
    {kInputName, CGRT_FLOAT32, 2, SHAPE, kXOffset, kSlotBytes},
};
const cgrt_io_desc kOutputs[] = {
    {"y", CGRT_FLOAT32, 2, SHAPE, kYOffset, kSlotBytes},
    {"y2", CGRT_FLOAT32, 2, SHAPE, kY2Offset, kSlotBytes},
    {"y2_copy", CGRT_FLOAT32, 2, SHAPE, kY2CopyOffset, kSlotBytes},
};
#undef SHAPE
const char *const kKernelNames[] = {"test_affine_accumulate", "test_relu"};
const char *const kZeroCopyKernelNames[] = {
    "test_affine_accumulate", "test_relu", "test_affine", "test_relu_copy"};
const cgrt_graph_builder kZeroCopyBuilders[] = {buildZeroCopy};
const cgrt_step kZeroCopySteps[] = {{CGRT_STEP_GRAPH, 0}};
const char *const kMissingKernelNames[] = {"test_affine_accumulate",
                                           "no_such_kernel"};
const cgrt_graph_builder kBuilders[] = {buildMain, buildCopy};
const cgrt_graph_builder kBrokenBuilders[] = {buildMain, buildBroken};
const cgrt_graph_builder kAllReduceBuilders[] = {buildMainAllReduce,
                                                buildCopy};
const cgrt_graph_builder kAllGatherBuilders[] = {buildMainAllGather,
                                                buildCopy};
const char *const kGraphNames[] = {"main", "copy"};
const cgrt_step kSteps[] = {{CGRT_STEP_GRAPH, 0}, {CGRT_STEP_GRAPH, 1}};

// Shape buckets: the same graphs for 1 row (only the first row of every
// slot is read back) and for 2.
#define ROW {1, kCols, 0, 0, 0, 0, 0, 0}
const cgrt_io_desc kInputsRow[] = {
    {kInputName, CGRT_FLOAT32, 2, ROW, kXOffset, kSlotBytes / 2},
};
const cgrt_io_desc kOutputsRow[] = {
    {"y", CGRT_FLOAT32, 2, ROW, kYOffset, kSlotBytes / 2},
    {"y2", CGRT_FLOAT32, 2, ROW, kY2Offset, kSlotBytes / 2},
    {"y2_copy", CGRT_FLOAT32, 2, ROW, kY2CopyOffset, kSlotBytes / 2},
};
#undef ROW
const int32_t kInputAxes[] = {0};
const int32_t kOutputAxes[] = {0, 0, 0};
const cgrt_bucket kBuckets[] = {
    {1, kArenaBytes, kInputsRow, kOutputsRow, 2, kSteps},
    {kRows, kArenaBytes, kInputs, kOutputs, 2, kSteps},
};

cgrt_package makePackage() {
  cgrt_package p = {};
  p.abi_version = CGRT_PACKAGE_ABI_VERSION;
  p.cgc_version = "test";
  p.model_name = "cgrt_test_package";
  p.arena_bytes = kArenaBytes;
  p.weights_offset = kWeightsOffset;
  p.weights_bytes = kSlotBytes;
  p.weights_file = "weights.bin";
  p.weights_checksum = weightsChecksum();
  p.cubin_file = "kernels.cubin";
  p.ptx_file = "kernels.ptx";
  p.num_kernels = 2;
  p.kernel_names = kKernelNames;
  p.num_inputs = 1;
  p.inputs = kInputs;
  p.num_outputs = 3;
  p.outputs = kOutputs;
  p.num_graphs = 2;
  p.graph_builders = kBuilders;
  p.graph_names = kGraphNames;
  p.num_steps = 2;
  p.steps = kSteps;
  p.ranks = 1;
  return p;
}

} // namespace

extern "C" __attribute__((visibility("default"))) const cgrt_package *
cgrt_package_descriptor(void) {
  static const cgrt_package package = makePackage();
  const char *mode = std::getenv("CGRT_TEST_PACKAGE_MODE");
  if (!mode || !*mode)
    return &package;

  // Broken variants for the error-path tests.
  static cgrt_package variant;
  static cgrt_io_desc inputs[1], outputs[3];
  static cgrt_step steps[2];
  variant = package;
  std::memcpy(inputs, kInputs, sizeof(inputs));
  std::memcpy(outputs, kOutputs, sizeof(outputs));
  std::memcpy(steps, kSteps, sizeof(steps));
  variant.inputs = inputs;
  variant.outputs = outputs;
  variant.steps = steps;
  if (!std::strcmp(mode, "null"))
    return nullptr;
  if (!std::strcmp(mode, "abi")) {
    variant.abi_version = 999;
    variant.cgc_version = "9.9.9";
  } else if (!std::strcmp(mode, "slot")) {
    outputs[1].arena_offset = kArenaBytes - 16;
  } else if (!std::strcmp(mode, "bytes")) {
    inputs[0].bytes = 100;
  } else if (!std::strcmp(mode, "weights_size")) {
    variant.weights_bytes = kSlotBytes - 4;
  } else if (!std::strncmp(mode, "split", 5)) {
    static const char *const files[] = {"weights.bin", "weights.bin"};
    static const uint64_t sums[] = {weightsChecksum(), weightsChecksum()};
    variant.ranks = 2;
    variant.rank_weights_files = files;
    variant.rank_weights_checksums = sums;
    if (!std::strcmp(mode, "split_all_reduce"))
      variant.graph_builders = kAllReduceBuilders;
  } else if (!std::strcmp(mode, "all_reduce")) {
    variant.graph_builders = kAllReduceBuilders;
  } else if (!std::strncmp(mode, "all_gather", 10)) {
    variant.graph_builders = kAllGatherBuilders;
  } else if (!std::strcmp(mode, "no_ranks")) {
    variant.ranks = 0;
  } else if (!std::strcmp(mode, "step_kind")) {
    steps[1].kind = static_cast<cgrt_step_kind>(7);
  } else if (!std::strcmp(mode, "step_index")) {
    steps[1].index = 5;
  } else if (!std::strcmp(mode, "missing_kernel")) {
    variant.kernel_names = kMissingKernelNames;
  } else if (!std::strcmp(mode, "builder_fail")) {
    variant.graph_builders = kBrokenBuilders;
  } else if (!std::strcmp(mode, "ptx_only")) {
    variant.cubin_file = nullptr;
  } else if (!std::strncmp(mode, "zero_copy", 9)) {
    variant.num_kernels = 4;
    variant.kernel_names = kZeroCopyKernelNames;
    variant.num_graphs = 1;
    variant.graph_builders = kZeroCopyBuilders;
    variant.num_steps = 1;
    variant.steps = kZeroCopySteps;
    variant.zero_copy_io = 1;
    // zero_copy_identity: output 2 is the input itself (its slot).
    if (!std::strcmp(mode, "zero_copy_identity"))
      outputs[2].arena_offset = kXOffset;
  } else if (!std::strncmp(mode, "training", 8) ||
             !std::strncmp(mode, "state_", 6)) {
    static cgrt_state_desc state[1];
    state[0] = {{"w", CGRT_FLOAT32, 2, {kRows, kCols, 0, 0, 0, 0, 0, 0},
                 kWeightsOffset, kSlotBytes},
                kY2CopyOffset};
    variant.num_state = 1;
    variant.state = state;
    if (!std::strcmp(mode, "state_outside"))
      state[0].tensor.arena_offset = kYOffset;
    else if (!std::strcmp(mode, "state_update"))
      state[0].update_offset = kArenaBytes - 8;
  } else if (!std::strncmp(mode, "bucket", 6)) {
    static cgrt_bucket buckets[2];
    static int32_t outputAxes[3];
    std::memcpy(buckets, kBuckets, sizeof(buckets));
    std::memcpy(outputAxes, kOutputAxes, sizeof(outputAxes));
    variant.bucket_dim = "rows";
    variant.num_buckets = 2;
    variant.buckets = buckets;
    variant.input_bucket_axes = kInputAxes;
    variant.output_bucket_axes = outputAxes;
    if (!std::strcmp(mode, "buckets_padded")) {
      variant.num_buckets = 1;
      variant.buckets = buckets + 1;
      variant.pad_to_bucket = 1;
    } else if (!std::strcmp(mode, "bucket_unsorted")) {
      buckets[0].value = 3;
    } else if (!std::strcmp(mode, "bucket_step")) {
      static cgrt_step bucketSteps[2] = {{CGRT_STEP_GRAPH, 0},
                                         {CGRT_STEP_GRAPH, 9}};
      buckets[0].steps = bucketSteps;
    } else if (!std::strcmp(mode, "bucket_axis")) {
      outputAxes[2] = 2;
    }
  }
  return &variant;
}
