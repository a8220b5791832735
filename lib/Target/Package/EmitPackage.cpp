//===- EmitPackage.cpp - model.cpp, kernels, weights, metadata ------------===//

#include "cgc/Target/Package.h"
#include "cgrt/package.h"

#include "EagerRegions.h"
#include "ScheduleJson.h"

#include "cgc/Codegen/KernelGen.h"
#include "cgc/Codegen/NVRTC.h"
#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcAttrs.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cgc;

namespace {

/// Where libmodel.so's compile finds cuda.h: $CGC_CUDA_INCLUDE_DIR, the
/// toolkit cgc was built with, or, for a cgc installed from a wheel
/// (site-packages/cgc/bin/cgc), the headers of NVIDIA's CUDA wheels beside
/// it (PyTorch's CUDA builds install them). The first that has cuda.h; the
/// toolkit's otherwise, so that a failing compile names that path.
std::string cudaIncludeDir() {
  if (const char *env = getenv("CGC_CUDA_INCLUDE_DIR"); env && *env)
    return env;
  SmallVector<std::string> candidates = {CGC_CUDA_INCLUDE_DIR};
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  if (!exe.empty()) {
    SmallString<256> sitePackages = llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    for (const char *wheel : {"nvidia/cu13/include",
                              "nvidia/cuda_runtime/include"}) {
      SmallString<256> dir = sitePackages;
      llvm::sys::path::append(dir, wheel);
      candidates.push_back(std::string(dir));
    }
  }
  for (const std::string &dir : candidates) {
    SmallString<256> header(dir);
    llvm::sys::path::append(header, "cuda.h");
    if (llvm::sys::fs::exists(header))
      return dir;
  }
  return CGC_CUDA_INCLUDE_DIR;
}

/// ONNX data type numbers, which cgrt_dtype shares.
int dtypeCode(Type t) {
  if (t.isF32()) return 1;
  if (t.isF64()) return 11;
  if (t.isF16()) return 10;
  if (t.isBF16()) return 16;
  if (t.isInteger(1)) return 9;
  if (isa<Float8E4M3FNType>(t)) return 17;
  if (isa<Float8E4M3FNUZType>(t)) return 18;
  if (isa<Float8E5M2Type>(t)) return 19;
  if (isa<Float8E5M2FNUZType>(t)) return 20;
  if (isa<Float4E2M1FNType>(t)) return 23;
  if (isa<Float8E8M0FNUType>(t)) return 24;
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 2: return u ? 25 : 26;
    case 4: return u ? 21 : 22;
    case 8: return u ? 2 : 3;
    case 16: return u ? 4 : 5;
    case 32: return u ? 12 : 6;
    case 64: return u ? 13 : 7;
    }
  }
  return 0;
}

const char *dtypeEnum(int code) {
  switch (code) {
  case 1: return "CGRT_FLOAT32";
  case 2: return "CGRT_UINT8";
  case 3: return "CGRT_INT8";
  case 4: return "CGRT_UINT16";
  case 5: return "CGRT_INT16";
  case 6: return "CGRT_INT32";
  case 7: return "CGRT_INT64";
  case 9: return "CGRT_BOOL";
  case 10: return "CGRT_FLOAT16";
  case 11: return "CGRT_FLOAT64";
  case 12: return "CGRT_UINT32";
  case 13: return "CGRT_UINT64";
  case 16: return "CGRT_BFLOAT16";
  case 17: return "CGRT_FLOAT8E4M3FN";
  case 18: return "CGRT_FLOAT8E4M3FNUZ";
  case 19: return "CGRT_FLOAT8E5M2";
  case 20: return "CGRT_FLOAT8E5M2FNUZ";
  case 21: return "CGRT_UINT4";
  case 22: return "CGRT_INT4";
  case 23: return "CGRT_FLOAT4E2M1";
  case 24: return "CGRT_FLOAT8E8M0";
  case 25: return "CGRT_UINT2";
  case 26: return "CGRT_INT2";
  }
  return "0";
}

const char *cScalarType(int code) {
  switch (code) {
  case 1: return "float";
  case 11: return "double";
  case 3: case 22: case 26: return "int8_t";
  case 2: case 9: case 17: case 18: case 19: case 20: case 21: case 23:
  case 24: case 25: return "uint8_t";
  case 5: return "int16_t";
  case 4: case 10: case 16: return "uint16_t";
  case 6: return "int32_t";
  case 12: return "uint32_t";
  case 7: return "int64_t";
  case 13: return "uint64_t";
  }
  return "void";
}

std::string cIdentifier(StringRef name) {
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) ? c : '_';
  if (id.empty() || llvm::isDigit(id[0]))
    id = "_" + id;
  return id;
}

