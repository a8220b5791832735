//===- Matmul.cpp - matmul and gemm groups --------------------------------===//
//
// A `matmul` group: a matmul or gemm (with a layer norm of its lhs fused
// before it, and elementwise ops after it as the epilogue, per output
// element). f32 products run on the tiled template (Gemm.cpp) except when
// few rows (M <= 8) meet a right operand stored [N, K] (gemm transB): there
// one warp per output element reads a weight row coalesced, once. Other
// element types keep one warp per output element.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "GroupWriter.h"
#include "cgc/Codegen/KernelGen.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"

#include <functional>

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

/// An operand's element expression at (row, column) variables.
using ElementAt = std::function<std::string(StringRef, StringRef)>;

/// The product of a matmul group as the templates read it: C[bt](m, n) =
/// sum_k A(m, k) * B(k, n) over `batch` matrices.
struct MatmulProblem {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  bool transA = false, transB = false;
  /// The gemm's alpha (1 for a matmul).
  double alpha = 1.0;
  /// The C type of the accumulator.
  std::string acc;
  /// Per block (matmul): `aoff` and `boff`, the batch offsets of A and B.
  std::string batchSetup;
  ElementAt aAt, bAt;
  /// The value stored for an accumulated product (alpha, beta * C).
  std::function<std::string(StringRef)> cTermOf;
  /// With a fused layer norm: the raw lhs at (gm, gk) and the epsilon.
  std::string lnStats;
  double lnEpsilon = 0;
};

/// gemm: A [M, K] or [K, M] (transA), B [K, N] or [N, K] (transB), and
/// alpha * A x B + beta * C.
void describeGemm(GroupWriter &w, GemmOp gemm, Value out, MatmulProblem &mp) {
  ArrayRef<int64_t> outShape = shapeOf(out), a = shapeOf(gemm.getA());
  const bool transA = gemm.getTransA(), transB = gemm.getTransB();
  mp.m = outShape[0];
  mp.n = outShape[1];
  mp.k = transA ? a[0] : a[1];
  mp.transA = transA;
  mp.transB = transB;
  mp.alpha = gemm.getAlpha().convertToDouble();
  std::string pa = w.inputParam(gemm.getA()), pb = w.inputParam(gemm.getB());
  std::string ms = ll(mp.m), ks = ll(mp.k), ns = ll(mp.n);
  mp.aAt = [=](StringRef r, StringRef c) {
    return transA ? pa + "[" + c.str() + " * " + ms + " + " + r.str() + "]"
                  : pa + "[" + r.str() + " * " + ks + " + " + c.str() + "]";
  };
  mp.bAt = [=](StringRef r, StringRef c) {
    return transB ? pb + "[" + c.str() + " * " + ks + " + " + r.str() + "]"
                  : pb + "[" + r.str() + " * " + ns + " + " + c.str() + "]";
  };
  std::string alpha = literal(mp.alpha, elementType(out));
  std::string cLoad, beta;
  if (Value c = gemm.getC()) {
    cLoad = w.load(c, outShape, "w");
    beta = literal(gemm.getBeta().convertToDouble(), elementType(out));
  }
  const std::string acc = mp.acc;
  mp.cTermOf = [=](StringRef v) {
    std::string r = "(" + acc + ")" + alpha + " * " + v.str();
    if (!cLoad.empty())
      r += " + (" + acc + ")" + beta + " * (" + acc + ")" + cLoad;
    return r;
  };
}

/// `aoff` or `boff`: the offset of the operand's matrix for batch index
/// `bt` of the output's `batch` dims, with broadcasting (coordinate d of
/// the output batch maps to the operand's batch dim when it is not 1).
std::string batchOffset(ArrayRef<int64_t> batch, ArrayRef<int64_t> operand,
                        int64_t matrix) {
  ArrayRef<int64_t> ob = operand.drop_back(2);
  SmallVector<std::string> terms;
  int64_t stride = matrix, outStride = 1;
  for (int64_t d = batch.size() - 1; d >= 0; --d) {
    int64_t j = d - (int64_t)(batch.size() - ob.size());
    if (j >= 0 && ob[j] != 1)
      terms.push_back("((bt / " + std::to_string(outStride) + "ll) % " +
                      std::to_string(batch[d]) + "ll) * " +
                      std::to_string(stride) + "ll");
    if (j >= 0)
      stride *= ob[j];
    outStride *= batch[d];
  }
  return terms.empty() ? std::string("0ll") : llvm::join(terms, " + ");
}

