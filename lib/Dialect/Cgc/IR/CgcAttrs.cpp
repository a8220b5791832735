//===- CgcAttrs.cpp - target and kernel-config attributes -----------------===//

#include "cgc/Dialect/Cgc/IR/CgcAttrs.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcDialect.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgc;

#include "cgc/Dialect/Cgc/IR/CgcEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cgc/Dialect/Cgc/IR/CgcAttrs.cpp.inc"

void CgcDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cgc/Dialect/Cgc/IR/CgcAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Known GPUs
//===----------------------------------------------------------------------===//

namespace {

struct KnownTarget {
  llvm::StringLiteral arch, gpu;
  int64_t multiprocessors, maxSharedPerBlock, sharedPerMultiprocessor,
      maxThreadsPerMultiprocessor, fp32Lanes;
  TensorCoreGeneration tensorCores;
};

// From NVIDIA's CUDA C++ Programming Guide (compute capabilities table) and
// the data sheets of the GPU named; the multiprocessor count is the one of
// that GPU (the cost models count waves of blocks over it).
const KnownTarget kKnownTargets[] = {
    {"sm_80", "A100", 108, 166912, 167936, 2048, 64,
     TensorCoreGeneration::mma_sync},
    {"sm_86", "A10", 72, 101376, 102400, 1536, 128,
     TensorCoreGeneration::mma_sync},
    {"sm_89", "L40S", 142, 101376, 102400, 1536, 128,
     TensorCoreGeneration::mma_sync},
    {"sm_90", "H100/H200", 132, 232448, 233472, 2048, 128,
     TensorCoreGeneration::wgmma},
    {"sm_100", "B200", 148, 232448, 233472, 2048, 128,
     TensorCoreGeneration::tcgen05},
};

} // namespace

TargetAttr cgc::knownTarget(MLIRContext *context, StringRef arch) {
  for (const KnownTarget &t : kKnownTargets)
    if (t.arch == arch)
      return TargetAttr::get(context, t.arch, t.gpu, t.multiprocessors,
                             /*static_shared_bytes=*/48 * 1024,
                             t.maxSharedPerBlock, t.sharedPerMultiprocessor,
                             /*registers_per_multiprocessor=*/65536,
                             t.maxThreadsPerMultiprocessor, t.fp32Lanes,
                             t.tensorCores);
  return nullptr;
}

ArrayRef<StringRef> cgc::knownArchitectures() {
  static const SmallVector<StringRef> names = [] {
    SmallVector<StringRef> r;
    for (const KnownTarget &t : kKnownTargets)
      r.push_back(t.arch);
    return r;
  }();
  return names;
}

TargetAttr cgc::lookupTargetOrDefault(Operation *op) {
  if (TargetAttr target = lookupTarget(op))
    return target;
  return knownTarget(op->getContext(), kDefaultArch);
}


LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef arch, StringRef gpu,
                                 int64_t multiprocessors,
                                 int64_t staticSharedBytes,
                                 int64_t maxSharedBytesPerBlock,
                                 int64_t sharedBytesPerMultiprocessor,
                                 int64_t registersPerMultiprocessor,
                                 int64_t maxThreadsPerMultiprocessor,
                                 int64_t fp32Lanes, TensorCoreGeneration) {
  if (!arch.starts_with("sm_"))
    return emitError() << "target arch '" << arch << "' is not sm_XY";
  if (multiprocessors < 1 || registersPerMultiprocessor < 1 ||
      maxThreadsPerMultiprocessor < 1 || fp32Lanes < 1)
    return emitError() << "target counts must be positive";
  if (staticSharedBytes > maxSharedBytesPerBlock ||
      maxSharedBytesPerBlock > sharedBytesPerMultiprocessor)
    return emitError() << "target shared memory must grow from static to "
                          "per block to per multiprocessor";
  return success();
}

unsigned TargetAttr::getComputeCapability() const {
  StringRef arch = getArch();
  unsigned version = 0;
  if (!arch.consume_front("sm_") || arch.consumeInteger(10, version))
    return 0;
  return version;
}

bool TargetAttr::hasProgrammaticLaunch() const {
  return getComputeCapability() >= 90;
}

//===----------------------------------------------------------------------===//
// The templates' contract
//===----------------------------------------------------------------------===//

