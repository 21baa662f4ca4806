"""Generate PyTorch references for the margin, embedding, Poisson,
Gaussian and CTC losses of package nn.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_losses_fixtures.py
Writes testdata/nn/losses_extra.json: a list of cases, each with the loss,
its params (reduction and the loss's own), its tensors in argument order
(name, dtype, shape, flat values, and for floating tensors that take part
in autograd the gradient of sum(output * w), w being 1, 2, ... in the
output's shape), and the output's shape and values.
"""
import json
import math
import os

import torch
import torch.nn.functional as F

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "losses_extra.json")
D = torch.float64
cases = []


def flat(x):
    return x.detach().reshape(-1).tolist()


def add(loss, params, tensors, fn, grads=None):
    """tensors: list of (name, tensor); grads: names whose gradients are recorded."""
    grads = grads if grads is not None else [n for n, t in tensors if t.is_floating_point()]
    leaves = {}
    args = []
    for n, t in tensors:
        t = t.clone()
        if n in grads:
            t.requires_grad_(True)
        leaves[n] = t
        args.append(t)
    out = fn(*args)
    w = torch.arange(1, out.numel() + 1, dtype=D).reshape(out.shape)
    if grads:
        (out * w).sum().backward()
    ts = []
    for n, t in tensors:
        e = {"name": n, "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "data": flat(t)}
        if n in grads:
            g = leaves[n].grad
            e["grad"] = flat(g) if g is not None else [0.0] * t.numel()
        ts.append(e)
    cases.append({"loss": loss, "params": params, "tensors": ts,
                  "out_shape": list(out.shape), "out": flat(out)})


REDS = ["mean", "sum", "none"]

# MarginRankingLoss: differences that put -y·(x1-x2)+margin at exactly 0
x1 = torch.tensor([0.5, -1.0, 2.0, 0.3, 1.0, -0.7], dtype=D)
x2 = torch.tensor([0.5, 0.5, -1.0, 0.8, 0.5, 0.2], dtype=D)
y = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, 1.0], dtype=D)
for red in REDS:
    for m in [0.0, 0.5]:
        add("margin_ranking", {"reduction": red, "margin": m}, [("input1", x1), ("input2", x2), ("target", y)],
            lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=m, reduction=red), ["input1", "input2"])
add("margin_ranking", {"reduction": "none", "margin": 0.2}, [("input1", x1.reshape(2, 3)), ("input2", x2.reshape(2, 3)[:1].clone()), ("target", y.reshape(2, 3))],
    lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.2, reduction="none"), ["input1", "input2"])

# HingeEmbeddingLoss: targets ±1 and one that is neither (both terms)
x = torch.tensor([[0.3, -0.5, 1.0], [2.0, 0.7, -1.2]], dtype=D)
yh = torch.tensor([[1.0, -1.0, -1.0], [-1.0, 1.0, 0.0]], dtype=D)
for red in REDS:
    for m in [1.0, 0.7]:
        add("hinge_embedding", {"reduction": red, "margin": m}, [("input", x), ("target", yh)],
            lambda a, t: F.hinge_embedding_loss(a, t, margin=m, reduction=red), ["input"])

# SoftMarginLoss
ys = torch.tensor([[1.0, -1.0, -1.0], [-1.0, 1.0, 1.0]], dtype=D)
for red in REDS:
    add("soft_margin", {"reduction": red}, [("input", x), ("target", ys)],
        lambda a, t: F.soft_margin_loss(a, t, reduction=red), ["input"])

# MultiLabelSoftMarginLoss (an input of 0 puts logsigmoid's kink in play)
xm = torch.randn(3, 4, dtype=D)
xm[0, 0] = 0.0
xm[1, 2] = 30.0
xm[2, 1] = -30.0
ym = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.5]], dtype=D)
wm = torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=D)
for red in REDS:
    add("multilabel_soft_margin", {"reduction": red}, [("input", xm), ("target", ym)],
        lambda a, t: F.multilabel_soft_margin_loss(a, t, reduction=red), ["input"])
    add("multilabel_soft_margin", {"reduction": red}, [("input", xm), ("target", ym), ("weight", wm)],
        lambda a, t, w: F.multilabel_soft_margin_loss(a, t, weight=w, reduction=red), ["input"])
add("multilabel_soft_margin", {"reduction": "none"}, [("input", xm[0].clone()), ("target", ym[0].clone())],
    lambda a, t: F.multilabel_soft_margin_loss(a, t, reduction="none"), ["input"])

