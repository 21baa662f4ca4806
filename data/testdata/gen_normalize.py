"""torchvision 0.14's Normalize on a [3, 16, 16] float32 image holding
k/255 for k = 0..255 in each channel, with ImageNet's mean and std
(normalize.json), for data.Normalize's float32 arithmetic.

    /usr/bin/python3 data/testdata/gen_normalize.py
"""
import json
import os

import torch
import torchvision.transforms.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
x = (torch.arange(256, dtype=torch.float32) / 255).reshape(1, 16, 16).repeat(3, 1, 1)
out = F.normalize(x, mean, std)
with open(os.path.join(HERE, "normalize.json"), "w") as f:
    # repr of a float32 widened to float64 is exact
    json.dump({"mean": mean, "std": std, "shape": list(out.shape), "out": [float(v) for v in out.reshape(-1).tolist()]}, f)
    f.write("\n")
