#!/usr/bin/env python3
"""Reduced precision on the GPU: every model compiled in fp32 and with
--precision=tf32/fp16/bf16, run by cgc-run against onnxruntime's fp32
outputs, held to issue 15's bounds (relative L2: bf16 1e-2, fp16 and tf32
2e-3; finite wherever the reference is), and timed against its fp32 package.

    # build machine: packages + reference data into DIR (carry it)
    precision_check.py prep --cgc build/bin/cgc --out DIR MODEL[.onnx|.onnxtxt] ...
    # GPU machine: RT holds bin/cgc-run and lib/libcgrt.so
    precision_check.py run --dir DIR --rt RT [--bench 300] [--json OUT.json]

A model may carry cgc flags after '::' (MODEL::--dim=N=1). Exit status 1
when any package fails its bound or does not run.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# The precisions' error bounds are the Python package's (cgc.BOUNDS), one
# table for every tool that checks a reduced precision.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from cgc._accuracy import BOUNDS  # noqa: E402

PRECISIONS = ["fp32", "tf32", "fp16", "bf16"]


def to_onnx(model, out):
    """A .onnxtxt test model as a binary .onnx (onnxruntime reads only
    those); an .onnx is used as it is."""
    if not model.endswith(".onnxtxt"):
        return model
    import onnx
    import onnx.parser
    text = "\n".join(l for l in open(model).read().splitlines()
                     if not l.lstrip().startswith("#"))
    proto = onnx.parser.parse_model(text)
    path = os.path.join(out, os.path.basename(model)[:-len("txt")])
    onnx.save(proto, path)
    return path


def prep(args):
    here = os.path.dirname(os.path.abspath(__file__))
    make_reference = os.path.join(here, "..", "models", "make_reference.py")
    os.makedirs(args.out, exist_ok=True)
    cases = []
    for spec in args.models:
        model, _, flags = spec.partition("::")
        flags = flags.split() if flags else []
        name = re.sub(r"\.onnx(txt)?$", "", os.path.basename(model))
        onnx_path = to_onnx(model, args.out)
        data = os.path.join(args.out, name + "-data")
        dims = [f.split("=", 1)[1] for f in flags if f.startswith("--dim=")]
        subprocess.run([sys.executable, make_reference, onnx_path, data] +
                       sum((["--dim", d] for d in dims), []), check=True)
        for precision in args.precisions.split(","):
            pkg = os.path.join(args.out, "%s.%s" % (name, precision))
            shutil.rmtree(pkg, ignore_errors=True)
            cmd = [args.cgc, model, "-o", pkg, "--emit=lib",
                   "--precision=" + precision] + flags
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                sys.exit("cgc failed: %s\n%s" % (" ".join(cmd), r.stderr))
            for f in ("kernels.cu", "model.cpp", "model.h"):
                if os.path.exists(os.path.join(pkg, f)):
                    os.remove(os.path.join(pkg, f))
            cases.append({"model": name, "precision": precision,
                          "package": os.path.basename(pkg)})
    json.dump(cases, open(os.path.join(args.out, "cases.json"), "w"), indent=1)
    print("prepared %d packages in %s" % (len(cases), args.out))


def run_case(args, case):
    pkg = os.path.join(args.dir, case["package"])
    data = os.path.join(args.dir, case["model"] + "-data")
    bound = BOUNDS[case["precision"]]
    cmd = [os.path.join(args.rt, "bin", "cgc-run"), pkg, "--inputs",
           os.path.join(data, "inputs"), "--check", os.path.join(data, "ref"),
           "--max-rel-l2", str(bound), "--bench", str(args.bench), "-q"]
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(args.rt, "lib"))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    text = r.stdout + r.stderr
    errors = [float(x) for x in re.findall(r"rel L2 (\S+)", text)]
    median = re.search(r"median\s+([0-9.]+)\s*us", text)
    return dict(case, ok=r.returncode == 0, rel_l2=max(errors) if errors else None,
                bound=bound, median_us=float(median.group(1)) if median else None,
                log=text[-3000:] if r.returncode else "")


def run(args):
    cases = json.load(open(os.path.join(args.dir, "cases.json")))
    results = [run_case(args, c) for c in cases]
    fp32 = {r["model"]: r["median_us"] for r in results if r["precision"] == "fp32"}
    print("%-28s %-5s %-5s %10s %9s %10s %9s" % ("model", "prec", "ok", "rel L2",
                                                 "bound", "median us", "vs fp32"))
    for r in results:
        base = fp32.get(r["model"])
        ratio = r["median_us"] / base if base and r["median_us"] else None
        print("%-28s %-5s %-5s %10s %9.0e %10s %9s" % (
            r["model"], r["precision"], "ok" if r["ok"] else "FAIL",
            "%.2e" % r["rel_l2"] if r["rel_l2"] is not None else "-", r["bound"],
            "%.1f" % r["median_us"] if r["median_us"] else "-",
            "%.2fx" % ratio if ratio else "-"))
        if not r["ok"]:
            print(r["log"])
    if args.json:
        json.dump(results, open(args.json, "w"), indent=1)
    return 0 if all(r["ok"] for r in results) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prep")
    p.add_argument("--cgc", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--precisions", default=",".join(PRECISIONS))
    p.add_argument("models", nargs="+")
    p = sub.add_parser("run")
    p.add_argument("--dir", required=True)
    p.add_argument("--rt", required=True)
    p.add_argument("--bench", type=int, default=300)
    p.add_argument("--json")
    args = parser.parse_args()
    sys.exit(prep(args) if args.cmd == "prep" else run(args))


if __name__ == "__main__":
    main()