# MultiMarginLoss: one margin term exactly at 0 (x[y] - x[j] = margin)
xmm = torch.tensor([[0.1, 0.2, 0.4], [1.0, 0.0, -0.5], [0.3, 1.3, 0.3], [-1.0, 2.0, 0.5]], dtype=D)
ymm = torch.tensor([2, 0, 1, 1])
wmm = torch.tensor([0.5, 2.0, 1.5], dtype=D)
for red in REDS:
    for p in [1, 2]:
        for m in [1.0, 0.5]:
            add("multi_margin", {"reduction": red, "p": p, "margin": m}, [("input", xmm), ("target", ymm)],
                lambda a, t: F.multi_margin_loss(a, t, p=p, margin=m, reduction=red))
        add("multi_margin", {"reduction": red, "p": p, "margin": 1.0}, [("input", xmm), ("target", ymm), ("weight", wmm)],
            lambda a, t, w: F.multi_margin_loss(a, t, p=p, margin=1.0, weight=w, reduction=red), ["input"])
add("multi_margin", {"reduction": "none", "p": 1, "margin": 1.0}, [("input", xmm[1].clone()), ("target", ymm[1].clone())],
    lambda a, t: F.multi_margin_loss(a, t, reduction="none"))

# MultiLabelMarginLoss: -1 ends a row's targets; a repeated target counts twice
xl = torch.tensor([[0.1, 0.2, 0.4, 0.8], [1.0, 0.0, -0.5, 0.5], [0.3, 1.3, 0.3, -2.0]], dtype=D)
yl = torch.tensor([[3, 0, -1, 1], [1, 1, 2, -1], [-1, 0, 1, 2]])
for red in REDS:
    add("multilabel_margin", {"reduction": red}, [("input", xl), ("target", yl)],
        lambda a, t: F.multilabel_margin_loss(a, t, reduction=red))
add("multilabel_margin", {"reduction": "none"}, [("input", xl[0].clone()), ("target", yl[0].clone())],
    lambda a, t: F.multilabel_margin_loss(a, t, reduction="none"))
add("multilabel_margin", {"reduction": "mean"}, [("input", xl), ("target", torch.tensor([[0, 1, 2, 3], [2, -1, 0, 0], [3, 2, -1, -1]]))],
    lambda a, t: F.multilabel_margin_loss(a, t))

# CosineEmbeddingLoss (a zero row: the EPSILON in the norms)
a1 = torch.randn(4, 5, dtype=D)
a2 = torch.randn(4, 5, dtype=D)
a1[3] = 0.0
yc = torch.tensor([1.0, -1.0, -1.0, 1.0], dtype=D)
for red in REDS:
    for m in [0.0, 0.2]:
        add("cosine_embedding", {"reduction": red, "margin": m}, [("input1", a1), ("input2", a2), ("target", yc)],
            lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=m, reduction=red), ["input1", "input2"])
add("cosine_embedding", {"reduction": "none", "margin": -0.5}, [("input1", a1[0].clone()), ("input2", a2[0].clone()), ("target", torch.tensor(-1.0, dtype=D))],
    lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=-0.5, reduction="none"), ["input1", "input2"])

# TripletMarginLoss
an, po, ne = torch.randn(4, 5, dtype=D), torch.randn(4, 5, dtype=D), torch.randn(4, 5, dtype=D)
for red in REDS:
    for p in [2.0, 1.0, 3.0]:
        for swap in [False, True]:
            add("triplet_margin", {"reduction": red, "margin": 1.0, "p": p, "eps": 1e-6, "swap": swap},
                [("anchor", an), ("positive", po), ("negative", ne)],
                lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=1.0, p=p, swap=swap, reduction=red))
add("triplet_margin", {"reduction": "none", "margin": 0.5, "p": 2.0, "eps": 0.1, "swap": True},
    [("anchor", an[0].clone()), ("positive", po[0].clone()), ("negative", ne[0].clone())],
    lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=0.5, p=2.0, eps=0.1, swap=True, reduction="none"))

