//===- InitAllPasses.h - every pass cgc tools run by name -------*- C++ -*-===//
//
// One registration point for the passes and the pipeline, so cgc-opt (and
// any tool that parses a pass pipeline) knows the same flags.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_INITALLPASSES_H
#define CGC_INITALLPASSES_H

#include "cgc/Conversion/Passes.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/Pipeline.h"

#include "mlir/Transforms/Passes.h"

namespace cgc {
/// cgc's passes and conversions, `--cgc-pipeline`, and the upstream
/// cleanups cgc's tests run between them (canonicalize, cse).
inline void registerAllPasses() {
  registerCgcPasses();
  registerCgcConversionPasses();
  registerCgcPipeline();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}
} // namespace cgc

#endif // CGC_INITALLPASSES_H
