#!/usr/bin/env python3
"""cgc's PyTorch entry points on the bench models and on public model code:
cgc.make_graphed_callables and torch.compile(backend="cgc") against eager
PyTorch (outputs) and against torch.cuda.graph and torch.compile
mode="reduce-overhead" (latency, CUDA events around each call as
bench/run.py times its peers), fp32, in one process.

    # build machine (torch, torchvision, timm, transformers; the cgc compiler):
    python3 bench/torch_entry.py fill --cache DIR [--models a,b]
    # GPU machine (no compiler: the packages come from the cache):
    CGC_CACHE_DIR=DIR python3 bench/torch_entry.py run --out OUTDIR [--models a,b]

fill exports and compiles every model's packages from CPU tensors into the
package cache (compile_only: the cache key is the exported model's, the
same on both machines for the same code, weights and torch version); run
finds them there. Models (--models): the bench's mlp_b1, gpt_b1, bert_b1,
vit_b1 and resnet50_b1 (bench/models.py; ResNet-50 and the ViT are
torchvision's code), and public code: llama (transformers'
LlamaForCausalLM, a small config: 2 layers, d=256, 4 heads, 32 tokens;
its logits), timm_vit (timm's vit_tiny_patch16_224, random weights). Every
model's weights are rounded to bfloat16-representable floats (fp32
arithmetic), as bench/models.py does, so that the packages compress for the
trip.
"""

import argparse
import json
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import numpy as np  # noqa: E402

import models  # noqa: E402
import report  # noqa: E402
import run as bench_run  # noqa: E402  (the torch.cuda.graph peer)

BENCH = ["mlp_b1", "gpt_b1", "bert_b1", "vit_b1", "resnet50_b1"]
PUBLIC = ["llama", "timm_vit"]
ALL = BENCH + PUBLIC


def _round_weights(torch, model):
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.to(torch.bfloat16).to(torch.float32))
    return model.eval()


