#!/usr/bin/python3
"""Writes the fixtures for ember's weights, nn, vision/models and optim
packages into testdata/nn/.

Run with /usr/bin/python3 (PyTorch 1.13, CPU) from the repository root:

    /usr/bin/python3 testdata/gen_nn_fixtures.py

or, as the vision/models test does at test time, to write a full-size
ResNet-18 (.pth, .safetensors, input and output) into a directory:

    /usr/bin/python3 testdata/gen_nn_fixtures.py --resnet18-full DIR

torchvision is not required: the ResNet is built by hand with torchvision's
module layout and parameter names. safetensors files are written by hand
(the format is an 8-byte little-endian header length, a JSON header and the
raw little-endian data) when the safetensors package is absent.

Expected values go in JSON files as {"shape", "dtype", "data"} with the data
flat in row-major order.
"""

import argparse
import json
import math
import os
import struct

import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn")

ST_DT = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
    torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
    torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
}
JS_DT = {
    torch.float64: "float64", torch.float32: "float32", torch.float16: "float32",
    torch.bfloat16: "float32", torch.int64: "int64", torch.int32: "int32",
    torch.int16: "int32", torch.int8: "int32", torch.uint8: "int32", torch.bool: "bool",
}


def save_safetensors(path, tensors, metadata=None):
    """The safetensors format by hand: keys sorted, data packed in order."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs = []
    off = 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        if t.dtype == torch.bfloat16:
            b = t.view(torch.int16).numpy().tobytes()
        else:
            b = t.numpy().tobytes()
        header[name] = {"dtype": ST_DT[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)


def enc(t):
    t = t.detach()
    js_dt = JS_DT[t.dtype]
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    if t.dtype == torch.bool:
        data = [bool(v) for v in t.flatten().tolist()]
    elif t.dtype.is_floating_point:
        data = [float(v) for v in t.flatten().tolist()]
    else:
        data = [int(v) for v in t.flatten().tolist()]
    return {"shape": list(t.shape), "dtype": js_dt, "data": data}


def dump(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")


# ---------------------------------------------------------------- weights

def gen_weights():
    g = torch.Generator().manual_seed(1)
    base = torch.randn(4, 6, generator=g)
    sd = {
        "f32": torch.randn(2, 3, generator=g),
        "f64": torch.randn(3, dtype=torch.float64, generator=g),
        "i64": torch.tensor([-3, 0, 7, 2**40], dtype=torch.int64),
        "i32": torch.tensor([[1, -2], [3, 4]], dtype=torch.int32),
        "bool": torch.tensor([True, False, True]),
        "u8": torch.tensor([0, 1, 255], dtype=torch.uint8),
        "i8": torch.tensor([-128, 5, 127], dtype=torch.int8),
        "f16": torch.tensor([1.5, -0.000061035156, 65504.0, 2.0**-24], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -3.140625, 1e30], dtype=torch.bfloat16),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        # views share base's storage: a transpose and an offset slice
        "base": base,
        "base_t": base.t(),
        "base_slice": base[1:3, 2:5],
    }
    torch.save(sd, os.path.join(OUT, "weights.pth"))
    # a nested checkpoint with non-tensor values, as training scripts write
    ck = {"epoch": 3, "name": "x", "model": {"a.weight": sd["f32"]}, "opt": {"lr": 0.1}}
    torch.save(ck, os.path.join(OUT, "checkpoint.pth"))
    st = {k: v for k, v in sd.items() if not k.startswith("base_")}
    save_safetensors(os.path.join(OUT, "weights.safetensors"), st, {"format": "pt"})
    dump("weights.json", {k: enc(v) for k, v in sd.items()})


# ---------------------------------------------------------------- resnet

class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inp, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inp != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inp, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + idt)


class ResNet(nn.Module):
    """torchvision.models.resnet layout with a width option."""

    def __init__(self, layers, num_classes=1000, in_channels=3, width=64):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(in_channels, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make(width, layers[0], 1)
        self.layer2 = self._make(width * 2, layers[1], 2)
        self.layer3 = self._make(width * 4, layers[2], 2)
        self.layer4 = self._make(width * 8, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def _make(self, planes, blocks, stride):
        mods = [BasicBlock(self.inplanes, planes, stride)]
        self.inplanes = planes
        for _ in range(1, blocks):
            mods.append(BasicBlock(planes, planes))
        return nn.Sequential(*mods)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def perturb_bn(model, g):
    """Random BN affine parameters and running statistics so that eval mode
    is not the identity."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(1 + 0.2 * torch.randn(m.weight.shape, generator=g))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
                m.num_batches_tracked.fill_(7)


