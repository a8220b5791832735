//===- ExplainGraph.h - the program of --explain as a graph -----*- C++ -*-===//
//
// `cgc MODEL --explain --format=dot|html` draws the planned program: its
// islands and eager regions, the fused kernels with the ops they run and
// their shapes, the data edges between them, and the arena map (which
// buffer lives at which offset for which span of the schedule). The graph
// is built from the same IR and analyses the text form reads (the island
// and eager region ops, the kernels of --cgc-fuse, planBuffers) and is then
// rendered; neither renderer reads the other's output.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_TOOLS_CGC_EXPLAINGRAPH_H
#define CGC_TOOLS_CGC_EXPLAINGRAPH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace cgc {

struct ExplainGraph {
  /// An island (one CUDA graph) or an eager region (run by host code).
  struct Region {
    std::string name;
    bool eager = false;
    /// Eager regions: why they cannot be captured.
    std::string reason;
    int64_t ops = 0, kernels = 0;
  };
  enum class NodeKind { Input, Output, Kernel, View, EagerOp };
  /// One row of the schedule: a graph input or output, a kernel, a view
  /// (reshape, in-place concat: no work of its own) or an eager op.
  struct Node {
    NodeKind kind;
    /// Kernel name, input/output name, or the eager op's ONNX node.
    std::string name;
    /// The kernel kind (`conv`, `matmul`, ...); `view`, `input`, ...
    std::string kindName;
    /// The cgc ops it runs (`conv`, `clip`) and their ONNX nodes.
    std::vector<std::string> ops, onnxNodes;
    /// Result types, e.g. `1x32x112x112 f32`.
    std::vector<std::string> shapes;
    /// Eager ops: why they run outside CUDA graphs.
    std::string reason;
    /// Index into `regions`, -1 for inputs and outputs.
    int region = -1;
    /// Schedule step (the BufferPlan's kernel order); inputs come before
    /// step 0 (-1) and outputs after the last one (`steps`).
    int64_t step = 0;
  };
  struct Edge {
    int from, to;
    std::string shape;
  };
  enum class BufferKind { Weight, Input, Output, Intermediate };
  struct Buffer {
    BufferKind kind;
    /// What lives there: the producing node (or input/output/weight name).
    std::string name;
    std::string shape;
    int64_t offset = 0, bytes = 0;
    /// Lifetime in schedule steps, inclusive.
    int64_t firstStep = 0, lastStep = 0;
    /// The node that writes it (-1 for weights) and the nodes reading it.
    int producer = -1;
    std::vector<int> readers;
  };

  std::string model;
  std::vector<Region> regions;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Buffer> buffers;
  int64_t steps = 0, kernels = 0;
  int64_t arenaBytes = 0, weightsBytes = 0, intermediateBytes = 0;
  int64_t intermediateLowerBound = 0, intermediateNaiveBytes = 0;
  /// Where the intermediates start in the arena.
  int64_t intermediateBase = 0;
};

/// Builds the graph of a function after --cgc-plan-buffers; fails (with a
/// diagnostic) where the plan cannot be recomputed.
mlir::FailureOr<ExplainGraph> buildExplainGraph(mlir::func::FuncOp func,
                                                llvm::StringRef model);

/// A Graphviz digraph: a cluster per island and eager region, a node per
/// kernel (name, kind, ops, shapes), the data edges, and the arena map as a
/// table.
void renderExplainDot(const ExplainGraph &graph, llvm::raw_ostream &os);

/// One self-contained HTML page (inline SVG, CSS and JS; nothing fetched):
/// the schedule as rows coloured by island and eager region with the data
/// edges, beside the arena map over the same rows.
void renderExplainHtml(const ExplainGraph &graph, llvm::raw_ostream &os);

/// Shared by the renderers: the fill colour of a node kind, `1.50 MiB`, and
/// a lifetime as `first node .. last node` (`start`/`end` outside).
llvm::StringRef explainKindColor(llvm::StringRef kind);
std::string formatBytes(int64_t bytes);
/// `s` with & < > " ' as character references, for HTML text and attributes
/// and Graphviz HTML-like labels alike.
std::string escapeMarkup(llvm::StringRef s);
std::string stepSpan(const ExplainGraph &graph, int64_t first, int64_t last);

} // namespace cgc

#endif // CGC_TOOLS_CGC_EXPLAINGRAPH_H
