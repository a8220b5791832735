//===- Interpreter.h - reference CPU interpreter of cgc ---------*- C++ -*-===//
//
// Executes `func.func @main` of a cgc module on host tensors. Every op is a
// plain loop that follows the ONNX semantics of the op it was imported from;
// reductions, products, norms and softmax accumulate in double. It is the
// numerical reference for the GPU pipeline and runs the ONNX backend tests.
//
// Run-time errors (an index out of range, shapes that do not fit once the
// dynamic dims are known, an integer division by zero) are emitted as
// diagnostics at the failing op's location, whose NameLoc carries the ONNX
// node name; the interpreter then returns failure.
//
// Arena mode runs a program planned by --cgc-plan-buffers over one real byte
// arena of `cgc.arena_bytes`: weights, inputs, outputs and every planned
// intermediate are written to and read from their planned offsets, so a plan
// that lets two live values share bytes gives wrong results.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_INTERPRETER_INTERPRETER_H
#define CGC_INTERPRETER_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace cgc::interp {

/// The storage kinds of the element types the cgc dialect admits.
enum class Scalar : uint8_t {
  F16,
  BF16,
  F32,
  F64, // floats
  I1,  // bool, one byte per element
  I8,
  I16,
  I32,
  I64, // signed (and signless) integers
  U8,
  U16,
  U32,
  U64, // unsigned integers
};

/// The storage kind of an MLIR element type, or nullopt for types the
/// interpreter cannot hold.
std::optional<Scalar> scalarOf(mlir::Type type);
/// Bytes per element (1 for i1).
unsigned scalarBytes(Scalar s);
inline bool isFloat(Scalar s) { return s <= Scalar::F64; }
inline bool isUnsigned(Scalar s) { return s >= Scalar::U8; }
inline bool isSigned(Scalar s) { return s >= Scalar::I8 && s <= Scalar::I64; }

/// IEEE half / bfloat16 <-> float, rounding to nearest even.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToBfloat16(float value);

/// memcpy for runs that may be empty: an empty tensor's bytes have no
/// address (data() is null), and memcpy from null is undefined even for 0
/// bytes (a fuzzed model folding a Concat with an empty input hit it).
inline void copyBytes(void *dst, const void *src, size_t n) {
  if (n)
    std::memcpy(dst, src, n);
}

/// A dense row-major host tensor: element type, shape and bytes.
struct HostTensor {
  mlir::Type dtype;
  Scalar scalar = Scalar::F32;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  /// A zero-filled tensor; `dtype` must be a type scalarOf() accepts.
  HostTensor(mlir::Type dtype, llvm::ArrayRef<int64_t> shape);

  int64_t rank() const { return shape.size(); }
  int64_t numElements() const;
  unsigned elementBytes() const { return scalarBytes(scalar); }

  /// Element `i` converted to double / int64 / uint64. Floats convert to
  /// integers by truncation toward zero (saturating, NaN gives 0).
  double getF(int64_t i) const;
  int64_t getI(int64_t i) const;
  uint64_t getU(int64_t i) const;
  /// Stores a value converted to the element type: floats round to the
  /// nearest representable value, integers wrap to their width, i1 stores
  /// `value != 0`.
  void setF(int64_t i, double value);
  void setI(int64_t i, int64_t value);
  void setU(int64_t i, uint64_t value);

  template <typename T> T get(int64_t i) const {
    if constexpr (std::is_same_v<T, double>)
      return getF(i);
    else if constexpr (std::is_same_v<T, int64_t>)
      return getI(i);
    else
      return getU(i);
  }
  template <typename T> void set(int64_t i, T value) {
    if constexpr (std::is_same_v<T, double>)
      setF(i, value);
    else if constexpr (std::is_same_v<T, int64_t>)
      setI(i, value);
    else
      setU(i, value);
  }
  /// Copies element `srcIndex` of `src` (same element type) to element `i`.
  void copyElement(int64_t i, const HostTensor &src, int64_t srcIndex) {
    unsigned n = elementBytes();
    std::memcpy(bytes.data() + i * n, src.bytes.data() + srcIndex * n, n);
  }

  /// "tensor<2x3xf32>".
  std::string typeString() const;
};

/// The tensor held by a constant's value: a dense attribute or a
/// dense_resource blob. Fails (with a message) for an unsupported element
/// type or a resource whose blob is missing.
llvm::FailureOr<HostTensor> tensorFromAttr(mlir::ElementsAttr attr,
                                           std::string &error);

/// Prints `t` as nested brackets, e.g. `[[1, 2], [3, 4]]`; floats with
/// `precision` significant digits, i1 as true/false.
void printTensorValues(llvm::raw_ostream &os, const HostTensor &t,
                       int precision = 6);

struct InterpreterOptions {
  /// Run over one byte arena laid out by --cgc-plan-buffers (the function
  /// must carry `cgc.arena_bytes`).
  bool useArena = false;
};

/// Runs `func` on `inputs` (one per argument, of the argument's element
/// type, rank and static dims) and returns its results. Errors are emitted
/// as diagnostics.
llvm::FailureOr<std::vector<HostTensor>>
interpret(mlir::func::FuncOp func, llvm::ArrayRef<HostTensor> inputs,
          const InterpreterOptions &options = {});

/// The names of the ops the interpreter executes (for docs and tests).
std::vector<std::string> supportedOps(mlir::MLIRContext *context);

/// Makes the interpreter's kernels the evaluator of the cgc ops' `fold`
/// hooks (cgc::ConstantEvaluatorInterface): in every context made from
/// `registry`, or in `context` now.
void registerConstantEvaluator(mlir::DialectRegistry &registry);
void registerConstantEvaluator(mlir::MLIRContext *context);

} // namespace cgc::interp

#endif // CGC_INTERPRETER_INTERPRETER_H
