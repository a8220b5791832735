//===- EagerRegions.cpp - host code for eager regions ---------------------===//

#include "EagerRegions.h"

#include "cgc/Codegen/CType.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

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

/// Whether box `a` overlaps box `b` by an IoU above `threshold` (corners in
/// any order, or centre and size), as ONNX's reference computes it in T.
template <typename T>
bool cgcSuppresses(const T *a, const T *b, bool centre, T threshold) {
  T lo[2][2], hi[2][2]; // [box][x or y]
  const T *box[2] = {a, b};
  for (int k = 0; k < 2; ++k)
    for (int axis = 0; axis < 2; ++axis) { // x: corners 1, 3 or centre 0
      int first = axis == 0 ? 1 : 0, second = first + 2, mid = axis;
      if (centre) {
        lo[k][axis] = box[k][mid] - box[k][mid + 2] / 2;
        hi[k][axis] = box[k][mid] + box[k][mid + 2] / 2;
      } else {
        lo[k][axis] = std::min(box[k][first], box[k][second]);
        hi[k][axis] = std::max(box[k][first], box[k][second]);
      }
    }
  T ix0 = std::max(lo[0][0], lo[1][0]), ix1 = std::min(hi[0][0], hi[1][0]);
  T iy0 = std::max(lo[0][1], lo[1][1]), iy1 = std::min(hi[0][1], hi[1][1]);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  T intersection = (ix1 - ix0) * (iy1 - iy0);
  T areaA = (hi[0][0] - lo[0][0]) * (hi[0][1] - lo[0][1]);
  T areaB = (hi[1][0] - lo[1][0]) * (hi[1][1] - lo[1][1]);
  T unionArea = areaA + areaB - intersection;
  if (intersection <= 0 || areaA <= 0 || areaB <= 0 || unionArea <= 0)
    return false;
  return intersection / unionArea > threshold;
}

/// ONNX NonMaxSuppression per batch and class: the kept (batch, class, box)
/// rows in `out`, in the order they are kept. Returns their count.
template <typename T>
int64_t cgcNonMaxSuppression(const T *boxes, const T *scores, int64_t batches,
                             int64_t classes, int64_t count, int64_t maxPerClass,
                             T iou, bool thresholdGiven, T scoreThreshold,
                             bool centre, std::vector<int64_t> &out) {
  out.clear();
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      std::vector<std::pair<T, int64_t>> candidates;
      for (int64_t i = 0; i < count; ++i) {
        T score = scores[(b * classes + c) * count + i];
        if (!thresholdGiven || score > scoreThreshold)
          candidates.push_back({score, i});
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const std::pair<T, int64_t> &x,
                          const std::pair<T, int64_t> &y) {
                         return x.first > y.first;
                       });
      std::vector<int64_t> kept;
      for (const auto &candidate : candidates) {
        if ((int64_t)kept.size() >= maxPerClass)
          break;
        const T *box = boxes + (b * count + candidate.second) * 4;
        bool suppressed = false;
        for (int64_t k : kept)
          suppressed = suppressed ||
                       cgcSuppresses(box, boxes + (b * count + k) * 4, centre, iou);
        if (suppressed)
          continue;
        kept.push_back(candidate.second);
        out.insert(out.end(), {b, c, candidate.second});
      }
    }
  return (int64_t)out.size() / 3;
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

