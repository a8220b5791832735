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
replaced) is refused with an error saying so. That check reads each
weight's version counter on every call (about 0.1 µs a weight);
options={"check_weights": False} drops it for models whose weights never
change after compiling. Graphs run inference only:
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
            "compile_only", "check_weights"}


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


# Ops whose result shares the memory of their first argument: an in-place
# update of the result changes the argument.
_VIEW_OPS = {"view", "reshape", "view_as", "reshape_as", "__getitem__",
             "getitem", "transpose", "permute", "select", "narrow", "expand",
             "expand_as", "unsqueeze", "squeeze", "flatten", "t", "T",
             "as_strided", "split", "chunk", "unbind", "detach", "contiguous",
             "movedim", "unflatten", "diagonal", "unfold", "view_as_real"}


def _target_name(n):
    if n.op == "call_method":
        return n.target
    if n.op == "call_function":
        return getattr(n.target, "__name__", "")
    return ""


def _is_in_place(n):
    import operator
    name = _target_name(n)
    if n.op == "call_function" and getattr(operator, name, None) is n.target:
        return name in _IN_PLACE_OPERATORS
    return name.endswith("_") and not name.endswith("__")


def _in_place_op(gm):
    """The name of an op of the graph that changes an input (or a view of
    one) in place, or None: the ONNX export computes values, so a graph
    that mutates what the caller passed would lose the mutation. In-place
    updates of the graph's own intermediates (ResNet's `out += identity`)
    are values like any other. torch's in-place ops end in "_" (add_,
    relu_); the operator module's names that end so (and_, or_) are not in
    place, its i-names (iadd) are."""
    aliases = set()
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            aliases.add(n)
            continue
        if n.op not in ("call_method", "call_function"):
            continue
        first = n.args[0] if n.args else None
        touches_input = first in aliases
        if _is_in_place(n) and touches_input:
            return _target_name(n)
        out = n.kwargs.get("out")
        if out is not None and any(o in aliases for o in (
                out if isinstance(out, (list, tuple)) else [out])):
            return "%s(out=...)" % _target_name(n)
        if touches_input and (_target_name(n) in _VIEW_OPS or
                              _is_in_place(n)):
            aliases.add(n)
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


def _cgc_runner(graphed, static, example_inputs, check_weights):
    """The function TorchDynamo calls in place of the graph: the dynamic
    inputs to the cgc graph, after checking (check_weights) that the frozen
    weights are still the module's tensors, unchanged (the same objects at
    the same version: a few µs for tens of weights, done in C)."""
    import operator
    dynamic = [i for i in range(len(example_inputs)) if i not in set(static)]
    pick = _picker(dynamic)
    pick_static = _picker(static)
    frozen = tuple(example_inputs[i] for i in static)
    versions = tuple(t._version for t in frozen)
    version_of = operator.attrgetter("_version")

    def run(*args):
        if check_weights and static:
            now = pick_static(args)
            if tuple(map(version_of, now)) != versions or \
                    not all(map(operator.is_, now, frozen)):
                raise InvalidArgumentError(
                    "a parameter or buffer of the module changed after "
                    "torch.compile(backend='cgc') froze it into package %s: "
                    "call torch._dynamo.reset() and compile again (or pass "
                    "options={'check_weights': False} to skip this check)"
                    % graphed.package, StatusCode.INVALID_ARGUMENT)
        return graphed(*pick(args))
    run.cgc_graphed = graphed
    return run


def _picker(positions):
    """A function(args) -> the tuple of args at `positions` (in C)."""
    import operator
    if not positions:
        return lambda args: ()
    get = operator.itemgetter(*positions)
    if len(positions) == 1:
        return lambda args: (get(args),)
    return get


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
            return _cgc_runner(graphed, static, example_inputs,
                               options.get("check_weights", True))
    entry["reason"] = reason
    _record(entry)
    message = ("torch.compile(backend='cgc'): graph %d (%d nodes) runs in "
               "torch: %s" % (entry["graph"], nodes, reason))
    if strict:
        raise Error(message)
    warnings.warn(message, FallbackWarning, stacklevel=2)
    return gm.forward


__all__ = ["backend", "dynamo_report", "FallbackWarning"]
