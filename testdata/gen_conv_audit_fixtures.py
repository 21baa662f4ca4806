"""PyTorch 1.13 references for convolution padding='same'/'valid' and
nn.Conv1d/Conv2d with non-square (tuple) kernel, stride, padding and
dilation.

Run from the repository root with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_conv_audit_fixtures.py
Writes:
  testdata/fixtures/grad/grad_conv_same.json: F.conv2d / F.conv1d with
    padding='same' (even kernels, dilations, groups, unbatched), in the
    format of gen_grad_fixtures.py (output and the gradients of
    sum(output * w));
  testdata/nn/conv_audit.json: nn.Conv1d / nn.Conv2d modules (their
    constructor arguments, weight, bias, an input, the output, the
    gradients of sum(output * w) and repr);
  testdata/fixtures/grad/grad_pool1d.json: F.max_pool1d, avg_pool1d
    (ceil_mode, count_include_pad) and adaptive_avg_pool1d;
  testdata/fixtures/grad/grad_adaptive_max.json: F.adaptive_max_pool2d;
  testdata/fixtures/grad/grad_conv_transpose.json and
    testdata/nn/conv_transpose.json: the same for F.conv_transpose2d and
    nn.ConvTranspose2d.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_grad_fixtures import case, randn, t  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def same():
    cases = []
    # x shape, w shape, dilation, groups, bias
    for xs, ws, dil, groups, bias in [
        ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), 1, True),
        ((1, 2, 6, 7), (3, 2, 2, 4), (1, 1), 1, True),
        ((2, 4, 8, 7), (4, 2, 3, 2), (2, 3), 2, True),
        ((3, 5, 5), (2, 3, 4, 4), (1, 1), 1, False),
        ((2, 3, 10), (4, 3, 4), (1,), 1, True),
        ((1, 2, 9), (2, 1, 3), (2,), 2, False),
        ((3, 8), (2, 3, 2), (3,), 1, True),
    ]:
        one = len(ws) == 3
        inputs = {"x": randn(*xs), "weight": randn(*ws)}
        if bias:
            inputs["bias"] = randn(ws[0])
        conv = F.conv1d if one else F.conv2d
        d = dil[0] if one else dil

        def fn(x, weight, bias=None, conv=conv, d=d):
            return conv(x, weight, bias, padding="same", dilation=d, groups=groups)
        p = {"dim": 1 if one else 2, "dilation": list(dil), "groups": groups}
        cases.append(case(p, inputs, fn))
    with open(os.path.join(HERE, "fixtures", "grad", "grad_conv_same.json"), "w") as f:
        json.dump(cases, f)


def modules():
    out = []
    for cls, args, kw, xs in [
        ("Conv2d", (3, 4, (3, 5)), dict(stride=(1, 2), padding=(1, 2), dilation=(2, 1)), (2, 3, 9, 11)),
        ("Conv2d", (2, 4, (2, 3)), dict(stride=(2, 1), padding=(0, 1), groups=2, bias=False), (1, 2, 7, 6)),
        ("Conv2d", (3, 2, 4), dict(padding="same", dilation=(1, 2)), (2, 3, 6, 7)),
        ("Conv2d", (3, 2, (2, 3)), dict(padding="valid"), (1, 3, 5, 6)),
        ("Conv2d", (2, 2, 3), dict(stride=2, padding=1), (1, 2, 5, 5)),
        ("Conv1d", (3, 2, 4), dict(padding="same", dilation=2), (2, 3, 9)),
        ("Conv1d", (2, 2, 3), dict(padding="valid", bias=False), (2, 7)),
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
    with open(os.path.join(HERE, "nn", "conv_audit.json"), "w") as f:
        json.dump(out, f)


def transpose():
    """F.conv_transpose2d cases (grad_conv_transpose.json) and
    nn.ConvTranspose2d modules (testdata/nn/conv_transpose.json)."""
    cases = []
    # x shape, w shape, stride, padding, output_padding, dilation, groups, bias
    for xs, ws, s, p, op, d, g, bias in [
        ((2, 3, 4, 5), (3, 4, 3, 3), (1, 1), (0, 0), (0, 0), (1, 1), 1, True),
        ((2, 3, 4, 5), (3, 2, 3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1, True),
        ((1, 4, 3, 4), (4, 3, 2, 3), (3, 2), (0, 1), (2, 0), (1, 2), 2, True),
        ((1, 2, 5, 4), (2, 2, 4, 2), (2, 1), (3, 0), (0, 0), (2, 1), 1, False),
        ((3, 4, 4), (3, 2, 3, 3), (2, 2), (0, 0), (1, 0), (1, 1), 1, True),
        ((2, 2, 5, 3), (2, 3, 2, 2), (2, 3), (2, 1), (1, 0), (1, 1), 1, True),  # padding > d·(k−1): cropped
    ]:
        inputs = {"x": randn(*xs), "weight": randn(*ws)}
        if bias:
            inputs["bias"] = randn(ws[1] * g)

        def fn(x, weight, bias=None, s=s, p=p, op=op, d=d, g=g):
            return F.conv_transpose2d(x, weight, bias, s, p, op, g, d)
        params = {"stride": list(s), "padding": list(p), "output_padding": list(op), "dilation": list(d), "groups": g}
        cases.append(case(params, inputs, fn))
    with open(os.path.join(HERE, "fixtures", "grad", "grad_conv_transpose.json"), "w") as f:
        json.dump(cases, f)
    mods = []
    for args, kw, xs in [
        ((3, 4, 3), dict(stride=2, padding=1, output_padding=1), (2, 3, 5, 5)),
        ((4, 2, (2, 3)), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2, bias=False), (1, 4, 3, 4)),
    ]:
        m = torch.nn.ConvTranspose2d(*args, **kw).double()
        x = randn(*xs).requires_grad_()
        y = m(x)
        w = randn(*y.shape)
        (y * w).sum().backward()
        k = args[2]
        mods.append({
            "in": args[0], "out": args[1], "kernel": list(k) if isinstance(k, tuple) else k,
            "kw": {k_: (list(v) if isinstance(v, tuple) else v) for k_, v in kw.items()},
            "weight": t(m.weight), "bias": t(m.bias) if m.bias is not None else None,
            "x": t(x), "y": t(y), "w": t(w), "gx": t(x.grad), "gweight": t(m.weight.grad),
            "gbias": t(m.bias.grad) if m.bias is not None else None, "repr": repr(m),
        })
    with open(os.path.join(HERE, "nn", "conv_transpose.json"), "w") as f:
        json.dump(mods, f)




def pool1d():
    """F.max_pool1d / avg_pool1d / adaptive_avg_pool1d (grad_pool1d.json)."""
    cases = []
    for kind, shape, k, s, p, cip, ceil in [
        ("max", (2, 3, 9), 3, 2, 1, False, False),
        ("max", (2, 3, 8), 3, 2, 0, False, True),
        ("max", (3, 7), 2, 0, 0, False, True),
        ("avg", (2, 3, 9), 3, 2, 1, True, False),
        ("avg", (2, 2, 8), 3, 2, 1, True, True),
        ("avg", (2, 2, 8), 3, 2, 1, False, True),
        ("avg", (3, 7), 2, 0, 0, True, False),
        ("adaptive", (2, 3, 7), 3, None, None, None, None),
        ("adaptive", (3, 5), 5, None, None, None, None),
    ]:
        x = randn(*shape)
        if kind == "max":
            def fn(x, k=k, s=s, p=p, ceil=ceil):
                return F.max_pool1d(x, k, s or None, p, ceil_mode=ceil)
        elif kind == "avg":
            def fn(x, k=k, s=s, p=p, cip=cip, ceil=ceil):
                return F.avg_pool1d(x, k, s or None, p, ceil_mode=ceil, count_include_pad=cip)
        else:
            def fn(x, k=k):
                return F.adaptive_avg_pool1d(x, k)
        params = {"kind": kind, "kernel": k, "stride": s, "padding": p, "count_include_pad": cip, "ceil_mode": ceil}
        cases.append(case(params, {"x": x}, fn))
    with open(os.path.join(HERE, "fixtures", "grad", "grad_pool1d.json"), "w") as f:
        json.dump(cases, f)




def adaptive_max():
    """F.adaptive_max_pool2d (grad_adaptive_max.json): overlapping and
    dividing windows, a global one, an unbatched input, and ties (values
    in halves), whose gradient goes to the first maximum."""
    cases = []
    for shape, out, ties in [
        ((2, 3, 7, 5), (3, 2), False),
        ((1, 2, 8, 8), (4, 4), False),
        ((3, 6, 5), (4, 5), False),
        ((1, 1, 5, 7), (1, 1), False),
        ((2, 2, 5, 6), (3, 4), True),
        ((1, 2, 3, 4), (5, 6), False),
    ]:
        x = randn(*shape)
        if ties:
            x = (x * 2).round() / 2

        def fn(x, out=out):
            return F.adaptive_max_pool2d(x, out)
        cases.append(case({"output_size": list(out)}, {"x": x}, fn))
    with open(os.path.join(HERE, "fixtures", "grad", "grad_adaptive_max.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    torch.manual_seed(7)
    same()
    modules()
    transpose()
    pool1d()
    adaptive_max()
