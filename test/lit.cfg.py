# -*- Python -*-
# lit configuration for cgc's regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "CGC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "explain.test.onnxtxt", "eager-region.test.onnxtxt",
                   "reduce-fusion.test.onnxtxt",
                   "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cgc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%cgc_src", config.cgc_src_root))
config.substitutions.append(("%cgc_obj", config.cgc_obj_root))
config.substitutions.append(("%cgc_tools_dir", config.cgc_tools_dir))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%onnx_testdata", config.onnx_testdata_dir))
config.substitutions.append(("%shared_models", config.shared_models_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.cgc_tools_dir, config.llvm_tools_dir]
tools = ["cgc", "cgc-opt", "cgc-unit-tests", "cgrt-tests", "cgc-run",
         "cgrt-stress", "split-file", "not", "count", "cgc-interp",
         "cgc-conformance", "cgc-fuzz-replay"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if os.path.isdir(config.onnx_testdata_dir):
    config.available_features.add("onnx-testdata")
if os.path.isdir(config.shared_models_dir):
    config.available_features.add("shared-models")


def _has_cuda_gpu():
    """A CUDA driver that initializes and sees a device: tests that run on
    the GPU say `REQUIRES: cuda-gpu` and are UNSUPPORTED elsewhere."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return (cuda.cuInit(0) == 0 and
            cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and
            count.value > 0)


if _has_cuda_gpu():
    config.available_features.add("cuda-gpu")
