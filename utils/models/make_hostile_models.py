#!/usr/bin/env python3
"""Writes a corpus of hostile ONNX models, each with the error cgc must give.

    make_hostile_models.py OUT                 write OUT/<case>/model/model.onnx
                                               and OUT/cases.tsv
    make_hostile_models.py OUT --check CGC     ... then run CGC on every case

Each case is a model folder (external data cases put files, symlinks, a FIFO
and a hard link next to the model, and a secret.bin outside it). cases.tsv
lists `case<TAB>model path<TAB>expected error substring`. With --check, a
case passes when cgc exits with status 1 (an error, not a signal or a
sanitizer abort) and its stderr holds the expected text; the summary line is
`hostile: R rejected of T`, and the exit status is 1 unless every case
passes. One case is accepted by design and checked to import: a hard link to
a file outside the folder (docs/reliability.md says why).

Needs the onnx Python package (build/venv).
"""

import argparse
import os
import random
import shutil
import stat
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17)]
INT64_MAX = 2**63 - 1


def vi(name, elem=TensorProto.FLOAT, shape=(4,)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def model(nodes, inputs=None, outputs=None, inits=(), opset=None, ir=8):
    graph = helper.make_graph(nodes, "g", inputs if inputs is not None
                              else [vi("x")],
                              outputs if outputs is not None else [vi("y")],
                              list(inits))
    m = helper.make_model(graph, opset_imports=opset or OPSET)
    m.ir_version = ir
    return m


def relu_model(**kw):
    return model([helper.make_node("Relu", ["x"], ["y"])], **kw)


def weights(name="w", dims=(4,)):
    return numpy_helper.from_array(
        np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims), name)


def raw_tensor(name, dims, data_type=TensorProto.FLOAT, raw=b""):
    t = TensorProto(name=name, data_type=data_type)
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external(location=None, offset=None, length=None, dims=(4,)):
    """A model y = x + w with w in external data."""
    t = TensorProto(name="w", data_type=TensorProto.FLOAT,
                    data_location=TensorProto.EXTERNAL)
    t.dims.extend(dims)
    for key, value in (("location", location), ("offset", offset),
                       ("length", length)):
        if value is not None:
            t.external_data.add(key=key, value=str(value))
    return model([helper.make_node("Add", ["x", "w"], ["y"])], inits=[t])


