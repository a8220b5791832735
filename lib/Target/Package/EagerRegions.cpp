//===- EagerRegions.cpp - host code for eager regions ---------------------===//

#include "EagerRegions.h"

#include "cgc/Codegen/KernelGen.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cgc;

const char *cgc::eagerPrelude() {
  return R"CPP(#include <stdint.h>
#include <algorithm>
#include <cstring>
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

/// ONNX Compress of `outer` x `n` x `inner` elements of `size` bytes: keeps
/// the slices k < `conditions` whose condition is set. Returns their count.
int64_t cgcCompress(const unsigned char *input, const uint8_t *condition,
                    int64_t conditions, int64_t outer, int64_t n,
                    int64_t inner, size_t size, std::vector<unsigned char> &out) {
  std::vector<int64_t> kept;
  for (int64_t k = 0; k < n && k < conditions; ++k)
    if (condition[k])
      kept.push_back(k);
  int64_t m = (int64_t)kept.size();
  size_t slice = (size_t)inner * size;
  out.resize((size_t)(outer * m) * slice);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      std::memcpy(&out[(size_t)(o * m + j) * slice],
                  input + (size_t)(o * n + kept[j]) * slice, slice);
  return m;
}

/// ONNX Unique over the `n` slices (along the axis, `outer` x `inner`
/// elements each; elements when flattened: outer = inner = 1). Slices
/// compare lexicographically in (outer, inner) order, as numpy does. Fills
/// the unique slices, their first indices and counts (sorted, or in order of
/// first occurrence) and every slice's index among them; returns the count.
template <typename T>
int64_t cgcUnique(const T *x, int64_t outer, int64_t n, int64_t inner,
                  bool sorted, std::vector<T> &y, std::vector<int64_t> &first,
                  std::vector<int64_t> &inverse, std::vector<int64_t> &counts) {
  auto at = [&](int64_t k, int64_t e) {
    return x[(e / inner) * n * inner + k * inner + e % inner];
  };
  const int64_t length = outer * inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < length; ++e) {
      T u = at(a, e), v = at(b, e);
      if (u < v) return true;
      if (v < u) return false;
    }
    return false;
  };
  std::vector<int64_t> order(n);
  for (int64_t k = 0; k < n; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), less);
  // Runs of equal slices; stable sorting puts each run's first index first.
  std::vector<int64_t> group(n);
  first.clear();
  counts.clear();
  for (int64_t r = 0; r < n; ++r) {
    if (r == 0 || less(order[r - 1], order[r])) {
      first.push_back(order[r]);
      counts.push_back(0);
    }
    group[order[r]] = (int64_t)first.size() - 1;
    ++counts.back();
  }
  int64_t m = (int64_t)first.size();
  std::vector<int64_t> rank(m);
  for (int64_t g = 0; g < m; ++g) rank[g] = g;
  if (!sorted) // by first occurrence
    std::sort(rank.begin(), rank.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  std::vector<int64_t> position(m);
  for (int64_t p = 0; p < m; ++p) position[rank[p]] = p;
  std::vector<int64_t> f(m), c(m);
  for (int64_t p = 0; p < m; ++p) {
    f[p] = first[rank[p]];
    c[p] = counts[rank[p]];
  }
  first = f;
  counts = c;
  inverse.resize(n);
  for (int64_t k = 0; k < n; ++k) inverse[k] = position[group[k]];
  y.resize((size_t)(m * length));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < m; ++p)
      for (int64_t j = 0; j < inner; ++j)
        y[(o * m + p) * inner + j] = x[(o * n + first[p]) * inner + j];
  return m;
}