/// matmul with numpy broadcasting of the batch dims (the lhs read through
/// a fused layer norm's input when `ln` is set).
void describeMatMul(GroupWriter &w, MatMulOp matmul, LayerNormOp ln,
                    ArrayRef<int64_t> outShape, MatmulProblem &mp) {
  SmallVector<int64_t> a(shapeOf(matmul.getLhs())), b(shapeOf(matmul.getRhs()));
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  mp.m = a[a.size() - 2];
  mp.k = a.back();
  mp.n = b.back();
  ArrayRef<int64_t> batch =
      outShape.drop_back((shapeOf(matmul.getLhs()).size() > 1) +
                         (shapeOf(matmul.getRhs()).size() > 1));
  mp.batch = numElements(batch);
  std::string pa = w.inputParam(ln ? ln.getInput() : matmul.getLhs()),
              pb = w.inputParam(matmul.getRhs());
  mp.batchSetup = "  const long long aoff = " +
                  batchOffset(batch, a, mp.m * mp.k) +
                  ", boff = " + batchOffset(batch, b, mp.k * mp.n) + ";\n";
  std::string ks = ll(mp.k), ns = ll(mp.n);
  mp.aAt = [=](StringRef r, StringRef c) {
    return pa + "[aoff + " + r.str() + " * " + ks + " + " + c.str() + "]";
  };
  mp.bAt = [=](StringRef r, StringRef c) {
    return pb + "[boff + " + r.str() + " * " + ns + " + " + c.str() + "]";
  };
  mp.cTermOf = [](StringRef v) { return v.str(); };
  // A weight without batch dims against a batched lhs that broadcasts
  // nothing: one matrix of batch x M rows (bigger tiles, fewer edges).
  if (b.size() == 2 &&
      numElements(ArrayRef<int64_t>(a).drop_back(2)) == mp.batch &&
      mp.acc == "float") {
    mp.m *= mp.batch;
    mp.batch = 1;
    mp.batchSetup = "  const long long aoff = 0ll, boff = 0ll;\n";
  }
}

/// A layer norm fused before the matmul (the fuse pass): A is normalized
/// as it is loaded, from row statistics the tiled template computes first.
LogicalResult foldLayerNorm(GroupWriter &w, LayerNormOp ln, MatmulProblem &mp) {
  // The fuse pass admits only f32 row norms over K with [K] scale and
  // bias before a matmul with more than 8 rows: the tiled template.
  if (mp.acc != "float" || mp.m <= 8 || mp.batch != 1)
    return ln->emitError("layer norm fused into a matmul it cannot lead");
  std::string raw = mp.aAt("gm", "gk");
  std::string scale = w.inputParam(ln.getScale());
  std::string bias = ln.getBias() ? w.inputParam(ln.getBias()) : "";
  mp.aAt = [=](StringRef r, StringRef c) {
    std::string e = "(((float)" + raw +
                    " - cgcMean[gm - tm0]) * "
                    "cgcRstd[gm - tm0] * (float)" +
                    scale + "[" + c.str() + "]";
    if (!bias.empty())
      e += " + (float)" + bias + "[" + c.str() + "]";
    return e + ")";
  };
  mp.lnStats = raw;
  mp.lnEpsilon = ln.getEpsilon().convertToDouble();
  return success();
}


