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
  // MlirOptMain's own parse exits with 1 on a bad option; parsing here
  // gives the usage code every cgc tool shares (2) and leaves 1 to inputs
  // that fail.
  std::string help = mlir::registerCLIOptions("cgc optimizer driver", registry);
  static llvm::cl::opt<std::string> input(
      llvm::cl::Positional, llvm::cl::desc("<input file>"), llvm::cl::init("-"));
  static llvm::cl::opt<std::string> output(
      "o", llvm::cl::desc("Output filename"), llvm::cl::value_desc("filename"),
      llvm::cl::init("-"));
  if (!llvm::cl::ParseCommandLineOptions(argc, argv, help, &llvm::errs()))
    return 2;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
