#!/usr/bin/env python3
"""Writes the ONNX backend test suite of the installed onnx package (the pip
wheel: 1.23 and later ship no node-test files, only the code that makes
them) as the folders cgc-conformance reads:

    onnx_suite.py --out DIR       # DIR/node, DIR/pytorch-converted, ...

`node`: every case of onnx.backend.test.case.node, written as the ONNX
runner writes its data (model.onnx, test_data_set_N/input_K.pb and
output_K.pb). The other suites (pytorch-converted, pytorch-operator,
simple, light) are copied from the wheel's data folder where it has them.
DIR/VERSION names the onnx version; a DIR whose VERSION matches is left as
it is (the suite is written once per onnx version).
"""

import argparse
import os
import shutil
import sys

import onnx
from onnx import numpy_helper

SHIPPED_SUITES = ["pytorch-converted", "pytorch-operator", "simple", "light"]


def write_input(path, value, info):
    """One input or output of a data set as a .pb, by the graph's type."""
    kind = info.type.WhichOneof("value")
    if isinstance(value, onnx.TensorProto):
        proto = value
    elif kind == "sequence_type":
        proto = numpy_helper.from_list(value, info.name)
    elif kind == "optional_type":
        proto = numpy_helper.from_optional(value, info.name)
    elif kind == "map_type":
        proto = numpy_helper.from_dict(value, info.name)
    else:
        proto = numpy_helper.from_array(value, info.name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def write_case(root, case):
    folder = os.path.join(root, case.name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for i, (inputs, outputs) in enumerate(case.data_sets):
        data = os.path.join(folder, "test_data_set_%d" % i)
        os.makedirs(data, exist_ok=True)
        for j, value in enumerate(inputs):
            write_input(os.path.join(data, "input_%d.pb" % j), value,
                        graph.input[j])
        for j, value in enumerate(outputs):
            write_input(os.path.join(data, "output_%d.pb" % j), value,
                        graph.output[j])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    stamp = os.path.join(args.out, "VERSION")
    if os.path.exists(stamp) and open(stamp).read().strip() == onnx.__version__:
        return 0
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    from onnx.backend.test.case import node
    cases = node.collect_testcases()
    for case in cases:
        write_case(os.path.join(args.out, "node"), case)
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                           "data")
    copied = []
    for suite in SHIPPED_SUITES:
        source = os.path.join(shipped, suite)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(args.out, suite))
            copied.append(suite)
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print("onnx %s: %d node tests written, %s copied into %s" % (
        onnx.__version__, len(cases), ", ".join(copied) or "no other suite",
        args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
