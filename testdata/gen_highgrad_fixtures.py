"""Generate PyTorch 1.13 references for ember's higher-order gradients
(ember.Grad with CreateGraph, BackwardCreateGraph, package autograd).

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_highgrad_fixtures.py
Writes testdata/fixtures/grad/highgrad.json: an object of named cases,
all in float64.
"""
import json
import os

import torch
import torch.nn.functional as F
from torch.autograd import grad
import torch.autograd.functional as AF

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "grad", "highgrad.json")


def t(x):
    return {"shape": list(x.shape), "data": x.detach().clone().reshape(-1).tolist()}


def randn(*s):
    return torch.randn(*s, dtype=torch.float64)


cases = {}

# grad of a small MLP's weighted output with respect to its input (saliency)
x = randn(4, 3).requires_grad_()
w1, b1, w2, b2 = randn(5, 3), randn(5), randn(2, 5), randn(2)
wout = randn(4, 2)
out = F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2)
(gx,) = grad((out * wout).sum(), x)
cases["mlp_input_grad"] = {"x": t(x), "w1": t(w1), "b1": t(b1), "w2": t(w2), "b2": t(b2), "wout": t(wout), "gx": t(gx)}

# WGAN-GP gradient penalty of a critic Linear+act+Linear, and the
# critic's parameter gradients after backward
for act in ["leaky_relu", "tanh"]:
    x = randn(6, 3).requires_grad_()
    w1, b1 = randn(8, 3).requires_grad_(), randn(8).requires_grad_()
    w2, b2 = randn(1, 8).requires_grad_(), randn(1).requires_grad_()
    h = F.linear(x, w1, b1)
    h = F.leaky_relu(h, 0.2) if act == "leaky_relu" else torch.tanh(h)
    d = F.linear(h, w2, b2)
    (gx,) = grad(d.sum(), x, create_graph=True)
    gp = ((gx.norm(2, dim=1) - 1) ** 2).mean()
    gp.backward()
    cases["gp_" + act] = {
        "x": t(x), "w1": t(w1), "b1": t(b1), "w2": t(w2), "b2": t(b2),
        "gx": t(gx), "gp": t(gp),
        "gw1": t(w1.grad), "gb1": t(b1.grad), "gw2": t(w2.grad),
        "gb2": t(b2.grad) if b2.grad is not None else None, "gxx": t(x.grad),
    }

# the same with a convolutional critic: Conv2d+LeakyReLU+Linear (Conv2d's
# double backward)
x = randn(3, 2, 5, 5).requires_grad_()
cw, cb = randn(4, 2, 3, 3).requires_grad_(), randn(4).requires_grad_()
lw, lb = randn(1, 36).requires_grad_(), randn(1).requires_grad_()
d = F.linear(F.leaky_relu(F.conv2d(x, cw, cb, stride=2, padding=1), 0.2).reshape(3, -1), lw, lb)
(gx,) = grad(d.sum(), x, create_graph=True)
gp = ((gx.reshape(3, -1).norm(2, dim=1) - 1) ** 2).mean()
gp.backward()
cases["gp_conv"] = {"x": t(x), "cw": t(cw), "cb": t(cb), "lw": t(lw), "lb": t(lb), "gx": t(gx), "gp": t(gp),
                    "gcw": t(cw.grad), "glw": t(lw.grad)}

