//===- Nccl.cpp - communicators and collective nodes ---------------------===//
//
// NCCL's header is used for types only; every entry point is resolved with
// dlsym, so libcgrt links nothing of NCCL and packages without collective
// nodes never load it.
//
//===----------------------------------------------------------------------===//

#include "Nccl.h"

#include "DType.h"
#include "LibraryNodes.h"
#include "Model.h"
#include "Package.h"
#include "Status.h"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace cgrt {

namespace {

#define CGRT_NCCL_ENTRY_POINTS(X)                                              \
  X(ncclGetVersion)                                                            \
  X(ncclGetErrorString)                                                        \
  X(ncclGetLastError)                                                          \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRankConfig)                                                    \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclCommFinalize)                                                          \
  X(ncclCommDestroy)                                                           \
  X(ncclCommAbort)                                                             \
  X(ncclAllReduce)                                                            \
  X(ncclAllGather)

struct Library {
#define CGRT_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  CGRT_NCCL_ENTRY_POINTS(CGRT_DECLARE_ENTRY)
#undef CGRT_DECLARE_ENTRY
  std::string path;
  std::string error; ///< why the library cannot be used; empty when it can
};

/// Non-blocking communicators (the `blocking` field of ncclConfig_t) came
/// with NCCL 2.14.
constexpr int kMinimumVersion = 21400;

void loadLibrary(Library &lib) {
  void *handle = openLibrary("CGRT_NCCL_LIBRARY", {"libnccl.so.2"}, "NCCL",
                             "no --tensor-parallel or --data-parallel",
                             lib.error, lib.path);
  if (!handle)
    return;
#define CGRT_RESOLVE(name)                                                     \
  if (!resolveEntryPoint(handle, #name, reinterpret_cast<void **>(&lib.name),  \
                         lib.path, lib.error))                                 \
    return;
  CGRT_NCCL_ENTRY_POINTS(CGRT_RESOLVE)
#undef CGRT_RESOLVE
  int version = 0;
  if (lib.ncclGetVersion(&version) != ncclSuccess || version < kMinimumVersion)
    lib.error = formatString("%s is NCCL %d; cgrt needs 2.14 or newer",
                             lib.path.c_str(), version);
}

const Library &library() { return loadOnce(loadLibrary); }

/// "ncclSystemError (the last error NCCL logged)".
std::string ncclError(const Library &lib, ncclResult_t result,
                      ncclComm_t comm = nullptr) {
  std::string text = lib.ncclGetErrorString(result);
  const char *last = lib.ncclGetLastError(comm);
  if (last && *last)
    text += std::string(": ") + last;
  return text;
}

std::string describe(const cgrt_comm_t &comm) {
  return formatString("rank %d of %d (device %d)", comm.rank, comm.ranks,
                      comm.device);
}

/// Aborts `comm` once, keeping `why` for every later call.
void abortComm(cgrt_comm_t &comm, const std::string &why) {
  std::lock_guard<std::mutex> lock(comm.mutex);
  if (comm.aborted.load())
    return;
  comm.failure = describe(comm) + ": " + why;
  library().ncclCommAbort(static_cast<ncclComm_t>(comm.nccl));
  comm.nccl = nullptr;
  comm.aborted.store(true);
}

cgrt_status abortedStatus(cgrt_comm_t &comm) {
  std::lock_guard<std::mutex> lock(comm.mutex);
  return makeStatusString(CGRT_RANK_FAILED,
                          comm.failure + "; the communicator was aborted");
}

/// NCCL's asynchronous state of `comm` (ncclInProgress while a call is
/// being issued); false once the communicator is aborted (its handle is
/// gone).
bool asyncState(cgrt_comm_t &comm, ncclResult_t *state) {
  std::lock_guard<std::mutex> lock(comm.mutex);
  if (comm.aborted.load())
    return false;
  *state = ncclSuccess;
  ncclResult_t asked = library().ncclCommGetAsyncError(
      static_cast<ncclComm_t>(comm.nccl), state);
  if (asked != ncclSuccess)
    *state = asked;
  return true;
}