def write_resnet(outdir, prefix, width, num_classes, in_channels, hw, seed):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    model = ResNet([2, 2, 2, 2], num_classes, in_channels, width)
    perturb_bn(model, g)
    model.eval()
    x = torch.randn(2, in_channels, hw, hw, generator=g)
    with torch.no_grad():
        y = model(x)
    sd = model.state_dict()
    torch.save(sd, os.path.join(outdir, prefix + ".pth"))
    save_safetensors(os.path.join(outdir, prefix + ".safetensors"), dict(sd))
    save_safetensors(os.path.join(outdir, prefix + "_io.safetensors"), {"input": x, "output": y})


def gen_resnet():
    write_resnet(OUT, "resnet18_w4", width=4, num_classes=10, in_channels=3, hw=32, seed=3)


# ---------------------------------------------------------------- layers

def gen_layers():
    """Inputs, parameters and outputs of single layers and losses, in one
    safetensors file keyed "<case>.<tensor>"."""
    torch.manual_seed(11)
    F = torch.nn.functional
    T = {}

    def case(name, mod, x, **extra):
        for k, v in mod.state_dict().items():
            T[name + "." + k] = v.detach().clone()
        T[name + ".x"] = x
        with torch.no_grad():
            T[name + ".y"] = mod(x)
        for k, v in mod.state_dict().items():  # after forward (BN running stats)
            T[name + ".after." + k] = v.detach().clone()
        for k, v in extra.items():
            T[name + "." + k] = v

    case("linear", nn.Linear(5, 3), torch.randn(4, 5))
    case("conv", nn.Conv2d(3, 4, 3, stride=2, padding=1, dilation=2), torch.randn(2, 3, 9, 8))
    case("conv1x1", nn.Conv2d(3, 2, 1, bias=False), torch.randn(1, 3, 4, 4))
    bn = nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.weight.copy_(torch.randn(3))
        bn.bias.copy_(torch.randn(3))
    bn.train()
    case("bn2d_train", bn, torch.randn(4, 3, 5, 5) * 2 + 1)
    bn1 = nn.BatchNorm1d(6)
    with torch.no_grad():
        bn1.running_mean.copy_(torch.randn(6))
        bn1.running_var.copy_(torch.rand(6) + 0.5)
    bn1.eval()
    case("bn1d_eval", bn1, torch.randn(5, 6))
    ln = nn.LayerNorm([4, 3])
    with torch.no_grad():
        ln.weight.copy_(torch.randn(4, 3))
        ln.bias.copy_(torch.randn(4, 3))
    case("layernorm", ln, torch.randn(2, 4, 3))
    case("gelu", nn.GELU(), torch.randn(10) * 3)
    case("leakyrelu", nn.LeakyReLU(0.2), torch.randn(10))
    case("sigmoid", nn.Sigmoid(), torch.randn(10))
    case("tanh", nn.Tanh(), torch.randn(10))
    case("maxpool", nn.MaxPool2d(3, 2, 1), torch.randn(2, 2, 7, 6))
    case("avgpool", nn.AvgPool2d(3, 2, 1), torch.randn(2, 2, 7, 6))
    case("adaptive", nn.AdaptiveAvgPool2d((3, 2)), torch.randn(1, 2, 7, 5))
    emb = nn.Embedding(7, 3)
    T["embedding.weight"] = emb.weight.detach().clone()
    idx = torch.tensor([[0, 6, 2], [3, 3, 1]])
    T["embedding.x"] = idx
    T["embedding.y"] = emb(idx).detach()

    logits = torch.randn(6, 5)
    target = torch.tensor([0, 4, 2, 2, 1, 3])
    w = torch.rand(5) + 0.5
    T["loss.logits"], T["loss.target"], T["loss.weight"] = logits, target, w
    T["loss.ce"] = F.cross_entropy(logits, target)
    T["loss.ce_smooth"] = F.cross_entropy(logits, target, label_smoothing=0.1)
    T["loss.ce_weight_smooth"] = F.cross_entropy(logits, target, weight=w, label_smoothing=0.2)
    T["loss.ce_sum"] = F.cross_entropy(logits, target, reduction="sum")
    T["loss.nll"] = F.nll_loss(F.log_softmax(logits, 1), target)
    T["loss.nll_weight"] = F.nll_loss(F.log_softmax(logits, 1), target, weight=w)
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    T["loss.a"], T["loss.b"] = a, b
    T["loss.mse"] = F.mse_loss(a, b)
    yb = (torch.rand(3, 4) > 0.5).float()
    pw = torch.rand(4) + 0.5
    T["loss.bce_target"], T["loss.pos_weight"] = yb, pw
    T["loss.bce"] = F.binary_cross_entropy_with_logits(a * 5, yb)
    T["loss.bce_pw_none"] = F.binary_cross_entropy_with_logits(a * 5, yb, pos_weight=pw, reduction="none")
    save_safetensors(os.path.join(OUT, "layers.safetensors"), {k: v.detach().contiguous() for k, v in T.items()})


