//===- ModelLoadTest.cpp - cgrt_model_load's error paths ------------------===//
//
// Everything here runs without a GPU: the runtime checks the package (library,
// descriptor, ABI version, weights, kernel images) before it touches the
// driver, and reports a missing driver as CGRT_NO_DEVICE.
//
//===----------------------------------------------------------------------===//

#include "TestPackage.h"
#include "TestUtil.h"
#include "cgrt/package.h"

#include <cstdlib>
#include <filesystem>

using namespace cgrttest;

namespace {

/// Loads `dir`; on success releases the model and returns NULL, so callers
/// only see failures. A package that passes every file check reaches the
/// driver: CGRT_NO_DEVICE here, success on a GPU machine.
cgrt_status load(const std::string &dir) {
  cgrt_model *model = nullptr;
  cgrt_status status = cgrt_model_load(dir.c_str(), nullptr, &model);
  EXPECT_EQ(model == nullptr, status != nullptr);
  cgrt_model_release(model);
  return status;
}

cgrt_status loadWithMode(const char *mode) {
  ScopedEnv env("CGRT_TEST_PACKAGE_MODE", mode);
  return load(testPackageDir());
}

/// A temporary copy of the test package.
struct PackageCopy : TempDir {
  PackageCopy() { copyFilesFrom(testPackageDir()); }
};

} // namespace

TEST(ModelLoadTest, OptionsDefaults) {
  cgrt_model_options options;
  options.device_ordinal = 5;
  cgrt_model_options_init(&options);
  EXPECT_EQ(options.device_ordinal, 0);
  cgrt_model_options_init(nullptr); // no crash
}

TEST(ModelLoadTest, NullArguments) {
  cgrt_model *model = nullptr;
  EXPECT_TRUE(hasStatus(cgrt_model_load(testPackageDir().c_str(), nullptr,
                                        nullptr),
                        CGRT_INVALID_ARGUMENT, {"out_model"}));
  EXPECT_TRUE(hasStatus(cgrt_model_load(nullptr, nullptr, &model),
                        CGRT_INVALID_ARGUMENT, {"package_dir"}));
  EXPECT_TRUE(hasStatus(cgrt_model_load("", nullptr, &model),
                        CGRT_INVALID_ARGUMENT, {"package_dir"}));
  cgrt_model_options options;
  cgrt_model_options_init(&options);
  options.device_ordinal = -1;
  EXPECT_TRUE(hasStatus(
      cgrt_model_load(testPackageDir().c_str(), &options, &model),
      CGRT_INVALID_ARGUMENT, {"device_ordinal is -1"}));
  EXPECT_EQ(model, nullptr);
}

TEST(ModelLoadTest, NullModelIsHarmless) {
  cgrt_model_release(nullptr);
  EXPECT_EQ(cgrt_model_num_inputs(nullptr), 0u);
  EXPECT_EQ(cgrt_model_num_outputs(nullptr), 0u);
  const char *name = nullptr;
  cgrt_tensor info;
  EXPECT_TRUE(hasStatus(cgrt_model_input_info(nullptr, 0, &name, &info),
                        CGRT_INVALID_ARGUMENT, {"model is NULL"}));
  EXPECT_TRUE(hasStatus(cgrt_model_run(nullptr, nullptr, 0, nullptr, 0),
                        CGRT_INVALID_ARGUMENT, {"model is NULL"}));
  cgrt_benchmark_result result;
  EXPECT_TRUE(hasStatus(cgrt_model_benchmark(nullptr, 1, 1, &result),
                        CGRT_INVALID_ARGUMENT, {"model is NULL"}));
}

TEST(ModelLoadTest, MissingFolderIsNotFound) {
  TempDir dir;
  std::string missing = dir.file("no-such-package");
  EXPECT_TRUE(hasStatus(load(missing), CGRT_NOT_FOUND,
                        {"package folder", "no-such-package", "does not exist"}));
}