/// Aborts `comm` for `result`, an NCCL failure: `prefix` then NCCL's
/// words for it (read with the handle held against another abort).
void abortForNcclError(cgrt_comm_t &comm, const std::string &prefix,
                       ncclResult_t result) {
  std::string why;
  {
    std::lock_guard<std::mutex> lock(comm.mutex);
    if (!comm.aborted.load())
      why = ncclError(library(), result, static_cast<ncclComm_t>(comm.nccl));
  }
  abortComm(comm, prefix + why);
}

/// Aborts `comm` when NCCL reports an error; false then.
bool checkNcclError(cgrt_comm_t &comm, const std::string &what) {
  ncclResult_t state = ncclSuccess;
  if (!asyncState(comm, &state))
    return false;
  if (state == ncclSuccess || state == ncclInProgress)
    return true;
  abortForNcclError(comm, what + " failed: NCCL reports ", state);
  return false;
}

/// Polls `done` (a CUresult: CUDA_SUCCESS, CUDA_ERROR_NOT_READY or a
/// failure) and NCCL's asynchronous error until the work is done, NCCL
/// fails, or the communicator's timeout passes (then it is aborted).
template <typename Query>
cgrt_status pollWithDeadline(const Driver &d, cgrt_comm_t &comm,
                             const std::string &what, Query done) {
  using Clock = std::chrono::steady_clock;
  if (comm.aborted.load())
    return abortedStatus(comm);
  auto deadline = Clock::now() + std::chrono::milliseconds(comm.timeoutMs);
  for (unsigned polls = 0;; ++polls) {
    // NCCL first: work that failed on a dead peer may still end, with
    // wrong values. (The watchdog may have aborted it meanwhile.)
    if (!checkNcclError(comm, what))
      return abortedStatus(comm);
    CUresult r = done();
    if (r == CUDA_SUCCESS)
      return nullptr;
    if (r != CUDA_ERROR_NOT_READY)
      return driverError(d, r, "waiting", what + " on " + describe(comm));
    if (Clock::now() > deadline) {
      abortComm(comm, formatString("%s did not finish within %.3g s: another "
                                   "rank is dead, late, or made other calls",
                                   what.c_str(), comm.timeoutMs / 1e3));
      return abortedStatus(comm);
    }
    // A run's wait should cost microseconds; a rank that waits on a late
    // one should not burn a core.
    if (polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

/// Waits until NCCL has finished issuing the last call on `comm` (a
/// non-blocking communicator returns ncclInProgress meanwhile).
cgrt_status waitForNccl(const Driver &d, cgrt_comm_t &comm, ncclResult_t issued,
                        const std::string &what) {
  if (issued == ncclSuccess)
    return nullptr;
  if (issued != ncclInProgress) {
    abortForNcclError(comm, what + " failed: ", issued);
    return abortedStatus(comm);
  }
  return pollWithDeadline(d, comm, what, [&] {
    ncclResult_t state = ncclSuccess;
    if (!asyncState(comm, &state))
      return CUDA_ERROR_NOT_READY; // aborted: the next poll says so
    return state == ncclInProgress ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
  });
}

/// Issues `call` (an NCCL call on the communicator's handle) with the
/// handle held against an abort, then waits until NCCL has issued it.
template <typename Call>
cgrt_status issue(cgrt_comm_t &comm, const std::string &what, Call call) {
  const Driver *driver = nullptr;
  if (cgrt_status s = getDriver(&driver))
    return s;
  ncclResult_t issued;
  {
    std::lock_guard<std::mutex> lock(comm.mutex);
    if (comm.aborted.load())
      issued = ncclInvalidUsage;
    else
      issued = call(static_cast<ncclComm_t>(comm.nccl));
  }
  if (comm.aborted.load())
    return abortedStatus(comm);
  return waitForNccl(*driver, comm, issued, what);
}

/// NCCL's type for the value of a package's dtype field (an int: a package
/// may hold any value there, and loading an invalid enum is undefined).
bool ncclType(int dtype, ncclDataType_t *type) {
  switch (dtype) {
  case CGRT_FLOAT32:
    *type = ncclFloat32;
    return true;
  case CGRT_FLOAT16:
    *type = ncclFloat16;
    return true;
  case CGRT_BFLOAT16:
    *type = ncclBfloat16;
    return true;
  case CGRT_FLOAT64:
    *type = ncclFloat64;
    return true;
  default:
    return false;
  }
}

/// The watchdog's one look: NCCL's error, then each watched run.
void watchOnce(const Driver &d, cgrt_comm_t &comm) {
  if (!checkNcclError(comm, "a run (seen by the watchdog)"))
    return;
  auto now = std::chrono::steady_clock::now();
  ScopedContext scope(d, comm.context);
  if (cgrt_status s = scope.take()) {
    cgrt_status_free(s);
    return;
  }
  for (size_t i = 0; i < comm.watches.size();) {
    cgrt_comm_t::Watch &w = comm.watches[i];
    CUresult r = CGRT_CU(d, cuEventQuery, w.event);
    if (r == CUDA_ERROR_NOT_READY && now <= w.deadline) {
      ++i;
      continue;
    }
    if (r == CUDA_ERROR_NOT_READY) {
      abortComm(comm, formatString("%s did not finish within %.3g s: "
                                   "another rank is dead, late, or made "
                                   "other calls",
                                   w.what.c_str(), comm.timeoutMs / 1e3));
      comm.watches.clear();
      return;
    }
    comm.watches.erase(comm.watches.begin() + i); // done (or unknowable)
  }
}

void runWatchdog(cgrt_comm_t *comm) {
  const Driver *driver = nullptr;
  if (cgrt_status s = getDriver(&driver)) {
    cgrt_status_free(s);
    return;
  }
  std::unique_lock<std::mutex> lock(comm->watchMutex);
  while (!comm->stopping && !comm->aborted.load()) {
    comm->wake.wait_for(lock, std::chrono::milliseconds(50));
    if (!comm->stopping)
      watchOnce(*driver, *comm);
  }
}

void stopWatchdog(cgrt_comm_t &comm) {
  {
    std::lock_guard<std::mutex> lock(comm.watchMutex);
    comm.stopping = true;
  }
  comm.wake.notify_all();
  if (comm.watchdog.joinable())
    comm.watchdog.join();
}

cgrt_status createComm(const cgrt_comm_id *id, int32_t ranks, int32_t rank,
                       int32_t device, int64_t timeoutMs, cgrt_comm_t **out) {
  if (!out)
    return makeStatus(CGRT_INVALID_ARGUMENT, "out_comm is NULL");
  *out = nullptr;
  if (!id)
    return makeStatus(CGRT_INVALID_ARGUMENT, "id is NULL");
  if (ranks < 1 || rank < 0 || rank >= ranks)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "rank %d of %d: a rank is 0 to ranks-1", rank, ranks);
  if (device < 0 || timeoutMs < 0)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "device %d, timeout %lld ms: neither may be negative",
                      device, static_cast<long long>(timeoutMs));
  const Library &lib = library();
  if (!lib.error.empty())
    return makeStatusString(CGRT_NOT_FOUND, lib.error);
  const Driver *driver = nullptr;
  if (cgrt_status s = getDriver(&driver))
    return annotate(s, "cannot make a communicator");
  const Driver &d = *driver;
  if (device >= d.deviceCount)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "rank %d of %d: device %d is out of range: the machine "
                      "has %d CUDA device(s)",
                      rank, ranks, device, d.deviceCount);
  auto comm = new cgrt_comm_t();
  comm->rank = rank;
  comm->ranks = ranks;
  comm->device = device;
  comm->timeoutMs = timeoutMs ? timeoutMs : kDefaultCommTimeoutMs;
  std::string what = describe(*comm);
  CUresult r = CGRT_CU(d, cuDeviceGet, &comm->cuDevice, device);
  if (r == CUDA_SUCCESS)
    r = CGRT_CU(d, cuDevicePrimaryCtxRetain, &comm->context, comm->cuDevice);
  if (r != CUDA_SUCCESS) {
    comm->context = nullptr;
    releaseComm(comm);
    return driverError(d, r, "cuDevicePrimaryCtxRetain", what);
  }
  // NCCL works on the current device, which the CUDA runtime takes from
  // the current context.
  ScopedContext scope(d, comm->context);
  if (cgrt_status s = scope.take()) {
    releaseComm(comm);
    return s;
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclUniqueId unique;
  static_assert(sizeof(unique) == sizeof(id->bytes), "NCCL's id size");
  std::memcpy(&unique, id->bytes, sizeof(unique));
  ncclComm_t handle = nullptr;
  ncclResult_t issued =
      lib.ncclCommInitRankConfig(&handle, ranks, unique, rank, &config);
  comm->nccl = handle;
  if (issued != ncclSuccess && issued != ncclInProgress) {
    std::string why = ncclError(lib, issued, handle);
    if (handle)
      lib.ncclCommAbort(handle);
    comm->nccl = nullptr;
    releaseComm(comm);
    return makeStatusString(CGRT_RANK_FAILED,
                            what + ": ncclCommInitRankConfig failed: " + why);
  }
  if (cgrt_status s = waitForNccl(d, *comm, issued,
                                  "joining the other ranks")) {
    releaseComm(comm);
    return s;
  }
  comm->watchdog = std::thread(runWatchdog, comm);
  if (verbose())
    std::fprintf(stderr, "cgrt: %s: communicator made (%s)\n", what.c_str(),
                 lib.path.c_str());
  *out = comm;
  return nullptr;
}

/// A new communicator's id (ncclGetUniqueId).
cgrt_status makeCommId(cgrt_comm_id *id) {
  const Library &lib = library();
  if (!lib.error.empty())
    return makeStatusString(CGRT_NOT_FOUND, lib.error);
  ncclUniqueId unique;
  ncclResult_t result = lib.ncclGetUniqueId(&unique);
  if (result != ncclSuccess)
    return makeStatusString(CGRT_RANK_FAILED, "ncclGetUniqueId failed: " +
                                                  ncclError(lib, result));
  static_assert(sizeof(unique) == sizeof(id->bytes), "NCCL's id size");
  std::memcpy(id->bytes, &unique, sizeof(unique));
  return nullptr;
}

/// What every rank's package must have alike: its shape of arena, graphs
/// and kernels, and the checksums of every rank's weights.
uint64_t packageFingerprint(const cgrt_package &p) {
  uint64_t h = kFnvOffsetBasis;
  auto mix = [&](const void *data, size_t size) { h = fnv1a64(data, size, h); };
  auto mixString = [&](const char *s) {
    if (s)
      mix(s, std::strlen(s) + 1);
  };
  mix(&p.ranks, sizeof(p.ranks));
  mix(&p.arena_bytes, sizeof(p.arena_bytes));
  mix(&p.weights_bytes, sizeof(p.weights_bytes));
  mix(&p.weights_checksum, sizeof(p.weights_checksum));
  for (int32_t r = 0; p.rank_weights_checksums && r < p.ranks; ++r)
    mix(&p.rank_weights_checksums[r], sizeof(uint64_t));
  for (size_t i = 0; i < p.num_kernels; ++i)
    mixString(p.kernel_names[i]);
  mix(&p.num_graphs, sizeof(p.num_graphs));
  for (size_t i = 0; p.graph_names && i < p.num_graphs; ++i)
    mixString(p.graph_names[i]);
  return h;
}

} // namespace

