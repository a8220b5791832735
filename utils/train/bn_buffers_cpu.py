"""ResNet-18's BatchNorm buffers after K training steps: cgc-interp against
PyTorch on the CPU (issue 16; no GPU needed). Three steps, each run by
the interpreter that has what it needs:

  python  bn_buffers_cpu.py inits MODEL.onnx DIR    # needs onnx
  python3 bn_buffers_cpu.py torch DIR [K]           # needs torch, torchvision
  cgc-interp MODEL.onnx --train --loss=cross_entropy \\
      --optimizer=sgd:lr=0.01,momentum=0.9 --steps K --inputs DIR/batches \\
      --state-out DIR/state
  python  bn_buffers_cpu.py compare DIR

MODEL is utils/train/export_public_models.py's resnet18.onnx. `torch`
loads its initializers into torchvision's ResNet-18 (10 classes), draws K
seeded batches of 8 x 3 x 64 x 64 (written for cgc-interp), trains K SGD
steps (lr 0.01, momentum 0.9, cross entropy) and keeps the running means
and variances; `compare` prints their largest relative difference from
cgc's state, and how far torch moved them from their initial values.
"""
import os
import sys

import numpy as np


def inits(model, folder):
    import onnx
    from onnx import numpy_helper
    os.makedirs(folder, exist_ok=True)
    m = onnx.load(model)
    np.savez(os.path.join(folder, "inits.npz"),
             **{i.name: numpy_helper.to_array(i) for i in m.graph.initializer})


def train_torch(folder, steps):
    import torch
    import torchvision
    init = dict(np.load(os.path.join(folder, "inits.npz")))
    net = torchvision.models.resnet18(num_classes=10)
    state = net.state_dict()
    for name in state:
        if name in init:
            state[name] = torch.from_numpy(init[name].copy())
    net.load_state_dict(state)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    for k in range(steps):
        x = rng.standard_normal((8, 3, 64, 64), dtype=np.float32)
        label = rng.integers(0, 10, (8,)).astype(np.int64)
        batch = os.path.join(folder, "batches", "step_%d" % k)
        os.makedirs(batch, exist_ok=True)
        np.save(os.path.join(batch, "x.npy"), x)
        np.save(os.path.join(batch, "label.npy"), label)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(torch.from_numpy(x)),
                                                 torch.from_numpy(label))
        loss.backward()
        opt.step()
        print("torch step %d: loss = %.8f" % (k + 1, loss.item()))
    np.savez(os.path.join(folder, "torch_buffers.npz"),
             **{n: b.numpy() for n, b in net.state_dict().items()
                if "running_" in n})


def compare(folder):
    torch_buffers = np.load(os.path.join(folder, "torch_buffers.npz"))
    init = np.load(os.path.join(folder, "inits.npz"))
    worst = moved = 0.0
    for name in torch_buffers.files:
        want = torch_buffers[name]
        scale = np.abs(want).max()
        got = np.load(os.path.join(folder, "state", name + ".npy"))
        worst = max(worst, float(np.abs(got - want).max() / scale))
        moved = max(moved, float(np.abs(init[name] - want).max() / scale))
    print("%d buffers: cgc vs torch max rel diff %.2e (torch moved them "
          "%.2e from their initial values)" % (len(torch_buffers.files),
                                               worst, moved))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "inits":
        inits(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "torch":
        train_torch(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 1)
    elif len(sys.argv) == 3 and sys.argv[1] == "compare":
        compare(sys.argv[2])
    else:
        sys.exit(__doc__)
