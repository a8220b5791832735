//===- AssignPrecision.cpp - the precision of every product ---------------===//
//
// The user's precision policy as IR: which matrix products, attentions and
// convolutions round their inputs to tf32/f16/bf16 for the tensor cores.
// Decided per kernel, before the configs, so that a config (and a test) can
// read it and `--explain` can say it; the kernels between stay in their own
// types.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/Dialect/Cgc/Transforms/PrecisionPolicy.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace cgc {
#define GEN_PASS_DEF_CGCASSIGNPRECISION
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

int64_t lastDimOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape().back();
}

/// The product or convolution a matmul/conv group is built around.
Operation *productOf(KernelOp kernel) {
  for (Operation &op : kernel.getBody().front())
    if (isa<MatMulOp, GemmOp, ConvOp>(op))
      return &op;
  return nullptr;
}

struct CgcAssignPrecisionPass
    : cgc::impl::CgcAssignPrecisionBase<CgcAssignPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Type> requested = precisionType(precision, &getContext());
    if (failed(requested)) {
      module.emitError() << "precision '" << precision
                         << "' is none of fp32, tf32, fp16, bf16";
      return signalPassFailure();
    }
    llvm::StringSet<> used;
    module.walk([&](KernelOp kernel) {
      Type type;
      if (kernel.getKind() == KernelKind::attention)
        type = attentionPrecisionOf(kernel, *requested, used);
      else if (kernel.getKind() == KernelKind::matmul ||
               kernel.getKind() == KernelKind::conv)
        if (Operation *product = productOf(kernel))
          type = precisionOf(product, *requested, used);
      if (type)
        kernel.setPrecisionAttr(TypeAttr::get(type));
    });
    if (!*requested && !keepFp32.empty()) {
      module.emitWarning() << "keep-fp32 has no effect at precision fp32 "
                              "(products of f32 inputs stay f32)";
      return;
    }
    for (const std::string &entry : keepFp32)
      if (!used.contains(entry))
        module.emitWarning() << "keep-fp32 entry '" << entry
                             << "' names no matrix product or convolution "
                                "(an ONNX op type MatMul, Gemm, Conv or a "
                                "node name)";
  }

  /// The precision of an attention group: that of both its products
  /// (a keep-fp32 entry naming either keeps both in f32), where the
  /// tensor-core template's smallest block fits the target's shared memory.
  Type attentionPrecisionOf(KernelOp kernel, Type requested,
                            llvm::StringSet<> &used) const {
    SmallVector<MatMulOp, 2> products;
    kernel.getBody().walk([&](MatMulOp mm) { products.push_back(mm); });
    if (products.size() != 2)
      return Type();
    Type first = precisionOf(products[0], requested, used);
    Type second = precisionOf(products[1], requested, used);
    if (!first || first != second)
      return Type();
    int64_t headDim = lastDimOf(products[0].getLhs());
    int64_t valueDim = lastDimOf(products[1].getResult());
    int64_t sharedBytes = tensorCoreAttentionSharedBytes(
        kAttentionWarpRows * 8, kAttentionMinWarpKeys, kAttentionMinWarpKeys,
        headDim, valueDim, tensorCoreOperandBytes(first));
    if (sharedBytes > lookupTargetOrDefault(kernel).getStaticSharedBytes())
      return Type();
    return first;
  }

  /// The precision of one product (PrecisionPolicy.h); a keep-fp32 entry
  /// that pins it is recorded in `used`.
  Type precisionOf(Operation *product, Type requested,
                   llvm::StringSet<> &used) const {
    return productPrecision(product, requested, keepFp32, &used);
  }
};

} // namespace