TEST(ModelLoadTest, FileInsteadOfFolderIsNotFound) {
  TempDir dir;
  writeFile(dir.file("plain"), "x");
  EXPECT_TRUE(hasStatus(load(dir.file("plain")), CGRT_NOT_FOUND,
                        {"is not a folder"}));
}

TEST(ModelLoadTest, FolderWithoutLibraryIsNotFound) {
  TempDir dir;
  EXPECT_TRUE(hasStatus(load(dir.path()), CGRT_NOT_FOUND,
                        {"has no libmodel.so", "cgc --emit=lib"}));
}

TEST(ModelLoadTest, GarbageLibraryIsCorrupt) {
  TempDir dir;
  writeFile(dir.file("libmodel.so"), "this is not an ELF file");
  EXPECT_TRUE(hasStatus(load(dir.path()), CGRT_CORRUPT,
                        {"cannot load the package library"}));
}

TEST(ModelLoadTest, LibraryWithoutDescriptorIsNotFound) {
  EXPECT_TRUE(hasStatus(load(noDescriptorDir()), CGRT_NOT_FOUND,
                        {"does not export cgrt_package_descriptor"}));
}

TEST(ModelLoadTest, NullDescriptorIsCorrupt) {
  EXPECT_TRUE(
      hasStatus(loadWithMode("null"), CGRT_CORRUPT, {"returned NULL"}));
}

#define CGRT_STRINGIFY_(x) #x
#define CGRT_STRINGIFY(x) CGRT_STRINGIFY_(x)
constexpr const char *kSupportsThisAbi =
    "supports package ABI version " CGRT_STRINGIFY(CGRT_PACKAGE_ABI_VERSION);

TEST(ModelLoadTest, WrongAbiVersionIsIncompatible) {
  EXPECT_TRUE(hasStatus(loadWithMode("abi"), CGRT_INCOMPATIBLE,
                        {"package ABI version 999", "cgc 9.9.9",
                         kSupportsThisAbi}));
}

// A cgc --tensor-parallel package's rank loads with a communicator; one
// loaded without says how to run its ranks (test/Runtime/ranks-stub.test
// runs them).
TEST(ModelLoadTest, SplitPackagesNeedACommunicator) {
  EXPECT_TRUE(hasStatus(loadWithMode("split"), CGRT_INVALID_ARGUMENT,
                        {"split over 2 GPUs", "cgrt_model_options::comm",
                         "cgc-run --ranks 2"}));
}

TEST(ModelLoadTest, InconsistentDescriptorsAreRejected) {
  EXPECT_TRUE(hasStatus(loadWithMode("slot"), CGRT_CORRUPT,
                        {"output 1 'y2'", "outside the 5120-byte arena"}));
  EXPECT_TRUE(hasStatus(loadWithMode("bytes"), CGRT_CORRUPT,
                        {"input 0 'input:x/0'", "slot is 100 bytes"}));
  EXPECT_TRUE(hasStatus(loadWithMode("step_kind"), CGRT_INCOMPATIBLE,
                        {"step 1 has kind 7"}));
  EXPECT_TRUE(hasStatus(loadWithMode("step_index"), CGRT_CORRUPT,
                        {"step 1 runs graph 5", "the package has 2"}));
  EXPECT_TRUE(hasStatus(loadWithMode("weights_size"), CGRT_CORRUPT,
                        {"weights.bin", "is 1024 bytes",
                         "expects 1020 bytes"}));
  EXPECT_TRUE(hasStatus(loadWithMode("state_outside"), CGRT_CORRUPT,
                        {"state tensor 0 'w' [2048, +1024)",
                         "outside the weights region"}));
  EXPECT_TRUE(hasStatus(loadWithMode("no_ranks"), CGRT_CORRUPT,
                        {"0 ranks without a weights file for each"}));
  EXPECT_TRUE(hasStatus(loadWithMode("state_update"), CGRT_CORRUPT,
                        {"the update of state tensor 0 'w'",
                         "outside the 5120-byte arena"}));
}

