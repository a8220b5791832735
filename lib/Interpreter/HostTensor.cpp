//===- HostTensor.cpp - host tensors of every cgc element type ------------===//

#include "cgc/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cgc::interp;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

std::optional<Scalar> cgc::interp::scalarOf(Type type) {
  if (type.isF16())
    return Scalar::F16;
  if (type.isBF16())
    return Scalar::BF16;
  if (type.isF32())
    return Scalar::F32;
  if (type.isF64())
    return Scalar::F64;
  if (isa<Float8E4M3FNType>(type))
    return Scalar::F8E4M3FN;
  if (isa<Float8E4M3FNUZType>(type))
    return Scalar::F8E4M3FNUZ;
  if (isa<Float8E5M2Type>(type))
    return Scalar::F8E5M2;
  if (isa<Float8E5M2FNUZType>(type))
    return Scalar::F8E5M2FNUZ;
  if (isa<Float8E8M0FNUType>(type))
    return Scalar::F8E8M0FNU;
  if (isa<Float4E2M1FNType>(type))
    return Scalar::F4E2M1FN;
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType)
    return std::nullopt;
  bool isUnsignedType = intType.isUnsigned();
  switch (intType.getWidth()) {
  case 1:
    return Scalar::I1;
  case 2:
    return isUnsignedType ? Scalar::U2 : Scalar::I2;
  case 4:
    return isUnsignedType ? Scalar::U4 : Scalar::I4;
  case 8:
    return isUnsignedType ? Scalar::U8 : Scalar::I8;
  case 16:
    return isUnsignedType ? Scalar::U16 : Scalar::I16;
  case 32:
    return isUnsignedType ? Scalar::U32 : Scalar::I32;
  case 64:
    return isUnsignedType ? Scalar::U64 : Scalar::I64;
  default:
    return std::nullopt;
  }
}

unsigned cgc::interp::scalarBytes(Scalar s) {
  switch (s) {
  case Scalar::F16:
  case Scalar::BF16:
  case Scalar::I16:
  case Scalar::U16:
    return 2;
  case Scalar::F32:
  case Scalar::I32:
  case Scalar::U32:
    return 4;
  case Scalar::F64:
  case Scalar::I64:
  case Scalar::U64:
    return 8;
  default:
    return 1;
  }
}

unsigned cgc::interp::subByteBits(Scalar s) {
  switch (s) {
  case Scalar::I2:
  case Scalar::U2:
    return 2;
  case Scalar::I4:
  case Scalar::U4:
    return 4;
  default:
    return 0;
  }
}

// The codes are TensorProto.DataType's (onnx.proto); they never change.
Type cgc::interp::elementTypeOfOnnx(MLIRContext *ctx, int32_t onnxCode) {
  Builder b(ctx);
  switch (onnxCode) {
  case 1: return b.getF32Type();
  case 2: return b.getIntegerType(8, false);
  case 3: return b.getIntegerType(8);
  case 4: return b.getIntegerType(16, false);
  case 5: return b.getIntegerType(16);
  case 6: return b.getIntegerType(32);
  case 7: return b.getIntegerType(64);
  case 9: return b.getI1Type();
  case 10: return b.getF16Type();
  case 11: return b.getF64Type();
  case 12: return b.getIntegerType(32, false);
  case 13: return b.getIntegerType(64, false);
  case 16: return b.getBF16Type();
  case 17: return b.getType<Float8E4M3FNType>();
  case 18: return b.getType<Float8E4M3FNUZType>();
  case 19: return b.getType<Float8E5M2Type>();
  case 20: return b.getType<Float8E5M2FNUZType>();
  case 21: return b.getIntegerType(4, false);
  case 22: return b.getIntegerType(4);
  case 23: return b.getType<Float4E2M1FNType>();
  case 24: return b.getType<Float8E8M0FNUType>();
  case 25: return b.getIntegerType(2, false);
  case 26: return b.getIntegerType(2);
  default: return nullptr;
  }
}

