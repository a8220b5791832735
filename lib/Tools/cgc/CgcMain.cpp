//===- CgcMain.cpp - the cgc command-line compiler ------------------------===//
//
//   cgc MODEL.onnx --emit=cgc -o -      imported IR (also islands, kernels,
//                                       plan, cgraph: the IR at that stage)
//   cgc MODEL.onnx -o DIR               a package (--emit=lib, the default
//                                       for any -o but '-' and FILE.mlir)
//                                       or its sources only (--emit=package)
//   cgc MODEL.onnx --dim N=1            bind a symbolic dim
//   cgc MODEL.onnx --explain            islands, kernels, arena (also
//                                       --format=json|dot|html, or from -o's
//                                       extension)
//   cgc --list-ops                      supported ONNX ops (docs/ops.md)
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc/CgcMain.h"

#include "cgc/Conversion/Passes.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcAttrs.h"
#include "cgc/Dialect/Cgc/IR/Gradients.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"
#include "cgc/Explain/Explain.h"
#include "cgc/Import/ONNXImporter.h"
#include "cgc/InitAllDialects.h"
#include "cgc/Pipeline.h"
#include "cgc/Target/Package.h"
#include "cgc/Tools/cgc/ExplainRender.h"
#include "TuningCandidates.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class EmitKind {
  Cgc,
  Islands,
  Kernels,
  TuningCandidates,
  Plan,
  CGraph,
  Package,
  Lib
};
enum class ExplainFormat { Text, Json, Dot, Html };

/// The exit codes every cgc tool shares (docs/user-guide.md): a model or
/// compile error is the model's, a usage error the command line's.
constexpr int kExitOk = 0, kExitModelError = 1, kExitUsage = 2;

