"""Compares two training runs of cgc-interp: their printed losses (lines
"step K: loss = V") and the state each wrote with --state-out, within a
relative tolerance. Prints one line saying how much agreed; exits 1 on the
first disagreement, naming it."""
import argparse
import os
import re
import sys

import numpy as np


def losses(path):
    with open(path) as f:
        return [float(m.group(1)) for m in
                re.finditer(r"^step \d+: \S+ = (\S+)", f.read(), re.M)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("log_a")
    p.add_argument("log_b")
    p.add_argument("state_a")
    p.add_argument("state_b")
    p.add_argument("--rtol", type=float, default=1e-5)
    args = p.parse_args()
    a, b = losses(args.log_a), losses(args.log_b)
    if not a or len(a) != len(b):
        sys.exit(f"FAIL: {len(a)} and {len(b)} losses")
    for k, (x, y) in enumerate(zip(a, b)):
        if abs(x - y) > args.rtol * abs(x):
            sys.exit(f"FAIL: step {k + 1}: loss {x} against {y}")
    names = sorted(os.listdir(args.state_a))
    for name in names:
        x = np.load(os.path.join(args.state_a, name))
        y = np.load(os.path.join(args.state_b, name))
        err = np.linalg.norm(x - y) / max(np.linalg.norm(x), 1e-30)
        if x.shape != y.shape or err > args.rtol:
            sys.exit(f"FAIL: state {name}: rel. L2 {err:.2e}")
    print(f"{len(a)} losses and {len(names)} state tensors agree "
          f"within {args.rtol:g}")


if __name__ == "__main__":
    main()
