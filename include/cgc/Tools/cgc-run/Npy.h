//===- Npy.h - reading and writing .npy files -------------------*- C++ -*-===//
//
// The NumPy .npy format (versions 1.0, 2.0 and 3.0) for little-endian,
// C-order arrays of the dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1. Anything
// else (big-endian data, Fortran order, object/string/complex dtypes, rank
// above CGRT_MAX_RANK, truncated or oversized data) is rejected with a message.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_TOOLS_CGC_RUN_NPY_H
#define CGC_TOOLS_CGC_RUN_NPY_H

#include "cgrt/cgrt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cgcrun {

/// A dense host tensor in C order.
struct HostTensor {
  cgrt_dtype dtype = CGRT_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;

  /// Number of elements (1 for a scalar).
  uint64_t numElements() const;
  /// A cgrt_tensor describing (and pointing at) this tensor.
  cgrt_tensor view();
};

/// "<f4", "|u1", ...; NULL for a dtype .npy cannot hold (bfloat16).
const char *npyDescr(cgrt_dtype dtype);

/// Parses a .npy image. On failure returns false and sets *error.
bool parseNpy(const void *bytes, size_t size, HostTensor *tensor,
              std::string *error);
/// Encodes a tensor as a version 1.0 .npy image (header padded to 64 bytes).
bool encodeNpy(const HostTensor &tensor, std::string *bytes,
               std::string *error);

bool readNpy(const std::string &path, HostTensor *tensor, std::string *error);
bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string *error);

/// A tensor name as a file name: every character outside [A-Za-z0-9._-]
/// becomes '_'.
std::string sanitizeFileName(const std::string &name);

/// IEEE half <-> float, round to nearest even.
float halfToFloat(uint16_t half);
uint16_t floatToHalf(float value);
float bfloat16ToFloat(uint16_t value);
uint16_t floatToBfloat16(float value);

/// The value of one element of a float8/float4 dtype (its bit pattern).
float narrowFloatToFloat(cgrt_dtype dtype, uint8_t bits);

/// Whether `dtype` is one of the float8/float4 types, one byte each.
bool isNarrowFloat(cgrt_dtype dtype);

/// The bits of int4/uint4/int2/uint2, 0 for other dtypes.
int subByteBits(cgrt_dtype dtype);

/// Element `index` of `tensor` as a long double (exact for every integer
/// dtype, including 64-bit ones, on x86-64).
long double elementValue(const HostTensor &tensor, uint64_t index);

} // namespace cgcrun

#endif // CGC_TOOLS_CGC_RUN_NPY_H
