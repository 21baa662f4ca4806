"""Generate PyTorch 1.13 reference values and gradients for ember's small
tensor ops (smallops.go, orderstats.go). Run with /usr/bin/python3:
    /usr/bin/python3 testdata/gen_smallops_fixtures.py
Writes testdata/fixtures/smallops/smallops.json (its own folder: the
conformance suite reads every testdata/fixtures/*.json): a list of cases
  {"op", "args", "inputs": [T...], "outputs": [T...], "w": [T|null...],
   "grads": [T|null...]}
where T is {"shape", "dtype", "data"} (NaN and infinities as the strings
"nan", "inf", "-inf"). Inputs of a floating dtype require grad; the
gradients are those of sum(out_i * w_i) over the floating outputs.
"""
import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "smallops", "smallops.json")
nan = float("nan")
inf = float("inf")


def enc(t):
    t = t.detach()
    dt = str(t.dtype).replace("torch.", "")
    data = []
    for v in t.reshape(-1).tolist():
        if isinstance(v, bool):
            data.append(1 if v else 0)
        elif isinstance(v, float) and math.isnan(v):
            data.append("nan")
        elif isinstance(v, float) and math.isinf(v):
            data.append("inf" if v > 0 else "-inf")
        else:
            data.append(v)
    return {"shape": list(t.shape), "dtype": dt, "data": data}


cases = []


def case(op, args, inputs, fn, grad=True):
    ins = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    outs = fn(*ins)
    if not isinstance(outs, (tuple, list)):
        outs = [outs]
    outs = list(outs)
    ws = []
    loss = None
    for i, o in enumerate(outs):
        if o.is_floating_point() and o.requires_grad:
            w = torch.linspace(0.5, 1.5 + 0.25 * i, o.numel(), dtype=o.dtype).reshape(o.shape) if o.numel() > 0 else torch.zeros(o.shape, dtype=o.dtype)
            ws.append(w)
            term = torch.where(torch.isnan(o), torch.zeros_like(o), o * w).sum()
            loss = term if loss is None else loss + term
        else:
            ws.append(None)
    grads = [None] * len(ins)
    if loss is not None:
        loss.backward()
        grads = [x.grad if x.grad is not None else (torch.zeros_like(x) if x.requires_grad else None) for x in ins]
    cases.append({
        "op": op, "args": {k: ("inf" if v == inf else v) for k, v in args.items()},
        "inputs": [enc(x) for x in inputs],
        "outputs": [enc(o) for o in outs],
        "w": [enc(w) if w is not None else None for w in ws],
        "grads": [enc(g) if g is not None else None for g in grads],
    })


def T(data, dtype=torch.float64):
    return torch.tensor(data, dtype=dtype)


