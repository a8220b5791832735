"""The benchmark's models, as PyTorch code, and their fixed inputs.

Every model is built on the CPU under a fixed seed with PyTorch's default
initialization; its floating-point parameters and buffers are then rounded
to bfloat16-representable float32 values. The arithmetic everywhere stays
fp32: the rounding only makes the weights compress about 2x, which the
device tool's transfer limits need (exported ONNX back, packages there).

    MLP       8 x (Linear 512 -> GELU(erf) -> LayerNorm, + residual), batch 1
    GPT       2 pre-LN decoder layers, d=256, 4 heads, 32 tokens, causal mask,
              GELU(tanh), vocab 1024, untied LM head; batch 1
    BERT      4 post-LN encoder layers, d=384, 6 heads, FFN 1536, 128 tokens,
              GELU(erf), vocab 1024; batch 1 and 8
    SqueezeNet 1.1, MobileNetV2, ResNet-50 (torchvision, random weights);
              batch 1 and 8
    ViT       torchvision VisionTransformer, 224x224 image, 16x16 patches
              (196 + 1 tokens), 4 pre-LN encoder layers, d=384, 6 heads,
              MLP 1536, 1000 classes (ViT-S/16's width at a third of its
              depth: BERT's layer shapes on an image model); batch 1 and 8

Attention in GPT and BERT is written out (matmul, scale, mask, softmax,
matmul) as GPT-2 / BERT reference code does, not
F.scaled_dot_product_attention: the exported ONNX and all PyTorch peers then
compute the same graph. The ViT is torchvision's code as it stands: its
nn.MultiheadAttention takes PyTorch's fused paths (scaled_dot_product_attention,
flash/memory-efficient kernels where the precision allows) in the PyTorch
peers, and exports as plain MatMul/Softmax ONNX; that is what a user of
the stock model gets from each side.

Needs torch (and torchvision for the CNNs) only where a model is built;
`SPECS`, `make_inputs` and the names import with numpy alone.
"""

import hashlib
import math

import numpy as np

SEED = 20261129

# name -> (family, batch, inputs: [(name, dtype, shape)], output names)
SPECS = {
    "mlp_b1": ("mlp", 1, [("x", "float32", (1, 512))], ["y"]),
    "gpt_b1": ("gpt", 1, [("input_ids", "int64", (1, 32))], ["logits"]),
    "bert_b1": ("bert", 1, [("input_ids", "int64", (1, 128))], ["hidden"]),
    "bert_b8": ("bert", 8, [("input_ids", "int64", (8, 128))], ["hidden"]),
    "squeezenet_b1": ("squeezenet", 1,
                      [("image", "float32", (1, 3, 224, 224))], ["logits"]),
    "squeezenet_b8": ("squeezenet", 8,
                      [("image", "float32", (8, 3, 224, 224))], ["logits"]),
    "mobilenet_b1": ("mobilenet", 1,
                     [("image", "float32", (1, 3, 224, 224))], ["logits"]),
    "mobilenet_b8": ("mobilenet", 8,
                     [("image", "float32", (8, 3, 224, 224))], ["logits"]),
    "resnet50_b1": ("resnet50", 1,
                    [("image", "float32", (1, 3, 224, 224))], ["logits"]),
    "resnet50_b8": ("resnet50", 8,
                    [("image", "float32", (8, 3, 224, 224))], ["logits"]),
    "vit_b1": ("vit", 1, [("image", "float32", (1, 3, 224, 224))], ["logits"]),
    "vit_b8": ("vit", 8, [("image", "float32", (8, 3, 224, 224))], ["logits"]),
}

FAMILIES = ["mlp", "gpt", "bert", "squeezenet", "mobilenet", "resnet50",
            "vit"]

# Families exported by torch's dynamo exporter (torch.export + onnxscript,
# PyTorch's default exporter since 2.9) instead of the TorchScript one. The
# TorchScript export of torchvision's nn.MultiheadAttention computes Slice
# bounds with Mod/Reshape of constants, which cgc does not fold ("must be a
# constant"); the dynamo exporter's graph has plain MatMul/Softmax there.
DYNAMO_EXPORT = ("vit",)

# Families whose models are torchvision's code.
TORCHVISION = ("squeezenet", "mobilenet", "resnet50", "vit")

DESCRIPTIONS = {
    "mlp": "MLP 8x512 (GELU, LayerNorm, residual)",
    "gpt": "GPT 2 layers, d=256, 4 heads, 32 tokens",
    "bert": "BERT 4 layers, d=384, 6 heads, 128 tokens",
    "squeezenet": "SqueezeNet 1.1",
    "mobilenet": "MobileNetV2",
    "resnet50": "ResNet-50",
    "vit": "ViT 4 layers, d=384, 6 heads, 197 tokens",
}

VOCAB = 1024


def select(models_arg=None, families_arg=None):
    """The model names picked by --models and --families (comma-separated;
    both given: models of those families), in SPECS order. Unknown names
    are a ValueError."""
    names = list(SPECS)
    if models_arg:
        wanted = _wanted(models_arg, SPECS, "model(s)")
        names = [n for n in names if n in wanted]
    if families_arg:
        wanted = _wanted(families_arg, FAMILIES, "famil(ies)")
        names = [n for n in names if SPECS[n][0] in wanted]
    return names


def _wanted(arg, known, what):
    """The comma-separated names of `arg`; a ValueError naming the unknown
    ones and `known` if any is not in `known`."""
    wanted = [n for n in arg.split(",") if n]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError("unknown %s %s; known: %s"
                         % (what, ",".join(unknown), ",".join(known)))
    return wanted


