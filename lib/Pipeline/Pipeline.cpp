//===- Pipeline.cpp - the whole cgc pass pipeline -------------------------===//

#include "cgc/Pipeline.h"

#include "cgc/Conversion/Passes.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

static cgc::CgcSelectKernelConfigOptions
selectKernelConfigOptions(const cgc::PipelineOptions &options) {
  return cgc::CgcSelectKernelConfigOptions{
      options.gemmTile,         options.deterministic, options.tuningCache,
      options.tuningCandidates, options.cublaslt,      options.cudnn,
      options.normRows};
}

void cgc::buildCgcPipeline(OpPassManager &pm, PipelineStop stop,
                           const PipelineOptions &options) {
  if (stop == PipelineStop::Import)
    return;
  pm.addNestedPass<func::FuncOp>(createCgcPartitionIslands());
  if (stop == PipelineStop::Partition)
    return;
  pm.addNestedPass<func::FuncOp>(createCgcReshapeUnitTransposes());
  pm.addNestedPass<func::FuncOp>(createCgcFoldBatchNorms());
  pm.addNestedPass<func::FuncOp>(createCgcPatchConvs());
  if (options.channelsLast != "never" && options.cudnn != "never") {
    CgcChannelsLastOptions layout;
    layout.policy = options.channelsLast;
    layout.cudnn = options.cudnn;
    layout.precision = options.precision;
    layout.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
    pm.addNestedPass<func::FuncOp>(createCgcChannelsLast(layout));
  }
  pm.addNestedPass<func::FuncOp>(createCgcMoveTransposes());
  pm.addNestedPass<func::FuncOp>(createCgcMoveReshapes());
  pm.addNestedPass<func::FuncOp>(createCgcHoistProductScales());
  pm.addNestedPass<func::FuncOp>(createCgcGatherSlicedConcats());
  cgc::CgcFuseOptions fuse;
  fuse.cublaslt = options.cublaslt;
  fuse.precision = options.precision;
  fuse.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
  pm.addNestedPass<func::FuncOp>(createCgcFuse(fuse));
  if (stop == PipelineStop::Fuse)
    return;
  CgcAssignPrecisionOptions precision;
  precision.precision = options.precision;
  precision.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
  pm.addPass(createCgcAssignPrecision(precision));
  // fp16 convolutions only when asked for: an fp16 output flushes
  // activations below its range to zero (the shared MobileNetV2's fall
  // near 1e-8), where bf16 keeps f32's range.
  if (options.narrowStorage != "never" && options.cudnn != "never") {
    CgcNarrowConvOutputsOptions convs;
    convs.cudnn = options.cudnn;
    convs.fp16 = options.narrowStorage == "always";
    pm.addPass(createCgcNarrowConvOutputs(convs));
  }
  if (options.narrowStorage != "never") {
    CgcNarrowStorageOptions narrow;
    narrow.policy = options.narrowStorage;
    narrow.cublaslt = options.cublaslt;
    narrow.cudnn = options.cudnn;
    pm.addPass(createCgcNarrowStorage(narrow));
  }
  pm.addPass(createCgcPlanBuffers());
  if (stop == PipelineStop::Plan)
    return;
  pm.addPass(createCgcSelectKernelConfig(
      selectKernelConfigOptions(options)));
  if (stop == PipelineStop::Configure)
    return;
  pm.addPass(createCgcLowerToCGraph(
      CgcLowerToCGraphOptions{options.programmaticLaunch}));
}

void cgc::buildCgcLowering(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(createCgcSelectKernelConfig(
      selectKernelConfigOptions(options)));
  pm.addPass(createCgcLowerToCGraph(
      CgcLowerToCGraphOptions{options.programmaticLaunch}));
}

void cgc::registerCgcPipeline() {
  PassPipelineRegistration<>(
      "cgc-pipeline", "The passes `cgc` runs, from imported IR to cgraph",
      [](OpPassManager &pm) { buildCgcPipeline(pm, PipelineStop::CGraph); });
}
