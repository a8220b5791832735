"""Writes two ONNX node-test folders (model.onnx, test_data_set_0/) under
argv[1] for narrow-types.test: the element types narrower than 16 bits
(float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz/e8m0, float4e2m1, int4/uint4/int2/
uint2) on the GPU path.

casts/: float32 values at every edge of every narrow float (each
representable value, the midpoints between neighbours and the floats just
either side of them, the overflow thresholds, zeros, NaN, infinities, float32
subnormals) cast to each type with and without saturation (float8e8m0 in
each round_mode), each result an output and read back as float32 in the
same kernel; the same values through float16 and bfloat16 and back; int32
and float64 sources.

inputs/: every bit pattern of each narrow float as a graph input (decoded,
moved by Reshape/Transpose/Concat with a packed initializer, chosen by
Where), int4/int2 inputs over their whole range, QuantizeLinear and
DequantizeLinear to and from int4/uint4/int2/float8 with packed zero points,
and a Gather from a packed int4 initializer.

The onnx text parser of the Debian onnx predates these types, so the models
are built with the pip onnx of the venv (ml_dtypes comes with it)."""

import os
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
FLOAT8 = {  # ONNX type -> ml_dtypes type
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
}
INTS = {TensorProto.INT4: ml_dtypes.int4, TensorProto.UINT4: ml_dtypes.uint4,
        TensorProto.INT2: ml_dtypes.int2, TensorProto.UINT2: ml_dtypes.uint2}
E8M0 = TensorProto.FLOAT8E8M0


def all_patterns(ml_type):
    """Every value of a narrow float type, as its ml_dtypes array."""
    count = 16 if ml_type is ml_dtypes.float4_e2m1fn else 256
    return np.arange(count, dtype=np.uint8).view(ml_type)


def edge_values():
    """float32 values at the rounding and overflow edges of every type."""
    values = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 1e-38,
              3e38, -3e38, 0.3, -1000.0, 500.0, 7.6, 8.4, -8.2]
    for ml_type in FLOAT8.values():
        v = all_patterns(ml_type).astype(np.float64)
        v = np.unique(v[np.isfinite(v)])
        mid = (v[1:] + v[:-1]) / 2
        top = v[-1]
        values += list(v) + list(mid)
        values += list(np.nextafter(mid.astype(np.float32), np.float32(np.inf)))
        values += list(np.nextafter(mid.astype(np.float32), np.float32(-np.inf)))
        values += [top * f for f in (1.01, 1.0625, 1.125, 1.5, 2.0, 4.0)]
    for e in range(-130, 128, 3):  # e8m0: powers of two and between
        values += [2.0 ** e, 1.5 * 2.0 ** e, 1.25 * 2.0 ** e, 1.75 * 2.0 ** e]
    values += [1.9 * 2.0 ** 127, 1.5 * 2.0 ** 127]  # rounding into 0xff
    x = np.array(values, np.float64).astype(np.float32)
    return np.concatenate([x, -x])


def cast(out, source, to, **attrs):
    return helper.make_node("Cast", [source], [out], to=to, **attrs)


