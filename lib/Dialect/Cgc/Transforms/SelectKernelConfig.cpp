//===- SelectKernelConfig.cpp - how every fused kernel is generated -------===//
//
// Every decision the kernel writers used to make while printing CUDA is made
// here, once, from the kernel's shapes, the buffer plan and the module's
// target, and recorded as a #cgc.kernel_config on the kernel: the template,
// the GEMM tile (by a cost model of the target), cp.async pipelining,
// split-K, launch bounds, the attention block. `cgc --emit=kernels` prints
// them; a test may write one by hand, and it is kept.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/Analysis/TuningCache.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <cstdio>

namespace cgc {
#define GEN_PASS_DEF_CGCSELECTKERNELCONFIG
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Clocks from issuing a K slice's global loads to their use, in every GEMM
/// cost model (measured on the H200; the models only compare tiles, so one
/// figure serves every GPU).
constexpr double kLatency = 700;

int64_t pow2Ceil(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Floats accumulate in f32 (f16/bf16 are storage types), f64 in f64,
/// integers in i64.
Type accumulatorTypeOf(Type element) {
  MLIRContext *context = element.getContext();
  if (element.isF32() || element.isF16() || element.isBF16())
    return Float32Type::get(context);
  if (element.isF64())
    return element;
  return IntegerType::get(context, 64);
}

/// A GEMM as the tiled template sees it, with what the tile choice depends
/// on: C[batch][m][n] += A(m, k) B(k, n).
struct GemmShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  /// Only the product plus terms independent of it is stored (K may be
  /// split across blocks).
  bool splittable = false;
  /// Both operands are plain 16-byte-aligned arrays read 4 at a time along
  /// a contiguous dim of a multiple of 4 (the cp.async loop needs that).
  bool asyncCopies = false;
  /// Both operands are f32 (the tensor-core cp.async loop stages f32).
  bool f32Operands = false;
  /// Both operands are stored in the product's 16-bit precision, plain
  /// 16-byte-aligned arrays copied 8 values at a time, A along K (the
  /// tensor-core cp.async loop then stages them as they are).
  bool halfAsyncCopies = false;
};

/// A matmul group: the tiled template, or one warp per output element.
struct MatmulShape {
  GemmShape gemm;
  bool tiled = false;
  /// Warp path: a lane reads 4 floats of both rows at a time.
  bool warpVector4 = false;
};

int64_t reductionBlockThreads(Operation *op);

/// What a config says beyond its strategy, each field at its ODS default
/// unless a template needs it.
struct ConfigFields {
  SmallVector<int64_t> blockTile, threadTile;
  int64_t slices = 1, stages = 1;
  bool asyncCopy = false;
  int64_t splitK = 1, minBlocks = 1, vectorWidth = 1;
  /// Set: the tensor-core template, rounding the product's inputs to this.
  Type operand;
};

/// The forced tile of `gemm-tile=BMxBNxTMxTN[/SPLIT]`: a tile of the FMA
/// template (TM x TN a thread) for f32 products, of the tensor-core
/// template (WM x WN a warp) for products given a precision.
struct ForcedTile {
  std::optional<GemmTileShape> shape;
  std::optional<TensorCoreTileShape> tensorCoreShape;
  int64_t splitK = 1;
  /// Listing tuning candidates: no warning per kernel, and an FMA tile may
  /// serve a product that has a precision (measured against its
  /// tensor-core tiles).
  bool candidate = false;
};

/// The pass's `cublaslt` option.
enum class LibraryPolicy { Auto, Always, Never };

/// The pass's `norm-rows`: which norm kernels take a warp per row.
enum class NormRows { Auto, Warp, Block };

class Selector {
public:
  Selector(TargetAttr target, bool deterministic,
           std::optional<ForcedTile> forced,
           LibraryPolicy library = LibraryPolicy::Never,
           LibraryPolicy convLibrary = LibraryPolicy::Never,
           NormRows normRows = NormRows::Auto)
      : target(target), deterministic(deterministic), forced(forced),
        library(library), convLibrary(convLibrary), normRows(normRows) {}

  FailureOr<KernelConfigAttr> select(KernelOp kernel);

private:
  TargetAttr target;
  bool deterministic;
  std::optional<ForcedTile> forced;
  /// cuBLASLt for matmul groups, cuDNN for conv groups.
  LibraryPolicy library, convLibrary;
  /// Which norms take a warp per row (`norm-rows`).
  NormRows normRows;

  /// The values a lane holds where a warp normalizes each row of `row`,
  /// or 0 for a block a row.
  int64_t normLaneValues(const NormRowShape &row) const;

  std::optional<KernelConfigAttr> libraryConfig(KernelOp kernel,
                                                Type element) const;
  int64_t elementsPerThread(KernelOp kernel) const;
  std::optional<KernelConfigAttr> convLibraryConfig(KernelOp kernel,
                                                    Type element) const;

  /// A config of `strategy` computing `element`s (accumulated as the
  /// template does), deterministic as the pass was asked.
  KernelConfigAttr config(KernelStrategy strategy, Type element,
                          const ConfigFields &f = {}) const {
    MLIRContext *context = element.getContext();
    auto array = [&](ArrayRef<int64_t> v) {
      return v.empty() ? DenseI64ArrayAttr() : DenseI64ArrayAttr::get(context, v);
    };
    return KernelConfigAttr::get(
        context, strategy, kTemplateThreads, array(f.blockTile),
        array(f.threadTile), f.slices, f.stages, f.asyncCopy, f.splitK,
        f.minBlocks, f.vectorWidth, element, accumulatorTypeOf(element),
        f.operand, deterministic);
  }

