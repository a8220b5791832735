#!/usr/bin/env python3
"""Writes a 2-layer MLP (x[2,4] -> MatMul -> Add -> Relu -> MatMul -> Add)
with ONNX IR 11 multi-device annotations, for the importer's tests
(test/Import/ONNX/sharding-annotations.test, docs/multi-gpu.md).

    make_sharded_mlp.py OUT.onnx VARIANT

VARIANT: plain (no annotations), megatron (w1 by columns, b1 with it, w2 by
rows over a configuration 'tp2' of 2 devices, the values between
annotated as they follow), two-configs (the same, and a second
configuration), columns-only (w2 by columns alone: its result gathered),
and the ones cgc refuses: rows-only (w2 by rows alone),
shards3 (3 parts for 2 devices), stage (a pipeline stage), subset (on
device 0 only), groups (replication groups), conflict (w1 by columns and
by rows), two-axes, unknown-tensor (a name not of the node).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def spec(tensor, axis=None, devices=(0, 1), shards=2, axes=1):
    s = onnx.ShardingSpecProto(tensor_name=tensor, device=list(devices))
    for k in range(axes if axis is not None else 0):
        d = s.sharded_dim.add(axis=axis + k)
        d.simple_sharding.add(dim_value=0, num_shards=shards)
    return s


def config(*specs, name="tp2", stage=None):
    c = onnx.NodeDeviceConfigurationProto(configuration_id=name)
    c.sharding_spec.extend(specs)
    if stage is not None:
        c.pipeline_stage = stage
    return c


def build(variant):
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal(shape)
                                       .astype(np.float32), name)
               for name, shape in (("w1", (4, 6)), ("b1", (6,)),
                                   ("w2", (6, 4)), ("b2", (4,)))]
    fc1 = helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1")
    add1 = helper.make_node("Add", ["h", "b1"], ["hb"], name="add1")
    relu = helper.make_node("Relu", ["hb"], ["g"], name="relu")
    fc2 = helper.make_node("MatMul", ["g", "w2"], ["o"], name="fc2")
    add2 = helper.make_node("Add", ["o", "b2"], ["y"], name="add2")
    configs = [onnx.DeviceConfigurationProto(name="tp2", num_devices=2)]
    annotate = {
        "megatron": lambda: (
            fc1.device_configurations.append(
                config(spec("x"), spec("w1", 1), spec("h", -1))),
            add1.device_configurations.append(
                config(spec("h", 1), spec("b1", 0), spec("hb", 1))),
            fc2.device_configurations.append(
                config(spec("g", 1), spec("w2", 0), spec("o")))),
        "rows-only": lambda: fc2.device_configurations.append(
            config(spec("w2", 0))),
        "columns-only": lambda: fc2.device_configurations.append(
            config(spec("w2", 1))),
        "shards3": lambda: fc1.device_configurations.append(
            config(spec("w1", 1, shards=3))),
        "stage": lambda: fc1.device_configurations.append(
            config(spec("w1", 1), stage=0)),
        "subset": lambda: fc1.device_configurations.append(
            config(spec("w1", 1, devices=(0,)))),
        "conflict": lambda: fc1.device_configurations.extend(
            [config(spec("w1", 1)), config(spec("w1", 0))]),
        "two-axes": lambda: fc1.device_configurations.append(
            config(spec("w1", 0, axes=2))),
        "unknown-tensor": lambda: fc1.device_configurations.append(
            config(spec("nope", 1))),
    }
    if variant == "two-configs":
        annotate["megatron"]()
        configs.append(onnx.DeviceConfigurationProto(name="tp4",
                                                     num_devices=4))
    elif variant == "groups":
        s = spec("w1", 1)
        s.index_to_device_group_map.add(key=0, value=[0, 1])
        fc1.device_configurations.append(config(s))
    elif variant != "plain":
        annotate[variant]()
    graph = helper.make_graph(
        [fc1, add1, relu, fc2, add2], "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        weights)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 11
    if variant != "plain":
        model.configuration.extend(configs)
    return model


if __name__ == "__main__":
    onnx.save(build(sys.argv[2]), sys.argv[1])
