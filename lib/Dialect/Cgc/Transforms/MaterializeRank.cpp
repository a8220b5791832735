//===- MaterializeRank.cpp - one rank's program of a split one ------------===//
//
// A program split over N ranks differs between ranks only in its shards.
// A package runs one graph per rank on one GPU each, so each rank's program
// is compiled on its own: its weights' shards become plain constants, cut
// here as cgc.shard defines them (and as the interpreter cuts them at run
// time), and everything after this pass sees an ordinary program with
// all-reduces in it. The package emitter then checks that the N programs
// compiled to the same graphs.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace cgc {
#define GEN_PASS_DEF_CGCMATERIALIZERANK
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// Rank `rank`'s part of `bytes`, the raw elements (`elementBytes` each) of
/// a tensor of `shape`, as `shard` cuts it: along its axis, `groups`
/// segments, each giving every rank an equal run of entries.
std::string cutShard(ShardOp shard, ArrayRef<int64_t> shape,
                     int64_t elementBytes, StringRef bytes, int64_t rank) {
  int64_t axis = shard.getAxis(), groups = shard.getGroups();
  int64_t segment = shape[axis] / groups, part = segment / shard.getRanks();
  // Runs of `inner` bytes: `outer` of them before the axis.
  int64_t inner = elementBytes, outer = 1;
  for (int64_t d = axis + 1; d < (int64_t)shape.size(); ++d)
    inner *= shape[d];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  std::string out;
  out.reserve(outer * groups * part * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g)
      out.append(bytes.substr(
          ((o * shape[axis]) + g * segment + rank * part) * inner,
          part * inner));
  return out;
}

/// The elements `bytes` as an attribute of `type`, in the form the weight
/// had: a named resource stays one (its name with the rank), inline data
/// stays inline.
ElementsAttr shardAttr(ElementsAttr whole, RankedTensorType type,
                       StringRef bytes, int64_t rank) {
  ArrayRef<char> raw(bytes.data(), bytes.size());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(whole))
    return DenseResourceElementsAttr::get(
        type,
        (resource.getRawHandle().getKey() + ".rank" + Twine(rank)).str(),
        HeapAsmResourceBlob::allocateAndCopyInferAlign(raw));
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

/// Byte-sized elements only: the cut works on whole bytes.
bool cuttable(Type element) {
  return element.isIntOrFloat() && element.getIntOrFloatBitWidth() >= 8 &&
         element.getIntOrFloatBitWidth() % 8 == 0;
}

struct MaterializeRankPass
    : public cgc::impl::CgcMaterializeRankBase<MaterializeRankPass> {
  using CgcMaterializeRankBase::CgcMaterializeRankBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t ranks = getRanks(module);
    if (rank < 0 || rank >= ranks) {
      module.emitError() << "--cgc-materialize-rank: rank " << int64_t(rank)
                         << " is not one of the program's " << ranks
                         << " ranks (cgc.ranks)";
      return signalPassFailure();
    }
    SmallVector<ShardOp> shards;
    module.walk([&](ShardOp shard) { shards.push_back(shard); });
    for (ShardOp shard : shards)
      if (failed(materialize(shard)))
        return signalPassFailure();
    setRank(module, rank);
  }

  LogicalResult materialize(ShardOp shard) {
    auto weight = shard.getInput().getDefiningOp<ConstantOp>();
    if (!weight)
      return shard.emitError()
             << "a shard of a value computed at run time has no package "
                "form yet: a split package takes shards of weights only";
    auto type = cast<RankedTensorType>(shard.getInput().getType());
    auto shardType = cast<RankedTensorType>(shard.getType());
    if (!cuttable(type.getElementType()))
      return shard.emitError() << "cannot cut a weight of "
                               << type.getElementType()
                               << " into shards (elements of whole bytes only)";
    std::string bytes;
    if (failed(elementsBytes(weight.getValue(), weight, bytes)))
      return failure();
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    if ((int64_t)bytes.size() != type.getNumElements() * elementBytes)
      return shard.emitError() << "the weight's data has " << bytes.size()
                               << " bytes, not the "
                               << type.getNumElements() * elementBytes
                               << " its type holds";
    std::string part =
        cutShard(shard, type.getShape(), elementBytes, bytes, int64_t(rank));
    OpBuilder b(shard);
    auto cut = ConstantOp::create(
        b, shard.getLoc(), shardType,
        shardAttr(weight.getValue(), shardType, part, int64_t(rank)));
    shard.replaceAllUsesWith(cut.getOutput());
    shard.erase();
    if (weight->use_empty())
      weight.erase();
    return success();
  }
};

} // namespace
