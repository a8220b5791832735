//===- MakeTestPackage.cpp - writes the test package's data files ---------===//
//
// make-test-package DIR writes DIR/weights.bin, DIR/inputs/input_x_0.npy,
// DIR/inputs-indexed/input_0.npy, DIR/ref/{y,y2,y2_copy}.npy and
// DIR/ref-bad/ (y2 off by 0.5 in one element) for cgc-run --check.
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc-run/Npy.h"
#include "TestPackage.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using namespace testpkg;

static cgcrun::HostTensor tensorOf(const std::vector<float> &values) {
  cgcrun::HostTensor t;
  t.dtype = CGRT_FLOAT32;
  t.shape = {kRows, kCols};
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

static bool write(const std::string &path, const cgcrun::HostTensor &t) {
  std::string error;
  if (cgcrun::writeNpy(path, t, &error))
    return true;
  std::fprintf(stderr, "make-test-package: %s\n", error.c_str());
  return false;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-test-package DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  for (const char *sub : {"", "/inputs", "/inputs-indexed", "/ref", "/ref-bad"})
    std::filesystem::create_directories(dir + sub);

  std::vector<float> w(kElements), x(kElements), y(kElements), y2(kElements),
      y2Copy(kElements);
  for (int i = 0; i < kElements; ++i) {
    w[i] = weight(i);
    x[i] = input(i);
  }
  FILE *file = std::fopen((dir + "/weights.bin").c_str(), "wb");
  if (!file || std::fwrite(w.data(), sizeof(float), w.size(), file) != w.size()) {
    std::fprintf(stderr, "make-test-package: cannot write %s/weights.bin\n",
                 dir.c_str());
    return 1;
  }
  std::fclose(file);

  reference(x.data(), y.data(), y2.data(), y2Copy.data());
  bool ok = write(dir + "/inputs/" + kInputFileStem + ".npy", tensorOf(x)) &&
            write(dir + "/inputs-indexed/input_0.npy", tensorOf(x)) &&
            write(dir + "/ref/y.npy", tensorOf(y)) &&
            write(dir + "/ref/y2.npy", tensorOf(y2)) &&
            write(dir + "/ref/y2_copy.npy", tensorOf(y2Copy));
  y2[7] += 0.5f;
  ok = ok && write(dir + "/ref-bad/y.npy", tensorOf(y)) &&
       write(dir + "/ref-bad/y2.npy", tensorOf(y2)) &&
       write(dir + "/ref-bad/y2_copy.npy", tensorOf(y2Copy));
  return ok ? 0 : 1;
}
