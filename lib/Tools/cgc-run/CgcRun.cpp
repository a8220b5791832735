//===- CgcRun.cpp - the cgc-run tool ----------------------------*- C++ -*-===//

#include "cgc/Tools/cgc-run/CgcRun.h"
#include "cgc/Tools/cgc-run/Ranks.h"
#include "cgrt/package.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <vector>

namespace fs = std::filesystem;

namespace cgcrun {
namespace {

const char kUsage[] =
    "usage: cgc-run PACKAGE_DIR [options]\n"
    "\n"
    "Loads a package that `cgc -o PACKAGE_DIR --emit=lib` wrote, runs one\n"
    "inference, and optionally writes, checks and times it.\n"
    "\n"
    "  --inputs DIR|random  inputs from DIR/<name>.npy or DIR/input_<i>.npy,\n"
    "                       or seeded random values (the default)\n"
    "  --seed N             seed of the random inputs (default 0)\n"
    "  --save-inputs DIR    write the inputs used as DIR/<name>.npy\n"
    "  --outputs DIR        write the outputs as DIR/<name>.npy\n"
    "  --check REFDIR       compare every output with REFDIR/<name>.npy or\n"
    "                       REFDIR/output_<i>.npy; exit 1 on a mismatch\n"
    "  --rtol R, --atol A   --check passes where |got-ref| <= A + R*|ref|\n"
    "                       (defaults 1e-4 and 1e-5; integers must be equal)\n"
    "  --max-rel-l2 E       --check passes where an output's relative L2\n"
    "                       error ||got-ref|| / ||ref|| is at most E and it\n"
    "                       is finite wherever the reference is (for a\n"
    "                       package compiled with --precision against an\n"
    "                       fp32 reference); replaces --rtol/--atol for\n"
    "                       float outputs (integers must still be equal)\n"
    "  --steps N            a training package (cgc --train): run N steps,\n"
    "                       printing each step's loss (default 1); with\n"
    "                       --inputs DIR holding DIR/step_<k> folders, step\n"
    "                       k takes its batch from DIR/step_<k mod count>\n"
    "  --state-out DIR      after the steps, write the training state (the\n"
    "                       trained weights, the optimizer's buffers) as\n"
    "                       DIR/<name>.npy\n"
    "  --bench N            time N inferences with device-resident inputs\n"
    "  --warmup W           warm-up runs before timing (default max(10, N/10))\n"
    "  --bench-io           with --bench, also time inputs and outputs in\n"
    "                       device buffers, copied through the static slots\n"
    "                       and bound in place (zero-copy I/O)\n"
    "  --profile-kernels N  time each kernel alone, N launches of each of\n"
    "                       its graph nodes outside the graphs, after the\n"
    "                       run (one line a kernel: mean us a launch;\n"
    "                       then one 'library' line per cuBLASLt or\n"
    "                       cuDNN node, with the TFLOP/s it achieves)\n"
    "  --device D           CUDA device ordinal (default 0)\n"
    "  --ranks N            a package split over N GPUs (cgc --tensor-parallel\n"
    "                       or --train --data-parallel): run its N ranks as\n"
    "                       N processes, rank r on device r; every rank\n"
    "                       runs and checks, rank 0 alone prints and writes\n"
    "                       files; with --inputs DIR, rank r reads\n"
    "                       DIR/rank<r> where it exists; random inputs are\n"
    "                       the same on every rank, but a training step's\n"
    "                       (data parallel: each rank its own rows), which\n"
    "                       take the seed plus the rank\n"
    "  --timeout S          how long a rank waits for the others (default\n"
    "                       300 s) before it reports them dead or late\n"
    "  --dump-graphs DIR    write each CUDA graph as the driver holds it to\n"
    "                       DIR/graph<i>_<name>.dot (cuGraphDebugDotPrint)\n"
    "  --info               print the package's inputs, outputs, shape\n"
    "                       buckets, graphs and eager regions from its\n"
    "                       libmodel.so, without a GPU, and exit\n"
    "  -q, --quiet          print only errors and results\n"
    "  --version            print cgc-run's version and the package ABI it\n"
    "                       loads, and exit\n"
    "\n"
    "<name> is the tensor's name with every character outside [A-Za-z0-9._-]\n"
    "replaced by '_'. numpy has no bfloat16: a bfloat16 tensor is read,\n"
    "written and checked as a uint16 .npy of its bit patterns (as the ONNX\n"
    "test data stores it).\n"
    "\n"
    "ENVIRONMENT:\n"
    "  CGRT_DRIVER_LIBRARY    the CUDA driver library (default libcuda.so.1)\n"
    "  CGRT_CUBLASLT_LIBRARY  cuBLASLt, for packages with cuBLASLt nodes\n"
    "                         (default libcublasLt.so.13)\n"
    "  CGRT_CUDNN_LIBRARY     cuDNN, for packages with cuDNN nodes\n"
    "                         (default libcudnn.so.9)\n"
    "  CGRT_NCCL_LIBRARY      NCCL, for packages split over several GPUs\n"
    "                         (default libnccl.so.2)\n"
    "  WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT\n"
    "                         as torchrun sets them: this process is rank\n"
    "                         RANK of WORLD_SIZE, on device LOCAL_RANK; the\n"
    "                         ranks meet at NCCL_COMM_ID if set, else at\n"
    "                         MASTER_ADDR, port MASTER_PORT + 1\n"
    "  CGRT_VERBOSE=1         the runtime reports what it loads and builds\n"
    "\n"
    "EXIT CODES:\n"
    "  0  success\n"
    "  1  the package cannot be loaded or run, or --check found a mismatch\n"
    "  2  usage: an unknown option or a bad option value\n";

struct Options {
  std::string package;
  std::string inputs = "random";
  uint64_t seed = 0;
  std::string saveInputs, outputs, check, dumpGraphs, stateOut;
  int64_t steps = 0; ///< --steps (0: not given)
  double rtol = 1e-4, atol = 1e-5;
  /// --max-rel-l2: per output, the relative L2 error replaces the
  /// elementwise test (negative: not given).
  double maxRelL2 = -1;
  int64_t bench = 0, warmup = -1;
  bool benchIo = false;
  /// --profile-kernels: launches a kernel is timed over (0: not profiled).
  int64_t profileKernels = 0;
  int device = 0;
  bool deviceGiven = false;
  int ranks = 0;             ///< --ranks (0: not given)
  int64_t timeoutMs = 300000; ///< --timeout
  bool quiet = false;
  /// Results (losses, timings, profiles) are printed; false on the ranks
  /// but rank 0 of a split package (they run the same).
  bool printResults = true;
  /// Added to --seed for a training step's random inputs: a rank's own rows.
  uint64_t rankSeed = 0;
  bool info = false;
};

int usageError(const std::string &message) {
  std::fprintf(stderr, "cgc-run: error: %s (see cgc-run --help)\n",
               message.c_str());
  return 2;
}

/// "rank 1: " in a process that runs one rank of several; else "".
std::string rankPrefix;

int error(const std::string &message) {
  std::fprintf(stderr, "cgc-run: %serror: %s\n", rankPrefix.c_str(),
               message.c_str());
  return 1;
}

bool parseInt(const std::string &text, int64_t *value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end)
    return false;
  *value = parsed;
  return true;
}

bool parseDouble(const std::string &text, double *value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  double parsed = std::strtod(text.c_str(), &end);
  if (errno || *end || !(parsed >= 0))
    return false;
  *value = parsed;
  return true;
}

/// Returns -1 to go on, or an exit code.
int parseOptions(int argc, char **argv, Options *options) {
  std::vector<std::string> positional;
  bool sawTolerance = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string *out) {
      if (i + 1 >= argc)
        return false;
      *out = argv[++i];
      return true;
    };
    std::string text;
    int64_t number = 0;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--version") {
      std::printf("cgc-run %s (package ABI %d)\n", CGC_VERSION,
                  CGRT_PACKAGE_ABI_VERSION);
      return 0;
    } else if (arg == "--info") {
      options->info = true;
    } else if (arg == "-q" || arg == "--quiet") {
      options->quiet = true;
    } else if (arg == "--inputs") {
      if (!value(&options->inputs))
        return usageError("--inputs needs a folder or 'random'");
    } else if (arg == "--save-inputs") {
      if (!value(&options->saveInputs))
        return usageError("--save-inputs needs a folder");
    } else if (arg == "--outputs") {
      if (!value(&options->outputs))
        return usageError("--outputs needs a folder");
    } else if (arg == "--dump-graphs") {
      if (!value(&options->dumpGraphs))
        return usageError("--dump-graphs needs a folder");
    } else if (arg == "--check") {
      if (!value(&options->check))
        return usageError("--check needs a reference folder");
    } else if (arg == "--rtol" || arg == "--atol") {
      double *target = arg == "--rtol" ? &options->rtol : &options->atol;
      if (!value(&text) || !parseDouble(text, target))
        return usageError(arg + " needs a non-negative number");
      sawTolerance = true;
    } else if (arg == "--max-rel-l2") {
      if (!value(&text) || !parseDouble(text, &options->maxRelL2))
        return usageError("--max-rel-l2 needs a non-negative number");
      sawTolerance = true;
    } else if (arg == "--seed") {
      if (!value(&text) || !parseInt(text, &number) || number < 0)
        return usageError("--seed needs a non-negative integer");
      options->seed = static_cast<uint64_t>(number);
    } else if (arg == "--steps") {
      if (!value(&text) || !parseInt(text, &number) || number < 1)
        return usageError("--steps needs a positive number of steps");
      options->steps = number;
    } else if (arg == "--state-out") {
      if (!value(&options->stateOut))
        return usageError("--state-out needs a folder");
    } else if (arg == "--bench") {
      if (!value(&text) || !parseInt(text, &number) || number < 1)
        return usageError("--bench needs a positive number of iterations");
      options->bench = number;
    } else if (arg == "--profile-kernels") {
      if (!value(&text) || !parseInt(text, &number) || number < 1)
        return usageError("--profile-kernels needs a positive number of "
                          "launches");
      options->profileKernels = number;
    } else if (arg == "--bench-io") {
      options->benchIo = true;
    } else if (arg == "--warmup") {
      if (!value(&text) || !parseInt(text, &number) || number < 0)
        return usageError("--warmup needs a non-negative integer");
      options->warmup = number;
    } else if (arg == "--device") {
      if (!value(&text) || !parseInt(text, &number) || number < 0 ||
          number > 1024)
        return usageError("--device needs a device ordinal");
      options->device = static_cast<int>(number);
      options->deviceGiven = true;
    } else if (arg == "--ranks") {
      if (!value(&text) || !parseInt(text, &number) || number < 1 ||
          number > 1024)
        return usageError("--ranks needs a number of ranks (1 to 1024)");
      options->ranks = static_cast<int>(number);
    } else if (arg == "--timeout") {
      double seconds = 0;
      if (!value(&text) || !parseDouble(text, &seconds) || seconds <= 0 ||
          seconds > 1e6)
        return usageError("--timeout needs a positive number of seconds");
      options->timeoutMs = std::max<int64_t>(1, (int64_t)(seconds * 1e3));
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usageError("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 1)
    return usageError(positional.empty() ? "no package folder given"
                                         : "more than one package folder given");
  if (sawTolerance && options->check.empty())
    return usageError("--rtol/--atol/--max-rel-l2 need --check");
  if (options->ranks > 0 && options->deviceGiven)
    return usageError("--ranks puts rank r on device r; --device does not "
                      "apply");
  options->package = positional[0];
  return -1;
}

struct StatusDeleter {
  void operator()(cgrt_status_t *status) const { cgrt_status_free(status); }
};
using StatusPtr = std::unique_ptr<cgrt_status_t, StatusDeleter>;

struct ModelDeleter {
  void operator()(cgrt_model *model) const { cgrt_model_release(model); }
};

std::string describe(cgrt_dtype dtype, const std::vector<int64_t> &shape) {
  static const std::map<int, const char *> names = {
      {CGRT_FLOAT32, "float32"}, {CGRT_UINT8, "uint8"},
      {CGRT_INT8, "int8"},       {CGRT_UINT16, "uint16"},
      {CGRT_INT16, "int16"},     {CGRT_INT32, "int32"},
      {CGRT_INT64, "int64"},     {CGRT_BOOL, "bool"},
      {CGRT_FLOAT16, "float16"}, {CGRT_FLOAT64, "float64"},
      {CGRT_UINT32, "uint32"},   {CGRT_UINT64, "uint64"},
      {CGRT_BFLOAT16, "bfloat16"},
      {CGRT_FLOAT8E4M3FN, "float8_e4m3fn"},
      {CGRT_FLOAT8E4M3FNUZ, "float8_e4m3fnuz"},
      {CGRT_FLOAT8E5M2, "float8_e5m2"},
      {CGRT_FLOAT8E5M2FNUZ, "float8_e5m2fnuz"},
      {CGRT_FLOAT4E2M1, "float4_e2m1fn"},
      {CGRT_FLOAT8E8M0, "float8_e8m0fnu"},
      {CGRT_INT4, "int4"},
      {CGRT_UINT4, "uint4"},
      {CGRT_INT2, "int2"},
      {CGRT_UINT2, "uint2"}};
  auto it = names.find(dtype);
  std::string result =
      it != names.end() ? it->second : "dtype(" + std::to_string(dtype) + ")";
  result += " [";
  for (size_t i = 0; i < shape.size(); ++i)
    result += (i ? ", " : "") + std::to_string(shape[i]);
  return result + "]";
}

/// One model input or output.
struct Slot {
  std::string name;
  std::string fileStem; ///< sanitized name, or "" when ambiguous
  HostTensor tensor;    ///< dtype and shape from the model
  bool dataDependent = false; ///< the shape is known after a run
  int64_t labelClasses = 0;   ///< a label of class indices: its classes
};

/// After a run: data-dependent outputs (and every output of a package with
/// shape buckets) take the shape the runtime reported.
void adoptRunShapes(std::vector<Slot> &outputs,
                    const std::vector<cgrt_tensor> &views, bool bucketed) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].dataDependent && !bucketed)
      continue;
    HostTensor &t = outputs[i].tensor;
    t.shape.assign(views[i].dims, views[i].dims + views[i].rank);
    t.data.resize(t.numElements() * cgrt_dtype_size(t.dtype));
  }
}

