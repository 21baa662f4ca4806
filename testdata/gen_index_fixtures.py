"""Generate PyTorch reference outputs and gradients for ember's indexing
ops (index_select, advanced indexing with index tensors, masked_select,
flip). Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_index_fixtures.py
Writes testdata/fixtures/grad/grad_index.json in gen_grad_fixtures.py's
format (params.op names the op; masks are stored as 0/1 integers).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_grad_fixtures as g  # noqa: E402


def main():
    torch.manual_seed(18)
    x = g.randn(4, 3, 2)
    cases = [
        g.case({"op": "index_select", "dim": 0}, {"x": x, "i": torch.tensor([2, 0, 2])},
               lambda x, i: x.index_select(0, i)),
        g.case({"op": "index_select", "dim": 1}, {"x": x, "i": torch.tensor([2, 1, 1, 0])},
               lambda x, i: x.index_select(1, i)),
        g.case({"op": "index"}, {"x": x, "i": torch.tensor([[3, 0], [1, 3]])},
               lambda x, i: x[i]),
        g.case({"op": "index"}, {"x": x, "i": torch.tensor([0, 2, 3]), "j": torch.tensor([[1], [2]])},
               lambda x, i, j: x[i, j]),
        g.case({"op": "index"}, {"x": x, "i": torch.tensor([-1, 0]), "j": torch.tensor([2, -3]), "k": torch.tensor([1, 0])},
               lambda x, i, j, k: x[i, j, k]),
        g.case({"op": "masked_select"}, {"x": x, "m": (g.randn(4, 3, 2) > 0).long()},
               lambda x, m: x.masked_select(m != 0)),
        g.case({"op": "masked_select"}, {"x": x, "m": (g.randn(3, 1) > 0).long()},
               lambda x, m: x.masked_select(m != 0)),
        g.case({"op": "masked_select"}, {"x": x, "m": torch.zeros(2, dtype=torch.long)},
               lambda x, m: x.masked_select(m != 0)),
        g.case({"op": "flip", "dims": [0]}, {"x": x}, lambda x: x.flip(0)),
        g.case({"op": "flip", "dims": [2, -2]}, {"x": x}, lambda x: x.flip(2, -2)),
        g.case({"op": "flip", "dims": [0, 1, 2]}, {"x": x.transpose(0, 2)}, lambda x: x.flip(0, 1, 2)),
    ]
    os.makedirs(g.OUT, exist_ok=True)
    g.write("index", cases)


if __name__ == "__main__":
    main()
