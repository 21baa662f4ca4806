#!/usr/bin/python3
"""Writes testdata/fixtures/half/maxpool_bf16.json: torch.nn.functional.max_pool2d
on bfloat16 CPU tensors (values in few levels, so that windows tie, with
infinities; no -0, whose ties with +0 ember
resolves to +0 and PyTorch to the first) over kernel, stride and padding choices, ResNet's 3×3 stride 2
padding 1 among them, the input's gradient of the output's sum (which
windows pick which element: the indices) and of a random output gradient
gy (halves and -0, whose sums are exact). Values are bfloat16 bits
(ints). Run from the
repository root:

    /usr/bin/python3 testdata/gen_pool_bf16_fixtures.py
"""

import json
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "half", "maxpool_bf16.json")


def bits(t):
    return (t.detach().contiguous().view(torch.int16).flatten().int() & 0xFFFF).tolist()


def main():
    g = torch.Generator().manual_seed(15)
    g2 = torch.Generator().manual_seed(16)  # the output gradients
    cases = []
    # n, c, h, w, kernel, stride, padding
    for n, c, h, w, k, s, p in [
        (2, 3, 37, 40, (3, 3), (2, 2), (1, 1)),
        (1, 2, 112, 112, (3, 3), (2, 2), (1, 1)),
        (2, 3, 28, 28, (2, 2), (2, 2), (0, 0)),
        (2, 2, 19, 45, (3, 3), (1, 1), (1, 1)),
        (1, 3, 17, 50, (2, 3), (1, 2), (1, 0)),
        (2, 2, 20, 61, (3, 3), (3, 3), (0, 1)),
        (1, 2, 9, 70, (1, 4), (2, 2), (0, 2)),
    ]:
        # + 0.0 clears -0: PyTorch keeps the first of tied ±0, ember +0
        x = (torch.randn(n, c, h, w, generator=g) * 3).round() / 2 + 0.0
        x[torch.rand(x.shape, generator=g) < 0.01] = float("inf")
        x[torch.rand(x.shape, generator=g) < 0.01] = float("-inf")
        x = x.bfloat16().requires_grad_()
        y = torch.nn.functional.max_pool2d(x, k, s, p)
        # the gradient of the sum: how many windows pick each element
        y.sum().backward(retain_graph=True)
        grad = bits(x.grad)
        # and of a random output gradient in halves, with -0 (sums exact)
        x.grad = None
        gy = (torch.randn(y.shape, generator=g2) * 3).round() / 2
        gy[torch.rand(gy.shape, generator=g2) < 0.05] = -0.0
        gy = gy.bfloat16()
        y.backward(gy)
        cases.append({"shape": [n, c, h, w], "kernel": list(k), "stride": list(s), "padding": list(p),
                      "x": bits(x), "out": bits(y), "oshape": list(y.shape), "grad": grad,
                      "gy": bits(gy), "gx": bits(x.grad)})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
