"""Learning-rate schedules (--optimizer=...:warmup=W,decay=D,total_steps=T)
against numpy: a linear model y = x w with MSE, trained by cgc-interp
--train and by the same optimizer written out in float64 numpy with
transformers' schedule formulas (the rate of step k, 0-based: lr k / W
while k < W, then lr (1 - p) or lr (1 + cos(pi p)) / 2 with
p = min(1, (k - W) / (T - W))). The loss curves must agree within 1e-5
relative (cgc computes in float32).

Usage: lr_schedule.py CGC_INTERP MODEL
"""
import math
import subprocess
import sys

import numpy as np

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-1.0, 1.0, 0.75],
              [0.2, -0.3, 0.4]])
LABEL = np.array([[1.0, -0.5], [0.25, 2.0], [-1.0, 0.5], [0.3, 0.1]])
W0 = np.array([[0.1, -0.2], [0.3, 0.05], [-0.1, 0.2]])
STEPS = 9


def rate(lr, k, warmup, decay, total):
    if k < warmup:
        return lr * k / warmup
    if decay == "none":
        return lr
    p = min(1.0, (k - warmup) / (total - warmup))
    return lr * ((1 - p) if decay == "linear"
                 else 0.5 * (1 + math.cos(math.pi * p)))


def numpy_losses(kind, lr, warmup, decay, total):
    w = W0.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    buf = np.zeros_like(w)
    losses = []
    for k in range(STEPS):
        d = X @ w - LABEL
        losses.append(float(np.mean(d * d)))
        g = 2 * X.T @ d / d.size
        r = rate(lr, k, warmup, decay, total)
        if kind == "sgd":
            buf = 0.9 * buf + g
            w = w - r * buf
        else:
            t = k + 1
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            w = w * (1 - r * 0.01)
            w = w - r / (1 - 0.9 ** t) * m / (
                np.sqrt(v) / math.sqrt(1 - 0.999 ** t) + 1e-8)
    return losses


def cgc_losses(interp, model, optimizer):
    values = lambda a: ",".join("%r" % float(e) for e in a.ravel())
    out = subprocess.run(
        [interp, model, "--train", "--loss=mse", "--optimizer=" + optimizer,
         "--steps", str(STEPS), "--input-value", "x=" + values(X),
         "--input-value", "label=" + values(LABEL)],
        check=True, capture_output=True, text=True).stdout
    return [float(line.split("=")[1]) for line in out.splitlines()
            if line.startswith("step")]


CASES = [
    ("sgd", 0.2, 3, "cosine", 7),
    ("sgd", 0.2, 0, "linear", 6),
    ("sgd", 0.2, 2, "none", 0),
    ("adamw", 0.05, 2, "linear", 8),
    ("adamw", 0.05, 0, "cosine", 5),
]


def main():
    interp, model = sys.argv[1], sys.argv[2]
    failures = 0
    for kind, lr, warmup, decay, total in CASES:
        settings = "lr=%g,warmup=%d,decay=%s" % (lr, warmup, decay)
        if kind == "sgd":
            settings += ",momentum=0.9"
        if decay != "none":
            settings += ",total_steps=%d" % total
        got = cgc_losses(interp, model, kind + ":" + settings)
        want = numpy_losses(kind, lr, warmup, decay, total)
        err = max(abs(a - b) / abs(b) for a, b in zip(got, want))
        ok = len(got) == STEPS and err <= 1e-5
        failures += not ok
        print("%-5s %-32s max rel diff %.1e %s" % (
            kind, settings, err, "ok" if ok else "FAIL"))
    print("%d of %d schedules match numpy" % (len(CASES) - failures,
                                               len(CASES)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
