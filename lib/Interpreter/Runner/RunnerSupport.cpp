//===- RunnerSupport.cpp - programs, .npy files, inputs and comparison ----===//

#include "cgc/Interpreter/RunnerSupport.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcDialect.h"
#include "cgc/Import/ProtoIO.h"
#include "cgc/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> cgc::interp::loadProgram(StringRef path,
                                               MLIRContext *context,
                                               const ImportOptions &options) {
  if (path.ends_with(".mlir")) {
    context->loadDialect<CgcDialect, func::FuncDialect>();
    return parseSourceFile<ModuleOp>(path, context);
  }
  return importONNXModel(path, context, options);
}

LogicalResult cgc::interp::runPlanPipeline(ModuleOp module) {
  PassManager pm(module.getContext());
  buildCgcPipeline(pm, PipelineStop::Plan);
  return pm.run(module);
}

func::FuncOp cgc::interp::findMain(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    return main;
  auto funcs = module.getOps<func::FuncOp>();
  if (!funcs.empty() && std::next(funcs.begin()) == funcs.end())
    return *funcs.begin();
  return nullptr;
}

std::string cgc::interp::argName(func::FuncOp func, unsigned i) {
  if (auto name = getInputName(func, i))
    return name.str();
  return "input_" + std::to_string(i);
}

std::string cgc::interp::resultName(func::FuncOp func, unsigned i) {
  if (auto name = getOutputName(func, i))
    return name.str();
  return "output_" + std::to_string(i);
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

namespace {
struct NpyType {
  const char *descr;
  Scalar scalar;
};
constexpr NpyType kNpyTypes[] = {
    {"<f2", Scalar::F16}, {"<f4", Scalar::F32}, {"<f8", Scalar::F64},
    {"|b1", Scalar::I1},  {"|i1", Scalar::I8},  {"<i2", Scalar::I16},
    {"<i4", Scalar::I32}, {"<i8", Scalar::I64}, {"|u1", Scalar::U8},
    {"<u2", Scalar::U16}, {"<u4", Scalar::U32}, {"<u8", Scalar::U64},
};

Type typeOfScalar(MLIRContext *ctx, Scalar s) {
  Builder b(ctx);
  switch (s) {
  case Scalar::F16:
    return b.getF16Type();
  case Scalar::BF16:
    return b.getBF16Type();
  case Scalar::F32:
    return b.getF32Type();
  case Scalar::F64:
    return b.getF64Type();
  case Scalar::I1:
    return b.getI1Type();
  case Scalar::I8:
    return b.getIntegerType(8);
  case Scalar::I16:
    return b.getIntegerType(16);
  case Scalar::I32:
    return b.getIntegerType(32);
  case Scalar::I64:
    return b.getIntegerType(64);
  case Scalar::U8:
    return b.getIntegerType(8, false);
  case Scalar::U16:
    return b.getIntegerType(16, false);
  case Scalar::U32:
    return b.getIntegerType(32, false);
  case Scalar::U64:
    return b.getIntegerType(64, false);
  }
  return nullptr;
}

/// The value of `'key': value` in a .npy header dict (value up to the next
/// top-level comma or the closing brace).
std::optional<StringRef> headerField(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  if (rest.starts_with("(")) {
    size_t close = rest.find(')');
    return close == StringRef::npos ? std::nullopt
                                    : std::optional(rest.take_front(close + 1));
  }
  size_t end = rest.find_first_of(",}");
  return rest.take_front(end).trim();
}
} // namespace

bool cgc::interp::readNpy(const std::string &path, MLIRContext *context,
                          HostTensor &tensor, std::string &error) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file) {
    error = "cannot open '" + path + "'";
    return false;
  }
  StringRef data = (*file)->getBuffer();
  if (!data.starts_with("\x93NUMPY") || data.size() < 10) {
    error = "'" + path + "' is not a .npy file";
    return false;
  }
  uint8_t major = data[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = (uint8_t)data[8] | ((uint8_t)data[9] << 8);
    headerStart = 10;
  } else {
    if (data.size() < 12) {
      error = "truncated .npy header";
      return false;
    }
    headerLength = (uint8_t)data[8] | ((uint8_t)data[9] << 8) |
                   ((uint8_t)data[10] << 16) |
                   ((size_t)(uint8_t)data[11] << 24);
    headerStart = 12;
  }
  if (headerStart + headerLength > data.size()) {
    error = "truncated .npy header";
    return false;
  }
  StringRef header = data.substr(headerStart, headerLength);
  std::optional<StringRef> descr = headerField(header, "descr");
  std::optional<StringRef> fortran = headerField(header, "fortran_order");
  std::optional<StringRef> shapeText = headerField(header, "shape");
  if (!descr || !shapeText) {
    error = "malformed .npy header in '" + path + "'";
    return false;
  }
  if (fortran && *fortran != "False") {
    error = "Fortran-order .npy arrays are not supported";
    return false;
  }
  StringRef d = descr->trim("'\"");
  std::optional<Scalar> scalar;
  for (const NpyType &t : kNpyTypes)
    if (d == t.descr ||
        (d.size() == 3 && StringRef(t.descr).drop_front() == d.drop_front() &&
         (d[0] == '=' || d[0] == '|' || d[0] == '<')))
      scalar = t.scalar;
  if (!scalar) {
    error = "unsupported .npy dtype '" + d.str() + "'";
    return false;
  }
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  shapeText->trim("()").split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    int64_t dim;
    if (part.trim().getAsInteger(10, dim) || dim < 0) {
      error = "malformed .npy shape " + shapeText->str();
      return false;
    }
    shape.push_back(dim);
  }
  tensor = HostTensor(typeOfScalar(context, *scalar), shape);
  StringRef payload = data.drop_front(headerStart + headerLength);
  if (payload.size() < tensor.bytes.size()) {
    error = "'" + path + "' holds too little data";
    return false;
  }
  if (!tensor.bytes.empty()) // an empty tensor has no buffer to copy into
    std::memcpy(tensor.bytes.data(), payload.data(), tensor.bytes.size());
  return true;
}

