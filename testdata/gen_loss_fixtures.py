"""Generate PyTorch references for nn.CrossEntropyLoss and nn.NLLLoss with
class weights, ignore_index, label smoothing, probability targets and
[N, C, d] / unbatched [C] inputs.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_loss_fixtures.py
Writes testdata/nn/loss_weighted.json: a list of cases, each with the loss
("ce" or "nll"), the float64 input, the target (ints: class indices,
-100 ignored; or float probabilities), the class weight, label smoothing,
reduction, the output, and the input's gradient of sum(output * w), w
being 1, 2, ... in the output's shape.
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "loss_weighted.json")


def flat(x):
    return x.detach().reshape(-1).tolist()


def case(loss, x, target, weight, ls, red):
    x = x.clone().requires_grad_(True)
    if loss == "ce":
        out = F.cross_entropy(x, target, weight=weight, reduction=red, label_smoothing=ls)
    else:
        out = F.nll_loss(x, target, weight=weight, reduction=red)
    w = torch.arange(1, out.numel() + 1, dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    c = {"loss": loss, "shape": list(x.shape), "input": flat(x), "target_shape": list(target.shape),
         "weight": flat(weight) if weight is not None else None, "ls": ls, "reduction": red,
         "out_shape": list(out.shape), "out": flat(out), "grad": flat(x.grad)}
    if target.is_floating_point():
        c["target_probs"] = flat(target)
    else:
        c["target"] = flat(target)
    return c


def main():
    cases = []
    x = torch.randn(5, 4, dtype=torch.float64)
    tg = torch.tensor([0, 3, -100, 1, 3])
    w = torch.tensor([0.5, 2.0, 1.5, 0.25], dtype=torch.float64)
    probs = torch.randn(5, 4, dtype=torch.float64).softmax(1)
    x3 = torch.randn(2, 4, 3, dtype=torch.float64)
    tg3 = torch.tensor([[0, 2, -100], [3, 1, 1]])
    for red in ["mean", "sum", "none"]:
        for ls in [0.0, 0.2]:
            cases.append(case("ce", x, tg, w, ls, red))
            cases.append(case("ce", x, tg, None, ls, red))
            cases.append(case("ce", x, probs, w, ls, red))
            cases.append(case("ce", x, probs, None, ls, red))
            cases.append(case("ce", x3, tg3, w, ls, red))
        cases.append(case("nll", x.log_softmax(1), tg, w, 0.0, red))
        cases.append(case("nll", x3.log_softmax(1), tg3, w, 0.0, red))
    cases.append(case("ce", x[1], torch.tensor(2), w, 0.1, "mean"))
    cases.append(case("ce", x[1], torch.tensor(2), None, 0.1, "mean"))
    with open(OUT, "w") as f:
        json.dump(cases, f)


def pointwise():
    """testdata/nn/loss_pointwise.json: L1, smooth L1, Huber, KL divergence
    and BCE, each case with its params, input, target, (BCE) weight, the
    output and the input's gradient of sum(output * w), w = 1, 2, ..."""
    cases = []
    # differences 0, ±0.5 and ±1 (at beta / delta), 2.5, -3
    x = torch.tensor([[0.0, 1.5, -0.5, 2.0], [3.5, -3.0, 1.0, 0.25]], dtype=torch.float64)
    t = torch.tensor([[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 2.0, 0.25]], dtype=torch.float64)
    logp = torch.randn(2, 4, dtype=torch.float64).log_softmax(1)
    q = torch.tensor([[0.5, 0.0, 0.25, 0.25], [0.1, 0.2, 0.3, 0.4]], dtype=torch.float64)
    p = torch.tensor([[0.0, 1.0, 0.5, 1e-30], [0.3, 0.9, 0.999, 0.01]], dtype=torch.float64)
    y = torch.tensor([[0.0, 1.0, 0.2, 1.0], [1.0, 0.0, 1.0, 0.5]], dtype=torch.float64)
    bw = torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=torch.float64)

    def add(loss, params, inp, tgt, fn, weight=None):
        xx = inp.clone().requires_grad_(True)
        out = fn(xx)
        w = torch.arange(1, out.numel() + 1, dtype=torch.float64).reshape(out.shape)
        (out * w).sum().backward()
        cases.append({"loss": loss, "params": params, "shape": list(inp.shape), "input": flat(inp),
                      "target": flat(tgt), "weight": flat(weight) if weight is not None else None,
                      "out_shape": list(out.shape), "out": flat(out), "grad": flat(xx.grad)})

    for red in ["mean", "sum", "none"]:
        add("l1", {"reduction": red}, x, t, lambda i: F.l1_loss(i, t, reduction=red))
        for beta in [0.0, 0.5, 2.0]:  # 0: ember's default, PyTorch's 1.0
            add("smooth_l1", {"reduction": red, "beta": beta}, x, t,
                lambda i: F.smooth_l1_loss(i, t, reduction=red, beta=beta or 1.0))
            add("huber", {"reduction": red, "delta": beta}, x, t,
                lambda i: F.huber_loss(i, t, reduction=red, delta=beta or 1.0))
        for lt in [False, True]:
            tg = q.clamp_min(1e-3).log() if lt else q
            add("kl_div", {"reduction": red, "log_target": lt}, logp, tg,
                lambda i: F.kl_div(i, tg, reduction=red, log_target=lt))
        add("bce", {"reduction": red}, p, y, lambda i: F.binary_cross_entropy(i, y, reduction=red))
        add("bce", {"reduction": red}, p, y, lambda i: F.binary_cross_entropy(i, y, weight=bw, reduction=red), bw)
    for lt in [False, True]:
        tg = q.clamp_min(1e-3).log() if lt else q
        add("kl_div", {"reduction": "batchmean", "log_target": lt}, logp, tg,
            lambda i: F.kl_div(i, tg, reduction="batchmean", log_target=lt))
    with open(os.path.join(os.path.dirname(OUT), "loss_pointwise.json"), "w") as f:
        json.dump(cases, f)


main()
pointwise()
