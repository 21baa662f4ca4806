#!/usr/bin/python3
"""Writes testdata/nn/optim_groups.json: torch.optim with parameter groups,
from PyTorch 1.13 (CPU).

"optim": SGD (momentum), Adam, AdamW, RMSprop and Adagrad over two groups
that differ in lr and weight decay (and more), six steps, a third group
added with add_param_group before the third step (not for Adagrad, whose
1.13 step needs state made by its constructor); the parameters after every
step, and state_dict() after the fifth step flattened to ember's keys
(state.N.name, param_groups.N.name; betas as beta1/beta2; flags and None
left out).

"sched": each group's lr (and momentum for OneCycleLR) after the
constructor and every step of schedulers over an SGD with two groups.

Run from the repository root:

    /usr/bin/python3 testdata/gen_optim_groups_fixtures.py

Tensors are {"shape", "data"} with the data flat in row-major order.
"""

import json
import math
import os
import warnings

import torch

warnings.filterwarnings("ignore")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "optim_groups.json")
STEPS, ADD_AT, SD_AT = 6, 2, 5


def T(t):
    t = t.detach().to(torch.float64)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def flat_state_dict(sd):
    out = {}
    for i, st in sd["state"].items():
        for k, v in st.items():
            out["state.%d.%s" % (i, k)] = T(torch.as_tensor(v, dtype=torch.float64))
    for n, g in enumerate(sd["param_groups"]):
        for k, v in g.items():
            pre = "param_groups.%d." % n
            if k == "params":
                out[pre + k] = T(torch.tensor(v, dtype=torch.float64))
            elif k == "betas":
                out[pre + "beta1"], out[pre + "beta2"] = T(torch.tensor(v[0])), T(torch.tensor(v[1]))
            elif isinstance(v, bool) or v is None:
                continue
            else:
                out[pre + k] = T(torch.tensor(float(v), dtype=torch.float64))
    return out


# name: (constructor, groups' options, defaults, the added group's options or None)
CASES = {
    "sgd_momentum": (torch.optim.SGD, [{}, {"lr": 0.03, "weight_decay": 0}],
                     {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01},
                     {"lr": 0.05, "momentum": 0.5, "nesterov": True}),
    "adam": (torch.optim.Adam, [{}, {"lr": 0.003, "weight_decay": 0, "betas": (0.8, 0.99)}],
             {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.02, "amsgrad": True}),
    "adamw": (torch.optim.AdamW, [{}, {"lr": 0.02, "weight_decay": 0}],
              {"lr": 0.01, "weight_decay": 0.05}, {"lr": 0.005, "eps": 1e-6}),
    "rmsprop": (torch.optim.RMSprop, [{}, {"lr": 0.005, "weight_decay": 0, "alpha": 0.9}],
                {"lr": 0.01, "momentum": 0.5, "weight_decay": 0.02}, {"centered": True}),
    "adagrad": (torch.optim.Adagrad, [{}, {"lr": 0.05, "weight_decay": 0, "initial_accumulator_value": 0.1}],
                {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.01}, None),
}


def gen_optim():
    torch.manual_seed(0)
    init = [torch.randn(2, 3), torch.randn(3), torch.randn(4)]
    grads = [[torch.randn(2, 3), torch.randn(3), torch.randn(4)] for _ in range(STEPS)]
    out = {"init": [T(p) for p in init], "grads": [[T(g) for g in gs] for gs in grads], "cases": {}}
    for name, (cls, groups, defaults, added) in CASES.items():
        ps = [p.clone().requires_grad_(True) for p in init]
        opt = cls([dict(params=[ps[i]], **g) for i, g in enumerate(groups)], **defaults)
        steps, sd = [], None
        for k in range(STEPS):
            if k == ADD_AT and added is not None:
                opt.add_param_group(dict(params=[ps[2]], **added))
            n = 3 if added is not None and k >= ADD_AT else 2
            for p, g in zip(ps[:n], grads[k]):
                p.grad = g.clone()
            opt.step()
            steps.append([T(p) for p in ps])
            if k + 1 == SD_AT:
                sd = flat_state_dict(opt.state_dict())
        out["cases"][name] = {"steps": steps, "state_dict": sd}
    return out


S = torch.optim.lr_scheduler


def two_groups():
    q0, q1 = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    return torch.optim.SGD([{"params": [q0]}, {"params": [q1], "lr": 0.01, "momentum": 0.8}], lr=0.1, momentum=0.9)


METRICS = [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]

SCHEDS = {
    "steplr": (lambda o: S.StepLR(o, 3, 0.5), 10),
    "multistep": (lambda o: S.MultiStepLR(o, [2, 5, 5], 0.5), 8),
    "exponential": (lambda o: S.ExponentialLR(o, 0.8), 6),
    "cosine": (lambda o: S.CosineAnnealingLR(o, 6, 0.001), 9),
    "linear": (lambda o: S.LinearLR(o, 0.25, 1, 4), 6),
    "lambda2": (lambda o: S.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]), 6),
    "warm_restarts": (lambda o: S.CosineAnnealingWarmRestarts(o, 3, 2, 0.001), 12),
    "sequential": (lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.1, 1, 3), S.CosineAnnealingLR(o, 5, 0.001)], [3]), 9),
    "onecycle": (lambda o: S.OneCycleLR(o, 0.5, total_steps=10, pct_start=0.3, cycle_momentum=False), 10),
    "onecycle_momentum": (lambda o: S.OneCycleLR(o, 0.5, total_steps=10, pct_start=0.3), 10),
    "plateau": (lambda o: S.ReduceLROnPlateau(o, "min", 0.5, 1, min_lr=0.004), len(METRICS)),
}


def gen_sched():
    out = {"plateau_metrics": METRICS}
    for name, (mk, n) in SCHEDS.items():
        opt = two_groups()
        sch = mk(opt)
        lr = [[g["lr"] for g in opt.param_groups]]
        mom = [[g["momentum"] for g in opt.param_groups]]
        for i in range(n):
            opt.step()
            if name == "plateau":
                sch.step(METRICS[i])
            else:
                sch.step()
            lr.append([g["lr"] for g in opt.param_groups])
            mom.append([g["momentum"] for g in opt.param_groups])
        out[name] = {"lr": lr, "momentum": mom, "state_dict": flat_state_dict(opt.state_dict())}
    return out


def main():
    data = {"optim": gen_optim(), "sched": gen_sched()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
