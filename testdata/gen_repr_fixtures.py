#!/usr/bin/python3
"""Writes testdata/nn/repr.json: PyTorch's repr of modules that ember's nn
builds the same way (nn/repr_test.go prints ember's and compares).

Run with /usr/bin/python3 (PyTorch 1.13, CPU) from the repository root:

    /usr/bin/python3 testdata/gen_repr_fixtures.py
"""

import json
import os

import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.downsample = nn.Sequential(nn.Conv2d(4, 8, 1, 2, bias=False), nn.BatchNorm2d(8))


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
    out = {k: repr(v) for k, v in cases.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "repr.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
