#!/usr/bin/env python3
"""Writes two small transformers in the form torch's ONNX exporter gives
public model code (opset 18, every norm and activation decomposed into
elementwise ops), for test/Emulation/transformer-zoo.test:

  decoder.onnx  a Llama-style decoder: token ids -> embedding, 2 layers of
                RMSNorm (Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul),
                rotary embeddings (Slice, Neg, Concat, Mul, Add), grouped
                K/V heads repeated with Unsqueeze/Expand/Reshape, a causal
                additive mask of float32's lowest value, Softmax, SwiGLU
                (Sigmoid, Mul); a final RMSNorm and an LM head -> logits.
  encoder.onnx  a BERT-style encoder: ids and an int64 padding mask ->
                embeddings + positions, LayerNormalization, 2 post-norm
                layers with the mask as (1 - m) * -10000 added to the
                scores, tanh-approximated GELU, a tanh pooler on the first
                token -> hidden states and the pooled vector.
  decoder_f16.onnx, decoder_bf16.onnx
                the decoder as model.half() and model.to(torch.bfloat16)
                export it: weights and activations in the 16-bit type, the
                norms and the softmax upcast to float32 and back (Cast), as
                transformers computes them.

    make_transformer_zoo.py OUTDIR [--batch B] [--seq S]

Weights are seeded random initializers (scaled like a trained model's:
activations stay of order 1); scalars are Constant nodes, as torch writes
them (a training step trains every float initializer by default)."""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


ONNX_TYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
              "bfloat16": TensorProto.BFLOAT16}


class Graph:
    """Nodes and initializers under unique names; `dtype` is the type of
    the weights and activations (float32, or a model.half() / bfloat16
    export's 16-bit type)."""

    def __init__(self, seed, dtype="float32"):
        self.nodes, self.inits = [], []
        self.rng = np.random.default_rng(seed)
        self.count = 0
        self.dtype = dtype

    def name(self, hint):
        self.count += 1
        return "%s_%d" % (hint, self.count)

    def const(self, value, hint="c"):
        """An initializer; float32 values in the model's type."""
        name = self.name(hint)
        value = np.asarray(value)
        if value.dtype == np.float32 and self.dtype != "float32":
            tensor = helper.make_tensor(name, ONNX_TYPES[self.dtype],
                                        value.shape, value.flatten().tolist())
        else:
            tensor = numpy_helper.from_array(value, name)
        self.inits.append(tensor)
        return name

    def weight(self, shape, hint="w", scale=None):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        return self.const(
            (self.rng.standard_normal(shape) * scale).astype(np.float32), hint)

    def to_float(self, x):
        """x in f32 (transformers upcasts norms and softmax)."""
        if self.dtype == "float32":
            return x
        return self.op("Cast", x, to=TensorProto.FLOAT)

    def from_float(self, x):
        if self.dtype == "float32":
            return x
        return self.op("Cast", x, to=ONNX_TYPES[self.dtype])

    def op(self, kind, *inputs, hint=None, **attrs):
        out = self.name(hint or kind.lower())
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def ints(self, values):
        return self.const(np.array(values, dtype=np.int64), "shape")

    def f32(self, value):
        """A float32 scalar whatever the model's type (inside f32 code)."""
        return self.scalar(value, TensorProto.FLOAT)

    def scalar(self, value, onnx_type=None):
        """A scalar as torch's exporter writes one: a Constant node, not an
        initializer (so a training step, which trains every float
        initializer by default, leaves exponents and epsilons alone)."""
        onnx_type = onnx_type or ONNX_TYPES[self.dtype]
        out = self.name("scalar")
        self.nodes.append(helper.make_node(
            "Constant", [], [out],
            value=helper.make_tensor(out + "_value", onnx_type, [],
                                     [float(value)])))
        return out


def rms_norm(g, x, dim):
    """torch's decomposition of LlamaRMSNorm (in f32, the weight applied in
    the model's type)."""
    x = g.to_float(x)
    squared = g.op("Pow", x, g.f32(2.0))
    mean = g.op("ReduceMean", squared, g.ints([-1]), keepdims=1)
    std = g.op("Sqrt", g.op("Add", mean, g.f32(1e-6)))
    normed = g.from_float(g.op("Mul", x, g.op("Reciprocal", std)))
    weight = np.ones(dim, np.float32) + \
        0.1 * g.rng.standard_normal(dim).astype(np.float32)
    return g.op("Mul", g.const(weight, "rms_weight"), normed)


