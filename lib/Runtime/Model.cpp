//===- Model.cpp - cgrt_model_load, release and I/O info --------*- C++ -*-===//

#include "Model.h"

#include "DType.h"
#include "Package.h"
#include "Status.h"

#include <dlfcn.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace cgrt;

std::string cgrt_model_t::eagerLabel(size_t index) const {
  std::string name = index < package->num_eager && package->eager_names &&
                             package->eager_names[index]
                         ? package->eager_names[index]
                         : "";
  return "eager region " + std::to_string(index) + " '" + name + "'";
}

std::string cgrt_model_t::graphLabel(size_t index) const {
  const char *name = package && package->graph_names
                         ? package->graph_names[index]
                         : nullptr;
  return formatString("graph %zu '%s'", index, name ? name : "");
}

namespace cgrt {

bool verbose() {
  static const bool enabled = [] {
    const char *value = std::getenv("CGRT_VERBOSE");
    return value && *value && std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

void destroyModel(cgrt_model_t *m) {
  if (!m)
    return;
  if (m->context && m->driver) {
    const Driver &d = *m->driver;
    {
      ScopedContext scope(d, m->context);
      if (m->stream)
        CGRT_CU(d, cuStreamSynchronize, m->stream);
      // An asynchronous run on a caller's stream may still use the arena.
      if (m->runPending && m->runDone)
        CGRT_CU(d, cuEventSynchronize, m->runDone);
      unwatchAsyncRuns(*m);
      if (m->runDone)
        CGRT_CU(d, cuEventDestroy, m->runDone);
      if (m->stop)
        CGRT_CU(d, cuEventDestroy, m->stop);
      if (m->start)
        CGRT_CU(d, cuEventDestroy, m->start);
      for (size_t i = m->benchmarkInputs.size(); i-- > 0;)
        if (m->benchmarkInputs[i])
          CGRT_CU(d, cuMemFree, m->benchmarkInputs[i]);
      for (size_t i = m->benchmarkOutputs.size(); i-- > 0;)
        if (m->benchmarkOutputs[i])
          CGRT_CU(d, cuMemFree, m->benchmarkOutputs[i]);
      for (size_t k = m->execSets.size(); k-- > 0;)
        for (size_t i = m->execSets[k].execs.size(); i-- > 0;)
          if (m->execSets[k].execs[i])
            CGRT_CU(d, cuGraphExecDestroy, m->execSets[k].execs[i]);
      for (size_t i = m->graphs.size(); i-- > 0;)
        if (m->graphs[i])
          CGRT_CU(d, cuGraphDestroy, m->graphs[i]);
      releaseLibraryState(*m);
      if (m->arena)
        CGRT_CU(d, cuMemFree, m->arena);
      if (m->module)
        CGRT_CU(d, cuModuleUnload, m->module);
      if (m->stream)
        CGRT_CU(d, cuStreamDestroy, m->stream);
    }
    CGRT_CU(d, cuDevicePrimaryCtxRelease, m->device);
  }
  // After the graphs: their captured all-reduce calls use it.
  if (m->ownsComm)
    releaseComm(m->comm);
  if (m->library)
    dlclose(m->library);
  delete m;
}

} // namespace cgrt

namespace {

struct ModelDeleter {
  void operator()(cgrt_model_t *model) const { destroyModel(model); }
};
using ModelPtr = std::unique_ptr<cgrt_model_t, ModelDeleter>;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Loads the kernel module from the cubin, or from the PTX if the cubin is
/// absent or the driver rejects it, and gets every kernel.
cgrt_status loadKernels(cgrt_model_t &m, const PackageFiles &files) {
  const Driver &d = *m.driver;
  const cgrt_package &p = *m.package;
  if (p.num_kernels == 0)
    return nullptr;

  std::string cubinFailure = files.cubinError;
  CUresult cubinResult = CUDA_SUCCESS;
  if (!files.cubin.empty()) {
    cubinResult = CGRT_CU(d, cuModuleLoadData, &m.module,
                          static_cast<const void *>(files.cubin.data()));
    if (cubinResult == CUDA_SUCCESS) {
      m.kernelsFromPtx = false;
    } else {
      m.module = nullptr;
      cubinFailure = "cuModuleLoadData of the cubin '" + files.cubinPath +
                     "' failed: " + resultString(d, cubinResult);
    }
  }
  if (!m.module) {
    if (files.ptx.empty())
      return makeStatus(cubinResult == CUDA_ERROR_OUT_OF_MEMORY
                            ? CGRT_OUT_OF_MEMORY
                            : CGRT_CUDA_ERROR,
                        "%s: cannot load the kernels: %s (and no PTX file to "
                        "fall back on)",
                        m.label.c_str(), cubinFailure.c_str());
    CUresult result = CGRT_CU(d, cuModuleLoadData, &m.module,
                              static_cast<const void *>(files.ptx.data()));
    if (result != CUDA_SUCCESS) {
      m.module = nullptr;
      cgrt_status s = driverError(
          d, result, "cuModuleLoadData",
          "the PTX file '" + files.ptxPath + "' of " + m.label);
      return cubinFailure.empty() ? s : annotate(s, cubinFailure + "; then");
    }
    m.kernelsFromPtx = true;
    if (verbose())
      std::fprintf(stderr, "cgrt: %s: kernels JIT-compiled from PTX (%s)\n",
                   m.label.c_str(),
                   cubinFailure.empty() ? "no cubin" : cubinFailure.c_str());
  }

  m.kernels.assign(p.num_kernels, nullptr);
  for (size_t i = 0; i < p.num_kernels; ++i) {
    CUresult result = CGRT_CU(d, cuModuleGetFunction, &m.kernels[i], m.module,
                              p.kernel_names[i]);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cuModuleGetFunction",
                         formatString("kernel %zu '%s' of %s", i,
                                      p.kernel_names[i], m.label.c_str()));
  }
  return nullptr;
}

cgrt_status allocateArena(cgrt_model_t &m, const PackageFiles &files) {
  const Driver &d = *m.driver;
  const cgrt_package &p = *m.package;
  // cuMemAlloc rejects 0 bytes; a model without tensors still gets a base.
  uint64_t bytes = p.arena_bytes ? p.arena_bytes : 256;
  CUresult result = CGRT_CU(d, cuMemAlloc, &m.arena, static_cast<size_t>(bytes));
  if (result != CUDA_SUCCESS) {
    m.arena = 0;
    size_t freeBytes = 0, totalBytes = 0;
    std::string memory;
    if (CGRT_CU(d, cuMemGetInfo, &freeBytes, &totalBytes) == CUDA_SUCCESS)
      memory = formatString(" (device memory: %zu of %zu bytes free)",
                            freeBytes, totalBytes);
    return driverError(d, result, "cuMemAlloc",
                       formatString("the %" PRIu64 "-byte arena of %s%s",
                                    bytes, m.label.c_str(), memory.c_str()));
  }
  // Deterministic contents for slots no graph writes before reading.
  result = CGRT_CU(d, cuMemsetD8, m.arena, static_cast<unsigned char>(0),
                   static_cast<size_t>(bytes));
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cuMemsetD8",
                       "clearing the arena of " + m.label);
  if (!files.weights.empty()) {
    result = CGRT_CU(d, cuMemcpyHtoD, m.arena + p.weights_offset,
                     static_cast<const void *>(files.weights.data()),
                     files.weights.size());
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cuMemcpyHtoD",
                         formatString("uploading %zu bytes of weights of %s",
                                      files.weights.size(), m.label.c_str()));
  }
  // The clear and the upload ran on the legacy stream, and a copy from
  // pageable memory may return before its DMA lands; the model's stream does
  // not wait for the legacy one, so a first run could read zeros.
  result = ::cgrt::callDriver("cuCtxSynchronize", d.cuCtxSynchronize);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cuCtxSynchronize",
                       "finishing the upload of the weights of " + m.label);
  return nullptr;
}

