# Exports the models of onnx's round-trip tests with torch.onnx.export
# (PyTorch 1.13, no network: random weights) and writes, next to each
# MODEL.onnx, MODEL.input.npy and PyTorch's own output MODEL.output.npy.
#
#   /usr/bin/python3 onnx/testdata/export.py OUTDIR [small|big|all]
#
# small: an nn.TransformerEncoderLayer (opsets 13 and 17) and a GPT-2-style
# decoder block (causal mask, tanh GELU, tied embedding; fixed and symbolic
# dims), recurrent layers with a scripted loop (LSTM, GRU, RNN, Loop, If)
# and a scripted list (sequence ops), committed in onnx/testdata; big: torchvision's ResNet-18 and MobileNetV2 (made by the
# tests in a temporary folder, 14 MB and 45 MB).
import math
import os
import sys
from typing import List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

out = sys.argv[1]
which = sys.argv[2] if len(sys.argv) > 2 else "all"
os.makedirs(out, exist_ok=True)


def export(name, model, x, opset, **kw):
    """Exports model at opset and saves its input and PyTorch's output."""
    model.eval()
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, opset_version=opset, input_names=["input"],
                      output_names=["output"], do_constant_folding=True, **kw)
    np.save(os.path.join(out, name + ".input.npy"), x.numpy())
    np.save(os.path.join(out, name + ".output.npy"), y.numpy())


def randomize_bn(model):
    # random running statistics and affine parameters, so that folding or
    # mis-ordering them would show
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)


class GPT2Block(nn.Module):
    """A GPT-2-style decoder: token and position embeddings, causal
    self-attention (masked_fill with a triangular mask), tanh GELU MLP,
    pre-LayerNorm, tied output projection."""

    def __init__(self, vocab=97, d=32, heads=4, ctx=16, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.h = nn.ModuleList()
        for _ in range(layers):
            self.h.append(nn.ModuleDict(dict(ln1=nn.LayerNorm(d), attn=nn.Linear(d, 3 * d), proj=nn.Linear(d, d),
                                             ln2=nn.LayerNorm(d), fc=nn.Linear(d, 4 * d), out=nn.Linear(4 * d, d))))
        self.lnf = nn.LayerNorm(d)
        self.heads = heads
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

    def forward(self, idx):
        b, t = idx.shape
        pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.h:
            h = blk["ln1"](x)
            q, k, v = blk["attn"](h).split(x.size(-1), dim=2)
            hs = x.size(-1) // self.heads
            q = q.view(b, t, self.heads, hs).transpose(1, 2)
            k = k.view(b, t, self.heads, hs).transpose(1, 2)
            v = v.view(b, t, self.heads, hs).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, x.size(-1))
            x = x + blk["proj"](y)
            x = x + blk["out"](F.gelu(blk["fc"](blk["ln2"](x)), approximate="tanh"))
        return self.lnf(x) @ self.wte.weight.t()


@torch.jit.script
def decay(x: torch.Tensor) -> torch.Tensor:
    """A scripted loop over the time axis with a data-dependent branch
    (exported as Loop and If)."""
    acc = torch.zeros_like(x[0])
    for i in range(x.size(0)):
        acc = acc * 0.5 + x[i]
        if acc.sum() > 0:
            acc = acc - 0.25
    return acc


@torch.jit.script
def running_max(x: torch.Tensor) -> torch.Tensor:
    """Builds a list in a scripted loop over the chunks of x and stacks it
    (exported as SplitToSequence, SequenceLength, SequenceAt, Loop with
    SequenceInsert, and ConcatFromSequence)."""
    chunks = x.split(2, dim=0)
    outs: List[torch.Tensor] = []
    m = chunks[0].max(dim=0)[0]
    for i in range(len(chunks)):
        m = torch.maximum(m, chunks[i].max(dim=0)[0])
        outs.append(m)
    return torch.stack(outs, dim=1)


class Lists(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return running_max(self.lin(x))


class Recurrent(nn.Module):
    """A 2-layer bidirectional LSTM, a GRU (exported with
    linear_before_reset=1), a ReLU RNN, then decay's scripted loop."""

    def __init__(self, d=5, h=6):
        super().__init__()
        self.lstm = nn.LSTM(d, h, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(2 * h, h, bidirectional=True)
        self.rnn = nn.RNN(2 * h, h, nonlinearity="relu")

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        y, hn = self.rnn(y)
        return decay(y) + hn[0]


torch.manual_seed(0)
if which in ("small", "all"):
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
    x = torch.randn(2, 7, 32)
    export("transformer_layer_op17", layer, x, 17)
    export("transformer_layer_op13", layer, x, 13)
    gpt = GPT2Block()
    export("gpt2_block", gpt, torch.randint(0, 97, (2, 11)), 14)
    # symbolic batch and sequence dims: the shape arithmetic runs at Run time
    export("gpt2_block_dynamic", gpt, torch.randint(0, 97, (3, 9)), 14,
           dynamic_axes={"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}})
    torch.manual_seed(1)
    # dynamic time axis: the Loop's trip count comes from Shape at run time
    export("recurrent_loop", Recurrent(), torch.randn(7, 3, 5), 14, dynamic_axes={"input": {0: "time"}})
    export("scripted_lists", Lists(), torch.randn(9, 4), 14, dynamic_axes={"input": {0: "n"}})
if which in ("big", "all"):
    import torchvision
    m = torchvision.models.resnet18(weights=None)
    randomize_bn(m)
    export("resnet18", m, torch.randn(1, 3, 48, 48), 13)
    m = torchvision.models.mobilenet_v2(weights=None)
    randomize_bn(m)
    nn.init.normal_(m.classifier[1].weight, std=0.5)  # torchvision's 0.01 makes tiny logits
    export("mobilenet_v2", m, torch.randn(1, 3, 48, 48), 13)
