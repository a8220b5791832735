//===- ConstantFolding.cpp - evaluate shape subgraphs at import -----------===//
//
// Exporters compute reshape targets at run time (Shape -> Gather -> Concat ->
// Reshape). Once dims are bound those values are compile-time facts; this
// file evaluates the integer and small float ops of such chains on constants
// so that Reshape/Expand/Slice see constant operands. It also tracks shape
// vectors whose entries are only partly known (a symbolic batch dim) so a
// Reshape to [N, -1] still gets its static dims.
//
//===----------------------------------------------------------------------===//

#include "ImporterCore.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Flat index into an operand of shape `from` for the flat index of the
/// broadcast result of shape `to`.
int64_t broadcastIndex(int64_t flat, ArrayRef<int64_t> to,
                       ArrayRef<int64_t> from) {
  SmallVector<int64_t> toStrides = rowMajorStrides(to);
  SmallVector<int64_t> fromStrides = rowMajorStrides(from);
  int64_t offset = to.size() - from.size(), index = 0;
  for (size_t d = 0; d < to.size(); ++d) {
    int64_t coord = (flat / toStrides[d]) % to[d];
    if ((int64_t)d >= offset && from[d - offset] != 1)
      index += coord * fromStrides[d - offset];
  }
  return index;
}

/// A constant's elements as doubles or int64 (whichever fits its type).
struct Numbers {
  bool isFloat = false;
  SmallVector<double> f;
  SmallVector<int64_t> i;
  int64_t size() const { return isFloat ? f.size() : i.size(); }
};

Numbers readNumbers(DenseElementsAttr attr) {
  Numbers n;
  if (isa<FloatType>(attr.getElementType())) {
    n.isFloat = true;
    for (const APFloat &v : attr.getValues<APFloat>())
      n.f.push_back(v.convertToDouble());
  } else {
    bool isUnsigned = attr.getElementType().isUnsignedInteger();
    for (const APInt &v : attr.getValues<APInt>())
      n.i.push_back(isUnsigned ? (int64_t)v.getZExtValue() : v.getSExtValue());
  }
  return n;
}

DenseElementsAttr writeNumbers(RankedTensorType type, const Numbers &n) {
  Type element = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t k = 0; k < n.size(); ++k) {
      APFloat v(n.isFloat ? n.f[k] : (double)n.i[k]);
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(v);
    }
    return DenseElementsAttr::get(type, values);
  }
  auto intType = cast<IntegerType>(element);
  SmallVector<APInt> values;
  for (int64_t k = 0; k < n.size(); ++k) {
    int64_t v = n.isFloat ? (int64_t)std::trunc(n.f[k]) : n.i[k];
    if (intType.getWidth() == 1)
      v = v != 0;
    values.push_back(APInt(intType.getWidth(), (uint64_t)v,
                           /*isSigned=*/!intType.isUnsigned(),
                           /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(type, values);
}

template <typename FloatFn, typename IntFn>
DenseElementsAttr foldBinary(Operation *op, ArrayRef<DenseElementsAttr> in,
                             FloatFn floatFn, IntFn intFn) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!type.hasStaticShape())
    return nullptr;
  Numbers a = readNumbers(in[0]), b = readNumbers(in[1]);
  auto aShape = in[0].getType().getShape(), bShape = in[1].getType().getShape();
  Numbers out;
  out.isFloat = a.isFloat;
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    int64_t ia = broadcastIndex(k, type.getShape(), aShape);
    int64_t ib = broadcastIndex(k, type.getShape(), bShape);
    if (a.isFloat) {
      out.f.push_back(floatFn(a.f[ia], b.f[ib]));
    } else {
      std::optional<int64_t> v = intFn(a.i[ia], b.i[ib]);
      if (!v)
        return nullptr; // division by zero: leave it to run time
      out.i.push_back(*v);
    }
  }
  return writeNumbers(type, out);
}

template <typename Cmp>
DenseElementsAttr foldCompare(Operation *op, ArrayRef<DenseElementsAttr> in,
                              Cmp cmp) {
  return foldBinary(
      op, in, [&](double x, double y) { return (double)cmp(x, y); },
      [&](int64_t x, int64_t y) -> std::optional<int64_t> {
        return cmp(x, y);
      });
}