std::string cString(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

uint64_t fnv1a(StringRef bytes) {
  uint64_t h = 14695981039346656037ull; // FNV-1a 64 offset basis
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

struct IO {
  std::string name;
  int dtype;
  SmallVector<int64_t> dims;
  int64_t offset, bytes;
};

/// A training step's state: its place in the weights region, where the
/// step writes its next value, and its initial value (cgc.state).
struct State {
  IO io;
  int64_t updateOffset = -1;
  ElementsAttr initial;
};

/// One graph set: the whole model, or one value of the bucketed dim.
struct Bucket {
  mutable cgraph::ScheduleOp schedule; ///< its steps
  mutable func::FuncOp func;           ///< its inputs and outputs
  int64_t value = 0;
  SmallVector<IO> inputs, outputs;
  SmallVector<int32_t> inputAxes, outputAxes; ///< cgc.bucket_axis, or -1
  SmallVector<int64_t> labelClasses; ///< per input; 0: no label
  SmallVector<State> states;         ///< a training step's
  int64_t arenaBytes = 0;
};

class PackageWriter {
public:
  PackageWriter(ModuleOp module, StringRef dir, const PackageOptions &options)
      : module(module), symbols(module), dir(dir.str()), options(options),
        arch(lookupTargetOrDefault(module).getArch().str()) {}

  /// Makes this the writer of rank `r` of a split package: rank 0's gets
  /// every rank's weights checksum (its own filled in when written), and
  /// each keeps the sources it generates in `keep`, for the comparison of
  /// the ranks.
  void setRank(int64_t r, SmallVector<uint64_t> checksums,
               llvm::StringMap<std::string> *keep) {
    rank = r;
    rankChecksums = std::move(checksums);
    sources = keep;
  }

  LogicalResult run() {
    if (failed(prepare()))
      return failure();
    if (failed(writeWeights()) ||
        failed(writeKernels()) || failed(writeModelSource()) ||
        failed(writeHeader()) || failed(writeMetadata()))
      return failure();
    if (options.compileLibrary && failed(compileLibrary()))
      return failure();
    return success();
  }

  /// Rank r > 0 of a split package: its weights file, and the sources its
  /// program became (kept for the comparison with rank 0's, not written).
  LogicalResult runOtherRank() {
    if (failed(prepare()) || failed(writeWeights()))
      return failure();
    (*sources)["kernels.cu"] = kernelSource();
    return writeModelSource();
  }

  uint64_t getWeightsChecksum() const { return weightsChecksum; }

private:
  /// The graph sets to write, and the folder they go to.
  LogicalResult prepare() {
    if (failed(collectBuckets()))
      return failure();
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return module.emitError("cannot create '") << dir << "': "
                                                 << ec.message();
    return success();
  }

  std::string path(StringRef name) {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  LogicalResult writeFile(StringRef name, StringRef contents) {
    bool weights = name.starts_with("weights");
    if (sources && !weights)
      (*sources)[name] = contents.str();
    if (rank > 0 && !weights)
      return success();
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    if (ec)
      return module.emitError("cannot write '") << path(name)
                                                << "': " << ec.message();
    os << contents;
    return success();
  }

  /// A graph set per `cgraph.schedule`: a plain module has one, without a
  /// bucket; a bucketed one (cgc::compileBuckets) one per bucket.
  LogicalResult collectBuckets() {
    bool bucketed = false;
    for (auto schedule : module.getOps<cgraph::ScheduleOp>()) {
      auto f = symbols.lookup<func::FuncOp>(schedule.getFunction());
      if (!f)
        return schedule.emitError("the schedule's function is not a func.func");
      IntegerAttr bucket = schedule.getBucketAttr();
      buckets.push_back({schedule, f, bucket ? bucket.getInt() : 0});
      bucketed |= static_cast<bool>(bucket);
    }
    if (bucketed) {
      llvm::sort(buckets, [](const Bucket &a, const Bucket &b) {
        return a.value < b.value;
      });
      if (auto dim = getBucketDim(module))
        bucketDim = dim.str();
    }
    if (buckets.empty() || (bucketed && bucketDim.empty()) ||
        (!bucketed && buckets.size() != 1) ||
        llvm::any_of(buckets, [&](const Bucket &b) {
          return static_cast<bool>(b.schedule.getBucketAttr()) != bucketed;
        }))
      return module.emitError("package emission needs one cgraph.schedule "
                              "or one per shape bucket (run "
                              "--cgc-lower-to-cgraph first)");
    for (Bucket &bucket : buckets)
      if (failed(collectIO(bucket)))
        return failure();
    for (const Bucket &bucket : buckets) {
      if (bucket.inputs.size() != largest().inputs.size() ||
          bucket.outputs.size() != largest().outputs.size())
        return bucket.func.emitError("shape buckets differ in their inputs "
                                     "or outputs");
      arenaBytes = std::max(arenaBytes, bucket.arenaBytes);
    }
    func = largest().func;
    inputs = largest().inputs;
    outputs = largest().outputs;
    return success();
  }

  /// The bucket whose tables stand for the package (its only one, or the
  /// largest).
  const Bucket &largest() const { return buckets.back(); }

  LogicalResult collectIO(Bucket &bucket) {
    func::FuncOp func = bucket.func;
    auto getIO = [&](Value value, StringAttr name,
                     std::optional<int64_t> offset, StringRef fallback,
                     IO &io) -> LogicalResult {
      auto tensor = cast<RankedTensorType>(value.getType());
      if (!offset)
        return func.emitError("I/O without a planned slot (run "
                              "--cgc-plan-buffers first)");
      io.name = name ? name.str() : fallback.str();
      io.dtype = dtypeCode(tensor.getElementType());
      for (int64_t d : tensor.getShape())
        io.dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
      io.offset = *offset;
      io.bytes = capacityBytes(value);
      // --cgc-lower-to-cgraph has checked that every capacity is bounded.
      if (io.offset < 0 || io.bytes < 0)
        return func.emitError("I/O '")
               << io.name << "' has no bounded buffer (run "
               << "--cgc-lower-to-cgraph first)";
      if (io.dims.size() > 8)
        return func.emitError("I/O rank above 8 is not supported");
      return success();
    };
    auto axisOf = [](std::optional<int64_t> axis) -> int32_t {
      return static_cast<int32_t>(axis.value_or(-1));
    };
    // A training step's state inputs and their updates are no I/O of a
    // run: they stay in the arena (the state table).
    llvm::DenseMap<unsigned, size_t> stateOfInput;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      IO io;
      if (failed(getIO(func.getArgument(i), getInputName(func, i),
                       getInputArenaOffset(func, i),
                       "input_" + std::to_string(i), io)))
        return failure();
      if (ElementsAttr initial = getInputState(func, i)) {
        stateOfInput[i] = bucket.states.size();
        bucket.states.push_back({io, io.offset, initial});
        continue;
      }
      bucket.inputs.push_back(io);
      bucket.inputAxes.push_back(axisOf(getInputBucketAxis(func, i)));
      bucket.labelClasses.push_back(getInputLabelClasses(func, i).value_or(0));
    }
    Operation *ret = func.getBody().front().getTerminator();
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      IO io;
      if (failed(getIO(ret->getOperand(i), getOutputName(func, i),
                       getOutputArenaOffset(func, i),
                       "output_" + std::to_string(i), io)))
        return failure();
      if (std::optional<unsigned> state = stateInputUpdatedBy(func, i)) {
        bucket.states[stateOfInput.at(*state)].updateOffset = io.offset;
        continue;
      }
      // Eager regions report data-dependent shapes by result number.
      if (bucket.outputs.size() != i)
        return func.emitError("output '")
               << io.name << "' follows a state update: a training step "
               << "returns its updates last";
      bucket.outputs.push_back(io);
      bucket.outputAxes.push_back(axisOf(getOutputBucketAxis(func, i)));
    }
    if (!bucket.states.empty() && bucket.schedule.getBucketAttr())
      return func.emitError("a training step cannot have shape buckets");
    bucket.arenaBytes = *getArenaBytes(func);
    // Buckets share one weights region (cgc::compileBuckets).
    weightsBytes = *getWeightsBytes(func);
    return success();
  }

  /// weights.bin is the weights region of the arena, byte for byte.
  LogicalResult writeWeights() {
    std::string bytes(weightsBytes, '\0');
    SmallVector<ConstantOp> constants;
    for (const Bucket &bucket : buckets)
      bucket.func.walk([&](ConstantOp c) { constants.push_back(c); });
    for (ConstantOp constant : constants) {
      std::optional<int64_t> planned = getWeightOffset(constant);
      if (!planned)
        return constant.emitError("constant without a weight offset");
      int64_t offset = *planned;
      std::string data;
      if (failed(cgc::constantBytes(constant, data)))
        return failure();
      if (offset + (int64_t)data.size() > weightsBytes)
        return constant.emitError("weight does not fit the weights region");
      bytes.replace(offset, data.size(), data);
    }
    // A training step's state starts from its initial value.
    for (const State &state : largest().states) {
      std::string data;
      if (failed(cgc::elementsBytes(state.initial, func, data)))
        return failure();
      if (state.io.offset + (int64_t)data.size() > weightsBytes ||
          (int64_t)data.size() != state.io.bytes)
        return func.emitError("state '")
               << state.io.name << "' does not fit its place in the weights "
               << "region";
      bytes.replace(state.io.offset, data.size(), data);
    }
    weightsChecksum = fnv1a(bytes);
    if (rank == 0 && !rankChecksums.empty())
      rankChecksums[0] = weightsChecksum;
    return writeFile(weightsFile(rank), bytes);
  }

  /// The weights file of `rank` (-1: a one-GPU package's).
  static std::string weightsFile(int64_t rank) {
    return rank < 0 ? "weights.bin"
                    : "weights.rank" + std::to_string(rank) + ".bin";
  }

  /// Every kernel's source after the prelude; numbers the kernels.
  std::string kernelSource() {
    std::string source = cudaPrelude();
    kernelIndex.clear();
    kernelNames.clear();
    for (auto kernel : module.getOps<cgraph::KernelOp>()) {
      kernelIndex[kernel] = kernelNames.size();
      kernelNames.push_back(kernel.getSymName().str());
      source += "\n" + kernel.getSource().str();
    }
    return source;
  }

  LogicalResult writeKernels() {
    if (options.onStage)
      options.onStage("compiling " +
                      std::to_string(llvm::range_size(
                          module.getOps<cgraph::KernelOp>())) +
                      " kernels with NVRTC");
    std::string source = kernelSource();
    if (failed(writeFile("kernels.cu", source)))
      return failure();
    CompiledModule compiled;
    std::string error;
    if (!compileWithNVRTC(source, "kernels.cu", arch, compiled, error))
      return module.emitError(error);
    if (failed(writeFile("kernels.cubin", compiled.cubin)) ||
        failed(writeFile("kernels.ptx", compiled.ptx)))
      return failure();
    return success();
  }

  /// One builder per graph: every node added explicitly, in order, with its
  /// launch shape, arena pointers and only the necessary dependencies;
  /// conditional nodes get their condition handle and their bodies built
  /// into the child graphs the driver creates with them. The nodes are
  /// added by part functions of at most kNodesPerPart top-level nodes
  /// each, sharing the builder's node and handle arrays: the host
  /// compiler's time grows faster than linearly with a function's length
  /// (ResNet-18's training step, 821 nodes in one function: 173 s at -O2).
  static constexpr size_t kNodesPerPart = 64;

  std::string graphBuilder(cgraph::GraphOp graph) {
    std::string s;
    llvm::raw_string_ostream os(s);
    std::string fn = "build_" + cIdentifier(graph.getSymName());
    size_t numNodes = 0, numHandles = 0;
    graph.walk([&](Operation *op) {
      numNodes += op->getNumResults() > 0;
      numHandles += isa<cgraph::ConditionalNodeOp>(op);
    });
    NodeNumbering numbering;
    Block &body = graph.getBody().front();
    SmallVector<std::string> partNames;
    SmallVector<Operation *> all =
        llvm::to_vector(llvm::make_pointer_range(body.getOperations()));
    for (size_t first = 0; first < all.size(); first += kNodesPerPart) {
      partNames.push_back(fn + "_part" + std::to_string(partNames.size()));
      os << "static const char *" << partNames.back()
         << "(const cgrt_build_env *env, CUgraph graph, CUresult "
            "*result,\n    CUgraphNode *nodes, "
            "[[maybe_unused]] CUgraphConditionalHandle *handles) {\n";
      for (size_t i = first; i < std::min(all.size(), first + kNodesPerPart);
           ++i)
        emitNode(*all[i], "graph", graph.getSymName(), numbering, "  ", os);
      os << "  return nullptr;\n}\n\n";
    }
    os << "const char *" << fn
       << "(const cgrt_build_env *env, CUgraph graph, CUresult *result) {\n"
       << "  CUgraphNode nodes[" << std::max<size_t>(numNodes, 1) << "];\n"
       << "  CUgraphConditionalHandle handles["
       << std::max<size_t>(numHandles, 1) << "];\n";
    if (numHandles)
      os << "  if (!env->api->cuGraphConditionalHandleCreate ||\n"
         << "      !env->api->cuGraphAddNode) {\n"
         << "    *result = CUDA_ERROR_NOT_SUPPORTED;\n"
         << "    return "
         << cString(graph.getSymName().str() +
                    ": its If/Loop conditional nodes need a CUDA 12.3 or "
                    "newer driver")
         << ";\n  }\n";
    emitHandles(body, "graph", graph.getSymName(), "  ", os);
    for (const std::string &part : partNames)
      os << "  if (const char *failure = " << part
         << "(env, graph, result, nodes, handles))\n    return failure;\n";
    os << "  return nullptr;\n}\n\n";
    return s;
  }

  /// Node variables: every node of a builder has a slot in `nodes`.
  struct NodeNumbering {
    llvm::DenseMap<Value, size_t> index;
    size_t next = 0;
  };

  /// Adds the nodes of `block` to the CUgraph named `graphVar`.
  void emitNodes(Block &block, StringRef graphVar, StringRef graphName,
                 NodeNumbering &numbering, StringRef indent,
                 llvm::raw_ostream &os) {
    emitHandles(block, graphVar, graphName, indent, os);
    for (Operation &op : block)
      emitNode(op, graphVar, graphName, numbering, indent, os);
  }

  /// A conditional node's handle belongs to the graph that holds the node
  /// and exists before the kernel that sets it.
  static void emitHandles(Block &block, StringRef graphVar,
                          StringRef graphName, StringRef indent,
                          llvm::raw_ostream &os) {
    for (auto cond : block.getOps<cgraph::ConditionalNodeOp>())
      os << indent << "CGC_CHECK(env->api->cuGraphConditionalHandleCreate("
         << "&handles[" << cond.getHandle() << "], " << graphVar
         << ", env->context, 0, 0),\n"
         << indent << "          "
         << cString(graphName.str() + ": condition handle " +
                    std::to_string(cond.getHandle()))
         << ");\n";
  }

  /// Adds one node (a conditional node with its bodies).
  void emitNode(Operation &op, StringRef graphVar, StringRef graphName,
                NodeNumbering &numbering, StringRef indent,
                llvm::raw_ostream &os) {
    size_t n = numbering.next++;
    numbering.index[op.getResult(0)] = n;
    std::string what = graphName.str() + ": node " + std::to_string(n) +
                       " (" + nodeLabel(op) + ")";
    os << indent << "{ // " << nodeLabel(op) << "\n";
    std::string inner = (indent + "  ").str();
    std::string deps = emitDeps(op, numbering, inner, os);
    if (auto kernel = dyn_cast<cgraph::KernelNodeOp>(op))
      emitKernelNode(kernel, n, graphVar, deps, what, inner, os);
    else if (auto copy = dyn_cast<cgraph::MemcpyNodeOp>(op))
      emitMemcpyNode(copy, n, graphVar, deps, what, inner, os);
    else if (auto cond = dyn_cast<cgraph::ConditionalNodeOp>(op))
      emitConditionalNode(cond, n, graphVar, deps, what, graphName, numbering,
                          inner, os);
    else if (auto matmul = dyn_cast<cgraph::CublasLtMatmulNodeOp>(op))
      emitLibraryMatmulNode(matmul, n, graphVar, deps, what, inner, os);
    else if (auto conv = dyn_cast<cgraph::CudnnConvNodeOp>(op))
      emitLibraryConvNode(conv, n, graphVar, deps, what, inner, os);
    else if (auto reduce = dyn_cast<cgraph::NcclAllReduceNodeOp>(op))
      emitCollectiveNode(reduce, "CGRT_ALL_REDUCE_SUM", n, graphVar, deps,
                         what, inner, os);
    else if (auto gather = dyn_cast<cgraph::NcclAllGatherNodeOp>(op))
      emitCollectiveNode(gather, "CGRT_ALL_GATHER", n, graphVar, deps, what,
                         inner, os);
    else
      llvm::report_fatal_error("the package printer has no form for " +
                               op.getName().getStringRef());
    os << indent << "}\n";
  }

  static std::string nodeLabel(Operation &op) {
    if (auto kernel = dyn_cast<cgraph::KernelNodeOp>(op))
      return kernel.getLabel().value_or(kernel.getKernel()).str();
    if (auto cond = dyn_cast<cgraph::ConditionalNodeOp>(op))
      return cgraph::stringifyConditionKind(cond.getKind()).str() + " " +
             std::to_string(cond.getHandle());
    if (auto matmul = dyn_cast<cgraph::CublasLtMatmulNodeOp>(op))
      return matmul.getLabel().str();
    if (auto conv = dyn_cast<cgraph::CudnnConvNodeOp>(op))
      return conv.getLabel().str();
    if (auto reduce = dyn_cast<cgraph::NcclAllReduceNodeOp>(op))
      return reduce.getLabel().str();
    if (auto gather = dyn_cast<cgraph::NcclAllGatherNodeOp>(op))
      return gather.getLabel().str();
    return "copy";
  }

  /// Declares `deps` and returns "deps, N" (or "nullptr, 0").
  static std::string emitDeps(Operation &op, const NodeNumbering &numbering,
                              StringRef indent, llvm::raw_ostream &os) {
    SmallVector<std::string> deps;
    for (Value d : op.getOperands())
      deps.push_back("nodes[" + std::to_string(numbering.index.lookup(d)) +
                     "]");
    if (deps.empty())
      return "nullptr, 0";
    os << indent << "CUgraphNode deps[] = {" << llvm::join(deps, ", ")
       << "};\n";
    return "deps, " + std::to_string(deps.size());
  }

  /// Adds a kernel node whose edges from the kernels it depends on are
  /// programmatic (programmatic port: it is launched once every block of
  /// those has triggered at its end or returned, and waits for them to
  /// complete in its first instruction), where
  /// the driver has cuGraphAddNode (12.3); ordinary edges with older ones
  /// (and for a node of more than 16 dependencies, which cgc never makes).
  static const char *kernelNodeHelper() {
    return "[[maybe_unused]] CUresult cgc_add_kernel_node(\n"
           "    const cgrt_build_env *env, CUgraphNode *node, CUgraph graph,\n"
           "    const CUgraphNode *deps, size_t n, const unsigned char "
           "*programmatic,\n"
           "    const CUDA_KERNEL_NODE_PARAMS *p) {\n"
           "  if (!env->api->cuGraphAddNode || n > 16)\n"
           "    return env->api->cuGraphAddKernelNode(node, graph, deps, n, p);\n"
           "  CUgraphEdgeData edges[16];\n"
           "  memset(edges, 0, sizeof edges);\n"
           "  for (size_t i = 0; i < n; ++i)\n"
           "    if (programmatic[i]) {\n"
           "      edges[i].from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;\n"
           "      edges[i].type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;\n"
           "    }\n"
           "  CUgraphNodeParams kp;\n"
           "  memset(&kp, 0, sizeof kp);\n"
           "  kp.type = CU_GRAPH_NODE_TYPE_KERNEL;\n"
           "  kp.kernel.func = p->func;\n"
           "  kp.kernel.gridDimX = p->gridDimX;\n"
           "  kp.kernel.gridDimY = p->gridDimY;\n"
           "  kp.kernel.gridDimZ = p->gridDimZ;\n"
           "  kp.kernel.blockDimX = p->blockDimX;\n"
           "  kp.kernel.blockDimY = p->blockDimY;\n"
           "  kp.kernel.blockDimZ = p->blockDimZ;\n"
           "  kp.kernel.sharedMemBytes = p->sharedMemBytes;\n"
           "  kp.kernel.kernelParams = p->kernelParams;\n"
           "  return env->api->cuGraphAddNode(node, graph, deps, edges, n, &kp);\n"
           "}\n\n";
  }

  void emitKernelNode(cgraph::KernelNodeOp node, size_t n, StringRef graphVar,
                      StringRef deps, StringRef what, StringRef indent,
                      llvm::raw_ostream &os) {
    SmallVector<std::string> args, refs;
    for (auto [a, offset] : llvm::enumerate(node.getArgs())) {
      args.push_back("a" + std::to_string(a) + " = env->arena + " +
                     std::to_string(offset) + "ull");
      refs.push_back("&a" + std::to_string(a));
    }
    std::optional<int64_t> handle = node.getConditionHandle();
    if (handle)
      refs.push_back("&handles[" + std::to_string(*handle) + "]");
    if (!args.empty())
      os << indent << "CUdeviceptr " << llvm::join(args, ", ") << ";\n";
    os << indent << "void *params[] = {"
       << (refs.empty() ? std::string("nullptr") : llvm::join(refs, ", "))
       << "};\n"
       << indent << "CUDA_KERNEL_NODE_PARAMS p;\n"
       << indent << "memset(&p, 0, sizeof p);\n"
       << indent << "p.func = env->kernels["
       << indexOfKernel(node.getKernelAttr()) << "];\n"
       << indent << "p.gridDimX = " << node.getGrid()[0] << "; p.gridDimY = "
       << node.getGrid()[1] << "; p.gridDimZ = " << node.getGrid()[2] << ";\n"
       << indent << "p.blockDimX = " << node.getBlock()[0]
       << "; p.blockDimY = " << node.getBlock()[1]
       << "; p.blockDimZ = " << node.getBlock()[2] << ";\n"
       << indent << "p.sharedMemBytes = " << node.getSharedBytes() << ";\n"
       << indent << "p.kernelParams = params;\n";
    std::optional<ArrayRef<bool>> programmatic = node.getProgrammatic();
    if (!programmatic) {
      os << indent << "CGC_CHECK(env->api->cuGraphAddKernelNode(&nodes[" << n
         << "], " << graphVar << ", " << deps << ", &p),\n"
         << indent << "          " << cString(what) << ");\n";
    } else {
      SmallVector<std::string> flags;
      for (bool edge : *programmatic)
        flags.push_back(edge ? "1" : "0");
      os << indent << "static const unsigned char programmatic[] = {"
         << llvm::join(flags, ", ") << "};\n"
         << indent << "CGC_CHECK(cgc_add_kernel_node(env, &nodes[" << n
         << "], " << graphVar << ", " << deps << ", programmatic, &p),\n"
         << indent << "          " << cString(what) << ");\n";
    }
    // Only nodes whose parameters all are arena pointers may be rebound.
    if (!handle)
      os << indent << "if (env->kernel_node_added)\n"
         << indent << "  env->kernel_node_added(env->runtime, nodes[" << n
         << "], &p, " << node.getArgs().size() << ");\n";
  }

  /// The runtime adds a cuBLASLt call as a child graph node (it owns the
  /// library, as it owns the driver).
  static std::string matmulCompute(std::optional<Type> operand) {
    if (!operand)
      return "CGRT_MATMUL_F32";
    if (isa<FloatTF32Type>(*operand))
      return "CGRT_MATMUL_TF32";
    return operand->isBF16() ? "CGRT_MATMUL_BF16" : "CGRT_MATMUL_F16";
  }

  void emitLibraryMatmulNode(cgraph::CublasLtMatmulNodeOp node, size_t n,
                             StringRef graphVar, StringRef deps,
                             StringRef what, StringRef indent,
                             llvm::raw_ostream &os) {
    auto offset = [](std::optional<int64_t> v) {
      return v ? std::to_string(*v) + "ull" : std::string("CGRT_NO_OFFSET");
    };
    auto dtype = [](Type t) { return dtypeEnum(dtypeCode(t)); };
    os << indent << "cgrt_matmul_desc m;\n"
       << indent << "memset(&m, 0, sizeof m);\n"
       << indent << "m.label = " << cString(what.str()) << ";\n"
       << indent << "m.kernel = " << cString(node.getLabel().str()) << ";\n"
       << indent << "m.a_type = " << dtype(node.getAType())
       << "; m.b_type = " << dtype(node.getBType())
       << "; m.d_type = " << dtype(node.getDType()) << ";\n"
       << indent << "m.compute = " << matmulCompute(node.getOperand())
       << ";\n"
       << indent << "m.trans_a = " << node.getTransA()
       << "; m.trans_b = " << node.getTransB() << ";\n"
       << indent << "m.m = " << node.getM() << "; m.n = " << node.getN()
       << "; m.k = " << node.getK() << "; m.batch = " << node.getBatch()
       << ";\n"
       << indent << "m.stride_a = " << node.getStrideA()
       << "; m.stride_b = " << node.getStrideB()
       << "; m.stride_d = " << node.getStrideD() << ";\n"
       << indent << "m.a = " << offset(node.getA()) << "; m.b = "
       << offset(node.getB()) << "; m.c = " << offset(node.getC())
       << "; m.d = " << offset(node.getD())
       << "; m.bias = " << offset(node.getBias()) << ";\n"
       << indent << "m.alpha = " << floatLiteral(node.getAlpha())
       << "; m.beta = " << floatLiteral(node.getBeta()) << ";\n"
       << indent << "{\n"
       << indent << "  const char *error = env->add_matmul_node(env->runtime, "
       << "&nodes[" << n << "], " << graphVar << ", " << deps
       << ", &m, result);\n"
       << indent << "  if (error) return error;\n"
       << indent << "}\n";
  }

  void emitLibraryConvNode(cgraph::CudnnConvNodeOp node, size_t n,
                           StringRef graphVar, StringRef deps, StringRef what,
                           StringRef indent, llvm::raw_ostream &os) {
    auto list = [](ArrayRef<int64_t> v) {
      SmallVector<std::string> items;
      for (int64_t x : v)
        items.push_back(std::to_string(x));
      return llvm::join(items, ", ");
    };
    auto offset = [](std::optional<int64_t> v) {
      return v ? std::to_string(*v) + "ull" : std::string("CGRT_NO_OFFSET");
    };
    os << indent << "static const cgrt_conv_desc c = {"
       << cString(what.str()) << ", " << cString(node.getLabel().str())
       << ", " << dtypeEnum(dtypeCode(node.getType())) << ", "
       << matmulCompute(node.getOperand()) << ",\n"
       << indent << "    {" << list(node.getInput()) << "}, {"
       << list(node.getFilter()) << "}, {" << list(node.getOutput())
       << "},\n"
       << indent << "    {" << list(node.getPads()) << "}, {"
       << list(node.getStrides()) << "}, {" << list(node.getDilations())
       << "}, " << node.getGroups() << ",\n"
       << indent << "    " << offset(node.getX()) << ", "
       << offset(node.getW()) << ", " << offset(node.getY()) << ", "
       << offset(node.getBias()) << ", " << (node.getChannelsLast() ? 1 : 0)
       << "};\n"
       << indent << "{\n"
       << indent << "  const char *error = env->add_conv_node(env->runtime, "
       << "&nodes[" << n << "], " << graphVar << ", " << deps
       << ", &c, result);\n"
       << indent << "  if (error) return error;\n"
       << indent << "}\n";
  }

  /// The runtime adds the collective (`collective`, a cgrt_collective) on
  /// the model's NCCL communicator.
  template <typename NcclNodeOp>
  void emitCollectiveNode(NcclNodeOp node, StringRef collective, size_t n,
                          StringRef graphVar, StringRef deps, StringRef what,
                          StringRef indent, llvm::raw_ostream &os) {
    os << indent << "static const cgrt_collective_desc r = {"
       << cString(what.str()) << ", " << cString(node.getLabel().str())
       << ", " << collective << ", " << dtypeEnum(dtypeCode(node.getType()))
       << ", " << node.getCount() << ", " << node.getSend() << "ull, "
       << node.getRecv() << "ull};\n"
       << indent << "{\n"
       << indent
       << "  const char *error = env->add_collective_node(env->runtime, "
       << "&nodes[" << n << "], " << graphVar << ", " << deps
       << ", &r, result);\n"
       << indent << "  if (error) return error;\n"
       << indent << "}\n";
  }

  static std::string floatLiteral(APFloat value) {
    SmallString<32> text;
    value.toString(text, /*FormatPrecision=*/9, /*FormatMaxPadding=*/0,
                   /*TruncateZero=*/false);
    std::string s(text);
    if (s.find_first_of(".eE") == std::string::npos)
      s += ".0";
    return s + "f";
  }

  void emitMemcpyNode(cgraph::MemcpyNodeOp node, size_t n, StringRef graphVar,
                      StringRef deps, StringRef what, StringRef indent,
                      llvm::raw_ostream &os) {
    os << indent << "CUDA_MEMCPY3D c;\n"
       << indent << "memset(&c, 0, sizeof c);\n"
       << indent << "c.srcMemoryType = CU_MEMORYTYPE_DEVICE;\n"
       << indent << "c.srcDevice = env->arena + " << node.getSrc() << "ull;\n"
       << indent << "c.dstMemoryType = CU_MEMORYTYPE_DEVICE;\n"
       << indent << "c.dstDevice = env->arena + " << node.getDst() << "ull;\n"
       << indent << "c.WidthInBytes = " << node.getBytes()
       << "; c.Height = 1; c.Depth = 1;\n"
       << indent << "CGC_CHECK(env->api->cuGraphAddMemcpyNode(&nodes[" << n
       << "], " << graphVar << ", " << deps << ", &c, env->context),\n"
       << indent << "          " << cString(what) << ");\n";
  }

  void emitConditionalNode(cgraph::ConditionalNodeOp node, size_t n,
                           StringRef graphVar, StringRef deps, StringRef what,
                           StringRef graphName, NodeNumbering &numbering,
                           StringRef indent, llvm::raw_ostream &os) {
    bool isWhile = node.getKind() == cgraph::ConditionKind::While;
    bool hasElse = !node.getElseBody().empty();
    os << indent << "CUgraphNodeParams cp;\n"
       << indent << "memset(&cp, 0, sizeof cp);\n"
       << indent << "cp.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;\n"
       << indent << "cp.conditional.handle = handles[" << node.getHandle()
       << "];\n"
       << indent << "cp.conditional.type = "
       << (isWhile ? "CU_GRAPH_COND_TYPE_WHILE" : "CU_GRAPH_COND_TYPE_IF")
       << ";\n"
       << indent << "cp.conditional.size = " << (hasElse ? 2 : 1) << ";\n"
       << indent << "cp.conditional.ctx = env->context;\n"
       << indent << "CGC_CHECK(env->api->cuGraphAddNode(&nodes[" << n << "], "
       << graphVar << ", " << (deps == "nullptr, 0" ? "nullptr, nullptr, 0"
                               : ("deps, nullptr, " +
                                  deps.drop_front(6)).str())
       << ", &cp),\n"
       << indent << "          " << cString(what) << ");\n";
    std::string body = "body" + std::to_string(n);
    os << indent << "CUgraph " << body << " = cp.conditional.phGraph_out[0];\n";
    emitNodes(node.getBody().front(), body, graphName, numbering, indent, os);
    if (hasElse) {
      std::string elseBody = "else" + std::to_string(n);
      os << indent << "CUgraph " << elseBody
         << " = cp.conditional.phGraph_out[1];\n";
      emitNodes(node.getElseBody().front(), elseBody, graphName, numbering,
                indent, os);
    }
  }

  /// One cgrt_io_desc initializer.
  static std::string ioDesc(const IO &io) {
    SmallVector<std::string> dims;
    for (int64_t d : io.dims)
      dims.push_back(std::to_string(d));
    if (dims.empty())
      dims.push_back("0");
    return "{" + cString(io.name) + ", " + dtypeEnum(io.dtype) + ", " +
           std::to_string(io.dims.size()) + ", {" + llvm::join(dims, ", ") +
           "}, " + std::to_string(io.offset) + "ull, " +
           std::to_string(io.bytes) + "ull}";
  }

  std::string ioTable(StringRef name, ArrayRef<IO> ios) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "const cgrt_io_desc " << name << "[] = {\n";
    for (const IO &io : ios)
      os << "  " << ioDesc(io) << ",\n";
    if (ios.empty())
      os << "  {nullptr, CGRT_FLOAT32, 0, {0}, 0, 0},\n";
    os << "};\n";
    return s;
  }

  /// A training step's state table and the inputs' label classes (empty
  /// tables for inference: the fields are then 0 and NULL).
  std::string trainingTables() {
    const Bucket &b = largest();
    if (b.states.empty())
      return "const cgrt_state_desc *const kState = nullptr;\n"
             "const int64_t *const kLabelClasses = nullptr;\n";
    std::string s = "const cgrt_state_desc kState[] = {\n";
    for (const State &state : b.states)
      s += "  {" + ioDesc(state.io) + ", " +
           std::to_string(state.updateOffset) + "ull},\n";
    SmallVector<std::string> classes;
    for (int64_t c : b.labelClasses)
      classes.push_back(std::to_string(c));
    if (classes.empty())
      classes.push_back("0");
    return s + "};\nconst int64_t kLabelClasses[] = {" +
           llvm::join(classes, ", ") + "};\n";
  }

  static std::string axesList(ArrayRef<int32_t> axes) {
    SmallVector<std::string> items;
    for (int32_t a : axes)
      items.push_back(std::to_string(a));
    return items.empty() ? "-1" : llvm::join(items, ", ");
  }

  /// The I/O and step tables of every bucket, and the bucket list.
  std::string bucketTables(const std::vector<SmallVector<std::string>> &bucketSteps) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "const int32_t kInputAxes[] = {" << axesList(largest().inputAxes)
       << "};\nconst int32_t kOutputAxes[] = {"
       << axesList(largest().outputAxes) << "};\n";
    if (bucketDim.empty())
      return s;
    SmallVector<std::string> entries;
    for (auto [i, bucket] : llvm::enumerate(buckets)) {
      std::string tag = std::to_string(i);
      os << ioTable("kInputs" + tag, bucket.inputs)
         << ioTable("kOutputs" + tag, bucket.outputs)
         << "const cgrt_step kSteps" << tag << "[] = {"
         << (bucketSteps[i].empty() ? std::string("{CGRT_STEP_GRAPH, -1}")
                                    : llvm::join(bucketSteps[i], ", "))
         << "};\n";
      entries.push_back("{" + std::to_string(bucket.value) + ", " +
                        std::to_string(bucket.arenaBytes) + "ull, kInputs" +
                        tag + ", kOutputs" + tag + ", " +
                        std::to_string(bucketSteps[i].size()) + ", kSteps" +
                        tag + "}");
    }
    os << "const cgrt_bucket kBuckets[] = {" << llvm::join(entries, ", ")
       << "};\n\n";
    return s;
  }

  /// One flag for the package: off when a schedule copies its I/O through
  /// the slots (cgraph.schedule's copy_io).
  std::string zeroCopyFlag() {
    bool copy = llvm::any_of(module.getOps<cgraph::ScheduleOp>(),
                             [](cgraph::ScheduleOp s) { return s.getCopyIo(); });
    return copy ? "0" : "1";
  }

  std::string bucketFields() {
    bool padded = isPadToBucket(module);
    if (bucketDim.empty())
      return "    nullptr, 0, nullptr,\n    0, kInputAxes, kOutputAxes,\n"
             "    /*zero_copy_io=*/" + zeroCopyFlag() + ",\n";
    return "    " + cString(bucketDim) + ", " + std::to_string(buckets.size()) +
           ", kBuckets,\n    " + (padded ? "1" : "0") +
           ", kInputAxes, kOutputAxes,\n    /*zero_copy_io=*/" + zeroCopyFlag() +
           ",\n";
  }

  LogicalResult writeModelSource() {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "// Generated by cgc " << CGC_VERSION << " for model '"
       << options.modelName << "'. Do not edit.\n"
       << "// Every CUDA graph of the model is built node by node below; each\n"
       << "// pointer is the arena base plus an offset fixed at compile time.\n"
       << "#include \"cgrt/package.h\"\n\n#include <string.h>\n\n"
       << eagerPrelude()
       << "#define CGC_CHECK(call, what)                                   \\\n"
       << "  do {                                                          \\\n"
       << "    CUresult status_ = (call);                                  \\\n"
       << "    if (status_ != CUDA_SUCCESS) {                              \\\n"
       << "      *result = status_;                                        \\\n"
       << "      return what;                                              \\\n"
       << "    }                                                           \\\n"
       << "  } while (0)\n\nnamespace {\n\n"
       << kernelNodeHelper();
    SmallVector<std::string> builders, graphNames, steps, runners, eagerNames;
    // Declared before the runners, whose names the step tables use.
    llvm::DenseMap<Operation *, size_t> graphIndex;
    for (auto graph : module.getOps<cgraph::GraphOp>()) {
      os << graphBuilder(graph);
      graphIndex[graph] = builders.size();
      builders.push_back("build_" + cIdentifier(graph.getSymName()));
      graphNames.push_back(cString(graph.getSymName()));
    }
    // Each schedule's steps in order: graph replays (their graphs verified
    // to exist) and eager steps, whose runners are printed here.
    auto kernelIndexFn = [&](FlatSymbolRefAttr k) { return indexOfKernel(k); };
    std::vector<SmallVector<std::string>> bucketSteps;
    for (const Bucket &bucket : buckets) {
      SmallVector<std::string> &steps = bucketSteps.emplace_back();
      for (Operation &op : bucket.schedule.getBody().front()) {
        if (auto replay = dyn_cast<cgraph::ReplayOp>(op)) {
          Operation *graph = symbols.lookup(replay.getGraph());
          steps.push_back("{CGRT_STEP_GRAPH, " +
                          std::to_string(graphIndex.at(graph)) + "}");
        } else if (auto eager = dyn_cast<cgraph::EagerOp>(op)) {
          steps.push_back("{CGRT_STEP_EAGER, " +
                          std::to_string(runners.size()) + "}");
          runners.push_back(emitEagerRunner(eager, kernelIndexFn, os));
          eagerNames.push_back(cString(eager.getName()));
        }
      }
    }
    steps = bucketSteps.back();
    SmallVector<std::string> names;
    for (const std::string &k : kernelNames)
      names.push_back(cString(k));
    auto list = [](ArrayRef<std::string> items, StringRef empty) {
      return items.empty() ? empty.str() : llvm::join(items, ", ");
    };
    os << "const char *const kKernelNames[] = {" << list(names, "nullptr")
       << "};\n"
       << ioTable("kInputs", inputs) << ioTable("kOutputs", outputs)
       << trainingTables()
       << "const cgrt_graph_builder kBuilders[] = {" << list(builders, "nullptr")
       << "};\n"
       << "const char *const kGraphNames[] = {" << list(graphNames, "nullptr")
       << "};\n"
       << "const cgrt_step kSteps[] = {"
       << list(steps, "{CGRT_STEP_GRAPH, -1}") << "};\n"
       << "const cgrt_eager_runner kRunners[] = {" << list(runners, "nullptr")
       << "};\n"
       << "const char *const kEagerNames[] = {" << list(eagerNames, "nullptr")
       << "};\n\n"
       << bucketTables(bucketSteps) << rankTables()
       << "const cgrt_package kPackage = {\n"
       << "    CGRT_PACKAGE_ABI_VERSION,\n"
       << "    " << cString(CGC_VERSION) << ",\n"
       << "    " << cString(options.modelName) << ",\n"
       << "    /*arena_bytes=*/" << arenaBytes << "ull,\n"
       << "    /*weights_offset=*/0ull,\n"
       << "    /*weights_bytes=*/" << weightsBytes << "ull,\n"
       << "    " << cString(weightsFile(rank < 0 ? -1 : 0)) << ",\n"
       << "    /*weights_checksum=*/" << weightsChecksum << "ull,\n"
       << "    \"kernels.cubin\",\n    \"kernels.ptx\",\n"
       << "    " << kernelNames.size() << ", kKernelNames,\n"
       << "    " << inputs.size() << ", kInputs,\n"
       << "    " << outputs.size() << ", kOutputs,\n"
       << "    " << builders.size() << ", kBuilders, kGraphNames,\n"
       << "    " << steps.size() << ", kSteps,\n"
       << "    " << runners.size() << ", kRunners, kEagerNames,\n"
       << bucketFields()
       << "    " << largest().states.size() << ", kState, kLabelClasses,\n"
       << rankFields() << "};\n\n"
       << "} // namespace\n\n"
       << "extern \"C\" __attribute__((visibility(\"default\"))) const "
          "cgrt_package *\ncgrt_package_descriptor(void) { return &kPackage; }\n";
    return writeFile("model.cpp", s);
  }

  /// A split package's weights files and their checksums (every rank's
  /// writer prints the table; only rank 0's has the checksums, and the
  /// comparison of the ranks' sources skips that line).
  std::string rankTables() const {
    if (rank < 0)
      return "";
    SmallVector<std::string> files, sums;
    for (int64_t r = 0; r < ranks(); ++r) {
      files.push_back(cString(weightsFile(r)));
      sums.push_back(std::to_string(
                         r < (int64_t)rankChecksums.size() ? rankChecksums[r]
                                                           : 0) +
                     "ull");
    }
    return "const char *const kRankWeights[] = {" + llvm::join(files, ", ") +
           "};\nconst uint64_t kRankWeightsChecksums[] = {" +
           llvm::join(sums, ", ") + "};\n\n";
  }

  std::string rankFields() const {
    if (rank < 0)
      return "    1, nullptr, nullptr,\n";
    return "    " + std::to_string(ranks()) +
           ", kRankWeights, kRankWeightsChecksums,\n";
  }

  int64_t ranks() const { return 1 + (int64_t)options.otherRanks.size(); }

  /// model.h: a typed entry point for applications that link the package.
  LogicalResult writeHeader() {
    std::string id = cIdentifier(options.modelName);
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "/* Generated by cgc " << CGC_VERSION << ". Typed API of model '"
       << options.modelName << "'. */\n#ifndef CGC_MODEL_" << id
       << "_H\n#define CGC_MODEL_" << id << "_H\n\n#include \"cgrt/cgrt.h\"\n\n";
    auto describe = [&](const IO &io) {
      SmallVector<std::string> dims;
      for (int64_t d : io.dims)
        dims.push_back(std::to_string(d));
      return io.name + ": " + dtypeEnum(io.dtype) + " [" +
             llvm::join(dims, ", ") + "]";
    };
    SmallVector<std::string> params;
    for (const IO &io : inputs) {
      os << "/* input  " << describe(io) << " */\n";
      params.push_back(std::string("const ") + cScalarType(io.dtype) + " *" +
                       cIdentifier(io.name));
    }
    for (const IO &io : outputs) {
      os << "/* output " << describe(io) << " */\n";
      params.push_back(std::string(cScalarType(io.dtype)) + " *" +
                       cIdentifier(io.name));
    }
    auto tensor = [&](const IO &io, StringRef var, bool isConst) {
      std::string dims;
      for (int64_t d : io.dims)
        dims += std::to_string(d) + ", ";
      return "{" + std::string(isConst ? "(void *)" : "") + var.str() + ", " +
             std::to_string(io.bytes) + ", " + dtypeEnum(io.dtype) + ", " +
             std::to_string(io.dims.size()) + ", {" + dims + "}, " +
             "CGRT_MEMORY_HOST}";
    };
    os << "\n/* Runs one inference on host buffers. */\nstatic inline cgrt_status "
       << id << "_run(cgrt_model *model" << (params.empty() ? "" : ", ")
       << llvm::join(params, ", ") << ") {\n";
    SmallVector<std::string> in, out;
    for (const IO &io : inputs)
      in.push_back(tensor(io, cIdentifier(io.name), true));
    for (const IO &io : outputs)
      out.push_back(tensor(io, cIdentifier(io.name), false));
    os << "  cgrt_tensor inputs[] = {" << (in.empty() ? "{0}" : llvm::join(in, ", "))
       << "};\n  cgrt_tensor outputs[] = {"
       << (out.empty() ? "{0}" : llvm::join(out, ", ")) << "};\n"
       << "  return cgrt_model_run(model, inputs, " << inputs.size()
       << ", outputs, " << outputs.size() << ");\n}\n\n#endif\n";
    return writeFile("model.h", s);
  }

  /// The fused kernels of a model function (cgc.kernel ops, those of
  /// If/Loop bodies included): the count --explain shows. `kernels` lists
  /// fewer or more functions: identical kernels share one, and conditional
  /// nodes add the runtime's helper kernels.
  static int64_t countModelKernels(func::FuncOp func) {
    int64_t count = 0;
    func.walk([&](KernelOp) { ++count; });
    return count;
  }

  LogicalResult writeMetadata() {
    llvm::json::Array ins, outs, graphs, kernels;
    auto ioJson = [](const IO &io) {
      llvm::json::Array dims;
      for (int64_t d : io.dims)
        dims.push_back(d);
      return llvm::json::Object{{"name", io.name},
                                {"dtype", dtypeEnum(io.dtype)},
                                {"shape", std::move(dims)},
                                {"arena_offset", io.offset},
                                {"bytes", io.bytes}};
    };
    for (const IO &io : inputs)
      ins.push_back(ioJson(io));
    for (const IO &io : outputs)
      outs.push_back(ioJson(io));
    llvm::json::Array states;
    for (const State &state : largest().states) {
      llvm::json::Object entry = ioJson(state.io);
      entry["update_offset"] = state.updateOffset;
      states.push_back(std::move(entry));
    }
    for (auto graph : module.getOps<cgraph::GraphOp>()) {
      int64_t count = llvm::range_size(graph.getBody().front().getOperations());
      graphs.push_back(llvm::json::Object{{"name", graph.getSymName()},
                                          {"nodes", count}});
    }
    for (const std::string &k : kernelNames)
      kernels.push_back(k);
    llvm::json::Array bucketList;
    for (const Bucket &bucket : buckets) {
      if (bucketDim.empty())
        break;
      llvm::json::Array bucketIns, bucketOuts;
      for (const IO &io : bucket.inputs)
        bucketIns.push_back(ioJson(io));
      for (const IO &io : bucket.outputs)
        bucketOuts.push_back(ioJson(io));
      bucketList.push_back(llvm::json::Object{
          {"value", bucket.value},
          {"model_kernels", countModelKernels(bucket.func)},
          {"arena_bytes", bucket.arenaBytes},
          {"inputs", std::move(bucketIns)},
          {"outputs", std::move(bucketOuts)}});
    }
    llvm::json::Object root{
        {"cgc_version", CGC_VERSION},
        {"abi_version", CGRT_PACKAGE_ABI_VERSION},
        {"model", options.modelName},
        {"arch", arch},
        {"arena_bytes", arenaBytes},
        {"weights_bytes", weightsBytes},
        {"weights_checksum", llvm::utohexstr(weightsChecksum)},
        {"inputs", std::move(ins)},
        {"outputs", std::move(outs)},
        {"graphs", std::move(graphs)},
        {"kernels", std::move(kernels)},
        {"model_kernels", countModelKernels(buckets.back().func)}};
    if (!states.empty())
      root["state"] = std::move(states);
    if (rank >= 0) {
      llvm::json::Array files;
      for (int64_t r = 0; r < ranks(); ++r)
        files.push_back(weightsFile(r));
      root["ranks"] = ranks();
      root["rank_weights"] = std::move(files);
    }
    SmallVector<cgraph::ScheduleOp> schedules;
    for (const Bucket &bucket : buckets)
      schedules.push_back(bucket.schedule);
    root["cgraph"] = scheduleJson(module, schedules, [&](FlatSymbolRefAttr k) {
      return indexOfKernel(k);
    });
    if (!bucketDim.empty()) {
      root["bucket_dim"] = bucketDim;
      root["pad_to_bucket"] = isPadToBucket(module);
      root["buckets"] = std::move(bucketList);
    }
    std::string s;
    llvm::raw_string_ostream os(s);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    return writeFile("metadata.json", s);
  }

  LogicalResult compileLibrary() {
    const char *cxxEnv = getenv("CXX");
    std::string cxx = cxxEnv && *cxxEnv ? cxxEnv : "c++";
    llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(cxx);
    if (!program)
      return module.emitError("cannot find the host C++ compiler '")
             << cxx << "' (set CXX)";
    const char *includeEnv = getenv("CGC_INCLUDE_DIR");
    std::string include = includeEnv && *includeEnv ? includeEnv
                                                    : CGC_RUNTIME_INCLUDE_DIR;
    std::string log = path("build.log");
    SmallVector<std::string> args = {
        *program,       "-std=c++17",          "-O2",
        "-fPIC",        "-shared",             "-fvisibility=hidden",
        "-I" + include, "-I" + cudaIncludeDir(), path("model.cpp"),
        "-o",           path("libmodel.so")};
    SmallVector<StringRef> argRefs(args.begin(), args.end());
    if (options.onStage)
      options.onStage("compiling libmodel.so with " + cxx);
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                            StringRef(log)};
    std::string error;
    int rc = llvm::sys::ExecuteAndWait(*program, argRefs, std::nullopt,
                                       redirects, 0, 0, &error);
    // The package folder is removed on failure: the log goes in the message.
    if (rc != 0) {
      auto logText = llvm::MemoryBuffer::getFile(log);
      return module.emitError("compiling model.cpp failed (")
             << (error.empty() ? "exit " + std::to_string(rc) : error)
             << "):\n"
             << (logText ? (*logText)->getBuffer().take_back(4000)
                         : StringRef("(no compiler output)"));
    }
    llvm::sys::fs::remove(log);
    return success();
  }

  ModuleOp module;
  SymbolTable symbols;
  std::string dir;
  const PackageOptions &options;
  std::string arch; ///< the module's cgc.target (`cgc --arch`)
  std::vector<Bucket> buckets; ///< ascending values; one without buckets
  std::string bucketDim;       ///< empty without buckets
  func::FuncOp func;           ///< the largest bucket's
  SmallVector<IO> inputs, outputs;
  int64_t arenaBytes = 0, weightsBytes = 0;
  uint64_t weightsChecksum = 0;
  /// A split package: this writer's rank (-1: a one-GPU package), every
  /// rank's weights checksum (rank 0's writer), the sources kept.
  int64_t rank = -1;
  SmallVector<uint64_t> rankChecksums;
  llvm::StringMap<std::string> *sources = nullptr;
  SmallVector<std::string> kernelNames;
  llvm::DenseMap<Operation *, size_t> kernelIndex;

  /// The package index of a kernel the IR names (the verifier saw it).
  size_t indexOfKernel(FlatSymbolRefAttr name) const {
    return kernelIndex.at(symbols.lookup(name.getAttr()));
  }
};

} // namespace

