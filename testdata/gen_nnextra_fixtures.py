"""Generate PyTorch references for nn/nninit (torch.nn.init), nn.EmbeddingBag,
nn.ParametersToVector and the layers of nn/layers_more.go.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_nnextra_fixtures.py
Writes testdata/nn/nnextra.json with:
  init.gains: [nonlinearity, param or null, calculate_gain]
  init.fans: [shape, fan_in, fan_out, xavier_uniform bound (gain 1),
              kaiming_uniform bound (a=0, fan_in, leaky_relu),
              kaiming_normal std (a=0, fan_out, relu)]
  init.eye / init.dirac: shape (groups), torch's result
  init.orthogonal: the standard normal matrix orthogonal_ drew (recorded by
              reseeding), the shape, gain and torch's result
  init.trunc: the uniform [0, 1) draws trunc_normal_ used (reseeded), its
              arguments and torch's result (float64)
  embedding_bag: cases (weight, input, offsets, per_sample_weights, mode,
              padding_idx, include_last_offset) with the output and the
              gradients of sum(out * w), w = 1, 2, ... in out's shape
  layers: cases as testdata/nn/layers_extra.json (repr, output, input and
              parameter gradients, buffers after the forward)
"""
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "nnextra.json")
D = torch.float64


def flat(x):
    return x.detach().reshape(-1).tolist()


res = {}

# ---- init
gains = []
for name, p in [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
                ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
                ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
                ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("leaky_relu", 0), ("selu", None)]:
    gains.append([name, p, nn.init.calculate_gain(name, p)])
fans = []
for shape in [(3, 5), (4, 3, 2), (8, 4, 3, 3), (2, 6, 1, 2, 3), (1000, 400)]:
    t = torch.empty(shape)
    fi, fo = nn.init._calculate_fan_in_and_fan_out(t)
    xb = math.sqrt(3.0) * 1.0 * math.sqrt(2.0 / float(fi + fo))
    kb = math.sqrt(3.0) * nn.init.calculate_gain("leaky_relu", 0) / math.sqrt(fi)
    ks = nn.init.calculate_gain("relu", 0) / math.sqrt(fo)
    fans.append([list(shape), fi, fo, xb, kb, ks])
eye = []
for shape in [(3, 3), (2, 4), (4, 2)]:
    eye.append({"shape": list(shape), "out": flat(nn.init.eye_(torch.empty(shape)))})
dirac = []
for shape, g in [((4, 3, 3), 1), ((6, 2, 3, 4), 2), ((4, 4, 3, 3, 3), 2), ((2, 5, 2, 2), 1)]:
    dirac.append({"shape": list(shape), "groups": g, "out": flat(nn.init.dirac_(torch.empty(shape), g))})
orth = []
for shape, gain, seed in [((5, 3), 1.0, 1), ((3, 5), 2.0, 2), ((4, 2, 3), 1.0, 3), ((4, 4), 0.5, 4)]:
    rows = shape[0]
    cols = math.prod(shape) // rows
    torch.manual_seed(seed)
    a = torch.empty(rows, cols, dtype=D).normal_(0, 1)
    torch.manual_seed(seed)
    q = nn.init.orthogonal_(torch.empty(shape, dtype=D), gain)
    orth.append({"shape": list(shape), "gain": gain, "normal": flat(a), "out": flat(q)})
trunc = []
for mean, std, a, b, seed in [(0.0, 1.0, -2.0, 2.0, 5), (1.0, 0.5, 0.0, 1.5, 6), (-1.0, 2.0, -3.0, 4.0, 7)]:
    torch.manual_seed(seed)
    u = torch.empty(50, dtype=D).uniform_(0, 1)
    torch.manual_seed(seed)
    out = nn.init.trunc_normal_(torch.empty(50, dtype=D), mean, std, a, b)
    # the truncated distribution's mean and variance, for the moment tests
    al, be = (a - mean) / std, (b - mean) / std
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    Phi = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2
    Z = Phi(be) - Phi(al)
    tm = mean + std * (phi(al) - phi(be)) / Z
    tv = std * std * (1 + (al * phi(al) - be * phi(be)) / Z - ((phi(al) - phi(be)) / Z) ** 2)
    trunc.append({"mean": mean, "std": std, "a": a, "b": b, "uniform": flat(u), "out": flat(out),
                  "tmean": tm, "tvar": tv})
res["init"] = {"gains": gains, "fans": fans, "eye": eye, "dirac": dirac, "orthogonal": orth, "trunc": trunc}

# ---- EmbeddingBag
torch.manual_seed(0)
bags = []


