//===- ExplainDot.cpp - --explain as a Graphviz digraph -------------------===//
//
// Also the helpers the HTML page shares: kind colours, byte sizes, markup
// escapes and lifetimes named by their first and last node.
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc/ExplainRender.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstdio>

using namespace cgc;
using llvm::StringRef;

namespace {

using Node = ExplainGraph::Node;
using NodeKind = ExplainGraph::NodeKind;

//===----------------------------------------------------------------------===//
// dot
//===----------------------------------------------------------------------===//

std::string escape(StringRef s) { return escapeMarkup(s); }

std::string quoted(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// `a + b + c`, at most `limit` items, wrapped every `perLine`.
std::string joinWrapped(const std::vector<std::string> &items, size_t limit,
                        size_t perLine, StringRef sep) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) {
    if (i)
      out += (i % perLine == 0) ? std::string(" ") + sep.str() + "<br/>"
                                : std::string(" ") + sep.str() + " ";
    out += escape(items[i]);
  }
  if (items.size() > limit)
    out += " " + sep.str() + " … (" + std::to_string(items.size()) + ")";
  return out;
}

} // namespace

/// Fill colours of kernels by kind; shared with the html page's legend.
StringRef cgc::explainKindColor(StringRef kind) {
  return llvm::StringSwitch<StringRef>(kind)
      .Case("matmul", "#cfe2ff")
      .Case("conv", "#d4edda")
      .Case("norm", "#fff3cd")
      .Case("reduce", "#f8d7da")
      .Case("elementwise", "#e2e3e5")
      .Case("view", "#ffffff")
      .Case("input", "#c3e6cb")
      .Case("output", "#d6c8f0")
      .Case("eager", "#ffe0b3")
      .Default("#e0f2f1");
}

