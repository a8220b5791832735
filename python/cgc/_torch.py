"""PyTorch entry points: cgc.make_graphed_callables and the torch.compile
backend (cgc._dynamo) share what is here: exporting a module with torch's
own ONNX exporter, the package cache, and GraphedModule, the nn.Module that
runs a loaded package.

The package cache. A package is found again by a hash of what decides it:
the exported ONNX model (graph and weights, without the exporter's
bookkeeping: producer version, node names' source locations, doc strings)
and the compile options. make_graphed_callables exports a CPU copy of a
CUDA module, so the key is the same wherever the module lives. The key does not include the compiler, so a cache
filled on a build machine serves a GPU machine without one; where a
compiler is found, a cached package made by another compiler binary is made
again. The cache lives in $CGC_CACHE_DIR, else ~/.cache/cgc (XDG_CACHE_HOME
is honoured), one folder per key.
"""

import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

from ._compiler import PRECISIONS, compile as _compile, find_compiler
from ._errors import CompileError, InvalidArgumentError, StatusCode
from ._runtime import load

#: Bumped when what the key covers changes meaning.
_CACHE_FORMAT = 1


def _torch():
    try:
        import torch
    except ImportError:
        raise ImportError("cgc's PyTorch entry points need torch "
                          "(pip install torch)") from None
    return torch


