//===- ExplainJson.cpp - --explain as JSON --------------------------------===//
//
// The explain graph as one JSON object, field for field, so scripts read the
// same numbers the dot and html pictures show:
//   {"model", "kernels", "steps", "arena": {...}, "regions": [...],
//    "nodes": [...], "edges": [...], "buffers": [...]}
// Node and region references are indices into those arrays.
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc/ExplainRender.h"

#include "llvm/Support/JSON.h"

using namespace cgc;

namespace {

using Node = ExplainGraph::Node;

const char *nodeKindName(ExplainGraph::NodeKind kind) {
  switch (kind) {
  case ExplainGraph::NodeKind::Input: return "input";
  case ExplainGraph::NodeKind::Output: return "output";
  case ExplainGraph::NodeKind::Kernel: return "kernel";
  case ExplainGraph::NodeKind::View: return "view";
  case ExplainGraph::NodeKind::Conditional: return "conditional";
  case ExplainGraph::NodeKind::EagerOp: return "eager";
  }
  return "unknown";
}

const char *bufferKindName(ExplainGraph::BufferKind kind) {
  switch (kind) {
  case ExplainGraph::BufferKind::Weight: return "weight";
  case ExplainGraph::BufferKind::Input: return "input";
  case ExplainGraph::BufferKind::Output: return "output";
  case ExplainGraph::BufferKind::Intermediate: return "intermediate";
  }
  return "unknown";
}

void writeStrings(llvm::json::OStream &j, llvm::StringRef key,
                  const std::vector<std::string> &items) {
  j.attributeArray(key, [&] {
    for (const std::string &item : items)
      j.value(item);
  });
}

void writeNode(llvm::json::OStream &j, const Node &node) {
  j.object([&] {
    j.attribute("name", node.name);
    j.attribute("kind", nodeKindName(node.kind));
    j.attribute("kernel_kind", node.kindName);
    writeStrings(j, "ops", node.ops);
    writeStrings(j, "onnx_nodes", node.onnxNodes);
    writeStrings(j, "shapes", node.shapes);
    if (!node.reason.empty())
      j.attribute("reason", node.reason);
    if (!node.precision.empty())
      j.attribute("precision", node.precision);
    if (node.kernels)
      j.attribute("kernels", node.kernels);
    j.attribute("region", node.region);
    j.attribute("step", node.step);
  });
}

void writeBuffer(llvm::json::OStream &j, const ExplainGraph::Buffer &buffer) {
  j.object([&] {
    j.attribute("kind", bufferKindName(buffer.kind));
    j.attribute("name", buffer.name);
    j.attribute("shape", buffer.shape);
    j.attribute("offset", buffer.offset);
    j.attribute("bytes", buffer.bytes);
    j.attribute("first_step", buffer.firstStep);
    j.attribute("last_step", buffer.lastStep);
    j.attribute("producer", buffer.producer);
    j.attributeArray("readers", [&] {
      for (int reader : buffer.readers)
        j.value(reader);
    });
  });
}

} // namespace

void cgc::renderExplainJson(const ExplainGraph &graph, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, /*IndentSize=*/1);
  j.object([&] {
    j.attribute("model", graph.model);
    j.attribute("kernels", graph.kernels);
    j.attribute("steps", graph.steps);
    j.attributeObject("arena", [&] {
      j.attribute("bytes", graph.arenaBytes);
      j.attribute("weights_bytes", graph.weightsBytes);
      j.attribute("intermediate_bytes", graph.intermediateBytes);
      j.attribute("intermediate_lower_bound", graph.intermediateLowerBound);
      j.attribute("intermediate_naive_bytes", graph.intermediateNaiveBytes);
      j.attribute("intermediate_base", graph.intermediateBase);
    });
    j.attributeArray("regions", [&] {
      for (const ExplainGraph::Region &region : graph.regions)
        j.object([&] {
          j.attribute("name", region.name);
          j.attribute("eager", region.eager);
          if (!region.reason.empty())
            j.attribute("reason", region.reason);
          j.attribute("ops", region.ops);
          j.attribute("kernels", region.kernels);
        });
    });
    j.attributeArray("nodes", [&] {
      for (const Node &node : graph.nodes)
        writeNode(j, node);
    });
    j.attributeArray("edges", [&] {
      for (const ExplainGraph::Edge &edge : graph.edges)
        j.object([&] {
          j.attribute("from", edge.from);
          j.attribute("to", edge.to);
          j.attribute("shape", edge.shape);
        });
    });
    j.attributeArray("buffers", [&] {
      for (const ExplainGraph::Buffer &buffer : graph.buffers)
        writeBuffer(j, buffer);
    });
  });
  os << "\n";
}
