//===- ExplainText.cpp - --explain as plain text --------------------------===//

#include "cgc/Tools/cgc/ExplainRender.h"

#include "llvm/ADT/StringExtras.h"

using namespace cgc;

namespace {

using Entry = ExplainOutline::Entry;

/// The kernels of a graph body, and If/Loop as the conditional nodes they
/// become, their bodies indented under them.
void printGraphBody(const std::vector<Entry> &entries, llvm::StringRef indent,
                    llvm::raw_ostream &os) {
  std::string inner = (indent + "    ").str();
  for (const Entry &entry : entries) {
    switch (entry.kind) {
    case Entry::Kind::Kernel:
      os << indent << entry.name << " [" << entry.kernelKind
         << (entry.precision.empty() ? "" : ", " + entry.precision) << "] "
         << llvm::join(entry.onnxNodes, ", ") << "\n";
      break;
    case Entry::Kind::If:
      os << indent << entry.name
         << ": IF node with ELSE (condition set on the GPU)\n";
      os << indent << "  then:\n";
      printGraphBody(entry.bodies[0], inner, os);
      os << indent << "  else:\n";
      printGraphBody(entry.bodies[1], inner, os);
      break;
    case Entry::Kind::Loop:
      os << indent << entry.name
         << ": WHILE node (trip count and condition tested on the GPU)\n";
      os << indent << "  body:\n";
      printGraphBody(entry.bodies[0], inner, os);
      break;
    }
  }
}

void printRegion(const ExplainOutline::Region &region, llvm::raw_ostream &os) {
  if (!region.eager) {
    os << region.name << ": " << region.ops << " ops in " << region.kernels
       << " kernels (one CUDA graph)\n";
    printGraphBody(region.entries, "  ", os);
    return;
  }
  os << region.name << ": eager region, " << region.eagerOps.size()
     << " ops (run outside CUDA graphs)\n";
  for (const ExplainOutline::EagerOp &op : region.eagerOps)
    os << "  " << op.node << ": " << op.reason << "\n";
}

} // namespace

void cgc::renderExplainText(const std::vector<ExplainOutline> &outlines,
                            llvm::raw_ostream &os) {
  for (const ExplainOutline &outline : outlines) {
    for (const ExplainOutline::Region &region : outline.regions)
      printRegion(region, os);
    int64_t fixed = outline.arenaBytes - outline.intermediateBytes;
    os << "kernels: " << outline.kernels << "\n";
    os << "arena: " << outline.arenaBytes << " bytes, lower bound "
       << fixed + outline.intermediateLowerBound << ", naive "
       << fixed + outline.intermediateNaiveBytes << "\n";
    os << "intermediates: " << outline.intermediateBytes
       << " bytes, lower bound " << outline.intermediateLowerBound
       << ", naive " << outline.intermediateNaiveBytes << " (weights "
       << outline.weightsBytes << " bytes)\n";
  }
}
