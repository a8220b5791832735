//===- GemmAsyncLoop.cpp - the cp.async main loop of the tiled GEMM -------===//
//
// The K loop the large register tiles of the tiled template (Gemm.cpp)
// take when both operands are plain 16-byte-aligned arrays: shared memory
// in `stages` slices filled by asynchronous copies (cp.async) that take no
// registers, so a thread fits in 128 registers and two blocks fit a
// multiprocessor.
//
//===----------------------------------------------------------------------===//

#include "GemmParts.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

/// One operand of the product as the loop copies and reads it: its stage
/// array `base` (cgcAs or cgcBs), the variable of its outer dim (gm or gn)
/// and the tile's first one, its element expression, the thread index
/// along it (ty or tx), its extent in the tile (BM or BN), a thread's
/// registers along it and the threads along it, whether K is its
/// contiguous dim, and its bounds conditions.
struct AsyncOperand {
  std::string base, outerVar, outer0, load, thread;
  int64_t extent, perThread, threads;
  bool contiguousK;
  ArrayRef<std::string> terms;
};

/// The copies of an operand's part of one K slice into a stage (in
/// cgcIssue): 16 bytes each, `e` the thread's vector.
std::string sliceCopies(const AsyncOperand &o, int64_t BK) {
  const int64_t C = BK / 4;
  std::string t;
  const int64_t vectors = o.extent * BK / 4, g = groupOf(o.perThread);
  t += "#pragma unroll\n    for (int i = 0; i < " + s(ceilDiv(vectors, 256)) +
       "; ++i) {\n      const int e = tid + i * 256;\n";
  if (vectors % 256)
    t += "      if (e >= " + s(vectors) + ") break;\n";
  std::string outer, k, at;
  if (o.contiguousK) {
    outer = "e / " + s(C);
    k = "(e % " + s(C) + ") * 4";
    at = "(e / " + s(C) + ") * " + s(BK) + " + ((e % " + s(C) + ") ^ (e / " +
         s(C) + " / " + s(g) + " % " + s(C) + ")) * 4";
  } else {
    outer = "(e % " + s(o.extent / 4) + ") * 4";
    k = "e / " + s(o.extent / 4);
    at = "e * 4";
  }
  t += "      const long long " + o.outerVar + " = " + o.outer0 + " + " +
       outer + ", gk = k0 + " + k + ";\n";
  t += "      cgc_cp_async16(" + o.base + " + " + at + ", &(" + o.load + "), " +
       (o.terms.empty() ? "true" : llvm::join(o.terms, " && ")) + ");\n    }\n";

  return t;
}

/// The reads of a thread's fragment of an operand for the KV k steps from
/// kq into registers a[c][i] or b[c][j].
std::string fragmentReads(const AsyncOperand &o, int64_t BK, int64_t KV) {
  const int64_t C = BK / 4;
  std::string t;
  std::string dst = o.base == "cgcAs" ? "a" : "b";
  const int64_t g = groupOf(o.perThread);
  if (o.contiguousK) {
    // Register row i: 4 consecutive k in one float4.
    std::string key =
        g > 1 ? "(" + o.thread + " + i / " + s(g) + " * " + s(o.threads) +
                    ") % " + s(C)
              : "(" + o.thread + " * " + s(o.perThread) + " + i) % " + s(C);
    std::string vt = KV == 4 ? "float4" : "float2";
    t += "#pragma unroll\n      for (int i = 0; i < " + s(o.perThread) +
         "; ++i) {\n        const " + vt + " q = *reinterpret_cast<const " +
         vt + " *>(&" + o.base + "[" +
         lane(o.thread, "i", o.perThread, o.threads) + " * " + s(BK) +
         " + ((kq / 4) ^ (" + key + ")) * 4 + kq % 4]);\n";
    t += "        " + dst + "[0][i] = q.x; " + dst + "[1][i] = q.y;";
    if (KV == 4)
      t += " " + dst + "[2][i] = q.z; " + dst + "[3][i] = q.w;";
    t += "\n      }\n";
    return t;
  }
  // Row kq + c of the slice: the thread's groups of 4 (or 2) outputs.
  t += "#pragma unroll\n      for (int c = 0; c < " + s(KV) + "; ++c) {\n";
  if (g > 1) {
    const char *type = g == 4 ? "float4" : "float2";
    t += "#pragma unroll\n        for (int g = 0; g < " + s(o.perThread / g) +
         "; ++g) {\n          const " + type + " q = *reinterpret_cast<const " +
         type + " *>(&" + o.base + "[(kq + c) * " + s(o.extent) + " + g * " +
         s(g * o.threads) + " + " + o.thread + " * " + s(g) + "]);\n";
    t += "          " + dst + "[c][" + s(g) + " * g] = q.x; " + dst + "[c][" +
         s(g) + " * g + 1] = q.y;";
    if (g == 4)
      t += " " + dst + "[c][4 * g + 2] = q.z; " + dst + "[c][4 * g + 3] = q.w;";
    t += "\n        }\n";
  } else {
    t += "#pragma unroll\n        for (int i = 0; i < " + s(o.perThread) +
         "; ++i) " + dst + "[c][i] = " + o.base + "[(kq + c) * " + s(o.extent) +
         " + " + o.thread + " * " + s(o.perThread) + " + i];\n";
  }
  t += "      }\n";

  return t;
}

} // namespace