# second derivatives d²/dx² sum(f(x)) (the diagonal) of elementwise ops
ops = {
    "exp": (torch.exp, -1.9, 1.9), "log": (torch.log, 0.3, 2.5), "sqrt": (torch.sqrt, 0.3, 2.5),
    "rsqrt": (torch.rsqrt, 0.3, 2.5), "sin": (torch.sin, -1.9, 1.9), "cos": (torch.cos, -1.9, 1.9),
    "tanh": (torch.tanh, -1.9, 1.9), "sigmoid": (torch.sigmoid, -1.9, 1.9), "relu": (torch.relu, -1.9, 1.9),
    "square": (torch.square, -1.9, 1.9), "log1p": (torch.log1p, -0.5, 1.9), "expm1": (torch.expm1, -1.9, 1.9),
    "erf": (torch.erf, -1.9, 1.9), "reciprocal": (torch.reciprocal, 0.3, 2.5),
    "pow3": (lambda x: x ** 3, -1.9, 1.9), "pow2.5": (lambda x: x ** 2.5, 0.3, 2.5),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), -1.9, 1.9), "silu": (F.silu, -1.9, 1.9),
    "softplus": (lambda x: F.softplus(x, 2, 20), -1.9, 1.9), "mish": (F.mish, -1.9, 1.9),
    "elu": (lambda x: F.elu(x, 1.5), -1.9, 1.9), "gelu": (F.gelu, -1.9, 1.9),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), -1.9, 1.9),
    "tan": (torch.tan, -1.2, 1.2), "asin": (torch.asin, -0.9, 0.9), "acos": (torch.acos, -0.9, 0.9),
    "atan": (torch.atan, -1.9, 1.9), "sinh": (torch.sinh, -1.9, 1.9), "cosh": (torch.cosh, -1.9, 1.9),
    "asinh": (torch.asinh, -1.9, 1.9), "acosh": (torch.acosh, 1.2, 3), "atanh": (torch.atanh, -0.9, 0.9),
    "lgamma": (torch.lgamma, 0.3, 3), "digamma": (torch.digamma, 0.3, 3), "erfc": (torch.erfc, -1.9, 1.9),
    "erfinv": (torch.erfinv, -0.9, 0.9), "log2": (torch.log2, 0.3, 2.5), "log10": (torch.log10, 0.3, 2.5),
    "exp2": (torch.exp2, -1.9, 1.9), "abs": (torch.abs, -1.9, 1.9), "clamp": (lambda x: torch.clamp(x, -0.5, 0.6), -1.9, 1.9),
    "logit": (torch.logit, 0.1, 0.9), "sinc": (torch.sinc, 0.2, 1.9), "hardswish": (F.hardswish, -4, 4),
    "softmax": (lambda x: torch.softmax(x, 0) * torch.arange(1.0, 9.0, dtype=torch.float64), -1.9, 1.9),
    "log_softmax": (lambda x: torch.log_softmax(x, 0) ** 2, -1.9, 1.9),
    "norm": (lambda x: x.norm(2) ** 3, -1.9, 1.9),
}
second = {}
for name, (f, lo, hi) in ops.items():
    x = (lo + (hi - lo) * torch.rand(8, dtype=torch.float64)).requires_grad_()
    (g,) = grad(f(x).sum(), x, create_graph=True)
    # the diagonal of the Hessian (columns from one grad per element) and
    # a Hessian-vector product with v
    v = randn(8)
    if g.requires_grad:
        (hv,) = grad(g, x, v)
    else:  # a piecewise-linear f: its gradient has no graph
        hv = torch.zeros_like(x)
    second[name] = {"x": t(x), "g": t(g), "v": t(v), "hv": t(hv), "graph": g.requires_grad}
cases["second"] = second


# torch.autograd.functional on small functions
def f1(x):
    return x.exp() * x.sum()


def f2(x):
    return (x ** 3).sum() * torch.tanh(x).sum()


def f3(x, y):
    return x.sin() * y.exp().sum() + x * y


x = randn(4)
y = randn(4)
v = randn(4)
out, vjp = AF.vjp(f1, x, v)
_, jvp = AF.jvp(f1, x, v)
_, hvp = AF.hvp(f2, x, v)
j3 = AF.jacobian(f3, (x, y))
h3 = AF.hessian(lambda x, y: f3(x, y).sum(), (x, y))
cases["functional"] = {
    "x": t(x), "y": t(y), "v": t(v),
    "f1": t(out), "jac1": t(AF.jacobian(f1, x)), "vjp1": t(vjp), "jvp1": t(jvp),
    "f2": t(f2(x)), "hess2": t(AF.hessian(f2, x)), "hvp2": t(hvp),
    "jac3": [t(j) for j in j3], "hess3": [[t(h) for h in row] for row in h3],
}

# (added later, reseeded so that the cases above keep their values)
torch.manual_seed(1)

