//===- DType.cpp - element types --------------------------------*- C++ -*-===//

#include "DType.h"

#include <limits>

extern "C" size_t cgrt_dtype_size(cgrt_dtype dtype) {
  return cgrt::dtypeBytes(cgrt::enumValue(dtype));
}

size_t cgrt::dtypeBytes(int dtype) {
  switch (dtype) {
  case CGRT_UINT8:
  case CGRT_INT8:
  case CGRT_BOOL:
  case CGRT_FLOAT8E4M3FN:
  case CGRT_FLOAT8E4M3FNUZ:
  case CGRT_FLOAT8E5M2:
  case CGRT_FLOAT8E5M2FNUZ:
  case CGRT_UINT4:
  case CGRT_INT4:
  case CGRT_FLOAT4E2M1:
  case CGRT_FLOAT8E8M0:
  case CGRT_UINT2:
  case CGRT_INT2:
    return 1;
  case CGRT_UINT16:
  case CGRT_INT16:
  case CGRT_FLOAT16:
  case CGRT_BFLOAT16:
    return 2;
  case CGRT_FLOAT32:
  case CGRT_INT32:
  case CGRT_UINT32:
    return 4;
  case CGRT_INT64:
  case CGRT_FLOAT64:
  case CGRT_UINT64:
    return 8;
  }
  return 0;
}

namespace cgrt {

std::string dtypeName(int dtype) {
  switch (dtype) {
  case CGRT_FLOAT32:
    return "float32";
  case CGRT_UINT8:
    return "uint8";
  case CGRT_INT8:
    return "int8";
  case CGRT_UINT16:
    return "uint16";
  case CGRT_INT16:
    return "int16";
  case CGRT_INT32:
    return "int32";
  case CGRT_INT64:
    return "int64";
  case CGRT_BOOL:
    return "bool";
  case CGRT_FLOAT16:
    return "float16";
  case CGRT_FLOAT64:
    return "float64";
  case CGRT_UINT32:
    return "uint32";
  case CGRT_UINT64:
    return "uint64";
  case CGRT_BFLOAT16:
    return "bfloat16";
  // ml_dtypes' names, which numpy users meet these types under.
  case CGRT_FLOAT8E4M3FN:
    return "float8_e4m3fn";
  case CGRT_FLOAT8E4M3FNUZ:
    return "float8_e4m3fnuz";
  case CGRT_FLOAT8E5M2:
    return "float8_e5m2";
  case CGRT_FLOAT8E5M2FNUZ:
    return "float8_e5m2fnuz";
  case CGRT_UINT4:
    return "uint4";
  case CGRT_INT4:
    return "int4";
  case CGRT_FLOAT4E2M1:
    return "float4_e2m1fn";
  case CGRT_FLOAT8E8M0:
    return "float8_e8m0fnu";
  case CGRT_UINT2:
    return "uint2";
  case CGRT_INT2:
    return "int2";
  }
  return "dtype(" + std::to_string(static_cast<int>(dtype)) + ")";
}

std::string shapeString(int32_t rank, const int64_t *dims) {
  std::string result = "[";
  for (int32_t i = 0; i < rank && i < CGRT_MAX_RANK; ++i) {
    if (i)
      result += ", ";
    result += std::to_string(dims[i]);
  }
  return result + "]";
}

bool elementCount(int32_t rank, const int64_t *dims, uint64_t *count) {
  if (rank < 0 || rank > CGRT_MAX_RANK)
    return false;
  uint64_t result = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return false;
    uint64_t dim = static_cast<uint64_t>(dims[i]);
    if (dim != 0 &&
        result > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) /
                     dim)
      return false;
    result *= dim;
  }
  *count = result;
  return true;
}

bool tensorBytes(cgrt_dtype dtype, int32_t rank, const int64_t *dims,
                 uint64_t *bytes) {
  uint64_t count = 0;
  size_t size = cgrt_dtype_size(dtype);
  if (size == 0 || !elementCount(rank, dims, &count))
    return false;
  if (count > std::numeric_limits<uint64_t>::max() / size)
    return false;
  *bytes = count * size;
  return true;
}

} // namespace cgrt
