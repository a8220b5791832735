//===- Attention.cpp - fused attention groups -----------------------------===//
//
// An `attention` group (see the fuse pass): S = Q x Kt, elementwise ops of
// S, a softmax over its last axis, O = P x V, an epilogue. One block per
// batch index and R query rows: the rows of Q and of S/P stay in shared
// memory, Kt and V are read coalesced (along the key and the value dim).
// Both products are register-tiled: a thread computes up to 4 rows x 2 keys
// of the scores (Q stored d-major, so its 4 rows are one float4; keys
// staged KC at a time, read as float2) and up to 4 rows x 2 columns of O
// (P stored key-major, so 4 rows of a key are one float4; V staged KC keys
// at a time where K was). At 4 x 2, shared memory is read about four times
// less per multiply-add than with a thread per output row segment.
// A config with an operand type takes the tensor-core kernel instead
// (AttentionTensorCore.cpp).
//
//===----------------------------------------------------------------------===//

#include "AttentionParts.h"
#include "cgc/Codegen/KernelGen.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {

//===----------------------------------------------------------------------===//
// The group and its operands
//===----------------------------------------------------------------------===//

FailureOr<AttentionGroup> matchAttentionGroup(ArrayRef<Operation *> ops) {
  size_t at = 0;
  while (at < ops.size() && isViewOp(ops[at]))
    ++at;
  size_t softmaxAt = at + 1;
  while (softmaxAt < ops.size() && !isa<SoftmaxOp>(ops[softmaxAt]))
    ++softmaxAt;
  // P may be cast to the second product's type (a 16-bit model's softmax
  // in f32): the kernel keeps P as it computes it, the product rounds it.
  size_t mm2At = softmaxAt + 1;
  if (mm2At < ops.size() && isa<CastOp>(ops[mm2At]))
    ++mm2At;
  if (at >= ops.size() || !isa<MatMulOp>(ops[at]) || mm2At >= ops.size() ||
      !isa<MatMulOp>(ops[mm2At]))
    return ops.front()->emitError("malformed attention group");
  auto mm1 = cast<MatMulOp>(ops[at]);
  auto mm2 = cast<MatMulOp>(ops[mm2At]);
  ArrayRef<Operation *> prologue = ops.slice(at + 1, softmaxAt - at - 1);
  ArrayRef<Operation *> epilogue = ops.drop_front(mm2At + 1);
  // A transpose of the output is where it is stored; after it may come
  // only the output's 16-bit copy (--cgc-narrow-storage), stored there too.
  auto outT = epilogue.empty() ? TransposeOp()
                               : dyn_cast<TransposeOp>(epilogue.front());
  if (outT && epilogue.size() == 2) {
    auto copy = dyn_cast<CastOp>(epilogue.back());
    if (!copy || copy.getInput() != outT.getResult())
      outT = TransposeOp();
  } else if (epilogue.size() != 1) {
    outT = TransposeOp();
  }
  if (outT)
    epilogue = epilogue.drop_front();
  AttentionGroup g;
  g.mm1 = mm1;
  g.mm2 = mm2;
  g.softmaxInput = ops[softmaxAt]->getOperand(0);
  g.prologue = prologue;
  g.epilogue = epilogue;
  g.outT = outT;
  ArrayRef<int64_t> sShape = shapeOf(mm1.getResult());
  g.rank = sShape.size();
  g.batch = numElements(sShape.drop_back(2));
  g.L = sShape[g.rank - 2];
  g.L2 = sShape[g.rank - 1];
  g.D = shapeOf(mm1.getLhs()).back();
  g.Dv = shapeOf(mm2.getResult()).back();
  return g;
}

/// `first` plus the offset of batch index `bt` in a view of `shape` and
/// `strides` (its dims before the last two).
static std::string batchOffset(const std::string &first, ArrayRef<int64_t> shape,
                        ArrayRef<int64_t> strides, int64_t rank) {
  SmallVector<std::string> terms = {first};
  int64_t outStride = 1;
  for (int64_t d = rank - 3; d >= 0; --d) {
    terms.push_back("((bt / " + ll(outStride) + ") % " + ll(shape[d]) +
                    ") * " + ll(strides[d]));
    outStride *= shape[d];
  }
  return llvm::join(terms, " + ");
}