// The large tiles' efficiencies are fitted to bench/gemm_sweep.py on the
// H200 (docs/kernels.md): an SM ran 50-63 FMAs a clock with any of them, one
// block of 8 warps or two, so the choice is mostly the work of the busiest
// multiprocessor (the wave quantization), the efficiency a tie-breaker.
static const GemmTileShape kGemmTileShapes[] = {
    {128, 128, 8, 8, 1.0}, {128, 96, 8, 6, 0.93}, {96, 128, 6, 8, 0.97},
    {96, 96, 6, 6, 0.95},  {128, 64, 8, 4, 0.97}, {64, 128, 4, 8, 0.97},
    {96, 64, 6, 4, 0.95},  {64, 96, 4, 6, 0.92},
    {64, 64, 4, 4, 0.7},   {64, 32, 4, 4, 0.6},   {32, 64, 4, 4, 0.6},
    {32, 32, 4, 4, 0.5},   {32, 16, 4, 4, 0.45},  {16, 32, 4, 4, 0.45},
    {16, 16, 4, 4, 0.35}};

ArrayRef<GemmTileShape> cgc::gemmTileShapes() { return kGemmTileShapes; }

std::optional<GemmTileShape> cgc::findGemmTileShape(int64_t bm, int64_t bn,
                                                    int64_t tm, int64_t tn) {
  for (const GemmTileShape &s : kGemmTileShapes)
    if (s.bm == bm && s.bn == bn && s.tm == tm && s.tn == tn)
      return s;
  return std::nullopt;
}

GemmTileGeometry cgc::gemmTileGeometry(int64_t bm, int64_t bn, int64_t tm,
                                       int64_t tn) {
  int64_t perSlice = (bm / tm) * (bn / tn);
  int64_t slices = kTemplateThreads / perSlice;
  // K depth per slice and iteration: enough FMAs between barriers to cover
  // the next slice's load latency, within 48 KB of shared memory.
  int64_t depth = slices == 1 ? (tm * tn == 16 ? 32 : 16)
                  : slices <= 4 ? 16
                                : 8;
  return {slices * depth, slices};
}

// Eight warps a block, each a WM x WN tile of m16n8 mma tiles. The large
// tiles amortize the shared-memory fragment reads (a 64 x 32 warp tile
// reads 1.5 bytes of fragments per FMA, a 16 x 8 one 6); the small ones
// give a grid of batch-1 products enough blocks.
static const TensorCoreTileShape kTensorCoreTileShapes[] = {
    {128, 128, 64, 32}, {128, 64, 32, 32}, {64, 128, 32, 32},
    {64, 64, 32, 16},   {64, 32, 16, 16},  {32, 64, 16, 16},
    {32, 32, 16, 8},    {16, 64, 16, 8}};

ArrayRef<TensorCoreTileShape> cgc::tensorCoreTileShapes() {
  return kTensorCoreTileShapes;
}

std::optional<TensorCoreTileShape>
cgc::findTensorCoreTileShape(int64_t bm, int64_t bn, int64_t wm, int64_t wn) {
  for (const TensorCoreTileShape &s : kTensorCoreTileShapes)
    if (s.bm == bm && s.bn == bn && s.wm == wm && s.wn == wn)
      return s;
  return std::nullopt;
}

int64_t cgc::gemmPipelineStages(int64_t bm, int64_t bn, int64_t bk,
                                int64_t sharedBytes) {
  return std::min<int64_t>(4, sharedBytes / (4 * (bm + bn) * bk));
}

bool cgc::gemmTileAllowsAsyncCopies(int64_t bm, int64_t bn, int64_t bk,
                                    int64_t tm, int64_t tn, int64_t slices,
                                    int64_t sharedBytes) {
  return slices == 1 && tm * tn >= 24 && bk % 16 == 0 &&
         gemmPipelineStages(bm, bn, bk, sharedBytes) >= 2;
}

int64_t cgc::gemmSharedBytes(int64_t bm, int64_t bn, int64_t bk, int64_t tm,
                             int64_t tn, int64_t slices, int64_t stages,
                             bool asyncCopy) {
  if (asyncCopy)
    return 4 * stages * (bm + bn) * bk;
  int64_t tileFloats = 2 * bk * (bm + 4) + 2 * bk * (bn + 4);
  int64_t reductionFloats = slices > 1 ? tm * tn * kTemplateThreads : 0;
  return 4 * std::max(tileFloats, reductionFloats);
}

