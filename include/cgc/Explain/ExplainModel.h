//===- ExplainModel.h - what --explain says, as plain data ------*- C++ -*-===//
//
// `cgc MODEL --explain` describes the planned program: its islands and
// eager regions (with the reason each eager op cannot be captured), the
// fused kernels with the ops they run and their shapes, the data edges
// between them, and the arena map (which buffer lives at which offset for
// which span of the schedule). The compiler fills these structs from the IR
// and the analyses (cgc/Explain/Explain.h); cgc's renderers print them as
// text, Graphviz or HTML (lib/Tools/cgc). They hold no IR.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_EXPLAIN_EXPLAINMODEL_H
#define CGC_EXPLAIN_EXPLAINMODEL_H

#include <cstdint>
#include <string>
#include <vector>

namespace cgc {

/// The text form: per function, each island with its kernels (and the
/// If/Loop nodes that hold more), each eager region with every op and why
/// it cannot be captured, and the plan's sizes.
struct ExplainOutline {
  /// A line of an island: a kernel, or an If/Loop that becomes a
  /// conditional node with kernels in its bodies.
  struct Entry {
    enum class Kind { Kernel, If, Loop };
    Kind kind = Kind::Kernel;
    /// The kernel's name, or the If/Loop's ONNX node.
    std::string name;
    /// Kernels: their kind (`matmul`, ...) and their ONNX nodes,
    /// deduplicated in order.
    std::string kernelKind;
    /// Kernels given a precision: `bf16 tensor cores` (the config's operand
    /// type), or why a requested one is not used; empty otherwise.
    std::string precision;
    std::vector<std::string> onnxNodes;
    /// If: the then and else bodies; Loop: the body.
    std::vector<std::vector<Entry>> bodies;
  };
  /// An op of an eager region (its ONNX node) and why it runs on the host.
  struct EagerOp {
    std::string node, reason;
  };
  /// An island (one CUDA graph) or an eager region (run by host code).
  struct Region {
    std::string name;
    bool eager = false;
    /// Islands: ops other than kernels and terminators, and kernels, those
    /// in If/Loop bodies included; eager regions: every op, and the kernels
    /// their If/Loop bodies launch from the host.
    int64_t ops = 0, kernels = 0;
    std::vector<Entry> entries;
    std::vector<EagerOp> eagerOps;
  };

  std::vector<Region> regions;
  /// Every generated kernel: those of the islands and those eager If/Loop
  /// bodies launch (ExplainGraph::kernels counts the same).
  int64_t kernels = 0;
  /// The buffer plan's sizes, in bytes.
  int64_t arenaBytes = 0, weightsBytes = 0, intermediateBytes = 0;
  int64_t intermediateLowerBound = 0, intermediateNaiveBytes = 0;
};

/// The graph form (--format=dot|html): the schedule as nodes and data
/// edges, and the arena's buffers with their lifetimes.
struct ExplainGraph {
  /// An island (one CUDA graph) or an eager region (run by host code).
  struct Region {
    std::string name;
    bool eager = false;
    /// Eager regions: why they cannot be captured.
    std::string reason;
    int64_t ops = 0, kernels = 0;
  };
  enum class NodeKind { Input, Output, Kernel, View, Conditional, EagerOp };
  /// One row of the schedule: a graph input or output, a kernel, a view
  /// (reshape, in-place concat: no work of its own), an If/Loop of an
  /// island (a conditional node; its bodies' kernels in `ops`) or an eager
  /// op (an eager If/Loop lists its bodies' kernels the same way).
  struct Node {
    NodeKind kind;
    /// Kernel name, input/output name, or the eager op's ONNX node.
    std::string name;
    /// The kernel kind (`conv`, `matmul`, ...); `view`, `input`, `if`,
    /// `while`, ...
    std::string kindName;
    /// The cgc ops it runs (`conv`, `clip`) and their ONNX nodes.
    std::vector<std::string> ops, onnxNodes;
    /// Result types, e.g. `1x32x112x112 f32`.
    std::vector<std::string> shapes;
    /// Eager ops: why they run outside CUDA graphs.
    std::string reason;
    /// Kernels given a precision: describeKernelPrecision's text.
    std::string precision;
    /// Conditional nodes and eager If/Loop: the kernels of their bodies.
    int64_t kernels = 0;
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

} // namespace cgc

#endif // CGC_EXPLAIN_EXPLAINMODEL_H
