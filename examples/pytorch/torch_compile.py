#!/usr/bin/env python3
"""From PyTorch, way 3: torch.compile(model, backend="cgc"). A model with a
graph break (a print in forward, which TorchDynamo cannot trace) gives two
graphs; cgc compiles each, cgc.dynamo_report() says what ran each one, and
the output is compared with eager PyTorch.

    python3 examples/pytorch/torch_compile.py
    python3 examples/pytorch/torch_compile.py --compile-only   # no GPU: fill the cache

Exit status 0, 1 if cgc and eager disagree or a graph ran in torch, 2 on an
error.
"""

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
try:
    import cgc
except ImportError:  # not installed: use the source tree's package
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    import cgc
from cgc import _dynamo

import torch


class TwoParts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.encoder = torch.nn.Sequential(torch.nn.Linear(64, 128),
                                           torch.nn.GELU())
        self.head = torch.nn.Sequential(torch.nn.LayerNorm(128),
                                        torch.nn.Linear(128, 8))

    def forward(self, x):
        h = self.encoder(x)
        print("between the graphs")  # a graph break
        return self.head(h).softmax(-1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compile-only", action="store_true")
    args = parser.parse_args()
    # An installed cgc registers "cgc" (entry point torch_dynamo_backends);
    # from the source tree it is registered here.
    from torch._dynamo.backends.registry import list_backends
    if "cgc" not in list_backends(exclude_tags=()):
        torch._dynamo.register_backend(name="cgc")(_dynamo.backend)
    device = "cpu" if args.compile_only else "cuda"
    model = TwoParts().eval().to(device)
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(1)).to(
        device)
    options = {"compile_only": True} if args.compile_only else {}
    compiled = torch.compile(model, backend="cgc", dynamic=False,
                             options=options)
    with torch.no_grad():
        y = compiled(x)
        ref = model(x)
    ok = True
    for r in cgc.dynamo_report():
        print("graph %d (%d nodes): %s%s" % (
            r["graph"], r["nodes"], r["runner"],
            " (%s)" % r["reason"] if r["reason"] else ""))
        ok &= r["runner"] == "cgc" or args.compile_only
    err = float((y - ref).norm() / ref.norm())
    print("rel. L2 vs eager: %.2e" % err)
    return 0 if ok and err < 1e-5 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except cgc.Error as e:
        print("error:", e, file=sys.stderr)
        sys.exit(2)
