//===- GroupWriter.h - the state of one fused kernel group ------*- C++ -*-===//
//
// Private to lib/Codegen. A `cgc.kernel` is written by the template of its
// kind (one file each in this folder: Elementwise, Matmul, Norm, Attention;
// conv, reduce and single groups take a per-op template of OpTemplates.h).
// They share a GroupWriter: the kernel's pointer parameters, the C
// variables its values are computed in, the launches written so far, and
// the element writer that inlines the group's elementwise ops as
// expressions (the prologue or epilogue fused around a template's anchor).
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CODEGEN_TEMPLATES_GROUPWRITER_H
#define CGC_LIB_CODEGEN_TEMPLATES_GROUPWRITER_H

#include "../KernelUtils.h"

#include "llvm/ADT/DenseMap.h"

#include <string>

namespace cgc {
namespace codegen {

/// One kernel group being written. As the ParamResolver of the templates
/// it names the parameters (inputs `in<k>` in order of first use, then the
/// group results `out<k>`) and, for a group anchored on one op's template,
/// runs the fused prologue where the template reads its input and the
/// fused epilogue where it stores its result.
class GroupWriter : public ParamResolver {
public:
  explicit GroupWriter(KernelOp kernel)
      : kernel(kernel), config(kernel.getConfigAttr()) {}

  KernelOp kernel;
  /// How the group is written (--cgc-select-kernel-config): the templates
  /// read their tiles, threads and options from it.
  KernelConfigAttr config;
  /// The external values read, with their parameter names, in order.
  llvm::SmallVector<std::pair<mlir::Value, std::string>> inputs;
  /// The C variable that holds each value computed so far (`v<k>`).
  llvm::DenseMap<mlir::Value, std::string> vars;
  llvm::SmallVector<Launch> launches;

  /// The op a `conv`, `reduce` or `single` group is anchored on, and the
  /// elementwise ops fused before it (computing its input) and after it.
  mlir::Value anchor;
  llvm::SmallVector<mlir::Operation *> prologue, epilogue;
  /// Set when store() could not write the epilogue (already reported).
  bool epilogueFailed = false;
  /// Results writeElements does not store (a library's f32 product that
  /// only its narrow copy is read of).
  llvm::SmallPtrSet<mlir::Value, 2> unstored;

  // ParamResolver.
  std::string input(mlir::Value v) override { return inputParam(v); }
  std::string output(mlir::Value result) override;
  std::string read(mlir::Value v, llvm::StringRef index) override;
  bool needed(mlir::Value result) override;
  std::string store(mlir::Value result, llvm::StringRef value,
                    llvm::StringRef index) override;

  /// The group's body block and the values it returns (the kernel results).
  mlir::Block &body() { return kernel.getBody().front(); }
  mlir::OperandRange results() { return body().getTerminator()->getOperands(); }
  /// The shape of the group's first result.
  llvm::ArrayRef<int64_t> groupShape() { return shapeOf(results()[0]); }

  /// Pointer parameter for an external input (deduplicated).
  std::string inputParam(mlir::Value v);

  /// The flat index into `shape` of the element of the group output whose
  /// flat index is `index`, `shape` broadcasting to `outShape` (numpy).
  static std::string broadcastIndex(llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<int64_t> outShape,
                                    llvm::StringRef index);

  /// Expression reading external value `v` at the element of the group
  /// output whose flat index is `index` (numpy broadcasting); a splat
  /// constant is inlined as a literal.
  std::string load(mlir::Value v, llvm::ArrayRef<int64_t> outShape,
                   llvm::StringRef index);

  /// An error unless `v` has a static shape and a CUDA element type.
  mlir::LogicalResult checkType(mlir::Value v, mlir::Operation *where);

  /// Emits the element code of `ops` at flat output index `index`, given
  /// the variables already known (anchor), then (with `storeResults`)
  /// stores the kernel results.
  mlir::LogicalResult writeElements(llvm::ArrayRef<mlir::Operation *> ops,
                                    llvm::ArrayRef<int64_t> outShape,
                                    llvm::StringRef index, std::string &out,
                                    bool storeResults = true);

  /// A device lambda `cgcInput(i)` computing the prologue at a flat index
  /// of its output `input`.
  mlir::FailureOr<std::string> prologueLambda(mlir::Value input);

private:
  mlir::Value prologueOutput() { return prologue.back()->getResult(0); }
};

/// The C expression of one elementwise op over the expressions of its
/// operands (Elementwise.cpp); an error for ops without one.
mlir::FailureOr<std::string>
elementExpression(mlir::Operation *op, llvm::ArrayRef<std::string> operands);

//===----------------------------------------------------------------------===//
// The group templates, one per kernel kind
//===----------------------------------------------------------------------===//

/// `elementwise` (Elementwise.cpp): one thread per output element.
mlir::LogicalResult
writeElementwiseGroup(GroupWriter &w, llvm::ArrayRef<mlir::Operation *> ops);

/// `matmul` (Matmul.cpp): the tiled GEMM template or a warp per output.
mlir::LogicalResult writeMatmulGroup(GroupWriter &w,
                                     llvm::ArrayRef<mlir::Operation *> ops);

/// `cublaslt_matmul` (Matmul.cpp): cuBLASLt computes the product (a graph
/// node the lowering adds); this writes the rest of the group's epilogue,
/// one thread per element rewriting the product's buffer in place, or no
/// launch when there is none.
mlir::LogicalResult
writeLibraryMatmulEpilogue(GroupWriter &w,
                           llvm::ArrayRef<mlir::Operation *> ops);

/// `cudnn_conv` (Elementwise.cpp): cuDNN computes the convolution; this
/// adds its bias and writes the rest of the group's epilogue in place, or
/// nothing when there is neither.
mlir::LogicalResult
writeLibraryConvEpilogue(GroupWriter &w, llvm::ArrayRef<mlir::Operation *> ops);

/// The epilogue of a library call (Elementwise.cpp): one thread per element
/// reads `d` back from the group's result buffer, where the library wrote
/// it, adds `channelBias` (a [C] bias of an NC... tensor, or of an N...C
/// one where `channelsLast`) if given, computes `epilogue` and stores the
/// result over it. No launch when there is neither.
mlir::LogicalResult
writeInPlaceEpilogue(GroupWriter &w, mlir::Value d,
                     llvm::ArrayRef<mlir::Operation *> epilogue,
                     mlir::Value channelBias = {}, bool channelsLast = false);

/// `norm` (Norm.cpp): one block per normalized row.
mlir::LogicalResult writeNormGroup(GroupWriter &w,
                                   llvm::ArrayRef<mlir::Operation *> ops);

/// `attention` (Attention.cpp): one block per batch index and query rows.
mlir::LogicalResult writeAttentionGroup(GroupWriter &w,
                                        llvm::ArrayRef<mlir::Operation *> ops);

/// `conv`, `reduce` and `single` (GroupWriter.cpp): the per-op template of
/// the anchor op, with the prologue and epilogue fused around it.
mlir::LogicalResult writeAnchoredGroup(GroupWriter &w,
                                       llvm::ArrayRef<mlir::Operation *> ops);

} // namespace codegen
} // namespace cgc

#endif // CGC_LIB_CODEGEN_TEMPLATES_GROUPWRITER_H