/// Slots with their file stems; a stem shared by two slots or empty is
/// dropped so only the <kind>_<i> name applies.
std::vector<Slot> describeSlots(cgrt_model *model, bool inputs,
                                std::string *message) {
  size_t count = inputs ? cgrt_model_num_inputs(model)
                        : cgrt_model_num_outputs(model);
  std::vector<Slot> slots(count);
  std::map<std::string, int> stems;
  for (size_t i = 0; i < count; ++i) {
    const char *name = nullptr;
    cgrt_tensor info;
    StatusPtr status(inputs ? cgrt_model_input_info(model, i, &name, &info)
                            : cgrt_model_output_info(model, i, &name, &info));
    if (status) {
      *message = cgrt_status_get_message(status.get());
      return {};
    }
    Slot &slot = slots[i];
    slot.name = name ? name : "";
    if (inputs)
      slot.labelClasses = cgrt_model_input_label_classes(model, i);
    slot.fileStem = sanitizeFileName(slot.name);
    ++stems[slot.fileStem];
    slot.tensor.dtype = info.dtype;
    slot.tensor.shape.assign(info.dims, info.dims + info.rank);
    // A data-dependent output (a dim of -1) gets its slot's capacity; the
    // run reports the actual shape.
    slot.dataDependent = std::any_of(slot.tensor.shape.begin(),
                                     slot.tensor.shape.end(),
                                     [](int64_t d) { return d < 0; });
    slot.tensor.data.assign(
        slot.dataDependent
            ? info.bytes
            : slot.tensor.numElements() * cgrt_dtype_size(info.dtype),
        0);
  }
  for (Slot &slot : slots)
    if (slot.fileStem.empty() || stems[slot.fileStem] > 1)
      slot.fileStem.clear();
  return slots;
}