//===----------------------------------------------------------------------===//
// Kernel configs
//===----------------------------------------------------------------------===//

static int64_t entry(DenseI64ArrayAttr tile, unsigned i) {
  return tile && i < tile.size() ? tile[i] : 0;
}
int64_t KernelConfigAttr::blockTile(unsigned i) const {
  return entry(getBlockTile(), i);
}
int64_t KernelConfigAttr::threadTile(unsigned i) const {
  return entry(getThreadTile(), i);
}

/// The tile fields of a GEMM config must be a tile of the template with the
/// geometry the template derives from it.
static LogicalResult
verifyGemmTile(function_ref<InFlightDiagnostic()> emitError,
               DenseI64ArrayAttr block, DenseI64ArrayAttr thread,
               int64_t slices, int64_t stages, bool asyncCopy,
               int64_t splitK) {
  if (!block || block.size() != 3 || !thread || thread.size() != 2)
    return emitError() << "a gemm config needs block_tile [BM, BN, BK] and "
                          "thread_tile [TM, TN]";
  int64_t bm = block[0], bn = block[1], bk = block[2], tm = thread[0],
          tn = thread[1];
  if (!findGemmTileShape(bm, bn, tm, tn)) {
    InFlightDiagnostic d = emitError();
    d << "the GEMM template has no " << bm << "x" << bn << " tile of " << tm
      << "x" << tn << " a thread; it offers";
    for (const GemmTileShape &s : gemmTileShapes())
      d << " " << s.bm << "x" << s.bn << "/" << s.tm << "x" << s.tn;
    return d;
  }
  GemmTileGeometry g = gemmTileGeometry(bm, bn, tm, tn);
  if (bk != g.bk || slices != g.slices)
    return emitError() << "the GEMM template runs a " << bm << "x" << bn
                       << " tile with BK = " << g.bk << " and " << g.slices
                       << " slice(s), not BK = " << bk << " and " << slices;
  if (asyncCopy ? stages < 2 || stages > 4 : stages != 2)
    return emitError() << "GEMM stages must be 2 (register prefetch) or "
                          "2-4 with async_copy, got "
                       << stages;
  if (splitK < 1 || splitK > 64)
    return emitError() << "split_k must be 1-64, got " << splitK;
  return success();
}

/// Bytes of one element of a tensor-core operand type, 0 for any other.
int64_t cgc::tensorCoreOperandBytes(Type operand) {
  if (!operand)
    return 0;
  if (isa<FloatTF32Type>(operand))
    return 4;
  return operand.isF16() || operand.isBF16() ? 2 : 0;
}

/// A tensor-core config: a tile of that template, with the K depth it
/// derives from the operand type, one slice, the register double buffer.
static LogicalResult
verifyTensorCoreTile(function_ref<InFlightDiagnostic()> emitError,
                     DenseI64ArrayAttr block, DenseI64ArrayAttr thread,
                     int64_t slices, int64_t stages, bool asyncCopy,
                     int64_t splitK, Type operand, Type accumulator) {
  int64_t bytes = tensorCoreOperandBytes(operand);
  if (!bytes)
    return emitError() << "a tensor-core operand is tf32, f16 or bf16, not "
                       << operand;
  if (!accumulator.isF32())
    return emitError() << "tensor cores accumulate in f32, not "
                       << accumulator;
  if (!block || block.size() != 3 || !thread || thread.size() != 2)
    return emitError() << "a tensor-core gemm config needs block_tile [BM, "
                          "BN, BK] and thread_tile [WM, WN] (a warp's tile)";
  if (!findTensorCoreTileShape(block[0], block[1], thread[0], thread[1])) {
    InFlightDiagnostic d = emitError();
    d << "the tensor-core template has no " << block[0] << "x" << block[1]
      << " tile of " << thread[0] << "x" << thread[1]
      << " a warp; it offers";
    for (const TensorCoreTileShape &s : tensorCoreTileShapes())
      d << " " << s.bm << "x" << s.bn << "/" << s.wm << "x" << s.wn;
    return d;
  }
  // With async_copy, 16-bit operands stage f32 slices of 16 k or their
  // stored 16-bit values in slices of 32.
  if (block[2] != tensorCoreSliceDepth(bytes, asyncCopy) &&
      block[2] != tensorCoreSliceDepth(bytes, asyncCopy, true))
    return emitError() << "the tensor-core template takes K slices of "
                       << tensorCoreSliceDepth(bytes, asyncCopy) << " "
                       << operand << " values"
                       << (asyncCopy && bytes == 2
                               ? " with async_copy (f32 stages), or 32 "
                                 "(16-bit stages)"
                               : asyncCopy ? " with async_copy" : "")
                       << ", not " << block[2];
  if (slices != 1 || (asyncCopy ? stages < 2 || stages > 4 : stages != 2))
    return emitError() << "the tensor-core template runs one slice, and the "
                          "register double buffer (stages = 2) or 2-4 "
                          "cp.async stages (async_copy)";
  if (splitK < 1 || splitK > 64)
    return emitError() << "split_k must be 1-64, got " << splitK;
  return success();
}