cgrt_status buildGraphs(cgrt_model_t &m) {
  const Driver &d = *m.driver;
  const cgrt_package &p = *m.package;
  cgrt_build_env env;
  env.api = builderApi(d);
  env.context = m.context;
  env.arena = m.arena;
  env.kernels = m.kernels.empty() ? nullptr : m.kernels.data();
  env.kernel_node_added = recordKernelNode;
  env.runtime = &m;
  env.add_matmul_node = addMatmulNode;
  env.add_conv_node = addConvNode;
  env.add_collective_node = addCollectiveNode;
  m.kernelNodes.clear();

  m.graphs.assign(p.num_graphs, nullptr);
  m.execSets.assign(1, ExecSet());
  m.execSets.reserve(2); // references to a set stay valid
  std::vector<CUgraphExec> &execs = m.execSets[0].execs;
  execs.assign(p.num_graphs, nullptr);
  for (size_t i = 0; i < p.num_graphs; ++i) {
    std::string what = m.graphLabel(i) + " of " + m.label;
    CUresult result = CGRT_CU(d, cuGraphCreate, &m.graphs[i], 0u);
    if (result != CUDA_SUCCESS) {
      m.graphs[i] = nullptr;
      return driverError(d, result, "cuGraphCreate", what);
    }
    CUresult buildResult = CUDA_SUCCESS;
    m.buildingGraph = i;
    const char *failedNode = p.graph_builders[i](&env, m.graphs[i], &buildResult);
    if (failedNode || buildResult != CUDA_SUCCESS) {
      if (buildResult == CUDA_SUCCESS)
        buildResult = CUDA_ERROR_UNKNOWN;
      return makeStatusString(
          statusCodeFor(buildResult),
          "building " + what + " failed at " +
              (failedNode ? std::string(failedNode)
                          : std::string("an unnamed node")) +
              ": " + resultString(d, buildResult));
    }
    result =
        CGRT_CU(d, cuGraphInstantiateWithFlags, &execs[i], m.graphs[i], 0ull);
    if (result != CUDA_SUCCESS) {
      execs[i] = nullptr;
      return driverError(d, result, "cuGraphInstantiateWithFlags", what);
    }
    result = CGRT_CU(d, cuGraphUpload, execs[i], m.stream);
    if (result != CUDA_SUCCESS)
      return driverError(d, result, "cuGraphUpload", what);
  }
  for (const KernelNode &node : m.kernelNodes)
    m.execSets[0].current.push_back(node.built);
  return nullptr;
}

