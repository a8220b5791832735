//===- IoPrecision.cpp - the model's inputs and outputs in f16/bf16 -------===//
//
// `--io-precision=fp16|bf16`: the graph's f32 inputs and outputs are
// declared in the half type, so a caller hands and receives half the bytes;
// a cast to f32 follows each such input and one to the half type precedes
// each such output (both fuse into the neighbouring kernels). What the
// model computes in between is unchanged (`--precision` is the other knob).
//
//===----------------------------------------------------------------------===//

#include "ImporterCore.h"

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace {

/// `type` with a half element type where it is an f32 tensor, else null.
RankedTensorType halved(Type type, Type half) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32() ? tensor.clone(half)
                                                   : RankedTensorType();
}

} // namespace

void cgc::onnx_import::applyIoPrecision(func::FuncOp func, Type half) {
  OpBuilder builder(func.getContext());
  Block &entry = func.front();
  builder.setInsertionPointToStart(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    Type f32Type = arg.getType();
    RankedTensorType halfType = halved(f32Type, half);
    if (!halfType)
      continue;
    arg.setType(halfType);
    auto widened = CastOp::create(builder, func.getLoc(), f32Type, arg);
    arg.replaceAllUsesExcept(widened, widened);
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  builder.setInsertionPoint(ret);
  for (OpOperand &operand : ret->getOpOperands())
    if (RankedTensorType halfType = halved(operand.get().getType(), half))
      operand.set(CastOp::create(builder, ret.getLoc(), halfType,
                                 operand.get()));
  func.setType(builder.getFunctionType(entry.getArgumentTypes(),
                                       ret.getOperandTypes()));
}
