//===- StubNccl.cpp - NCCL without GPUs, for tests ------------------------===//
//
// libcgrt_stub_nccl.so exports the NCCL entry points libcgrt resolves
// (lib/Runtime/Nccl.cpp), so that split packages, their communicators and
// their failures can be tested with the stub driver where there is no GPU:
//
//   CGRT_DRIVER_LIBRARY=build/lib/libcgrt_stub_driver.so
//   CGRT_NCCL_LIBRARY=build/lib/libcgrt_stub_nccl.so
//
// The ranks are processes (the stub driver runs a graph under one lock, so
// two ranks in one process would wait on each other forever). They meet in
// a folder the id names (made under $TMPDIR by ncclGetUniqueId): a rank
// joins by writing join.<rank>, and collective number k (an all-reduce or
// an all-gather) by writing its send buffer to op<k>.<rank>, waiting for
// every rank's, and adding them in rank order (so every rank gets the same
// bits) or copying them one after another. Device memory is host
// memory in the stub driver, so the collective reads and writes it
// directly, in a host function enqueued on the stream (cuLaunchHostFunc):
// captured into a graph, it runs at every launch.
//
// Non-blocking like the communicators cgrt makes: init returns
// ncclInProgress and joins on a thread; ncclCommGetAsyncError reports it.
// A collective waits for the other ranks at most
// $CGRT_STUB_NCCL_TIMEOUT_MS (default 10000), then fails the communicator
// with ncclRemoteError (a real NCCL notices a dead peer by its socket).
//
// With NCCL_COMM_ID set, every rank's ncclGetUniqueId names one folder,
// cgrt-stub-nccl.<NCCL_COMM_ID>, as a real NCCL names one address. The id
// holds the folder's name, not its path: the ranks share $TMPDIR.
//
// Faults, for tests: CGRT_STUB_NCCL_EXIT=RANK:WHEN makes rank RANK exit
// (status 3, no cleanup, like a killed process) at `init` or before
// collective number N (counted from 0, the runtime's own check included).
//
//===----------------------------------------------------------------------===//

#include <nccl.h>

#include <cuda.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#define STUB_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr const char kMagic[] = "cgrt-stub-nccl:";

struct Op;

} // namespace

struct ncclComm {
  std::string dir;
  int rank = 0, ranks = 1;
  std::atomic<int> state{ncclInProgress};
  std::atomic<bool> aborted{false};
  std::thread joiner;
  std::mutex mutex;
  std::string lastError;
  uint64_t nextOp = 0; ///< collectives run so far
  std::vector<std::unique_ptr<Op>> ops;
};

