#!/usr/bin/env python3
"""Build machine: unpacks what bench/export.py brought back, checks the ONNX
files against PyTorch's outputs with onnxruntime (CPU, where installed),
compiles every model with cgc (through the cgc Python package) once per
precision and packs the packages, status, onnxruntime's reference outputs
and the runtime library for bench/run.py on the GPU machine.

    python3 bench/compile.py --parts 'DIR/export.tar.xz.*'   # unpack + all
    python3 bench/compile.py                                  # reuse the unpacked
    python3 bench/compile.py --families resnet50 --precisions fp32,tf32,bf16

Folders (ignored by git): .carry/bench/export (ONNX; --parts merges a new
export into it family by family, so exports split over several device calls
add up), .carry/bench/packages (NAME.PREC/ per model and precision,
status.json, manifest.json, refs/NAME.npz, runtime/libcgrt.so) and
.carry/bench/carry (pkgs.tar.xz.NN: what the run call carries, at most 64
MiB with the working tree; --groups 'f,g;h' packs one folder per call,
carry/g1, carry/g2, ..., and a group over the limit is an error that says
so). A model cgc cannot compile is recorded with the compiler's
message in status.json and reported as such in the benchmark table.

refs/NAME.npz holds onnxruntime's fp32 outputs (CPU, graph optimizations
off) on the fixed inputs (seed 0) and on the fresh draw (seed 1), keys
seed0_K and seed1_K for output K: the fp32 reference bench/run.py measures
every precision's error against.
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
# What one device call may carry (the working tree counts too: ~4 MiB).
CARRY_LIMIT = 60 << 20


def ort_session(path):
    """An onnxruntime CPU session with graph optimizations off (the plain
    fp32 reference), or None where onnxruntime is not installed."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.graph_optimization_level = \
        ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, options,
                                providers=["CPUExecutionProvider"])


def rel_l2(got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30))


def ort_reference(path, name, refs):
    """onnxruntime's outputs on the fixed inputs and the fresh draw
    ({seedS_K: array}) and their worst relative L2 error against PyTorch's
    exported outputs (fixed inputs); (None, None) without onnxruntime."""
    session = ort_session(path)
    if session is None:
        return None, None
    arrays, worst = {}, 0.0
    for seed in (0, 1):
        outs = session.run(None, models.make_inputs(name, seed))
        for k, out in enumerate(outs):
            arrays["seed%d_%d" % (seed, k)] = out
        if seed == 0:
            for got, ref in zip(outs, refs):
                worst = max(worst, rel_l2(got, ref))
    return arrays, worst


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
    weight_bytes = sum(sizes.values())
    io_bytes = sum(int(np.prod(shapes[v.name])) * itemsize for v in g.input
                   if v.name not in inits)
    io_bytes += sum(int(np.prod(shapes[v.name])) * itemsize for v in g.output)
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
    # weight_bytes / io_bytes: a bf16/fp16 package may keep its weights in
    # 2 bytes (bench/report.py halves them there), its inputs and outputs
    # stay fp32.
    return {"bytes": int(weight_bytes + io_bytes), "flops": int(flops),
            "weight_bytes": int(weight_bytes), "io_bytes": int(io_bytes)}


def package_name(name, precision):
    """The package folder of a model in a precision (bench/run.py's too)."""
    return "%s.%s" % (name, precision)


def parse_precisions(parser, text):
    precisions = [p for p in text.split(",") if p]
    bad = [p for p in precisions if p not in cgc.PRECISIONS]
    if bad or not precisions:
        parser.error("--precisions: %r; known: %s"
                     % (text, ",".join(cgc.PRECISIONS)))
    return precisions


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


