//===- CGraphDialect.cpp - cgraph dialect ---------------------------------===//

#include "cgc/Dialect/CGraph/IR/CGraphDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgc::cgraph;

#include "cgc/Dialect/CGraph/IR/CGraphOpsDialect.cpp.inc"
#include "cgc/Dialect/CGraph/IR/CGraphOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOpsAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "cgc/Dialect/CGraph/IR/CGraphOps.cpp.inc"

void CGraphDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOpsAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "cgc/Dialect/CGraph/IR/CGraphOps.cpp.inc"
      >();
}

LogicalResult cgc::cgraph::detail::verifyLaunch(Operation *op,
                                                ArrayRef<int64_t> grid,
                                                ArrayRef<int64_t> block,
                                                ArrayRef<int64_t> args) {
  auto positive3 = [](ArrayRef<int64_t> dims) {
    return dims.size() == 3 &&
           llvm::all_of(dims, [](int64_t d) { return d > 0; });
  };
  if (!positive3(grid))
    return op->emitOpError("grid must be three positive extents");
  if (!positive3(block))
    return op->emitOpError("block must be three positive extents");
  if (block[0] * block[1] * block[2] > 1024)
    return op->emitOpError("block has more than 1024 threads");
  if (llvm::any_of(args, [](int64_t offset) { return offset < 0; }))
    return op->emitOpError("arena offsets must be non-negative");
  return success();
}

/// The package builder makes these edges programmatic as they are: only
/// kernel -> kernel edges of a top-level graph into a kernel that waits.
static LogicalResult verifyProgrammatic(KernelNodeOp op) {
  std::optional<ArrayRef<bool>> flags = op.getProgrammatic();
  if (!flags)
    return success();
  if (flags->size() != op.getDeps().size())
    return op.emitOpError("programmatic needs one flag per dependency");
  if (!llvm::is_contained(*flags, true))
    return op.emitOpError("programmatic must mark an edge (omit it "
                          "otherwise)");
  if (op.getConditionHandle())
    return op.emitOpError("a condition kernel has no programmatic edges");
  if (op->getParentOfType<ConditionalNodeOp>())
    return op.emitOpError("a conditional body has no programmatic edges");
  for (auto [dep, flag] : llvm::zip(op.getDeps(), *flags))
    if (flag && !dep.getDefiningOp<KernelNodeOp>())
      return op.emitOpError("only an edge from a kernel node may be "
                            "programmatic");
  return success();
}

LogicalResult KernelNodeOp::verify() {
  if (failed(detail::verifyLaunch(*this, getGrid(), getBlock(), getArgs())))
    return failure();
  return verifyProgrammatic(*this);
}

LogicalResult MemcpyNodeOp::verify() {
  if (getDst() < 0 || getSrc() < 0 || getBytes() <= 0)
    return emitOpError("needs non-negative offsets and a positive size");
  if (getDst() < getSrc() + getBytes() && getSrc() < getDst() + getBytes())
    return emitOpError("source and destination overlap");
  return success();
}

namespace {
/// The element types cuBLASLt and cuDNN nodes take.
bool isCublasLtType(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }
} // namespace

LogicalResult CublasLtMatmulNodeOp::verify() {
  if (getM() < 1 || getN() < 1 || getK() < 1 || getBatch() < 1)
    return emitOpError("needs M, N, K and batch of at least 1");
  if (getA() < 0 || getB() < 0 || getD() < 0 ||
      (getC() && *getC() < 0) || (getBias() && *getBias() < 0))
    return emitOpError("needs non-negative arena offsets");
  if (getStrideA() < 0 || getStrideB() < 0 || getStrideD() < 0)
    return emitOpError("needs non-negative batch strides");
  Type a = getAType(), b = getBType(), d = getDType();
  if (!isCublasLtType(a) || !isCublasLtType(b) || !isCublasLtType(d))
    return emitOpError("takes f32, f16 or bf16 operands, not ")
           << a << ", " << b << " -> " << d;
  if (a != b || (d != a && !d.isF32()))
    return emitOpError("needs A and B of one type and D of theirs or f32, "
                       "not ")
           << a << ", " << b << " -> " << d;
  if (std::optional<Type> operand = getOperand()) {
    bool tf32 = isa<FloatTF32Type>(*operand);
    if (!tf32 && !operand->isF16() && !operand->isBF16())
      return emitOpError("operand must be tf32, f16 or bf16, not ")
             << *operand;
    if ((tf32 && !a.isF32()) || (!a.isF32() && a != *operand))
      return emitOpError("cannot round ")
             << a << " operands to " << *operand;
  } else if (!a.isF32()) {
    return emitOpError("multiplies ")
           << a << " operands on tensor cores: operand must say so";
  }
  if (getStrideD() == 0 && getBatch() > 1)
    return emitOpError("writes every batch index into one D matrix");
  return success();
}

