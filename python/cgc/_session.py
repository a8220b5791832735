"""cgc.InferenceSession: onnxruntime's entry point over cgc.compile and
cgc.load, for code migrating from onnxruntime.

    sess = cgc.InferenceSession("model.onnx", dims={"N": 1})
    [i.name for i in sess.get_inputs()]
    y, = sess.run(None, {"x": x})

A model is compiled once into a cache folder keyed by a hash of its bytes and
the compile options; later sessions with the same model and options load the
package from there without compiling.
"""

import hashlib
import inspect
import json
import os
import tempfile
from pathlib import Path

from ._compiler import compile as _compile
from ._errors import InvalidArgumentError, NotFoundError, StatusCode
from ._runtime import load, package_info

__all__ = ["InferenceSession", "NodeArg"]

# cgc's dtype names -> onnxruntime's type strings (NodeArg.type).
_ORT_ELEMENT = {
    "float32": "float", "float64": "double", "float16": "float16",
    "bfloat16": "bfloat16", "bool": "bool", "float8_e4m3fn": "float8e4m3fn",
    "float8_e4m3fnuz": "float8e4m3fnuz", "float8_e5m2": "float8e5m2",
    "float8_e5m2fnuz": "float8e5m2fnuz", "float4_e2m1fn": "float4e2m1",
    "float8_e8m0fnu": "float8e8m0",
}


class NodeArg:
    """An input or output as onnxruntime describes it: ``name``, ``shape``
    (a list of ints; None for a data-dependent dim, the dim's name for the
    bucketed dim of shape buckets) and ``type`` (onnxruntime's spelling,
    e.g. 'tensor(float)'). ``info`` is cgc's TensorInfo."""

    def __init__(self, info, shape=None):
        self.info = info
        self.name = info.name
        self.shape = list(info.shape if shape is None else shape)
        self.type = "tensor(%s)" % _ORT_ELEMENT.get(info.dtype, info.dtype)

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type,
                                                       self.shape)


def _node_args(info):
    """(inputs, outputs) as NodeArgs, from package_info(...): no GPU needed.
    With shape buckets the axes whose size differs between buckets are
    named by the bucket dim, as onnxruntime shows a symbolic dim."""
    meta = info["metadata"]
    result = []
    for kind in ("inputs", "outputs"):
        args = []
        for i, t in enumerate(info[kind]):
            shape = list(t.shape)
            try:
                shapes = [b[kind][i]["shape"] for b in meta.get("buckets", ())]
                for axis in range(len(shape)):
                    if len({s[axis] for s in shapes}) > 1:
                        shape[axis] = meta["bucket_dim"]
            except (KeyError, IndexError, TypeError):
                pass  # no usable bucket table: the largest bucket's shape
            args.append(NodeArg(t, shape))
        result.append(args)
    return tuple(result)


def _default_cache_dir():
    # Shared by the sessions of one user across processes; per user so that
    # nobody loads another user's libmodel.so.
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / ("cgc-cache-%d" % uid)


def _cache_key(model_bytes, options):
    """Hash of the model's bytes and the compile options (and this package's
    version, whose compiler may write other packages). External weights
    beside an .onnx file are not part of it."""
    from . import __version__
    h = hashlib.sha256(model_bytes)
    h.update(json.dumps([__version__, options], sort_keys=True,
                        default=str).encode())
    return h.hexdigest()[:20]


def _is_package(path):
    return path.is_dir() and (path / "metadata.json").is_file()