def bag(mode, inp, offsets=None, psw=None, padding_idx=None, last=False, max_norm=None, num=6, dim=3, weight=None):
    m = nn.EmbeddingBag(num, dim, mode=mode, padding_idx=padding_idx, include_last_offset=last,
                        max_norm=max_norm).double()
    with torch.no_grad():
        m.weight.copy_(torch.randn(num, dim, dtype=D) if weight is None else torch.tensor(weight, dtype=D))
        if padding_idx is not None:
            m.weight[padding_idx] = 0
    w0 = flat(m.weight)
    inp = torch.tensor(inp, dtype=torch.long)
    off = torch.tensor(offsets) if offsets is not None else None
    p = torch.tensor(psw, dtype=D, requires_grad=True) if psw is not None else None
    out = m(inp, off, p)
    w = torch.arange(1, out.numel() + 1, dtype=D).reshape(out.shape)
    (out * w).sum().backward()
    c = {"mode": mode, "num": num, "dim": dim, "weight": w0, "input": flat(inp), "input_shape": list(inp.shape),
         "offsets": offsets, "padding_idx": padding_idx, "include_last_offset": last, "max_norm": max_norm,
         "out_shape": list(out.shape), "out": flat(out), "grad_weight": flat(m.weight.grad),
         "weight_after": flat(m.weight), "repr": repr(m)}
    if p is not None:
        c["psw"] = flat(p)
        c["grad_psw"] = flat(p.grad)
    bags.append(c)


# (torch 1.13's CPU kernels corrupt their heap on a 2-D input with
# include_last_offset, and mode max on an empty bag: there are no such
# cases; nn's tests check max's zeros for an empty bag by hand)
for mode in ["sum", "mean", "max"]:
    if mode != "max":
        bag(mode, [1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5])  # an empty bag
    bag(mode, [[1, 2, 4], [4, 3, 3], [0, 5, 1]])
    bag(mode, [1, 2, 4, 5, 4, 3], [0, 1, 4, 6], last=True)
    bag(mode, [1, 2, 2, 0, 2, 3], [0, 2, 3], padding_idx=2)  # an all-padding bag
bag("sum", [1, 2, 4, 5, 4, 3], [0, 3], psw=[0.5, -1.0, 2.0, 1.5, 0.25, 3.0])
bag("sum", [[1, 2], [2, 5]], psw=[[0.5, -1.0], [2.0, 1.5]], padding_idx=5)
bag("mean", [1, 2, 4, 5], [0, 2], max_norm=1.0)
bag("mean", [], [0, 0])
# max with ties (equal rows, a row twice in a bag): the gradient goes to
# the first position holding the max, not shared among the ties
bag("max", [0, 1, 0, 2, 1, 3, 3], [0, 3, 5], num=4, dim=2,
    weight=[[1.0, 2.0], [1.0, 2.0], [0.0, 5.0], [-1.0, 2.0]])
res["embedding_bag"] = bags

# ---- ParametersToVector
torch.manual_seed(1)
ps = [torch.randn(2, 3, dtype=D, requires_grad=True), torch.randn(4, dtype=D, requires_grad=True)]
v = nn.utils.parameters_to_vector(ps)
(v * torch.arange(1, v.numel() + 1, dtype=D)).sum().backward()
res["p2v"] = {"params": [flat(p) for p in ps], "shapes": [list(p.shape) for p in ps], "vec": flat(v),
              "grads": [flat(p.grad) for p in ps]}

# ---- layers
torch.manual_seed(2)
layers = []


def layer(name, params, m, inputs, train=True, same=None):
    """same: a differentiable function equal to m, for the gradients where
    torch 1.13 has no derivative (channel_shuffle)."""
    m = m.double()
    m.train(train)
    ins = [x.clone().double().requires_grad_(True) for x in inputs]
    pars = {k: flat(p) for k, p in m.named_parameters()}
    shapes = {k: list(p.shape) for k, p in m.named_parameters()}
    out = m(*ins)
    w = torch.arange(1, out.numel() + 1, dtype=D).reshape(out.shape)
    if same is not None:
        o2 = same(*ins)
        assert torch.equal(o2, out)
        (o2 * w).sum().backward()
    else:
        (out * w).sum().backward()
    layers.append({
        "layer": name, "params": params, "train": train, "repr": repr(m),
        "inputs": [{"shape": list(x.shape), "data": flat(x), "grad": flat(x.grad)} for x in ins],
        "parameters": {k: {"shape": shapes[k], "data": pars[k], "grad": flat(p.grad)} for k, p in m.named_parameters()},
        "buffers": {k: {"shape": list(b.shape), "data": flat(b)} for k, b in m.named_buffers()},
        "state_dict": list(m.state_dict().keys()),
        "out_shape": list(out.shape), "out": flat(out)})


kinks = torch.tensor([[-3.0, -1.0, -0.5, 0.0], [0.5, 1.0, 6.0, 7.0], [-2.0, 3.5, 2.0, 5.9]])
layer("hardtanh", {"min": -1.0, "max": 1.0}, nn.Hardtanh(), [kinks])
layer("hardtanh", {"min": -2.0, "max": 3.5}, nn.Hardtanh(-2.0, 3.5), [kinks])
layer("relu6", {}, nn.ReLU6(), [kinks])
layer("softmin", {"dim": 1}, nn.Softmin(1), [torch.randn(3, 4)])
layer("softmin", {"dim": 0}, nn.Softmin(0), [torch.randn(3, 4)])
layer("softmax2d", {}, nn.Softmax2d(), [torch.randn(2, 3, 2, 2)])
layer("softmax2d", {}, nn.Softmax2d(), [torch.randn(3, 2, 2)])
layer("unflatten", {"dim": 1, "sizes": [2, 3]}, nn.Unflatten(1, (2, 3)), [torch.randn(2, 6)])
layer("unflatten", {"dim": -1, "sizes": [2, -1]}, nn.Unflatten(-1, (2, -1)), [torch.randn(2, 3, 4)])


