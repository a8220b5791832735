//===- NeuralNetOps.cpp - importers of matmul/conv/norm/reduce ops --------===//

#include "ImportHelpers.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

Results importMatMul(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  return single(ctx.create1<MatMulOp>({(*in)[0], (*in)[1]}));
}

Results importGemm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  SmallVector<Value> operands = *in;
  if (Value c = ctx.input(2))
    operands.push_back(c);
  return single(ctx.create1<GemmOp>(
      operands, {ctx.namedF64("alpha", ctx.getFloat("alpha", 1.0)),
                 ctx.namedF64("beta", ctx.getFloat("beta", 1.0)),
                 ctx.namedBool("trans_a", ctx.getInt("transA", 0) != 0),
                 ctx.namedBool("trans_b", ctx.getInt("transB", 0) != 0)}));
}

Results importLayerNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, 2);
  if (failed(in))
    return failure();
  if (ctx.isOutputUsed(1) || ctx.isOutputUsed(2)) {
    ctx.error() << "the Mean and InvStdDev outputs (training) are not "
                   "supported";
    return failure();
  }
  int64_t rank = tensorType((*in)[0]).getRank();
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  if (ctx.getInt("stash_type", 1) != 1) {
    ctx.error() << "only stash_type=1 (float32 statistics) is supported";
    return failure();
  }
  SmallVector<Value> operands = *in;
  if (Value bias = ctx.input(2))
    operands.push_back(bias);
  return single(ctx.create1<LayerNormOp>(
      operands, {ctx.namedI64("axis", *axis),
                 ctx.namedF64("epsilon", ctx.getFloat("epsilon", 1e-5))}));
}

} // namespace

void cgc::onnx_import::registerNeuralNetOps(ImporterTable &t) {
  auto add = [&](const char *name, ImportFn fn, std::string note) {
    t[name] = OpImporter{std::move(fn), std::move(note)};
  };
  add("MatMul", importMatMul, "`cgc.matmul`");
  add("Gemm", importGemm, "`cgc.gemm`");
  add("LayerNormalization", importLayerNorm,
      "`cgc.layer_norm` (inference output only)");
}
