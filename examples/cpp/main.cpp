// The C++ example: any package, through the C API of libcgrt wrapped in a
// few RAII types, with errors as exceptions.
//
//   build/bin/cgc examples/tiny_mlp/model.onnx -o pkg
//   make -C examples/cpp
//   examples/cpp/run_package pkg
//
// It prints the package's inputs and outputs, fills every float32 input with
// sin(0.37 i) (i counting across the inputs), runs one inference, and prints
// the first values and the sum of each output; for tiny_mlp the lines match
// the C and Python examples'. Exit status 0, or 2 with the runtime's message.

#include "cgrt/cgrt.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// A failed status as an exception carrying the runtime's message.
/// (The runtime's messages start with the function that failed.)
struct Error : std::runtime_error {
  explicit Error(cgrt_status status)
      : std::runtime_error(cgrt_status_get_message(status)),
        code(cgrt_status_get_code(status)) {
    cgrt_status_free(status);
  }
  cgrt_status_code code;
};

void check(cgrt_status status) {
  if (status)
    throw Error(status);
}

struct ModelDeleter {
  void operator()(cgrt_model *m) const { cgrt_model_release(m); }
};
using Model = std::unique_ptr<cgrt_model, ModelDeleter>;

Model load(const char *dir) {
  cgrt_model_options options;
  cgrt_model_options_init(&options);
  cgrt_model *raw = nullptr;
  check(cgrt_model_load(dir, &options, &raw));
  return Model(raw);
}

struct Tensor {
  std::string name;
  cgrt_tensor desc; // dims, dtype, bytes; data points into `values`
  std::vector<float> values;
};

std::vector<Tensor> describe(cgrt_model *model, bool inputs) {
  size_t n = inputs ? cgrt_model_num_inputs(model)
                    : cgrt_model_num_outputs(model);
  std::vector<Tensor> tensors(n);
  for (size_t i = 0; i < n; ++i) {
    Tensor &t = tensors[i];
    const char *name = nullptr;
    check(inputs ? cgrt_model_input_info(model, i, &name, &t.desc)
                 : cgrt_model_output_info(model, i, &name, &t.desc));
    t.name = name;
    if (t.desc.dtype != CGRT_FLOAT32)
      throw std::runtime_error("'" + t.name + "' is not float32; this "
                               "example handles float32 tensors only");
    t.values.assign(t.desc.bytes / sizeof(float), 0.0f);
    t.desc.data = t.values.data();
    t.desc.memory = CGRT_MEMORY_HOST;
  }
  return tensors;
}

std::string shapeOf(const cgrt_tensor &t) {
  std::string s;
  for (int32_t d = 0; d < t.rank; ++d)
    s += (d ? "x" : "") + std::to_string(t.dims[d]);
  return s;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PACKAGE_DIR\n", argv[0]);
    return 2;
  }
  try {
    Model model = load(argv[1]);
    std::vector<Tensor> inputs = describe(model.get(), true);
    std::vector<Tensor> outputs = describe(model.get(), false);
    size_t k = 0;
    for (Tensor &t : inputs) {
      std::printf("input  %s: float32 %s\n", t.name.c_str(),
                  shapeOf(t.desc).c_str());
      for (float &v : t.values)
        v = static_cast<float>(std::sin(0.37 * k++));
    }
    std::vector<cgrt_tensor> in, out;
    for (Tensor &t : inputs)
      in.push_back(t.desc);
    for (Tensor &t : outputs)
      out.push_back(t.desc);
    check(cgrt_model_run(model.get(), in.data(), in.size(), out.data(),
                         out.size()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor &t = outputs[i];
      std::printf("output %s: float32 %s\n", t.name.c_str(),
                  shapeOf(out[i]).c_str()); // run-time dims
      double sum = 0;
      for (float v : t.values)
        sum += v;
      const std::vector<float> &y = t.values;
      if (y.size() >= 4)
        std::printf("%s[0:4] = %.6f %.6f %.6f %.6f\n", t.name.c_str(), y[0],
                    y[1], y[2], y[3]);
      std::printf("sum(%s) = %.6f\n", t.name.c_str(), sum);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "run_package: %s\n", e.what());
    return 2;
  }
  return 0;
}