def cache_dir():
    """The package cache's folder (created on first use)."""
    env = os.environ.get("CGC_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return Path(base) / "cgc"


# -- export ------------------------------------------------------------------
def _strip_bookkeeping(model):
    """Drops what the exporter records about itself and the Python source
    (paths, stack traces, versions): it does not change what the model
    computes, and would make one model hash differently on two machines."""
    model.producer_name = ""
    model.producer_version = ""
    model.doc_string = ""
    del model.metadata_props[:]
    graphs = [model.graph] + [f for f in model.functions]
    while graphs:
        g = graphs.pop()
        if hasattr(g, "doc_string"):
            g.doc_string = ""
        if hasattr(g, "metadata_props"):
            del g.metadata_props[:]
        for node in g.node:
            node.doc_string = ""
            del node.metadata_props[:]
            for attr in node.attribute:
                if attr.HasField("g"):
                    graphs.append(attr.g)
                graphs.extend(attr.graphs)
        if not hasattr(g, "initializer"):
            continue  # a FunctionProto: its inputs and outputs are names
        for values in ("input", "output", "value_info"):
            for v in getattr(g, values):
                v.doc_string = ""
                del v.metadata_props[:]
        for t in g.initializer:
            t.doc_string = ""
            del t.metadata_props[:]
    return model


def export(module, args, dynamic_shapes=None):
    """module(*args) as an ONNX ModelProto with its weights inside, from
    torch.onnx.export(dynamo=True), bookkeeping stripped. Raises
    CompileError naming the exporter's reason when it cannot export."""
    torch = _torch()
    # The exporter prints its progress on stdout: kept for a failure's
    # message, else dropped.
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            program = torch.onnx.export(module, tuple(args), dynamo=True,
                                        dynamic_shapes=dynamic_shapes,
                                        verbose=False, report=False)
    except Exception as e:  # the exporter raises many types
        raise CompileError("torch.onnx.export(dynamo=True) cannot export %s: "
                           "%s: %s" % (type(module).__name__,
                                       type(e).__name__, _first_lines(e)),
                           stderr=printed.getvalue()) from None
    if program is None:
        raise CompileError("torch.onnx.export returned no program")
    return _strip_bookkeeping(program.model_proto)


def _first_lines(e, n=6):
    lines = str(e).strip().splitlines()
    text = "\n".join(lines[:n])
    return text + ("\n..." if len(lines) > n else "")


# -- cache ---------------------------------------------------------------------
def package_key(model_proto, options):
    """The cache key of an exported model compiled with `options` (a dict of
    JSON values)."""
    h = hashlib.sha256()
    h.update(b"cgc-package-cache %d\n" % _CACHE_FORMAT)
    h.update(json.dumps(options, sort_keys=True).encode())
    h.update(b"\n")
    h.update(model_proto.SerializeToString(deterministic=True))
    return h.hexdigest()[:32]


def _compiler_identity(binary):
    """Which compiler made a package: its path, size and modification time
    (cheap to read, changes with every build)."""
    st = os.stat(binary)
    return "%s %d %d" % (os.path.realpath(binary), st.st_size,
                         st.st_mtime_ns)


def _save_onnx(model_proto, folder):
    """Writes the model as folder/model.onnx, weights in model.onnx.data
    when the model is over protobuf's 2 GB limit."""
    import onnx
    path = Path(folder) / "model.onnx"
    large = model_proto.ByteSize() > (1 << 31) - (1 << 24)
    onnx.save_model(model_proto, str(path), save_as_external_data=large,
                    all_tensors_to_one_file=True,
                    location="model.onnx.data")
    return path


def cached_package(model_proto, options, compile_options, progress=False):
    """The package folder for an exported model: from the cache, else
    compiled into it. options: what the key covers (precision, dims, ...);
    compile_options: cgc.compile's keyword arguments. Raises CompileError
    when the package is not cached and cannot be compiled (no compiler:
    the message names the key and the cache folder)."""
    root = cache_dir()
    key = package_key(model_proto, options)
    folder = root / key
    try:
        binary, why_not = find_compiler(), None
    except CompileError as e:
        binary, why_not = None, e.message
    stamp = folder / "cgc-cache.json"
    if (folder / "libmodel.so").is_file() and stamp.is_file():
        made_by = json.loads(stamp.read_text()).get("compiler")
        if binary is None or made_by == _compiler_identity(binary):
            return folder
    if binary is None:
        raise CompileError(
            "the model's package (cache key %s) is not in the package cache "
            "%s, and there is no compiler to make it: %s. Fill the cache on a "
            "machine that has one (the same code with compile_only=True, "
            "CGC_CACHE_DIR naming the folder to carry)" % (key, root, why_not))
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=key + ".", dir=root) as tmp:
        onnx_path = _save_onnx(model_proto, tmp)
        built = _compile(onnx_path, Path(tmp) / "package", progress=progress,
                         cgc_binary=binary, **compile_options)
        (built / "cgc-cache.json").write_text(json.dumps(
            {"key": key, "options": options,
             "compiler": _compiler_identity(binary)}, indent=1) + "\n")
        # Published whole or not at all; a stale one goes first.
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(built, folder)
        except OSError:
            if not (folder / "libmodel.so").is_file():
                raise
    return folder


# -- running -------------------------------------------------------------------
def _flat_tensors(torch, args, what):
    """args as a flat list of tensors; TypeError naming anything else."""
    flat = []
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            raise TypeError("%s[%d] is a %s: cgc graphs take tensor arguments "
                            "only" % (what, i, type(a).__name__))
        flat.append(a)
    return flat


_GRAPHED_CLASS = None