# ---------------------------------------------------------------- optim

def gen_optim():
    """Five steps of each optimizer from p0 with fixed gradients g0..g4, and
    learning-rate sequences of the schedules."""
    g = torch.Generator().manual_seed(21)
    p0 = torch.randn(3, 2, generator=g)
    grads = [torch.randn(3, 2, generator=g) for _ in range(5)]
    T = {"p0": p0}
    for i, gr in enumerate(grads):
        T["g%d" % i] = gr
    O = torch.optim
    configs = {
        "sgd": lambda q: O.SGD([q], lr=0.1),
        "sgd_momentum": lambda q: O.SGD([q], lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01),
        "sgd_nesterov": lambda q: O.SGD([q], lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
        "adam": lambda q: O.Adam([q], lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1),
        "adamw": lambda q: O.AdamW([q], lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05),
    }
    for name, mk in configs.items():
        q = p0.clone().requires_grad_(True)
        opt = mk(q)
        for i, gr in enumerate(grads):
            q.grad = gr.clone()
            opt.step()
            T["%s.p%d" % (name, i + 1)] = q.detach().clone()
    def lrs(mk, n):
        q = torch.zeros(1, requires_grad=True)
        opt = O.SGD([q], lr=0.1)
        sch = mk(opt)
        out = [opt.param_groups[0]["lr"]]
        for _ in range(n):
            opt.step()
            sch.step()
            out.append(opt.param_groups[0]["lr"])
        return torch.tensor(out, dtype=torch.float64)
    S = O.lr_scheduler
    T["steplr"] = lrs(lambda o: S.StepLR(o, 3, 0.5), 10)
    T["cosine"] = lrs(lambda o: S.CosineAnnealingLR(o, 8, 0.001), 8)
    T["onecycle"] = lrs(lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=20, cycle_momentum=False), 19)
    save_safetensors(os.path.join(OUT, "optim.safetensors"), T)


def small_cnn():
    """A small CNN covering the layers whose gradients ember's nn checks:
    conv (plain and grouped), BatchNorm2d, max, average and adaptive pools,
    LayerNorm, GELU and Linear."""
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, padding=1, groups=2, stride=1), nn.AvgPool2d(3, 1, 1), nn.AdaptiveAvgPool2d(2),
        nn.Flatten(), nn.LayerNorm(24), nn.Linear(24, 8), nn.GELU(), nn.Linear(8, 5))