bool cgc::interp::writeNpy(const std::string &path, const HostTensor &tensor,
                           std::string &error) {
  const char *descr = nullptr;
  for (const NpyType &t : kNpyTypes)
    if (t.scalar == tensor.scalar)
      descr = t.descr;
  if (!descr) {
    error = "bfloat16 has no .npy equivalent";
    return false;
  }
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + (tensor.rank() == 1 ? ",)" : ", ");
  if (tensor.rank() != 1) {
    if (tensor.rank() > 1)
      shape.resize(shape.size() - 2);
    shape += ")";
  }
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes.push_back('\0');
  bytes.push_back((char)(header.size() & 0xff));
  bytes.push_back((char)(header.size() >> 8));
  bytes += header;
  bytes.append(tensor.bytes.begin(), tensor.bytes.end());
  return writeFileBytes(path, bytes, error);
}

bool cgc::interp::readTensorFile(const std::string &path, MLIRContext *context,
                                 HostTensor &tensor, std::string &error) {
  if (StringRef(path).ends_with(".npy"))
    return readNpy(path, context, tensor, error);
  std::string name;
  return readTensorProto(path, context, tensor, name, error);
}

std::string cgc::interp::sanitizeFileName(StringRef name) {
  std::string s;
  for (char c : name)
    s.push_back(llvm::isAlnum(c) || c == '.' || c == '_' || c == '-' ? c : '_');
  return s;
}

//===----------------------------------------------------------------------===//
// Inputs and comparison
//===----------------------------------------------------------------------===//

void cgc::interp::fillRandom(HostTensor &t, uint64_t seed) {
  // The generator of cgc-run, so that both tools see the same inputs.
  uint64_t state = seed;
  auto splitmix64 = [&]() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    uint64_t bits = splitmix64();
    // 24 random bits -> [-1, 1), exactly representable in float.
    float uniform =
        (float)((int32_t)(bits >> 40) - (1 << 23)) / (float)(1 << 23);
    uint64_t small = bits >> 61; // [0, 8)
    if (isFloat(t.scalar))
      t.setF(i, uniform);
    else if (t.scalar == Scalar::I1)
      t.setU(i, small & 1);
    else
      t.setU(i, small);
  }
}

Comparison cgc::interp::compareTensors(const HostTensor &got,
                                       const HostTensor &expected, double rtol,
                                       double atol) {
  Comparison c;
  if (got.dtype != expected.dtype || got.shape != expected.shape) {
    c.ok = false;
    c.message =
        "got " + got.typeString() + ", expected " + expected.typeString();
    return c;
  }
  std::string first;
  for (int64_t i = 0, n = got.numElements(); i < n; ++i) {
    bool equal;
    double g = got.getF(i), e = expected.getF(i);
    if (isFloat(got.scalar)) {
      if (std::isnan(g) || std::isnan(e))
        equal = std::isnan(g) && std::isnan(e);
      else if (std::isinf(g) || std::isinf(e))
        equal = g == e;
      else {
        double err = std::fabs(g - e);
        c.maxAbsError = std::max(c.maxAbsError, err);
        equal = err <= atol + rtol * std::fabs(e);
      }
    } else {
      equal = got.getU(i) == expected.getU(i);
    }
    if (equal)
      continue;
    if (c.mismatches++ == 0) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "element " << i << " is ";
      HostTensor one = got;
      one.shape.clear();
      one.bytes.assign(got.bytes.begin() + i * got.elementBytes(),
                       got.bytes.begin() + (i + 1) * got.elementBytes());
      printTensorValues(os, one, 8);
      os << ", expected ";
      one.bytes.assign(expected.bytes.begin() + i * got.elementBytes(),
                       expected.bytes.begin() + (i + 1) * got.elementBytes());
      printTensorValues(os, one, 8);
      first = s;
    }
  }
  if (c.mismatches) {
    c.ok = false;
    c.message = std::to_string(c.mismatches) + " of " +
                std::to_string(got.numElements()) + " elements differ (" +
                first + ")";
  }
  return c;
}

std::string cgc::interp::formatDiagnostic(Diagnostic &diag) {
  std::string s;
  llvm::raw_string_ostream os(s);
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  }
  Location loc = diag.getLocation();
  // Ops in regions built by passes may have fused locations; take the first
  // name found.
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    os << "op '" << name.getName().getValue() << "': ";
  os << diag.str();
  return s;
}
