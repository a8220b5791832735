//===- KernelUtils.cpp - helpers shared by the kernel writers -------------===//

#include "KernelUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace cgc {
namespace codegen {

bool isNarrowFloat(Type t) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType, Float8E8M0FNUType, Float4E2M1FNType>(t);
}

std::string cType(Type t) {
  if (t.isF32() || loadsAsFloat(t))
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(t)) {
    // int4/uint4/int2/uint2 hold one value a byte.
    if (llvm::is_contained({2u, 4u}, i.getWidth()))
      return i.isUnsigned() ? "uint8_t" : "int8_t";
    if (!llvm::is_contained({8u, 16u, 32u, 64u}, i.getWidth()))
      return "";
    std::string base = "int" + std::to_string(i.getWidth()) + "_t";
    return i.isUnsigned() ? "u" + base : base;
  }
  return "";
}

std::string storageType(Type t) {
  if (t.isF16())
    return "cgc_f16";
  if (t.isBF16())
    return "cgc_bf16";
  if (isNarrowFloat(t)) {
    std::string name;
    llvm::raw_string_ostream(name) << t;
    return "cgc_" + llvm::StringRef(name).lower();
  }
  return cType(t);
}

bool loadsAsFloat(Type t) { return t.isF16() || t.isBF16() || isNarrowFloat(t); }

std::string accType(Type t) {
  if (t.isF32() || loadsAsFloat(t))
    return "float";
  if (t.isF64())
    return "double";
  return "long long";
}

Type elementType(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string literal(double value, Type type) {
  std::string c = cType(type);
  if (std::isnan(value))
    return "((" + c + ")__longlong_as_double(0x7ff8000000000000ll))";
  if (std::isinf(value))
    return std::string("((") + c + ")" + (value < 0 ? "-" : "") +
           "__longlong_as_double(0x7ff0000000000000ll))";
  return "((" + c + ")" + llvm::formatv("{0:e17}", value).str() + ")";
}

std::string doubleLiteral(double value) {
  if (std::isnan(value))
    return "__longlong_as_double(0x7ff8000000000000ll)";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") +
           "__longlong_as_double(0x7ff0000000000000ll)";
  return llvm::formatv("{0:e17}", value).str();
}

std::string ll(int64_t value) {
  // The most negative value has no positive literal of the same type.
  if (value == INT64_MIN)
    return "(-9223372036854775807ll - 1)";
  return std::to_string(value) + "ll";
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

std::string coords(StringRef flat, ArrayRef<int64_t> shape, StringRef name) {
  if (shape.empty())
    return "";
  std::string rest = name.str() + "_r";
  std::string s = "  long long " + rest + " = " + flat.str() + ";\n";
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    std::string c = name.str() + std::to_string(d);
    if (d == 0) {
      s += "  const long long " + c + " = " + rest + ";\n";
    } else {
      s += "  const long long " + c + " = " + rest + " % " + ll(shape[d]) +
           "; " + rest + " /= " + ll(shape[d]) + ";\n";
    }
  }
  s += "  (void)" + rest + ";\n";
  return s;
}

std::string linearIndex(ArrayRef<std::string> coord, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides = stridesOf(shape);
  SmallVector<std::string> terms;
  for (auto [d, c] : llvm::enumerate(coord)) {
    if (shape[d] == 1)
      continue;
    terms.push_back(strides[d] == 1 ? "(" + c + ")"
                                    : "(" + c + ") * " + ll(strides[d]));
  }
  return terms.empty() ? std::string("0ll") : llvm::join(terms, " + ");
}

} // namespace codegen
} // namespace cgc
