//===- ProtoLoader.cpp - read ONNX protobufs, catching exceptions ---------===//
//
// Built with -fexceptions: the only file that may see a C++ exception.
//
//===----------------------------------------------------------------------===//

#include "ProtoLoader.h"

#include "cgc/Import/ProtoIO.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include <fcntl.h>
#include <signal.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define CGC_HAS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CGC_HAS_SANITIZER 1
#endif
#ifdef CGC_HAS_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

namespace {
bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool readWholeFile(const std::string &path, std::string &bytes,
                   std::string &error) {
  std::string reason;
  if (cgc::readFileBytes(path, bytes, &reason))
    return true;
  error = "cannot open file: " + reason;
  return false;
}

/// libonnx's text parser recurses once per nested bracket (subgraphs,
/// sequence types, ...) and overflows the stack a few thousand levels down.
/// Real models nest a few dozen levels.
constexpr int kMaxTextNesting = 256;

/// Deepest nesting of (), [] and {} outside strings and comments.
int textNesting(const std::string &text) {
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

bool parseText(const std::string &text, onnx::ModelProto &model,
               std::string &error) {
  if (textNesting(text) > kMaxTextNesting) {
    error = "malformed ONNX text: brackets nested more than " +
            std::to_string(kMaxTextNesting) + " deep";
    return false;
  }
  onnx::OnnxParser parser(text.c_str());
  onnx::Common::Status status = parser.Parse(model);
  if (!status.IsOK()) {
    error = "malformed ONNX text: " + status.ErrorMessage();
    return false;
  }
  return true;
}

bool parseBinary(const std::string &bytes, onnx::ModelProto &model,
                 std::string &error) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    error = "file is larger than the 2 GiB protobuf limit (use external data)";
    return false;
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "not a valid ONNX model protobuf (truncated or malformed)";
    return false;
  }
  if (!model.has_graph()) {
    error = "the protobuf holds no graph (is this an ONNX model?)";
    return false;
  }
  return true;
}
} // namespace

bool cgc::loadModelProto(const std::string &path, onnx::ModelProto &model,
                         std::string &error) {
  return catchingExceptions(error, "failed to read the model: ", [&] {
    std::string bytes;
    if (!readWholeFile(path, bytes, error))
      return false;
    return parseModelProto(bytes, path, model, error);
  });
}

bool cgc::parseModelProto(const std::string &bytes, const std::string &name,
                          onnx::ModelProto &model, std::string &error) {
  return catchingExceptions(error, "failed to read the model: ", [&] {
    if (endsWith(name, ".onnxtxt"))
      return parseText(bytes, model, error);
    return parseBinary(bytes, model, error);
  });
}

namespace {
/// The upgrade proper; throws on failure.
onnx::ModelProto upgradeOrThrow(const onnx::ModelProto &model,
                                int targetOpset) {
  // Shape inference and the converter trust their input, so only models
  // that pass the ONNX checker go in.
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    throw std::runtime_error(std::string("the ONNX checker rejects it: ") +
                             e.what());
  }
  // The converter's adapters need the shapes of the values they touch.
  onnx::ModelProto inferred = model;
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception &) {
    inferred = model; // best effort: convert without the shapes
  }
  return onnx::version_conversion::ConvertVersion(inferred, targetOpset);
}

void writeAll(int fd, const std::string &bytes) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += n;
  }
}

std::string readAll(int fd) {
  std::string bytes;
  char buffer[65536];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return bytes;
    bytes.append(buffer, n);
  }
}

/// Seconds the converter may take before it counts as hung.
constexpr unsigned kConverterSeconds = 120;
} // namespace

bool cgc::upgradeOpset(onnx::ModelProto &model, int targetOpset,
                       std::string &error) {
  // The checker lets an undefined output of the main graph through, on
  // which the converter dereferences null.
  std::unordered_set<std::string> defined;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    defined.insert(input.name());
  for (const onnx::TensorProto &init : model.graph().initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : model.graph().node())
    defined.insert(node.output().begin(), node.output().end());
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    if (!defined.count(output.name())) {
      error = "graph output '" + output.name() +
              "' is not produced by any node";
      return false;
    }
  }
  // libonnx 1.12's checker, shape inference and converter are not hardened
  // against malformed models: the Gemm 6->7 adapter reads past the end of a
  // rank-1 input's dims, which the fuzzer turned into wild allocations. So
  // they run in a child process (with its stderr closed and a time limit)
  // that sends back the upgraded model or the error text; a crash or a hang
  // there is an error here. Only old-opset models take this path.
  int fds[2];
  if (pipe(fds) != 0) {
    error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("cannot fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    int devNull = open("/dev/null", O_WRONLY);
    if (devNull >= 0)
      dup2(devNull, STDERR_FILENO);
    // A crash in here is reported by the parent; the handlers inherited
    // from a fuzzing or sanitizer build would also record it as the
    // fuzzer's own crash.
    for (int sig : {SIGALRM, SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE,
                    SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGXFSZ})
      signal(sig, SIG_DFL);
#ifdef CGC_HAS_SANITIZER
    __sanitizer_set_death_callback(nullptr);
#endif
    alarm(kConverterSeconds);
    std::string reply;
    try {
      reply = "M" + upgradeOrThrow(model, targetOpset).SerializeAsString();
    } catch (const std::exception &e) {
      reply = std::string("E") + e.what();
    } catch (...) {
      reply = "Eunknown exception";
    }
    writeAll(fds[1], reply);
    _exit(0);
  }
  close(fds[1]);
  std::string reply = readAll(fds[0]);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    error = std::string("the ONNX version converter crashed (") +
            strsignal(WTERMSIG(status)) + ")";
    return false;
  }
  if (reply.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = "the ONNX version converter failed without a message";
    return false;
  }
  if (reply[0] != 'M') {
    error = reply.substr(1);
    return false;
  }
  onnx::ModelProto upgraded;
  if (reply.size() - 1 > (size_t)std::numeric_limits<int>::max() ||
      !upgraded.ParseFromArray(reply.data() + 1, (int)(reply.size() - 1))) {
    error = "the ONNX version converter returned a malformed model";
    return false;
  }
  model = std::move(upgraded);
  return true;
}

