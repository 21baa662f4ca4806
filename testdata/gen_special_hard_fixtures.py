"""PyTorch 1.13 values of the special functions at hard points (near ±1
for erfinv, subnormal arguments for lgamma, xlogy's y, logit, log and log10), where ember's kernels must
keep full precision. Run with /usr/bin/python3:
    /usr/bin/python3 testdata/gen_special_hard_fixtures.py
Writes testdata/fixtures/special/special_hard.json: a list of
  {"op", "dtype", "x": [...], "want": [...], "rtol"}
(xlogy's cases are xlogy(2, x); logit's are logit(x) without eps)
(NaN and infinities as the strings "nan", "inf", "-inf").
"""
import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "special", "special_hard.json")


def enc(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


cases = []


def add(op, fn, dtype, xs, rtol):
    x = torch.tensor(xs, dtype=dtype)
    cases.append({"op": op, "dtype": str(dtype).replace("torch.", ""), "x": [enc(v) for v in x.tolist()],
                  "want": [enc(v) for v in fn(x).tolist()], "rtol": rtol})


# erfinv near ±1: 1-y is exact there, erf(x)-y is not.
near1 = [0.999999, 1 - 1e-7, 1 - 1e-10, 1 - 1e-13, 1 - 1e-15, 1 - 2**-53, -(1 - 1e-15), -(1 - 1e-12), 0.75, -0.3, 1e-300]
add("erfinv", torch.erfinv, torch.float64, near1, 1e-4)
add("erfinv", torch.erfinv, torch.float32, [0.999999, 1 - 2**-24, -(1 - 2**-24), 0.99, -0.5], 1e-5)
# lgamma of subnormals: -log|x|.
sub = [5e-310, -5e-310, 1e-320, 2.2e-308, 1e-300, 4.9e-324]
add("lgamma", torch.lgamma, torch.float64, sub, 1e-12)
add("lgamma", torch.lgamma, torch.float32, [1e-40, -1e-40, 1e-45, 1e-38], 1e-6)

add("xlogy", lambda x: torch.xlogy(torch.full_like(x, 2), x), torch.float64, sub[:5], 1e-12)
add("logit", torch.logit, torch.float64, sub[:5], 1e-12)
add("log", torch.log, torch.float64, sub, 1e-12)
add("log10", torch.log10, torch.float64, sub, 1e-12)

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