std::string cgc::escapeMarkup(StringRef s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string cgc::formatBytes(int64_t bytes) {
  char buf[32];
  if (bytes >= (1 << 20))
    snprintf(buf, sizeof buf, "%.2f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024)
    snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else
    snprintf(buf, sizeof buf, "%lld B", (long long)bytes);
  return buf;
}

std::string cgc::stepSpan(const ExplainGraph &g, int64_t first,
                          int64_t last) {
  auto at = [&](int64_t step) -> std::string {
    if (step < 0)
      return "start";
    if (step >= g.steps)
      return "end";
    for (const Node &n : g.nodes)
      if (n.step == step && n.kind != NodeKind::Input)
        return n.region >= 0 && g.regions[n.region].eager
                   ? g.regions[n.region].name
                   : n.name;
    return std::to_string(step);
  };
  if (first == last)
    return at(first);
  return at(first) + " .. " + at(last);
}

void cgc::renderExplainDot(const ExplainGraph &g, llvm::raw_ostream &os) {
  os << "digraph " << quoted(g.model) << " {\n";
  os << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, "
        "labelloc=t, nodesep=0.3, ranksep=0.35, label=<<b>"
     << escape(g.model) << "</b>: " << g.kernels << " kernels, arena "
     << g.arenaBytes << " bytes (intermediates " << g.intermediateBytes
     << ", lower bound " << g.intermediateLowerBound << ", naive "
     << g.intermediateNaiveBytes << ")>];\n";
  os << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
        "fontsize=10, fillcolor=white];\n";
  os << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\", "
        "fontcolor=\"#555555\"];\n";

  auto emitNode = [&](int id, StringRef indent) {
    const Node &n = g.nodes[id];
    os << indent << "n" << id << " [";
    switch (n.kind) {
    case NodeKind::Input:
    case NodeKind::Output:
      os << "shape=ellipse, label=<<b>" << escape(n.name) << "</b><br/>"
         << escape(n.shapes.front()) << ">";
      break;
    case NodeKind::View:
      os << "style=\"rounded,dashed\", label=<" << escape(n.ops.front())
         << "<br/>" << joinWrapped(n.shapes, 4, 4, ",") << ">";
      break;
    case NodeKind::Conditional:
      os << "label=<<b>" << escape(n.name) << "</b> [" << escape(n.kindName)
         << " node, " << n.kernels << " kernels]<br/>"
         << joinWrapped(n.ops, 8, 4, "+") << "<br/>"
         << joinWrapped(n.shapes, 4, 4, ",") << ">";
      break;
    case NodeKind::EagerOp:
      os << "label=<<b>" << escape(n.name) << "</b> [eager]<br/>"
         << joinWrapped(n.ops, 8, 4, "+") << "<br/><i>" << escape(n.reason)
         << "</i><br/>" << joinWrapped(n.shapes, 4, 4, ",") << ">";
      break;
    case NodeKind::Kernel:
      os << "label=<<b>" << escape(n.name) << "</b> [" << escape(n.kindName)
         << "]<br/>" << joinWrapped(n.ops, 12, 6, "+") << "<br/>"
         << (n.precision.empty() ? "" : "<i>" + escape(n.precision) + "</i><br/>")
         << joinWrapped(n.shapes, 4, 4, ",") << ">, tooltip="
         << quoted(llvm::join(n.onnxNodes, ", "));
      break;
    }
    os << ", fillcolor=\"" << explainKindColor(n.kindName) << "\"];\n";
  };

  for (auto [id, n] : llvm::enumerate(g.nodes))
    if (n.region < 0)
      emitNode(id, "  ");
  for (auto [r, region] : llvm::enumerate(g.regions)) {
    os << "  subgraph cluster_" << r << " {\n";
    if (region.eager)
      os << "    label=<<b>" << escape(region.name)
         << "</b>: eager region, run outside CUDA graphs<br/><i>"
         << escape(region.reason) << "</i>>;\n"
         << "    style=\"filled,rounded\"; fillcolor=\"#fdebd3\"; "
            "color=\"#e08a1e\";\n";
    else
      os << "    label=<<b>" << escape(region.name) << "</b>: one CUDA graph, "
         << region.ops << " ops in " << region.kernels << " kernels>;\n"
         << "    style=\"filled,rounded\"; fillcolor=\"#e7f1fb\"; "
            "color=\"#4a90d9\";\n";
    for (auto [id, n] : llvm::enumerate(g.nodes))
      if (n.region == int(r))
        emitNode(id, "    ");
    os << "  }\n";
  }
  for (const ExplainGraph::Edge &e : g.edges)
    os << "  n" << e.from << " -> n" << e.to << " [label="
       << quoted(e.shape) << "];\n";

  // The arena map: one row per placed buffer, by offset.
  os << "  subgraph cluster_arena {\n"
        "    label=<<b>arena</b>: "
     << g.arenaBytes << " bytes>; style=rounded; color=\"#888888\";\n"
     << "    arena [shape=plaintext, style=\"\", label=<<table border=\"0\" "
        "cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\">\n"
     << "      <tr><td><b>offset</b></td><td><b>bytes</b></td>"
        "<td><b>buffer</b></td><td><b>shape</b></td><td><b>live</b></td></tr>\n";
  int64_t weights = llvm::count_if(g.buffers, [](const auto &b) {
    return b.kind == ExplainGraph::BufferKind::Weight;
  });
  if (weights)
    os << "      <tr><td align=\"right\">0</td><td align=\"right\">"
       << g.weightsBytes << "</td><td bgcolor=\"#eeeeee\">" << weights
       << " weights</td><td></td><td>start .. end</td></tr>\n";
  for (const ExplainGraph::Buffer &b : g.buffers) {
    if (b.kind == ExplainGraph::BufferKind::Weight)
      continue;
    StringRef color = b.kind == ExplainGraph::BufferKind::Input ? "#c3e6cb"
                      : b.kind == ExplainGraph::BufferKind::Output
                          ? "#d6c8f0"
                          : "#ffffff";
    os << "      <tr><td align=\"right\">" << b.offset
       << "</td><td align=\"right\">" << b.bytes << "</td><td bgcolor=\""
       << color << "\">" << escape(b.name) << "</td><td>" << escape(b.shape)
       << "</td><td>" << escape(stepSpan(g, b.firstStep, b.lastStep))
       << "</td></tr>\n";
  }
  os << "    </table>>];\n  }\n}\n";
}