namespace {

struct Op {
  ncclComm *comm;
  const void *send;
  void *recv;
  size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;
  bool gather = false; ///< an all-gather (op unused), else an all-reduce
};

std::string globalError;

/// Where the ranks meet: $TMPDIR, else /tmp.
std::string tmpRoot() {
  const char *tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

void setError(ncclComm *comm, ncclResult_t code, const std::string &why) {
  std::lock_guard<std::mutex> lock(comm->mutex);
  comm->lastError = why;
  comm->state.store(code);
}

bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

/// Writes `data` to `path` so that a reader never sees it half written.
bool publish(const std::string &path, const void *data, size_t bytes) {
  std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out.write(static_cast<const char *>(data), static_cast<std::streamsize>(bytes));
    if (!out)
      return false;
  }
  return std::rename(partial.c_str(), path.c_str()) == 0;
}

/// Rank `rank` exits here when CGRT_STUB_NCCL_EXIT asks for `when`.
void maybeExit(int rank, const std::string &when) {
  const char *spec = std::getenv("CGRT_STUB_NCCL_EXIT");
  if (!spec)
    return;
  std::string text = spec;
  size_t colon = text.find(':');
  if (colon == std::string::npos)
    return;
  if (std::atoi(text.substr(0, colon).c_str()) == rank &&
      text.substr(colon + 1) == when) {
    std::fprintf(stderr, "stub NCCL: rank %d exits at %s "
                         "(CGRT_STUB_NCCL_EXIT)\n", rank, when.c_str());
    std::fflush(stderr);
    ::_exit(3);
  }
}

/// Waits until every rank's `prefix`.<r> exists; false when the
/// communicator is aborted or `timeoutMs` passes (negative: no limit).
bool waitForAll(ncclComm *comm, const std::string &prefix, long timeoutMs,
                int *missing) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    *missing = -1;
    for (int r = 0; r < comm->ranks && *missing < 0; ++r)
      if (!exists(comm->dir + "/" + prefix + "." + std::to_string(r)))
        *missing = r;
    if (*missing < 0)
      return true;
    if (comm->aborted.load())
      return false;
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    if (timeoutMs >= 0 && waited > timeoutMs)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

size_t typeBytes(ncclDataType_t type) {
  switch (type) {
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclFloat32:
  case ncclInt32:
    return 4;
  case ncclFloat64:
  case ncclUint64:
  case ncclInt64:
    return 8;
  default:
    return 0;
  }
}

template <typename T>
void reduce(ncclRedOp_t op, T *acc, const T *in, size_t count) {
  for (size_t i = 0; i < count; ++i)
    acc[i] = op == ncclMax ? (in[i] > acc[i] ? in[i] : acc[i]) : acc[i] + in[i];
}

void reduceAny(ncclDataType_t type, ncclRedOp_t op, void *acc, const void *in,
               size_t count) {
  switch (type) {
  case ncclFloat32:
    return reduce(op, static_cast<float *>(acc),
                  static_cast<const float *>(in), count);
  case ncclInt32:
    return reduce(op, static_cast<int32_t *>(acc),
                  static_cast<const int32_t *>(in), count);
  case ncclFloat64:
    return reduce(op, static_cast<double *>(acc),
                  static_cast<const double *>(in), count);
  case ncclUint64:
    return reduce(op, static_cast<uint64_t *>(acc),
                  static_cast<const uint64_t *>(in), count);
  default:
    return reduce(op, static_cast<int64_t *>(acc),
                  static_cast<const int64_t *>(in), count);
  }
}

long opTimeoutMs() {
  const char *env = std::getenv("CGRT_STUB_NCCL_TIMEOUT_MS");
  return env && *env ? std::atol(env) : 10000;
}

/// One collective on the stream: this rank's part published, every rank's
/// read back, summed (all-reduce) or laid one after another (all-gather).
void runCollective(void *data) {
  Op &op = *static_cast<Op *>(data);
  ncclComm *comm = op.comm;
  if (comm->aborted.load() || comm->state.load() != ncclSuccess)
    return;
  uint64_t k = comm->nextOp++;
  maybeExit(comm->rank, std::to_string(k));
  size_t bytes = op.count * typeBytes(op.type);
  std::string prefix = "op" + std::to_string(k);
  std::string mine = comm->dir + "/" + prefix + "." + std::to_string(comm->rank);
  if (!publish(mine, op.send, bytes)) {
    setError(comm, ncclSystemError, "cannot write " + mine);
    return;
  }
  int missing = -1;
  if (!waitForAll(comm, prefix, opTimeoutMs(), &missing)) {
    setError(comm, ncclRemoteError,
             "stub: rank " + std::to_string(missing) +
                 " did not reach collective " + std::to_string(k));
    return;
  }
  std::vector<char> sum(bytes), part(bytes);
  for (int r = 0; r < comm->ranks; ++r) {
    std::ifstream in(comm->dir + "/" + prefix + "." + std::to_string(r),
                     std::ios::binary);
    char *into = op.gather ? static_cast<char *>(op.recv) + r * bytes
                           : (r == 0 ? sum.data() : part.data());
    in.read(into, static_cast<std::streamsize>(bytes));
    if (!op.gather && r > 0)
      reduceAny(op.type, op.op, sum.data(), part.data(), op.count);
  }
  if (!op.gather)
    std::memcpy(op.recv, sum.data(), bytes);
  // Every rank wrote op k, so each has read op k-1: its file may go.
  if (k > 0)
    std::remove((comm->dir + "/op" + std::to_string(k - 1) + "." +
                 std::to_string(comm->rank))
                    .c_str());
}

using LaunchHostFunc = CUresult (*)(CUstream, CUhostFn, void *);

LaunchHostFunc launchHostFunc() {
  static LaunchHostFunc fn = [] {
    const char *path = std::getenv("CGRT_DRIVER_LIBRARY");
    void *handle = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    return handle ? reinterpret_cast<LaunchHostFunc>(
                        dlsym(handle, "cuLaunchHostFunc"))
                  : nullptr;
  }();
  return fn;
}

} // namespace

extern "C" {

STUB_EXPORT ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

STUB_EXPORT const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclSystemError:
    return "unhandled system error";
  case ncclInvalidArgument:
    return "invalid argument";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  default:
    return "stub NCCL error";
  }
}

STUB_EXPORT const char *ncclGetLastError(ncclComm_t comm) {
  if (!comm)
    return globalError.c_str();
  std::lock_guard<std::mutex> lock(comm->mutex);
  return comm->lastError.c_str();
}

