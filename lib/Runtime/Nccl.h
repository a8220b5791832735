//===- Nccl.h - communicators and all-reduce nodes --------------*- C++ -*-===//
//
// A package split over several GPUs meets the other ranks in NCCL
// all-reduce calls. NCCL is dlopened like the other libraries
// ($CGRT_NCCL_LIBRARY, else libnccl.so.2), only when a package or a
// caller asks for a communicator. Every communicator is made non-blocking,
// so that no wait on the other ranks is left to NCCL: the runtime polls
// (the stream, and NCCL's asynchronous error) with a deadline, and aborts
// the communicator when a rank is dead or late, instead of hanging.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_RUNTIME_NCCL_H
#define CGRT_RUNTIME_NCCL_H

#include "cgrt/cgrt.h"
#include "cgrt/package.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct cgrt_comm_t {
  void *nccl = nullptr; ///< ncclComm_t
  int32_t rank = 0, ranks = 1, device = 0;
  int64_t timeoutMs = 0;
  CUdevice cuDevice = 0;
  CUcontext context = nullptr; ///< the device's primary context, retained
  /// Set once the communicator is aborted; every later wait fails with
  /// `failure`.
  std::atomic<bool> aborted{false};
  /// Guards `nccl` (every call that uses it, and the abort that frees it)
  /// and `failure`.
  std::mutex mutex;
  std::string failure;

  /// The watchdog: a thread that aborts the communicator when NCCL reports
  /// an error or an asynchronous run (which no call waits for) is not done
  /// by its deadline, so that a caller's own synchronization does not hang
  /// on a dead rank.
  struct Watch {
    const void *owner; ///< the model
    CUevent event;     ///< recorded at the end of its last asynchronous run
    std::chrono::steady_clock::time_point deadline;
    std::string what;
  };
  std::thread watchdog;
  std::mutex watchMutex; ///< guards watches and stopping
  std::condition_variable wake;
  std::vector<Watch> watches;
  bool stopping = false;
};

struct cgrt_model_t;

namespace cgrt {

/// The default of cgrt_comm_create's timeout (and of a model's own
/// one-rank communicator).
constexpr int64_t kDefaultCommTimeoutMs = 300000;

/// Makes a one-rank communicator on `device` (a package with all-reduce
/// nodes loaded without one).
cgrt_status makeOneRankComm(int32_t device, cgrt_comm_t **out);

/// Frees `comm` (see cgrt_comm_release).
void releaseComm(cgrt_comm_t *comm);

/// Compares the model's package with every other rank's: a hash of
/// what must be equal, all-reduced with max over [h, ~h] (every rank sees
/// max == h and max of ~h == ~h only when all hashes are equal). Needs the
/// model's context current; every rank must call it.
cgrt_status checkRanksAgree(cgrt_model_t &model);

/// Waits until the work on `stream` (or, when `event` is not null, until
/// `event`) is done. Without a communicator this is cuStreamSynchronize
/// (cuEventSynchronize); with one it polls, and aborts the communicator
/// (CGRT_RANK_FAILED) when NCCL reports an error or the communicator's
/// timeout passes. `what` names the wait in failures.
cgrt_status waitForDevice(cgrt_model_t &model, CUstream stream, CUevent event,
                          const std::string &what);

/// Has the watchdog of `model`'s communicator watch the asynchronous run
/// just enqueued (its end is `event`): unless it is done within the
/// communicator's timeout, the communicator is aborted. Replaces the
/// model's earlier watch. A no-op without a communicator.
void watchAsyncRun(cgrt_model_t &model, CUevent event);
/// Forgets `model`'s watch (before its event is destroyed).
void unwatchAsyncRuns(cgrt_model_t &model);

/// A model's communicator failed: the status every call returns.
cgrt_status rankFailure(const cgrt_model_t &model);

/// cgrt_build_env::add_collective_node: ncclAllReduce (sum) or
/// ncclAllGather in the arena, run once and captured into a child graph
/// node.
const char *addCollectiveNode(void *model, CUgraphNode *node, CUgraph graph,
                              const CUgraphNode *deps, size_t numDeps,
                              const cgrt_collective_desc *desc,
                              CUresult *result);

} // namespace cgrt

#endif // CGRT_RUNTIME_NCCL_H