def build(torch, name):
    """(module on the CPU in eval mode, tuple of CPU input tensors)."""
    if name in models.SPECS:
        model = models.build_family(models.SPECS[name][0])
        xs = tuple(torch.from_numpy(a)
                   for a in models.make_inputs(name).values())
        return model, xs
    torch.manual_seed(models.SEED + 100 + ALL.index(name))
    if name == "llama":
        import transformers
        config = transformers.LlamaConfig(
            vocab_size=1024, hidden_size=256, intermediate_size=688,
            num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=4, max_position_embeddings=128)
        lm = transformers.LlamaForCausalLM(config)

        class Logits(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lm = lm

            def forward(self, input_ids):
                return self.lm(input_ids, use_cache=False).logits
        model = Logits()
        ids = torch.randint(0, 1024, (1, 32),
                            generator=torch.Generator().manual_seed(7))
        return _round_weights(torch, model), (ids,)
    if name == "timm_vit":
        import timm
        model = timm.create_model("vit_tiny_patch16_224", pretrained=False)
        x = torch.randn(1, 3, 224, 224,
                        generator=torch.Generator().manual_seed(8))
        return _round_weights(torch, model), (x,)
    raise ValueError("unknown model %r (known: %s)" % (name, ", ".join(ALL)))


def register(torch):
    from cgc import _dynamo
    from torch._dynamo.backends.registry import list_backends
    if "cgc" not in list_backends(exclude_tags=()):
        torch._dynamo.register_backend(name="cgc")(_dynamo.backend)


def fill(args):
    import torch
    import cgc
    register(torch)
    for name in args.models:
        t0 = time.time()
        model, xs = build(torch, name)
        path = cgc.make_graphed_callables(model, xs, compile_only=True)
        torch._dynamo.reset()
        cgc.dynamo_report(clear=True)
        with torch.no_grad():
            torch.compile(model, backend="cgc", dynamic=False,
                          options={"compile_only": True})(*xs)
        report = cgc.dynamo_report(clear=True)
        print("%-12s make_graphed_callables %s; torch.compile: %s (%.0f s)" % (
            name, os.path.basename(str(path)),
            ", ".join("graph %d %s" % (r["graph"], os.path.basename(
                r["package"]) if r["package"] else "REFUSED: " + r["reason"])
                for r in report), time.time() - t0), flush=True)


def rel_l2(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / max(float(b.norm()), 1e-30))


def time_calls(torch, fn, iters, rounds=3):
    """Median of per-call CUDA-event latencies, best round of `rounds`."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    best = None
    for _ in range(rounds):
        times = []
        for _ in range(iters):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3)
        m = float(np.median(times))
        best = m if best is None else min(best, m)
    return best


def run_one(torch, cgc, name, args):
    model, xs = build(torch, name)
    model = model.cuda()
    xs = tuple(x.cuda() for x in xs)
    out = {"model": name}
    with torch.no_grad():
        ref = model(*xs)
        t0 = time.time()
        graphed = cgc.make_graphed_callables(model, xs)
        out["graphed_load_s"] = time.time() - t0
        out["graphed_rel_l2"] = rel_l2(graphed(*xs), ref)
        out["call_path"] = graphed.model.call_path
        torch._dynamo.reset()
        cgc.dynamo_report(clear=True)
        compiled = torch.compile(model, backend="cgc", dynamic=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = compiled(*xs)
        out["compile_fallbacks"] = [str(w.message) for w in caught
                                    if issubclass(w.category,
                                                  cgc.FallbackWarning)]
        out["compile_rel_l2"] = rel_l2(y, ref)
        out["compile_graphs"] = cgc.dynamo_report(clear=True)
        timings = {"eager": lambda: model(*xs),
                   "cgc_graphed": lambda: graphed(*xs),
                   "cgc_compile": lambda: compiled(*xs),
                   "cuda_graph": bench_run.capture_cuda_graph(torch, model,
                                                             xs)[1]}
        try:
            ro = torch.compile(model, mode="reduce-overhead", dynamic=False)
            ro(*xs)
            ro(*xs)
            timings["compile_ro"] = lambda: ro(*xs)
        except Exception as e:  # recorded, the others still run
            out["compile_ro_error"] = "%s: %s" % (type(e).__name__, e)
        out["latency_us"] = {k: time_calls(torch, fn, args.iters)
                             for k, fn in timings.items()}
    torch._dynamo.reset()
    graphed.model.close()
    return out


def run(args):
    import torch
    import cgc
    register(torch)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "models": []}
    for name in args.models:
        try:
            r = run_one(torch, cgc, name, args)
        except Exception as e:  # report it, run the others
            r = {"model": name, "error": "%s: %s" % (type(e).__name__, e)}
        results["models"].append(r)
        print(json.dumps(r), flush=True)
        with open(os.path.join(args.out, "torch_entry.json"), "w") as f:
            json.dump(results, f, indent=1)
    print(markdown(results))


def markdown(results):
    rows, notes = report.torch_entry_rows(results["models"])
    return "\n".join(rows + notes)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["fill", "run"])
    parser.add_argument("--models", default=",".join(ALL))
    parser.add_argument("--cache", help="fill: the package cache folder "
                        "(default: CGC_CACHE_DIR or cgc's default)")
    parser.add_argument("--out", help="run: the results folder")
    parser.add_argument("--iters", type=int, default=300)
    args = parser.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    unknown = [m for m in args.models if m not in ALL]
    if unknown:
        parser.error("unknown model(s) %s (known: %s)" % (
            ", ".join(unknown), ", ".join(ALL)))
    if args.cache:
        os.environ["CGC_CACHE_DIR"] = args.cache
    if args.mode == "fill":
        fill(args)
    else:
        if not args.out:
            parser.error("run needs --out")
        run(args)


if __name__ == "__main__":
    main()
