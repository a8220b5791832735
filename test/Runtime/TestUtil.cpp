//===- TestUtil.cpp - helpers for cgrt-tests ------------------------------===//

#include "TestUtil.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace cgrttest {

namespace {
std::string besideBinary(const char *relative, const char *fallback) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path candidate = exe.parent_path() / relative;
    if (fs::exists(candidate / "libmodel.so", ec))
      return candidate.lexically_normal().string();
  }
  return fallback;
}
} // namespace

std::string testPackageDir() {
  if (const char *env = std::getenv("CGRT_TEST_PACKAGE_DIR"))
    if (*env)
      return env;
  return besideBinary("../test/Runtime/testpkg", CGRT_TEST_PACKAGE_BUILD_DIR);
}

std::string noDescriptorDir() {
  std::string dir = testPackageDir();
  std::string sibling = dir + "-nosym";
  if (fs::exists(sibling + "/libmodel.so"))
    return sibling;
  return besideBinary("../test/Runtime/testpkg-nosym",
                      CGRT_TEST_NOSYM_BUILD_DIR);
}

bool testPackageHasKernels() {
  std::string dir = testPackageDir();
  return fs::exists(dir + "/kernels.cubin") && fs::exists(dir + "/kernels.ptx");
}

bool driverLibraryPresent() {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return false;
  dlclose(handle);
  return true;
}

::testing::AssertionResult hasStatus(cgrt_status status, cgrt_status_code code,
                                     std::initializer_list<const char *> parts) {
  cgrt_status_code actual = cgrt_status_get_code(status);
  std::string message = cgrt_status_get_message(status);
  cgrt_status_free(status);
  if (actual != code)
    return ::testing::AssertionFailure()
           << "code " << actual << " instead of " << code << "; message: \""
           << message << "\"";
  for (const char *part : parts)
    if (message.find(part) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message \"" << message << "\" lacks \"" << part << "\"";
  return ::testing::AssertionSuccess() << message;
}

ScopedEnv::ScopedEnv(const char *name, const char *value) : name(name) {
  if (const char *old = std::getenv(name)) {
    hadValue = true;
    oldValue = old;
  }
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (hadValue)
    setenv(name.c_str(), oldValue.c_str(), 1);
  else
    unsetenv(name.c_str());
}

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/cgrt-test-XXXXXX";
  if (!mkdtemp(&pattern[0]))
    ADD_FAILURE() << "mkdtemp failed for " << pattern;
  dir = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

void TempDir::copyFilesFrom(const std::string &from) {
  for (const fs::directory_entry &entry : fs::directory_iterator(from))
    if (entry.is_regular_file())
      fs::copy_file(entry.path(), fs::path(dir) / entry.path().filename(),
                    fs::copy_options::overwrite_existing);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

} // namespace cgrttest