cgrt_status makeOneRankComm(int32_t device, cgrt_comm_t **out) {
  cgrt_comm_id id;
  if (cgrt_status s = makeCommId(&id))
    return s;
  return createComm(&id, 1, 0, device, kDefaultCommTimeoutMs, out);
}

void releaseComm(cgrt_comm_t *comm) {
  if (!comm)
    return;
  stopWatchdog(*comm);
  if (comm->nccl && !comm->aborted.load()) {
    const Library &lib = library();
    const Driver *driver = nullptr;
    ncclComm_t handle = static_cast<ncclComm_t>(comm->nccl);
    if (!getDriver(&driver)) {
      ScopedContext scope(*driver, comm->context);
      // Finalizing waits for this rank's outstanding work; a rank whose
      // peers are gone would wait forever, so it is bounded like a run.
      cgrt_status s = waitForNccl(*driver, *comm, lib.ncclCommFinalize(handle),
                                  "finishing the communicator");
      if (!s)
        lib.ncclCommDestroy(handle);
      cgrt_status_free(s); // an abort freed it
    } else {
      lib.ncclCommAbort(handle);
    }
  }
  if (comm->context) {
    const Driver *driver = nullptr;
    if (cgrt_status s = getDriver(&driver))
      cgrt_status_free(s);
    else
      CGRT_CU(*driver, cuDevicePrimaryCtxRelease, comm->cuDevice);
  }
  delete comm;
}

