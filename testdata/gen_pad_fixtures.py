"""Generate PyTorch 1.13 references for F.pad's non-constant modes, conv's
padding_mode, dilated max pooling with indices and max unpooling, and
Embedding's max_norm.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_pad_fixtures.py
Writes testdata/fixtures/grad/grad_<topic>.json in gen_grad_fixtures.py's
format (params, float64 inputs, output, gradients of sum(output * w)), and
testdata/nn/conv_padmode.json in gen_conv_audit_fixtures.py's module format
(nn.Conv1d/Conv2d with padding_mode), and testdata/nn/pad_modules.json (the
padding layers' reprs and outputs).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_grad_fixtures import OUT, case, randn, t, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


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


def conv_modes():
    out = []
    for cls, args, kw, xs in [
        ("Conv2d", (2, 3, 3), dict(padding=1, padding_mode="reflect"), (2, 2, 5, 6)),
        ("Conv2d", (2, 2, (2, 3)), dict(stride=(2, 1), padding=(1, 2), padding_mode="replicate", bias=False), (1, 2, 5, 4)),
        ("Conv2d", (2, 4, 3), dict(padding=(2, 1), dilation=(1, 2), groups=2, padding_mode="circular"), (2, 2, 4, 5)),
        ("Conv2d", (2, 3, (2, 4)), dict(padding="same", dilation=(1, 2), padding_mode="reflect"), (1, 2, 5, 8)),
        ("Conv2d", (2, 3, 3), dict(padding="same", padding_mode="circular"), (1, 2, 4, 4)),
        ("Conv2d", (2, 3, 3), dict(padding="valid", padding_mode="replicate"), (1, 2, 4, 4)),
        ("Conv2d", (2, 3, 3), dict(padding=1, padding_mode="replicate"), (2, 4, 4)),
        ("Conv1d", (2, 3, 3), dict(padding=2, padding_mode="reflect"), (2, 2, 6)),
        ("Conv1d", (2, 3, 4), dict(padding="same", dilation=2, padding_mode="replicate", bias=False), (2, 2, 9)),
        ("Conv1d", (2, 2, 3), dict(stride=2, padding=3, padding_mode="circular"), (1, 2, 5)),
        ("Conv1d", (2, 2, 3), dict(padding=1, padding_mode="reflect"), (2, 5)),
    ]:
        m = getattr(torch.nn, cls)(*args, **kw).double()
        x = randn(*xs).requires_grad_()
        y = m(x)
        w = randn(*y.shape)
        (y * w).sum().backward()
        kw_json = {k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()}
        k = args[2]
        out.append({
            "cls": cls, "in": args[0], "out": args[1], "kernel": list(k) if isinstance(k, tuple) else k,
            "kw": kw_json, "weight": t(m.weight), "bias": t(m.bias) if m.bias is not None else None,
            "x": t(x), "y": t(y), "w": t(w), "gx": t(x.grad), "gweight": t(m.weight.grad),
            "gbias": t(m.bias.grad) if m.bias is not None else None, "repr": repr(m),
        })
    with open(os.path.join(HERE, "nn", "conv_padmode.json"), "w") as f:
        json.dump(out, f)


def pad_modules():
    out = []
    for cls, args, xs in [
        ("ReflectionPad1d", (2,), (2, 3, 4)),
        ("ReflectionPad1d", ((1, 3),), (3, 4)),
        ("ReflectionPad2d", (1,), (1, 2, 3, 3)),
        ("ReflectionPad2d", ((1, 0, 2, 1),), (2, 3, 4)),
        ("ReflectionPad3d", (1,), (1, 1, 2, 3, 2)),
        ("ReplicationPad1d", ((0, 3),), (1, 2, 3)),
        ("ReplicationPad2d", (2,), (1, 1, 2, 3)),
        ("ReplicationPad2d", ((1, -1, 0, 2),), (1, 3, 4)),
        ("ReplicationPad3d", ((1, 0, 0, 1, 2, 0),), (1, 1, 2, 2, 2)),
        ("ZeroPad2d", (1,), (1, 2, 2)),
        ("ZeroPad2d", ((1, 0, 2, -1),), (1, 1, 3, 3)),
        ("ConstantPad1d", (2, 3.5), (2, 3)),
        ("ConstantPad2d", ((1, 0, 0, 2), -1.5), (1, 2, 2)),
        ("ConstantPad3d", (1, 0.0), (1, 1, 1, 2)),
    ]:
        m = getattr(torch.nn, cls)(*args)
        x = randn(*xs)
        pad = args[0]
        out.append({"cls": cls, "padding": list(pad) if isinstance(pad, tuple) else [pad],
                    "value": args[1] if len(args) > 1 else 0.0,
                    "x": t(x), "y": t(m(x)), "repr": repr(m)})
    with open(os.path.join(HERE, "nn", "pad_modules.json"), "w") as f:
        json.dump(out, f)


def max_pool():
    """Dilated max pools and return_indices: the indices go in params."""
    cases = []
    for dim, shape, k, st, pd, dil, ceil in [
        (2, (1, 2, 7, 8), (3, 3), (1, 1), (1, 1), (2, 2), False),
        (2, (2, 1, 9, 9), (2, 3), (2, 1), (1, 0), (3, 2), True),
        (2, (1, 1, 5, 5), (2, 2), (2, 2), (0, 0), (2, 2), True),
        (2, (1, 2, 6, 6), (3, 3), (2, 2), (1, 1), (1, 1), False),
        (2, (1, 2, 7, 6), (2, 2), (2, 2), (0, 0), (1, 1), True),
        (2, (2, 6, 7), (2, 2), (1, 1), (0, 0), (2, 2), False),
        (1, (2, 2, 9), 3, 2, 1, 2, False),
        (1, (1, 3, 8), 2, 1, 0, 3, True),
        (1, (2, 7), 3, 1, 1, 1, False),
    ]:
        x = randn(*shape)
        if dim == 2:
            _, idx = F.max_pool2d(x, k, st, pd, dil, ceil_mode=ceil, return_indices=True)
            fn = lambda x: F.max_pool2d(x, k, st, pd, dil, ceil_mode=ceil)
        else:
            _, idx = F.max_pool1d(x, k, st, pd, dil, ceil_mode=ceil, return_indices=True)
            fn = lambda x: F.max_pool1d(x, k, st, pd, dil, ceil_mode=ceil)
        p = {"dim": dim, "kernel": k, "stride": st, "padding": pd, "dilation": dil, "ceil_mode": ceil,
             "indices": idx.reshape(-1).tolist()}
        cases.append(case(p, {"x": x}, fn))
    write("max_pool_dil", cases)


def unpool():
    cases = []
    for dim, shape, k, st, pd, osize in [
        (2, (1, 2, 6, 6), (2, 2), (2, 2), (0, 0), None),
        (2, (2, 1, 5, 7), (3, 2), (2, 2), (1, 0), (5, 7)),
        (2, (2, 5, 5), (3, 3), (1, 1), (1, 1), None),
        (1, (2, 2, 9), 3, 2, 1, None),
        (1, (1, 3, 7), 2, 2, 0, (7,)),
    ]:
        src = randn(*shape)
        if dim == 2:
            y, idx = F.max_pool2d(src, k, st, pd, return_indices=True)
            fn = lambda x, indices: F.max_unpool2d(x, indices, k, st, pd, output_size=osize)
        else:
            y, idx = F.max_pool1d(src, k, st, pd, return_indices=True)
            fn = lambda x, indices: F.max_unpool1d(x, indices, k, st, pd, output_size=osize)
        p = {"dim": dim, "kernel": k, "stride": st, "padding": pd, "output_size": osize}
        cases.append(case(p, {"x": y, "indices": idx}, fn))
    write("max_unpool", cases)


def adaptive_max():
    cases = []
    for shape, out in [((1, 2, 5, 6), (2, 4)), ((2, 1, 7, 5), (3, 5)), ((2, 4, 6), (2, 3)), ((1, 1, 3, 4), (5, 6))]:
        x = randn(*shape)
        _, idx = F.adaptive_max_pool2d(x, out, return_indices=True)
        p = {"output_size": out, "indices": idx.reshape(-1).tolist()}
        cases.append(case(p, {"x": x}, lambda x: F.adaptive_max_pool2d(x, out)))
    write("adaptive_max_indices", cases)


def embedding_max_norm():
    """F.embedding with max_norm: the rows looked up are renormalised in
    place (weight_after in params) before the lookup."""
    cases = []
    for shape, idx, max_norm, norm_type, pad in [
        ((6, 4), [[0, 2, 2], [5, 1, 0]], 1.5, 2.0, None),
        ((5, 3), [4, 0, 3], 2.0, 1.0, None),
        ((5, 3), [[1, 1], [2, 3]], 0.8, float("inf"), None),
        ((7, 2), [6, 2, 0, 2], 1.0, 3.0, 2),
    ]:
        w = randn(*shape) * 1.5
        w[1] *= 0.1  # a row under the limit
        leaf = w.clone().requires_grad_(True)
        ix = torch.tensor(idx)
        out = F.embedding(ix, leaf, padding_idx=pad, max_norm=max_norm, norm_type=norm_type)
        g = randn(*out.shape)
        (out * g).sum().backward()
        cases.append({
            "params": {"max_norm": max_norm, "norm_type": "inf" if norm_type == float("inf") else norm_type,
                       "padding_idx": pad, "weight_after": t(leaf)},
            "inputs": {"weight": t(w), "indices": {"shape": list(ix.shape), "ints": ix.reshape(-1).tolist()}},
            "w": t(g), "output": t(out), "grads": {"weight": t(leaf.grad)},
        })
    write("embedding_max_norm", cases)


if __name__ == "__main__":
    torch.manual_seed(7)
    os.makedirs(OUT, exist_ok=True)
    pad()
    conv_modes()
    pad_modules()
    max_pool()
    unpool()
    adaptive_max()
    embedding_max_norm()