namespace {

/// The ONNX type of a numpy dtype string ('<f4', '|b1', ...), or 0.
int onnxTypeOfNpyDescr(const std::string &descr) {
  static const std::pair<const char *, int> table[] = {
      {"<f4", onnx::TensorProto::FLOAT},   {"<f8", onnx::TensorProto::DOUBLE},
      {"<f2", onnx::TensorProto::FLOAT16}, {"<i8", onnx::TensorProto::INT64},
      {"<i4", onnx::TensorProto::INT32},   {"<i2", onnx::TensorProto::INT16},
      {"|i1", onnx::TensorProto::INT8},    {"|u1", onnx::TensorProto::UINT8},
      {"<u2", onnx::TensorProto::UINT16},  {"<u4", onnx::TensorProto::UINT32},
      {"<u8", onnx::TensorProto::UINT64},  {"|b1", onnx::TensorProto::BOOL}};
  for (const auto &[name, type] : table)
    if (descr == name)
      return type;
  return 0;
}

/// The value of `key` in a .npy header dict ("{'descr': '<f4', ...}"): the
/// text after "'key':" up to the next top-level comma.
std::string npyHeaderField(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "':");
  if (at == std::string::npos)
    return "";
  size_t begin = at + key.size() + 3, end = begin;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if ((c == ',' && depth == 0) || c == '}')
      break;
  }
  std::string value = header.substr(begin, end - begin);
  size_t first = value.find_first_not_of(" '"),
         last = value.find_last_not_of(" '");
  return first == std::string::npos ? "" : value.substr(first, last - first + 1);
}

/// A .npy file (format 1.0 to 3.0) as a TensorProto with raw_data.
bool npyToTensorProto(const std::string &bytes, onnx::TensorProto &tensor,
                      std::string &error) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    error = "not a .npy file";
    return false;
  }
  int major = static_cast<unsigned char>(bytes[6]);
  size_t lengthBytes = major == 1 ? 2 : 4, headerLength = 0;
  if (bytes.size() < 8 + lengthBytes) {
    error = "truncated .npy header";
    return false;
  }
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (major < 1 || major > 3 || dataStart > bytes.size()) {
    error = "truncated or unknown .npy header";
    return false;
  }
  std::string header = bytes.substr(8 + lengthBytes, headerLength);
  std::string descr = npyHeaderField(header, "descr");
  int type = onnxTypeOfNpyDescr(descr);
  if (!type) {
    error = "unsupported .npy dtype '" + descr +
            "' (little-endian numbers or bool)";
    return false;
  }
  if (npyHeaderField(header, "fortran_order") != "False") {
    error = "a Fortran-order .npy array (save it with numpy's C order)";
    return false;
  }
  std::string shape = npyHeaderField(header, "shape");
  tensor.set_data_type(type);
  // Sizes are checked against the data, so a hostile shape cannot overflow.
  uint64_t bytesNeeded = std::stoull(descr.substr(2));
  size_t pos = shape.find_first_of("0123456789");
  while (pos != std::string::npos) {
    size_t end = shape.find_first_not_of("0123456789", pos);
    std::string digits = shape.substr(pos, end - pos);
    uint64_t dim = digits.size() > 18 ? 0 : std::stoull(digits);
    if (digits.size() > 18 ||
        __builtin_mul_overflow(bytesNeeded, dim, &bytesNeeded)) {
      error = "the .npy shape " + shape + " is too large";
      return false;
    }
    tensor.add_dims(static_cast<int64_t>(dim));
    pos = end == std::string::npos ? end : shape.find_first_of("0123456789", end);
  }
  if (bytes.size() - dataStart != bytesNeeded) {
    error = "the .npy data holds " + std::to_string(bytes.size() - dataStart) +
            " bytes, its shape needs " + std::to_string(bytesNeeded);
    return false;
  }
  tensor.set_raw_data(bytes.substr(dataStart));
  return true;
}

} // namespace

bool cgc::loadTensorProto(const std::string &path, onnx::TensorProto &tensor,
                          std::string &error) {
  return catchingExceptions(error, "", [&] {
    std::string bytes;
    if (!readWholeFile(path, bytes, error))
      return false;
    if (endsWith(path, ".npy"))
      return npyToTensorProto(bytes, tensor, error);
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      error = "not a valid TensorProto file";
      return false;
    }
    return true;
  });
}