STUB_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  // The id holds the folder's name; every rank finds it under its own
  // $TMPDIR (the same in tests), so a long TMPDIR still fits in 128 bytes.
  std::string name;
  if (const char *where = std::getenv("NCCL_COMM_ID")) {
    // NCCL_COMM_ID=HOST:PORT: every rank names the same folder.
    name = std::string("cgrt-stub-nccl.") + where;
    for (char &c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' &&
          c != '-')
        c = '_';
    if (::mkdir(tmpRoot().append("/").append(name).c_str(), 0700) != 0 &&
        errno != EEXIST)
      name.clear();
  } else {
    std::string pattern = tmpRoot() + "/cgrt-stub-nccl.XXXXXX";
    std::vector<char> path(pattern.begin(), pattern.end());
    path.push_back('\0');
    if (mkdtemp(path.data()))
      name = std::string(path.data()).substr(tmpRoot().size() + 1);
  }
  if (name.empty() || sizeof(kMagic) + name.size() > sizeof(id->internal)) {
    globalError = "cannot make a folder under " + tmpRoot();
    return ncclSystemError;
  }
  std::memset(id->internal, 0, sizeof(id->internal));
  std::snprintf(id->internal, sizeof(id->internal), "%s%s", kMagic,
                name.c_str());
  return ncclSuccess;
}

STUB_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *out, int ranks,
                                                ncclUniqueId id, int rank,
                                                ncclConfig_t *config) {
  std::string text(id.internal, strnlen(id.internal, sizeof(id.internal)));
  if (text.rfind(kMagic, 0) != 0 || rank < 0 || rank >= ranks) {
    globalError = "not a stub id, or a bad rank";
    return ncclInvalidArgument;
  }
  maybeExit(rank, "init");
  auto comm = new ncclComm();
  comm->dir = tmpRoot() + "/" + text.substr(sizeof(kMagic) - 1);
  comm->rank = rank;
  comm->ranks = ranks;
  *out = comm;
  std::string mine = comm->dir + "/join." + std::to_string(rank);
  if (!publish(mine, "", 0)) {
    setError(comm, ncclSystemError, "cannot write " + mine);
    return ncclSystemError;
  }
  auto join = [comm] {
    int missing = -1;
    if (waitForAll(comm, "join", -1, &missing))
      comm->state.store(ncclSuccess);
  };
  if (config && config->blocking == 0) {
    comm->joiner = std::thread(join);
    return ncclInProgress;
  }
  join();
  return static_cast<ncclResult_t>(comm->state.load());
}

STUB_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
                                               ncclResult_t *state) {
  *state = static_cast<ncclResult_t>(comm->state.load());
  return ncclSuccess;
}

namespace {
/// Runs `op` on `stream` (a host function of the stub driver); the
/// communicator keeps it, as a captured graph may run it again.
ncclResult_t enqueue(ncclComm_t comm, Op *op, cudaStream_t stream) {
  comm->ops.push_back(std::unique_ptr<Op>(op));
  LaunchHostFunc launch = launchHostFunc();
  if (!launch) {
    setError(comm, ncclSystemError,
             "the stub NCCL needs the stub driver (CGRT_DRIVER_LIBRARY)");
    return ncclSystemError;
  }
  CUresult r = launch(reinterpret_cast<CUstream>(stream), runCollective,
                      op);
  return r == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError;
}
} // namespace

STUB_EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv,
                                       size_t count, ncclDataType_t type,
                                       ncclRedOp_t op, ncclComm_t comm,
                                       cudaStream_t stream) {
  if (comm->state.load() != ncclSuccess)
    return ncclInvalidArgument;
  if (typeBytes(type) < 4 || (op != ncclSum && op != ncclMax)) {
    setError(comm, ncclInvalidArgument, "the stub adds or maxes 4- and "
                                        "8-byte types only");
    return ncclInvalidArgument;
  }
  return enqueue(comm, new Op{comm, send, recv, count, type, op}, stream);
}

STUB_EXPORT ncclResult_t ncclAllGather(const void *send, void *recv,
                                       size_t count, ncclDataType_t type,
                                       ncclComm_t comm, cudaStream_t stream) {
  if (comm->state.load() != ncclSuccess)
    return ncclInvalidArgument;
  if (typeBytes(type) == 0) {
    setError(comm, ncclInvalidArgument, "the stub gathers 2-, 4- and "
                                        "8-byte types only");
    return ncclInvalidArgument;
  }
  Op *op = new Op{comm, send, recv, count, type, ncclSum};
  op->gather = true;
  return enqueue(comm, op, stream);
}

STUB_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return comm->state.load() == ncclSuccess ? ncclSuccess : ncclInvalidArgument;
}

namespace {
void destroy(ncclComm_t comm) {
  comm->aborted.store(true);
  if (comm->joiner.joinable())
    comm->joiner.join();
  delete comm;
}
} // namespace

STUB_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  destroy(comm);
  return ncclSuccess;
}

STUB_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm)
    destroy(comm);
  return ncclSuccess;
}

} // extern "C"
