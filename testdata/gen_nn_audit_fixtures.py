#!/usr/bin/python3
"""Writes testdata/nn/audit.json: BatchNorm running statistics over several
training steps (momentum, momentum=None, track_running_stats=False,
affine=False), LayerNorm, GroupNorm and Conv1d forward and backward, clip_grad_norm_ for every norm type, learning-rate
sequences of the schedulers, and five steps of SGD (maximize, dampening)
Adam/AdamW (amsgrad, maximize),
RMSprop and Adagrad, from PyTorch 1.13 (CPU).

Run from the repository root:

    /usr/bin/python3 testdata/gen_nn_audit_fixtures.py

Tensors are {"shape", "data"} with the data flat in row-major order.
"""

import json
import math
import os
import warnings

import torch

warnings.filterwarnings("ignore")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "audit.json")


def T(t):
    t = t.detach().to(torch.float64)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def gen_bn():
    g = torch.Generator().manual_seed(5)
    cases = []
    for name, dims, shape, kw in [
        ("1d_m01", "1d", (4, 3), dict(momentum=0.1)),
        ("1d_cum", "1d", (4, 3), dict(momentum=None)),
        ("1d_L_m03", "1d", (2, 3, 5), dict(momentum=0.3)),
        ("2d_cum", "2d", (2, 3, 2, 2), dict(momentum=None)),
        ("2d_noaffine", "2d", (3, 3, 2, 1), dict(affine=False)),
        ("2d_notrack", "2d", (2, 3, 2, 2), dict(track_running_stats=False)),
    ]:
        m = (torch.nn.BatchNorm1d if dims == "1d" else torch.nn.BatchNorm2d)(3, **kw)
        if m.weight is not None:
            with torch.no_grad():
                m.weight.copy_(torch.tensor([0.5, 1.5, -1.0]))
                m.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
        c = {"name": name, "dims": dims, "kw": {k: v for k, v in kw.items()},
             "train_x": [], "train_y": [], "running_mean": [], "running_var": [], "tracked": []}
        m.train()
        for _ in range(3):
            x = torch.randn(*shape, generator=g) * 2 + 1
            y = m(x)
            c["train_x"].append(T(x))
            c["train_y"].append(T(y))
            if m.running_mean is not None:
                c["running_mean"].append(T(m.running_mean))
                c["running_var"].append(T(m.running_var))
                c["tracked"].append(int(m.num_batches_tracked))
        m.eval()
        x = torch.randn(*shape, generator=g)
        c["eval_x"] = T(x)
        c["eval_y"] = T(m(x))
        c["repr"] = repr(m)
        cases.append(c)
    return cases


def gen_groupnorm():
    g = torch.Generator().manual_seed(13)
    out = []
    for groups, ch, shape, affine in [(2, 6, (2, 6, 3), True), (3, 6, (2, 6, 2, 2), False),
                                      (1, 4, (3, 4), True), (4, 4, (2, 4, 5), True)]:
        m = torch.nn.GroupNorm(groups, ch, affine=affine)
        if affine:
            with torch.no_grad():
                m.weight.copy_(torch.randn(ch, generator=g))
                m.bias.copy_(torch.randn(ch, generator=g))
        x = (torch.randn(*shape, generator=g) * 3 + 1).requires_grad_(True)
        y = m(x)
        gout = torch.randn(*shape, generator=g)
        (y * gout).sum().backward()
        c = {"groups": groups, "channels": ch, "affine": affine, "x": T(x), "y": T(y), "gout": T(gout),
             "gx": T(x.grad), "repr": repr(m)}
        if affine:
            c.update(weight=T(m.weight), bias=T(m.bias), gw=T(m.weight.grad), gb=T(m.bias.grad))
        out.append(c)
    return out


def gen_conv1d():
    g = torch.Generator().manual_seed(17)
    out = []
    for kw, shape in [(dict(in_channels=4, out_channels=6, kernel_size=3), (2, 4, 9)),
                      (dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1, dilation=2, groups=2,
                            bias=False), (2, 4, 11)),
                      (dict(in_channels=3, out_channels=2, kernel_size=2, padding=2), (3, 7))]:
        m = torch.nn.Conv1d(**kw)
        with torch.no_grad():
            m.weight.copy_(torch.randn(m.weight.shape, generator=g))
            if m.bias is not None:
                m.bias.copy_(torch.randn(m.bias.shape, generator=g))
        x = torch.randn(*shape, generator=g).requires_grad_(True)
        y = m(x)
        gout = torch.randn(y.shape, generator=g)
        (y * gout).sum().backward()
        c = {"kw": kw, "x": T(x), "y": T(y), "gout": T(gout), "gx": T(x.grad), "weight": T(m.weight),
             "gw": T(m.weight.grad), "repr": repr(m)}
        if m.bias is not None:
            c.update(bias=T(m.bias), gb=T(m.bias.grad))
        out.append(c)
    return out


