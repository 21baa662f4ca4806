#!/usr/bin/python3
"""Writes testdata/fixtures/half/conv_bf16.json: torch.nn.functional.conv2d
on bfloat16 CPU tensors (x, w, bias all bfloat16) and its gradients for a
given bfloat16 output gradient, over shapes with stride, padding, dilation
and groups. Values are bfloat16 bits (ints). Run from the repository root:

    /usr/bin/python3 testdata/gen_conv_bf16_fixtures.py
"""

import json
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "half", "conv_bf16.json")


def bits(t):
    return (t.detach().contiguous().view(torch.int16).flatten().int() & 0xFFFF).tolist()


def main():
    g = torch.Generator().manual_seed(14)
    cases = []
    # n, c, h, w, o, k, stride, padding, dilation, groups, bias
    for n, c, h, w, o, k, s, p, d, gr, bias in [
        (2, 3, 9, 11, 5, 3, 1, 1, 1, 1, True),
        (1, 8, 10, 10, 16, 3, 1, 0, 1, 1, False),
        (2, 5, 11, 13, 17, 3, 2, 1, 1, 1, True),
        (2, 4, 14, 14, 6, 3, 1, 2, 2, 1, True),
        (2, 6, 10, 9, 9, 3, 1, 1, 1, 3, True),
        (1, 3, 17, 17, 8, 7, 2, 3, 1, 1, True),
        (2, 33, 4, 4, 30, 1, 1, 0, 1, 1, True),
        (1, 40, 6, 6, 24, 3, 1, 1, 1, 1, False),
        # weight gradients on the bfloat16 GEMM (16+ channels per group)
        (3, 32, 14, 14, 64, 3, 1, 1, 1, 1, True),
        (2, 32, 9, 9, 20, 3, 2, 1, 1, 1, True),
    ]:
        x = (torch.randn(n, c, h, w, generator=g) * 2).bfloat16().requires_grad_()
        wt = (torch.randn(o, c // gr, k, k, generator=g) / (c // gr * k * k) ** 0.5).bfloat16().requires_grad_()
        b = torch.randn(o, generator=g).bfloat16().requires_grad_() if bias else None
        y = torch.nn.functional.conv2d(x, wt, b, s, p, d, gr)
        gy = torch.randn(y.shape, generator=g).bfloat16()
        y.backward(gy)
        cases.append({"shape": [n, c, h, w], "wshape": list(wt.shape), "stride": s, "padding": p, "dilation": d, "groups": gr,
                      "x": bits(x), "w": bits(wt), "b": bits(b) if bias else None, "out": bits(y), "oshape": list(y.shape),
                      "gout": bits(gy), "gx": bits(x.grad), "gw": bits(wt.grad), "gb": bits(b.grad) if bias else None})
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
