//===- CgcAnnotations.h - typed access to cgc.* attributes ------*- C++ -*-===//
//
// Passes hand facts to later passes and to the emitters as discardable
// `cgc.*` attributes on ops, function arguments and results, functions and
// the module. Their names and types are declared once, in CgcDialect.td
// (`discardableAttrs`), and the dialect verifies every one of them; these
// functions are the only way the compiler reads or writes them, so the
// contract between the writer and its readers is in one place.
//
// Each function says what the attribute records, who writes it and who reads
// it. Getters return std::nullopt (or a null attribute) when it is absent.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_IR_CGCANNOTATIONS_H
#define CGC_DIALECT_CGC_IR_CGCANNOTATIONS_H

#include "cgc/Dialect/Cgc/IR/CgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace cgc {

//===----------------------------------------------------------------------===//
// The ONNX interface: written by the importer.
//===----------------------------------------------------------------------===//

/// cgc.name: the ONNX name of graph input `i`; read by the interpreter, the
/// runner, --explain and the package's tensor tables.
mlir::StringAttr getInputName(mlir::func::FuncOp func, unsigned i);
void setInputName(mlir::func::FuncOp func, unsigned i, llvm::StringRef name);
/// cgc.name: the ONNX name of graph output `i`; same readers.
mlir::StringAttr getOutputName(mlir::func::FuncOp func, unsigned i);
void setOutputName(mlir::func::FuncOp func, unsigned i, llvm::StringRef name);

/// The ONNX node an op came from: the importer names each op's location
/// (a NameLoc) after its node; an op without one (made by a later pass)
/// answers its op name. Read by diagnostics, --explain and kernel comments.
std::string nodeName(mlir::Operation *op);

/// cgc.dim_names: the ONNX dim names of input `i` ("" for an unnamed dim),
/// written only when one is named; read by --cgc-check-static-shapes (its
/// message), --cgc-check-bucket-padding and shape buckets.
mlir::ArrayAttr getInputDimNames(mlir::func::FuncOp func, unsigned i);
void setInputDimNames(mlir::func::FuncOp func, unsigned i,
                      llvm::ArrayRef<llvm::StringRef> names);
/// "" when input `i` has a static shape; otherwise the sentence that names
/// its unbound dims and the option that binds them ("input 'image' has
/// dim 0 'N' unbound: give its size with --dim N=SIZE ..."). Read by the
/// checks that need static inputs (cgc, --cgc-check-static-shapes, the
/// lowering) and by --explain.
std::string describeUnboundInputDims(mlir::func::FuncOp func, unsigned i);
/// An error with describeUnboundInputDims's sentence for every input of
/// `func` that has one; fails if there was any.
mlir::LogicalResult emitUnboundInputErrors(mlir::func::FuncOp func);

/// cgc.control_flow = "host": `cgc --control-flow=host`, If and Loop stay on
/// the host; read by their CaptureSafetyOpInterface.
bool hasHostControlFlow(mlir::ModuleOp module);
void setHostControlFlow(mlir::ModuleOp module);

/// cgc.target: the GPU compiled for (`cgc --arch`, a #cgc.target of the
/// known-GPU table); read by fusion (shared memory) and
/// --cgc-select-kernel-config. lookupTarget looks through nested modules
/// (shape buckets) and returns null when there is none.
TargetAttr lookupTarget(mlir::Operation *op);
void setTarget(mlir::ModuleOp module, TargetAttr target);

/// cgc.ranks: the ranks (GPUs) --cgc-tensor-parallel split the program
/// over, each running it on its shards (or --cgc-build-train-step's
/// data-parallel ranks); read by the drivers (cgc-interp runs that many).
/// Absent: one. At most kMaxRanks (a thread each on the interpreter).
constexpr int64_t kMaxRanks = 1024;
int64_t getRanks(mlir::ModuleOp module);
void setRanks(mlir::ModuleOp module, int64_t ranks);

/// cgc.devices: the devices of an ONNX model's multi-device configuration
/// (IR 11 annotations; the importer writes it when a node shards a
/// weight); read by the drivers, which split the program over that many
/// ranks (--cgc-tensor-parallel, which drops it). Absent: no annotations.
std::optional<int64_t> getDevices(mlir::ModuleOp module);
void setDevices(mlir::ModuleOp module, int64_t devices);
void clearDevices(mlir::ModuleOp module);

/// The ranks a driver splits `module` over: `requested` (--tensor-parallel;
/// 0 when not asked), or the devices of its annotations, which must agree
/// with it; 1 for neither. Fails with `error` when they disagree, or when
/// an annotated program is to be trained (`train`: --data-parallel splits
/// the batch instead).
mlir::FailureOr<int64_t> ranksToSplit(mlir::ModuleOp module,
                                      int64_t requested, bool train,
                                      std::string &error);

/// The tools' --tensor-parallel-gather-mb as the bytes of
/// --cgc-tensor-parallel's gather-min-bytes. Fails with `error` outside 0
/// to 1048576 megabytes.
mlir::FailureOr<int64_t> gatherMinBytes(int64_t megabytes,
                                        std::string &error);

