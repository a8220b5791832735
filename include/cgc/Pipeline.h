//===- Pipeline.h - the passes cgc runs, and shape buckets ------*- C++ -*-===//

#ifndef CGC_PIPELINE_H
#define CGC_PIPELINE_H

#include "cgc/Import/ONNXImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace cgc {

enum class PipelineStop { Import, Partition, Fuse, Plan, Configure, CGraph };

/// Choices of the user that passes take as options.
struct PipelineOptions {
  /// --cgc-select-kernel-config's `deterministic`: never split K.
  bool deterministic = false;
  /// --cgc-select-kernel-config's `gemm-tile`: force a GEMM tile.
  std::string gemmTile;
  /// --cgc-lower-to-cgraph's `programmatic-launch`: programmatic kernel ->
  /// kernel edges where the target has them.
  bool programmaticLaunch = true;
  /// --cgc-assign-precision's `precision` and `keep-fp32`.
  std::string precision = "fp32";
  std::vector<std::string> keepFp32;
  /// --cgc-narrow-storage's `policy` (fp16/bf16 product operands stored in
  /// that type): auto, always, or never (the pass does not run).
  std::string narrowStorage = "auto";
  /// --cgc-select-kernel-config's `tuning-cache` and `tuning-candidates`.
  std::string tuningCache;
  bool tuningCandidates = false;
  /// --cgc-select-kernel-config's `cublaslt`: auto, always or never.
  std::string cublaslt = "auto";
  /// --cgc-select-kernel-config's `cudnn`: auto, always or never.
  std::string cudnn = "auto";
  /// --cgc-channels-last's `policy`: auto, always, or never (the pass does
  /// not run).
  std::string channelsLast = "auto";
  /// --cgc-select-kernel-config's `norm-rows`: auto, warp or block.
  std::string normRows = "auto";
};

/// The passes from imported IR to `stop`. Shape buckets stop each bucket at
/// Plan and run buildCgcLowering on the merged module.
void buildCgcPipeline(mlir::OpPassManager &pm, PipelineStop stop,
                      const PipelineOptions &options = {});

/// The passes after buffer planning: kernel configs, then cgraph.
void buildCgcLowering(mlir::OpPassManager &pm,
                      const PipelineOptions &options = {});

void registerCgcPipeline();

/// `--dim N=1,2,4,8`: one graph set per value of one symbolic dim.
struct BucketOptions {
  std::string dim;
  std::vector<int64_t> values; ///< ascending, distinct, at least one
  /// Let the runtime pad a size between buckets up to the next bucket;
  /// needs the proof of --cgc-check-bucket-padding.
  bool padToBucket = false;
};

/// Parses `NAME=V1,V2,...` (several values) into `buckets`; values are
/// sorted and made distinct. Returns false and sets `error` on malformed
/// text or when a bucketed dim was already given.
bool parseBucketBinding(llvm::StringRef text, BucketOptions &buckets,
                        std::string &error);

/// Imports the model once per bucket value and runs the pipeline down to
/// buffer planning on each; then lays all buckets' weights out once, in one
/// shared weights region (identical tensors stored once), shifts every
/// other offset past it, and merges the buckets into one module: a function
/// `main_<dim><value>` per bucket carrying `cgc.bucket_value`, with island
/// and eager region names prefixed likewise. The arena each function reports
/// is its own; the package's arena is the largest. Returns null after
/// emitting errors.
mlir::OwningOpRef<mlir::ModuleOp>
compileBuckets(llvm::StringRef path, mlir::MLIRContext *context,
               const ImportOptions &importOptions,
               const BucketOptions &buckets,
               const PipelineOptions &options = {});

} // namespace cgc

#endif // CGC_PIPELINE_H
