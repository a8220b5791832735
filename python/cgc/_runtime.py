"""cgc.load and cgc.Model: libcgrt's C API (include/cgrt/cgrt.h) over ctypes,
with a native call path (lib/Bindings/Python/NativeRunner.cpp) for torch
CUDA tensors.

Stream semantics (see also docs/python.md):
- With torch outputs on the GPU (the default when an input is a torch
  tensor) a call behaves like a torch op: the inference is enqueued on
  torch's *current* stream of the model's device (cgrt_model_run_async) and
  the call returns without waiting. Work queued on that stream before the
  call is finished first; the outputs may be used on it at once; other
  streams need the usual event or `wait_stream`. `synchronize=True` makes
  the call wait for the outputs. Inside a `torch.cuda.graph` capture the
  model's graphs become child graphs of the captured one.
- With numpy (or "torch_cpu") outputs the call returns once the outputs are
  complete. Device inputs must then be ready: for a torch CUDA tensor
  torch's current stream is synchronized first; for any other object with
  `__cuda_array_interface__` the stream it names (version 3) is.
"""

import ctypes
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import _paths
from ._errors import (CorruptError, InvalidArgumentError, NotFoundError,
                      StatusCode, error_for)

__all__ = ["load", "Model", "TensorInfo", "BenchmarkResult",
           "find_runtime_library", "package_info"]

MAX_RANK = 8
# Model.warm_up stops after this long: a large model needs fewer calls.
_WARM_UP_SECONDS = 0.05
MEMORY_HOST, MEMORY_DEVICE = 0, 1

# cgrt_dtype values (ONNX TensorProto.DataType) and their names.
_DTYPES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
    6: "int32", 7: "int64", 9: "bool", 10: "float16", 11: "float64",
    12: "uint32", 13: "uint64", 16: "bfloat16",
    # ml_dtypes' names; one element a byte (int4/int2 sign-extended).
    17: "float8_e4m3fn", 18: "float8_e4m3fnuz", 19: "float8_e5m2",
    20: "float8_e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4_e2m1fn",
    24: "float8_e8m0fnu", 25: "uint2", 26: "int2",
}
_CODES = {name: code for code, name in _DTYPES.items()}
# What carries a type's bytes where numpy or torch lacks it (as cgc-run
# reads .npy files): bit patterns of the floats, values of the integers.
# An input of the carrier's dtype is taken as the model's type.
_CARRIERS = {"bfloat16": "uint16", "float8_e4m3fn": "uint8",
             "float8_e4m3fnuz": "uint8", "float8_e5m2": "uint8",
             "float8_e5m2fnuz": "uint8", "float4_e2m1fn": "uint8",
             "float8_e8m0fnu": "uint8", "int4": "int8", "int2": "int8",
             "uint4": "uint8", "uint2": "uint8"}
# torch has its own float8 types; the others travel in their carriers.
_TORCH_LACKS = ("float4_e2m1fn", "int4", "int2", "uint4", "uint2")
# metadata.json spells them CGRT_FLOAT32 ...
_META_NAMES = {"CGRT_" + name.upper(): name for code, name in _DTYPES.items()
               if code <= 16}
_META_NAMES.update({
    "CGRT_FLOAT8E4M3FN": "float8_e4m3fn", "CGRT_FLOAT8E4M3FNUZ": "float8_e4m3fnuz",
    "CGRT_FLOAT8E5M2": "float8_e5m2", "CGRT_FLOAT8E5M2FNUZ": "float8_e5m2fnuz",
    "CGRT_FLOAT4E2M1": "float4_e2m1fn", "CGRT_FLOAT8E8M0": "float8_e8m0fnu"})
_META_NAMES.update({"CGRT_" + n.upper(): n for n in ("int4", "uint4", "int2", "uint2")})


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p),
                ("bytes", ctypes.c_size_t),
                ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32),
                ("dims", ctypes.c_int64 * MAX_RANK),
                ("memory", ctypes.c_int)]


class _Options(ctypes.Structure):
    _fields_ = [("device_ordinal", ctypes.c_int32),
                ("comm", ctypes.c_void_p)]


class _BenchmarkResult(ctypes.Structure):
    _fields_ = [("median_us", ctypes.c_double),
                ("p99_us", ctypes.c_double),
                ("mean_us", ctypes.c_double),
                ("iterations", ctypes.c_int64),
                ("graph_launches_per_run", ctypes.c_int64)]


def _numpy_dtype(name):
    if name in _CARRIERS:  # numpy lacks them; ml_dtypes has them
        try:
            import ml_dtypes
            return np.dtype(getattr(ml_dtypes, name))
        except ImportError:
            raise InvalidArgumentError(
                "%s needs the ml_dtypes package for numpy arrays "
                "(or use output='torch')" % name) from None
    return np.dtype(name)


def _torch_dtype(torch, name):
    return getattr(torch, _CARRIERS[name] if name in _TORCH_LACKS else name)


_SUB_BYTE_RANGES = {"int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1),
                    "uint2": (0, 3)}


def _check_sub_byte_range(x, info, index):
    """A host array carrying int4/uint4/int2/uint2 values in int8/uint8
    must hold values of the type: kernels read the bytes as they are.
    (Device tensors are not checked: that would cost a synchronisation.)"""
    limits = _SUB_BYTE_RANGES.get(info.dtype)
    if limits is None or x.dtype.name != _CARRIERS[info.dtype] or x.size == 0:
        return
    low, high = int(x.min()), int(x.max())
    if low < limits[0] or high > limits[1]:
        raise InvalidArgumentError(
            "input %d '%s' is %s, whose values lie in [%d, %d]; the array "
            "holds values in [%d, %d]" % (index, info.name, info.dtype,
                                          limits[0], limits[1], low, high),
            StatusCode.INVALID_ARGUMENT)


def _input_code(name, expected):
    """The dtype code of an input whose dtype is called `name`, for a model
    input of dtype `expected` (a carrier counts as the expected type)."""
    if _CARRIERS.get(expected) == name:
        return _CODES[expected]
    return _CODES.get(name)


