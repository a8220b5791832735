//===- TestUtil.h - helpers for cgrt-tests ----------------------*- C++ -*-===//

#ifndef CGRT_TEST_TESTUTIL_H
#define CGRT_TEST_TESTUTIL_H

#include "cgrt/cgrt.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>

namespace cgrttest {

/// The hand-written test package: $CGRT_TEST_PACKAGE_DIR, else
/// <this binary>/../test/Runtime/testpkg, else the build-time path.
std::string testPackageDir();
/// A folder whose libmodel.so lacks the descriptor.
std::string noDescriptorDir();
/// Whether nvcc built the package's kernels (else GPU tests skip).
bool testPackageHasKernels();
/// Whether this process can dlopen libcuda.so.1.
bool driverLibraryPresent();

struct StatusDeleter {
  void operator()(cgrt_status_t *status) const { cgrt_status_free(status); }
};
using Status = std::unique_ptr<cgrt_status_t, StatusDeleter>;

struct ModelDeleter {
  void operator()(cgrt_model *model) const { cgrt_model_release(model); }
};
using Model = std::unique_ptr<cgrt_model, ModelDeleter>;

/// Success when `status` has `code` and its message contains every one of
/// `parts`. Frees the status.
::testing::AssertionResult hasStatus(cgrt_status status, cgrt_status_code code,
                                     std::initializer_list<const char *> parts);

#define EXPECT_OK(expr)                                                        \
  do {                                                                         \
    cgrt_status status_ = (expr);                                              \
    EXPECT_EQ(status_, nullptr) << cgrt_status_get_message(status_);           \
    cgrt_status_free(status_);                                                 \
  } while (0)
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    cgrt_status status_ = (expr);                                              \
    std::string message_ = cgrt_status_get_message(status_);                   \
    cgrt_status_free(status_);                                                 \
    ASSERT_TRUE(message_.empty()) << message_;                                 \
  } while (0)

/// Sets (or with NULL unsets) an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value);
  ~ScopedEnv();

private:
  std::string name;
  bool hadValue = false;
  std::string oldValue;
};

/// A fresh temporary folder, removed with everything in it.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  /// Copies the regular files of `from` (not sub-folders) into this folder.
  void copyFilesFrom(const std::string &from);
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

/// Reads and writes whole files.
std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &bytes);

} // namespace cgrttest

#endif // CGRT_TEST_TESTUTIL_H
