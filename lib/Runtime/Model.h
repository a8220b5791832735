//===- Model.h - a loaded package -------------------------------*- C++ -*-===//

#ifndef CGRT_RUNTIME_MODEL_H
#define CGRT_RUNTIME_MODEL_H

#include "LibraryNodes.h"
#include "Nccl.h"
#include "Driver.h"
#include "Status.h"

#include "cgrt/package.h"

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace cgrt {
/// The I/O tables and steps one run uses: the package's own, or those of
/// the shape bucket its inputs select.
struct GraphSet {
  const cgrt_io_desc *inputs = nullptr;
  const cgrt_io_desc *outputs = nullptr;
  size_t numSteps = 0;
  const cgrt_step *steps = nullptr;
  int64_t value = 0; ///< the bucket's value of the bucketed dim (0: none)
  /// The bucketed dim's size in the caller's tensors; below `value` when
  /// the run is padded into the bucket.
  int64_t used = 0;
  bool padded() const { return used < value; }
};

/// A kernel node as its builder added it (zero-copy I/O rebinds it).
struct KernelNode {
  size_t graph = 0;
  CUgraphNode node = nullptr;
  CUDA_KERNEL_NODE_PARAMS params{}; ///< kernelParams left NULL
  std::vector<CUdeviceptr> built;   ///< its arena pointers
};

/// Which caller buffers a run reads and writes in place (0: copied through
/// the tensor's static slot).
struct IoBinding {
  std::vector<CUdeviceptr> inputs, outputs;
};

/// Where the I/O slots of one graph set appear among the pointers of its
/// kernel nodes, found on the set's first run, so that a run's binding
/// touches only those pointers instead of searching every node's.
struct BindingPlan {
  /// A kernel argument that points into input or output `slot`, `offset`
  /// bytes past its start.
  struct Pointer {
    size_t arg = 0;
    bool input = false;
    size_t slot = 0;
    CUdeviceptr offset = 0;
  };
  struct Node {
    size_t node = 0; ///< index into kernelNodes
    std::vector<Pointer> pointers; ///< per argument: inputs', then outputs'
  };
  const cgrt_io_desc *inputs = nullptr; ///< identify the graph set
  const cgrt_step *steps = nullptr;
  std::vector<Node> nodes; ///< the nodes with at least one such pointer
  std::vector<bool> outputWritten; ///< some kernel points into the slot
};

/// The graphs instantiated once, with the pointers their kernel nodes have
/// now. A model has one at load and makes a second for a caller that
/// alternates between two sets of buffers (what cgc.Model's output pool
/// does while the caller keeps the last result): each set's binding then
/// stays in an exec of its own instead of being rewritten on every run.
struct ExecSet {
  std::vector<CUgraphExec> execs; ///< per graph, every bucket's
  /// Per kernelNodes entry: the arguments its node has in these execs
  /// (zeros after a failed update: unknown).
  std::vector<std::vector<CUdeviceptr>> current;
  uint64_t lastRun = 0; ///< the run that last used it
  /// A run's binding was applied in full (false while fresh and after a
  /// failed update): only then is a second set worth making.
  bool bound = false;
  /// The caller's buffers of the last binding applied in full, and its
  /// binding plan (bindingPlans is a deque: plans never move): a run with
  /// the same buffers is told so by comparing these, not every node's
  /// arguments.
  IoBinding applied;
  const BindingPlan *appliedPlan = nullptr;
};
} // namespace cgrt

struct cgrt_model_t {
  std::mutex mutex; ///< serializes run and benchmark
  std::string dir;
  std::string label; ///< "model 'name' (package 'dir')", for messages

  void *library = nullptr;
  const cgrt_package *package = nullptr; ///< lives in `library`
  const cgrt::Driver *driver = nullptr;

  CUdevice device = 0;
  int32_t deviceOrdinal = 0;
  CUcontext context = nullptr; ///< the device's primary context, retained
  CUstream stream = nullptr; ///< the runtime's own (cgrt_model_run's)
  /// The stream the run in progress enqueues on: `stream`, or the caller's
  /// (cgrt_model_run_async).
  CUstream runStream = nullptr;
  /// Recorded at the end of every asynchronous run; while `runPending`,
  /// work on any other stream that touches the arena waits for it first.
  CUevent runDone = nullptr;
  bool runPending = false;
  /// The stream runDone was recorded on: runs there need not wait for it.
  CUstream runDoneStream = nullptr;
  CUmodule module = nullptr;
  bool kernelsFromPtx = false; ///< the cubin failed and PTX was JIT-compiled
  std::vector<CUfunction> kernels;
  CUdeviceptr arena = 0;
  std::vector<CUgraph> graphs; ///< every bucket's, as the package lists them
  /// At most two (kExecSets, ZeroCopy.cpp); execSets[0] is made at load.
  std::vector<cgrt::ExecSet> execSets;
  size_t runExecSet = 0;         ///< the set the run in progress launches
  uint64_t runs = 0;             ///< bindings applied so far, for lastRun
  bool spareExecsFailed = false; ///< a second set could not be made
  /// The exec of graph `index` the run in progress launches.
  CUgraphExec runExec(size_t index) const {
    return execSets[runExecSet].execs[index];
  }
  cgrt::GraphSet active; ///< what the last (or next) run uses
  /// Every kernel node of every graph, when the package reports them.
  std::vector<cgrt::KernelNode> kernelNodes;
  /// applyIoBinding's per-node scratch (the pointers a node should have
  /// and their addresses), kept so a run allocates nothing for them.
  std::vector<CUdeviceptr> bindingWanted;
  std::vector<void *> bindingParams;
  std::vector<bool> bindingMoved;
  /// One per graph set run so far (a deque: references stay valid).
  std::deque<cgrt::BindingPlan> bindingPlans;
  /// A run's binding, kept so a run allocates nothing for it.
  cgrt::IoBinding runBinding;
  size_t buildingGraph = 0; ///< the graph being built, for kernelNodes
  bool zeroCopy = true;     ///< cgrt_model_set_zero_copy
  /// Library handles and workspace, when the package has library nodes.
  cgrt::LibraryState *libraryState = nullptr;
  /// The rank's communicator (cgrt_model_options::comm), or the model's
  /// own one-rank one (`ownsComm`) for a one-GPU package with all-reduce
  /// nodes; null for the rest.
  cgrt_comm_t *comm = nullptr;
  bool ownsComm = false;

