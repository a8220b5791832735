//===- cgc-opt.cpp - run cgc passes on MLIR files -------------------------===//

#include "cgc/InitAllDialects.h"
#include "cgc/InitAllPasses.h"
#include "cgc/Interpreter/Interpreter.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"

namespace cgc::test {
void registerTestBufferPlanPass();
} // namespace cgc::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  cgc::registerAllDialects(registry);
  cgc::interp::registerConstantEvaluator(registry);
  cgc::registerAllPasses();
  cgc::test::registerTestBufferPlanPass();
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "cgc-opt " << CGC_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING
       << ")\n";
  });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cgc optimizer driver\n", registry));
}
