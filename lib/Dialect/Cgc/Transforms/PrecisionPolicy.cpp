//===- PrecisionPolicy.cpp - the user's precision options as predicates ---===//

#include "cgc/Dialect/Cgc/Transforms/PrecisionPolicy.h"

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace {

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// The ONNX node an op was imported from (its NameLoc), or "".
StringRef nodeNameOf(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().getValue();
  return "";
}

} // namespace

FailureOr<Type> cgc::precisionType(StringRef name, MLIRContext *context) {
  if (name == "fp32")
    return Type();
  if (name == "tf32")
    return Type(FloatTF32Type::get(context));
  if (name == "fp16")
    return Type(Float16Type::get(context));
  if (name == "bf16")
    return Type(BFloat16Type::get(context));
  return failure();
}

StringRef cgc::onnxOpTypeOf(Operation *product) {
  // The cgc op's name is the ONNX type's lowercase form.
  return TypeSwitch<Operation *, StringRef>(product)
      .Case<MatMulOp>([](auto) { return "MatMul"; })
      .Case<GemmOp>([](auto) { return "Gemm"; })
      .Case<ConvOp>([](auto) { return "Conv"; })
      .Default([](auto) { return ""; });
}

bool cgc::keptInFp32(Operation *product, ArrayRef<std::string> keepFp32,
                     llvm::StringSet<> *used) {
  StringRef opType = onnxOpTypeOf(product), node = nodeNameOf(product);
  for (const std::string &entry : keepFp32)
    if (StringRef(entry).equals_insensitive(opType) || entry == node) {
      if (used)
        used->insert(entry);
      return true;
    }
  return false;
}

Type cgc::productPrecision(Operation *product, Type requested,
                           ArrayRef<std::string> keepFp32,
                           llvm::StringSet<> *used) {
  Type a = elementTypeOf(product->getOperand(0));
  Type b = elementTypeOf(product->getOperand(1));
  if (a == b && (a.isF16() || a.isBF16()))
    return a;
  if (!requested || !a.isF32() || !b.isF32() ||
      keptInFp32(product, keepFp32, used))
    return Type();
  return requested;
}
