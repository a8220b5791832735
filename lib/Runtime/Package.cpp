//===- Package.cpp - opening and checking a package folder ------*- C++ -*-===//

#include "Package.h"

#include "DType.h"
#include "Status.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

namespace cgrt {

uint64_t fnv1a64(const void *data, size_t size, uint64_t hash) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string joinPath(const std::string &dir, const std::string &file) {
  if (!file.empty() && file[0] == '/')
    return file;
  if (dir.empty() || dir.back() == '/')
    return dir + file;
  return dir + "/" + file;
}

cgrt_status openPackage(const std::string &dir, void **handle,
                        const cgrt_package **package) {
  *handle = nullptr;
  *package = nullptr;
  struct stat info;
  if (stat(dir.c_str(), &info) != 0)
    return makeStatus(CGRT_NOT_FOUND, "package folder '%s' does not exist (%s)",
                      dir.c_str(), std::strerror(errno));
  if (!S_ISDIR(info.st_mode))
    return makeStatus(CGRT_NOT_FOUND, "package '%s' is not a folder",
                      dir.c_str());
  std::string library = joinPath(dir, kPackageLibrary);
  if (stat(library.c_str(), &info) != 0)
    return makeStatus(CGRT_NOT_FOUND,
                      "package folder '%s' has no %s (%s); compile the "
                      "package with `cgc --emit=lib`",
                      dir.c_str(), kPackageLibrary, std::strerror(errno));
  // A path with a '/' makes dlopen load exactly this file.
  if (library.find('/') == std::string::npos)
    library = "./" + library;
  dlerror();
  *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    const char *error = dlerror();
    return makeStatus(CGRT_CORRUPT, "cannot load the package library %s: %s",
                      library.c_str(), error ? error : "unknown dlopen error");
  }
  auto descriptor = reinterpret_cast<cgrt_package_descriptor_fn>(
      dlsym(*handle, CGRT_PACKAGE_DESCRIPTOR_SYMBOL));
  if (!descriptor)
    return makeStatus(CGRT_NOT_FOUND,
                      "the package library %s does not export %s; it is not a "
                      "cgc package",
                      library.c_str(), CGRT_PACKAGE_DESCRIPTOR_SYMBOL);
  const cgrt_package *result = descriptor();
  if (!result)
    return makeStatus(CGRT_CORRUPT, "%s() of %s returned NULL",
                      CGRT_PACKAGE_DESCRIPTOR_SYMBOL, library.c_str());
  if (result->abi_version != CGRT_PACKAGE_ABI_VERSION)
    return makeStatus(
        CGRT_INCOMPATIBLE,
        "package '%s' has package ABI version %u (written by cgc %s), but "
        "this runtime supports package ABI version %u; recompile the model "
        "with a matching cgc or use a matching runtime",
        dir.c_str(), static_cast<unsigned>(result->abi_version),
        result->cgc_version ? result->cgc_version : "(unknown)",
        static_cast<unsigned>(CGRT_PACKAGE_ABI_VERSION));
  *package = result;
  return nullptr;
}