def main():
    torch.manual_seed(7)
    r = torch.randn(3, 4, dtype=torch.float64)
    r3 = torch.randn(2, 3, 4, dtype=torch.float64)
    ties = T([[2., 1., 2., 2., 1.], [3., 3., 1., 1., 2.], [5., 5., 5., 5., 5.]])
    withnan = T([[1., nan, 3., 0.], [nan, 2., nan, -1.], [4., 2., 2., 1.]])
    ints = T([[3, 1, 3, 2], [0, 0, 5, 5]], torch.int64)

    # nonzero / argwhere
    for x in [T([[0., 1., 0.], [2., 0., nan]]), T([[[0, 3], [1, 0]], [[0, 0], [4, 4]]], torch.int64),
              T([True, False, True], torch.bool), T(3.), T(0.), torch.zeros(0, 3), T([0., -0.])]:
        case("nonzero", {}, [x], lambda x: torch.nonzero(x), grad=False)
        case("nonzero_tuple", {}, [x], lambda x: torch.nonzero(x, as_tuple=True), grad=False)
    # unique / unique_consecutive
    for x in [T([[3., 1., 2.], [1., 3., 3.]]), T([5, -1, 5, 2, -1, -1], torch.int64),
              T([True, False, True], torch.bool), torch.zeros(0), T(4.), T([-0., 0., 1.])]:
        case("unique", {}, [x], lambda x: torch.unique(x, sorted=True, return_inverse=True, return_counts=True), grad=False)
        case("unique_consecutive", {}, [x], lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True), grad=False)
    case("unique_consecutive", {}, [T([1., 1., 2., 2., 3., 1., 1., 2.])],
         lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True), grad=False)
    ud = T([[1, 0, 1], [2, 2, 2], [1, 0, 1], [0, 5, 0], [1, 0, 1]], torch.int64)
    for x, dims in [(ud, [0, 1, -1]), (T([[0.5, -1.], [0.5, -2.], [0.5, -1.]]), [0, 1]), (torch.zeros(0, 3), [0]),
                    (T([[[1., 1.], [0., 0.]], [[1., 1.], [0., 0.]]]), [0, 1, 2]), (T([True, False, True], torch.bool), [0])]:
        for d in dims:
            case("unique_dim", {"dim": d}, [x], lambda x: torch.unique(x, dim=d, return_inverse=True, return_counts=True), grad=False)
            case("unique_consecutive_dim", {"dim": d}, [x],
                 lambda x: torch.unique_consecutive(x, dim=d, return_inverse=True, return_counts=True), grad=False)
    # bincount
    b = T([4, 1, 1, 0, 4, 4], torch.int64)
    case("bincount", {"minlength": 0}, [b], lambda x: torch.bincount(x))
    case("bincount", {"minlength": 8}, [b], lambda x: torch.bincount(x, minlength=8))
    case("bincount", {"minlength": 2}, [b, T([.5, 1., 2., 3., 4., 5.], torch.float32)],
         lambda x, w: torch.bincount(x, weights=w, minlength=2), grad=False)
    case("bincount", {"minlength": 0}, [b, T([1, 2, 3, 4, 5, 6], torch.int64)],
         lambda x, w: torch.bincount(x, weights=w), grad=False)
    case("bincount", {"minlength": 0}, [torch.zeros(0, dtype=torch.int64)], lambda x: torch.bincount(x))
    case("bincount", {"minlength": 3}, [torch.zeros(0, dtype=torch.int64)], lambda x: torch.bincount(x, minlength=3))
    # repeat_interleave
    case("repeat_interleave", {"repeats": 2, "dim": 0}, [r], lambda x: torch.repeat_interleave(x, 2, dim=0))
    case("repeat_interleave", {"repeats": 3, "dim": -1}, [r], lambda x: torch.repeat_interleave(x, 3, dim=-1))
    case("repeat_interleave", {"repeats": 0, "dim": 1}, [r], lambda x: torch.repeat_interleave(x, 0, dim=1))
    case("repeat_interleave_t", {"dim": 1}, [r, T([1, 0, 3, 2], torch.int64)],
         lambda x, rep: torch.repeat_interleave(x, rep, dim=1))
    case("repeat_interleave_t", {"dim": 0}, [ints, T([2], torch.int64)],
         lambda x, rep: torch.repeat_interleave(x, rep, dim=0))
    case("repeat_interleave_t", {"dim": -3}, [r3, T(3, torch.int64)],
         lambda x, rep: torch.repeat_interleave(x, rep, dim=-3))
    # meshgrid
    a, bb, c = T([1., 2., 3.]), T([4., 5.]), T(6.)
    for ix in ["ij", "xy"]:
        case("meshgrid", {"indexing": ix}, [a, bb], lambda a, b: torch.meshgrid(a, b, indexing=ix))
        case("meshgrid", {"indexing": ix}, [a, bb, c], lambda a, b, c: torch.meshgrid(a, b, c, indexing=ix))
        case("meshgrid", {"indexing": ix}, [a], lambda a: torch.meshgrid(a, indexing=ix))
    # lerp
    s, e = r, torch.randn(3, 4, dtype=torch.float64)
    case("lerp", {}, [s, e, T([-0.5, 0.25, 0.5, 1.0])], lambda s, e, w: torch.lerp(s, e, w))
    case("lerp", {}, [T([1., 2.]), T([[3.], [5.]]), T([[0.75], [0.1]])], lambda s, e, w: torch.lerp(s, e, w))
    for w in [0.3, 0.5, 1.0, -2.0, 1.7]:
        case("lerp_scalar", {"weight": w}, [s, e], lambda s, e: torch.lerp(s, e, w))
    case("lerp_scalar", {"weight": 0.75}, [T([1e8, -3.], torch.float32), T([1., 7.], torch.float32)], lambda s, e: torch.lerp(s, e, 0.75))
    # trace, rot90, kron
    case("trace", {}, [r], lambda x: torch.trace(x))
    case("trace", {}, [r.t()], lambda x: torch.trace(x))
    case("trace", {}, [ints], lambda x: torch.trace(x))
    case("trace", {}, [torch.zeros(0, 3)], lambda x: torch.trace(x))
    for k, dims in [(1, [0, 1]), (2, [0, 1]), (3, [0, 1]), (-1, [0, 1]), (0, [0, 1]), (5, [1, 0]), (1, [-1, 0]), (1, [0, 2]), (2, [2, 1])]:
        x = r if max(dims) < 2 else r3
        case("rot90", {"k": k, "dims": dims}, [x], lambda x: torch.rot90(x, k, dims))
    case("kron", {}, [T([[1., 2.], [3., 4.]]), r], lambda a, b: torch.kron(a, b))
    case("kron", {}, [T([1., -2., 3.]), r3], lambda a, b: torch.kron(a, b))
    case("kron", {}, [ints, T([[1, 2]], torch.int64)], lambda a, b: torch.kron(a, b))
    case("kron", {}, [T(2.), T([1., 3.])], lambda a, b: torch.kron(a, b))

    # order statistics
    for x in [ties, withnan, r3, T([1., 2., 2., 3.]), T([nan, nan, 1.]), ints, T(5.), torch.zeros(0)]:
        case("median", {}, [x], lambda x: torch.median(x))
        case("nanmedian", {}, [x], lambda x: torch.nanmedian(x))
    for x, dims in [(ties, [1, 0, -1]), (withnan, [1, 0]), (r3, [1, 2]), (ints, [1, 0]), (T(2.), [0])]:
        for d in dims:
            for kd in [False, True]:
                case("median_dim", {"dim": d, "keepdim": kd}, [x], lambda x: torch.median(x, d, keepdim=kd))
                case("nanmedian_dim", {"dim": d, "keepdim": kd}, [x], lambda x: torch.nanmedian(x, d, keepdim=kd))
                case("mode", {"dim": d, "keepdim": kd}, [x], lambda x: torch.mode(x, d, keepdim=kd))
    case("nanmedian_dim", {"dim": 1, "keepdim": False}, [T([[nan, nan, nan], [nan, 1., nan]])], lambda x: torch.nanmedian(x, 1))
    long_ties = T([[3., 1., 3., 1., 2., 1., 3., 2., 2., 1., 3., 2., 1., 2., 3., 1., 2., 3., 1., 2., 3., 3., 1.],
                   [0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0.]])
    for x, ks, dims in [(ties, [1, 2, 3, 5], [1]), (withnan, [1, 2, 4], [1]), (withnan, [1, 3], [0]), (r3, [2], [1, -1]),
                        (ints, [1, 2, 3, 4], [1]), (long_ties, [1, 5, 12, 23], [1]), (T(3.), [1], [0])]:
        for k in ks:
            for d in dims:
                for kd in [False, True]:
                    case("kthvalue", {"k": k, "dim": d, "keepdim": kd}, [x], lambda x: torch.kthvalue(x, k, d, keepdim=kd))
    case("median_dim", {"dim": 1, "keepdim": False}, [long_ties], lambda x: torch.median(x, 1))
    case("mode", {"dim": 1, "keepdim": False}, [long_ties], lambda x: torch.mode(x, 1))
    g = torch.Generator().manual_seed(3)
    many = torch.randint(0, 4, (6, 40), generator=g).double()
    many[0, ::7] = nan
    case("mode", {"dim": 1, "keepdim": False}, [many], lambda x: torch.mode(x, 1))
    case("mode", {"dim": 0, "keepdim": True}, [many.t().contiguous().long()], lambda x: torch.mode(x, 0, keepdim=True))
    case("kthvalue", {"k": 17, "dim": 1, "keepdim": False}, [many], lambda x: torch.kthvalue(x, 17, 1))
    case("median_dim", {"dim": 1, "keepdim": False}, [many], lambda x: torch.median(x, 1))
    case("nanmedian_dim", {"dim": 1, "keepdim": False}, [many], lambda x: torch.nanmedian(x, 1))
    for interp in ["linear", "lower", "higher", "midpoint", "nearest"]:
        for qv in [0.0, 0.25, 0.5, 0.9, 1.0]:
            case("quantile_scalar", {"q": qv, "interpolation": interp}, [r3], lambda x: torch.quantile(x, qv, interpolation=interp))
        q = T([0.1, 0.5, 0.625, 1.0])
        case("quantile", {"dim": 1, "keepdim": False, "interpolation": interp}, [r3, q],
             lambda x, q: torch.quantile(x, q, dim=1, interpolation=interp))
        case("quantile", {"dim": -1, "keepdim": True, "interpolation": interp}, [r3, q],
             lambda x, q: torch.quantile(x, q, dim=-1, keepdim=True, interpolation=interp))
        case("quantile", {"keepdim": True, "interpolation": interp}, [r, q],
             lambda x, q: torch.quantile(x, q, keepdim=True, interpolation=interp))
        case("quantile", {"dim": 1, "keepdim": False, "interpolation": interp}, [withnan, T(0.4)],
             lambda x, q: torch.quantile(x, q, dim=1, interpolation=interp))
        case("nanquantile", {"dim": 1, "keepdim": False, "interpolation": interp}, [withnan, T([0.4, 0.5])],
             lambda x, q: torch.nanquantile(x, q, dim=1, interpolation=interp))
        case("nanquantile", {"dim": 0, "keepdim": True, "interpolation": interp}, [T([[nan, 1.], [nan, 2.], [nan, 4.]]), T(0.3)],
             lambda x, q: torch.nanquantile(x, q, dim=0, keepdim=True, interpolation=interp))
    case("quantile", {"dim": 0, "keepdim": False, "interpolation": "nearest"}, [T([0., 1., 2., 3., 4.]), T([0.125, 0.375, 0.625, 0.875])],
         lambda x, q: torch.quantile(x, q, dim=0, interpolation="nearest"))
    case("quantile", {"interpolation": "linear"}, [T([1., 2., 3.], torch.float32), T([0.3, 0.7], torch.float32)],
         lambda x, q: torch.quantile(x, q))
    for x in [withnan, r3, ints]:
        for d in [None, 1, -1]:
            for kd in [False, True]:
                args = {"keepdim": kd} if d is None else {"dim": d, "keepdim": kd}
                if d is None:
                    case("nansum", args, [x], lambda x: torch.nansum(x, dim=(), keepdim=kd) if kd else torch.nansum(x))
                else:
                    case("nansum", args, [x], lambda x: torch.nansum(x, dim=d, keepdim=kd))
                if x.is_floating_point():
                    if d is None:
                        case("nanmean", args, [x], lambda x: torch.nanmean(x, dim=(), keepdim=kd) if kd else torch.nanmean(x))
                    else:
                        case("nanmean", args, [x], lambda x: torch.nanmean(x, dim=d, keepdim=kd))
    case("nanmean", {"dim": 1, "keepdim": False}, [T([[nan, nan], [1., nan]])], lambda x: torch.nanmean(x, dim=1))

    # searchsorted / bucketize
    seq = T([1., 2., 2., 3., 5.])
    vals = T([[0., 1., 2.], [2.5, 5., 6.], [nan, 3., -inf]])
    for right in [False, True]:
        case("searchsorted", {"right": right}, [seq, vals], lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        case("searchsorted", {"right": right}, [T([[1., 3., 5.], [2., 2., 4.]]), T([[3., 0.], [2., 4.5]])],
             lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        case("searchsorted", {"right": right}, [seq, T(2.)], lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        case("searchsorted", {"right": right}, [T([1, 3, 3, 7], torch.int64), T([3., 2.5, 8.])],
             lambda s, v: torch.searchsorted(s, v, side="right" if right else "left"), grad=False)
        case("searchsorted_sorter", {"right": right}, [T([5., 1., 3., 2.]), T([2., 4., 0.]), T([1, 3, 2, 0], torch.int64)],
             lambda s, v, so: torch.searchsorted(s, v, right=right, sorter=so), grad=False)
        case("searchsorted", {"right": right}, [torch.zeros(0), T([1.])], lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        # short sequences that are not truly sorted (a NaN inside, unsorted
        # integers): PyTorch's answer is its binary search's, not a count
        case("searchsorted", {"right": right}, [T([1., nan, 3., 5.]), T([0., 2., 4., 6., nan])], lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        case("searchsorted", {"right": right}, [T([[1., 3., nan, 5.], [nan, 0., 1., 2.]]), T([[0., 2., 4., 6.], [-1., 0.5, 1., nan]])], lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        case("searchsorted", {"right": right}, [T([3, 1, 2, 0], torch.int64), T([0, 1, 2, 3], torch.int64)], lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        long_seq = torch.cat([torch.sort(torch.randint(-50, 50, (199,), generator=torch.Generator().manual_seed(5)).double())[0], T([nan])])
        lv = torch.cat([torch.arange(-52., 53., 0.5, dtype=torch.float64), T([nan, inf, -inf])])
        case("searchsorted", {"right": right}, [long_seq, lv], lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        case("searchsorted", {"right": right}, [torch.stack([long_seq[:150], torch.arange(150.)]), torch.stack([lv[:20], T([-1., 0., 0.5, 149., 149.5, 150.] + [7.] * 14)])],
             lambda s, v: torch.searchsorted(s, v, right=right), grad=False)
        case("bucketize", {"right": right}, [T([[-60., 0.], [49., 3.5]]), long_seq[:100].contiguous()], lambda v, s: torch.bucketize(v, s, right=right), grad=False)
        case("bucketize", {"right": right}, [vals, seq], lambda v, s: torch.bucketize(v, s, right=right), grad=False)
    # cummax / cummin / logcumsumexp
    cm = T([[1., 3., 3., 2., 5., nan, 4., nan], [2., 2., 1., 1., 0., 0., 7., 7.]])
    for x, dims in [(cm, [1, 0, -1]), (r3, [1, 2]), (ints, [1]), (T([True, False, True], torch.bool), [0]), (T(2.), [0]), (torch.zeros(2, 0), [1])]:
        for d in dims:
            case("cummax", {"dim": d}, [x], lambda x: torch.cummax(x, d))
            case("cummin", {"dim": d}, [x], lambda x: torch.cummin(x, d))
    for x, dims in [(r3, [0, 1, -1]), (T([-1000., 0., 1000., -inf, 3.]), [0]), (T([-inf, -inf, 2.]), [0]), (T(2.), [0]),
                    (T([[1., 2.], [3., 4.]], torch.float32), [1]),
                    (torch.cat([torch.randn(1, 100, dtype=torch.float64) * 30, torch.full((1, 1), 200., dtype=torch.float64)], 1), [1]),
                    (torch.randn(300, 1, dtype=torch.float64) * 5, [0])]:
        for d in dims:
            case("logcumsumexp", {"dim": d}, [x], lambda x: torch.logcumsumexp(x, d))
    # histc
    h = T([0., 0.1, 0.2, 0.3, 0.9, 1., 1.5, -0.5, nan, 0.7, 0.3], torch.float32)
    for bins, lo, hi in [(4, 0., 1.), (3, 0., 0.), (10, 0., 1.), (5, -1., 2.), (7, 0.1, 0.9)]:
        case("histc", {"bins": bins, "min": lo, "max": hi}, [h.nan_to_num(0.0) if lo == hi else h],
             lambda x: torch.histc(x, bins, lo, hi), grad=False)
    case("histc", {"bins": 3, "min": 0., "max": 0.}, [T([2., 2.])], lambda x: torch.histc(x, 3), grad=False)
    case("histc", {"bins": 4, "min": 0., "max": 3.}, [r3], lambda x: torch.histc(x, 4, 0., 3.), grad=False)
    edges = torch.cat([torch.linspace(0, 1, 15), torch.linspace(-0.1, 1.1, 49), torch.rand(200, generator=torch.Generator().manual_seed(9))])
    for bins, lo, hi in [(7, 0., 1.), (14, 0., 1.), (3, 0.1, 0.7), (10, 0., 0.)]:
        case("histc", {"bins": bins, "min": lo, "max": hi}, [edges], lambda x: torch.histc(x, bins, lo, hi), grad=False)
        case("histc", {"bins": bins, "min": lo, "max": hi}, [edges.double()], lambda x: torch.histc(x, bins, lo, hi), grad=False)

    # cdist / cosine_similarity / pairwise_distance
    F = torch.nn.functional
    x1 = torch.randn(2, 4, 3, dtype=torch.float64)
    x2 = torch.randn(2, 5, 3, dtype=torch.float64)
    big1 = torch.randn(26, 2, dtype=torch.float64)
    big2 = torch.randn(3, 2, dtype=torch.float64)
    dup = torch.tensor([[1., 2.], [0., 0.], [1., 2.]], dtype=torch.float64)
    for p in [2.0, 1.0, 0.5, 3.0, 0.0, inf]:
        case("cdist", {"p": p, "mode": ""}, [x1, x2], lambda a, b: torch.cdist(a, b, p=p))
        case("cdist", {"p": p, "mode": ""}, [big1, big2], lambda a, b: torch.cdist(a, b, p=p))
    for mode in ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist", "use_mm_for_euclid_dist_if_necessary"]:
        case("cdist", {"p": 2.0, "mode": mode}, [x1, x2[:1]], lambda a, b: torch.cdist(a, b, compute_mode=mode))
        case("cdist", {"p": 2.0, "mode": mode}, [big1, big2], lambda a, b: torch.cdist(a, b, compute_mode=mode))
    case("cdist", {"p": 2.0, "mode": "donot_use_mm_for_euclid_dist"}, [dup, dup[:2].clone()],
         lambda a, b: torch.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"))
    case("cdist", {"p": 1.5, "mode": ""}, [dup, dup[:2].clone()], lambda a, b: torch.cdist(a, b, p=1.5))
    case("cdist", {"p": 2.0, "mode": "use_mm_for_euclid_dist"}, [dup, dup[:2].clone()],
         lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"))
    # the diagonal is float32 rounding left by the expansion, which depends
    # on the matmul's summation order: compared on the CPU only
    case("cdist", {"p": 2.0, "mode": "use_mm_for_euclid_dist", "cpu_only": True}, [T([[0.1, 0.2], [0.3, 0.7]], torch.float32), T([[0.1, 0.2], [0.3, 0.7]], torch.float32)],
         lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"))
    for p in [inf, 0.5, 1.0, 3.0, 0.0]:  # ties and zero differences
        case("cdist", {"p": p, "mode": ""}, [T([[0., 0.], [1., 2.]]), T([[1., 1.], [1., 2.], [-1., 1.]])], lambda a, b: torch.cdist(a, b, p=p))
    case("cdist", {"p": 2.0, "mode": ""}, [torch.randn(3, 2, dtype=torch.float32), torch.randn(1, 4, 2, dtype=torch.float32)],
         lambda a, b: torch.cdist(a, b))
    case("cdist", {"p": 2.0, "mode": ""}, [torch.zeros(0, 3, dtype=torch.float64), x2[0]], lambda a, b: torch.cdist(a, b))
    c1 = torch.randn(3, 4, dtype=torch.float64)
    c2 = torch.randn(3, 4, dtype=torch.float64)
    for dim in [1, 0, -1]:
        case("cosine_similarity", {"dim": dim, "eps": 1e-8}, [c1, c2], lambda a, b: F.cosine_similarity(a, b, dim=dim))
    case("cosine_similarity", {"dim": 1, "eps": 1e-8}, [c1, c2[:1]], lambda a, b: F.cosine_similarity(a, b))
    tiny = T([[1e-9, 0.], [0., 0.], [1e-5, 0.]])
    case("cosine_similarity", {"dim": 1, "eps": 1e-8}, [tiny, T([[1., 1.], [3., 4.], [2e-5, 1e-5]])], lambda a, b: F.cosine_similarity(a, b))
    case("cosine_similarity", {"dim": 0, "eps": 0.5}, [T([1., 2.]), T([3, 1], torch.int64)], lambda a, b: F.cosine_similarity(a, b, dim=0, eps=0.5))
    for p in [2.0, 1.0, 3.0, inf]:
        for kd in [False, True]:
            case("pairwise_distance", {"p": p, "eps": 1e-6, "keepdim": kd}, [c1, c2], lambda a, b: F.pairwise_distance(a, b, p=p, keepdim=kd))
    case("pairwise_distance", {"p": 2.0, "eps": 0.0, "keepdim": False}, [c1, c2[1]], lambda a, b: F.pairwise_distance(a, b, eps=0.0))
    case("pairwise_distance", {"p": 2.0, "eps": 1e-6, "keepdim": False}, [T([1, 2], torch.int64), T([1, 5], torch.int64)],
         lambda a, b: F.pairwise_distance(a, b))

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(cases, f, separators=(",", ":"))
    print(len(cases), "cases ->", OUT)


if __name__ == "__main__":
    main()
