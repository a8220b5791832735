#!/usr/bin/env python3
"""cgc-tune: choose each tiled GEMM kernel's config by measurement.

    # build machine: the candidates and one package per round
    cgc_tune.py prep --cgc build/bin/cgc --dir DIR MODEL.onnx [-- CGC FLAGS]
    # GPU machine: time every kernel of every round alone
    cgc_tune.py run --dir DIR --rt RT [--launches 50]
    # anywhere: the fastest candidate per kernel signature
    cgc_tune.py write --dir DIR --out cache.json [--merge old.json]
    # then, on any machine:
    cgc MODEL.onnx --tuning-cache=cache.json [same flags] -o pkg

The rounds share one copy of the weights (hard links where the packages'
weights.bin are equal), so `tar -cJf tune.tar.xz -C DIR .` carries them to
the GPU machine in a few tens of MB (tar keeps the links).

`cgc --emit=tuning-candidates` lists, for each tiled GEMM kernel, its
signature (what its config may depend on: its ops, types, alignment,
precision and the GPU architecture) and every config the templates offer it:
tensor-core tiles where it has a precision, FMA tiles, split-K, and a
cuBLASLt call where the library can take it (timed as its captured call
plus the epilogue kernel that finishes it: the fused region, not the bare
product). Round r
compiles the model with a cache giving every kernel its r-th candidate (its
last one when it has fewer), so R rounds (R: the longest list) measure every
candidate of every kernel. `run` times each kernel of a round's package on
its own (cgc-run --profile-kernels: each graph node launched outside the
graph on the arena's real data, its fused epilogue included) and sums, per
cgc kernel, the launches its nodes make (a split-K product: the initializing
launch and the product). `write` keeps per signature the candidate with the
least time. The cache is JSON; compiling with it is deterministic: the same
cache gives the same package. Kernels the cache does not list take the cost
model's configs.
"""

import argparse
import filecmp
import json
import os
import re
import subprocess
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def round_cache(kernels, r):
    """The cache that gives every kernel its r-th candidate."""
    entries, seen = [], set()
    for k in kernels:
        if k["key"] in seen or not k["candidates"]:
            continue
        seen.add(k["key"])
        entries.append({"key": k["key"],
                        "config": k["candidates"][min(r, len(k["candidates"]) - 1)]})
    return {"version": 1, "entries": entries}


def share_weights(folder, rounds, pkg):
    """Makes `pkg`'s weights.bin a hard link to the first good round's
    where the two are equal (a config changes kernels, not weights; the
    ViT-S b1 rounds are 116 copies of 17 MB otherwise): the rounds take
    one copy of the weights on disk and in a tar (which keeps the links)
    carried to the GPU machine."""
    first = next((r for r in rounds if r["ok"]), None)
    if first is None:
        return
    shared = os.path.join(folder, first["name"], "weights.bin")
    mine = os.path.join(pkg, "weights.bin")
    if (shared == mine or not os.path.exists(shared)
            or not os.path.exists(mine) or os.path.samefile(shared, mine)
            or not filecmp.cmp(shared, mine, shallow=False)):
        return
    os.remove(mine)
    os.link(shared, mine)


def prep(args):
    os.makedirs(args.dir, exist_ok=True)
    flags = args.flags
    candidates = os.path.join(args.dir, "candidates.json")
    cmd = [args.cgc, args.model, "--emit=tuning-candidates", "-o", candidates] + flags
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("cgc-tune: %s failed:\n%s" % (" ".join(cmd), r.stderr))
    info = load(candidates)
    kernels = info["kernels"]
    rounds = max([len(k["candidates"]) for k in kernels] + [0])
    if args.max_rounds:
        rounds = min(rounds, args.max_rounds)
    plan = {"model": os.path.abspath(args.model), "flags": flags,
            "arch": info["arch"], "rounds": []}
    for i in range(rounds):
        name = "round%03d" % i
        cache = os.path.join(args.dir, name + ".cache.json")
        save(cache, round_cache(kernels, i))
        pkg = os.path.join(args.dir, name)
        cmd = [args.cgc, args.model, "--emit=lib", "-o", pkg,
               "--tuning-cache=" + cache] + flags
        r = subprocess.run(cmd, capture_output=True, text=True)
        ok = r.returncode == 0
        plan["rounds"].append({"name": name, "ok": ok,
                               "error": "" if ok else r.stderr[-2000:]})
        if ok:
            for f in ("kernels.cu", "model.cpp", "model.h"):
                p = os.path.join(pkg, f)
                if os.path.exists(p):
                    os.remove(p)
            share_weights(args.dir, plan["rounds"], pkg)
        print("%s: %s" % (name, "ok" if ok else "cgc failed (candidates skipped)"))
    save(os.path.join(args.dir, "plan.json"), plan)
    print("cgc-tune: %d kernels, %d rounds in %s" % (len(kernels), rounds, args.dir))


