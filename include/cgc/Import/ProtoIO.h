//===- ProtoIO.h - file bytes and exceptions around libonnx -----*- C++ -*-===//
//
// libonnx and protobuf may throw, and the compiler is built without
// exceptions, so only two files call into them: the importer's
// lib/Import/ONNX/ProtoLoader.cpp and the runner's
// lib/Interpreter/Runner/TensorProtoIO.cpp, both built with -fexceptions.
// These are the pieces they share (the runner's .npy writer uses the file
// helpers too). catchingExceptions may be used only in a file built with
// -fexceptions.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_IMPORT_PROTOIO_H
#define CGC_IMPORT_PROTOIO_H

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cgc {

/// Reads the whole file at `path` into `bytes`; false when it cannot be
/// opened, with the system's reason in `reason` ("No such file or
/// directory"); each caller words the rest of its message.
inline bool readFileBytes(const std::string &path, std::string &bytes,
                          std::string *reason = nullptr) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    if (reason)
      *reason = "it is a directory";
    return false;
  }
  errno = 0;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    if (reason)
      *reason = errno ? std::strerror(errno) : "it cannot be read";
    return false;
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  bytes = buffer.str();
  return true;
}

/// Writes `bytes` to the file at `path`; on failure sets `error` and
/// returns false.
inline bool writeFileBytes(const std::string &path, const std::string &bytes,
                           std::string &error) {
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), bytes.size());
  if (!file) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

// Absent where exceptions are off, so that a file built without them cannot
// call it (and can still include the file helpers above).
#ifdef __cpp_exceptions
/// Returns fn() (true on success); an exception thrown inside it becomes
/// `error` = prefix + its message, and false.
template <typename Fn>
bool catchingExceptions(std::string &error, const std::string &prefix,
                        Fn &&fn) {
  try {
    return fn();
  } catch (const std::exception &e) {
    error = prefix + e.what();
  } catch (...) {
    error = prefix + "unknown exception";
  }
  return false;
}
#endif // __cpp_exceptions

} // namespace cgc

#endif // CGC_IMPORT_PROTOIO_H