FailureOr<OperandView> operandView(GroupWriter &w, Value v, int64_t rank,
                                   Operation *where) {
  Block *body = &w.body();
  SmallVector<std::pair<Operation *, unsigned>> chain;
  while (Operation *def = v.getDefiningOp()) {
    if (def->getBlock() != body || !isViewOp(def))
      break;
    chain.push_back({def, cast<OpResult>(v).getResultNumber()});
    v = def->getOperand(0);
  }
  std::reverse(chain.begin(), chain.end());
  std::optional<StridedView> view =
      viewThrough(contiguousView(shapeOf(v)), chain);
  if (!view)
    return where->emitError("attention operand is no strided view");
  OperandView r;
  r.param = w.inputParam(v);
  r.offset = batchOffset(ll(view->offset), view->shape, view->strides, rank);
  r.rowStride = view->strides[rank - 2];
  r.colStride = view->strides[rank - 1];
  bool base = plannedFloat4Loadable(v) && view->offset % 4 == 0;
  for (int64_t d = 0; d < rank - 2; ++d)
    base = base && (view->shape[d] == 1 || view->strides[d] % 4 == 0);
  r.aligned4 = base && r.rowStride % 4 == 0;
  r.rowsAligned4 = base && r.colStride % 4 == 0;
  return r;
}

OutputView outputView(AttentionGroup g) {
  const int64_t rank = g.rank;
  ArrayRef<int64_t> oShape = shapeOf(g.mm2.getResult());
  TransposeOp outT = g.outT;
  StridedView oView = contiguousView(oShape);
  if (outT) {
    StridedView tView = contiguousView(shapeOf(outT.getResult()));
    for (auto [d, p] : llvm::enumerate(outT.getPerm()))
      oView.strides[p] = tView.strides[d];
  }
  return {oView, batchOffset("0ll", oShape, oView.strides, rank)};
}

