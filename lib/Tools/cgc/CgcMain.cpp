//===- CgcMain.cpp - the cgc command-line compiler ------------------------===//
//
//   cgc MODEL.onnx --emit=cgc -o -      imported IR (also islands, kernels,
//                                       plan, cgraph: the IR at that stage)
//   cgc MODEL.onnx -o DIR               a package (--emit=lib, the default
//                                       with a folder) or its sources only
//                                       (--emit=package)
//   cgc MODEL.onnx --dim N=1            bind a symbolic dim
//   cgc MODEL.onnx --explain            islands, kernels, arena (also
//                                       --format=dot|html: a picture)
//   cgc --list-ops                      supported ONNX ops (docs/ops.md)
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc/CgcMain.h"

#include "cgc/Conversion/Passes.h"
#include "cgc/Dialect/Cgc/IR/CgcAttrs.h"
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
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

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
enum class ExplainFormat { Text, Dot, Html };

struct Options {
  cl::OptionCategory category{"cgc options"};
  cl::opt<std::string> input{cl::Positional, cl::desc("<model.onnx>"),
                             cl::cat(category)};
  cl::opt<std::string> output{"o", cl::desc("Output file ('-' for stdout)"),
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
      cl::desc("What matrix products and convolutions of f32 inputs compute "
               "in: fp32 (the default), tf32, fp16 or bf16 (tensor cores, "
               "f32 accumulation; softmax, norms, reductions and the "
               "model's inputs and outputs stay in their types)"),
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
               "(a serialized ONNX TensorProto)"),
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
                 clEnumValN(ExplainFormat::Dot, "dot",
                            "a Graphviz digraph (render with dot -Tsvg)"),
                 clEnumValN(ExplainFormat::Html, "html",
                            "one self-contained HTML page")),
      cl::init(ExplainFormat::Text), cl::cat(category)};
  cl::opt<bool> remarks{"remarks",
                        cl::desc("Print the passes' remarks on stderr"),
                        cl::init(false), cl::cat(category)};
  cl::opt<bool> listOps{"list-ops",
                        cl::desc("Print the supported ONNX ops as markdown"),
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
  if (error.empty() && opts.controlFlow != "graph" &&
      opts.controlFlow != "host")
    error = "--control-flow must be 'graph' or 'host', got '" +
            opts.controlFlow + "'";
  importOptions.hostControlFlow = opts.controlFlow == "host";
  importOptions.arch = opts.arch;
  importOptions.ioPrecision = opts.ioPrecision;
  importOptions.allowDeclaredTypeMismatch = opts.allowDeclaredTypeMismatch;
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

/// Without --emit, `-o DIR` (an existing folder, or a new path without an
/// extension) asks for a package; anything else gets IR.
bool writesFolder(StringRef output) {
  if (output == "-")
    return false;
  if (llvm::sys::fs::is_directory(output))
    return true;
  return !llvm::sys::fs::exists(output) &&
         !llvm::sys::path::has_extension(output);
}

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

/// Writes the package (or IR) of a bucketed compile.
LogicalResult emitOutput(Options &opts, ModuleOp module, EmitKind emit) {
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
  if (opts.output == "-") {
    llvm::WithColor::error(llvm::errs(), "cgc")
        << "--emit=package/lib needs an output folder: -o DIR\n";
    return failure();
  }
  cgc::PackageOptions packageOptions;
  packageOptions.modelName = llvm::sys::path::stem(opts.input).str();
  packageOptions.compileLibrary = emit == EmitKind::Lib;
  return cgc::emitPackage(module, opts.output, packageOptions);
}

/// `--dim N=1,2,4`: every bucket through buffer planning, merged into one
/// module (cgc::compileBuckets), then lowered and emitted together.
int compileBucketed(Options &opts, MLIRContext &context,
                    const cgc::ImportOptions &importOptions,
                    const cgc::BucketOptions &buckets) {
  EmitKind emit = opts.emit.getNumOccurrences() ? opts.emit.getValue()
                 : writesFolder(opts.output)    ? EmitKind::Lib
                                                : EmitKind::Plan;
  if (opts.explain || emit == EmitKind::Cgc || emit == EmitKind::Islands ||
      emit == EmitKind::Kernels || emit == EmitKind::TuningCandidates) {
    llvm::WithColor::error(llvm::errs(), "cgc")
        << "shape buckets (--dim " << buckets.dim
        << "=...) produce --emit=plan, cgraph, package or lib; give one "
           "value to see the other stages or --explain\n";
    return 1;
  }
  OwningOpRef<ModuleOp> module =
      cgc::compileBuckets(opts.input, &context, importOptions, buckets,
                          pipelineOptions(opts));
  if (!module)
    return 1;
  if (emit != EmitKind::Plan) {
    PassManager pm(&context);
    buildCgcLowering(pm, pipelineOptions(opts));
    if (failed(pm.run(*module)))
      return 1;
  }
  return failed(emitOutput(opts, *module, emit)) ? 1 : 0;
}

} // namespace

