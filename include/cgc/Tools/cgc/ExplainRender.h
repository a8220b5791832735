//===- ExplainRender.h - the renderers of cgc --explain ---------*- C++ -*-===//
//
// The renderers of the explain model (cgc/Explain/ExplainModel.h). They
// print what the model says and read no IR.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_TOOLS_CGC_EXPLAINRENDER_H
#define CGC_TOOLS_CGC_EXPLAINRENDER_H

#include "cgc/Explain/ExplainModel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace cgc {

/// Per function: each island with its op and kernel counts and the ONNX
/// nodes of each kernel, each eager region with its nodes and reason, and
/// the summary lines `kernels: K` and `arena: A bytes, lower bound L,
/// naive S`.
void renderExplainText(const std::vector<ExplainOutline> &outlines,
                       llvm::raw_ostream &os);

/// JSON: the whole graph model (regions, nodes, edges, buffers and the
/// totals), the data the dot and html forms draw, for scripts.
void renderExplainJson(const ExplainGraph &graph, llvm::raw_ostream &os);

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

#endif // CGC_TOOLS_CGC_EXPLAINRENDER_H
