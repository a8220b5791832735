"""Writes a small ResNet-like ONNX model with seeded initializers (the
filters must be constants for --cgc-channels-last to reorder them):

  x -> Conv 7x7/2 (3 -> C) -> Relu -> MaxPool -> a bottleneck block
  (1x1, 3x3, 1x1 with a 1x1 downsample on the shortcut, Relu after each,
  the residual Add) -> GlobalAveragePool -> Flatten -> Gemm

With --batch-norm a BatchNormalization (seeded running statistics) follows
each convolution, as torch's dynamo exporter writes them.

Usage: make_conv_chain.py OUT.onnx [--channels C] [--size S] [--batch N]
                          [--batch-norm]
"""
import argparse

import numpy as np
from onnx import helper, numpy_helper

import image_model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--channels", type=int, default=8)
    p.add_argument("--size", type=int, default=16)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--batch-norm", action="store_true")
    a = p.parse_args()
    rng = np.random.default_rng(7)
    c, wide = a.channels, 2 * a.channels
    inits, nodes = [], []

    def weight(name, shape):
        fan_in = int(np.prod(shape[1:]))
        w = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, name))
        return name

    def bias(name, n):
        inits.append(numpy_helper.from_array(
            (0.1 * rng.standard_normal(n)).astype(np.float32), name))
        return name

    def conv(x, y, cin, cout, k, stride=1, pad=0):
        out = y + "_conv" if a.batch_norm else y
        nodes.append(helper.make_node(
            "Conv", [x, weight(y + "_w", [cout, cin, k, k]), bias(y + "_b", cout)],
            [out], strides=[stride, stride], pads=[pad] * 4, name=out))
        if a.batch_norm:
            stats = [(1 + 0.2 * rng.standard_normal(cout)), 0.1 * rng.standard_normal(cout),
                     0.1 * rng.standard_normal(cout), 0.5 + rng.random(cout)]
            names = []
            for part, values in zip(("scale", "beta", "mean", "var"), stats):
                inits.append(numpy_helper.from_array(values.astype(np.float32),
                                                     y + "_" + part))
                names.append(y + "_" + part)
            nodes.append(helper.make_node("BatchNormalization", [out] + names, [y],
                                          epsilon=1e-5, name=y))
        return y

    def relu(x, y):
        nodes.append(helper.make_node("Relu", [x], [y], name=y))
        return y

    h = relu(conv("x", "stem", 3, c, 7, 2, 3), "stem_relu")
    nodes.append(helper.make_node("MaxPool", [h], ["pool"], kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1], name="pool"))
    b1 = relu(conv("pool", "b1", c, c, 1), "b1_relu")
    b2 = relu(conv(b1, "b2", c, c, 3, 1, 1), "b2_relu")
    b3 = conv(b2, "b3", c, wide, 1)
    short = conv("pool", "down", c, wide, 1)
    nodes.append(helper.make_node("Add", [b3, short], ["sum"], name="sum"))
    out = relu("sum", "block")
    nodes.append(helper.make_node("GlobalAveragePool", [out], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat"))
    nodes.append(helper.make_node("Gemm", ["flat", weight("fc_w", [10, wide]),
                                           bias("fc_b", 10)], ["y"], transB=1,
                                  name="fc"))
    image_model.save(a.out, "conv_chain", nodes, inits, a.batch, a.size, "y")


if __name__ == "__main__":
    main()