namespace {

bool hasDynamicDims(const cgrt_io_desc &d) {
  for (int32_t i = 0; i < d.rank && i < CGRT_MAX_RANK; ++i)
    if (d.dims[i] < 0)
      return true;
  return false;
}

bool fits(uint64_t offset, uint64_t bytes, uint64_t limit) {
  return offset <= limit && bytes <= limit - offset;
}

cgrt_status validateIo(const char *kind, size_t count,
                       const cgrt_io_desc *descs, uint64_t arenaBytes,
                       const std::string &label) {
  if (count > 0 && !descs)
    return makeStatus(CGRT_CORRUPT, "%s: %zu %ss but no %s table",
                      label.c_str(), count, kind, kind);
  for (size_t i = 0; i < count; ++i) {
    const cgrt_io_desc &d = descs[i];
    if (!d.name)
      return makeStatus(CGRT_CORRUPT, "%s: %s %zu has no name", label.c_str(),
                        kind, i);
    uint64_t bytes = 0;
    if (d.rank < 0 || d.rank > CGRT_MAX_RANK)
      return makeStatus(CGRT_CORRUPT, "%s: %s %zu '%s' has rank %d",
                        label.c_str(), kind, i, d.name, d.rank);
    if (dtypeBytes(enumValue(d.dtype)) == 0)
      return makeStatus(CGRT_CORRUPT, "%s: %s %zu '%s' has unknown dtype %d",
                        label.c_str(), kind, i, d.name, enumValue(d.dtype));
    bool dataDependent = hasDynamicDims(d);
    if (dataDependent && std::string(kind) == "input")
      return makeStatus(CGRT_CORRUPT, "%s: input %zu '%s' has a dim of -1",
                        label.c_str(), i, d.name);
    if (!dataDependent && !tensorBytes(d.dtype, d.rank, d.dims, &bytes))
      return makeStatus(CGRT_CORRUPT, "%s: %s %zu '%s' has invalid shape %s",
                        label.c_str(), kind, i, d.name,
                        shapeString(d.rank, d.dims).c_str());
    if (!dataDependent && bytes != d.bytes)
      return makeStatus(CGRT_CORRUPT,
                        "%s: %s %zu '%s' is %s %s (%" PRIu64
                        " bytes) but its slot is %" PRIu64 " bytes",
                        label.c_str(), kind, i, d.name,
                        dtypeName(d.dtype).c_str(),
                        shapeString(d.rank, d.dims).c_str(), bytes, d.bytes);
    if (!fits(d.arena_offset, d.bytes, arenaBytes))
      return makeStatus(CGRT_CORRUPT,
                        "%s: %s %zu '%s' slot [%" PRIu64 ", +%" PRIu64
                        ") lies outside the %" PRIu64 "-byte arena",
                        label.c_str(), kind, i, d.name, d.arena_offset,
                        d.bytes, arenaBytes);
  }
  return nullptr;
}

cgrt_status validateSteps(const cgrt_package &p, size_t numSteps,
                          const cgrt_step *steps, const std::string &label) {
  const char *l = label.c_str();
  if (numSteps > 0 && !steps)
    return makeStatus(CGRT_CORRUPT, "%s: %zu steps but no step table", l,
                      numSteps);
  for (size_t i = 0; i < numSteps; ++i) {
    const cgrt_step &step = steps[i];
    int kind = enumValue(step.kind);
    if (kind != CGRT_STEP_GRAPH && kind != CGRT_STEP_EAGER)
      return makeStatus(CGRT_INCOMPATIBLE,
                        "%s: step %zu has kind %d; this runtime runs graph "
                        "(%d) and eager (%d) steps",
                        l, i, kind,
                        static_cast<int>(CGRT_STEP_GRAPH),
                        static_cast<int>(CGRT_STEP_EAGER));
    bool graph = step.kind == CGRT_STEP_GRAPH;
    size_t count = graph ? p.num_graphs : p.num_eager;
    if (step.index < 0 || static_cast<size_t>(step.index) >= count)
      return makeStatus(CGRT_CORRUPT,
                        "%s: step %zu runs %s %d, but the package has %zu",
                        l, i, graph ? "graph" : "eager region",
                        static_cast<int>(step.index), count);
  }
  return nullptr;
}

cgrt_status validateAxes(const char *kind, size_t count, const int32_t *axes,
                         const cgrt_io_desc *descs, const std::string &label) {
  for (size_t i = 0; axes && i < count; ++i)
    if (axes[i] < -1 || axes[i] >= descs[i].rank)
      return makeStatus(CGRT_CORRUPT,
                        "%s: %s %zu '%s' has bucket axis %d but rank %d",
                        label.c_str(), kind, i, descs[i].name,
                        static_cast<int>(axes[i]),
                        static_cast<int>(descs[i].rank));
  return nullptr;
}

/// Every bucket: I/O tables like the package's, steps in range, ascending
/// values, its part of the arena inside the arena.
cgrt_status validateBuckets(const cgrt_package &p, const std::string &label) {
  const char *l = label.c_str();
  if (!p.bucket_dim)
    return p.num_buckets == 0
               ? nullptr
               : makeStatus(CGRT_CORRUPT, "%s: %zu buckets but no bucket dim",
                            l, p.num_buckets);
  if (p.num_buckets == 0 || !p.buckets)
    return makeStatus(CGRT_CORRUPT, "%s: bucket dim '%s' but no buckets", l,
                      p.bucket_dim);
  if (p.pad_to_bucket && (!p.input_bucket_axes || !p.output_bucket_axes))
    return makeStatus(CGRT_CORRUPT, "%s: padding without bucket axes", l);
  if (cgrt_status s = validateAxes("input", p.num_inputs, p.input_bucket_axes,
                                   p.inputs, label))
    return s;
  if (cgrt_status s = validateAxes("output", p.num_outputs,
                                   p.output_bucket_axes, p.outputs, label))
    return s;
  for (size_t b = 0; b < p.num_buckets; ++b) {
    const cgrt_bucket &bucket = p.buckets[b];
    std::string where = formatString("%s, bucket %s=%lld", l, p.bucket_dim,
                                     static_cast<long long>(bucket.value));
    if (b > 0 && bucket.value <= p.buckets[b - 1].value)
      return makeStatus(CGRT_CORRUPT, "%s: buckets are not ascending",
                        where.c_str());
    if (bucket.arena_bytes > p.arena_bytes)
      return makeStatus(CGRT_CORRUPT, "%s: uses %" PRIu64
                        " bytes of a %" PRIu64 "-byte arena",
                        where.c_str(), bucket.arena_bytes, p.arena_bytes);
    if (cgrt_status s = validateIo("input", p.num_inputs, bucket.inputs,
                                   p.arena_bytes, where))
      return s;
    if (cgrt_status s = validateIo("output", p.num_outputs, bucket.outputs,
                                   p.arena_bytes, where))
      return s;
    if (cgrt_status s =
            validateSteps(p, bucket.num_steps, bucket.steps, where))
      return s;
  }
  return nullptr;
}

/// A training step's state: each tensor inside the weights region (where
/// weights.bin gives its initial value), its update inside the arena, and
/// nothing overlapping another state.
cgrt_status validateState(const cgrt_package &p, const std::string &label) {
  const char *l = label.c_str();
  if (p.num_state == 0)
    return nullptr;
  if (!p.state)
    return makeStatus(CGRT_CORRUPT, "%s: %zu state tensors but no state table",
                      l, p.num_state);
  std::vector<cgrt_io_desc> tensors;
  for (size_t i = 0; i < p.num_state; ++i)
    tensors.push_back(p.state[i].tensor);
  if (cgrt_status s = validateIo("state tensor", tensors.size(),
                                 tensors.data(), p.arena_bytes, label))
    return s;
  for (size_t i = 0; i < p.num_state; ++i) {
    const cgrt_io_desc &t = p.state[i].tensor;
    if (hasDynamicDims(t))
      return makeStatus(CGRT_CORRUPT, "%s: state tensor %zu '%s' has a dim "
                        "of -1", l, i, t.name);
    if (t.arena_offset < p.weights_offset ||
        !fits(t.arena_offset - p.weights_offset, t.bytes, p.weights_bytes))
      return makeStatus(CGRT_CORRUPT,
                        "%s: state tensor %zu '%s' [%" PRIu64 ", +%" PRIu64
                        ") lies outside the weights region",
                        l, i, t.name, t.arena_offset, t.bytes);
    if (!fits(p.state[i].update_offset, t.bytes, p.arena_bytes))
      return makeStatus(CGRT_CORRUPT,
                        "%s: the update of state tensor %zu '%s' lies outside "
                        "the %" PRIu64 "-byte arena",
                        l, i, t.name, p.arena_bytes);
    for (size_t j = 0; j < i; ++j) {
      const cgrt_io_desc &u = p.state[j].tensor;
      if (t.arena_offset < u.arena_offset + u.bytes &&
          u.arena_offset < t.arena_offset + t.bytes)
        return makeStatus(CGRT_CORRUPT,
                          "%s: state tensors %zu '%s' and %zu '%s' overlap", l,
                          j, u.name, i, t.name);
    }
  }
  if (p.num_buckets > 0)
    return makeStatus(CGRT_CORRUPT, "%s: a training step with shape buckets",
                      l);
  return nullptr;
}

} // namespace