_TORCH = None
_TORCH_SIZES = {}


def _torch_module():
    global _TORCH
    if _TORCH is None:
        import torch
        _TORCH = torch
    return _TORCH


def _torch_dtype_and_size(torch, name):
    if name not in _TORCH_SIZES:
        dt = _torch_dtype(torch, name)
        _TORCH_SIZES[name] = (dt, torch.empty((), dtype=dt).element_size())
    return _TORCH_SIZES[name]


def _static_count(info):
    """Elements of an output with a static shape; None if data-dependent."""
    if any(d is None for d in info.shape):
        return None
    return math.prod(info.shape)


class TensorInfo(dict):
    """An input or output of a package: ``name``, ``dtype`` (a name such as
    "float32"), ``shape`` (a tuple, None for a data-dependent dim) and
    ``bytes`` (the slot's size: the capacity of a data-dependent output).

    It is a read-only dict of those four keys that also has them as
    attributes, so that `package_info` and ``Model.inputs`` are plain JSON
    data (``json.dumps`` writes {"name": ..., "shape": [1, 64], ...}) and
    ``t.shape`` keeps working. ``as_dict()`` gives a plain dict."""

    __slots__ = ()

    def __init__(self, name, dtype, shape, bytes):  # noqa: A002 (the key)
        super().__init__(name=str(name), dtype=str(dtype),
                         shape=tuple(shape), bytes=int(bytes))

    name = property(lambda self: self["name"])
    dtype = property(lambda self: self["dtype"])
    shape = property(lambda self: self["shape"])
    bytes = property(lambda self: self["bytes"])

    def as_dict(self):
        return dict(self)

    def __repr__(self):
        return "TensorInfo(name=%r, dtype=%r, shape=%r, bytes=%r)" % (
            self.name, self.dtype, self.shape, self.bytes)

    # Read-only, as the frozen dataclass it was: Model keeps its own and
    # sizes output buffers from them.
    def _read_only(self, *args, **kwargs):
        raise TypeError("TensorInfo is read-only")

    __setitem__ = __delitem__ = _read_only
    clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __hash__(self):
        return hash((self.name, self.dtype, self.shape, self.bytes))

    def __reduce__(self):  # pickle/copy would fill it with __setitem__
        return (TensorInfo, (self.name, self.dtype, self.shape, self.bytes))

    @property
    def numpy_dtype(self):
        return _numpy_dtype(self.dtype)

    @property
    def torch_dtype(self):
        import torch
        return _torch_dtype(torch, self.dtype)

    @property
    def data_dependent(self):
        return any(d is None for d in self.shape)


@dataclass(frozen=True)
class BenchmarkResult:
    """Latency of one inference (the input copies into their static slots
    plus the graph launches and eager regions), from CUDA events on the
    runtime's stream, in microseconds."""

    median_us: float
    p99_us: float
    mean_us: float
    iterations: int
    launches_per_inference: int  # CUDA graph launches (eager ops not counted)


_LIB = None


def _library_candidates():
    """The bundled copy (cgc/lib/, or cgc/ as older wheels had it), then the
    source tree's build/lib and build-rt/lib (or $CGC_BUILD_DIR/lib)."""
    return [_paths.bundled("lib", "libcgrt.so"), _paths.bundled("libcgrt.so")] + \
        [build / "lib" / "libcgrt.so" for build in _paths.build_dirs()]


def find_runtime_library():
    """Where libcgrt.so is: $CGC_RUNTIME_LIB, the copy bundled inside the
    installed package (cgc/lib/libcgrt.so), the source tree's build tree
    (build/lib, build-rt/lib, or $CGC_BUILD_DIR/lib), else "libcgrt.so" for
    the dynamic loader's search path (LD_LIBRARY_PATH, ldconfig)."""
    env = os.environ.get("CGC_RUNTIME_LIB")
    if env:
        if not Path(env).is_file():
            raise NotFoundError("CGC_RUNTIME_LIB is %s, which is no file" % env,
                                StatusCode.NOT_FOUND)
        return str(Path(env).resolve())
    for path in _library_candidates():
        if path.is_file():
            return str(path)
    return "libcgrt.so"


