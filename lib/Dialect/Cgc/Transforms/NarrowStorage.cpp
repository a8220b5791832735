//===- NarrowStorage.cpp - product operands stored in their precision -----===//
//
// Under --precision=fp16|bf16 a tensor-core product rounds each f32
// operand to the 16-bit type as it loads it. Rounding where the operand is
// stored gives the same numbers with half the bytes, and lets cuBLASLt
// multiply 16-bit operands at the tensor cores' own rate (with f32
// operands it is asked to round them itself, and takes TF32 kernels). So
// this pass stores such operands narrow:
//   - a weight (an f32 constant) becomes a constant of the 16-bit type,
//     rounded to nearest even as the device rounds;
//   - a value computed by an elementwise, norm, matmul, attention,
//     convolution, pooling or Concat kernel gets a second result, its
//     16-bit copy, written by the same kernel (the f32 result is dropped
//     when nothing else reads it, except a matmul group's or a conv
//     group's cuDNN will compute: the library writes its product there,
//     and the in-place epilogue after it writes both);
//   - a static reshape or a transpose kernel between them becomes the
//     same view or transpose of the copy;
//   - the product's kernel reads the narrow value and widens it with a
//     `cgc.cast` at the top of its body, which the templates and library
//     calls see through (StoredOperands.h).
// A product is narrowed only when all of its operands can be (cuBLASLt
// multiplies operands of one type), only where it runs on tensor cores (a
// few-row gemm keeps FMAs on unrounded operands), and in matmul/gemm
// groups, or convolutions whose output --cgc-narrow-conv-outputs rounded
// (cuDNN takes one type for input, filter and output: those always). A
// conv group cuDNN computes in f32 can write a copy for them in its
// in-place epilogue.
// Nothing changes in value: every narrowed tensor is read only by
// products that round it to the same type. By default (`policy=auto`)
// the products cuBLASLt will compute are narrowed, and those whose
// generated kernel then stages its operands as stored (halfStagesFit:
// its cp.async loop keeps up to 4 slices of 16-bit values in flight,
// where f32 operands take the register loop with one); `always` narrows
// every tensor-core product's (the others then load 16-bit scalars).
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/ConstantData.h"
#include "cgc/Dialect/Cgc/IR/KernelTemplates.h"
#include "cgc/Dialect/Cgc/IR/LibraryCalls.h"
#include "cgc/Dialect/Cgc/IR/StoredOperands.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/MapVector.h"