def _graphed_module_class():
    """GraphedModule as an nn.Module subclass, made once torch is
    imported."""
    global _GRAPHED_CLASS
    if _GRAPHED_CLASS is not None:
        return _GRAPHED_CLASS
    torch = _torch()
    from torch.utils import _pytree as pytree

    class GraphedModule(torch.nn.Module):
        """Runs a cgc package in place of a module: forward(*args) takes the
        tensors the module was graphed with (same shapes but for the
        bucketed dims, same dtypes) and returns what the module returned
        (the same structure of tensors). Inference only: weights are the
        module's at graphing time, and no autograd graph is recorded.

        Attributes: model (the loaded cgc.Model), package (its folder),
        key (its cache key)."""

        def __init__(self, model, package, key, out_spec, name):
            super().__init__()
            self.model = model
            self.package = Path(package)
            self.key = key
            self._out_spec = out_spec
            self._name = name

        def forward(self, *args):
            if torch.is_grad_enabled():
                for i, a in enumerate(args):
                    if isinstance(a, torch.Tensor) and a.requires_grad:
                        raise InvalidArgumentError(
                            "argument %d of the graphed %s requires grad: "
                            "cgc graphs run inference only (no autograd "
                            "graph); call it under torch.no_grad() or "
                            "torch.inference_mode(), or detach the input"
                            % (i, self._name), StatusCode.INVALID_ARGUMENT)
            result = self.model(*args)
            flat = list(result) if isinstance(result, tuple) else [result]
            return pytree.tree_unflatten(flat, self._out_spec)

        def extra_repr(self):
            return "%s, package=%s" % (self._name, self.package)

    _GRAPHED_CLASS = GraphedModule
    return GraphedModule


def _as_module(torch, fn):
    """A plain function as an nn.Module (torch.onnx.export takes modules)."""
    if isinstance(fn, torch.nn.Module):
        return fn

    class Function(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)
    Function.__name__ = getattr(fn, "__name__", "function")
    return Function()


def graph_module(module, sample_args, *, precision="fp32", dims=None,
                 dynamic_shapes=None, pad_to_bucket=False, device=None,
                 compile_options=None, check=True, progress=False,
                 compile_only=False, name=None):
    """One module (or function) of make_graphed_callables: export, compile
    or find in the cache, load, check against eager on the sample (with
    compile_only, the package folder instead)."""
    torch = _torch()
    if precision not in PRECISIONS:
        raise ValueError("precision must be one of %s, got %r"
                         % (", ".join(PRECISIONS), precision))
    if dims and dynamic_shapes is None:
        raise ValueError(
            "dims=%r names symbolic dims; say which input axes they are with "
            "dynamic_shapes (as torch.onnx.export takes it, the dims by "
            "name), e.g. dynamic_shapes={'x': {0: 'N'}}" % (dims,))
    module = _as_module(torch, module)
    name = name or type(module).__name__
    if module.training:
        raise ValueError(
            "%s is in training mode: cgc graphs inference, so call "
            "module.eval() first (dropout off, batch norm's running "
            "statistics)" % name)
    args = _flat_tensors(torch, sample_args, "sample_args")
    device = _device_index(torch, args, device)
    with torch.no_grad():
        reference = module(*args)
        flat_ref, out_spec = _flat_outputs(torch, reference, name)
        model_proto = _export_portable(torch, module, args, dynamic_shapes)
    options = {"precision": precision, "pad_to_bucket": bool(pad_to_bucket),
               "dims": {k: (list(v) if isinstance(v, (list, tuple)) else v)
                        for k, v in (dims or {}).items()},
               "compile_options": compile_options or {}}
    folder = cached_package(
        model_proto, options,
        dict(dims=dims or None, precision=precision,
             pad_to_bucket=pad_to_bucket, **(compile_options or {})),
        progress=progress)
    if compile_only:
        return folder
    model = load(folder, device=device)
    try:
        if len(model.inputs) != len(args):
            raise CompileError(
                "the exported %s takes %d inputs, the sample %d (the exporter "
                "dropped unused or constant arguments: pass only the tensors "
                "the module reads)" % (name, len(model.inputs), len(args)))
        if len(model.outputs) != len(flat_ref):
            raise CompileError(
                "the exported %s has %d outputs, the module returns %d tensors"
                % (name, len(model.outputs), len(flat_ref)))
        graphed = _graphed_module_class()(model, folder, folder.name,
                                          out_spec, name)
        if check:
            _check_sample(torch, graphed, args, flat_ref, precision, name)
    except BaseException:
        model.close()
        raise
    return graphed


