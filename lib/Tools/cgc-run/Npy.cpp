//===- Npy.cpp - reading and writing .npy files -----------------*- C++ -*-===//

#include "cgc/Tools/cgc-run/Npy.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

namespace cgcrun {

uint64_t HostTensor::numElements() const {
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<uint64_t>(dim);
  return count;
}

cgrt_tensor HostTensor::view() {
  cgrt_tensor t;
  std::memset(&t, 0, sizeof(t));
  t.data = data.empty() ? nullptr : data.data();
  t.bytes = data.size();
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size() && i < CGRT_MAX_RANK; ++i)
    t.dims[i] = shape[i];
  t.memory = CGRT_MEMORY_HOST;
  return t;
}

namespace {

struct DescrEntry {
  char kind;
  int size;
  cgrt_dtype dtype;
};
const DescrEntry kDescrs[] = {
    {'f', 2, CGRT_FLOAT16}, {'f', 4, CGRT_FLOAT32}, {'f', 8, CGRT_FLOAT64},
    {'i', 1, CGRT_INT8},    {'i', 2, CGRT_INT16},   {'i', 4, CGRT_INT32},
    {'i', 8, CGRT_INT64},   {'u', 1, CGRT_UINT8},   {'u', 2, CGRT_UINT16},
    {'u', 4, CGRT_UINT32},  {'u', 8, CGRT_UINT64},  {'b', 1, CGRT_BOOL},
};

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

bool dtypeFromDescr(const std::string &descr, cgrt_dtype *dtype,
                    std::string *error) {
  std::string bad = "unsupported dtype '" + descr +
                    "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, "
                    "little-endian)";
  if (descr.size() < 3)
    return fail(error, bad);
  char order = descr[0];
  char kind = descr[1];
  std::string digits = descr.substr(2);
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return fail(error, bad);
  if (digits.size() > 2)
    return fail(error, bad);
  int size = std::stoi(digits);
  for (const DescrEntry &entry : kDescrs) {
    if (entry.kind != kind || entry.size != size)
      continue;
    if (order == '>' && size > 1)
      return fail(error, "big-endian dtype '" + descr +
                             "' is not supported; save the array as "
                             "little-endian ('<')");
    if (order != '<' && order != '|' && order != '=' && order != '>')
      return fail(error, bad);
    *dtype = entry.dtype;
    return true;
  }
  return fail(error, bad);
}

/// A tiny parser for the header's Python dict literal.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  bool parse(std::string *descr, bool *fortranOrder,
             std::vector<int64_t> *shape, std::string *error) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail(error, "header is not a dict: " + quoted());
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(&key))
        return fail(error, "expected a quoted key in header " + quoted());
      skipSpace();
      if (!consume(':'))
        return fail(error, "expected ':' after '" + key + "' in header " +
                               quoted());
      skipSpace();
      if (key == "descr") {
        if (!parseString(descr))
          return fail(error, "'descr' is not a simple dtype string (record or "
                             "sub-array dtypes are not supported): " +
                                 quoted());
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (consumeWord("True"))
          *fortranOrder = true;
        else if (consumeWord("False"))
          *fortranOrder = false;
        else
          return fail(error, "'fortran_order' is not True or False: " +
                                 quoted());
        haveOrder = true;
      } else if (key == "shape") {
        if (!parseShape(shape, error))
          return false;
        haveShape = true;
      } else {
        return fail(error, "unexpected key '" + key + "' in header " +
                               quoted());
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return fail(error, "expected ',' or '}' in header " + quoted());
    }
    skipSpace();
    if (pos != text.size())
      return fail(error, "unexpected text after the header dict: " + quoted());
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(error, "header lacks 'descr', 'fortran_order' or 'shape': " +
                             quoted());
    return true;
  }

