#!/usr/bin/env python3
"""Measures what the GPU's vendor libraries reach on the products the
reduced-precision work targets (issue 15), as the yardstick for cgc's own
tensor-core kernels: TFLOP/s of torch.matmul (cuBLAS) and of a ResNet-50
stage's convolutions (cuDNN) in fp32, tf32, fp16 and bf16, plus one large
square GEMM for the chip's reachable peak.

    python bench/tensor_core_rates.py [--out rates.json]

Each case runs 20 warm-up calls, then 200 calls between two CUDA events
(the mean, so launch gaps count for the small products, as they would in
a model). Runs on the GPU machine (torch with CUDA); the build machine has
no GPU.
"""

import argparse
import json

import torch
import torch.nn.functional as F

# BERT b8 of bench/models.py: 8 x 128 tokens, d = 384, FFN 1536.
GEMMS = {
    "bert_b8_qkv": (1024, 1152, 384),
    "bert_b8_out": (1024, 384, 384),
    "bert_b8_fc1": (1024, 1536, 384),
    "bert_b8_fc2": (1024, 384, 1536),
    "square_8192": (8192, 8192, 8192),
}
# One 3x3 conv of each ResNet-50 stage at batch 8, and the stem.
CONVS = {
    "resnet50_b8_stem": (8, 3, 224, 224, 64, 7, 2, 3),
    "resnet50_b8_conv2": (8, 64, 56, 56, 64, 3, 1, 1),
    "resnet50_b8_conv3": (8, 128, 28, 28, 128, 3, 1, 1),
    "resnet50_b8_conv4": (8, 256, 14, 14, 256, 3, 1, 1),
    "resnet50_b8_conv5": (8, 512, 7, 7, 512, 3, 1, 1),
}
PRECISIONS = ["fp32", "tf32", "fp16", "bf16"]
DTYPE = {"fp32": torch.float32, "tf32": torch.float32,
         "fp16": torch.float16, "bf16": torch.bfloat16}


def timed(fn, iters=200, warmup=20):
    """Mean seconds per call."""
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def set_precision(p):
    tf32 = p == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def gemm_rate(m, n, k, p):
    a = torch.randn(m, k, device="cuda", dtype=DTYPE[p])
    b = torch.randn(k, n, device="cuda", dtype=DTYPE[p])
    iters = 20 if m * n * k > 1e11 else 200
    t = timed(lambda: torch.matmul(a, b), iters=iters)
    return 2 * m * n * k / t / 1e12, t


def conv_rate(nb, c, h, w, co, ks, stride, pad, p):
    x = torch.randn(nb, c, h, w, device="cuda", dtype=DTYPE[p])
    wt = torch.randn(co, c, ks, ks, device="cuda", dtype=DTYPE[p])
    ho = (h + 2 * pad - ks) // stride + 1
    wo = (w + 2 * pad - ks) // stride + 1
    t = timed(lambda: F.conv2d(x, wt, stride=stride, padding=pad))
    return 2 * nb * co * ho * wo * c * ks * ks / t / 1e12, t


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    print("%s, torch %s" % (torch.cuda.get_device_name(), torch.__version__))
    print("%-20s %-5s %10s %10s" % ("case", "prec", "TFLOP/s", "us/call"))
    for name, shape in list(GEMMS.items()) + list(CONVS.items()):
        for p in PRECISIONS:
            set_precision(p)
            rate, t = (gemm_rate(*shape, p) if name in GEMMS
                       else conv_rate(*shape, p))
            rows.append({"case": name, "precision": p, "tflops": rate,
                         "us": t * 1e6})
            print("%-20s %-5s %10.1f %10.2f" % (name, p, rate, t * 1e6))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(),
                       "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