namespace cgc {
#define GEN_PASS_DEF_CGCNARROWSTORAGE
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// The matmul or gemm of a matmul group (the group's first op) when it
/// runs on tensor cores, which round its operands as they load them; null
/// for the few-row products that keep FMAs (and read f32 weights as float4
/// rows, which 16-bit ones would not speed up).
Operation *tensorCoreProductOf(KernelOp kernel) {
  // A convolution whose output --cgc-narrow-conv-outputs rounded is one
  // cuDNN computes in 16 bits, on tensor cores.
  if (CastOp rounding = narrowConvOutput(kernel))
    return rounding.getInput().getDefiningOp();
  if (kernel.getKind() != KernelKind::matmul)
    return nullptr;
  Block &body = kernel.getBody().front();
  if (body.without_terminator().empty())
    return nullptr;
  Operation *first = &body.front();
  if (auto gemm = dyn_cast<GemmOp>(first))
    return takesWarpPerOutput(tensorTypeOf(gemm.getOutput()).getDimSize(0),
                              gemm.getTransB())
               ? nullptr
               : first;
  return isa<MatMulOp>(first) ? first : nullptr;
}

/// Whether `kernel` keeps its f32 result beside the copy even where
/// nothing reads it: a matmul group may become a cuBLASLt call, and a conv
/// group cuDNN will compute (the `cudnn` policy, as the selection decides)
/// is one; the library writes its product into the f32 buffer, which the
/// epilogue narrows. A conv group left to a template writes the copy alone
/// (MobileNetV2's depthwise convolutions: only their projections read them).
bool keepsWideResult(KernelOp kernel, StringRef cudnn) {
  return kernel.getKind() == KernelKind::matmul ||
         (kernel.getKind() == KernelKind::conv &&
          cudnnWillTake(kernel, cudnn));
}

/// A name for a type in a resource key: "bf16", "f16".
std::string typeName(Type t) {
  std::string name;
  llvm::raw_string_ostream os(name);
  t.print(os);
  return name;
}

/// `weight` rounded to `narrow` (nearest even, overflow to infinity, as
/// the device's conversions), or a null value when it cannot be read.
Value narrowWeight(ConstantOp weight, Type narrow) {
  std::optional<SmallVector<float>> floats = constantFloats(weight);
  if (!floats)
    return Value();
  const llvm::fltSemantics &semantics =
      cast<FloatType>(narrow).getFloatSemantics();
  SmallVector<uint16_t> bits;
  bits.reserve(floats->size());
  for (float f : *floats) {
    APFloat value(f);
    bool lost = false;
    value.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    bits.push_back(uint16_t(value.bitcastToAPInt().getZExtValue()));
  }
  auto type = tensorTypeOf(weight.getOutput()).clone(narrow);
  ArrayRef<char> bytes(reinterpret_cast<const char *>(bits.data()),
                       bits.size() * sizeof(uint16_t));
  return createConstantLike(weight, type, bytes, "." + typeName(narrow));
}

/// `kernel` rebuilt to yield `yielded` (values of its body) instead: old
/// results still yielded keep their uses, the others must have none.
KernelOp rebuildYielding(KernelOp kernel, ArrayRef<Value> yielded) {
  Block &body = kernel.getBody().front();
  Operation *yield = body.getTerminator();
  SmallVector<Value> before(yield->getOperands());
  yield->setOperands(yielded);
  OperationState state(kernel.getLoc(), kernel->getName());
  for (Value v : yielded)
    state.addTypes(v.getType());
  state.addAttributes(kernel->getAttrs());
  state.addRegion();
  OpBuilder b(kernel);
  auto fresh = cast<KernelOp>(b.create(state));
  fresh.getBody().takeBody(kernel.getBody());
  for (auto [k, old] : llvm::enumerate(before)) {
    auto kept = llvm::find(yielded, old);
    if (kept != yielded.end())
      kernel.getResult(k).replaceAllUsesWith(
          fresh.getResult(kept - yielded.begin()));
  }
  kernel.erase();
  return fresh;
}

/// The value `v` is a chain of static reshapes and transpose kernels of,
/// or `v`.
Value viewedValue(Value v) {
  while (true) {
    if (auto reshape = v.getDefiningOp<ReshapeOp>()) {
      v = reshape.getInput();
      continue;
    }
    TransposeOp transpose = soleTransposeOf(v.getDefiningOp());
    if (!transpose)
      return v;
    v = transpose.getInput();
  }
}

/// A copy of transpose kernel `kernel` that moves `input`, the narrow
/// copy of its input, right after it.
Value narrowTranspose(KernelOp kernel, TransposeOp transpose, Value input,
                      Type narrow) {
  auto type = tensorTypeOf(transpose.getResult()).clone(narrow);
  OperationState state(kernel.getLoc(), kernel->getName());
  state.addTypes(type);
  state.addAttributes(kernel->getAttrs());
  state.addRegion();
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  auto copy = cast<KernelOp>(b.create(state));
  copy.setName((kernel.getName() + "_" + typeName(narrow)).str());
  Block *body = new Block();
  copy.getBody().push_back(body);
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(transpose.getInput(), input);
  Operation *moved = b.clone(*transpose, mapping);
  moved->getResult(0).setType(type);
  YieldOp::create(b, kernel.getLoc(), moved->getResults());
  return copy.getResult(0);
}

/// The product operands to narrow, each with its kernel's 16-bit type.
using NarrowingPlan = SmallVector<std::pair<OpOperand *, Type>>;

/// Whether --cgc-select-kernel-config will give `kernel` to cuBLASLt under
/// its `cublaslt` option (the same rule and threshold; a tuning cache may
/// still decide otherwise, which costs speed, never a value).
bool libraryWillTake(KernelOp kernel, StringRef cublaslt) {
  std::string reason;
  FailureOr<LibraryMatmul> p = describeLibraryMatmul(kernel, reason);
  return succeeded(p) && cublasltPolicyTakes(cublaslt, p->multiplyAdds());
}

/// Whether the generated tensor-core kernel of `product` stages its
/// operands as they are stored once both are narrow (halfStagesFit): its
/// cp.async loop then keeps up to 4 K slices in flight, where f32 operands
/// take the register loop and one.
bool stagesNarrowOperands(Operation *product) {
  int64_t k, n;
  bool transA = false, transB = false;
  if (auto gemm = dyn_cast<GemmOp>(product)) {
    transA = gemm.getTransA();
    transB = gemm.getTransB();
    ArrayRef<int64_t> a = tensorTypeOf(gemm.getA()).getShape();
    k = transA ? a[0] : a[1];
    n = tensorTypeOf(gemm.getOutput()).getShape()[1];
  } else {
    auto matmul = cast<MatMulOp>(product);
    ArrayRef<int64_t> a = tensorTypeOf(matmul.getLhs()).getShape(),
                      b = tensorTypeOf(matmul.getRhs()).getShape();
    if (a.size() < 2 || b.size() < 2)
      return false;
    k = a.back();
    n = b.back();
  }
  return halfStagesFit(k, n, transA, transB);
}

NarrowingPlan planNarrowing(ModuleOp module, bool everyProduct,
                            StringRef cublaslt, StringRef cudnn) {
  NarrowingPlan plan;
  module.walk([&](KernelOp kernel) {
    Type narrow = narrowTypeOf(kernel);
    Operation *product = narrow ? tensorCoreProductOf(kernel) : nullptr;
    // A rounded convolution is cuDNN's, which takes one type: always
    // narrowed.
    if (!product ||
        (!isa<ConvOp>(product) && !everyProduct &&
         !libraryWillTake(kernel, cublaslt) && !stagesNarrowOperands(product)))
      return;
    MutableArrayRef<OpOperand> operands =
        product->getOpOperands().take_front(2);
    if (!llvm::all_of(operands, [&](OpOperand &operand) {
          return canStoreNarrow(operand.get(), kernel);
        }))
      return;
    for (OpOperand &operand : operands)
      plan.push_back({&operand, narrow});
  });
  return plan;
}

/// Adds to producer kernels the narrow copies `copies` asks for (value,
/// type) and returns each copy, keyed by the rebuilt kernel's f32 result.
DenseMap<std::pair<Value, Type>, Value>
makeKernelCopies(ArrayRef<std::pair<Value, Type>> copies,
                 SmallVectorImpl<KernelOp> &rebuilt) {
  // Group the copies by producer so that each producer is rebuilt once.
  llvm::MapVector<Operation *, SmallVector<std::pair<Value, Type>>> byKernel;
  for (auto copy : copies)
    byKernel[copy.first.getDefiningOp()].push_back(copy);
  DenseMap<std::pair<Value, Type>, Value> made;
  for (auto &[op, wanted] : byKernel) {
    auto kernel = cast<KernelOp>(op);
    Block &body = kernel.getBody().front();
    Operation *yield = body.getTerminator();
    SmallVector<Value> yielded(yield->getOperands());
    OpBuilder b(yield);
    // (f32 result number, type) of each copy, in the order yielded.
    SmallVector<std::pair<unsigned, Type>> order;
    for (auto [value, narrow] : wanted) {
      unsigned number = cast<OpResult>(value).getResultNumber();
      Value inner = yield->getOperand(number);
      Value copy = CastOp::create(b, inner.getLoc(),
                                  tensorTypeOf(inner).clone(narrow), inner)
                       .getOutput();
      yielded.push_back(copy);
      order.push_back({number, narrow});
    }
    KernelOp fresh = rebuildYielding(kernel, yielded);
    rebuilt.push_back(fresh);
    // The old results keep their positions: key the copies by the fresh
    // f32 results, which the readers now read.
    size_t first = fresh.getNumResults() - order.size();
    for (auto [k, key] : llvm::enumerate(order))
      made[{fresh.getResult(key.first), key.second}] =
          fresh.getResult(first + k);
  }
  return made;
}

/// Drops the results of `kernel` nothing reads any more (a value whose
/// every reader now reads its narrow copy), keeping at least one.
void dropUnreadResults(KernelOp kernel, StringRef cudnn) {
  if (keepsWideResult(kernel, cudnn))
    return;
  Operation *yield = kernel.getBody().front().getTerminator();
  SmallVector<Value> kept;
  for (auto [k, result] : llvm::enumerate(kernel.getResults()))
    if (!result.use_empty())
      kept.push_back(yield->getOperand(k));
  if (kept.size() == kernel.getNumResults() || kept.empty())
    return;
  rebuildYielding(kernel, kept);
}

struct CgcNarrowStoragePass
    : cgc::impl::CgcNarrowStorageBase<CgcNarrowStoragePass> {
  using Base::Base;

  void runOnOperation() override {
    copies.clear();
    weights.clear();
    views.clear();
    if ((policy != "auto" && policy != "always") ||
        !isLibraryPolicy(cublaslt) || !isLibraryPolicy(cudnn)) {
      getOperation().emitError()
          << "--cgc-narrow-storage: policy '" << policy
          << "' is none of auto, always, or cublaslt '" << cublaslt
          << "' or cudnn '" << cudnn << "' is none of auto, always, never";
      return signalPassFailure();
    }
    NarrowingPlan plan =
        planNarrowing(getOperation(), policy == "always", cublaslt, cudnn);
    if (plan.empty())
      return;
    // Kernels first, each rebuilt once with all of its copies; the uses
    // are product operands inside consumers, which the rebuilding keeps.
    llvm::SetVector<std::pair<Value, Type>> fromKernels;
    for (auto [use, narrow] : plan)
      if (Value base = viewedValue(use->get()); base.getDefiningOp<KernelOp>())
        fromKernels.insert({base, narrow});
    SmallVector<KernelOp> rebuilt;
    copies = makeKernelCopies(fromKernels.getArrayRef(), rebuilt);
    for (auto [use, narrow] : plan) {
      Value copy = copyOf(use->get(), narrow);
      if (!copy)
        return signalPassFailure();
      widenInto(use, copy);
    }
    // What only the products read is gone: views and transposes first
    // (they read the weights and results), latest first.
    for (Operation *view : llvm::reverse(views))
      if (view->use_empty())
        view->erase();
    for (Operation *weight : weights)
      if (weight->use_empty())
        weight->erase();
    for (KernelOp kernel : rebuilt)
      dropUnreadResults(kernel, cudnn);
  }

  /// The narrow copy of `v` (a weight, a kernel result copied already, or
  /// a static reshape or transpose kernel of one), made once per type;
  /// null after an error.
  Value copyOf(Value v, Type narrow) {
    if (Value known = copies.lookup({v, narrow}))
      return known;
    Value copy;
    Operation *def = v.getDefiningOp();
    if (auto weight = dyn_cast<ConstantOp>(def)) {
      copy = narrowWeight(weight, narrow);
      if (!copy) {
        weight.emitError("cannot read the elements of this weight to store "
                         "it in ")
            << narrow;
        return Value();
      }
      weights.insert(weight);
    } else if (auto reshape = dyn_cast<ReshapeOp>(def)) {
      Value input = copyOf(reshape.getInput(), narrow);
      if (!input)
        return Value();
      OpBuilder b(reshape);
      b.setInsertionPointAfter(reshape);
      copy = ReshapeOp::create(b, reshape.getLoc(),
                               tensorTypeOf(v).clone(narrow), input)
                 .getOutput();
      views.insert(reshape);
    } else if (TransposeOp transpose = soleTransposeOf(def)) {
      auto kernel = cast<KernelOp>(def);
      Value input = copyOf(transpose.getInput(), narrow);
      if (!input)
        return Value();
      copy = narrowTranspose(kernel, transpose, input, narrow);
      views.insert(kernel);
    } else {
      def->emitError("no narrow copy of this value was made");
      return Value();
    }
    copies[{v, narrow}] = copy;
    return copy;
  }

  DenseMap<std::pair<Value, Type>, Value> copies;
  llvm::SetVector<Operation *> weights, views;

  /// Points `use` (a product operand) at a widening of `copy` at the top
  /// of its kernel's body, shared by the kernel's uses of that copy.
  static void widenInto(OpOperand *use, Value copy) {
    auto kernel = use->getOwner()->getParentOfType<KernelOp>();
    Block &body = kernel.getBody().front();
    for (Operation &op : body)
      if (auto widening = dyn_cast<CastOp>(op);
          widening && widening.getInput() == copy) {
        use->set(widening.getOutput());
        return;
      }
    OpBuilder b(&body, body.begin());
    Value wide = CastOp::create(b, use->getOwner()->getLoc(),
                                tensorTypeOf(use->get()), copy)
                     .getOutput();
    use->set(wide);
  }
};

} // namespace