cgrt_status validatePackage(const cgrt_package &p, const std::string &label) {
  const char *l = label.c_str();
  if (!fits(p.weights_offset, p.weights_bytes, p.arena_bytes))
    return makeStatus(CGRT_CORRUPT,
                      "%s: weights [%" PRIu64 ", +%" PRIu64
                      ") lie outside the %" PRIu64 "-byte arena",
                      l, p.weights_offset, p.weights_bytes, p.arena_bytes);
  if (p.weights_bytes > 0 && (!p.weights_file || !*p.weights_file))
    return makeStatus(CGRT_CORRUPT,
                      "%s: %" PRIu64 " bytes of weights but no weights file",
                      l, p.weights_bytes);
  if (p.ranks < 1 || (p.ranks > 1 && (!p.rank_weights_files ||
                                      !p.rank_weights_checksums)))
    return makeStatus(CGRT_CORRUPT,
                      "%s: %d ranks without a weights file for each", l,
                      static_cast<int>(p.ranks));
  for (int32_t r = 0; p.ranks > 1 && r < p.ranks; ++r)
    if (!p.rank_weights_files[r] ||
        (p.weights_bytes > 0 && !*p.rank_weights_files[r]))
      return makeStatus(CGRT_CORRUPT, "%s: rank %d has no weights file", l,
                        static_cast<int>(r));
  if (cgrt_status s = validateIo("input", p.num_inputs, p.inputs,
                                 p.arena_bytes, label))
    return s;
  if (cgrt_status s = validateIo("output", p.num_outputs, p.outputs,
                                 p.arena_bytes, label))
    return s;
  if (p.num_kernels > 0) {
    if (!p.kernel_names)
      return makeStatus(CGRT_CORRUPT, "%s: %zu kernels but no kernel names", l,
                        p.num_kernels);
    for (size_t i = 0; i < p.num_kernels; ++i)
      if (!p.kernel_names[i] || !*p.kernel_names[i])
        return makeStatus(CGRT_CORRUPT, "%s: kernel %zu has no name", l, i);
    bool cubin = p.cubin_file && *p.cubin_file;
    bool ptx = p.ptx_file && *p.ptx_file;
    if (!cubin && !ptx)
      return makeStatus(CGRT_CORRUPT,
                        "%s: %zu kernels but neither a cubin nor a PTX file", l,
                        p.num_kernels);
  }
  if (p.num_graphs > 0 && !p.graph_builders)
    return makeStatus(CGRT_CORRUPT, "%s: %zu graphs but no graph builders", l,
                      p.num_graphs);
  for (size_t i = 0; i < p.num_graphs; ++i)
    if (!p.graph_builders[i])
      return makeStatus(CGRT_CORRUPT, "%s: graph %zu has no builder", l, i);
  if (p.num_eager > 0 && (!p.eager_runners || !p.eager_names))
    return makeStatus(CGRT_CORRUPT, "%s: %zu eager regions but no runners", l,
                      p.num_eager);
  for (size_t i = 0; i < p.num_eager; ++i)
    if (!p.eager_runners[i] || !p.eager_names[i])
      return makeStatus(CGRT_CORRUPT, "%s: eager region %zu has no runner", l,
                        i);
  if (cgrt_status s = validateSteps(p, p.num_steps, p.steps, label))
    return s;
  if (cgrt_status s = validateState(p, label))
    return s;
  return validateBuckets(p, label);
}

