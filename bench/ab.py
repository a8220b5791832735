"""Compares variants of cgc's packages (one compiler option changed) timed
in separate bench/run.py calls.

A ResNet-50 carry is about 36 MiB, so two variants of it do not fit one
device call (64 MiB with the tree): each variant runs in a call of its own,
and the host and GPU of two calls may differ by up to 2x. So every cgc
time is read against torch.cuda.graph's time for the same model and
precision in the same call, and the variants are compared by that ratio:

    python3 bench/ab.py never=A/results.json auto=B/results.json [--md F]

One row per model and precision present in every file: each variant's cgc
median, its cuda_graph median, their ratio and cgc's output error, then
each later variant's ratio divided by the first's (below 1: faster than
the first variant on its own machine's scale). A variant whose cgc row
FAILED or lacks a cuda_graph peer shows why instead of a ratio.
"""

import argparse
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def rows_of(results):
    """{(model, precision): entry} of one results.json."""
    rows = {}
    for name, model in results.get("models", {}).items():
        for precision, entry in model.get("precisions", {}).items():
            rows[(name, precision)] = entry
    return rows


def scaled(entry):
    """(cgc us, cuda_graph us, cgc / cuda_graph, rel. L2, why not); the
    ratio is None where the row cannot be read on that scale."""
    cgc = entry.get("cgc", {})
    peer = entry.get("cuda_graph", {})
    us, peer_us = cgc.get("median_us"), peer.get("median_us")
    if cgc.get("status") != "ok":
        return us, peer_us, None, cgc.get("rel_l2"), \
            "cgc %s" % cgc.get("status", "missing")
    if peer.get("status") != "ok" or not peer_us:
        return us, peer_us, None, cgc.get("rel_l2"), "no cuda_graph time"
    return us, peer_us, us / peer_us, cgc.get("rel_l2"), None


def compare(variants):
    """variants: [(label, results)] -> list of row dicts, in the first
    variant's order."""
    tables = [(label, rows_of(results)) for label, results in variants]
    keys = [k for k in tables[0][1] if all(k in t for _, t in tables[1:])]
    out = []
    for key in keys:
        row = {"model": key[0], "precision": key[1], "variants": []}
        first = None
        for label, table in tables:
            us, peer_us, ratio, err, why = scaled(table[key])
            item = {"label": label, "cgc_us": us, "cuda_graph_us": peer_us,
                    "ratio": ratio, "rel_l2": err, "why": why}
            if first is None:
                first = ratio
            elif ratio is not None and first:
                item["against_first"] = ratio / first
            row["variants"].append(item)
        out.append(row)
    return out


def markdown(rows, labels):
    head = ["model", "precision"]
    for label in labels:
        head += ["%s cgc µs" % label, "%s cuda_graph µs" % label,
                 "%s ratio" % label, "%s rel. L2" % label]
    head += ["%s / %s" % (label, labels[0]) for label in labels[1:]]
    lines = ["| " + " | ".join(head) + " |",
             "| " + " | ".join(["---"] * 2 + ["---:"] * (len(head) - 2)) +
             " |"]

    def number(v, form):
        return "—" if v is None else form % v

    for row in rows:
        cells = [row["model"], row["precision"]]
        for v in row["variants"]:
            cells += [number(v["cgc_us"], "%.1f"),
                      number(v["cuda_graph_us"], "%.1f"),
                      v["why"] if v["ratio"] is None else "%.3f" % v["ratio"],
                      number(v["rel_l2"], "%.1e")]
        cells += [number(v.get("against_first"), "%.3f")
                  for v in row["variants"][1:]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="+", metavar="LABEL=RESULTS",
                        help="a label and a bench/run.py results.json")
    parser.add_argument("--md", help="write the table here too")
    args = parser.parse_args(argv)
    variants = []
    for spec in args.variants:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            parser.error("variant %r is not LABEL=RESULTS" % spec)
        variants.append((label, load(path)))
    if len(variants) < 2:
        parser.error("give at least two variants to compare")
    rows = compare(variants)
    if not rows:
        parser.error("the files share no model and precision")
    text = markdown(rows, [label for label, _ in variants])
    sys.stdout.write(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
