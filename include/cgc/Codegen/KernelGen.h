//===- KernelGen.h - CUDA C++ for fused kernel groups -----------*- C++ -*-===//
//
// Every `cgc.kernel` becomes one `extern "C" __global__` function written
// from templates this project owns (elementwise, warp-per-output matmul,
// block-per-row normalization, and one template per op for `single` groups:
// convolution, pooling, reductions, data movement, ...), specialized with the group's static shapes
// and with its elementwise ops inlined as expressions. Each pointer
// parameter is an arena offset, known at compile time.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_CODEGEN_KERNELGEN_H
#define CGC_CODEGEN_KERNELGEN_H

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include <array>
#include <string>
#include <vector>

namespace cgc {

struct GeneratedKernel {
  /// Entry symbol; derived from the source so identical kernels share it.
  std::string name;
  /// The `extern "C" __global__` function (needs cudaPrelude()).
  std::string source;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  /// Arena byte offset and size of each pointer parameter, in parameter
  /// order: the inputs first, then the outputs.
  llvm::SmallVector<int64_t> argOffsets;
  llvm::SmallVector<int64_t> argBytes;
  unsigned numInputs = 0;
  /// The kernel keeps state across blocks in a static device array (the
  /// tile counters of split-K) that all its launches share: the graph
  /// must not run two of them at once.
  bool staticState = false;
};

/// Device helpers every generated kernel may use.
const char *cudaPrelude();

/// Generates the kernels of one fusion group, launched in order (most groups
/// need one; a scatter first copies its input, then applies the updates).
/// Reports unsupported ops with a diagnostic naming the ONNX node.
mlir::FailureOr<std::vector<GeneratedKernel>>
generateKernels(KernelOp kernel);

} // namespace cgc

#endif // CGC_CODEGEN_KERNELGEN_H
