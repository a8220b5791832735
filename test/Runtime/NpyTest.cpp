//===- NpyTest.cpp - the .npy reader and writer ---------------------------===//

#include "cgc/Tools/cgc-run/Npy.h"
#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace cgcrun;
using namespace cgrttest;

namespace {

/// A .npy image with the given header dict and payload (version 1.0).
std::string npyImage(const std::string &dict, const std::string &payload,
                     int major = 1) {
  std::string header = dict;
  size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string image = "\x93NUMPY";
  image += static_cast<char>(major);
  image += '\0';
  uint32_t length = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    image += static_cast<char>((length >> (8 * i)) & 0xff);
  return image + header + payload;
}

std::string parseError(const std::string &image) {
  HostTensor tensor;
  std::string error;
  EXPECT_FALSE(parseNpy(image.data(), image.size(), &tensor, &error));
  return error;
}

HostTensor makeTensor(cgrt_dtype dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.resize(t.numElements() * cgrt_dtype_size(dtype));
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = static_cast<unsigned char>(i * 7 + 3);
  if (dtype == CGRT_BOOL)
    for (unsigned char &b : t.data)
      b &= 1;
  return t;
}

} // namespace

class NpyRoundTrip : public ::testing::TestWithParam<cgrt_dtype> {};

TEST_P(NpyRoundTrip, EveryDtypeAndRank) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 1, 2, 1, 2, 1, 2}}) {
    HostTensor original = makeTensor(GetParam(), shape);
    std::string bytes, error;
    ASSERT_TRUE(encodeNpy(original, &bytes, &error)) << error;
    // The data starts 64-byte aligned, as numpy writes it.
    size_t headerLength = static_cast<unsigned char>(bytes[8]) |
                          static_cast<unsigned char>(bytes[9]) << 8;
    EXPECT_EQ((10 + headerLength) % 64, 0u);
    EXPECT_EQ(bytes[10 + headerLength - 1], '\n');
    HostTensor back;
    ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), &back, &error)) << error;
    EXPECT_EQ(back.dtype, original.dtype);
    EXPECT_EQ(back.shape, original.shape);
    EXPECT_EQ(back.data, original.data);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllDtypes, NpyRoundTrip,
    ::testing::Values(CGRT_FLOAT16, CGRT_FLOAT32, CGRT_FLOAT64, CGRT_INT8,
                      CGRT_INT16, CGRT_INT32, CGRT_INT64, CGRT_UINT8,
                      CGRT_UINT16, CGRT_UINT32, CGRT_UINT64, CGRT_BOOL));

TEST(NpyTest, WritesWhatNumpyWrites) {
  HostTensor t = makeTensor(CGRT_FLOAT32, {2, 3});
  std::string bytes, error;
  ASSERT_TRUE(encodeNpy(t, &bytes, &error));
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes.substr(10, 60).substr(0, 59),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  HostTensor vector = makeTensor(CGRT_INT64, {4});
  ASSERT_TRUE(encodeNpy(vector, &bytes, &error));
  EXPECT_NE(bytes.find("'shape': (4,)"), std::string::npos);
  HostTensor scalar = makeTensor(CGRT_BOOL, {});
  ASSERT_TRUE(encodeNpy(scalar, &bytes, &error));
  EXPECT_NE(bytes.find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(bytes.find("'shape': ()"), std::string::npos);
}

TEST(NpyTest, ReadsNumpyVariants) {
  float values[] = {1.5f, -2.0f};
  std::string payload(reinterpret_cast<const char *>(values), sizeof(values));
  // Other key order, double quotes, no trailing comma, '=' byte order,
  // version 2.0 and 3.0 headers.
  for (std::string dict :
       {"{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\": \"=f4\", \"fortran_order\": False, \"shape\": (2,)}",
        "{'descr':'<f4','fortran_order':True,'shape':(2,),}"}) {
    for (int major : {1, 2, 3}) {
      std::string image = npyImage(dict, payload, major);
      HostTensor t;
      std::string error;
      ASSERT_TRUE(parseNpy(image.data(), image.size(), &t, &error))
          << dict << ": " << error;
      EXPECT_EQ(t.dtype, CGRT_FLOAT32);
      EXPECT_EQ(t.shape, std::vector<int64_t>{2});
      EXPECT_EQ(elementValue(t, 0), 1.5L);
      EXPECT_EQ(elementValue(t, 1), -2.0L);
    }
  }
}

TEST(NpyTest, RejectsBadFiles) {
  std::string f4x2(8, '\0');
  struct Case {
    std::string image;
    const char *expected;
  } cases[] = {
      {"", "not a .npy file"},
      {"PK\x03\x04 zip file", "not a .npy file"},
      {npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                f4x2, 4),
       "unsupported .npy format version 4"},
      {npyImage("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
                f4x2),
       "big-endian"},
      {npyImage("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1)}",
                f4x2),
       "Fortran-order"},
      {npyImage("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
                f4x2),
       "unsupported dtype '<c8'"},
      {npyImage("{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}",
                f4x2),
       "unsupported dtype '<U3'"},
      {npyImage("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", f4x2),
       "unsupported dtype '|O'"},
      {npyImage("{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}",
                f4x2),
       "unsupported dtype '<f16'"},
      {npyImage("{'descr': [('a', '<f4')], 'fortran_order': False, "
                "'shape': (2,)}",
                f4x2),
       "record"},
      {npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
                f4x2),
       "truncated data: 8 bytes, the header describes 12"},
      {npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
                f4x2),
       "4 unexpected bytes after the data"},
      {npyImage("{'descr': '<f4', 'fortran_order': False}", f4x2),
       "header lacks"},
      {npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                "'extra': 1}",
                f4x2),
       "unexpected key 'extra'"},
      {npyImage("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", f4x2),
       "'fortran_order' is not True or False"},
      {npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
                f4x2),
       "non-negative integers"},
      {npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': 2}", f4x2),
       "'shape' is not a tuple"},
      {npyImage("{'descr': '<f4', 'fortran_order': False, "
                "'shape': (1,1,1,1,1,1,1,1,2)}",
                f4x2),
       "rank above 8"},
      {npyImage("['descr', '<f4']", f4x2), "header is not a dict"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18),
       "truncated .npy header"},
  };
  for (const Case &c : cases) {
    std::string error = parseError(c.image);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected \"" << c.expected << "\" in \"" << error << "\"";
  }
}

