//===- LibraryCalls.cpp - kernel groups as library calls take them -------===//

#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"

#include "cgc/Dialect/Cgc/IR/CgcTraits.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"

using namespace mlir;
using namespace cgc;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

bool isLibraryType(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// The batch stride of an operand whose matrices hold `matrix` elements
/// under an output of batch dims `batch`: a full stride when its batch dims
/// are the output's (leading 1s aside), 0 when it has one matrix; none
/// when it broadcasts some batch dims and not others.
std::optional<int64_t> batchStride(ArrayRef<int64_t> operandBatch,
                                   ArrayRef<int64_t> batch, int64_t matrix) {
  int64_t count = ShapedType::getNumElements(operandBatch);
  if (count == 1)
    return 0;
  if (count != ShapedType::getNumElements(batch) ||
      operandBatch.size() > batch.size())
    return std::nullopt;
  ArrayRef<int64_t> tail = batch.take_back(operandBatch.size());
  if (!llvm::equal(operandBatch, tail))
    return std::nullopt;
  return matrix;
}

LogicalResult describeGemm(GemmOp gemm, LibraryMatmul &p,
                           std::string &reason) {
  ArrayRef<int64_t> out = shapeOf(gemm.getOutput()), a = shapeOf(gemm.getA());
  p.transA = gemm.getTransA();
  p.transB = gemm.getTransB();
  p.m = out[0];
  p.n = out[1];
  p.k = p.transA ? a[0] : a[1];
  p.alpha = gemm.getAlpha().convertToDouble();
  Value c = gemm.getC();
  if (!c)
    return success();
  double beta = gemm.getBeta().convertToDouble();
  ArrayRef<int64_t> cs = shapeOf(c);
  if (elementTypeOf(c) != elementTypeOf(gemm.getOutput())) {
    reason = "its C is not of the product's type";
    return failure();
  }
  if (llvm::equal(cs, out)) {
    p.c = c;
    p.beta = beta;
    return success();
  }
  bool row = (cs.size() == 1 && cs[0] == p.n) ||
             (cs.size() == 2 && cs[0] == 1 && cs[1] == p.n);
  if (!row || beta != 1.0) {
    reason = "its C broadcasts other than as a row added once";
    return failure();
  }
  p.bias = c;
  return success();
}

LogicalResult describeMatMul(MatMulOp matmul, LibraryMatmul &p,
                             std::string &reason) {
  SmallVector<int64_t> a(shapeOf(matmul.getLhs())), b(shapeOf(matmul.getRhs()));
  bool lhsMatrix = a.size() > 1, rhsMatrix = b.size() > 1;
  if (!lhsMatrix)
    a.insert(a.begin(), 1);
  if (!rhsMatrix)
    b.push_back(1);
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  ArrayRef<int64_t> out = shapeOf(matmul.getOutput());
  ArrayRef<int64_t> batch = out.drop_back(lhsMatrix + rhsMatrix);
  p.batch = ShapedType::getNumElements(batch);
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(a).drop_back(2),
                    bBatch = ArrayRef<int64_t>(b).drop_back(2);
  // A weight without batch dims under a batched lhs: one matrix of
  // batch x M rows, which cuBLASLt tiles better than a batch.
  if (ShapedType::getNumElements(bBatch) == 1 &&
      ShapedType::getNumElements(aBatch) == p.batch) {
    p.m *= p.batch;
    p.batch = 1;
    return success();
  }
  std::optional<int64_t> sa = batchStride(aBatch, batch, p.m * p.k),
                         sb = batchStride(bBatch, batch, p.k * p.n);
  if (!sa || !sb) {
    reason = "its operands broadcast only some batch dims";
    return failure();
  }
  p.strideA = *sa;
  p.strideB = *sb;
  p.strideD = p.m * p.n;
  return success();
}

/// The operand of `add` other than `chain`, if `add` adds it to `chain`.
Value addend(Operation *add, Value chain) {
  if (!isa<AddOp>(add))
    return nullptr;
  if (add->getOperand(0) == chain)
    return add->getOperand(1);
  if (add->getOperand(1) == chain)
    return add->getOperand(0);
  return nullptr;
}

/// Moves adds right after the product into the call: a row [N] (or [1, N])
/// becomes the bias, a tensor of D's shape C with beta = 1 (the exported
/// form of Linear's bias and of a residual). Returns the ops it took.
size_t absorbAdds(ArrayRef<Operation *> ops, LibraryMatmul &p) {
  size_t taken = 0;
  ArrayRef<int64_t> out = shapeOf(p.d);
  for (Operation *op : ops) {
    Value other = addend(op, p.d);
    if (!other || !p.d.hasOneUse() ||
        op->getResult(0).getType() != p.d.getType() ||
        elementTypeOf(other) != elementTypeOf(p.d))
      break;
    ArrayRef<int64_t> os = shapeOf(other);
    bool row = !os.empty() && os.back() == p.n &&
               ShapedType::getNumElements(os) == p.n && p.batch == 1;
    if (row && !p.bias) {
      p.bias = other;
    } else if (llvm::equal(os, out) && !p.c) {
      p.c = other;
      p.beta = 1.0;
    } else {
      break;
    }
    p.d = op->getResult(0);
    ++taken;
  }
  return taken;
}

/// The ops after `p.d`: elementwise, each of D's shape and type, the last
/// one the group's only result.
LogicalResult describeEpilogue(ArrayRef<Operation *> ops, Value d,
                               SmallVectorImpl<Operation *> &epilogue,
                               std::string &reason) {
  for (Operation *op : ops) {
    if (!op->hasTrait<Elementwise>() || op->getNumResults() != 1) {
      reason = "its epilogue has '" + op->getName().getStringRef().str() +
               "', which is not elementwise";
      return failure();
    }
    if (op->getResult(0).getType() != d.getType()) {
      reason = "its epilogue changes the product's shape or type";
      return failure();
    }
    epilogue.push_back(op);
  }
  return success();
}

/// The ops of a group a library call may compute: in an island's own
/// graph, `kind`. Empty with `reason` set when it may not.
SmallVector<Operation *> libraryGroupOps(KernelOp kernel, KernelKind kind,
                                         std::string &reason) {
  if (kernel.getKind() != kind) {
    reason = "it is not a " + stringifyKernelKind(kind).str() + " group";
    return {};
  }
  if (!isa<IslandOp>(kernel->getParentOp())) {
    reason = "it is not a node of an island's own graph (library calls are "
             "not made in If/Loop bodies or eager regions)";
    return {};
  }
  SmallVector<Operation *> ops = kernelComputeOps(kernel);
  if (ops.empty())
    reason = "it is empty";
  return ops;
}

/// The 16-bit copy of the group's result that --cgc-narrow-storage made
/// its last op (the group returns the result, then the copy), taken off
/// `ops`; null when there is none. The in-place epilogue writes both, the
/// library's output buffer being the f32 result's.
CastOp takeNarrowCopy(KernelOp kernel, ArrayRef<Operation *> &ops) {
  auto copy = ops.empty() ? CastOp() : dyn_cast<CastOp>(ops.back());
  Operation *terminator = kernel.getBody().front().getTerminator();
  if (!copy || terminator->getNumOperands() != 2 ||
      terminator->getOperand(0) != copy.getInput() ||
      terminator->getOperand(1) != copy.getOutput() || !isNarrowingCast(copy))
    return CastOp();
  ops = ops.drop_back();
  return copy;
}

/// The group returns exactly `last` (and its narrow copy, if any).
LogicalResult returnsOnly(KernelOp kernel, Value last, CastOp copy,
                          std::string &reason) {
  Operation *terminator = kernel.getBody().front().getTerminator();
  if (terminator->getNumOperands() != (copy ? 2u : 1u) ||
      terminator->getOperand(0) != last) {
    reason = "the group returns more than its last value";
    return failure();
  }
  return success();
}

} // namespace