/// One warp per output element: the lanes split K, a shuffle reduction
/// sums them, lane 0 runs the epilogue.
LogicalResult writeWarpPerOutput(GroupWriter &w, ArrayRef<Operation *> ops,
                                 const MatmulProblem &mp) {
  Operation *anchor = ops.front();
  Value out = anchor->getResult(0);
  std::string t = cType(elementType(out));
  ArrayRef<int64_t> outShape = shapeOf(out);
  int64_t total = numElements(outShape);
  const int64_t m = mp.m, n = mp.n, k = mp.k;
  const bool transA = mp.transA, transB = mp.transB;
  const std::string &acc = mp.acc, &batchSetup = mp.batchSetup;
  const ElementAt &aAt = mp.aAt, &bAt = mp.bAt;
  const auto &cTermOf = mp.cTermOf;
  std::string code;
  if (isa<GemmOp>(anchor))
    code += "  const long long m = w / " + std::to_string(n) + "ll, n = w % " +
            std::to_string(n) + "ll;\n";
  else
    code += "  const long long bt = w / " + std::to_string(m * n) +
            "ll, m = (w / " + std::to_string(n) + "ll) % " + std::to_string(m) +
            "ll, n = w % " + std::to_string(n) + "ll;\n" + batchSetup;
  // A weight row read 4 floats a lane at a time (all of a row's loads in
  // flight at once): the config asks for it where both rows are contiguous
  // and aligned.
  bool vec = w.config.getVectorWidth() == 4;
  if (vec && !(acc == "float" && transB && !transA && k % 4 == 0 &&
               isa<GemmOp>(anchor) &&
               plannedFloat4Loadable(storedOperand(anchor->getOperand(0))) &&
               plannedFloat4Loadable(storedOperand(anchor->getOperand(1)))))
    return w.kernel.emitError(
        "kernel config asks for 4-float loads a lane, but the operands are "
        "not contiguous 16-byte-aligned float32 rows of a multiple of 4");
  auto f4 = [](const std::string &e) {
    return "*reinterpret_cast<const float4 *>(&" + e + ")";
  };
  std::string loop =
      vec ? "#pragma unroll\n  for (long long kk = lane * 4; kk < " +
                std::to_string(k) + "ll; kk += 128) {\n    const float4 av = " +
                f4(aAt("m", "kk")) + ", bv = " + f4(bAt("kk", "n")) +
                ";\n    acc = fmaf(av.x, bv.x, acc); acc = fmaf(av.y, bv.y, "
                "acc); acc = fmaf(av.z, bv.z, acc); acc = fmaf(av.w, bv.w, "
                "acc);\n  }\n"
          : "  for (long long kk = lane; kk < " + std::to_string(k) +
                "ll; kk += 32)\n    acc += (" + acc + ")" + aAt("m", "kk") +
                " * (" + acc + ")" + bAt("kk", "n") + ";\n";
  std::string text =
      "  const long long w = ((long long)blockIdx.x * blockDim.x + "
      "threadIdx.x) >> 5;\n  const int lane = threadIdx.x & 31;\n  if (w >= " +
      std::to_string(total) + "ll) return;\n" + code + "  " + acc +
      " acc = 0;\n" + loop +
      "  for (int o = 16; o > 0; o >>= 1)\n    acc += "
      "__shfl_down_sync(0xffffffffu, acc, o);\n  if (lane != 0) return;\n  "
      "{\n    const " +
      t + " v0 = (" + t + ")(" + cTermOf("acc") + ");\n";
  w.vars[out] = "v0";
  if (failed(w.writeElements(ops.drop_front(), outShape, "w", text)))
    return failure();
  const int64_t threads = w.config.getThreads(), warpsPerBlock = threads / 32;
  w.launches.push_back(Launch{
      text + "  }\n",
      {std::max<int64_t>(1, (total + warpsPerBlock - 1) / warpsPerBlock), 1, 1},
      {threads, 1, 1}});
  return success();
}

