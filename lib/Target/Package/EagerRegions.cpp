//===- EagerRegions.cpp - host code for eager regions ---------------------===//

#include "EagerRegions.h"

#include "cgc/Codegen/KernelGen.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cgc;

const char *cgc::eagerPrelude() {
  return R"CPP(#include <stdint.h>
#include <string>
#include <vector>

namespace {
/// "what: message" in storage that outlives the runner's return.
const char *cgcFail(const char *what, const char *message) {
  static thread_local std::string text;
  text = std::string(what) + ": " + message;
  return text.c_str();
}
#define CGC_EAGER(call, what)                                                  \
  do {                                                                         \
    if (const char *failure_ = (call))                                         \
      return cgcFail(what, failure_);                                          \
  } while (0)

/// ONNX NonZero on the host: the indices of the non-zero elements, one row
/// per dim, in row-major order. Returns the count.
template <typename T>
int64_t cgcNonZero(const T *input, const int64_t *dims, int rank,
                   int64_t count, std::vector<int64_t> &out) {
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < count; ++i)
    if (input[i] != T(0))
      hits.push_back(i);
  int64_t n = (int64_t)hits.size();
  out.assign((size_t)(rank > 0 ? rank : 1) * n, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = hits[k];
    for (int d = rank - 1; d >= 0; --d) {
      out[(size_t)d * n + k] = flat % dims[d];
      flat /= dims[d];
    }
  }
  return n;
}
} // namespace

)CPP";
}

namespace {

std::string nodeName(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return op->getName().getStringRef().str();
}

std::string cString(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

const char *hostType(Type t) {
  if (t.isF32()) return "float";
  if (t.isF64()) return "double";
  if (t.isInteger(1)) return "uint8_t";
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 8: return u ? "uint8_t" : "int8_t";
    case 16: return u ? "uint16_t" : "int16_t";
    case 32: return u ? "uint32_t" : "int32_t";
    case 64: return u ? "uint64_t" : "int64_t";
    }
  }
  return nullptr;
}

class RunnerWriter {
public:
  RunnerWriter(EagerRegionOp eager,
               const llvm::StringMap<size_t> &kernelIndex)
      : eager(eager), kernelIndex(kernelIndex),
        func(eager->getParentOfType<func::FuncOp>()) {}

  LogicalResult run(llvm::raw_ostream &os, std::string &runner) {
    runner = "run_" + eager.getName().str();
    for (char &c : runner)
      if (!llvm::isAlnum(c))
        c = '_';
    os << "const char *" << runner << "(const cgrt_eager_env *env) {\n";
    if (failed(writeBlock(eager.getBody().front(), 1)))
      return failure();
    os << body << "  return nullptr;\n}\n\n";
    return success();
  }

private:
  std::string pad(int depth) { return std::string(2 * depth, ' '); }

  /// Offset of a value, or an error naming the op that needs it.
  FailureOr<int64_t> offset(Value v, Operation *user) {
    int64_t o = plannedOffset(v);
    if (o < 0)
      return user->emitError() << "eager op '" << nodeName(user)
                               << "' uses a value without a planned buffer";
    return o;
  }

  std::string what(Operation *op, StringRef action = "") {
    std::string text = eager.getName().str() + ": " + nodeName(op);
    if (!action.empty())
      text += " (" + action.str() + ")";
    return cString(text);
  }

  /// Copies `from` into `to`'s buffer when they live apart.
  LogicalResult copyValue(Value from, Value to, Operation *op, int depth) {
    FailureOr<int64_t> src = offset(from, op), dst = offset(to, op);
    if (failed(src) || failed(dst))
      return failure();
    if (*src != *dst)
      body += pad(depth) + "CGC_EAGER(env->copy(env->runtime, " +
              std::to_string(*dst) + "ull, " + std::to_string(*src) + "ull, " +
              std::to_string(tensorBytes(to.getType())) + "ull), " +
              what(op, "copy") + ");\n";
    return success();
  }

  LogicalResult writeBlock(Block &block, int depth) {
    for (Operation &op : block.without_terminator()) {
      LogicalResult status = success();
      if (isa<ConstantOp, ReshapeOp>(op))
        continue; // weights are uploaded; reshapes are views
      if (auto kernel = dyn_cast<KernelOp>(op))
        status = writeKernel(kernel, depth);
      else if (auto branch = dyn_cast<IfOp>(op))
        status = writeIf(branch, depth);
      else if (auto loop = dyn_cast<LoopOp>(op))
        status = writeLoop(loop, depth);
      else if (auto nonzero = dyn_cast<NonZeroOp>(op))
        status = writeNonZero(nonzero, depth);
      else
        status = op.emitError()
                 << "the GPU backend has no eager implementation of '"
                 << op.getName() << "' (ONNX node '" << nodeName(&op) << "')";
      if (failed(status))
        return failure();
    }
    return success();
  }