def unpack_export(export, parts):
    """Unpacks export parts into the export folder, replacing the families
    they hold and keeping the others (their manifest entries merged)."""
    fresh = export + ".new"
    shutil.rmtree(fresh, ignore_errors=True)
    transfer.unpack(fresh, parts)
    with open(os.path.join(fresh, "manifest.json")) as f:
        new = json.load(f)
    old = {"models": {}, "families": {}}
    if os.path.exists(os.path.join(export, "manifest.json")):
        with open(os.path.join(export, "manifest.json")) as f:
            old = json.load(f)
    os.makedirs(export, exist_ok=True)
    replaced = set(new.get("families", {}))
    for name in os.listdir(export):
        family = name.split(".")[0].rsplit("_b", 1)[0]
        if family in replaced:
            os.remove(os.path.join(export, name))
    for name in os.listdir(fresh):
        if name != "manifest.json":
            os.replace(os.path.join(fresh, name), os.path.join(export, name))
    merged = dict(new)
    merged["models"] = {n: m for n, m in old.get("models", {}).items()
                        if m.get("family") not in replaced}
    merged["models"].update(new.get("models", {}))
    merged["families"] = {f: v for f, v in old.get("families", {}).items()
                          if f not in replaced}
    merged["families"].update(new.get("families", {}))
    with open(os.path.join(export, "manifest.json"), "w") as f:
        json.dump(merged, f, indent=2, sort_keys=True)
    shutil.rmtree(fresh, ignore_errors=True)
    kept = sorted(set(merged["families"]) - replaced)
    print("unpacked families %s%s" % (",".join(sorted(replaced)),
          "; kept from before: " + ",".join(kept) if kept else ""))
    return merged


def check_export(export, name, info, st, refs_dir):
    """The per-model facts that do not depend on the precision: inputs as
    exported, onnxruntime against PyTorch (and onnxruntime's reference
    outputs for bench/run.py), the floor."""
    path = os.path.join(export, name + ".onnx")
    feeds = models.make_inputs(name)
    st["input_digest_matches"] = (
        models.array_digest(feeds.values()) == info["input_digest"])
    stored = os.path.join(export, name + ".inputs.npz")
    if os.path.exists(stored):  # older exports carried the inputs too
        stored = dict(np.load(stored))
        assert all(np.array_equal(stored[k], v) for k, v in feeds.items())
    refs = list(dict(np.load(os.path.join(export,
                                          name + ".ref.npz"))).values())
    try:
        arrays, worst = ort_reference(path, name, refs)
        st["onnxruntime_rel_l2_vs_torch"] = worst
        if arrays is not None:
            np.savez(os.path.join(refs_dir, name + ".npz"), **arrays)
    except Exception as e:  # report, do not stop
        st["onnxruntime_error"] = "%s: %s" % (type(e).__name__, e)
    try:
        st["floor"] = model_cost(path)
    except Exception as e:  # report, do not stop
        st["floor_error"] = "%s: %s" % (type(e).__name__, e)
    return path


def compile_one(path, out, precision, binary, timeout, extra_args=()):
    """One package; the status entry of this model and precision."""
    st = {"ok": False}
    t = time.monotonic()
    try:
        cgc.compile(path, out, precision=precision, cgc_binary=binary,
                    timeout=timeout, progress=False,
                    extra_args=list(extra_args))
        st["ok"] = True
    except cgc.CompileError as e:
        lines = [l for l in e.message.splitlines() if l.strip()]
        errors = [l for l in lines if "error" in l] or lines
        st["error"] = "\n".join(errors[:3])
        shutil.rmtree(out, ignore_errors=True)
    st["seconds"] = round(time.monotonic() - t, 2)
    if st["ok"]:
        meta = cgc.package_info(out)
        st["kernels"] = meta["kernels"]
        st["graphs"] = len(meta["graphs"])
        st["graph_nodes"] = sum(g["nodes"] for g in meta["graphs"])
        st["weights_bytes"] = meta["metadata"].get("weights_bytes")
        st["version"] = "cgc %s (metadata abi_version %s)" % (
            meta["metadata"].get("cgc_version"),
            meta["metadata"].get("abi_version"))
    return st