/// The file of slot `index` in `dir`: <stem>.npy if it exists (or no
/// indexed file does), else <kind>_<index>.npy.
std::string slotFile(const std::string &dir, const Slot &slot,
                     const char *kind, size_t index, bool forReading) {
  std::string indexed =
      (fs::path(dir) / (std::string(kind) + "_" + std::to_string(index) +
                        ".npy"))
          .string();
  if (slot.fileStem.empty())
    return indexed;
  std::string named = (fs::path(dir) / (slot.fileStem + ".npy")).string();
  if (!forReading)
    return named;
  std::error_code ec;
  if (fs::exists(named, ec) || !fs::exists(indexed, ec))
    return named;
  return indexed;
}

bool makeFolder(const std::string &dir, std::string *message) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    *message = "cannot create folder '" + dir + "': " + ec.message();
    return false;
  }
  return true;
}

/// With shape buckets an input file may have any shape of the right rank:
/// the runtime picks the bucket (or says that none fits).
/// Random class indices of a label: the random integers modulo its
/// classes (as cgc-interp draws them).
void fillRandomLabel(Slot &slot, uint64_t seed) {
  fillRandom(&slot.tensor, seed);
  size_t size = cgrt_dtype_size(slot.tensor.dtype);
  if (size != 4 && size != 8)
    return;
  for (uint64_t k = 0, n = slot.tensor.numElements(); k < n; ++k) {
    unsigned char *at = slot.tensor.data.data() + k * size;
    at[0] = static_cast<unsigned char>(at[0] % slot.labelClasses);
  }
}

