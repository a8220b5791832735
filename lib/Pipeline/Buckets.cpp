//===- Buckets.cpp - one package for several values of a symbolic dim -----===//
//
// `cgc model.onnx --dim N=1,2,4,8` compiles the model once per value of N
// (each bucket gets static shapes, its own fusion and its own buffer plan)
// and merges the results so that one package holds every bucket:
//
//   [ shared weights | bucket 1 slots+intermediates ... ]
//   [ shared weights | bucket 8 slots+intermediates ........ ]
//
// All buckets see the weights at the same offsets, so they are uploaded once;
// everything else starts after the shared weights region, and the arena is
// sized for the largest bucket. Buckets never run at the same time, so they
// may reuse each other's intermediate memory.
//
//===----------------------------------------------------------------------===//

#include "cgc/Pipeline.h"

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>

using namespace mlir;
using namespace cgc;

bool cgc::parseBucketBinding(StringRef text, BucketOptions &buckets,
                             std::string &error) {
  auto [name, list] = text.split('=');
  SmallVector<StringRef> parts;
  list.split(parts, ',', -1, /*KeepEmpty=*/true);
  std::vector<int64_t> values;
  for (StringRef part : parts) {
    int64_t value;
    if (part.trim().getAsInteger(10, value) || value < 1) {
      error = "expected --dim NAME=V1,V2,... with every V >= 1, got '" +
              text.str() + "'";
      return false;
    }
    values.push_back(value);
  }
  if (name.empty() || values.empty()) {
    error = "expected --dim NAME=V1,V2,..., got '" + text.str() + "'";
    return false;
  }
  if (buckets.dim == name) {
    error = "--dim " + name.str() + " is given twice";
    return false;
  }
  if (!buckets.dim.empty()) {
    error = "--dim " + text.str() + ": shape buckets are supported for one "
            "symbolic dim, and '" + buckets.dim + "' already has them";
    return false;
  }
  llvm::sort(values);
  values.erase(std::unique(values.begin(), values.end()), values.end());
  buckets.dim = name.str();
  buckets.values = std::move(values);
  return true;
}

namespace {

/// The name every bucket's functions and graphs are prefixed with: "N8".
std::string bucketTag(const BucketOptions &buckets, int64_t value) {
  std::string tag;
  for (char c : buckets.dim)
    tag += llvm::isAlnum(c) ? c : '_';
  return tag + std::to_string(value);
}

bool usesDim(func::FuncOp func, StringRef dim) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto names = getInputDimNames(func, i))
      for (Attribute name : names)
        if (cast<StringAttr>(name).getValue() == dim)
          return true;
  return false;
}

/// The shared weights region: every distinct weight (by type and bytes) of
/// every bucket, once.
class SharedWeights {
public:
  /// The shared offset of the weight with these contents, placing it on
  /// first sight.
  int64_t place(Type type, std::string bytes) {
    auto key = std::make_pair(type.getAsOpaquePointer(), std::move(bytes));
    auto [it, inserted] = offsets.try_emplace(key, size);
    if (inserted)
      size += alignUp(static_cast<int64_t>(it->first.second.size()));
    return it->second;
  }
  int64_t bytes() const { return size; }

private:
  static int64_t alignUp(int64_t n) {
    return (n + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  }
  std::map<std::pair<const void *, std::string>, int64_t> offsets;
  int64_t size = 0;
};

/// Moves one bucket's plan onto the shared layout: its weights to their
/// shared offsets, everything after its own weights region by the growth of
/// the region.
class Rebaser {
public:
  Rebaser(func::FuncOp func) : func(func) {}

