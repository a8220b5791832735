#!/usr/bin/env python3
"""Writes extra single-op test cases for the GPU kernels, in the layout of the
ONNX backend node tests (OUT/node/<test>/model.onnx + test_data_set_0), with
expected outputs from onnx.reference.ReferenceEvaluator.

The ONNX suite leaves out much of what the kernel templates must handle:
1-d and 3-d convolution, depthwise and grouped transposed convolution,
pooling with dilations, int8/uint8/bool data, reductions and line
operations long enough to take the block-per-row paths, scatter reductions
with duplicate indices, wrap padding, more resize modes, einsum with
ellipses and diagonals, f64 normalizations, and every template family in
float16 and bfloat16 (inputs rounded to the half type; references computed
in float32 from them and rounded once, which is what the kernels do).
utils/gpu/gpu_kernel_check.py prepares them like the backend tests:

  /tmp/venv/bin/python utils/gpu/kernel_extra_tests.py --out /tmp/extra
  /tmp/venv/bin/python utils/gpu/gpu_kernel_check.py --data /tmp/extra ...
"""

import argparse
import os
import shutil

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

RNG = np.random.default_rng(0)
CASES = []

DTYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
          np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
          np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
          np.bool_: TensorProto.BOOL, np.float16: TensorProto.FLOAT16,
          ml_dtypes.bfloat16: TensorProto.BFLOAT16}
BF16 = np.dtype(ml_dtypes.bfloat16)


def case(name, op, inputs, outputs=1, opset=19, consts=(), **attrs):
    """One node `op` whose inputs are the graph inputs `inputs` (name ->
    array), then the constants `consts` (name -> array, Constant nodes); a
    None value skips an optional input."""
    CASES.append((name, op, inputs, outputs, opset, dict(consts), attrs))


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return RNG.standard_normal(shape)


def ints(dtype, lo, hi, *shape):
    return RNG.integers(lo, hi, shape).astype(dtype)


def half_case(name, op, inputs, half=np.float16, **kwargs):
    """A case whose float32 inputs become `half` (float16 or bfloat16)."""
    case(name, op, {k: v if v is None or v.dtype != np.float32 else
                    v.astype(half) for k, v in inputs.items()},
         _half=half, **kwargs)


def build(name, op, inputs, outputs, opset, consts, attrs):
    attrs = dict(attrs)
    reference = attrs.pop("_ref", None)
    half = attrs.pop("_half", None)
    if half is not None:
        # The reference runs in float32 on the half inputs; its float
        # results are rounded to the half type once.
        def run_in_float(feeds, probe_attrs=dict(attrs)):
            wide = {k: v.astype(np.float32) if v.dtype == np.dtype(half)
                    else v for k, v in feeds.items()}
            model, _, results = build(name, op, wide, outputs, opset,
                                      consts, probe_attrs)
            return [np.asarray(r).astype(half)
                    if np.asarray(r).dtype == np.float32 else r
                    for r in results]
        reference = run_in_float
    nodes, graph_inputs, feeds = [], [], {}
    names = []
    for key, value in inputs.items():
        names.append("" if value is None else key)
        if value is None:
            continue
        dtype = DTYPES[value.dtype.type]
        graph_inputs.append(helper.make_tensor_value_info(key, dtype,
                                                          value.shape))
        feeds[key] = value
    for key, value in consts.items():
        names.append("" if value is None else key)
        if value is None:
            continue
        nodes.append(helper.make_node(
            "Constant", [], [key],
            value=numpy_helper.from_array(np.asarray(value), key)))
    out_names = [f"y{i}" for i in range(outputs)]
    nodes.append(helper.make_node(op, names, out_names, **attrs))
    # Output types from a reference run.
    probe = helper.make_model(
        helper.make_graph(nodes, name, graph_inputs,
                          [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None)
                           for n in out_names]),
        opset_imports=[helper.make_opsetid("", opset)])
    results = (reference(feeds) if reference else
               ReferenceEvaluator(probe).run(None, feeds))
    graph_outputs = [helper.make_tensor_value_info(
        n, DTYPES[np.asarray(r).dtype.type], np.asarray(r).shape)
        for n, r in zip(out_names, results)]
    model = helper.make_model(
        helper.make_graph(nodes, name, graph_inputs, graph_outputs),
        opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, feeds, results


def grouped_conv_transpose(group, **attrs):
    """ReferenceEvaluator's ConvTranspose handles one group only: run it per
    group and concatenate the channels."""
    def run(feeds):
        x, w, b = feeds["x"], feeds["w"], feeds.get("b")
        cg, outs = x.shape[1] // group, []
        for g in range(group):
            node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)
            graph = helper.make_graph(
                [node], "g",
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, None),
                 helper.make_tensor_value_info("w", TensorProto.FLOAT, None)],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[
                helper.make_opsetid("", 19)])
            outs.append(ReferenceEvaluator(model).run(
                None, {"x": x[:, g * cg:(g + 1) * cg],
                       "w": w[g * cg:(g + 1) * cg]})[0])
        y = np.concatenate(outs, axis=1)
        if b is not None:
            y = y + b.reshape(1, -1, *([1] * (y.ndim - 2)))
        return [y.astype(np.float32)]
    return run


