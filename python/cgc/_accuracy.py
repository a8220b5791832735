"""Accuracy against a reference: what a reduced precision costs, measured.

    errors = cgc.compare(model.run(feeds), reference_outputs)
    for e in errors:
        print(e.name, e.max_abs, e.rel_l2, e.non_finite)
    cgc.check_accuracy(errors, "bf16")   # raises AccuracyError above the bound

The measures are cgc-run --check's: the largest absolute difference, the
relative L2 error ||got - ref|| / ||ref|| over the elements where the
reference is finite, and the count of elements that are infinite or NaN
where the reference is finite (an fp16 overflow shows as such).
"""

from collections import namedtuple

import numpy as np

from ._errors import Error

__all__ = ["Accuracy", "AccuracyError", "BOUNDS", "compare", "check_accuracy"]

#: Relative L2 error each precision is held to against an fp32 reference
#: (issue 15's bounds; fp32 at the conformance tolerance).
BOUNDS = {"fp32": 1e-5, "tf32": 2e-3, "fp16": 2e-3, "bf16": 1e-2}

Accuracy = namedtuple("Accuracy", "name max_abs rel_l2 non_finite elements")


class AccuracyError(Error):
    """An output is further from its reference than its precision allows."""


def _as_array(x):
    if hasattr(x, "detach"):  # a torch tensor, on any device
        x = x.detach().float().cpu().numpy()
    return np.asarray(x)


def _one(name, got, ref):
    got = _as_array(got).astype(np.float64)
    ref = _as_array(ref).astype(np.float64)
    if got.shape != ref.shape:
        raise ValueError("output %r has shape %s, its reference %s"
                         % (name, got.shape, ref.shape))
    finite = np.isfinite(ref)
    bad = finite & ~np.isfinite(got)
    ok = finite & ~bad
    diff = got[ok] - ref[ok]
    norm = float(np.linalg.norm(ref[finite]))
    rel = float(np.linalg.norm(diff)) / norm if norm > 0 else float(np.linalg.norm(diff))
    max_abs = float(np.max(np.abs(diff))) if diff.size else 0.0
    return Accuracy(name, max_abs, rel, int(bad.sum()), int(got.size))


def compare(outputs, references, names=None):
    """Per output, its Accuracy against the reference. `outputs` and
    `references` are dicts by output name (model.run's form) or sequences in
    output order (then `names` names them); numpy arrays or torch tensors."""
    if isinstance(outputs, dict):
        missing = [n for n in outputs if n not in references]
        if missing:
            raise ValueError("no reference for output(s) %s" % ", ".join(missing))
        return [_one(n, outputs[n], references[n]) for n in outputs]
    outputs, references = list(outputs), list(references)
    if len(outputs) != len(references):
        raise ValueError("%d outputs against %d references"
                         % (len(outputs), len(references)))
    names = names or ["output %d" % i for i in range(len(outputs))]
    return [_one(n, o, r) for n, o, r in zip(names, outputs, references)]


def check_accuracy(errors, precision):
    """Raises AccuracyError naming every output whose relative L2 error is
    above BOUNDS[precision] or that is non-finite where its reference is
    finite; returns `errors` otherwise."""
    if precision not in BOUNDS:
        raise ValueError("precision must be one of %s, got %r"
                         % (", ".join(BOUNDS), precision))
    bound = BOUNDS[precision]
    failed = ["%s: rel. L2 %.3g (bound %g)%s" % (
        e.name, e.rel_l2, bound,
        ", %d non-finite where the reference is finite" % e.non_finite
        if e.non_finite else "")
        for e in errors if e.rel_l2 > bound or e.non_finite]
    if failed:
        raise AccuracyError("; ".join(failed))
    return errors
