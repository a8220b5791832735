//===- Kernels.h - shared by the op families of the interpreter -*- C++ -*-===//
//
// Each op family (Elementwise.cpp, LinearAlgebra.cpp, ...) registers one
// kernel per op in a table keyed by the op's TypeID. A kernel receives an
// OpCall (the op and its operand tensors) and returns the result tensors;
// it computes result shapes from the run-time operand shapes (types may
// have `?` dims), and the dispatcher checks them against the static dims of
// the result types.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_INTERPRETER_KERNELS_H
#define CGC_LIB_INTERPRETER_KERNELS_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Interpreter/Interpreter.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>

namespace cgc::interp {

class Interpreter;

using TensorRef = std::shared_ptr<const HostTensor>;
using Results = mlir::FailureOr<llvm::SmallVector<TensorRef>>;

/// One op being executed.
struct OpCall {
  Interpreter &interp;
  mlir::Operation *op;
  llvm::SmallVector<TensorRef> operands;

  const HostTensor &in(unsigned i) const { return *operands[i]; }
  /// Operand `i` of the op when it is present (optional operands).
  const HostTensor *optional(mlir::Value v) const;
  template <typename OpTy> OpTy get() const { return mlir::cast<OpTy>(op); }
  /// An error at the op's location, prefixed with the op name.
  mlir::InFlightDiagnostic error() const;
  /// The element type of result `i`.
  mlir::Type resultElementType(unsigned i = 0) const;
  /// A zero-filled tensor of result `i`'s element type with `shape`.
  HostTensor makeResult(llvm::ArrayRef<int64_t> shape, unsigned i = 0) const;
};

using KernelFn = Results (*)(OpCall &);
using KernelTable = llvm::DenseMap<mlir::TypeID, KernelFn>;

template <typename OpTy> void addKernel(KernelTable &table, KernelFn fn) {
  table[mlir::TypeID::get<OpTy>()] = fn;
}

void registerElementwiseKernels(KernelTable &table);
void registerLinearAlgebraKernels(KernelTable &table);
void registerConvPoolKernels(KernelTable &table);
void registerReductionKernels(KernelTable &table);
void registerNormalizationKernels(KernelTable &table);
void registerDataMovementKernels(KernelTable &table);
void registerResizeKernels(KernelTable &table);
void registerEagerKernels(KernelTable &table);
void registerControlFlowKernels(KernelTable &table);
void registerParallelKernels(KernelTable &table);

/// The interpreter state the region ops (if, loop, island, ...) need.
class Interpreter {
public:
  explicit Interpreter(const InterpreterOptions &options);
  ~Interpreter();

  mlir::FailureOr<std::vector<HostTensor>>
  run(mlir::func::FuncOp func, llvm::ArrayRef<HostTensor> inputs);

  /// Executes `block` in a new scope with its arguments bound to `args`
  /// and returns the operands of its terminator.
  mlir::FailureOr<llvm::SmallVector<TensorRef>>
  runBlock(mlir::Block &block, llvm::ArrayRef<TensorRef> args);

  /// How the interpreter was asked to run (the rank of a split program).
  const InterpreterOptions &options() const;

  /// Runs the kernel of one op without regions on `operands` (constant
  /// folding); fails when there is no kernel, the kernel fails or a result
  /// does not match its declared type.
  Results evaluate(mlir::Operation *op, llvm::ArrayRef<TensorRef> operands);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

inline TensorRef share(HostTensor t) {
  return std::make_shared<const HostTensor>(std::move(t));
}
inline Results single(HostTensor t) {
  return llvm::SmallVector<TensorRef>{share(std::move(t))};
}

//===----------------------------------------------------------------------===//
// Shapes and indices
//===----------------------------------------------------------------------===//

int64_t product(llvm::ArrayRef<int64_t> dims);
/// Row-major strides of `shape`.
llvm::SmallVector<int64_t, 4> stridesOf(llvm::ArrayRef<int64_t> shape);

/// `x` with its dims permuted as cgc.transpose by `perm` does (perm must
/// have x's rank).
HostTensor transposed(const HostTensor &x, llvm::ArrayRef<int64_t> perm);

/// Strides to read an operand of shape `from` broadcast (numpy rules,
/// aligned right) to `to`: 0 along broadcast dims.
llvm::SmallVector<int64_t, 4> broadcastStrides(llvm::ArrayRef<int64_t> from,
                                               llvm::ArrayRef<int64_t> to);

/// The numpy broadcast of run-time shapes, or an error on the call.
mlir::FailureOr<llvm::SmallVector<int64_t, 4>>
broadcastRuntime(const OpCall &call,
                 llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// Calls fn(index) for every multi-index of `shape` in row-major order
/// (once with an empty index for a scalar, never for an empty shape).
template <typename Fn>
void forEachIndex(llvm::ArrayRef<int64_t> shape, Fn &&fn) {
  int64_t count = product(shape);
  if (count == 0)
    return;
  llvm::SmallVector<int64_t, 6> index(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    fn(llvm::ArrayRef<int64_t>(index));
    for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// Dot product of an index with strides.
inline int64_t offsetOf(llvm::ArrayRef<int64_t> index,
                        llvm::ArrayRef<int64_t> strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d)
    offset += index[d] * strides[d];
  return offset;
}

/// Calls fn(base, stride, length) for every 1-D line of `shape` along
/// `axis`: base is the flat offset of the line's first element.
template <typename Fn>
void forEachLine(llvm::ArrayRef<int64_t> shape, int64_t axis, Fn &&fn) {
  llvm::SmallVector<int64_t, 4> strides = stridesOf(shape);
  llvm::SmallVector<int64_t, 4> outer(shape);
  outer[axis] = 1;
  forEachIndex(outer, [&](llvm::ArrayRef<int64_t> index) {
    fn(offsetOf(index, strides), strides[axis], shape[axis]);
  });
}

/// Calls fn.template operator()<T>() with T = double for float element
/// types, int64_t for signed integers and uint64_t for unsigned ones and i1.
template <typename Fn> decltype(auto) visitScalar(Scalar s, Fn &&fn) {
  if (isFloat(s))
    return fn(double{});
  if (isSigned(s))
    return fn(int64_t{});
  return fn(uint64_t{});
}

/// Reads a tensor of one element (any shape) as an int64 / double.
inline int64_t scalarI(const HostTensor &t) { return t.getI(0); }
inline double scalarF(const HostTensor &t) { return t.getF(0); }

} // namespace cgc::interp

#endif // CGC_LIB_INTERPRETER_KERNELS_H
