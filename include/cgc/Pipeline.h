//===- Pipeline.h - the whole cgc pass pipeline -----------------*- C++ -*-===//
#ifndef CGC_PIPELINE_H
#define CGC_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace cgc {

/// Stops of the pipeline, in order; `cgc --emit=` prints the IR at a stop.
enum class PipelineStop { Import, Partition, Fuse, Plan, CGraph };

/// Adds the passes from import up to and including `stop`.
void buildCgcPipeline(mlir::OpPassManager &pm, PipelineStop stop);

/// Registers `--cgc-pipeline` (the full pipeline) with the pass registry,
/// so `cgc-opt --cgc-pipeline` runs exactly what `cgc` runs.
void registerCgcPipeline();

} // namespace cgc

#endif // CGC_PIPELINE_H
