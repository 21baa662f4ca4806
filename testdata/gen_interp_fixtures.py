"""Generate PyTorch reference outputs and input gradients for ember's
interpolation (F.interpolate in every mode), pixel shuffle/unshuffle and
unfold/fold, and the messages of the calls PyTorch refuses.
Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_interp_fixtures.py
Writes testdata/fixtures/grad/grad_{interp,pixel_shuffle,fold}.json in
gen_grad_fixtures.py's format (params name the op and its arguments;
params.dtype "float32" means PyTorch ran the op in float32 on the
float64 input rounded, its result widened back) and
testdata/fixtures/grad/interp_errors.json (params, input shape, error
type and message), testdata/fixtures/grad/interp_half.json (two-byte
floats) and testdata/nn/resample.json (the nn layers' reprs and
outputs).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_grad_fixtures as g  # noqa: E402


def interp_case(shape, mode, size=None, scale=None, align=None, recompute=None, dtype="float64"):
    p = {"op": "interpolate", "mode": mode, "dtype": dtype}
    if size is not None:
        p["size"] = size if isinstance(size, list) else [size]
    if scale is not None:
        p["scale"] = scale if isinstance(scale, list) else [scale]
    if align:
        p["align"] = True
    if recompute:
        p["recompute"] = True

    def fn(x):
        sz = tuple(size) if isinstance(size, list) else size
        sc = tuple(scale) if isinstance(scale, list) else scale
        if dtype == "float32":
            x = x.float()
        y = F.interpolate(x, size=sz, scale_factor=sc, mode=mode, align_corners=align,
                          recompute_scale_factor=recompute)
        return y.double()

    x = g.randn(*shape)
    c = g.case(p, {"x": x}, fn)
    # PyTorch 1.13's backward is not always its forward's adjoint: where
    # the output size equals the input's (or is twice it, nearest) but a
    # scale factor set the forward's source indices, the backward copies
    # (or pairs) instead. The reference gradient is then the adjoint of
    # PyTorch's forward, built column by column from forward calls on
    # basis inputs, and params.grad says so.
    w = torch.tensor(c["w"]["data"], dtype=torch.float64)
    adj = torch.empty(x.numel(), dtype=torch.float64)
    with torch.no_grad():
        for k in range(x.numel()):
            e = torch.zeros(x.numel(), dtype=torch.float64)
            e[k] = 1
            adj[k] = (fn(e.view(shape)).reshape(-1) * w).sum()
    tol = 1e-4 if dtype == "float32" else 1e-9
    if not torch.allclose(adj, torch.tensor(c["grads"]["x"]["data"], dtype=torch.float64), rtol=tol, atol=tol):
        c["params"]["grad"] = "adjoint of the forward (PyTorch 1.13's backward differs)"
        c["grads"]["x"]["data"] = adj.tolist()
    return c


def interp():
    cs = []
    for mode in ["nearest", "nearest-exact"]:
        for shape, kw in [
            ((2, 3, 5), dict(size=7)), ((2, 3, 5), dict(size=3)), ((1, 2, 5), dict(scale=2.0)),
            ((1, 2, 5), dict(scale=1.5)), ((1, 2, 7), dict(scale=0.6)), ((1, 2, 3), dict(scale=1.3)),
            ((1, 2, 6), dict(scale=2.3, recompute=True)), ((1, 2, 7), dict(scale=1 / 3)),
            ((2, 2, 3, 4), dict(size=[5, 7])), ((1, 3, 5, 6), dict(size=[3, 2])),
            ((2, 1, 3, 4), dict(scale=[2.0, 0.5])), ((1, 2, 4, 5), dict(scale=1.7)),
            ((1, 2, 3, 4, 5), dict(scale=2.0)), ((2, 1, 2, 3, 4), dict(size=[3, 4, 5])),
            ((1, 1, 4, 3, 5), dict(scale=[0.5, 1.5, 0.7])),
        ]:
            cs.append(interp_case(shape, mode, **kw))
    for mode, shapes in [
        ("linear", [(2, 3, 5), (1, 2, 7)]),
        ("bilinear", [(2, 2, 4, 5), (1, 1, 7, 3)]),
        ("bicubic", [(2, 2, 4, 5), (1, 1, 7, 3)]),
        ("trilinear", [(2, 1, 3, 4, 5)]),
    ]:
        d = len(shapes[0]) - 2
        for align in [None, True]:
            for shape in shapes:
                for kw in [dict(size=[9, 8, 5][:d]), dict(size=[2, 3, 1][:d]), dict(scale=2.0),
                           dict(scale=[2.5, 0.4, 1.5][:d]), dict(scale=0.6), dict(scale=1.7, recompute=True),
                           dict(size=list(shape[2:]))]:
                    if "scale" in kw and shape[2] == 7 and kw["scale"] == 0.6 and mode != "linear":
                        continue
                    cs.append(interp_case(shape, mode, align=align, **kw))
            cs.append(interp_case((1, 1, *([1] * d)), mode, align=align, size=[3] * d))
            cs.append(interp_case((1, 1, *([4] * d)), mode, align=align, scale=1.1))  # out == in with a scale
    for shape, kw in [((2, 3, 7), dict(size=3)), ((2, 3, 5), dict(scale=1.6)), ((1, 2, 5, 7), dict(size=[3, 4])),
                      ((1, 2, 6, 7), dict(scale=[0.5, 2.0])), ((1, 2, 4, 5, 6), dict(size=[2, 3, 4])),
                      ((1, 1, 3, 4, 5), dict(scale=1.5))]:
        cs.append(interp_case(shape, "area", **kw))
    # float32: PyTorch's float32 source indices and weights
    for shape, mode, kw in [
        ((1, 1, 7), "nearest", dict(scale=1 / 3)), ((1, 1, 10), "nearest", dict(scale=0.3)),
        ((1, 1, 9), "nearest", dict(size=21)), ((1, 1, 13), "nearest-exact", dict(size=5)),
        ((1, 1, 10), "nearest-exact", dict(scale=2.9)), ((1, 2, 5, 6), "bilinear", dict(scale=1.7)),
        ((1, 2, 5, 6), "bilinear", dict(size=[11, 4], align=True)), ((1, 2, 5, 6), "bicubic", dict(scale=2.2)),
        ((1, 1, 6), "linear", dict(scale=0.7)),
    ]:
        cs.append(interp_case(shape, mode, dtype="float32", **kw))
    g.write("interp", cs)


def pixel_shuffle():
    cs = []
    for shape, r in [((2, 8, 3, 2), 2), ((9, 2, 3), 3), ((1, 2, 4, 5, 2), 1), ((2, 1, 12, 2, 2), 2)]:
        cs.append(g.case({"op": "pixel_shuffle", "r": r}, {"x": g.randn(*shape)}, lambda x: F.pixel_shuffle(x, r)))
    for shape, r in [((2, 2, 4, 6), 2), ((1, 6, 9), 3), ((3, 2, 1, 2, 4), 2)]:
        cs.append(g.case({"op": "pixel_unshuffle", "r": r}, {"x": g.randn(*shape)}, lambda x: F.pixel_unshuffle(x, r)))
    g.write("pixel_shuffle", cs)


def fold():
    cs = []
    for shape, k, d, p, s in [
        ((2, 3, 5, 6), [2, 2], [1, 1], [0, 0], [1, 1]),
        ((1, 2, 7, 6), [3, 2], [2, 1], [1, 2], [2, 3]),
        ((2, 5, 5), [3, 3], [1, 1], [1, 1], [2, 2]),
        ((1, 1, 4, 4), [1, 1], [1, 1], [0, 0], [1, 1]),
        ((1, 2, 4, 5), [4, 5], [1, 1], [0, 0], [1, 1]),
    ]:
        cs.append(g.case({"op": "unfold", "k": k, "d": d, "p": p, "s": s}, {"x": g.randn(*shape)},
                         lambda x: F.unfold(x, k, d, p, s)))
    for out, shape, k, d, p, s in [
        ([4, 5], (2, 12, 9), [2, 3], [1, 1], [0, 0], [1, 1]),
        ([5, 6], (1, 8, 6), [2, 2], [2, 1], [1, 0], [2, 3]),
        ([3, 3], (4, 6), [2, 1], [1, 1], [0, 0], [1, 1]),
        ([5, 5], (1, 9, 9), [3, 3], [1, 1], [1, 1], [2, 2]),
    ]:
        cs.append(g.case({"op": "fold", "out": out, "k": k, "d": d, "p": p, "s": s}, {"x": g.randn(*shape)},
                         lambda x: F.fold(x, out, k, d, p, s)))
    g.write("fold", cs)


def errors():
    es = []

    def err(params, shape, fn, dtype=torch.float64):
        try:
            fn(torch.zeros(shape, dtype=dtype))
        except Exception as e:  # noqa: BLE001
            es.append({"params": params, "shape": list(shape), "dtype": str(dtype)[6:], "type": type(e).__name__,
                       "msg": str(e)})
            return
        raise AssertionError("no error for %r" % (params,))

    def ip(shape, dtype=torch.float64, **kw):
        p = dict(kw)
        p["op"] = "interpolate"
        err(p, shape, lambda x: F.interpolate(x, **kw), dtype)

    ip((1, 1, 3, 3), size=4, mode="area", align_corners=True)
    ip((1, 1, 3, 3), size=4, mode="nearest", align_corners=True)
    ip((1, 1, 3, 3), size=4, scale_factor=2.0, mode="nearest")
    ip((1, 1, 3, 3), mode="nearest")
    ip((1, 1, 3, 3), size=[4, 4, 4], mode="nearest")
    ip((1, 1, 3, 3), scale_factor=[2.0, 2.0, 3.0], mode="nearest")
    ip((1, 1, 3, 3), size=4, recompute_scale_factor=True, mode="nearest")
    ip((1, 1, 3, 3), size=4, mode="foo")
    ip((1, 3), size=4, mode="nearest")
    ip((1, 1, 3, 3, 3, 3), size=4, mode="nearest")
    ip((1, 1, 3, 3, 3), size=4, mode="bicubic")
    ip((1, 1, 3), size=4, mode="bicubic")
    ip((1, 1, 3), size=4, mode="bilinear")
    ip((1, 1, 3), size=4, mode="trilinear")
    ip((1, 1, 3, 3), size=4, mode="linear")
    ip((1, 1, 3, 3), size=4, mode="trilinear")
    ip((1, 1, 3, 3, 3), size=4, mode="linear")
    ip((1, 1, 3, 3, 3), size=4, mode="bilinear")
    ip((1, 1, 3, 3), size=0, mode="bilinear")
    ip((1, 1, 3, 3), size=[2, -1], mode="nearest")
    ip((1, 1, 3, 3), scale_factor=0.1, mode="nearest")
    ip((1, 1, 3, 3), scale_factor=-1.0, mode="bilinear")
    ip((1, 1, 0, 3), size=4, mode="bilinear")
    ip((1, 1, 0, 3, 2), size=4, mode="nearest")
    ip((2, 0, 3), size=4, mode="linear")
    ip((2, 0, 3, 3), size=4, mode="nearest")
    ip((1, 1, 3), size=4, mode="linear", dtype=torch.int64)
    ip((1, 1, 3), size=4, mode="nearest", dtype=torch.int64)

    def ps(shape, r, un=False, dtype=torch.float64):
        f = F.pixel_unshuffle if un else F.pixel_shuffle
        err({"op": "pixel_unshuffle" if un else "pixel_shuffle", "r": r}, shape, lambda x: f(x, r), dtype)

    ps((3, 3), 2)
    ps((5, 3, 3), 2)
    ps((4, 3, 3), 0)
    ps((4, 3, 3), -1)
    ps((3, 3), 2, True)
    ps((1, 5, 4), 2, True)
    ps((1, 4, 3), 2, True)
    ps((1, 4, 4), 0, True)

    def uf(shape, k, d=1, p=0, s=1, dtype=torch.float64):
        err({"op": "unfold", "k": k, "d": d, "p": p, "s": s}, shape, lambda x: F.unfold(x, k, d, p, s), dtype)

    uf((3, 3), 2)
    uf((1, 2, 3, 3, 3), 2)
    uf((1, 2, 3, 3), 4)
    uf((1, 2, 3, 3), 0)
    uf((1, 2, 3, 3), 2, s=0)
    uf((1, 2, 3, 3), 2, d=0)
    uf((1, 2, 3, 3), 2, p=-1)
    uf((1, 0, 3, 3), 2)
    uf((1, 2, 0, 3), 2)
    uf((1, 2, 3, 3), 2, dtype=torch.int64)

    def fo(shape, out, k, d=1, p=0, s=1, dtype=torch.float64):
        err({"op": "fold", "out": out, "k": k, "d": d, "p": p, "s": s}, shape, lambda x: F.fold(x, out, k, d, p, s), dtype)

    fo((3,), (3, 3), 2)
    fo((1, 2, 3, 3), (3, 3), 2)
    fo((1, 7, 4), (3, 3), 2)
    fo((1, 8, 5), (3, 3), 2)
    fo((1, 8, 4), (1, 1), 2)
    fo((1, 8, 4), (3, 3), 0)
    fo((1, 8, 4), (3, 3), 2, s=0)
    fo((1, 8, 4), (3, 3), 2, d=0)
    fo((1, 8, 4), (3, 3), 2, p=-1)
    fo((1, 8, 4), (0, 3), 2)
    fo((1, 0, 4), (3, 3), 2)
    fo((1, 8, 0), (3, 3), 2)
    fo((1, 8, 4), (3, 3), 2, dtype=torch.int64)
    with open(os.path.join(g.OUT, "interp_errors.json"), "w") as f:
        json.dump(es, f, indent=0)


def modules():
    """testdata/nn/resample.json: the nn layers' reprs, and their outputs
    on arange inputs."""
    import torch.nn as nn
    reprs = {
        "upsample_scale": nn.Upsample(scale_factor=2),
        "upsample_size": nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
        "upsample_size1": nn.Upsample(size=5, mode="bicubic"),
        "upsample_scales": nn.Upsample(scale_factor=(2, 1.5)),
        "nearest2d": nn.UpsamplingNearest2d(scale_factor=2),
        "bilinear2d": nn.UpsamplingBilinear2d(size=(3, 4)),
        "pixel_shuffle": nn.PixelShuffle(2),
        "pixel_unshuffle": nn.PixelUnshuffle(3),
        "unfold": nn.Unfold(2),
        "unfold_hw": nn.Unfold((2, 3), dilation=1, padding=(1, 0), stride=2),
        "fold": nn.Fold((4, 5), 2),
        "fold_hw": nn.Fold(4, 2, stride=(1, 2)),
    }
    x = torch.arange(2 * 4 * 3 * 4, dtype=torch.float64).reshape(2, 4, 3, 4) / 10
    outs = {
        "upsample_scale": (list(x.shape), reprs["upsample_scale"](x)),
        "upsample_size": (list(x.shape), reprs["upsample_size"](x)),
        "bilinear2d_5x7": (list(x.shape), nn.UpsamplingBilinear2d(size=(5, 7))(x)),
        "nearest2d": (list(x.shape), reprs["nearest2d"](x)),
        "pixel_shuffle": (list(x.shape), reprs["pixel_shuffle"](x)),
        "unfold_hw": (list(x.shape), reprs["unfold_hw"](x)),
        "fold_hw": ([2, 8, 6], reprs["fold_hw"](torch.arange(2 * 8 * 6, dtype=torch.float64).reshape(2, 8, 6) / 10)),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "resample.json")
    with open(path, "w") as f:
        json.dump({"repr": {k: repr(v) for k, v in reprs.items()},
                   "outputs": {k: {"input_shape": s, "shape": list(y.shape), "data": y.reshape(-1).tolist()}
                               for k, (s, y) in outs.items()}}, f, sort_keys=True)
        f.write("\n")


def half():
    """testdata/fixtures/grad/interp_half.json: bfloat16 and float16 inputs
    (multiples of 1/16, exact in both) interpolate in float32 and round
    once, as ember documents; PyTorch computes that reference in float32
    and rounds it with .to(dtype)."""
    cs = []
    x = torch.randint(-64, 64, (1, 2, 5, 6), dtype=torch.float64) / 16
    for mode, kw in [("nearest", dict(scale_factor=1.7)), ("bilinear", dict(scale_factor=1.7)),
                     ("bicubic", dict(size=(7, 4))), ("bilinear", dict(size=(9, 11), align_corners=True)),
                     ("area", dict(size=(3, 4)))]:
        y = F.interpolate(x.float(), mode=mode, **kw)
        p = {"mode": mode}
        if "size" in kw:
            p["size"] = list(kw["size"])
        if "scale_factor" in kw:
            p["scale"] = [kw["scale_factor"]]
        if kw.get("align_corners"):
            p["align"] = True
        cs.append({"params": p, "input": g.t(x), "bfloat16": g.t(y.bfloat16().double()),
                   "float16": g.t(y.half().double())})
    with open(os.path.join(g.OUT, "interp_half.json"), "w") as f:
        json.dump(cs, f)


def main():
    torch.manual_seed(31)
    os.makedirs(g.OUT, exist_ok=True)
    interp()
    pixel_shuffle()
    fold()
    errors()
    modules()
    half()


if __name__ == "__main__":
    main()
