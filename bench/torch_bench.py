#!/usr/bin/env python3
"""The cases of `ember bench` (package bench) timed with PyTorch on the CPU.

Same case names, work counts and protocol: each case is set up outside the
timing, warmed up (up to 3 runs, stopping once 1 s has passed; --quick: 1),
then timed over N runs (N = round(2 s / the last warm-up run's time), 1..1000;
--quick: 1) and the median reported. Prints JSON in the layout
of `ember bench --json` on stdout, progress on stderr.

    /usr/bin/python3 bench/torch_bench.py --threads 2 [--quick] [--cases a,b]

Run it with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (bench/compare.sh
does): on this machine they slow PyTorch's GEMM about 1.7x.
"""
import argparse
import math
import datetime
import json
import os
import socket
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ELEM_N = 16 << 20


class BasicBlock(nn.Module):
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
    """torchvision.models.resnet18's layout (torchvision is not installed)."""

    def __init__(self, layers=(2, 2, 2, 2), num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make(64, layers[0], 1)
        self.layer2 = self._make(128, layers[1], 2)
        self.layer3 = self._make(256, layers[2], 2)
        self.layer4 = self._make(512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
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


def simple_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def conv_flops(n, cin, cout, oh, ow, kh, kw, groups=1):
    return 2.0 * n * cout * oh * ow * (cin // groups) * kh * kw


def resnet18_macs(h=224):
    """Same count as bench.ResNet18MACs (1.814e9 at 224)."""
    macs = 0.0

    def conv(cin, cout, k, stride):
        nonlocal h, macs
        h = (h + 2 * (k // 2) - k) // stride + 1
        macs += conv_flops(1, cin, cout, h, h, k, k) / 2

    conv(3, 64, 7, 2)
    h = (h + 2 - 3) // 2 + 1
    inp = 64
    for stage, planes in enumerate([64, 128, 256, 512]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            hin = h
            conv(inp, planes, 3, stride)
            conv(planes, planes, 3, 1)
            if stride != 1 or inp != planes:
                hd = (hin - 1) // stride + 1
                macs += conv_flops(1, inp, planes, hd, hd, 1, 1) / 2
            inp = planes
    return macs + 512 * 1000


def simple_cnn_macs():
    return (conv_flops(1, 1, 32, 28, 28, 3, 3) + conv_flops(1, 32, 64, 14, 14, 3, 3)) / 2 + 64 * 7 * 7 * 128 + 128 * 10


def sgemm(n):
    def setup():
        torch.manual_seed(1)
        a, b = torch.randn(n, n), torch.randn(n, n)
        flops = 2.0 * n ** 3
        return lambda: (torch.mm(a, b), flops)[1]
    return setup


def conv3x3():
    torch.manual_seed(1)
    x = torch.randn(8, 64, 56, 56)
    w = torch.randn(64, 64, 3, 3)
    b = torch.randn(64)
    flops = conv_flops(8, 64, 64, 56, 56, 3, 3)
    return lambda: (F.conv2d(x, w, b, 1, 1), flops)[1]


def sum16m():
    x = torch.rand(ELEM_N)
    return lambda: (x.sum(), 4.0 * ELEM_N)[1]


def axpb16m():
    x = torch.rand(ELEM_N)
    return lambda: (x * 2 + 1, 2 * 2 * 4.0 * ELEM_N)[1]


def cast16m_bf16():
    x = torch.rand(ELEM_N)
    return lambda: (x.to(torch.bfloat16), 6.0 * ELEM_N)[1]


def axpb16m_bf16():
    x = torch.rand(ELEM_N).to(torch.bfloat16)
    return lambda: (x * 2 + 1, 2 * 2 * 2.0 * ELEM_N)[1]


def sum16m_bf16():
    x = torch.rand(ELEM_N).to(torch.bfloat16)
    return lambda: (x.sum(), 2.0 * ELEM_N)[1]


def resnet18_fwd():
    torch.manual_seed(1)
    m = ResNet().eval()
    x = torch.randn(16, 3, 224, 224)
    flops = 2 * 16 * resnet18_macs(224)

    def run():
        with torch.no_grad():
            m(x)
        return flops
    return run


def export_resnet18_onnx(path):
    """The model of the onnx_resnet18 case (resnet18_fwd's: seed 1, eval) as
    torch.onnx.export writes it at opset 13, batch 16, 3×224×224."""
    torch.manual_seed(1)
    m = ResNet().eval()
    torch.onnx.export(m, (torch.randn(16, 3, 224, 224),), path, opset_version=13,
                      input_names=["input"], output_names=["logits"])


def onnx_resnet18():
    """onnx_resnet18's PyTorch side: the exported model run eagerly, i.e.
    resnet18_fwd (the same module, weights and input)."""
    return resnet18_fwd()


def cnn_train_step():
    torch.manual_seed(1)
    m = simple_cnn().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x = torch.randn(64, 1, 28, 28)
    y = torch.tensor([(i * 7) % 10 for i in range(64)], dtype=torch.int64)
    flops = 3 * 2 * 64 * simple_cnn_macs()

    def run():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return flops
    return run


def resnet18_finetune_step():
    """bench.resnet18FinetuneStep: the backbone frozen, a new 10-class head."""
    torch.manual_seed(1)
    m = ResNet(num_classes=10)
    for name, p in m.named_parameters():
        if not name.startswith("fc."):
            p.requires_grad_(False)
    m.train()
    opt = torch.optim.SGD(m.fc.parameters(), lr=0.01, momentum=0.9)
    batch = 32
    x = torch.randn(batch, 3, 64, 64)
    y = torch.tensor([(i * 7) % 10 for i in range(batch)], dtype=torch.int64)
    flops = 2 * batch * resnet18_macs(64) + 2 * 2 * batch * 512 * 10

    def run():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return flops
    return run


MNIST_EPOCH_STEPS = 16  # bench.MNISTEpochSteps


def mnist_epoch():
    """bench.mnistEpoch: MNIST_EPOCH_STEPS steps of ember train's CNN loop."""
    torch.manual_seed(1)
    m = simple_cnn().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 5 * 938, 0)
    batch = 64
    xs = torch.rand(MNIST_EPOCH_STEPS * batch, 1, 28, 28)
    ys = torch.tensor([i % 10 for i in range(MNIST_EPOCH_STEPS * batch)], dtype=torch.int64)
    flops = MNIST_EPOCH_STEPS * 3 * 2 * batch * simple_cnn_macs()

    def run():
        correct = 0
        for s in range(MNIST_EPOCH_STEPS):
            x = xs[s * batch:(s + 1) * batch].contiguous()
            y = ys[s * batch:(s + 1) * batch].contiguous()
            opt.zero_grad(set_to_none=True)
            out = m(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            opt.step()
            sched.step()
            loss.item()
            correct += int((out.argmax(1) == y).sum())
        return flops
    return run


def sdpa_causal():
    """Causal attention on [4, 12, 512, 64] float32, forward + backward: torch
    1.13 has no scaled_dot_product_attention, so the explicit
    softmax(QK^T/sqrt(d) + mask) V (ember's bench/attention.go counts the
    same FLOPs: 12*B*H*T^2*D/2)."""
    b, h, t, d = 4, 12, 512, 64
    torch.manual_seed(1)
    q, k, v = (torch.randn(b, h, t, d, requires_grad=True) for _ in range(3))
    mask = torch.zeros(t, t).masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
    g = torch.ones(b, h, t, d)
    flops = 12 * b * h * t * t * d / 2

    def run():
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d) + mask, dim=-1)
        (w @ v).backward(g)
        for x in (q, k, v):
            x.grad = None
        return flops
    return run


class TorchGPT(torch.nn.Module):
    """GPT-2 in plain torch (HF's GPT2LMHeadModel's computation: pre-norm
    blocks, tanh GELU, tied head), with its own KV cache: a list of (k, v)
    per layer that each step extends with torch.cat."""

    def __init__(self, vocab, n_pos, c, layers, heads):
        super().__init__()
        nn = torch.nn
        self.c, self.h = c, heads
        self.wte, self.wpe = nn.Embedding(vocab, c), nn.Embedding(n_pos, c)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            b = nn.Module()
            b.ln_1, b.ln_2 = nn.LayerNorm(c), nn.LayerNorm(c)
            b.c_attn, b.c_proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
            b.c_fc, b.mlp_proj = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
            self.blocks.append(b)
        self.ln_f = nn.LayerNorm(c)
        for p in self.parameters():
            if p.dim() >= 2:
                torch.nn.init.normal_(p, 0, 0.02)

    def forward(self, ids, cache=None, last_only=False):
        b, t = ids.shape
        past = 0 if not cache else cache[0][0].shape[2]
        x = self.wte(ids) + self.wpe(torch.arange(past, past + t))
        c, h = self.c, self.h
        d = c // h
        mask = None
        if t > 1:
            mask = torch.zeros(t, past + t).masked_fill(~torch.ones(t, past + t, dtype=torch.bool).tril(past), float("-inf"))
        new_cache = []
        for i, blk in enumerate(self.blocks):
            q, k, v = (z.view(b, t, h, d).transpose(1, 2) for z in blk.c_attn(blk.ln_1(x)).split(c, dim=2))
            if cache:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
            new_cache.append((k, v))
            w = q @ k.transpose(-2, -1) / math.sqrt(d)
            if mask is not None:
                w = w + mask
            y = (torch.softmax(w, -1) @ v).transpose(1, 2).reshape(b, t, c)
            x = x + blk.c_proj(y)
            x = x + blk.mlp_proj(torch.nn.functional.gelu(blk.c_fc(blk.ln_2(x)), approximate="tanh"))
        x = self.ln_f(x)
        if last_only:
            x = x[:, -1]
        return x @ self.wte.weight.T, new_cache


def gpt_fwd_flops(layers, c, v, t, past):
    attn = 2 * t * (past + (t + 1) / 2) * c * layers
    return 2 * (t * (layers * 12 * c * c + c * v) + attn)


def gpt2_small():
    torch.manual_seed(1)
    return TorchGPT(50257, 1024, 768, 12, 12).eval()


def prompt_ids(n, vocab):
    return torch.tensor([[(i * 7919 + 13) % vocab for i in range(n)]])


def gpt2_fwd():
    m = gpt2_small()
    ids = prompt_ids(128, 50257)

    def run():
        with torch.no_grad():
            m(ids)
        return gpt_fwd_flops(12, 768, 50257, 128, 0)
    return run


GPT2_DECODE_TOKENS = 32


def gpt2_decode():
    m = gpt2_small()
    with torch.no_grad():
        _, prefix = m(prompt_ids(128, 50257), last_only=True)

    def run():
        cache, nxt, work = prefix, torch.zeros(1, 1, dtype=torch.long), 0.0
        with torch.no_grad():
            for i in range(GPT2_DECODE_TOKENS):
                logits, cache = m(nxt, cache, last_only=True)
                nxt = logits.argmax(-1, keepdim=True)
                work += gpt_fwd_flops(12, 768, 50257, 1, 128 + i)
        return work
    return run


def gpt_train_step():
    batch, block, vocab = 32, 128, 256
    torch.manual_seed(1)
    m = TorchGPT(vocab, block, 128, 4, 4).train()
    decay = [p for p in m.parameters() if p.dim() >= 2]
    other = [p for p in m.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99), eps=1e-8)
    i = torch.arange(batch * block)
    x, y = (i * 31 % vocab).view(batch, block), (i * 31 + 1) % vocab

    def run():
        opt.zero_grad(set_to_none=True)
        logits, _ = m(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        loss.item()
        return 3 * batch * gpt_fwd_flops(4, 128, vocab, block, 0)
    return run


def bgemm(n):
    def setup():
        torch.manual_seed(1)
        a, b = torch.randn(n, n).bfloat16(), torch.randn(n, n).bfloat16()
        flops = 2.0 * n ** 3
        return lambda: (torch.mm(a, b), flops)[1]
    return setup


def resnet18_fwd_bf16():
    torch.manual_seed(1)
    m = ResNet().eval()
    x = torch.randn(16, 3, 224, 224)
    flops = 2 * 16 * resnet18_macs(224)

    def run():
        with torch.no_grad(), torch.autocast("cpu", torch.bfloat16):
            m(x)
        return flops
    return run


def cnn_train_step_amp():
    torch.manual_seed(1)
    m = simple_cnn().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x = torch.randn(64, 1, 28, 28)
    y = torch.tensor([(i * 7) % 10 for i in range(64)], dtype=torch.int64)
    flops = 3 * 2 * 64 * simple_cnn_macs()

    def run():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", torch.bfloat16):
            loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return flops
    return run


CASES = [(f"sgemm_{n}", "FLOP", sgemm(n)) for n in (256, 512, 1024, 2048)] + [
    ("conv3x3", "FLOP", conv3x3),
    ("sum_16M", "B", sum16m),
    ("axpb_16M", "B", axpb16m),
    ("cast_16M_bf16", "B", cast16m_bf16),
    ("axpb_16M_bf16", "B", axpb16m_bf16),
    ("sum_16M_bf16", "B", sum16m_bf16),
    ("resnet18_fwd", "FLOP", resnet18_fwd),
    ("cnn_train_step", "FLOP", cnn_train_step),
    ("resnet18_finetune_step", "FLOP", resnet18_finetune_step),
    ("mnist_epoch", "FLOP", mnist_epoch),
    ("sdpa_causal", "FLOP", sdpa_causal),
    ("gpt2_fwd", "FLOP", gpt2_fwd),
    ("gpt2_decode", "FLOP", gpt2_decode),
    ("gpt_train_step", "FLOP", gpt_train_step),
    ("onnx_resnet18", "FLOP", onnx_resnet18),
    ("bgemm_1024", "FLOP", bgemm(1024)),
    ("resnet18_fwd_bf16", "FLOP", resnet18_fwd_bf16),
    ("cnn_train_step_amp", "FLOP", cnn_train_step_amp),
]


def measure(name, unit, setup, quick, target=2.0, max_runs=1000):
    r = {"name": name, "unit": unit}
    try:
        run = setup()
        # warm up: up to 3 runs, stopping once 1 s has passed (bench.Measure's rule)
        start = time.perf_counter()
        for i in range(3):
            t0 = time.perf_counter()
            work = run()
            warm = time.perf_counter() - t0
            if quick or time.perf_counter() - start >= 1.0:
                break
        n = 1 if quick else max(1, min(max_runs, round(target / warm) if warm > 0 else max_runs))
        times = []
        for _ in range(n):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        times.sort()
        med = statistics.median(times)
        r.update(seconds=med, runs=n, work=work, rate=work / med / 1e9 if med > 0 else 0,
                 min=times[0], max=times[-1])
    except Exception as e:  # report, do not stop the other cases
        r["missing"] = f"failed: {e}"
    return r


def blas_library():
    """The BLAS library torch.mm runs on, read from this process's mappings."""
    a = torch.ones(8, 8)
    torch.mm(a, a)  # loads the BLAS if it is loaded lazily
    try:
        with open("/proc/self/maps") as f:
            libs = {l.split()[-1] for l in f if "blas" in l.lower() and "/" in l}
    except OSError:
        return "unknown"
    # libblas.so.3 is an alternatives link: name what it resolves to
    return ", ".join(sorted(os.path.realpath(x) for x in libs)) or "built in"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: os.cpu_count())")
    ap.add_argument("--quick", action="store_true", help="one timed run per case")
    ap.add_argument("--cases", default="", help="comma-separated cases (default: all)")
    ap.add_argument("--export-onnx", default="", metavar="PATH",
                    help="write onnx_resnet18's model to PATH with torch.onnx.export and exit")
    a = ap.parse_args()
    if a.export_onnx:
        export_resnet18_onnx(a.export_onnx)
        return
    threads = a.threads or os.cpu_count()
    torch.set_num_threads(threads)
    known = {c[0]: c for c in CASES}
    names = [n.strip() for n in a.cases.split(",") if n.strip()] if a.cases else [c[0] for c in CASES]
    blas = blas_library()
    print(f"PyTorch {torch.__version__}, {threads} threads, BLAS: {blas}", file=sys.stderr)
    if "libopenblas" not in blas and "mkl" not in blas:
        print("torch_bench: warning: torch.mm runs on a reference BLAS here; its sgemm rows are no baseline "
              "(Debian: apt-get install libopenblas0-pthread)", file=sys.stderr)
    results = []
    for n in names:
        if n not in known:
            if n.startswith("gonum_"):
                continue  # ember-only reference rows
            sys.exit(f"torch_bench: unknown case {n!r} (known: {', '.join(known)})")
        r = measure(*known[n], quick=a.quick)
        if "missing" in r:
            print(f"{n:20s} {r['missing']}", file=sys.stderr)
        else:
            unit = "GB/s" if r["unit"] == "B" else "GFLOP/s"
            print(f"{n:20s} {r['seconds'] * 1e3:10.2f}ms {r['rate']:9.2f} {unit} ({r['runs']} runs)", file=sys.stderr)
        results.append(r)
    json.dump({"framework": "pytorch", "version": torch.__version__, "threads": torch.get_num_threads(),
               "quick": a.quick, "host": socket.gethostname(),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "blas": blas,
               "openblas_env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ},
               "results": results}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
