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


main()