/// The tiled template for an f32 matmul/gemm group: the output element
/// (bt, gm, gn) has the flat index w = (bt * M + gm) * N + gn.
LogicalResult writeTiledMatmul(GroupWriter &w, ArrayRef<Operation *> ops,
                               const MatmulProblem &mp) {
  const int64_t m = mp.m, n = mp.n, k = mp.k, batch = mp.batch;
  const bool transA = mp.transA, transB = mp.transB;
  const double alpha = mp.alpha;
  const std::string &batchSetup = mp.batchSetup;
  const ElementAt &aAt = mp.aAt, &bAt = mp.bAt;
  const auto &cTermOf = mp.cTermOf;
  Value out = ops.front()->getResult(0);
  std::string t = cType(elementType(out));
  GemmProblem p;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  p.blockSetup = batchSetup;
  p.loadA = aAt("gm", "gk");
  p.loadB = bAt("gk", "gn");
  p.aContiguousK = !transA;
  p.bContiguousN = !transB;
  // Vector loads where the contiguous dim is a multiple of 4 and the
  // operand a 16-byte-aligned float32 buffer (batch offsets are then
  // aligned too).
  Operation *anchor = ops.front();
  Value a = storedOperand(anchor->getOperand(0)),
        b = storedOperand(anchor->getOperand(1));
  p.aVec4 = (transA ? m : k) % 4 == 0 && plannedFloat4Loadable(a) &&
            shapeOf(a).size() >= 2 && mp.lnStats.empty();
  p.rowStatsInput = mp.lnStats;
  p.rowStatsEpsilon = mp.lnEpsilon;
  p.bVec4 = (transB ? k : n) % 4 == 0 && plannedFloat4Loadable(b) &&
            shapeOf(b).size() >= 2;
  // Operands stored in the tensor-core operand type (--cgc-narrow-storage)
  // may be copied as they are, 8 values at a time.
  Type operand = w.config.getOperand();
  p.aHalf8 = (transA ? m : k) % 8 == 0 &&
             planned16BitVector8Loadable(a, operand) &&
             shapeOf(a).size() >= 2 && mp.lnStats.empty();
  p.bHalf8 = (transB ? k : n) % 8 == 0 &&
             planned16BitVector8Loadable(b, operand) && shapeOf(b).size() >= 2;
  std::string text = "      const long long w = (bt * " + ll(m) + " + gm) * " +
                     ll(n) + " + gn;\n      {\n    const " + t + " v0 = (" + t +
                     ")(" + cTermOf("cgc_v") + ");\n";
  w.vars[out] = "v0";
  if (failed(w.writeElements(ops.drop_front(), shapeOf(out), "w", text)))
    return failure();
  p.epilogue = text + "      }\n";
  // K may be split across blocks when the stored value is the product plus
  // terms that do not depend on it (bias, residual, beta * C): those are
  // stored first, the blocks' partial products added atomically. (Not in
  // a deterministic config: atomic additions of the blocks' partial sums
  // land in a varying order, so the last bits vary run to run.)
  if (Value stored = w.kernel.getLinearEpilogueResult();
      stored && elementType(stored).isF32() && !w.config.getDeterministic()) {
    p.splittable = true;
    p.init = p.epilogue;
    p.accumulate =
        "      atomicAdd(" + w.output(stored) + " + ((bt * " + ll(m) +
        " + gm) * " + ll(n) + " + gn), " +
        (alpha == 1.0 ? std::string("") : doubleLiteral(alpha) + "f * ") +
        "cgc_v);\n";
  }
  FailureOr<SmallVector<Launch>> launches =
      writeGemm(p, w.config, w.kernel);
  if (failed(launches))
    return failure();
  for (Launch &launch : *launches)
    w.launches.push_back(std::move(launch));
  return success();
}

} // namespace

LogicalResult writeMatmulGroup(GroupWriter &w, ArrayRef<Operation *> ops) {
  // A layer norm fused before the matmul (the fuse pass): its input and
  // parameters are read instead of the normalized lhs.
  LayerNormOp ln = dyn_cast<LayerNormOp>(ops.front());
  if (ln)
    ops = ops.drop_front();
  Operation *anchor = ops.front();
  Value out = anchor->getResult(0);
  if (failed(w.checkType(out, anchor)))
    return failure();
  MatmulProblem mp;
  mp.acc = accType(w.config.getAccumulator());
  if (auto gemm = dyn_cast<GemmOp>(anchor))
    describeGemm(w, gemm, out, mp);
  else
    describeMatMul(w, cast<MatMulOp>(anchor), ln, shapeOf(out), mp);
  if (ln && failed(foldLayerNorm(w, ln, mp)))
    return failure();
  if (w.config.getStrategy() == KernelStrategy::warp_dot)
    return writeWarpPerOutput(w, ops, mp);
  // The tiled template accumulates in float.
  if (mp.acc != "float")
    return w.kernel.emitError("kernel config asks for the tiled GEMM "
                              "template, which accumulates in f32, for a "
                              "product accumulated in ")
           << w.config.getAccumulator();
  return writeTiledMatmul(w, ops, mp);
}

LogicalResult writeLibraryMatmulEpilogue(GroupWriter &w,
                                         ArrayRef<Operation *> ops) {
  std::string reason;
  FailureOr<LibraryMatmul> library = describeLibraryMatmul(w.kernel, reason);
  if (failed(library))
    return w.kernel.emitError("cuBLASLt cannot compute '")
           << w.kernel.getName() << "': " << reason;
  return writeInPlaceEpilogue(w, library->d, library->epilogue);
}

} // namespace codegen
} // namespace cgc