# PoissonNLLLoss: targets 0, 1 (no Stirling term) and above 1
xp = torch.tensor([[0.5, -1.0, 2.0], [0.1, 1.5, -0.3]], dtype=D)
yp = torch.tensor([[0.0, 1.0, 3.0], [2.0, 1.5, 0.5]], dtype=D)
for red in REDS:
    for li in [True, False]:
        for full in [False, True]:
            inp = xp if li else xp.abs() + torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, -0.3]], dtype=D)  # one input of 0: the eps
            add("poisson_nll", {"reduction": red, "log_input": li, "full": full, "eps": 1e-8}, [("input", inp), ("target", yp)],
                lambda a, t: F.poisson_nll_loss(a, t, log_input=li, full=full, reduction=red), ["input"])
add("poisson_nll", {"reduction": "sum", "log_input": False, "full": False, "eps": 0.5}, [("input", xp.abs()), ("target", yp)],
    lambda a, t: F.poisson_nll_loss(a, t, log_input=False, eps=0.5, reduction="sum"), ["input"])

# GaussianNLLLoss: var of the input's shape, one dim short, a last dim of 1;
# a var under eps (clamped, its gradient passes as if it were not)
xg = torch.randn(2, 3, dtype=D)
tg = torch.randn(2, 3, dtype=D)
for red in REDS:
    for full in [False, True]:
        for v in [torch.tensor([[0.5, 1e-8, 2.0], [1.0, 0.3, 0.0]], dtype=D), torch.tensor([0.5, 2.0], dtype=D), torch.tensor([[0.7], [1e-9]], dtype=D)]:
            add("gaussian_nll", {"reduction": red, "full": full, "eps": 1e-6}, [("input", xg), ("target", tg), ("var", v)],
                lambda a, t, vv: F.gaussian_nll_loss(a, t, vv, full=full, reduction=red))
add("gaussian_nll", {"reduction": "mean", "full": False, "eps": 0.4}, [("input", xg), ("target", tg), ("var", torch.tensor([[0.5, 1e-8, 2.0], [1.0, 0.3, 0.0]], dtype=D))],
    lambda a, t, vv: F.gaussian_nll_loss(a, t, vv, eps=0.4))
add("gaussian_nll", {"reduction": "none", "full": False, "eps": 1e-6}, [("input", xg[0].clone()), ("target", tg[0].clone()), ("var", torch.tensor([0.5], dtype=D))],
    lambda a, t, vv: F.gaussian_nll_loss(a, t, vv, reduction="none"))

# CTCLoss: padded and concatenated targets, a repeated label (no skip),
# an empty target, shorter inputs, another blank; an impossible alignment
# with zero_infinity; unbatched
I64 = torch.int64
lp = torch.randn(6, 3, 5, dtype=D).log_softmax(2)
tp = torch.tensor([[1, 1, 2], [3, 4, 0], [2, 2, 2]])
il = torch.tensor([6, 5, 4])
tl = torch.tensor([3, 2, 0])
tc = torch.tensor([1, 1, 2, 3, 4])
for red in REDS:
    for zi in [False, True]:
        add("ctc", {"reduction": red, "blank": 0, "zero_infinity": zi},
            [("log_probs", lp), ("targets", tp), ("input_lengths", il), ("target_lengths", tl)],
            lambda a, t, i, l: F.ctc_loss(a, t, i, l, blank=0, reduction=red, zero_infinity=zi), ["log_probs"])
    add("ctc", {"reduction": red, "blank": 0, "zero_infinity": False},
        [("log_probs", lp), ("targets", tc), ("input_lengths", il), ("target_lengths", tl)],
        lambda a, t, i, l: F.ctc_loss(a, t, i, l, blank=0, reduction=red), ["log_probs"])
    add("ctc", {"reduction": red, "blank": 4, "zero_infinity": False},
        [("log_probs", lp), ("targets", torch.tensor([[1, 1, 2], [3, 0, 0], [2, 2, 2]])), ("input_lengths", il), ("target_lengths", torch.tensor([3, 1, 2]))],
        lambda a, t, i, l: F.ctc_loss(a, t, i, l, blank=4, reduction=red), ["log_probs"])
    # sample 1 cannot align: three 3s need five frames, it has three
    add("ctc", {"reduction": red, "blank": 0, "zero_infinity": True},
        [("log_probs", lp), ("targets", torch.tensor([[1, 2, 0], [3, 3, 3], [2, 0, 0]])), ("input_lengths", torch.tensor([6, 3, 2])), ("target_lengths", torch.tensor([2, 3, 1]))],
        lambda a, t, i, l: F.ctc_loss(a, t, i, l, blank=0, reduction=red, zero_infinity=True), ["log_probs"])
