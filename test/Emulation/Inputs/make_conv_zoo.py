"""Writes an ONNX model of the convolution patterns that CNNs other than
ResNet put in front of cuDNN, large enough that --cudnn=auto takes its
64-channel convolutions (seeded constant filters):

  x -> Conv 7x7/2 (3 -> 64) -> BatchNormalization -> Relu -> MaxPool
    -> grouped 3x3 (64 -> 64, 32 groups, ResNeXt) -> Relu
    -> two branches, 3x3 dilated 2 and 1x1 (64 -> 64 each), Concat (DenseNet,
       Inception) -> 1x1/2 without bias (128 -> 64)
    -> squeeze-and-excitation (GlobalAveragePool, 1x1 64 -> 16, Relu,
       1x1 16 -> 64, Sigmoid, Mul)
    -> AveragePool 2x2 -> 3x3 (64 -> 64) with padding 1 -> Add of the pooled
       input (a residual around a convolution) -> Clip (ReLU6)
    -> GlobalAveragePool -> Flatten -> Gemm (10 classes)

Usage: make_conv_zoo.py OUT.onnx [--batch N] [--size S]
"""
import argparse

import numpy as np
from onnx import helper, numpy_helper

import image_model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--size", type=int, default=96)
    a = p.parse_args()
    rng = np.random.default_rng(11)
    inits, nodes = [], []

    def const(name, values):
        inits.append(numpy_helper.from_array(values.astype(np.float32), name))
        return name

    def conv(x, y, cin, cout, k, stride=1, pad=0, groups=1, dilation=1,
             bias=True):
        fan_in = cin // groups * k * k
        inputs = [x, const(y + "_w", rng.standard_normal(
            (cout, cin // groups, k, k)) / np.sqrt(fan_in))]
        if bias:
            inputs.append(const(y + "_b", 0.1 * rng.standard_normal(cout)))
        nodes.append(helper.make_node(
            "Conv", inputs, [y], strides=[stride] * 2, pads=[pad] * 4,
            group=groups, dilations=[dilation] * 2, name=y))
        return y

    def node(op, inputs, y, **attrs):
        nodes.append(helper.make_node(op, inputs, [y], name=y, **attrs))
        return y

    t = conv("x", "stem", 3, 64, 7, stride=2, pad=3)
    stats = [1 + 0.2 * rng.standard_normal(64), 0.1 * rng.standard_normal(64),
             0.1 * rng.standard_normal(64), 0.5 + rng.random(64)]
    names = [const("bn_" + n, v) for n, v in zip(("scale", "beta", "mean", "var"), stats)]
    t = node("BatchNormalization", [t] + names, "bn", epsilon=1e-5)
    t = node("Relu", [t], "stem_relu")
    t = node("MaxPool", [t], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    t = node("Relu", [conv(t, "grouped", 64, 64, 3, pad=1, groups=32)], "grouped_relu")
    left = conv(t, "dilated", 64, 64, 3, pad=2, dilation=2)
    right = conv(t, "point", 64, 64, 1)
    t = node("Concat", [left, right], "concat", axis=1)
    t = conv(t, "reduce", 128, 64, 1, stride=2, bias=False)
    s = node("GlobalAveragePool", [t], "se_pool")
    s = node("Relu", [conv(s, "se_down", 64, 16, 1)], "se_relu")
    s = node("Sigmoid", [conv(s, "se_up", 16, 64, 1)], "se_gate")
    t = node("Mul", [t, s], "se_scale")
    p_ = node("AveragePool", [t], "avg", kernel_shape=[2, 2], strides=[2, 2])
    t = node("Add", [conv(p_, "body", 64, 64, 3, pad=1), p_], "residual")
    t = node("Clip", [t, const("lo", np.array(0.0)), const("hi", np.array(6.0))], "relu6")
    t = node("GlobalAveragePool", [t], "head_pool")
    t = node("Flatten", [t], "flat")
    node("Gemm", [t, const("fc_w", rng.standard_normal((10, 64)) / 8),
                  const("fc_b", 0.1 * rng.standard_normal(10))], "logits", transB=1)
    image_model.save(a.out, "conv_zoo", nodes, inits, a.batch, a.size, "logits")


if __name__ == "__main__":
    main()
