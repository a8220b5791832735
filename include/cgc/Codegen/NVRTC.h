//===- NVRTC.h - compile generated kernels without a GPU --------*- C++ -*-===//

#ifndef CGC_CODEGEN_NVRTC_H
#define CGC_CODEGEN_NVRTC_H

#include <string>

namespace cgc {

struct CompiledModule {
  std::string cubin; // machine code for `arch`
  std::string ptx;   // the same module as PTX, for other GPUs (JIT)
};

/// Compiles CUDA C++ `source` with NVRTC for `arch` (e.g. "sm_90"). Returns
/// false and fills `error` (with NVRTC's log) on failure.
bool compileWithNVRTC(const std::string &source, const std::string &name,
                      const std::string &arch, CompiledModule &out,
                      std::string &error);

} // namespace cgc

#endif // CGC_CODEGEN_NVRTC_H