FailureOr<LibraryMatmul> cgc::describeLibraryMatmul(KernelOp kernel,
                                                    std::string &reason) {
  SmallVector<Operation *> ops =
      libraryGroupOps(kernel, KernelKind::matmul, reason);
  if (ops.empty())
    return failure();
  if (ops.empty() || !isa<MatMulOp, GemmOp>(ops.front())) {
    reason = isa_and_nonnull<LayerNormOp>(ops.empty() ? nullptr : ops.front())
                 ? "its layer norm is fused before the product"
                 : "it does not start with its product";
    return failure();
  }
  LibraryMatmul p;
  p.product = ops.front();
  // Operands stored narrow (--cgc-narrow-storage) are read as stored.
  p.a = storedOperand(p.product->getOperand(0));
  p.b = storedOperand(p.product->getOperand(1));
  Value d = p.product->getResult(0);
  Type at = elementTypeOf(p.a), bt = elementTypeOf(p.b), dt = elementTypeOf(d);
  if (!isLibraryType(at) || at != bt || (dt != at && !dt.isF32())) {
    reason = "cuBLASLt multiplies f32, f16 or bf16 operands of one type";
    return failure();
  }
  if (auto gemm = dyn_cast<GemmOp>(p.product)) {
    if (failed(describeGemm(gemm, p, reason)))
      return failure();
  } else if (failed(describeMatMul(cast<MatMulOp>(p.product), p, reason))) {
    return failure();
  }
  if (p.m * p.n * p.batch == 0 || p.k == 0) {
    reason = "the product is empty";
    return failure();
  }
  p.d = d;
  ArrayRef<Operation *> rest = ArrayRef<Operation *>(ops).drop_front();
  CastOp copy = takeNarrowCopy(kernel, rest);
  rest = rest.drop_front(absorbAdds(rest, p));
  if (failed(describeEpilogue(rest, d, p.epilogue, reason)))
    return failure();
  Value last = p.epilogue.empty() ? p.d : p.epilogue.back()->getResult(0);
  if (failed(returnsOnly(kernel, last, copy, reason)))
    return failure();
  if (copy)
    p.epilogue.push_back(copy);
  return p;
}

