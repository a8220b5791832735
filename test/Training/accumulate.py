"""Gradient accumulation (--optimizer=...,accumulate=K) against numpy: a
linear model y = x w with MSE, trained by cgc-interp --train on a
different batch each step (--inputs DIR/step_<k>) and by PyTorch's
accumulation loop written out in float64 numpy: each micro-batch adds
grad / K, every K-th one takes an optimizer step with the sum and clears
it. Adam's t and the schedule count optimizer steps. The loss curves must
agree within 1e-5 relative (cgc computes in float32), and the trained
weights (--state-out) within 1e-5 too, so a missed or extra update fails.
A poisoned run has a NaN in batch 4: that micro-batch is skipped (not
summed, not counted towards the K).

Usage: accumulate.py CGC_INTERP MODEL WORKDIR
"""
import math
import os
import subprocess
import sys

import numpy as np

RNG = np.random.default_rng(7)
STEPS = 10
BATCHES = [(RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2)))
           for _ in range(STEPS)]
POISONED = 4
W0 = np.array([[0.1, -0.2], [0.3, 0.05], [-0.1, 0.2]])


def numpy_run(kind, lr, micro, warmup, poisoned):
    w = W0.copy()
    m, v, buf, acc = (np.zeros_like(w) for _ in range(4))
    losses, updates, summed = [], 0, 0
    for k, (x, label) in enumerate(BATCHES):
        if poisoned and k == POISONED:
            losses.append(math.nan)
            continue
        d = x @ w - label
        losses.append(float(np.mean(d * d)))
        acc += 2 * x.T @ d / d.size / micro
        summed += 1
        if summed % micro:
            continue
        g, acc = acc, np.zeros_like(w)
        r = lr * updates / warmup if updates < warmup else lr
        updates += 1
        if kind == "sgd":
            buf = 0.9 * buf + g
            w = w - r * buf
        else:
            t = updates
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            w = w * (1 - r * 0.01)
            w = w - r / (1 - 0.9 ** t) * m / (
                np.sqrt(v) / math.sqrt(1 - 0.999 ** t) + 1e-8)
    return losses, w


def write_batches(workdir, poisoned, batches=BATCHES, poisoned_step=POISONED,
                  nan_at=5):
    """--inputs folders step_K of x.npy and label.npy (float32); with
    `poisoned`, element `nan_at` of batch `poisoned_step`'s x is a NaN.
    (batchnorm_stats.py writes its batches with it too.)"""
    for k, (x, label) in enumerate(batches):
        folder = os.path.join(workdir, "step_%d" % k)
        os.makedirs(folder, exist_ok=True)
        if poisoned and k == poisoned_step:
            x = np.where(np.arange(x.size).reshape(x.shape) == nan_at, np.nan,
                         x)
        np.save(os.path.join(folder, "x.npy"), x.astype(np.float32))
        np.save(os.path.join(folder, "label.npy"), label.astype(np.float32))


def cgc_run(interp, model, workdir, optimizer):
    state = os.path.join(workdir, "state")
    out = subprocess.run(
        [interp, model, "--train", "--loss=mse", "--optimizer=" + optimizer,
         "--steps", str(STEPS), "--inputs", workdir, "--state-out", state],
        check=True, capture_output=True, text=True).stdout
    losses = [float(line.split("=")[1].split()[0]) for line in out.splitlines()
              if line.startswith("step")]
    return losses, np.load(os.path.join(state, "w.npy"))


CASES = [
    ("sgd", 0.2, 3, 0, False),
    ("sgd", 0.2, 1, 0, False),
    ("adamw", 0.05, 2, 0, False),
    ("adamw", 0.05, 4, 2, False),
    ("sgd", 0.2, 3, 0, True),
    ("adamw", 0.05, 2, 1, True),
]


def relative_error(got, want):
    """The worst relative difference; a NaN must meet a NaN."""
    worst = 0.0
    for a, b in zip(got, want):
        if math.isnan(b) or math.isnan(a):
            worst = max(worst, 0.0 if math.isnan(a) and math.isnan(b)
                        else math.inf)
        else:
            worst = max(worst, abs(a - b) / max(abs(b), 1e-30))
    return worst


def main():
    interp, model, workdir = sys.argv[1:4]
    failures = 0
    for kind, lr, micro, warmup, poisoned in CASES:
        write_batches(workdir, poisoned)
        settings = "lr=%g,accumulate=%d" % (lr, micro)
        if kind == "sgd":
            settings += ",momentum=0.9"
        if warmup:
            settings += ",warmup=%d" % warmup
        got, w_got = cgc_run(interp, model, workdir, kind + ":" + settings)
        want, w_want = numpy_run(kind, lr, micro, warmup, poisoned)
        err = relative_error(got, want)
        w_err = float(np.max(np.abs(w_got - w_want)) /
                      np.max(np.abs(w_want)))
        ok = len(got) == STEPS and err <= 1e-5 and w_err <= 1e-5
        failures += not ok
        print("%-5s %-36s %-8s loss %.1e weights %.1e %s" % (
            kind, settings, "poisoned" if poisoned else "", err, w_err,
            "ok" if ok else "FAIL"))
    print("%d of %d accumulations match numpy" % (len(CASES) - failures,
                                                   len(CASES)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
