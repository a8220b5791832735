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

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace cgc::interp {

/// The storage kinds of the element types the cgc dialect admits. The
/// narrow types of ONNX 1.16+ (float8, float4, int4, int2) take one byte
/// per element here; ONNX packs the 4- and 2-bit ones, which only the
/// TensorProto readers and writers see.
enum class Scalar : uint8_t {
  F16,
  BF16,
  F32,
  F64,
  F8E4M3FN,
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  F8E8M0FNU,
  F4E2M1FN, // floats
  I1,       // bool, one byte per element
  I2,
  I4,
  I8,
  I16,
  I32,
  I64, // signed (and signless) integers
  U2,
  U4,
  U8,
  U16,
  U32,
  U64, // unsigned integers
};

/// The storage kind of an MLIR element type, or nullopt for types the
/// interpreter cannot hold.
std::optional<Scalar> scalarOf(mlir::Type type);
/// Bytes per element (1 for i1 and the sub-byte types).
unsigned scalarBytes(Scalar s);
inline bool isFloat(Scalar s) { return s <= Scalar::F4E2M1FN; }
inline bool isUnsigned(Scalar s) { return s >= Scalar::U2; }
inline bool isSigned(Scalar s) { return s >= Scalar::I2 && s <= Scalar::I64; }
/// The float types narrower than 16 bits (held through APFloat).
inline bool isNarrowFloat(Scalar s) {
  return s >= Scalar::F8E4M3FN && s <= Scalar::F4E2M1FN;
}
/// Bits of an integer element that are not stored in whole bytes (2 or 4),
/// else 0.
unsigned subByteBits(Scalar s);

/// The MLIR element type of an ONNX TensorProto data type code (FLOAT = 1,
/// ..., INT2 = 26), or null for codes cgc has no type for (strings,
/// complex, float6).
mlir::Type elementTypeOfOnnx(mlir::MLIRContext *ctx, int32_t onnxCode);
/// The ONNX data type code of a storage kind.
int32_t onnxCodeOf(Scalar s);
/// Unpacks ONNX's packed 4- or 2-bit elements (first element in the low
/// bits) into one byte each, sign-extended when `isSigned`. Fails when
/// `packed` does not hold exactly ceil(count * bits / 8) bytes.
bool unpackSubByte(llvm::StringRef packed, unsigned bits, bool isSigned,
                   int64_t count, std::string &unpacked);
/// The reverse of unpackSubByte.
std::string packSubByte(llvm::ArrayRef<uint8_t> unpacked, unsigned bits);

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

class RankGroup;

struct InterpreterOptions {
  /// Run over one byte arena laid out by --cgc-plan-buffers (the function
  /// must carry `cgc.arena_bytes`).
  bool useArena = false;
  /// A program split over ranks (cgc.shard, cgc.all_reduce) runs as rank
  /// `rank` of `ranks`; null for a program of one rank.
  RankGroup *ranks = nullptr;
  int64_t rank = 0;
};

/// The ranks of a program split by --cgc-tensor-parallel, run as threads of
/// one process (the CPU oracle of NCCL): each rank's interpreter meets the
/// others at every cgc.all_reduce and cgc.all_gather. A rank that fails
/// aborts the group, so the others stop with an error at their next
/// collective instead of waiting forever.
class RankGroup {
public:
  explicit RankGroup(int64_t size) : size(size), contributions(size) {}

  int64_t getSize() const { return size; }

  /// Rank `rank`'s tensor in; the sum over the ranks out, on every rank
  /// (computed in double, in rank order, so every rank gets the same
  /// bits). Fails, with `error` set, when the group was aborted or the
  /// ranks' tensors differ in type.
  llvm::FailureOr<HostTensor> allReduceSum(int64_t rank, const HostTensor &t,
                                           std::string &error);
  /// Rank `rank`'s tensor in; every rank's out, stacked along a new
  /// leading axis in rank order. Fails as allReduceSum does.
  llvm::FailureOr<HostTensor> allGather(int64_t rank, const HostTensor &t,
                                        std::string &error);
  /// Wakes every rank waiting in a collective with an error, and fails
  /// every later one.
  void abort();

private:
  enum class Collective { Sum, Gather };
  /// Waits for every rank's tensor, then returns the collective of them.
  llvm::FailureOr<HostTensor> meet(int64_t rank, const HostTensor &t,
                                   Collective collective, std::string &error);
  /// The collective of the contributions, or an error (the caller holds
  /// `mutex`).
  void combine(Collective collective);

  int64_t size;
  std::mutex mutex;
  std::condition_variable done;
  int64_t arrived = 0;
  uint64_t round = 0;
  bool aborted = false;
  std::vector<const HostTensor *> contributions;
  HostTensor sum;
  std::string sumError;
};

/// Runs `func` as every rank of a group, one thread each, rank r on
/// `inputs[r]`; the outputs of each rank in rank order.
llvm::FailureOr<std::vector<std::vector<HostTensor>>>
interpretRanks(mlir::func::FuncOp func,
               llvm::ArrayRef<std::vector<HostTensor>> inputs,
               const InterpreterOptions &options = {});

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
