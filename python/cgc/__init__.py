"""cgc: compile ONNX models to explicitly built CUDA graphs, and run them.

    import cgc
    cgc.compile("model.onnx", "pkg", shapes={"x": (1, 512)})
    model = cgc.load("pkg")              # device 0
    y = model(x)                         # numpy in -> numpy out
    y = model(x_cuda)                    # torch CUDA tensor in -> torch out
    outs = model.run({"x": x})           # {output name: array}
    print(model.benchmark(200, 2000))    # median/p99/mean us, launches
    cgc.compare(outs, reference)         # max abs / rel. L2 per output

    sess = cgc.InferenceSession("model.onnx")    # as with onnxruntime
    y, = sess.run(None, {"x": x})

    # from PyTorch (torch's ONNX exporter, cgc, a package cache)
    graphed = cgc.make_graphed_callables(module.eval(), (x_cuda,))
    compiled = torch.compile(module.eval(), backend="cgc", dynamic=False)

Pure Python: the compiler is run as a program and the runtime libcgrt is
used through ctypes; `pip install ./python` bundles both from the build tree
(else: $CGC_BINARY, $CGC_RUNTIME_LIB, the source tree's build/, PATH). See
docs/python.md for the stream semantics of CUDA tensors.
"""

from ._accuracy import (BOUNDS, Accuracy, AccuracyError, check_accuracy,
                        compare)
from ._compiler import PRECISIONS, compile, find_compiler
from ._errors import (CompileError, CorruptError, CudaError, Error,
                      IncompatibleError, InternalError, InvalidArgumentError,
                      NoDeviceError, NotFoundError, OutOfMemoryError,
                      RankFailedError, RuntimeError, StatusCode)
from ._runtime import (BenchmarkResult, Model, TensorInfo,
                       find_runtime_library, load, package_info)
from ._distributed import Communicator
from ._session import InferenceSession, NodeArg
from ._torch import cache_dir, make_graphed_callables
from ._dynamo import FallbackWarning, dynamo_report

__version__ = "0.1.0"

__all__ = [
    "compile", "load", "package_info", "find_compiler", "find_runtime_library",
    "Model", "TensorInfo", "BenchmarkResult", "PRECISIONS", "StatusCode",
    "Error", "CompileError", "RuntimeError", "InvalidArgumentError",
    "NotFoundError", "IncompatibleError", "CorruptError", "NoDeviceError",
    "CudaError", "OutOfMemoryError", "InternalError", "__version__",
    "compare", "check_accuracy", "Accuracy", "AccuracyError", "BOUNDS",
    "InferenceSession", "NodeArg", "make_graphed_callables", "cache_dir",
    "dynamo_report", "FallbackWarning", "Communicator", "RankFailedError",
]