def _export_portable(torch, module, args, dynamic_shapes):
    """The module exported from a CPU copy (_on_cpu), so that the package
    cache's key does not depend on where the module lives and a cache
    filled on a machine without a GPU (compile_only) serves the GPU
    machine; where the copy cannot be made or exported (code that names a
    CUDA device itself), the module is exported where it is, and only the
    key can differ."""
    on_cpu = _on_cpu(torch, module, args)
    if on_cpu is None:
        return export(module, args, dynamic_shapes)
    try:
        return export(*on_cpu, dynamic_shapes)
    except CompileError:
        return export(module, args, dynamic_shapes)


def _on_cpu(torch, module, args):
    """A CPU copy of a module with CUDA weights or arguments, and its
    arguments; None when there is nothing to move or the module cannot be
    copied. TorchDynamo's graphs name their device in ops (arange(...,
    device=cuda:0), .to(cuda:0)): in a copy of such a graph those become
    the CPU, as a CPU trace of the same code has them."""
    import copy
    on_cuda = any(t.is_cuda for t in list(module.parameters()) +
                  list(module.buffers()) + list(args))
    if not on_cuda:
        return None
    # TorchDynamo's graphs keep its fake tensors in their nodes' meta: a
    # deep copy of those would copy dynamo's tracing state with them, and
    # export needs none of it (the suspected cause, not reproduced on the
    # CPU, of torch crashing on the GPU after such a copy failed to export).
    graphs = [m for m in module.modules()
              if isinstance(m, torch.fx.GraphModule)]
    metas = [[(n, n.meta) for n in g.graph.nodes] for g in graphs]
    for pairs in metas:
        for n, _ in pairs:
            n.meta = {}
    try:
        copied = copy.deepcopy(module).cpu()
    except Exception:  # an uncopyable module: exported in place
        return None
    finally:
        for pairs in metas:
            for n, meta in pairs:
                n.meta = meta
    for sub in copied.modules():
        if isinstance(sub, torch.fx.GraphModule):
            _devices_to_cpu(torch, sub)
    return copied, tuple(a.cpu() for a in args)


def _devices_to_cpu(torch, gm):
    """Every CUDA device constant in the FX graph of `gm` becomes the CPU."""
    cpu = torch.device("cpu")
    changed = []  # the devices replaced (counted, not compared: arguments
    #               may hold tensors, whose == is elementwise)

    def retarget(a):
        if isinstance(a, torch.device) and a.type == "cuda":
            changed.append(a)
            return cpu
        return a
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        before = len(changed)
        args = torch.fx.node.map_aggregate(node.args, retarget)
        kwargs = dict(torch.fx.node.map_aggregate(node.kwargs, retarget))
        # A device named by a string only where it is the device argument
        # (other strings, such as autocast's device type, keep their meaning).
        named = kwargs.get("device")
        if isinstance(named, str) and (named == "cuda" or
                                       named.startswith("cuda:")):
            changed.append(named)
            kwargs["device"] = cpu
        if len(changed) > before:
            node.args, node.kwargs = tuple(args), kwargs
    if changed:
        gm.recompile()


def _device_index(torch, args, device):
    if device is not None:
        d = torch.device(device)
        if d.type != "cuda":
            raise ValueError("device must be a CUDA device, got %s" % d)
        return d.index or 0
    for a in args:
        if a.is_cuda:
            return a.device.index
    return 0


def _flat_outputs(torch, reference, name):
    from torch.utils import _pytree as pytree
    flat, spec = pytree.tree_flatten(reference)
    for i, t in enumerate(flat):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s returns a %s (output %d): cgc graphs return "
                            "tensors only" % (name, type(t).__name__, i))
    return flat, spec


