#!/usr/bin/python3
"""Writes testdata/nn/optim_more.json: the rest of torch.optim from
PyTorch 1.13 (CPU), in the layout of gen_optim_groups_fixtures.py.

"optim": Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD over two groups
that differ in lr and more, six steps, a third group added with
add_param_group before the third step; the parameters after every step and
state_dict() after the fifth step flattened to ember's keys (betas as
beta1/beta2, etas as etaminus/etaplus, step_sizes as
step_size_min/step_size_max; flags and None left out).

"lbfgs": LBFGS (float64 parameters) on a least-squares problem and on
Rosenbrock's function, without and with the strong-Wolfe line search: the
parameters, the loss step returned, and the state's func_evals and n_iter
after each step.

"sched": each group's lr and momentum after the constructor and every
step of ConstantLR, PolynomialLR, MultiplicativeLR, CyclicLR (three modes,
cycle_momentum), ChainedScheduler and SWALR over an SGD with two groups.

"onecycle_nadam": OneCycleLR (cycle_momentum) over a NAdam: lr and beta1.

"swa": AveragedModel's running average and an EMA over a Linear's
parameters, and update_bn's BatchNorm statistics.

Run from the repository root:

    /usr/bin/python3 testdata/gen_optim_more_fixtures.py
"""

import json
import os
import warnings

import torch
from torch.optim import swa_utils

warnings.filterwarnings("ignore")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "optim_more.json")
STEPS, ADD_AT, SD_AT = 6, 2, 5


def T(t):
    t = torch.as_tensor(t).detach().to(torch.float64)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


PAIRS = {"betas": ("beta1", "beta2"), "etas": ("etaminus", "etaplus"), "step_sizes": ("step_size_min", "step_size_max")}


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
            elif k in PAIRS:
                a, b = PAIRS[k]
                out[pre + a], out[pre + b] = T(torch.tensor(float(v[0]))), T(torch.tensor(float(v[1])))
            elif isinstance(v, bool) or v is None:
                continue
            else:
                out[pre + k] = T(torch.tensor(float(v), dtype=torch.float64))
    return out


O = torch.optim
# name: (constructor, groups' options, defaults, the added group's options)
CASES = {
    "adamax": (O.Adamax, [{}, {"lr": 0.01, "weight_decay": 0, "betas": (0.8, 0.99)}],
               {"lr": 0.02, "weight_decay": 0.1}, {"lr": 0.03, "eps": 1e-3}),
    "adamax_maximize": (O.Adamax, [{}, {"lr": 0.01}], {"maximize": True}, {"lr": 0.03}),
    "nadam": (O.NAdam, [{}, {"lr": 0.01, "weight_decay": 0, "momentum_decay": 0.01}],
              {"lr": 0.02, "weight_decay": 0.1}, {"lr": 0.03, "betas": (0.5, 0.9)}),
    "radam": (O.RAdam, [{}, {"lr": 0.01, "weight_decay": 0, "betas": (0.8, 0.9)}],
              {"lr": 0.02, "weight_decay": 0.1, "betas": (0.5, 0.6)}, {"lr": 0.03}),
    "adadelta": (O.Adadelta, [{}, {"lr": 0.5, "weight_decay": 0, "rho": 0.5}],
                 {"lr": 1.0, "weight_decay": 0.1}, {"lr": 2.0, "eps": 1e-3}),
    "adadelta_maximize": (O.Adadelta, [{}, {"lr": 0.5}], {"maximize": True}, {"rho": 0.7}),
    "rprop": (O.Rprop, [{}, {"lr": 0.05, "etas": (0.3, 1.5)}],
              {"lr": 0.01, "step_sizes": (1e-3, 0.04)}, {"lr": 0.02, "maximize": True}),
    "asgd": (O.ASGD, [{}, {"lr": 0.05, "weight_decay": 0, "t0": 2}],
             {"lr": 0.1, "lambd": 0.01, "weight_decay": 0.1}, {"lr": 0.2, "alpha": 0.5, "t0": 0, "maximize": True}),
}