def gen_layernorm():
    g = torch.Generator().manual_seed(23)
    out = []
    for norm, shape, affine, eps in [((3, 1), (2, 3, 1), False, 1e-5), ((5,), (1, 5), True, 1e-3),
                                     ((2, 3), (4, 2, 3), False, 1e-5), ((4,), (3, 4), True, 1e-5)]:
        m = torch.nn.LayerNorm(norm, eps=eps, elementwise_affine=affine)
        if affine:
            with torch.no_grad():
                m.weight.copy_(torch.randn(norm, generator=g))
                m.bias.copy_(torch.randn(norm, generator=g))
        x = (torch.randn(*shape, generator=g) * 2 - 1).requires_grad_(True)
        y = m(x)
        gout = torch.randn(*shape, generator=g)
        (y * gout).sum().backward()
        c = {"norm": list(norm), "affine": affine, "eps": eps, "x": T(x), "y": T(y), "gout": T(gout),
             "gx": T(x.grad), "repr": repr(m)}
        if affine:
            c.update(weight=T(m.weight), bias=T(m.bias), gw=T(m.weight.grad), gb=T(m.bias.grad))
        out.append(c)
    return out


def gen_clip():
    out = []
    for nt in [0.0, -math.inf, 1.0, 2.0, 3.0, math.inf]:
        p = torch.zeros(3, requires_grad=True)
        p.grad = torch.tensor([1.0, 0.5, 2.0])
        q = torch.zeros(2, requires_grad=True)
        q.grad = torch.tensor([0.0, -3.0])
        r = torch.zeros(2, requires_grad=True)  # no gradient
        tot = torch.nn.utils.clip_grad_norm_([p, q, r], 1.0, nt)
        out.append({"norm_type": "inf" if nt == math.inf else "-inf" if nt == -math.inf else nt,
                    "total": float(tot), "g1": T(p.grad), "g2": T(q.grad)})
    return out


def lrs(mk, n, lr=0.1, metrics=None):
    q = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([q], lr=lr)
    sch = mk(opt)
    out = [opt.param_groups[0]["lr"]]
    for i in range(n):
        opt.step()
        if metrics is None:
            sch.step()
        else:
            sch.step(metrics[i])
        out.append(opt.param_groups[0]["lr"])
    return out


def one_cycle_momentum(make_opt, key, n, **kw):
    """lr and momentum (or beta1) after the constructor and each step of
    OneCycleLR with cycle_momentum=True (PyTorch's default)."""
    q = torch.zeros(1, requires_grad=True)
    opt = make_opt(q)
    sch = torch.optim.lr_scheduler.OneCycleLR(opt, **kw)
    lr, m = [], []
    for i in range(n + 1):
        if i > 0:
            opt.step()
            sch.step()
        g = opt.param_groups[0]
        lr.append(g["lr"])
        m.append(g["betas"][0] if key == "betas" else g["momentum"])
    return lr, m