bool loadInputs(const Options &options, const std::string &dir,
                std::vector<Slot> &inputs, bool bucketed,
                std::string *message) {
  bool random = dir == "random";
  if (!random && !fs::is_directory(dir)) {
    *message = "input folder '" + dir + "' does not exist";
    return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    Slot &slot = inputs[i];
    if (random) {
      uint64_t seed = options.seed * 0x9E3779B97F4A7C15ull + i;
      if (slot.labelClasses > 0)
        fillRandomLabel(slot, seed);
      else
        fillRandom(&slot.tensor, seed);
      continue;
    }
    std::string path = slotFile(dir, slot, "input", i, true);
    if (!fs::exists(path)) {
      *message = "no file for input " + std::to_string(i) + " '" + slot.name +
                 "' in '" + dir + "' (looked for " +
                 (slot.fileStem.empty() ? std::string()
                                        : slot.fileStem + ".npy and ") +
                 "input_" + std::to_string(i) + ".npy)";
      return false;
    }
    HostTensor file;
    if (!readNpy(path, &file, message))
      return false;
    if (!relabelBitPatterns(&file, slot.tensor.dtype, path, message))
      return false;
    bool shapeOk = bucketed ? file.shape.size() == slot.tensor.shape.size()
                            : file.shape == slot.tensor.shape;
    if (file.dtype != slot.tensor.dtype || !shapeOk) {
      *message = path + " holds " + describe(file.dtype, file.shape) +
                 ", but input " + std::to_string(i) + " '" + slot.name +
                 "' is " + describe(slot.tensor.dtype, slot.tensor.shape);
      return false;
    }
    slot.tensor.shape = file.shape;
    slot.tensor.data = std::move(file.data);
  }
  return true;
}

bool saveAll(const std::string &dir, const std::vector<Slot> &slots,
             const char *kind, bool quiet, std::string *message) {
  if (!makeFolder(dir, message))
    return false;
  for (size_t i = 0; i < slots.size(); ++i) {
    std::string path = slotFile(dir, slots[i], kind, i, false);
    HostTensor bits;
    const HostTensor *tensor = &slots[i].tensor;
    if (carrierOf(tensor->dtype) != tensor->dtype) { // as its bit patterns
      bits = *tensor;
      bits.dtype = carrierOf(tensor->dtype);
      tensor = &bits;
    }
    if (!writeNpy(path, *tensor, message)) {
      *message = std::string(kind) + " " + std::to_string(i) + " '" +
                 slots[i].name + "': " + *message;
      return false;
    }
    if (!quiet)
      std::printf("wrote %s\n", path.c_str());
  }
  return true;
}

/// How many DIR/step_<k> folders `dir` has (0: one batch for every step).
unsigned countStepFolders(const std::string &dir) {
  unsigned count = 0;
  std::error_code ec;
  while (dir != "random" &&
         fs::is_directory(fs::path(dir) / ("step_" + std::to_string(count)),
                          ec))
    ++count;
  return count;
}

/// The folder of step k's batch: DIR/step_<k mod count>, or DIR itself.
std::string stepInputDir(const std::string &dir, unsigned folders,
                         int64_t k) {
  if (folders == 0)
    return dir;
  return (fs::path(dir) / ("step_" + std::to_string(k % folders))).string();
}


/// --steps: one run a launch, each on its batch, printing the loss of each
/// step (a package of --steps-per-launch=K takes K steps a run: its loss
/// output holds their K losses, each printed as a step).
bool runSteps(const Options &options, cgrt_model *model, unsigned stepFolders,
              std::vector<Slot> &inputs, std::vector<Slot> &outputs,
              std::string *message) {
  int64_t steps = std::max<int64_t>(1, options.steps);
  for (int64_t k = 0; k < steps; ++k) {
    if (k > 0 && stepFolders > 0 &&
        !loadInputs(options, stepInputDir(options.inputs, stepFolders, k),
                    inputs, false, message))
      return false;
    std::vector<cgrt_tensor> in, out;
    for (Slot &slot : inputs)
      in.push_back(slot.tensor.view());
    for (Slot &slot : outputs)
      out.push_back(slot.tensor.view());
    StatusPtr status(
        cgrt_model_run(model, in.data(), in.size(), out.data(), out.size()));
    if (status) {
      *message = "step " + std::to_string(k + 1) + ": " +
                 cgrt_status_get_message(status.get());
      return false;
    }
    if (outputs.empty() || !options.printResults)
      continue;
    int64_t perRun = outputs[0].tensor.numElements();
    for (int64_t j = 0; j < perRun; ++j)
      std::printf("step %lld: %s = %.9g\n",
                  static_cast<long long>(k * perRun + j + 1),
                  outputs[0].name.c_str(),
                  static_cast<double>(elementValue(outputs[0].tensor, j)));
  }
  return true;
}