def heads(g, x, batch, seq, count, head_dim):
    """[B, S, count * hd] -> [B, count, S, hd]."""
    shaped = g.op("Reshape", x, g.ints([batch, seq, count, head_dim]))
    return g.op("Transpose", shaped, perm=[0, 2, 1, 3])


def rotate(g, x, cos, sin, head_dim):
    """x * cos + rotate_half(x) * sin, rotate_half as transformers has it."""
    half = head_dim // 2
    first = g.op("Slice", x, g.ints([0]), g.ints([half]), g.ints([-1]))
    second = g.op("Slice", x, g.ints([half]), g.ints([head_dim]), g.ints([-1]))
    rotated = g.op("Concat", g.op("Neg", second), first, axis=-1)
    return g.op("Add", g.op("Mul", x, cos), g.op("Mul", rotated, sin))


def decoder(batch, seq, dtype="float32", vocab=96, dim=64, n_heads=4,
            kv_heads=2, ffn=128, layers=2):
    g = Graph(1, dtype)
    head_dim = dim // n_heads
    x = g.op("Gather", g.weight([vocab, dim], "embed", scale=1.0), "ids")
    inv = 1.0 / (10000 ** (np.arange(0, head_dim, 2) / head_dim))
    angles = np.outer(np.arange(seq), inv)
    angles = np.concatenate([angles, angles], axis=-1)
    cos = g.const(np.cos(angles).astype(np.float32), "cos")
    sin = g.const(np.sin(angles).astype(np.float32), "sin")
    # The lowest value of the scores' type: f32 where they are upcast.
    lowest = np.finfo(np.float32).min
    mask = g.name("mask")
    g.inits.append(numpy_helper.from_array(
        np.triu(np.full((seq, seq), lowest, np.float32), 1), mask))
    for _ in range(layers):
        h = rms_norm(g, x, dim)
        q = heads(g, g.op("MatMul", h, g.weight([dim, dim])), batch, seq,
                  n_heads, head_dim)
        k = heads(g, g.op("MatMul", h, g.weight([dim, kv_heads * head_dim])),
                  batch, seq, kv_heads, head_dim)
        v = heads(g, g.op("MatMul", h, g.weight([dim, kv_heads * head_dim])),
                  batch, seq, kv_heads, head_dim)
        q, k = rotate(g, q, cos, sin, head_dim), rotate(g, k, cos, sin, head_dim)
        rep = n_heads // kv_heads
        def repeat(t):
            wide = g.op("Expand", g.op("Unsqueeze", t, g.ints([2])),
                        g.ints([batch, kv_heads, rep, seq, head_dim]))
            return g.op("Reshape", wide,
                        g.ints([batch, n_heads, seq, head_dim]))
        k, v = repeat(k), repeat(v)
        scores = g.op("Mul", g.op("MatMul", q,
                                  g.op("Transpose", k, perm=[0, 1, 3, 2])),
                      g.scalar(1.0 / np.sqrt(head_dim)))
        probs = g.from_float(g.op("Softmax",
                                  g.op("Add", g.to_float(scores), mask),
                                  axis=-1))
        context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = g.op("Reshape", context, g.ints([batch, seq, dim]))
        x = g.op("Add", x, g.op("MatMul", context, g.weight([dim, dim])))
        h = rms_norm(g, x, dim)
        gate = g.op("MatMul", h, g.weight([dim, ffn]))
        up = g.op("MatMul", h, g.weight([dim, ffn]))
        act = g.op("Mul", g.op("Mul", gate, g.op("Sigmoid", gate)), up)
        x = g.op("Add", x, g.op("MatMul", act, g.weight([ffn, dim])))
    logits = g.op("MatMul", rms_norm(g, x, dim), g.weight([dim, vocab]),
                  hint="logits")
    g.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
    return g, [helper.make_tensor_value_info("ids", TensorProto.INT64,
                                             [batch, seq])], \
        [helper.make_tensor_value_info("logits", ONNX_TYPES[dtype],
                                       [batch, seq, vocab])]


