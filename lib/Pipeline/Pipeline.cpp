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
  // Only asked for (--narrow-storage=always) until its 16-bit cuDNN nodes
  // have run on a GPU: the emulator checks them, no device has yet.
  if (options.narrowStorage == "always" && options.cudnn != "never") {
    CgcNarrowConvOutputsOptions convs;
    convs.cudnn = options.cudnn;
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