namespace {

//===----------------------------------------------------------------------===//
// The tile: rows a block, keys a chunk, register tiles (from the config)
//===----------------------------------------------------------------------===//

/// The blocking of an attention kernel: query rows a block, keys a chunk
/// of K or V in shared memory, and a thread's register tiles of the scores
/// (rows x keys) and of O (rows x columns).
struct AttentionTile {
  int64_t rows, keysPerChunk;
  int64_t scoreRows, scoreKeys, outRows, outCols;
};

/// The blocking the kernel's config names (block_tile [R, KC], thread_tile
/// [SR, SK, OR, OC]).
AttentionTile attentionTileOf(KernelConfigAttr config) {
  return AttentionTile{config.blockTile(0),  config.blockTile(1),
                       config.threadTile(0), config.threadTile(1),
                       config.threadTile(2), config.threadTile(3)};
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

std::string num(int64_t v) { return std::to_string(v); }

/// Prints the kernel of one attention group, step by step, with the
/// group's sizes, operand views and tile as the names the steps share.
class AttentionPrinter {
public:
  AttentionPrinter(GroupWriter &w, const AttentionGroup &g,
                   const OperandView &qv, const OperandView &kv,
                   const OperandView &vv, const OutputView &o,
                   const AttentionTile &tile)
      : w(w), g(g), rank(g.rank), batch(g.batch), L(g.L), L2(g.L2), D(g.D),
        Dv(g.Dv), q(qv.param), kt(kv.param), v(vv.param), qOff(qv.offset),
        kOff(kv.offset), vOff(vv.offset), oOff(o.offset), qR(qv.rowStride),
        qC(qv.colStride), kR(kv.rowStride), kC(kv.colStride), vR(vv.rowStride),
        vC(vv.colStride), oView(o.view), R(tile.rows), KC(tile.keysPerChunk),
        SR(tile.scoreRows), SK(tile.scoreKeys), OR(tile.outRows),
        OC(tile.outCols), RT((L + R - 1) / R), RS(R + 4), KS(KC + 2),
        vVec(vC == 1 && Dv % 4 == 0 && vv.aligned4) {}

  /// The kernel body, or failure when a fused elementwise op has no code.
  FailureOr<std::string> print() {
    std::string t = declarations() + loadQueryRows();
    if (failed(scores(t)))
      return failure();
    t += softmax() + valueProduct();
    if (failed(epilogue(t)))
      return failure();
    return t;
  }

  /// Blocks of the launch: one per batch index and R query rows.
  int64_t blocks() const { return batch * RT; }

private:
  /// `const float NAME[W] = {...};` from W consecutive floats at ADDR.
  static std::string readVector(int64_t width, StringRef name,
                                const std::string &addr) {
    static const char *const lanes[] = {"x", "y", "z", "w"};
    if (width == 1)
      return "const float " + name.str() + "[1] = {" + addr + "};\n";
    std::string type = "float" + num(width),
                r = "const " + type + " " + name.str() +
                    "v = *reinterpret_cast<const " + type + " *>(&" + addr +
                    ");\n        const float " + name.str() + "[" + num(width) +
                    "] = {";
    for (int64_t i = 0; i < width; ++i)
      r += (i ? ", " : "") + name.str() + "v." + lanes[i];
    return r + "};\n";
  }

  /// Loads as unrolled loops of a fixed count (all of a thread's loads in
  /// flight at once): the head of the loop over `e`, element of `count`.
  static std::string each(int64_t count, const std::string &indent) {
    std::string r = indent + "#pragma unroll\n" + indent +
                    "for (int cgcI = 0; cgcI < " + num((count + 255) / 256) +
                    "; ++cgcI) {\n" + indent +
                    "  const int e = tid + cgcI * 256;\n";
    if (count % 256)
      r += indent + "  if (e >= " + num(count) + ") break;\n";
    return r;
  }

  /// Shared memory (Q and S key-major, one chunk of K or V) and the
  /// block's coordinates and operand offsets.
  std::string declarations() const {
    std::string t;
    t += "  // attention: batch=" + num(batch) + " L=" + num(L) +
         " keys=" + num(L2) + " D=" + num(D) + " Dv=" + num(Dv) + ", " +
         num(R) + " rows a block, " + num(KC) + " keys a chunk\n";
    t += "  __shared__ __align__(16) float cgcQt[" + num(D) + "][" + num(RS) +
         "];\n";
    t += "  __shared__ __align__(16) float cgcSt[" + num(L2) + "][" + num(RS) +
         "];\n";
    t += "  __shared__ __align__(16) float cgcKV[" +
         num(std::max(D * KS, KC * Dv)) + "];\n";
    t += "  const int tid = threadIdx.x;\n";
    t += "  const long long bt = blockIdx.x / " + ll(RT) +
         ", row0 = (blockIdx.x % " + ll(RT) + ") * " + ll(R) + ";\n";
    t += "  const long long qoff = " + qOff + ", koff = " + kOff +
         ", voff = " + vOff + ", ooff = " + oOff + ";\n";
    return t;
  }

  /// The block's R rows of Q, stored d-major (cgcQt[d][row]).
  std::string loadQueryRows() const {
    std::string t;
    t += each(R * D, "  ") + "    const int r = e / " + num(D) + ", d = e % " +
         num(D) + ";\n    cgcQt[d][r] = row0 + r < " + ll(L) + " ? (float)" +
         q + "[qoff + (row0 + r) * " + ll(qR) + " + d * " + ll(qC) +
         "] : 0.0f;\n  }\n";
    return t;
  }

  /// Scores and the elementwise ops on them, KC keys at a time: K's chunk
  /// is stored d-major (cgcKV[d * KS + key]), loaded along whichever of
  /// its dims is contiguous.
  LogicalResult scores(std::string &t) {
    bool dAlong = kR == 1;
    t += "  for (int j0 = 0; j0 < " + num(L2) + "; j0 += " + num(KC) +
         ") {\n    if (j0 > 0) __syncthreads();\n";
    t += each(KC * D, "    ") + "      const int jj = " +
         (dAlong ? "e / " + num(D) : "e % " + num(KC)) +
         ", d = " + (dAlong ? "e % " + num(D) : "e / " + num(KC)) +
         ";\n      cgcKV[d * " + num(KS) + " + jj] = j0 + jj < " + num(L2) +
         " ? (float)" + kt + "[koff + d * " + ll(kR) + " + (j0 + jj) * " +
         ll(kC) + "] : 0.0f;\n    }\n    __syncthreads();\n";
    const int64_t SG = R / SR;
    t += "    for (int e = tid; e < " + num(SG * ((KC + SK - 1) / SK)) +
         "; e += 256) {\n      const int rg = e % " + num(SG) + ", kg = e / " +
         num(SG) + ";\n      float acc[" + num(SR) + "][" + num(SK) +
         "] = {};\n#pragma unroll 8\n      for (int d = 0; d < " + num(D) +
         "; ++d) {\n        " +
         readVector(SR, "qs", "cgcQt[d][rg * " + num(SR) + "]") + "        " +
         readVector(SK, "ks",
                    "cgcKV[d * " + num(KS) + " + kg * " + num(SK) + "]") +
         "#pragma unroll\n        for (int u = 0; u < " + num(SR * SK) +
         "; ++u) acc[u / " + num(SK) + "][u % " + num(SK) + "] = fmaf(qs[u / " +
         num(SK) + "], ks[u % " + num(SK) + "], acc[u / " + num(SK) + "][u % " +
         num(SK) + "]);\n      }\n#pragma unroll\n      for (int u = 0; u < " +
         num(SR * SK) + "; ++u) {\n      const int r = rg * " + num(SR) +
         " + u / " + num(SK) + ";\n      const long long j = j0 + kg * " +
         num(SK) + " + u % " + num(SK) + ";\n      if (j >= " + ll(L2) +
         ") continue;\n      if (row0 + r >= " + ll(L) +
         ") { cgcSt[j][r] = 0.0f; continue; }\n      const long long i = (bt "
         "* " +
         ll(L) + " + row0 + r) * " + ll(L2) +
         " + j;\n      const float cgc_s = acc[u / " + num(SK) + "][u % " +
         num(SK) + "];\n";
    w.vars[g.mm1.getResult()] = "cgc_s";
    if (failed(w.writeElements(g.prologue, shapeOf(g.mm1.getResult()), "i", t,
                               /*storeResults=*/false)))
      return failure();
    t += "      cgcSt[j][r] = (float)" + w.vars.lookup(g.softmaxInput) +
         ";\n      }\n    }\n  }\n";
    t += "  __syncthreads();\n";
    return success();
  }

  /// Softmax: 256 / R threads a row, keys interleaved between them (their
  /// reads of a key-major row fall in different banks).
  std::string softmax() const {
    std::string t;
    const int64_t T = 256 / R;
    const std::string keys = "    for (int j = sub; j < " + num(L2) +
                             "; j += " + num(T) + ")";
    const std::string lanes =
        "    for (int o = " + num(T / 2) + "; o > 0; o >>= 1)";
    t += "  {\n    const int r = tid / " + num(T) + ", sub = tid % " + num(T) +
         ";\n    float mx = -__int_as_float(0x7f800000);\n" + keys +
         " mx = fmaxf(mx, cgcSt[j][r]);\n" + lanes +
         " mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));\n"
         "    float sum = 0.0f;\n" +
         keys +
         " { const float x = expf(cgcSt[j][r] - mx); cgcSt[j][r] = x; "
         "sum += x; }\n" +
         lanes + " sum += __shfl_xor_sync(0xffffffffu, sum, o);\n" +
         "    const float inv = 1.0f / sum;\n" + keys +
         " cgcSt[j][r] *= inv;\n  }\n";
    return t;
  }

  /// O = P x V, KC keys of V at a time in shared memory (where K's chunk
  /// was; the barrier after the softmax ends the last reads of K), the
  /// sums of a thread's tiles in registers across the chunks.
  std::string valueProduct() const {
    std::string t;
    const int64_t OG = R / OR, PG = OG * (Dv / OC), IT = (PG + 255) / 256;
    std::string vChunk;
    if (vVec) {
      const std::string dq = num(Dv / 4);
      vChunk = each(KC * Dv / 4, "    ") + "      const int jj = e / " + dq +
               ", c = (e % " + dq +
               ") * 4;\n      *reinterpret_cast<float4 *>("
               "&cgcKV[jj * " +
               num(Dv) + " + c]) = j0 + jj < " + num(L2) +
               " ? *reinterpret_cast<const float4 *>(&" + v +
               "[voff + (j0 + jj) * " + ll(vR) +
               " + c]) : make_float4(0.f, 0.f, 0.f, 0.f);\n    }\n";
    } else {
      vChunk = each(KC * Dv, "    ") + "      const int jj = e / " + num(Dv) +
               ", c = e % " + num(Dv) + ";\n      cgcKV[jj * " + num(Dv) +
               " + c] = j0 + jj < " + num(L2) + " ? (float)" + v +
               "[voff + (j0 + jj) * " + ll(vR) + " + c * " + ll(vC) +
               "] : 0.0f;\n    }\n";
    }
    t += "  __syncthreads();\n  float cgcO[" + num(IT) + "][" + num(OR * OC) +
         "] = {};\n";
    t += "  for (int j0 = 0; j0 < " + num(L2) + "; j0 += " + num(KC) +
         ") {\n    if (j0 > 0) __syncthreads();\n" + vChunk +
         "    __syncthreads();\n";
    t += "    const int jn = " + num(L2) + " - j0 < " + num(KC) + " ? " +
         num(L2) + " - j0 : " + num(KC) + ";\n";
    t += "#pragma unroll\n    for (int it = 0; it < " + num(IT) +
         "; ++it) {\n      const int e = tid + it * 256;\n      if (e >= " +
         num(PG) + ") continue;\n      const int rg = e % " + num(OG) +
         ", cg = e / " + num(OG) +
         ";\n#pragma unroll 4\n      for (int j = 0; "
         "j < jn; ++j) {\n        " +
         readVector(OR, "ps", "cgcSt[j0 + j][rg * " + num(OR) + "]") +
         "        " +
         readVector(OC, "vs",
                    "cgcKV[j * " + num(Dv) + " + cg * " + num(OC) + "]") +
         "#pragma unroll\n        for (int u = 0; u < " + num(OR * OC) +
         "; ++u) cgcO[it][u] = fmaf(ps[u / " + num(OC) + "], vs[u % " +
         num(OC) + "], cgcO[it][u]);\n      }\n    }\n  }\n";
    return t;
  }

  /// The epilogue per output element of the thread's tiles.
  LogicalResult epilogue(std::string &t) {
    const int64_t OG = R / OR, PG = OG * (Dv / OC), IT = (PG + 255) / 256;
    Value ov = g.mm2.getResult();
    std::string wExpr = "ooff + (row0 + r) * " + ll(oView.strides[rank - 2]) +
                        " + c * " + ll(oView.strides[rank - 1]);
    t += "#pragma unroll\n  for (int it = 0; it < " + num(IT) +
         "; ++it) {\n    const int e = tid + it * 256;\n    if (e >= " +
         num(PG) + ") continue;\n    const int rg = e % " + num(OG) +
         ", cg = e / " + num(OG) +
         ";\n#pragma unroll\n    for (int u = 0; u < " + num(OR * OC) +
         "; ++u) {\n    const int r = rg * " + num(OR) + " + u / " + num(OC) +
         ";\n    const long long c = cg * " + num(OC) + " + u % " + num(OC) +
         ";\n    if (row0 + r >= " + ll(L) +
         ") continue;\n    {\n    const "
         "long long w = " +
         wExpr + ";\n    {\n    const " + cType(elementType(ov)) +
         " cgc_o = cgcO[it][u];\n";
    w.vars[ov] = "cgc_o";
    if (g.outT)
      w.vars[g.outT.getResult()] = "cgc_o";
    if (failed(w.writeElements(g.epilogue, shapeOf(ov), "w", t)))
      return failure();
    t += "    }\n    }\n    }\n  }\n";
    return success();
  }

  GroupWriter &w;
  AttentionGroup g;
  const int64_t rank, batch, L, L2, D, Dv;
  const std::string q, kt, v, qOff, kOff, vOff, oOff;
  const int64_t qR, qC, kR, kC, vR, vC;
  const StridedView oView;
  const int64_t R, KC, SR, SK, OR, OC, RT, RS, KS;
  const bool vVec;
};

} // namespace

LogicalResult writeAttentionGroup(GroupWriter &w, ArrayRef<Operation *> ops) {
  FailureOr<AttentionGroup> g = matchAttentionGroup(ops);
  if (failed(g))
    return failure();
  FailureOr<OperandView> q =
      operandView(w, g->mm1.getLhs(), g->rank, ops.front());
  if (failed(q))
    return failure();
  FailureOr<OperandView> k =
      operandView(w, g->mm1.getRhs(), g->rank, ops.front());
  if (failed(k))
    return failure();
  FailureOr<OperandView> v =
      operandView(w, g->mm2.getRhs(), g->rank, ops.front());
  if (failed(v))
    return failure();
  if (w.config.usesTensorCores())
    return writeTensorCoreAttention(w, *g, *q, *k, *v);
  AttentionTile tile = attentionTileOf(w.config);
  int64_t sharedBytes =
      4 * attentionSharedFloats(tile.rows, g->D, g->L2, g->Dv,
                                tile.keysPerChunk);
  AttentionPrinter printer(w, *g, *q, *k, *v, outputView(*g), tile);
  return launchAttention(w, *g, "attention", sharedBytes, printer.blocks(),
                         [&] { return printer.print(); });
}

LogicalResult launchAttention(GroupWriter &w, const AttentionGroup &g,
                              StringRef kernelName, int64_t sharedBytes,
                              int64_t blocks,
                              function_ref<FailureOr<std::string>()> print) {
  // The config was chosen for this problem; a hand-written one may not fit.
  int64_t limit = lookupTargetOrDefault(w.kernel).getStaticSharedBytes();
  if (sharedBytes > limit)
    return w.kernel.emitError()
           << "kernel config's " << kernelName << " block of "
           << w.config.blockTile(0) << " rows and " << w.config.blockTile(1)
           << " keys a chunk needs " << sharedBytes
           << " bytes of shared memory, more than " << limit
           << " (ONNX node '" << nodeName(g.mm1) << "')";
  FailureOr<std::string> body = print();
  if (failed(body))
    return failure();
  w.launches.push_back(
      Launch{*body, {blocks, 1, 1}, {w.config.getThreads(), 1, 1}});
  return success();
}

} // namespace codegen
} // namespace cgc