TEST(ModelLoadTest, CorruptWeightsAreCorrupt) {
  PackageCopy copy;
  std::string weights = readFile(copy.file("weights.bin"));
  ASSERT_EQ(weights.size(), testpkg::kSlotBytes);
  weights[100] ^= 0x40;
  writeFile(copy.file("weights.bin"), weights);
  EXPECT_TRUE(hasStatus(load(copy.path()), CGRT_CORRUPT,
                        {"weights.bin", "checksum", "corrupt"}));
}

TEST(ModelLoadTest, TruncatedWeightsAreCorrupt) {
  PackageCopy copy;
  std::string weights = readFile(copy.file("weights.bin"));
  writeFile(copy.file("weights.bin"), weights.substr(0, 1000));
  EXPECT_TRUE(hasStatus(load(copy.path()), CGRT_CORRUPT,
                        {"weights.bin", "is 1000 bytes", "expects 1024"}));
}

TEST(ModelLoadTest, MissingWeightsAreNotFound) {
  PackageCopy copy;
  std::filesystem::remove(copy.file("weights.bin"));
  EXPECT_TRUE(hasStatus(load(copy.path()), CGRT_NOT_FOUND,
                        {"cannot open the weights file", "weights.bin"}));
}

TEST(ModelLoadTest, MissingKernelImagesAreNotFound) {
  PackageCopy copy;
  std::filesystem::remove(copy.file("kernels.cubin"));
  std::filesystem::remove(copy.file("kernels.ptx"));
  EXPECT_TRUE(hasStatus(load(copy.path()), CGRT_NOT_FOUND,
                        {"kernels.cubin", "kernels.ptx"}));
}

TEST(ModelLoadTest, ValidPackageWithoutDriverIsNoDevice) {
  if (driverLibraryPresent())
    GTEST_SKIP() << "a GPU driver: libcuda.so.1 is present; see the GPU tests";
  if (const char *driver = std::getenv("CGRT_DRIVER_LIBRARY"))
    GTEST_SKIP() << "a driver is given: CGRT_DRIVER_LIBRARY=" << driver
                 << " (ModelLoadDeathTest covers a missing one)";
  if (!testPackageHasKernels())
    GTEST_SKIP() << "no nvcc: the test package has no kernels";
  EXPECT_TRUE(hasStatus(load(testPackageDir()), CGRT_NO_DEVICE,
                        {"no CUDA driver", "libcuda.so.1"}));
  // A cached result: the second load says the same.
  EXPECT_TRUE(hasStatus(load(testPackageDir()), CGRT_NO_DEVICE,
                        {"no CUDA driver"}));
}

// Runs in a fresh process (threadsafe death-test style), so the driver is
// loaded anew from the overridden path; holds on a GPU machine too.
TEST(ModelLoadDeathTest, MissingDriverLibraryIsNoDevice) {
  if (!testPackageHasKernels())
    GTEST_SKIP() << "no nvcc: the test package has no kernels";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string dir = testPackageDir();
  EXPECT_EXIT(
      {
        setenv("CGRT_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
        cgrt_model *model = nullptr;
        cgrt_status status = cgrt_model_load(dir.c_str(), nullptr, &model);
        cgrt_status_code code = cgrt_status_get_code(status);
        std::fprintf(stderr, "[%d] %s\n", code,
                     cgrt_status_get_message(status));
        bool ok = code == CGRT_NO_DEVICE && !model;
        cgrt_status_free(status); // nothing left for LeakSanitizer at exit
        cgrt_model_release(model);
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0),
      "\\[5\\] cgrt_model_load: cannot run model 'cgrt_test_package'.*no CUDA "
      "driver: cannot load /nonexistent/libcuda.so.1");
}