/// --state-out: every state tensor as DIR/<name>.npy.
bool saveState(const std::string &dir, cgrt_model *model, bool quiet,
               std::string *message) {
  std::vector<Slot> state(cgrt_model_num_state(model));
  for (size_t i = 0; i < state.size(); ++i) {
    const char *name = nullptr;
    cgrt_tensor info;
    StatusPtr status(cgrt_model_state_info(model, i, &name, &info));
    if (!status) {
      state[i].name = name;
      state[i].fileStem = sanitizeFileName(state[i].name);
      state[i].tensor.dtype = info.dtype;
      state[i].tensor.shape.assign(info.dims, info.dims + info.rank);
      state[i].tensor.data.assign(info.bytes, 0);
      cgrt_tensor view = state[i].tensor.view();
      status.reset(cgrt_model_read_state(model, i, &view));
    }
    if (status) {
      *message = cgrt_status_get_message(status.get());
      return false;
    }
  }
  return saveAll(dir, state, "state", quiet, message);
}

std::string indexString(const std::vector<int64_t> &shape, uint64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    uint64_t dim = static_cast<uint64_t>(shape[i]);
    index[i] = dim ? static_cast<int64_t>(flat % dim) : 0;
    flat = dim ? flat / dim : 0;
  }
  std::string result = "[";
  for (size_t i = 0; i < index.size(); ++i)
    result += (i ? ", " : "") + std::to_string(index[i]);
  return result + "]";
}

/// Returns true when every output matches.
bool isIntegral(cgrt_dtype dtype);

bool checkOutputs(const Options &options, const std::vector<Slot> &outputs,
                  bool *failed, std::string *message) {
  if (!fs::is_directory(options.check)) {
    *message = "reference folder '" + options.check + "' does not exist";
    *failed = true;
    return false;
  }
  bool allOk = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Slot &slot = outputs[i];
    std::string path = slotFile(options.check, slot, "output", i, true);
    HostTensor expected;
    if (!fs::exists(path)) {
      *message = "no reference for output " + std::to_string(i) + " '" +
                 slot.name + "' in '" + options.check + "' (looked for " +
                 (slot.fileStem.empty() ? std::string()
                                        : slot.fileStem + ".npy and ") +
                 "output_" + std::to_string(i) + ".npy)";
      *failed = true;
      return false;
    }
    if (!readNpy(path, &expected, message)) {
      *failed = true;
      return false;
    }
    if (!relabelBitPatterns(&expected, slot.tensor.dtype, path, message)) {
      *failed = true;
      return false;
    }
    Comparison c =
        compareTensors(slot.tensor, expected, options.rtol, options.atol);
    // Integer and bool outputs stay exact under --max-rel-l2.
    if (options.maxRelL2 >= 0 && c.error.empty() &&
        !isIntegral(slot.tensor.dtype))
      c.ok = c.relL2 <= options.maxRelL2 && c.nonFiniteWhereFinite == 0;
    if (!c.error.empty()) {
      std::printf("check %-24s FAIL: %s (reference %s)\n",
                  ("'" + slot.name + "'").c_str(), c.error.c_str(),
                  path.c_str());
      allOk = false;
      continue;
    }
    std::printf("check %-24s %s  max abs err %.3g  max rel err %.3g  rel L2 "
                "%.3g  (%llu elements",
                ("'" + slot.name + "'").c_str(), c.ok ? "ok  " : "FAIL",
                c.maxAbsError, c.maxRelError, c.relL2,
                static_cast<unsigned long long>(slot.tensor.numElements()));
    if (c.nonFiniteWhereFinite)
      std::printf(", %llu infinite or NaN where the reference is finite (an "
                  "overflow of a reduced precision?)",
                  static_cast<unsigned long long>(c.nonFiniteWhereFinite));
    if (!c.ok && options.maxRelL2 >= 0 && !isIntegral(slot.tensor.dtype))
      std::printf(", above --max-rel-l2 %g", options.maxRelL2);
    else if (!c.ok)
      std::printf(", %llu mismatched; first at %s: got %.9Lg, expected %.9Lg",
                  static_cast<unsigned long long>(c.mismatches),
                  indexString(slot.tensor.shape, c.firstMismatch).c_str(),
                  c.firstGot, c.firstExpected);
    std::printf(")\n");
    allOk = allOk && c.ok;
  }
  return allOk;
}

bool isIntegral(cgrt_dtype dtype) {
  switch (dtype) {
  case CGRT_FLOAT32:
  case CGRT_FLOAT64:
  case CGRT_FLOAT16:
  case CGRT_BFLOAT16:
    return false;
  default:
    return !isNarrowFloat(dtype);
  }
}

uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace

cgrt_dtype carrierOf(cgrt_dtype dtype) {
  if (dtype == CGRT_BFLOAT16)
    return CGRT_UINT16;
  if (dtype == CGRT_INT4 || dtype == CGRT_INT2)
    return CGRT_INT8;
  if (isNarrowFloat(dtype) || subByteBits(dtype))
    return CGRT_UINT8;
  return dtype;
}

bool relabelBitPatterns(HostTensor *file, cgrt_dtype want,
                        const std::string &path, std::string *message) {
  if (want == file->dtype || carrierOf(want) != file->dtype)
    return true;
  if (int bits = subByteBits(want)) {
    bool isSigned = want == CGRT_INT4 || want == CGRT_INT2;
    long double low = isSigned ? -(1 << (bits - 1)) : 0;
    long double high = isSigned ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    for (uint64_t i = 0, n = file->numElements(); i < n; ++i) {
      long double v = elementValue(*file, i);
      if (v < low || v > high) {
        *message = path + ": element " + std::to_string(i) + " is " +
                   std::to_string((long long)v) + ", outside the range of " +
                   (isSigned ? "int" : "uint") + std::to_string(bits);
        return false;
      }
    }
  }
  file->dtype = want;
  return true;
}