def make_inputs(name, seed=0):
    """The fixed inputs of a model (seed 0) or fresh ones (another seed):
    {input name: numpy array}. Same values on every machine (numpy PCG64)."""
    family, _, inputs, _ = SPECS[name]
    rng = np.random.default_rng([SEED, FAMILIES.index(family),
                                 SPECS[name][1], seed])
    feeds = {}
    for input_name, dtype, shape in inputs:
        if dtype == "int64":
            feeds[input_name] = rng.integers(0, VOCAB, size=shape,
                                             dtype=np.int64)
        else:
            feeds[input_name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def array_digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- torch --
def _torch_modules():
    import torch
    from torch import nn

    class MLPBlock(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.act = nn.GELU()
            self.ln = nn.LayerNorm(d)

        def forward(self, x):
            return x + self.ln(self.act(self.fc(x)))

    class MLP(nn.Module):
        def __init__(self, d=512, layers=8):
            super().__init__()
            self.blocks = nn.Sequential(*[MLPBlock(d) for _ in range(layers)])

        def forward(self, x):
            return self.blocks(x)

    class SelfAttention(nn.Module):
        def __init__(self, d, heads, causal, seq):
            super().__init__()
            self.heads, self.seq, self.d = heads, seq, d
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.causal = causal
            if causal:
                self.register_buffer(
                    "keep", torch.tril(torch.ones(seq, seq, dtype=torch.bool)),
                    persistent=False)

        def forward(self, x):
            # Sizes are module constants (batch is -1), not x.shape, so the
            # exported graph has constant Reshape shapes, no Shape chains.
            t, c = self.seq, self.d
            hd = c // self.heads
            q, k, v = self.qkv(x).split(c, dim=2)
            q = q.reshape(-1, t, self.heads, hd).transpose(1, 2)
            k = k.reshape(-1, t, self.heads, hd).transpose(1, 2)
            v = v.reshape(-1, t, self.heads, hd).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            if self.causal:
                att = att.masked_fill(~self.keep, float("-inf"))
            att = att.softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(-1, t, c)
            return self.proj(y)

    class FeedForward(nn.Module):
        def __init__(self, d, hidden, approximate):
            super().__init__()
            self.fc1 = nn.Linear(d, hidden)
            self.act = nn.GELU(approximate=approximate)
            self.fc2 = nn.Linear(hidden, d)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class GPTBlock(nn.Module):  # pre-LN
        def __init__(self, d, heads, seq):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = SelfAttention(d, heads, True, seq)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = FeedForward(d, 4 * d, "tanh")

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, d=256, heads=4, layers=2, seq=32, vocab=VOCAB):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Parameter(torch.randn(seq, d) * 0.02)
            self.blocks = nn.Sequential(
                *[GPTBlock(d, heads, seq) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)

        def forward(self, input_ids):  # input_ids: [batch, seq]
            x = self.wte(input_ids) + self.wpe
            return self.lm_head(self.ln_f(self.blocks(x)))

    class BertBlock(nn.Module):  # post-LN
        def __init__(self, d, heads, seq):
            super().__init__()
            self.attn = SelfAttention(d, heads, False, seq)
            self.ln1 = nn.LayerNorm(d)
            self.ffn = FeedForward(d, 4 * d, "none")
            self.ln2 = nn.LayerNorm(d)

        def forward(self, x):
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.ffn(x))

    class Bert(nn.Module):
        def __init__(self, d=384, heads=6, layers=4, seq=128, vocab=VOCAB):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Parameter(torch.randn(seq, d) * 0.02)
            self.ln = nn.LayerNorm(d)
            self.blocks = nn.Sequential(
                *[BertBlock(d, heads, seq) for _ in range(layers)])

        def forward(self, input_ids):  # input_ids: [batch, seq]
            x = self.ln(self.wte(input_ids) + self.wpe)
            return self.blocks(x)

    return MLP, GPT, Bert


def _torchvision_model(family):
    import torchvision
    tv = torchvision.models
    if family == "squeezenet":
        return tv.squeezenet1_1(weights=None)
    if family == "mobilenet":
        return tv.mobilenet_v2(weights=None)
    if family == "resnet50":
        return tv.resnet50(weights=None)
    # ViT-S/16's width (d=384, 6 heads, MLP 1536, as BERT here) with 4
    # layers instead of 12: vit_b_16 (86M parameters, 330 MB of fp32
    # weights) would not fit the device tool's transfers.
    vit = tv.vision_transformer.VisionTransformer(
        image_size=224, patch_size=16, num_layers=4, num_heads=6,
        hidden_dim=384, mlp_dim=1536, num_classes=1000)
    # torchvision zeroes the classifier (a fine-tuning habit): the logits
    # would be all zero, and so would every error measured on them.
    vit.heads.head.reset_parameters()
    return vit


def build_family(family):
    """The torch model of a family (eval mode, CPU, fp32), deterministic."""
    import torch
    torch.manual_seed(SEED + FAMILIES.index(family))
    if family in TORCHVISION:
        model = _torchvision_model(family)
    else:
        MLP, GPT, Bert = _torch_modules()
        model = {"mlp": MLP, "gpt": GPT, "bert": Bert}[family]()
    model.eval()
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.to(torch.bfloat16).to(torch.float32))
    return model


def state_digest(model):
    """A digest of the model's weights (state_dict order), to prove that the
    benchmark runs the weights that were exported."""
    return array_digest(v.detach().cpu().numpy()
                        for v in model.state_dict().values())
