#!/usr/bin/python3
"""Writes testdata/nn/repr.json: PyTorch's repr of modules that ember's nn
builds the same way (nn/repr_test.go prints ember's and compares), and
testdata/nn/repr_transformer.json, the same for the attention and
transformer modules (nn/transformer_test.go).

Run with /usr/bin/python3 (PyTorch 1.13, CPU) from the repository root:

    /usr/bin/python3 testdata/gen_repr_fixtures.py
"""

import json
import os

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.downsample = nn.Sequential(nn.Conv2d(4, 8, 1, 2, bias=False), nn.BatchNorm2d(8))


class RMSNorm(nn.Module):
    """Llama's RMSNorm with PyTorch 2.4's nn.RMSNorm repr (PyTorch 1.13 has
    no nn.RMSNorm)."""

    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def extra_repr(self):
        return "(%d,), eps=%s, elementwise_affine=True" % (self.weight.shape[0], self.eps)


def transformer_cases():
    enc = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.2, activation="gelu",
                                     layer_norm_eps=1e-6, batch_first=True, norm_first=True)
    dec = nn.TransformerDecoderLayer(8, 2, dim_feedforward=32)
    return {
        "mha": nn.MultiheadAttention(8, 2),
        "mha_kv": nn.MultiheadAttention(8, 2, dropout=0.1, bias=False, kdim=4, vdim=6, batch_first=True),
        "encoder": nn.TransformerEncoder(enc, 2, norm=nn.LayerNorm(8)),
        "decoder": nn.TransformerDecoder(dec, 1),
        "rmsnorm": nn.Sequential(RMSNorm(8, 1e-6), RMSNorm(4, 1e-5)),
    }


def write(name, cases):
    out = {k: repr(v) for k, v in cases.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", name)
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    cases = {
        "linear": nn.Sequential(nn.Linear(3, 1)),
        "cnn": nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10)),
        "misc": nn.Sequential(
            nn.Embedding(10, 3), nn.LayerNorm(3), nn.Dropout(0.25), nn.LeakyReLU(0.2), nn.GELU(),
            nn.Sequential(nn.Conv2d(4, 8, 3, dilation=2, groups=2, bias=False), nn.AvgPool2d(3, 2, 1)),
            nn.BatchNorm1d(6), nn.AdaptiveAvgPool2d((1, 1)), nn.Sigmoid(), nn.Tanh(), nn.Linear(4, 2, bias=False)),
        "block": Block(),
    }
    write("repr.json", cases)
    write("repr_transformer.json", transformer_cases())


if __name__ == "__main__":
    main()
