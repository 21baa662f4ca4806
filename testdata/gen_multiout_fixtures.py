"""Generate PyTorch 1.13 references for gradients through ops with several
outputs (split, chunk, unbind: one SplitBackward0 / UnbindBackward0 node).

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_multiout_fixtures.py
Writes testdata/fixtures/grad/multiout.json: an object of named cases,
all in float64.
"""
import json
import os

import torch
from torch.autograd import grad

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "grad", "multiout.json")


def t(x):
    return {"shape": list(x.shape), "data": x.detach().clone().reshape(-1).tolist()}


def randn(*s):
    return torch.randn(*s, dtype=torch.float64)


cases = {}

# split with a piece unused
x = randn(5, 3).requires_grad_()
w = randn(2, 3)
p = x.split(2, 0)
loss = (p[0] * w).sum() + p[2].sin().sum()
loss.backward()
cases["split_unused"] = {"x": t(x), "w": t(w), "gx": t(x.grad), "name": p[0].grad_fn.name()}

# chunk along dim 1 with a piece used twice
x = randn(4, 6).requires_grad_()
a, b, c = x.chunk(3, 1)
loss = (a * b).sum() + (a * a).sum() + c.exp().sum()
loss.backward()
cases["chunk_twice"] = {"x": t(x), "gx": t(x.grad), "name": a.grad_fn.name()}

# unbind with retained pieces, one of them unused by the loss
x = randn(3, 3, 4).requires_grad_()
u = x.unbind(1)
u[0].retain_grad()
u[1].retain_grad()
loss = (u[0] * u[1]).tanh().sum() + u[0].pow(3).sum()
loss.backward()
cases["unbind_retained"] = {"x": t(x), "gx": t(x.grad), "gu0": t(u[0].grad), "gu1": t(u[1].grad), "name": u[0].grad_fn.name()}

# split with sizes: grad with respect to two of the pieces (non-leaf inputs)
x = randn(6, 2).requires_grad_()
p = x.split([1, 3, 2], 0)
loss = (p[0] * p[1]).sum() + (p[1] ** 2).sum()
g0, g1 = grad(loss, [p[0], p[1]])
cases["sizes_grad_pieces"] = {"x": t(x), "g0": t(g0), "g1": t(g1), "name": p[0].grad_fn.name()}

# create_graph through unbind and split: second derivatives
x = randn(4, 3).requires_grad_()
v = randn(4, 3)
u = x.unbind(0)
loss = (u[0] ** 3).sum() + (u[1] * u[3]).sin().sum()
(gx,) = grad(loss, x, create_graph=True)
(ggx,) = grad((gx * v).sum(), x)
cases["unbind_create_graph"] = {"x": t(x), "v": t(v), "gx": t(gx), "ggx": t(ggx)}

x = randn(5, 4).requires_grad_()
v = randn(5, 4)
p = x.split(2, 1)
loss = (p[0].exp() * p[1]).sum()
loss.backward(create_graph=True)
gx = x.grad.clone()
x.grad = None
(gx * v).sum().backward()
cases["split_create_graph"] = {"x": t(x), "v": t(v), "gx": t(gx), "ggx": t(x.grad)}

with open(OUT, "w") as f:
    json.dump(cases, f)