/// ONNX Reshape of `count` elements to the run-time `shape` (0 copies the
/// input's dim unless `allowzero`, -1 is inferred). Returns an error or null.
const char *cgcReshapeDims(const int64_t *in, int inRank, int64_t count,
                           const int64_t *shape, int rank, bool allowzero,
                           int64_t *out) {
  int64_t known = 1;
  int inferred = -1;
  for (int d = 0; d < rank; ++d) {
    out[d] = shape[d];
    if (shape[d] == 0 && !allowzero) {
      if (d >= inRank) return "a 0 in the shape has no input dim to copy";
      out[d] = in[d];
    }
    if (out[d] == -1) {
      if (inferred >= 0) return "more than one -1 in the shape";
      inferred = d;
      continue;
    }
    if (out[d] < 0) return "a negative dim in the shape";
    known *= out[d];
  }
  if (inferred >= 0) {
    if (known == 0 || count % known) return "the shape does not fit the input";
    out[inferred] = count / known;
    known *= out[inferred];
  }
  if (known != count) return "the shape's element count differs from the input's";
  return nullptr;
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
      auto reshape = dyn_cast<ReshapeOp>(op);
      if (isa<ConstantOp>(op) ||
          (reshape && reshape.getType().hasStaticShape()))
        continue; // weights are uploaded; reshapes are views
      if (reshape)
        status = writeReshape(reshape, depth);
      else if (auto kernel = dyn_cast<KernelOp>(op))
        status = writeKernel(kernel, depth);
      else if (auto branch = dyn_cast<IfOp>(op))
        status = writeIf(branch, depth);
      else if (auto loop = dyn_cast<LoopOp>(op))
        status = writeLoop(loop, depth);
      else if (auto nonzero = dyn_cast<NonZeroOp>(op))
        status = writeNonZero(nonzero, depth);
      else if (auto compress = dyn_cast<CompressOp>(op))
        status = writeCompress(compress, depth);
      else if (auto unique = dyn_cast<UniqueOp>(op))
        status = writeUnique(unique, depth);
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
    auto launches = getEagerLaunches(kernel);
    if (!launches)
      return kernel.emitError("eager kernel without launches (run "
                              "--cgc-lower-to-cgraph first)");
    for (const EagerLaunch &launch : *launches) {
      ArrayRef<int64_t> grid = launch.grid, block = launch.block,
                        args = launch.args;
      SmallVector<std::string> offsets;
      for (int64_t o : args)
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
              std::to_string(kernelIndex.lookup(launch.kernel)) +
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

  /// A data-dependent result may only leave the model: the runtime learns
  /// its shape from set_output_shape, nothing after it could.
  LogicalResult checkOnlyReturned(Operation *op) {
    for (Value result : op->getResults())
      if (!cast<RankedTensorType>(result.getType()).hasStaticShape())
        for (OpOperand &use : result.getUses())
          if (!isa<YieldOp>(use.getOwner()) ||
              use.getOwner()->getParentOp() != eager)
            return op->emitError()
                   << "the result of '" << nodeName(op)
                   << "' is used by another op; the GPU backend only "
                      "returns data-dependent shapes";
    return success();
  }

  /// Reports `rank` dims held in the host array `dims` for every output
  /// that `v` becomes.
  void reportShape(Operation *op, Value v, int64_t rank, StringRef dims,
                   int depth) {
    for (size_t o : outputsOf(v))
      body += pad(depth) + "CGC_EAGER(env->set_output_shape(env->runtime, " +
              std::to_string(o) + ", " + std::to_string(rank) + ", " +
              dims.str() + "), " + what(op, "report the shape") + ");\n";
  }

  /// `dims` of a static shape as an initializer ("{1ll}" for a scalar).
  static std::string dimList(ArrayRef<int64_t> shape) {
    SmallVector<std::string> dims;
    for (int64_t d : shape)
      dims.push_back(std::to_string(d) + "ll");
    if (dims.empty())
      dims.push_back("1ll");
    return "{" + llvm::join(dims, ", ") + "}";
  }

  /// Reshape to a run-time shape: a view of its input (the plan aliases the
  /// buffers); the host reads the shape tensor and reports the dims.
  LogicalResult writeReshape(ReshapeOp op, int depth) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    Value shapeValue = op.getShape();
    if (!shapeValue || !input.hasStaticShape())
      return op.emitError() << "Reshape of " << input << " to "
                            << op.getType()
                            << " is not supported by the GPU backend";
    if (failed(checkOnlyReturned(op)))
      return failure();
    FailureOr<int64_t> shapeAt = offset(shapeValue, op);
    if (failed(shapeAt))
      return failure();
    int64_t rank = op.getType().getRank();
    std::string p = pad(depth);
    body += p + "{ // " + nodeName(op) + "\n" + p + "  int64_t shape[" +
            std::to_string(std::max<int64_t>(1, rank)) + "], dims[" +
            std::to_string(std::max<int64_t>(1, rank)) + "];\n" + p +
            "  CGC_EAGER(env->read(env->runtime, shape, " +
            std::to_string(*shapeAt) + "ull, " + std::to_string(8 * rank) +
            "ull), " + what(op, "read the shape") + ");\n" + p +
            "  const int64_t in[] = " + dimList(input.getShape()) + ";\n" +
            p + "  CGC_EAGER(cgcReshapeDims(in, " +
            std::to_string(input.getRank()) + ", " +
            std::to_string(input.getNumElements()) + "ll, shape, " +
            std::to_string(rank) + ", " +
            (op.getAllowzero() ? "true" : "false") + ", dims), " +
            what(op) + ");\n";
    reportShape(op, op.getResult(), rank, "dims", depth + 1);
    body += p + "}\n";
    return success();
  }

  /// Compress on the host: read the input and the condition, write the kept
  /// slices, report the shape.
  LogicalResult writeCompress(CompressOp op, int depth) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto condition = cast<RankedTensorType>(op.getCondition().getType());
    if (!input.hasStaticShape() || !condition.hasStaticShape())
      return op.emitError() << "Compress of " << input
                            << " is not supported by the GPU backend";
    if (failed(checkOnlyReturned(op)))
      return failure();
    FailureOr<int64_t> in = offset(op.getInput(), op);
    FailureOr<int64_t> cond = offset(op.getCondition(), op);
    FailureOr<int64_t> out = offset(op.getResult(), op);
    if (failed(in) || failed(cond) || failed(out))
      return failure();
    ArrayRef<int64_t> shape = input.getShape();
    int64_t outer = 1, n = input.getNumElements(), inner = 1;
    SmallVector<int64_t> outShape = {n};
    int64_t axis = -1;
    if (std::optional<int64_t> a = op.getAxis()) {
      axis = *a < 0 ? *a + input.getRank() : *a;
      outer = ShapedType::getNumElements(shape.take_front(axis));
      n = shape[axis];
      inner = ShapedType::getNumElements(shape.drop_front(axis + 1));
      outShape.assign(shape.begin(), shape.end());
    }
    int64_t size = std::max<int64_t>(1, input.getElementTypeBitWidth() / 8);
    std::string p = pad(depth);
    body += p + "{ // " + nodeName(op) + "\n" + p +
            "  std::vector<unsigned char> input(" +
            std::to_string(tensorBytes(input)) + "), out;\n" + p +
            "  std::vector<uint8_t> condition(" +
            std::to_string(condition.getNumElements()) + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, input.data(), " +
            std::to_string(*in) + "ull, input.size()), " +
            what(op, "read the input") + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, condition.data(), " +
            std::to_string(*cond) + "ull, condition.size()), " +
            what(op, "read the condition") + ");\n" + p +
            "  int64_t m = cgcCompress(input.data(), condition.data(), " +
            std::to_string(condition.getNumElements()) + "ll, " +
            std::to_string(outer) + "ll, " + std::to_string(n) + "ll, " +
            std::to_string(inner) + "ll, " + std::to_string(size) +
            ", out);\n" + p + "  if (!out.empty())\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " + std::to_string(*out) +
            "ull, out.data(), out.size()), " + what(op, "write the result") +
            ");\n" + p + "  int64_t dims[] = " + dimList(outShape) + ";\n" +
            p + "  dims[" + std::to_string(axis < 0 ? 0 : axis) + "] = m;\n";
    reportShape(op, op.getResult(), outShape.size(), "dims", depth + 1);
    body += p + "}\n";
    return success();
  }

  /// Unique on the host (sorting the slices); the four results are written
  /// and the data-dependent ones report their shapes.
  LogicalResult writeUnique(UniqueOp op, int depth) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    const char *type = hostType(input.getElementType());
    if (!type || !input.hasStaticShape())
      return op.emitError() << "Unique of " << input
                            << " is not supported by the GPU backend";
    if (failed(checkOnlyReturned(op)))
      return failure();
    FailureOr<int64_t> in = offset(op.getInput(), op);
    if (failed(in))
      return failure();
    SmallVector<int64_t> offsets;
    for (Value r : op->getResults()) {
      FailureOr<int64_t> o = offset(r, op);
      if (failed(o))
        return failure();
      offsets.push_back(*o);
    }
    ArrayRef<int64_t> shape = input.getShape();
    int64_t outer = 1, n = input.getNumElements(), inner = 1;
    SmallVector<int64_t> outShape = {n};
    int64_t axis = 0;
    if (std::optional<int64_t> a = op.getAxis()) {
      axis = *a < 0 ? *a + input.getRank() : *a;
      outer = ShapedType::getNumElements(shape.take_front(axis));
      n = shape[axis];
      inner = ShapedType::getNumElements(shape.drop_front(axis + 1));
      outShape.assign(shape.begin(), shape.end());
    }
    std::string p = pad(depth), t = type;
    body += p + "{ // " + nodeName(op) + "\n" + p + "  std::vector<" + t +
            "> input(" + std::to_string(input.getNumElements()) + "), y;\n" +
            p + "  std::vector<int64_t> first, inverse, counts;\n" + p +
            "  CGC_EAGER(env->read(env->runtime, input.data(), " +
            std::to_string(*in) + "ull, input.size() * sizeof(" + t +
            ")), " + what(op, "read the input") + ");\n" + p +
            "  int64_t m = cgcUnique(input.data(), " + std::to_string(outer) +
            "ll, " + std::to_string(n) + "ll, " + std::to_string(inner) +
            "ll, " + (op.getSorted() ? "true" : "false") +
            ", y, first, inverse, counts);\n";
    auto write = [&](unsigned result, StringRef vector) {
      if (op->getResult(result).use_empty())
        return;
      body += p + "  if (!" + vector.str() + ".empty())\n" + p +
              "    CGC_EAGER(env->write(env->runtime, " +
              std::to_string(offsets[result]) + "ull, " + vector.str() +
              ".data(), " + vector.str() + ".size() * sizeof(" +
              vector.str() + "[0])), " + what(op, "write the results") +
              ");\n";
    };
    write(0, "y");
    write(1, "first");
    write(2, "inverse");
    write(3, "counts");
    body += p + "  int64_t dims[] = " + dimList(outShape) + ";\n" + p +
            "  dims[" + std::to_string(axis) + "] = m;\n" + p +
            "  const int64_t count[1] = {m};\n";
    reportShape(op, op.getResult(0), outShape.size(), "dims", depth + 1);
    reportShape(op, op.getResult(1), 1, "count", depth + 1);
    reportShape(op, op.getResult(3), 1, "count", depth + 1);
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

