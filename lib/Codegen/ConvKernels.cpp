//===- ConvKernels.cpp - dedicated convolution templates ------------------===//
//
// Depthwise 2-d convolution (one input channel per group, f32): a thread
// computes 4 consecutive outputs of one row of one channel, with the
// channel's window of weights in registers; the 4 outputs' windows overlap,
// so each input pixel is loaded once for all of them (the loads have equal
// addresses the compiler merges). Bias and the fused epilogue run in the
// store, per output. Regular convolutions are implicit GEMMs
// (GemmKernels.cpp).
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"

using namespace mlir;

namespace cgc {
namespace codegen {

FailureOr<SmallVector<Launch>> writeDepthwiseConv(ConvOp conv,
                                                  ParamResolver &params) {
  Value x = conv.getInput(), w = conv.getWeight(), y = conv.getOutput();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  if (xs.size() != 4 || !elementType(y).isF32() || !elementType(x).isF32() ||
      !elementType(w).isF32() ||
      (conv.getBias() && !elementType(conv.getBias()).isF32()))
    return failure();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t Ho = ys[2], Wo = ys[3], KH = ws[2], KW = ws[3];
  if (conv.getGroup() != C || ys[1] != C || ws[0] != C || ws[1] != 1 ||
      KH * KW > 49)
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
       ", ho = (f / " + ll(WQ) + ") % " + ll(Ho) + ", c = (f / " +
       ll(WQ * Ho) + ") % " + ll(C) + ", n = f / " + ll(WQ * Ho * C) + ";\n";
  t += "  float wv[" + s(KH * KW) + "];\n#pragma unroll\n  for (int i = 0; i < " +
       s(KH * KW) + "; ++i) wv[i] = " + pw + "[c * " + ll(KH * KW) +
       " + i];\n";
  t += "  float acc[" + s(kOut) + "] = {};\n";
  t += "  const float *xp = " + px + " + (n * " + ll(C) + " + c) * " +
       ll(H * W) + ";\n";
  t += "#pragma unroll\n  for (int ky = 0; ky < " + s(KH) +
       "; ++ky) {\n    const long long hi = ho * " + ll(st[0]) + " - " +
       ll(pads[0]) + " + ky * " + ll(dil[0]) + ";\n    if (hi < 0 || hi >= " +
       ll(H) + ") continue;\n";
  t += "#pragma unroll\n    for (int u = 0; u < " + s(kOut) +
       "; ++u)\n#pragma unroll\n      for (int kx = 0; kx < " + s(KW) +
       "; ++kx) {\n        const long long wi = (wo0 + u) * " + ll(st[1]) +
       " - " + ll(pads[1]) + " + kx * " + ll(dil[1]) +
       ";\n        if (wi >= 0 && wi < " + ll(W) +
       ") acc[u] = fmaf(xp[hi * " + ll(W) + " + wi], wv[ky * " + s(KW) +
       " + kx], acc[u]);\n      }\n  }\n";
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

} // namespace codegen
} // namespace cgc