void fillRandom(HostTensor *tensor, uint64_t seed) {
  uint64_t state = seed;
  uint64_t count = tensor->numElements();
  size_t size = cgrt_dtype_size(tensor->dtype);
  tensor->data.assign(count * size, 0);
  unsigned char *out = tensor->data.data();
  for (uint64_t i = 0; i < count; ++i, out += size) {
    uint64_t bits = splitmix64(&state);
    // 24 random bits -> [-1, 1), exactly representable in float.
    float uniform =
        static_cast<float>(static_cast<int32_t>(bits >> 40) - (1 << 23)) /
        static_cast<float>(1 << 23);
    int64_t small = static_cast<int64_t>(bits >> 61); // [0, 8)
    switch (tensor->dtype) {
    case CGRT_FLOAT32:
      std::memcpy(out, &uniform, 4);
      break;
    case CGRT_FLOAT64: {
      double value = uniform;
      std::memcpy(out, &value, 8);
      break;
    }
    case CGRT_FLOAT16: {
      uint16_t value = floatToHalf(uniform);
      std::memcpy(out, &value, 2);
      break;
    }
    case CGRT_BFLOAT16: {
      uint16_t value = floatToBfloat16(uniform);
      std::memcpy(out, &value, 2);
      break;
    }
    case CGRT_BOOL:
      *out = static_cast<unsigned char>(small & 1);
      break;
    case CGRT_INT2: // [-2, 1]
      *out = static_cast<unsigned char>((small & 3) - 2);
      break;
    case CGRT_UINT2:
      *out = static_cast<unsigned char>(small & 3);
      break;
    default: // integers, little-endian
      for (size_t b = 0; b < size; ++b)
        out[b] = b == 0 ? static_cast<unsigned char>(small) : 0;
      break;
    }
  }
}

Comparison compareTensors(const HostTensor &got, const HostTensor &expected,
                          double rtol, double atol) {
  Comparison c;
  if (got.shape != expected.shape) {
    c.ok = false;
    c.error = "shape " + describe(got.dtype, got.shape) +
              " differs from the reference's " +
              describe(expected.dtype, expected.shape);
    return c;
  }
  bool exact = isIntegral(got.dtype) && isIntegral(expected.dtype);
  uint64_t count = got.numElements();
  long double diffSquares = 0, refSquares = 0;
  for (uint64_t i = 0; i < count; ++i) {
    long double a = elementValue(got, i);
    long double b = elementValue(expected, i);
    if (std::isfinite(b)) {
      if (!std::isfinite(a))
        ++c.nonFiniteWhereFinite;
      else
        diffSquares += (a - b) * (a - b);
      refSquares += b * b;
    }
    bool match;
    long double diff = 0;
    if (std::isnan(a) || std::isnan(b)) {
      match = std::isnan(a) && std::isnan(b);
      diff = match ? 0 : INFINITY;
    } else if (std::isinf(a) || std::isinf(b)) {
      match = a == b;
      diff = match ? 0 : INFINITY;
    } else {
      diff = std::fabs(a - b);
      match = exact ? a == b : diff <= atol + rtol * std::fabs(b);
    }
    c.maxAbsError = std::max(c.maxAbsError, static_cast<double>(diff));
    if (diff > 0) {
      long double rel = b != 0 ? diff / std::fabs(b) : INFINITY;
      c.maxRelError = std::max(c.maxRelError, static_cast<double>(rel));
    }
    if (!match) {
      if (c.mismatches == 0) {
        c.firstMismatch = i;
        c.firstGot = a;
        c.firstExpected = b;
      }
      ++c.mismatches;
      c.ok = false;
    }
  }
  c.relL2 = refSquares > 0 ? static_cast<double>(std::sqrt(diffSquares / refSquares))
                           : static_cast<double>(std::sqrt(diffSquares));
  return c;
}

/// One `name: dtype[dims] (bytes)` line per input or output.
void printSlots(const char *what, const cgrt_io_desc *slots, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const cgrt_io_desc &io = slots[i];
    std::vector<int64_t> dims(io.dims, io.dims + io.rank);
    std::printf("  %s %s: %s, %llu bytes\n", what, io.name,
                describe(io.dtype, dims).c_str(),
                static_cast<unsigned long long>(io.bytes));
  }
}

