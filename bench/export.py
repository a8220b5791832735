#!/usr/bin/env python3
"""Exports every benchmark model to ONNX (opset 17, fp32, fixed batch) with
PyTorch, on the GPU machine (torch is there, not on the build machine).

    python3 bench/export.py --out DIR [--pack OUTDIR] [--families f,g] [--models a,b]

DIR gets, per model, NAME.onnx whose initializers live in one external data
file per family (FAMILY.weights: each distinct tensor stored once, so batch 1
and batch 8 share their weights), PyTorch's outputs on the fixed inputs
(NAME.ref.npz: CUDA, fp32, TF32 off), and manifest.json (versions, weight
and input digests, exporter). The inputs themselves are not stored:
bench/models.py makes the same ones everywhere, and the build machine
checks their digest against the manifest's. --pack writes
DIR as an lzma-compressed tar in parts of at most 15 MiB to OUTDIR (the
device tool brings back at most 8 files of 16 MiB); bench/transfer.py
unpacks them. All seven families pack to about 7 parts; --families splits
the export over several calls when they would not fit (bench/compile.py
merges the exports it unpacks, family by family).
"""

import argparse
import hashlib
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import models  # noqa: E402
import transfer  # noqa: E402

ALIGN = 4096


def externalize(onnx, proto, family, blob, index):
    """Moves initializers of >= 1 KiB into the family's data file, storing
    each distinct tensor once (content hash)."""
    moved = 0
    for tensor in proto.graph.initializer:
        if not tensor.HasField("raw_data") or len(tensor.raw_data) < 1024:
            continue
        data = tensor.raw_data
        key = hashlib.sha256(data).hexdigest()
        if key not in index:
            offset = blob.tell()
            pad = (-offset) % ALIGN
            blob.write(b"\0" * pad)
            index[key] = (offset + pad, len(data))
            blob.write(data)
        offset, length = index[key]
        tensor.ClearField("raw_data")
        tensor.data_location = onnx.TensorProto.EXTERNAL
        del tensor.external_data[:]
        for k, v in (("location", family + ".weights"), ("offset", offset),
                     ("length", length)):
            entry = tensor.external_data.add()
            entry.key, entry.value = k, str(v)
        moved += 1
    return moved


def export_dynamo(torch, model, args, path, kwargs):
    kwargs = dict(kwargs)
    kwargs.pop("do_constant_folding")
    torch.onnx.export(model, args, path, dynamo=True, external_data=False,
                      **kwargs)
    return "torch.onnx.export (dynamo exporter), opset 17 requested"


def export_one(torch, model, name, path):
    family, _, inputs, outputs = models.SPECS[name]
    feeds = models.make_inputs(name)
    args = tuple(torch.from_numpy(feeds[n]) for n, _, _ in inputs)
    kwargs = dict(input_names=[n for n, _, _ in inputs], output_names=outputs,
                  opset_version=17, do_constant_folding=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family in models.DYNAMO_EXPORT:
            return export_dynamo(torch, model, args, path, kwargs)
        try:
            torch.onnx.export(model, args, path, dynamo=False, **kwargs)
            return "torch.onnx.export (TorchScript exporter), opset 17"
        except TypeError:  # a torch without the dynamo= argument
            torch.onnx.export(model, args, path, **kwargs)
            return "torch.onnx.export (TorchScript exporter), opset 17"
        except Exception as e:  # the TorchScript exporter is gone or failed
            print("TorchScript exporter failed for %s (%s: %s); trying the "
                  "dynamo exporter" % (name, type(e).__name__, e), flush=True)
            return export_dynamo(torch, model, args, path, kwargs)


def export_model(onnx, torch, model, name, family, blob, index, out, cuda,
                 manifest):
    path = os.path.join(out, name + ".onnx")
    exporter = export_one(torch, model, name, path)
    proto = onnx.load(path)
    moved = externalize(onnx, proto, family, blob, index)
    onnx.save(proto, path)
    feeds = models.make_inputs(name)
    dev = "cuda" if cuda else "cpu"
    m = model.to(dev)
    with torch.inference_mode():
        outs = m(*(torch.from_numpy(v).to(dev) for v in feeds.values()))
    outs = outs if isinstance(outs, (tuple, list)) else [outs]
    refs = {o: t.float().cpu().numpy()
            for o, t in zip(models.SPECS[name][3], outs)}
    np.savez(os.path.join(out, name + ".ref.npz"), **refs)
    ops = {}
    for node in proto.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    manifest["models"][name] = {
        "family": family, "exporter": exporter,
        "input_digest": models.array_digest(feeds.values()),
        "onnx_bytes": os.path.getsize(path),
        "external_tensors": moved, "nodes": len(proto.graph.node),
        "ops": ops, "reference_device": dev}
    print("exported %-14s %4d nodes, %d external tensors"
          % (name, len(proto.graph.node), moved), flush=True)
    return m.cpu()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pack", help="folder for the compressed parts")
    parser.add_argument("--models", help="comma-separated subset")
    parser.add_argument("--families", help="comma-separated families (%s)"
                        % ",".join(models.FAMILIES))
    args = parser.parse_args()
    import onnx
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    names = models.select(args.models, args.families)
    os.makedirs(args.out, exist_ok=True)
    manifest = {"torch": torch.__version__, "onnx": onnx.__version__,
                "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                "seed": models.SEED, "models": {}, "families": {}}
    cuda = torch.cuda.is_available()
    for family in models.FAMILIES:
        members = [n for n in names if models.SPECS[n][0] == family]
        if not members:
            continue
        t0 = time.time()
        model = models.build_family(family)
        manifest["families"][family] = {
            "state_digest": models.state_digest(model),
            "parameters": sum(p.numel() for p in model.parameters()),
            "torch": torch.__version__, "date": manifest["date"]}
        blob_path = os.path.join(args.out, family + ".weights")
        index = {}
        with open(blob_path, "wb") as blob:
            for name in members:
                try:
                    model = export_model(onnx, torch, model, name, family,
                                         blob, index, args.out, cuda,
                                         manifest)
                except Exception as e:  # report it, export the others
                    manifest["models"][name] = {
                        "family": family,
                        "export_error": "%s: %s" % (type(e).__name__, e)}
                    print("FAILED to export %s: %s: %s"
                          % (name, type(e).__name__, e), flush=True)
                    model = model.cpu()
        manifest["families"][family]["weights_bytes"] = os.path.getsize(
            blob_path)
        print("family %-10s weights %.1f MB, %.1f s" % (
            family, os.path.getsize(blob_path) / 1e6, time.time() - t0),
            flush=True)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    if args.pack:
        parts = transfer.pack(args.out, args.pack, "export")
        for p in parts:
            print("part %s %.1f MB" % (p, os.path.getsize(p) / 1e6))


if __name__ == "__main__":
    main()