TEST(NpyTest, RejectsUnwritableTensors) {
  std::string bytes, error;
  HostTensor bf16 = makeTensor(CGRT_BFLOAT16, {2});
  EXPECT_FALSE(encodeNpy(bf16, &bytes, &error));
  EXPECT_NE(error.find("bfloat16"), std::string::npos) << error;
  HostTensor wrongSize = makeTensor(CGRT_FLOAT32, {2});
  wrongSize.data.pop_back();
  EXPECT_FALSE(encodeNpy(wrongSize, &bytes, &error));
  EXPECT_NE(error.find("7 bytes"), std::string::npos) << error;
}

TEST(NpyTest, FilesRoundTripAndMissingFilesAreReported) {
  TempDir dir;
  HostTensor t = makeTensor(CGRT_INT32, {3, 2});
  std::string error;
  ASSERT_TRUE(writeNpy(dir.file("t.npy"), t, &error)) << error;
  HostTensor back;
  ASSERT_TRUE(readNpy(dir.file("t.npy"), &back, &error)) << error;
  EXPECT_EQ(back.data, t.data);
  EXPECT_FALSE(readNpy(dir.file("missing.npy"), &back, &error));
  EXPECT_NE(error.find("missing.npy"), std::string::npos) << error;
  writeFile(dir.file("bad.npy"), "\x93NUMPY\x01");
  EXPECT_FALSE(readNpy(dir.file("bad.npy"), &back, &error));
  EXPECT_NE(error.find("bad.npy: "), std::string::npos) << error;
}

TEST(NpyTest, SanitizesTensorNames) {
  EXPECT_EQ(sanitizeFileName("input:x/0"), "input_x_0");
  EXPECT_EQ(sanitizeFileName("a.b-c_D9"), "a.b-c_D9");
  EXPECT_EQ(sanitizeFileName("onnx::Add 1"), "onnx__Add_1");
  EXPECT_EQ(sanitizeFileName("\xc3\xa9"), "__");
}

TEST(NpyTest, HalfConversions) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);        // overflow to infinity
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);     // ties to even
  EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3c02);     // ties to even
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  for (uint32_t h = 0; h < 0x7c00; ++h) // every finite positive half
    ASSERT_EQ(floatToHalf(halfToFloat(static_cast<uint16_t>(h))), h) << h;
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(1.5f)), 1.5f);
  EXPECT_EQ(floatToBfloat16(1.0f + 1.0f / 256), 0x3f80); // ties to even
}

TEST(NpyTest, NarrowFloatsDecodeAsOnnxDefinesThem) {
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT8E4M3FN, 0x7e), 448.0f);
  EXPECT_TRUE(std::isnan(narrowFloatToFloat(CGRT_FLOAT8E4M3FN, 0xff)));
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT8E4M3FNUZ, 0x7f), 240.0f);
  EXPECT_TRUE(std::isnan(narrowFloatToFloat(CGRT_FLOAT8E4M3FNUZ, 0x80)));
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT8E5M2, 0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(narrowFloatToFloat(CGRT_FLOAT8E5M2, 0xfc)));
  EXPECT_LT(narrowFloatToFloat(CGRT_FLOAT8E5M2, 0xfc), 0.0f);
  EXPECT_TRUE(std::isnan(narrowFloatToFloat(CGRT_FLOAT8E5M2, 0x7e)));
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT8E5M2FNUZ, 0x7f), 57344.0f);
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT4E2M1, 0x7), 6.0f);
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT4E2M1, 0x9), -0.5f);
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT8E8M0, 127), 1.0f);
  EXPECT_EQ(narrowFloatToFloat(CGRT_FLOAT8E8M0, 0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(narrowFloatToFloat(CGRT_FLOAT8E8M0, 0xff)));
}

TEST(NpyTest, NarrowElementValues) {
  HostTensor i4 = makeTensor(CGRT_INT4, {2});
  i4.data = {0xf8, 0x07}; // -8 and 7, sign-extended
  EXPECT_EQ(elementValue(i4, 0), -8.0L);
  EXPECT_EQ(elementValue(i4, 1), 7.0L);
  HostTensor f8 = makeTensor(CGRT_FLOAT8E4M3FN, {1});
  f8.data = {0xbc};
  EXPECT_EQ(elementValue(f8, 0), -1.5L);
  EXPECT_EQ(subByteBits(CGRT_UINT2), 2);
  EXPECT_EQ(subByteBits(CGRT_UINT8), 0);
  EXPECT_TRUE(isNarrowFloat(CGRT_FLOAT8E8M0));
  EXPECT_FALSE(isNarrowFloat(CGRT_BFLOAT16));
}
