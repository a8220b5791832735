//===- BufferPlan.cpp - lifetimes and offsets in one arena ----------------===//

#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"
#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"

using namespace mlir;
using namespace cgc;

int64_t cgc::tensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

int64_t cgc::capacityBytes(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.hasStaticShape())
    return tensorBytes(type);
  if (auto result = dyn_cast<OpResult>(v);
      result && isa<IslandOp, EagerRegionOp>(result.getOwner())) {
    Operation *yield = result.getOwner()->getRegion(0).front().getTerminator();
    return capacityBytes(yield->getOperand(result.getResultNumber()));
  }
  if (auto nonzero = v.getDefiningOp<NonZeroOp>()) {
    auto input = cast<RankedTensorType>(nonzero.getInput().getType());
    if (input.hasStaticShape())
      return std::max<int64_t>(1, input.getRank()) * input.getNumElements() *
             8;
  }
  // A reshape to a run-time shape keeps its input's elements; Compress and
  // Unique keep at most all of them (Unique's indices and counts: one per
  // slice).
  if (auto reshape = v.getDefiningOp<ReshapeOp>())
    return capacityBytes(reshape.getInput());
  // NonMaxSuppression keeps at most every box of every class: a row of
  // three i64 each.
  if (auto nms = v.getDefiningOp<NonMaxSuppressionOp>()) {
    auto scores = cast<RankedTensorType>(nms.getScores().getType());
    if (scores.hasStaticShape())
      return std::max<int64_t>(1, scores.getNumElements()) * 3 * 8;
  }
  if (auto compress = v.getDefiningOp<CompressOp>())
    return capacityBytes(compress.getInput());
  if (auto unique = v.getDefiningOp<UniqueOp>()) {
    auto input = cast<RankedTensorType>(unique.getInput().getType());
    if (!input.hasStaticShape())
      return -1;
    if (v == unique.getOutput())
      return tensorBytes(input);
    std::optional<int64_t> axis = unique.getAxis();
    int64_t slices = input.getNumElements();
    if (axis)
      slices = input.getDimSize(*axis < 0 ? *axis + input.getRank() : *axis);
    return slices * 8;
  }
  return -1;
}

LogicalResult cgc::constantBytes(Operation *op, std::string &data) {
  return elementsBytes(cast<ConstantOp>(op).getValue(), op, data);
}

LogicalResult cgc::elementsBytes(Attribute value, Operation *owner,
                                 std::string &data) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return owner->emitError("weight '")
             << resource.getRawHandle().getKey()
             << "' has no data (was the IR printed with elided weights?)";
    data.assign(blob->getData().data(), blob->getData().size());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return owner->emitError("weight data of an unsupported kind: ") << value;
  data.clear();
  if (dense.getElementType().isInteger(1)) {
    for (bool b : dense.getValues<bool>())
      data += b ? '\1' : '\0';
    return success();
  }
  // int4/uint4/int2/uint2 take a byte each, sign- or zero-extended (the
  // attribute's storage keeps only their bits).
  if (auto narrow = dyn_cast<IntegerType>(dense.getElementType());
      narrow && narrow.getWidth() < 8) {
    for (const APInt &v : dense.getValues<APInt>())
      data += (char)(narrow.isUnsigned() ? v.getZExtValue() : v.getSExtValue());
    return success();
  }
  int64_t elementBytes = std::max<int64_t>(
      1, dense.getElementType().getIntOrFloatBitWidth() / 8);
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < dense.getNumElements(); ++i)
      data.append(raw.data(), elementBytes);
  } else {
    data.assign(raw.data(), raw.size());
  }
  return success();
}

int64_t BufferPlan::offsetOf(Value v) const {
  auto it = bufferOf.find(v);
  if (it == bufferOf.end())
    return -1;
  return buffers[it->second].offset + offsetInBuffer.lookup(v);
}