  /// Run-time dims of the outputs, as eager regions report them (outputs
  /// with static dims keep the package's).
  std::vector<std::vector<int64_t>> outputDims;

  // Made by the first benchmark and kept until release.
  CUevent start = nullptr, stop = nullptr;
  std::vector<CUdeviceptr> benchmarkInputs, benchmarkOutputs;
  int64_t benchmarkBucket = 0; ///< the bucket value benchmarkInputs fit

  /// "graph 1 'relu'".
  std::string graphLabel(size_t index) const;
  /// "eager region 0 'eager0'".
  std::string eagerLabel(size_t index) const;
};

namespace cgrt {
/// Frees what `model` holds, in reverse order of creation; tolerates a
/// partially loaded model.
void destroyModel(cgrt_model_t *model);
/// The package's own tables (its only graph set, or its largest bucket).
GraphSet packageGraphSet(const cgrt_package &package);
/// Chooses the graph set for `inputs` (whose count the caller checked): the
/// package's, the bucket whose shapes they match, or, when the package
/// allows padding, the smallest bucket they fit. Sets model.active.
cgrt_status selectGraphSet(cgrt_model_t &model, const cgrt_tensor *inputs);
/// The builders' kernel_node_added: records the node in kernelNodes.
void recordKernelNode(void *model, CUgraphNode node,
                      const CUDA_KERNEL_NODE_PARAMS *params,
                      size_t numParams);
/// Chooses, per tensor, zero-copy or the slot, into `binding`: zero-copy
/// needs the package's consent, device memory aligned like a slot and large
/// enough, a graph set without eager regions or padding, and (for an
/// output) a kernel that writes it.
void chooseIoBinding(cgrt_model_t &model, const cgrt_tensor *inputs,
                     const cgrt_tensor *outputs, size_t numOutputs,
                     IoBinding &binding);
/// Chooses the exec set for a run with `binding` (model.runExecSet): the
/// one that holds it already, else a second set made now (when the first
/// holds another run's binding), else the least recently run one. Points
/// the chosen set's kernel nodes that touch a bound tensor's slot at the
/// caller's buffer and all others back at the slots; only nodes whose
/// pointers change are updated.
cgrt_status applyIoBinding(cgrt_model_t &model, const IoBinding &binding);
/// Makes `stream` wait for the last asynchronous run (on whichever stream
/// it went), so that two runs never share the arena at once. A no-op when
/// no asynchronous run is pending. Call with the model's mutex held and its
/// context current.
cgrt_status waitForPendingRun(cgrt_model_t &model, CUstream stream);
/// Runs `body()` with the model locked, its context current and its stream
/// after every run so far (what the calls that work on the arena outside a
/// run need); `api` names the call in failures.
template <typename Body>
cgrt_status withModelStream(cgrt_model_t &model, const char *api, Body body) {
  std::lock_guard<std::mutex> lock(model.mutex);
  ScopedContext scope(*model.driver, model.context);
  if (cgrt_status s = scope.take())
    return annotate(s, api);
  if (cgrt_status s = waitForPendingRun(model, model.stream))
    return annotate(s, api);
  return body();
}
/// Checks a caller's tensor against `slot` (dtype, rank, dims, memory kind,
/// buffer size), the bucketed dim (at `axis`, when not -1) at `used`; the
/// message names `kind` `index`.
cgrt_status validateTensor(const char *api, const char *kind, size_t index,
                           const cgrt_io_desc &slot, const cgrt_tensor &t,
                           int32_t axis, int64_t used, bool checkDims = true);
/// A training step's updates that it does not write in place, copied over
/// their state on model.runStream (after the step's graphs).
cgrt_status copyStateUpdates(cgrt_model_t &model);
/// A training step's labels of class indices in host memory hold only
/// indices of a class (the package's input_label_classes).
cgrt_status checkLabels(const char *api, const cgrt_model_t &model,
                        const cgrt_tensor *inputs);
/// The name and the cgrt_tensor (data NULL, host memory) of what `desc`
/// describes, as the info calls return them; either pointer may be NULL.
void describeTensor(const cgrt_io_desc &desc, const char **name,
                    cgrt_tensor *info);
/// The model's rank among the GPUs its package is split over (0 for a
/// one-GPU package).
inline int32_t modelRank(const cgrt_model_t &model) {
  return model.comm ? model.comm->rank : 0;
}
/// True when CGRT_VERBOSE is set: load steps are logged to stderr.
bool verbose();
} // namespace cgrt

#endif // CGRT_RUNTIME_MODEL_H
