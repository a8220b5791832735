//===- Status.cpp - cgrt_status ---------------------------------*- C++ -*-===//

#include "Status.h"

#include <cstdarg>
#include <cstdio>
#include <new>

namespace {
// Returned when the status itself cannot be allocated; never freed.
cgrt_status_t outOfMemoryStatus{CGRT_OUT_OF_MEMORY,
                                "out of host memory (while reporting an error)"};

std::string vformat(const char *format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (length <= 0)
    return std::string();
  std::string result(static_cast<size_t>(length) + 1, '\0');
  std::vsnprintf(&result[0], result.size(), format, args);
  result.resize(static_cast<size_t>(length));
  return result;
}
} // namespace

namespace cgrt {

std::string formatString(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string result = vformat(format, args);
  va_end(args);
  return result;
}

cgrt_status makeStatusString(cgrt_status_code code, std::string message) {
  if (code == CGRT_OK)
    return nullptr;
  try {
    auto *status = new (std::nothrow) cgrt_status_t{code, std::move(message)};
    return status ? status : &outOfMemoryStatus;
  } catch (...) {
    return &outOfMemoryStatus;
  }
}

cgrt_status makeStatus(cgrt_status_code code, const char *format, ...) {
  if (code == CGRT_OK)
    return nullptr;
  try {
    va_list args;
    va_start(args, format);
    std::string message = vformat(format, args);
    va_end(args);
    return makeStatusString(code, std::move(message));
  } catch (...) {
    return &outOfMemoryStatus;
  }
}

cgrt_status annotate(cgrt_status status, const std::string &prefix) {
  if (!status || status == &outOfMemoryStatus)
    return status;
  try {
    status->message = prefix + ": " + status->message;
  } catch (...) {
    // Keep the original message.
  }
  return status;
}

} // namespace cgrt

extern "C" {

cgrt_status_code cgrt_status_get_code(cgrt_status status) {
  return status ? status->code : CGRT_OK;
}

const char *cgrt_status_get_message(cgrt_status status) {
  return status ? status->message.c_str() : "";
}

void cgrt_status_free(cgrt_status status) {
  if (status && status != &outOfMemoryStatus)
    delete status;
}

} // extern "C"