int32_t cgc::interp::onnxCodeOf(Scalar s) {
  switch (s) {
  case Scalar::F32: return 1;
  case Scalar::U8: return 2;
  case Scalar::I8: return 3;
  case Scalar::U16: return 4;
  case Scalar::I16: return 5;
  case Scalar::I32: return 6;
  case Scalar::I64: return 7;
  case Scalar::I1: return 9;
  case Scalar::F16: return 10;
  case Scalar::F64: return 11;
  case Scalar::U32: return 12;
  case Scalar::U64: return 13;
  case Scalar::BF16: return 16;
  case Scalar::F8E4M3FN: return 17;
  case Scalar::F8E4M3FNUZ: return 18;
  case Scalar::F8E5M2: return 19;
  case Scalar::F8E5M2FNUZ: return 20;
  case Scalar::U4: return 21;
  case Scalar::I4: return 22;
  case Scalar::F4E2M1FN: return 23;
  case Scalar::F8E8M0FNU: return 24;
  case Scalar::U2: return 25;
  case Scalar::I2: return 26;
  }
  return 0;
}

bool cgc::interp::unpackSubByte(StringRef packed, unsigned bits, bool isSigned,
                                int64_t count, std::string &unpacked) {
  unsigned perByte = 8 / bits;
  if ((int64_t)packed.size() != (count + perByte - 1) / perByte)
    return false;
  unpacked.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    unsigned shift = (i % perByte) * bits;
    uint8_t value = ((uint8_t)packed[i / perByte] >> shift) & ((1u << bits) - 1);
    if (isSigned && (value >> (bits - 1)))
      value |= (uint8_t)(0xffu << bits); // sign-extend to the byte
    unpacked[i] = (char)value;
  }
  return true;
}

std::string cgc::interp::packSubByte(ArrayRef<uint8_t> unpacked,
                                     unsigned bits) {
  unsigned perByte = 8 / bits;
  std::string packed((unpacked.size() + perByte - 1) / perByte, '\0');
  for (size_t i = 0; i < unpacked.size(); ++i)
    packed[i / perByte] |=
        (char)((unpacked[i] & ((1u << bits) - 1)) << ((i % perByte) * bits));
  return packed;
}

float cgc::interp::halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) {
    float magnitude = std::ldexp((float)mantissa, -24); // zero or subnormal
    return sign ? -magnitude : magnitude;
  }
  uint32_t bits = exponent == 31
                      ? sign | 0x7f800000u | (mantissa << 13)
                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t cgc::interp::floatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t magnitude = x & 0x7fffffff;
  if (magnitude >= 0x7f800000) // inf or NaN (keep NaN quiet)
    return sign | 0x7c00 |
           (magnitude > 0x7f800000 ? 0x200 | ((magnitude >> 13) & 0x3ff) : 0);
  if (magnitude >= 0x477ff000) // >= 65520 rounds to infinity
    return sign | 0x7c00;
  if (magnitude < 0x38800000) { // below 2^-14: a subnormal half
    float v;
    std::memcpy(&v, &magnitude, 4);
    return sign | (uint16_t)std::nearbyint(v * 16777216.0f);
  }
  uint32_t mantissa = magnitude & 0x7fffff;
  uint32_t half = (((magnitude >> 23) - 112) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | (uint16_t)half;
}

