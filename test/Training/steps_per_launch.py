"""K training steps per launch (--steps-per-launch=K) against K launches of
one step: cgc-interp runs the looped step M times over rings of K batches
(DIR/step_<m>/NAME.npy holding [K, ...]) and the plain step K*M times
over the same batches one by one; the losses (the looped step's loss
output holds its K losses in order) and the trained state must agree
within 1e-6 relative (the same float32 ops in the same order; only the
loop around them differs). Cases: SGD momentum with MSE, AdamW with a
warmup, gradient accumulation and dropout (each step its own mask: the
offset is carried through the loop), cross entropy with integer labels,
and a NaN in one batch (that step is skipped inside the loop, counted in
skipped_steps).

Usage: steps_per_launch.py CGC_INTERP MLP DROPOUT_MLP WORKDIR
"""
import math
import os
import subprocess
import sys

import numpy as np

K, LAUNCHES = 3, 2
RNG = np.random.default_rng(5)


def batches(cross_entropy, poisoned):
    out = []
    for step in range(K * LAUNCHES):
        x = RNG.standard_normal((4, 3)).astype(np.float32)
        if poisoned and step == 2:
            x[1, 2] = np.nan
        label = (RNG.integers(0, 2, (4,)).astype(np.int64) if cross_entropy
                 else RNG.standard_normal((4, 2)).astype(np.float32))
        out.append({"x": x, "label": label})
    return out


def write(folder, tensors):
    os.makedirs(folder, exist_ok=True)
    for name, value in tensors.items():
        np.save(os.path.join(folder, name + ".npy"), value)


def run(interp, model, flags, steps, inputs, state):
    out = subprocess.run(
        [interp, model, "--train", *flags, "--steps", str(steps), "--inputs",
         inputs, "--state-out", state], check=True, capture_output=True,
        text=True).stdout
    losses = [float(line.split("=")[1].split()[0]) for line in out.splitlines()
              if line.startswith("step")]
    return losses, {f[:-4]: np.load(os.path.join(state, f))
                    for f in sorted(os.listdir(state))}


def same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-6 * max(abs(b), 1e-30)


CASES = [
    ("sgd momentum", "mlp", ["--optimizer=sgd:lr=0.1,momentum=0.9"], False,
     False),
    ("adamw warmup accumulate dropout", "dropout",
     ["--optimizer=adamw:lr=0.01,warmup=2,accumulate=2"], False, False),
    ("cross entropy", "mlp", ["--loss=cross_entropy",
                              "--optimizer=sgd:lr=0.5"], True, False),
    ("nan batch skipped", "mlp", ["--optimizer=adamw:lr=0.01"], False, True),
]


def main():
    interp, mlp, dropout, work = sys.argv[1:5]
    models = {"mlp": mlp, "dropout": dropout}
    failures = 0
    for n, (name, model, flags, ce, poisoned) in enumerate(CASES):
        case = os.path.join(work, "case%d" % n)
        data = batches(ce, poisoned)
        for step, batch in enumerate(data):
            write(os.path.join(case, "plain", "step_%d" % step), batch)
        for launch in range(LAUNCHES):
            ring = data[launch * K:(launch + 1) * K]
            write(os.path.join(case, "ring", "step_%d" % launch),
                  {k: np.stack([b[k] for b in ring]) for k in ring[0]})
        want, want_state = run(interp, models[model], flags, K * LAUNCHES,
                               os.path.join(case, "plain"),
                               os.path.join(case, "plain_state"))
        got, got_state = run(interp, models[model],
                             flags + ["--steps-per-launch=%d" % K], LAUNCHES,
                             os.path.join(case, "ring"),
                             os.path.join(case, "ring_state"))
        losses_ok = (len(got) == len(want) == K * LAUNCHES and
                     all(same(a, b) for a, b in zip(got, want)))
        worst = max(float(np.max(np.abs(got_state[k] - want_state[k])) /
                          max(float(np.max(np.abs(want_state[k]))), 1e-30))
                    for k in want_state)
        state_ok = got_state.keys() == want_state.keys() and worst <= 1e-6
        skipped = float(got_state["skipped_steps"])
        ok = losses_ok and state_ok and skipped == (1 if poisoned else 0)
        failures += not ok
        print("%-32s %d launches of %d: losses %s, %d state tensors worst "
              "%.1e, skipped %g: %s" % (name, LAUNCHES, K,
                                         "equal" if losses_ok else got,
                                         len(got_state), worst, skipped,
                                         "ok" if ok else "FAIL"))
    print("%d of %d looped steps equal the plain steps" % (
        len(CASES) - failures, len(CASES)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