namespace {

/// Collects the graph inputs `v` is computed from, following island, eager
/// region and kernel results to the values they yield.
void graphInputsOf(Value v, llvm::SetVector<BlockArgument> &inputs,
                   llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      inputs.insert(arg);
    return;
  }
  auto result = cast<OpResult>(v);
  Operation *def = result.getOwner();
  if (isa<IslandOp, EagerRegionOp, KernelOp>(def)) {
    Operation *yield = def->getRegion(0).front().getTerminator();
    graphInputsOf(yield->getOperand(result.getResultNumber()), inputs, seen);
    return;
  }
  for (Value operand : def->getOperands())
    graphInputsOf(operand, inputs, seen);
}

/// The values that decide the shape of `v`, a value of data-dependent shape:
/// the shape operands of the op that makes it, else (an op computed on such
/// values) its operands of data-dependent shape.
void shapeSources(Value v, SmallVectorImpl<Value> &sources,
                  llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return;
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return;
  Operation *def = result.getOwner();
  if (isa<IslandOp, EagerRegionOp, KernelOp>(def)) {
    Operation *yield = def->getRegion(0).front().getTerminator();
    shapeSources(yield->getOperand(result.getResultNumber()), sources, seen);
    return;
  }
  if (auto range = dyn_cast<RangeOp>(def)) {
    sources.append({range.getStart(), range.getLimit(), range.getDelta()});
  } else if (auto fill = dyn_cast<ConstantOfShapeOp>(def)) {
    sources.push_back(fill.getShape());
  } else if (isa<DynamicExpandOp>(def)) {
    sources.push_back(def->getOperand(1));
  } else if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    if (Value shape = reshape.getShape())
      sources.push_back(shape);
  } else if (auto loop = dyn_cast<LoopOp>(def)) {
    sources.append({loop.getMaxTripCount(), loop.getInitialCondition()});
  } else {
    for (Value operand : def->getOperands())
      if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
        shapeSources(operand, sources, seen);
  }
}

} // namespace

std::string cgc::unboundedShapeHint(Value output) {
  SmallVector<Value> sources;
  llvm::DenseSet<Value> seen;
  shapeSources(output, sources, seen);
  llvm::SetVector<BlockArgument> inputs;
  llvm::DenseSet<Value> visited;
  for (Value source : sources)
    graphInputsOf(source, inputs, visited);
  if (inputs.empty())
    return "";
  auto func = cast<func::FuncOp>(inputs.front().getOwner()->getParentOp());
  SmallVector<std::string> names, binds;
  for (BlockArgument arg : inputs) {
    auto name = getInputName(func, arg.getArgNumber());
    std::string n = name ? name.str() : "input_" +
                                            std::to_string(arg.getArgNumber());
    names.push_back("'" + n + "'");
    binds.push_back("--bind " + n + "=FILE.pb");
  }
  return "; its shape comes from graph input" +
         std::string(names.size() > 1 ? "s " : " ") + llvm::join(names, ", ") +
         ": fix " + (names.size() > 1 ? "their values" : "its value") +
         " at compile time with " + llvm::join(binds, " ");
}
