//===- BucketTest.cpp - shape buckets in the runtime ----------------------===//
//
// The hand-written test package in its bucketed modes (TestPackage.cpp): the
// descriptor checks run everywhere; choosing a bucket, padding into one and
// rejecting sizes outside them run on a GPU.
//
//===----------------------------------------------------------------------===//

#include "GpuTest.h"
#include "TestPackage.h"
#include "TestUtil.h"
#include "Testing.h"

#include <vector>

using namespace cgrttest;
using namespace testpkg;

namespace {

cgrt_status loadBucketMode(const char *mode, cgrt_model **model) {
  ScopedEnv env("CGRT_TEST_PACKAGE_MODE", mode);
  return cgrt_model_load(testPackageDir().c_str(), nullptr, model);
}

/// Loads in `mode` and returns the load's status (the model released).
cgrt_status loadStatusInMode(const char *mode) {
  cgrt_model *model = nullptr;
  cgrt_status status = loadBucketMode(mode, &model);
  cgrt_model_release(model);
  return status;
}

/// One inference of `rows` rows (1 or 2) on host or device buffers, checked
/// row by row against the CPU reference.
struct RowsIo {
  Io io;
  int64_t rows;
  explicit RowsIo(int64_t rows) : io(rows), rows(rows) {
    size_t bytes = static_cast<size_t>(rows * kCols) * sizeof(float);
    io.input.dims[0] = rows;
    io.input.bytes = bytes;
    for (cgrt_tensor &out : io.outputs) {
      out.dims[0] = rows;
      out.bytes = bytes;
    }
  }
  ::testing::AssertionResult matches() const {
    for (int64_t i = 0; i < rows * kCols; ++i)
      if (io.y2[i] != io.refY2[i] || io.y[i] != io.refY[i])
        return ::testing::AssertionFailure()
               << "element " << i << ": y2 " << io.y2[i] << " (expected "
               << io.refY2[i] << ")";
    for (int64_t i = rows * kCols; i < kElements; ++i)
      if (io.y2[i] != -7.0f)
        return ::testing::AssertionFailure()
               << "element " << i << " past the caller's rows was written";
    return ::testing::AssertionSuccess();
  }
  cgrt_status run(cgrt_model *model) {
    return cgrt_model_run(model, &io.input, 1, io.outputs, 3);
  }
};

} // namespace

TEST(BucketTest, BrokenBucketTablesAreCorrupt) {
  EXPECT_TRUE(hasStatus(loadStatusInMode("bucket_unsorted"), CGRT_CORRUPT,
                        {"bucket rows=2", "not ascending"}));
  EXPECT_TRUE(hasStatus(loadStatusInMode("bucket_step"), CGRT_CORRUPT,
                        {"bucket rows=1", "step 1 runs graph 9"}));
  EXPECT_TRUE(hasStatus(loadStatusInMode("bucket_axis"), CGRT_CORRUPT,
                        {"output 2 'y2_copy' has bucket axis 2 but rank 2"}));
}

TEST_F(GpuTest, RunPicksTheBucketOfTheInputShape) {
  cgrt_model *raw = nullptr;
  ASSERT_OK(loadBucketMode("buckets", &raw));
  Model model(raw);
  ASSERT_EQ(cgrt_model_num_buckets(model.get()), 2u);
  EXPECT_STREQ(cgrt_model_bucket_dim(model.get()), "rows");
  EXPECT_EQ(cgrt_model_bucket_value(model.get(), 0), 1);
  EXPECT_EQ(cgrt_model_bucket_value(model.get(), 1), kRows);
  EXPECT_EQ(cgrt_model_bucket_value(model.get(), 2), -1);
  for (int64_t rows : {int64_t{1}, kRows, int64_t{1}}) {
    RowsIo io(rows);
    ASSERT_OK(io.run(model.get()));
    EXPECT_TRUE(io.matches()) << rows << " rows";
    EXPECT_EQ(io.io.outputs[1].dims[0], rows);
  }
}

TEST_F(GpuTest, SizesOutsideTheBucketsAreRejected) {
  cgrt_model *raw = nullptr;
  ASSERT_OK(loadBucketMode("buckets", &raw));
  Model model(raw);
  std::vector<float> x(3 * kCols), y(3 * kCols);
  cgrt_tensor input = tensorOf(x.data(), x.size() * sizeof(float));
  input.dims[0] = 3;
  cgrt_tensor outputs[3];
  for (cgrt_tensor &out : outputs) {
    out = tensorOf(y.data(), y.size() * sizeof(float));
    out.dims[0] = 3;
  }
  EXPECT_TRUE(hasStatus(
      cgrt_model_run(model.get(), &input, 1, outputs, 3),
      CGRT_INVALID_ARGUMENT,
      {"[3, 128]", "match no shape bucket", "rows = 1, 2", "--pad-to-bucket"}));
}

TEST_F(GpuTest, PaddedRunsMatchAndLeaveTheCallersBuffersAlone) {
  cgrt_model *raw = nullptr;
  ASSERT_OK(loadBucketMode("buckets_padded", &raw));
  Model model(raw);
  ASSERT_EQ(cgrt_model_num_buckets(model.get()), 1u);
  // One row runs in the 2-row bucket: host buffers, then device buffers.
  RowsIo io(1);
  ASSERT_OK(io.run(model.get()));
  EXPECT_TRUE(io.matches());
  EXPECT_EQ(io.io.outputs[0].dims[0], 1);

  const cgrt::Driver &d = cgrt::testing::driverOf(model.get());
  cgrt::ScopedContext scope(d, cgrt::testing::contextOf(model.get()));
  ASSERT_OK(scope.take());
  size_t rowBytes = kSlotBytes / 2;
  CUdeviceptr dx = 0, dy = 0;
  ASSERT_EQ(d.cuMemAlloc(&dx, rowBytes), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemAlloc(&dy, rowBytes), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyHtoD(dx, io.io.x.data(), rowBytes), CUDA_SUCCESS);
  cgrt_tensor input = io.io.input;
  input.data = reinterpret_cast<void *>(dx);
  input.memory = CGRT_MEMORY_DEVICE;
  cgrt_tensor outputs[3] = {io.io.outputs[0], io.io.outputs[1],
                            io.io.outputs[2]};
  outputs[1].data = reinterpret_cast<void *>(dy);
  outputs[1].memory = CGRT_MEMORY_DEVICE;
  std::vector<float> y2(kCols, -1.0f);
  ASSERT_OK(cgrt_model_run(model.get(), &input, 1, outputs, 3));
  ASSERT_EQ(d.cuMemcpyDtoH(y2.data(), dy, rowBytes), CUDA_SUCCESS);
  for (int64_t i = 0; i < kCols; ++i)
    EXPECT_EQ(y2[i], io.io.refY2[i]) << "element " << i;
  d.cuMemFree(dx);
  d.cuMemFree(dy);

  cgrt_benchmark_result result;
  ASSERT_OK(cgrt_model_benchmark(model.get(), 2, 5, &result));
  EXPECT_EQ(result.graph_launches_per_run, 2);
}
