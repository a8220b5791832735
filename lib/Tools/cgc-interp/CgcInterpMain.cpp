//===- CgcInterpMain.cpp - the cgc-interp command-line tool ---------------===//
//
//   cgc-interp MODEL.onnx|MODEL.onnxtxt|FILE.mlir [--dim N=V] [--shape X=DIMS]
//     [--bind X=FILE.pb] [--inputs DIR|random [--seed N]] [--save-inputs DIR]
//     [--input-value X=1,2,3] [--outputs DIR] [--check REFDIR [--rtol R
//     --atol A]]
//     [--pipeline=none|plan] [--arena] [--print]
//   cgc-interp MODEL.onnx --train [--loss=.. --optimizer=.. --trainable=..]
//     [--steps N] [--inputs DIR] [--state-out DIR]
//
// Input and reference files are looked up by tensor name (NAME.npy,
// NAME.pb) and by position (input_0.pb, output_0.pb: the ONNX backend test
// layout). The flags follow cgc-run, the GPU runner of compiled packages.
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc-interp/CgcInterpMain.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/Interpreter/RunnerSupport.h"

#include "cgc/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;
namespace cl = llvm::cl;

namespace {

enum class PipelineKind { None, Plan };
enum class FileFormat { Npy, Pb };

struct Options {
  cl::OptionCategory category{"cgc-interp options"};
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<model.onnx|model.onnxtxt|file.mlir>"),
                             cl::cat(category)};
  cl::list<std::string> dims{"dim", cl::desc("Bind a symbolic dim: --dim N=4"),
                             cl::value_desc("NAME=N"), cl::cat(category)};
  cl::list<std::string> shapes{
      "shape", cl::desc("Set an input's shape: --shape x=1x3x224x224"),
      cl::value_desc("NAME=DIMS"), cl::cat(category)};
  cl::list<std::string> binds{
      "bind",
      cl::desc("Fix a graph input's value at compile time: --bind k=k.pb "
               "(the input becomes a constant)"),
      cl::value_desc("NAME=FILE.pb"), cl::cat(category)};
  cl::opt<std::string> inputs{
      "inputs",
      cl::desc("Folder of input tensors (NAME.npy, NAME.pb or input_<i>.pb), "
               "or 'random' for seeded random values as cgc-run makes them "
               "(the default)"),
      cl::value_desc("DIR|random"), cl::init("random"), cl::cat(category)};
  cl::opt<std::string> saveInputs{
      "save-inputs", cl::desc("Write the inputs used as DIR/NAME.npy"),
      cl::value_desc("DIR"), cl::cat(category)};
  cl::list<std::string> inputValues{
      "input-value",
      cl::desc("Give an input's values inline (its shape comes from the "
               "program): --input-value x=1,2,3,4"),
      cl::value_desc("NAME=V,V,..."), cl::cat(category)};
  cl::opt<uint64_t> seed{"seed", cl::desc("Seed of --inputs random"),
                         cl::init(0), cl::cat(category)};
  cl::opt<std::string> outputs{"outputs",
                               cl::desc("Write the outputs to this folder"),
                               cl::value_desc("DIR"), cl::cat(category)};
  cl::opt<FileFormat> outputFormat{
      "output-format", cl::desc("File format of --outputs"),
      cl::values(
          clEnumValN(FileFormat::Npy, "npy", "NAME.npy (default)"),
          clEnumValN(FileFormat::Pb, "pb", "output_<i>.pb (ONNX TensorProto)")),
      cl::init(FileFormat::Npy), cl::cat(category)};
  cl::opt<std::string> check{
      "check",
      cl::desc("Compare the outputs with the references in this folder "
               "(output_<i>.pb, NAME.npy or NAME.pb)"),
      cl::value_desc("REFDIR"), cl::cat(category)};
  cl::opt<double> rtol{"rtol", cl::desc("Relative tolerance of --check"),
                       cl::init(1e-3), cl::cat(category)};
  cl::opt<double> atol{"atol", cl::desc("Absolute tolerance of --check"),
                       cl::init(1e-5), cl::cat(category)};
  cl::opt<PipelineKind> pipeline{
      "pipeline", cl::desc("Passes to run before interpreting"),
      cl::values(clEnumValN(PipelineKind::None, "none",
                            "interpret the imported program (default)"),
                 clEnumValN(PipelineKind::Plan, "plan",
                            "partition, fuse and plan buffers, then run over "
                            "one byte arena")),
      cl::init(PipelineKind::None), cl::cat(category)};
  cl::opt<bool> arena{
      "arena",
      cl::desc("Run over one byte arena as planned by --cgc-plan-buffers "
               "(implied by --pipeline=plan; the program must be planned)"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> ioPrecision{
      "io-precision",
      cl::desc("As cgc's: the model's f32 inputs and outputs in fp16 or "
               "bf16 (casts at the boundary)"),
      cl::value_desc("fp32|fp16|bf16"), cl::init("fp32"), cl::cat(category)};
  cl::opt<bool> allowDeclaredTypeMismatch{
      "allow-declared-type-mismatch",
      cl::desc("A graph input, output or value_info whose declared type "
               "disagrees with the inferred one is a warning (the inferred "
               "type is used) instead of an error"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> train{
      "train",
      cl::desc("Build one training step of the model (as cgc --train) and "
               "run --steps of it, printing each step's loss"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> loss{"loss",
                            cl::desc("As cgc's: mse, cross_entropy or none"),
                            cl::value_desc("KIND"), cl::init("mse"),
                            cl::cat(category)};
  cl::opt<std::string> lossOutput{
      "loss-output", cl::desc("As cgc's: the output the loss is taken on"),
      cl::value_desc("NAME"), cl::cat(category)};
  cl::opt<std::string> optimizer{
      "optimizer", cl::desc("As cgc's: sgd[:..], adamw[:..] or none"),
      cl::value_desc("KIND[:KEY=VALUE,...]"), cl::init("sgd"),
      cl::cat(category)};
  cl::list<std::string> trainable{
      "trainable", cl::desc("As cgc's: the initializers to train"),
      cl::value_desc("NAME,..."), cl::CommaSeparated, cl::cat(category)};
  cl::opt<int64_t> stepsPerLaunch{
      "steps-per-launch",
      cl::desc("As cgc's: K steps a call over a ring of K batches"),
      cl::value_desc("K"), cl::init(1), cl::cat(category)};
  cl::opt<unsigned> steps{
      "steps",
      cl::desc("Training steps to run (a program with state inputs: "
               "--train, or the IR of cgc --train): each writes its updated "
               "state back; --inputs DIR with DIR/step_<k> folders takes "
               "step k's batch from DIR/step_<k mod count>"),
      cl::init(1), cl::cat(category)};
  cl::opt<std::string> stateOut{
      "state-out",
      cl::desc("After the steps, write every state tensor (trained weights, "
               "optimizer buffers) as DIR/NAME.npy"),
      cl::value_desc("DIR"), cl::cat(category)};
  cl::opt<std::string> deviceConfiguration{
      "device-configuration",
      cl::desc("The ONNX model's multi-device configuration (IR 11) whose "
               "sharding annotations split it (default: its only one)"),
      cl::value_desc("NAME"), cl::cat(category)};
  cl::opt<int64_t> tensorParallel{
      "tensor-parallel",
      cl::desc("Split the products over N ranks as cgc --tensor-parallel "
               "does and run the ranks as threads (all-reduces between "
               "them); every rank's outputs must agree, rank 0's are used"),
      cl::value_desc("N"), cl::init(1), cl::cat(category)};
  cl::opt<int64_t> tensorParallelGatherMb{
      "tensor-parallel-gather-mb",
      cl::desc("As cgc's: a product outside the column/row pairs whose "
               "weight has at least MB megabytes is split by columns, its "
               "result gathered"),
      cl::value_desc("MB"), cl::init(16), cl::cat(category)};
  cl::opt<int64_t> dataParallel{
      "data-parallel",
      cl::desc("With --train: N ranks, each taking its part of the batch "
               "(inputs of N times the model's batch are cut along dim 0), "
               "gradients averaged by all-reduces; run as threads"),
      cl::value_desc("N"), cl::init(1), cl::cat(category)};
  cl::opt<bool> print{"print", cl::desc("Print the outputs' values"),
                      cl::init(false), cl::cat(category)};
  cl::opt<int> precision{"precision",
                         cl::desc("Significant digits of printed floats"),
                         cl::init(6), cl::cat(category)};
};

/// The options that only --train gives a meaning to.
SmallVector<const cl::Option *> trainingOnlyOptions(const Options &opts) {
  const cl::Option &loss = opts.loss, &lossOutput = opts.lossOutput,
                   &optimizer = opts.optimizer, &trainable = opts.trainable,
                   &steps = opts.stepsPerLaunch,
                   &dataParallel = opts.dataParallel;
  return {&loss, &lossOutput, &optimizer, &trainable, &steps, &dataParallel};
}

void reportError(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cgc-interp") << message << "\n";
}

/// The first existing file among `names` in `dir`.
std::optional<std::string> findFile(StringRef dir,
                                    ArrayRef<std::string> names) {
  for (const std::string &name : names) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    if (llvm::sys::fs::exists(path))
      return path.str().str();
  }
  return std::nullopt;
}

/// The static shape of argument `i`, or an error.
FailureOr<SmallVector<int64_t>> staticArgShape(func::FuncOp func, unsigned i) {
  auto type = cast<RankedTensorType>(func.getArgument(i).getType());
  if (!type.hasStaticShape()) {
    reportError("input '" + argName(func, i) + "' has the dynamic type " +
                llvm::formatv("{0}", type).str() +
                "; bind its dims with --dim/--shape");
    return failure();
  }
  return SmallVector<int64_t>(type.getShape());
}

FailureOr<HostTensor> parseInlineValues(func::FuncOp func, unsigned i,
                                        StringRef values) {
  FailureOr<SmallVector<int64_t>> shape = staticArgShape(func, i);
  if (failed(shape))
    return failure();
  auto type = cast<RankedTensorType>(func.getArgument(i).getType());
  if (!scalarOf(type.getElementType())) {
    reportError("unsupported element type of input '" + argName(func, i) + "'");
    return failure();
  }
  HostTensor t(type.getElementType(), *shape);
  SmallVector<StringRef> parts;
  values.split(parts, ',', -1, /*KeepEmpty=*/false);
  if ((int64_t)parts.size() != t.numElements()) {
    reportError("--input-value " + argName(func, i) + " has " +
                Twine(parts.size()) + " values, the input has " +
                Twine(t.numElements()));
    return failure();
  }
  for (auto [k, part] : llvm::enumerate(parts)) {
    StringRef text = part.trim();
    if (text == "true" || text == "false") {
      t.setU(k, text == "true");
      continue;
    }
    int64_t asInt;
    if (!isFloat(t.scalar) && !text.getAsInteger(10, asInt)) {
      t.setI(k, asInt);
      continue;
    }
    double v;
    if (text == "nan")
      v = NAN;
    else if (text == "inf")
      v = INFINITY;
    else if (text == "-inf")
      v = -INFINITY;
    else if (text.getAsDouble(v)) {
      reportError("cannot parse '" + text + "' in --input-value");
      return failure();
    }
    t.setF(k, v);
  }
  return t;
}

/// Seeded random values for input `i`; a class-index label's within its
/// classes.
FailureOr<HostTensor> randomInput(Options &opts, func::FuncOp func,
                                  unsigned i) {
  FailureOr<SmallVector<int64_t>> shape = staticArgShape(func, i);
  if (failed(shape))
    return failure();
  Type element =
      cast<RankedTensorType>(func.getArgument(i).getType()).getElementType();
  if (!scalarOf(element)) {
    reportError("unsupported element type of input '" + argName(func, i) +
                "'");
    return failure();
  }
  HostTensor t(element, *shape);
  fillRandom(t, opts.seed * 0x9E3779B97F4A7C15ull + i);
  if (std::optional<int64_t> classes = getInputLabelClasses(func, i))
    for (int64_t k = 0; k < t.numElements(); ++k)
      t.setI(k, t.getI(k) % *classes);
  return t;
}

FailureOr<std::vector<HostTensor>> gatherInputs(Options &opts,
                                                func::FuncOp func,
                                                StringRef inputDir) {
  llvm::StringMap<std::string> inline_;
  for (StringRef entry : opts.inputValues) {
    auto [name, values] = entry.split('=');
    inline_[name] = values.str();
  }
  for (const auto &entry : inline_) {
    bool known = false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      known |= argName(func, i) == entry.getKey();
    if (!known) {
      reportError("--input-value names '" + entry.getKey() +
                  "', which is not an input of the program");
      return failure();
    }
  }
  // The tensor names of DIR/input_<i>.pb.
  std::map<std::string, std::string> pbNames;
  if (inputDir != "random") {
    for (int i = 0;; ++i) {
      std::optional<std::string> path =
          findFile(inputDir, {"input_" + std::to_string(i) + ".pb"});
      if (!path)
        break;
      HostTensor t;
      std::string name, error;
      if (readTensorProto(*path, func.getContext(), t, name, error) &&
          !name.empty())
        pbNames[name] = *path;
    }
  }
  std::vector<HostTensor> inputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = argName(func, i);
    auto found = inline_.find(name);
    if (found != inline_.end()) {
      FailureOr<HostTensor> t = parseInlineValues(func, i, found->second);
      if (failed(t))
        return failure();
      inputs.push_back(std::move(*t));
      continue;
    }
    // Training state starts from the value the step was built with.
    if (ElementsAttr initial = getInputState(func, i)) {
      std::string error;
      FailureOr<HostTensor> t = tensorFromAttr(initial, error);
      if (failed(t)) {
        reportError("state '" + name + "': " + error);
        return failure();
      }
      inputs.push_back(std::move(*t));
      continue;
    }
    if (inputDir == "random") {
      FailureOr<HostTensor> t = randomInput(opts, func, i);
      if (failed(t))
        return failure();
      inputs.push_back(std::move(*t));
      continue;
    }
    std::string file = sanitizeFileName(name);
    std::string index = std::to_string(i);
    std::optional<std::string> path =
        findFile(inputDir, {file + ".npy", file + ".pb"});
    // Backend-test files name their tensor: bound inputs shift positions.
    if (!path) {
      auto it = pbNames.find(name);
      if (it != pbNames.end())
        path = it->second;
    }
    if (!path)
      path = findFile(inputDir,
                      {"input_" + index + ".pb", "input_" + index + ".npy"});
    if (!path) {
      reportError("no file for input '" + name + "' in '" + inputDir +
                  "' (" + file + ".npy, " + file + ".pb or input_" + index +
                  ".pb)");
      return failure();
    }
    HostTensor t;
    std::string error;
    if (!readTensorFile(*path, func.getContext(), t, error)) {
      reportError(error);
      return failure();
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

LogicalResult writeOutputs(Options &opts, func::FuncOp func,
                           ArrayRef<HostTensor> outputs) {
  if (std::error_code ec = llvm::sys::fs::create_directories(opts.outputs)) {
    reportError("cannot create '" + opts.outputs + "': " + ec.message());
    return failure();
  }
  for (auto [i, t] : llvm::enumerate(outputs)) {
    std::string name = resultName(func, i), error;
    SmallString<256> path(opts.outputs);
    bool ok;
    if (opts.outputFormat == FileFormat::Pb) {
      llvm::sys::path::append(path, "output_" + std::to_string(i) + ".pb");
      ok = writeTensorProto(path.str().str(), t, name, error);
    } else {
      llvm::sys::path::append(path, sanitizeFileName(name) + ".npy");
      ok = writeNpy(path.str().str(), t, error);
    }
    if (!ok) {
      reportError(error);
      return failure();
    }
  }
  return success();
}

/// Compares with the references; returns the number of mismatching
/// outputs, or failure when a reference cannot be read.
FailureOr<int> checkOutputs(Options &opts, func::FuncOp func,
                            ArrayRef<HostTensor> outputs) {
  int mismatches = 0;
  for (auto [i, t] : llvm::enumerate(outputs)) {
    std::string name = resultName(func, i), index = std::to_string(i);
    std::string file = sanitizeFileName(name);
    std::optional<std::string> path =
        findFile(opts.check, {"output_" + index + ".pb", file + ".npy",
                              file + ".pb", "output_" + index + ".npy"});
    if (!path) {
      reportError("no reference for output '" + name + "' in '" + opts.check +
                  "'");
      return failure();
    }
    HostTensor expected;
    std::string error;
    if (!readTensorFile(*path, func.getContext(), expected, error)) {
      reportError(error);
      return failure();
    }
    Comparison c = compareTensors(t, expected, opts.rtol, opts.atol);
    llvm::outs() << "output " << i << " '" << name
                 << "': " << (c.ok ? "ok" : "MISMATCH: " + c.message) << "\n";
    mismatches += !c.ok;
  }
  return mismatches;
}

//===----------------------------------------------------------------------===//
// Training steps
//===----------------------------------------------------------------------===//

/// How many DIR/step_<k> folders --inputs has (0: one batch for all steps).
unsigned countStepFolders(StringRef dir) {
  if (dir == "random")
    return 0;
  unsigned count = 0;
  for (;; ++count) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, "step_" + std::to_string(count));
    if (!llvm::sys::fs::is_directory(path))
      return count;
  }
}

/// The folder step `k`'s batch comes from, of `count` step folders.
std::string stepInputDir(Options &opts, unsigned count, unsigned k) {
  if (count == 0)
    return opts.inputs;
  SmallString<256> path(StringRef(opts.inputs.getValue()));
  llvm::sys::path::append(path, "step_" + std::to_string(k % count));
  return path.str().str();
}

/// Class-index labels must name a class: an index outside [0, classes)
/// would make a one-hot row of zeros and a silently wrong loss.
LogicalResult checkLabels(func::FuncOp func, ArrayRef<HostTensor> inputs) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::optional<int64_t> classes = getInputLabelClasses(func, i);
    if (!classes)
      continue;
    for (int64_t k = 0; k < inputs[i].numElements(); ++k) {
      int64_t v = inputs[i].getI(k);
      if (v < 0 || v >= *classes) {
        reportError("label '" + argName(func, i) + "' holds " + Twine(v) +
                    " at flat index " + Twine(k) +
                    ", not a class index in [0, " + Twine(*classes) + ")");
        return failure();
      }
    }
  }
  return success();
}

bool allFinite(const HostTensor &t) {
  if (!isFloat(t.scalar))
    return true;
  for (int64_t k = 0; k < t.numElements(); ++k)
    if (!std::isfinite(t.getF(k)))
      return false;
  return true;
}

/// For each output, the input it updates (cgc.updates), or -1.
FailureOr<SmallVector<int>> updateTargets(func::FuncOp func) {
  llvm::StringMap<int> stateArgs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (getInputState(func, i))
      stateArgs[argName(func, i)] = i;
  SmallVector<int> targets;
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    StringAttr name = getOutputUpdates(func, r);
    targets.push_back(-1);
    if (!name)
      continue;
    auto it = stateArgs.find(name.getValue());
    if (it == stateArgs.end()) {
      reportError("output '" + resultName(func, r) + "' updates '" +
                  name.getValue() + "', which is no state input");
      return failure();
    }
    targets.back() = it->second;
  }
  return targets;
}

/// --tensor-parallel (or the model's annotations): the program split over
/// `ranks`.
LogicalResult splitOverRanks(int64_t ranks, int64_t gatherMb,
                             ModuleOp module) {
  if (getRanks(module) != 1) {
    reportError("the program is split over ranks already");
    return failure();
  }
  std::string error;
  FailureOr<int64_t> gatherBytes = gatherMinBytes(gatherMb, error);
  if (failed(gatherBytes)) {
    reportError(error);
    return failure();
  }
  CgcTensorParallelOptions split;
  split.ranks = ranks;
  split.gatherMinBytes = *gatherBytes;
  PassManager pm(module.getContext());
  pm.addPass(createCgcTensorParallel(split));
  return pm.run(module);
}

/// Every rank's outputs, which must agree bit for bit (the all-reduce gives
/// each rank the same sum, the rest is the same program); rank 0's.
FailureOr<std::vector<HostTensor>>
interpretEveryRank(func::FuncOp func,
                   ArrayRef<std::vector<HostTensor>> inputs,
                   const InterpreterOptions &options) {
  FailureOr<std::vector<std::vector<HostTensor>>> ranks =
      interpretRanks(func, inputs, options);
  if (failed(ranks))
    return failure();
  for (size_t r = 1; r < ranks->size(); ++r)
    for (auto [i, t] : llvm::enumerate((*ranks)[r]))
      if (t.bytes != (*ranks)[0][i].bytes) {
        reportError("rank " + Twine(r) + "'s output '" +
                    resultName(func, i) + "' differs from rank 0's");
        return failure();
      }
  return std::move((*ranks)[0]);
}

/// Each rank's inputs of a data-parallel step: an input holding the
/// ranks' batches together (dim 0 `ranks` times the step's) is cut along
/// dim 0, rank r taking the r-th part; the state and any input of the
/// step's own shape go to every rank whole.
std::vector<std::vector<HostTensor>> batchesOfRanks(func::FuncOp func,
                                                    ArrayRef<HostTensor> inputs,
                                                    int64_t ranks) {
  std::vector<std::vector<HostTensor>> perRank(ranks, inputs.vec());
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    const HostTensor &whole = inputs[i];
    if (getInputState(func, i) || type.getRank() == 0 || whole.rank() == 0 ||
        type.getDimSize(0) <= 0 || whole.shape[0] != ranks * type.getDimSize(0))
      continue;
    int64_t rows = type.getDimSize(0);
    int64_t rowBytes = whole.bytes.size() / whole.shape[0];
    for (int64_t r = 0; r < ranks; ++r) {
      // perRank holds a copy of the whole: keep its type, take its rows.
      HostTensor &part = perRank[r][i];
      part.shape[0] = rows;
      part.bytes.assign(whole.bytes.begin() + r * rows * rowBytes,
                        whole.bytes.begin() + (r + 1) * rows * rowBytes);
    }
  }
  return perRank;
}

/// One step of the program: on its one rank, or on each rank with its
/// part of the batch (their results must agree).
FailureOr<std::vector<HostTensor>>
interpretStep(func::FuncOp func, ArrayRef<HostTensor> inputs,
              const InterpreterOptions &options) {
  int64_t ranks = getRanks(func->getParentOfType<ModuleOp>());
  if (ranks == 1)
    return interpret(func, inputs, options);
  return interpretEveryRank(func, batchesOfRanks(func, inputs, ranks),
                            options);
}

/// Runs --steps training steps from `inputs` (state included), writing each
/// step's updates back into the state inputs; a step whose loss or updates
/// are not finite is skipped (its updates dropped, as the step itself does
/// on every target) and counted. Returns the last step's outputs.
FailureOr<std::vector<HostTensor>>
runTrainingSteps(Options &opts, func::FuncOp func,
                 std::vector<HostTensor> &inputs, unsigned stepFolders,
                 const InterpreterOptions &interpreterOptions) {
  FailureOr<SmallVector<int>> targets = updateTargets(func);
  if (failed(targets))
    return failure();
  std::vector<HostTensor> outputs;
  unsigned skipped = 0;
  for (unsigned k = 0; k < opts.steps; ++k) {
    if (k > 0 && stepFolders > 0) {
      FailureOr<std::vector<HostTensor>> batch =
          gatherInputs(opts, func, stepInputDir(opts, stepFolders, k));
      if (failed(batch))
        return failure();
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (!getInputState(func, i))
          inputs[i] = std::move((*batch)[i]);
    }
    if (failed(checkLabels(func, inputs)))
      return failure();
    FailureOr<std::vector<HostTensor>> result =
        interpretStep(func, inputs, interpreterOptions);
    if (failed(result))
      return failure();
    outputs = std::move(*result);
    // The step skips itself (cgc.updates of "skipped_steps", written by
    // --cgc-build-train-step); hand-written steps are checked here.
    bool finite = llvm::all_of(outputs, allFinite);
    double countedSkips = 0;
    for (auto [r, target] : llvm::enumerate(*targets))
      if (target >= 0 && resultName(func, r) == "skipped_steps")
        countedSkips = outputs[r].getF(0) - inputs[target].getF(0);
    bool counted = countedSkips > 0, skippedStep = counted || !finite;
    // One loss a step: K of them where a call runs K steps
    // (--steps-per-launch), each a step of its own on the lines.
    int64_t perCall = outputs[0].numElements();
    for (int64_t j = 0; j < perCall; ++j) {
      double loss = outputs[0].getF(j);
      bool marked = perCall == 1 ? skippedStep : !std::isfinite(loss);
      llvm::outs() << "step " << k * perCall + j + 1 << ": "
                   << resultName(func, 0) << " = "
                   << llvm::format("%.9g", loss)
                   << (marked ? " (not finite: update skipped)" : "")
                   << "\n";
    }
    skipped += perCall == 1 ? skippedStep : (unsigned)countedSkips;
    // A step that counted itself kept the state; others lose their updates.
    if (skippedStep && !counted)
      continue;
    for (auto [r, target] : llvm::enumerate(*targets))
      if (target >= 0)
        inputs[target] = outputs[r];
  }
  if (skipped)
    llvm::WithColor::warning(llvm::errs(), "cgc-interp")
        << skipped << " of " << opts.steps * outputs[0].numElements()
        << " steps had a non-finite loss or update and were skipped\n";
  return outputs;
}

/// Writes inputs as DIR/NAME.npy: all of them (--save-inputs), or only the
/// training state (--state-out).
LogicalResult writeInputs(StringRef dir, func::FuncOp func,
                          ArrayRef<HostTensor> inputs, bool stateOnly) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    reportError("cannot create '" + dir + "': " + ec.message());
    return failure();
  }
  for (auto [i, t] : llvm::enumerate(inputs)) {
    if (stateOnly && !getInputState(func, i))
      continue;
    SmallString<256> path(dir);
    llvm::sys::path::append(path, sanitizeFileName(argName(func, i)) + ".npy");
    std::string error;
    if (!writeNpy(path.str().str(), t, error)) {
      reportError(error);
      return failure();
    }
  }
  return success();
}

