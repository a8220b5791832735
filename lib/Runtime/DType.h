//===- DType.h - element types ----------------------------------*- C++ -*-===//

#ifndef CGRT_RUNTIME_DTYPE_H
#define CGRT_RUNTIME_DTYPE_H

#include "cgrt/cgrt.h"

#include <cstring>
#include <string>

namespace cgrt {

/// The value in an enum field of the C API (a tensor's dtype or memory, a
/// step's kind). C lets a caller store any int there, C++ only values in
/// the enumerators' range (anything else is undefined behaviour, which
/// UBSan reports), so the runtime reads such fields as ints before it has
/// validated them.
template <typename Enum> int enumValue(const Enum &field) {
  static_assert(sizeof(Enum) == sizeof(int), "the C API's enums are ints");
  int value;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

/// Bytes per element of a dtype value; 0 for an unknown one.
size_t dtypeBytes(int dtype);

/// "float32", "int64", ...; "dtype(<n>)" for an unknown value.
std::string dtypeName(int dtype);

/// "[2, 3, 4]" for the first `rank` dims.
std::string shapeString(int32_t rank, const int64_t *dims);

/// Number of elements of a shape; false on a negative dim, a rank outside
/// [0, CGRT_MAX_RANK] or an overflow of int64.
bool elementCount(int32_t rank, const int64_t *dims, uint64_t *count);

/// Bytes of a dense tensor; false on an unknown dtype or an overflow.
bool tensorBytes(cgrt_dtype dtype, int32_t rank, const int64_t *dims,
                 uint64_t *bytes);

} // namespace cgrt

#endif // CGRT_RUNTIME_DTYPE_H