struct Options {
  cl::OptionCategory category{"cgc options"};
  cl::opt<std::string> input{cl::Positional, cl::desc("<model.onnx>"),
                             cl::cat(category)};
  cl::opt<std::string> output{"o", cl::desc("Output: '-' (stdout, the default), FILE.mlir or a "
                       "device for IR, anything else a package folder "
                       "(without --emit)"),
                              cl::value_desc("path"), cl::init("-"),
                              cl::cat(category)};
  cl::opt<EmitKind> emit{
      "emit", cl::desc("What to produce (default: cgc IR for a file or '-', "
                       "lib for a folder)"),
      cl::values(
          clEnumValN(EmitKind::Cgc, "cgc", "the imported cgc IR"),
          clEnumValN(EmitKind::Islands, "islands",
                     "IR after --cgc-partition-islands"),
          clEnumValN(EmitKind::Kernels, "kernels",
                     "IR after --cgc-select-kernel-config (the fused kernels "
                     "with their configs, after buffer planning)"),
          clEnumValN(EmitKind::TuningCandidates, "tuning-candidates",
                     "JSON: each tiled GEMM kernel's signature and every "
                     "config the templates offer it (for "
                     "utils/tune/cgc_tune.py)"),
          clEnumValN(EmitKind::Plan, "plan", "IR after --cgc-plan-buffers"),
          clEnumValN(EmitKind::CGraph, "cgraph",
                     "IR with the explicit cgraph graphs"),
          clEnumValN(EmitKind::Package, "package",
                     "a package folder (sources, kernels, weights)"),
          clEnumValN(EmitKind::Lib, "lib",
                     "a package folder with its compiled libmodel.so")),
      cl::cat(category)};
  cl::opt<std::string> arch{
      "arch",
      cl::desc("GPU architecture to compile for: sm_80, sm_86, sm_89, sm_90 "
               "(the default) or sm_100; kernel configs follow that GPU"),
      cl::init("sm_90"), cl::cat(category)};
  cl::opt<std::string> gemmTile{
      "gemm-tile",
      cl::desc("Force one tile on every tiled GEMM, BMxBNxTMxTN[/SPLIT] "
               "(BMxBNxWMxWN, a warp's tile, under --precision; for "
               "measuring tiles; a warning per GEMM)"),
      cl::value_desc("TILE"), cl::cat(category)};
  cl::opt<std::string> precision{
      "precision",
      cl::desc("What matrix products, attentions and convolutions of f32 "
               "inputs compute in: fp32 (the default), tf32, fp16 or bf16 "
               "(tensor cores, f32 accumulation; softmax, norms, "
               "reductions and the model's inputs and outputs stay in "
               "their types)"),
      cl::value_desc("fp32|tf32|fp16|bf16"), cl::init("fp32"),
      cl::cat(category)};
  cl::opt<std::string> ioPrecision{
      "io-precision",
      cl::desc("The type of the model's f32 inputs and outputs in the "
               "package: fp32 (the default: as the model declares them), "
               "fp16 or bf16 (half the bytes to copy; casts at the boundary)"),
      cl::value_desc("fp32|fp16|bf16"), cl::init("fp32"), cl::cat(category)};
  cl::list<std::string> keepFp32{
      "keep-fp32",
      cl::desc("Keep these ONNX op types (MatMul, Gemm, Conv) or node names "
               "in f32 under --precision"),
      cl::value_desc("OP_OR_NODE,..."), cl::CommaSeparated, cl::cat(category)};
  cl::opt<std::string> narrowStorage{
      "narrow-storage",
      cl::desc("Under --precision=fp16|bf16, store the operands of matrix "
               "products in that type (16-bit weights, and a 16-bit copy of "
               "each activation they read): the same results, half their "
               "bytes. auto (the default): for the products cuBLASLt "
               "computes, which then runs on 16-bit operands, those "
               "whose generated kernel then copies them as stored (K and N "
               "multiples of 8), and bf16 convolutions cuDNN computes (their "
               "output rounded to bf16 before the bias); always: every "
               "tensor-core product, fp16 convolutions too; never"),
      cl::value_desc("auto|always|never"), cl::init("auto"),
      cl::cat(category)};
  cl::opt<std::string> cublaslt{
      "cublaslt",
      cl::desc("Which matrix products cuBLASLt computes, as child graph "
               "nodes (the library is loaded at run time): auto (the "
               "default: where the cost model or --tuning-cache says it "
               "wins), always (every product it can take; a warning names "
               "each one it cannot and why) or never"),
      cl::value_desc("auto|always|never"), cl::init("auto"),
      cl::cat(category)};
  cl::opt<std::string> cudnn{
      "cudnn",
      cl::desc("Which convolutions cuDNN computes, as child graph nodes (the "
               "library is loaded at run time): auto (the default: dense "
               "convolutions where the cost model or --tuning-cache says it "
               "wins), always (every one it can take; a warning names each "
               "one it cannot and why) or never"),
      cl::value_desc("auto|always|never"), cl::init("auto"),
      cl::cat(category)};
  cl::opt<std::string> channelsLast{
      "channels-last",
      cl::desc("Store the tensors of the convolutions cuDNN computes "
               "channels last (NHWC, cuDNN's tensor-core layout; channels "
               "first it converts them on every call): auto (the default: "
               "where few transposes are left at the ends of the "
               "convolution chains), always, or never"),
      cl::value_desc("auto|always|never"), cl::init("auto"),
      cl::cat(category)};
  cl::opt<std::string> normRows{
      "norm-rows",
      cl::desc("How norm kernels (layer norm, softmax) spread their rows: "
               "auto (the default: a warp per row of at most 1024 values "
               "where the rows fill every multiprocessor at 8 a block, else "
               "a block per row), warp (a warp per row wherever the row "
               "fits) or block (a block per row always)"),
      cl::value_desc("auto|warp|block"), cl::init("auto"), cl::cat(category)};
  cl::opt<std::string> tuningCache{
      "tuning-cache",
      cl::desc("Take each kernel's config from this tuning cache where it "
               "lists the kernel's signature (utils/tune/cgc_tune.py writes "
               "it on a GPU machine; the same cache gives the same package)"),
      cl::value_desc("FILE.json"), cl::cat(category)};
  cl::list<std::string> dims{
      "dim",
      cl::desc("Bind a symbolic dim: --dim N=4; several values compile one "
               "graph set per value (shape buckets): --dim N=1,2,4,8"),
      cl::value_desc("NAME=N[,N...]"), cl::cat(category)};
  cl::opt<std::string> controlFlow{
      "control-flow",
      cl::desc("Where If and Loop with static shapes run: 'graph' (CUDA "
               "conditional nodes, needs a CUDA 12.3 driver; the default) or "
               "'host' (eager regions that launch their bodies' kernels)"),
      cl::value_desc("graph|host"), cl::init("graph"), cl::cat(category)};
  cl::opt<bool> allowDeclaredTypeMismatch{
      "allow-declared-type-mismatch",
      cl::desc("A graph input, output or value_info whose declared type "
               "disagrees with the inferred one is a warning (the inferred "
               "type is used) instead of an error"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> padToBucket{
      "pad-to-bucket",
      cl::desc("With shape buckets: run a size between buckets in the next "
               "larger bucket, padded (needs a proof that padded rows never "
               "mix with real ones)"),
      cl::init(false), cl::cat(category)};
  cl::list<std::string> shapes{
      "shape", cl::desc("Set an input's shape: --shape x=1x3x224x224"),
      cl::value_desc("NAME=DIMS"), cl::cat(category)};
  cl::list<std::string> binds{
      "bind",
      cl::desc("Fix a graph input's value at compile time: --bind k=k.pb "
               "(a serialized ONNX TensorProto) or --bind k=k.npy"),
      cl::value_desc("NAME=FILE"), cl::cat(category)};
  cl::opt<bool> requireStatic{
      "require-static",
      cl::desc("Fail if any shape is still symbolic after binding"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> deterministic{
      "deterministic",
      cl::desc("Bit-identical results run to run: no split-K products "
               "whose blocks add partial sums atomically (slower where K is "
               "long and the outputs few)"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> programmaticLaunch{
      "programmatic-launch",
      cl::desc("Make kernel-to-kernel graph edges programmatic, so that a "
               "kernel is launched while the one before it finishes (needs "
               "a CUDA 12.3 driver and sm_90; default on; "
               "--programmatic-launch=false for ordinary edges)"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> printWeights{
      "print-weights",
      cl::desc("Print weight blobs in full (default: elided)"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> explain{
      "explain",
      cl::desc("Print the islands, eager regions (with reasons), kernels "
               "and arena plan instead of compiling"),
      cl::init(false), cl::cat(category)};
  cl::opt<ExplainFormat> format{
      "format", cl::desc("Form of --explain (default: text)"),
      cl::values(clEnumValN(ExplainFormat::Text, "text", "plain text"),
                 clEnumValN(ExplainFormat::Json, "json",
                            "JSON: the data the dot and html forms draw"),
                 clEnumValN(ExplainFormat::Dot, "dot",
                            "a Graphviz digraph (render with dot -Tsvg)"),
                 clEnumValN(ExplainFormat::Html, "html",
                            "one self-contained HTML page")),
      cl::init(ExplainFormat::Text), cl::cat(category)};
  cl::opt<bool> train{
      "train",
      cl::desc("Compile one training step instead of inference: forward, "
               "loss, backward and the optimizer's update of the trained "
               "initializers (docs/training.md)"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> loss{
      "loss",
      cl::desc("With --train: mse (the default), cross_entropy (logits "
               "[N,C,...] against class indices) or none (the output is the "
               "loss); the label becomes the input 'label'"),
      cl::value_desc("mse|cross_entropy|none"), cl::init("mse"),
      cl::cat(category)};
  cl::opt<std::string> lossOutput{
      "loss-output",
      cl::desc("With --train: the output the loss is taken on (default: the "
               "model's only one)"),
      cl::value_desc("NAME"), cl::cat(category)};
  cl::opt<std::string> optimizer{
      "optimizer",
      cl::desc("With --train: sgd[:lr=0.01,momentum=0,weight_decay=0] (the "
               "default), adamw[:lr=1e-3,betas=0.9/0.999,eps=1e-8,"
               "weight_decay=0.01] (PyTorch's), or none (the step returns "
               "the gradients)"),
      cl::value_desc("KIND[:KEY=VALUE,...]"), cl::init("sgd"),
      cl::cat(category)};
  cl::list<std::string> trainable{
      "trainable",
      cl::desc("With --train: the initializers to train (default: every "
               "float initializer; the others stay frozen)"),
      cl::value_desc("NAME,..."), cl::CommaSeparated, cl::cat(category)};
  cl::opt<int64_t> stepsPerLaunch{
      "steps-per-launch",
      cl::desc("With --train: K steps in one graph launch (a WHILE node "
               "over a ring of K batches: each input gains a leading dim "
               "of K, the loss output holds the K losses)"),
      cl::value_desc("K"), cl::init(1), cl::cat(category)};
  cl::opt<int64_t> dataParallel{
      "data-parallel",
      cl::desc("With --train: N ranks, each training on its part of the "
               "batch, the gradients averaged by all-reduces in the step "
               "(docs/multi-gpu.md): the step's IR (run by cgc-interp "
               "--data-parallel=N) or its package with NCCL all-reduce "
               "nodes and a weights file per rank"),
      cl::value_desc("N"), cl::init(1), cl::cat(category)};
  cl::opt<std::string> deviceConfiguration{
      "device-configuration",
      cl::desc("The ONNX model's multi-device configuration (IR 11) whose "
               "sharding annotations split it over its devices (default: "
               "the model's only one; docs/multi-gpu.md)"),
      cl::value_desc("NAME"), cl::cat(category)};
  cl::opt<int64_t> gradientBucketMb{
      "gradient-bucket-mb",
      cl::desc("With --data-parallel: average the gradients in buckets of "
               "at most MB megabytes, one all-reduce each, in the order the "
               "backward computes them (as DistributedDataParallel's "
               "bucket_cap_mb; 0: one all-reduce a gradient)"),
      cl::value_desc("MB"), cl::init(25), cl::cat(category)};
  cl::opt<int64_t> tensorParallel{
      "tensor-parallel",
      cl::desc("Split the model's products over N ranks (GPUs), "
               "Megatron-style: column- then row-parallel pairs with an "
               "all-reduce (docs/multi-gpu.md): the split IR (run by "
               "cgc-interp --tensor-parallel=N) or a package with NCCL "
               "all-reduce nodes and a weights file per rank"),
      cl::value_desc("N"), cl::init(1), cl::cat(category)};
  cl::opt<int64_t> tensorParallelGatherMb{
      "tensor-parallel-gather-mb",
      cl::desc("With --tensor-parallel: a product outside the column/row "
               "pairs whose weight has at least MB megabytes (a language "
               "model's vocabulary projection) is split by columns, its "
               "result gathered by an all-gather (0: every such product)"),
      cl::value_desc("MB"), cl::init(16), cl::cat(category)};
  cl::opt<bool> verbose{"v",
                        cl::desc("Say what each stage does and how long it "
                                 "takes, on stderr"),
                        cl::init(false), cl::cat(category)};
  cl::opt<bool> timings{"timings",
                        cl::desc("Print the time of each stage and pass on "
                                 "stderr at the end (like --mlir-timing)"),
                        cl::init(false), cl::cat(category)};
  cl::opt<bool> remarks{"remarks",
                        cl::desc("Print the passes' remarks on stderr"),
                        cl::init(false), cl::cat(category)};
  cl::opt<bool> listOps{"list-ops",
                        cl::desc("Print the supported ONNX ops as markdown"),
                        cl::init(false), cl::cat(category)};
  cl::opt<bool> listGradients{
      "list-gradients",
      cl::desc("Print the cgc ops that have a gradient rule (--train) as "
               "markdown"),
      cl::init(false), cl::cat(category)};
};

/// Prints diagnostics as `file: error: message`, the form users grep for;
/// op locations carry the ONNX node name, which is added when present.
void printDiagnostic(Diagnostic &diag) {
  std::string prefix, nodeName;
  Location loc = diag.getLocation();
  if (auto name = dyn_cast<NameLoc>(loc)) {
    nodeName = name.getName().str();
    loc = name.getChildLoc();
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    prefix = file.getFilename().str() + ": ";
  llvm::raw_ostream &os = llvm::errs();
  os << prefix;
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: os << "error: "; break;
  case DiagnosticSeverity::Warning: os << "warning: "; break;
  case DiagnosticSeverity::Remark: os << "remark: "; break;
  case DiagnosticSeverity::Note: os << "note: "; break;
  }
  if (!nodeName.empty())
    os << "op '" << nodeName << "': ";
  os << diag.str() << "\n";
}

cgc::PipelineOptions pipelineOptions(const Options &opts) {
  cgc::PipelineOptions options;
  options.deterministic = opts.deterministic;
  options.gemmTile = opts.gemmTile;
  options.programmaticLaunch = opts.programmaticLaunch;
  options.precision = opts.precision;
  options.tuningCache = opts.tuningCache;
  options.cublaslt = opts.cublaslt;
  options.cudnn = opts.cudnn;
  options.channelsLast = opts.channelsLast;
  options.normRows = opts.normRows;
  options.narrowStorage = opts.narrowStorage;
  options.tuningCandidates = opts.emit.getNumOccurrences() &&
                             opts.emit == EmitKind::TuningCandidates;
  options.keepFp32.assign(opts.keepFp32.begin(), opts.keepFp32.end());
  return options;
}

LogicalResult parseBindings(Options &opts, cgc::ImportOptions &importOptions,
                            cgc::BucketOptions &buckets) {
  std::string error;
  if (!llvm::is_contained(cgc::knownArchitectures(), opts.arch.getValue()))
    error = "--arch must be one of " +
            llvm::join(cgc::knownArchitectures(), ", ") + ", got '" +
            opts.arch.getValue() + "'";
  else if (!llvm::is_contained(ArrayRef<StringRef>{"auto", "always", "never"},
                               StringRef(opts.cublaslt.getValue())))
    error = "--cublaslt must be auto, always or never, got '" +
            opts.cublaslt.getValue() + "'";
  else if (!llvm::is_contained(ArrayRef<StringRef>{"auto", "always", "never"},
                               StringRef(opts.cudnn.getValue())))
    error = "--cudnn must be auto, always or never, got '" +
            opts.cudnn.getValue() + "'";
  else if (!llvm::is_contained(ArrayRef<StringRef>{"auto", "always", "never"},
                               StringRef(opts.channelsLast.getValue())))
    error = "--channels-last must be auto, always or never, got '" +
            opts.channelsLast.getValue() + "'";
  else if (!llvm::is_contained(ArrayRef<StringRef>{"auto", "warp", "block"},
                               StringRef(opts.normRows.getValue())))
    error = "--norm-rows must be auto, warp or block, got '" +
            opts.normRows.getValue() + "'";
  else if (!llvm::is_contained(ArrayRef<StringRef>{"auto", "always", "never"},
                               StringRef(opts.narrowStorage.getValue())))
    error = "--narrow-storage must be auto, always or never, got '" +
            opts.narrowStorage.getValue() + "'";
  else if (!llvm::is_contained(
               ArrayRef<StringRef>{"fp32", "tf32", "fp16", "bf16"},
               StringRef(opts.precision.getValue())))
    error = "--precision must be one of fp32, tf32, fp16, bf16, got '" +
            opts.precision.getValue() + "'";
  else if (!llvm::is_contained(ArrayRef<StringRef>{"fp32", "fp16", "bf16"},
                               StringRef(opts.ioPrecision.getValue())))
    error = "--io-precision must be one of fp32, fp16, bf16, got '" +
            opts.ioPrecision.getValue() + "'";
  if (!error.empty()) {
    llvm::WithColor::error(llvm::errs(), "cgc") << error << "\n";
    return failure();
  }
  for (const std::string &dim : opts.dims)
    if (StringRef(dim).contains(',')
            ? !cgc::parseBucketBinding(dim, buckets, error)
            : !cgc::parseDimBinding(dim, importOptions, error))
      break;
  if (error.empty() && !buckets.dim.empty() &&
      importOptions.dimBindings.contains(buckets.dim))
    error = "--dim " + buckets.dim + " is given twice";
  if (error.empty() && opts.controlFlow != "graph" &&
      opts.controlFlow != "host")
    error = "--control-flow must be 'graph' or 'host', got '" +
            opts.controlFlow + "'";
  importOptions.hostControlFlow = opts.controlFlow == "host";
  importOptions.arch = opts.arch;
  importOptions.ioPrecision = opts.ioPrecision;
  importOptions.allowDeclaredTypeMismatch = opts.allowDeclaredTypeMismatch;
  importOptions.keepInitializers = opts.train;
  importOptions.deviceConfiguration = opts.deviceConfiguration;
  if (error.empty() && opts.train && opts.dims.size() &&
      llvm::any_of(opts.dims, [](StringRef d) { return d.contains(','); }))
    error = "--train takes one value per --dim (no shape buckets)";
  if (error.empty() && opts.padToBucket && buckets.dim.empty())
    error = "--pad-to-bucket needs shape buckets: --dim NAME=V1,V2,...";
  buckets.padToBucket = opts.padToBucket;
  if (error.empty())
    for (const std::string &shape : opts.shapes)
      if (!cgc::parseShapeBinding(shape, importOptions, error))
        break;
  if (error.empty())
    for (const std::string &bind : opts.binds)
      if (!cgc::parseValueBinding(bind, importOptions, error))
        break;
  if (error.empty())
    return success();
  llvm::WithColor::error(llvm::errs(), "cgc") << error << "\n";
  return failure();
}

/// Without --emit, '-', FILE.mlir and devices (/dev/null) get IR and
/// anything else is a package folder: what -o writes never depends on a dot
/// in a folder's name.
bool writesIR(StringRef output) {
  llvm::sys::fs::file_status status;
  return output == "-" || llvm::sys::path::extension(output) == ".mlir" ||
         (!llvm::sys::fs::status(output, status) &&
          status.type() == llvm::sys::fs::file_type::character_file);
}

/// --emit, else the IR of `irStage` for '-' or FILE.mlir, else a package.
EmitKind emitKind(const Options &opts, EmitKind irStage) {
  if (opts.emit.getNumOccurrences())
    return opts.emit.getValue();
  return writesIR(opts.output) ? irStage : EmitKind::Lib;
}

/// --format, else what the -o file's extension says, else text.
ExplainFormat explainFormat(const Options &opts) {
  if (opts.format.getNumOccurrences())
    return opts.format.getValue();
  StringRef ext = llvm::sys::path::extension(opts.output);
  if (ext == ".json")
    return ExplainFormat::Json;
  if (ext == ".dot" || ext == ".gv")
    return ExplainFormat::Dot;
  if (ext == ".html" || ext == ".htm")
    return ExplainFormat::Html;
  return ExplainFormat::Text;
}

int usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cgc") << message << "\n";
  return kExitUsage;
}

/// -v: a line on stderr as each stage starts and its time when it ends;
/// --timings: MLIR's timing report of the stages and their passes, printed
/// when the log is destroyed.
class StageLog {
public:
  StageLog(bool verbose, bool timings) : verbose(verbose) {
    timing.setEnabled(timings);
    root = timing.getRootScope();
  }
  ~StageLog() { finish(); }

  void begin(StringRef what) {
    finish();
    if (verbose)
      llvm::errs() << "cgc: " << what << "\n";
    current = root.nest(what);
    start = std::chrono::steady_clock::now();
    active = true;
  }
  /// A step inside the current stage (the package writer's NVRTC and host
  /// compiles): a line, and a timer nested in the stage's.
  void note(StringRef what) {
    if (verbose)
      llvm::errs() << "cgc:   " << what << "\n";
    step.stop();
    step = current.nest(what);
  }
  /// Times the passes of `pm` under the current stage.
  void attach(PassManager &pm) {
    if (timing.isEnabled())
      pm.enableTiming(current);
  }
  void finish() {
    if (!active)
      return;
    active = false;
    step.stop();
    current.stop();
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    if (verbose)
      llvm::errs() << llvm::formatv("cgc:   {0:f2} s\n", took.count());
  }

private:
  bool verbose;
  bool active = false;
  DefaultTimingManager timing; // declared first: destroyed (and printed) last
  TimingScope root, current, step;
  std::chrono::steady_clock::time_point start;
};

LogicalResult writeModule(Options &opts, ModuleOp module) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out =
      openOutputFile(opts.output, &error);
  if (!out) {
    llvm::WithColor::error(llvm::errs(), "cgc") << error << "\n";
    return failure();
  }
  OpPrintingFlags flags;
  if (!opts.printWeights)
    flags.elideLargeResourceString(64);
  module.print(out->os(), flags);
  out->keep();
  return success();
}

/// How a package is written (its stage begun on `stages`).
cgc::PackageOptions packageOptions(const Options &opts, EmitKind emit,
                                   StageLog &stages) {
  stages.begin("writing the package " + opts.output);
  cgc::PackageOptions options;
  options.modelName = llvm::sys::path::stem(opts.input).str();
  options.compileLibrary = emit == EmitKind::Lib;
  options.onStage = [&stages](StringRef what) { stages.note(what); };
  return options;
}

/// Writes what `emit` asks for: IR, tuning candidates or a package.
LogicalResult emitOutput(Options &opts, ModuleOp module, EmitKind emit,
                         StageLog &stages) {
  if (emit == EmitKind::TuningCandidates) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out =
        openOutputFile(opts.output, &error);
    if (!out) {
      llvm::WithColor::error(llvm::errs(), "cgc") << error << "\n";
      return failure();
    }
    cgc::printTuningCandidates(module, out->os());
    out->keep();
    return success();
  }
  if (emit != EmitKind::Package && emit != EmitKind::Lib)
    return writeModule(opts, module);
  return cgc::emitPackage(module, opts.output,
                          packageOptions(opts, emit, stages));
}

/// A split program's package: each rank's program (its shards of the
/// weights) through the whole pipeline, then one package of rank 0's
/// graphs and every rank's weights (cgc::emitPackage checks that the ranks
/// compiled alike).
int compileRanks(Options &opts, MLIRContext &context, ModuleOp split,
                 EmitKind emit, StageLog &stages) {
  int64_t ranks = cgc::getRanks(split);
  SmallVector<OwningOpRef<ModuleOp>> programs;
  for (int64_t rank = 0; rank < ranks; ++rank) {
    stages.begin("compiling rank " + std::to_string(rank) + " of " +
                 std::to_string(ranks));
    programs.push_back(split.clone());
    PassManager pm(&context);
    stages.attach(pm);
    cgc::CgcMaterializeRankOptions materialize;
    materialize.rank = rank;
    pm.addPass(cgc::createCgcMaterializeRank(materialize));
    cgc::buildCgcPipeline(pm, cgc::PipelineStop::CGraph, pipelineOptions(opts));
    if (failed(pm.run(*programs.back())))
      return kExitModelError;
  }
  cgc::PackageOptions options = packageOptions(opts, emit, stages);
  for (size_t r = 1; r < programs.size(); ++r)
    options.otherRanks.push_back(*programs[r]);
  return failed(cgc::emitPackage(*programs.front(), opts.output, options))
             ? kExitModelError
             : kExitOk;
}

/// --data-parallel and --tensor-parallel: 2 or more ranks; outputs other
/// than IR and packages (`supported`) are refused, and `runner` says what
/// runs the IR.
std::optional<int> checkRanksUsage(const cl::opt<int64_t> &ranks,
                                   bool supported, StringRef runner) {
  if (!ranks.getNumOccurrences())
    return std::nullopt;
  std::string option = "--" + ranks.ArgStr.str();
  if (ranks < 2)
    return usageError(option + " needs 2 or more ranks");
  if (!supported)
    return usageError(option +
                      " writes IR (--emit=cgc), a package (--emit=package "
                      "or lib) or --explain; " + runner);
  return std::nullopt;
}

/// The command line's own mistakes, found before the model is read: they
/// exit with kExitUsage.
std::optional<int> checkUsage(const Options &opts, EmitKind emit) {
  if (opts.explain && opts.emit.getNumOccurrences())
    return usageError("--emit does not apply to --explain, which prints its "
                      "own report (choose its form with --format)");
  if (!opts.explain && opts.format.getNumOccurrences())
    return usageError("--format applies to --explain only");
  bool package = emit == EmitKind::Package || emit == EmitKind::Lib;
  if (!opts.train) {
    const cl::Option &loss = opts.loss, &lossOutput = opts.lossOutput,
                     &optimizer = opts.optimizer, &trainable = opts.trainable;
    const cl::Option &steps = opts.stepsPerLaunch,
                     &dataParallel = opts.dataParallel;
    for (const cl::Option *option :
         {&loss, &lossOutput, &optimizer, &trainable, &steps, &dataParallel})
      if (option->getNumOccurrences())
        return usageError("--" + option->ArgStr + " applies to --train only");
  }
  bool split = opts.explain || emit == EmitKind::Cgc || package;
  if (std::optional<int> usage =
          checkRanksUsage(opts.dataParallel, split,
                          "cgc-interp --train --data-parallel runs the ranks"))
    return usage;
  if (opts.gradientBucketMb.getNumOccurrences() &&
      !opts.dataParallel.getNumOccurrences())
    return usageError("--gradient-bucket-mb applies to --train "
                      "--data-parallel only");
  if (opts.gradientBucketMb < 0 || opts.gradientBucketMb > (1 << 20))
    return usageError("--gradient-bucket-mb needs 0 to 1048576 megabytes");
  if (opts.train && opts.tensorParallel.getNumOccurrences())
    return usageError("--tensor-parallel does not split a training step "
                      "(--train takes --data-parallel)");
  if (std::optional<int> usage = checkRanksUsage(
          opts.tensorParallel, split,
          "cgc-interp --tensor-parallel runs the split program"))
    return usage;
  if (!opts.explain && package && opts.output == "-")
    return usageError("--emit=package/lib needs an output folder: -o DIR");
  std::string error;
  if (!opts.explain && package && !cgc::checkPackageTarget(opts.output, error))
    return usageError(error);
  return std::nullopt;
}

/// `--dim N=1,2,4`: every bucket through buffer planning, merged into one
/// module (cgc::compileBuckets), then lowered and emitted together.
int compileBucketed(Options &opts, MLIRContext &context,
                    const cgc::ImportOptions &importOptions,
                    const cgc::BucketOptions &buckets, StageLog &stages) {
  EmitKind emit = emitKind(opts, EmitKind::Plan);
  if (opts.explain || emit == EmitKind::Cgc || emit == EmitKind::Islands ||
      emit == EmitKind::Kernels || emit == EmitKind::TuningCandidates)
    return usageError("shape buckets (--dim " + buckets.dim +
                      "=...) produce --emit=plan, cgraph, package or lib; "
                      "give one value to see the other stages or --explain");
  stages.begin("compiling " + std::to_string(buckets.values.size()) +
               " shape buckets of " + opts.input);
  OwningOpRef<ModuleOp> module =
      cgc::compileBuckets(opts.input, &context, importOptions, buckets,
                          pipelineOptions(opts));
  if (!module)
    return kExitModelError;
  if (emit != EmitKind::Plan) {
    stages.begin("lowering to CUDA graphs");
    PassManager pm(&context);
    stages.attach(pm);
    buildCgcLowering(pm, pipelineOptions(opts));
    if (failed(pm.run(*module)))
      return kExitModelError;
  }
  return failed(emitOutput(opts, *module, emit, stages)) ? kExitModelError
                                                         : kExitOk;
}

/// Every input must have a static shape for a package; one error per input
/// names its unbound dims and the option that binds them.
LogicalResult checkInputsBound(ModuleOp module) {
  bool ok = true;
  for (auto func : module.getOps<func::FuncOp>())
    ok &= succeeded(cgc::emitUnboundInputErrors(func));
  return success(ok);
}

/// --explain: the pipeline down to kernel configs, then the report in the
/// form asked for. Unbound input dims are warned about: what depends on
/// them stays eager.
int explain(Options &opts, MLIRContext &context, ModuleOp module,
            StageLog &stages) {
  for (auto func : module.getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (std::string unbound = cgc::describeUnboundInputDims(func, i);
          !unbound.empty())
        func.emitWarning(unbound + "; what depends on it stays eager and "
                                   "cannot be compiled to a package");
  stages.begin("running the passes");
  PassManager pm(&context);
  stages.attach(pm);
  // A split program is explained as rank 0 runs it (every rank runs the
  // same graphs, each with its own weights).
  if (cgc::getRanks(module) > 1) {
    cgc::CgcMaterializeRankOptions materialize;
    materialize.rank = 0;
    pm.addPass(cgc::createCgcMaterializeRank(materialize));
  }
  cgc::buildCgcPipeline(pm, cgc::PipelineStop::Configure,
                        pipelineOptions(opts));
  if (failed(pm.run(module)))
    return kExitModelError;
  stages.begin("writing the report");
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out =
      openOutputFile(opts.output, &error);
  if (!out) {
    llvm::WithColor::error(llvm::errs(), "cgc") << error << "\n";
    return kExitModelError;
  }
  ExplainFormat format = explainFormat(opts);
  if (format == ExplainFormat::Text) {
    cgc::renderExplainText(cgc::buildExplainOutline(module), out->os());
  } else {
    std::string model = llvm::sys::path::filename(opts.input).str();
    for (auto func : module.getOps<func::FuncOp>()) {
      FailureOr<cgc::ExplainGraph> graph = cgc::buildExplainGraph(func, model);
      if (failed(graph))
        return kExitModelError;
      if (format == ExplainFormat::Json)
        cgc::renderExplainJson(*graph, out->os());
      else if (format == ExplainFormat::Dot)
        cgc::renderExplainDot(*graph, out->os());
      else
        cgc::renderExplainHtml(*graph, out->os());
      break; // the model's one function
    }
  }
  out->keep();
  return kExitOk;
}

/// --train: the imported forward program becomes one training step
/// (--cgc-build-train-step) before any other pass.
LogicalResult buildTrainStep(const Options &opts, MLIRContext &context,
                             ModuleOp module, StageLog &stages) {
  stages.begin("building the training step");
  cgc::CgcBuildTrainStepOptions train;
  train.loss = opts.loss;
  train.lossOutput = opts.lossOutput;
  train.optimizer = opts.optimizer;
  train.trainable.assign(opts.trainable.begin(), opts.trainable.end());
  train.dataParallel = opts.dataParallel;
  train.bucketBytes = opts.gradientBucketMb << 20;
  PassManager pm(&context);
  stages.attach(pm);
  pm.addPass(cgc::createCgcBuildTrainStep(train));
  cgc::CgcLoopTrainStepsOptions loop;
  loop.steps = opts.stepsPerLaunch;
  pm.addPass(cgc::createCgcLoopTrainSteps(loop));
  return pm.run(module);
}

/// `cgc --list-gradients`: docs/generated/gradients.md.
void printGradientTable(MLIRContext &context, llvm::raw_ostream &os) {
  os << "# Ops with a gradient rule\n\n"
     << "Generated by `cgc --list-gradients` (`make docs`). `cgc --train` "
        "differentiates through these cgc ops (the ONNX ops that import to "
        "them: docs/ops.md); an op missing here is an error that names its "
        "ONNX node. The rules are in lib/Dialect/Cgc/IR/CgcGradients.cpp.\n\n"
     << "| cgc op |\n| --- |\n";
  for (const std::string &name : cgc::differentiableOps(&context))
    os << "| `" << name << "` |\n";
}

/// What every tool's --help ends with: the environment it reads and the
/// exit codes all cgc tools share.
constexpr const char *kHelpEpilogue = R"(
ENVIRONMENT:
  CXX              host C++ compiler for a package's libmodel.so (default c++)
  CGC_INCLUDE_DIR  the runtime headers libmodel.so is compiled against
                   (default: this build's include/)
  CGC_FAULT=nvrtc  test hook: make the NVRTC compile fail

EXIT CODES:
  0  success
  1  the model cannot be read or compiled (the message names the node)
  2  usage: an unknown option, a bad option value, a bad -o target
)";

} // namespace

int cgc::cgcMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options opts;
  cl::extrahelp epilogue(kHelpEpilogue);
  cl::HideUnrelatedOptions(opts.category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "cgc " << CGC_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING
       << ")\n";
  });
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "cgc: compile ONNX models to CUDA graphs\n",
                                   &llvm::errs()))
    return kExitUsage;
  if (opts.listOps) {
    cgc::printSupportedOpsMarkdown(llvm::outs());
    return kExitOk;
  }
  if (opts.listGradients) {
    DialectRegistry registry;
    cgc::registerAllDialects(registry);
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    printGradientTable(context, llvm::outs());
    return kExitOk;
  }
  if (opts.input.empty()) {
    llvm::WithColor::error(llvm::errs(), "cgc") << "no input model given\n";
    llvm::errs() << "usage: cgc [options] <model.onnx>   (cgc --help lists "
                    "the options, cgc --list-ops the supported ONNX ops)\n";
    return kExitUsage;
  }
  EmitKind emit = emitKind(opts, EmitKind::Cgc);
  if (std::optional<int> usage = checkUsage(opts, emit))
    return *usage;

  DialectRegistry registry;
  cgc::registerAllDialects(registry);
  MLIRContext context(registry);
  bool showRemarks = opts.remarks;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Remark || showRemarks)
      printDiagnostic(diag);
    return success();
  });

  cgc::ImportOptions importOptions;
  cgc::BucketOptions buckets;
  if (failed(parseBindings(opts, importOptions, buckets)))
    return kExitUsage;
  // Package compiles take seconds: a terminal sees their stages unasked.
  bool package = emit == EmitKind::Package || emit == EmitKind::Lib;
  StageLog stages(opts.verbose || (package && !opts.explain &&
                                   llvm::errs().is_displayed()),
                  opts.timings);
  if (!buckets.dim.empty() && opts.tensorParallel > 1)
    return usageError("--tensor-parallel takes one value per --dim (no "
                      "shape buckets)");
  if (!buckets.dim.empty())
    return compileBucketed(opts, context, importOptions, buckets, stages);
  stages.begin("importing " + opts.input);
  OwningOpRef<ModuleOp> module =
      cgc::importONNXModel(opts.input, &context, importOptions);
  if (!module)
    return kExitModelError;
  if (opts.requireStatic) {
    PassManager pm(&context);
    pm.addPass(cgc::createCgcCheckStaticShapes());
    if (failed(pm.run(*module)))
      return kExitModelError;
  }
  // Before the training step is built: a split model is refused whole.
  std::string splitError;
  FailureOr<int64_t> gatherBytes =
      cgc::gatherMinBytes(opts.tensorParallelGatherMb, splitError);
  if (failed(gatherBytes))
    return usageError(splitError);
  FailureOr<int64_t> splitRanks = cgc::ranksToSplit(
      *module,
      opts.tensorParallel.getNumOccurrences() ? (int64_t)opts.tensorParallel
                                              : 0,
      opts.train, splitError);
  if (failed(splitRanks))
    return usageError(splitError);
  if (opts.train && failed(buildTrainStep(opts, context, *module, stages)))
    return kExitModelError;
  bool splitOutput = opts.explain || emit == EmitKind::Cgc ||
                     emit == EmitKind::Package || emit == EmitKind::Lib;
  if (*splitRanks > 1 && !splitOutput &&
      !opts.tensorParallel.getNumOccurrences())
    return usageError("the model's multi-device annotations split it over " +
                      std::to_string(*splitRanks) +
                      " devices: cgc writes its IR (--emit=cgc), its "
                      "package (--emit=package or lib) or --explain");
  if (*splitRanks > 1) {
    stages.begin("splitting the products over the ranks");
    PassManager pm(&context);
    stages.attach(pm);
    cgc::CgcTensorParallelOptions split;
    split.ranks = *splitRanks;
    split.gatherMinBytes = *gatherBytes;
    pm.addPass(cgc::createCgcTensorParallel(split));
    if (failed(pm.run(*module)))
      return kExitModelError;
  }
  if (opts.explain)
    return explain(opts, context, *module, stages);
  PipelineStop stop = PipelineStop::CGraph;
  switch (emit) {
  case EmitKind::Cgc: stop = PipelineStop::Import; break;
  case EmitKind::Islands: stop = PipelineStop::Partition; break;
  case EmitKind::Kernels: stop = PipelineStop::Configure; break;
  case EmitKind::TuningCandidates: stop = PipelineStop::Configure; break;
  case EmitKind::Plan: stop = PipelineStop::Plan; break;
  default: break;
  }
  if (stop == PipelineStop::CGraph && failed(checkInputsBound(*module)))
    return kExitModelError;
  if (stop == PipelineStop::CGraph && cgc::getRanks(*module) > 1)
    return compileRanks(opts, context, *module, emit, stages);
  if (stop != PipelineStop::Import) {
    stages.begin("running the passes");
    PassManager pm(&context);
    stages.attach(pm);
    buildCgcPipeline(pm, stop, pipelineOptions(opts));
    if (failed(pm.run(*module)))
      return kExitModelError;
  }
  return failed(emitOutput(opts, *module, emit, stages)) ? kExitModelError
                                                          : kExitOk;
}
