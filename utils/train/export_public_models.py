"""Exports public model code for the training curves (issue 16), on the
GPU machine (torch, torchvision and transformers are there, MLIR is not):

  resnet18  torchvision's ResNet-18, 10 classes, batch 8 x 3 x 64 x 64,
            exported in training mode (BatchNormalization with the batch's
            statistics, as torch trains it);
  gpt2      transformers' GPT-2 (2 layers, width 128, 4 heads, vocabulary
            512, 32 positions), batch 4 x 32 tokens, its logits flattened
            to [tokens, vocabulary] for cross entropy;
  bert      transformers' BERT encoder (2 layers, width 128, 4 heads,
            vocabulary 512) with a 4-label classification head, batch 4 x
            32 tokens.

Each model is made after torch.manual_seed(0), so the run that trains it
(utils/train/public_curves.py) makes the same weights again; every
parameter then gets a little seeded noise, because the exporter merges
initializers of equal values (every LayerNorm's ones, every zero bias) into
one tensor, which would tie parameters that torch trains apart. Exported
with torch's TorchScript exporter (opset 17, no constant folding: the
initializers keep the parameters' names). Dropout is off in the configs
(cgc's steps have none). Files over 15 MB are split in parts NAME.onnx.K
(the device returns files of at most 16 MiB).

For the step's speed at other batch sizes, `--speed-batches 1,8,32` also
writes gpt2_bB.onnx and bert_bB.onnx: the same models with B sequences of
32 tokens (utils/train/public_curves.py --speed times them).

Usage: export_public_models.py OUTDIR [--speed-batches 1,8,32]
"""
import os
import sys

import torch

BATCH_IMAGES, BATCH_TOKENS, TOKENS, VOCAB = 8, 4, 32, 512
PART = 15 * 1000 * 1000


def resnet18(attention=None):
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet18(num_classes=10)


class FlatLogits(torch.nn.Module):
    """A language model's logits as [tokens, vocabulary]: the class dim
    second, as cross entropy takes it."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, ids):
        logits = self.lm(input_ids=ids).logits
        return logits.reshape(-1, logits.shape[-1])


class Classifier(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids).logits


def gpt2(attention="eager"):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=VOCAB,
                        n_positions=TOKENS, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0)
    config._attn_implementation = attention
    return FlatLogits(GPT2LMHeadModel(config))


def bert(attention="eager"):
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=2, hidden_size=128,
                        num_attention_heads=4, intermediate_size=512,
                        vocab_size=VOCAB, max_position_embeddings=TOKENS,
                        num_labels=4, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    config._attn_implementation = attention
    model = BertForSequenceClassification(config)
    # torch's Embedding gives its padding row (pad_token_id 0) no gradient;
    # the ONNX export is a plain Gather, which has no such row, so cgc
    # trains it. The module trains it too, or the two would train different
    # functions whenever a batch holds token 0 (the weights are the same:
    # the row is only skipped in the backward).
    model.bert.embeddings.word_embeddings.padding_idx = None
    return Classifier(model)


MODELS = {
    "resnet18": (resnet18, lambda: torch.randn(BATCH_IMAGES, 3, 64, 64),
                 torch.onnx.TrainingMode.TRAINING),
    "gpt2": (gpt2, lambda: token_batch(BATCH_TOKENS),
             torch.onnx.TrainingMode.EVAL),
    "bert": (bert, lambda: token_batch(BATCH_TOKENS),
             torch.onnx.TrainingMode.EVAL),
}


def distinct(model):
    """Seeded noise on every parameter (tied ones stay tied: one tensor)."""
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=generator))
    return model


def make_model(name, attention="eager"):
    """The seeded model; `attention` picks transformers' implementation
    (the exports use "eager"; the same weights come out with "sdpa")."""
    return distinct(MODELS[name][0](attention))


def token_batch(batch):
    return torch.randint(0, VOCAB, (batch, TOKENS))


def export(name, out, batch=None):
    """NAME.onnx, or NAME_bB.onnx with B sequences where `batch` is given."""
    _, sample, mode = MODELS[name]
    model = make_model(name)
    x = sample() if batch is None else token_batch(batch)
    if batch is not None:
        name = "%s_b%d" % (name, batch)
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17,
                      training=mode, do_constant_folding=False,
                      input_names=["x"], output_names=["y"])
    import onnx
    inits = len(onnx.load(path).graph.initializer)
    params = len(list(model.parameters()))
    print("%s: %d parameters, %d initializers" % (name, params, inits))
    data = open(path, "rb").read()
    if len(data) > PART:
        os.remove(path)
        for k in range(0, len(data), PART):
            with open("%s.%d" % (path, k // PART), "wb") as f:
                f.write(data[k:k + PART])
    print("%s: %d bytes" % (name, len(data)))


def main():
    out = sys.argv[1]
    speed_batches = []
    if len(sys.argv) == 4 and sys.argv[2] == "--speed-batches":
        speed_batches = [int(b) for b in sys.argv[3].split(",")]
    elif len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    os.makedirs(out, exist_ok=True)
    for name in MODELS:
        export(name, out)
    for batch in speed_batches:
        for name in ("gpt2", "bert"):
            export(name, out, batch)


if __name__ == "__main__":
    main()
