//===- Cudnn.cpp - cuDNN convolutions as graph nodes ----------------------===//
//
// Found like cuBLASLt: $CGRT_CUDNN_LIBRARY, else libcudnn.so.9 (cuDNN 9's
// front library, which loads its parts itself); its headers give types
// only. A convolution is described NCHW (or NHWC where the package stores
// it channels last) with cuDNN's legacy descriptors,
// takes the first algorithm cuDNN's heuristics rank that fits the shared
// workspace (and, for exact f32, uses FMAs only), and adds the bias per
// output channel after it; both calls are captured (LibraryNodes.h).
//
//===----------------------------------------------------------------------===//

#include "LibraryNodes.h"

#include "Model.h"
#include "Status.h"

#include <cudnn.h>

#include <memory>
#include <string>

namespace cgrt {

namespace {

#define CGRT_CUDNN_ENTRY_POINTS(X)                                             \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnSetTensor4dDescriptor)                                                \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnAddTensor)

struct Library {
#define CGRT_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  CGRT_CUDNN_ENTRY_POINTS(CGRT_DECLARE_ENTRY)
#undef CGRT_DECLARE_ENTRY
  std::string path;
  std::string error; ///< why the library cannot be used; empty when it can
};

void loadLibrary(Library &lib) {
  void *handle = openLibrary("CGRT_CUDNN_LIBRARY", {"libcudnn.so.9"}, "cuDNN",
                             "--cudnn=never", lib.error, lib.path);
  if (!handle)
    return;
#define CGRT_RESOLVE(name)                                                     \
  if (!resolveEntryPoint(handle, #name, reinterpret_cast<void **>(&lib.name),  \
                         lib.path, lib.error))                                 \
    return;
  CGRT_CUDNN_ENTRY_POINTS(CGRT_RESOLVE)
#undef CGRT_RESOLVE
  if (lib.cudnnGetVersion() < 90000)
    lib.error = formatString("%s is cuDNN %zu; cgrt needs 9.0 or newer",
                             lib.path.c_str(), lib.cudnnGetVersion());
}

const Library &library() { return loadOnce(loadLibrary); }

bool dataType(cgrt_dtype dtype, cudnnDataType_t *type) {
  switch (dtype) {
  case CGRT_FLOAT32:
    *type = CUDNN_DATA_FLOAT;
    return true;
  case CGRT_FLOAT16:
    *type = CUDNN_DATA_HALF;
    return true;
  case CGRT_BFLOAT16:
    *type = CUDNN_DATA_BFLOAT16;
    return true;
  default:
    return false;
  }
}

/// One convolution: its descriptors (destroyed with it) and algorithm.
class Conv {
public:
  Conv(const Library &lib, cudnnHandle_t handle, CUdeviceptr arena,
       CUdeviceptr workspace, const cgrt_conv_desc &desc)
      : lib(lib), handle(handle), arena(arena), workspace(workspace),
        desc(desc) {}
  ~Conv() {
    for (cudnnTensorDescriptor_t t : {x, y, bias})
      if (t)
        lib.cudnnDestroyTensorDescriptor(t);
    if (w)
      lib.cudnnDestroyFilterDescriptor(w);
    if (conv)
      lib.cudnnDestroyConvolutionDescriptor(conv);
  }
  Conv(const Conv &) = delete;
  Conv &operator=(const Conv &) = delete;

