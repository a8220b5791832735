//===- TuningCache.h - measured kernel configs --------------------*- C++ -*-===//
//
// A tuning cache records, per kernel signature, the config that measured
// fastest on a GPU (written by utils/tune/cgc_tune.py from the candidates
// `cgc --emit=tuning-candidates` lists). `--cgc-select-kernel-config` takes
// a kernel's config from the cache when the cache has its signature, so the
// same cache gives the same package on any machine.
//
// The file is JSON: {"version": 1, "entries": [{"key": "...", "config":
// "#cgc.kernel_config<...>", ...}]}; other fields of an entry (what was
// measured) are kept for people and ignored here.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_DIALECT_CGC_ANALYSIS_TUNINGCACHE_H
#define CGC_DIALECT_CGC_ANALYSIS_TUNINGCACHE_H

#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/ADT/StringMap.h"

#include <string>

namespace cgc {

/// A kernel's signature for the cache: what its config may depend on (the
/// ops of its body with their types and attributes, which captured operands
/// are 16-byte-aligned plain arrays, its kind and precision, the target's
/// architecture), hashed: "sm_90:matmul:<16 hex digits>". Kernels that
/// compute the same thing on equally aligned data share it.
std::string kernelTuningKey(KernelOp kernel, TargetAttr target);

class TuningCache {
public:
  /// Reads `path`; on a malformed file, an unreadable one or a config that
  /// does not parse, emits an error on `module` naming the file and entry
  /// and fails.
  static mlir::FailureOr<TuningCache> load(llvm::StringRef path,
                                           mlir::ModuleOp module);

  /// The config recorded for `key`, or null.
  KernelConfigAttr lookup(llvm::StringRef key) const {
    auto it = entries.find(key);
    return it == entries.end() ? KernelConfigAttr() : it->second;
  }

  llvm::StringRef path() const { return file; }

private:
  std::string file;
  llvm::StringMap<KernelConfigAttr> entries;
};

} // namespace cgc

#endif // CGC_DIALECT_CGC_ANALYSIS_TUNINGCACHE_H
