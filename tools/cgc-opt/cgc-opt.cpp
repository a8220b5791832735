//===- cgc-opt.cpp - run cgc passes on MLIR files -------------------------===//

#include "cgc/InitAllDialects.h"
#include "cgc/InitAllPasses.h"
#include "cgc/Interpreter/Interpreter.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace cgc::test {
void registerTestBufferPlanPass();
} // namespace cgc::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  cgc::registerAllDialects(registry);
  cgc::interp::registerConstantEvaluator(registry);
  cgc::registerAllPasses();
  cgc::test::registerTestBufferPlanPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cgc optimizer driver\n", registry));
}
