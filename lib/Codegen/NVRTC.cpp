//===- NVRTC.cpp - compile generated kernels with NVRTC -------------------===//

#include "cgc/Codegen/NVRTC.h"

#include <nvrtc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

/// Runs one NVRTC compilation; `getOutput` extracts the image.
template <typename SizeFn, typename GetFn>
bool runNVRTC(const std::string &source, const std::string &name,
              const std::string &archFlag, SizeFn size, GetFn get,
              std::string &output, std::string &error) {
  nvrtcProgram program;
  nvrtcResult status = nvrtcCreateProgram(&program, source.c_str(),
                                          name.c_str(), 0, nullptr, nullptr);
  if (status != NVRTC_SUCCESS) {
    error = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(status);
    return false;
  }
  std::vector<const char *> options = {archFlag.c_str(), "-std=c++17",
                                       "-default-device", "-lineinfo"};
  status = nvrtcCompileProgram(program, (int)options.size(), options.data());
  if (status != NVRTC_SUCCESS) {
    size_t logSize = 0;
    nvrtcGetProgramLogSize(program, &logSize);
    std::string log(logSize, '\0');
    nvrtcGetProgramLog(program, log.data());
    error = std::string("NVRTC failed to compile ") + name + " (" + archFlag +
            "): " + nvrtcGetErrorString(status) + "\n" + log;
    nvrtcDestroyProgram(&program);
    return false;
  }
  size_t bytes = 0;
  size(program, &bytes);
  output.assign(bytes, '\0');
  get(program, output.data());
  nvrtcDestroyProgram(&program);
  return true;
}

/// Test hook: CGC_FAULT containing "nvrtc" makes the source fail to compile
/// (an #error line), so the whole failure path runs as for a real error.
std::string withInjectedFault(const std::string &source) {
  const char *fault = std::getenv("CGC_FAULT");
  if (!fault || !std::strstr(fault, "nvrtc"))
    return source;
  return source + "\n#error \"fault injected by CGC_FAULT=nvrtc\"\n";
}

} // namespace

bool cgc::compileWithNVRTC(const std::string &kernelSource,
                           const std::string &name, const std::string &arch,
                           CompiledModule &out, std::string &error) {
  std::string source = withInjectedFault(kernelSource);
  std::string compute = "compute_" + arch.substr(arch.find('_') + 1);
  if (!runNVRTC(source, name, "-arch=" + arch, nvrtcGetCUBINSize, nvrtcGetCUBIN,
                out.cubin, error))
    return false;
  if (!runNVRTC(source, name, "-arch=" + compute, nvrtcGetPTXSize, nvrtcGetPTX,
                out.ptx, error))
    return false;
  // The PTX size counts its terminating NUL; keep the text only.
  while (!out.ptx.empty() && out.ptx.back() == '\0')
    out.ptx.pop_back();
  return true;
}
