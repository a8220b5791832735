//===- KernelGen.cpp - CUDA C++ for fused kernel groups -------------------===//
//
// Picks the template of a kernel group by the strategy of its
// #cgc.kernel_config (the templates live in Templates/, one file per
// family) and turns the launches it writes into named `extern "C"
// __global__` functions with the group's parameters. Nothing is decided
// here: --cgc-select-kernel-config chose the template and its tiles.
//
//===----------------------------------------------------------------------===//

#include "cgc/Codegen/KernelGen.h"
#include "Templates/GroupWriter.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace cgc;

namespace {

using namespace cgc::codegen;

/// A strategy's template (Templates/GroupWriter.h).
using GroupTemplate = LogicalResult (*)(GroupWriter &, ArrayRef<Operation *>);

/// The template of `strategy` for a group of `kind` holding `ops`, or null
/// when there is none: a `single` group holds one op (or a gather and its
/// epilogue).
GroupTemplate templateFor(KernelStrategy strategy, KernelKind kind,
                          ArrayRef<Operation *> ops) {
  switch (strategy) {
  case KernelStrategy::none:
    return nullptr;
  case KernelStrategy::elementwise:
    return writeElementwiseGroup;
  case KernelStrategy::warp_dot:
  case KernelStrategy::gemm:
    return writeMatmulGroup;
  case KernelStrategy::cublaslt_matmul:
    return writeLibraryMatmulEpilogue;
  case KernelStrategy::cudnn_conv:
    return writeLibraryConvEpilogue;
  case KernelStrategy::nccl_all_reduce:
  case KernelStrategy::nccl_all_gather:
    return nullptr; // a library node, no kernel (CgcToCGraph)
  case KernelStrategy::row_norm:
    return writeNormGroup;
  case KernelStrategy::attention:
    return writeAttentionGroup;
  case KernelStrategy::conv_gemm:
  case KernelStrategy::depthwise:
  case KernelStrategy::single_op:
    if (kind == KernelKind::single && ops.size() != 1 &&
        !isa<GatherOp>(ops.front()) && !isSingleWithNarrowCopy(ops))
      return nullptr;
    return writeAnchoredGroup;
  }
  return nullptr;
}

/// One GeneratedKernel per launch, all with the group's parameters: the
/// inputs, then the outputs.
FailureOr<std::vector<GeneratedKernel>> finish(GroupWriter &w) {
  KernelOp kernel = w.kernel;
  GeneratedKernel common;
  SmallVector<std::string> params;
  for (auto &[value, name] : w.inputs) {
    params.push_back("const " + storageType(elementType(value)) +
                     " *__restrict__ " + name);
    common.argOffsets.push_back(plannedOffset(value));
    common.argBytes.push_back(tensorBytes(value.getType()));
  }
  common.numInputs = w.inputs.size();
  Block &body = w.body();
  for (auto [k, value] : llvm::enumerate(body.getTerminator()->getOperands())) {
    params.push_back(storageType(elementType(value)) + " *__restrict__ out" +
                     std::to_string(k));
    common.argOffsets.push_back(plannedOffset(kernel.getResult(k)));
    common.argBytes.push_back(tensorBytes(value.getType()));
  }
  if (llvm::is_contained(common.argOffsets, -1))
    return kernel.emitError(
        "kernel reads or writes a value without a planned buffer (run "
        "--cgc-plan-buffers first)");
  // Kernels are named after their template (the anchor op for groups
  // built on one op's template) and a hash of their source, so identical
  // kernels share one symbol.
  std::string family = stringifyKernelKind(kernel.getKind()).str();
  if ((family == "single" || family == "conv" || family == "reduce") &&
      !body.without_terminator().empty())
    family = body.front().getName().stripDialect().str();
  std::vector<GeneratedKernel> kernels;
  for (const Launch &launch : w.launches) {
    for (int d = 0; d < 3; ++d)
      if (launch.grid[d] < 1 || launch.grid[d] > (d == 0 ? INT32_MAX : 65535))
        return kernel.emitError("launch grid out of range for ")
               << kernel.getName() << " (ONNX node '" << nodeName(&body.front())
               << "')";
    const int64_t threads = w.config.getThreads();
    if (launch.block[0] * launch.block[1] * launch.block[2] > threads)
      return kernel.emitError("launch block too large for ")
             << kernel.getName();
    GeneratedKernel k = common;
    std::string signature =
        "extern \"C\" __global__ void __launch_bounds__(" +
        std::to_string(threads) +
        (launch.minBlocks > 1 ? ", " + std::to_string(launch.minBlocks)
                              : std::string()) +
        ") @NAME@(" + llvm::join(params, ", ") + ") {\n";
    // The wait comes before any memory access: with programmatic graph
    // edges the kernel may start while the kernels it depends on run.
    // The trigger at the end lets the next kernel launch while this one
    // drains (a block that returns early counts as having triggered).
    std::string source = signature + "  cgc_wait_upstream();\n" + launch.body +
                         "  cgc_launch_dependents();\n}\n";
    k.name = family + "_" +
             llvm::utohexstr(llvm::xxh3_64bits(source), /*LowerCase=*/true);
    size_t at = source.find("@NAME@");
    source.replace(at, 6, k.name);
    k.source = std::move(source);
    k.grid = launch.grid;
    k.block = launch.block;
    k.staticState = launch.staticState;
    kernels.push_back(std::move(k));
  }
  return kernels;
}

} // namespace

FailureOr<std::vector<GeneratedKernel>> cgc::generateKernels(KernelOp kernel) {
  if (!kernel.getConfigAttr())
    return kernel.emitError("kernel '")
           << kernel.getName()
           << "' has no #cgc.kernel_config (run --cgc-select-kernel-config "
              "first)";
  GroupWriter w(kernel);
  SmallVector<Operation *> ops = kernelComputeOps(kernel);
  // Every value read or written must have a CUDA element type.
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (failed(w.checkType(v, op)))
        return failure();
    for (Value v : op->getResults())
      if (failed(w.checkType(v, op)))
        return failure();
  }
  if (w.config.getStrategy() == KernelStrategy::none) {
    // Nothing is used after the group: an empty launch keeps the graph's
    // node list in step with the kernels.
    w.launches.push_back(Launch{"", {1, 1, 1}, {32, 1, 1}});
    return finish(w);
  }
  GroupTemplate write =
      templateFor(w.config.getStrategy(), kernel.getKind(), ops);
  if (!write || ops.empty())
    return kernel.emitError()
           << "no GPU kernel template for a '"
           << stringifyKernelKind(kernel.getKind()) << "' group of "
           << ops.size() << " ops with the "
           << stringifyKernelStrategy(w.config.getStrategy())
           << " strategy (ONNX node '"
           << (ops.empty() ? StringRef("") : nodeName(ops.front())) << "')";
  if (failed(write(w, ops)))
    return failure();
  return finish(w);
}