private:
  const std::string &text;
  size_t pos = 0;

  std::string quoted() const { return "\"" + text + "\""; }
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool consumeWord(const char *word) {
    size_t n = std::strlen(word);
    if (text.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }
  bool parseString(std::string *out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return false;
    *out = text.substr(pos, end - pos);
    if (out->find('\\') != std::string::npos)
      return false;
    pos = end + 1;
    return true;
  }
  bool parseShape(std::vector<int64_t> *shape, std::string *error) {
    shape->clear();
    if (!consume('('))
      return fail(error, "'shape' is not a tuple: " + quoted());
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      size_t start = pos;
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      if (pos == start || pos - start > 18)
        return fail(error, "'shape' holds something other than "
                           "non-negative integers: " +
                               quoted());
      shape->push_back(std::stoll(text.substr(start, pos - start)));
      if (shape->size() > CGRT_MAX_RANK)
        return fail(error, "rank above " + std::to_string(CGRT_MAX_RANK) +
                               " is not supported: " + quoted());
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return true;
      return fail(error, "malformed 'shape' tuple: " + quoted());
    }
  }
};

uint64_t readLittleEndian(const unsigned char *bytes, size_t n) {
  uint64_t value = 0;
  for (size_t i = 0; i < n; ++i)
    value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

} // namespace

const char *npyDescr(cgrt_dtype dtype) {
  switch (dtype) {
  case CGRT_FLOAT16:
    return "<f2";
  case CGRT_FLOAT32:
    return "<f4";
  case CGRT_FLOAT64:
    return "<f8";
  case CGRT_INT8:
    return "|i1";
  case CGRT_INT16:
    return "<i2";
  case CGRT_INT32:
    return "<i4";
  case CGRT_INT64:
    return "<i8";
  case CGRT_UINT8:
    return "|u1";
  case CGRT_UINT16:
    return "<u2";
  case CGRT_UINT32:
    return "<u4";
  case CGRT_UINT64:
    return "<u8";
  case CGRT_BOOL:
    return "|b1";
  case CGRT_BFLOAT16:
    break;
  }
  return nullptr;
}

bool parseNpy(const void *data, size_t size, HostTensor *tensor,
              std::string *error) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    return fail(error, "not a .npy file (no \\x93NUMPY magic)");
  unsigned major = bytes[6];
  size_t lengthBytes;
  if (major == 1)
    lengthBytes = 2;
  else if (major == 2 || major == 3)
    lengthBytes = 4;
  else
    return fail(error, "unsupported .npy format version " +
                           std::to_string(major) + "." +
                           std::to_string(bytes[7]));
  size_t preamble = kMagicSize + 2 + lengthBytes;
  if (size < preamble)
    return fail(error, "truncated .npy header");
  uint64_t headerLength = readLittleEndian(bytes + kMagicSize + 2, lengthBytes);
  if (headerLength > size - preamble)
    return fail(error, "truncated .npy header: it claims " +
                           std::to_string(headerLength) + " bytes, the file has " +
                           std::to_string(size - preamble));
  std::string header(reinterpret_cast<const char *>(bytes + preamble),
                     static_cast<size_t>(headerLength));
  for (char c : header)
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\0')
      return fail(error, "the .npy header is not plain ASCII");

  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  if (!HeaderParser(header).parse(&descr, &fortranOrder, &shape, error))
    return false;
  cgrt_dtype dtype;
  if (!dtypeFromDescr(descr, &dtype, error))
    return false;
  if (fortranOrder) {
    bool trivial = shape.size() <= 1;
    if (!trivial)
      return fail(error, "Fortran-order arrays are not supported; save a "
                         "C-contiguous array (numpy.ascontiguousarray)");
  }

  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / 8 /
                                static_cast<uint64_t>(dim))
      return fail(error, "the shape is too large");
    count *= static_cast<uint64_t>(dim);
  }
  uint64_t expected = count * cgrt_dtype_size(dtype);
  uint64_t available = size - preamble - headerLength;
  if (available < expected)
    return fail(error, "truncated data: " + std::to_string(available) +
                           " bytes, the header describes " +
                           std::to_string(expected));
  if (available > expected)
    return fail(error, std::to_string(available - expected) +
                           " unexpected bytes after the data");
  tensor->dtype = dtype;
  tensor->shape = shape;
  const unsigned char *payload = bytes + preamble + headerLength;
  tensor->data.assign(payload, payload + expected);
  if (dtype == CGRT_BOOL)
    for (unsigned char &b : tensor->data)
      b = b ? 1 : 0;
  return true;
}