def _check_sample(torch, graphed, args, flat_ref, precision, name):
    """The graphed module against the module itself on the sample
    arguments, within the precision's bound (cgc.BOUNDS)."""
    from ._accuracy import AccuracyError, BOUNDS, compare
    dev = torch.device("cuda", graphed.model.device)
    with torch.no_grad():
        got = graphed(*[a.to(dev) for a in args])
    flat_got, _ = _flat_outputs(torch, got, name)
    names = [t.name for t in graphed.model.outputs]
    errors = compare([g.float() for g in flat_got],
                     [r.float() for r in flat_ref], names)
    bound = BOUNDS[precision]
    bad = [e for e in errors if e.non_finite or not e.rel_l2 <= bound]
    if bad:
        raise AccuracyError(
            "the graphed %s differs from the module on the sample arguments "
            "(bound %.0e in %s): %s (package %s)" % (
                name, bound, precision, "; ".join(
                    "%s rel. L2 %.3g, max abs %.3g%s" % (
                        e.name, e.rel_l2, e.max_abs,
                        ", %d non-finite" % e.non_finite if e.non_finite
                        else "") for e in bad), graphed.package))


def make_graphed_callables(callables, sample_args, *, precision="fp32",
                           dims=None, dynamic_shapes=None,
                           pad_to_bucket=False, device=None,
                           compile_options=None, check=True, progress=False,
                           compile_only=False):
    """cgc's torch.cuda.make_graphed_callables: each module (or function)
    exported with torch.onnx.export(dynamo=True), compiled by cgc (or found
    in the package cache, see cgc.cache_dir()) and loaded; returns a
    GraphedModule per callable that runs the cgc graph, a tuple when given a
    tuple.

    callables: an nn.Module in eval mode, a function of tensors, or a tuple
        of them (then sample_args is a tuple of argument tuples).
    sample_args: a tuple of tensors, the shapes and dtypes of the calls.
    precision: "fp32", "tf32", "fp16" or "bf16" (cgc.compile's).
    dims, dynamic_shapes: shape buckets. dims={"N": [1, 2, 4, 8]} compiles
        one package for each value; dynamic_shapes (torch.onnx.export's,
        the dims by name, e.g. {"x": {0: "N"}}) says which axes they are.
        The sample's size of such an axis must not be 0 or 1 (torch.export
        would specialize it).
    pad_to_bucket: sizes between buckets run padded (cgc.compile's).
    device: the CUDA device to run on (default: the sample's, else cuda:0).
    compile_options: more cgc.compile keyword arguments (arch, cublaslt, ...).
    check: compare the result on the sample arguments with the module's own
        within cgc.BOUNDS[precision]; AccuracyError if it is further.
    compile_only: fill the package cache and return the package folder(s)
        instead of loading them: on a machine without a GPU (CPU sample
        tensors), for a GPU machine without the compiler that runs the same
        code with the cache carried over (CGC_CACHE_DIR).

    Unlike torch's, the result records no autograd graph (inference; a
    call with inputs that require grad under grad mode is refused) and
    holds the weights as they were when it was made."""
    if isinstance(callables, tuple):
        if not isinstance(sample_args, tuple) or len(sample_args) != len(
                callables) or not all(isinstance(a, tuple)
                                      for a in sample_args):
            raise TypeError("with a tuple of callables, sample_args is a tuple "
                            "of one argument tuple per callable")
        return tuple(graph_module(
            c, a, precision=precision, dims=dims,
            dynamic_shapes=dynamic_shapes, pad_to_bucket=pad_to_bucket,
            device=device, compile_options=compile_options, check=check,
            progress=progress, compile_only=compile_only)
            for c, a in zip(callables, sample_args))
    if not isinstance(sample_args, tuple):
        raise TypeError("sample_args is a tuple of tensors, got %s"
                        % type(sample_args).__name__)
    return graph_module(callables, sample_args, precision=precision,
                        dims=dims, dynamic_shapes=dynamic_shapes,
                        pad_to_bucket=pad_to_bucket, device=device,
                        compile_options=compile_options, check=check,
                        progress=progress, compile_only=compile_only)


__all__ = ["make_graphed_callables", "cache_dir", "export", "package_key"]