def _lib():
    global _LIB
    if _LIB is not None:
        return _LIB
    path = find_runtime_library()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        if path == "libcgrt.so":  # nothing bundled, no build tree
            raise NotFoundError(
                "cannot find the cgc runtime library (tried %s, then the "
                "dynamic loader's path: %s): %s" % (
                    ", ".join(map(str, _library_candidates())), e,
                    _paths.HOW_TO_FIX), StatusCode.NOT_FOUND) from None
        raise NotFoundError(
            "cannot load the cgc runtime library %s (%s); set "
            "CGC_RUNTIME_LIB to libcgrt.so" % (path, e),
            StatusCode.NOT_FOUND) from None
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    lib.cgrt_status_get_code.argtypes = [vp]
    lib.cgrt_status_get_code.restype = ctypes.c_int
    lib.cgrt_status_get_message.argtypes = [vp]
    lib.cgrt_status_get_message.restype = ctypes.c_char_p
    lib.cgrt_status_free.argtypes = [vp]
    lib.cgrt_status_free.restype = None
    lib.cgrt_dtype_size.argtypes = [ctypes.c_int]
    lib.cgrt_dtype_size.restype = sz
    lib.cgrt_model_options_init.argtypes = [ctypes.POINTER(_Options)]
    lib.cgrt_model_options_init.restype = None
    lib.cgrt_model_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Options),
                                    ctypes.POINTER(vp)]
    lib.cgrt_model_load.restype = vp
    lib.cgrt_model_release.argtypes = [vp]
    lib.cgrt_model_release.restype = None
    for fn in (lib.cgrt_model_num_inputs, lib.cgrt_model_num_outputs,
               lib.cgrt_model_num_buckets):
        fn.argtypes = [vp]
        fn.restype = sz
    lib.cgrt_model_bucket_dim.argtypes = [vp]
    lib.cgrt_model_bucket_dim.restype = ctypes.c_char_p
    lib.cgrt_model_bucket_value.argtypes = [vp, sz]
    lib.cgrt_model_bucket_value.restype = ctypes.c_int64
    lib.cgrt_model_set_zero_copy.argtypes = [vp, ctypes.c_int]
    lib.cgrt_model_set_zero_copy.restype = None
    for fn in (lib.cgrt_model_input_info, lib.cgrt_model_output_info):
        fn.argtypes = [vp, sz, ctypes.POINTER(ctypes.c_char_p),
                       ctypes.POINTER(_Tensor)]
        fn.restype = vp
    lib.cgrt_model_run.argtypes = [vp, ctypes.POINTER(_Tensor), sz,
                                   ctypes.POINTER(_Tensor), sz]
    lib.cgrt_model_run.restype = vp
    if hasattr(lib, "cgrt_model_run_async"):  # older libcgrt: absent
        lib.cgrt_model_run_async.argtypes = [vp, ctypes.POINTER(_Tensor), sz,
                                             ctypes.POINTER(_Tensor), sz, vp]
        lib.cgrt_model_run_async.restype = vp
    lib.cgrt_model_benchmark.argtypes = [vp, ctypes.c_int64, ctypes.c_int64,
                                         ctypes.POINTER(_BenchmarkResult)]
    lib.cgrt_model_benchmark.restype = vp
    if hasattr(lib, "cgrt_model_num_state"):  # older libcgrt: absent
        lib.cgrt_model_num_state.argtypes = [vp]
        lib.cgrt_model_num_state.restype = sz
        lib.cgrt_model_state_info.argtypes = [
            vp, sz, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_Tensor)]
        lib.cgrt_model_state_info.restype = vp
        for fn in (lib.cgrt_model_read_state, lib.cgrt_model_write_state):
            fn.argtypes = [vp, sz, ctypes.POINTER(_Tensor)]
            fn.restype = vp
        lib.cgrt_model_reset_state.argtypes = [vp]
        lib.cgrt_model_reset_state.restype = vp
    if hasattr(lib, "cgrt_model_dump_graphs"):  # older libcgrt: absent
        lib.cgrt_model_dump_graphs.argtypes = [vp, ctypes.c_char_p,
                                               ctypes.POINTER(sz)]
        lib.cgrt_model_dump_graphs.restype = vp
    _LIB = lib
    return lib


def _check(lib, status):
    """Raises the cgc.RuntimeError subclass of a non-NULL status."""
    if not status:
        return
    try:
        code = lib.cgrt_status_get_code(status)
        message = (lib.cgrt_status_get_message(status) or b"").decode(
            "utf-8", "replace")
    finally:
        lib.cgrt_status_free(status)
    raise error_for(code, message)


def package_info(package_dir):
    """Inputs and outputs of a package from its metadata.json, without
    loading it (no GPU needed), as JSON data: {"inputs": [TensorInfo],
    "outputs": [TensorInfo], "kernels": n (as --explain counts them),
    "kernel_functions": n, "graphs": [{"name", "nodes"}],
    "metadata": dict}. Raises NotFoundError for a missing folder, a file, or
    a folder without metadata.json, CorruptError for a metadata.json that is
    no JSON object or lacks the inputs' and outputs' fields (as cgc.load
    does for the package's other files)."""
    import json
    folder = Path(package_dir)
    path = folder / "metadata.json"
    if not folder.exists():
        raise NotFoundError("package folder '%s' does not exist" % folder,
                            StatusCode.NOT_FOUND)
    if not folder.is_dir():
        raise NotFoundError("package '%s' is not a folder (a package is the "
                            "folder `cgc MODEL -o DIR` writes)" % folder,
                            StatusCode.NOT_FOUND)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise NotFoundError(
            "'%s' is not a cgc package: it has no metadata.json (compile one "
            "with cgc.compile or `cgc MODEL -o DIR`)" % folder,
            StatusCode.NOT_FOUND) from None
    except (OSError, UnicodeDecodeError) as e:
        raise CorruptError("cannot read %s: %s" % (path, e),
                           StatusCode.CORRUPT) from None
    try:
        meta = json.loads(text)
    except ValueError as e:
        raise CorruptError("%s is not valid JSON (%s)" % (path, e),
                           StatusCode.CORRUPT) from None

    def info(kind, i, d):
        try:
            shape = tuple(None if int(x) < 0 else int(x) for x in d["shape"])
            dtype = _META_NAMES.get(d["dtype"], d["dtype"])
            return TensorInfo(d["name"], dtype, shape, int(d["bytes"]))
        except KeyError as e:
            problem = "has no field %s" % e
        except (TypeError, ValueError) as e:
            problem = "is malformed (%s)" % e
        raise CorruptError("%s: %s %d %s" % (path, kind, i, problem),
                           StatusCode.CORRUPT)

    if not isinstance(meta, dict):
        raise CorruptError("%s is not a JSON object" % path,
                           StatusCode.CORRUPT)
    for key in ("inputs", "outputs"):
        if not isinstance(meta.get(key), list):
            raise CorruptError("%s has no %s list" % (path, key),
                               StatusCode.CORRUPT)
    return {"inputs": [info("input", i, d)
                       for i, d in enumerate(meta["inputs"])],
            "outputs": [info("output", i, d)
                        for i, d in enumerate(meta["outputs"])],
            # The fused kernels (--explain's count); kernel_functions: the
            # distinct compiled functions, fewer where kernels are identical.
            "kernels": meta.get("model_kernels", len(meta.get("kernels", []))),
            "kernel_functions": len(meta.get("kernels", [])),
            "graphs": meta.get("graphs", []),
            "metadata": meta}


def _warm_up_refusal(package_dir):
    """Why a package cannot be warmed up on zero inputs ("has eager
    regions", "has If/Loop nodes"), or "" if it can."""
    schedule = package_info(package_dir)["metadata"].get("cgraph", {})

    def conditional(nodes):
        return any(n.get("op") == "conditional_node" or
                   any(conditional(r) for r in n.get("regions", []))
                   for n in nodes)

    if any(step.get("op") != "replay"
           for s in schedule.get("schedules", []) for step in s["steps"]):
        return "has eager regions"
    if any(conditional(g.get("nodes", [])) for g in schedule.get("graphs", [])):
        return "has If/Loop nodes"
    return ""


