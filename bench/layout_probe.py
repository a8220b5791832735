"""ResNet-50 (torchvision, random weights) with BatchNorm folded into the
convolutions (cgc's form: a cuDNN convolution and its bias, then
elementwise kernels), captured in one torch.cuda.graph and replayed: NCHW
against channels_last, f32 data with TF32 and bf16 data, batch 1 and 8.
CUDA events around each replay, median of 200 (cudnn.benchmark on).

GPU machine: python3 bench/layout_probe.py  (writes $OUT/layout_probe.json)
docs/kernels.md ("Channels-last convolutions") has the H100 figures.
"""
import json
import os

import torch
import torchvision
from torch.nn.utils.fusion import fuse_conv_bn_eval


def fold_batch_norms(module):
    """Folds each BatchNorm2d into the convolution before it (ResNet's
    convN/bnN pairs and downsample[0]/[1]) and replaces it by Identity."""
    for child in module.children():
        fold_batch_norms(child)
    for name, child in list(module.named_children()):
        if isinstance(child, torch.nn.Conv2d) and "conv" in name:
            bn = getattr(module, name.replace("conv", "bn"), None)
            if isinstance(bn, torch.nn.BatchNorm2d):
                setattr(module, name, fuse_conv_bn_eval(child, bn))
                setattr(module, name.replace("conv", "bn"), torch.nn.Identity())
        if name == "downsample" and isinstance(child, torch.nn.Sequential):
            child[0] = fuse_conv_bn_eval(child[0], child[1])
            child[1] = torch.nn.Identity()


def median_replay_us(graph, iters=200):
    for _ in range(20):
        graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    times = []
    for _ in range(iters):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return sorted(times)[len(times) // 2]


def captured(model, x):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model(x)
    return graph


def main():
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    results = {}
    for precision, dtype in (("tf32", torch.float32), ("bf16", torch.bfloat16)):
        for layout, fmt in (("nchw", torch.contiguous_format),
                            ("nhwc", torch.channels_last)):
            for batch in (1, 8):
                model = torchvision.models.resnet50().eval()
                fold_batch_norms(model)
                assert not any(isinstance(m, torch.nn.BatchNorm2d)
                               for m in model.modules())
                model = model.cuda().to(dtype).to(memory_format=fmt)
                x = torch.randn(batch, 3, 224, 224, device="cuda",
                                dtype=dtype).to(memory_format=fmt)
                with torch.no_grad():
                    us = median_replay_us(captured(model, x))
                key = "%s %s b%d" % (precision, layout, batch)
                results[key] = round(us, 1)
                print(key, results[key], flush=True)
    with open(os.path.join(os.environ.get("OUT", "/tmp"),
                           "layout_probe.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
