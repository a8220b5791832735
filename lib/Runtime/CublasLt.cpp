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
// runs once eagerly (it may set itself up on first use, which a capture
// must not see) and is then captured into a child graph node.
//
//===----------------------------------------------------------------------===//

#include "CublasLt.h"

#include "Model.h"
#include "Status.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

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

Library *loadedLibrary = nullptr; // set once, never freed
std::once_flag libraryOnce;

void loadLibrary(Library &lib) {
  const char *env = std::getenv("CGRT_CUBLASLT_LIBRARY");
  const char *candidates[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                              "libcublasLt.so"};
  void *handle = nullptr;
  std::string tried;
  if (env && *env) {
    lib.path = env;
    handle = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    tried = env;
  } else {
    for (const char *name : candidates) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      tried += tried.empty() ? name : std::string(", ") + name;
      if (handle) {
        lib.path = name;
        break;
      }
    }
  }
  if (!handle) {
    // dlerror names the file it could not open.
    const char *why = dlerror();
    std::string reason = why ? why : tried + ": not found";
    if (!(env && *env))
      reason = "tried " + tried + "; " + reason;
    lib.error = "cannot load cuBLASLt (" + reason +
                "); set CGRT_CUBLASLT_LIBRARY to its path, or compile the "
                "model with --cublaslt=never";
    return;
  }
  // Never dlclosed: captured graphs keep running its kernels.
#define CGRT_RESOLVE(name)                                                     \
  lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, #name));       \
  if (!lib.name) {                                                             \
    lib.error = lib.path + " has no " #name;                                   \
    return;                                                                    \
  }
  CGRT_CUBLASLT_ENTRY_POINTS(CGRT_RESOLVE)
#undef CGRT_RESOLVE
  if (lib.cublasLtGetVersion() < 120000)
    lib.error = formatString("%s is cuBLASLt %zu; cgrt needs 12.0 or newer",
                             lib.path.c_str(), lib.cublasLtGetVersion());
}

const Library &library() {
  std::call_once(libraryOnce, [] {
    loadedLibrary = new Library();
    loadLibrary(*loadedLibrary);
  });
  return *loadedLibrary;
}

/// cuBLAS recommends 32 MiB of workspace on Hopper; every matmul node of a
/// model shares it (the compiler orders them one after another).
constexpr size_t kWorkspaceBytes = 32u << 20;

} // namespace

struct MatmulLibrary {
  cublasLtHandle_t handle = nullptr;
  CUdeviceptr workspace = 0;
  CUstream stream = nullptr; ///< where products are run once and captured
  std::string message;       ///< the last error returned to a builder
  /// Every node added: its fused kernel and its captured call (kept for
  /// profiles; the graphs hold copies).
  struct Node {
    std::string kernel;
    CUgraph captured = nullptr;
  };
  std::vector<Node> nodes;
};

namespace {

/// The descriptors of one call, destroyed with the scope.
struct MatmulCall {
  const Library &lib;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t choice{};
  const void *aPtr = nullptr, *bPtr = nullptr, *cPtr = nullptr;
  void *dPtr = nullptr;
  float alpha = 1, beta = 0;
  explicit MatmulCall(const Library &lib) : lib(lib) {}
  ~MatmulCall() {
    if (preference)
      lib.cublasLtMatmulPreferenceDestroy(preference);
    for (cublasLtMatrixLayout_t layout : {a, b, c})
      if (layout)
        lib.cublasLtMatrixLayoutDestroy(layout);
    if (desc)
      lib.cublasLtMatmulDescDestroy(desc);
  }
};

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

class Builder {
public:
  Builder(cgrt_model_t &m, const Library &lib, const cgrt_matmul_desc &desc)
      : m(m), lib(lib), desc(desc), call(lib) {}

