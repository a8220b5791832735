"""torch.compile(model, backend="cgc"): each FX graph TorchDynamo captures
is exported, compiled by cgc (through the package cache of cgc._torch) and
run as a cgc graph. A graph cgc cannot take runs in torch, and the reason is
reported, never silent: a cgc.FallbackWarning names it, cgc.dynamo_report()
lists every graph with what ran it, and options={"strict": True} raises
instead.

    compiled = torch.compile(model.eval(), backend="cgc", dynamic=False,
                             options={"precision": "bf16"})
    with torch.no_grad():
        y = compiled(x)

Options (torch.compile's options=): precision ("fp32", "tf32", "fp16",
"bf16"), strict (bool), check (compare with torch on the example inputs;
default True), compile_options (more cgc.compile arguments), progress,
compile_only (fill the package cache and run every graph in torch: on a
machine without a GPU or without one of the inputs' devices, for a GPU
machine that has no compiler; a refusal then is still reported).

The module's parameters and buffers, which TorchDynamo passes as graph
inputs, are frozen into the package: a call after they changed (in place or
replaced) is refused with an error saying so. Graphs run inference only:
under grad mode with inputs that require grad the graph runs in torch.
"""

import threading
import warnings

from ._errors import Error, InvalidArgumentError, StatusCode
from ._torch import _torch, graph_module


class FallbackWarning(UserWarning):
    """A graph of torch.compile(backend="cgc") runs in torch, not in cgc."""


_REPORT = []
_REPORT_LOCK = threading.Lock()
_OPTIONS = {"precision", "strict", "check", "compile_options", "progress",
            "compile_only"}


def dynamo_report(clear=False):
    """What ran each graph torch.compile(backend="cgc") was handed, in
    order: dicts with graph (its number), nodes (FX nodes that compute),
    runner ("cgc" or "torch"), reason (why torch, else None), package (the
    cgc package folder, else None). clear=True empties the list after
    reading it."""
    with _REPORT_LOCK:
        items = [dict(r) for r in _REPORT]
        if clear:
            _REPORT.clear()
    return items


def _record(entry):
    with _REPORT_LOCK:
        entry["graph"] = len(_REPORT)
        _REPORT.append(entry)
    return entry