int64_t LibraryConv::multiplyAdds() const {
  return output[0] * output[1] * output[2] * output[3] * filter[1] *
         filter[2] * filter[3];
}

LogicalResult cgc::cudnnCanConvolve(ConvOp conv, std::string &reason) {
  if (cast<RankedTensorType>(conv.getInput().getType()).getRank() != 4) {
    reason = "cuDNN nodes take 2-d convolutions only";
    return failure();
  }
  Type t = elementTypeOf(conv.getOutput());
  if (!isLibraryType(t) || elementTypeOf(conv.getInput()) != t ||
      elementTypeOf(conv.getWeight()) != t ||
      (conv.getBias() && elementTypeOf(conv.getBias()) != t)) {
    reason = "cuDNN convolves f32, f16 or bf16 tensors of one type";
    return failure();
  }
  ArrayRef<int64_t> pads = conv.getPads();
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) {
    reason = "its padding differs between the two sides of a dim";
    return failure();
  }
  return success();
}

FailureOr<LibraryConv> cgc::describeLibraryConv(KernelOp kernel,
                                                std::string &reason) {
  SmallVector<Operation *> ops =
      libraryGroupOps(kernel, KernelKind::conv, reason);
  if (ops.empty())
    return failure();
  auto conv = dyn_cast<ConvOp>(ops.front());
  if (!conv) {
    reason = "it does not start with its convolution";
    return failure();
  }
  if (failed(cudnnCanConvolve(conv, reason)))
    return failure();
  LibraryConv p;
  p.conv = conv;
  p.channelsLast = conv.getChannelsLast();
  SmallVector<int64_t> x = convDimsChannelsFirst(conv, conv.getInput()),
                       w = convDimsChannelsFirst(conv, conv.getWeight()),
                       y = convDimsChannelsFirst(conv, conv.getOutput());
  ArrayRef<int64_t> pads = conv.getPads();
  p.input.assign(x.begin(), x.end());
  p.filter.assign(w.begin(), w.end());
  p.output.assign(y.begin(), y.end());
  p.pads = {pads[0], pads[1]};
  p.strides.assign(conv.getStrides().begin(), conv.getStrides().end());
  p.dilations.assign(conv.getDilations().begin(), conv.getDilations().end());
  p.groups = conv.getGroup();
  p.type = elementTypeOf(conv.getOutput());
  if (CastOp rounding = narrowConvOutput(kernel)) {
    // Split by --cgc-narrow-conv-outputs: cuDNN reads the 16-bit input and
    // filter as stored and writes the group's 16-bit result itself.
    p.type = elementTypeOf(rounding.getOutput());
    if (elementTypeOf(storedOperand(conv.getInput())) != p.type ||
        elementTypeOf(storedOperand(conv.getWeight())) != p.type) {
      reason = "its output is stored in 16 bits but its input or filter "
               "is not (cuDNN convolves tensors of one type)";
      return failure();
    }
    return p;
  }
  Value d = conv.getOutput();
  ArrayRef<Operation *> rest = ArrayRef<Operation *>(ops).drop_front();
  CastOp copy = takeNarrowCopy(kernel, rest);
  if (failed(describeEpilogue(rest, d, p.epilogue, reason)))
    return failure();
  Value last = p.epilogue.empty() ? d : p.epilogue.back()->getResult(0);
  if (failed(returnsOnly(kernel, last, copy, reason)))
    return failure();
  if (copy)
    p.epilogue.push_back(copy);
  return p;
}

bool cgc::cudnnWillTake(KernelOp kernel, StringRef cudnn) {
  std::string reason;
  FailureOr<LibraryConv> p = describeLibraryConv(kernel, reason);
  return succeeded(p) && cudnnWillTake(kernel, *p, cudnn);
}

bool cgc::cudnnWillTake(KernelOp kernel, const LibraryConv &p,
                        StringRef cudnn) {
  bool tensorCores = kernel.getPrecision() || !p.type.isF32();
  return cudnn == "always" ||
         (cudnn == "auto" &&
          cudnnAutoTakes(p.groups, tensorCores, p.filter, p.multiplyAdds()));
}