cgrt_status prepareOnDevice(cgrt_model_t &m, int32_t ordinal,
                            const PackageFiles &files) {
  const Driver *driver = nullptr;
  if (cgrt_status s = getDriver(&driver))
    return annotate(s, "cannot run " + m.label);
  m.driver = driver;
  const Driver &d = *driver;
  if (ordinal >= d.deviceCount)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "device ordinal %d is out of range: the machine has %d "
                      "CUDA device(s)",
                      ordinal, d.deviceCount);
  m.deviceOrdinal = ordinal;
  CUresult result = CGRT_CU(d, cuDeviceGet, &m.device, ordinal);
  if (result != CUDA_SUCCESS)
    return driverError(d, result, "cuDeviceGet",
                       formatString("device %d", ordinal));
  result = CGRT_CU(d, cuDevicePrimaryCtxRetain, &m.context, m.device);
  if (result != CUDA_SUCCESS) {
    m.context = nullptr;
    return driverError(d, result, "cuDevicePrimaryCtxRetain",
                       formatString("device %d", ordinal));
  }
  ScopedContext scope(d, m.context);
  if (cgrt_status s = scope.take())
    return s;
  result = CGRT_CU(d, cuStreamCreate, &m.stream,
                   static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  if (result != CUDA_SUCCESS) {
    m.stream = nullptr;
    return driverError(d, result, "cuStreamCreate", "the stream of " + m.label);
  }
  if (m.comm)
    if (cgrt_status s = checkRanksAgree(m))
      return s;
  if (cgrt_status s = loadKernels(m, files))
    return s;
  if (cgrt_status s = allocateArena(m, files))
    return s;
  if (cgrt_status s = buildGraphs(m))
    return s;
  return waitForDevice(m, m.stream, nullptr,
                       "uploading the graphs of " + m.label);
}

/// The communicator the model runs with and its device: the caller's
/// (its rank must fit the package: checkRanksAgree).
cgrt_status chooseComm(cgrt_model_t &m, const cgrt_model_options &options,
                       int32_t *device) {
  const cgrt_package &p = *m.package;
  *device = options.device_ordinal;
  if (options.comm) {
    m.comm = options.comm;
    if (options.device_ordinal != 0 &&
        options.device_ordinal != m.comm->device)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "device_ordinal %d differs from the communicator's "
                        "device %d (a model runs on its communicator's "
                        "device)",
                        options.device_ordinal, m.comm->device);
    *device = m.comm->device;
    if (m.comm->aborted.load())
      return rankFailure(m);
    if (m.comm->ranks != p.ranks)
      return makeStatus(CGRT_INVALID_ARGUMENT,
                        "%s is split over %d GPU(s), but the communicator "
                        "has %d rank(s)",
                        m.label.c_str(), static_cast<int>(p.ranks),
                        m.comm->ranks);
    return nullptr;
  }
  if (p.ranks > 1)
    return makeStatus(
        CGRT_INVALID_ARGUMENT,
        "%s is split over %d GPUs (cgc --tensor-parallel or "
        "--data-parallel): each rank loads it with a communicator "
        "(cgrt_model_options::comm; cgc-run --ranks %d runs them all)",
        m.label.c_str(), static_cast<int>(p.ranks),
        static_cast<int>(p.ranks));
  // A one-GPU package with all-reduce nodes (cgc writes none; the test
  // package's all_reduce mode does) makes a one-rank communicator when its
  // first node is built.
  return nullptr;
}

