"""Makes testdata/fixtures/half/backward_bf16.json: PyTorch 1.13's bfloat16
gradients of the activations whose backward kernels ember follows (CPU).

Run with /usr/bin/python3 from the repository root."""
import json

import torch
import torch.nn.functional as F

xs = torch.tensor([-5 + (i + 0.5) / 40 for i in range(400)], dtype=torch.float32).to(torch.bfloat16)
g = torch.tensor([-2 + i / 100 for i in range(400)], dtype=torch.float32).to(torch.bfloat16)
ops = {
    "silu": F.silu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "gelu": F.gelu,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "elu": F.elu,
    "softplus": F.softplus,
    "hardswish": F.hardswish,
}
out = {"torch": torch.__version__, "x": xs.float().tolist(), "g": g.float().tolist(), "grads": {}}
for name, f in ops.items():
    x = xs.clone().requires_grad_()
    f(x).backward(g)
    out["grads"][name] = x.grad.float().tolist()
with open("testdata/fixtures/half/backward_bf16.json", "w") as fh:
    json.dump(out, fh)