def gelu_tanh(g, x):
    """0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    cube = g.op("Mul", g.op("Pow", x, g.scalar(3.0)),
                g.scalar(0.044715))
    inner = g.op("Mul", g.op("Add", x, cube),
                 g.scalar(np.sqrt(2 / np.pi)))
    one = g.op("Add", g.op("Tanh", inner), g.scalar(1.0))
    return g.op("Mul", g.op("Mul", x, g.scalar(0.5)), one)


def layer_norm(g, x, dim):
    return g.op("LayerNormalization", x,
                g.const(np.ones(dim, np.float32), "ln_scale"),
                g.const(np.zeros(dim, np.float32), "ln_bias"),
                axis=-1, epsilon=1e-12)


def encoder(batch, seq, vocab=80, dim=64, n_heads=4, ffn=128, layers=2):
    g = Graph(2)
    head_dim = dim // n_heads
    x = g.op("Add", g.op("Gather", g.weight([vocab, dim], "embed", 1.0), "ids"),
             g.weight([seq, dim], "positions", 1.0))
    x = layer_norm(g, x, dim)
    # 1 where a token is kept: any nonzero mask value (the emulator feeds
    # small integers, not only 0 and 1).
    kept = g.op("Cast", g.op("Unsqueeze", "attention_mask", g.ints([1, 2])),
                to=TensorProto.BOOL)
    keep = g.op("Cast", kept, to=TensorProto.FLOAT)
    bias = g.op("Mul", g.op("Sub", g.scalar(1.0), keep),
                g.scalar(-10000.0))
    for _ in range(layers):
        def proj(t, n, bias=True):
            product = g.op("MatMul", t, g.weight([dim, n]))
            if not bias:
                return product
            return g.op("Add", product, g.weight([n], "b", 0.02))
        # The key projection without a bias (as Whisper's): a key bias adds
        # the same to a query's every score, which the softmax ignores, so
        # its gradient is zero up to rounding, and a training step's check
        # of it (relative error) would compare noise.
        q, k, v = (heads(g, proj(x, dim, bias=kind != "k"), batch, seq,
                         n_heads, head_dim) for kind in "qkv")
        scores = g.op("Div", g.op("MatMul", q,
                                  g.op("Transpose", k, perm=[0, 1, 3, 2])),
                      g.scalar(np.sqrt(head_dim)))
        probs = g.op("Softmax", g.op("Add", scores, bias), axis=-1)
        context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = g.op("Reshape", context, g.ints([batch, seq, dim]))
        x = layer_norm(g, g.op("Add", proj(context, dim), x), dim)
        hidden = gelu_tanh(g, proj(x, ffn))
        down = g.op("Add", g.op("MatMul", hidden, g.weight([ffn, dim])),
                    g.weight([dim], "b", 0.02))
        x = layer_norm(g, g.op("Add", down, x), dim)
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    first = g.op("Gather", x, g.const(np.int64(0), "first"), axis=1)
    pooled = g.op("Tanh", g.op("Add", g.op("MatMul", first,
                                           g.weight([dim, dim])),
                               g.weight([dim], "b", 0.02)))
    g.nodes.append(helper.make_node("Identity", [pooled], ["pooled"]))
    inputs = [helper.make_tensor_value_info("ids", TensorProto.INT64,
                                            [batch, seq]),
              helper.make_tensor_value_info("attention_mask",
                                            TensorProto.INT64, [batch, seq])]
    outputs = [helper.make_tensor_value_info("hidden", TensorProto.FLOAT,
                                             [batch, seq, dim]),
               helper.make_tensor_value_info("pooled", TensorProto.FLOAT,
                                             [batch, dim])]
    return g, inputs, outputs


def save(path, name, built):
    g, inputs, outputs = built
    graph = helper.make_graph(g.nodes, name, inputs, outputs, g.inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=16)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    save(os.path.join(args.outdir, "decoder.onnx"), "decoder",
         decoder(args.batch, args.seq))
    # The decoder as model.half() and model.to(torch.bfloat16) export it.
    for dtype, suffix in (("float16", "f16"), ("bfloat16", "bf16")):
        save(os.path.join(args.outdir, "decoder_%s.onnx" % suffix),
             "decoder_" + suffix, decoder(args.batch, args.seq, dtype))
    save(os.path.join(args.outdir, "encoder.onnx"), "encoder",
         encoder(args.batch, args.seq))


if __name__ == "__main__":
    main()