/// --info: the descriptor libmodel.so exports, read without loading the
/// CUDA driver (the package's graph builders only run under libcgrt).
int printInfo(const std::string &package) {
  std::string library = (fs::path(package) / "libmodel.so").string();
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return error(std::string("cannot open the package library: ") + dlerror());
  auto descriptor = reinterpret_cast<cgrt_package_descriptor_fn>(
      dlsym(handle, CGRT_PACKAGE_DESCRIPTOR_SYMBOL));
  const cgrt_package *p = descriptor ? descriptor() : nullptr;
  if (!p)
    return error(library + " exports no package descriptor");
  if (p->abi_version != CGRT_PACKAGE_ABI_VERSION)
    return error(library + " has package ABI " +
                 std::to_string(p->abi_version) + "; this cgc-run reads " +
                 std::to_string(CGRT_PACKAGE_ABI_VERSION) +
                 " (recompile the model with this cgc)");
  std::printf("package %s: model %s, written by cgc %s\n", package.c_str(),
              p->model_name, p->cgc_version);
  // Distinct functions: identical kernels share one, and conditional nodes
  // add helpers, so this is not --explain's count of fused kernels.
  std::printf("  arena %llu bytes (weights %llu), %zu kernel functions\n",
              static_cast<unsigned long long>(p->arena_bytes),
              static_cast<unsigned long long>(p->weights_bytes),
              p->num_kernels);
  printSlots("input", p->inputs, p->num_inputs);
  printSlots("output", p->outputs, p->num_outputs);
  for (size_t i = 0; i < p->num_state; ++i) {
    const cgrt_state_desc &s = p->state[i];
    std::vector<int64_t> dims(s.tensor.dims, s.tensor.dims + s.tensor.rank);
    std::printf("  state %s: %s, %llu bytes, %s\n", s.tensor.name,
                describe(s.tensor.dtype, dims).c_str(),
                static_cast<unsigned long long>(s.tensor.bytes),
                s.update_offset == s.tensor.arena_offset
                    ? "updated in place"
                    : "update copied after the step");
  }
  for (size_t i = 0; i < p->num_buckets; ++i)
    std::printf("  bucket %s=%lld (arena %llu bytes)\n", p->bucket_dim,
                static_cast<long long>(p->buckets[i].value),
                static_cast<unsigned long long>(p->buckets[i].arena_bytes));
  for (size_t i = 0; i < p->num_steps; ++i) {
    const cgrt_step &step = p->steps[i];
    bool graph = step.kind == CGRT_STEP_GRAPH;
    std::printf("  step %zu: %s %s\n", i, graph ? "CUDA graph" : "eager region",
                graph ? p->graph_names[step.index]
                      : p->eager_names[step.index]);
  }
  std::printf("  zero-copy I/O: %s\n", p->zero_copy_io ? "yes" : "no");
  dlclose(handle);
  return 0;
}

/// What rank `rank` of several does of `options`: every rank runs, checks
/// and times (the ranks meet in every run), on DIR/rank<r> where it exists
/// (a data-parallel step's rows; a training step's random inputs take the
/// seed plus the rank); rank 0 alone prints and writes files.
Options optionsOfRank(const Options &options, int rank) {
  Options mine = options;
  mine.rankSeed = static_cast<uint64_t>(rank);
  std::string own = options.inputs + "/rank" + std::to_string(rank);
  std::error_code ignored;
  if (options.inputs != "random" && fs::is_directory(own, ignored))
    mine.inputs = own;
  if (rank > 0) {
    mine.quiet = true;
    mine.printResults = false;
    mine.saveInputs.clear();
    mine.outputs.clear();
    mine.stateOut.clear();
    mine.dumpGraphs.clear();
  }
  return mine;
}

