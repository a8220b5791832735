//===- GraphDumpTest.cpp - cgrt_model_dump_graphs -------------------------===//
//
// The argument checks run everywhere; the dump itself needs the GPU (the
// driver prints the graphs it holds) and skips without one.
//
//===----------------------------------------------------------------------===//

#include "GpuTest.h"
#include "TestUtil.h"

#include <fstream>

using namespace cgrttest;

TEST(GraphDumpTest, RejectsMissingArguments) {
  size_t written = 7;
  EXPECT_TRUE(hasStatus(cgrt_model_dump_graphs(nullptr, "/tmp", &written),
                        CGRT_INVALID_ARGUMENT,
                        {"cgrt_model_dump_graphs", "model is NULL"}));
  EXPECT_EQ(written, 0u);
}

TEST_F(GpuTest, DumpsEveryGraphAsDot) {
  Model model = load();
  ASSERT_TRUE(model);
  TempDir dir;
  std::string out = dir.file("graphs"); // created by the call
  size_t written = 0;
  ASSERT_OK(cgrt_model_dump_graphs(model.get(), out.c_str(), &written));
  // The test package has two graphs, "main" and "copy".
  EXPECT_EQ(written, 2u);
  std::string main = readFile(out + "/graph0_main.dot");
  std::string copy = readFile(out + "/graph1_copy.dot");
  EXPECT_NE(main.find("digraph"), std::string::npos) << main;
  // Verbose: the kernel nodes name their functions.
  EXPECT_NE(main.find("test_affine_accumulate"), std::string::npos) << main;
  EXPECT_NE(copy.find("digraph"), std::string::npos) << copy;
  // A dump after a run shows the same graphs; an existing folder is fine.
  Io io(1);
  ASSERT_OK(run(model.get(), io));
  ASSERT_OK(cgrt_model_dump_graphs(model.get(), out.c_str(), nullptr));
  EXPECT_EQ(readFile(out + "/graph0_main.dot").empty(), false);
}

TEST_F(GpuTest, DumpIntoAFileIsAnError) {
  Model model = load();
  ASSERT_TRUE(model);
  TempDir dir;
  std::string file = dir.file("plain");
  std::ofstream(file) << "x";
  EXPECT_TRUE(hasStatus(cgrt_model_dump_graphs(model.get(), file.c_str(),
                                               nullptr),
                        CGRT_INVALID_ARGUMENT, {"is not a folder"}));
  std::string deep = dir.file("a/b/c");
  EXPECT_TRUE(hasStatus(cgrt_model_dump_graphs(model.get(), deep.c_str(),
                                               nullptr),
                        CGRT_NOT_FOUND, {"cannot create"}));
}