def write_case(root, name, nodes, inputs, outputs, initializers=()):
    folder = os.path.join(root, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, list(v.shape))
         for n, (t, v) in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        initializer=list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for k, (n, (_, v)) in enumerate(inputs.items()):
        with open(os.path.join(folder, "test_data_set_0",
                               "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())


def casts_case(root):
    x = edge_values()
    n = [len(x)]
    k = np.arange(-20, 21, dtype=np.int32)
    d = np.array([1.0 + 2.0 ** -4 + 2.0 ** -40, 1.0 + 2.0 ** -4,
                  1.0 + 3 * 2.0 ** -4 - 2.0 ** -40, 464.0000000001, 463.99999999,
                  np.nan, -np.inf], np.float64)
    nodes, outputs = [], []

    def add(out, source, to, shape, **attrs):
        nodes.append(cast(out, source, to, **attrs))
        outputs.append((out, to, shape))

    for to in FLOAT8:
        for saturate in (1, 0):
            y = "t%d_sat%d" % (to, saturate)
            add(y, "x", to, n, saturate=saturate)
            add(y + "_f32", y, F32, n)
        add("d_t%d" % to, "d", to, [len(d)])
    for mode in ("up", "down", "nearest"):
        for saturate in (1, 0):
            y = "e8m0_%s_sat%d" % (mode, saturate)
            add(y, "x", E8M0, n, saturate=saturate, round_mode=mode)
            add(y + "_f32", y, F32, n)
    for to in INTS:
        add("x_t%d" % to, "x", to, n)
        add("k_t%d" % to, "k", to, [len(k)])
        add("k_t%d_i32" % to, "k_t%d" % to, TensorProto.INT32, [len(k)])
    for half in (TensorProto.FLOAT16, TensorProto.BFLOAT16):
        nodes.append(cast("x_t%d" % half, "x", half))
        add("x_t%d_f32" % half, "x_t%d" % half, F32, n)
    write_case(root, "casts", nodes,
               {"x": (F32, x), "k": (TensorProto.INT32, k),
                "d": (TensorProto.DOUBLE, d)}, outputs)


def inputs_case(root):
    rng = np.random.default_rng(7)
    inputs, nodes, outputs, inits = {}, [], [], []
    for to, ml_type in list(FLOAT8.items()) + [(E8M0, ml_dtypes.float8_e8m0fnu)]:
        a = "a%d" % to
        v = all_patterns(ml_type)
        size = len(v)
        inputs[a] = (to, v)
        nodes.append(cast(a + "_f32", a, F32))
        nodes.append(cast(a + "_f16", a, TensorProto.FLOAT16))
        outputs += [(a + "_f32", F32, [size]), (a + "_f16", TensorProto.FLOAT16, [size])]
        # Data movement and selection of the stored bytes.
        side = 4 if size == 16 else 16
        nodes += [helper.make_node("Reshape", [a, "square%d" % side], [a + "_sq"]),
                  helper.make_node("Transpose", [a + "_sq"], [a + "_t"], perm=[1, 0]),
                  helper.make_node("Concat", [a, "w%d" % to], [a + "_cat"], axis=0),
                  helper.make_node("Slice", [a, "minus1", "end", "zero", "minus1"],
                                   [a + "_rev"]),
                  helper.make_node("Where", ["pick%d" % size, a, a + "_rev"], [a + "_where"])]
        w = v[rng.permutation(size)[:5]]
        inits.append(numpy_helper.from_array(w, "w%d" % to))
        outputs += [(a + "_t", to, [side, side]), (a + "_cat", to, [size + 5]),
                    (a + "_where", to, [size])]
    for size in (16, 256):
        inputs["pick%d" % size] = (TensorProto.BOOL, rng.integers(0, 2, size).astype(bool))
    inits += [numpy_helper.from_array(np.array(v, np.int64), nm)
              for nm, v in (("zero", [0]), ("end", [-(1 << 62)]),
                            ("minus1", [-1]))]
    # Integer inputs over their whole range, into int32 and back.
    for to, ml_type in INTS.items():
        b = "b%d" % to
        limits = ml_dtypes.iinfo(ml_type)
        inputs[b] = (to, np.arange(int(limits.min), int(limits.max) + 1).astype(ml_type))
        nodes.append(cast(b + "_i32", b, TensorProto.INT32))
        outputs.append((b + "_i32", TensorProto.INT32, [int(limits.max) - int(limits.min) + 1]))
    # Quantization to and from the narrow types, zero points packed.
    q = np.linspace(-40, 40, 97).astype(np.float32)
    inputs["q"] = (F32, q)
    for to, zero in ((TensorProto.INT4, -3), (TensorProto.UINT4, 5),
                     (TensorProto.INT2, 1), (TensorProto.FLOAT8E4M3FN, 0.0),
                     (TensorProto.FLOAT8E5M2, 0.0)):
        ml_type = INTS.get(to) or FLOAT8[to]
        inits += [numpy_helper.from_array(np.array(zero).astype(ml_type), "zp%d" % to),
                  numpy_helper.from_array(np.array(2.5, np.float32), "scale%d" % to)]
        nodes += [helper.make_node("QuantizeLinear", ["q", "scale%d" % to, "zp%d" % to],
                                   ["q%d" % to]),
                  helper.make_node("DequantizeLinear", ["q%d" % to, "scale%d" % to, "zp%d" % to],
                                   ["dq%d" % to])]
        outputs += [("q%d" % to, to, [len(q)]), ("dq%d" % to, F32, [len(q)])]
    # A Gather from a packed int4 initializer.
    table = np.arange(-8, 8).astype(ml_dtypes.int4)
    inits.append(numpy_helper.from_array(table, "table"))
    inputs["idx"] = (TensorProto.INT64, rng.integers(-16, 16, 40).astype(np.int64))
    nodes.append(helper.make_node("Gather", ["table", "idx"], ["gathered"]))
    outputs.append(("gathered", TensorProto.INT4, [40]))
    inits += [numpy_helper.from_array(np.array([16, 16], np.int64), "square16"),
              numpy_helper.from_array(np.array([4, 4], np.int64), "square4")]
    write_case(root, "inputs", nodes, inputs, outputs, inits)


if __name__ == "__main__":
    casts_case(sys.argv[1])
    inputs_case(sys.argv[1])