bool cgc::checkPackageTarget(StringRef directory, std::string &error) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(directory, status))
    return true; // nothing there yet
  if (!llvm::sys::fs::is_directory(status)) {
    error = "'" + directory.str() +
            "' is a file; a package is a folder (give a new path, or "
            "--emit=cgc -o FILE.mlir for IR)";
    return false;
  }
  SmallString<256> metadata(directory);
  llvm::sys::path::append(metadata, "metadata.json");
  std::error_code ec;
  bool empty = llvm::sys::fs::directory_iterator(directory, ec) ==
               llvm::sys::fs::directory_iterator();
  if (ec || empty || llvm::sys::fs::exists(metadata))
    return true;
  error = "'" + directory.str() +
          "' is a folder with other files than a cgc package; a package "
          "replaces only an empty folder or an earlier package";
  return false;
}

namespace {

/// `source` without its lines that name checksums (the only lines in which
/// the ranks' sources may differ).
std::string withoutChecksums(StringRef source) {
  std::string kept;
  SmallVector<StringRef> lines;
  source.split(lines, '\n');
  for (StringRef line : lines)
    if (!line.contains_insensitive("checksum"))
      kept += line.str() + "\n";
  return kept;
}

/// The package of `module` into `dir`; for a split program, every other
/// rank's weights first, and a check that each rank's program became rank
/// 0's graphs and kernels (else the ranks would not meet in the same
/// all-reduces).
LogicalResult writeRanks(ModuleOp module, StringRef dir,
                         const PackageOptions &options) {
  if (options.otherRanks.empty())
    return PackageWriter(module, dir, options).run();
  SmallVector<llvm::StringMap<std::string>> sources(options.otherRanks.size() +
                                                    1);
  SmallVector<uint64_t> checksums(1, 0);
  for (auto [i, other] : llvm::enumerate(options.otherRanks)) {
    PackageWriter writer(other, dir, options);
    writer.setRank(i + 1, {}, &sources[i + 1]);
    if (failed(writer.runOtherRank()))
      return failure();
    checksums.push_back(writer.getWeightsChecksum());
  }
  // Rank 0's checksum goes into the table when its writer has it.
  PackageWriter first(module, dir, options);
  first.setRank(0, checksums, &sources[0]);
  if (failed(first.run()))
    return failure();
  for (size_t r = 1; r < sources.size(); ++r)
    for (StringRef file : {"kernels.cu", "model.cpp"})
      if (withoutChecksums(sources[r][file]) !=
          withoutChecksums(sources[0][file]))
        return module.emitError("rank ")
               << r << "'s program compiled to another " << file
               << " than rank 0's: the ranks would not run the same graphs "
                  "(a pass decided by the values of a weight's shard?)";
  return success();
}

} // namespace