  FailureOr<MatmulShape> analyzeMatmul(KernelOp kernel,
                                       ArrayRef<Operation *> ops) const;
  FailureOr<KernelConfigAttr> gemmConfig(KernelOp kernel,
                                         KernelStrategy strategy,
                                         const GemmShape &shape,
                                         Type element) const;
  GemmTileShape chooseTile(const GemmShape &shape, int64_t &splitK) const;
  std::pair<double, int64_t>
  bestSplit(const GemmShape &p, int64_t blocks, int64_t kTiles,
            int64_t resident,
            llvm::function_ref<double(double)> iteration) const;
  /// The K depth, stages and loop of a tensor-core tile.
  struct TensorCoreLoop {
    int64_t bk, stages;
    bool async, halfStages;
  };
  /// A tensor-core tile takes the cp.async loop where two stages fit: tf32
  /// products whose operands are plain 16-byte-aligned f32 arrays (f32
  /// stages), and 16-bit products whose operands are stored in that type
  /// (`halfStages`: staged as they are, the register loop's fragment
  /// reads). 16-bit products of f32 operands keep the register loop: from
  /// f32 slices they read twice the fragment bytes and pack at every read,
  /// and the H200 measured that slower (BERT b8 fc1 bf16: 27 us in
  /// registers, 40 us from f32 slices; tf32: 34 us in registers, 25 us
  /// from slices).
  TensorCoreLoop tensorCoreLoop(const GemmShape &p,
                                const TensorCoreTileShape &shape,
                                int64_t operandBytes) const {
    const bool halfStages = operandBytes == 2 && p.halfAsyncCopies;
    const bool f32Stages =
        operandBytes == 4 && p.asyncCopies && p.f32Operands;
    const int64_t stages = tensorCoreAsyncStages(
        shape.bm, shape.bn, target.getStaticSharedBytes(), halfStages);
    const bool async = (halfStages || f32Stages) && stages >= 2;
    return {tensorCoreSliceDepth(operandBytes, async, halfStages),
            async ? stages : 2, async, async && halfStages};
  }
  FailureOr<KernelConfigAttr> tensorCoreConfig(KernelOp kernel,
                                               KernelStrategy strategy,
                                               const GemmShape &shape,
                                               Type element, Type operand) const;
  TensorCoreTileShape chooseTensorCoreTile(const GemmShape &shape,
                                           int64_t operandBytes,
                                           int64_t &splitK) const;
  FailureOr<KernelConfigAttr> convConfig(KernelOp kernel, ConvOp conv,
                                         bool needed) const;
  FailureOr<KernelConfigAttr> attentionConfig(KernelOp kernel,
                                              ArrayRef<Operation *> ops) const;
  FailureOr<KernelConfigAttr>
  tensorCoreAttentionConfig(KernelOp kernel, int64_t batch, int64_t rows,
                            int64_t keys, int64_t headDim, int64_t valueDim,
                            Type element, Type operand) const;
};

FailureOr<MatmulShape> Selector::analyzeMatmul(KernelOp kernel,
                                               ArrayRef<Operation *> ops) const {
  // A layer norm fused before the product normalizes A's rows.
  auto ln = dyn_cast<LayerNormOp>(ops.front());
  if (ln)
    ops = ops.drop_front();
  Operation *anchor = ops.front();
  Value out = anchor->getResult(0);
  ArrayRef<int64_t> outShape = shapeOf(out);
  bool floatAccumulator = accumulatorTypeOf(elementTypeOf(out)).isF32();
  MatmulShape r;
  GemmShape &g = r.gemm;
  bool transA = false, transB = false;
  if (auto gemm = dyn_cast<GemmOp>(anchor)) {
    g.m = outShape[0];
    g.n = outShape[1];
    transA = gemm.getTransA();
    transB = gemm.getTransB();
    g.k = transA ? shapeOf(gemm.getA())[0] : shapeOf(gemm.getA())[1];
  } else {
    auto matmul = cast<MatMulOp>(anchor);
    SmallVector<int64_t> a(shapeOf(matmul.getLhs())),
        b(shapeOf(matmul.getRhs()));
    if (a.size() == 1)
      a.insert(a.begin(), 1);
    if (b.size() == 1)
      b.push_back(1);
    g.m = a[a.size() - 2];
    g.k = a.back();
    g.n = b.back();
    int64_t matrixDims = (shapeOf(matmul.getLhs()).size() > 1) +
                         (shapeOf(matmul.getRhs()).size() > 1);
    g.batch = numElements(outShape.drop_back(matrixDims));
    // A weight without batch dims against a batched lhs that broadcasts
    // nothing is one matrix of batch x M rows.
    if (b.size() == 2 &&
        numElements(ArrayRef<int64_t>(a).drop_back(2)) == g.batch &&
        floatAccumulator) {
      g.m *= g.batch;
      g.batch = 1;
    }
  }
  if (ln && (!floatAccumulator || g.m <= 8 || g.batch != 1))
    return ln->emitError("layer norm fused into a matmul it cannot lead");
  r.tiled = floatAccumulator && !takesWarpPerOutput(g.m, transB);
  Value a = storedOperand(anchor->getOperand(0)),
        b = storedOperand(anchor->getOperand(1));
  if (!r.tiled) {
    r.warpVector4 = floatAccumulator && transB && !transA && g.k % 4 == 0 &&
                    isa<GemmOp>(anchor) && plannedFloat4Loadable(a) &&
                    plannedFloat4Loadable(b);
    return r;
  }
  bool aVec4 = (transA ? g.m : g.k) % 4 == 0 && plannedFloat4Loadable(a) &&
               shapeOf(a).size() >= 2 && !ln;
  bool bVec4 = (transB ? g.k : g.n) % 4 == 0 && plannedFloat4Loadable(b) &&
               shapeOf(b).size() >= 2;
  g.asyncCopies = aVec4 && bVec4 && !ln;
  g.f32Operands = elementTypeOf(a).isF32() && elementTypeOf(b).isF32();
  if (std::optional<Type> precision = kernel.getPrecision())
    g.halfAsyncCopies =
        !ln && halfStagesFit(g.k, g.n, transA, transB) &&
        planned16BitVector8Loadable(a, *precision) &&
        planned16BitVector8Loadable(b, *precision) &&
        shapeOf(a).size() >= 2 && shapeOf(b).size() >= 2;
  Value stored = kernel.getLinearEpilogueResult();
  g.splittable =
      stored && elementTypeOf(stored).isF32() && !deterministic;
  return r;
}

/// The cheapest split of K for a tile and its cost: waves of resident
/// blocks x the block's K slices, each `iteration(sharing)` clocks
/// (`sharing`: the blocks a multiprocessor runs at once). Per wave the
/// first loads and the epilogue are not overlapped; a split adds the first
/// block's stores of the terms independent of the product, the tile
/// counters' round trips (2000 clocks together: the constant dates from a
/// separate initializing launch, not measured again) and its partial sums'
/// atomic additions (8 a clock per multiprocessor: the sweep's split-K 4 of
/// 1024 x 384 outputs cost about that). Splits double from 1 to 16 while
/// each keeps two K slices and none is left without a slice.
std::pair<double, int64_t>
Selector::bestSplit(const GemmShape &p, int64_t blocks, int64_t kTiles,
                    int64_t resident,
                    llvm::function_ref<double(double)> iteration) const {
  const double multiprocessors = target.getMultiprocessors();
  double bestCost = -1;
  int64_t bestSplit = 1;
  for (int64_t split = 1; split <= (p.splittable ? 16 : 1); split *= 2) {
    if (split > 1 && ceilDiv(kTiles, split) < 2)
      break;
    // A split whose blocks would start past K only adds launches and
    // atomics (12 slices in 8 splits: 2 each, the last two empty).
    if ((split - 1) * ceilDiv(kTiles, split) >= kTiles)
      continue;
    double perSm = std::ceil(blocks * split / multiprocessors);
    double waves = std::ceil(perSm / resident);
    double sharing = std::min<double>(perSm, resident);
    double cost = waves * (2 * kLatency +
                           ceilDiv(kTiles, split) * iteration(sharing));
    if (split > 1)
      cost += 2000 + (double)p.batch * p.m * p.n * split /
                         (8 * multiprocessors);
    if (bestCost < 0 || cost < bestCost) {
      bestCost = cost;
      bestSplit = split;
    }
  }
  return {bestCost, bestSplit};
}

/// The tile for a problem by a small cost model of the target: waves of
/// resident blocks x K iterations x the larger of a load latency and the
/// tile's FMA time at its register-tile efficiency.
GemmTileShape Selector::chooseTile(const GemmShape &p, int64_t &splitK) const {
  const double fmaPerClock = target.getFp32LanesPerMultiprocessor();
  GemmTileShape best = gemmTileShapes().back();
  double bestCost = -1;
  splitK = 1;
  int64_t maxM = std::max<int64_t>(16, pow2Ceil(p.m)),
          maxN = std::max<int64_t>(16, pow2Ceil(p.n));
  for (const GemmTileShape &shape : gemmTileShapes()) {
    if (shape.bm > maxM || shape.bn > maxN)
      continue;
    GemmTileGeometry geometry =
        gemmTileGeometry(shape.bm, shape.bn, shape.tm, shape.tn);
    int64_t blocks = p.batch * ceilDiv(p.m, shape.bm) * ceilDiv(p.n, shape.bn);
    int64_t kTiles = ceilDiv(p.k, geometry.bk);
    // Resident blocks a multiprocessor by registers (8x8: ~150 a thread,
    // 8x6: ~130, 8x4: ~100, 4x4: ~80, of 64K); the cp.async template keeps
    // two large-tile blocks a multiprocessor.
    int64_t area = shape.tm * shape.tn;
    int64_t resident = area >= 36 ? (p.asyncCopies ? 2 : 1) : area >= 24 ? 2 : 3;
    auto [cost, split] =
        bestSplit(p, blocks, kTiles, resident, [&](double sharing) {
          return std::max(kLatency, shape.bm * shape.bn * geometry.bk *
                                        sharing /
                                        (shape.efficiency * fmaPerClock));
        });
    if (bestCost < 0 || cost < bestCost) {
      bestCost = cost;
      best = shape;
      splitK = split;
    }
  }
  return best;
}

/// The tensor-core tile by a model like chooseTile's: waves of resident
/// blocks x K slices, a slice costing the load latency overlapped with the
/// co-resident blocks' work, plus the block's own work (its loads, their
/// rounding and shared-memory stores, ~16 instructions an element at 128 a
/// clock, and its mma time), which its own loads do not hide. mma.sync
/// issues about 8 times the FMAs of the fp32 lanes a clock with 16-bit
/// operands and 4 times with tf32; a small warp tile reads more fragment
/// bytes per FMA. On the H200 (ShuffleNet-like convolutions and GPT-2's
/// products at batch 1, every tile forced on the whole model) this ranks
/// the tiles as measured: loads, not mma, bound these tiles.
TensorCoreTileShape
Selector::chooseTensorCoreTile(const GemmShape &p, int64_t operandBytes,
                               int64_t &splitK) const {
  const double mmaPerClock =
      target.getFp32LanesPerMultiprocessor() * (operandBytes == 2 ? 8 : 4);
  // The cp.async loop's copies take no registers and no rounding: a
  // quarter of the register loop's instructions an element.
  constexpr double kIssuePerClock = 128;
  const double kInstructionsPerElement =
      (operandBytes == 4 && p.asyncCopies && p.f32Operands) ||
              (operandBytes == 2 && p.halfAsyncCopies)
          ? 4
          : 16;
  TensorCoreTileShape best = tensorCoreTileShapes().back();
  double bestCost = -1;
  splitK = 1;
  int64_t maxM = std::max<int64_t>(16, pow2Ceil(p.m)),
          maxN = std::max<int64_t>(32, pow2Ceil(p.n));
  for (const TensorCoreTileShape &shape : tensorCoreTileShapes()) {
    if (shape.bm > maxM || shape.bn > maxN)
      continue;
    const TensorCoreLoop loop = tensorCoreLoop(p, shape, operandBytes);
    const int64_t bk = loop.bk;
    // Fragment bytes read from shared memory per FMA, against the largest
    // warp tile's (64 x 32: 1 / 21.3).
    double efficiency = std::min(
        1.0, (double)shape.wm * shape.wn / (shape.wm + shape.wn) / 21.3);
    int64_t bytes = tensorCoreSharedBytes(shape.bm, shape.bn, bk,
                                          operandBytes, loop.stages,
                                          loop.async);
    int64_t resident = std::max<int64_t>(
        1, std::min<int64_t>(shape.wm * shape.wn >= 1024 ? 2 : 4,
                             target.getSharedBytesPerMultiprocessor() / bytes));
    int64_t blocks = p.batch * ceilDiv(p.m, shape.bm) * ceilDiv(p.n, shape.bn);
    int64_t kTiles = ceilDiv(p.k, bk);
    double work = shape.bm * shape.bn * bk / (efficiency * mmaPerClock) +
                  (shape.bm + shape.bn) * bk * kInstructionsPerElement /
                      kIssuePerClock;
    auto [cost, split] =
        bestSplit(p, blocks, kTiles, resident, [&](double sharing) {
          return std::max(kLatency, sharing * work) + work;
        });
    if (bestCost < 0 || cost < bestCost) {
      bestCost = cost;
      best = shape;
      splitK = split;
    }
  }
  return best;
}

FailureOr<KernelConfigAttr>
Selector::tensorCoreConfig(KernelOp kernel, KernelStrategy strategy,
                           const GemmShape &p, Type element,
                           Type operand) const {
  int64_t bytes = tensorCoreOperandBytes(operand);
  int64_t splitK = 1;
  TensorCoreTileShape shape;
  if (forced) {
    if (!forced->tensorCoreShape)
      return kernel.emitError()
             << "gemm-tile names a tile of the FMA template, but this "
                "product runs on tensor cores in "
             << operand << " (it takes BMxBNxWMxWN, a warp's tile)";
    shape = *forced->tensorCoreShape;
    splitK = p.splittable
                 ? std::min<int64_t>(
                       forced->splitK,
                       ceilDiv(p.k, tensorCoreLoop(p, *forced->tensorCoreShape,
                                                   bytes)
                                        .bk))
                 : 1;
    if (!forced->candidate)
      kernel.emitWarning() << "gemm-tile: GEMM M=" << p.m << " N=" << p.n
                         << " K=" << p.k << " batch=" << p.batch << " takes "
                         << shape.bm << "x" << shape.bn << " (" << shape.wm
                         << "x" << shape.wn << " a warp, " << operand
                         << "), split-K " << splitK;
  } else {
    shape = chooseTensorCoreTile(p, bytes, splitK);
  }
  const TensorCoreLoop loop = tensorCoreLoop(p, shape, bytes);
  ConfigFields f;
  f.blockTile = {shape.bm, shape.bn, loop.bk};
  f.threadTile = {shape.wm, shape.wn};
  f.stages = loop.stages;
  f.asyncCopy = loop.async;
  f.splitK = splitK;
  f.operand = operand;
  return config(strategy, element, f);
}

FailureOr<KernelConfigAttr>
Selector::gemmConfig(KernelOp kernel, KernelStrategy strategy,
                     const GemmShape &p, Type element) const {
  if (std::optional<Type> precision = kernel.getPrecision();
      precision && !(forced && forced->candidate && forced->shape))
    return tensorCoreConfig(kernel, strategy, p, element, *precision);
  GemmTileShape shape;
  int64_t splitK = 1;
  GemmTileGeometry geometry;
  if (forced) {
    if (!forced->shape)
      return kernel.emitError()
             << "gemm-tile names a tile of the tensor-core template, but "
                "this product runs on FMAs in f32";
    shape = *forced->shape;
    geometry = gemmTileGeometry(shape.bm, shape.bn, shape.tm, shape.tn);
    splitK = p.splittable ? std::min<int64_t>(forced->splitK,
                                              ceilDiv(p.k, geometry.bk))
                          : 1;
    if (!forced->candidate)
      kernel.emitWarning() << "gemm-tile: GEMM M=" << p.m << " N=" << p.n
                         << " K=" << p.k << " batch=" << p.batch << " takes "
                         << shape.bm << "x" << shape.bn << " (" << shape.tm
                         << "x" << shape.tn << " a thread), split-K "
                         << splitK;
  } else {
    shape = chooseTile(p, splitK);
    geometry = gemmTileGeometry(shape.bm, shape.bn, shape.tm, shape.tn);
  }
  const int64_t sharedBytes = target.getStaticSharedBytes();
  bool async = p.asyncCopies &&
               gemmTileAllowsAsyncCopies(shape.bm, shape.bn, geometry.bk,
                                         shape.tm, shape.tn, geometry.slices,
                                         sharedBytes);
  int64_t stages =
      async ? gemmPipelineStages(shape.bm, shape.bn, geometry.bk, sharedBytes)
            : 2;
  // Two blocks a multiprocessor where the grid has more blocks than
  // multiprocessors (ptxas then caps a thread at 128 registers); a grid of
  // one wave keeps the registers for fragment prefetching.
  int64_t grid = std::max<int64_t>(1, p.batch * ceilDiv(p.m, shape.bm) *
                                          ceilDiv(p.n, shape.bn) * splitK);
  int64_t minBlocks = async && grid > target.getMultiprocessors() ? 2 : 1;
  ConfigFields f;
  f.blockTile = {shape.bm, shape.bn, geometry.bk};
  f.threadTile = {shape.tm, shape.tn};
  f.slices = geometry.slices;
  f.stages = stages;
  f.asyncCopy = async;
  f.splitK = splitK;
  f.minBlocks = minBlocks;
  return config(strategy, element, f);
}

/// Whether cuBLASLt computes `kernel`, by the pass's policy: `always` where
/// the library can take the group (a warning says why where it cannot),
/// `auto` where it is also large enough.
std::optional<KernelConfigAttr> Selector::libraryConfig(KernelOp kernel,
                                                        Type element) const {
  if (library == LibraryPolicy::Never || forced)
    return std::nullopt;
  std::string reason;
  FailureOr<LibraryMatmul> p = describeLibraryMatmul(kernel, reason);
  if (failed(p)) {
    if (library == LibraryPolicy::Always)
      kernel.emitWarning() << "--cublaslt=always: '" << kernel.getName()
                           << "' stays a generated kernel: " << reason;
    return std::nullopt;
  }
  if (library == LibraryPolicy::Auto &&
      p->multiplyAdds() < kLibraryMinMultiplyAdds)
    return std::nullopt;
  std::optional<Type> precision = kernel.getPrecision();
  ConfigFields f;
  if (precision)
    f.operand = *precision;
  f.vectorWidth = elementsPerThread(kernel);
  return config(KernelStrategy::cublaslt_matmul, element, f);
}

/// Elements a thread of a per-element kernel (an elementwise group, a
/// library call's in-place epilogue) computes, their loads in flight
/// together: 4 where the grid still gives every multiprocessor 4 blocks,
/// else 1. One element a thread keeps about 8 KB of loads in flight a
/// multiprocessor, half of what the copy bandwidth needs at DRAM latency:
/// ViT b8's GELU epilogue (2.4 M elements) ran at 1.3 TB/s on an H100.
int64_t Selector::elementsPerThread(KernelOp kernel) const {
  auto type = dyn_cast<RankedTensorType>(kernel.getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return 1;
  constexpr int64_t elements = 4, blocksEach = 4;
  return type.getNumElements() >= elements * kTemplateThreads * blocksEach *
                                      target.getMultiprocessors()
             ? elements
             : 1;
}

/// Whether cuDNN computes conv group `kernel`, by the pass's `cudnn`
/// policy: `always` where the library can take the group (a warning says
/// why where it cannot), `auto` for dense convolutions (one group) on
/// tensor cores of kLibraryConvMinChannels channels each way and at least
/// kLibraryConvMinMultiplyAdds.
std::optional<KernelConfigAttr>
Selector::convLibraryConfig(KernelOp kernel, Type element) const {
  if (convLibrary == LibraryPolicy::Never || forced)
    return std::nullopt;
  std::string reason;
  FailureOr<LibraryConv> p = describeLibraryConv(kernel, reason);
  if (failed(p)) {
    if (convLibrary == LibraryPolicy::Always)
      kernel.emitWarning() << "--cudnn=always: '" << kernel.getName()
                           << "' stays a generated kernel: " << reason;
    return std::nullopt;
  }
  // The rule the passes before predict the choice by (cudnnWillTake:
  // --cgc-narrow-storage keeps a conv group's f32 result only for cuDNN).
  if (convLibrary == LibraryPolicy::Auto && !cudnnWillTake(kernel, *p, "auto"))
    return std::nullopt;
  std::optional<Type> precision = kernel.getPrecision();
  ConfigFields f;
  if (precision)
    f.operand = *precision;
  f.vectorWidth = elementsPerThread(kernel);
  return config(KernelStrategy::cudnn_conv, element, f);
}

/// 2-d f32 convolutions with one group run as implicit GEMMs (a 1x1
/// stride-1 one as a plain GEMM), depthwise ones on their own template,
/// others (and channels-last ones cuDNN does not take) on the direct
/// template.
FailureOr<KernelConfigAttr> Selector::convConfig(KernelOp kernel, ConvOp conv,
                                                 bool needed) const {
  Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
  Type element = elementTypeOf(y);
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  bool allF32 = elementTypeOf(y).isF32() && elementTypeOf(x).isF32() &&
                elementTypeOf(w).isF32() &&
                (!conv.getBias() || elementTypeOf(conv.getBias()).isF32());
  ArrayRef<int64_t> strides = conv.getStrides(), dil = conv.getDilations(),
                    pads = conv.getPads();
  bool plain2d = xs.size() == 4 && allF32 && strides.size() == 2 &&
                 dil.size() == 2 && pads.size() == 4;
  if (!needed)
    return config(KernelStrategy::single_op, element);
  if (std::optional<KernelConfigAttr> library =
          convLibraryConfig(kernel, element))
    return *library;
  // The implicit-GEMM and depthwise templates read channels first; a
  // channels-last convolution cuDNN does not take runs on the direct one.
  if (!plain2d || conv.getChannelsLast())
    return config(KernelStrategy::single_op, element);
  if (conv.getGroup() == 1 && ws[1] == xs[1] && ws[0] == ys[1]) {
    const int64_t H = xs[2], W = xs[3], Ho = ys[2], Wo = ys[3];
    const int64_t window = ws[2] * ws[3];
    bool pointwise = ws[2] == 1 && ws[3] == 1 && strides[0] == 1 &&
                     strides[1] == 1 && pads[0] == 0 && pads[1] == 0 &&
                     pads[2] == 0 && pads[3] == 0 && H == Ho && W == Wo;
    GemmShape p;
    p.m = ys[1];
    p.n = xs[0] * Ho * Wo;
    p.k = xs[1] * window;
    bool aVec4 = p.k % 4 == 0 && plannedFloat4Loadable(w);
    bool bVec4 = pointwise && (Ho * Wo) % 4 == 0 && plannedFloat4Loadable(x);
    p.asyncCopies = aVec4 && bVec4;
    p.f32Operands = true;
    return gemmConfig(kernel, KernelStrategy::conv_gemm, p, element);
  }
  const int64_t C = xs[1];
  if ((int64_t)conv.getGroup() == C && ys[1] == C && ws[0] == C &&
      ws[1] == 1 && ws[2] * ws[3] <= 49)
    return config(KernelStrategy::depthwise, element);
  return config(KernelStrategy::single_op, element);
}

/// Rows per block: the most (8, 16 or 32) that still gives a block per
/// multiprocessor, within the target's static shared memory; keys a chunk:
/// 64 where shared memory allows, never (much) more than there are keys;
/// a thread's tiles: the largest that still keep 256 threads busy.
FailureOr<KernelConfigAttr>
Selector::attentionConfig(KernelOp kernel, ArrayRef<Operation *> ops) const {
  auto mm1 = llvm::find_if(ops, [](Operation *op) { return isa<MatMulOp>(op); });
  auto softmax =
      llvm::find_if(ops, [](Operation *op) { return isa<SoftmaxOp>(op); });
  // The second product follows the softmax, or the cast of P to its type.
  auto mm2 = softmax == ops.end() ? ops.end() : softmax + 1;
  if (mm2 != ops.end() && isa<CastOp>(*mm2))
    ++mm2;
  if (mm1 == ops.end() || softmax == ops.end() || mm2 == ops.end() ||
      !isa<MatMulOp>(*mm2))
    return kernel.emitError("malformed attention group");
  Value s = (*mm1)->getResult(0), o = (*mm2)->getResult(0);
  ArrayRef<int64_t> sShape = shapeOf(s);
  int64_t rank = sShape.size();
  int64_t batch = numElements(sShape.drop_back(2));
  int64_t rows = sShape[rank - 2], keys = sShape[rank - 1];
  int64_t headDim = shapeOf((*mm1)->getOperand(0)).back();
  int64_t valueDim = shapeOf(o).back();
  if (std::optional<Type> precision = kernel.getPrecision())
    return tensorCoreAttentionConfig(kernel, batch, rows, keys, headDim,
                                     valueDim, elementTypeOf(o), *precision);
  const int64_t sharedFloats = target.getStaticSharedBytes() / 4;
  auto floats = [&](int64_t r, int64_t kc) {
    return attentionSharedFloats(r, headDim, keys, valueDim, kc);
  };
  int64_t r = 8;
  for (int64_t candidate : {16, 32})
    if (batch * ceilDiv(rows, candidate) >= target.getMultiprocessors() &&
        floats(candidate, 32) <= sharedFloats)
      r = candidate;
  if (floats(r, 32) > sharedFloats)
    return kernel.emitError()
           << "attention rows too long for shared memory: a fuse pass bug";
  const int64_t kc =
      std::min<int64_t>(floats(r, 64) <= sharedFloats ? 64 : 32,
                        (keys + 1) / 2 * 2);
  auto tileFor = [&](int64_t cols, bool pairs) -> std::pair<int64_t, int64_t> {
    for (auto [tr, tc] : {std::pair<int64_t, int64_t>{4, 2}, {2, 2}, {2, 1},
                          {1, 2}, {1, 1}})
      if ((tc == 1 || pairs) &&
          (r / tr) * ceilDiv(cols, tc) >= kTemplateThreads)
        return {tr, tc};
    return {1, 1};
  };
  auto [sr, sk] = tileFor(kc, true);
  auto [orows, ocols] = tileFor(valueDim, valueDim % 2 == 0);
  ConfigFields f;
  f.blockTile = {r, kc};
  f.threadTile = {sr, sk, orows, ocols};
  return config(KernelStrategy::attention, elementTypeOf(o), f);
}

/// A warp a row reads the row once and reduces by shuffles, but a block
/// holds only 8 such rows: with fewer blocks than multiprocessors the
/// machine is mostly idle, where a block a row spreads the same rows over
/// all of them. Measured on an H100 (132 multiprocessors, bf16 bench
/// models, both kinds in one device call, 2026-12-07): a block a row was
/// faster at 1 row (MLP b1, 38.2 -> 32.4 us a model), 128 (BERT b1, 153
/// -> 139) and 1024 (BERT b8, 217 -> 213), as fast at 32 and 197 (GPT b1,
/// ViT b1), and a warp a row at 1576 rows (ViT b8, 299 -> 279): the warp
/// takes the rows once their blocks cover every multiprocessor.
int64_t Selector::normLaneValues(const NormRowShape &row) const {
  int64_t values = warpRowValues(row);
  if (!values || normRows == NormRows::Block)
    return 0;
  if (normRows == NormRows::Warp)
    return values;
  const int64_t rowsPerBlock = kTemplateThreads / 32;
  int64_t blocks = (row.rows + rowsPerBlock - 1) / rowsPerBlock;
  return blocks >= target.getMultiprocessors() ? values : 0;
}

/// The tensor-core attention's split of its 8 warps between query rows
/// and keys: the most row warps (each block reads K and V once for more
/// rows) that still give every multiprocessor a block; failing that, the
/// fewest (most blocks). Never more key warps than 16-key groups of keys,
/// and within the target's static shared memory. Then the keys a warp
/// takes of a chunk: 32 where that makes all keys one chunk and 16 does
/// not, else 16. (H200, bf16: BERT b8's attention 53.8 -> 45.8 us with
/// its 128 keys one chunk of 4 x 32; ViT b8's 197 keys in chunks of 2 x 32
/// took 110 us, of 2 x 16 90.)
FailureOr<KernelConfigAttr> Selector::tensorCoreAttentionConfig(
    KernelOp kernel, int64_t batch, int64_t rows, int64_t keys,
    int64_t headDim, int64_t valueDim, Type element, Type operand) const {
  const int64_t warps = kTemplateThreads / 32;
  const int64_t operandBytes = tensorCoreOperandBytes(operand);
  auto fits = [&](int64_t r, int64_t kc, int64_t wk) {
    return tensorCoreAttentionSharedBytes(r, kc, wk, headDim, valueDim,
                                          operandBytes) <=
           target.getStaticSharedBytes();
  };
  std::optional<int64_t> chosen;
  for (int64_t rowWarps = warps; rowWarps >= 1; rowWarps /= 2) {
    int64_t keyWarps = warps / rowWarps;
    int64_t r = rowWarps * kAttentionWarpRows;
    if (keyWarps > 1 && (keyWarps / 2) * kAttentionMinWarpKeys >= keys)
      continue;
    if (!fits(r, keyWarps * kAttentionMinWarpKeys, kAttentionMinWarpKeys))
      continue;
    chosen = rowWarps;
    if (batch * ceilDiv(rows, r) >= target.getMultiprocessors())
      break;
  }
  if (!chosen)
    return kernel.emitError()
           << "no tensor-core attention block fits shared memory (head dim "
           << headDim << ", value dim " << valueDim
           << "): the precision pass should have kept it in f32";
  const int64_t r = *chosen * kAttentionWarpRows, keyWarps = warps / *chosen;
  int64_t warpKeys = kAttentionMinWarpKeys;
  for (int64_t wk = kAttentionMaxWarpKeys; wk > kAttentionMinWarpKeys;
       wk /= 2)
    if (keyWarps * wk >= keys && keyWarps * wk / 2 < keys &&
        fits(r, keyWarps * wk, wk)) {
      warpKeys = wk;
      break;
    }
  ConfigFields f;
  f.blockTile = {r, keyWarps * warpKeys};
  f.threadTile = {kAttentionWarpRows, warpKeys};
  f.operand = operand;
  return config(KernelStrategy::attention, element, f);
}

FailureOr<KernelConfigAttr> Selector::select(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  SmallVector<Operation *> ops = kernelComputeOps(kernel);
  Operation *terminator = body.getTerminator();
  if (ops.empty() || terminator->getNumOperands() == 0)
    return config(KernelStrategy::none,
                  Float32Type::get(kernel.getContext()));
  Type yielded = elementTypeOf(terminator->getOperand(0));
  switch (kernel.getKind()) {
  case KernelKind::elementwise: {
    ConfigFields f;
    f.vectorWidth = elementsPerThread(kernel);
    return config(KernelStrategy::elementwise, yielded, f);
  }
  case KernelKind::norm: {
    auto anchor = llvm::find_if(ops, isNormAnchor);
    if (anchor == ops.end())
      return config(KernelStrategy::row_norm, yielded);
    ConfigFields f;
    if (int64_t values = normLaneValues(normRowsOf(*anchor)))
      f.threadTile = {values};
    return config(KernelStrategy::row_norm,
                  elementTypeOf((*anchor)->getResult(0)), f);
  }
  case KernelKind::matmul: {
    FailureOr<MatmulShape> shape = analyzeMatmul(kernel, ops);
    if (failed(shape))
      return failure();
    Operation *anchor = isa<LayerNormOp>(ops.front()) ? ops[1] : ops[0];
    Type element = elementTypeOf(anchor->getResult(0));
    if (std::optional<KernelConfigAttr> library =
            libraryConfig(kernel, element))
      return *library;
    if (shape->tiled)
      return gemmConfig(kernel, KernelStrategy::gemm, shape->gemm, element);
    ConfigFields f;
    f.vectorWidth = shape->warpVector4 ? 4 : 1;
    return config(KernelStrategy::warp_dot, element, f);
  }
  case KernelKind::attention:
    return attentionConfig(kernel, ops);
  case KernelKind::conv:
  case KernelKind::reduce:
  case KernelKind::single: {
    // The template op follows a reduce group's elementwise producers.
    Operation *anchor = ops.front();
    if (kernel.getKind() == KernelKind::reduce)
      for (Operation *op : ops)
        if (isa<ReductionOpInterface>(op)) {
          anchor = op;
          break;
        }
    Type element = elementTypeOf(anchor->getResult(0));
    if (isa<AllReduceOp>(anchor))
      return config(KernelStrategy::nccl_all_reduce, element);
    if (isa<AllGatherOp>(anchor))
      return config(KernelStrategy::nccl_all_gather, element);
    if (int64_t threads = reductionBlockThreads(anchor)) {
      ConfigFields f;
      f.blockTile = {threads};
      return config(KernelStrategy::single_op, element, f);
    }
    if (auto conv = dyn_cast<ConvOp>(anchor)) {
      bool hasEpilogue = anchor != ops.back();
      bool yieldedDirectly =
          llvm::is_contained(terminator->getOperands(), conv.getOutput());
      return convConfig(kernel, conv, hasEpilogue || yieldedDirectly);
    }
    return config(KernelStrategy::single_op, element);
  }
  }
  return failure();
}

/// For a reduction or arg-reduction over long lines: the threads of the
/// block that computes each output; 0 where a thread computes one.
int64_t reductionBlockThreads(Operation *op) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  if (auto reduction = dyn_cast<ReductionOpInterface>(op)) {
    int64_t reduced = 1;
    for (int64_t axis : reduction.getAxes())
      reduced *= in[axis < 0 ? axis + (int64_t)in.size() : axis];
    return reduced >= kBlockReductionMinElements ? blockThreadsFor(reduced)
                                                 : 0;
  }
  if (isa<ArgMaxOp, ArgMinOp, HardmaxOp>(op)) {
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    int64_t length = in[axis < 0 ? axis + (int64_t)in.size() : axis];
    return length >= kBlockArgReductionMinElements ? blockThreadsFor(length)
                                                   : 0;
  }
  return 0;
}

/// Parses `BMxBNxTMxTN[/SPLIT]` naming a tile of the template.
FailureOr<ForcedTile> parseForcedTile(StringRef text, ModuleOp module) {
  long bm = 0, bn = 0, tm = 0, tn = 0, split = 1;
  int used = 0, splitUsed = 0;
  std::string value = text.str();
  const char *s = value.c_str();
  bool parsed =
      std::sscanf(s, "%ldx%ldx%ldx%ld%n", &bm, &bn, &tm, &tn, &used) == 4 &&
      used > 0 &&
      (s[used] == 0 || (std::sscanf(s + used, "/%ld%n", &split, &splitUsed) ==
                            1 &&
                        s[used + splitUsed] == 0));
  std::optional<GemmTileShape> shape =
      parsed ? findGemmTileShape(bm, bn, tm, tn) : std::nullopt;
  std::optional<TensorCoreTileShape> tensorCoreShape =
      parsed ? findTensorCoreTileShape(bm, bn, tm, tn) : std::nullopt;
  if ((shape || tensorCoreShape) && split >= 1 && split <= 64)
    return ForcedTile{shape, tensorCoreShape, split};
  InFlightDiagnostic d = module.emitError();
  d << "gemm-tile='" << text
    << "' names no tile of the GEMM template (BMxBNxTMxTN[/SPLIT], SPLIT "
       "1-64, with one of:";
  for (const GemmTileShape &t : gemmTileShapes())
    d << " " << t.bm << "x" << t.bn << "x" << t.tm << "x" << t.tn;
  d << "; or on tensor cores, BMxBNxWMxWN with one of:";
  for (const TensorCoreTileShape &t : tensorCoreTileShapes())
    d << " " << t.bm << "x" << t.bn << "x" << t.wm << "x" << t.wn;
  d << ")";
  return failure();
}

bool isTiledGemm(KernelConfigAttr config) {
  return config.getStrategy() == KernelStrategy::gemm ||
         config.getStrategy() == KernelStrategy::conv_gemm;
}

bool isLibrary(KernelConfigAttr config) {
  return config.getStrategy() == KernelStrategy::cublaslt_matmul ||
         config.getStrategy() == KernelStrategy::cudnn_conv;
}

/// Every config the GEMM templates offer a tiled product, for a tuner to
/// measure: each tensor-core tile (where the kernel has a precision) and
/// each FMA tile, each with split-K 1, 2, 4, 8 and 16 where K may be split,
/// and cuBLASLt where it can take the group; the same config reached twice
/// is listed once.
SmallVector<Attribute> listTuningCandidates(KernelOp kernel, TargetAttr target,
                                        bool deterministic) {
  llvm::SetVector<Attribute> configs;
  // A tile a kernel cannot take is no candidate; its error is not the
  // user's.
  ScopedDiagnosticHandler quiet(kernel.getContext(),
                                [](Diagnostic &) { return success(); });
  auto offer = [&](ForcedTile tile) {
    tile.candidate = true;
    Selector selector(target, deterministic, tile);
    FailureOr<KernelConfigAttr> config = selector.select(kernel);
    if (succeeded(config) && isTiledGemm(*config))
      configs.insert(*config);
  };
  for (int64_t split : {1, 2, 4, 8, 16}) {
    if (kernel.getPrecision())
      for (const TensorCoreTileShape &shape : tensorCoreTileShapes())
        offer({std::nullopt, shape, split});
    for (const GemmTileShape &shape : gemmTileShapes())
      offer({shape, std::nullopt, split});
  }
  // And the library (cuBLASLt, cuDNN), where it can take the group.
  Selector library(target, deterministic, std::nullopt, LibraryPolicy::Always,
                   LibraryPolicy::Always);
  FailureOr<KernelConfigAttr> config = library.select(kernel);
  if (succeeded(config) && isLibrary(*config))
    configs.insert(*config);
  return SmallVector<Attribute>(configs.begin(), configs.end());
}

/// The pass's `norm-rows` option, or an error on `module` naming the
/// accepted values.
std::optional<NormRows> parseNormRows(ModuleOp module, StringRef value) {
  std::optional<NormRows> rows =
      llvm::StringSwitch<std::optional<NormRows>>(value)
          .Case("auto", NormRows::Auto)
          .Case("warp", NormRows::Warp)
          .Case("block", NormRows::Block)
          .Default(std::nullopt);
  if (!rows)
    module.emitError() << "norm-rows must be auto, warp or block, got '"
                       << value << "'";
  return rows;
}

struct CgcSelectKernelConfigPass
    : cgc::impl::CgcSelectKernelConfigBase<CgcSelectKernelConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<ForcedTile> forced;
    if (!gemmTile.empty()) {
      FailureOr<ForcedTile> parsed = parseForcedTile(gemmTile, module);
      if (failed(parsed))
        return signalPassFailure();
      forced = *parsed;
    }
    std::optional<TuningCache> cache;
    if (!tuningCache.empty()) {
      FailureOr<TuningCache> loaded = TuningCache::load(tuningCache, module);
      if (failed(loaded))
        return signalPassFailure();
      cache = std::move(*loaded);
    }
    TargetAttr target = lookupTargetOrDefault(module);
    auto parse = [&](StringRef name,
                     StringRef value) -> std::optional<LibraryPolicy> {
      std::optional<LibraryPolicy> policy =
          llvm::StringSwitch<std::optional<LibraryPolicy>>(value)
              .Case("auto", LibraryPolicy::Auto)
              .Case("always", LibraryPolicy::Always)
              .Case("never", LibraryPolicy::Never)
              .Default(std::nullopt);
      if (!policy)
        module.emitError() << name << " must be auto, always or never, got '"
                           << value << "'";
      return policy;
    };
    std::optional<LibraryPolicy> policy = parse("cublaslt", cublaslt);
    std::optional<LibraryPolicy> convPolicy = parse("cudnn", cudnn);
    if (!policy || !convPolicy)
      return signalPassFailure();
    std::optional<NormRows> rows = parseNormRows(module, normRows);
    if (!rows)
      return signalPassFailure();
    Selector selector(target, deterministic, forced, *policy, *convPolicy,
                      *rows);
    WalkResult result = module.walk([&](KernelOp kernel) {
      if (kernel.getConfigAttr())
        return WalkResult::advance();
      std::string key =
          cache || tuningCandidates ? kernelTuningKey(kernel, target) : "";
      if (KernelConfigAttr tuned = cache ? cache->lookup(key) : nullptr) {
        // The verifier checks that the template can serve it.
        kernel.setConfigAttr(tuned);
        setTunedFrom(kernel, cache->path());
        return WalkResult::advance();
      }
      FailureOr<KernelConfigAttr> config = selector.select(kernel);
      if (failed(config))
        return WalkResult::interrupt();
      kernel.setConfigAttr(*config);
      if (tuningCandidates && (isTiledGemm(*config) || isLibrary(*config))) {
        setTuningCandidates(kernel, key,
                            listTuningCandidates(kernel, target, deterministic));
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
  }
};

} // namespace
