//===- BufferPlan.h - one arena per model -----------------------*- C++ -*-===//
//
// The arena is laid out as [weights | input/output slots | intermediates].
// The weights region holds the constants and, for a training step, its
// state (weights being trained, optimizer buffers), whose updates the step
// writes in place.
// Intermediates share memory when their lifetimes (over the kernel order)
// do not overlap. All offsets are compile-time facts; the runtime adds the
// arena's base address.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_ANALYSIS_BUFFERPLAN_H
#define CGC_DIALECT_CGC_ANALYSIS_BUFFERPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace cgc {

/// Alignment of every buffer: enough for 128-bit vector access and for the
/// 256-byte granularity that the driver uses for allocations.
constexpr int64_t kBufferAlignment = 256;

/// Bytes of a static tensor type (i1 takes a byte per element).
int64_t tensorBytes(mlir::Type type);

/// Bytes a value needs: its size, or for a data-dependent shape the most it
/// can hold (NonZero: rank x count; a reshape to a run-time shape, Compress
/// and Unique: their input's elements); -1 when that is unknown. Results of
/// islands and eager regions are followed to the value they yield.
int64_t capacityBytes(mlir::Value v);

/// The bytes a weight occupies in the arena (row-major, i1 as one byte per
/// element, splats expanded). Fails with a diagnostic when the data is gone
/// (IR printed with elided resources and parsed back).
mlir::LogicalResult constantBytes(mlir::Operation *constant,
                                  std::string &data);
/// The same for the value of any elements attribute (a training state's
/// initial value); `owner` carries the diagnostic.
mlir::LogicalResult elementsBytes(mlir::Attribute value,
                                  mlir::Operation *owner, std::string &data);

struct BufferPlan {
  /// State: a training step's state input (cgc.state), in the weights
  /// region.
  enum class Kind { Weight, State, Input, Output, Intermediate };
  struct Buffer {
    mlir::Value value; // the root value; aliases map to it
    Kind kind;
    int64_t bytes = 0;
    int64_t offset = 0;
    /// Lifetime in doubled step units: [begin, end] inclusive.
    int64_t begin = 0, end = 0;
    /// Folded into another buffer (an in-place concat's input): not placed.
    bool absorbed = false;
  };

  std::vector<Buffer> buffers;
  /// Every value with a buffer (aliases included) -> index in `buffers`.
  llvm::DenseMap<mlir::Value, size_t> bufferOf;
  /// Values that live inside another value's buffer (the inputs of an
  /// in-place concat) -> their byte offset in it.
  llvm::DenseMap<mlir::Value, int64_t> offsetInBuffer;
  /// A training step's output `output` replaces state input `input`
  /// (cgc.updates); `inPlace` when the step writes it over the state.
  struct StateUpdate {
    unsigned input = 0, output = 0;
    bool inPlace = false;
  };
  std::vector<StateUpdate> stateUpdates;
  int64_t weightsBytes = 0;
  int64_t arenaBytes = 0;
  /// Largest sum of simultaneously live intermediate bytes.
  int64_t intermediateLowerBound = 0;
  /// Intermediates' bytes if nothing were shared.
  int64_t intermediateNaiveBytes = 0;
  /// Bytes taken by the intermediates in the plan.
  int64_t intermediateBytes = 0;

  /// Absolute arena offset of a value, or -1 if it has no buffer.
  int64_t offsetOf(mlir::Value v) const;
};

/// Plans the buffers of `func` (partitioned and fused, static shapes).
/// Emits an error and fails on dynamic shapes.
mlir::FailureOr<BufferPlan> planBuffers(mlir::func::FuncOp func);

/// The arena offset the plan gave `v` (attributes written by
/// --cgc-plan-buffers), or -1 if it has none.
int64_t plannedOffset(mlir::Value v);

/// Whether kernels may read the planned `v` a float4 at a time: it holds
/// float32 and its offset is 16-byte aligned. A float4 over f16 or bf16 data
/// would read 8 elements as 4 wrong ones from an address the GPU refuses.
bool plannedFloat4Loadable(mlir::Value v);

/// Whether `v` is stored as `element` values (f16 or bf16) at a 16-byte
/// aligned offset: read 8 at a time along a contiguous dim of a multiple
/// of 8.
bool planned16BitVector8Loadable(mlir::Value v, mlir::Type element);

} // namespace cgc

#endif // CGC_DIALECT_CGC_ANALYSIS_BUFFERPLAN_H
