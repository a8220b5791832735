"""Training BatchNormalization's running statistics against numpy.

The model (Inputs/batchnorm-train.onnxtxt) normalizes its input by the
batch's statistics (training_mode=1, momentum 0.8, epsilon 1e-3) and leaves
the node's running-statistics outputs unread, as torch's exporter does.
Under --train the initializers running_mean and running_var are state the
step updates, as PyTorch updates a BatchNorm's buffers: blended with the
batch's mean and its unbiased variance (n / (n - 1) times the biased one).
Written out in float64 numpy: the loss (MSE), SGD on scale and bias, and
the statistics after every step, each within 1e-5 relative of cgc-interp's
(--state-out after each step count).

Cases: plain steps; a batch with a NaN (the step is skipped: no state,
statistics included, changes); accumulation over 2 micro-batches (the
parameters change every second step, the statistics every step, as
PyTorch's forward passes update its buffers).

Usage: batchnorm_stats.py CGC_INTERP MODEL WORKDIR
"""
import math
import os
import subprocess
import sys

import numpy as np

import accumulate  # its batch writer and error measure (same folder)

RNG = np.random.default_rng(11)
STEPS = 5
SHAPE = (4, 2, 3, 3)
BATCHES = [(RNG.standard_normal(SHAPE) * [[[[1.5]], [[0.5]]]] + 0.3,
            RNG.standard_normal(SHAPE)) for _ in range(STEPS)]
POISONED = 2
MOMENTUM, EPS, LR = 0.8, 1e-3, 0.1
INITIAL = {"scale": np.array([1.0, 0.5]), "bias": np.array([0.0, 0.1]),
           "running_mean": np.array([0.2, -0.1]),
           "running_var": np.array([1.5, 0.7])}


def numpy_run(steps, micro, poisoned):
    s = {k: v.copy() for k, v in INITIAL.items()}
    g_scale, g_bias, summed, losses = 0.0, 0.0, 0, []
    axes = (0, 2, 3)
    for k, (x, label) in enumerate(BATCHES[:steps]):
        if poisoned and k == POISONED:
            losses.append(math.nan)
            continue
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        n = x.size // x.shape[1]
        xhat = (x - mean[:, None, None]) / np.sqrt(var + EPS)[:, None, None]
        y = s["scale"][:, None, None] * xhat + s["bias"][:, None, None]
        d = y - label
        losses.append(float(np.mean(d * d)))
        dy = 2 * d / d.size
        g_scale = g_scale + (dy * xhat).sum(axis=axes) / micro
        g_bias = g_bias + dy.sum(axis=axes) / micro
        s["running_mean"] = MOMENTUM * s["running_mean"] + (1 - MOMENTUM) * mean
        s["running_var"] = (MOMENTUM * s["running_var"] +
                            (1 - MOMENTUM) * var * n / (n - 1))
        summed += 1
        if summed % micro:
            continue
        s["scale"] = s["scale"] - LR * g_scale
        s["bias"] = s["bias"] - LR * g_bias
        g_scale, g_bias = 0.0, 0.0
    return losses, s


def write_batches(workdir, poisoned):
    accumulate.write_batches(workdir, poisoned, BATCHES, POISONED, nan_at=7)


def cgc_run(interp, model, workdir, steps, micro):
    state = os.path.join(workdir, "state")
    optimizer = "sgd:lr=%g" % LR + (",accumulate=%d" % micro if micro > 1
                                    else "")
    out = subprocess.run(
        [interp, model, "--train", "--loss=mse", "--optimizer=" + optimizer,
         "--steps", str(steps), "--inputs", workdir, "--state-out", state],
        check=True, capture_output=True, text=True).stdout
    losses = [float(line.split("=")[1].split()[0]) for line in out.splitlines()
              if line.startswith("step")]
    return losses, {k: np.load(os.path.join(state, k + ".npy"))
                    for k in INITIAL}


def main():
    interp, model, workdir = sys.argv[1:4]
    failures = checks = 0
    for micro, poisoned in [(1, False), (1, True), (2, False)]:
        write_batches(workdir, poisoned)
        for steps in range(1, STEPS + 1):
            got, got_state = cgc_run(interp, model, workdir, steps, micro)
            want, want_state = numpy_run(steps, micro, poisoned)
            errors = {"loss": accumulate.relative_error(got, want)}
            for name in INITIAL:
                errors[name] = float(
                    np.max(np.abs(got_state[name] - want_state[name])) /
                    np.max(np.abs(want_state[name])))
            ok = len(got) == steps and max(errors.values()) <= 1e-5
            checks += 1
            failures += not ok
            print("accumulate %d %-8s after %d steps: %s %s" % (
                micro, "poisoned" if poisoned else "", steps,
                " ".join("%s %.1e" % kv for kv in errors.items()),
                "ok" if ok else "FAIL"))
    print("%d of %d runs match numpy" % (checks - failures, checks))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