add("ctc", {"reduction": "none", "blank": 0, "zero_infinity": False},
    [("log_probs", lp[:, 0].clone()), ("targets", torch.tensor([1, 1, 2])), ("input_lengths", torch.tensor(6)), ("target_lengths", torch.tensor(3))],
    lambda a, t, i, l: F.ctc_loss(a, t, i, l, reduction="none"), ["log_probs"])
add("ctc", {"reduction": "mean", "blank": 0, "zero_infinity": False},
    [("log_probs", torch.randn(1, 2, 3, dtype=D).log_softmax(2)), ("targets", torch.tensor([[2], [1]])), ("input_lengths", torch.tensor([1, 1])), ("target_lengths", torch.tensor([1, 0]))],
    lambda a, t, i, l: F.ctc_loss(a, t, i, l), ["log_probs"])

with open(OUT, "w") as f:
    json.dump(cases, f, allow_nan=False)
print(len(cases), "cases")


def layers():
    """testdata/nn/layers_extra.json: the activation layers, PReLU and
    Bilinear, each case with its params, input(s), parameters, output and
    the gradients of sum(output * w) (w = 1, 2, ...) of the inputs and
    parameters."""
    out = []
    x = torch.tensor([[-3.0, -0.5, 0.0, 0.5, 0.25, 2.0], [-0.1, 0.6, -0.6, 25.0, -25.0, 1.0]], dtype=D)

    def add(name, params, mod, inputs, fn=None):
        ins = [t.clone().requires_grad_(True) for t in inputs]
        y = fn(*ins) if fn else mod(*ins)
        w = torch.arange(1, y.numel() + 1, dtype=D).reshape(y.shape)
        (y * w).sum().backward()
        c = {"layer": name, "params": params, "inputs": [{"shape": list(t.shape), "data": flat(t), "grad": flat(t.grad)} for t in ins],
             "out_shape": list(y.shape), "out": flat(y), "repr": repr(mod)}
        if mod is not None:
            c["parameters"] = {n: {"shape": list(p.shape), "data": flat(p), "grad": flat(p.grad)} for n, p in mod.named_parameters()}
        out.append(c)

    add("logsigmoid", {}, torch.nn.LogSigmoid(), [x])
    add("softsign", {}, torch.nn.Softsign(), [x])
    add("tanhshrink", {}, torch.nn.Tanhshrink(), [x])
    for lam in [0.5, 0.25, 0.0]:
        add("softshrink", {"lambda": lam}, torch.nn.Softshrink(lam), [x])
        add("hardshrink", {"lambda": lam}, torch.nn.Hardshrink(lam), [x])
    add("threshold", {"threshold": 0.5, "value": 20.0}, torch.nn.Threshold(0.5, 20.0), [x])
    add("threshold", {"threshold": -0.1, "value": -2.0}, torch.nn.Threshold(-0.1, -2.0), [x])
    for d in [-1, 0, 1]:
        add("glu", {"dim": d}, torch.nn.GLU(d), [x])
    add("selu", {}, torch.nn.SELU(), [x])
    for a in [1.0, 0.5, 2.0]:
        add("celu", {"alpha": a}, torch.nn.CELU(a), [x])
    r = torch.nn.RReLU(0.1, 0.3)
    r.eval()
    add("rrelu_eval", {"lower": 0.1, "upper": 0.3}, r, [x])
    p = torch.nn.PReLU().double()
    add("prelu", {"num_parameters": 1, "init": 0.25}, p, [x])
    p3 = torch.nn.PReLU(3, init=0.1)
    with torch.no_grad():
        p3.weight.copy_(torch.tensor([0.1, -0.5, 2.0]))
    add("prelu", {"num_parameters": 3, "init": 0.1}, p3.double(), [torch.randn(2, 3, 4, dtype=D)])
    b = torch.nn.Bilinear(3, 4, 5).double()
    add("bilinear", {"in1": 3, "in2": 4, "out": 5, "bias": True}, b, [torch.randn(2, 3, dtype=D), torch.randn(2, 4, dtype=D)])
    b2 = torch.nn.Bilinear(2, 3, 4, bias=False).double()
    add("bilinear", {"in1": 2, "in2": 3, "out": 4, "bias": False}, b2, [torch.randn(2, 5, 2, dtype=D), torch.randn(2, 5, 3, dtype=D)])
    with open(os.path.join(os.path.dirname(OUT), "layers_extra.json"), "w") as f:
        json.dump(out, f, allow_nan=False)


layers()