def gen_sched():
    S = torch.optim.lr_scheduler
    plateau_metrics = [1.0, 0.9, 0.95, 0.9, 0.9, 0.8999, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
    O = torch.optim
    sgd_lr, sgd_m = one_cycle_momentum(lambda q: O.SGD([q], lr=0.1, momentum=0.9), "momentum", 9,
                                       max_lr=1.0, total_steps=10, pct_start=0.25)
    sgd0_lr, sgd0_m = one_cycle_momentum(lambda q: O.SGD([q], lr=0.1), "momentum", 6,
                                         max_lr=0.5, total_steps=7, base_momentum=0.8, max_momentum=0.9)
    adam_lr, adam_b1 = one_cycle_momentum(lambda q: O.Adam([q], lr=0.1), "betas", 9,
                                          max_lr=0.01, total_steps=10)
    return {
        "onecycle_mom_sgd_lr": sgd_lr, "onecycle_mom_sgd_m": sgd_m,
        "onecycle_mom_sgd0_lr": sgd0_lr, "onecycle_mom_sgd0_m": sgd0_m,
        "onecycle_mom_adam_lr": adam_lr, "onecycle_mom_adam_b1": adam_b1,
        "cosine_past_tmax": lrs(lambda o: S.CosineAnnealingLR(o, 4, 0.01), 12),
        "multistep": lrs(lambda o: S.MultiStepLR(o, [2, 5, 5, 9], 0.5), 12),
        "exponential": lrs(lambda o: S.ExponentialLR(o, 0.9), 8),
        "linear": lrs(lambda o: S.LinearLR(o, 0.25, 1.0, 4), 8),
        "linear_down": lrs(lambda o: S.LinearLR(o, 1.0, 0.1, 3), 6),
        "lambda": lrs(lambda o: S.LambdaLR(o, lambda e: 1.0 / (e + 1)), 6),
        "warm_restarts_1": lrs(lambda o: S.CosineAnnealingWarmRestarts(o, 3, 1, 0.01), 10),
        "warm_restarts_2": lrs(lambda o: S.CosineAnnealingWarmRestarts(o, 2, 2, 0.0), 16),
        "sequential_warmup_cosine": lrs(lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.1, 1.0, 3),
                                                                     S.CosineAnnealingLR(o, 5, 0.001)], [3]), 10),
        "sequential_three": lrs(lambda o: S.SequentialLR(o, [S.ExponentialLR(o, 0.5), S.StepLR(o, 2, 0.1),
                                                             S.LinearLR(o, 0.5, 1.0, 2)], [2, 5]), 9),
        "plateau_metrics": plateau_metrics,
        "plateau_min": lrs(lambda o: S.ReduceLROnPlateau(o, "min", factor=0.5, patience=2), 16, metrics=plateau_metrics),
        "plateau_max_abs_cooldown": lrs(lambda o: S.ReduceLROnPlateau(o, "max", factor=0.1, patience=1, threshold=0.05,
                                                                      threshold_mode="abs", cooldown=2, min_lr=0.0005),
                                        16, metrics=plateau_metrics),
        "plateau_min_rel": lrs(lambda o: S.ReduceLROnPlateau(o, "min", factor=0.5, patience=0, threshold=0.1), 16,
                               metrics=plateau_metrics),
    }


def gen_optim():
    """Five steps of each optimizer from p0 with gradients g0..g4 (large
    first, then small, so that AMSGrad's running maximum matters)."""
    g = torch.Generator().manual_seed(9)
    p0 = torch.randn(2, 3, generator=g)
    grads = [torch.randn(2, 3, generator=g) * s for s in [3.0, 2.0, 0.1, 0.05, 0.5]]
    O = torch.optim
    configs = {
        "sgd_maximize": lambda q: O.SGD([q], lr=0.1, momentum=0.9, weight_decay=0.01, maximize=True),
        "sgd_dampening": lambda q: O.SGD([q], lr=0.1, momentum=0.5, dampening=0.5),
        "adam_amsgrad": lambda q: O.Adam([q], lr=0.05, betas=(0.9, 0.99), weight_decay=0.1, amsgrad=True),
        "adamw_amsgrad_maximize": lambda q: O.AdamW([q], lr=0.05, weight_decay=0.02, amsgrad=True, maximize=True),
        "rmsprop": lambda q: O.RMSprop([q], lr=0.01, alpha=0.9, weight_decay=0.1),
        "rmsprop_centered_momentum": lambda q: O.RMSprop([q], lr=0.01, momentum=0.5, centered=True, maximize=True),
        "adagrad": lambda q: O.Adagrad([q], lr=0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.2),
        "adagrad_default": lambda q: O.Adagrad([q], lr=0.1),
    }
    out = {"p0": T(p0), "grads": [T(x) for x in grads]}
    for name, mk in configs.items():
        q = p0.clone().requires_grad_(True)
        opt = mk(q)
        steps = []
        for gr in grads:
            q.grad = gr.clone()
            opt.step()
            steps.append(T(q))
        out[name] = steps
    return out


def main():
    torch.manual_seed(0)
    data = {"bn": gen_bn(), "clip": gen_clip(), "sched": gen_sched(), "optim": gen_optim(),
            "groupnorm": gen_groupnorm(), "conv1d": gen_conv1d(),
            "layernorm": gen_layernorm()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"))


if __name__ == "__main__":
    main()