float cgc::interp::bfloat16ToFloat(uint16_t bits) {
  uint32_t x = (uint32_t)bits << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t cgc::interp::floatToBfloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor::HostTensor(Type dtype, ArrayRef<int64_t> shape)
    : dtype(dtype), scalar(*scalarOf(dtype)), shape(shape) {
  bytes.assign((size_t)numElements() * elementBytes(), 0);
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {
template <typename T> T load(const std::vector<uint8_t> &bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T> void store(std::vector<uint8_t> &bytes, int64_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

/// Float to int64 truncating toward zero; saturates, NaN gives 0.
int64_t floatToI64(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return (int64_t)v;
}

uint64_t floatToU64(double v) {
  if (std::isnan(v))
    return 0;
  if (v < 0)
    return (uint64_t)floatToI64(v);
  if (v >= 18446744073709551615.0)
    return std::numeric_limits<uint64_t>::max();
  return (uint64_t)v;
}
} // namespace

namespace {
/// A float narrower than 16 bits, held as its bit pattern in one byte.
double narrowToDouble(Type dtype, uint8_t bits) {
  // float8e8m0 is 2^(bits - 127) and 0xff is NaN; decoded here because
  // APFloat's conversion of its NaN to double gives infinity.
  if (isa<Float8E8M0FNUType>(dtype))
    return bits == 0xff ? std::numeric_limits<double>::quiet_NaN()
                        : std::ldexp(1.0, (int)bits - 127);
  const llvm::fltSemantics &semantics =
      cast<FloatType>(dtype).getFloatSemantics();
  APFloat v(semantics, APInt(APFloat::getSizeInBits(semantics), bits));
  bool lost;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToDouble();
}

/// Rounds to the nearest value of a narrow float type (APFloat's overflow:
/// infinity where the type has one, else NaN where it has one, else its
/// largest value; a NaN without a NaN in the type gives negative zero, as
/// ml_dtypes does).
uint8_t doubleToNarrow(Type dtype, double value) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(dtype).getFloatSemantics();
  if (std::isnan(value) && !APFloat::semanticsHasNaN(semantics))
    return (uint8_t)APFloat::getZero(semantics, /*Negative=*/true)
        .bitcastToAPInt()
        .getZExtValue();
  APFloat v(value);
  bool lost;
  v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
  return (uint8_t)v.bitcastToAPInt().getZExtValue();
}

/// An integer wrapped to `bits` (2 or 4), sign-extended when signed.
uint8_t wrapSubByte(int64_t value, unsigned bits, bool isSigned) {
  uint8_t low = (uint8_t)value & ((1u << bits) - 1);
  if (isSigned && (low >> (bits - 1)))
    low |= (uint8_t)(0xffu << bits);
  return low;
}
} // namespace

double HostTensor::getF(int64_t i) const {
  if (isNarrowFloat(scalar))
    return narrowToDouble(dtype, bytes[i]);
  switch (scalar) {
  case Scalar::F16:
    return halfToFloat(load<uint16_t>(bytes, i));
  case Scalar::BF16:
    return bfloat16ToFloat(load<uint16_t>(bytes, i));
  case Scalar::F32:
    return load<float>(bytes, i);
  case Scalar::F64:
    return load<double>(bytes, i);
  case Scalar::I1:
    return bytes[i] != 0;
  case Scalar::U64:
    return (double)load<uint64_t>(bytes, i);
  default:
    return (double)getI(i);
  }
}

int64_t HostTensor::getI(int64_t i) const {
  switch (scalar) {
  case Scalar::I1:
    return bytes[i] != 0;
  case Scalar::I2:
  case Scalar::I4:
  case Scalar::I8:
    return load<int8_t>(bytes, i);
  case Scalar::I16:
    return load<int16_t>(bytes, i);
  case Scalar::I32:
    return load<int32_t>(bytes, i);
  case Scalar::I64:
    return load<int64_t>(bytes, i);
  case Scalar::U2:
  case Scalar::U4:
  case Scalar::U8:
    return load<uint8_t>(bytes, i);
  case Scalar::U16:
    return load<uint16_t>(bytes, i);
  case Scalar::U32:
    return load<uint32_t>(bytes, i);
  case Scalar::U64:
    return (int64_t)load<uint64_t>(bytes, i);
  default:
    return floatToI64(getF(i));
  }
}

uint64_t HostTensor::getU(int64_t i) const {
  if (isFloat(scalar))
    return floatToU64(getF(i));
  if (scalar == Scalar::U64)
    return load<uint64_t>(bytes, i);
  return (uint64_t)getI(i);
}

void HostTensor::setF(int64_t i, double value) {
  if (isNarrowFloat(scalar)) {
    bytes[i] = doubleToNarrow(dtype, value);
    return;
  }
  switch (scalar) {
  case Scalar::F16:
    return store<uint16_t>(bytes, i, floatToHalf((float)value));
  case Scalar::BF16:
    return store<uint16_t>(bytes, i, floatToBfloat16((float)value));
  case Scalar::F32:
    return store<float>(bytes, i, (float)value);
  case Scalar::F64:
    return store<double>(bytes, i, value);
  case Scalar::I1:
    bytes[i] = value != 0;
    return;
  case Scalar::U64:
    return store<uint64_t>(bytes, i, floatToU64(value));
  default:
    return setI(i, floatToI64(value));
  }
}

void HostTensor::setI(int64_t i, int64_t value) {
  switch (scalar) {
  case Scalar::I1:
    bytes[i] = value != 0;
    return;
  case Scalar::I2:
  case Scalar::I4:
  case Scalar::U2:
  case Scalar::U4:
    bytes[i] = wrapSubByte(value, subByteBits(scalar), isSigned(scalar));
    return;
  case Scalar::I8:
  case Scalar::U8:
    bytes[i] = (uint8_t)value;
    return;
  case Scalar::I16:
  case Scalar::U16:
    return store<uint16_t>(bytes, i, (uint16_t)value);
  case Scalar::I32:
  case Scalar::U32:
    return store<uint32_t>(bytes, i, (uint32_t)value);
  case Scalar::I64:
  case Scalar::U64:
    return store<uint64_t>(bytes, i, (uint64_t)value);
  default:
    return setF(i, (double)value);
  }
}

void HostTensor::setU(int64_t i, uint64_t value) {
  if (isFloat(scalar))
    return setF(i, (double)value);
  if (scalar == Scalar::I1) {
    bytes[i] = value != 0;
    return;
  }
  setI(i, (int64_t)value);
}

std::string HostTensor::typeString() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "tensor<";
  for (int64_t d : shape)
    os << d << "x";
  os << dtype << ">";
  return s;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

FailureOr<HostTensor> cgc::interp::tensorFromAttr(ElementsAttr attr,
                                                  std::string &error) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<Scalar> scalar = scalarOf(type.getElementType());
  if (!scalar || !type.hasStaticShape()) {
    llvm::raw_string_ostream(error)
        << "unsupported constant type " << attr.getType();
    return failure();
  }
  HostTensor t(type.getElementType(), type.getShape());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob) {
      error = "the data of resource '" +
              resource.getRawHandle().getKey().str() +
              "' is missing (was it printed with elided resources?)";
      return failure();
    }
    ArrayRef<char> data = blob->getData();
    if (data.size() != t.bytes.size()) {
      error = "resource '" + resource.getRawHandle().getKey().str() +
              "' holds " + std::to_string(data.size()) + " bytes, " +
              std::to_string(t.bytes.size()) + " expected";
      return failure();
    }
    copyBytes(t.bytes.data(), data.data(), data.size());
    if (*scalar == Scalar::I1)
      for (uint8_t &b : t.bytes)
        b = b != 0;
    return t;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense) {
    llvm::raw_string_ostream(error)
        << "unsupported constant attribute " << attr;
    return failure();
  }
  unsigned width = t.elementBytes();
  int64_t i = 0;
  if (isFloat(*scalar)) {
    for (const APFloat &v : dense.getValues<APFloat>()) {
      uint64_t bits = v.bitcastToAPInt().getZExtValue();
      std::memcpy(t.bytes.data() + i++ * width, &bits, width);
    }
  } else {
    for (const APInt &v : dense.getValues<APInt>()) {
      if (*scalar == Scalar::I1) {
        t.bytes[i++] = v.getBoolValue();
        continue;
      }
      if (subByteBits(*scalar)) {
        t.setI(i++, isSigned(*scalar) ? v.getSExtValue()
                                      : (int64_t)v.getZExtValue());
        continue;
      }
      uint64_t bits = v.getZExtValue();
      std::memcpy(t.bytes.data() + i++ * width, &bits, width);
    }
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {
void printElement(llvm::raw_ostream &os, const HostTensor &t, int64_t i,
                  int precision) {
  if (isFloat(t.scalar)) {
    double v = t.getF(i);
    if (std::isnan(v))
      os << "nan";
    else if (std::isinf(v))
      os << (v < 0 ? "-inf" : "inf");
    else
      os << llvm::format("%.*g", precision, v);
  } else if (t.scalar == Scalar::I1) {
    os << (t.getI(i) ? "true" : "false");
  } else if (isUnsigned(t.scalar)) {
    os << t.getU(i);
  } else {
    os << t.getI(i);
  }
}

void printDims(llvm::raw_ostream &os, const HostTensor &t, size_t dim,
               int64_t &flat, int precision) {
  if (dim == t.shape.size()) {
    printElement(os, t, flat++, precision);
    return;
  }
  os << "[";
  for (int64_t k = 0; k < t.shape[dim]; ++k) {
    if (k)
      os << ", ";
    printDims(os, t, dim + 1, flat, precision);
  }
  os << "]";
}
} // namespace

void cgc::interp::printTensorValues(llvm::raw_ostream &os, const HostTensor &t,
                                    int precision) {
  int64_t flat = 0;
  if (t.numElements() == 0) {
    os << "[]";
    return;
  }
  printDims(os, t, 0, flat, precision);
}
