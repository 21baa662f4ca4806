"""Generate reference values for ember's ScaledDotProductAttention.

Run with /usr/bin/python3 (torch 1.13, which has no
scaled_dot_product_attention):
    /usr/bin/python3 testdata/gen_attention_fixtures.py
Writes testdata/fixtures/grad/grad_sdpa.json: a list of cases, each with
float64 q, k, v, the mask (kind "none", "bool" or "float", its shape and
data), causal, scale (null: 1/sqrt(E)), the output of PyTorch 2's
semantics computed explicitly in float64,
    softmax(q @ k^T * scale + mask) @ v
(a bool mask, and causal's torch.ones(L, S).tril(), become an additive
mask of 0 and -inf, as PyTorch 2's math path does), w, and the gradients of sum(out * w)
by torch.autograd. NaN (a fully masked row) is written as null.
"""
import json
import math
import os

import torch

torch.manual_seed(13)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "grad")


def flat(x):
    return [None if math.isnan(v) else v for v in x.detach().reshape(-1).tolist()]


def t(x):
    return {"shape": list(x.shape), "data": flat(x)}


def sdpa(q, k, v, mask, causal, scale):
    L, S = q.shape[-2], k.shape[-2]
    if scale is None:
        scale = 1 / math.sqrt(q.shape[-1])
    s = q @ k.transpose(-2, -1) * scale
    # as PyTorch 2's math path: a bool mask (and the causal one) becomes an
    # additive float mask, so the gradient of a fully masked row is NaN too
    if causal:
        mask = torch.ones(L, S, dtype=torch.bool).tril()
    if mask is not None and mask.dtype == torch.bool:
        mask = torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, float("-inf"))
    if mask is not None:
        s = s + mask
    return torch.softmax(s, dim=-1) @ v


def case(qs, ks, vs, mask=None, causal=False, scale=None):
    q = torch.randn(*qs, dtype=torch.float64, requires_grad=True)
    k = torch.randn(*ks, dtype=torch.float64, requires_grad=True)
    v = torch.randn(*vs, dtype=torch.float64, requires_grad=True)
    out = sdpa(q, k, v, None if causal else mask, causal, scale)
    w = torch.randn(out.shape, dtype=torch.float64)
    (out * w).sum().backward()
    if mask is None:
        m = {"kind": "none"}
    elif mask.dtype == torch.bool:
        m = {"kind": "bool", "shape": list(mask.shape), "data": [1.0 if b else 0.0 for b in mask.reshape(-1).tolist()]}
    else:
        m = {"kind": "float", "shape": list(mask.shape), "data": [None if math.isinf(v) else v for v in mask.reshape(-1).tolist()]}  # null: -inf
    return {
        "q": t(q), "k": t(k), "v": t(v), "mask": m, "causal": causal, "scale": scale,
        "w": t(w), "output": t(out),
        "grads": {"q": t(q.grad), "k": t(k.grad), "v": t(v.grad)},
    }


def bool_mask(*shape, p=0.7):
    m = torch.rand(*shape) < p
    m[..., 0] = True  # no fully masked row
    return m


def main():
    cases = [
        # plain, L != S, batch and heads
        case((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)),
        # causal, L < S and L > S (top-left aligned tril)
        case((2, 5, 4), (2, 7, 4), (2, 7, 3), causal=True),
        case((1, 9, 3), (1, 6, 3), (1, 6, 5), causal=True),
        # causal across tiles (64), odd sizes
        case((2, 70, 5), (2, 70, 5), (2, 70, 3), causal=True),
        # bool mask [L, S] broadcast over batch and heads, several tiles
        case((2, 2, 67, 4), (2, 2, 130, 4), (2, 2, 130, 3), mask=bool_mask(67, 130)),
        # key padding bool mask [N, 1, 1, S]
        case((2, 3, 6, 4), (2, 3, 9, 4), (2, 3, 9, 4), mask=bool_mask(2, 1, 1, 9, p=0.6)),
        # float mask [N, 1, L, S] (broadcast over heads) with -inf entries, custom scale
        case((2, 3, 5, 4), (2, 3, 66, 4), (2, 3, 66, 2),
             mask=torch.randn(2, 1, 5, 66, dtype=torch.float64).masked_fill(torch.rand(2, 1, 5, 66) < 0.2, float("-inf")).index_fill(-1, torch.tensor([0]), 0.5),
             scale=0.3),
        # broadcast batch dims: k and v shared over the leading dim
        case((2, 3, 4, 5), (3, 6, 5), (1, 3, 6, 2)),
        # 2-D inputs (no batch)
        case((7, 3), (4, 3), (4, 2)),
    ]
    # a fully masked query row (row 1 of batch 0): NaN, as PyTorch 2
    fm = bool_mask(2, 4, 5)
    fm[0, 1, :] = False
    cases.append(case((2, 4, 3), (2, 5, 3), (2, 5, 2), mask=fm))
    with open(os.path.join(OUT, "grad_sdpa.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    main()
