//===- Expectations.cpp - expected statuses of the conformance tests ------===//

#include "Expectations.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace cgc::conformance;

bool cgc::conformance::readExpectations(StringRef path, ExpectationFile &file,
                                        std::string &error) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = "cannot read '" + path.str() + "'";
    return false;
  }
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [n, line] : enumerate(lines)) {
    std::string where = path.str() + ":" + std::to_string(n + 1) + ": ";
    auto [body, comment] = line.split('#');
    body = body.trim();
    if (body.empty()) {
      StringRef text = comment.trim();
      if (text.consume_front("recorded at "))
        file.recordedAt = text.str();
      continue;
    }
    SmallVector<StringRef> fields;
    body.split(fields, ' ', -1, /*KeepEmpty=*/false);
    if (fields.size() < 2 || fields.size() > 3 ||
        !is_contained({"PASS", "FAIL", "UNSUPPORTED"}, fields[1])) {
      error = where +
              "expected 'suite/test PASS|FAIL|UNSUPPORTED [KIND]  # reason'";
      return false;
    }
    std::string kind = fields.size() == 3 ? fields[2].str() : "";
    auto [it, inserted] = file.entries.try_emplace(
        fields[0].str(),
        Expected{fields[1].str(), kind, comment.trim().str()});
    if (!inserted) {
      error = where + fields[0].str() + " is listed twice";
      return false;
    }
  }
  return true;
}

bool cgc::conformance::writeExpectations(
    StringRef path, StringRef header,
    const std::map<std::string, Expected> &entries, std::string &error) {
  std::error_code ec;
  raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return false;
  }
  os << header;
  for (const auto &[id, entry] : entries) {
    os << id << " " << entry.status;
    if (!entry.kind.empty())
      os << " " << entry.kind;
    if (!entry.reason.empty())
      os << "  # " << entry.reason;
    os << "\n";
  }
  return true;
}

int cgc::conformance::compareExpectations(
    const std::vector<Observed> &observed,
    const std::map<std::string, Expected> &expected,
    const std::function<bool(StringRef)> &selected, StringRef expectedPath,
    raw_ostream &os) {
  int differences = 0;
  std::map<std::string, const Observed *> run;
  for (const Observed &o : observed) {
    run[o.id] = &o;
    auto it = expected.find(o.id);
    if (it == expected.end()) {
      ++differences;
      os << "conformance: missing: " << o.id << " (" << o.status
         << ") has no line in " << expectedPath << "\n";
      continue;
    }
    const Expected &e = it->second;
    if (e.status == o.status && (e.kind.empty() || e.kind == o.kind))
      continue;
    ++differences;
    auto show = [](StringRef status, StringRef kind) {
      return kind.empty() ? status.str() : (status + " " + kind).str();
    };
    os << "conformance: changed: " << o.id << " "
       << show(e.status, e.kind) << " -> "
       << show(o.status, e.kind.empty() ? "" : o.kind);
    if (!o.reason.empty())
      os << ": " << o.reason;
    os << "\n";
  }
  for (const auto &[id, entry] : expected) {
    if (run.count(id) || !selected(id))
      continue;
    ++differences;
    os << "conformance: stale: " << id << " (" << entry.status << ") in "
       << expectedPath << " is not a test on disk\n";
  }
  return differences;
}