def gen_cnn_grad():
    """One forward/backward of small_cnn with cross entropy (the loss, the
    parameter gradients) and the parameters and buffers after two SGD steps
    (momentum 0.9, weight decay 5e-4, lr 0.1) on the same batch."""
    torch.manual_seed(11)
    m = small_cnn()
    g = torch.Generator().manual_seed(12)
    with torch.no_grad():  # LayerNorm starts at 1/0: make its gradient non-trivial
        m[8].weight.add_(0.3 * torch.randn(24, generator=g))
        m[8].bias.add_(0.3 * torch.randn(24, generator=g))
    x = torch.randn(3, 2, 8, 8, generator=g)
    y = torch.tensor([1, 4, 0])
    T = {"x": x, "target": y}
    for k, v in m.state_dict().items():
        T["init." + k] = v.clone()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    for step in range(2):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(m(x), y)
        loss.backward()
        T["loss%d" % step] = loss.detach()
        if step == 0:
            for k, p in m.named_parameters():
                T["grad." + k] = p.grad.clone()
        opt.step()
    for k, v in m.state_dict().items():
        T["sgd2." + k] = v.clone()
    save_safetensors(os.path.join(OUT, "cnn_grad.safetensors"), {k: v.detach().contiguous() for k, v in T.items()})


def gen_activations():
    """The activation layers added through the op table (nn/zz_activations.go):
    inputs and outputs in testdata/nn/activations.safetensors, keyed
    "<case>.x" and "<case>.y"."""
    torch.manual_seed(12)
    T = {}
    x = torch.cat([torch.linspace(-6, 6, 25), torch.randn(15) * 3])
    for name, mod in [
        ("silu", nn.SiLU()), ("softplus", nn.Softplus()), ("softplus_b2_t1", nn.Softplus(2.0, 1.0)),
        ("mish", nn.Mish()), ("hardswish", nn.Hardswish()), ("hardsigmoid", nn.Hardsigmoid()),
        ("elu", nn.ELU()), ("elu_a05", nn.ELU(0.5)), ("gelu_tanh", nn.GELU(approximate="tanh")),
    ]:
        T[name + ".x"] = x
        with torch.no_grad():
            T[name + ".y"] = mod(x)
    save_safetensors(os.path.join(OUT, "activations.safetensors"), T)


def gen_embedding():
    """nn.Embedding with and without padding_idx and clip_grad_norm_ /
    clip_grad_value_: testdata/nn/embedding.safetensors. Keys: "<case>.weight"
    (the initial table), ".idx", ".gout" (the output's gradient), ".y" and
    ".grad" (the weight's gradient); "clip.*" the gradients before and after
    clipping and the total norms."""
    torch.manual_seed(14)
    T = {}
    for name, pad in [("plain", None), ("pad1", 1), ("pad_neg", -2)]:
        e = nn.Embedding(10, 4, padding_idx=pad)
        idx = torch.randint(0, 10, (3, 5))
        idx[0, 0], idx[1, 2] = 1, 8  # the padding rows are looked up
        y = e(idx)
        gout = torch.randn(y.shape)
        (y * gout).sum().backward()
        T[name + ".weight"] = e.weight.detach().clone()
        T[name + ".idx"] = idx
        T[name + ".gout"] = gout
        T[name + ".y"] = y.detach()
        T[name + ".grad"] = e.weight.grad
    g1, g2 = torch.randn(3, 4), torch.randn(5)
    T["clip.g1"], T["clip.g2"] = g1, g2
    for name, mx, nt in [("l2", 1.5, 2.0), ("l1", 2.0, 1.0), ("inf", 0.5, float("inf")), ("big", 100.0, 2.0)]:
        ps = [torch.zeros(3, 4, requires_grad=True), torch.zeros(5, requires_grad=True)]
        ps[0].grad, ps[1].grad = g1.clone(), g2.clone()
        tot = torch.nn.utils.clip_grad_norm_(ps, mx, nt)
        T["clip." + name + ".total"] = tot.reshape(1)
        T["clip." + name + ".g1"], T["clip." + name + ".g2"] = ps[0].grad, ps[1].grad
    ps = [torch.zeros(3, 4, requires_grad=True)]
    ps[0].grad = g1.clone()
    torch.nn.utils.clip_grad_value_(ps, 0.5)
    T["clip.value.g1"] = ps[0].grad
    save_safetensors(os.path.join(OUT, "embedding.safetensors"), T)


