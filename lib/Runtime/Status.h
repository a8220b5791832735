//===- Status.h - cgrt_status construction ----------------------*- C++ -*-===//
//
// The runtime reports every failure as a heap-allocated cgrt_status carrying a
// code and a message. These helpers build them printf-style; they never throw
// and never return NULL for a failure (an allocation failure yields a static
// out-of-memory status that cgrt_status_free ignores).
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_RUNTIME_STATUS_H
#define CGRT_RUNTIME_STATUS_H

#include "cgrt/cgrt.h"

#include <string>

struct cgrt_status_t {
  cgrt_status_code code;
  std::string message;
};

namespace cgrt {

#if defined(__GNUC__)
#define CGRT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CGRT_PRINTF(fmt, args)
#endif

/// A status with `code` and the formatted message. CGRT_OK gives NULL.
cgrt_status makeStatus(cgrt_status_code code, const char *format, ...)
    CGRT_PRINTF(2, 3);

/// A status with `code` and `message` as is.
cgrt_status makeStatusString(cgrt_status_code code, std::string message);

/// Prepends "`prefix`: " to the message of `status` (no-op for NULL).
cgrt_status annotate(cgrt_status status, const std::string &prefix);

/// printf into a std::string.
std::string formatString(const char *format, ...) CGRT_PRINTF(1, 2);

/// Runs `body` (returning cgrt_status) and turns any escaping C++ exception
/// into a status, so no exception crosses the C API.
template <typename Fn> cgrt_status guardApi(const char *function, Fn &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return makeStatus(CGRT_OUT_OF_MEMORY, "%s: out of host memory", function);
  } catch (const std::exception &e) {
    return makeStatus(CGRT_INTERNAL, "%s: internal error: %s", function,
                      e.what());
  } catch (...) {
    return makeStatus(CGRT_INTERNAL, "%s: internal error", function);
  }
}

} // namespace cgrt

#endif // CGRT_RUNTIME_STATUS_H
