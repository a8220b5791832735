//===- GraphDump.cpp - cgrt_model_dump_graphs -----------------*- C++ -*-===//
//
// Each CUDA graph the runtime built for a package, as the driver sees it,
// written with cuGraphDebugDotPrint: the run-time counterpart of the
// compile-time picture of `cgc --explain --format=dot`.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "Status.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

using namespace cgrt;

namespace {

/// A graph name as a file name: letters, digits, '-' and '_' kept.
std::string fileSafe(const char *name) {
  std::string out;
  for (const char *c = name; c && *c; ++c)
    out += (std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' ||
            *c == '_')
               ? *c
               : '_';
  return out;
}

cgrt_status dumpGraphs(cgrt_model_t *model, const char *outDir,
                       size_t *numWritten) {
  if (numWritten)
    *numWritten = 0;
  if (!model)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_dump_graphs: model is NULL");
  if (!outDir || !*outDir)
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_dump_graphs: out_dir is NULL or empty");
  if (mkdir(outDir, 0755) != 0 && errno != EEXIST)
    return makeStatus(CGRT_NOT_FOUND,
                      "cgrt_model_dump_graphs: cannot create '%s': %s", outDir,
                      std::strerror(errno));
  struct stat info;
  if (stat(outDir, &info) != 0 || !S_ISDIR(info.st_mode))
    return makeStatus(CGRT_INVALID_ARGUMENT,
                      "cgrt_model_dump_graphs: '%s' is not a folder", outDir);

  std::lock_guard<std::mutex> lock(model->mutex);
  const Driver &d = *model->driver;
  ScopedContext scope(d, model->context);
  if (cgrt_status s = scope.take())
    return annotate(s, "cgrt_model_dump_graphs");
  for (size_t i = 0; i < model->graphs.size(); ++i) {
    const char *name = model->package && model->package->graph_names
                           ? model->package->graph_names[i]
                           : nullptr;
    std::string path = formatString("%s/graph%zu_%s.dot", outDir, i,
                                    fileSafe(name).c_str());
    CUresult result = CGRT_CU(d, cuGraphDebugDotPrint, model->graphs[i],
                              path.c_str(),
                              static_cast<unsigned>(
                                  CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
    if (result != CUDA_SUCCESS)
      return annotate(driverError(d, result, "cuGraphDebugDotPrint",
                                  model->graphLabel(i) + " of " +
                                      model->label + " to " + path),
                      "cgrt_model_dump_graphs");
    if (numWritten)
      ++*numWritten;
  }
  return nullptr;
}

} // namespace

extern "C" cgrt_status cgrt_model_dump_graphs(cgrt_model *model,
                                              const char *out_dir,
                                              size_t *num_written) {
  return guardApi("cgrt_model_dump_graphs",
                  [&] { return dumpGraphs(model, out_dir, num_written); });
}