def main():
    parser = argparse.ArgumentParser(description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", help="glob of export.tar.xz.NN parts")
    parser.add_argument("--models", help="comma-separated subset")
    parser.add_argument("--families", help="comma-separated families (%s)"
                        % ",".join(models.FAMILIES))
    parser.add_argument("--precisions", default="fp32",
                        help="comma-separated, of %s (default fp32): one "
                        "package per model and precision, NAME.PREC"
                        % ",".join(cgc.PRECISIONS))
    parser.add_argument("--groups", help="families of each device call, "
                        "';' between calls (e.g. 'mlp,gpt,bert,vit;"
                        "squeezenet,mobilenet,resnet50'): one carry folder "
                        "per call, .carry/bench/carry/gN; default one call, "
                        ".carry/bench/carry")
    parser.add_argument("--cgc", help="the cgc binary (default: as cgc.compile)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--cgc-args", default="",
                        help="more cgc options for every package, as one "
                        "string, given with = (--cgc-args=--channels-last=auto; "
                        "the status records them)")
    args = parser.parse_args()
    extra_args = args.cgc_args.split()
    precisions = parse_precisions(parser, args.precisions)
    try:
        names = models.select(args.models, args.families)
    except ValueError as e:
        parser.error(str(e))
    export = os.path.join(WORK, "export")
    packages = os.path.join(WORK, "packages")
    if args.parts:
        parts = sorted(glob.glob(args.parts))
        # Check before unpacking: an empty glob must not cost the old export.
        if not parts:
            parser.error("--parts %r matches no file" % args.parts)
        manifest = unpack_export(export, parts)
    else:
        with open(os.path.join(export, "manifest.json")) as f:
            manifest = json.load(f)
    if not args.models and not args.families:
        names = [n for n in names if n in manifest["models"]]
    groups = parse_groups(parser, args.groups, names)
    shutil.rmtree(packages, ignore_errors=True)
    refs_dir = os.path.join(packages, "refs")
    os.makedirs(refs_dir)
    binary = cgc.find_compiler(args.cgc)
    status = {"_build": {"version": "?",
                         "date": time.strftime("%Y-%m-%d %H:%M %Z"),
                         "binary": binary, "precisions": precisions,
                         "cgc_args": extra_args}}
    for name in names:
        info = manifest["models"].get(name)
        st = status[name] = {"family": models.SPECS[name][0],
                             "precisions": {}}
        if info is None or info.get("export_error"):
            error = "not exported: %s" % (
                info.get("export_error") if info else "missing from export")
            for p in precisions:
                st["precisions"][p] = {"ok": False, "error": error}
            print("%-14s NOT EXPORTED" % name)
            continue
        path = check_export(export, name, info, st, refs_dir)
        for p in precisions:
            pst = st["precisions"][p] = compile_one(
                path, os.path.join(packages, package_name(name, p)), p,
                binary, args.timeout, extra_args)
            if pst.get("version"):
                status["_build"]["version"] = pst.pop("version")
            print("%-14s %-4s %s  ort-vs-torch %s  %.1fs %s" % (
                name, p, "ok " if pst["ok"] else "ERR",
                "%.1e" % st["onnxruntime_rel_l2_vs_torch"]
                if st.get("onnxruntime_rel_l2_vs_torch") is not None else "-",
                pst["seconds"], pst.get("error", "").splitlines()[0]
                if pst.get("error") else ""), flush=True)
    with open(os.path.join(packages, "status.json"), "w") as f:
        json.dump(status, f, indent=1, sort_keys=True)
    shutil.copy(os.path.join(export, "manifest.json"), packages)
    os.makedirs(os.path.join(packages, "runtime"))
    runtime = cgc.find_runtime_library()
    shutil.copy(runtime, os.path.join(packages, "runtime", "libcgrt.so"))
    # The native call path built beside that runtime (for the GPU machine's
    # Python: utils/gpu/gpu_python_check.sh prepare puts one in .carry/rt),
    # found there by cgc beside the libcgrt in use; without it the Python
    # call is timed on the ctypes path.
    natives = glob.glob(os.path.join(os.path.dirname(os.path.realpath(
        runtime)), "_cgc_native*.so"))
    for native in natives:
        shutil.copy(native, os.path.join(packages, "runtime"))
    print("runtime %s, native call path: %s" % (
        runtime, ", ".join(os.path.basename(n) for n in natives) or "none"))
    saved = dedup(packages)
    print("hard-linked duplicates: %.1f MB" % (saved / 1e6))
    carry = os.path.join(WORK, "carry")
    shutil.rmtree(carry, ignore_errors=True)
    too_big = []
    for k, group in enumerate(groups):
        folder = carry if len(groups) == 1 else os.path.join(carry,
                                                             "g%d" % (k + 1))
        total = pack_group(packages, status, group, folder)
        print("carry %s (%s): %.1f MiB" % (folder, ",".join(group),
                                            total / (1 << 20)))
        if total > CARRY_LIMIT:
            too_big.append(folder)
    if too_big:
        print("ERROR: %s over the %.0f MiB one device call takes with the "
              "working tree: split the families over more --groups, or "
              "compile fewer --precisions at a time (bench/README.md)"
              % (", ".join(too_big), CARRY_LIMIT / (1 << 20)))
        sys.exit(2)


def parse_groups(parser, text, names):
    """--groups 'f,g;h' -> [[f, g], [h]] over the families of names; one
    group of them all without it."""
    families = [f for f in models.FAMILIES
                if any(models.SPECS[n][0] == f for n in names)]
    if not text:
        return [families]
    groups = [[f for f in g.split(",") if f] for g in text.split(";")]
    flat = [f for g in groups for f in g]
    unknown = [f for f in flat if f not in models.FAMILIES]
    twice = sorted({f for f in flat if flat.count(f) > 1})
    missing = [f for f in families if f not in flat]
    if unknown or twice or missing:
        parser.error("--groups %r: %s" % (text, "; ".join(filter(None, [
            unknown and "unknown families %s" % ",".join(unknown),
            twice and "in several groups: %s" % ",".join(twice),
            missing and "compiled but in no group: %s" % ",".join(missing)]))))
    return [[f for f in g if f in families] for g in groups if
            any(f in families for f in g)]


def pack_group(packages, status, families, folder):
    """Packs the packages of some families with what bench/run.py needs
    beside them (their status, the manifest, their onnxruntime references,
    the runtime) into folder/pkgs.tar.xz.NN; returns the bytes written."""
    stage = folder.rstrip("/") + ".stage"
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "refs"))
    names = [n for n in status if n in models.SPECS
             and models.SPECS[n][0] in families]
    for name in names:
        for p in status[name].get("precisions", {}):
            src = os.path.join(packages, package_name(name, p))
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(stage, package_name(name, p)),
                                copy_function=os.link)
        ref = os.path.join(packages, "refs", name + ".npz")
        if os.path.exists(ref):
            os.link(ref, os.path.join(stage, "refs", name + ".npz"))
    shutil.copytree(os.path.join(packages, "runtime"),
                    os.path.join(stage, "runtime"), copy_function=os.link)
    os.link(os.path.join(packages, "manifest.json"),
            os.path.join(stage, "manifest.json"))
    with open(os.path.join(stage, "status.json"), "w") as f:
        json.dump({n: v for n, v in status.items()
                   if n == "_build" or n in names}, f, indent=1,
                  sort_keys=True)
    parts = transfer.pack(stage, folder, "pkgs", part=64 << 20)
    shutil.rmtree(stage)
    return sum(os.path.getsize(p) for p in parts)


if __name__ == "__main__":
    main()