def gen_optim():
    torch.manual_seed(0)
    init = [torch.randn(2, 3), torch.randn(3), torch.randn(4)]
    grads = [[torch.randn(2, 3), torch.randn(3), torch.randn(4)] for _ in range(STEPS)]
    # the same sign often, so that Rprop's steps grow
    for k in (1, 3):
        grads[k] = [g.abs() + 0.1 for g in grads[k - 1]]
    out = {"init": [T(p) for p in init], "grads": [[T(g) for g in gs] for gs in grads], "cases": {}}
    for name, (cls, groups, defaults, added) in CASES.items():
        ps = [p.clone().requires_grad_(True) for p in init]
        opt = cls([dict(params=[ps[i]], **g) for i, g in enumerate(groups)], **defaults)
        steps, sd = [], None
        for k in range(STEPS):
            if k == ADD_AT:
                opt.add_param_group(dict(params=[ps[2]], **added))
            n = 3 if k >= ADD_AT else 2
            for p, g in zip(ps[:n], grads[k]):
                p.grad = g.clone()
            opt.step()
            steps.append([T(p) for p in ps])
            if k + 1 == SD_AT:
                sd = flat_state_dict(opt.state_dict())
        out["cases"][name] = {"steps": steps, "state_dict": sd}
    return out


def least_squares():
    g = torch.Generator().manual_seed(1)
    A = torch.randn(6, 3, generator=g, dtype=torch.float64)
    b = torch.randn(6, generator=g, dtype=torch.float64)
    return {"A": T(A), "b": T(b), "x0": [0.0, 0.0, 0.0]}, lambda x: ((A @ x - b) ** 2).sum()


def rosenbrock():
    return {"x0": [-1.5, 2.0]}, lambda x: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


LBFGS_CASES = {
    "lsq": (least_squares, {"lr": 1, "max_iter": 4, "history_size": 2}),
    "lsq_wolfe": (least_squares, {"lr": 1, "max_iter": 4, "history_size": 2, "line_search_fn": "strong_wolfe"}),
    "rosen": (rosenbrock, {"lr": 0.05, "max_iter": 5, "history_size": 3}),
    "rosen_wolfe": (rosenbrock, {"lr": 1, "max_iter": 6, "max_eval": 8, "line_search_fn": "strong_wolfe"}),
    # torch 1.13 does not pass tolerance_change on to _strong_wolfe: its
    # line search keeps the default 1e-9 whatever the option says
    "rosen_wolfe_tol": (rosenbrock, {"lr": 1, "max_iter": 6, "tolerance_change": 1.0, "line_search_fn": "strong_wolfe"}),
}


def flat_lbfgs_state(sd):
    """LBFGS's state_dict() flattened: lists as name.K, the scratch list
    al and the string line_search_fn left out."""
    out = {}
    for k, v in sd["state"][0].items():
        if k == "al":
            continue
        if isinstance(v, list):
            for j, e in enumerate(v):
                out["state.0.%s.%d" % (k, j)] = T(torch.as_tensor(e, dtype=torch.float64))
        else:
            out["state.0." + k] = T(torch.as_tensor(v, dtype=torch.float64))
    for k, v in sd["param_groups"][0].items():
        if k == "params":
            out["param_groups.0.params"] = T(torch.tensor(v, dtype=torch.float64))
        elif isinstance(v, (int, float)):
            out["param_groups.0." + k] = T(torch.tensor(float(v), dtype=torch.float64))
    return out


def gen_lbfgs():
    out = {}
    for name, (mk, opts) in LBFGS_CASES.items():
        data, f = mk()
        x = torch.tensor(data["x0"], dtype=torch.float64, requires_grad=True)
        opt = O.LBFGS([x], **opts)

        def closure():
            opt.zero_grad()
            loss = f(x)
            loss.backward()
            return loss
        steps, sd = [], None
        for k in range(4):
            loss = opt.step(closure)
            st = opt.state[x]
            steps.append({"x": T(x), "loss": float(loss), "func_evals": st["func_evals"], "n_iter": st["n_iter"]})
            if k == 1:
                sd = flat_lbfgs_state(opt.state_dict())
        data.update(opts)
        out[name] = {"problem": data, "steps": steps, "state_dict": sd}
    return out


S = torch.optim.lr_scheduler


def two_groups():
    q0, q1 = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    return torch.optim.SGD([{"params": [q0]}, {"params": [q1], "lr": 0.01, "momentum": 0.8}], lr=0.1, momentum=0.9)