  /// Describes the call and picks its algorithm; false with `error` set.
  bool prepare() {
    cudaDataType_t aType, bType, dType;
    if (!dataType(desc.a_type, &aType) || !dataType(desc.b_type, &bType) ||
        !dataType(desc.d_type, &dType))
      return fail("operand types other than f32, f16, bf16");
    if (desc.m < 1 || desc.n < 1 || desc.k < 1 || desc.batch < 1)
      return fail("an empty product");
    const int64_t m = desc.m, n = desc.n, k = desc.k;
    if (!ok(lib.cublasLtMatmulDescCreate(&call.desc, computeType(desc),
                                         CUDA_R_32F),
            "cublasLtMatmulDescCreate"))
      return false;
    // D^T = op(B)^T x op(A)^T, column-major.
    cublasOperation_t opFirst = desc.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opSecond = desc.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (!setDesc(CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof opFirst) ||
        !setDesc(CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof opSecond))
      return false;
    if (desc.bias != CGRT_NO_OFFSET) {
      cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      const void *bias = reinterpret_cast<const void *>(m_arena(desc.bias));
      if (!setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue) ||
          !setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) ||
          !setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &dType, sizeof dType))
        return false;
    }
    // The stored matrices as cuBLASLt sees them: B [K, N] row-major is
    // N x K column-major (ld N); transposed it is K x N (ld K).
    if (!layout(&call.a, bType, desc.trans_b ? k : n, desc.trans_b ? n : k,
                desc.stride_b) ||
        !layout(&call.b, aType, desc.trans_a ? m : k, desc.trans_a ? k : m,
                desc.stride_a) ||
        !layout(&call.c, dType, n, m, desc.stride_d))
      return false;
    call.aPtr = reinterpret_cast<const void *>(m_arena(desc.b));
    call.bPtr = reinterpret_cast<const void *>(m_arena(desc.a));
    call.dPtr = reinterpret_cast<void *>(m_arena(desc.d));
    call.cPtr = desc.c == CGRT_NO_OFFSET
                    ? call.dPtr
                    : reinterpret_cast<const void *>(m_arena(desc.c));
    call.alpha = desc.alpha;
    call.beta = desc.c == CGRT_NO_OFFSET ? 0.0f : desc.beta;
    return chooseAlgorithm();
  }

  /// Runs the call once on the library's stream, then captures it and adds
  /// the captured graph as a child node.
  bool addNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
               size_t numDeps, CUresult *result) {
    MatmulLibrary &state = *m.matmulLibrary;
    const Driver &d = *m.driver;
    if (!ok(run(state), "cublasLtMatmul"))
      return false;
    CUresult r = CGRT_CU(d, cuStreamSynchronize, state.stream);
    if (r != CUDA_SUCCESS)
      return driverFail(r, "cuStreamSynchronize", result);
    r = CGRT_CU(d, cuStreamBeginCapture, state.stream,
                CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS)
      return driverFail(r, "cuStreamBeginCapture", result);
    cublasStatus_t status = run(state);
    CUgraph child = nullptr;
    r = CGRT_CU(d, cuStreamEndCapture, state.stream, &child);
    if (!ok(status, "cublasLtMatmul (captured)")) {
      if (child)
        CGRT_CU(d, cuGraphDestroy, child);
      return false;
    }
    if (r != CUDA_SUCCESS)
      return driverFail(r, "cuStreamEndCapture", result);
    r = CGRT_CU(d, cuGraphAddChildGraphNode, node, graph, deps, numDeps, child);
    if (r != CUDA_SUCCESS) {
      CGRT_CU(d, cuGraphDestroy, child);
      return driverFail(r, "cuGraphAddChildGraphNode", result);
    }
    state.nodes.push_back({desc.kernel ? desc.kernel : "", child});
    return true;
  }

  std::string error;

private:
  cgrt_model_t &m;
  const Library &lib;
  const cgrt_matmul_desc &desc;
  MatmulCall call;

  CUdeviceptr m_arena(uint64_t offset) const { return m.arena + offset; }

  bool fail(const std::string &why) {
    error = why;
    return false;
  }
  bool ok(cublasStatus_t status, const char *what) {
    if (status == CUBLAS_STATUS_SUCCESS)
      return true;
    return fail(formatString("%s failed: %s (%d)", what,
                             lib.cublasLtGetStatusString(status),
                             static_cast<int>(status)));
  }
  bool driverFail(CUresult r, const char *call, CUresult *result) {
    *result = r;
    return fail(std::string(call) + " failed: " + resultString(*m.driver, r));
  }
  bool setDesc(cublasLtMatmulDescAttributes_t attribute, const void *value,
               size_t bytes) {
    return ok(lib.cublasLtMatmulDescSetAttribute(call.desc, attribute, value,
                                                 bytes),
              "cublasLtMatmulDescSetAttribute");
  }
  bool layout(cublasLtMatrixLayout_t *out, cudaDataType_t type, int64_t rows,
              int64_t cols, int64_t stride) {
    if (!ok(lib.cublasLtMatrixLayoutCreate(out, type, rows, cols, rows),
            "cublasLtMatrixLayoutCreate"))
      return false;
    if (desc.batch == 1)
      return true;
    int32_t count = static_cast<int32_t>(desc.batch);
    return ok(lib.cublasLtMatrixLayoutSetAttribute(
                  *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                  sizeof count),
              "cublasLtMatrixLayoutSetAttribute") &&
           ok(lib.cublasLtMatrixLayoutSetAttribute(
                  *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                  sizeof stride),
              "cublasLtMatrixLayoutSetAttribute");
  }
  bool chooseAlgorithm() {
    MatmulLibrary &state = *m.matmulLibrary;
    uint64_t workspace = kWorkspaceBytes;
    if (!ok(lib.cublasLtMatmulPreferenceCreate(&call.preference),
            "cublasLtMatmulPreferenceCreate") ||
        !ok(lib.cublasLtMatmulPreferenceSetAttribute(
                call.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &workspace, sizeof workspace),
            "cublasLtMatmulPreferenceSetAttribute"))
      return false;
    int found = 0;
    if (!ok(lib.cublasLtMatmulAlgoGetHeuristic(
                state.handle, call.desc, call.a, call.b, call.c, call.c,
                call.preference, 1, &call.choice, &found),
            "cublasLtMatmulAlgoGetHeuristic"))
      return false;
    if (found < 1)
      return fail("cuBLASLt has no algorithm for this product");
    return true;
  }
  cublasStatus_t run(MatmulLibrary &state) {
    return lib.cublasLtMatmul(
        state.handle, call.desc, &call.alpha, call.aPtr, call.a, call.bPtr,
        call.b, &call.beta, call.cPtr, call.c, call.dPtr, call.c,
        &call.choice.algo, reinterpret_cast<void *>(state.workspace),
        kWorkspaceBytes, reinterpret_cast<cudaStream_t>(state.stream));
  }
};