std::string cString(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// The C type of a host element (the verifier admits no others): the
/// kernels' type, except that host code holds i1 as bytes.
std::string hostType(Type t) {
  if (t.isInteger(1))
    return "uint8_t";
  return codegen::cType(t);
}

std::string ull(int64_t v) { return std::to_string(v) + "ull"; }
std::string ll(int64_t v) { return std::to_string(v) + "ll"; }

/// `dims` of a static shape as an initializer ("{1ll}" for a scalar).
std::string dimList(ArrayRef<int64_t> shape) {
  SmallVector<std::string> dims;
  for (int64_t d : shape)
    dims.push_back(ll(d));
  if (dims.empty())
    dims.push_back("1ll");
  return "{" + llvm::join(dims, ", ") + "}";
}

/// Prints the host function of one eager step: each host op of the step
/// becomes the C++ that does it, nested like the ops.
class RunnerWriter {
public:
  RunnerWriter(cgraph::EagerOp eager, KernelIndexFn kernelIndex)
      : eager(eager), kernelIndex(kernelIndex) {}

  std::string run(llvm::raw_ostream &os) {
    std::string runner = "run_" + eager.getName().str();
    for (char &c : runner)
      if (!llvm::isAlnum(c))
        c = '_';
    os << "const char *" << runner << "(const cgrt_eager_env *env) {\n";
    writeBlock(eager.getBody().front(), 1);
    os << body << "  return nullptr;\n}\n\n";
    return runner;
  }

private:
  std::string pad(int depth) { return std::string(2 * depth, ' '); }

  std::string what(StringRef label, StringRef action = "") {
    std::string text = eager.getName().str() + ": " + label.str();
    if (!action.empty())
      text += " (" + action.str() + ")";
    return cString(text);
  }

  void writeBlock(Block &block, int depth) {
    for (Operation &op : block)
      llvm::TypeSwitch<Operation *>(&op)
          .Case([&](cgraph::LaunchOp o) { writeLaunch(o, depth); })
          .Case([&](cgraph::HostCopyOp o) { writeCopy(o, depth); })
          .Case([&](cgraph::HostIfOp o) { writeIf(o, depth); })
          .Case([&](cgraph::HostLoopOp o) { writeLoop(o, depth); })
          .Case([&](cgraph::HostNonZeroOp o) { writeNonZero(o, depth); })
          .Case([&](cgraph::HostCompressOp o) { writeCompress(o, depth); })
          .Case([&](cgraph::HostUniqueOp o) { writeUnique(o, depth); })
          .Case([&](cgraph::HostNonMaxSuppressionOp o) {
            writeNonMaxSuppression(o, depth);
          })
          .Case([&](cgraph::HostReshapeOp o) { writeReshape(o, depth); });
  }

  void writeCopy(cgraph::HostCopyOp op, int depth) {
    body += pad(depth) + "CGC_EAGER(env->copy(env->runtime, " +
            ull(op.getDst()) + ", " + ull(op.getSrc()) + ", " +
            ull(op.getBytes()) + "), " + what(op.getLabel(), "copy") + ");\n";
  }

  void writeLaunch(cgraph::LaunchOp op, int depth) {
    ArrayRef<int64_t> grid = op.getGrid(), block = op.getBlock();
    SmallVector<std::string> offsets;
    for (int64_t o : op.getArgs())
      offsets.push_back(ull(o));
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
            std::to_string(kernelIndex(op.getKernelAttr())) +
            ", grid, block, args, " + std::to_string(op.getArgs().size()) +
            "), " +
            cString(eager.getName().str() + ": kernel " +
                    op.getLabel().str()) +
            ");\n" + p + "}\n";
  }

  void writeIf(cgraph::HostIfOp op, int depth) {
    std::string p = pad(depth);
    body += p + "{ // " + op.getLabel().str() + "\n" + p +
            "  uint8_t cond = 0;\n" + p +
            "  CGC_EAGER(env->read(env->runtime, &cond, " +
            ull(op.getCondition()) + ", 1), " +
            what(op.getLabel(), "read the condition") + ");\n" + p +
            "  if (cond) {\n";
    writeBlock(op.getThenBody().front(), depth + 2);
    body += p + "  } else {\n";
    writeBlock(op.getElseBody().front(), depth + 2);
    body += p + "  }\n" + p + "}\n";
  }

  void writeLoop(cgraph::HostLoopOp op, int depth) {
    std::string p = pad(depth);
    StringRef label = op.getLabel();
    body += p + "{ // " + label.str() + "\n" + p + "  int64_t trips = 0;\n" +
            p + "  uint8_t cond = 0;\n" + p +
            "  CGC_EAGER(env->read(env->runtime, &trips, " +
            ull(op.getMaxTrips()) + ", 8), " +
            what(label, "read the trip count") + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, &cond, " +
            ull(op.getCondition()) + ", 1), " +
            what(label, "read the condition") + ");\n";
    writeBlock(op.getInit().front(), depth + 1);
    body += p + "  for (int64_t i = 0; i < trips && cond; ++i) {\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " +
            ull(op.getIteration()) + ", &i, 8), " +
            what(label, "write the iteration") + ");\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " +
            ull(op.getConditionArg()) + ", &cond, 1), " +
            what(label, "write the condition") + ");\n";
    writeBlock(op.getBody().front(), depth + 2);
    body += p + "    CGC_EAGER(env->read(env->runtime, &cond, " +
            ull(op.getConditionOut()) + ", 1), " +
            what(label, "read the condition") + ");\n" + p + "  }\n";
    writeBlock(op.getExit().front(), depth + 1);
    body += p + "}\n";
  }

  /// Reports `rank` dims held in the host array `dims` for every output in
  /// `outputs`.
  void reportShape(StringRef label, ArrayRef<int64_t> outputs, int64_t rank,
                   StringRef dims, int depth) {
    for (int64_t o : outputs)
      body += pad(depth) + "CGC_EAGER(env->set_output_shape(env->runtime, " +
              std::to_string(o) + ", " + std::to_string(rank) + ", " +
              dims.str() + "), " + what(label, "report the shape") + ");\n";
  }

  void writeNonZero(cgraph::HostNonZeroOp op, int depth) {
    std::string p = pad(depth), type = hostType(op.getElementType());
    StringRef label = op.getLabel();
    ArrayRef<int64_t> shape = op.getShape();
    int64_t count = ShapedType::getNumElements(shape);
    int64_t rank = shape.size();
    body += p + "{ // " + label.str() + "\n" + p + "  std::vector<" + type +
            "> input(" + std::to_string(count) + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, input.data(), " +
            ull(op.getInput()) + ", " + ull(count) + " * sizeof(" + type +
            ")), " + what(label, "read the input") + ");\n" + p +
            "  const int64_t dims[] = " + dimList(shape) + ";\n" + p +
            "  std::vector<int64_t> indices;\n" + p +
            "  int64_t n = cgcNonZero(input.data(), dims, " +
            std::to_string(rank) + ", " + ll(count) + ", indices);\n" + p +
            "  if (!indices.empty())\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " + ull(op.getOutput()) +
            ", indices.data(), indices.size() * 8), " +
            what(label, "write the indices") + ");\n" + p +
            "  const int64_t shape[2] = {" +
            ll(std::max<int64_t>(1, rank)) + ", n};\n";
    reportShape(label, op.getShapeOutputs(), 2, "shape", depth + 1);
    body += p + "}\n";
  }

  void writeReshape(cgraph::HostReshapeOp op, int depth) {
    std::string p = pad(depth);
    StringRef label = op.getLabel();
    ArrayRef<int64_t> input = op.getInputShape();
    int64_t rank = op.getRank();
    std::string slots = std::to_string(std::max<int64_t>(1, rank));
    body += p + "{ // " + label.str() + "\n" + p + "  int64_t shape[" +
            slots + "], dims[" + slots + "];\n" + p +
            "  CGC_EAGER(env->read(env->runtime, shape, " +
            ull(op.getShape()) + ", " + ull(8 * rank) + "), " +
            what(label, "read the shape") + ");\n" + p +
            "  const int64_t in[] = " + dimList(input) + ";\n" + p +
            "  CGC_EAGER(cgcReshapeDims(in, " + std::to_string(input.size()) +
            ", " + ll(ShapedType::getNumElements(input)) + ", shape, " +
            std::to_string(rank) + ", " +
            (op.getAllowzero() ? "true" : "false") + ", dims), " +
            what(label) + ");\n";
    reportShape(label, op.getShapeOutputs(), rank, "dims", depth + 1);
    body += p + "}\n";
  }

  void writeCompress(cgraph::HostCompressOp op, int depth) {
    std::string p = pad(depth);
    StringRef label = op.getLabel();
    ArrayRef<int64_t> resultShape = op.getResultShape();
    body += p + "{ // " + label.str() + "\n" + p +
            "  std::vector<unsigned char> input(" +
            std::to_string(op.getInputBytes()) + "), out;\n" + p +
            "  std::vector<uint8_t> condition(" +
            std::to_string(op.getConditions()) + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, input.data(), " +
            ull(op.getInput()) + ", input.size()), " +
            what(label, "read the input") + ");\n" + p +
            "  CGC_EAGER(env->read(env->runtime, condition.data(), " +
            ull(op.getCondition()) + ", condition.size()), " +
            what(label, "read the condition") + ");\n" + p +
            "  int64_t m = cgcCompress(input.data(), condition.data(), " +
            ll(op.getConditions()) + ", " + ll(op.getOuter()) + ", " +
            ll(op.getCount()) + ", " + ll(op.getInner()) + ", " +
            std::to_string(op.getElementBytes()) + ", out);\n" + p +
            "  if (!out.empty())\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " + ull(op.getOutput()) +
            ", out.data(), out.size()), " + what(label, "write the result") +
            ");\n" + p + "  int64_t dims[] = " + dimList(resultShape) +
            ";\n" + p + "  dims[" + std::to_string(op.getAxis()) +
            "] = m;\n";
    reportShape(label, op.getShapeOutputs(), resultShape.size(), "dims",
                depth + 1);
    body += p + "}\n";
  }

  void writeUnique(cgraph::HostUniqueOp op, int depth) {
    std::string p = pad(depth), t = hostType(op.getElementType());
    StringRef label = op.getLabel();
    ArrayRef<int64_t> resultShape = op.getResultShape();
    int64_t count = op.getOuter() * op.getCount() * op.getInner();
    body += p + "{ // " + label.str() + "\n" + p + "  std::vector<" + t +
            "> input(" + std::to_string(count) + "), y;\n" + p +
            "  std::vector<int64_t> first, inverse, counts;\n" + p +
            "  CGC_EAGER(env->read(env->runtime, input.data(), " +
            ull(op.getInput()) + ", input.size() * sizeof(" + t + ")), " +
            what(label, "read the input") + ");\n" + p +
            "  int64_t m = cgcUnique(input.data(), " + ll(op.getOuter()) +
            ", " + ll(op.getCount()) + ", " + ll(op.getInner()) + ", " +
            (op.getSorted() ? "true" : "false") +
            ", y, first, inverse, counts);\n";
    const char *vectors[] = {"y", "first", "inverse", "counts"};
    for (auto [offset, vector] : llvm::zip(op.getResults(), vectors)) {
      if (offset < 0)
        continue; // nothing uses it
      std::string v = vector;
      body += p + "  if (!" + v + ".empty())\n" + p +
              "    CGC_EAGER(env->write(env->runtime, " + ull(offset) + ", " +
              v + ".data(), " + v + ".size() * sizeof(" + v + "[0])), " +
              what(label, "write the results") + ");\n";
    }
    body += p + "  int64_t dims[] = " + dimList(resultShape) + ";\n" + p +
            "  dims[" + std::to_string(op.getAxis()) + "] = m;\n" + p +
            "  const int64_t count[1] = {m};\n";
    reportShape(label, op.getShapeOutputs(), resultShape.size(), "dims",
                depth + 1);
    reportShape(label, op.getCountOutputs(), 1, "count", depth + 1);
    body += p + "}\n";
  }

  void writeNonMaxSuppression(cgraph::HostNonMaxSuppressionOp op, int depth) {
    std::string p = pad(depth), t = hostType(op.getElementType());
    StringRef label = op.getLabel();
    int64_t boxCount = op.getBatches() * op.getCount() * 4;
    int64_t scoreCount = op.getBatches() * op.getClasses() * op.getCount();
    auto read = [&](StringRef var, int64_t offset, const std::string &bytes,
                    StringRef action) {
      return p + "  CGC_EAGER(env->read(env->runtime, " + var.str() + ", " +
             ull(offset) + ", " + bytes + "), " + what(label, action) +
             ");\n";
    };
    body += p + "{ // " + label.str() + "\n" + p + "  std::vector<" + t +
            "> boxes(" + std::to_string(std::max<int64_t>(1, boxCount)) +
            "), scores(" + std::to_string(std::max<int64_t>(1, scoreCount)) +
            ");\n" + p + "  int64_t maxPerClass = 0;\n" + p + "  " + t +
            " iou = 0, scoreThreshold = 0;\n" +
            read("boxes.data()", op.getBoxes(),
                 ull(boxCount) + " * sizeof(" + t + ")", "read the boxes") +
            read("scores.data()", op.getScores(),
                 ull(scoreCount) + " * sizeof(" + t + ")", "read the scores") +
            read("&maxPerClass", op.getMaxOutput(), "8",
                 "read max_output_boxes_per_class") +
            read("&iou", op.getIouThreshold(), "sizeof(" + t + ")",
                 "read iou_threshold") +
            read("&scoreThreshold", op.getScoreThreshold(),
                 "sizeof(" + t + ")", "read score_threshold") +
            p + "  std::vector<int64_t> rows;\n" + p +
            "  int64_t n = cgcNonMaxSuppression(boxes.data(), scores.data(), " +
            ll(op.getBatches()) + ", " + ll(op.getClasses()) + ", " +
            ll(op.getCount()) + ", maxPerClass, iou, " +
            (op.getScoreThresholdGiven() ? "true" : "false") +
            ", scoreThreshold, " +
            (op.getCenterPointBox() ? "true" : "false") + ", rows);\n" + p +
            "  if (!rows.empty())\n" + p +
            "    CGC_EAGER(env->write(env->runtime, " + ull(op.getOutput()) +
            ", rows.data(), rows.size() * 8), " +
            what(label, "write the indices") + ");\n" + p +
            "  const int64_t shape[2] = {n, 3};\n";
    reportShape(label, op.getShapeOutputs(), 2, "shape", depth + 1);
    body += p + "}\n";
  }

  cgraph::EagerOp eager;
  KernelIndexFn kernelIndex;
  std::string body;
};

} // namespace

std::string cgc::emitEagerRunner(cgraph::EagerOp eager,
                                 KernelIndexFn kernelIndex,
                                 llvm::raw_ostream &os) {
  return RunnerWriter(eager, kernelIndex).run(os);
}
