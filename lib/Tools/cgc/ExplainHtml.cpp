//===- ExplainHtml.cpp - the planned program as one HTML page -------------===//
//
// One self-contained file: inline SVG, CSS and a little JS, nothing fetched.
// The left column is the schedule, one row per kernel (or view, eager op,
// graph input/output) in launch order, on bands coloured by island and
// eager region; data edges run between the rows (neighbours directly, the
// others through lanes on the left). The right column is the arena map on
// the same rows: each buffer a rectangle from its offset over its bytes,
// from the row that writes it to the last row that reads it. Hovering a
// row or a buffer highlights what it is connected to.
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc/ExplainRender.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using llvm::StringRef;
using namespace cgc;

namespace {

using Node = ExplainGraph::Node;
using NodeKind = ExplainGraph::NodeKind;
using BufferKind = ExplainGraph::BufferKind;

std::string esc(StringRef s) { return escapeMarkup(s); }

/// Cuts `s` to `n` characters (UTF-8 unaware; names are ASCII).
std::string clip(const std::string &s, size_t n) {
  if (s.size() <= n)
    return s;
  return s.substr(0, n > 3 ? n - 3 : 0) + "...";
}

std::string fmt(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

constexpr double kPad = 16, kTop = 64, kHeaderH = 26, kNodeH = 40,
                 kGap = 8, kLaneW = 9, kBoxW = 520, kMapW = 440;
constexpr double kCharW = 6.2; // 11px sans-serif, on average

struct Row {
  bool header;
  int index; // region for a header, node otherwise
  double y, h;
};

class HtmlPage {
public:
  HtmlPage(const ExplainGraph &g, llvm::raw_ostream &os) : g(g), os(os) {}

  void render() {
    layoutRows();
    assignLanes();
    boxX = kPad + 14 + lanes * kLaneW;
    mapX = boxX + kBoxW + 56;
    width = mapX + kMapW + kPad;
    os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<title>cgc explain: " << esc(g.model) << "</title>\n";
    style();
    os << "</head>\n<body>\n";
    header();
    os << "<div id=\"info\">Hover a kernel or a buffer.</div>\n";
    svg();
    tables();
    script();
    os << "</body>\n</html>\n";
  }

private:
  void layoutRows() {
    double y = kTop;
    int region = -2;
    for (auto [i, n] : llvm::enumerate(g.nodes)) {
      if (n.region >= 0 && n.region != region) {
        // Eager regions say why on a second line.
        double h = g.regions[n.region].eager ? kHeaderH + 14 : kHeaderH;
        rows.push_back({true, n.region, y, h});
        y += h + 2;
      }
      region = n.region;
      rowOfNode[i] = rows.size();
      rows.push_back({false, int(i), y, kNodeH});
      y += kNodeH + kGap;
    }
    height = y + kPad;
  }

  double outY(int node) const {
    const Row &r = rows[rowOfNode.at(node)];
    return r.y + r.h * 0.35;
  }
  double inY(int node) const {
    const Row &r = rows[rowOfNode.at(node)];
    return r.y + r.h * 0.65;
  }

  /// Nodes are numbered in row order, so an edge from n to n+1 joins
  /// neighbouring rows. Non-neighbour edges leave their source on one vertical lane (a bus)
  /// that feeds every far reader; buses that overlap get different lanes.
  void assignLanes() {
    std::map<int, std::vector<int>> far;
    for (const ExplainGraph::Edge &e : g.edges)
      if (e.to != e.from + 1)
        far[e.from].push_back(e.to);
    for (auto &[from, targets] : far) {
      Bus bus{from, targets, from, from, 0};
      for (int t : targets) {
        bus.lo = std::min(bus.lo, t);
        bus.hi = std::max(bus.hi, t);
      }
      buses.push_back(bus);
    }
    std::vector<Bus *> order;
    for (Bus &b : buses)
      order.push_back(&b);
    std::stable_sort(order.begin(), order.end(), [](Bus *a, Bus *b) {
      return a->hi - a->lo < b->hi - b->lo;
    });
    std::vector<std::vector<Bus *>> taken;
    for (Bus *b : order) {
      size_t lane = 0;
      for (; lane < taken.size(); ++lane)
        if (llvm::none_of(taken[lane], [&](Bus *o) {
              return o->lo < b->hi && b->lo < o->hi;
            }))
          break;
      if (lane == taken.size())
        taken.emplace_back();
      taken[lane].push_back(b);
      b->lane = lane;
    }
    lanes = taken.size();
  }

  /// Top and bottom of the rows of a schedule step (-1: the inputs; steps:
  /// the outputs).
  std::pair<double, double> stepSpanY(int64_t step) const {
    double top = -1, bottom = -1;
    for (auto [i, n] : llvm::enumerate(g.nodes)) {
      bool match = step < 0 ? n.kind == NodeKind::Input
                   : step >= g.steps ? n.kind == NodeKind::Output
                                     : n.step == step &&
                                           n.kind != NodeKind::Input &&
                                           n.kind != NodeKind::Output;
      if (!match)
        continue;
      const Row &r = rows[rowOfNode.at(i)];
      if (top < 0)
        top = r.y;
      bottom = r.y + r.h;
    }
    if (top < 0) { // no inputs or outputs: the page's first or last row
      top = step < 0 ? kTop : height - kPad - kNodeH;
      bottom = top + kNodeH;
    }
    return {top, bottom};
  }

  void style() {
    os << R"(<style>
body { font: 13px/1.4 "DejaVu Sans", Helvetica, Arial, sans-serif; color: #222; margin: 16px; background: #fafbfc; }
h1 { font-size: 20px; margin: 0 0 4px; }
.summary { color: #444; margin-bottom: 8px; }
.legend span { display: inline-block; margin: 0 10px 4px 0; }
.legend i { display: inline-block; width: 12px; height: 12px; border: 1px solid #888; vertical-align: -2px; margin-right: 4px; border-radius: 2px; }
#info { position: sticky; top: 0; z-index: 2; background: #fffbe6; border: 1px solid #e6d98c; padding: 4px 8px; margin: 6px 0; min-height: 18px; white-space: pre-wrap; font-size: 12px; }
svg text { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; }
.node rect.box { stroke: #8a94a6; stroke-width: 1; }
.node.hl rect.box, .node:hover rect.box { stroke: #d9480f; stroke-width: 2.5; }
path.edge { stroke: #7b8494; stroke-width: 1.2; fill: none; }
path.edge.hl { stroke: #d9480f; stroke-width: 2.4; }
rect.buf { stroke: #333; stroke-width: 0.5; fill-opacity: 0.85; }
rect.buf.hl, rect.buf:hover { stroke: #d9480f; stroke-width: 2; fill-opacity: 1; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0 14px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
details { margin: 8px 0; } summary { cursor: pointer; font-weight: bold; }
</style>
)";
  }

  void header() {
    int64_t islands = 0, eager = 0;
    for (const ExplainGraph::Region &r : g.regions)
      (r.eager ? eager : islands) += 1;
    os << "<h1>" << esc(g.model) << "</h1>\n<div class=\"summary\">"
       << islands << " island(s) (one CUDA graph each), " << eager
       << " eager region(s), " << g.kernels << " kernels; arena "
       << g.arenaBytes << " bytes (" << formatBytes(g.arenaBytes)
       << "): weights " << g.weightsBytes << ", intermediates "
       << g.intermediateBytes << " (lower bound " << g.intermediateLowerBound
       << ", naive " << g.intermediateNaiveBytes << ")</div>\n";
    // Legend: the region colours, then the kinds of the nodes present.
    os << "<div class=\"legend\"><span><i style=\"background:#e7f1fb;"
          "border-color:#4a90d9\"></i>island (one CUDA graph)</span>"
          "<span><i style=\"background:#fdebd3;border-color:#e08a1e\"></i>"
          "eager region (host code)</span>";
    std::vector<std::string> kinds;
    for (const Node &n : g.nodes)
      if (!llvm::is_contained(kinds, n.kindName))
        kinds.push_back(n.kindName);
    for (const std::string &k : kinds)
      os << "<span><i style=\"background:" << explainKindColor(k)
         << "\"></i>" << esc(k) << "</span>";
    os << "</div>\n";
    arenaBar();
  }

  /// The whole arena in one bar: weights | I/O slots | intermediates.
  void arenaBar() {
    int64_t total = std::max<int64_t>(g.arenaBytes, 1);
    int64_t slots = g.intermediateBase - g.weightsBytes;
    int64_t inter = g.arenaBytes - g.intermediateBase;
    double w = kBoxW + kMapW;
    struct Part {
      const char *name, *color;
      int64_t bytes;
    } parts[] = {{"weights", "#d5d8dc", g.weightsBytes},
                 {"input/output slots", "#c3e6cb", slots},
                 {"intermediates", "#9ec5fe", inter}};
    os << "<svg class=\"arena-bar\" width=\"" << fmt(w + 2)
       << "\" height=\"38\" xmlns=\"http://www.w3.org/2000/svg\">\n";
    double x = 1;
    for (const Part &p : parts) {
      if (p.bytes <= 0)
        continue;
      double pw = std::max(2.0, w * double(p.bytes) / total);
      os << "<rect x=\"" << fmt(x) << "\" y=\"1\" width=\"" << fmt(pw)
         << "\" height=\"18\" fill=\"" << p.color
         << "\" stroke=\"#666\"><title>" << p.name << ": " << p.bytes
         << " bytes</title></rect>\n";
      std::string label = std::string(p.name) + " " + formatBytes(p.bytes);
      if (pw > label.size() * kCharW)
        os << "<text x=\"" << fmt(x + 4) << "\" y=\"14\" font-size=\"11\">"
           << esc(label) << "</text>\n";
      x += pw;
    }
    os << "<text x=\"1\" y=\"33\" font-size=\"11\" fill=\"#555\">arena: "
          "weights " << formatBytes(g.weightsBytes) << " | slots "
       << formatBytes(slots) << " | intermediates " << formatBytes(inter)
       << " (the map below shows slots and intermediates)</text>\n</svg>\n";
  }

  std::string nodeInfo(int id) const {
    const Node &n = g.nodes[id];
    std::string s = n.name + " [" + n.kindName + "]";
    if (n.step >= 0 && n.step < g.steps)
      s += ", step " + std::to_string(n.step);
    if (!n.ops.empty())
      s += "\nops: " + llvm::join(n.ops, " + ");
    if (!n.onnxNodes.empty())
      s += "\nONNX nodes: " + llvm::join(n.onnxNodes, ", ");
    if (!n.precision.empty())
      s += "\nprecision: " + n.precision;
    s += "\nshape: " + llvm::join(n.shapes, ", ");
    if (!n.reason.empty())
      s += "\neager: " + n.reason;
    return s;
  }

  void svg() {
    os << "<svg id=\"program\" width=\"" << fmt(width) << "\" height=\""
       << fmt(height) << "\" viewBox=\"0 0 " << fmt(width) << " "
       << fmt(height) << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
    os << "<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"7\" "
          "refY=\"4\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
          "<path d=\"M0,0 L8,4 L0,8 z\" fill=\"#7b8494\"/></marker></defs>\n";
    os << "<text x=\"" << fmt(boxX) << "\" y=\"" << fmt(kTop - 30)
       << "\" font-size=\"13\" font-weight=\"bold\">schedule (launch order, "
          "one row per kernel)</text>\n";
    os << "<text x=\"" << fmt(mapX) << "\" y=\"" << fmt(kTop - 30)
       << "\" font-size=\"13\" font-weight=\"bold\">arena map (offset "
          "&#8594;, lifetime &#8595;)</text>\n";
    regionBands();
    mapAxis();
    buffers();
    edges();
    for (size_t i = 0; i < g.nodes.size(); ++i)
      node(i);
    os << "</svg>\n";
  }

  void regionBands() {
    // Faint row stripes across the map, so a buffer's rows can be read off.
    for (const Row &r : rows)
      if (!r.header)
        os << "<rect x=\"" << fmt(mapX) << "\" y=\"" << fmt(r.y)
           << "\" width=\"" << fmt(kMapW) << "\" height=\"" << fmt(r.h)
           << "\" fill=\"#eef0f3\"/>\n";
    for (auto [ri, region] : llvm::enumerate(g.regions)) {
      double top = -1, bottom = 0;
      for (const Row &r : rows)
        if ((r.header && r.index == int(ri)) ||
            (!r.header && g.nodes[r.index].region == int(ri))) {
          if (top < 0)
            top = r.y;
          bottom = r.y + r.h;
        }
      if (top < 0)
        continue;
      const char *fill = region.eager ? "#fdebd3" : "#e7f1fb";
      const char *stroke = region.eager ? "#e08a1e" : "#4a90d9";
      os << "<rect class=\"region\" x=\"" << fmt(kPad) << "\" y=\""
         << fmt(top - 3) << "\" width=\"" << fmt(boxX + kBoxW + 10 - kPad)
         << "\" height=\"" << fmt(bottom - top + 6) << "\" rx=\"6\" fill=\""
         << fill << "\" stroke=\"" << stroke << "\"/>\n";
      std::string label =
          region.eager
              ? region.name + ": eager region, run outside CUDA graphs, " +
                    std::to_string(region.ops) + " ops, " +
                    std::to_string(region.kernels) + " kernels"
              : region.name + ": one CUDA graph, " +
                    std::to_string(region.ops) + " ops in " +
                    std::to_string(region.kernels) + " kernels";
      os << "<text x=\"" << fmt(boxX) << "\" y=\"" << fmt(top + 17)
         << "\" font-size=\"12\" font-weight=\"bold\" fill=\"" << stroke
         << "\">" << esc(clip(label, size_t(kBoxW / 6.8))) << "</text>\n";
      if (region.eager)
        os << "<text x=\"" << fmt(boxX) << "\" y=\"" << fmt(top + 32)
           << "\" font-size=\"11\" fill=\"#b35c00\">why: "
           << esc(clip(region.reason, size_t(kBoxW / kCharW) - 5))
           << "</text>\n";
    }
  }

  void mapAxis() {
    int64_t span = std::max<int64_t>(g.arenaBytes - mapStart(), 1);
    for (int i = 0; i <= 4; ++i) {
      double x = mapX + kMapW * i / 4.0;
      os << "<line x1=\"" << fmt(x) << "\" y1=\"" << fmt(kTop - 14)
         << "\" x2=\"" << fmt(x) << "\" y2=\"" << fmt(height - kPad)
         << "\" stroke=\"#d0d4da\" stroke-dasharray=\"2,3\"/>\n";
      const char *anchor = i == 0 ? "start" : i == 4 ? "end" : "middle";
      os << "<text x=\"" << fmt(x) << "\" y=\"" << fmt(kTop - 16)
         << "\" font-size=\"10\" fill=\"#555\" text-anchor=\"" << anchor
         << "\">" << formatBytes(mapStart() + span * i / 4) << "</text>\n";
    }
  }

  /// Where the map starts: the first input/output slot (weights are shown
  /// in the bar above only).
  int64_t mapStart() const {
    int64_t start = g.intermediateBase;
    for (const ExplainGraph::Buffer &b : g.buffers)
      if (b.kind != BufferKind::Weight)
        start = std::min(start, b.offset);
    return std::min(start, g.arenaBytes);
  }

  void buffers() {
    int64_t start = mapStart();
    double scale = kMapW / double(std::max<int64_t>(g.arenaBytes - start, 1));
    int index = 0;
    for (auto [bi, b] : llvm::enumerate(g.buffers)) {
      if (b.kind == BufferKind::Weight)
        continue;
      double top = stepSpanY(b.firstStep).first;
      double bottom = stepSpanY(b.lastStep).second;
      double x = mapX + (b.offset - start) * scale;
      double w = std::max(2.0, b.bytes * scale);
      std::string fill;
      if (b.kind == BufferKind::Input)
        fill = "#8fd19e";
      else if (b.kind == BufferKind::Output)
        fill = "#b69ee6";
      else
        fill = "hsl(" + std::to_string((index++ * 137) % 360) + ",60%,68%)";
      std::string rel;
      if (b.producer >= 0)
        rel = "n" + std::to_string(b.producer);
      for (int r : b.readers)
        rel += " n" + std::to_string(r);
      std::string info = "buffer " + b.name + " (" + b.shape + "): offset " +
                         std::to_string(b.offset) + ", " +
                         std::to_string(b.bytes) + " bytes, live " +
                         stepSpan(g, b.firstStep, b.lastStep);
      os << "<rect class=\"buf\" data-id=\"b" << bi << "\" data-rel=\""
         << rel << "\" data-info=\"" << esc(info) << "\" x=\"" << fmt(x)
         << "\" y=\"" << fmt(top + 1) << "\" width=\"" << fmt(w)
         << "\" height=\"" << fmt(std::max(2.0, bottom - top - 2))
         << "\" fill=\"" << fill << "\"><title>" << esc(info)
         << "</title></rect>\n";
      if (w > 70)
        os << "<text x=\"" << fmt(x + 3) << "\" y=\"" << fmt(top + 13)
           << "\" font-size=\"10\" pointer-events=\"none\">"
           << esc(clip(b.name, size_t((w - 6) / 5.8))) << "</text>\n";
    }
  }

  void edges() {
    for (const ExplainGraph::Edge &e : g.edges) {
      if (e.to != e.from + 1)
        continue;
      const Row &a = rows[rowOfNode.at(e.from)];
      const Row &b = rows[rowOfNode.at(e.to)];
      double x = boxX + 34;
      os << "<path class=\"edge\" data-rel=\"n" << e.from << " n" << e.to
         << "\" d=\"M" << fmt(x) << "," << fmt(a.y + a.h) << " V"
         << fmt(b.y - 1) << "\" marker-end=\"url(#arrow)\"><title>"
         << esc(g.nodes[e.from].name + " -> " + g.nodes[e.to].name + ": " +
                e.shape)
         << "</title></path>\n";
    }
    for (const Bus &bus : buses) {
      double x = boxX - 10 - bus.lane * kLaneW;
      for (int t : bus.targets) {
        std::string shape;
        for (const ExplainGraph::Edge &e : g.edges)
          if (e.from == bus.from && e.to == t)
            shape = e.shape;
        os << "<path class=\"edge\" data-rel=\"n" << bus.from << " n" << t
           << "\" d=\"M" << fmt(boxX) << "," << fmt(outY(bus.from)) << " H"
           << fmt(x) << " V" << fmt(inY(t)) << " H" << fmt(boxX - 1)
           << "\" marker-end=\"url(#arrow)\"><title>"
           << esc(g.nodes[bus.from].name + " -> " + g.nodes[t].name + ": " +
                  shape)
           << "</title></path>\n";
      }
    }
  }

  void node(int id) {
    const Node &n = g.nodes[id];
    const Row &r = rows[rowOfNode.at(id)];
    std::string info = nodeInfo(id);
    os << "<g class=\"node\" data-id=\"n" << id << "\" data-info=\""
       << esc(info) << "\"><title>" << esc(info) << "</title>\n";
    bool io = n.kind == NodeKind::Input || n.kind == NodeKind::Output;
    os << "<rect class=\"box\" x=\"" << fmt(boxX) << "\" y=\"" << fmt(r.y)
       << "\" width=\"" << fmt(kBoxW) << "\" height=\"" << fmt(r.h)
       << "\" rx=\"" << (io ? 18 : 4) << "\" fill=\"#ffffff\""
       << (n.kind == NodeKind::View ? " stroke-dasharray=\"4,3\"" : "")
       << "/>\n";
    // The kind's colour as a stripe on the left.
    os << "<rect x=\"" << fmt(boxX + 1) << "\" y=\"" << fmt(r.y + 1)
       << "\" width=\"" << (io ? 26 : 10) << "\" height=\"" << fmt(r.h - 2)
       << "\" rx=\"" << (io ? 17 : 3) << "\" fill=\""
       << explainKindColor(n.kindName) << "\"/>\n";
    double tx = boxX + (io ? 32 : 16);
    std::string shape = llvm::join(n.shapes, ", ");
    std::string title = n.name;
    std::string kind = " [" + n.kindName + "]";
    size_t room = size_t((kBoxW - (tx - boxX) - 12) / kCharW);
    size_t shapeRoom = std::min(shape.size(), room / 2);
    os << "<text x=\"" << fmt(tx) << "\" y=\"" << fmt(r.y + 16)
       << "\" font-size=\"12\"><tspan font-weight=\"bold\">"
       << esc(clip(title, room - shapeRoom - kind.size() - 2))
       << "</tspan><tspan fill=\"#666\">" << esc(kind) << "</tspan></text>\n";
    os << "<text x=\"" << fmt(boxX + kBoxW - 8) << "\" y=\"" << fmt(r.y + 16)
       << "\" font-size=\"11\" text-anchor=\"end\" fill=\"#1b4f8a\">"
       << esc(clip(shape, shapeRoom)) << "</text>\n";
    std::string second, secondGrey;
    if (n.kind == NodeKind::EagerOp) {
      second = llvm::join(n.ops, " + ");
      secondGrey = n.reason;
    } else if (!io) {
      second = llvm::join(n.ops, " + ");
      secondGrey = llvm::join(n.onnxNodes, ", ");
    } else {
      second = n.kind == NodeKind::Input ? "graph input" : "graph output";
    }
    second = clip(second, room);
    std::string rest =
        secondGrey.empty() || second.size() + 6 > room
            ? std::string()
            : clip(secondGrey, room - second.size() - 3);
    os << "<text x=\"" << fmt(tx) << "\" y=\"" << fmt(r.y + 32)
       << "\" font-size=\"11\">" << esc(second);
    if (!rest.empty())
      os << "<tspan fill=\""
         << (n.kind == NodeKind::EagerOp ? "#b35c00" : "#888") << "\"> "
         << (n.kind == NodeKind::EagerOp ? "- " : "| ") << esc(rest)
         << "</tspan>";
    os << "</text>\n</g>\n";
  }

  void tables() {
    os << "<details open><summary>Kernels (" << g.kernels
       << ") and eager ops, in launch order</summary>\n<table "
          "id=\"kernels\">\n<tr><th>step</th><th>region</th><th>name</th>"
          "<th>kind</th><th>ops</th><th>ONNX nodes</th><th>shape</th></tr>\n";
    for (const Node &n : g.nodes) {
      if (n.kind == NodeKind::Input || n.kind == NodeKind::Output)
        continue;
      os << "<tr><td class=\"num\">" << n.step << "</td><td>"
         << esc(g.regions[n.region].name) << "</td><td>" << esc(n.name)
         << "</td><td>" << esc(n.kindName) << "</td><td>"
         << esc(llvm::join(n.ops, " + ")) << "</td><td>"
         << esc(n.reason.empty() ? llvm::join(n.onnxNodes, ", ")
                                 : llvm::join(n.onnxNodes, ", ") + " (" +
                                       n.reason + ")")
         << "</td><td>" << esc(llvm::join(n.shapes, ", ")) << "</td></tr>\n";
    }
    os << "</table>\n</details>\n";
    os << "<details open><summary>Arena: buffers by offset</summary>\n<table "
          "id=\"arena\">\n<tr><th>offset</th><th>bytes</th><th>kind</th>"
          "<th>buffer</th><th>shape</th><th>live</th></tr>\n";
    static const char *kindNames[] = {"weight", "input", "output",
                                      "intermediate"};
    for (const ExplainGraph::Buffer &b : g.buffers)
      os << "<tr><td class=\"num\">" << b.offset << "</td><td class=\"num\">"
         << b.bytes << "</td><td>" << kindNames[int(b.kind)] << "</td><td>"
         << esc(b.name) << "</td><td>" << esc(b.shape) << "</td><td>"
         << esc(stepSpan(g, b.firstStep, b.lastStep)) << "</td></tr>\n";
    os << "</table>\n</details>\n";
  }

  void script() {
    os << R"(<script>
(function () {
  var info = document.getElementById('info');
  function clear() {
    document.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
  }
  document.querySelectorAll('[data-id]').forEach(function (el) {
    el.addEventListener('mouseenter', function () {
      clear();
      el.classList.add('hl');
      var id = el.getAttribute('data-id');
      document.querySelectorAll('[data-rel~="' + id + '"]').forEach(function (e) { e.classList.add('hl'); });
      (el.getAttribute('data-rel') || '').split(' ').forEach(function (r) {
        if (!r) return;
        var t = document.querySelector('[data-id="' + r + '"]');
        if (t) t.classList.add('hl');
      });
      info.textContent = el.getAttribute('data-info');
    });
    el.addEventListener('mouseleave', clear);
  });
})();
</script>
)";
  }

  struct Bus {
    int from;
    std::vector<int> targets;
    int lo, hi;
    size_t lane;
  };

  const ExplainGraph &g;
  llvm::raw_ostream &os;
  std::vector<Row> rows;
  std::map<int, size_t> rowOfNode;
  std::vector<Bus> buses;
  size_t lanes = 0;
  double boxX = 0, mapX = 0, width = 0, height = 0;
};

} // namespace

void cgc::renderExplainHtml(const ExplainGraph &graph, llvm::raw_ostream &os) {
  HtmlPage(graph, os).render();
}