void watchAsyncRun(cgrt_model_t &m, CUevent event) {
  if (!m.comm)
    return;
  cgrt_comm_t &comm = *m.comm;
  std::lock_guard<std::mutex> lock(comm.watchMutex);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(comm.timeoutMs);
  for (cgrt_comm_t::Watch &w : comm.watches)
    if (w.owner == &m) {
      w.event = event;
      w.deadline = deadline;
      return;
    }
  comm.watches.push_back(
      {&m, event, deadline, "an asynchronous run of " + m.label});
}

void unwatchAsyncRuns(cgrt_model_t &m) {
  if (!m.comm)
    return;
  cgrt_comm_t &comm = *m.comm;
  std::lock_guard<std::mutex> lock(comm.watchMutex);
  comm.watches.erase(
      std::remove_if(comm.watches.begin(), comm.watches.end(),
                     [&](const cgrt_comm_t::Watch &w) { return w.owner == &m; }),
      comm.watches.end());
}

cgrt_status rankFailure(const cgrt_model_t &m) {
  return abortedStatus(*m.comm);
}

cgrt_status waitForDevice(cgrt_model_t &m, CUstream stream, CUevent event,
                          const std::string &what) {
  const Driver &d = *m.driver;
  if (!m.comm) {
    CUresult r = event ? CGRT_CU(d, cuEventSynchronize, event)
                       : CGRT_CU(d, cuStreamSynchronize, stream);
    return r == CUDA_SUCCESS
               ? nullptr
               : driverError(d, r,
                             event ? "cuEventSynchronize"
                                   : "cuStreamSynchronize",
                             what);
  }
  return pollWithDeadline(d, *m.comm, what, [&] {
    return event ? CGRT_CU(d, cuEventQuery, event)
                 : CGRT_CU(d, cuStreamQuery, stream);
  });
}