def _package_for(path, precision=None, dims=None, cache_dir=None,
                 **compile_options):
    """The package folder of `path` and whether it was compiled now: a
    package folder is itself; a model is compiled into
    cache_dir/<stem>-<hash> unless an earlier session left it there."""
    path = Path(path)
    options = dict(compile_options, precision=precision or "fp32",
                   dims=dims)
    # Misspelt options fail now, not only when the cache misses.
    inspect.signature(_compile).bind(path, path, **options)
    if path.is_dir():
        if precision is not None or dims is not None or compile_options:
            raise ValueError("%s is a package folder: precision, dims and "
                             "compile options apply to models only" % path)
        package_info(path)  # NotFoundError without metadata.json
        return path, False
    try:
        model_bytes = path.read_bytes()
    except FileNotFoundError:
        raise NotFoundError("no model or package at '%s'" % path,
                            StatusCode.NOT_FOUND) from None
    key = _cache_key(model_bytes, {k: v for k, v in options.items()
                                   if k not in ("progress", "timeout")})
    folder = Path(cache_dir or _default_cache_dir()) / (
        "%s-%s" % (path.stem, key))
    # cgc renames a finished package into place, so any package folder
    # there is complete (a library=False one has no libmodel.so).
    if _is_package(folder) and ((folder / "libmodel.so").is_file() or
                                not options.get("library", True)):
        return folder, False
    folder.parent.mkdir(parents=True, exist_ok=True,
                        mode=0o777 if cache_dir else 0o700)
    _compile(path, folder, **options)
    return folder, True


class InferenceSession:
    """onnxruntime.InferenceSession for cgc: path is a package folder, or an
    .onnx / .onnxtxt model that is compiled (with precision, dims and the
    other options of cgc.compile) into cache_dir (default: a per-user folder
    in the temp dir) unless a package for the same bytes and options is
    there. The package is loaded on `device` at once (cgc.load: NoDeviceError
    without a GPU).

    Attributes: ``package`` (the package folder), ``compiled`` (whether this
    session compiled it), ``model`` (the cgc.Model)."""

    def __init__(self, path, precision=None, dims=None, cache_dir=None,
                 device=0, **compile_options):
        self.package, self.compiled = _package_for(
            path, precision, dims, cache_dir, **compile_options)
        self._inputs, self._outputs = _node_args(package_info(self.package))
        self.model = load(self.package, device)

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named in output_names (None: all, in the model's
        order) as numpy arrays, for input_feed {input name: array}.
        run_options is accepted for onnxruntime's signature and ignored."""
        names = _check_names(self._inputs, self._outputs, output_names,
                             input_feed)
        outputs = self.model.run(dict(input_feed), output="numpy")
        return [outputs[name] for name in names]

    def close(self):
        self.model.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "cgc.InferenceSession(%r)" % str(self.package)


def _check_names(inputs, outputs, output_names, input_feed):
    """The output names to return, after checking output_names and the feed's
    input names against the package's; InvalidArgumentError (a ValueError)
    naming what is wrong and what the package has."""
    def listing(args):
        return ", ".join(repr(a.name) for a in args)

    if isinstance(output_names, str):
        raise InvalidArgumentError(
            "output_names must be a list of names or None, not the string "
            "%r" % output_names, StatusCode.INVALID_ARGUMENT)
    known = [o.name for o in outputs]
    names = known if output_names is None else list(output_names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidArgumentError(
            "unknown output name(s) %s; the model's outputs are %s" % (
                ", ".join(map(repr, unknown)), listing(outputs)),
            StatusCode.INVALID_ARGUMENT)
    if not isinstance(input_feed, dict):
        raise InvalidArgumentError(
            "input_feed must be a dict {input name: array}, got %s"
            % type(input_feed).__name__, StatusCode.INVALID_ARGUMENT)
    missing = [i.name for i in inputs if i.name not in input_feed]
    extra = [n for n in input_feed if n not in {i.name for i in inputs}]
    if missing or extra:
        parts = (["missing input(s) %s" % ", ".join(map(repr, missing))]
                 if missing else []) + \
            (["unknown input(s) %s" % ", ".join(map(repr, extra))]
             if extra else [])
        raise InvalidArgumentError(
            "%s; the model's inputs are %s" % ("; ".join(parts),
                                              listing(inputs)),
            StatusCode.INVALID_ARGUMENT)
    return names