def _is_torch_tensor(x):
    module = type(x).__module__
    return (module == "torch" or module.startswith("torch.")) and \
        hasattr(x, "data_ptr")


_stream_sync = None


def _sync_cai_stream(stream):
    """cuStreamSynchronize on a __cuda_array_interface__ stream handle."""
    global _stream_sync
    if _stream_sync is None:
        driver = ctypes.CDLL(os.environ.get("CGRT_DRIVER_LIBRARY") or
                             "libcuda.so.1")
        _stream_sync = driver.cuStreamSynchronize
        _stream_sync.argtypes = [ctypes.c_void_p]
        _stream_sync.restype = ctypes.c_int
    result = _stream_sync(ctypes.c_void_p(stream))
    if result != 0:
        raise error_for(StatusCode.CUDA_ERROR,
                        "cuStreamSynchronize on the input's stream failed "
                        "(CUresult %d)" % result)


_NATIVE = None  # (module or None, why not)
_NATIVE_NAME = "_cgc_native"
#: What the native runner's constructor expects (its module's ABI).
_NATIVE_ABI = 2


def _native_candidates():
    """Where the native call path may be: beside the libcgrt.so in use (a
    build tree's lib/, a runtime folder CGC_RUNTIME_LIB names), bundled
    beside this file, else the build trees' lib/."""
    import importlib.machinery
    runtime = find_runtime_library()
    folders = ([Path(runtime).parent] if os.path.isabs(runtime) else []) + \
        [_paths.PACKAGE] + [b / "lib" for b in _paths.build_dirs()]
    return [folder / (_NATIVE_NAME + suffix) for folder in folders
            for suffix in importlib.machinery.EXTENSION_SUFFIXES]