cgrt_status checkRanksAgree(cgrt_model_t &m) {
  const cgrt_package &p = *m.package;
  cgrt_comm_t &comm = *m.comm;
  if (comm.aborted.load())
    return abortedStatus(comm);
  const Driver &d = *m.driver;
  const Library &lib = library();
  uint64_t mine = packageFingerprint(p);
  uint64_t values[2] = {mine, ~mine};
  CUdeviceptr buffer = 0;
  CUresult r = CGRT_CU(d, cuMemAlloc, &buffer, sizeof(values));
  if (r != CUDA_SUCCESS)
    return driverError(d, r, "cuMemAlloc", "comparing the ranks' packages");
  r = CGRT_CU(d, cuMemcpyHtoD, buffer, static_cast<const void *>(values),
              sizeof(values));
  cgrt_status s = nullptr;
  if (r != CUDA_SUCCESS) {
    s = driverError(d, r, "cuMemcpyHtoD", "comparing the ranks' packages");
  } else {
    void *data = reinterpret_cast<void *>(buffer);
    s = issue(comm, "comparing the ranks' packages", [&](ncclComm_t handle) {
      return lib.ncclAllReduce(data, data, 2, ncclUint64, ncclMax, handle,
                               m.stream);
    });
    if (!s)
      s = waitForDevice(m, m.stream, nullptr, "comparing the ranks' packages");
    if (!s) {
      r = CGRT_CU(d, cuMemcpyDtoH, static_cast<void *>(values), buffer,
                  sizeof(values));
      if (r != CUDA_SUCCESS)
        s = driverError(d, r, "cuMemcpyDtoH", "comparing the ranks' packages");
    }
  }
  CGRT_CU(d, cuMemFree, buffer);
  if (s)
    return s;
  if (values[0] != mine || values[1] != ~mine)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "%s: %s loaded another package than some other rank "
                      "(their graphs, kernels or weights differ); every rank "
                      "must load the same package",
                      m.label.c_str(), describe(comm).c_str());
  return nullptr;
}

