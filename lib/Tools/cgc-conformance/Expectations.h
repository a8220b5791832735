//===- Expectations.h - expected statuses of conformance tests --*- C++ -*-===//
//
// test/conformance/expected.txt (the interpreter) and gpu-expected.txt (the
// GPU path) hold one line per test, `suite/test STATUS [KIND]  # reason`,
// STATUS being PASS, FAIL or UNSUPPORTED and KIND where a test that does
// not pass stopped (import, run, mismatch, ...; the interpreter's file has
// it, the GPU's does not). A run is compared with them exactly: a changed
// status (FAIL <-> UNSUPPORTED included) or kind, a test on disk without a
// line and a line naming no test on disk all fail the run.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_TOOLS_CGC_CONFORMANCE_EXPECTATIONS_H
#define CGC_LIB_TOOLS_CGC_CONFORMANCE_EXPECTATIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cgc::conformance {

struct Expected {
  std::string status; ///< PASS, FAIL or UNSUPPORTED
  std::string kind;   ///< empty when the line gives none
  std::string reason;
};

struct ExpectationFile {
  std::map<std::string, Expected> entries; ///< by suite/test
  /// The text after `# recorded at ` of a header line, if there is one
  /// (gpu-expected.txt: the commit, the GPU and the date of the run).
  std::string recordedAt;
};

/// Reads `path`; blank and `#` lines are skipped. A malformed line, an
/// unknown status or a test listed twice is an error.
bool readExpectations(llvm::StringRef path, ExpectationFile &file,
                     std::string &error);

/// Writes `entries` to `path` under `header` (comment lines).
bool writeExpectations(llvm::StringRef path, llvm::StringRef header,
                       const std::map<std::string, Expected> &entries,
                       std::string &error);

/// One run's result of a test.
struct Observed {
  std::string id, status, kind, reason;
};

/// Compares `observed` with `expected`: every test run must have a line
/// with its status (and its kind, where the line gives one), and every line for which `selected` holds (its suite
/// was run and it passes the filter) must name a test that was run.
/// Prints one line per difference to `os` and returns their number.
int compareExpectations(
    const std::vector<Observed> &observed,
    const std::map<std::string, Expected> &expected,
    const std::function<bool(llvm::StringRef)> &selected,
    llvm::StringRef expectedPath, llvm::raw_ostream &os);

} // namespace cgc::conformance

#endif // CGC_LIB_TOOLS_CGC_CONFORMANCE_EXPECTATIONS_H
