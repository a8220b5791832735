//===- Interpreter.cpp - scopes, dispatch and the arena -------------------===//
//
// The dispatcher looks each op up in the kernel table, runs it on its
// operand tensors and binds the results. Values live in scopes (one per
// executed block) so that region bodies see the values of enclosing blocks.
//
// In arena mode a value with a planned offset is not kept as a tensor: its
// bytes are written to the arena when it is produced and read back from the
// arena whenever it is used, so every read sees what the plan left there.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "cgc-interp"

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

int64_t cgc::interp::product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

SmallVector<int64_t, 4> cgc::interp::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

SmallVector<int64_t, 4> cgc::interp::broadcastStrides(ArrayRef<int64_t> from,
                                                      ArrayRef<int64_t> to) {
  SmallVector<int64_t, 4> strides(to.size(), 0);
  SmallVector<int64_t, 4> own = stridesOf(from);
  size_t offset = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    strides[d + offset] = from[d] == 1 ? 0 : own[d];
  return strides;
}

FailureOr<SmallVector<int64_t, 4>>
cgc::interp::broadcastRuntime(const OpCall &call,
                              ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t, 4> result(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t offset = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &r = result[d + offset];
      if (s[d] == r || s[d] == 1)
        continue;
      if (r == 1) {
        r = s[d];
        continue;
      }
      InFlightDiagnostic diag = call.error();
      diag << "operand shapes";
      for (ArrayRef<int64_t> t : shapes)
        diag << " " << formatDims(t);
      diag << " do not broadcast";
      return failure();
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// OpCall
//===----------------------------------------------------------------------===//

const HostTensor *OpCall::optional(Value v) const {
  if (!v)
    return nullptr;
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (operand == v)
      return operands[i].get();
  return nullptr;
}

InFlightDiagnostic OpCall::error() const {
  InFlightDiagnostic diag = op->emitError();
  diag << op->getName() << ": ";
  return diag;
}

Type OpCall::resultElementType(unsigned i) const {
  return cast<ShapedType>(op->getResult(i).getType()).getElementType();
}

HostTensor OpCall::makeResult(ArrayRef<int64_t> shape, unsigned i) const {
  return HostTensor(resultElementType(i), shape);
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

namespace {
const KernelTable &kernelTable() {
  static const KernelTable table = [] {
    KernelTable t;
    registerElementwiseKernels(t);
    registerLinearAlgebraKernels(t);
    registerConvPoolKernels(t);
    registerReductionKernels(t);
    registerNormalizationKernels(t);
    registerDataMovementKernels(t);
    registerResizeKernels(t);
    registerEagerKernels(t);
    registerControlFlowKernels(t);
    registerParallelKernels(t);
    return t;
  }();
  return table;
}

/// Where a value lives: a host tensor, or (arena mode) bytes in the arena.
struct Slot {
  TensorRef tensor;
  int64_t arenaOffset = -1;
  Type dtype;
  SmallVector<int64_t, 4> shape;
};

struct Scope {
  llvm::DenseMap<Value, Slot> values;
  Scope *parent = nullptr;
};

} // namespace

struct Interpreter::Impl {
  Interpreter &self;
  InterpreterOptions options;
  Scope *scope = nullptr;
  bool arenaMode = false;
  std::vector<uint8_t> arena;

  Impl(Interpreter &self, const InterpreterOptions &options)
      : self(self), options(options) {}

  const Slot *find(Value v) const {
    for (Scope *s = scope; s; s = s->parent) {
      auto it = s->values.find(v);
      if (it != s->values.end())
        return &it->second;
    }
    return nullptr;
  }

  /// The current tensor of `v`; arena values are read from the arena now.
  TensorRef lookup(Value v) const {
    const Slot *slot = find(v);
    if (!slot)
      return nullptr;
    if (slot->arenaOffset < 0)
      return slot->tensor;
    HostTensor t(slot->dtype, slot->shape);
    copyBytes(t.bytes.data(), arena.data() + slot->arenaOffset,
                t.bytes.size());
    return share(std::move(t));
  }

  /// Binds `v` to `t`; with an arena offset the bytes go to the arena.
  LogicalResult bind(Value v, TensorRef t, int64_t arenaOffset,
                     Operation *where) {
    Slot slot;
    if (arenaMode && arenaOffset >= 0) {
      int64_t size = t->bytes.size();
      if (arenaOffset + size > (int64_t)arena.size()) {
        where->emitError() << "planned buffer [" << arenaOffset << ", "
                           << arenaOffset + size
                           << ") does not fit in the arena of " << arena.size()
                           << " bytes";
        return failure();
      }
      auto type = cast<RankedTensorType>(v.getType());
      if (type.hasStaticShape()) {
        int64_t planned = type.getNumElements() * t->elementBytes();
        if (size > planned) {
          where->emitError() << "value of " << size
                             << " bytes exceeds its planned " << planned;
          return failure();
        }
      }
      if (size > 0) // an empty value has no buffer (memmove of null: UB)
        std::memmove(arena.data() + arenaOffset, t->bytes.data(), size);
      slot.arenaOffset = arenaOffset;
      slot.dtype = t->dtype;
      slot.shape = t->shape;
    } else {
      slot.tensor = std::move(t);
    }
    scope->values[v] = std::move(slot);
    return success();
  }

  /// Checks a computed result against the op's declared result type.
  LogicalResult checkResult(Operation *op, unsigned index,
                            const HostTensor &t) {
    auto type = cast<RankedTensorType>(op->getResult(index).getType());
    bool ok = t.dtype == type.getElementType() && t.rank() == type.getRank() &&
              t.bytes.size() == (size_t)t.numElements() * t.elementBytes();
    for (int64_t d = 0; ok && d < type.getRank(); ++d)
      ok = type.isDynamicDim(d) || type.getDimSize(d) == t.shape[d];
    if (ok)
      return success();
    op->emitError() << op->getName() << ": result #" << index
                    << " is computed as " << t.typeString()
                    << " but its type is " << type;
    return failure();
  }

  LogicalResult execute(Operation *op) {
    const KernelTable &table = kernelTable();
    auto it = table.find(op->getName().getTypeID());
    if (it == table.end())
      return op->emitError()
             << "the interpreter cannot execute '" << op->getName() << "'";
    for (Type type : op->getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !scalarOf(tensor.getElementType()))
        return op->emitError() << "the interpreter does not support results "
                                  "of type "
                               << type;
    }
    OpCall call{self, op, {}};
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      TensorRef t = lookup(operand);
      if (!t)
        return op->emitError() << "operand #" << i << " has no value";
      call.operands.push_back(std::move(t));
    }
    LLVM_DEBUG(llvm::dbgs() << "cgc-interp: " << op->getName() << "\n");
    Results results = it->second(call);
    if (failed(results))
      return failure();
    if (results->size() != op->getNumResults())
      return op->emitError() << "the interpreter computed " << results->size()
                             << " results for " << op->getNumResults();
    // Planned offsets of the results (arena mode): kernels, islands, eager
    // regions and reshapes carry cgc.result_offsets, weights their offset.
    SmallVector<int64_t> offsets;
    if (arenaMode) {
      if (auto planned = getResultOffsets(op))
        offsets.assign(planned->begin(), planned->end());
      else if (auto weight = getWeightOffset(op))
        offsets.push_back(*weight);
    }
    for (auto [i, t] : llvm::enumerate(*results)) {
      if (failed(checkResult(op, i, *t)))
        return failure();
      int64_t offset = i < offsets.size() ? offsets[i] : -1;
      if (failed(bind(op->getResult(i), t, offset, op)))
        return failure();
    }
    return success();
  }
  FailureOr<SmallVector<TensorRef>> runBlock(Block &block,
                                             ArrayRef<TensorRef> args) {
    Scope inner;
    inner.parent = scope;
    scope = &inner;
    llvm::scope_exit restore([&] { scope = inner.parent; });
    if (args.size() != block.getNumArguments()) {
      mlir::emitError(block.getParentOp()->getLoc())
          << "block takes " << block.getNumArguments() << " arguments, "
          << args.size() << " given";
      return failure();
    }
    for (auto [arg, t] : llvm::zip(block.getArguments(), args))
      inner.values[arg].tensor = t;
    for (Operation &op : block.without_terminator())
      if (failed(execute(&op)))
        return failure();
    SmallVector<TensorRef> yielded;
    for (Value v : block.getTerminator()->getOperands()) {
      TensorRef t = lookup(v);
      if (!t) {
        block.getTerminator()->emitError("yielded value has no value");
        return failure();
      }
      yielded.push_back(std::move(t));
    }
    return yielded;
  }

  LogicalResult checkInput(func::FuncOp func, unsigned index,
                           const HostTensor &t) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(index).getType());
    if (!type)
      return func.emitError()
             << "argument #" << index << " is not a ranked tensor";
    bool ok = t.dtype == type.getElementType() && t.rank() == type.getRank() &&
              t.bytes.size() == (size_t)t.numElements() * t.elementBytes();
    for (int64_t d = 0; ok && d < type.getRank(); ++d)
      ok = type.isDynamicDim(d) || type.getDimSize(d) == t.shape[d];
    if (ok)
      return success();
    auto name = getInputName(func, index);
    func.emitError() << "input #" << index
                     << (name ? " ('" + name.str() + "')" : std::string())
                     << " is " << t.typeString() << " but the function takes "
                     << type;
    return failure();
  }

  FailureOr<std::vector<HostTensor>> run(func::FuncOp func,
                                         ArrayRef<HostTensor> inputs) {
    if (func.isExternal())
      return func.emitError("cannot interpret a function without a body");
    if (inputs.size() != func.getNumArguments())
      return func.emitError() << "the function takes " << func.getNumArguments()
                              << " inputs, " << inputs.size() << " given";
    for (auto [i, t] : llvm::enumerate(inputs))
      if (failed(checkInput(func, i, t)))
        return failure();

    Scope top;
    scope = &top;
    llvm::scope_exit restore([&] { scope = nullptr; });
    arenaMode = options.useArena;
    if (arenaMode) {
      int64_t bytes = getArenaBytes(func).value_or(-1);
      if (bytes < 0)
        return func.emitError("arena mode needs a function planned by "
                              "--cgc-plan-buffers (no cgc.arena_bytes)");
      // Poison the arena so reads of never-written bytes stand out.
      arena.assign(bytes, 0xA5);
    }
    Block &body = func.getBody().front();
    for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
      int64_t offset =
          arenaMode ? getInputArenaOffset(func, i).value_or(-1) : -1;
      if (failed(bind(arg, share(inputs[i]), offset, func)))
        return failure();
    }
    for (Operation &op : body.without_terminator())
      if (failed(execute(&op)))
        return failure();
    std::vector<HostTensor> outputs;
    for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
      TensorRef t = lookup(v);
      if (!t)
        return body.getTerminator()->emitError("returned value has no value");
      HostTensor out = *t;
      // The runtime reads outputs from their slots: so does arena mode.
      int64_t offset =
          arenaMode ? getOutputArenaOffset(func, i).value_or(-1) : -1;
      if (offset >= 0) {
        if (offset + out.bytes.size() > arena.size())
          return func.emitError()
                 << "output #" << i << " slot is outside the arena";
        copyBytes(out.bytes.data(), arena.data() + offset, out.bytes.size());
      }
      outputs.push_back(std::move(out));
    }
    return outputs;
  }
};

