//===- KernelUtils.h - helpers shared by the kernel writers -----*- C++ -*-===//
//
// Private to lib/Codegen: type names, literals and index arithmetic that the
// group templates (Templates/GroupWriter.h) and the per-op templates
// (Templates/OpTemplates.h) both emit.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CODEGEN_KERNELUTILS_H
#define CGC_LIB_CODEGEN_KERNELUTILS_H

#include "cgc/Codegen/CType.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"

#include <array>

#include <string>

namespace cgc {
namespace codegen {

/// Threads per block of the per-op templates (OpTemplates.h), which are
/// written for that many; kernel configs say 256 too (their verifier
/// refuses other counts until a template takes them).
constexpr int64_t kThreads = kTemplateThreads;

/// The type `t` is stored as in memory (pointer parameters): cgc_f16,
/// cgc_bf16 and cgc_f8e4m3fn ... (prelude structs that convert to float at
/// loads and round to nearest even at stores) for the floats narrower than
/// 32 bits, else cType(t).
std::string storageType(mlir::Type t);

/// Whether `t` is a float narrower than 32 bits: stored in a prelude struct
/// that loads convert to float.
bool loadsAsFloat(mlir::Type t);

/// Whether `t` is one of the 8- and 4-bit floats.
bool isNarrowFloat(mlir::Type t);

/// The accumulator type for sums and products of `t`: float for f32 and
/// the narrower floats, double for f64, long long for integers and bool.
std::string accType(mlir::Type t);

mlir::Type elementType(mlir::Value v);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// A C literal of `type` for `value` (NaN and infinities included).
std::string literal(double value, mlir::Type type);
/// A double literal that round-trips exactly.
std::string doubleLiteral(double value);
/// `value` as a long long literal.
std::string ll(int64_t value);

/// Row-major strides of `shape`, in elements.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

/// Declares `const long long NAME0, NAME1, ...` as the coordinates of the
/// flat index `flat` in `shape`.
std::string coords(llvm::StringRef flat, llvm::ArrayRef<int64_t> shape,
                   llvm::StringRef name);

/// `sum_d coord[d] * stride[d]` for the row-major layout of `shape`
/// ("0ll" for rank 0); terms of dims of size 1 are left out.
std::string linearIndex(llvm::ArrayRef<std::string> coord,
                        llvm::ArrayRef<int64_t> shape);

/// One kernel launch of a group: the body of an `extern "C" __global__`
/// function whose parameters are the group's inputs and outputs.
struct Launch {
  std::string body;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {kThreads, 1, 1};
  /// Blocks a multiprocessor must hold at once (the second argument of
  /// __launch_bounds__: ptxas caps the registers a thread to fit them).
  int64_t minBlocks = 1;
  /// The kernel keeps state across its blocks in a static device array
  /// (split-K's tile counters), which every launch of it shares: two
  /// launches of it must not run at once.
  bool staticState = false;
};

/// Maps the values a kernel reads and the results it writes to the names of
/// its pointer parameters.
class ParamResolver {
public:
  virtual ~ParamResolver() = default;
  /// The parameter that holds `v`, added on first use.
  virtual std::string input(mlir::Value v) = 0;
  /// The parameter of the group output that holds `result`, or "" when the
  /// result is not used after the group (it need not be written).
  virtual std::string output(mlir::Value result) = 0;
  /// The element `index` of input `v`. A group with a prologue (elementwise
  /// producers of a reduction's input) computes it instead of loading it.
  virtual std::string read(mlir::Value v, llvm::StringRef index) {
    std::string load = input(v) + "[" + index.str() + "]";
    return loadsAsFloat(elementType(v)) ? "((float)" + load + ")" : load;
  }
  /// Whether a template must compute `result` at all: it is an output, or
  /// the group fuses an epilogue onto it.
  virtual bool needed(mlir::Value result) { return !output(result).empty(); }
  /// Code that stores `value`, the element `index` of `result`. A group
  /// with an epilogue (conv + bias/activation/residual) runs its fused
  /// elementwise ops here before storing what leaves the group.
  virtual std::string store(mlir::Value result, llvm::StringRef value,
                            llvm::StringRef index) {
    std::string o = output(result);
    return o.empty() ? "" : "  " + o + "[" + index.str() + "] = " +
                                value.str() + ";\n";
  }
};

/// Writes the launches of a `single` kernel holding `op` (its per-op
/// template, Templates/OpTemplates.cpp) as the kernel's `config` says.
/// Unsupported ops, types or attribute combinations get an error naming
/// the ONNX node.
mlir::FailureOr<llvm::SmallVector<Launch>>
writeSingleOpKernel(mlir::Operation *op, ParamResolver &params,
                    KernelConfigAttr config);

} // namespace codegen
} // namespace cgc

#endif // CGC_LIB_CODEGEN_KERNELUTILS_H