def _static_positions(torch, gm, example_inputs):
    """The inputs TorchDynamo marked as static: the module's parameters and
    buffers (they keep their address from call to call)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    static = []
    for i, x in enumerate(example_inputs):
        meta = placeholders[i].meta.get("tensor_dict", {}) \
            if i < len(placeholders) else {}
        if getattr(x, "_dynamo_static_input_type", None) or \
                meta.get("_dynamo_static_input_type") or \
                isinstance(x, torch.nn.Parameter):
            static.append(i)
    return static


# Python's in-place operators as TorchDynamo records `x += y` on tensors.
_IN_PLACE_OPERATORS = {"iadd", "isub", "imul", "itruediv", "ifloordiv",
                       "imod", "ipow", "imatmul", "iand", "ior", "ixor",
                       "ilshift", "irshift"}


def _in_place_op(gm):
    """The name of an op of the graph that changes a tensor in place, or
    None: the ONNX export would compute the value but not the mutation.
    torch's in-place ops end in "_" (add_, relu_); the operator module's
    names that end so (and_, or_) are not in place, its i-names are."""
    import operator
    for n in gm.graph.nodes:
        if n.op == "call_method":
            name = n.target
            in_place = name.endswith("_") and not name.endswith("__")
        elif n.op == "call_function":
            name = getattr(n.target, "__name__", "")
            if getattr(operator, name, None) is n.target:
                in_place = name in _IN_PLACE_OPERATORS
            else:
                in_place = name.endswith("_") and not name.endswith("__")
        else:
            continue
        if in_place:
            return name
        if n.kwargs.get("out") is not None:
            return "%s(out=...)" % name
    return None


def _refusal(torch, gm, example_inputs, compile_only):
    """Why the graph cannot be a cgc graph, or None."""
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            return ("input %d is a %s (symbolic shapes or a non-tensor "
                    "input): cgc compiles fixed shapes; use "
                    "torch.compile(..., dynamic=False)" % (
                        i, type(x).__name__))
    if not any(x.is_cuda for x in example_inputs) and not compile_only:
        return "no input is a CUDA tensor: cgc runs graphs on the GPU"
    if torch.is_grad_enabled() and any(x.requires_grad
                                       for x in example_inputs):
        return ("grad mode is on and inputs require grad: cgc graphs run "
                "inference only; call the compiled model under "
                "torch.no_grad() or torch.inference_mode()")
    op = _in_place_op(gm)
    if op:
        return "the graph changes a tensor in place (%s)" % op
    if not [n for n in gm.graph.nodes
            if n.op in ("call_function", "call_method", "call_module")]:
        return "the graph computes nothing"
    return None


def _frozen_module(torch, gm, example_inputs, static):
    """gm with its static inputs held as buffers: the module cgc exports,
    taking the other inputs only."""
    count = len(example_inputs)
    static_set = set(static)

    class Frozen(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.graph_module = gm
            for k, i in enumerate(static):
                self.register_buffer("frozen_%d" % k,
                                     example_inputs[i].detach())

        def forward(self, *dynamic):
            args, it = [], iter(dynamic)
            for i in range(count):
                args.append(getattr(self, "frozen_%d" % static.index(i))
                            if i in static_set else next(it))
            return self.graph_module(*args)
    return Frozen().eval()


def _cgc_runner(graphed, static, example_inputs):
    """The function TorchDynamo calls in place of the graph: the dynamic
    inputs to the cgc graph, after checking that the frozen weights are
    still what the module holds."""
    dynamic = [i for i in range(len(example_inputs)) if i not in set(static)]
    frozen = [(i, example_inputs[i].data_ptr(), example_inputs[i]._version)
              for i in static]

    def run(*args):
        for i, ptr, version in frozen:
            t = args[i]
            if t.data_ptr() != ptr or t._version != version:
                raise InvalidArgumentError(
                    "a parameter or buffer of the module changed after "
                    "torch.compile(backend='cgc') froze it into package %s "
                    "(input %d): call torch._dynamo.reset() and compile "
                    "again" % (graphed.package, i),
                    StatusCode.INVALID_ARGUMENT)
        return graphed(*[args[i] for i in dynamic])
    run.cgc_graphed = graphed
    return run


def backend(gm, example_inputs, mode=None, options=None):
    """The torch.compile backend (entry point torch_dynamo_backends: cgc)."""
    torch = _torch()
    options = dict(options or {})
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ValueError("unknown cgc backend option(s) %s (known: %s)" % (
            ", ".join(unknown), ", ".join(sorted(_OPTIONS))))
    strict = bool(options.get("strict", False))
    nodes = sum(1 for n in gm.graph.nodes
                if n.op in ("call_function", "call_method", "call_module"))
    entry = {"nodes": nodes, "runner": "torch", "reason": None,
             "package": None}
    compile_only = bool(options.get("compile_only", False))
    reason = _refusal(torch, gm, example_inputs, compile_only)
    if reason is None:
        static = _static_positions(torch, gm, example_inputs)
        dynamic = [x for i, x in enumerate(example_inputs)
                   if i not in set(static)]
        try:
            frozen = _frozen_module(torch, gm, example_inputs, static)
            graphed = graph_module(
                frozen, tuple(dynamic),
                precision=options.get("precision", "fp32"),
                compile_options=options.get("compile_options"),
                check=options.get("check", True),
                progress=options.get("progress", False),
                compile_only=compile_only,
                name="graph %d of torch.compile" % len(_REPORT))
        except (Error, TypeError, ValueError) as e:
            reason = "%s: %s" % (type(e).__name__, e)
        else:
            if compile_only:
                entry.update(reason="compile_only: package %s made, the graph "
                             "runs in torch here" % graphed, package=str(graphed))
                _record(entry)
                return gm.forward
            entry.update(runner="cgc", package=str(graphed.package))
            _record(entry)
            return _cgc_runner(graphed, static, example_inputs)
    entry["reason"] = reason
    _record(entry)
    message = ("torch.compile(backend='cgc'): graph %d (%d nodes) runs in "
               "torch: %s" % (entry["graph"], nodes, reason))
    if strict:
        raise Error(message)
    warnings.warn(message, FallbackWarning, stacklevel=2)
    return gm.forward


__all__ = ["backend", "dynamo_report", "FallbackWarning"]
