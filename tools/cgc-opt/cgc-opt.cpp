//===- cgc-opt.cpp - run cgc passes on MLIR files -------------------------===//

#include "cgc/Conversion/Passes.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/InitAllDialects.h"
#include "cgc/Pipeline.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace cgc::test {
void registerTestBufferPlanPass();
} // namespace cgc::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  cgc::registerAllDialects(registry);
  cgc::registerCgcPasses();
  cgc::registerCgcConversionPasses();
  cgc::registerCgcPipeline();
  cgc::test::registerTestBufferPlanPass();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cgc optimizer driver\n", registry));
}