/// See GemmParts.h.
std::string pipelinedMainLoop(const GemmProblem &p, const GemmTile &tile,
                              int64_t KT, ArrayRef<std::string> aTerms,
                              ArrayRef<std::string> bTerms) {
  const int64_t BM = tile.bm, BN = tile.bn, BK = tile.bk, TM = tile.tm,
                TN = tile.tn, TY = BM / TM, TX = BN / TN;
  const int64_t stages = tile.stages, SF = (BM + BN) * BK;
  // K steps a fragment read covers (float4 or float2 along K).
  // (float2 steps of 2 measured no fewer registers under ptxas.)
  const int64_t KV = 4;
  AsyncOperand ops[2] = {
      {"cgcAs", "gm", "tm0", p.loadA, "ty", BM, TM, TY, p.aContiguousK, aTerms},
      {"cgcBs", "gn", "tn0", p.loadB, "tx", BN, TN, TX, !p.bContiguousN,
       bTerms}};
  std::string t;
  // Copies of one K slice into stage `st`.
  t += "  auto cgcIssue = [&](int st, long long k0) {\n";
  t += "    float *const cgcAs = cgcSm + st * " + s(SF) +
       ", *const cgcBs = cgcAs + " + s(BM * BK) + ";\n";
  for (const AsyncOperand &o : ops)
    t += sliceCopies(o, BK);
  t += "  };\n";
  t += "#pragma unroll\n  for (int st = 0; st < " + s(stages - 1) +
       "; ++st) {\n    if (st < " + s(KT) + ") cgcIssue(st, kBegin + st * " +
       ll(BK) + ");\n    cgc_cp_async_commit();\n  }\n";
  t += "  for (int kt = 0; kt < " + s(KT) + "; ++kt) {\n";
  // Slice kt has landed (at most stages - 2 younger groups in flight); the
  // barrier also ends every thread's reads of slice kt - 1, whose stage
  // the next copies overwrite.
  t +=
      "    cgc_cp_async_wait<" + s(stages - 2) + ">();\n    __syncthreads();\n";
  t += "    if (kt + " + s(stages - 1) + " < " + s(KT) + ") cgcIssue((kt + " +
       s(stages - 1) + ") % " + s(stages) + ", kBegin + (long long)(kt + " +
       s(stages - 1) + ") * " + ll(BK) + ");\n    cgc_cp_async_commit();\n";
  t += "    const float *const cgcAs = cgcSm + (kt % " + s(stages) + ") * " +
       s(SF) + ", *const cgcBs = cgcAs + " + s(BM * BK) + ";\n";
  t += "#pragma unroll\n    for (int kq = 0; kq < " + s(BK) +
       "; kq += " + s(KV) + ") {\n      float a[" + s(KV) + "][" + s(TM) +
       "], b[" + s(KV) + "][" + s(TN) + "];\n";
  for (const AsyncOperand &o : ops)
    t += fragmentReads(o, BK, KV);
  t += "#pragma unroll\n      for (int c = 0; c < " + s(KV) +
       "; ++c)\n#pragma unroll\n        for (int i = 0; i < " + s(TM) +
       "; ++i)\n#pragma unroll\n          for (int j = 0; j < " + s(TN) +
       "; ++j) cgc_acc[i][j] = fmaf(a[c][i], b[c][j], cgc_acc[i][j]);\n"
       "    }\n  }\n";
  return t;
}

} // namespace codegen
} // namespace cgc
