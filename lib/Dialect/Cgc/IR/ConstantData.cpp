//===- ConstantData.cpp - reading and writing the elements of weights ----===//

#include "cgc/Dialect/Cgc/IR/ConstantData.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

std::optional<ArrayRef<char>> cgc::rawConstantData(ConstantOp constant) {
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    return dense.getRawData();
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  if (!resource)
    return std::nullopt;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  return blob->getData();
}

std::optional<SmallVector<float>> cgc::constantFloats(ConstantOp constant) {
  auto type = cast<RankedTensorType>(constant.getOutput().getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    auto values = dense.getValues<float>();
    return SmallVector<float>(values.begin(), values.end());
  }
  std::optional<ArrayRef<char>> raw = rawConstantData(constant);
  int64_t count = type.getNumElements();
  if (!raw || raw->size() != size_t(count) * sizeof(float))
    return std::nullopt;
  SmallVector<float> floats(count);
  std::memcpy(floats.data(), raw->data(), count * sizeof(float));
  return floats;
}

Value cgc::createConstantLike(ConstantOp like, RankedTensorType type,
                              ArrayRef<char> bytes, StringRef suffix) {
  ElementsAttr attr;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(like.getValue()))
    attr = DenseResourceElementsAttr::get(
        type, (resource.getRawHandle().getKey() + suffix).str(),
        HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes));
  else
    attr = DenseElementsAttr::getFromRawBuffer(type, bytes);
  OpBuilder b(like);
  b.setInsertionPointAfter(like);
  return ConstantOp::create(b, like.getLoc(), type, attr).getOutput();
}