  LogicalResult placeWeights(SharedWeights &shared) {
    ownWeightsBytes = *getWeightsBytes(func);
    WalkResult walk = func.walk([&](ConstantOp constant) {
      std::optional<int64_t> offset = getWeightOffset(constant);
      std::string data;
      if (!offset || failed(cgc::constantBytes(constant, data)))
        return WalkResult::interrupt();
      int64_t bytes = static_cast<int64_t>(data.size());
      int64_t moved = shared.place(constant.getType(), std::move(data));
      weights[*offset] = {moved, bytes};
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return func.emitError("shape buckets: a weight has no planned offset "
                            "or no data");
    return success();
  }

  void apply(int64_t sharedWeightsBytes) {
    shift = sharedWeightsBytes - ownWeightsBytes;
    auto remapAll = [&](ArrayRef<int64_t> offsets) {
      return llvm::map_to_vector(offsets, [&](int64_t x) { return remap(x); });
    };
    func.walk([&](Operation *op) {
      if (auto offsets = getResultOffsets(op))
        setResultOffsets(op, remapAll(*offsets));
      if (auto offsets = getBodyArgOffsets(op))
        setBodyArgOffsets(op, remapAll(*offsets));
      if (auto offset = getWeightOffset(op))
        setWeightOffset(op, remap(*offset));
    });
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto offset = getInputArenaOffset(func, i))
        setInputArenaOffset(func, i, remap(*offset));
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (auto offset = getOutputArenaOffset(func, i))
        setOutputArenaOffset(func, i, remap(*offset));
    setArenaBytes(func, *getArenaBytes(func) + shift);
    setWeightsBytes(func, sharedWeightsBytes);
  }

private:
  /// Offsets inside the own weights region follow their weight (a view may
  /// point into one); all others move by `shift`; -1 (no buffer) stays.
  int64_t remap(int64_t offset) const {
    if (offset < 0)
      return offset;
    if (offset >= ownWeightsBytes)
      return offset + shift;
    auto it = weights.upper_bound(offset);
    assert(it != weights.begin() && "offset before the first weight");
    --it;
    return it->second.first + (offset - it->first);
  }

  func::FuncOp func;
  int64_t ownWeightsBytes = 0, shift = 0;
  /// Own offset -> (shared offset, bytes).
  std::map<int64_t, std::pair<int64_t, int64_t>> weights;
};

/// Renames the bucket's function and its islands and eager regions, whose
/// names become graph and region names in the package.
void tagBucket(func::FuncOp func, StringRef tag, int64_t value) {
  func.setSymName(("main_" + tag).str());
  setBucketValue(func, value);
  for (Operation &op : func.getBody().front()) {
    if (auto island = dyn_cast<IslandOp>(op))
      island.setName((tag + "_" + island.getName()).str());
    else if (auto eager = dyn_cast<EagerRegionOp>(op))
      eager.setName((tag + "_" + eager.getName()).str());
  }
}

/// What the weights of an imported bucket hold, in program order: padding
/// needs them equal in every bucket, since a constant that the importer
/// folded from the padded dim's value (a mean's divisor, say) would be
/// wrong for the rows actually present.
using WeightPrint = std::vector<std::pair<Operation *, std::string>>;

WeightPrint printWeights(func::FuncOp func) {
  WeightPrint print;
  func.walk([&](ConstantOp constant) {
    std::string data;
    if (succeeded(cgc::constantBytes(constant, data)))
      print.push_back({constant, std::to_string(llvm::hash_value(data)) +
                                     " " + std::to_string(data.size())});
  });
  return print;
}

LogicalResult checkSameWeights(const WeightPrint &a, const WeightPrint &b,
                               StringRef dim) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size() && i < b.size() && a[i].second == b[i].second)
      continue;
    Operation *at = i < b.size() ? b[i].first : a[i].first;
    return at->emitError("--pad-to-bucket: this constant differs between "
                         "buckets (the model computes it from the value of '")
           << dim << "'), so a padded bucket would use the wrong value";
  }
  return success();
}

OwningOpRef<ModuleOp> compileOne(StringRef path, MLIRContext *context,
                                 ImportOptions importOptions,
                                 const PipelineOptions &options,
                                 const BucketOptions &buckets, int64_t value,
                                 bool checkPadding, WeightPrint *print) {
  importOptions.dimBindings[buckets.dim] = value;
  OwningOpRef<ModuleOp> module =
      importONNXModel(path, context, importOptions);
  if (!module)
    return nullptr;
  auto func = module->lookupSymbol<func::FuncOp>("main");
  if (!func) {
    module->emitError("shape buckets need a @main function");
    return nullptr;
  }
  if (!usesDim(func, buckets.dim)) {
    func.emitError("--dim ")
        << buckets.dim << "=...: no input of the model has the symbolic dim '"
        << buckets.dim << "'";
    return nullptr;
  }
  if (print)
    *print = printWeights(func);
  PassManager pm(context);
  if (checkPadding)
    pm.addNestedPass<func::FuncOp>(
        createCgcCheckBucketPadding(CgcCheckBucketPaddingOptions{buckets.dim}));
  buildCgcPipeline(pm, PipelineStop::Plan, options);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> cgc::compileBuckets(StringRef path, MLIRContext *context,
                                          const ImportOptions &importOptions,
                                          const BucketOptions &buckets,
                                          const PipelineOptions &options) {
  std::vector<OwningOpRef<ModuleOp>> modules;
  WeightPrint first, current;
  for (int64_t value : buckets.values) {
    // The proof of padding is the same for every bucket; the largest one
    // is checked (values are ascending).
    bool checkPadding =
        buckets.padToBucket && value == buckets.values.back();
    modules.push_back(compileOne(path, context, importOptions, options, buckets, value,
                                 checkPadding,
                                 buckets.padToBucket ? &current : nullptr));
    if (!modules.back())
      return nullptr;
    if (!buckets.padToBucket)
      continue;
    if (modules.size() == 1)
      first = std::move(current);
    else if (failed(checkSameWeights(first, current, buckets.dim)))
      return nullptr;
  }
  SharedWeights shared;
  std::vector<Rebaser> rebasers;
  for (OwningOpRef<ModuleOp> &module : modules) {
    rebasers.emplace_back(module->lookupSymbol<func::FuncOp>("main"));
    if (failed(rebasers.back().placeWeights(shared)))
      return nullptr;
  }
  OwningOpRef<ModuleOp> merged = ModuleOp::create(UnknownLoc::get(context));
  setBucketDim(*merged, buckets.dim);
  if (buckets.padToBucket)
    setPadToBucket(*merged);
  // The import's choices stay with the merged module (code generation
  // runs after the merge).
  if (hasHostControlFlow(*modules.front()))
    setHostControlFlow(*merged);
  if (TargetAttr target = lookupTarget(*modules.front()))
    setTarget(*merged, target);
  for (auto [i, module] : llvm::enumerate(modules)) {
    auto func = module->lookupSymbol<func::FuncOp>("main");
    rebasers[i].apply(shared.bytes());
    tagBucket(func, bucketTag(buckets, buckets.values[i]), buckets.values[i]);
    func->moveBefore(merged->getBody(), merged->getBody()->end());
  }
  return merged;
}
