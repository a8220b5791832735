//===- DType.h - element types ----------------------------------*- C++ -*-===//

#ifndef CGRT_RUNTIME_DTYPE_H
#define CGRT_RUNTIME_DTYPE_H

#include "cgrt/cgrt.h"

#include <string>

namespace cgrt {

/// "float32", "int64", ...; "dtype(<n>)" for an unknown value.
std::string dtypeName(cgrt_dtype dtype);

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