SCHEDS = {
    "constant": (lambda o: S.ConstantLR(o, 0.25, 3), 6),
    # total_iters 0: torch's recursive form never leaves base·factor
    "constant_0": (lambda o: S.ConstantLR(o, 0.5, 0), 6),
    "polynomial": (lambda o: S.PolynomialLR(o, 4, 2.0), 7),
    "multiplicative": (lambda o: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.5), 6),
    "cyclic": (lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=2), 12),
    "cyclic2": (lambda o: S.CyclicLR(o, [0.01, 0.02], [0.1, 0.05], step_size_up=2, mode="triangular2",
                                     base_momentum=[0.7, 0.6], max_momentum=[0.9, 0.95]), 12),
    "cyclic_exp": (lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range", gamma=0.9,
                                        cycle_momentum=False), 10),
    "chained": (lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.5, 2), S.ExponentialLR(o, 0.9)]), 6),
    "swalr_cos": (lambda o: swa_utils.SWALR(o, 0.05, anneal_epochs=3), 6),
    "swalr_linear": (lambda o: swa_utils.SWALR(o, [0.05, 0.2], anneal_epochs=4, anneal_strategy="linear"), 6),
    "swalr_0": (lambda o: swa_utils.SWALR(o, 0.05, anneal_epochs=0), 3),
}


def gen_sched():
    out = {}
    for name, (mk, n) in SCHEDS.items():
        opt = two_groups()
        sch = mk(opt)
        lr = [[g["lr"] for g in opt.param_groups]]
        mom = [[g["momentum"] for g in opt.param_groups]]
        for i in range(n):
            opt.step()
            sch.step()
            lr.append([g["lr"] for g in opt.param_groups])
            mom.append([g["momentum"] for g in opt.param_groups])
        out[name] = {"lr": lr, "momentum": mom, "state_dict": flat_state_dict(opt.state_dict())}
    return out


def gen_onecycle_betas():
    """OneCycleLR (cycle_momentum) over a NAdam with two groups: it cycles beta1."""
    q0, q1 = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    opt = torch.optim.NAdam([{"params": [q0]}, {"params": [q1], "lr": 0.01}], lr=0.1)
    sch = S.OneCycleLR(opt, 0.5, total_steps=6)
    lr, beta1 = [[g["lr"] for g in opt.param_groups]], [[g["betas"][0] for g in opt.param_groups]]
    for _ in range(5):  # the constructor took the first of the 6 steps
        opt.step()
        sch.step()
        lr.append([g["lr"] for g in opt.param_groups])
        beta1.append([g["betas"][0] for g in opt.param_groups])
    return {"lr": lr, "beta1": beta1}


def gen_swa():
    torch.manual_seed(3)
    lin = torch.nn.Linear(3, 2)
    init = {k: T(v) for k, v in lin.state_dict().items()}
    updates = []
    avg = swa_utils.AveragedModel(lin)
    ema = swa_utils.AveragedModel(lin, avg_fn=lambda a, m, n: 0.9 * a + 0.1 * m)
    steps = []
    for k in range(4):
        with torch.no_grad():
            for p in lin.parameters():
                p.add_(torch.randn_like(p))
        updates.append({k2: T(v) for k2, v in lin.state_dict().items()})
        avg.update_parameters(lin)
        ema.update_parameters(lin)
        steps.append({"avg": {k2: T(v) for k2, v in avg.state_dict().items()},
                      "ema": {k2: T(v) for k2, v in ema.state_dict().items()}})
    # update_bn over a Linear and a BatchNorm1d
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    net.eval()
    with torch.no_grad():
        net[1].running_mean.fill_(3.0)
    bn_init = {k: T(v) for k, v in net.state_dict().items()}
    batches = [torch.randn(5, 3) for _ in range(3)]
    swa_utils.update_bn(batches, net)
    bn = {k: T(v) for k, v in net.state_dict().items()}
    return {"linear_init": init, "models": updates, "steps": steps,
            "bn_init": bn_init, "bn_batches": [T(b) for b in batches], "bn_after": bn, "bn_training": net.training}


def main():
    data = {"optim": gen_optim(), "lbfgs": gen_lbfgs(), "sched": gen_sched(), "onecycle_nadam": gen_onecycle_betas(), "swa": gen_swa()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