  LogicalResult writeKernel(KernelOp kernel, int depth) {
    auto launches = kernel->getAttrOfType<ArrayAttr>("cgc.launches");
    if (!launches)
      return kernel.emitError("eager kernel without launches (run "
                              "--cgc-lower-to-cgraph first)");
    for (Attribute a : launches) {
      auto launch = cast<DictionaryAttr>(a);
      auto symbol = launch.getAs<FlatSymbolRefAttr>("kernel");
      auto grid = launch.getAs<DenseI64ArrayAttr>("grid");
      auto block = launch.getAs<DenseI64ArrayAttr>("block");
      auto args = launch.getAs<DenseI64ArrayAttr>("args");
      SmallVector<std::string> offsets;
      for (int64_t o : args.asArrayRef())
        offsets.push_back(std::to_string(o) + "ull");
      if (offsets.empty())
        offsets.push_back("0ull");
      std::string p = pad(depth);
      body += p + "{\n" + p + "  const uint32_t grid[3] = {" +
              std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
              std::to_string(grid[2]) + "}, block[3] = {" +
              std::to_string(block[0]) + ", " + std::to_string(block[1]) +
              ", " + std::to_string(block[2]) + "};\n" + p +
              "  const uint64_t args[] = {" + llvm::join(offsets, ", ") +
              "};\n" + p + "  CGC_EAGER(env->launch(env->runtime, " +
              std::to_string(kernelIndex.lookup(symbol.getValue())) +
              ", grid, block, args, " + std::to_string(args.size()) + "), " +
              cString(eager.getName().str() + ": kernel " +
                      kernel.getName().str()) +
              ");\n" + p + "}\n";
    }
    return success();
  }

  LogicalResult writeIf(IfOp op, int depth) {
    FailureOr<int64_t> cond = offset(op.getCondition(), op);
    if (failed(cond))
      return failure();
    std::string p = pad(depth);
    body += p + "{ // " + nodeName(op) + "\n" + p + "  uint8_t cond = 0;\n" +
            p + "  CGC_EAGER(env->read(env->runtime, &cond, " +
            std::to_string(*cond) + "ull, 1), " +
            what(op, "read the condition") + ");\n" + p + "  if (cond) {\n";
    auto branch = [&](Region &region) -> LogicalResult {
      Block &block = region.front();
      if (failed(writeBlock(block, depth + 2)))
        return failure();
      for (auto [yielded, result] :
           llvm::zip(block.getTerminator()->getOperands(), op.getResults()))
        if (failed(copyValue(yielded, result, op, depth + 2)))
          return failure();
      return success();
    };
    if (failed(branch(op.getThenRegion())))
      return failure();
    body += p + "  } else {\n";
    if (failed(branch(op.getElseRegion())))
      return failure();
    body += p + "  }\n" + p + "}\n";
    return success();
  }

  LogicalResult writeLoop(LoopOp op, int depth) {
    Block &block = op.getBody().front();
    size_t carried = op.getInitialValues().size();
    auto yield = cast<YieldOp>(block.getTerminator());
    if (yield.getValues().size() != carried + 1)
      return op.emitError() << "the GPU backend does not run Loop scan "
                               "outputs yet (ONNX node '"
                            << nodeName(op) << "')";
    FailureOr<int64_t> trips = offset(op.getMaxTripCount(), op);
    FailureOr<int64_t> cond = offset(op.getInitialCondition(), op);
    FailureOr<int64_t> iterArg = offset(block.getArgument(0), op);
    FailureOr<int64_t> condArg = offset(block.getArgument(1), op);
    FailureOr<int64_t> condOut = offset(yield.getValues()[0], op);
    if (failed(trips) || failed(cond) || failed(iterArg) || failed(condArg) ||
        failed(condOut))
      return failure();
    std::string p = pad(depth);
    body += p + "{ // " + nodeName(op) + "\n" + p + "  int64_t trips = 0;\n" +
            p + "  uint8_t cond = 0;\n" + p +
            "  CGC_EAGER(env->read(env->runtime, &trips, " +
            std::to_string(*trips) + "ull, 8), " +
            what(op, "read the trip count") + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, &cond, " +
            std::to_string(*cond) + "ull, 1), " +
            what(op, "read the condition") + ");\n";
    for (size_t i = 0; i < carried; ++i)
      if (failed(copyValue(op.getInitialValues()[i], block.getArgument(i + 2),
                           op, depth + 1)))
        return failure();
    body += p + "  for (int64_t i = 0; i < trips && cond; ++i) {\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " +
            std::to_string(*iterArg) + "ull, &i, 8), " +
            what(op, "write the iteration") + ");\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " +
            std::to_string(*condArg) + "ull, &cond, 1), " +
            what(op, "write the condition") + ");\n";
    if (failed(writeBlock(block, depth + 2)))
      return failure();
    for (size_t i = 0; i < carried; ++i)
      if (failed(copyValue(yield.getValues()[i + 1], block.getArgument(i + 2),
                           op, depth + 2)))
        return failure();
    body += p + "    CGC_EAGER(env->read(env->runtime, &cond, " +
            std::to_string(*condOut) + "ull, 1), " +
            what(op, "read the condition") + ");\n" + p + "  }\n";
    for (size_t i = 0; i < carried; ++i)
      if (failed(copyValue(block.getArgument(i + 2), op.getResult(i), op,
                           depth + 1)))
        return failure();
    body += p + "}\n";
    return success();
  }

