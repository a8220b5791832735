//===- ExplainRenderTest.cpp - cgc's --explain renderers, without IR ------===//
//
// The renderers print the explain model and read no IR, so a model written
// by hand renders as the compiler's would.
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc/ExplainRender.h"

#include <gtest/gtest.h>

using namespace cgc;

namespace {

ExplainOutline::Entry kernel(std::string name, std::string kind,
                             std::vector<std::string> nodes) {
  ExplainOutline::Entry entry;
  entry.name = std::move(name);
  entry.kernelKind = std::move(kind);
  entry.onnxNodes = std::move(nodes);
  return entry;
}

std::string renderText(const ExplainOutline &outline) {
  std::string text;
  llvm::raw_string_ostream os(text);
  renderExplainText({outline}, os);
  return text;
}

} // namespace

TEST(ExplainRender, TextOfIslandsConditionalsAndEagerRegions) {
  ExplainOutline outline;
  ExplainOutline::Region island;
  island.name = "island0";
  island.ops = 3;
  island.kernels = 2;
  island.entries.push_back(kernel("gemm_0", "matmul", {"mm", "bias"}));
  ExplainOutline::Entry branch;
  branch.kind = ExplainOutline::Entry::Kind::If;
  branch.name = "if0";
  branch.bodies = {{kernel("exp_1", "elementwise", {"e"})}, {}};
  island.entries.push_back(branch);
  outline.regions.push_back(island);
  ExplainOutline::Region eager;
  eager.name = "eager0";
  eager.eager = true;
  eager.eagerOps.push_back({"nz", "data-dependent output shape"});
  outline.regions.push_back(eager);
  outline.kernels = 2;
  outline.arenaBytes = 1000;
  outline.weightsBytes = 600;
  outline.intermediateBytes = 400;
  outline.intermediateLowerBound = 300;
  outline.intermediateNaiveBytes = 500;

  EXPECT_EQ(renderText(outline),
            "island0: 3 ops in 2 kernels (one CUDA graph)\n"
            "  gemm_0 [matmul] mm, bias\n"
            "  if0: IF node with ELSE (condition set on the GPU)\n"
            "    then:\n"
            "      exp_1 [elementwise] e\n"
            "    else:\n"
            "eager0: eager region, 1 ops (run outside CUDA graphs)\n"
            "  nz: data-dependent output shape\n"
            "kernels: 2\n"
            "arena: 1000 bytes, lower bound 900, naive 1100\n"
            "intermediates: 400 bytes, lower bound 300, naive 500 (weights "
            "600 bytes)\n");
}

TEST(ExplainRender, DotNamesEveryNodeInItsCluster) {
  ExplainGraph graph;
  graph.model = "m.onnx";
  graph.regions.push_back({"island0", false, "", 1, 1});
  ExplainGraph::Node node;
  node.kind = ExplainGraph::NodeKind::Kernel;
  node.name = "gemm_0";
  node.kindName = "matmul";
  node.ops = {"matmul"};
  node.shapes = {"2x2 f32"};
  node.region = 0;
  graph.nodes.push_back(node);
  graph.kernels = 1;
  std::string dot;
  llvm::raw_string_ostream os(dot);
  renderExplainDot(graph, os);
  EXPECT_NE(dot.find("digraph \"m.onnx\""), std::string::npos);
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos);
  EXPECT_NE(dot.find("<b>gemm_0</b> [matmul]"), std::string::npos);
}
