//===- SequenceOps.cpp - sequences built inside a graph --------------------===//
//
// A sequence made inside the graph (SequenceEmpty, SequenceConstruct,
// SplitToSequence, then SequenceInsert/Erase) is a list of tensors known at
// import: the importer keeps the list, positions must be constants, and
// SequenceAt, SequenceLength and ConcatFromSequence read it back as
// tensors. No cgc op is a sequence, so the GPU path sees only the tensors.
// Sequences that cross a graph boundary (graph inputs and outputs, If and
// Loop values) are refused.
//
// Optionals made inside the graph are held the same way: a full optional
// is its tensor or sequence, an empty one a name the importer marks, so
// OptionalHasElement folds to a constant and OptionalGetElement is the
// element itself.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// The constant position input `i` as an index into a sequence of `size`
/// (negative counts from the end; `inserting` allows size itself), or
/// `fallback` when the input is absent.
FailureOr<int64_t> position(NodeContext &ctx, size_t i, int64_t size,
                            int64_t fallback, bool inserting) {
  Value v = ctx.input(i);
  if (!v)
    return fallback;
  std::optional<SmallVector<int64_t>> given = ctx.constInts(v);
  if (!given || given->size() != 1) {
    ctx.error() << "the position must be a constant scalar";
    return failure();
  }
  int64_t p = given->front();
  int64_t limit = inserting ? size + 1 : size;
  if (p < -size || p >= limit) {
    ctx.error() << "position " << p << " is outside a sequence of " << size;
    return failure();
  }
  return p < 0 ? p + size : p;
}

/// Input 0 (a tensor or a sequence) as output 0.
Results forwardElement(NodeContext &ctx) {
  if (const SmallVector<Value> *seq =
          ctx.graph().lookupSequence(ctx.node().input(0))) {
    ctx.defineSequenceOutput(0, *seq);
    return SmallVector<Value>{Value()};
  }
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  return SmallVector<Value>{*x};
}

Results importSequenceEmpty(NodeContext &ctx) {
  ctx.defineSequenceOutput(0, {});
  return SmallVector<Value>{Value()};
}

Results importSequenceConstruct(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, ctx.numInputs());
  if (failed(in))
    return failure();
  ctx.defineSequenceOutput(0, *in);
  return SmallVector<Value>{Value()};
}

Results importSequenceInsert(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> seq = ctx.sequenceInput(0);
  FailureOr<Value> tensor = ctx.requiredInput(1);
  if (failed(seq) || failed(tensor))
    return failure();
  FailureOr<int64_t> at =
      position(ctx, 2, seq->size(), seq->size(), /*inserting=*/true);
  if (failed(at))
    return failure();
  seq->insert(seq->begin() + *at, *tensor);
  ctx.defineSequenceOutput(0, *seq);
  return SmallVector<Value>{Value()};
}

Results importSequenceErase(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> seq = ctx.sequenceInput(0);
  if (failed(seq))
    return failure();
  if (seq->empty()) {
    ctx.error() << "cannot erase from an empty sequence";
    return failure();
  }
  FailureOr<int64_t> at = position(ctx, 1, seq->size(),
                                   (int64_t)seq->size() - 1, false);
  if (failed(at))
    return failure();
  seq->erase(seq->begin() + *at);
  ctx.defineSequenceOutput(0, *seq);
  return SmallVector<Value>{Value()};
}

Results importSequenceAt(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> seq = ctx.sequenceInput(0);
  if (failed(seq))
    return failure();
  FailureOr<int64_t> at = position(ctx, 1, seq->size(), -1, false);
  if (failed(at))
    return failure();
  if (*at < 0) {
    ctx.error() << "the position input is required";
    return failure();
  }
  return SmallVector<Value>{(*seq)[*at]};
}

Results importSequenceLength(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> seq = ctx.sequenceInput(0);
  if (failed(seq))
    return failure();
  return SmallVector<Value>{
      ctx.constInt(seq->size(), ctx.builder().getI64Type())};
}

/// ConcatFromSequence: the tensors concatenated along `axis`, or stacked
/// on a new axis with new_axis = 1.
Results importConcatFromSequence(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> seq = ctx.sequenceInput(0);
  if (failed(seq))
    return failure();
  int64_t axis = ctx.getInt("axis", 0);
  bool newAxis = ctx.getInt("new_axis", 0) != 0;
  if (ctx.hadAttributeError())
    return failure();
  if (seq->empty()) {
    ctx.error() << "cannot concatenate an empty sequence";
    return failure();
  }
  int64_t rank = tensorType(seq->front()).getRank() + (newAxis ? 1 : 0);
  if (llvm::any_of(*seq, [&](Value v) {
        return tensorType(v).getRank() + (newAxis ? 1 : 0) != rank;
      })) {
    ctx.error() << "the sequence's tensors differ in rank";
    return failure();
  }
  FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank);
  if (failed(normalized))
    return failure();
  SmallVector<Value> pieces;
  for (Value v : *seq) {
    if (!newAxis) {
      pieces.push_back(v);
      continue;
    }
    SmallVector<int64_t> shape(tensorType(v).getShape());
    shape.insert(shape.begin() + *normalized, 1);
    FailureOr<Value> piece = reshapeTo(ctx, v, shape);
    if (failed(piece))
      return failure();
    pieces.push_back(*piece);
  }
  if (pieces.size() == 1)
    return SmallVector<Value>{pieces.front()};
  return single(
      ctx.create1<ConcatOp>(pieces, {ctx.namedI64("axis", *normalized)}));
}