DenseElementsAttr foldCast(CastOp op, DenseElementsAttr in) {
  auto type = cast<RankedTensorType>(op.getType());
  Numbers n = readNumbers(in);
  if (n.isFloat && isa<IntegerType>(type.getElementType()) &&
      llvm::any_of(n.f, [](double v) { return !std::isfinite(v); }))
    return nullptr;
  return writeNumbers(type, n);
}

/// Gathers elements through an index map, keeping the element type.
DenseElementsAttr gatherElements(RankedTensorType type, DenseElementsAttr in,
                                 ArrayRef<int64_t> sourceIndex) {
  SmallVector<Attribute> all(in.getValues<Attribute>());
  SmallVector<Attribute> picked;
  for (int64_t index : sourceIndex)
    picked.push_back(all[index]);
  return DenseElementsAttr::get(type, picked);
}

DenseElementsAttr foldGather(GatherOp op, DenseElementsAttr data,
                             DenseElementsAttr indices) {
  auto type = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t axis = op.getAxis();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  Numbers idx = readNumbers(indices);
  SmallVector<int64_t> source;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t raw : idx.i) {
      int64_t i = raw < 0 ? raw + shape[axis] : raw;
      if (i < 0 || i >= shape[axis])
        return nullptr; // out of range: the interpreter reports it
      for (int64_t k = 0; k < inner; ++k)
        source.push_back((o * shape[axis] + i) * inner + k);
    }
  }
  return gatherElements(type, data, source);
}

DenseElementsAttr foldConcat(ConcatOp op, ArrayRef<DenseElementsAttr> in) {
  auto type = cast<RankedTensorType>(op.getType());
  int64_t axis = op.getAxis();
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  SmallVector<Attribute> values;
  SmallVector<SmallVector<Attribute>> parts;
  for (DenseElementsAttr part : in)
    parts.emplace_back(part.getValues<Attribute>());
  for (int64_t o = 0; o < outer; ++o) {
    for (auto [part, attr] : llvm::zip(parts, in)) {
      int64_t chunk = attr.getNumElements() / std::max<int64_t>(outer, 1);
      for (int64_t k = 0; k < chunk; ++k)
        values.push_back(part[o * chunk + k]);
    }
  }
  return DenseElementsAttr::get(type, values);
}

DenseElementsAttr foldSlice(SliceOp op, DenseElementsAttr in) {
  auto type = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> inShape = in.getType().getShape();
  SmallVector<int64_t> inStrides = rowMajorStrides(inShape);
  SmallVector<int64_t> outStrides = rowMajorStrides(type.getShape());
  SmallVector<int64_t> source;
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    int64_t index = 0;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t coord = (k / outStrides[d]) % type.getDimSize(d);
      index += (op.getStarts()[d] + coord * op.getSteps()[d]) * inStrides[d];
    }
    source.push_back(index);
  }
  return gatherElements(type, in, source);
}

DenseElementsAttr foldExpand(ExpandOp op, DenseElementsAttr in) {
  auto type = cast<RankedTensorType>(op.getType());
  if (in.isSplat())
    return in.resizeSplat(type);
  SmallVector<int64_t> source;
  for (int64_t k = 0; k < type.getNumElements(); ++k)
    source.push_back(broadcastIndex(k, type.getShape(), in.getType().getShape()));
  return gatherElements(type, in, source);
}

DenseElementsAttr foldTranspose(TransposeOp op, DenseElementsAttr in) {
  auto type = cast<RankedTensorType>(op.getType());
  if (in.isSplat())
    return in.resizeSplat(type);
  ArrayRef<int64_t> perm = op.getPerm();
  SmallVector<int64_t> inStrides = rowMajorStrides(in.getType().getShape());
  SmallVector<int64_t> outStrides = rowMajorStrides(type.getShape());
  SmallVector<int64_t> source;
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    int64_t index = 0;
    for (int64_t d = 0; d < type.getRank(); ++d)
      index += ((k / outStrides[d]) % type.getDimSize(d)) * inStrides[perm[d]];
    source.push_back(index);
  }
  return gatherElements(type, in, source);
}

