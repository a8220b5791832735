"""cgc: compile ONNX models to explicitly built CUDA graphs, and run them.

    import cgc
    cgc.compile("model.onnx", "pkg", shapes={"x": (1, 512)})
    model = cgc.load("pkg")              # device 0
    y = model(x)                         # numpy in -> numpy out
    y = model(x_cuda)                    # torch CUDA tensor in -> torch out
    outs = model.run({"x": x})           # {output name: array}
    print(model.benchmark(200, 2000))    # median/p99/mean us, launches
    cgc.compare(outs, reference)         # max abs / rel. L2 per output

Pure Python: the compiler is run as a program (build/bin/cgc, $CGC_BINARY
or PATH) and the runtime libcgrt is used through ctypes ($CGC_RUNTIME_LIB,
cgc/lib/libcgrt.so next to this package, or the build tree). See
docs/python.md for the stream semantics of CUDA tensors.
"""

from ._accuracy import (BOUNDS, Accuracy, AccuracyError, check_accuracy,
                        compare)
from ._compiler import PRECISIONS, compile, find_compiler
from ._errors import (CompileError, CorruptError, CudaError, Error,
                      IncompatibleError, InternalError, InvalidArgumentError,
                      NoDeviceError, NotFoundError, OutOfMemoryError,
                      RuntimeError, StatusCode)
from ._runtime import (BenchmarkResult, Model, TensorInfo,
                       find_runtime_library, load, package_info)

__version__ = "0.1.0"

__all__ = [
    "compile", "load", "package_info", "find_compiler", "find_runtime_library",
    "Model", "TensorInfo", "BenchmarkResult", "PRECISIONS", "StatusCode",
    "Error", "CompileError", "RuntimeError", "InvalidArgumentError",
    "NotFoundError", "IncompatibleError", "CorruptError", "NoDeviceError",
    "CudaError", "OutOfMemoryError", "InternalError", "__version__",
    "compare", "check_accuracy", "Accuracy", "AccuracyError", "BOUNDS",
]