  /// The function outputs that a value of this region becomes.
  SmallVector<size_t> outputsOf(Value v) {
    SmallVector<size_t> outputs;
    Operation *yield = eager.getBody().front().getTerminator();
    Operation *ret = func.getBody().front().getTerminator();
    for (auto [r, yielded] : llvm::enumerate(yield->getOperands())) {
      if (yielded != v)
        continue;
      for (auto [i, returned] : llvm::enumerate(ret->getOperands()))
        if (returned == eager.getResult(r))
          outputs.push_back(i);
    }
    return outputs;
  }

  LogicalResult writeNonZero(NonZeroOp op, int depth) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    const char *type = hostType(input.getElementType());
    FailureOr<int64_t> in = offset(op.getInput(), op);
    FailureOr<int64_t> out = offset(op.getResult(), op);
    if (failed(in) || failed(out))
      return failure();
    if (!type || !input.hasStaticShape())
      return op.emitError() << "NonZero of " << input
                            << " is not supported by the GPU backend";
    // The result's shape is only known here; it may only leave the model.
    SmallVector<size_t> outputs = outputsOf(op.getResult());
    for (OpOperand &use : op.getResult().getUses())
      if (!isa<YieldOp>(use.getOwner()) ||
          use.getOwner()->getParentOp() != eager)
        return op.emitError() << "the result of '" << nodeName(op)
                              << "' is used by another op; the GPU backend "
                                 "only returns data-dependent shapes";
    SmallVector<std::string> dims;
    for (int64_t d : input.getShape())
      dims.push_back(std::to_string(d) + "ll");
    if (dims.empty())
      dims.push_back("1ll");
    std::string p = pad(depth);
    int64_t count = input.getNumElements();
    body += p + "{ // " + nodeName(op) + "\n" + p + "  std::vector<" + type +
            "> input(" + std::to_string(count) + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, input.data(), " +
            std::to_string(*in) + "ull, " +
            std::to_string(count) + "ull * sizeof(" + type + ")), " +
            what(op, "read the input") + ");\n" + p +
            "  const int64_t dims[] = {" + llvm::join(dims, ", ") + "};\n" +
            p + "  std::vector<int64_t> indices;\n" + p +
            "  int64_t n = cgcNonZero(input.data(), dims, " +
            std::to_string(input.getRank()) + ", " + std::to_string(count) +
            "ll, indices);\n" + p +
            "  if (!indices.empty())\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " + std::to_string(*out) +
            "ull, indices.data(), indices.size() * 8), " +
            what(op, "write the indices") + ");\n" + p +
            "  const int64_t shape[2] = {" +
            std::to_string(std::max<int64_t>(1, input.getRank())) +
            "ll, n};\n";
    for (size_t o : outputs)
      body += p + "  CGC_EAGER(env->set_output_shape(env->runtime, " +
              std::to_string(o) + ", 2, shape), " +
              what(op, "report the shape") + ");\n";
    body += p + "}\n";
    return success();
  }

  EagerRegionOp eager;
  const llvm::StringMap<size_t> &kernelIndex;
  func::FuncOp func;
  std::string body;
};

} // namespace

LogicalResult cgc::emitEagerRunner(EagerRegionOp eager,
                                   const llvm::StringMap<size_t> &kernelIndex,
                                   llvm::raw_ostream &os, std::string &runner) {
  return RunnerWriter(eager, kernelIndex).run(os, runner);
}