namespace {

struct FileCloser {
  void operator()(FILE *file) const { std::fclose(file); }
};

/// Reads all of `path` into `data` (plus `extra` zero bytes).
cgrt_status readFile(const std::string &path, const char *what,
                     const std::string &label, std::vector<char> *data,
                     size_t extra = 0, int64_t expectedSize = -1) {
  std::unique_ptr<FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file)
    return makeStatus(CGRT_NOT_FOUND, "%s: cannot open the %s '%s': %s",
                      label.c_str(), what, path.c_str(), std::strerror(errno));
  struct stat info;
  if (fstat(fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode))
    return makeStatus(CGRT_NOT_FOUND, "%s: the %s '%s' is not a regular file",
                      label.c_str(), what, path.c_str());
  uint64_t size = static_cast<uint64_t>(info.st_size);
  if (expectedSize >= 0 && size != static_cast<uint64_t>(expectedSize))
    return makeStatus(CGRT_CORRUPT,
                      "%s: the %s '%s' is %" PRIu64
                      " bytes, but the package expects %" PRId64
                      " bytes (the file is truncated, corrupt or from another "
                      "build)",
                      label.c_str(), what, path.c_str(), size, expectedSize);
  data->assign(static_cast<size_t>(size) + extra, '\0');
  size_t done = size ? std::fread(data->data(), 1, size, file.get()) : 0;
  if (done != size)
    return makeStatus(CGRT_CORRUPT,
                      "%s: reading the %s '%s' gave %zu of %" PRIu64
                      " bytes",
                      label.c_str(), what, path.c_str(), done, size);
  return nullptr;
}

} // namespace

