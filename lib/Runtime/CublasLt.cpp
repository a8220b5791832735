//===- CublasLt.cpp - cuBLASLt matmuls as graph nodes ---------------------===//
//
// The library is found like the driver: $CGRT_CUBLASLT_LIBRARY, else the
// sonames of CUDA 13 and 12. Its header is used for types only; every entry
// point is resolved with dlsym, so libcgrt links nothing of CUDA.
//
// A package describes each product row-major (cgrt_matmul_desc); cuBLASLt
// is column-major, so the call computes D^T = op(B)^T x op(A)^T: a
// row-major matrix is the column-major view of its transpose, and the
// operands swap places. cuBLASLt's first heuristic choice for the problem
// is captured (LibraryNodes.h).
//
//===----------------------------------------------------------------------===//

#include "LibraryNodes.h"

#include "Model.h"
#include "Status.h"

#include <cublasLt.h>

#include <memory>
#include <string>

namespace cgrt {

namespace {

/// The entry points libcgrt uses.
#define CGRT_CUBLASLT_ENTRY_POINTS(X)                                          \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

struct Library {
#define CGRT_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  CGRT_CUBLASLT_ENTRY_POINTS(CGRT_DECLARE_ENTRY)
#undef CGRT_DECLARE_ENTRY
  std::string path;
  /// Why the library cannot be used; empty when it can.
  std::string error;
};

void loadLibrary(Library &lib) {
  // Never dlclosed: captured graphs keep running its kernels.
  void *handle = openLibrary(
      "CGRT_CUBLASLT_LIBRARY",
      {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
      "cuBLASLt", "--cublaslt=never", lib.error, lib.path);
  if (!handle)
    return;
#define CGRT_RESOLVE(name)                                                     \
  if (!resolveEntryPoint(handle, #name, reinterpret_cast<void **>(&lib.name),  \
                         lib.path, lib.error))                                 \
    return;
  CGRT_CUBLASLT_ENTRY_POINTS(CGRT_RESOLVE)
#undef CGRT_RESOLVE
  if (lib.cublasLtGetVersion() < 120000)
    lib.error = formatString("%s is cuBLASLt %zu; cgrt needs 12.0 or newer",
                             lib.path.c_str(), lib.cublasLtGetVersion());
}

const Library &library() { return loadOnce(loadLibrary); }

bool dataType(cgrt_dtype dtype, cudaDataType_t *type) {
  switch (dtype) {
  case CGRT_FLOAT32:
    *type = CUDA_R_32F;
    return true;
  case CGRT_FLOAT16:
    *type = CUDA_R_16F;
    return true;
  case CGRT_BFLOAT16:
    *type = CUDA_R_16BF;
    return true;
  default:
    return false;
  }
}

/// The compute type of `desc`: operands already in the product's type
/// multiply exactly (32F); f32 operands are rounded by cuBLASLt (FAST_*).
cublasComputeType_t computeType(const cgrt_matmul_desc &desc) {
  bool stored16 = desc.a_type != CGRT_FLOAT32 && desc.b_type != CGRT_FLOAT32;
  switch (desc.compute) {
  case CGRT_MATMUL_TF32:
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  case CGRT_MATMUL_BF16:
    return stored16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_16BF;
  case CGRT_MATMUL_F16:
    return stored16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_16F;
  case CGRT_MATMUL_F32:
    break;
  }
  return CUBLAS_COMPUTE_32F;
}

/// One product: its descriptors (destroyed with it) and chosen algorithm.
class Matmul {
public:
  Matmul(const Library &lib, cublasLtHandle_t handle, CUdeviceptr arena,
         CUdeviceptr workspace, const cgrt_matmul_desc &desc)
      : lib(lib), handle(handle), arena(arena), workspace(workspace),
        desc(desc) {}
  ~Matmul() {
    if (preference)
      lib.cublasLtMatmulPreferenceDestroy(preference);
    for (cublasLtMatrixLayout_t layout : {aLayout, bLayout, cLayout})
      if (layout)
        lib.cublasLtMatrixLayoutDestroy(layout);
    if (matmul)
      lib.cublasLtMatmulDescDestroy(matmul);
  }
  Matmul(const Matmul &) = delete;
  Matmul &operator=(const Matmul &) = delete;

  /// Describes the call and picks its algorithm; "" or why not.
  std::string prepare() {
    cudaDataType_t aType, bType, dType;
    if (!dataType(desc.a_type, &aType) || !dataType(desc.b_type, &bType) ||
        !dataType(desc.d_type, &dType))
      return "operand types other than f32, f16, bf16";
    if (desc.m < 1 || desc.n < 1 || desc.k < 1 || desc.batch < 1)
      return "an empty product";
    const int64_t m = desc.m, n = desc.n, k = desc.k;
    std::string error = check(
        lib.cublasLtMatmulDescCreate(&matmul, computeType(desc), CUDA_R_32F),
        "cublasLtMatmulDescCreate");
    // D^T = op(B)^T x op(A)^T, column-major.
    cublasOperation_t opFirst = desc.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opSecond = desc.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (error.empty())
      error = setDesc(CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof opFirst);
    if (error.empty())
      error = setDesc(CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof opSecond);
    if (error.empty() && desc.bias != CGRT_NO_OFFSET) {
      cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      const void *bias = pointer(desc.bias);
      error = setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
      if (error.empty())
        error = setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
      if (error.empty())
        error = setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &dType,
                        sizeof dType);
    }
    // The stored matrices as cuBLASLt sees them: B [K, N] row-major is
    // N x K column-major (ld N); transposed it is K x N (ld K).
    if (error.empty())
      error = layout(&aLayout, bType, desc.trans_b ? k : n,
                     desc.trans_b ? n : k, desc.stride_b);
    if (error.empty())
      error = layout(&bLayout, aType, desc.trans_a ? m : k,
                     desc.trans_a ? k : m, desc.stride_a);
    if (error.empty())
      error = layout(&cLayout, dType, n, m, desc.stride_d);
    if (!error.empty())
      return error;
    alpha = desc.alpha;
    beta = desc.c == CGRT_NO_OFFSET ? 0.0f : desc.beta;
    return chooseAlgorithm();
  }

  /// The product on `stream`; "" or why it failed.
  std::string run(CUstream stream) {
    void *d = const_cast<void *>(pointer(desc.d));
    const void *c = desc.c == CGRT_NO_OFFSET ? d : pointer(desc.c);
    return check(lib.cublasLtMatmul(
                     handle, matmul, &alpha, pointer(desc.b), aLayout,
                     pointer(desc.a), bLayout, &beta, c, cLayout, d, cLayout,
                     &choice.algo, reinterpret_cast<void *>(workspace),
                     kLibraryWorkspaceBytes,
                     reinterpret_cast<cudaStream_t>(stream)),
                 "cublasLtMatmul");
  }

private:
  const Library &lib;
  cublasLtHandle_t handle;
  CUdeviceptr arena, workspace;
  const cgrt_matmul_desc &desc;
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t aLayout = nullptr, bLayout = nullptr,
                         cLayout = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t choice{};
  float alpha = 1, beta = 0;

  const void *pointer(uint64_t offset) const {
    return reinterpret_cast<const void *>(arena + offset);
  }
  std::string check(cublasStatus_t status, const char *what) const {
    if (status == CUBLAS_STATUS_SUCCESS)
      return "";
    return formatString("%s failed: %s (%d)", what,
                        lib.cublasLtGetStatusString(status),
                        static_cast<int>(status));
  }
  std::string setDesc(cublasLtMatmulDescAttributes_t attribute,
                      const void *value, size_t bytes) {
    return check(
        lib.cublasLtMatmulDescSetAttribute(matmul, attribute, value, bytes),
        "cublasLtMatmulDescSetAttribute");
  }
  std::string layout(cublasLtMatrixLayout_t *out, cudaDataType_t type,
                     int64_t rows, int64_t cols, int64_t stride) {
    std::string error =
        check(lib.cublasLtMatrixLayoutCreate(out, type, rows, cols, rows),
              "cublasLtMatrixLayoutCreate");
    if (!error.empty() || desc.batch == 1)
      return error;
    int32_t count = static_cast<int32_t>(desc.batch);
    error = check(lib.cublasLtMatrixLayoutSetAttribute(
                      *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                      sizeof count),
                  "cublasLtMatrixLayoutSetAttribute");
    if (error.empty())
      error = check(lib.cublasLtMatrixLayoutSetAttribute(
                        *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                        &stride, sizeof stride),
                    "cublasLtMatrixLayoutSetAttribute");
    return error;
  }
  std::string chooseAlgorithm() {
    uint64_t bytes = kLibraryWorkspaceBytes;
    std::string error = check(lib.cublasLtMatmulPreferenceCreate(&preference),
                              "cublasLtMatmulPreferenceCreate");
    if (error.empty())
      error = check(lib.cublasLtMatmulPreferenceSetAttribute(
                        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        &bytes, sizeof bytes),
                    "cublasLtMatmulPreferenceSetAttribute");
    int found = 0;
    if (error.empty())
      error = check(lib.cublasLtMatmulAlgoGetHeuristic(
                        handle, matmul, aLayout, bLayout, cLayout, cLayout,
                        preference, 1, &choice, &found),
                    "cublasLtMatmulAlgoGetHeuristic");
    if (error.empty() && found < 1)
      error = "cuBLASLt has no algorithm for this product";
    return error;
  }
};

} // namespace

void destroyCublasLtHandle(void *handle) {
  // A handle exists only once the library loaded.
  library().cublasLtDestroy(static_cast<cublasLtHandle_t>(handle));
}

const char *addMatmulNode(void *model, CUgraphNode *node, CUgraph graph,
                          const CUgraphNode *deps, size_t numDeps,
                          const cgrt_matmul_desc *desc, CUresult *result) {
  auto &m = *static_cast<cgrt_model_t *>(model);
  *result = CUDA_SUCCESS;
  std::string label = desc && desc->label ? desc->label : "a matmul node";
  if (!desc)
    return libraryFailure(m, label, "cuBLASLt", "no description", result);
  const Library &lib = library();
  std::unique_ptr<Matmul> matmul;
  auto prepare = [&](LibraryState &state) -> std::string {
    if (!state.cublasLt) {
      cublasLtHandle_t handle = nullptr;
      cublasStatus_t status = lib.cublasLtCreate(&handle);
      if (status != CUBLAS_STATUS_SUCCESS)
        return formatString("cublasLtCreate failed: %s (%d)",
                            lib.cublasLtGetStatusString(status),
                            static_cast<int>(status));
      state.cublasLt = handle;
    }
    matmul = std::make_unique<Matmul>(
        lib, static_cast<cublasLtHandle_t>(state.cublasLt), m.arena,
        state.workspace, *desc);
    return matmul->prepare();
  };
  return addLibraryNode(
      m, "cuBLASLt", label, desc->kernel, lib.error, prepare,
      [&](CUstream s) { return matmul->run(s); }, node, graph, deps, numDeps,
      result, matmulFlops(*desc));
}

} // namespace cgrt
