"""Generate PyTorch 1.13 references for ember.Checkpoint.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_checkpoint_fixtures.py
Writes testdata/fixtures/grad/checkpoint.json: a float64 MLP
x -> Linear(4,8) -> Tanh -> Linear(8,8) -> ReLU -> Linear(8,3), the first
four layers under torch.utils.checkpoint.checkpoint (reentrant; their
parameters are read from inside the function, not passed as inputs), the
output and the gradients of sum(output * w): once with x requiring grad
(every parameter gets a gradient) and once without (the checkpointed
parameters get none: PyTorch's reentrant checkpoint only backpropagates
when an input requires grad).
"""
import json
import os
import warnings

import torch
import torch.utils.checkpoint as cp

warnings.simplefilter("ignore")
torch.manual_seed(3)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "grad", "checkpoint.json")


def t(x):
    return {"shape": list(x.shape), "data": x.detach().reshape(-1).tolist()}


shapes = {"w1": (8, 4), "b1": (8,), "w2": (8, 8), "b2": (8,), "w3": (3, 8), "b3": (3,)}
init = {k: torch.randn(*s, dtype=torch.float64) for k, s in shapes.items()}
x0 = torch.randn(5, 4, dtype=torch.float64)
w = torch.randn(5, 3, dtype=torch.float64)
cases = []
for x_grad in [True, False]:
    p = {k: v.clone().requires_grad_(True) for k, v in init.items()}
    x = x0.clone().requires_grad_(x_grad)

    def block(h):
        h = torch.tanh(torch.nn.functional.linear(h, p["w1"], p["b1"]))
        return torch.relu(torch.nn.functional.linear(h, p["w2"], p["b2"]))

    out = torch.nn.functional.linear(cp.checkpoint(block, x), p["w3"], p["b3"])
    (out * w).sum().backward()
    grads = {k: (t(v.grad) if v.grad is not None else None) for k, v in p.items()}
    if x_grad:
        grads["x"] = t(x.grad)
    cases.append({"x_requires_grad": x_grad, "output": t(out), "grads": grads})
with open(OUT, "w") as f:
    json.dump({"x": t(x0), "w": t(w), "params": {k: t(v) for k, v in init.items()}, "cases": cases}, f)