def label_times(pkg, profile_text):
    """{cgc kernel label: microseconds of its launches} from cgc-run
    --profile-kernels' lines and the package's metadata.json."""
    per_index = {}
    for m in re.finditer(r"(?m)^kernel\s+(\d+)\s+\S+\s+([0-9.]+) us$", profile_text):
        per_index[int(m.group(1))] = float(m.group(2))
    meta = load(os.path.join(pkg, "metadata.json"))
    times = {}
    # A cuBLASLt node is timed by the kernel it computes; its epilogue
    # kernel (a kernel node of the same label) adds to it below.
    # (cgc-run prints the node's TFLOP/s after its time.)
    for m in re.finditer(
            r"(?m)^library\s+\d+\s+(\S+)\s+([0-9.]+) us(?:\s+[0-9.]+ TFLOP/s)?$",
            profile_text):
        times[m.group(1)] = times.get(m.group(1), 0.0) + float(m.group(2))
    for graph in meta["cgraph"]["graphs"]:
        for node in graph["nodes"]:
            if node.get("op") != "kernel_node" or "label" not in node:
                continue
            us = per_index.get(node["kernel_index"])
            if us is None:
                continue
            times[node["label"]] = times.get(node["label"], 0.0) + us
    return times


def run(args):
    plan = load(os.path.join(args.dir, "plan.json"))
    kernels = load(os.path.join(args.dir, "candidates.json"))["kernels"]
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(args.rt, "lib"))
    measurements = []
    for i, rnd in enumerate(plan["rounds"]):
        if not rnd["ok"]:
            continue
        pkg = os.path.join(args.dir, rnd["name"])
        cmd = [os.path.join(args.rt, "bin", "cgc-run"), pkg, "-q",
               "--profile-kernels", str(args.launches)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode:
            print("%s: cgc-run failed: %s" % (rnd["name"], r.stdout[-500:] + r.stderr[-1000:]))
            continue
        times = label_times(pkg, r.stdout)
        for k in kernels:
            if k["label"] in times and k["candidates"]:
                config = k["candidates"][min(i, len(k["candidates"]) - 1)]
                measurements.append({"key": k["key"], "label": k["label"],
                                     "config": config, "us": times[k["label"]]})
        print("%s: %d kernels timed" % (rnd["name"], len(times)))
    save(os.path.join(args.dir, "measurements.json"),
         {"arch": plan["arch"], "measurements": measurements})


def write(args):
    data = load(os.path.join(args.dir, "measurements.json"))
    kernels = load(os.path.join(args.dir, "candidates.json"))["kernels"]
    defaults = {k["key"]: k["default"] for k in kernels}
    best = {}
    for m in data["measurements"]:
        times = best.setdefault(m["key"], {})
        times.setdefault(m["config"], []).append(m["us"])
    entries = {}
    if args.merge:
        for e in load(args.merge)["entries"]:
            entries[e["key"]] = e
    for key, times in sorted(best.items()):
        mean = {c: sum(v) / len(v) for c, v in times.items()}
        config = min(mean, key=lambda c: (mean[c], c))
        entry = {"key": key, "config": config, "us": round(mean[config], 3),
                 "candidates_timed": len(mean)}
        if defaults.get(key) in mean:
            entry["default_us"] = round(mean[defaults[key]], 3)
        entries[key] = entry
    save(args.out, {"version": 1, "arch": data["arch"],
                    "entries": [entries[k] for k in sorted(entries)]})
    print("cgc-tune: %d kernel signatures in %s" % (len(entries), args.out))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prep")
    p.add_argument("--cgc", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--max-rounds", type=int, default=0)
    p.add_argument("model")
    p.add_argument("flags", nargs=argparse.REMAINDER,
                   help="cgc flags after --, e.g. -- --precision=bf16")
    p = sub.add_parser("run")
    p.add_argument("--dir", required=True)
    p.add_argument("--rt", required=True, help="folder with bin/cgc-run, lib/libcgrt.so")
    p.add_argument("--launches", type=int, default=50)
    p = sub.add_parser("write")
    p.add_argument("--dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--merge", help="an older cache whose other entries are kept")
    args = parser.parse_args()
    if args.cmd == "prep":
        args.flags = [f for f in args.flags if f != "--"]
    {"prep": prep, "run": run, "write": write}[args.cmd](args)


if __name__ == "__main__":
    main()