/// A tensor-core attention config: 8 warps of 16 query rows x WK keys a
/// chunk (16 or 32), so the block's rows and its key chunk are
/// multiples of those whose warp counts multiply to 8; nothing of the GEMM
/// configs.
static LogicalResult
verifyTensorCoreAttention(function_ref<InFlightDiagnostic()> emitError,
                          DenseI64ArrayAttr block, DenseI64ArrayAttr thread,
                          int64_t slices, int64_t stages, bool asyncCopy,
                          int64_t splitK, Type operand, Type accumulator) {
  if (!tensorCoreOperandBytes(operand))
    return emitError() << "a tensor-core operand is tf32, f16 or bf16, not "
                       << operand;
  if (!accumulator.isF32())
    return emitError() << "tensor cores accumulate in f32, not "
                       << accumulator;
  int64_t warpKeys = thread && thread.size() == 2 ? thread[1] : 0;
  if (!block || block.size() != 2 || !thread || thread.size() != 2 ||
      thread[0] != kAttentionWarpRows ||
      (warpKeys != kAttentionMinWarpKeys && warpKeys != kAttentionMaxWarpKeys))
    return emitError() << "a tensor-core attention config needs block_tile "
                          "[R, KC] and thread_tile ["
                       << kAttentionWarpRows
                       << ", WK] (a warp's rows, and its keys of a chunk: "
                       << kAttentionMinWarpKeys << " or "
                       << kAttentionMaxWarpKeys << ")";
  if (block[0] <= 0 || block[1] <= 0 || block[0] % kAttentionWarpRows ||
      block[1] % warpKeys ||
      (block[0] / kAttentionWarpRows) * (block[1] / warpKeys) !=
          kTemplateThreads / 32)
    return emitError() << "a tensor-core attention block of " << block[0]
                       << " rows and " << block[1]
                       << " keys a chunk is not 8 warps of "
                       << kAttentionWarpRows << " rows x " << warpKeys
                       << " keys";
  if (slices != 1 || stages != 1 || asyncCopy || splitK != 1)
    return emitError() << "a tensor-core attention config has no slices, "
                          "stages, async_copy or split_k";
  return success();
}

/// A library call picks its own tiles: a config only says how the product
/// rounds its inputs (`operand`) and that it accumulates in f32.
static LogicalResult
verifyLibraryConfig(function_ref<InFlightDiagnostic()> emitError,
                    DenseI64ArrayAttr blockTile, DenseI64ArrayAttr threadTile,
                    int64_t slices, int64_t stages, int64_t splitK,
                    Type operand, Type accumulator) {
  if (blockTile || threadTile || slices != 1 || stages != 1 || splitK != 1)
    return emitError() << "a library config (cublaslt_matmul, cudnn_conv) "
                          "has no tiles, slices, stages or split_k: the "
                          "library picks its algorithm";
  if (!accumulator.isF32())
    return emitError() << "library calls accumulate in f32, not "
                       << accumulator;
  if (operand && !isa<FloatTF32Type>(operand) && !operand.isF16() &&
      !operand.isBF16())
    return emitError() << "a library config's operand is tf32, f16 or bf16, "
                          "not "
                       << operand;
  return success();
}