Interpreter::Interpreter(const InterpreterOptions &options)
    : impl(std::make_unique<Impl>(*this, options)) {}

Interpreter::~Interpreter() = default;

FailureOr<std::vector<HostTensor>>
Interpreter::run(func::FuncOp func, ArrayRef<HostTensor> inputs) {
  return impl->run(func, inputs);
}

FailureOr<SmallVector<TensorRef>>
Interpreter::runBlock(Block &block, ArrayRef<TensorRef> args) {
  return impl->runBlock(block, args);
}

const InterpreterOptions &Interpreter::options() const {
  return impl->options;
}

Results Interpreter::evaluate(Operation *op, ArrayRef<TensorRef> operands) {
  auto it = kernelTable().find(op->getName().getTypeID());
  if (it == kernelTable().end() || op->getNumRegions() != 0)
    return failure();
  OpCall call{*this, op, SmallVector<TensorRef>(operands)};
  Results results = it->second(call);
  if (failed(results) || results->size() != op->getNumResults())
    return failure();
  for (auto [i, t] : llvm::enumerate(*results))
    if (failed(impl->checkResult(op, i, *t)))
      return failure();
  return results;
}

FailureOr<std::vector<HostTensor>>
cgc::interp::interpret(func::FuncOp func, ArrayRef<HostTensor> inputs,
                       const InterpreterOptions &options) {
  Interpreter interpreter(options);
  return interpreter.run(func, inputs);
}

std::vector<std::string> cgc::interp::supportedOps(MLIRContext *context) {
  context->getOrLoadDialect<CgcDialect>();
  std::vector<std::string> names;
  for (RegisteredOperationName name : context->getRegisteredOperations())
    if (kernelTable().count(name.getTypeID()))
      names.push_back(name.getStringRef().str());
  llvm::sort(names);
  return names;
}