/// Loads the package (with `comm`, the rank's communicator, when it is
/// split) and does what `options` ask.
int runPackage(const Options &options, cgrt_comm *comm) {
  cgrt_model_options modelOptions;
  cgrt_model_options_init(&modelOptions);
  modelOptions.device_ordinal = comm ? 0 : options.device;
  modelOptions.comm = comm;
  cgrt_model *raw = nullptr;
  StatusPtr status(cgrt_model_load(options.package.c_str(), &modelOptions, &raw));
  if (status)
    return error(cgrt_status_get_message(status.get()));
  std::unique_ptr<cgrt_model, ModelDeleter> model(raw);

  std::string message;
  std::vector<Slot> inputs = describeSlots(model.get(), true, &message);
  if (!message.empty())
    return error(message);
  std::vector<Slot> outputs = describeSlots(model.get(), false, &message);
  if (!message.empty())
    return error(message);
  if (!options.quiet) {
    std::printf("loaded %s: %zu input(s), %zu output(s)\n",
                options.package.c_str(), inputs.size(), outputs.size());
    for (const Slot &slot : inputs)
      std::printf("  input  %-24s %s\n", ("'" + slot.name + "'").c_str(),
                  describe(slot.tensor.dtype, slot.tensor.shape).c_str());
    for (const Slot &slot : outputs)
      std::printf("  output %-24s %s\n", ("'" + slot.name + "'").c_str(),
                  describe(slot.tensor.dtype, slot.tensor.shape).c_str());
  }

  bool bucketed = cgrt_model_num_buckets(model.get()) > 0;
  bool training = cgrt_model_num_state(model.get()) > 0;
  if (!training && (options.steps > 0 || !options.stateOut.empty()))
    return error(std::string(options.steps > 0 ? "--steps" : "--state-out") +
                 " needs a training package (cgc --train -o DIR); '" +
                 options.package + "' is an inference package");
  // A data-parallel step's ranks train on rows of their own (random ones
  // from the seed plus the rank); the ranks of a split inference compute
  // one function of the same inputs.
  Options seeded = options;
  if (training)
    seeded.seed += options.rankSeed;
  unsigned stepFolders = countStepFolders(options.inputs);
  if (!loadInputs(seeded, stepInputDir(options.inputs, stepFolders, 0),
                  inputs, bucketed, &message))
    return error(message);
  if (!options.saveInputs.empty() &&
      !saveAll(options.saveInputs, inputs, "input", options.quiet, &message))
    return error(message);

  std::vector<cgrt_tensor> inputViews, outputViews;
  for (Slot &slot : inputs)
    inputViews.push_back(slot.tensor.view());
  for (Slot &slot : outputs)
    outputViews.push_back(slot.tensor.view());
  if (training) {
    if (!runSteps(seeded, model.get(), stepFolders, inputs, outputs,
                  &message) ||
        (!options.stateOut.empty() &&
         !saveState(options.stateOut, model.get(), options.quiet, &message)))
      return error(message);
  } else {
    status.reset(cgrt_model_run(model.get(), inputViews.data(),
                                inputViews.size(), outputViews.data(),
                                outputViews.size()));
    if (status)
      return error(cgrt_status_get_message(status.get()));
    adoptRunShapes(outputs, outputViews, bucketed);
    if (!options.quiet)
      std::printf("ran 1 inference\n");
  }
  if (!options.dumpGraphs.empty()) {
    size_t written = 0;
    status.reset(cgrt_model_dump_graphs(
        model.get(), options.dumpGraphs.c_str(), &written));
    if (status)
      return error(cgrt_status_get_message(status.get()));
    if (!options.quiet)
      std::printf("wrote %zu graph(s) to %s\n", written,
                  options.dumpGraphs.c_str());
  }

  if (!options.outputs.empty() &&
      !saveAll(options.outputs, outputs, "output", options.quiet, &message))
    return error(message);

  int exitCode = 0;
  if (!options.check.empty()) {
    bool failed = false;
    bool ok = checkOutputs(options, outputs, &failed, &message);
    if (failed)
      return error(message);
    if (options.maxRelL2 >= 0)
      std::printf("%scheck: %s (rel. L2 <= %g)\n", rankPrefix.c_str(),
                  ok ? "all outputs match" : "MISMATCH", options.maxRelL2);
    else
      std::printf("%scheck: %s (rtol %g, atol %g)\n", rankPrefix.c_str(),
                  ok ? "all outputs match" : "MISMATCH", options.rtol,
                  options.atol);
    if (!ok)
      exitCode = 1;
  }

  if (options.bench > 0) {
    int64_t warmup = options.warmup >= 0
                         ? options.warmup
                         : std::max<int64_t>(10, options.bench / 10);
    cgrt_benchmark_result result;
    status.reset(
        cgrt_model_benchmark(model.get(), warmup, options.bench, &result));
    if (status)
      return error(cgrt_status_get_message(status.get()));
    if (options.printResults)
      std::printf("bench: %lld iterations after %lld warm-up: median %.2f us, "
                "p99 %.2f us, mean %.2f us; %lld graph launch(es) per "
                "inference\n",
                static_cast<long long>(result.iterations),
                static_cast<long long>(warmup), result.median_us,
                result.p99_us, result.mean_us,
                static_cast<long long>(result.graph_launches_per_run));
    for (int zeroCopy = 0; options.benchIo && zeroCopy < 2; ++zeroCopy) {
      status.reset(cgrt_model_benchmark_device_io(
          model.get(), warmup, options.bench, zeroCopy, &result));
      if (status)
        return error(cgrt_status_get_message(status.get()));
      if (options.printResults)
        std::printf("bench (device I/O, %s): median %.2f us, p99 %.2f us, "
                  "mean %.2f us\n",
                  zeroCopy ? "zero-copy" : "copied", result.median_us,
                  result.p99_us, result.mean_us);
    }
  }
  if (options.profileKernels > 0) {
    size_t count = cgrt_model_num_kernels(model.get());
    std::vector<double> us(count, 0.0);
    status.reset(cgrt_model_profile_kernels(
        model.get(), std::max<int64_t>(3, options.profileKernels / 10),
        options.profileKernels, us.data(), count));
    if (status)
      return error(cgrt_status_get_message(status.get()));
    for (size_t k = 0; options.printResults && k < count; ++k)
      std::printf("kernel %3zu %-40s %10.2f us\n", k,
                  cgrt_model_kernel_name(model.get(), k), us[k]);
    // Library nodes (cuBLASLt, cuDNN) by the fused kernel they compute (its
    // epilogue, if any, is one of the kernels above).
    size_t nodes = cgrt_model_num_library_nodes(model.get());
    us.assign(nodes, 0.0);
    status.reset(cgrt_model_profile_library_nodes(
        model.get(), std::max<int64_t>(3, options.profileKernels / 10),
        options.profileKernels, us.data(), nodes));
    if (status)
      return error(cgrt_status_get_message(status.get()));
    // With the rate each achieves, to hold against the device's measured
    // peak (issue 15: the dominant products at 60% of it).
    for (size_t k = 0; options.printResults && k < nodes; ++k) {
      double flops = cgrt_model_library_node_flops(model.get(), k);
      std::printf("library %3zu %-40s %10.2f us", k,
                  cgrt_model_library_node_kernel(model.get(), k), us[k]);
      if (flops > 0 && us[k] > 0)
        std::printf(" %8.1f TFLOP/s", flops / (us[k] * 1e6));
      std::printf("\n");
    }
  }
  std::fflush(stdout);
  return exitCode;
}

/// Runs the package as one rank of several: `place` says which.
int runRank(const Options &options, const RankPlace &place, cgrt_comm *comm) {
  if (place.ranks > 1)
    rankPrefix = "rank " + std::to_string(place.rank) + ": ";
  return runPackage(optionsOfRank(options, place.rank), comm);
}

int cgcRunMain(int argc, char **argv) {
  Options options;
  int parsed = parseOptions(argc, argv, &options);
  if (parsed >= 0)
    return parsed;
  if (options.benchIo && options.bench <= 0)
    return usageError("--bench-io needs --bench N");
  if (options.info)
    return printInfo(options.package);
  auto body = [&](const RankPlace &place, cgrt_comm *comm) {
    return runRank(options, place, comm);
  };
  if (options.ranks > 0)
    return launchRanks(options.ranks, options.timeoutMs, body);
  std::string message;
  std::optional<RankPlace> place = placeFromEnvironment(&message);
  if (!message.empty())
    return error(message);
  if (place) {
    if (options.deviceGiven)
      return usageError("LOCAL_RANK chooses the device of a rank that "
                        "WORLD_SIZE and RANK place; --device does not apply");
    return runEnvironmentRank(*place, options.timeoutMs, body);
  }
  return runPackage(options, nullptr);
}

} // namespace cgcrun
