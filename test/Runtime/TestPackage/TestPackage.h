//===- TestPackage.h - the hand-written test package's layout ---*- C++ -*-===//
//
// Shared by the package library (TestPackage.cpp), the generator of its files
// (MakeTestPackage.cpp) and the tests: what cgc would emit for
//
//   y  = x * 2 + w        (graph 0 "main": memset y = 0, kernel y += 2x + w,
//   y2 = relu(y)                           kernel y2 = relu(y))
//   y2_copy = y2          (graph 1 "copy": one memcpy node)
//
// with x float32 [2, 128] named "input:x/0" and w from weights.bin.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_TEST_PACKAGE_H
#define CGRT_TEST_PACKAGE_H

#include <cstdint>
#include <cstring>

namespace testpkg {

constexpr int64_t kRows = 2;
constexpr int64_t kCols = 128;
constexpr int kElements = static_cast<int>(kRows * kCols);
constexpr uint64_t kSlotBytes = kElements * sizeof(float);

// Arena layout, 256-byte aligned slots.
constexpr uint64_t kXOffset = 0;
constexpr uint64_t kWeightsOffset = 1024;
constexpr uint64_t kYOffset = 2048;
constexpr uint64_t kY2Offset = 3072;
constexpr uint64_t kY2CopyOffset = 4096;
constexpr uint64_t kArenaBytes = 5120;

constexpr const char *kInputName = "input:x/0";
constexpr const char *kInputFileStem = "input_x_0"; // sanitized

/// The weights w; a few negative so relu matters.
inline float weight(int i) {
  return 0.01f * static_cast<float>(i % 97) - 0.5f;
}

/// A deterministic input; `seed` varies it between runs.
inline float input(int i, int seed = 0) {
  return static_cast<float>((i * 37 + seed * 11) % 101) / 50.0f - 1.0f;
}

/// The CPU reference of all three outputs.
inline void reference(const float *x, float *y, float *y2, float *y2Copy) {
  for (int i = 0; i < kElements; ++i) {
    y[i] = x[i] * 2.0f + weight(i);
    y2[i] = y[i] > 0.0f ? y[i] : 0.0f;
    y2Copy[i] = y2[i];
  }
}

/// FNV-1a 64 of the weights' little-endian bytes, as in weights.bin.
inline uint64_t weightsChecksum() {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (int i = 0; i < kElements; ++i) {
    float w = weight(i);
    unsigned char bytes[sizeof(float)];
    std::memcpy(bytes, &w, sizeof(float));
    for (unsigned char b : bytes) {
      hash ^= b;
      hash *= 0x100000001b3ull;
    }
  }
  return hash;
}

} // namespace testpkg

#endif // CGRT_TEST_PACKAGE_H