def nested_if(depth):
    """`depth` If nodes nested in then branches, Relu at the bottom."""
    def branch(name, op, nodes=None):
        return helper.make_graph(
            nodes or [helper.make_node(op, ["x"], [name])], name, [],
            [vi(name)])
    body = branch("b0", "Relu")
    for level in range(1, depth + 1):
        node = helper.make_node("If", ["c"], [f"b{level}"],
                                then_branch=body,
                                else_branch=branch(f"e{level}", "Neg"))
        body = helper.make_graph([node], f"b{level}", [], [vi(f"b{level}")])
    top = body.node[0]
    top.output[0] = "y"
    return model([top], inputs=[vi("x"), vi("c", TensorProto.BOOL, ())])


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def deep_protobuf(depth):
    """Graph -> If node -> then_branch graph, `depth` times, encoded by hand
    (Python's protobuf refuses to serialize past its recursion limit)."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [], [vi("y")]).SerializeToString()
    for _ in range(depth):
        attr = helper.make_attribute("then_branch", helper.make_graph(
            [], "t", [], []))
        attr.ClearField("g")
        attr_bytes = attr.SerializeToString() + field(6, graph)  # g = 6
        node = helper.make_node("If", ["c"], ["y"]).SerializeToString()
        node += field(5, attr_bytes)  # attribute = 5
        graph = helper.make_graph([], "g", [], [vi("y")]).SerializeToString()
        graph += field(1, node)  # node = 1
    head = relu_model()
    head.ClearField("graph")
    return head.SerializeToString() + field(7, graph)  # graph = 7


def parses(data):
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:
        return False
    return True


def unparsable_variants(data, rng, count, mutate):
    """`count` mutations of `data` that protobuf refuses."""
    found, tries = [], 0
    while len(found) < count and tries < 10000:
        tries += 1
        candidate = mutate(bytearray(data), rng)
        if not parses(bytes(candidate)) and bytes(candidate) not in found:
            found.append(bytes(candidate))
    return found


def cases():
    """Yields (name, content, expected substring). `content` is a ModelProto,
    bytes, or a function that fills the case folder and returns the path of
    the model in it."""
    valid = model([helper.make_node("Add", ["x", "w"], ["y"])],
                  inits=[weights()]).SerializeToString()

    # --- Files that are not models ---------------------------------------
    malformed = "not a valid ONNX model protobuf (truncated or malformed)"
    yield "empty-file", b"", "the protobuf holds no graph"
    yield "truncated-1-byte", valid[:1], malformed
    yield "truncated-half", valid[:len(valid) // 2], malformed
    yield "truncated-last-byte", valid[:-1], malformed
    rng = random.Random(1)

    def flip(data, rng):
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return data
    for i, data in enumerate(unparsable_variants(valid, rng, 6, flip)):
        yield f"bit-flip-{i}", data, malformed
    yield "random-bytes", bytes(random.Random(2).randrange(256)
                                for _ in range(256)), malformed
    yield "length-past-the-end", varint(7 << 3 | 2) + varint(2**62), malformed
    yield "protobuf-nesting-200", deep_protobuf(200), malformed

    # --- Shapes and sizes ----------------------------------------------------
    overflow = "the product of the dims overflows"
    yield "initializer-dims-overflow", model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        inits=[raw_tensor("w", [2**20] * 4)]), overflow
    yield "initializer-dims-overflow-int64", model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        inits=[raw_tensor("w", [2**62, 2**62])]), overflow
    yield "initializer-dims-overflow-after-zero", model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        inits=[raw_tensor("w", [0, 2**62, 2**62])]), overflow
    yield "input-dims-overflow", relu_model(
        inputs=[vi("x", shape=(2**40, 2**40))]), overflow
    yield "input-dims-int64-max", relu_model(
        inputs=[vi("x", shape=(INT64_MAX, 2))]), overflow
    yield "expand-result-overflows", model(
        [helper.make_node("Expand", ["x", "shape"], ["y"])],
        inits=[numpy_helper.from_array(
            np.array([2**30, 2**30, 4], dtype=np.int64), "shape")]), \
        "the result shape is too large"
    yield "reshape-target-overflows", model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        inits=[numpy_helper.from_array(
            np.array([2**40, 2**40, -1], dtype=np.int64), "shape")]), \
        "the requested shape holds more than 1099511627776 bytes"
    yield "reshape-to-rank-2147483647", model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        inputs=[vi("x"), vi("shape", TensorProto.INT64, (2**31 - 1,))]), \
        "the target shape has 2147483647 entries (at most 64 dims)"
    yield "constant-of-shape-rank-2147483647", model(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"])],
        inputs=[vi("shape", TensorProto.INT64, (2**31 - 1,))]), \
        "the shape input has 2147483647 entries (at most 64 dims)"
    yield "initializer-negative-dim", model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        inits=[raw_tensor("w", [-1])]), "initializer 'w': negative dim -1"
    yield "input-negative-dim", relu_model(inputs=[vi("x", shape=(-3, 4))]), \
        "graph value 'x' has negative dim -3"
    yield "data-shorter-than-shape", model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        inits=[raw_tensor("w", [4], raw=b"\0" * 12)]), \
        "holds 12 bytes of data but its shape and type need 16"

    # --- Graph structure ---------------------------------------------------
    yield "cycle", model([helper.make_node("Add", ["x", "b"], ["a"]),
                          helper.make_node("Relu", ["a"], ["b"]),
                          helper.make_node("Relu", ["b"], ["y"])]), \
        "has a cycle through"
    yield "self-loop", model([helper.make_node("Add", ["x", "y"], ["y"])]), \
        "has a cycle through"
    yield "dangling-input", model(
        [helper.make_node("Add", ["x", "nowhere"], ["y"])]), \
        "input 'nowhere' is not defined by any node, initializer or graph input"
    yield "dangling-output", relu_model(outputs=[vi("y"), vi("z")]), \
        "graph output 'z' is not produced by any node"
    yield "missing-initializer", model(
        [helper.make_node("Add", ["x", "w"], ["y"])]), \
        "input 'w' is not defined"
    missing = model([helper.make_node("Add", ["x", "w"], ["y"])])
    missing.graph.input.add().name = "w"  # listed as an input, no initializer
    yield "missing-initializer-listed-as-input", missing, \
        "graph value 'w' has no type"
    yield "output-defined-twice", model(
        [helper.make_node("Relu", ["x"], ["y"]),
         helper.make_node("Neg", ["x"], ["y"])]), \
        "output 'y' is already defined in this graph"
    yield "initializer-defined-twice", model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        inits=[weights(), weights()]), "initializer 'w' is defined more than once"
    yield "input-listed-twice", relu_model(inputs=[vi("x"), vi("x")]), \
        "graph input 'x' is listed more than once"
    yield "unknown-op", model([helper.make_node("Frobnicate", ["x"], ["y"])]), \
        "unsupported ONNX op 'Frobnicate'"
    yield "unknown-domain", model(
        [helper.make_node("Relu", ["x"], ["y"], domain="com.evil")]), \
        "unsupported op domain 'com.evil'"
    yield "string-initializer", model(
        [helper.make_node("Identity", ["s"], ["y"])],
        inits=[helper.make_tensor("s", TensorProto.STRING, [1], [b"hi"])]), \
        "unsupported tensor element type STRING"
    seq = relu_model()
    seq.graph.input[0].type.CopyFrom(helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [4])))
    yield "sequence-input", seq, "graph value 'x' is not a tensor"
    yield "invalid-element-type", relu_model(inputs=[vi("x", 999)]), \
        "graph value 'x' has unsupported element type type #999"

    # --- Subgraphs -----------------------------------------------------------
    yield "if-nested-20-deep", nested_if(20), "subgraphs are nested more than 16 deep"
    chain = [helper.make_node("Relu", ["v" if i == 0 else f"r{i - 1}"],
                              [f"r{i}"]) for i in range(50000)]
    chain.append(helper.make_node("Add", ["r49999", "nowhere"], ["vo"]))
    chain.append(helper.make_node("Identity", ["ci"], ["co"]))
    body = helper.make_graph(
        chain, "body",
        [vi("i", TensorProto.INT64, ()), vi("ci", TensorProto.BOOL, ()),
         vi("v")], [vi("co", TensorProto.BOOL, ()), vi("vo")])
    yield "loop-body-50000-nodes", model(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)],
        inits=[numpy_helper.from_array(np.array(3, dtype=np.int64), "n")]), \
        "input 'nowhere' is not defined"
    yield "if-condition-of-unknown-size", model(
        [helper.make_node("If", ["c"], ["y"], then_branch=helper.make_graph(
            [helper.make_node("Relu", ["x"], ["t"])], "t", [], [vi("t")]),
            else_branch=helper.make_graph(
                [helper.make_node("Neg", ["x"], ["e"])], "e", [], [vi("e")]))],
        inputs=[vi("x"), vi("c", TensorProto.BOOL, ("N",))]), \
        "the condition must be a single bool"
    yield "if-without-else", model(
        [helper.make_node("If", ["c"], ["y"], then_branch=helper.make_graph(
            [helper.make_node("Relu", ["x"], ["t"])], "t", [], [vi("t")]))],
        inputs=[vi("x"), vi("c", TensorProto.BOOL, ())]), \
        "needs then_branch and else_branch graphs"
    bad_branch = model(
        [helper.make_node("If", ["c"], ["y"], then_branch=1, else_branch=2)],
        inputs=[vi("x"), vi("c", TensorProto.BOOL, ())])
    yield "if-branch-is-an-int", bad_branch, \
        "attribute 'then_branch' must be GRAPH, got INT"
    yield "if-branch-output-undefined", model(
        [helper.make_node("If", ["c"], ["y"],
                          then_branch=helper.make_graph([], "t", [], [vi("q")]),
                          else_branch=helper.make_graph(
                              [helper.make_node("Relu", ["x"], ["e"])], "e",
                              [], [vi("e")]))],
        inputs=[vi("x"), vi("c", TensorProto.BOOL, ())]), \
        "then branch output 'q' is not defined"

    # --- Attributes ----------------------------------------------------------
    yield "attribute-ints-for-float", model(
        [helper.make_node("Elu", ["x"], ["y"], alpha=[1, 2])]), \
        "attribute 'alpha' must be FLOAT, got INTS"
    yield "attribute-string-for-int", model(
        [helper.make_node("Softmax", ["x"], ["y"], axis="last")]), \
        "attribute 'axis' must be INT, got STRING"
    yield "attribute-axis-out-of-range", model(
        [helper.make_node("Softmax", ["x"], ["y"], axis=-(2**63))]), \
        "out of range"
    yield "attribute-graph-for-float", model(
        [helper.make_node("LeakyRelu", ["x"], ["y"],
                          alpha=helper.make_graph([], "g", [], []))]), \
        "attribute 'alpha' must be FLOAT, got GRAPH"

    # --- Versions ------------------------------------------------------------
    for version in (29, 0, -1, 2**40):
        yield f"opset-{version}".replace("-", "-minus", 1) if version < 0 \
            else f"opset-{version}", relu_model(
                opset=[helper.make_opsetid("", version)]), \
            f"unsupported opset {version} of the default domain"
    # libonnx's version converter crashed on this one (opset < 7 models go
    # through it).
    yield "old-opset-undefined-output", relu_model(
        outputs=[vi("z")], opset=[helper.make_opsetid("", 5)]), \
        "graph output 'z' is not produced by any node"
    undefined_input = model([helper.make_node("Add", ["x", "nowhere"], ["y"])],
                            opset=[helper.make_opsetid("", 5)])
    yield "old-opset-undefined-input", undefined_input, \
        "the ONNX checker rejects it"
    # libonnx's Gemm 6->7 adapter reads past the end of B's dims.
    yield "old-opset-gemm-rank-1-b", model(
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1)],
        inputs=[vi("a", shape=(6, 3)), vi("b", shape=(6,)),
                vi("c", shape=(1, 4))], outputs=[vi("y", shape=(3, 4))],
        opset=[helper.make_opsetid("", 1)], ir=7), \
        "the ONNX version converter cannot upgrade this model"
    yield "no-default-opset", relu_model(
        opset=[helper.make_opsetid("com.microsoft", 1)]), \
        "the model imports no opset of the default domain"
    for ir in (0, -5, 15, 1000):
        yield f"ir-version-{ir}".replace("--", "-minus"), relu_model(ir=ir), \
            f"unsupported IR version {ir}"

    # --- Text format -------------------------------------------------------
    yield "text-malformed", ("model.onnxtxt", b"<ir_version: 8>\ng (float x"), \
        "malformed ONNX text"
    def deep(n):
        return ("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                "g (float[4] x, bool c) => (float[4] y) {\n"
                + "y = If(c) < then_branch = t () => (float[4] y) {\n" * n
                + "y = Relu(x)\n"
                + "}, else_branch = e () => (float[4] y) { y = Neg(x) } >\n"
                * n + "}\n").encode()
    yield "text-if-nested-200-deep", ("model.onnxtxt", deep(200)), \
        "subgraphs are nested more than 16 deep"
    # libonnx's parser overflowed the stack on this one.
    yield "text-if-nested-10000-deep", ("model.onnxtxt", deep(10000)), \
        "malformed ONNX text: brackets nested more than 256 deep"
    yield "text-sequence-type-nested-10000-deep", (
        "model.onnxtxt", ("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                          "g (" + "seq(" * 10000 + "float[4]" + ")" * 10000
                          + " x) => (float[4] y) { y = Relu(x) }\n").encode()), \
        "malformed ONNX text: brackets nested more than 256 deep"

    # --- External data -------------------------------------------------------
    escapes = "escapes the model folder"
    yield "external-dotdot", external("../secret.bin"), escapes
    yield "external-dotdot-inside-path", external("sub/../../secret.bin"), escapes
    yield "external-absolute", lambda d: write_model(
        d, external(os.path.join(os.path.abspath(d), "secret.bin"))), escapes
    yield "external-absolute-etc", external("/etc/passwd"), escapes
    yield "external-symlink-out", lambda d: (
        os.symlink("../secret.bin", os.path.join(d, "model", "link.bin")),
        write_model(d, external("link.bin")))[-1], \
        "resolves outside the model folder"
    yield "external-symlink-dir-out", lambda d: (
        os.symlink("..", os.path.join(d, "model", "up")),
        write_model(d, external("up/secret.bin")))[-1], \
        "resolves outside the model folder"
    yield "external-symlink-to-dev-zero", lambda d: (
        os.symlink("/dev/zero", os.path.join(d, "model", "zero.bin")),
        write_model(d, external("zero.bin")))[-1], \
        "resolves outside the model folder"
    yield "external-fifo", lambda d: (
        os.mkfifo(os.path.join(d, "model", "fifo.bin")),
        write_model(d, external("fifo.bin")))[-1], "is not a regular file"
    yield "external-directory", lambda d: (
        os.mkdir(os.path.join(d, "model", "dir.bin")),
        write_model(d, external("dir.bin")))[-1], "is not a regular file"
    yield "external-missing-file", external("missing.bin"), \
        "cannot open external data file 'missing.bin'"
    yield "external-no-location", external(None, 0, 16), \
        "external data has no location"
    yield "external-offset-past-the-end", external("weights.bin", 100, 16), \
        "external data range [100, 116) is past the end"
    yield "external-length-past-the-end", external("weights.bin", 0, 1000), \
        "external data range [0, 1000) is past the end"
    yield "external-offset-and-length-int64-max", external(
        "weights.bin", INT64_MAX, INT64_MAX), \
        f"external data range [{INT64_MAX}, {2 * INT64_MAX}) is past the end"
    yield "external-negative-offset", external("weights.bin", -8, 16), \
        "external data offset '-8' is not a non-negative integer"
    yield "external-length-not-a-number", external("weights.bin", 0, "16abc"), \
        "external data length '16abc' is not a non-negative integer"
    yield "external-offset-overflows-int64", external(
        "weights.bin", "99999999999999999999", 16), \
        "is not a non-negative integer"
    yield "external-too-short", external("weights.bin", 0, 8), \
        "holds 8 bytes of data but its shape and type need 16"


def accepted_cases():
    """Cases that must import: decided and documented in
    docs/reliability.md."""
    def hard_link(d):
        os.link(os.path.join(d, "secret.bin"),
                os.path.join(d, "model", "hardlink.bin"))
        return write_model(d, external("hardlink.bin", 0, 16))
    yield "external-hard-link-out (accepted by design)", hard_link


def write_model(case_dir, m, name="model.onnx"):
    path = os.path.join(case_dir, "model", name)
    with open(path, "wb") as f:
        f.write(m if isinstance(m, bytes) else m.SerializeToString())
    return path


def make_case(out, name, content):
    case_dir = os.path.join(out, name.split(" ")[0])
    os.makedirs(os.path.join(case_dir, "model", "sub"))
    # Data every external-data case can point at: 64 bytes inside the
    # folder, a secret outside it.
    with open(os.path.join(case_dir, "model", "weights.bin"), "wb") as f:
        f.write(np.arange(16, dtype=np.float32).tobytes())
    with open(os.path.join(case_dir, "secret.bin"), "wb") as f:
        f.write(b"SECRET!!" * 8)
    if callable(content):
        return content(case_dir)
    if isinstance(content, tuple):
        return write_model(case_dir, content[1], content[0])
    return write_model(case_dir, content)


def run_cgc(cgc, path, timeout):
    try:
        proc = subprocess.run([cgc, path, "--emit=cgc", "-o", os.devnull],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stderr.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder to (re)create")
    ap.add_argument("--check", metavar="CGC", help="run this cgc on each case")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds per case (a hang fails it)")
    args = ap.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)

    rows, seen = [], set()
    for name, content, expected in cases():
        assert name not in seen, name
        seen.add(name)
        rows.append((name, make_case(args.out, name, content), expected))
    accepted = [(name, make_case(args.out, name, content))
                for name, content in accepted_cases()]
    with open(os.path.join(args.out, "cases.tsv"), "w") as f:
        for name, path, expected in rows:
            f.write(f"{name}\t{os.path.relpath(path, args.out)}\t{expected}\n")
        for name, path in accepted:
            f.write(f"{name}\t{os.path.relpath(path, args.out)}\t(imports)\n")
    if not args.check:
        print(f"wrote {len(rows)} hostile cases and {len(accepted)} accepted "
              f"ones to {args.out}")
        return 0

    rejected = crashes = hangs = 0
    for name, path, expected in rows:
        code, stderr = run_cgc(args.check, path, args.timeout)
        if code == 1 and expected in stderr:
            rejected += 1
            continue
        if code is None:
            hangs += 1
            what = f"no answer in {args.timeout:g} s"
        elif code < 0 or code > 1:
            crashes += 1
            what = (f"killed by signal {-code}" if code < 0
                    else f"exit status {code}")
        elif code == 0:
            what = "imported"
        else:
            what = "wrong message"
        print(f"FAIL {name}: {what}; expected '{expected}'; stderr:")
        print("  " + "\n  ".join(stderr.strip().splitlines()[-8:]))
    accepted_ok = 0
    for name, path in accepted:
        code, stderr = run_cgc(args.check, path, args.timeout)
        if code == 0:
            accepted_ok += 1
        else:
            print(f"FAIL {name}: exit status {code}; stderr:\n  {stderr}")
    print(f"hostile: {rejected} rejected of {len(rows)}")
    print(f"crashes: {crashes}, hangs: {hangs}; accepted by design: "
          f"{accepted_ok} of {len(accepted)}")
    ok = rejected == len(rows) and accepted_ok == len(accepted)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