bool encodeNpy(const HostTensor &tensor, std::string *bytes,
               std::string *error) {
  const char *descr = npyDescr(tensor.dtype);
  if (!descr)
    return fail(error, "dtype " + std::to_string(tensor.dtype) +
                           " (bfloat16) has no .npy equivalent");
  if (tensor.shape.size() > CGRT_MAX_RANK)
    return fail(error, "rank above " + std::to_string(CGRT_MAX_RANK));
  uint64_t expected = tensor.numElements() * cgrt_dtype_size(tensor.dtype);
  if (tensor.data.size() != expected)
    return fail(error, "the tensor holds " + std::to_string(tensor.data.size()) +
                           " bytes, its shape needs " + std::to_string(expected));
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    if (i)
      header += ", ";
    header += std::to_string(tensor.shape[i]);
  }
  if (tensor.shape.size() == 1)
    header += ",";
  header += "), }";
  // Pad with spaces and a final newline so the data starts 64-byte aligned.
  size_t preamble = kMagicSize + 2 + 2;
  size_t total = preamble + header.size() + 1;
  total = (total + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';
  bytes->assign(kMagic, kMagicSize);
  bytes->push_back('\x01');
  bytes->push_back('\x00');
  bytes->push_back(static_cast<char>(header.size() & 0xff));
  bytes->push_back(static_cast<char>((header.size() >> 8) & 0xff));
  *bytes += header;
  bytes->append(reinterpret_cast<const char *>(tensor.data.data()),
                tensor.data.size());
  return true;
}

namespace {
struct FileCloser {
  void operator()(FILE *file) const { std::fclose(file); }
};
} // namespace

bool readNpy(const std::string &path, HostTensor *tensor, std::string *error) {
  std::unique_ptr<FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file)
    return fail(error, path + ": " + std::strerror(errno));
  std::vector<unsigned char> bytes;
  unsigned char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  if (std::ferror(file.get()))
    return fail(error, path + ": read error");
  std::string message;
  if (!parseNpy(bytes.data(), bytes.size(), tensor, &message))
    return fail(error, path + ": " + message);
  return true;
}

bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string *error) {
  std::string bytes, message;
  if (!encodeNpy(tensor, &bytes, &message))
    return fail(error, path + ": " + message);
  std::unique_ptr<FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  if (!file)
    return fail(error, path + ": " + std::strerror(errno));
  if (std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size() ||
      std::fflush(file.get()) != 0)
    return fail(error, path + ": write error: " + std::strerror(errno));
  return true;
}

std::string sanitizeFileName(const std::string &name) {
  std::string result = name;
  for (char &c : result) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      c = '_';
  }
  return result;
}

float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: normalize
      int shift = 0;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ff;
      bits = sign | static_cast<uint32_t>(127 - 15 - shift + 1) << 23 |
             mantissa << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xff;
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // inf or nan
    return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 0x1f)
    return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10)
      return sign;
    mantissa |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = static_cast<uint32_t>(e) << 10 | mantissa >> 13;
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, up to infinity: correct
  return static_cast<uint16_t>(sign | half);
}