/// --train: the imported program becomes one training step.
LogicalResult buildTrainStep(Options &opts, ModuleOp module) {
  CgcBuildTrainStepOptions train;
  train.loss = opts.loss;
  train.lossOutput = opts.lossOutput;
  train.optimizer = opts.optimizer;
  train.trainable.assign(opts.trainable.begin(), opts.trainable.end());
  train.dataParallel = opts.dataParallel;
  PassManager pm(module.getContext());
  pm.addPass(createCgcBuildTrainStep(train));
  CgcLoopTrainStepsOptions loop;
  loop.steps = opts.stepsPerLaunch;
  pm.addPass(createCgcLoopTrainSteps(loop));
  return pm.run(module);
}

bool hasState(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (getInputState(func, i))
      return true;
  return false;
}

/// The exit codes of every cgc tool: 0 ok, 1 the model cannot be read or
/// run or --check found a mismatch, 2 usage.
constexpr int kExitOk = 0, kExitModelError = 1, kExitUsage = 2;

} // namespace

int cgc::cgcInterpMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options opts;
  cl::HideUnrelatedOptions(opts.category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "cgc-interp " << CGC_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING
       << ")\n";
  });
  if (!cl::ParseCommandLineOptions(
          argc, argv, "cgc-interp: run a model on the reference interpreter\n",
          &llvm::errs()))
    return kExitUsage;
  if (opts.input.empty()) {
    reportError("no input model given");
    return kExitUsage;
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    // Pass remarks (the buffer plan summary) are not interesting here.
    if (diag.getSeverity() != DiagnosticSeverity::Remark)
      llvm::errs() << formatDiagnostic(diag) << "\n";
    return success();
  });

  ImportOptions importOptions;
  importOptions.allowDeclaredTypeMismatch = opts.allowDeclaredTypeMismatch;
  importOptions.ioPrecision = opts.ioPrecision;
  std::string error;
  for (const std::string &dim : opts.dims)
    if (!parseDimBinding(dim, importOptions, error))
      break;
  if (error.empty())
    for (const std::string &shape : opts.shapes)
      if (!parseShapeBinding(shape, importOptions, error))
        break;
  if (error.empty())
    for (const std::string &bind : opts.binds)
      if (!parseValueBinding(bind, importOptions, error))
        break;
  if (!error.empty()) {
    reportError(error);
    return kExitUsage;
  }

  if (!opts.train)
    for (const cl::Option *option : trainingOnlyOptions(opts))
      if (option->getNumOccurrences()) {
        reportError("--" + option->ArgStr + " applies to --train only");
        return kExitUsage;
      }
  importOptions.keepInitializers = opts.train;
  importOptions.deviceConfiguration = opts.deviceConfiguration;
  OwningOpRef<ModuleOp> module =
      loadProgram(opts.input, &context, importOptions);
  if (!module)
    return kExitModelError;
  bool plan = opts.pipeline == PipelineKind::Plan;
  // The model's IR 11 multi-device annotations split it too.
  std::string splitError;
  FailureOr<int64_t> splitRanks = ranksToSplit(
      *module, opts.tensorParallel == 1 ? 0 : (int64_t)opts.tensorParallel,
      opts.train, splitError);
  if (failed(splitRanks)) {
    reportError(splitError);
    return kExitUsage;
  }
  if (*splitRanks != 1 &&
      failed(splitOverRanks(*splitRanks, opts.tensorParallelGatherMb, *module)))
    return kExitModelError;
  if (getRanks(*module) != 1 && opts.train) {
    reportError("a program split over ranks is not trained (--train "
                "--data-parallel splits the batch instead)");
    return kExitUsage;
  }
  if (opts.train && failed(buildTrainStep(opts, *module)))
    return kExitModelError;
  // A program over ranks (--tensor-parallel, --data-parallel, or IR of cgc
  // with either) runs as that many threads.
  int64_t ranks = getRanks(*module);
  if (ranks != 1 && (plan || opts.arena)) {
    reportError("a program over ranks runs as imported or trained (not "
                "with --pipeline=plan or --arena)");
    return kExitUsage;
  }
  if (plan && failed(runPlanPipeline(*module)))
    return kExitModelError;
  func::FuncOp func = findMain(*module);
  if (!func) {
    reportError("the program has no @main function");
    return kExitModelError;
  }
  unsigned stepFolders = countStepFolders(opts.inputs);
  FailureOr<std::vector<HostTensor>> inputs =
      gatherInputs(opts, func, stepInputDir(opts, stepFolders, 0));
  if (failed(inputs))
    return kExitModelError;
  InterpreterOptions interpreterOptions;
  interpreterOptions.useArena = plan || opts.arena;
  bool training = hasState(func);
  if (opts.steps.getNumOccurrences() && !training) {
    reportError("--steps needs a training step: --train, or the IR of "
                "cgc --train");
    return kExitUsage;
  }
  FailureOr<std::vector<HostTensor>> outputs =
      training ? runTrainingSteps(opts, func, *inputs, stepFolders,
                                  interpreterOptions)
      : ranks != 1
          ? interpretEveryRank(
                func, std::vector<std::vector<HostTensor>>(ranks, *inputs),
                interpreterOptions)
          : interpret(func, *inputs, interpreterOptions);
  if (failed(outputs))
    return kExitModelError;
  if (!opts.stateOut.empty()) {
    if (!training) {
      reportError("--state-out needs a training step");
      return kExitUsage;
    }
    if (failed(writeInputs(opts.stateOut, func, *inputs, /*stateOnly=*/true)))
      return kExitModelError;
  }

  if (opts.print) {
    for (auto [i, t] : llvm::enumerate(*outputs)) {
      llvm::outs() << "output " << i << " '" << resultName(func, i)
                   << "': " << t.typeString() << " = ";
      printTensorValues(llvm::outs(), t, opts.precision);
      llvm::outs() << "\n";
    }
  }
  if (!opts.saveInputs.empty() &&
      failed(writeInputs(opts.saveInputs, func, *inputs, /*stateOnly=*/false)))
    return kExitModelError;
  if (!opts.outputs.empty() && failed(writeOutputs(opts, func, *outputs)))
    return kExitModelError;
  if (!opts.check.empty()) {
    FailureOr<int> mismatches = checkOutputs(opts, func, *outputs);
    if (failed(mismatches))
      return kExitModelError;
    if (*mismatches)
      return kExitModelError;
  }
  return kExitOk;
}