int cgc::cgcMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options opts;
  cl::HideUnrelatedOptions(opts.category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "cgc " << CGC_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING
       << ")\n";
  });
  cl::ParseCommandLineOptions(argc, argv,
                              "cgc: compile ONNX models to CUDA graphs\n");
  if (opts.listOps) {
    cgc::printSupportedOpsMarkdown(llvm::outs());
    return 0;
  }
  if (opts.input.empty()) {
    llvm::WithColor::error(llvm::errs(), "cgc") << "no input model given\n";
    llvm::errs() << "usage: cgc [options] <model.onnx>   (cgc --help lists "
                    "the options, cgc --list-ops the supported ONNX ops)\n";
    return 1;
  }

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
    return 1;
  if (!buckets.dim.empty())
    return compileBucketed(opts, context, importOptions, buckets);
  OwningOpRef<ModuleOp> module =
      cgc::importONNXModel(opts.input, &context, importOptions);
  if (!module)
    return 1;
  if (opts.requireStatic) {
    PassManager pm(&context);
    pm.addPass(cgc::createCgcCheckStaticShapes());
    if (failed(pm.run(*module)))
      return 1;
  }
  if (opts.explain) {
    PassManager pm(&context);
    buildCgcPipeline(pm, PipelineStop::Configure, pipelineOptions(opts));
    if (failed(pm.run(*module)))
      return 1;
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out =
        openOutputFile(opts.output, &error);
    if (!out) {
      llvm::WithColor::error(llvm::errs(), "cgc") << error << "\n";
      return 1;
    }
    if (opts.format == ExplainFormat::Text) {
      cgc::renderExplainText(cgc::buildExplainOutline(*module), out->os());
    } else {
      std::string model = llvm::sys::path::filename(opts.input).str();
      for (auto func : module->getOps<func::FuncOp>()) {
        FailureOr<cgc::ExplainGraph> graph =
            cgc::buildExplainGraph(func, model);
        if (failed(graph))
          return 1;
        if (opts.format == ExplainFormat::Dot)
          cgc::renderExplainDot(*graph, out->os());
        else
          cgc::renderExplainHtml(*graph, out->os());
        break; // the model's one function
      }
    }
    out->keep();
    return 0;
  }
  if (opts.format.getNumOccurrences()) {
    llvm::WithColor::error(llvm::errs(), "cgc")
        << "--format applies to --explain only\n";
    return 1;
  }
  EmitKind emit = opts.emit.getNumOccurrences() ? opts.emit.getValue()
                 : writesFolder(opts.output)    ? EmitKind::Lib
                                                : EmitKind::Cgc;
  PipelineStop stop = PipelineStop::CGraph;
  switch (emit) {
  case EmitKind::Cgc: stop = PipelineStop::Import; break;
  case EmitKind::Islands: stop = PipelineStop::Partition; break;
  case EmitKind::Kernels: stop = PipelineStop::Configure; break;
  case EmitKind::TuningCandidates: stop = PipelineStop::Configure; break;
  case EmitKind::Plan: stop = PipelineStop::Plan; break;
  default: break;
  }
  if (stop != PipelineStop::Import) {
    PassManager pm(&context);
    buildCgcPipeline(pm, stop, pipelineOptions(opts));
    if (failed(pm.run(*module)))
      return 1;
  }
  return failed(emitOutput(opts, *module, emit)) ? 1 : 0;
}