float bfloat16ToFloat(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

uint16_t floatToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

bool isNarrowFloat(cgrt_dtype dtype) {
  switch (dtype) {
  case CGRT_FLOAT8E4M3FN:
  case CGRT_FLOAT8E4M3FNUZ:
  case CGRT_FLOAT8E5M2:
  case CGRT_FLOAT8E5M2FNUZ:
  case CGRT_FLOAT4E2M1:
  case CGRT_FLOAT8E8M0:
    return true;
  default:
    return false;
  }
}

int subByteBits(cgrt_dtype dtype) {
  switch (dtype) {
  case CGRT_INT4:
  case CGRT_UINT4:
    return 4;
  case CGRT_INT2:
  case CGRT_UINT2:
    return 2;
  default:
    return 0;
  }
}

namespace {
/// A float format of `exponentBits` and `mantissaBits`: IEEE-like finite
/// values; what its all-ones exponent means is the caller's.
float finiteNarrow(uint8_t bits, int exponentBits, int mantissaBits,
                   int bias) {
  int signBit = exponentBits + mantissaBits;
  int exponent = (bits >> mantissaBits) & ((1 << exponentBits) - 1);
  int mantissa = bits & ((1 << mantissaBits) - 1);
  float value =
      exponent == 0
          ? std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissaBits)
          : std::ldexp(static_cast<float>(mantissa | (1 << mantissaBits)),
                       exponent - bias - mantissaBits);
  return (bits >> signBit) & 1 ? -value : value;
}
} // namespace

float narrowFloatToFloat(cgrt_dtype dtype, uint8_t bits) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  switch (dtype) {
  case CGRT_FLOAT8E4M3FN: // only S.1111.111 is NaN
    return (bits & 0x7f) == 0x7f ? nan : finiteNarrow(bits, 4, 3, 7);
  case CGRT_FLOAT8E4M3FNUZ: // 0x80 is the one NaN
    return bits == 0x80 ? nan : finiteNarrow(bits, 4, 3, 8);
  case CGRT_FLOAT8E5M2: // IEEE: infinities and NaNs
    if ((bits & 0x7c) == 0x7c)
      return (bits & 3) ? nan
                        : ((bits & 0x80) ? -1.0f : 1.0f) *
                              std::numeric_limits<float>::infinity();
    return finiteNarrow(bits, 5, 2, 15);
  case CGRT_FLOAT8E5M2FNUZ:
    return bits == 0x80 ? nan : finiteNarrow(bits, 5, 2, 16);
  case CGRT_FLOAT4E2M1:
    return finiteNarrow(bits & 0xf, 2, 1, 1);
  case CGRT_FLOAT8E8M0: // a biased power of two
    return bits == 0xff ? nan : std::ldexp(1.0f, bits - 127);
  default:
    return nan;
  }
}

long double elementValue(const HostTensor &t, uint64_t index) {
  const unsigned char *p = t.data.data() + index * cgrt_dtype_size(t.dtype);
  auto load = [p](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, p, sizeof(value));
    return static_cast<long double>(value);
  };
  switch (t.dtype) {
  case CGRT_FLOAT32:
    return load(float());
  case CGRT_FLOAT64:
    return load(double());
  case CGRT_FLOAT16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  case CGRT_BFLOAT16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bfloat16ToFloat(h);
  }
  case CGRT_INT8:
    return load(int8_t());
  case CGRT_INT16:
    return load(int16_t());
  case CGRT_INT32:
    return load(int32_t());
  case CGRT_INT64:
    return load(int64_t());
  case CGRT_UINT8:
    return load(uint8_t());
  case CGRT_UINT16:
    return load(uint16_t());
  case CGRT_UINT32:
    return load(uint32_t());
  case CGRT_UINT64:
    return load(uint64_t());
  case CGRT_BOOL:
    return *p ? 1.0L : 0.0L;
  case CGRT_INT4:
  case CGRT_INT2:
    return load(int8_t());
  case CGRT_UINT4:
  case CGRT_UINT2:
    return load(uint8_t());
  default:
    if (isNarrowFloat(t.dtype))
      return narrowFloatToFloat(t.dtype, *p);
  }
  return 0;
}

} // namespace cgcrun