/// cgc.shard_axis on a cgc.constant: the axis an ONNX annotation shards
/// the weight along over the devices (importer); --cgc-tensor-parallel
/// splits exactly the products whose weights carry it, as they say, and
/// drops it.
std::optional<int64_t> getShardAxis(mlir::Operation *constant);
void setShardAxis(mlir::Operation *constant, int64_t axis);
void clearShardAxis(mlir::Operation *constant);

/// cgc.rank: which rank's shards the module holds (--cgc-materialize-rank,
/// one program of a split package); read by the package emitter. Absent:
/// the program still has its cgc.shard ops (or is not split).
std::optional<int64_t> getRank(mlir::ModuleOp module);
void setRank(mlir::ModuleOp module, int64_t rank);

//===----------------------------------------------------------------------===//
// The buffer plan: written by --cgc-plan-buffers, moved onto the shared
// weights by shape buckets (lib/Pipeline/Buckets.cpp). cgc::plannedOffset
// (Analysis/BufferPlan.h) reads any value's offset from them.
//===----------------------------------------------------------------------===//

/// cgc.arena_offset: the arena byte offset of input `i` (-1: no slot); read
/// by the interpreter's arena mode and the package's input table.
std::optional<int64_t> getInputArenaOffset(mlir::func::FuncOp func, unsigned i);
void setInputArenaOffset(mlir::func::FuncOp func, unsigned i, int64_t offset);
/// cgc.arena_offset: the arena byte offset of output `i`; same readers.
std::optional<int64_t> getOutputArenaOffset(mlir::func::FuncOp func,
                                            unsigned i);
void setOutputArenaOffset(mlir::func::FuncOp func, unsigned i, int64_t offset);

/// cgc.weight_offset: the arena byte offset of a cgc.constant's data; read by
/// the interpreter and the writer of weights.bin.
std::optional<int64_t> getWeightOffset(mlir::Operation *constant);
void setWeightOffset(mlir::Operation *constant, int64_t offset);

/// cgc.result_offsets: the arena byte offset of each result of an island, an
/// eager region or an op inside one (-1: no buffer); read by kernel
/// generation, the conversion to cgraph and the interpreter.
std::optional<llvm::ArrayRef<int64_t>> getResultOffsets(mlir::Operation *op);
void setResultOffsets(mlir::Operation *op, llvm::ArrayRef<int64_t> offsets);

/// cgc.body_arg_offsets: the arena byte offset of each body argument of a
/// cgc.loop; same readers as cgc.result_offsets.
std::optional<llvm::ArrayRef<int64_t>> getBodyArgOffsets(mlir::Operation *loop);
void setBodyArgOffsets(mlir::Operation *loop, llvm::ArrayRef<int64_t> offsets);

/// cgc.arena_bytes: the size of the function's arena; read by the
/// interpreter, --explain and the package (the runtime allocates it).
std::optional<int64_t> getArenaBytes(mlir::func::FuncOp func);
void setArenaBytes(mlir::func::FuncOp func, int64_t bytes);
/// cgc.weights_bytes: the size of the weights region at the arena's start;
/// read by shape buckets, --explain and the package.
std::optional<int64_t> getWeightsBytes(mlir::func::FuncOp func);
void setWeightsBytes(mlir::func::FuncOp func, int64_t bytes);

/// cgc.intermediate_bytes, cgc.intermediate_lower_bound and
/// cgc.intermediate_naive_bytes: the plan's intermediates, the most live at
/// once, and their sum unshared; read by --explain only.
std::optional<int64_t> getIntermediateBytes(mlir::func::FuncOp func);
std::optional<int64_t> getIntermediateLowerBound(mlir::func::FuncOp func);
std::optional<int64_t> getIntermediateNaiveBytes(mlir::func::FuncOp func);
void setIntermediateStats(mlir::func::FuncOp func, int64_t bytes,
                          int64_t lowerBound, int64_t naiveBytes);

//===----------------------------------------------------------------------===//
// Fusion.
//===----------------------------------------------------------------------===//

/// cgc.in_place: a cgc.concat in an island whose inputs are written straight
/// into its result's buffer (no kernel); written by --cgc-fuse, read by the
/// buffer plan and --explain.
bool isInPlace(mlir::Operation *concat);
void setInPlace(mlir::Operation *concat);

//===----------------------------------------------------------------------===//
// Tuning (--cgc-select-kernel-config).
//===----------------------------------------------------------------------===//

/// cgc.tuned: the tuning cache a cgc.kernel's config was taken from;
/// written by --cgc-select-kernel-config, read by --explain.
std::optional<llvm::StringRef> getTunedFrom(mlir::Operation *kernel);
void setTunedFrom(mlir::Operation *kernel, llvm::StringRef cachePath);