def _native_module():
    """The native call path's module, or None and the reason it is missing
    (for Model.call_path)."""
    global _NATIVE
    if _NATIVE is not None:
        return _NATIVE
    import importlib.machinery
    import importlib.util
    module, why = None, None
    for path in _native_candidates():
        if not path.is_file():
            continue
        try:
            loader = importlib.machinery.ExtensionFileLoader(
                "cgc." + _NATIVE_NAME, str(path))
            spec = importlib.util.spec_from_file_location(
                "cgc." + _NATIVE_NAME, str(path), loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
        except ImportError as e:
            why = "cannot load %s: %s" % (path, e)
            module = None
            continue
        if getattr(module, "ABI", None) != _NATIVE_ABI:
            why = "%s is from another cgc (ABI %s, this package wants %d)" % (
                path, getattr(module, "ABI", None), _NATIVE_ABI)
            module = None
            continue
        break
    if module is None and why is None:
        why = ("no %s module for this Python (%s): build the repository "
               "(make) and reinstall the package" % (
                   _NATIVE_NAME, ", ".join(
                       importlib.machinery.EXTENSION_SUFFIXES[:1])))
    _NATIVE = (module, why)
    return _NATIVE


def _current_stream_query(torch):
    """A function(device index) -> torch's current raw CUstream there."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


class Model:
    """A loaded package: ``model(*inputs)``, ``model.run({name: x})``,
    ``model.benchmark()``. Use ``cgc.load`` to make one."""

    def __init__(self, package_dir, device=0, comm=None):
        if isinstance(device, str):  # "cuda:1"
            device = int(device.rsplit(":", 1)[1]) if ":" in device else 0
        elif hasattr(device, "index"):  # torch.device
            device = device.index or 0
        self.path = Path(package_dir)
        # A rank of a split package runs on its communicator's device, and
        # keeps the communicator alive while it runs.
        self.comm = comm
        self.device = comm.device if comm is not None else int(device)
        self._handle = None
        # The native call path (made by the first call with a torch tensor):
        # None until then or where it does not serve, see call_path.
        self._runner = None
        self._runner_tried = False
        self._runner_reason = "not tried yet: no call with torch tensors"
        lib = self._lib = _lib()
        options = _Options()
        lib.cgrt_model_options_init(ctypes.byref(options))
        options.device_ordinal = self.device
        if comm is not None:
            options.comm = comm._require_open()
            comm._models.add(self)
        handle = ctypes.c_void_p()
        _check(lib, lib.cgrt_model_load(os.fsencode(str(self.path)),
                                        ctypes.byref(options),
                                        ctypes.byref(handle)))
        self._handle = handle
        self.inputs = self._io(lib.cgrt_model_num_inputs,
                               lib.cgrt_model_input_info)
        self.outputs = self._io(lib.cgrt_model_num_outputs,
                                lib.cgrt_model_output_info)
        self._input_index = {t.name: i for i, t in enumerate(self.inputs)}
        # A training step (cgc --train): every call is one step, and the
        # state (trained weights, optimizer buffers) stays in the model.
        self.state = tuple(self._io(lib.cgrt_model_num_state,
                                    lib.cgrt_model_state_info)
                           if hasattr(lib, "cgrt_model_num_state") else ())
        self._state_index = {t.name: i for i, t in enumerate(self.state)}
        # Shape buckets (cgc --dim N=1,2,4): inputs and outputs describe the
        # largest; a run takes any bucket's shapes and returns its outputs.
        count = lib.cgrt_model_num_buckets(handle)
        dim = lib.cgrt_model_bucket_dim(handle)
        self.bucket_dim = dim.decode() if dim else None
        self.buckets = tuple(lib.cgrt_model_bucket_value(handle, i)
                             for i in range(count))

    def warm_up(self, calls=20, seconds=_WARM_UP_SECONDS):
        """Runs up to `calls` inferences on zero inputs, stopping once
        `seconds` have passed (a large model needs fewer), and discards them,
        so that the next call runs at steady-state speed. Loading already
        does the lazy work (kernels, graph upload); what is left is the
        machine's: on the H200, a call after a pause or the first after the
        load takes 1.2-6x a back-to-back call (cold CPU caches, idle clocks;
        docs/benchmarks.md), and 10-20 calls bring it to about 1.0x. Refused
        (InvalidArgumentError) for packages with eager regions or If/Loop
        nodes, whose host code or loops could take any time on zeros."""
        self._require_open()
        reason = _warm_up_refusal(self.path)
        if reason:
            raise InvalidArgumentError(
                "warm_up: %s %s, whose run on zero inputs could take any "
                "time; warm it up with real inputs instead" % (self.path,
                                                               reason),
                StatusCode.INVALID_ARGUMENT)
        self._run_on_zeros(calls, seconds)

    def _run_on_zeros(self, calls, seconds):
        """warm_up's calls, once the package is known to allow them."""
        # Carriers (uint16 for bfloat16, ...) are taken as the model's type,
        # so no ml_dtypes is needed.
        zeros = [np.zeros(tuple(1 if d is None else d for d in t.shape),
                          _CARRIERS.get(t.dtype, t.dtype)) for t in self.inputs]
        import time
        end = None if seconds is None else time.perf_counter() + seconds
        for _ in range(int(calls)):
            self(*zeros)
            if end is not None and time.perf_counter() > end:
                break

    def _io(self, count_fn, info_fn):
        result = []
        for i in range(count_fn(self._handle)):
            name = ctypes.c_char_p()
            t = _Tensor()
            _check(self._lib, info_fn(self._handle, i, ctypes.byref(name),
                                      ctypes.byref(t)))
            shape = tuple(None if t.dims[k] < 0 else int(t.dims[k])
                          for k in range(t.rank))
            result.append(TensorInfo(name.value.decode(),
                                     _DTYPES.get(t.dtype, str(t.dtype)),
                                     shape, int(t.bytes)))
        return result

    # -- training state ----------------------------------------------------
    @property
    def is_training(self):
        """True for a package of ``cgc --train``: each call runs one training
        step on (inputs..., label) and returns the loss."""
        return bool(self.state)

    def train_step(self, *inputs, out=None):
        """One training step on (inputs..., label): returns the loss (a
        torch tensor on the device for torch CUDA inputs, enqueued on
        torch's current stream; numpy otherwise). The state is updated in
        the model."""
        if not self.state:
            raise InvalidArgumentError(
                "%s is no training step (compile with train=...)" % self.path,
                StatusCode.INVALID_ARGUMENT)
        return self(*inputs, out=out)

    def _state_slot(self, name):
        self._require_open()
        if not self.state:
            raise InvalidArgumentError(
                "%s is no training step: it has no state (compile with "
                "cgc --train)" % self.path, StatusCode.INVALID_ARGUMENT)
        index = self._state_index.get(name)
        if index is None:
            raise KeyError("no state tensor %r; the state is %s" % (
                name, ", ".join(t.name for t in self.state)))
        return index, self.state[index]

    def read_state(self, name):
        """The state tensor `name` after every step so far, as a numpy
        array."""
        index, info = self._state_slot(name)
        array = np.empty(info.shape, dtype=_numpy_dtype(info.dtype))
        t = self._host_tensor(array, info)
        _check(self._lib, self._lib.cgrt_model_read_state(
            self._handle, index, ctypes.byref(t)))
        return array

    def write_state(self, name, value):
        """Replaces state tensor `name` (numpy array, or a torch tensor,
        copied to the host) before the next step."""
        index, info = self._state_slot(name)
        if _is_torch_tensor(value):
            value = value.detach().cpu().numpy()
        array = np.ascontiguousarray(value)
        if array.dtype != _numpy_dtype(info.dtype) or \
                tuple(array.shape) != tuple(info.shape):
            raise InvalidArgumentError(
                "state tensor '%s' is %s%s; the value is %s%s" % (
                    name, info.dtype, list(info.shape), array.dtype,
                    list(array.shape)), StatusCode.INVALID_ARGUMENT)
        t = self._host_tensor(array, info)
        _check(self._lib, self._lib.cgrt_model_write_state(
            self._handle, index, ctypes.byref(t)))

    def reset_state(self):
        """Puts the state back to the values the package was compiled with
        (the model's initializers, the optimizer's zeros)."""
        self._require_open()
        _check(self._lib, self._lib.cgrt_model_reset_state(self._handle))

    def state_dict(self):
        """{name: numpy array} of the whole state."""
        return {t.name: self.read_state(t.name) for t in self.state}

    def export_onnx(self, source, dest):
        """Writes the ONNX model `source` (the one this package was compiled
        from) to `dest` with its trained initializers: every initializer
        named like a state tensor takes the state's value (the optimizer's
        buffers have no initializer and are left out). Needs the onnx
        package. Returns the names replaced."""
        import onnx
        from onnx import numpy_helper
        model = onnx.load(str(source))
        state = {t.name: t for t in self.state}
        replaced = []
        for i, init in enumerate(model.graph.initializer):
            info = state.get(init.name)
            if info is None:
                continue
            value = self.read_state(init.name)
            old = numpy_helper.to_array(init)
            if old.shape != value.shape or old.dtype != value.dtype:
                raise InvalidArgumentError(
                    "initializer '%s' of %s is %s%s, the state is %s%s: not "
                    "the model this package was compiled from" % (
                        init.name, source, old.dtype, list(old.shape),
                        value.dtype, list(value.shape)),
                    StatusCode.INVALID_ARGUMENT)
            model.graph.initializer[i].CopyFrom(
                numpy_helper.from_array(value, init.name))
            replaced.append(init.name)
        if self.state and not replaced:
            raise InvalidArgumentError(
                "no initializer of %s is named like the state (%s): not the "
                "model this package was compiled from" % (
                    source, ", ".join(sorted(state))),
                StatusCode.INVALID_ARGUMENT)
        onnx.save(model, str(dest))
        return replaced

    @staticmethod
    def _host_tensor(array, info):
        t = _Tensor()
        t.data = array.ctypes.data
        t.bytes = array.nbytes
        t.dtype = _CODES[info.dtype]
        t.rank = len(info.shape)
        for k, d in enumerate(info.shape):
            t.dims[k] = d
        t.memory = MEMORY_HOST
        return t

    # -- life cycle --------------------------------------------------------
    def close(self):
        """Frees the model's device memory and graphs now (after the runs
        still queued on a stream)."""
        self._runner = None  # it holds the handle
        if self._handle:
            self._lib.cgrt_model_release(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        def fmt(ts):
            return ", ".join("%s: %s%s" % (t.name, t.dtype, list(
                "?" if d is None else d for d in t.shape)) for t in ts)
        return "cgc.Model(%r, device=%d, inputs=[%s], outputs=[%s])" % (
            str(self.path), self.device, fmt(self.inputs), fmt(self.outputs))

    def _require_open(self):
        if not self._handle:
            raise InvalidArgumentError("the model is closed",
                                       StatusCode.INVALID_ARGUMENT)

    # -- inference ---------------------------------------------------------
    def __call__(self, *inputs, out=None, **options):
        """Runs one inference on the inputs in the model's order (or one dict
        by name). Returns the output, or a tuple of them when there are
        several. options: output= and synchronize= as for run(). out= takes
        preallocated outputs (a tensor, or one per output: contiguous CUDA
        tensors of the output's dtype and shape on the model's device),
        which the run writes and the call returns.

        Contiguous torch CUDA tensors of the inputs' dtypes take the native
        path (call_path says whether this model has it): no ctypes
        marshalling, the outputs from a per-stream pool (reused once the
        caller holds nothing of them), the run enqueued on torch's current
        stream (bench/python_call.py measures its cost)."""
        runner = self._runner
        if runner is not None and not options:
            result = runner(inputs, out)
            if result is not NotImplemented:
                return result
        return self._call(inputs, out, options)

    def _call(self, inputs, out, options):
        """__call__ where the native path did not take the call."""
        output = options.pop("output", None)
        synchronize = options.pop("synchronize", None)
        if options:
            raise TypeError("unexpected keyword argument(s) %s" % ", ".join(
                sorted(options)))
        if not self._runner_tried and self._handle and inputs and \
                _is_torch_tensor(inputs[0]):
            self._make_runner()
            if self._runner is not None and output is None and \
                    synchronize is None:
                result = self._runner(inputs, out)
                if result is not NotImplemented:
                    return result
        if out is not None:
            raise InvalidArgumentError(
                "out= takes contiguous CUDA tensors on cuda:%d, one per output "
                "(%s), with the inputs as CUDA tensors of the model's dtypes "
                "and without output= or synchronize=%s" % (
                    self.device, ", ".join("%s: %s%s" % (
                        t.name, t.dtype, list(t.shape)) for t in self.outputs),
                    "" if self._runner is not None else
                    "; this model has no native call path: " +
                    self._runner_reason), StatusCode.INVALID_ARGUMENT)
        if len(inputs) == 1 and isinstance(inputs[0], dict):
            result = self.run(inputs[0], output=output,
                              synchronize=synchronize)
        else:
            if len(inputs) != len(self.inputs):
                raise InvalidArgumentError(
                    "%d inputs given, the model has %d (%s)" % (
                        len(inputs), len(self.inputs),
                        ", ".join(t.name for t in self.inputs)),
                    StatusCode.INVALID_ARGUMENT)
            result = self._run(list(inputs), output, synchronize)
        values = list(result.values())
        return values[0] if len(values) == 1 else tuple(values)

    @property
    def call_path(self):
        """"native" when calls with torch CUDA tensors take the native path,
        else why not (a sentence)."""
        if not self._runner_tried and self._handle and \
                "torch" in sys.modules:
            self._make_runner()
        return "native" if self._runner is not None else self._runner_reason

    def _native_refusal(self):
        """Why this package cannot take the native path, or ""."""
        if self.buckets:
            return "it has shape buckets (the outputs' shapes vary)"
        for t in self.outputs:
            if t.data_dependent:
                return "output '%s' has a data-dependent shape" % t.name
        for t in self.inputs + self.outputs:
            if t.dtype in _TORCH_LACKS:
                return "'%s' is %s, which torch lacks" % (t.name, t.dtype)
        if not hasattr(self._lib, "cgrt_model_run_async"):
            return "this libcgrt has no cgrt_model_run_async"
        return ""

    def _make_runner(self):
        self._runner_tried = True
        reason = self._native_refusal()
        module = None
        if not reason:
            module, reason = _native_module()
        if module is None:
            self._runner_reason = reason
            return
        torch = _torch_module()
        lib = self._lib
        # cgrt_stream_is_capturing is optional: an older libcgrt lacks it.
        entry_points = {name: ctypes.cast(getattr(lib, name),
                                          ctypes.c_void_p).value
                        for name in ("cgrt_model_run_async",
                                     "cgrt_status_get_code",
                                     "cgrt_status_get_message",
                                     "cgrt_status_free",
                                     "cgrt_stream_is_capturing")
                        if hasattr(lib, name)}

        def spec(t, with_shape):
            dt, size = _torch_dtype_and_size(torch, t.dtype)
            return (_CODES[t.dtype], dt, tuple(t.shape), size) if with_shape \
                else (_CODES[t.dtype], dt, size)

        self._runner = module.Runner(
            self._handle.value, entry_points,
            [spec(t, False) for t in self.inputs],
            [spec(t, True) for t in self.outputs], self.device, torch,
            _current_stream_query(torch), error_for,
            # Without these (another torch) outputs are not pooled.
            getattr(torch._C, "_storage_Use_Count", None),
            getattr(torch._C, "_cuda_isCurrentStreamCapturing", None))
        self._runner_reason = "native"

    def run(self, feeds, output=None, synchronize=None):
        """Runs one inference. feeds: {input name: array}; numpy arrays (host
        memory), torch tensors (CPU or CUDA: device pointers, no host round
        trip), objects with __cuda_array_interface__, or anything
        numpy.asarray takes. output: "numpy" (default for host inputs),
        "torch" (default when any input is a torch tensor; CUDA tensors on
        the model's device) or "torch_cpu". With "torch" the run is enqueued
        on torch's current stream and the call returns at once, as a torch op
        does; synchronize=True waits for the outputs. With host outputs the
        call always waits; synchronize=False then skips the synchronization
        of torch's current stream before the run (the caller guarantees that
        the inputs are ready). Returns {output name: array}, in the model's
        output order; data-dependent outputs have the shape the run
        produced."""
        if not isinstance(feeds, dict):
            raise InvalidArgumentError(
                "run() takes a dict {input name: value}",
                StatusCode.INVALID_ARGUMENT)
        unknown = [k for k in feeds if k not in self._input_index]
        missing = [t.name for t in self.inputs if t.name not in feeds]
        if unknown or missing:
            parts = []
            if missing:
                parts.append("missing input(s) %s" % ", ".join(map(repr, missing)))
            if unknown:
                parts.append("unknown input(s) %s" % ", ".join(map(repr, unknown)))
            raise InvalidArgumentError(
                "%s; the model's inputs are %s" % (
                    "; ".join(parts),
                    ", ".join(repr(t.name) for t in self.inputs)),
                StatusCode.INVALID_ARGUMENT)
        return self._run([feeds[t.name] for t in self.inputs], output,
                         synchronize)

    def _input_tensor(self, index, value, keep, sync):
        """Fills a _Tensor for input `index`; returns whether it is a torch
        tensor. sync: a set that collects the devices of torch CUDA inputs
        (their current streams are synchronized before the run), None where
        they need none, False where nothing is synchronized."""
        info = self.inputs[index]
        t = _Tensor()
        is_torch = _is_torch_tensor(value)
        if is_torch:
            x = value.detach()
            if not x.is_contiguous():
                x = x.contiguous()
            code = _input_code(str(x.dtype)[6:], info.dtype)  # "torch.float32"
            if x.is_cuda:
                if x.device.index != self.device:
                    raise InvalidArgumentError(
                        "input %d '%s' is on %s, the model on cuda:%d" % (
                            index, info.name, x.device, self.device),
                        StatusCode.INVALID_ARGUMENT)
                if isinstance(sync, set):
                    sync.add(x.device)
                t.memory = MEMORY_DEVICE
            else:
                t.memory = MEMORY_HOST
            t.data = x.data_ptr() or None
            t.bytes = x.numel() * x.element_size()
            shape = tuple(x.shape)
            dtype_name = str(x.dtype)
            keep.append(x)
        elif hasattr(value, "__cuda_array_interface__"):
            cai = value.__cuda_array_interface__
            shape = tuple(cai["shape"])
            dt = np.dtype(cai["typestr"])
            if cai.get("strides") not in (None, ()) and \
                    cai["strides"] != tuple(np.empty(0, dt).itemsize *
                                            int(np.prod(shape[k + 1:]))
                                            for k in range(len(shape))):
                raise InvalidArgumentError(
                    "input %d '%s' is a strided CUDA array; pass a contiguous "
                    "one" % (index, info.name), StatusCode.INVALID_ARGUMENT)
            if cai.get("stream") and sync is not False:
                _sync_cai_stream(cai["stream"])
            code = _input_code(dt.name, info.dtype)
            dtype_name = dt.name
            t.data = cai["data"][0] or None
            t.bytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
            t.memory = MEMORY_DEVICE
            keep.append(value)
        else:
            if isinstance(value, np.ndarray):
                x = np.ascontiguousarray(value)
            else:
                x = np.ascontiguousarray(np.asarray(value,
                                                    dtype=info.numpy_dtype))
            if x.dtype.name in _SUB_BYTE_RANGES:
                # ml_dtypes keeps int4/int2 in the low bits of a byte; the
                # kernels read the value sign-extended (its carrier).
                x = x.astype(_CARRIERS[x.dtype.name])
            code = _input_code(x.dtype.name, info.dtype)
            _check_sub_byte_range(x, info, index)
            dtype_name = str(x.dtype)
            t.data = x.ctypes.data or None
            t.bytes = x.nbytes
            t.memory = MEMORY_HOST
            shape = x.shape
            keep.append(x)
        if code is None:
            raise InvalidArgumentError(
                "input %d '%s' has dtype %s, which cgc does not support; the "
                "model expects %s" % (index, info.name, dtype_name, info.dtype),
                StatusCode.INVALID_ARGUMENT)
        if len(shape) > MAX_RANK:
            raise InvalidArgumentError(
                "input %d '%s' has rank %d, above cgc's %d" % (
                    index, info.name, len(shape), MAX_RANK),
                StatusCode.INVALID_ARGUMENT)
        t.dtype = code
        t.rank = len(shape)
        for k, d in enumerate(shape):
            t.dims[k] = int(d)
        return t, is_torch

    def _run(self, values, output, synchronize):
        self._require_open()
        import_torch = any(_is_torch_tensor(v) for v in values)
        if output is None:
            output = "torch" if import_torch else "numpy"
        if output not in ("numpy", "torch", "torch_cpu"):
            raise ValueError("output must be 'numpy', 'torch' or 'torch_cpu', "
                             "got %r" % (output,))
        # CUDA outputs: stream-ordered on torch's current stream, which then
        # needs no synchronization before the run (torch inputs were made on
        # it, outputs are allocated on it).
        stream = None
        if output == "torch" and synchronize is not True and \
                hasattr(self._lib, "cgrt_model_run_async"):
            stream = _current_stream_query(_torch_module())(self.device)
        keep = []
        devices = set()
        ins = (_Tensor * max(1, len(values)))()
        for i, v in enumerate(values):
            # None: torch inputs are on the run's stream, other CUDA arrays'
            # streams are still synchronized.
            ins[i], _ = self._input_tensor(
                i, v, keep, False if synchronize is False else
                None if stream is not None else devices)

        outs = (_Tensor * max(1, len(self.outputs)))()
        buffers = []
        if output != "numpy":
            torch = _torch_module()
            dev = ("cuda:%d" % self.device) if output == "torch" else "cpu"
        for i, info in enumerate(self.outputs):
            o = outs[i]
            # static shapes: exactly the output; data-dependent: the slot's
            # capacity, cut to the produced shape below
            count = _static_count(info)
            if output == "numpy":
                # int4/int2 outputs come back in their carriers and are
                # converted to ml_dtypes' (low-bits) form after the run.
                dt = np.dtype(_CARRIERS[info.dtype]) \
                    if info.dtype in _SUB_BYTE_RANGES else info.numpy_dtype
                buf = np.empty(info.shape if count is not None else
                               max(1, info.bytes // max(1, dt.itemsize)), dt)
                o.data = buf.ctypes.data
                o.memory = MEMORY_HOST
            else:
                tdt, itemsize = _torch_dtype_and_size(torch, info.dtype)
                buf = torch.empty(info.shape if count is not None else
                                  (max(1, info.bytes // itemsize),),
                                  dtype=tdt, device=dev)
                o.data = buf.data_ptr()
                o.memory = MEMORY_DEVICE if output == "torch" else MEMORY_HOST
                if output == "torch" and synchronize is not False and \
                        stream is None:
                    # Allocated on torch's current stream: make sure earlier
                    # work there that used this memory is done.
                    devices.add(buf.device)
            o.bytes = info.bytes
            o.dtype = _CODES[info.dtype]
            o.rank = len(info.shape)
            for k, d in enumerate(info.shape):
                o.dims[k] = -1 if d is None else d
            buffers.append(buf)

        if devices:
            torch = _torch_module()
            for dev in devices:
                torch.cuda.current_stream(dev).synchronize()
        if stream is not None:
            _check(self._lib, self._lib.cgrt_model_run_async(
                self._handle, ins, len(values), outs, len(self.outputs),
                ctypes.c_void_p(stream)))
        else:
            _check(self._lib, self._lib.cgrt_model_run(
                self._handle, ins, len(values), outs, len(self.outputs)))

        result = {}
        for i, info in enumerate(self.outputs):
            if _static_count(info) is not None and not self.buckets:
                result[info.name] = buffers[i]
                continue
            # The shape the run reported: data-dependent, or the bucket's.
            o = outs[i]
            shape = tuple(int(o.dims[k]) for k in range(o.rank))
            flat = buffers[i].reshape(-1)
            result[info.name] = flat[:math.prod(shape)].reshape(shape)
        if output == "numpy":
            for info in self.outputs:
                if info.dtype in _SUB_BYTE_RANGES:
                    result[info.name] = result[info.name].astype(
                        info.numpy_dtype)
        return result

    def set_zero_copy(self, enabled=True):
        """Whether runs with CUDA tensors let the kernels read and write them
        in place (the default) instead of copying through the model's static
        slots."""
        self._require_open()
        self._lib.cgrt_model_set_zero_copy(self._handle, 1 if enabled else 0)

    def benchmark(self, warmup=100, iters=1000, inputs=None):
        """Times `iters` inferences after `warmup` with CUDA events in the
        runtime (device-resident inputs; the copies into the static slots are
        included). The inputs are the slots' current contents: pass
        `inputs` (as for run) to run once with them first, so the timing is
        on real data. Returns a BenchmarkResult."""
        self._require_open()
        if inputs is not None:
            if isinstance(inputs, dict):
                self.run(inputs)
            else:
                self(*inputs) if isinstance(inputs, (list, tuple)) \
                    else self(inputs)
        r = _BenchmarkResult()
        _check(self._lib, self._lib.cgrt_model_benchmark(
            self._handle, int(warmup), int(iters), ctypes.byref(r)))
        return BenchmarkResult(r.median_us, r.p99_us, r.mean_us,
                               int(r.iterations),
                               int(r.graph_launches_per_run))

    def dump_graphs(self, out_dir):
        """Writes each CUDA graph of the package, as the driver holds it, to
        `out_dir`/graph<index>_<name>.dot (cuGraphDebugDotPrint, verbose),
        to compare with `cgc MODEL --explain --format=dot`. Creates
        `out_dir` (not its parents). Returns the paths written, in graph
        order."""
        self._require_open()
        if not hasattr(self._lib, "cgrt_model_dump_graphs"):
            raise NotFoundError(
                "this libcgrt (%s) has no cgrt_model_dump_graphs; rebuild "
                "the runtime" % self._lib._name, StatusCode.NOT_FOUND)
        out = Path(out_dir)
        written = ctypes.c_size_t(0)
        _check(self._lib, self._lib.cgrt_model_dump_graphs(
            self._handle, os.fsencode(out), ctypes.byref(written)))
        paths = {}
        for path in out.glob("graph*_*.dot"):
            index = path.name[len("graph"):].split("_")[0]
            if index.isdigit() and int(index) < written.value:
                paths[int(index)] = path
        return [paths[i] for i in sorted(paths)]


def load(package_dir, device=0, warm_up=20, comm=None):
    """Loads a package folder (written by cgc.compile or `cgc -o DIR`) on a
    CUDA device: arena, weights, kernels and graphs are set up once; then
    up to `warm_up` inferences (50 ms at most) on zero inputs
    (Model.warm_up; none for packages with eager regions, If/Loop nodes or
    types numpy lacks, and none at all with 0), so the first call runs at
    steady-state speed. Raises a cgc.RuntimeError subclass
    (NoDeviceError without a driver or GPU, NotFoundError for a missing
    package, ...). A package split over several GPUs (cgc
    --tensor-parallel, --train --data-parallel) is loaded by every rank with
    its `comm` (a cgc.Communicator); its warm-up runs exactly `warm_up`
    calls on every rank, as the ranks meet in every call."""
    model = Model(package_dir, device, comm=comm)
    # Narrow types (bfloat16, int4, ...) would need ml_dtypes for numpy
    # outputs: their packages are not warmed up unasked.
    narrow = any(t.dtype in _CARRIERS for t in model.inputs + model.outputs)
    try:
        # The refusal is checked once here (it reads metadata.json), not
        # again in Model.warm_up.
        if warm_up and not narrow and not _warm_up_refusal(model.path):
            model._run_on_zeros(
                warm_up, None if comm is not None else _WARM_UP_SECONDS)
    except BaseException:
        model.close()
        raise
    return model
