//===- CgcDialect.td - cgc tensor dialect ------------------*- tablegen -*-===//
//
// The `cgc` dialect is the compiler's view of an ONNX program: value-semantic
// ops on ranked tensors, one op per ONNX concept (composites decompose into
// these at import). Shapes are fully inferred; a `?` dim is a symbolic dim that
// has not been bound yet.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_TD
#define CGC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Cgc_Dialect : Dialect {
  let name = "cgc";
  let summary = "Value-semantic tensor ops imported from ONNX";
  let description = [{
    The `cgc` dialect holds an ONNX model after import. Every op works on
    ranked tensors and infers its result type from its operands and
    attributes, so the verifier is also the shape checker. Weights are
    `dense_resource` constants so that printing a large model stays small.
    Ops that cannot live in a CUDA graph (data-dependent shapes, control
    flow) say so through the `CaptureSafetyOpInterface`.
  }];
  let cppNamespace = "::cgc";
  let dependentDialects = ["::mlir::func::FuncDialect"];
  // Attributes stay in the attribute dictionary so the importer can run
  // shape inference on (operands, attributes) before creating an op and
  // report a failure as a diagnostic instead of a builder assertion.
  let usePropertiesForAttributes = 0;
  // #cgc.target and #cgc.kernel_config (CgcAttrs.td).
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  // Facts that passes record on ops, functions and the module for later
  // passes and the emitters. Read and write them only through
  // cgc/Dialect/Cgc/IR/CgcAnnotations.h, which says who writes and who reads
  // each; the dialect verifies their types and where they may appear.
  let discardableAttrs = (ins
    // ONNX interface (importer).
    "::mlir::StringAttr":$name,
    "::mlir::ArrayAttr":$dim_names,
    "::mlir::StringAttr":$control_flow,
    // The GPU compiled for (cgc --arch; CgcAttrs.td).
    "::cgc::TargetAttr":$target,
    // Ranks the program is split over (--cgc-tensor-parallel).
    "::mlir::IntegerAttr":$ranks,
    // The rank whose shards the program holds (--cgc-materialize-rank).
    "::mlir::IntegerAttr":$rank,
    // An ONNX model's multi-device annotations (importer): the devices of
    // its configuration, and on a weight the axis they shard it along.
    "::mlir::IntegerAttr":$devices,
    "::mlir::IntegerAttr":$shard_axis,
    // Buffer plan (--cgc-plan-buffers, moved by shape buckets).
    "::mlir::IntegerAttr":$arena_offset,
    "::mlir::IntegerAttr":$weight_offset,
    "::mlir::DenseI64ArrayAttr":$result_offsets,
    "::mlir::DenseI64ArrayAttr":$body_arg_offsets,
    "::mlir::IntegerAttr":$arena_bytes,
    "::mlir::IntegerAttr":$weights_bytes,
    "::mlir::IntegerAttr":$intermediate_bytes,
    "::mlir::IntegerAttr":$intermediate_lower_bound,
    "::mlir::IntegerAttr":$intermediate_naive_bytes,
    // Fusion.
    "::mlir::UnitAttr":$in_place,
    // Tuning (--cgc-select-kernel-config's tuning-cache, tuning-candidates).
    "::mlir::StringAttr":$tuned,
    "::mlir::StringAttr":$tuning_key,
    "::mlir::ArrayAttr":$tuning_candidates,
    // Shape buckets.
    "::mlir::IntegerAttr":$bucket_axis,
    "::mlir::IntegerAttr":$bucket_value,
    "::mlir::StringAttr":$bucket_dim,
    "::mlir::UnitAttr":$pad_to_bucket,
    // Training (importer under --train, --cgc-build-train-step).
    "::mlir::UnitAttr":$initializer,
    "::mlir::ElementsAttr":$state,
    "::mlir::IntegerAttr":$label_classes,
    "::mlir::StringAttr":$updates,
    "::mlir::StringAttr":$running_statistic,
    "::mlir::UnitAttr":$statistic
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  // Folds (CgcFolds.cpp) produce attributes; patterns and --canonicalize
  // turn them into cgc.constant.
  let hasConstantMaterializer = 1;
}

#endif // CGC_DIALECT_TD