const char *addCollectiveNode(void *model, CUgraphNode *node, CUgraph graph,
                              const CUgraphNode *deps, size_t numDeps,
                              const cgrt_collective_desc *desc,
                              CUresult *result) {
  cgrt_model_t &m = *static_cast<cgrt_model_t *>(model);
  const Library &lib = library();
  ncclDataType_t type = ncclFloat32;
  // enumValue: a package may hold any int there (loading an invalid enum
  // is undefined).
  int collective = enumValue(desc->collective);
  bool gather = collective == CGRT_ALL_GATHER;
  auto prepare = [&](LibraryState &) -> std::string {
    if (!m.comm) {
      // A one-GPU package with an all-reduce: a communicator of one.
      cgrt_status s = makeOneRankComm(m.deviceOrdinal, &m.comm);
      std::string error = s ? cgrt_status_get_message(s) : "";
      cgrt_status_free(s);
      if (!error.empty())
        return error;
      m.ownsComm = true;
    }
    if (collective != CGRT_ALL_REDUCE_SUM && !gather)
      return "an unknown collective (" + std::to_string(collective) + ")";
    if (!ncclType(enumValue(desc->type), &type))
      return "a collective of a type other than f32, f16, bf16, f64";
    if (desc->count < 0)
      return "a negative count";
    // The arena is the only memory the call may touch (an all-gather
    // writes every rank's part).
    uint64_t arena = m.package->arena_bytes;
    uint64_t element = dtypeBytes(enumValue(desc->type));
    uint64_t parts = gather ? m.comm->ranks : 1;
    uint64_t count = static_cast<uint64_t>(desc->count);
    if (count > arena / element / parts || desc->send > arena ||
        desc->recv > arena || count * element > arena - desc->send ||
        count * element * parts > arena - desc->recv)
      return "buffers outside the arena (" + std::to_string(count) +
             " elements from offset " + std::to_string(desc->send) +
             " into offset " + std::to_string(desc->recv) + ", " +
             std::to_string(parts) + " part(s); the arena has " +
             std::to_string(arena) + " bytes)";
    return "";
  };
  auto run = [&](CUstream stream) -> std::string {
    cgrt_comm_t &comm = *m.comm;
    void *send = reinterpret_cast<void *>(m.arena + desc->send);
    void *recv = reinterpret_cast<void *>(m.arena + desc->recv);
    size_t count = static_cast<size_t>(desc->count);
    cgrt_status s = issue(
        comm, gather ? "ncclAllGather" : "ncclAllReduce",
        [&](ncclComm_t handle) {
          return gather ? lib.ncclAllGather(send, recv, count, type, handle,
                                            stream)
                        : lib.ncclAllReduce(send, recv, count, type, ncclSum,
                                            handle, stream);
        });
    std::string error = s ? cgrt_status_get_message(s) : "";
    cgrt_status_free(s);
    return error;
  };
  return addLibraryNode(m, "NCCL", desc->label, desc->kernel, lib.error,
                        prepare, run, node, graph, deps, numDeps, result);
}

} // namespace cgrt

using namespace cgrt;

extern "C" {

cgrt_status cgrt_comm_id_create(cgrt_comm_id *id) {
  return guardApi("cgrt_comm_id_create", [&]() -> cgrt_status {
    if (!id)
      return makeStatus(CGRT_INVALID_ARGUMENT, "cgrt_comm_id_create: id is "
                                               "NULL");
    return annotate(makeCommId(id), "cgrt_comm_id_create");
  });
}

cgrt_status cgrt_comm_create(const cgrt_comm_id *id, int32_t ranks,
                             int32_t rank, int32_t device_ordinal,
                             int64_t timeout_ms, cgrt_comm **out_comm) {
  return guardApi("cgrt_comm_create", [&] {
    return annotate(createComm(id, ranks, rank, device_ordinal, timeout_ms,
                               out_comm),
                    "cgrt_comm_create");
  });
}

int32_t cgrt_comm_rank(const cgrt_comm *comm) { return comm ? comm->rank : -1; }
int32_t cgrt_comm_ranks(const cgrt_comm *comm) {
  return comm ? comm->ranks : 0;
}
int32_t cgrt_comm_device(const cgrt_comm *comm) {
  return comm ? comm->device : -1;
}

void cgrt_comm_release(cgrt_comm *comm) {
  try {
    releaseComm(comm);
  } catch (...) {
    // Nothing sensible to report from a release.
  }
}

} // extern "C"