def shuffle(g):
    return lambda x: x.reshape(x.shape[0], g, x.shape[1] // g, *x.shape[2:]).transpose(1, 2).reshape(x.shape)


layer("channelshuffle", {"groups": 2}, nn.ChannelShuffle(2), [torch.randn(2, 6, 2)], same=shuffle(2))
layer("channelshuffle", {"groups": 3}, nn.ChannelShuffle(3), [torch.randn(1, 6, 2, 2)], same=shuffle(3))
layer("lrn", {"size": 2, "alpha": 1e-4, "beta": 0.75, "k": 1.0}, nn.LocalResponseNorm(2), [torch.randn(2, 5, 3)])
layer("lrn", {"size": 3, "alpha": 0.5, "beta": 0.6, "k": 2.0}, nn.LocalResponseNorm(3, 0.5, 0.6, 2.0), [torch.randn(2, 5, 3, 2)])
layer("lrn", {"size": 4, "alpha": 0.3, "beta": 1.0, "k": 1.5}, nn.LocalResponseNorm(4, 0.3, 1.0, 1.5), [torch.randn(1, 6, 2, 2, 2)])
for dims, shape in [(1, (2, 3, 5)), (1, (3, 4)), (2, (2, 3, 2, 3)), (2, (3, 2, 4))]:
    for affine, track, train in [(False, False, True), (True, False, True), (True, True, True), (False, True, False)]:
        cls = nn.InstanceNorm1d if dims == 1 else nn.InstanceNorm2d
        m = cls(3, affine=affine, track_running_stats=track)
        with torch.no_grad():
            if affine:
                m.weight.copy_(torch.randn(3))
                m.bias.copy_(torch.randn(3))
            if track:
                m.running_mean.copy_(torch.randn(3))
                m.running_var.copy_(torch.rand(3) + 0.5)
        layer("instancenorm%dd" % dims, {"affine": affine, "track": track, "n": 3,
                                          "running_mean": flat(m.running_mean) if track else None,
                                          "running_var": flat(m.running_var) if track else None},
              m, [torch.randn(*shape)], train=train)
        layers[-1]["buffers"] = {k: {"shape": list(b.shape), "data": flat(b)} for k, b in m.named_buffers()}
for shape in [(2, 3, 2, 3, 2), (3, 2, 2, 3)]:
    for affine, track, train in [(True, True, True), (False, True, False)]:
        m = nn.InstanceNorm3d(3, affine=affine, track_running_stats=track)
        with torch.no_grad():
            if affine:
                m.weight.copy_(torch.randn(3))
                m.bias.copy_(torch.randn(3))
            m.running_mean.copy_(torch.randn(3))
            m.running_var.copy_(torch.rand(3) + 0.5)
        layer("instancenorm3d", {"affine": affine, "track": track, "n": 3,
                                 "running_mean": flat(m.running_mean), "running_var": flat(m.running_var)},
              m, [torch.randn(*shape)], train=train)
        layers[-1]["buffers"] = {k: {"shape": list(b.shape), "data": flat(b)} for k, b in m.named_buffers()}
# LPPool: a window of zeros (its gradient is 0, not NaN), negative inputs
# with an odd norm (no negative sum: its NaN is not JSON), ceil_mode
z = torch.randn(2, 3, 7)
z[0, 0, :3] = 0
layer("lppool1d", {"p": 2.0, "k": 3, "s": 0, "ceil": False}, nn.LPPool1d(2, 3), [z])
layer("lppool1d", {"p": 3.0, "k": 2, "s": 1, "ceil": False}, nn.LPPool1d(3, 2, 1),
      [torch.tensor([[[0.5, -0.3, 1.0, 0.2, -0.1], [1.2, 0.4, -0.3, 0.9, 0.3]]])])  # negative inputs, positive sums
layer("lppool1d", {"p": 1.5, "k": 3, "s": 2, "ceil": True}, nn.LPPool1d(1.5, 3, 2, ceil_mode=True), [torch.rand(2, 2, 8) + 0.1])
z = torch.randn(1, 2, 5, 6)
z[0, 1, :2, :3] = 0
layer("lppool2d", {"p": 2.0, "k": [2, 3], "s": [0, 0], "ceil": False}, nn.LPPool2d(2, (2, 3)), [z])
layer("lppool2d", {"p": 1.5, "k": [2, 2], "s": [1, 2], "ceil": True}, nn.LPPool2d(1.5, 2, (1, 2), ceil_mode=True), [torch.rand(2, 1, 5, 5) + 0.1])
res["layers"] = layers

with open(OUT, "w") as f:
    json.dump(res, f)
print("wrote", OUT)
