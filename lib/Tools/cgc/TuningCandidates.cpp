//===- TuningCandidates.cpp - print what a tuner may measure --------------===//
//
// `cgc --emit=tuning-candidates` prints, as JSON, the tiled GEMM kernels
// that --cgc-select-kernel-config marked with their signature and the
// configs the templates offer them (its `tuning-candidates` option):
//   {"version": 1, "arch": "sm_90", "kernels": [{"key": ..., "label":
//    "matmul_0", "default": "#cgc.kernel_config<...>", "candidates":
//    [...]}]}
// utils/tune/cgc_tune.py measures the candidates and writes the cache.
//
//===----------------------------------------------------------------------===//

#include "TuningCandidates.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/Support/JSON.h"

using namespace mlir;

namespace {

std::string text(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

} // namespace

void cgc::printTuningCandidates(ModuleOp module, llvm::raw_ostream &os) {
  llvm::json::Array kernels;
  module.walk([&](KernelOp kernel) {
    std::optional<StringRef> key = getTuningKey(kernel);
    ArrayAttr candidates = getTuningCandidates(kernel);
    if (!key || !candidates)
      return;
    llvm::json::Array list;
    for (Attribute candidate : candidates)
      list.push_back(text(candidate));
    kernels.push_back(llvm::json::Object{
        {"key", *key},
        {"label", kernel.getName()},
        {"default", text(kernel.getConfigAttr())},
        {"candidates", std::move(list)}});
  });
  llvm::json::Object root{{"version", 1},
                          {"arch", lookupTargetOrDefault(module).getArch()},
                          {"kernels", std::move(kernels)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}