  /// Describes the call and picks its algorithm; "" or why not.
  std::string prepare() {
    cudnnDataType_t type;
    if (!dataType(desc.type, &type))
      return "data types other than f32, f16, bf16";
    for (int i = 0; i < 4; ++i)
      if (desc.input[i] < 1 || desc.filter[i] < 1 || desc.output[i] < 1)
        return "an empty convolution";
    if (desc.channels_last != 0 && desc.channels_last != 1)
      return "a layout flag other than 0 or 1";
    // The dims are N, C, H, W in either layout; the format says how they
    // are stored.
    cudnnTensorFormat_t format =
        desc.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    auto i32 = [](int64_t v) { return static_cast<int>(v); };
    const int64_t *in = desc.input, *f = desc.filter, *out = desc.output;
    std::string error = check(lib.cudnnCreateTensorDescriptor(&x),
                              "cudnnCreateTensorDescriptor");
    if (error.empty())
      error = check(lib.cudnnSetTensor4dDescriptor(x, format, type,
                                                   i32(in[0]), i32(in[1]),
                                                   i32(in[2]), i32(in[3])),
                    "cudnnSetTensor4dDescriptor (input)");
    if (error.empty())
      error = check(lib.cudnnCreateTensorDescriptor(&y),
                    "cudnnCreateTensorDescriptor");
    if (error.empty())
      error = check(lib.cudnnSetTensor4dDescriptor(y, format, type,
                                                   i32(out[0]), i32(out[1]),
                                                   i32(out[2]), i32(out[3])),
                    "cudnnSetTensor4dDescriptor (output)");
    if (error.empty())
      error = check(lib.cudnnCreateFilterDescriptor(&w),
                    "cudnnCreateFilterDescriptor");
    if (error.empty())
      error = check(lib.cudnnSetFilter4dDescriptor(w, type, format,
                                                   i32(f[0]), i32(f[1]),
                                                   i32(f[2]), i32(f[3])),
                    "cudnnSetFilter4dDescriptor");
    if (error.empty())
      error = check(lib.cudnnCreateConvolutionDescriptor(&conv),
                    "cudnnCreateConvolutionDescriptor");
    if (error.empty())
      error = check(lib.cudnnSetConvolution2dDescriptor(
                        conv, i32(desc.pads[0]), i32(desc.pads[1]),
                        i32(desc.strides[0]), i32(desc.strides[1]),
                        i32(desc.dilations[0]), i32(desc.dilations[1]),
                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                    "cudnnSetConvolution2dDescriptor");
    if (error.empty() && desc.groups > 1)
      error = check(lib.cudnnSetConvolutionGroupCount(conv, i32(desc.groups)),
                    "cudnnSetConvolutionGroupCount");
    if (error.empty() && desc.bias != CGRT_NO_OFFSET) {
      error = check(lib.cudnnCreateTensorDescriptor(&bias),
                    "cudnnCreateTensorDescriptor");
      if (error.empty())
        error = check(lib.cudnnSetTensor4dDescriptor(
                          bias, CUDNN_TENSOR_NCHW, type, 1, i32(out[1]), 1, 1),
                      "cudnnSetTensor4dDescriptor (bias)");
    }
    if (!error.empty())
      return error;
    return chooseAlgorithm(type);
  }

  /// The convolution (and the bias) on `stream`; "" or why it failed.
  std::string run(CUstream stream) {
    const float one = 1.0f, zero = 0.0f;
    std::string error =
        check(lib.cudnnSetStream(handle, reinterpret_cast<cudaStream_t>(stream)),
              "cudnnSetStream");
    if (error.empty())
      error = check(lib.cudnnConvolutionForward(
                        handle, &one, x, pointer(desc.x), w, pointer(desc.w),
                        conv, algorithm, reinterpret_cast<void *>(workspace),
                        kLibraryWorkspaceBytes, &zero, y, pointer(desc.y)),
                    "cudnnConvolutionForward");
    if (error.empty() && bias)
      error = check(lib.cudnnAddTensor(handle, &one, bias, pointer(desc.bias),
                                       &one, y, pointer(desc.y)),
                    "cudnnAddTensor");
    return error;
  }

private:
  const Library &lib;
  cudnnHandle_t handle;
  CUdeviceptr arena, workspace;
  const cgrt_conv_desc &desc;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algorithm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;

  void *pointer(uint64_t offset) const {
    return reinterpret_cast<void *>(arena + offset);
  }
  std::string check(cudnnStatus_t status, const char *what) const {
    if (status == CUDNN_STATUS_SUCCESS)
      return "";
    return formatString("%s failed: %s (%d)", what,
                        lib.cudnnGetErrorString(status),
                        static_cast<int>(status));
  }
  /// f32 data without a reduced precision must stay on FMAs (cuDNN's
  /// default math lets f32 convolutions use TF32); otherwise any math the
  /// ranked algorithm names, except rounding f32 data to f16.
  std::string chooseAlgorithm(cudnnDataType_t type) {
    bool exact = desc.compute == CGRT_MATMUL_F32 && type == CUDNN_DATA_FLOAT;
    cudnnMathType_t math = exact ? CUDNN_FMA_MATH
                           : type == CUDNN_DATA_FLOAT ? CUDNN_DEFAULT_MATH
                                                      : CUDNN_TENSOR_OP_MATH;
    std::string error = check(lib.cudnnSetConvolutionMathType(conv, math),
                              "cudnnSetConvolutionMathType");
    if (!error.empty())
      return error;
    cudnnConvolutionFwdAlgoPerf_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    error = check(lib.cudnnGetConvolutionForwardAlgorithm_v7(
                      handle, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                      &returned, ranked),
                  "cudnnGetConvolutionForwardAlgorithm_v7");
    if (!error.empty())
      return error;
    for (int i = 0; i < returned; ++i) {
      const cudnnConvolutionFwdAlgoPerf_t &p = ranked[i];
      if (p.status != CUDNN_STATUS_SUCCESS ||
          p.memory > kLibraryWorkspaceBytes ||
          p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
          (exact && p.mathType != CUDNN_FMA_MATH &&
           p.mathType != CUDNN_DEFAULT_MATH))
        continue;
      algorithm = p.algo;
      if (p.mathType != math)
        error = check(lib.cudnnSetConvolutionMathType(conv, p.mathType),
                      "cudnnSetConvolutionMathType");
      return error;
    }
    return "cuDNN has no algorithm for this convolution within the " +
           std::to_string(kLibraryWorkspaceBytes >> 20) + " MiB workspace";
  }
};

} // namespace

void destroyCudnnHandle(void *handle) {
  // A handle exists only once the library loaded.
  library().cudnnDestroy(static_cast<cudnnHandle_t>(handle));
}

const char *addConvNode(void *model, CUgraphNode *node, CUgraph graph,
                        const CUgraphNode *deps, size_t numDeps,
                        const cgrt_conv_desc *desc, CUresult *result) {
  auto &m = *static_cast<cgrt_model_t *>(model);
  *result = CUDA_SUCCESS;
  std::string label = desc && desc->label ? desc->label : "a convolution node";
  if (!desc)
    return libraryFailure(m, label, "cuDNN", "no description", result);
  const Library &lib = library();
  std::unique_ptr<Conv> conv;
  auto prepare = [&](LibraryState &state) -> std::string {
    if (!state.cudnn) {
      cudnnHandle_t handle = nullptr;
      cudnnStatus_t status = lib.cudnnCreate(&handle);
      if (status != CUDNN_STATUS_SUCCESS)
        return formatString("cudnnCreate failed: %s (%d)",
                            lib.cudnnGetErrorString(status),
                            static_cast<int>(status));
      state.cudnn = handle;
    }
    conv = std::make_unique<Conv>(lib, static_cast<cudnnHandle_t>(state.cudnn),
                                  m.arena, state.workspace, *desc);
    return conv->prepare();
  };
  return addLibraryNode(
      m, "cuDNN", label, desc->kernel, lib.error, prepare,
      [&](CUstream s) { return conv->run(s); }, node, graph, deps, numDeps,
      result, convFlops(*desc));
}

} // namespace cgrt
