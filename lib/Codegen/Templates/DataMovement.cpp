//===- DataMovement.cpp - copies with index arithmetic --------------------===//
//
// transpose, expand, tile, slice, depth/space rearrangements, pad, concat
// and split: one thread per output element (split: per input element).
//
//===----------------------------------------------------------------------===//

#include "OpTemplates.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace cgc {
namespace codegen {

namespace {

/// out[i] = input[inCoord(o0, o1, ...)] over the elements of `result`.
LogicalResult writeIndexedCopy(OpContext &ctx, Value input, Value result,
                               ArrayRef<std::string> inCoord,
                               const std::string &prologue = "") {
  std::string o = ctx.out(result);
  if (o.empty())
    return success();
  ArrayRef<int64_t> shape = shapeOf(result);
  std::string body = coords("i", shape, "o") + prologue + "  " + o +
                     "[i] = " + ctx.in(input) + "[" +
                     linearIndex(inCoord, shapeOf(input)) + "];\n";
  ctx.perElement(numElements(shape), body);
  return success();
}

} // namespace

LogicalResult writeBitCast(OpContext &ctx, BitCastOp bitcast) {
  std::string o = ctx.out(bitcast.getOutput());
  if (o.empty())
    return success();
  std::string to = storageType(elementType(bitcast.getOutput()));
  ctx.perElement(numElements(shapeOf(bitcast.getOutput())),
                 "  " + o + "[i] = cgc_bitcast<" + to + ">(" +
                     ctx.in(bitcast.getInput()) + "[i]);\n");
  return success();
}

LogicalResult writeTranspose(OpContext &ctx, TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPerm();
  SmallVector<std::string> inCoord(perm.size());
  for (auto [d, p] : llvm::enumerate(perm))
    inCoord[p] = "o" + str(d);
  return writeIndexedCopy(ctx, transpose.getInput(), transpose.getOutput(),
                          inCoord);
}

LogicalResult writeExpand(OpContext &ctx, ExpandOp expand) {
  ArrayRef<int64_t> xs = shapeOf(expand.getInput()),
                    ys = shapeOf(expand.getOutput());
  SmallVector<std::string> inCoord;
  int64_t offset = ys.size() - xs.size();
  for (size_t j = 0; j < xs.size(); ++j)
    inCoord.push_back(xs[j] == 1 ? "0" : "o" + str(j + offset));
  return writeIndexedCopy(ctx, expand.getInput(), expand.getOutput(), inCoord);
}

LogicalResult writeTile(OpContext &ctx, TileOp tile) {
  ArrayRef<int64_t> xs = shapeOf(tile.getInput());
  SmallVector<std::string> inCoord;
  for (size_t d = 0; d < xs.size(); ++d)
    inCoord.push_back(xs[d] == 1 ? "0" : "o" + str(d) + " % " + ll(xs[d]));
  return writeIndexedCopy(ctx, tile.getInput(), tile.getOutput(), inCoord);
}

LogicalResult writeSlice(OpContext &ctx, SliceOp slice) {
  ArrayRef<int64_t> starts = slice.getStarts(), steps = slice.getSteps();
  SmallVector<std::string> inCoord;
  for (size_t d = 0; d < starts.size(); ++d)
    inCoord.push_back(ll(starts[d]) + " + o" + str(d) + " * " + ll(steps[d]));
  return writeIndexedCopy(ctx, slice.getInput(), slice.getOutput(), inCoord);
}

LogicalResult writeDepthToSpace(OpContext &ctx, DepthToSpaceOp d2s) {
  ArrayRef<int64_t> ys = shapeOf(d2s.getOutput());
  if (ys.size() != 4)
    return ctx.unsupported("on a tensor of rank other than 4");
  int64_t b = d2s.getBlocksize();
  std::string channel = d2s.getMode() == "CRD"
                            ? "o1 * " + ll(b * b) + " + (o2 % " + ll(b) +
                                  ") * " + ll(b) + " + o3 % " + ll(b)
                            : "((o2 % " + ll(b) + ") * " + ll(b) + " + o3 % " +
                                  ll(b) + ") * " + ll(ys[1]) + " + o1";
  return writeIndexedCopy(ctx, d2s.getInput(), d2s.getOutput(),
                          {"o0", channel, "o2 / " + ll(b), "o3 / " + ll(b)});
}

LogicalResult writeSpaceToDepth(OpContext &ctx, SpaceToDepthOp s2d) {
  ArrayRef<int64_t> xs = shapeOf(s2d.getInput());
  if (xs.size() != 4)
    return ctx.unsupported("on a tensor of rank other than 4");
  int64_t b = s2d.getBlocksize(), C = xs[1];
  bool crd = s2d.getMode() == "CRD";
  std::string blk = crd ? "(o1 % " + ll(b * b) + ")" : "(o1 / " + ll(C) + ")";
  std::string channel = crd ? "o1 / " + ll(b * b) : "o1 % " + ll(C);
  return writeIndexedCopy(ctx, s2d.getInput(), s2d.getOutput(),
                          {"o0", channel,
                           "o2 * " + ll(b) + " + " + blk + " / " + ll(b),
                           "o3 * " + ll(b) + " + " + blk + " % " + ll(b)});
}

LogicalResult writePad(OpContext &ctx, PadOp pad) {
  Value x = pad.getInput(), y = pad.getOutput();
  std::string o = ctx.out(y);
  if (o.empty())
    return success();
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  ArrayRef<int64_t> pads = pad.getPads();
  int64_t rank = xs.size();
  StringRef mode = pad.getMode();
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return ctx.unsupported("with mode '" + mode + "'");
  std::string body = coords("i", ys, "o");
  SmallVector<std::string> inCoord;
  SmallVector<std::string> outside;
  for (int64_t d = 0; d < rank; ++d) {
    std::string c = "x" + str(d), D = ll(xs[d]);
    inCoord.push_back(c);
    body += "  long long " + c + " = o" + str(d) + " - " + ll(pads[d]) + ";\n";
    if (mode == "constant") {
      outside.push_back(c + " < 0 || " + c + " >= " + D);
      continue;
    }
    if (xs[d] == 0 && ys[d] != 0)
      return ctx.unsupported("in mode '" + mode + "' of an empty dim");
    if (mode == "edge")
      body += "  " + c + " = " + c + " < 0 ? 0 : " + c + " >= " + D + " ? " +
              D + " - 1 : " + c + ";\n";
    else if (mode == "wrap")
      body +=
          "  " + c + " = ((" + c + " % " + D + ") + " + D + ") % " + D + ";\n";
    else if (xs[d] == 1)
      body += "  " + c + " = 0;\n";
    else
      body += "  { const long long p = " + ll(2 * (xs[d] - 1)) + "; " + c +
              " %= p; if (" + c + " < 0) " + c + " += p; if (" + c +
              " >= " + D + ") " + c + " = p - " + c + "; }\n";
  }
  std::string read = ctx.in(x) + "[" + linearIndex(inCoord, xs) + "]";
  if (mode == "constant" && !outside.empty())
    read = "(" + llvm::join(outside, " || ") + ") ? " +
           literal(pad.getValue().convertToDouble(), elementType(y)) + " : " +
           read;
  body += "  " + o + "[i] = " + read + ";\n";
  ctx.perElement(numElements(ys), body);
  return success();
}

LogicalResult writeConcat(OpContext &ctx, ConcatOp concat) {
  Value y = concat.getOutput();
  if (!ctx.params.needed(y))
    return success();
  ArrayRef<int64_t> ys = shapeOf(y);
  int64_t axis = normalizeAxis(concat.getAxis(), ys.size());
  LineGeometry g = lineOf(ys, axis);
  std::string body = "  const long long n = i % " + ll(g.inner) +
                     ", ca = (i / " + ll(g.inner) + ") % " + ll(g.length) +
                     ", outer = i / " + ll(g.length * g.inner) + ";\n";
  int64_t start = 0;
  SmallVector<std::pair<int64_t, Value>> parts;
  for (Value v : concat.getInputs()) {
    int64_t len = shapeOf(v)[axis];
    if (len > 0)
      parts.push_back({start, v});
    start += len;
  }
  if (parts.empty()) // every part empty: so is the result
    return success();
  // The element is read from the part holding it, then stored once
  // through the group's store (which also writes a 16-bit copy where
  // --cgc-narrow-storage gave the group one).
  std::string value;
  for (auto [k, part] : llvm::enumerate(parts)) {
    auto [first, v] = part;
    int64_t len = shapeOf(v)[axis];
    std::string read = ctx.in(v) + "[(outer * " + ll(len) + " + (ca - " +
                       ll(first) + ")) * " + ll(g.inner) + " + n]";
    value += k + 1 == parts.size()
                 ? read
                 : "ca < " + ll(first + len) + " ? " + read + " : ";
  }
  body += "  const " + ctx.T(y) + " v = " + value + ";\n" +
          ctx.params.store(y, "v", "i");
  ctx.perElement(numElements(ys), body);
  return success();
}

LogicalResult writeSplit(OpContext &ctx, SplitOp split) {
  Value x = split.getInput();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t axis = normalizeAxis(split.getAxis(), xs.size());
  LineGeometry g = lineOf(xs, axis);
  std::string body = "  const long long n = i % " + ll(g.inner) +
                     ", ca = (i / " + ll(g.inner) + ") % " + ll(g.length) +
                     ", outer = i / " + ll(g.length * g.inner) + ";\n  const " +
                     ctx.T(x) + " v = " + ctx.in(x) + "[i];\n";
  int64_t start = 0;
  bool any = false;
  for (Value r : split.getOutputs()) {
    int64_t len = shapeOf(r)[axis];
    std::string o = ctx.out(r);
    if (len > 0 && !o.empty()) {
      body += "  if (ca >= " + ll(start) + " && ca < " + ll(start + len) +
              ") " + o + "[(outer * " + ll(len) + " + (ca - " + ll(start) +
              ")) * " + ll(g.inner) + " + n] = v;\n";
      any = true;
    }
    start += len;
  }
  if (any)
    ctx.perElement(numElements(xs), body);
  return success();
}

} // namespace codegen
} // namespace cgc
