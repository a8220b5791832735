#!/usr/bin/env python3
"""Build machine: unpacks what bench/export.py brought back, checks the ONNX
files against PyTorch's outputs with onnxruntime (CPU, where installed),
compiles every model with cgc (through the cgc Python package) and packs the
packages, status and runtime library for bench/run.py on the GPU machine.

    python3 bench/compile.py --parts 'DIR/export.tar.xz.*'   # unpack + all
    python3 bench/compile.py                                  # reuse the unpacked

Folders (ignored by git): .carry/bench/export (ONNX), .carry/bench/packages
(NAME/, status.json, manifest.json, runtime/libcgrt.so) and
.carry/bench/carry (pkgs.tar.xz.NN: what the run call carries). A model cgc
cannot compile is recorded with the compiler's message in status.json and
reported as such in the benchmark table.
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

import numpy as np  # noqa: E402

import cgc  # noqa: E402
import models  # noqa: E402
import transfer  # noqa: E402

WORK = os.path.join(REPO, ".carry", "bench")


def ort_check(path, feeds, refs):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.graph_optimization_level = \
        ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options,
                                   providers=["CPUExecutionProvider"])
    outs = session.run(None, feeds)
    worst = 0.0
    for got, ref in zip(outs, refs):
        got, ref = got.astype(np.float64), ref.astype(np.float64)
        worst = max(worst, float(np.linalg.norm(got - ref) /
                                 max(np.linalg.norm(ref), 1e-30)))
    return worst


def model_cost(path):
    """The work no implementation can avoid: bytes = every initializer and
    graph input read once plus every output written once; FLOPs = 2 per
    multiply-add of MatMul, Gemm and Conv (shapes from ONNX shape
    inference; other ops counted as free)."""
    import onnx
    from onnx import numpy_helper
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    g = model.graph
    shapes = {}
    for v in list(g.input) + list(g.output) + list(g.value_info):
        t = v.type.tensor_type
        shapes[v.name] = [d.dim_value for d in t.shape.dim]
    sizes = {}
    for init in g.initializer:
        arr = numpy_helper.to_array(init, os.path.dirname(path))
        sizes[init.name] = arr.nbytes
        shapes[init.name] = list(arr.shape)
    itemsize = 4
    inits = set(sizes)
    bytes_ = sum(sizes.values())
    bytes_ += sum(int(np.prod(shapes[v.name])) * itemsize for v in g.input
                  if v.name not in inits)
    bytes_ += sum(int(np.prod(shapes[v.name])) * itemsize for v in g.output)
    flops = 0
    for node in g.node:
        if node.op_type in ("MatMul", "Gemm"):
            out = shapes.get(node.output[0])
            a = shapes.get(node.input[0])
            if not out or not a:
                continue
            trans_a = any(at.name == "transA" and at.i for at in node.attribute)
            k = a[-2] if trans_a and node.op_type == "Gemm" else a[-1]
            flops += 2 * int(np.prod(out)) * k
        elif node.op_type == "Conv":
            out, w = shapes.get(node.output[0]), shapes.get(node.input[1])
            if out and w:
                flops += 2 * int(np.prod(out)) * int(np.prod(w[1:]))
    return {"bytes": int(bytes_), "flops": int(flops)}


def dedup(folder):
    """Hard-links files with equal contents (batch 1 and 8 share weights)."""
    seen, saved = {}, 0
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            path = os.path.join(root, name)
            if os.path.getsize(path) < 65536:
                continue
            h = hashlib.sha256(open(path, "rb").read()).hexdigest()
            if h in seen and not os.path.samefile(seen[h], path):
                os.remove(path)
                os.link(seen[h], path)
                saved += os.path.getsize(path)
            else:
                seen.setdefault(h, path)
    return saved


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parts", help="glob of export.tar.xz.NN parts")
    parser.add_argument("--models", help="comma-separated subset")
    parser.add_argument("--cgc", help="the cgc binary (default: as cgc.compile)")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    export = os.path.join(WORK, "export")
    packages = os.path.join(WORK, "packages")
    if args.parts:
        parts = sorted(glob.glob(args.parts))
        # Check before clearing: an empty glob must not cost the old export.
        if not parts:
            parser.error("--parts %r matches no file" % args.parts)
        shutil.rmtree(export, ignore_errors=True)
        transfer.unpack(export, parts)
    with open(os.path.join(export, "manifest.json")) as f:
        manifest = json.load(f)
    shutil.rmtree(packages, ignore_errors=True)
    os.makedirs(packages)
    binary = cgc.find_compiler(args.cgc)
    status = {"_build": {"version": "?",
                         "date": time.strftime("%Y-%m-%d %H:%M %Z"),
                         "binary": binary}}
    names = args.models.split(",") if args.models else list(models.SPECS)
    for name in names:
        info = manifest["models"].get(name)
        st = status[name] = {"ok": False}
        if info is None or info.get("export_error"):
            st["error"] = "not exported: %s" % (
                info.get("export_error") if info else "missing from export")
            print("%-14s NOT EXPORTED" % name)
            continue
        path = os.path.join(export, name + ".onnx")
        feeds = models.make_inputs(name)
        digest = models.array_digest(feeds.values())
        st["input_digest_matches"] = digest == info["input_digest"]
        stored = dict(np.load(os.path.join(export, name + ".inputs.npz")))
        assert all(np.array_equal(stored[k], v) for k, v in feeds.items())
        refs = list(dict(np.load(os.path.join(export,
                                              name + ".ref.npz"))).values())
        try:
            st["onnxruntime_rel_l2_vs_torch"] = ort_check(path, feeds, refs)
        except Exception as e:  # report, do not stop
            st["onnxruntime_error"] = "%s: %s" % (type(e).__name__, e)
        try:
            st["floor"] = model_cost(path)
        except Exception as e:  # report, do not stop
            st["floor_error"] = "%s: %s" % (type(e).__name__, e)
        t = time.monotonic()
        try:
            cgc.compile(path, os.path.join(packages, name), cgc_binary=binary,
                        timeout=args.timeout)
            st["ok"] = True
        except cgc.CompileError as e:
            lines = [l for l in e.message.splitlines() if l.strip()]
            errors = [l for l in lines if "error" in l] or lines
            st["error"] = "\n".join(errors[:3])
            shutil.rmtree(os.path.join(packages, name), ignore_errors=True)
        st["seconds"] = round(time.monotonic() - t, 2)
        if st["ok"]:
            meta = cgc.package_info(os.path.join(packages, name))
            st["kernels"] = meta["kernels"]
            st["graphs"] = len(meta["graphs"])
            st["graph_nodes"] = sum(g["nodes"] for g in meta["graphs"])
            st["weights_bytes"] = meta["metadata"].get("weights_bytes")
            status["_build"]["version"] = "cgc %s (metadata abi_version %s)" % (
                meta["metadata"].get("cgc_version"),
                meta["metadata"].get("abi_version"))
        print("%-14s %s  ort-vs-torch %s  %.1fs %s" % (
            name, "ok " if st["ok"] else "ERR",
            "%.1e" % st["onnxruntime_rel_l2_vs_torch"]
            if st.get("onnxruntime_rel_l2_vs_torch") is not None else "-",
            st["seconds"], st.get("error", "").splitlines()[0]
            if st.get("error") else ""), flush=True)
    with open(os.path.join(packages, "status.json"), "w") as f:
        json.dump(status, f, indent=1, sort_keys=True)
    shutil.copy(os.path.join(export, "manifest.json"), packages)
    os.makedirs(os.path.join(packages, "runtime"))
    shutil.copy(cgc.find_runtime_library(),
                os.path.join(packages, "runtime", "libcgrt.so"))
    saved = dedup(packages)
    print("hard-linked duplicates: %.1f MB" % (saved / 1e6))
    carry = os.path.join(WORK, "carry")
    shutil.rmtree(carry, ignore_errors=True)
    transfer.pack(packages, carry, "pkgs", part=64 << 20)


if __name__ == "__main__":
    main()
