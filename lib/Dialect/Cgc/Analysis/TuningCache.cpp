//===- TuningCache.cpp - measured kernel configs ---------------------------===//

#include "cgc/Dialect/Cgc/Analysis/TuningCache.h"
#include "cgc/Dialect/Cgc/Analysis/BufferPlan.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace cgc;

std::string cgc::kernelTuningKey(KernelOp kernel, TargetAttr target) {
  std::string signature;
  llvm::raw_string_ostream os(signature);
  os << stringifyKernelKind(kernel.getKind()) << ";";
  if (std::optional<Type> precision = kernel.getPrecision())
    os << *precision;
  os << ";";
  // The captured operands in order of use: their types and whether the
  // plan made them float4-loadable (tiles with vector loads or cp.async
  // need that).
  llvm::SmallPtrSet<Value, 8> seen;
  kernel.getBody().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!kernel->isAncestor(v.getParentRegion()->getParentOp()) &&
          seen.insert(v).second)
        os << v.getType() << (plannedFloat4Loadable(v) ? "+" : "-") << ",";
  });
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope().skipRegions(false);
  for (Operation &op : kernel.getBody().front()) {
    op.print(os, flags);
    os << "\n";
  }
  std::string key;
  llvm::raw_string_ostream keyOs(key);
  keyOs << target.getArch() << ":" << stringifyKernelKind(kernel.getKind())
        << ":" << llvm::format_hex_no_prefix(llvm::xxh3_64bits(signature), 16);
  return key;
}

FailureOr<TuningCache> TuningCache::load(StringRef path, ModuleOp module) {
  auto fail = [&](const Twine &why) {
    module.emitError() << "tuning cache '" << path << "': " << why;
    return failure();
  };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot be read (" + buffer.getError().message() + ")");
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("is not JSON (" + llvm::toString(json.takeError()) + ")");
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *entries = root ? root->getArray("entries") : nullptr;
  if (!root || root->getInteger("version") != 1 || !entries)
    return fail("is not a version 1 cache (an object with \"version\": 1 and "
                "\"entries\")");
  TuningCache cache;
  cache.file = path.str();
  for (auto [index, value] : llvm::enumerate(*entries)) {
    const llvm::json::Object *entry = value.getAsObject();
    std::optional<StringRef> key = entry ? entry->getString("key") : std::nullopt;
    std::optional<StringRef> text =
        entry ? entry->getString("config") : std::nullopt;
    if (!key || !text)
      return fail("entry " + Twine(index) +
                  " needs string fields \"key\" and \"config\"");
    // The parser's own message goes into ours (it would name no file).
    std::string why;
    KernelConfigAttr config;
    {
      ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
        if (why.empty())
          why = d.str();
        return success();
      });
      config = dyn_cast_if_present<KernelConfigAttr>(
          parseAttribute(*text, module.getContext()));
    }
    if (!config)
      return fail("entry " + Twine(index) + " (" + *key +
                  "): config is not a #cgc.kernel_config (" +
                  (why.empty() ? "another attribute" : why) + "): " + *text);
    cache.entries[*key] = config;
  }
  return cache;
}