namespace {

int64_t alignUp(int64_t x) {
  return (x + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

/// A kernel may write its output over an input that dies at that kernel when
/// every output element depends only on the same input element.
bool canWriteInPlace(KernelOp kernel, Value input) {
  if (kernel.getKind() != KernelKind::elementwise || kernel.getNumResults() != 1)
    return false;
  return input.getType() == kernel.getResult(0).getType();
}

class Planner {
public:
  explicit Planner(func::FuncOp func) : func(func) {}

  FailureOr<BufferPlan> run() {
    if (failed(checkStatic()))
      return failure();
    Block &body = func.getBody().front();
    assignSteps(body);
    collectValues(body);
    computeLifetimes(body);
    updateStateInPlace(body);
    placeWeights(body);
    placeSlots();
    placeIntermediates();
    return std::move(plan);
  }

private:
  LogicalResult checkStatic() {
    WalkResult result = func.walk([&](Operation *op) {
      if (isa<EagerRegionOp>(op) || op->getParentOfType<EagerRegionOp>())
        return WalkResult::advance();
      for (Type t : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(t);
            tensor && !tensor.hasStaticShape()) {
          op->emitError("buffer planning needs static shapes; got ") << t;
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// Steps: every kernel (or alias) of every island, and every eager region,
  /// in program order. Step k occupies times 2k (reads that may be
  /// overwritten in place) and 2k+1 (everything else).
  void assignSteps(Block &body) {
    int64_t step = 0;
    for (Operation &op : body) {
      if (auto island = dyn_cast<IslandOp>(op)) {
        for (Operation &inner : island.getBody().front().without_terminator())
          stepOf[&inner] = step++;
        stepOf[&op] = step; // island results are read after its last kernel
      } else if (isa<EagerRegionOp>(op)) {
        stepOf[&op] = step++;
      }
    }
    endStep = step + 1;
  }

  /// Values with a data-dependent shape get a buffer of their worst-case
  /// size when it is known at compile time (NonZero: rank x count); else
  /// none, and the GPU backend reports the op.
  void newBuffer(Value v, BufferPlan::Kind kind) {
    int64_t bytes = capacityBytes(v);
    if (bytes < 0)
      return;
    BufferPlan::Buffer buffer;
    buffer.value = v;
    buffer.kind = kind;
    buffer.bytes = bytes;
    buffer.begin = buffer.end = -1;
    plan.buffers.push_back(buffer);
    plan.bufferOf[v] = plan.buffers.size() - 1;
  }

  void alias(Value v, Value source) {
    auto it = plan.bufferOf.find(source);
    if (it != plan.bufferOf.end())
      plan.bufferOf[v] = it->second;
  }

  void collectValues(Block &body) {
    // Training state (cgc.state) is no input a caller passes: it lives in
    // the weights region, where its initial value is uploaded.
    for (BlockArgument arg : body.getArguments())
      newBuffer(arg, getInputState(func, arg.getArgNumber())
                         ? BufferPlan::Kind::State
                         : BufferPlan::Kind::Input);
    // Weights: every constant, also those inside If/Loop bodies.
    func.walk([&](ConstantOp constant) {
      newBuffer(constant, BufferPlan::Kind::Weight);
    });
    for (Operation &op : body) {
      if (auto island = dyn_cast<IslandOp>(op)) {
        collectBlock(island.getBody().front());
        aliasResults(&op, island.getBody().front());
      } else if (auto eager = dyn_cast<EagerRegionOp>(op)) {
        // Everything an eager region computes lives through its whole step.
        collectNested(eager.getBody());
        aliasResults(&op, eager.getBody().front());
      }
    }
    // A returned intermediate lives in its output slot. Returned inputs and
    // weights keep their buffers (the runtime copies them out).
    for (Value v : body.getTerminator()->getOperands()) {
      auto it = plan.bufferOf.find(v);
      if (it != plan.bufferOf.end() &&
          plan.buffers[it->second].kind == BufferPlan::Kind::Intermediate)
        plan.buffers[it->second].kind = BufferPlan::Kind::Output;
    }
  }

  /// Every value computed inside `region` (region arguments too) gets a
  /// buffer of its own; kernels' insides and views need none.
  void collectNested(Region &region) {
    // In program order: a view of a kernel's result aliases the buffer
    // the kernel's result got just before.
    region.walk<WalkOrder::PreOrder>([&](Operation *inner) {
      if (isa<KernelOp>(inner)) {
        for (Value r : inner->getResults())
          newBuffer(r, BufferPlan::Kind::Intermediate);
        return WalkResult::skip();
      }
      if (isa<YieldOp, ConstantOp>(inner))
        return WalkResult::advance();
      if (isa<ReshapeOp>(inner)) {
        alias(inner->getResult(0), inner->getOperand(0));
        return WalkResult::advance();
      }
      for (Value r : inner->getResults())
        newBuffer(r, BufferPlan::Kind::Intermediate);
      for (Region &nested : inner->getRegions())
        for (BlockArgument arg : nested.getArguments())
          newBuffer(arg, BufferPlan::Kind::Intermediate);
      return WalkResult::advance();
    });
  }

  /// Kernels, views and conditional work (If, Loop) of an island body.
  void collectBlock(Block &block) {
    for (Operation &k : block.without_terminator()) {
      if (isa<IfOp, LoopOp>(k)) {
        // A conditional node: its results, bodies and loop state all live
        // through its step, like an eager region's.
        for (Value r : k.getResults())
          newBuffer(r, BufferPlan::Kind::Intermediate);
        for (Region &region : k.getRegions()) {
          for (BlockArgument arg : region.getArguments())
            newBuffer(arg, BufferPlan::Kind::Intermediate);
          collectNested(region);
        }
      } else if (isa<ReshapeOp>(k)) {
        alias(k.getResult(0), k.getOperand(0));
      } else if (isInPlace(&k)) {
        placeConcatInputs(cast<ConcatOp>(k));
      } else {
        for (Value r : k.getResults())
          newBuffer(r, BufferPlan::Kind::Intermediate);
      }
    }
  }

  /// The inputs of an in-place concat become consecutive chunks of the
  /// result's buffer; their own buffers are folded into it.
  void placeConcatInputs(ConcatOp concat) {
    newBuffer(concat.getResult(), BufferPlan::Kind::Intermediate);
    size_t target = plan.bufferOf.lookup(concat.getResult());
    int64_t offset = 0;
    for (Value input : concat.getInputs()) {
      auto it = plan.bufferOf.find(input);
      if (it != plan.bufferOf.end())
        plan.buffers[it->second].absorbed = true;
      plan.bufferOf[input] = target;
      plan.offsetInBuffer[input] = offset;
      offset += tensorBytes(input.getType());
    }
  }

  /// Results of a region op are its yielded values.
  void aliasResults(Operation *op, Block &body) {
    for (auto [result, yielded] :
         llvm::zip(op->getResults(), body.getTerminator()->getOperands()))
      alias(result, yielded);
  }

  void use(Value v, int64_t time) {
    auto it = plan.bufferOf.find(v);
    if (it == plan.bufferOf.end())
      return;
    BufferPlan::Buffer &b = plan.buffers[it->second];
    b.begin = b.begin < 0 ? time : std::min(b.begin, time);
    b.end = std::max(b.end, time);
  }

  /// `input` is read in place by the kernel computing `result`.
  void notePartner(Value result, Value input) {
    auto r = plan.bufferOf.find(result), i = plan.bufferOf.find(input);
    if (r != plan.bufferOf.end() && i != plan.bufferOf.end() &&
        r->second != i->second)
      inPlaceInputs[r->second].insert(i->second);
  }

  void computeLifetimes(Block &body) {
    for (Operation &op : body) {
      if (auto island = dyn_cast<IslandOp>(op)) {
        for (Operation &k : island.getBody().front().without_terminator()) {
          int64_t step = stepOf[&k];
          for (Value r : k.getResults())
            use(r, 2 * step + 1);
          auto kernel = dyn_cast<KernelOp>(k);
          // Every value read anywhere inside the kernel is an input of it.
          k.walk([&](Operation *inner) {
            for (Value operand : inner->getOperands()) {
              bool inPlace = kernel && canWriteInPlace(kernel, operand);
              use(operand, 2 * step + (inPlace ? 0 : 1));
              if (inPlace)
                notePartner(kernel.getResult(0), operand);
            }
            // Inside If and Loop everything lives through the step.
            if (!kernel) {
              for (Value result : inner->getResults())
                use(result, 2 * step + 1);
              for (Region &region : inner->getRegions())
                for (BlockArgument arg : region.getArguments())
                  use(arg, 2 * step + 1);
            }
          });
        }
      } else if (auto eager = dyn_cast<EagerRegionOp>(op)) {
        int64_t step = stepOf[&op];
        for (Value r : eager.getResults())
          use(r, 2 * step + 1);
        op.walk([&](Operation *inner) {
          for (Value operand : inner->getOperands())
            use(operand, 2 * step + 1);
          for (Value result : inner->getResults())
            use(result, 2 * step + 1);
          for (Region &region : inner->getRegions())
            for (BlockArgument arg : region.getArguments())
              use(arg, 2 * step + 1);
        });
      }
    }
    for (Value v : body.getTerminator()->getOperands())
      use(v, 2 * endStep + 1);
  }

  /// A training step's update of state input `s` (cgc.updates) is written
  /// over `s` itself when nothing reads `s` after the kernel that computes
  /// the update, or only that kernel does, element by element (an
  /// elementwise group of the state's type: each thread reads its elements
  /// before it stores). Then the step needs no copy and the state has one
  /// buffer. Otherwise the update keeps an output slot of its own and the
  /// runtime copies it over the state after the step.
  void updateStateInPlace(Block &body) {
    Operation *ret = body.getTerminator();
    for (unsigned i = 0; i < ret->getNumOperands(); ++i) {
      std::optional<unsigned> input = stateInputUpdatedBy(func, i);
      if (!input)
        continue;
      Value state = body.getArgument(*input), update = ret->getOperand(i);
      bool inPlace = canOverwriteState(state, update);
      plan.stateUpdates.push_back({*input, i, inPlace});
      if (!inPlace)
        continue;
      size_t from = plan.bufferOf.lookup(update);
      size_t to = plan.bufferOf.lookup(state);
      for (auto &[value, index] : plan.bufferOf)
        if (index == from)
          index = to;
      plan.buffers[from].absorbed = true;
    }
  }

  bool canOverwriteState(Value state, Value update) {
    auto stateIt = plan.bufferOf.find(state);
    auto updateIt = plan.bufferOf.find(update);
    if (stateIt == plan.bufferOf.end() || updateIt == plan.bufferOf.end() ||
        updateIt->second == stateIt->second)
      return false;
    const BufferPlan::Buffer &written = plan.buffers[updateIt->second];
    if (written.kind != BufferPlan::Kind::Output || written.absorbed ||
        plan.offsetInBuffer.count(update))
      return false;
    // The buffer's root is what a kernel of an island writes.
    auto kernel = written.value.getDefiningOp<KernelOp>();
    if (!kernel || !stepOf.count(kernel))
      return false;
    int64_t writeTime = 2 * stepOf.lookup(kernel) + 1;
    int64_t lastRead = plan.buffers[stateIt->second].end;
    if (lastRead < writeTime)
      return true;
    // Only that kernel reads the state: safe when it is elementwise over
    // the state's shape, every result too (an optimizer's update of a
    // weight and its momentum is one kernel with two results).
    return lastRead == writeTime &&
           kernel.getKind() == KernelKind::elementwise &&
           llvm::all_of(kernel.getResultTypes(),
                        [&](Type t) { return t == state.getType(); });
  }

  /// The weights region: the constants, then the training state (both
  /// uploaded from weights.bin at load).
  void placeWeights(Block &) {
    int64_t offset = 0;
    for (BufferPlan::Kind kind :
         {BufferPlan::Kind::Weight, BufferPlan::Kind::State})
      for (BufferPlan::Buffer &b : plan.buffers) {
        if (b.kind != kind || b.absorbed)
          continue;
        b.offset = offset;
        offset += alignUp(b.bytes);
      }
    plan.weightsBytes = offset;
  }

  void placeSlots() {
    slotsEnd = plan.weightsBytes;
    for (BufferPlan::Buffer &b : plan.buffers) {
      if ((b.kind != BufferPlan::Kind::Input &&
           b.kind != BufferPlan::Kind::Output) ||
          b.absorbed)
        continue;
      b.offset = slotsEnd;
      slotsEnd += alignUp(b.bytes);
    }
  }

  /// Greedy by size: biggest buffers first, each at the lowest offset that
  /// no lifetime-overlapping placed buffer occupies.
  void placeIntermediates() {
    std::vector<size_t> order;
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      if (plan.buffers[i].kind == BufferPlan::Kind::Intermediate &&
          !plan.buffers[i].absorbed)
        order.push_back(i);
    llvm::stable_sort(order, [&](size_t a, size_t b) {
      return plan.buffers[a].bytes > plan.buffers[b].bytes;
    });
    std::vector<size_t> placed;
    int64_t top = 0;
    for (size_t index : order) {
      BufferPlan::Buffer &b = plan.buffers[index];
      if (b.begin < 0) // never used: still give it room of its own
        b.begin = b.end = 2 * endStep;
      std::vector<std::pair<int64_t, int64_t>> taken, exactOnly;
      for (size_t other : placed) {
        const BufferPlan::Buffer &o = plan.buffers[other];
        std::pair<int64_t, int64_t> range = {o.offset,
                                             o.offset + alignUp(o.bytes)};
        if (o.begin <= b.end && b.begin <= o.end)
          taken.push_back(range);
        else if (o.end + 1 == b.begin && inPlaceInputs.lookup(index).contains(other))
          exactOnly.push_back(range);
      }
      b.offset = lowestFit(alignUp(b.bytes), taken, exactOnly);
      top = std::max(top, b.offset + alignUp(b.bytes));
      placed.push_back(index);
      plan.intermediateNaiveBytes += alignUp(b.bytes);
    }
    // Lower bound: the most bytes alive at one time.
    for (int64_t t = 0; t <= 2 * endStep + 1; ++t) {
      int64_t live = 0;
      for (size_t index : order) {
        const BufferPlan::Buffer &b = plan.buffers[index];
        if (b.begin <= t && t <= b.end)
          live += alignUp(b.bytes);
      }
      plan.intermediateLowerBound = std::max(plan.intermediateLowerBound, live);
    }
    plan.intermediateBytes = top;
    for (size_t index : order)
      plan.buffers[index].offset += slotsEnd;
    plan.arenaBytes = slotsEnd + top;
  }

  /// The lowest offset for `bytes` that overlaps no `taken` range and
  /// each `exactOnly` range either not at all or exactly: an input an
  /// elementwise kernel reads in place ends just before the kernel's
  /// result begins, so the result may take the input's very bytes (each
  /// thread reads its element before it writes it), but not bytes shifted
  /// from them (a thread would overwrite an element another has yet to
  /// read).
  static int64_t
  lowestFit(int64_t bytes, ArrayRef<std::pair<int64_t, int64_t>> taken,
            ArrayRef<std::pair<int64_t, int64_t>> exactOnly) {
    auto overlaps = [&](int64_t at, std::pair<int64_t, int64_t> r) {
      return at < r.second && r.first < at + bytes;
    };
    auto fits = [&](int64_t at) {
      for (auto r : taken)
        if (overlaps(at, r))
          return false;
      for (auto r : exactOnly)
        if (overlaps(at, r) && (at != r.first || r.second - r.first != bytes))
          return false;
      return true;
    };
    SmallVector<int64_t> candidates = {0};
    for (auto r : taken)
      candidates.push_back(r.second);
    for (auto r : exactOnly)
      candidates.append({r.first, r.second});
    llvm::sort(candidates);
    for (int64_t at : candidates)
      if (fits(at))
        return at;
    llvm_unreachable("the highest end of a range always fits");
  }

  func::FuncOp func;
  BufferPlan plan;
  /// Buffer -> the buffers of inputs its kernel reads in place.
  llvm::DenseMap<size_t, llvm::DenseSet<size_t>> inPlaceInputs;
  llvm::DenseMap<Operation *, int64_t> stepOf;
  int64_t endStep = 0;
  int64_t slotsEnd = 0;
};

} // namespace

FailureOr<BufferPlan> cgc::planBuffers(func::FuncOp func) {
  return Planner(func).run();
}

int64_t cgc::plannedOffset(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    // Loop bodies' arguments are planned on the loop op.
    if (auto offsets = getBodyArgOffsets(owner))
      return (*offsets)[arg.getArgNumber()];
    auto func = dyn_cast<func::FuncOp>(owner);
    if (!func)
      return -1;
    return getInputArenaOffset(func, arg.getArgNumber()).value_or(-1);
  }
  Operation *def = v.getDefiningOp();
  if (auto offset = getWeightOffset(def))
    return *offset;
  if (auto offsets = getResultOffsets(def))
    return (*offsets)[cast<OpResult>(v).getResultNumber()];
  return -1;
}

bool cgc::plannedFloat4Loadable(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return type && type.getElementType().isF32() && plannedOffset(v) % 16 == 0;
}

bool cgc::planned16BitVector8Loadable(Value v, Type element) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return type && element && (element.isF16() || element.isBF16()) &&
         type.getElementType() == element && plannedOffset(v) % 16 == 0;
}
