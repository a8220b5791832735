//===- Package.h - opening and checking a package folder --------*- C++ -*-===//
//
// Everything cgrt_model_load does before it touches the driver: open
// DIR/libmodel.so, get its descriptor, check the ABI version and the
// descriptor's own consistency, and read the weights (size and FNV-1a 64
// checksum checked) and kernel images. So a broken package is reported the
// same way on a machine without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_RUNTIME_PACKAGE_H
#define CGRT_RUNTIME_PACKAGE_H

#include "cgrt/package.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cgrt {

/// The library file every package folder holds.
constexpr const char *kPackageLibrary = "libmodel.so";

/// FNV-1a 64 of `size` bytes, continuing from `hash`.
constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
uint64_t fnv1a64(const void *data, size_t size,
                 uint64_t hash = kFnvOffsetBasis);

/// `dir`/`file`, or `file` if it is absolute.
std::string joinPath(const std::string &dir, const std::string &file);

/// Opens `dir`/libmodel.so (RTLD_NOW | RTLD_LOCAL) and returns its
/// descriptor, after checking the ABI version. The caller dlcloses *handle
/// (also set on failure when the library was opened).
cgrt_status openPackage(const std::string &dir, void **handle,
                        const cgrt_package **package);

/// Checks the descriptor for internal consistency: I/O slots inside the
/// arena with bytes matching dtype x shape, weights inside the arena, known
/// step kinds and graph indices, non-null names and builders.
cgrt_status validatePackage(const cgrt_package &package,
                            const std::string &label);

struct PackageFiles {
  std::vector<char> weights;
  std::vector<char> cubin; ///< NUL-terminated; empty if none
  std::vector<char> ptx;   ///< NUL-terminated; empty if none
  std::string cubinPath, ptxPath;
  std::string cubinError; ///< why the cubin could not be read, if it could not
};

/// Reads rank `rank`'s weights file (weights.bin, or weights.rank<r>.bin
/// of a package split over several GPUs), checking size and checksum;
/// nothing when the package has no weights file.
cgrt_status readWeights(const std::string &dir, const cgrt_package &package,
                        const std::string &label, int32_t rank,
                        std::vector<char> *weights);

/// Reads rank `rank`'s weights (checking size and checksum) and the kernel
/// images.
cgrt_status readPackageFiles(const std::string &dir,
                             const cgrt_package &package,
                             const std::string &label, int32_t rank,
                             PackageFiles *files);

} // namespace cgrt

#endif // CGRT_RUNTIME_PACKAGE_H