cgrt_status loadModel(const char *packageDir,
                      const cgrt_model_options *options, cgrt_model **out) {
  if (!out)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_load: out_model is NULL");
  *out = nullptr;
  if (!packageDir || !*packageDir)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_load: package_dir is NULL or empty");
  cgrt_model_options defaults;
  cgrt_model_options_init(&defaults);
  if (!options)
    options = &defaults;
  if (options->device_ordinal < 0)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_load: device_ordinal is %d",
                      options->device_ordinal);

  auto start = std::chrono::steady_clock::now();
  ModelPtr model(new cgrt_model_t());
  cgrt_model_t &m = *model;
  m.dir = packageDir;
  m.label = "package '" + m.dir + "'";
  if (cgrt_status s = openPackage(m.dir, &m.library, &m.package))
    return annotate(s, "cgrt_model_load");
  const cgrt_package &p = *m.package;
  m.label = formatString("model '%s' (package '%s')",
                         p.model_name ? p.model_name : "", m.dir.c_str());
  if (cgrt_status s = validatePackage(p, m.label))
    return annotate(s, "cgrt_model_load");
  m.active = packageGraphSet(p);
  int32_t device = 0;
  if (cgrt_status s = chooseComm(m, *options, &device))
    return annotate(s, "cgrt_model_load");
  PackageFiles files;
  if (cgrt_status s =
          readPackageFiles(m.dir, p, m.label, modelRank(m), &files))
    return annotate(s, "cgrt_model_load");
  if (cgrt_status s = prepareOnDevice(m, device, files)) {
    // The graphs' builders report a driver code; a rank that failed is
    // CGRT_RANK_FAILED whichever call saw it.
    if (m.comm && m.comm->aborted.load()) {
      cgrt_status_free(s);
      s = rankFailure(m);
    }
    return annotate(s, "cgrt_model_load");
  }
  if (verbose())
    std::fprintf(stderr,
                 "cgrt: loaded %s: %" PRIu64 "-byte arena, %" PRIu64
                 " bytes of weights, %zu kernels (%s), %zu graphs, %zu steps "
                 "in %.1f ms\n",
                 m.label.c_str(), p.arena_bytes, p.weights_bytes, p.num_kernels,
                 m.kernelsFromPtx ? "PTX" : "cubin", p.num_graphs, p.num_steps,
                 secondsSince(start) * 1e3);
  *out = model.release();
  return nullptr;
}

cgrt_status ioInfo(const char *function, const cgrt_model *model, size_t index,
                   bool input, const char **name, cgrt_tensor *info) {
  if (!model)
    return makeStatus(CGRT_INVALID_ARGUMENT, "%s: model is NULL", function);
  const cgrt_package &p = *model->package;
  size_t count = input ? p.num_inputs : p.num_outputs;
  if (index >= count)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: index %zu is out of range: %s has %zu %ss",
                      function, index, model->label.c_str(), count,
                      input ? "input" : "output");
  const cgrt_io_desc &d = input ? p.inputs[index] : p.outputs[index];
  describeTensor(d, name, info);
  return nullptr;
}

} // namespace

void cgrt::describeTensor(const cgrt_io_desc &d, const char **name,
                          cgrt_tensor *info) {
  if (name)
    *name = d.name;
  if (!info)
    return;
  std::memset(info, 0, sizeof(*info));
  info->data = nullptr;
  info->bytes = static_cast<size_t>(d.bytes);
  info->dtype = d.dtype;
  info->rank = d.rank;
  for (int32_t i = 0; i < d.rank; ++i)
    info->dims[i] = d.dims[i];
  info->memory = CGRT_MEMORY_HOST;
}

extern "C" {

void cgrt_model_options_init(cgrt_model_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->device_ordinal = 0;
  options->comm = nullptr;
}

cgrt_status cgrt_model_load(const char *package_dir,
                            const cgrt_model_options *options,
                            cgrt_model **out_model) {
  return guardApi("cgrt_model_load",
                  [&] { return loadModel(package_dir, options, out_model); });
}

void cgrt_model_release(cgrt_model *model) {
  try {
    destroyModel(model);
  } catch (...) {
    // Nothing sensible to report from a release.
  }
}

size_t cgrt_model_num_inputs(const cgrt_model *model) {
  return model ? model->package->num_inputs : 0;
}

size_t cgrt_model_num_outputs(const cgrt_model *model) {
  return model ? model->package->num_outputs : 0;
}

cgrt_status cgrt_model_input_info(const cgrt_model *model, size_t index,
                                  const char **name, cgrt_tensor *info) {
  return guardApi("cgrt_model_input_info", [&] {
    return ioInfo("cgrt_model_input_info", model, index, true, name, info);
  });
}

cgrt_status cgrt_model_output_info(const cgrt_model *model, size_t index,
                                   const char **name, cgrt_tensor *info) {
  return guardApi("cgrt_model_output_info", [&] {
    return ioInfo("cgrt_model_output_info", model, index, false, name, info);
  });
}

} // extern "C"