/// The model's handle, workspace and stream, made on first use.
bool ensureState(cgrt_model_t &m, const Library &lib, std::string &error,
                 CUresult *result) {
  if (m.matmulLibrary)
    return true;
  const Driver &d = *m.driver;
  if (!d.cuStreamBeginCapture || !d.cuStreamEndCapture ||
      !d.cuGraphAddChildGraphNode) {
    *result = CUDA_ERROR_NOT_SUPPORTED;
    error = "the CUDA driver " + d.libraryPath +
            " lacks stream capture or child graph nodes";
    return false;
  }
  auto state = new MatmulLibrary();
  m.matmulLibrary = state;
  cublasStatus_t status = lib.cublasLtCreate(&state->handle);
  if (status != CUBLAS_STATUS_SUCCESS) {
    state->handle = nullptr;
    error = formatString("cublasLtCreate failed: %s (%d)",
                         lib.cublasLtGetStatusString(status),
                         static_cast<int>(status));
    return false;
  }
  CUresult r = CGRT_CU(d, cuMemAlloc, &state->workspace, kWorkspaceBytes);
  if (r != CUDA_SUCCESS) {
    state->workspace = 0;
    *result = r;
    error = "cuMemAlloc of cuBLASLt's workspace failed: " + resultString(d, r);
    return false;
  }
  r = CGRT_CU(d, cuStreamCreate, &state->stream,
              static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  if (r != CUDA_SUCCESS) {
    state->stream = nullptr;
    *result = r;
    error = "cuStreamCreate failed: " + resultString(d, r);
    return false;
  }
  return true;
}

} // namespace

const char *addMatmulNode(void *model, CUgraphNode *node, CUgraph graph,
                          const CUgraphNode *deps, size_t numDeps,
                          const cgrt_matmul_desc *desc, CUresult *result) {
  auto &m = *static_cast<cgrt_model_t *>(model);
  *result = CUDA_SUCCESS;
  std::string label = desc && desc->label ? desc->label : "a matmul node";
  auto failWith = [&](const std::string &why) -> const char * {
    if (*result == CUDA_SUCCESS)
      *result = CUDA_ERROR_UNKNOWN;
    static thread_local std::string fallback;
    std::string &message =
        m.matmulLibrary ? m.matmulLibrary->message : fallback;
    message = label + " (cuBLASLt): " + why;
    return message.c_str();
  };
  if (!desc)
    return failWith("no description");
  const Library &lib = library();
  if (!lib.error.empty()) {
    *result = CUDA_ERROR_NOT_FOUND;
    return failWith(lib.error);
  }
  std::string error;
  if (!ensureState(m, lib, error, result))
    return failWith(error);
  Builder builder(m, lib, *desc);
  if (!builder.prepare() || !builder.addNode(node, graph, deps, numDeps, result))
    return failWith(builder.error);
  if (verbose())
    std::fprintf(stderr, "cgrt: %s: cuBLASLt matmul M=%lld N=%lld K=%lld "
                         "batch=%lld captured\n",
                 label.c_str(), static_cast<long long>(desc->m),
                 static_cast<long long>(desc->n),
                 static_cast<long long>(desc->k),
                 static_cast<long long>(desc->batch));
  return nullptr;
}

void releaseMatmulLibrary(cgrt_model_t &m) {
  MatmulLibrary *state = m.matmulLibrary;
  if (!state)
    return;
  m.matmulLibrary = nullptr;
  const Driver &d = *m.driver;
  for (const MatmulLibrary::Node &node : state->nodes)
    CGRT_CU(d, cuGraphDestroy, node.captured);
  if (state->stream)
    CGRT_CU(d, cuStreamDestroy, state->stream);
  if (state->workspace)
    CGRT_CU(d, cuMemFree, state->workspace);
  if (state->handle && loadedLibrary)
    loadedLibrary->cublasLtDestroy(state->handle);
  delete state;
}

size_t libraryNodeCount(const cgrt_model_t &m) {
  return m.matmulLibrary ? m.matmulLibrary->nodes.size() : 0;
}

const char *libraryNodeKernel(const cgrt_model_t &m, size_t i) {
  return i < libraryNodeCount(m) ? m.matmulLibrary->nodes[i].kernel.c_str()
                                 : nullptr;
}

CUgraph libraryNodeGraph(const cgrt_model_t &m, size_t i) {
  return i < libraryNodeCount(m) ? m.matmulLibrary->nodes[i].captured
                                 : nullptr;
}

} // namespace cgrt