# WGAN-GP through a LayerNorm MLP critic: Linear, LayerNorm, tanh, Linear
x = randn(5, 4).requires_grad_()
w1, b1 = randn(8, 4).requires_grad_(), randn(8).requires_grad_()
lnw, lnb = (1 + 0.3 * randn(8)).requires_grad_(), (0.3 * randn(8)).requires_grad_()
w2, b2 = randn(1, 8).requires_grad_(), randn(1).requires_grad_()
d = F.linear(torch.tanh(F.layer_norm(F.linear(x, w1, b1), (8,), lnw, lnb, 1e-5)), w2, b2)
(gx,) = grad(d.sum(), x, create_graph=True)
gp = ((gx.norm(2, dim=1) - 1) ** 2).mean()
gp.backward()
cases["gp_layernorm"] = {"x": t(x), "w1": t(w1), "b1": t(b1), "lnw": t(lnw), "lnb": t(lnb), "w2": t(w2), "b2": t(b2),
                         "gx": t(gx), "gp": t(gp), "gw1": t(w1.grad), "glnw": t(lnw.grad), "glnb": t(lnb.grad),
                         "gw2": t(w2.grad), "gxx": t(x.grad)}

# WGAN-GP through a pre-LN transformer block critic (one head, causal
# attention written out, as F.scaled_dot_product_attention computes it)
B, L, E = 2, 3, 4
x = randn(B, L, E).requires_grad_()
P = {}
for k, s in [("ln1w", (E,)), ("ln1b", (E,)), ("wq", (E, E)), ("wk", (E, E)), ("wv", (E, E)), ("wo", (E, E)),
             ("ln2w", (E,)), ("ln2b", (E,)), ("f1", (8, E)), ("f1b", (8,)), ("f2", (E, 8)), ("f2b", (E,)),
             ("hw", (1, E))]:
    v = 0.5 * randn(*s)
    if k in ("ln1w", "ln2w"):
        v = v + 1
    P[k] = v.requires_grad_()


def block(x):
    h = F.layer_norm(x, (E,), P["ln1w"], P["ln1b"], 1e-5)
    q, k, v = F.linear(h, P["wq"]), F.linear(h, P["wk"]), F.linear(h, P["wv"])
    s = q @ k.transpose(-2, -1) / E ** 0.5
    s = s.masked_fill(torch.ones(L, L, dtype=torch.bool).tril().logical_not(), float("-inf"))
    a = torch.softmax(s, -1) @ v
    x = x + F.linear(a, P["wo"])
    h = F.layer_norm(x, (E,), P["ln2w"], P["ln2b"], 1e-5)
    x = x + F.linear(F.gelu(F.linear(h, P["f1"], P["f1b"])), P["f2"], P["f2b"])
    return F.linear(x.mean(1), P["hw"])


d = block(x)
(gx,) = grad(d.sum(), x, create_graph=True)
gp = ((gx.reshape(B, -1).norm(2, dim=1) - 1) ** 2).mean()
gp.backward()
c = {k: t(v) for k, v in P.items()}
c.update({"x": t(x), "gx": t(gx), "gp": t(gp), "gxx": t(x.grad)})
c.update({"g_" + k: t(v.grad) for k, v in P.items() if v.grad is not None})
cases["gp_transformer"] = c

# Hessian-vector products through BatchNorm (training), Embedding, prod and
# cumprod (with a zero): f(x, w) = sum(tanh(bn(x)) * emb(w)) + prod + cumprod
x = randn(4, 3).requires_grad_()
w = randn(5, 3).requires_grad_()
bnw, bnb = (1 + 0.3 * randn(3)).requires_grad_(), (0.3 * randn(3)).requires_grad_()
idx = torch.tensor([4, 0, 2, 0])
xz = torch.tensor([0.7, 0.0, -1.2, 0.9], dtype=torch.float64)


def fmisc(x, w):
    e = F.embedding(idx, w)
    y = torch.tanh(F.batch_norm(x, None, None, bnw, bnb, True, 0.1, 1e-5)) * e
    z = (x[:, 0] * xz).cumprod(0)
    return y.sum() + (x[:, 1] + 0.5).prod() * 0.3 + (z * torch.arange(1.0, 5.0, dtype=torch.float64)).sum()


gx, gw = grad(fmisc(x, w), (x, w), create_graph=True)
vx, vw = randn(4, 3), randn(5, 3)
hx, hw, hbnw = grad((gx * vx).sum() + (gw * vw).sum(), (x, w, bnw))
cases["hvp_misc"] = {"x": t(x), "w": t(w), "bnw": t(bnw), "bnb": t(bnb), "idx": t(idx.double()), "xz": t(xz),
                     "vx": t(vx), "vw": t(vw), "gx": t(gx), "gw": t(gw), "hx": t(hx), "hw": t(hw), "hbnw": t(hbnw)}

with open(OUT, "w") as fh:
    json.dump(cases, fh)
