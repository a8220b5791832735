//===- FaultSpec.h - The fault-injection spec of test hooks ----*- C++ -*-===//
//
// "call[:skip[:code]]" entries separated by commas, e.g. "cuModuleLoadData"
// or "cuMemAlloc:0:2": the call whose (skip+1)-th use fails with `code`
// (CUDA_ERROR_UNKNOWN by default). The runtime reads it from $CGRT_FAULT
// (Testing.h) and the stub driver from $CGRT_STUB_FAULT; header-only, since
// the stub links nothing of libcgrt.
//
//===----------------------------------------------------------------------===//

#ifndef CGRT_FAULTSPEC_H
#define CGRT_FAULTSPEC_H

#include <cuda.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace cgrt {

struct FaultSpec {
  std::string call;
  unsigned skip = 0;
  CUresult code = CUDA_ERROR_UNKNOWN;
};

/// The entries of `spec` (empty entries ignored; numbers that do not parse
/// read as 0, as strtoul does).
inline std::vector<FaultSpec> parseFaultSpecs(const std::string &spec) {
  std::vector<FaultSpec> faults;
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos)
      end = spec.size();
    std::string item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty())
      continue;
    FaultSpec fault{item};
    size_t colon = item.find(':');
    if (colon != std::string::npos) {
      fault.call = item.substr(0, colon);
      std::string rest = item.substr(colon + 1);
      fault.skip =
          static_cast<unsigned>(std::strtoul(rest.c_str(), nullptr, 10));
      size_t colon2 = rest.find(':');
      if (colon2 != std::string::npos)
        fault.code = static_cast<CUresult>(
            std::strtol(rest.c_str() + colon2 + 1, nullptr, 10));
    }
    faults.push_back(fault);
  }
  return faults;
}

} // namespace cgrt

#endif // CGRT_FAULTSPEC_H