LogicalResult cgc::emitPackage(ModuleOp module, StringRef directory,
                               const PackageOptions &options) {
  std::string error;
  if (!checkPackageTarget(directory, error))
    return module.emitError(error);
  // Written beside `directory` (same file system, so renames are atomic).
  std::string pid = std::to_string(llvm::sys::Process::getProcessId());
  std::string staging = (directory.rtrim('/') + ".cgc-partial-" + pid).str();
  std::string previous = (directory.rtrim('/') + ".cgc-old-" + pid).str();
  llvm::sys::fs::remove_directories(staging);
  if (failed(writeRanks(module, staging, options))) {
    llvm::sys::fs::remove_directories(staging);
    return failure();
  }
  bool hadPackage = llvm::sys::fs::is_directory(directory);
  std::error_code ec;
  if (hadPackage)
    ec = llvm::sys::fs::rename(directory, previous);
  if (!ec)
    ec = llvm::sys::fs::rename(staging, directory);
  if (ec) {
    if (hadPackage)
      llvm::sys::fs::rename(previous, directory);
    llvm::sys::fs::remove_directories(staging);
    return module.emitError("cannot move the package into '")
           << directory << "': " << ec.message();
  }
  if (hadPackage)
    llvm::sys::fs::remove_directories(previous);
  return success();
}
