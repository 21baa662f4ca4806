"""Times in PyTorch 1.13 (2 threads) what ember's BenchmarkUnbindBackward
(root package) and BenchmarkLSTMSeq (nn) time: backward through unbind of
a [4000, 64, 32] tensor whose pieces are summed, and a one-layer LSTM
(32 -> 64, batch 16) forward and backward over L = 1000 and 4000 steps.

    /usr/bin/python3 bench/torch_multiout.py
"""
import time

import torch

torch.set_num_threads(2)
torch.manual_seed(1)


def best(f, n=3):
    f()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts)


x = torch.randn(4000, 64, 32, requires_grad=True)


def unbind():
    torch.stack([p.sum() for p in x.unbind(0)]).sum().backward()
    x.grad = None


print("unbind [4000,64,32] fwd+bwd: %.1f ms" % (best(unbind) * 1e3))

m = torch.nn.LSTM(32, 64)
for L in (1000, 4000):
    xs = torch.randn(L, 16, 32)

    def lstm():
        out, _ = m(xs)
        out.sum().backward()

    print("LSTM L=%d fwd+bwd: %.1f ms" % (L, best(lstm) * 1e3))