/// Most tensors SplitToSequence makes (one slice op each).
constexpr int64_t kMaxSequenceParts = 1 << 16;

/// SplitToSequence: slices along `axis` of the sizes `split` gives (a
/// scalar: equal parts and a smaller last one), or of 1 each, dropping the
/// axis unless keepdims.
Results importSplitToSequence(NodeContext &ctx) {
  FailureOr<Value> x = ctx.requiredInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = tensorType(*x);
  int64_t axisAttr = ctx.getInt("axis", 0);
  bool keepDims = ctx.getInt("keepdims", 1) != 0;
  if (ctx.hadAttributeError())
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(ctx, axisAttr, xt.getRank());
  if (failed(axis))
    return failure();
  if (!xt.hasStaticShape()) {
    ctx.error() << "a dynamic input shape is not supported (the sequence's "
                   "length must be known at import), got "
                << xt;
    return failure();
  }
  int64_t length = xt.getDimSize(*axis);
  auto tooMany = [&](int64_t parts) {
    if (parts <= kMaxSequenceParts)
      return false;
    ctx.error() << "would make a sequence of " << parts
                << " tensors (at most " << kMaxSequenceParts << ")";
    return true;
  };
  SmallVector<int64_t> sizes;
  bool dropAxis = false;
  if (Value split = ctx.input(1)) {
    std::optional<SmallVector<int64_t>> given = ctx.constInts(split);
    if (!given) {
      ctx.error() << "split must be a constant";
      return failure();
    }
    if (tensorType(split).getRank() == 0) {
      int64_t part = given->front();
      if (part <= 0) {
        ctx.error() << "split must be positive, got " << part;
        return failure();
      }
      int64_t parts = part >= length ? (length > 0) : (length + part - 1) / part;
      if (tooMany(parts))
        return failure();
      for (int64_t i = 0; i < parts; ++i)
        sizes.push_back(std::min(part, length - i * part));
    } else {
      sizes = *given;
    }
  } else {
    if (tooMany(length))
      return failure();
    sizes.assign(length, 1);
    dropAxis = !keepDims;
  }
  if (tooMany(sizes.size()))
    return failure();
  int64_t total = 0;
  bool inRange = true;
  for (int64_t s : sizes) {
    inRange &= s >= 0 && s <= length;
    total += inRange ? s : 0;
  }
  if (!inRange || total != length) {
    ctx.error() << "split sizes must be non-negative and add up to "
                << length;
    return failure();
  }
  SmallVector<Value> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    FailureOr<Value> part = sliceAlong(ctx, *x, *axis, start, start + s);
    if (failed(part))
      return failure();
    if (dropAxis) {
      SmallVector<int64_t> shape(tensorType(*part).getShape());
      shape.erase(shape.begin() + *axis);
      if (failed(part = reshapeTo(ctx, *part, shape)))
        return failure();
    }
    parts.push_back(*part);
    start += s;
  }
  ctx.defineSequenceOutput(0, parts);
  return SmallVector<Value>{Value()};
}

} // namespace

/// Optional(x) is x; Optional() (its `type` only) is empty.
Results importOptional(NodeContext &ctx) {
  if (!ctx.hasInput(0)) {
    ctx.defineEmptyOptionalOutput(0);
    return SmallVector<Value>{Value()};
  }
  return forwardElement(ctx);
}

/// The element of a full optional (a tensor or a sequence; a plain tensor
/// or sequence input is its own element).
Results importOptionalGetElement(NodeContext &ctx) {
  if (!ctx.hasInput(0) || ctx.isEmptyOptionalInput(0)) {
    ctx.error() << "the optional is empty: it has no element to get";
    return failure();
  }
  return forwardElement(ctx);
}

/// Whether an optional holds an element: known at import.
Results importOptionalHasElement(NodeContext &ctx) {
  bool full = ctx.hasInput(0) && !ctx.isEmptyOptionalInput(0);
  return SmallVector<Value>{ctx.constScalar(full ? 1 : 0,
                                            ctx.builder().getI1Type())};
}

void cgc::onnx_import::registerSequenceOps(ImporterTable &t) {
  auto add = importerAdder(t);
  const char *held = "a list of tensors held by the importer";
  add("SequenceEmpty", importSequenceEmpty, held);
  add("SequenceConstruct", importSequenceConstruct, held);
  add("SequenceInsert", importSequenceInsert,
      "the list with the tensor inserted (constant position)");
  add("SequenceErase", importSequenceErase,
      "the list without one tensor (constant position)");
  add("SequenceAt", importSequenceAt, "the tensor at a constant position");
  add("Optional", importOptional,
      "held by the importer: its element, or empty (made in the graph)");
  add("OptionalGetElement", importOptionalGetElement,
      "the element itself (an empty optional is an error)");
  add("OptionalHasElement", importOptionalHasElement,
      "folded to `cgc.constant`");
  add("SequenceLength", importSequenceLength, "folded to `cgc.constant`");
  add("ConcatFromSequence", importConcatFromSequence,
      "`cgc.concat` of the list (reshaped for new_axis)");
  add("SplitToSequence", importSplitToSequence,
      "`cgc.slice` parts as a list (constant split)");
}