def pad_with_crop(feeds):
    """Constant Pad with negative (cropping) pads, which the reference
    evaluator rejects."""
    x = feeds["x"]
    pads = [(-1, 1), (2, -2)]  # (begin, end) per dim, matching the case
    for axis, (begin, end) in enumerate(pads):
        x = np.pad(x, [(max(begin, 0), max(end, 0)) if a == axis else (0, 0)
                       for a in range(x.ndim)], constant_values=7)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-begin, 0), x.shape[axis] - max(-end, 0))
        x = x[tuple(index)]
    return [x]


def lrn(size, alpha, beta, bias):
    """LRN by the spec (the reference evaluator sums over the wrong dim)."""
    def run(feeds):
        x = feeds["x"].astype(np.float64)
        c1, c2 = (size - 1) // 2, -(-(size - 1) // 2)
        sq = np.zeros_like(x)
        for c in range(x.shape[1]):
            lo, hi = max(0, c - c1), min(x.shape[1], c + c2 + 1)
            sq[:, c] = (x[:, lo:hi] ** 2).sum(axis=1)
        return [(x / (bias + alpha / size * sq) ** beta).astype(np.float32)]
    return run


def half_cases():
    """Every template family in float16, a few in bfloat16."""
    x = f32(2, 3, 4, 4)
    for half, tag in ((np.float16, "f16"), (ml_dtypes.bfloat16, "bf16")):
        half_case(f"{tag}_relu", "Relu", {"x": x}, half=half)
        half_case(f"{tag}_matmul", "MatMul", {"a": f32(2, 3, 5), "b": f32(5, 4)},
                  half=half)
        half_case(f"{tag}_softmax", "Softmax", {"x": x}, half=half, axis=-1)
        half_case(f"{tag}_reducemean", "ReduceMean", {"x": x}, half=half,
                  consts={"axes": np.array([2, 3], np.int64)}, keepdims=0)
        half_case(f"{tag}_conv", "Conv", {"x": x, "w": f32(5, 3, 3, 3)},
                  half=half, pads=[1, 1, 1, 1])
        half_case(f"{tag}_transpose", "Transpose", {"x": x}, half=half,
                  perm=[3, 1, 0, 2])
    half_case("f16_maxpool", "MaxPool", {"x": x}, kernel_shape=[2, 2],
              strides=[2, 2])
    half_case("f16_averagepool", "AveragePool", {"x": x}, kernel_shape=[3, 3],
              pads=[1, 1, 1, 1])
    half_case("f16_gemm_bias", "Gemm", {"a": f32(3, 6), "b": f32(4, 6),
                                        "c": f32(4)}, transB=1, alpha=0.5)
    half_case("f16_layernorm", "LayerNormalization",
              {"x": x, "s": f32(4), "b": f32(4)}, axis=-1, opset=17)
    half_case("f16_batchnorm", "BatchNormalization",
              {"x": x, "s": f32(3), "b": f32(3), "m": f32(3),
               "v": np.abs(f32(3)) + 0.5})
    half_case("f16_instancenorm", "InstanceNormalization",
              {"x": x, "s": f32(3), "b": f32(3)})
    half_case("f16_reducesum_block", "ReduceSum", {"x": f32(2, 300)},
              consts={"axes": np.array([1], np.int64)})
    half_case("f16_reducemax", "ReduceMax", {"x": x},
              consts={"axes": np.array([1], np.int64)})
    half_case("f16_argmax", "ArgMax", {"x": x}, axis=3, keepdims=0)
    half_case("f16_cumsum", "CumSum", {"x": x},
              consts={"axis": np.array(3, np.int64)})
    half_case("f16_topk", "TopK", {"x": f32(3, 50)}, outputs=2,
              consts={"k": np.array([4], np.int64)}, axis=1)
    half_case("f16_resize_linear", "Resize", {"x": x},
              consts={"roi": None,
                      "scales": np.array([1, 1, 2, 2], np.float32)},
              mode="linear")
    half_case("f16_gather", "Gather",
              {"x": x, "i": np.array([[2, 0], [-1, 1]], np.int64)}, axis=2)
    half_case("f16_concat", "Concat", {"a": x, "b": f32(2, 1, 4, 4)}, axis=1)
    half_case("f16_pad_reflect", "Pad", {"x": x}, mode="reflect",
              consts={"p": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)})
    half_case("f16_slice_expand", "Expand", {"x": f32(3, 1)},
              consts={"s": np.array([2, 3, 4], np.int64)})
    half_case("f16_where", "Where", {"c": ints(np.bool_, 0, 2, 3, 4),
                                     "a": f32(3, 4), "b": f32(4)})
    half_case("f16_gelu_erf", "Gelu", {"x": f32(5, 7)}, opset=20)
    half_case("f16_cast_to_bf16", "Cast", {"x": f32(9)}, to=TensorProto.BFLOAT16)
    half_case("bf16_cast_to_f16", "Cast", {"x": f32(9)}, half=ml_dtypes.bfloat16,
              to=TensorProto.FLOAT16)
    half_case("f16_cast_to_int32", "Cast", {"x": f32(9) * 50},
              to=TensorProto.INT32)
    case("f64_cast_to_f16", "Cast", {"x": f64(11) * 100},
         to=TensorProto.FLOAT16)
    case("int64_cast_to_bf16", "Cast", {"x": ints(np.int64, -300, 300, 11)},
         to=TensorProto.BFLOAT16)


