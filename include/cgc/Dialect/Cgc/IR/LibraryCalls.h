//===- LibraryCalls.h - kernel groups as library calls take them -*- C++ -*-===//
//
// A `matmul` kernel group may run as a cuBLASLt call (kernel strategy
// `cublaslt_matmul`) and a `conv` group as a cuDNN call (`cudnn_conv`)
// instead of a generated kernel: the product (with alpha, a bias row and
// beta * C) or the convolution (with its bias) in the library, and the
// rest of the group's epilogue (activations, residuals, ...) as an
// elementwise kernel that rewrites the library's output in place. Which
// groups qualify, and the problem each library is given, is decided here
// once, for the config selection, the kernel verifier and the lowering
// alike.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_LIBRARYCALLS_H
#define CGC_DIALECT_CGC_IR_LIBRARYCALLS_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include <algorithm>
#include <string>

namespace cgc {

/// D = alpha * op(A) x op(B) + beta * C + bias over `batch` row-major
/// matrices (cgraph.cublaslt_matmul_node).
struct LibraryMatmul {
  mlir::Operation *product = nullptr; ///< the cgc.matmul or cgc.gemm
  mlir::Value a, b;
  mlir::Value c;    ///< beta * C with C of D's shape; null when absent
  mlir::Value bias; ///< a row [N] added to every row; null when absent
  int64_t m = 1, n = 1, k = 1, batch = 1;
  bool transA = false, transB = false;
  /// Elements from one matrix of the batch to the next (0: one matrix
  /// serves every batch index).
  int64_t strideA = 0, strideB = 0, strideD = 0;
  double alpha = 1.0, beta = 0.0;
  /// The value cuBLASLt's D holds: the product, or the last add of a row
  /// (bias) or of a tensor of D's shape (beta = 1) that it absorbed.
  mlir::Value d;
  /// The group's ops after `d`, all elementwise and computing D's shape and
  /// type: the in-place epilogue kernel's work (empty: none). Last, where
  /// --cgc-narrow-storage gave the group a second result, the cast to its
  /// 16-bit copy, which the same kernel writes.
  llvm::SmallVector<mlir::Operation *> epilogue;
  int64_t multiplyAdds() const { return m * n * k * batch; }
};

/// Products of at least this many multiply-adds go to cuBLASLt under
/// --cublaslt=auto (and keep their layer norm out of the group, which the
/// library cannot fuse). Measured on the H200 (docs/kernels.md): every BERT
/// and ViT product at batch 8 (1024-1576 rows, 151-905 M multiply-adds) is
/// faster in cuBLASLt in every precision, while at batch 1 (128-197 rows,
/// up to 116 M) and on GPT and the MLP the generated kernels win: their
/// fused epilogues, layer norms and programmatic launches outweigh the
/// library's faster main loop.
constexpr int64_t kLibraryMinMultiplyAdds = int64_t(1) << 27;

/// Whether `policy` names a library policy: auto, always or never.
inline bool isLibraryPolicy(llvm::StringRef policy) {
  return policy == "auto" || policy == "always" || policy == "never";
}

/// Whether --cgc-select-kernel-config's `cublaslt` policy (auto, always,
/// never) gives cuBLASLt a product of `multiplyAdds` that it can compute:
/// `always`, or `auto` from kLibraryMinMultiplyAdds on. The passes before
/// the selection (fuse, narrow-storage) predict it with this.
inline bool cublasltPolicyTakes(llvm::StringRef policy, int64_t multiplyAdds) {
  return policy == "always" ||
         (policy == "auto" && multiplyAdds >= kLibraryMinMultiplyAdds);
}

/// How cuBLASLt computes `kernel`, or the reason it cannot (in `reason`,
/// a phrase: "its layer norm is fused before the product").
mlir::FailureOr<LibraryMatmul> describeLibraryMatmul(KernelOp kernel,
                                                     std::string &reason);

/// A 2-d convolution as cuDNN computes it (cgraph.cudnn_conv_node):
/// y = conv(x, w) + bias, then the epilogue kernel for the rest.
struct LibraryConv {
  ConvOp conv;
  /// [N, C, H, W], [K, C / groups, R, S], [N, K, P, Q], in this order
  /// whether the tensors are stored channels first (NCHW, KCRS) or, with
  /// `channelsLast`, last (NHWC, KRSC).
  llvm::SmallVector<int64_t, 4> input, filter, output;
  bool channelsLast = false;
  /// The type cuDNN reads and writes: the convolution's own, or the 16-bit
  /// type a group split by --cgc-narrow-conv-outputs stores its input,
  /// filter and output in (its only result; no bias, no epilogue).
  mlir::Type type;
  /// Per spatial dim: padding (the same both sides), stride, dilation.
  llvm::SmallVector<int64_t, 2> pads, strides, dilations;
  int64_t groups = 1;
  /// The group's ops after the convolution (elementwise, of its shape and
  /// type; last, a 16-bit copy as for LibraryMatmul): the in-place epilogue
  /// kernel's work.
  llvm::SmallVector<mlir::Operation *> epilogue;
  int64_t multiplyAdds() const;
};

/// Dense convolutions (one group) on tensor cores with at least
/// kLibraryConvMinChannels input and output channels and at least
/// kLibraryConvMinMultiplyAdds multiply-adds go to cuDNN under
/// --cudnn=auto. Measured on the H200 (docs/kernels.md): ResNet-50's
/// convolutions (64 channels or more, 12.8 M multiply-adds or more at batch
/// 1) run 2.1-2.4x faster in cuDNN in tf32 and bf16, and leaving its 1x1
/// ones generated (a size rule of 2^26) cost 24%; MobileNetV2's and
/// SqueezeNet's convolutions of few channels lose in cuDNN (1.2-2x) even
/// where large at batch 8: a cuDNN node is three launches (convolution,
/// bias, epilogue) where cgc's is one fused kernel. In f32 on FMAs cgc's
/// kernels win at batch 1.
constexpr int64_t kLibraryConvMinMultiplyAdds = int64_t(1) << 23;
constexpr int64_t kLibraryConvMinChannels = 64;

/// Whether --cudnn=auto takes a convolution of `groups` groups, the filter
/// dims `filter` ([K, C / groups, ...]) and `multiplyAdds`, on tensor cores
/// or not. --cgc-select-kernel-config decides by it, and
/// --cgc-channels-last predicts that decision with it.
inline bool cudnnAutoTakes(int64_t groups, bool tensorCores,
                           llvm::ArrayRef<int64_t> filter,
                           int64_t multiplyAdds) {
  return groups == 1 && tensorCores &&
         std::min(filter[0], filter[1]) >= kLibraryConvMinChannels &&
         multiplyAdds >= kLibraryConvMinMultiplyAdds;
}

/// Whether --cgc-select-kernel-config will give conv group `kernel` to
/// cuDNN under its `cudnn` policy (auto, always, never): the same rule, for
/// the passes before it that predict the choice (a tuning cache may still
/// decide otherwise, which costs speed, never a value). The second form
/// takes the group's description, made already.
bool cudnnWillTake(KernelOp kernel, llvm::StringRef cudnn);
bool cudnnWillTake(KernelOp kernel, const LibraryConv &p,
                   llvm::StringRef cudnn);

/// Whether a cuDNN node can compute `conv` itself (2-d, one type,
/// symmetric padding), or the reason it cannot; describeLibraryConv checks
/// the rest of its group, and --cgc-channels-last asks this before fusion.
mlir::LogicalResult cudnnCanConvolve(ConvOp conv, std::string &reason);

/// How cuDNN computes `kernel`, or the reason it cannot.
mlir::FailureOr<LibraryConv> describeLibraryConv(KernelOp kernel,
                                                 std::string &reason);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_LIBRARYCALLS_H
