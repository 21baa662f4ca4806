"""Generate PyTorch reference gradients for ember's composite ops.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_grad_fixtures.py
Writes testdata/fixtures/grad/grad_<op>.json (a folder of its own: embertest
reads every testdata/fixtures/*.json as its own format): a list of cases, each with params,
float64 inputs, the output, the gradients of sum(output * w) with respect to
the inputs (w is stored too), and for batch norm the updated running stats.
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "grad")


def t(x):
    return {"shape": list(x.shape), "data": x.detach().reshape(-1).tolist()}


def case(params, inputs, fn, extra=None):
    """inputs: name -> tensor (float ones get gradients)."""
    leaves = {}
    for k, v in inputs.items():
        v = v.clone()
        if v.is_floating_point():
            v.requires_grad_(True)
        leaves[k] = v
    out = fn(**leaves)
    w = torch.randn(out.shape, dtype=torch.float64)
    (out * w).sum().backward()
    c = {
        "params": params,
        "inputs": {k: t(v) if v.is_floating_point() else {"shape": list(v.shape), "ints": v.reshape(-1).tolist()} for k, v in inputs.items()},
        "w": t(w),
        "output": t(out),
        "grads": {k: t(v.grad) for k, v in leaves.items() if v.is_floating_point()},
    }
    if extra:
        c.update(extra())
    return c


def randn(*s):
    return torch.randn(*s, dtype=torch.float64)


def write(name, cases):
    with open(os.path.join(OUT, "grad_%s.json" % name), "w") as f:
        json.dump(cases, f)


def conv():
    cases = []
    for (n, c, h, w_), (o, kh, kw), stride, pad, dil, groups, bias in [
        ((2, 3, 7, 6), (4, 3, 3), (1, 1), (0, 0), (1, 1), 1, True),
        ((2, 4, 8, 7), (6, 3, 2), (2, 1), (1, 2), (1, 2), 2, True),
        ((1, 4, 6, 6), (4, 3, 3), (2, 2), (1, 1), (2, 2), 4, False),
        ((3, 2, 5, 5), (3, 1, 1), (1, 2), (0, 1), (1, 1), 1, True),
    ]:
        inputs = {"x": randn(n, c, h, w_), "weight": randn(o, c // groups, kh, kw)}
        if bias:
            inputs["bias"] = randn(o)
        p = {"stride": stride, "padding": pad, "dilation": dil, "groups": groups}
        cases.append(case(p, inputs, lambda x, weight, bias=None: F.conv2d(x, weight, bias, stride, pad, dil, groups)))
    write("conv2d", cases)


def batch_norm():
    cases = []
    for shape, training, affine in [((4, 3, 5, 5), True, True), ((4, 3, 5, 5), False, True), ((6, 4), True, False), ((6, 4), False, False)]:
        c = shape[1]
        rm, rv = randn(c) * 0.1, torch.rand(c, dtype=torch.float64) + 0.5
        inputs = {"x": randn(*shape) * 2 + 1}
        if affine:
            inputs["weight"] = randn(c)
            inputs["bias"] = randn(c)
        rm2, rv2 = rm.clone(), rv.clone()

        def fn(x, weight=None, bias=None):
            return F.batch_norm(x, rm2, rv2, weight, bias, training, 0.1, 1e-5)

        p = {"training": training, "momentum": 0.1, "eps": 1e-5, "running_mean": t(rm), "running_var": t(rv)}
        cases.append(case(p, inputs, fn, lambda: {"running_mean_after": t(rm2), "running_var_after": t(rv2)}))
    write("batch_norm", cases)


def cross_entropy():
    cases = []
    for shape, smoothing, reduction, ignore in [((5, 4), 0.0, "mean", False), ((5, 4), 0.1, "mean", True), ((5, 4), 0.25, "sum", False),
                                                ((5, 4), 0.1, "none", True), ((2, 4, 3), 0.2, "mean", False)]:
        c = shape[1]
        tshape = (shape[0],) + shape[2:]
        target = torch.randint(0, c, tshape)
        if ignore:
            target.view(-1)[1] = -100
        inputs = {"logits": randn(*shape), "target": target}
        p = {"label_smoothing": smoothing, "reduction": reduction}
        cases.append(case(p, inputs, lambda logits, target: F.cross_entropy(logits, target, label_smoothing=smoothing, reduction=reduction)))
    write("cross_entropy", cases)


def softmax():
    cases = []
    for shape, dim, log in [((3, 5), 1, False), ((2, 3, 4), 0, False), ((2, 3, 4), 1, True), ((4, 6), -1, True)]:
        p = {"dim": dim, "log": log}
        fn = (lambda x: F.log_softmax(x, dim)) if log else (lambda x: F.softmax(x, dim))
        cases.append(case(p, {"x": randn(*shape) * 2}, fn))
    write("softmax", cases)


def pool():
    cases = []
    for kind, shape, k, s, pd, cip in [("max", (2, 3, 7, 6), (3, 3), (2, 2), (1, 1), False), ("max", (1, 2, 6, 6), (2, 2), (2, 2), (0, 0), False),
                                      ("max", (2, 2, 5, 7), (3, 2), (1, 2), (1, 1), False),
                                      ("avg", (2, 3, 7, 6), (3, 3), (2, 2), (1, 1), True), ("avg", (2, 3, 7, 6), (3, 3), (2, 2), (1, 1), False),
                                      ("avg", (1, 2, 6, 5), (2, 3), (1, 2), (1, 0), False), ("adaptive", (2, 3, 7, 5), (3, 2), None, None, None),
                                      ("adaptive", (1, 2, 8, 8), (4, 4), None, None, None)]:
        if kind == "max":
            x = randn(*shape)
            x.view(-1)[3] = x.view(-1)[4]  # a tie: the gradient goes to the first
            fn = lambda x: F.max_pool2d(x, k, s, pd)
        elif kind == "avg":
            x = randn(*shape)
            fn = lambda x: F.avg_pool2d(x, k, s, pd, count_include_pad=cip)
        else:
            x = randn(*shape)
            fn = lambda x: F.adaptive_avg_pool2d(x, k)
        p = {"kind": kind, "kernel": k, "stride": s, "padding": pd, "count_include_pad": cip}
        cases.append(case(p, {"x": x}, fn))
    # ceil_mode=True (appended so that the cases above keep their values):
    # last windows hanging over the bottom/right edge, clipped; the 2×2
    # stride-2 pool over odd sizes; a window wider than the input
    for kind, shape, k, s, pd, cip in [("max", (1, 2, 5, 5), (3, 3), (2, 2), (0, 0), False),
                                      ("max", (2, 2, 7, 6), (3, 3), (2, 2), (1, 1), False),
                                      ("max", (1, 2, 7, 9), (2, 2), (2, 2), (0, 0), False),
                                      ("max", (1, 2, 5, 8), (2, 3), (3, 2), (1, 1), False),
                                      ("max", (1, 1, 1, 2), (3, 3), (3, 3), (0, 0), False),
                                      ("avg", (1, 2, 5, 5), (3, 3), (2, 2), (0, 0), True),
                                      ("avg", (2, 2, 6, 7), (3, 3), (2, 2), (1, 1), True),
                                      ("avg", (2, 2, 6, 7), (3, 3), (2, 2), (1, 1), False),
                                      ("avg", (1, 2, 7, 9), (2, 2), (2, 2), (0, 0), True),
                                      ("avg", (1, 2, 5, 8), (2, 3), (3, 2), (1, 1), True),
                                      ("avg", (1, 2, 5, 8), (2, 3), (3, 2), (1, 1), False),
                                      ("avg", (1, 1, 1, 2), (3, 3), (3, 3), (1, 1), True)]:
        x = randn(*shape)
        if kind == "max":
            fn = lambda x: F.max_pool2d(x, k, s, pd, ceil_mode=True)
        else:
            fn = lambda x: F.avg_pool2d(x, k, s, pd, ceil_mode=True, count_include_pad=cip)
        p = {"kind": kind, "kernel": k, "stride": s, "padding": pd, "count_include_pad": cip, "ceil_mode": True}
        cases.append(case(p, {"x": x}, fn))
    write("pool", cases)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    conv()
    batch_norm()
    cross_entropy()
    softmax()
    pool()