# ---------------------------------------------------------------- transformer

class LlamaRMSNorm(nn.Module):
    """Llama's RMSNorm in plain torch (PyTorch 1.13 has no nn.RMSNorm):
    x · rsqrt(mean(x²) + eps) · weight over the last dim."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        y = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return y.type_as(x) * self.weight

    def extra_repr(self):  # PyTorch 2.4's nn.RMSNorm wording
        return "(%d,), eps=%s, elementwise_affine=True" % (self.weight.shape[0], self.eps)


def gen_transformer():
    """nn.MultiheadAttention, nn.TransformerEncoderLayer/DecoderLayer, their
    stacks and Llama's RMSNorm: testdata/nn/transformer.safetensors, keys
    "<case>.<tensor>": "<case>.sd.<key>" the module's state dict (every
    parameter perturbed so that no bias is zero and no norm is the
    identity), the inputs and masks, "<case>.y" (and ".w", the attention
    weights), and for the gradient cases ".gout" (the output's gradient)
    with ".grad.<input>" and ".grad.sd.<key>". The forward passes run with
    grad enabled and the modules in eval mode (no dropout), which keeps
    PyTorch off its fused fast paths (their outputs at padded positions
    differ). testdata/nn/transformer_encoder.pth is the "encstack" state
    dict as torch.save writes it."""
    torch.manual_seed(31)
    T = {}
    E, H, N, L, S = 8, 2, 3, 4, 6

    def perturb(m):
        with torch.no_grad():
            for p in m.parameters():
                p.add_(0.2 * torch.randn(p.shape))
        m.eval()
        return m

    def save_sd(name, m):
        for k, v in m.state_dict().items():
            T[name + ".sd." + k] = v.detach().clone()

    def grads(name, out, inputs, m, extra=0):
        gout = torch.randn(out.shape)
        T[name + ".gout"] = gout
        m.zero_grad()
        for v in inputs.values():
            v.grad = None
        ((out * gout).sum() + extra).backward()
        for k, v in inputs.items():
            T[name + ".grad." + k] = v.grad.clone()
        for k, p in m.named_parameters():
            T[name + ".grad.sd." + k] = p.grad.clone()

    def leaf(*shape):
        return torch.randn(*shape).requires_grad_(True)

    def causal_float(n):
        return nn.Transformer.generate_square_subsequent_mask(n)

    def kpm(n, s):  # True: padding; never a whole row
        m = torch.zeros(n, s, dtype=torch.bool)
        m[0, -2:] = True
        m[-1, -1] = True
        return m

    def bool_mask(*shape):  # True: masked out; keep key 0 for every query
        m = torch.rand(*shape) < 0.4
        m[..., 0] = False
        return m

    # MultiheadAttention: (name, constructor kwargs, inputs, masks, average, grad)
    x_sf = leaf(L, N, E)
    x_bf = leaf(N, L, E)
    mem_sf = leaf(S, N, E)
    mha_cases = [
        ("mha_self", dict(), dict(x=x_sf), dict(), True, True),
        ("mha_self_bf", dict(batch_first=True), dict(x=x_bf),
         dict(attn_mask=causal_float(L), key_padding_mask=kpm(N, L)), False, False),
        ("mha_cross", dict(), dict(q=leaf(L, N, E), kv=mem_sf),
         dict(attn_mask=bool_mask(L, S), key_padding_mask=kpm(N, S)), True, True),
        ("mha_kvdim", dict(kdim=5, vdim=7, batch_first=True), dict(q=leaf(N, L, E), k=leaf(N, S, 5), v=leaf(N, S, 7)),
         dict(attn_mask=torch.randn(N * H, L, S)), False, True),
        ("mha_nobias", dict(bias=False), dict(q=leaf(L, N, E), k=leaf(S, N, E), v=leaf(S, N, E)),
         dict(attn_mask=bool_mask(N * H, L, S), key_padding_mask=kpm(N, S)), True, False),
        ("mha_floatkpm", dict(batch_first=True), dict(q=leaf(N, L, E), kv=leaf(N, S, E)),
         dict(key_padding_mask=torch.randn(N, S)), True, False),
        ("mha_float_bool", dict(), dict(x=leaf(L, N, E)),
         dict(attn_mask=torch.randn(L, L), key_padding_mask=kpm(N, L)), True, False),
        ("mha_unbatched", dict(), dict(q=leaf(L, E), kv=leaf(S, E)),
         dict(attn_mask=bool_mask(L, S), key_padding_mask=torch.tensor([False, False, True, False, False, True])), False, False),
        ("mha_dropout_eval", dict(dropout=0.3, batch_first=True), dict(x=x_bf), dict(), True, False),
    ]
    for name, kw, ins, masks, avg, grad in mha_cases:
        m = perturb(nn.MultiheadAttention(E, H, **kw))
        save_sd(name, m)
        for k, v in ins.items():
            T[name + "." + k] = v.detach().clone()
        for k, v in masks.items():
            T[name + "." + k] = v
        if "x" in ins:
            q = k = v = ins["x"]
        elif "kv" in ins:
            q, k, v = ins["q"], ins["kv"], ins["kv"]
        else:
            q, k, v = ins["q"], ins["k"], ins["v"]
        y, w = m(q, k, v, need_weights=True, average_attn_weights=avg, **masks)
        T[name + ".y"], T[name + ".w"] = y.detach(), w.detach()
        if grad:
            grads(name, y, ins, m)
    # gradients through the returned weights too
    m = perturb(nn.MultiheadAttention(E, H))
    save_sd("mha_wgrad", m)
    x = leaf(L, N, E)
    T["mha_wgrad.x"] = x.detach().clone()
    y, w = m(x, x, x, need_weights=True, average_attn_weights=False, attn_mask=causal_float(L))
    T["mha_wgrad.attn_mask"] = causal_float(L)
    T["mha_wgrad.y"], T["mha_wgrad.w"] = y.detach(), w.detach()
    gw = torch.randn(w.shape)
    T["mha_wgrad.gw"] = gw
    grads("mha_wgrad", y, dict(x=x), m, extra=(w * gw).sum())

    # encoder layers: (name, kwargs, x, masks, grad)
    enc_cases = [
        ("enc_post_relu", dict(), leaf(L, N, E), dict(), True),
        ("enc_pre_gelu_bf", dict(norm_first=True, activation="gelu", batch_first=True), leaf(N, L, E),
         dict(src_mask=causal_float(L), src_key_padding_mask=kpm(N, L)), True),
        ("enc_post_bf_masks", dict(batch_first=True), leaf(N, L, E),
         dict(src_mask=bool_mask(L, L), src_key_padding_mask=kpm(N, L)), False),
        ("enc_pre_relu", dict(norm_first=True, layer_norm_eps=1e-6), leaf(L, N, E), dict(src_mask=torch.randn(N * H, L, L)), False),
    ]
    for name, kw, x, masks, grad in enc_cases:
        m = perturb(nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.1, **kw))
        save_sd(name, m)
        T[name + ".x"] = x.detach().clone()
        for k, v in masks.items():
            T[name + "." + k] = v
        y = m(x, **masks)
        T[name + ".y"] = y.detach()
        if grad:
            grads(name, y, dict(x=x), m)

    # decoder layers: (name, kwargs, tgt, memory, masks, grad)
    dec_cases = [
        ("dec_post_relu", dict(), leaf(L, N, E), leaf(S, N, E),
         dict(tgt_mask=causal_float(L), memory_key_padding_mask=kpm(N, S)), True),
        ("dec_pre_gelu_bf", dict(norm_first=True, activation="gelu", batch_first=True), leaf(N, L, E), leaf(N, S, E),
         dict(tgt_mask=bool_mask(L, L), memory_mask=torch.randn(L, S), tgt_key_padding_mask=kpm(N, L)), False),
    ]
    for name, kw, tgt, mem, masks, grad in dec_cases:
        m = perturb(nn.TransformerDecoderLayer(E, H, dim_feedforward=16, dropout=0.1, **kw))
        save_sd(name, m)
        T[name + ".tgt"], T[name + ".memory"] = tgt.detach().clone(), mem.detach().clone()
        for k, v in masks.items():
            T[name + "." + k] = v
        y = m(tgt, mem, **masks)
        T[name + ".y"] = y.detach()
        if grad:
            grads(name, y, dict(tgt=tgt, memory=mem), m)

    # the stacks (each layer perturbed on its own: the clones start equal)
    enc = perturb(nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, 16, batch_first=True), 2, norm=nn.LayerNorm(E)))
    save_sd("encstack", enc)
    torch.save(enc.state_dict(), os.path.join(OUT, "transformer_encoder.pth"))
    x = leaf(N, L, E)
    T["encstack.x"], T["encstack.mask"], T["encstack.src_key_padding_mask"] = x.detach().clone(), causal_float(L), kpm(N, L)
    T["encstack.y"] = enc(x, mask=causal_float(L), src_key_padding_mask=kpm(N, L)).detach()
    dec = perturb(nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, 16, norm_first=True), 2, norm=nn.LayerNorm(E)))
    save_sd("decstack", dec)
    tgt, mem = leaf(L, N, E), leaf(S, N, E)
    masks = dict(tgt_mask=causal_float(L), memory_mask=bool_mask(L, S), tgt_key_padding_mask=kpm(N, L),
                 memory_key_padding_mask=kpm(N, S))
    T["decstack.tgt"], T["decstack.memory"] = tgt.detach().clone(), mem.detach().clone()
    for k, v in masks.items():
        T["decstack." + k] = v
    T["decstack.y"] = dec(tgt, mem, **masks).detach()
    T["square_mask5"] = nn.Transformer.generate_square_subsequent_mask(5)

    # Llama's RMSNorm
    r = LlamaRMSNorm(E, eps=1e-6)
    with torch.no_grad():
        r.weight.add_(0.3 * torch.randn(E))
    x = leaf(2, 3, E)
    save_sd("rmsnorm", r)
    T["rmsnorm.x"] = x.detach().clone()
    y = r(x)
    T["rmsnorm.y"] = y.detach()
    grads("rmsnorm", y, dict(x=x), r)
    save_safetensors(os.path.join(OUT, "transformer.safetensors"), {k: v.detach().contiguous() for k, v in T.items()})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--resnet18-full", metavar="DIR")
    ap.add_argument("--cnn-grad", action="store_true", help="write only testdata/nn/cnn_grad.safetensors")
    ap.add_argument("--embedding", action="store_true", help="write only testdata/nn/embedding.safetensors")
    ap.add_argument("--transformer", action="store_true",
                    help="write only testdata/nn/transformer.safetensors and transformer_encoder.pth")
    a = ap.parse_args()
    if a.transformer:
        gen_transformer()
        return
    if a.embedding:
        gen_embedding()
        return
    if a.cnn_grad:
        gen_cnn_grad()
        return
    if a.resnet18_full:
        write_resnet(a.resnet18_full, "resnet18", width=64, num_classes=1000, in_channels=3, hw=64, seed=5)
        return
    os.makedirs(OUT, exist_ok=True)
    gen_weights()
    gen_resnet()
    gen_layers()
    gen_optim()
    gen_cnn_grad()
    gen_activations()
    gen_embedding()
    gen_transformer()


if __name__ == "__main__":
    main()