DenseElementsAttr foldTile(TileOp op, DenseElementsAttr in) {
  auto type = cast<RankedTensorType>(op.getType());
  if (in.isSplat())
    return in.resizeSplat(type);
  ArrayRef<int64_t> inShape = in.getType().getShape();
  SmallVector<int64_t> inStrides = rowMajorStrides(inShape);
  SmallVector<int64_t> outStrides = rowMajorStrides(type.getShape());
  SmallVector<int64_t> source;
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    int64_t index = 0;
    for (int64_t d = 0; d < type.getRank(); ++d)
      index += (((k / outStrides[d]) % type.getDimSize(d)) % inShape[d]) *
               inStrides[d];
    source.push_back(index);
  }
  return gatherElements(type, in, source);
}

DenseElementsAttr foldWhere(WhereOp op, ArrayRef<DenseElementsAttr> in) {
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<bool> cond(in[0].getValues<bool>());
  SmallVector<Attribute> x(in[1].getValues<Attribute>());
  SmallVector<Attribute> y(in[2].getValues<Attribute>());
  SmallVector<Attribute> values;
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    bool c = cond[broadcastIndex(k, type.getShape(), in[0].getType().getShape())];
    values.push_back(
        c ? x[broadcastIndex(k, type.getShape(), in[1].getType().getShape())]
          : y[broadcastIndex(k, type.getShape(), in[2].getType().getShape())]);
  }
  return DenseElementsAttr::get(type, values);
}

/// Reductions over all axes only (shape code uses ReduceProd of a shape).
template <typename Combine>
DenseElementsAttr foldReduceAll(Operation *op, DenseElementsAttr in,
                                Combine combine, double init) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.getNumElements() != 1)
    return nullptr;
  Numbers n = readNumbers(in), out;
  out.isFloat = n.isFloat;
  if (n.isFloat) {
    double acc = init;
    for (double v : n.f)
      acc = combine(acc, v);
    out.f.push_back(acc);
  } else {
    int64_t acc = (int64_t)init;
    for (int64_t v : n.i)
      acc = (int64_t)combine((double)acc, (double)v);
    out.i.push_back(acc);
  }
  return writeNumbers(type, out);
}

std::optional<int64_t> checkedDiv(int64_t a, int64_t b) {
  if (b == 0)
    return std::nullopt;
  return a / b;
}

} // namespace

DenseElementsAttr
cgc::onnx_import::foldConstantOp(Operation *op,
                                 ArrayRef<DenseElementsAttr> in) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape() ||
      resultType.getNumElements() > (1 << 16))
    return nullptr;
  auto some = [](int64_t v) -> std::optional<int64_t> { return v; };
  return llvm::TypeSwitch<Operation *, DenseElementsAttr>(op)
      .Case([&](AddOp) {
        return foldBinary(op, in, std::plus<double>(),
                          [&](int64_t a, int64_t b) { return some(a + b); });
      })
      .Case([&](SubOp) {
        return foldBinary(op, in, std::minus<double>(),
                          [&](int64_t a, int64_t b) { return some(a - b); });
      })
      .Case([&](MulOp) {
        return foldBinary(op, in, std::multiplies<double>(),
                          [&](int64_t a, int64_t b) { return some(a * b); });
      })
      .Case([&](DivOp) {
        return foldBinary(op, in, std::divides<double>(), checkedDiv);
      })
      .Case([&](MaxOp) {
        return foldBinary(
            op, in, [](double a, double b) { return std::max(a, b); },
            [&](int64_t a, int64_t b) { return some(std::max(a, b)); });
      })
      .Case([&](MinOp) {
        return foldBinary(
            op, in, [](double a, double b) { return std::min(a, b); },
            [&](int64_t a, int64_t b) { return some(std::min(a, b)); });
      })
      .Case([&](EqualOp) {
        return foldCompare(op, in, [](auto a, auto b) { return a == b; });
      })
      .Case([&](LessOp) {
        return foldCompare(op, in, [](auto a, auto b) { return a < b; });
      })
      .Case([&](GreaterOp) {
        return foldCompare(op, in, [](auto a, auto b) { return a > b; });
      })
      .Case([&](NegOp) {
        Numbers n = readNumbers(in[0]);
        for (double &v : n.f)
          v = -v;
        for (int64_t &v : n.i)
          v = -v;
        return writeNumbers(resultType, n);
      })
      .Case([&](CastOp cast) { return foldCast(cast, in[0]); })
      .Case([&](GatherOp gather) { return foldGather(gather, in[0], in[1]); })
      .Case([&](ConcatOp concat) { return foldConcat(concat, in); })
      .Case([&](SliceOp slice) { return foldSlice(slice, in[0]); })
      .Case([&](ExpandOp expand) { return foldExpand(expand, in[0]); })
      .Case([&](TransposeOp transpose) {
        return foldTranspose(transpose, in[0]);
      })
      .Case([&](TileOp tile) { return foldTile(tile, in[0]); })
      .Case([&](WhereOp where) { return foldWhere(where, in); })
      .Case([&](ReshapeOp) {
        DenseElementsAttr input = in[0];
        return input.reshape(resultType);
      })
      .Case([&](ReduceProdOp) {
        return foldReduceAll(op, in[0], std::multiplies<double>(), 1.0);
      })
      .Case([&](ReduceSumOp) {
        return foldReduceAll(op, in[0], std::plus<double>(), 0.0);
      })
      .Default([](Operation *) { return nullptr; });
}

