"""Generate PyTorch 1.13 references for ember's GridSample and AffineGrid.

Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_gridsample_fixtures.py
Writes, in gen_grad_fixtures.py's format (outputs and the gradients of
sum(output * w) with respect to every float input):
  testdata/fixtures/grad/grad_grid_sample.json: every mode x padding mode x
    align_corners on 4-D input, bilinear and nearest on 5-D, float64 and
    (params.dtype "float32": PyTorch ran in float32 on the float64 inputs
    rounded) float32; grids hold random points inside and outside [-1, 1]
    and points exactly on the borders, the centre and pixel midpoints;
  testdata/fixtures/grad/grad_affine_grid.json: 2-D and 3-D, both
    align_corners, gradients with respect to theta;
and testdata/fixtures/grad/grid_sample_errors.json: the calls PyTorch
refuses, with the exception type and message.
"""
import json
import os
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_grad_fixtures as g  # noqa: E402

warnings.simplefilter("ignore")
torch.manual_seed(7)

# exact points: corners, borders, centre, and (for 4 and 5 pixels) pixel
# midpoints and centres under both align_corners conventions
SPECIAL = [-1.0, 1.0, 0.0, -0.5, 0.5, -0.75, 0.25, 0.6, -0.2, 1.5, -1.25, 2.0, -3.5, 0.4]


def make_grid(n, out, k):
    gr = (torch.rand(n, *out, k, dtype=torch.float64) * 2.8 - 1.4)
    flat = gr.view(-1)
    # about half the coordinates exact special values
    idx = torch.randperm(flat.numel())[: flat.numel() // 2]
    for j, i in enumerate(idx.tolist()):
        flat[i] = SPECIAL[j % len(SPECIAL)]
    return gr


def gs_case(in_shape, out, mode, pad, align, dtype="float64"):
    k = len(in_shape) - 2
    x = g.randn(*in_shape)
    grid = make_grid(in_shape[0], out, k)
    p = {"op": "grid_sample", "mode": mode, "padding_mode": pad, "align": align, "dtype": dtype}

    def fn(x, grid):
        if dtype == "float32":
            x, grid = x.float(), grid.float()
        return F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=align).double()

    return g.case(p, {"x": x, "grid": grid}, fn)


def grid_sample():
    cs = []
    for mode in ["bilinear", "nearest", "bicubic"]:
        for pad in ["zeros", "border", "reflection"]:
            for align in [False, True]:
                cs.append(gs_case((2, 3, 4, 5), (3, 4), mode, pad, align))
                cs.append(gs_case((1, 2, 1, 3), (2, 3), mode, pad, align))  # a one-pixel dim
    for mode in ["bilinear", "bicubic"]:
        for pad in ["zeros", "border", "reflection"]:
            cs.append(gs_case((2, 2, 5, 4), (3, 3), mode, pad, False, "float32"))
    for mode in ["bilinear", "nearest"]:
        for pad in ["zeros", "border", "reflection"]:
            for align in [False, True]:
                cs.append(gs_case((2, 2, 3, 4, 5), (2, 3, 2), mode, pad, align))
    return cs


def affine_grid():
    cs = []
    for size in [[2, 3, 4, 5], [1, 1, 3, 1], [2, 1, 2, 3, 4]]:
        k = len(size) - 2
        for align in [False, True]:
            theta = g.randn(size[0], k, k + 1)
            p = {"op": "affine_grid", "size": size, "align": align}
            cs.append(g.case(p, {"theta": theta},
                             lambda theta: F.affine_grid(theta, size, align_corners=align)))
    return cs


def errors():
    x = torch.randn(2, 3, 4, 5)
    gr = torch.rand(2, 3, 3, 2)
    calls = [
        ("grid_sample", [2, 3, 4, 5], [1, 3, 3, 2], {}),
        ("grid_sample", [2, 3, 4, 5], [2, 3, 3, 3], {}),
        ("grid_sample", [2, 3, 4, 5], [2, 3, 2], {}),
        ("grid_sample", [2, 3, 4], [2, 3, 1], {}),
        ("grid_sample", [2, 3, 4, 5, 6], [2, 3, 4, 3], {}),
        ("grid_sample", [2, 3, 4, 5, 6], [2, 3, 3, 3, 3], {"mode": "bicubic"}),
        ("grid_sample", [2, 3, 0, 5], [2, 3, 3, 2], {}),
        ("grid_sample", [2, 3, 4, 5], [2, 3, 3, 2], {"mode": "linear"}),
        ("grid_sample", [2, 3, 4, 5], [2, 3, 3, 2], {"padding_mode": "circular"}),
        ("affine_grid", [2, 3, 3], [2, 3, 4, 5], {}),
        ("affine_grid", [2, 3, 4], [2, 3, 4, 5], {}),
        ("affine_grid", [2, 2, 3], [2, 3, 4], {}),
        ("affine_grid", [2, 2, 3], [2, 3, 0, 5], {}),
        ("affine_grid", [2, 2, 3], [1, 3, 4, 5], {}),
    ]
    out = []
    for op, a, b, kw in calls:
        try:
            if op == "grid_sample":
                F.grid_sample(torch.randn(*a), torch.rand(*b), align_corners=False, **kw)
            else:
                F.affine_grid(torch.randn(*a), b, align_corners=False)
            raise SystemExit("PyTorch accepted %s %s %s" % (op, a, b))
        except (RuntimeError, ValueError, NotImplementedError) as e:
            out.append({"op": op, "a": a, "b": b, "params": kw, "type": type(e).__name__,
                        "msg": str(e).split("\n")[0]})
    del x, gr
    return out


if __name__ == "__main__":
    g.write("grid_sample", grid_sample())
    g.write("affine_grid", affine_grid())
    with open(os.path.join(g.OUT, "grid_sample_errors.json"), "w") as f:
        json.dump(errors(), f, indent=1)