/// NCCL sums or gathers in the tensor's own type on its own kernels: a
/// config names that type and nothing else (its accumulator is not read).
static LogicalResult
verifyCollectiveConfig(function_ref<InFlightDiagnostic()> emitError,
                       KernelStrategy strategy, DenseI64ArrayAttr blockTile,
                       DenseI64ArrayAttr threadTile, int64_t slices,
                       int64_t stages, int64_t splitK, Type operand,
                       Type element) {
  StringRef name = stringifyKernelStrategy(strategy);
  if (blockTile || threadTile || slices != 1 || stages != 1 || splitK != 1 ||
      operand)
    return emitError() << "an " << name
                       << " config has no tiles, slices, stages, split_k or "
                          "operand: NCCL runs its own kernels";
  if (!isa<FloatType>(element))
    return emitError() << name << " takes floats, not " << element;
  return success();
}

LogicalResult KernelConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, KernelStrategy strategy,
    int64_t threads, DenseI64ArrayAttr blockTile, DenseI64ArrayAttr threadTile,
    int64_t slices, int64_t stages, bool asyncCopy, int64_t splitK,
    int64_t minBlocks, int64_t vectorWidth, Type element, Type accumulator,
    Type operand, bool deterministic) {
  // Every template is written for 256 threads a block (its index
  // arithmetic, its shared arrays and its launch bounds).
  if (threads != kTemplateThreads)
    return emitError() << "the kernel templates run " << kTemplateThreads
                       << " threads a block, not " << threads;
  if (minBlocks < 1 || minBlocks > 32)
    return emitError() << "min_blocks_per_multiprocessor must be 1-32";
  if (vectorWidth != 1 && vectorWidth != 2 && vectorWidth != 4)
    return emitError() << "vector_width must be 1, 2 or 4";
  if (deterministic && splitK > 1)
    return emitError() << "a deterministic config cannot split K (its "
                          "blocks would add partial sums atomically)";
  bool gemmLike = strategy == KernelStrategy::gemm ||
                  strategy == KernelStrategy::conv_gemm;
  if (strategy == KernelStrategy::nccl_all_reduce ||
      strategy == KernelStrategy::nccl_all_gather)
    return verifyCollectiveConfig(emitError, strategy, blockTile, threadTile,
                                  slices, stages, splitK, operand, element);
  if (strategy == KernelStrategy::cublaslt_matmul ||
      strategy == KernelStrategy::cudnn_conv)
    return verifyLibraryConfig(emitError, blockTile, threadTile, slices,
                               stages, splitK, operand, accumulator);
  if (operand && strategy == KernelStrategy::attention)
    return verifyTensorCoreAttention(emitError, blockTile, threadTile, slices,
                                     stages, asyncCopy, splitK, operand,
                                     accumulator);
  if (operand && !gemmLike)
    return emitError() << "only gemm, conv_gemm and attention configs run "
                          "on tensor cores (take an operand type)";
  if (operand)
    return verifyTensorCoreTile(emitError, blockTile, threadTile, slices,
                                stages, asyncCopy, splitK, operand,
                                accumulator);
  if (gemmLike)
    return verifyGemmTile(emitError, blockTile, threadTile, slices, stages,
                          asyncCopy, splitK);
  if (splitK != 1 || asyncCopy)
    return emitError() << "split_k and async_copy belong to gemm configs";
  if (strategy == KernelStrategy::single_op && blockTile) {
    int64_t t = blockTile.size() == 1 ? blockTile[0] : 0;
    if (t < 32 || t > kTemplateThreads || (t & (t - 1)))
      return emitError() << "a single_op block_tile is [threads a block "
                            "spends on one output]: a power of two from 32 "
                            "to "
                         << kTemplateThreads;
  }
  if (strategy == KernelStrategy::row_norm &&
      (blockTile || (threadTile && (threadTile.size() != 1 ||
                                    threadTile[0] < 1 || threadTile[0] > 32))))
    return emitError() << "a row_norm config takes no block_tile and at "
                          "most thread_tile [V]: a warp a row, 1 to 32 "
                          "values a lane";
  if (strategy == KernelStrategy::attention) {
    if (!blockTile || blockTile.size() != 2 || !threadTile ||
        threadTile.size() != 4)
      return emitError() << "an attention config needs block_tile [R, KC] "
                            "and thread_tile [SR, SK, OR, OC]";
    if (blockTile[0] % threadTile[0] || blockTile[0] % threadTile[2] ||
        blockTile[1] % 2)
      return emitError() << "attention tiles must divide the block's rows "
                            "and take an even key chunk";
  }
  return success();
}