/// What both NCCL nodes need: offsets, a count, ranks, a type NCCL takes;
/// `sendBytes` and `recvBytes` set from them.
template <typename NodeOp>
static LogicalResult verifyNcclNode(NodeOp op, StringRef verb,
                                    int64_t &sendBytes, int64_t &recvBytes) {
  if (op.getSend() < 0 || op.getRecv() < 0)
    return op.emitOpError("needs non-negative arena offsets");
  if (op.getCount() < 1)
    return op.emitOpError("needs a count of at least 1");
  if (op.getRanks() < 1)
    return op.emitOpError("needs at least 1 rank");
  Type t = op.getType();
  if (!t.isF32() && !t.isF16() && !t.isBF16() && !t.isF64())
    return op.emitOpError() << verb << " f32, f16, bf16 or f64, not " << t;
  sendBytes = op.getCount() * (t.getIntOrFloatBitWidth() / 8);
  recvBytes = sendBytes;
  return success();
}

/// Whether [a, a + aBytes) and [b, b + bBytes) share a byte.
static bool overlaps(int64_t a, int64_t aBytes, int64_t b, int64_t bBytes) {
  return a < b + bBytes && b < a + aBytes;
}

LogicalResult NcclAllReduceNodeOp::verify() {
  int64_t sendBytes, recvBytes;
  if (failed(verifyNcclNode(*this, "sums", sendBytes, recvBytes)))
    return failure();
  if (getSend() != getRecv() &&
      overlaps(getSend(), sendBytes, getRecv(), recvBytes))
    return emitOpError("reads and writes overlapping bytes that are not the "
                       "same buffer");
  return success();
}

LogicalResult NcclAllGatherNodeOp::verify() {
  int64_t sendBytes, recvBytes;
  if (failed(verifyNcclNode(*this, "gathers", sendBytes, recvBytes)))
    return failure();
  // NCCL gathers in place only from the rank's own slot of `recv`, which
  // differs by rank; the ranks share one program, so never in place.
  if (overlaps(getSend(), sendBytes, getRecv(), recvBytes * getRanks()))
    return emitOpError("reads and writes overlapping bytes");
  return success();
}

LogicalResult CudnnConvNodeOp::verify() {
  auto positive = [](ArrayRef<int64_t> v, size_t n) {
    return v.size() == n && llvm::all_of(v, [](int64_t d) { return d >= 1; });
  };
  if (!positive(getInput(), 4) || !positive(getFilter(), 4) ||
      !positive(getOutput(), 4))
    return emitOpError("needs positive 4-d input, filter and output shapes");
  if (getPads().size() != 2 || !positive(getStrides(), 2) ||
      !positive(getDilations(), 2) ||
      llvm::any_of(getPads(), [](int64_t p) { return p < 0; }))
    return emitOpError("needs two pads (non-negative), strides and "
                       "dilations (positive)");
  ArrayRef<int64_t> in = getInput(), f = getFilter(), out = getOutput();
  int64_t groups = getGroups();
  if (groups < 1 || in[1] % groups || f[0] % groups ||
      in[1] / groups != f[1] || out[1] != f[0] || out[0] != in[0])
    return emitOpError("has shapes that do not agree: input ")
           << in << ", filter " << f << ", output " << out << ", groups "
           << groups;
  for (int i = 0; i < 2; ++i) {
    int64_t extent = getDilations()[i] * (f[2 + i] - 1) + 1;
    int64_t expect =
        (in[2 + i] + 2 * getPads()[i] - extent) / getStrides()[i] + 1;
    if (out[2 + i] != expect)
      return emitOpError("output dim ")
             << (2 + i) << " is " << out[2 + i] << ", the convolution gives "
             << expect;
  }
  if (getX() < 0 || getW() < 0 || getY() < 0 || (getBias() && *getBias() < 0))
    return emitOpError("needs non-negative arena offsets");
  Type t = getType();
  if (!isCublasLtType(t))
    return emitOpError("takes f32, f16 or bf16 tensors, not ") << t;
  if (std::optional<Type> operand = getOperand())
    if (!isa<FloatTF32Type>(*operand) && !operand->isF16() &&
        !operand->isBF16())
      return emitOpError("operand must be tf32, f16 or bf16, not ")
             << *operand;
  return success();
}

LogicalResult ConditionalNodeOp::verify() {
  if (getKind() == ConditionKind::While && !getElseBody().empty())
    return emitOpError("a while node has no else body");
  if (getHandle() < 0)
    return emitOpError("handle must be non-negative");
  for (Region *region : getRegions())
    for (Block &block : *region)
      for (Operation &op : block)
        if (!isa<KernelNodeOp, MemcpyNodeOp, MemsetNodeOp, ConditionalNodeOp>(
                op))
          return op.emitOpError("is not a graph node; bodies hold nodes only");
  return success();
}

LogicalResult MemsetNodeOp::verify() {
  if (getOffset() < 0 || getBytes() <= 0)
    return emitOpError("needs a non-negative offset and a positive size");
  if (getValue() < 0 || getValue() > 255)
    return emitOpError("value must be one byte");
  return success();
}
