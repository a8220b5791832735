//===- Conv.cpp - convolution templates -----------------------------------===//
//
// 2-d f32 convolutions with one group run on the tiled GEMM template
// (Gemm.cpp): a 1x1 stride-1 convolution as a plain GEMM, others as an
// implicit GEMM (M = output channels, N = batch x output pixels, K = input
// channels x window). Depthwise 2-d f32 ones have their own template: a
// thread computes 4 consecutive outputs of one row of one channel, with
// the channel's window of weights in registers; the 4 outputs' windows
// overlap, so each input pixel is loaded once for all of them (the loads
// have equal addresses the compiler merges). Every other convolution
// (channels-last ones too, where cuDNN does not take them), and every
// transposed one, is one thread per output element. Bias and the
// fused epilogue run in the store, per output.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "OpTemplates.h"
#include "cgc/Codegen/KernelGen.h"

using namespace mlir;

namespace cgc {
namespace codegen {

/// Whether a non-negative index below `bound` fits a signed 32-bit int.
static bool fitsIndex32(int64_t bound) {
  return bound < (int64_t(1) << 31);
}

FailureOr<SmallVector<Launch>> writeGemmConv(ConvOp conv,
                                             ParamResolver &params,
                                             KernelConfigAttr config) {
  Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  // Both templates read channels first.
  if (xs.size() != 4 || conv.getGroup() != 1 || conv.getChannelsLast() ||
      !elementType(y).isF32() || !elementType(x).isF32() ||
      !elementType(w).isF32())
    return failure();
  if (conv.getBias() && !elementType(conv.getBias()).isF32())
    return failure();
  ArrayRef<int64_t> strides = conv.getStrides(), dil = conv.getDilations(),
                    pads = conv.getPads();
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return failure();
  const int64_t batch = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t Co = ys[1], Ho = ys[2], Wo = ys[3];
  const int64_t KH = ws[2], KW = ws[3];
  if (ws[1] != C || ws[0] != Co)
    return failure();
  const int64_t HWo = Ho * Wo, window = KH * KW;
  bool pointwise = KH == 1 && KW == 1 && strides[0] == 1 && strides[1] == 1 &&
                   pads[0] == 0 && pads[1] == 0 && pads[2] == 0 &&
                   pads[3] == 0 && H == Ho && W == Wo;
  GemmProblem p;
  p.m = Co;
  p.n = batch * HWo;
  p.k = C * window;
  std::string px = params.input(x), pw = params.input(w);
  p.loadA = pw + "[gm * " + ll(p.k) + " + gk]";
  p.aContiguousK = true;
  p.bContiguousN = true;
  p.aVec4 = p.k % 4 == 0 && plannedFloat4Loadable(w);
  // The im2col index math divides gk and gn by constants per element
  // loaded: 64-bit divisions are emulated in several 32-bit steps, so
  // where every index fits in 31 bits it is done in unsigned 32-bit
  // arithmetic (the addresses stay 64-bit). A pointwise convolution
  // divides once per float4 and keeps 64-bit math (the 32-bit form made a
  // MobileNetV2 kernel spill there).
  const bool index32 = !pointwise && fitsIndex32(p.n) && fitsIndex32(p.k) &&
                       fitsIndex32(batch * C * H * W);
  auto num = [&](int64_t v) {
    return index32 ? std::to_string(v) + "u" : ll(v);
  };
  std::string gk = index32 ? "(unsigned)gk" : "gk";
  std::string gn = index32 ? "(unsigned)gn" : "gn";
  std::string img = "(" + gn + " / " + num(HWo) + ")",
              pix = "(" + gn + " % " + num(HWo) + ")";
  if (pointwise) {
    p.loadB = px + "[((long long)" + img + " * " + ll(C) + " + gk) * " +
              ll(HWo) + " + " + pix + "]";
    p.bVec4 = HWo % 4 == 0 && plannedFloat4Loadable(x);
  } else {
    // Input pixel of (gk, gn): channel, window position, output position;
    // hi and wi may be negative (padding), so signed.
    std::string index = index32 ? "int" : "long long";
    auto sig = [&](const std::string &e) {
      return index32 ? "(int)" + e : e;
    };
    std::string ci = "(" + gk + " / " + num(window) + ")";
    std::string ky =
        sig("(" + gk + " % " + num(window) + " / " + num(KW) + ")");
    std::string kx = sig("(" + gk + " % " + num(KW) + ")");
    std::string hi = "(" + sig("(" + pix + " / " + num(Wo) + ")") + " * " +
                     str(strides[0]) + " - " + str(pads[0]) + " + " + ky +
                     " * " + str(dil[0]) + ")";
    std::string wi = "(" + sig("(" + pix + " % " + num(Wo) + ")") + " * " +
                     str(strides[1]) + " - " + str(pads[1]) + " + " + kx +
                     " * " + str(dil[1]) + ")";
    p.loadB = "[&]() -> float { const " + index + " hi = " + hi +
              ", wi = " + wi + "; return (hi >= 0 && hi < " + str(H) +
              " && wi >= 0 && wi < " + str(W) + ") ? " + px +
              "[(((long long)" + img + " * " + ll(C) + " + " + ci + ") * " +
              ll(H) + " + hi) * " + ll(W) + " + wi] : 0.0f; }()";
  }
  std::string value = "cgc_v";
  if (Value b = conv.getBias())
    value = "(cgc_v + " + params.input(b) + "[gm])";
  p.epilogue = "      const long long w = ((long long)" + img + " * " +
               ll(Co) + " + gm) * " + ll(HWo) + " + " + pix + ";\n" +
               params.store(y, value, "w");
  return writeGemm(p, config, conv);
}

FailureOr<SmallVector<Launch>> writeDepthwiseConv(ConvOp conv,
                                                  ParamResolver &params) {
  Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  if (xs.size() != 4 || conv.getChannelsLast() || !elementType(y).isF32() ||
      !elementType(x).isF32() || !elementType(w).isF32() ||
      (conv.getBias() && !elementType(conv.getBias()).isF32()))
    return failure();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t Ho = ys[2], Wo = ys[3], KH = ws[2], KW = ws[3];
  if (static_cast<int64_t>(conv.getGroup()) != C || ys[1] != C ||
      ws[0] != C || ws[1] != 1 || KH * KW > 49)
    return failure();
  ArrayRef<int64_t> st = conv.getStrides(), dil = conv.getDilations(),
                    pads = conv.getPads();
  if (st.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return failure();
  constexpr int64_t kOut = 4;
  const int64_t WQ = (Wo + kOut - 1) / kOut, total = N * C * Ho * WQ;
  std::string px = params.input(x), pw = params.input(w);
  std::string pb = conv.getBias() ? params.input(conv.getBias()) : "";
  auto s = [](int64_t v) { return std::to_string(v); };
  std::string t;
  t += "  // depthwise " + s(KH) + "x" + s(KW) + ", " + s(kOut) +
       " outputs a thread\n";
  t += "  const long long f = (long long)blockIdx.x * blockDim.x + "
       "threadIdx.x;\n  if (f >= " +
       ll(total) + ") return;\n";
  t += "  const long long wo0 = (f % " + ll(WQ) + ") * " + ll(kOut) +
       ", ho = (f / " + ll(WQ) + ") % " + ll(Ho) + ", c = (f / " + ll(WQ * Ho) +
       ") % " + ll(C) + ", n = f / " + ll(WQ * Ho * C) + ";\n";
  t += "  float wv[" + s(KH * KW) +
       "];\n#pragma unroll\n  for (int i = 0; i < " + s(KH * KW) +
       "; ++i) wv[i] = " + pw + "[c * " + ll(KH * KW) + " + i];\n";
  t += "  float acc[" + s(kOut) + "] = {};\n";
  t += "  const float *xp = " + px + " + (n * " + ll(C) + " + c) * " +
       ll(H * W) + ";\n";
  t += "#pragma unroll\n  for (int ky = 0; ky < " + s(KH) +
       "; ++ky) {\n    const long long hi = ho * " + ll(st[0]) + " - " +
       ll(pads[0]) + " + ky * " + ll(dil[0]) +
       ";\n    if (hi < 0 || hi >= " + ll(H) + ") continue;\n";
  t += "#pragma unroll\n    for (int u = 0; u < " + s(kOut) +
       "; ++u)\n#pragma unroll\n      for (int kx = 0; kx < " + s(KW) +
       "; ++kx) {\n        const long long wi = (wo0 + u) * " + ll(st[1]) +
       " - " + ll(pads[1]) + " + kx * " + ll(dil[1]) +
       ";\n        if (wi >= 0 && wi < " + ll(W) + ") acc[u] = fmaf(xp[hi * " +
       ll(W) + " + wi], wv[ky * " + s(KW) + " + kx], acc[u]);\n      }\n  }\n";
  t += "#pragma unroll\n  for (int u = 0; u < " + s(kOut) +
       "; ++u) {\n    const long long wo = wo0 + u;\n    if (wo >= " + ll(Wo) +
       ") continue;\n    const long long i = ((n * " + ll(C) + " + c) * " +
       ll(Ho) + " + ho) * " + ll(Wo) + " + wo;\n";
  std::string value = pb.empty() ? "acc[u]" : "(acc[u] + " + pb + "[c])";
  t += params.store(y, value, "i");
  t += "  }\n";
  Launch launch;
  launch.body = std::move(t);
  launch.grid = {(total + 255) / 256, 1, 1};
  launch.block = {256, 1, 1};
  return SmallVector<Launch>{launch};
}

/// The output coordinates o0, o1, o2... of flat index i in channels-first
/// order (batch, channel, spatial dims), `stored` the output's dims in the
/// order they are stored in (channels last or not).
static std::string convOutputCoords(ArrayRef<int64_t> stored,
                                    bool channelsLast) {
  if (!channelsLast)
    return coords("i", stored, "o");
  int64_t rank = stored.size();
  std::string s = coords("i", stored, "q") +
                  "  const long long o0 = q0, o1 = q" + str(rank - 1);
  for (int64_t d = 2; d < rank; ++d)
    s += ", o" + str(d) + " = q" + str(d - 1);
  return s + ";\n";
}

/// One thread per output element (the template of convolutions no other
/// strategy takes), channels first or, with `channels_last`, last.
LogicalResult writeConv(OpContext &ctx, ConvOp conv) {
  Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
  if (!ctx.params.needed(y))
    return success();
  SmallVector<int64_t> xs = convDimsChannelsFirst(conv, x),
                       ws = convDimsChannelsFirst(conv, w),
                       ys = convDimsChannelsFirst(conv, y);
  bool last = conv.getChannelsLast();
  int64_t rank = xs.size(), spatial = rank - 2;
  int64_t group = conv.getGroup();
  int64_t C = xs[1], M = ys[1], CG = ws[1];
  if (group < 1 || M % group || C != CG * group)
    return ctx.unsupported("with inconsistent group/channel counts");
  SmallVector<int64_t> inSpatial(ArrayRef<int64_t>(xs).drop_front(2)),
      kernel(ArrayRef<int64_t>(ws).drop_front(2));
  ArrayRef<int64_t> pads = conv.getPads();
  SmallVector<int64_t> padsBegin(pads.take_front(spatial));
  std::string inPixel = linearIndex(prefixed("x", spatial), inSpatial);
  std::string tap = linearIndex(prefixed("k", spatial), kernel);
  std::string xIndex, wIndex;
  if (last) {
    xIndex = "(o0 * " + ll(numElements(inSpatial)) + " + " + inPixel +
             ") * " + ll(C) + " + g * " + ll(CG) + " + c";
    wIndex = "(o1 * " + ll(numElements(kernel)) + " + " + tap + ") * " +
             ll(CG) + " + c";
  } else {
    xIndex = "(o0 * " + ll(C) + " + g * " + ll(CG) + " + c) * " +
             ll(numElements(inSpatial)) + " + " + inPixel;
    wIndex = "(o1 * " + ll(CG) + " + c) * " + ll(numElements(kernel)) +
             " + " + tap;
  }
  std::string a = ctx.A(y);
  std::string body = convOutputCoords(shapeOf(y), last) +
                     "  const long long g = o1 / " + ll(M / group) + ";\n  " +
                     a + " acc = 0;\n  for (long long c = 0; c < " + ll(CG) +
                     "; ++c) {\n";
  std::string inner = std::string(4 + 2 * spatial, ' ') + "acc += (" + a + ")" +
                      ctx.in(x) + "[" + xIndex + "] * (" + a + ")" + ctx.in(w) +
                      "[" + wIndex + "];\n";
  body += windowLoops(
      kernel, conv.getStrides(), padsBegin, conv.getDilations(),
      [&](int64_t d) {
        return "x" + str(d) + " < 0 || x" + str(d) + " >= " + ll(inSpatial[d]);
      },
      inner, 4);
  body += "  }\n";
  if (Value b = conv.getBias())
    body += "  acc += (" + a + ")" + ctx.in(b) + "[o1];\n";
  body += ctx.params.store(y, "(" + ctx.T(y) + ")acc", "i");
  ctx.perElement(numElements(ys), body);
  return success();
}

LogicalResult writeConvTranspose(OpContext &ctx, ConvTransposeOp conv) {
  Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  int64_t rank = xs.size(), spatial = rank - 2;
  int64_t group = conv.getGroup();
  int64_t C = xs[1], M = ys[1], MG = ws[1];
  if (group < 1 || C % group || M != MG * group || ws[0] != C)
    return ctx.unsupported("with inconsistent group/channel counts");
  int64_t CG = C / group;
  SmallVector<int64_t> inSpatial(xs.drop_front(2)), kernel(ws.drop_front(2));
  ArrayRef<int64_t> strides = conv.getStrides(),
                    dilations = conv.getDilations(), pads = conv.getPads();
  std::string a = ctx.A(y);
  std::string body = coords("i", ys, "o") + "  const long long g = o1 / " +
                     ll(MG) + ", mm = o1 % " + ll(MG) + ";\n  " + a +
                     " acc = 0;\n  for (long long c = 0; c < " + ll(CG) +
                     "; ++c) {\n    const long long ci = g * " + ll(CG) +
                     " + c;\n";
  std::string loops;
  for (int64_t d = 0; d < spatial; ++d) {
    std::string pad(4 + 2 * d, ' ');
    std::string k = "k" + str(d), t = "t" + str(d), xv = "x" + str(d);
    loops += pad + "for (long long " + k + " = 0; " + k + " < " +
             ll(kernel[d]) + "; ++" + k + ") {\n" + pad + "  const long long " +
             t + " = o" + str(d + 2) + " + " + ll(pads[d]) + " - " + k + " * " +
             ll(dilations[d]) + ";\n" + pad + "  if (" + t + " < 0 || " + t +
             " % " + ll(strides[d]) + " != 0) continue;\n" + pad +
             "  const long long " + xv + " = " + t + " / " + ll(strides[d]) +
             ";\n" + pad + "  if (" + xv + " >= " + ll(inSpatial[d]) +
             ") continue;\n";
  }
  loops +=
      std::string(4 + 2 * spatial, ' ') + "acc += (" + a + ")" + ctx.in(x) +
      "[(o0 * " + ll(C) + " + ci) * " + ll(numElements(inSpatial)) + " + " +
      linearIndex(prefixed("x", spatial), inSpatial) + "] * (" + a + ")" +
      ctx.in(w) + "[(ci * " + ll(MG) + " + mm) * " + ll(numElements(kernel)) +
      " + " + linearIndex(prefixed("k", spatial), kernel) + "];\n";
  for (int64_t d = spatial - 1; d >= 0; --d)
    loops += std::string(4 + 2 * d, ' ') + "}\n";
  body += loops + "  }\n";
  if (Value b = conv.getBias())
    body += "  acc += (" + a + ")" + ctx.in(b) + "[o1];\n";
  body += ctx.params.store(y, "(" + ctx.T(y) + ")acc", "i");
  ctx.perElement(numElements(ys), body);
  return success();
}

} // namespace codegen
} // namespace cgc