cgrt_status readWeights(const std::string &dir, const cgrt_package &p,
                        const std::string &label, int32_t rank,
                        std::vector<char> *weights) {
  bool split = p.ranks > 1;
  const char *file = split ? p.rank_weights_files[rank] : p.weights_file;
  uint64_t expected = split ? p.rank_weights_checksums[rank]
                            : p.weights_checksum;
  if (!file || !*file)
    return nullptr;
  std::string path = joinPath(dir, file);
  if (cgrt_status s = readFile(path, "weights file", label, weights, 0,
                               static_cast<int64_t>(p.weights_bytes)))
    return s;
  uint64_t checksum = fnv1a64(weights->data(), weights->size());
  if (checksum != expected)
    return makeStatus(CGRT_CORRUPT,
                      "%s: the weights file '%s' has FNV-1a 64 checksum "
                      "0x%016" PRIx64 ", but the package expects 0x%016" PRIx64
                      " (the file is corrupt or from another build)",
                      label.c_str(), path.c_str(), checksum, expected);
  return nullptr;
}

cgrt_status readPackageFiles(const std::string &dir, const cgrt_package &p,
                             const std::string &label, int32_t rank,
                             PackageFiles *files) {
  if (cgrt_status s = readWeights(dir, p, label, rank, &files->weights))
    return s;
  if (p.num_kernels == 0)
    return nullptr;
  bool hasCubin = p.cubin_file && *p.cubin_file;
  bool hasPtx = p.ptx_file && *p.ptx_file;
  if (hasCubin) {
    files->cubinPath = joinPath(dir, p.cubin_file);
    // NUL-terminated too: cuModuleLoadData takes any image it does not
    // recognize for PTX text, and must not read past a corrupt file's end.
    if (cgrt_status s = readFile(files->cubinPath, "cubin", label,
                                 &files->cubin, /*extra=*/1)) {
      // Not fatal while there is a PTX file to fall back on.
      files->cubinError = cgrt_status_get_message(s);
      files->cubin.clear();
      cgrt_status_free(s);
      if (!hasPtx)
        return makeStatusString(CGRT_NOT_FOUND, files->cubinError);
    }
  }
  if (hasPtx) {
    files->ptxPath = joinPath(dir, p.ptx_file);
    if (cgrt_status s = readFile(files->ptxPath, "PTX file", label,
                                 &files->ptx, /*extra=*/1)) {
      files->ptx.clear();
      std::string message = cgrt_status_get_message(s);
      cgrt_status_code code = cgrt_status_get_code(s);
      cgrt_status_free(s);
      if (files->cubin.empty())
        return makeStatusString(code, files->cubinError.empty()
                                          ? message
                                          : files->cubinError + "; " + message);
      // The cubin may do without it.
    }
  }
  return nullptr;
}

} // namespace cgrt