//===----------------------------------------------------------------------===//
// Partially known shape vectors
//===----------------------------------------------------------------------===//

namespace {
std::optional<SmallVector<int64_t>> knownInts(GraphImporter &graph, Value v) {
  if (auto constant = v.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.getElementType().isInteger(64))
      return std::nullopt;
    SmallVector<int64_t> ints;
    for (const APInt &value : dense.getValues<APInt>())
      ints.push_back(value.getSExtValue());
    return ints;
  }
  return graph.partialInts(v);
}

bool isSmallI64Vector(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isInteger(64) && type.getRank() <= 1 &&
         type.hasStaticShape() && type.getNumElements() <= 64;
}
} // namespace

void cgc::onnx_import::propagatePartialInts(GraphImporter &graph,
                                            Operation *op) {
  if (op->getNumResults() != 1 || !isSmallI64Vector(op->getResult(0)))
    return;
  Value result = op->getResult(0);
  std::optional<SmallVector<int64_t>> known;
  if (auto shape = dyn_cast<ShapeOp>(op)) {
    auto type = cast<RankedTensorType>(shape.getInput().getType());
    known = SmallVector<int64_t>(type.getShape().slice(
        shape.getStart(), shape.getEnd() - shape.getStart()));
  } else if (auto concat = dyn_cast<ConcatOp>(op)) {
    known.emplace();
    for (Value input : concat.getInputs()) {
      std::optional<SmallVector<int64_t>> part = knownInts(graph, input);
      auto type = cast<RankedTensorType>(input.getType());
      if (part)
        llvm::append_range(*known, *part);
      else
        known->append(type.getNumElements(), kDyn);
    }
  } else if (auto gather = dyn_cast<GatherOp>(op)) {
    std::optional<SmallVector<int64_t>> data =
        knownInts(graph, gather.getInput());
    std::optional<SmallVector<int64_t>> indices =
        knownInts(graph, gather.getIndices());
    if (!data || !indices || llvm::any_of(*indices, ShapedType::isDynamic))
      return;
    known.emplace();
    for (int64_t i : *indices) {
      int64_t index = i < 0 ? i + (int64_t)data->size() : i;
      if (index < 0 || index >= (int64_t)data->size())
        return;
      known->push_back((*data)[index]);
    }
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    std::optional<SmallVector<int64_t>> data =
        knownInts(graph, slice.getInput());
    if (!data || slice.getStarts().size() != 1)
      return;
    known.emplace();
    int64_t count = cast<RankedTensorType>(slice.getType()).getNumElements();
    for (int64_t k = 0; k < count; ++k)
      known->push_back(
          (*data)[slice.getStarts()[0] + k * slice.getSteps()[0]]);
  } else if (isa<ReshapeOp, CastOp>(op)) {
    Value input = op->getOperand(0);
    if (!isSmallI64Vector(input))
      return;
    known = knownInts(graph, input);
  }
  if (known && (int64_t)known->size() ==
                   cast<RankedTensorType>(result.getType()).getNumElements())
    graph.setPartialInts(result, *known);
}