def define_cases():
    half_cases()
    # Convolution and pooling.
    case("conv1d_depthwise_dilated", "Conv",
         {"x": f32(2, 4, 11), "w": f32(4, 1, 3), "b": f32(4)},
         group=4, strides=[2], pads=[1, 2], dilations=[2])
    case("conv3d_grouped_bias", "Conv",
         {"x": f32(1, 4, 5, 6, 7), "w": f32(6, 2, 3, 2, 3), "b": f32(6)},
         group=2, strides=[1, 2, 1], pads=[1, 0, 1, 1, 1, 0])
    case("conv2d_many_channels", "Conv",
         {"x": f32(1, 64, 9, 9), "w": f32(32, 64, 3, 3)}, pads=[1, 1, 1, 1])
    case("conv_f64", "Conv", {"x": f64(1, 2, 6, 6), "w": f64(3, 2, 3, 3)},
         strides=[2, 2])
    case("convtranspose1d_grouped", "ConvTranspose",
         {"x": f32(1, 4, 5), "w": f32(4, 3, 3), "b": f32(6)}, group=2,
         strides=[3], pads=[1, 2], output_padding=[1], dilations=[2],
         _ref=grouped_conv_transpose(2, strides=[3], pads=[1, 2],
                                     output_padding=[1], dilations=[2]))
    case("convtranspose3d", "ConvTranspose",
         {"x": f32(1, 2, 3, 3, 3), "w": f32(2, 2, 2, 2, 2)},
         strides=[2, 2, 2])
    case("averagepool1d_dilated_ceil", "AveragePool", {"x": f32(1, 3, 10)},
         kernel_shape=[3], strides=[2], dilations=[2], pads=[1, 1],
         ceil_mode=1)
    case("averagepool3d_include_pad", "AveragePool", {"x": f32(1, 2, 5, 5, 5)},
         kernel_shape=[2, 3, 3], strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1],
         count_include_pad=1)
    case("maxpool2d_int8_dilated_ceil", "MaxPool",
         {"x": ints(np.int8, -128, 127, 1, 2, 7, 7)}, kernel_shape=[3, 3],
         strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 2], ceil_mode=1)
    case("maxpool1d_uint8", "MaxPool", {"x": ints(np.uint8, 0, 255, 2, 3, 9)},
         kernel_shape=[4], strides=[3], pads=[2, 2])
    # Reductions, long enough for one block per output.
    x = f32(3, 100, 5)
    for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1",
               "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"]:
        case(f"{op.lower()}_block_axis1", op, {"x": x},
             consts={"axes": np.array([1], np.int64)}, keepdims=0, opset=18)
    case("reducelogsum_block_axes02", "ReduceLogSum",
         {"x": np.abs(f32(70, 3, 2)) + 0.1},
         consts={"axes": np.array([0, 2], np.int64)}, opset=18)
    case("reduceprod_block", "ReduceProd",
         {"x": (1 + 0.01 * f32(2, 130)).astype(np.float32)},
         consts={"axes": np.array([1], np.int64)}, opset=18)
    case("reducemax_int32_block", "ReduceMax",
         {"x": ints(np.int32, -1000, 1000, 4, 90)},
         consts={"axes": np.array([1], np.int64)}, keepdims=0, opset=18)
    case("reducemin_uint8_axes02", "ReduceMin",
         {"x": ints(np.uint8, 0, 255, 5, 3, 7)},
         consts={"axes": np.array([0, 2], np.int64)}, opset=18)
    case("reducesum_int64_all", "ReduceSum",
         {"x": ints(np.int64, -50, 50, 6, 40)}, opset=18, keepdims=0)
    case("reducemean_f64_block", "ReduceMean", {"x": f64(2, 3, 50)},
         consts={"axes": np.array([1, 2], np.int64)}, opset=18)
    # Arg reductions, hardmax, cumsum, topk on long lines (block paths).
    ties = ints(np.int32, 0, 5, 3, 300)
    case("argmax_long_last", "ArgMax", {"x": ties}, axis=1,
         select_last_index=1)
    case("argmin_long_first", "ArgMin", {"x": ties}, axis=1, keepdims=0)
    case("argmax_f32_axis0_long", "ArgMax", {"x": f32(200, 3)}, axis=0)
    case("argmin_int8_short", "ArgMin", {"x": ints(np.int8, -3, 3, 4, 6)},
         axis=-1, select_last_index=1)
    case("hardmax_long", "Hardmax", {"x": f32(4, 200)}, axis=1)
    case("hardmax_f64_axis0", "Hardmax", {"x": f64(3, 4, 2)}, axis=0)
    case("cumsum_long_exclusive_reverse", "CumSum",
         {"x": f32(3, 600)}, consts={"axis": np.array(1, np.int64)},
         exclusive=1, reverse=1)
    case("cumsum_int64_axis0", "CumSum", {"x": ints(np.int64, -9, 9, 300, 2)},
         consts={"axis": np.array(0, np.int32)})
    case("topk_long_largest", "TopK", {"x": f32(5, 1000)}, outputs=2,
         consts={"k": np.array([7], np.int64)}, axis=1)
    case("topk_ties_smallest_axis0", "TopK",
         {"x": ints(np.int32, 0, 4, 40, 3)}, outputs=2,
         consts={"k": np.array([5], np.int64)}, axis=0, largest=0)
    # Normalizations in f64 and along middle axes.
    case("softmax_f64_axis1", "Softmax", {"x": f64(3, 50, 4)}, axis=1)
    case("logsoftmax_axis1", "LogSoftmax", {"x": f32(3, 300, 2)}, axis=1)
    case("layernorm_f64_axis_m2", "LayerNormalization",
         {"x": f64(2, 3, 4, 5), "s": f64(4, 5), "b": f64(4, 5)}, axis=-2,
         opset=17)
    case("instancenorm_3d", "InstanceNormalization",
         {"x": f32(2, 3, 4, 5, 6), "s": f32(3), "b": f32(3)}, epsilon=1e-3)
    case("batchnorm_f64", "BatchNormalization",
         {"x": f64(2, 3, 4), "s": f64(3), "b": f64(3), "m": f64(3),
          "v": np.abs(f64(3)) + 0.5})
    case("lrn_even_size", "LRN", {"x": f32(2, 7, 3, 3)}, size=4, alpha=0.01,
         beta=0.6, bias=1.5, _ref=lrn(4, 0.01, 0.6, 1.5))
    # Data movement over narrow and bool types.
    case("transpose_bool_5d", "Transpose",
         {"x": ints(np.bool_, 0, 2, 2, 3, 1, 4, 2)}, perm=[4, 0, 3, 1, 2])
    case("transpose_int8", "Transpose", {"x": ints(np.int8, -9, 9, 3, 5)})
    case("concat_uint8_axis2", "Concat",
         {"a": ints(np.uint8, 0, 9, 2, 3, 1), "b": ints(np.uint8, 0, 9, 2, 3, 4),
          "c": ints(np.uint8, 0, 9, 2, 3, 2)}, axis=2)
    case("concat_bool_axis0", "Concat",
         {"a": ints(np.bool_, 0, 2, 1, 3), "b": ints(np.bool_, 0, 2, 2, 3)},
         axis=0)
    case("split_uint8_unequal", "Split", {"x": ints(np.uint8, 0, 9, 2, 9)},
         outputs=3, consts={"split": np.array([2, 3, 4], np.int64)}, axis=1)
    case("slice_bool_negative_steps", "Slice",
         {"x": ints(np.bool_, 0, 2, 5, 6)},
         consts={"starts": np.array([-1, 5], np.int64),
                 "ends": np.array([-100, 0], np.int64),
                 "axes": np.array([0, 1], np.int64),
                 "steps": np.array([-2, -3], np.int64)})
    case("gather_int8_axis2_neg", "Gather",
         {"x": ints(np.int8, -9, 9, 2, 3, 5), "i": np.array([[-1, 0], [2, -5]],
                                                             np.int32)},
         axis=2)
    case("gatherelements_bool_axis0", "GatherElements",
         {"x": ints(np.bool_, 0, 2, 3, 4),
          "i": np.array([[-1, 0, 2, 1], [0, -3, 1, 2]], np.int64)}, axis=0)
    case("gathernd_batch1_k2", "GatherND",
         {"x": f32(2, 3, 4, 5), "i": np.array([[[0, 1], [2, -1]],
                                               [[1, 3], [0, 0]]], np.int64)},
         batch_dims=1)
    upd_i = np.array([[0, 1, 0], [2, 1, 1]], np.int64)
    for reduction in ["none", "add", "mul", "max", "min"]:
        case(f"scatterelements_dup_{reduction}", "ScatterElements",
             {"x": f32(2, 3), "i": np.array([[0, 0, 2, 2], [1, 1, 1, 0]],
                                            np.int64),
              "u": f32(2, 4)}, axis=1, reduction=reduction, opset=18)
        case(f"scatternd_dup_{reduction}", "ScatterND",
             {"x": f32(4, 3), "i": np.array([[1], [3], [1], [0], [1]],
                                            np.int64),
              "u": f32(5, 3)}, reduction=reduction, opset=18)
    case("scatternd_int64_elements", "ScatterND",
         {"x": ints(np.int64, 0, 9, 3, 4),
          "i": np.array([[0, 1], [2, 3], [-1, 0]], np.int64),
          "u": ints(np.int64, 0, 9, 3)}, opset=16)
    case("expand_uint8", "Expand", {"x": ints(np.uint8, 0, 9, 3, 1)},
         consts={"s": np.array([2, 3, 4], np.int64)})
    case("tile_bool", "Tile", {"x": ints(np.bool_, 0, 2, 2, 3)},
         consts={"r": np.array([3, 2], np.int64)})
    for mode in ["wrap", "edge", "reflect"]:
        case(f"pad_{mode}", "Pad", {"x": f32(3, 4)}, mode=mode,
             consts={"p": np.array([2, 5, 3, 1], np.int64)})
    case("pad_constant_int32_crop", "Pad", {"x": ints(np.int32, 0, 9, 3, 4)},
         consts={"p": np.array([-1, 2, 1, -2], np.int64),
                 "v": np.array(7, np.int32)}, _ref=pad_with_crop)
    case("depthtospace_dcr", "DepthToSpace", {"x": f32(2, 12, 2, 3)},
         blocksize=2, mode="DCR")
    case("spacetodepth_3", "SpaceToDepth", {"x": f32(1, 2, 6, 9)},
         blocksize=3)
    # Resize.
    case("resize_linear_3d_symmetric", "Resize", {"x": f32(1, 1, 3, 4, 5)},
         consts={"roi": None, "scales": None,
                 "sizes": np.array([1, 1, 5, 3, 8], np.int64)},
         mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    case("resize_cubic_align_corners", "Resize", {"x": f32(1, 2, 4, 4)},
         consts={"roi": np.array([], np.float32),
                 "scales": np.array([1, 1, 1.7, 0.6], np.float32)},
         mode="cubic", coordinate_transformation_mode="align_corners")
    case("resize_nearest_ceil_pytorch", "Resize", {"x": f32(1, 2, 5, 1)},
         consts={"roi": None, "scales": None,
                 "sizes": np.array([1, 2, 1, 3], np.int64)},
         mode="nearest", coordinate_transformation_mode="pytorch_half_pixel",
         nearest_mode="ceil")
    case("resize_linear_not_larger", "Resize", {"x": f32(1, 1, 4, 6)},
         consts={"roi": None, "scales": None,
                 "sizes": np.array([7, 7], np.int64)},
         axes=[2, 3], keep_aspect_ratio_policy="not_larger", mode="linear")
    case("resize_uint8_linear", "Resize",
         {"x": ints(np.uint8, 0, 255, 1, 1, 3, 3)},
         consts={"roi": np.array([], np.float32),
                 "scales": np.array([1, 1, 2, 2], np.float32)},
         mode="linear")
    case("resize_cubic_exclude_asymmetric", "Resize", {"x": f32(1, 1, 5, 5)},
         consts={"roi": np.array([], np.float32),
                 "scales": np.array([1, 1, 0.8, 1.6], np.float32)},
         mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5,
         coordinate_transformation_mode="asymmetric")
    # Trilu, OneHot, Einsum, NLL loss, MatMul/Gemm, elementwise casts.
    case("trilu_int64_batch_neg_k", "Trilu",
         {"x": ints(np.int64, 0, 9, 2, 4, 5)},
         consts={"k": np.array(-1, np.int64)}, upper=1)
    case("onehot_float_indices_axis0", "OneHot",
         {"i": np.array([[1.0, -1.0], [4.0, 7.0]], np.float32)},
         consts={"d": np.array(5, np.int64),
                 "v": np.array([-2, 3], np.int32)}, axis=0)
    for i, eq in enumerate(["...ij,...jk->...ik", "ii->i", "ij->", "i,i",
                            "bij,bjk->bik", "ij,jk", "b...i->i...b"]):
        shapes = {0: [(2, 1, 3, 4), (5, 4, 2)], 1: [(4, 4)], 2: [(3, 5)],
                  3: [(6,), (6,)], 4: [(2, 3, 4), (2, 4, 5)],
                  5: [(3, 4), (4, 2)], 6: [(2, 3, 4)]}[i]
        case(f"einsum_{i}", "Einsum",
             {f"x{k}": f32(*s) for k, s in enumerate(shapes)}, equation=eq)
    case("nllloss_sum_weight_ii", "NegativeLogLikelihoodLoss",
         {"x": f32(3, 5, 2), "t": np.array([[0, 4], [2, 2], [1, 3]], np.int64),
          "w": np.abs(f32(5))}, reduction="sum", ignore_index=2)
    case("nllloss_none_ii", "NegativeLogLikelihoodLoss",
         {"x": f32(4, 3), "t": np.array([0, 2, 1, 2], np.int32)},
         reduction="none", ignore_index=1)
    case("matmul_int64_batch", "MatMul",
         {"a": ints(np.int64, -5, 5, 2, 1, 3, 4),
          "b": ints(np.int64, -5, 5, 3, 4, 2)})
    case("matmul_1d_1d", "MatMul", {"a": f32(7), "b": f32(7)})
    case("matmul_2d_1d", "MatMul", {"a": f32(3, 7), "b": f32(7)})
    case("gemm_f64_transa_c_column", "Gemm",
         {"a": f64(4, 3), "b": f64(4, 5), "c": f64(3, 1)}, transA=1,
         alpha=0.7, beta=-1.5)
    case("gemm_scalar_c_transb", "Gemm",
         {"a": f32(2, 3), "b": f32(4, 3), "c": f32(1)}, transB=1)
    case("where_int8", "Where",
         {"c": ints(np.bool_, 0, 2, 3, 4), "a": ints(np.int8, -9, 9, 3, 1),
          "b": ints(np.int8, -9, 9, 4)})
    case("cast_bool_to_int8", "Cast", {"x": ints(np.bool_, 0, 2, 5)},
         to=TensorProto.INT8)
    case("cast_int32_to_bool", "Cast", {"x": ints(np.int32, -2, 3, 6)},
         to=TensorProto.BOOL)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    define_cases()
    root = os.path.join(args.out, "node")
    shutil.rmtree(root, ignore_errors=True)
    for name, op, inputs, outputs, opset, consts, attrs in CASES:
        model, feeds, results = build(name, op, inputs, outputs, opset,
                                      consts, attrs)
        test = os.path.join(root, "test_extra_" + name)
        data = os.path.join(test, "test_data_set_0")
        os.makedirs(data)
        onnx.save(model, os.path.join(test, "model.onnx"))
        for i, (key, value) in enumerate(feeds.items()):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, key).SerializeToString())
        for i, value in enumerate(results):
            with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(value),
                                                f"y{i}").SerializeToString())
    print(f"wrote {len(CASES)} tests to {root}")


if __name__ == "__main__":
    main()