/// cgc.tuning_key and cgc.tuning_candidates: a tiled GEMM kernel's
/// signature and every config the templates offer it; written by
/// --cgc-select-kernel-config=tuning-candidates, read by
/// `cgc --emit=tuning-candidates`.
std::optional<llvm::StringRef> getTuningKey(mlir::Operation *kernel);
mlir::ArrayAttr getTuningCandidates(mlir::Operation *kernel);
void setTuningCandidates(mlir::Operation *kernel, llvm::StringRef key,
                         llvm::ArrayRef<mlir::Attribute> configs);

//===----------------------------------------------------------------------===//
// Shape buckets (lib/Pipeline/Buckets.cpp, --cgc-check-bucket-padding).
//===----------------------------------------------------------------------===//

/// cgc.bucket_axis: the axis of input `i` that is the bucketed dim (-1:
/// none); written by --cgc-check-bucket-padding, read by the package.
std::optional<int64_t> getInputBucketAxis(mlir::func::FuncOp func, unsigned i);
void setInputBucketAxis(mlir::func::FuncOp func, unsigned i, int64_t axis);
/// cgc.bucket_axis: the same for output `i`.
std::optional<int64_t> getOutputBucketAxis(mlir::func::FuncOp func, unsigned i);
void setOutputBucketAxis(mlir::func::FuncOp func, unsigned i, int64_t axis);

/// cgc.bucket_value: the dim value a bucket's function was compiled for;
/// written by shape buckets, read by the package to find the buckets.
std::optional<int64_t> getBucketValue(mlir::func::FuncOp func);
void setBucketValue(mlir::func::FuncOp func, int64_t value);

/// cgc.bucket_dim: the name of the bucketed dim on a merged module; written
/// by shape buckets, read by the package.
mlir::StringAttr getBucketDim(mlir::ModuleOp module);
void setBucketDim(mlir::ModuleOp module, llvm::StringRef dim);

/// cgc.pad_to_bucket: `--pad-to-bucket`, inputs are padded up to the next
/// bucket at run time; written by shape buckets, read by the package.
bool isPadToBucket(mlir::ModuleOp module);
void setPadToBucket(mlir::ModuleOp module);

//===----------------------------------------------------------------------===//
// Training (cgc --train: the importer, --cgc-build-train-step).
//===----------------------------------------------------------------------===//

/// cgc.initializer: a float initializer's constant, a weight that may be
/// trained; written by the importer under ImportOptions::keepInitializers,
/// read by --cgc-build-train-step (which removes it).
bool isInitializer(mlir::Operation *constant);
void setInitializer(mlir::Operation *constant);
/// Also removes cgc.statistic (below): a constant from then on.
void clearInitializer(mlir::Operation *constant);

/// cgc.state: input `i` is training state (a parameter or an optimizer
/// buffer), this its value before the first step; written by
/// --cgc-build-train-step, read by cgc-interp --train.
mlir::ElementsAttr getInputState(mlir::func::FuncOp func, unsigned i);
void setInputState(mlir::func::FuncOp func, unsigned i,
                   mlir::ElementsAttr initial);

/// cgc.label_classes: input `i` is the class-index label of
/// --loss=cross_entropy and its values must lie in [0, classes); written by
/// --cgc-build-train-step, read by cgc-interp --train (to check labels and
/// make random ones).
std::optional<int64_t> getInputLabelClasses(mlir::func::FuncOp func,
                                            unsigned i);
void setInputLabelClasses(mlir::func::FuncOp func, unsigned i,
                          int64_t classes);

/// cgc.updates: output `i` is the next value of the state input of this
/// name (the caller writes it back before the next step; a package writes
/// it over the state, docs/training.md); written by --cgc-build-train-step,
/// read by cgc-interp --train, the buffer plan and the package.
mlir::StringAttr getOutputUpdates(mlir::func::FuncOp func, unsigned i);
void setOutputUpdates(mlir::func::FuncOp func, unsigned i,
                      llvm::StringRef stateName);

/// cgc.running_statistic: this op computes the next value of the named
/// initializer, a running statistic the model keeps across steps (training
/// BatchNormalization's running mean and variance), which ONNX can only
/// express as an output nobody reads; written by the importer under
/// ImportOptions::keepInitializers, read by --cgc-build-train-step, which
/// makes the initializer state updated by the step (and removes the mark).
mlir::StringAttr getRunningStatistic(mlir::Operation *op);
void setRunningStatistic(mlir::Operation *op, llvm::StringRef initializer);
void clearRunningStatistic(mlir::Operation *op);

/// cgc.statistic: an initializer's constant that holds a statistic the
/// model reads (an inference BatchNormalization's running mean or
/// variance), trained only where --trainable names it; written by the
/// importer under ImportOptions::keepInitializers, read by
/// --cgc-build-train-step.
bool isStatistic(mlir::Operation *constant);
void setStatistic(mlir::Operation *constant);

/// The state input (cgc.state) that output `i` updates, if it names one.
std::optional<unsigned> stateInputUpdatedBy(mlir::func::FuncOp func,
                                            unsigned i);

} // namespace cgc

#endif // CGC_DIALECT_CGC_IR_CGCANNOTATIONS_H
