"""Dropout in training steps against numpy: Philox4x32-10 written again
here in numpy (checked first against Random123's known-answer vectors),
the masks drawn as cgc.random_mask's description says (element k of the
mask: counter (k, 0, offset, 0), key (seed, stream), kept when the top 24
bits of word 0 reach ceil(ratio 2^24)), the step offset advancing by one
a step, and an MLP with dropout after its ReLU trained with SGD in float64
(inverted dropout, as torch.nn.Dropout: y = x mask / (1 - p)). cgc-interp
--train runs the same steps on a different batch each; losses and trained
weights must agree within 1e-5 relative. Also checked: the mask output of
a Dropout compiled for inference (dropout-mask.onnxtxt: offset 0, the
same output name, so the same stream) equals numpy's mask, and the share of
kept elements of a 64k-element mask is 1 - p within 5 standard deviations.

Usage: dropout.py CGC_INTERP MODEL MASK_MODEL WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

M32 = np.uint64(0xFFFFFFFF)
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2,
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
     (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def philox(c, k):
    """Philox4x32-10 of counters c (4 arrays of uint64 holding 32-bit
    words) under key k (2 such)."""
    c = [np.asarray(x, dtype=np.uint64) for x in c]
    k = [np.asarray(x, dtype=np.uint64) for x in k]
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & M32,
             (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & M32]
        k = [(k[0] + np.uint64(0x9E3779B9)) & M32,
             (k[1] + np.uint64(0xBB67AE85)) & M32]
    return c


def stream_of(output_name):
    """FNV-1a of the Dropout node's first output (the importer's stream)."""
    h = 2166136261
    for ch in output_name.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def mask(shape, ratio, offset, seed, stream):
    n = int(np.prod(shape))
    k = np.arange(n, dtype=np.uint64)
    words = philox([k & M32, k >> np.uint64(32),
                    np.full(n, offset & 0xFFFFFFFF, np.uint64),
                    np.full(n, offset >> 32, np.uint64)], [seed, stream])
    threshold = int(np.ceil(ratio * 2**24))
    return ((words[0] >> np.uint64(8)) >= threshold).reshape(shape)


RATIO, SEED, STREAM = 0.25, 5, stream_of("h")
STEPS, LR = 6, 0.1
RNG = np.random.default_rng(11)
BATCHES = [(RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2)))
           for _ in range(STEPS)]
W1 = np.array([0.1, -0.2, 0.3, 0.05, -0.1, 0.2, 0.1, -0.3, 0.25, 0.0,
               -0.15, 0.2, 0.1, -0.05, 0.3]).reshape(3, 5)
B1 = np.array([0.01, 0.02, -0.01, 0.0, 0.03])
W2 = np.array([0.2, -0.1, 0.1, 0.3, -0.2, 0.1, 0.05, -0.25, 0.15,
               0.2]).reshape(5, 2)
B2 = np.array([0.0, 0.1])


def numpy_run():
    w1, b1, w2, b2 = W1.copy(), B1.copy(), W2.copy(), B2.copy()
    losses = []
    for step, (x, label) in enumerate(BATCHES):
        h1 = x @ w1 + b1
        r = np.maximum(h1, 0)
        keep = mask((4, 5), RATIO, step, SEED, STREAM)
        h = np.where(keep, r / (1 - RATIO), 0)
        y = h @ w2 + b2
        d = y - label
        losses.append(float(np.mean(d * d)))
        dy = 2 * d / d.size
        dw2, db2 = h.T @ dy, dy.sum(0)
        dh = dy @ w2.T
        dr = np.where(keep, dh / (1 - RATIO), 0)
        dh1 = np.where(h1 > 0, dr, 0)
        dw1, db1 = x.T @ dh1, dh1.sum(0)
        w1, b1, w2, b2 = (w1 - LR * dw1, b1 - LR * db1, w2 - LR * dw2,
                          b2 - LR * db2)
    return losses, {"w1": w1, "b1": b1, "w2": w2, "b2": b2}


def cgc_run(interp, model, workdir):
    for k, (x, label) in enumerate(BATCHES):
        folder = os.path.join(workdir, "step_%d" % k)
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "x.npy"), x.astype(np.float32))
        np.save(os.path.join(folder, "label.npy"), label.astype(np.float32))
    state = os.path.join(workdir, "state")
    out = subprocess.run(
        [interp, model, "--train", "--loss=mse", "--optimizer=sgd:lr=%g" % LR,
         "--steps", str(STEPS), "--inputs", workdir, "--state-out", state],
        check=True, capture_output=True, text=True).stdout
    losses = [float(line.split("=")[1].split()[0]) for line in out.splitlines()
              if line.startswith("step")]
    weights = {n: np.load(os.path.join(state, n + ".npy"))
               for n in ("w1", "b1", "w2", "b2")}
    return losses, weights, float(np.load(os.path.join(state,
                                                       "rng.offset.npy")))


def inference_run(interp, model, workdir):
    """A Dropout in training mode compiled for inference: offset 0."""
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    folder = os.path.join(workdir, "inference")
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "x.npy"), x)
    subprocess.run([interp, model, "--inputs", folder, "--outputs", folder],
                   check=True, capture_output=True)
    return (x, np.load(os.path.join(folder, "h.npy")),
            np.load(os.path.join(folder, "keep.npy")))


def main():
    interp, model, mask_model, workdir = sys.argv[1:5]
    failures = 0
    for counter, key, words in KNOWN_ANSWERS:
        got = tuple(int(w) for w in philox(counter, key))
        ok = got == words
        failures += not ok
        print("philox known answer %s: %s" % (
            " ".join("%08x" % w for w in words), "ok" if ok else "FAIL"))
    n = 1 << 16
    kept = mask((n,), RATIO, 9, SEED, STREAM).sum()
    sigma = (n * RATIO * (1 - RATIO)) ** 0.5
    ok = abs(kept - n * (1 - RATIO)) <= 5 * sigma
    failures += not ok
    print("kept %d of %d (expected %.0f +- %.0f): %s" % (
        kept, n, n * (1 - RATIO), 5 * sigma, "ok" if ok else "FAIL"))
    got, weights, offset = cgc_run(interp, model, workdir)
    want, want_weights = numpy_run()
    loss_err = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    w_err = max(float(np.max(np.abs(weights[n] - want_weights[n])) /
                      np.max(np.abs(want_weights[n]))) for n in weights)
    ok = (len(got) == STEPS and loss_err <= 1e-5 and w_err <= 1e-5 and
          offset == STEPS)
    failures += not ok
    print("training: %d steps, loss rel. diff %.1e, weights %.1e, "
          "rng.offset %g: %s" % (len(got), loss_err, w_err, offset,
                                 "ok" if ok else "FAIL"))
    # Without a mask that changes per step the steps would agree.
    masks = [mask((4, 5), RATIO, s, SEED, STREAM) for s in range(STEPS)]
    distinct = len({m.tobytes() for m in masks})
    print("distinct masks over %d steps: %d" % (STEPS, distinct))
    x, h, keep = inference_run(interp, mask_model, workdir)
    want = mask((4, 5), RATIO, 0, SEED, STREAM)
    ok = (np.array_equal(keep, want) and
          np.allclose(h, np.where(want, x / (1 - RATIO), 0), rtol=1e-6))
    failures += not ok
    print("inference: mask and output equal numpy's: %s" % (
        "ok" if ok else "FAIL"))
    print("dropout: %d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
