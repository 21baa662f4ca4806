"""Generate PyTorch 1.13 reference values and gradients for ember's second
set of small tensor ops (smallops_elem.go, smallops_reduce.go,
smallops_index.go; the op-table rows are covered by gen_fixtures.py's
table.json). Run with /usr/bin/python3:
    /usr/bin/python3 testdata/gen_smallops2_fixtures.py
Writes testdata/fixtures/smallops/smallops2.json in the format of
gen_smallops_fixtures.py (whose case() and enc() it reuses): a list of
  {"op", "args", "inputs": [T...], "outputs": [T...], "w": [T|null...],
   "grads": [T|null...]}
Inputs of a floating dtype require grad; the gradients are those of
sum(out_i * w_i) over the floating outputs that require grad.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_smallops_fixtures as g  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "smallops", "smallops2.json")
nan, inf = float("nan"), float("inf")
T, case = g.T, g.case
L = torch.int64


def main():
    torch.manual_seed(11)
    r = torch.randn(3, 4, dtype=torch.float64)
    r3 = torch.randn(2, 3, 4, dtype=torch.float64)
    ties = T([[2., 1., 2., 2.], [3., 3., 1., 1.], [5., 5., 5., 5.]])
    withnan = T([[1., nan, 3., 0.], [nan, 2., nan, -1.], [4., 2., 2., 1.]])

    # ---- elementwise
    hx = T([-1.5, -0.0, 0.0, 2.0, nan, inf, -inf])
    case("heaviside", {}, [hx, T([0.5])], lambda a, b: torch.heaviside(a, b), grad=False)
    case("heaviside", {}, [hx.float(), T([[0.5], [-2.0]]).float()], lambda a, b: torch.heaviside(a, b), grad=False)
    case("heaviside", {}, [T([-3, 0, 4], L), T([7, 8, 9], L)], lambda a, b: torch.heaviside(a, b))
    case("heaviside", {}, [T([True, False], torch.bool), T([False, True], torch.bool)], lambda a, b: torch.heaviside(a, b))
    cx = T([1.0, 1.0001, nan, inf, -inf, inf, 0.0, 1e-9, 100.0])
    cy = T([1.0, 1.0, nan, inf, -inf, -inf, 1e-9, 0.0, 100.001])
    for rtol, atol, en in [(1e-5, 1e-8, False), (1e-5, 1e-8, True), (1e-3, 0.0, False), (0.0, 1e-8, True)]:
        case("isclose", {"rtol": rtol, "atol": atol, "equal_nan": en}, [cx, cy], lambda a, b: torch.isclose(a, b, rtol, atol, en), grad=False)
        case("isclose", {"rtol": rtol, "atol": atol, "equal_nan": en}, [cx.float(), cy.float()], lambda a, b: torch.isclose(a, b, rtol, atol, en), grad=False)
    case("isclose", {"rtol": 0.1, "atol": 1.0, "equal_nan": False}, [T([1, 10, 100, -5], L), T([2, 12, 111, -3], L)], lambda a, b: torch.isclose(a, b, 0.1, 1.0))
    case("isclose", {"rtol": 0.0, "atol": 1.0, "equal_nan": False}, [T([True, False], torch.bool), T([False, False], torch.bool)], lambda a, b: torch.isclose(a, b, 0.0, 1.0))
    case("isclose", {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False}, [T([[1.0], [2.0]]), T([1.0, 2.0, 3.0])], lambda a, b: torch.isclose(a, b))
    # NaN and infinities through logaddexp and fmax/fmin, with gradients
    la = T([inf, -inf, inf, 1.0, -inf, 1e300, 2.0, 0.5])
    lb = T([inf, -inf, -inf, nan, 3.0, 1e300, 2.0, -0.5])
    case("logaddexp", {}, [la, lb], lambda a, b: torch.logaddexp(a, b))
    case("logaddexp2", {}, [la, lb], lambda a, b: torch.logaddexp2(a, b))
    case("logaddexp", {}, [r, r[0]], lambda a, b: torch.logaddexp(a, b))
    case("logaddexp2", {}, [r.float(), r[1].float()], lambda a, b: torch.logaddexp2(a, b))
    fa = T([nan, 1.0, nan, 2.0, -0.0, 0.0, 3.0])
    fb = T([2.0, nan, nan, 2.0, 0.0, -0.0, -1.0])
    case("fmax", {}, [fa, fb], lambda a, b: torch.fmax(a, b))
    case("fmin", {}, [fa, fb], lambda a, b: torch.fmin(a, b))
    case("fmax", {}, [ties, ties[1]], lambda a, b: torch.fmax(a, b))
    case("fmin", {}, [T([1, 5, -3], L), T([2.5], torch.float32)], lambda a, b: torch.fmin(a, b))

    # ---- reductions
    for dims in [[], [0], [1], [0, 1], [-1, 0]]:
        for kd in [False, True]:
            case("amax", {"dims": dims, "keepdim": kd}, [ties], lambda a: torch.amax(a, dims, kd))
            case("amin", {"dims": dims, "keepdim": kd}, [ties], lambda a: torch.amin(a, dims, kd))
    case("amax", {"dims": [0, 2], "keepdim": False}, [r3], lambda a: torch.amax(a, [0, 2]))
    case("amin", {"dims": [1], "keepdim": True}, [withnan], lambda a: torch.amin(a, [1], True))
    case("amax", {"dims": [0], "keepdim": False}, [withnan], lambda a: torch.amax(a, [0]))
    case("amax", {"dims": [1], "keepdim": False}, [T([[3, 1], [-2, 7]], L)], lambda a: torch.amax(a, [1]))
    case("amin", {"dims": [0], "keepdim": False}, [T([[True, False], [True, True]], torch.bool)], lambda a: torch.amin(a, [0]))
    case("amax", {"dims": [1], "keepdim": False}, [torch.ones(0, 3, dtype=torch.float64)], lambda a: torch.amax(a, [1]))
    for d in [None, 0, 1, -1]:
        for kd in [False, True]:
            if d is None and kd:
                continue
            args = {"keepdim": kd} if d is None else {"dim": d, "keepdim": kd}
            case("aminmax", args, [withnan if d == 1 else ties], lambda a: torch.aminmax(a, dim=d, keepdim=kd), grad=False)
    case("aminmax", {"dim": 0, "keepdim": False}, [T([[4, -1], [2, 9]], L)], lambda a: torch.aminmax(a, dim=0))
    cz = T([[0., 1., nan], [0., 0., -2.], [3., 0., 0.]])
    for dims in [[], [0], [1], [0, 1]]:
        case("count_nonzero", {"dims": dims}, [cz], lambda a: torch.count_nonzero(a, dims))
    case("count_nonzero", {"dims": [1]}, [T([[True, False, True]], torch.bool)], lambda a: torch.count_nonzero(a, [1]))
    case("count_nonzero", {"dims": [0]}, [T([[0, 5], [0, -1]], torch.int32)], lambda a: torch.count_nonzero(a, [0]))
    for dims in [[], [0], [1], [0, 2]]:
        for corr in [1, 0, 2]:
            for kd in [False, True]:
                dd = dims if dims else None
                case("var_mean", {"dims": dims, "correction": corr, "keepdim": kd}, [r3], lambda a: torch.var_mean(a, dd, correction=corr, keepdim=kd))
                case("std_mean", {"dims": dims, "correction": corr, "keepdim": kd}, [r3.float()], lambda a: torch.std_mean(a, dd, correction=corr, keepdim=kd))
    ie = T([[1, 2, 3], [4, 5, 2]], L)
    for te in [T([2, 5, 9], L), T([[3], [3]], L), T([], L), T([2.0, 3.5]), T([4], torch.int32)]:
        for inv in [False, True]:
            case("isin", {"invert": inv}, [ie, te], lambda a, b: torch.isin(a, b, invert=inv))
    case("isin", {"invert": False}, [T([1.0, nan, -0.0, inf]), T([nan, 0.0, inf, 7.0])], lambda a, b: torch.isin(a, b), grad=False)
    case("isin", {"invert": False}, [T(3, L), T([[3, 4]], L)], lambda a, b: torch.isin(a, b))

    # ---- indexing
    idx = T([[0, 2, 1, 0], [1, 1, 0, 2], [2, 0, 0, 1]], L)
    case("take_along_dim", {"dim": 0}, [r, idx], lambda a, i: torch.take_along_dim(a, i, 0))
    case("take_along_dim", {"dim": 1}, [r, T([[3, 0], [1, 1], [2, 3]], L)], lambda a, i: torch.take_along_dim(a, i, 1))
    case("take_along_dim", {"dim": -1}, [r, T([[3, 0, 0]], L)], lambda a, i: torch.take_along_dim(a, i, -1))  # broadcast indices
    case("take_along_dim", {"dim": 1}, [r[:1], T([[3, 0], [1, 1], [2, 3]], L)], lambda a, i: torch.take_along_dim(a, i, 1))  # broadcast input
    case("take_along_dim", {}, [r, T([[11, 0], [5, 5]], L)], lambda a, i: torch.take_along_dim(a, i))
    case("take_along_dim", {"dim": 2}, [r3, torch.argsort(r3, 2)], lambda a, i: torch.take_along_dim(a, i, 2))
    src = T([[1.0, 2.0, 3.0, 4.0], [5.0, 0.0, 7.0, 8.0], [0.0, 3.0, 3.0, 0.0]])
    self = T([[9.0, -1.0, 2.0, 3.0], [0.5, 3.0, 0.0, 1.0], [4.0, 4.0, 4.0, 4.0]])
    sidx = T([[0, 1, 0, 2], [1, 1, 0, 2], [0, 0, 0, 0]], L)
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        for inc in [True, False]:
            a = {"dim": 1, "reduce": red, "include_self": inc}
            case("scatter_reduce", a, [self, sidx, src], lambda s, i, x: s.scatter_reduce(1, i, x, red, include_self=inc))
            a0 = {"dim": 0, "reduce": red, "include_self": inc}
            case("scatter_reduce", a0, [self, sidx[:2, :3], src[:2, :3].clone()], lambda s, i, x: s.scatter_reduce(0, i, x, red, include_self=inc))
            case("scatter_reduce", a, [T([[1, 2, 3, 4]], L), T([[0, 0, 3, 0]], L), T([[5, -6, 7, 3]], L)],
                 lambda s, i, x: s.scatter_reduce(1, i, x, red, include_self=inc))
        # ties and several zeros
        case("scatter_reduce", {"dim": 0, "reduce": red, "include_self": True}, [T([3.0, 0.0, 1.0]), T([0, 0, 1, 1, 2], L), T([3.0, 3.0, 0.0, 0.0, 5.0])],
             lambda s, i, x: s.scatter_reduce(0, i, x, red))
    case("scatter_reduce", {"dim": 0, "reduce": "amax", "include_self": False}, [T([3.0, 0.0]), T([0, 0, 1], L), T([nan, 3.0, 1.0])],
         lambda s, i, x: s.scatter_reduce(0, i, x, "amax", include_self=False))
    case("scatter_reduce", {"dim": 0, "reduce": "sum", "include_self": True}, [T([1.0, 2.0]), T([], L), T([])],
         lambda s, i, x: s.scatter_reduce(0, i, x, "sum"))
    for v in [-1.5, 7.0]:
        case("index_fill", {"dim": 1, "value": v}, [r, T([0, -1], L)], lambda a, i: a.index_fill(1, i, v))
    case("index_fill", {"dim": 0, "value": 2.0}, [r3, T([1], L)], lambda a, i: a.index_fill(0, i, 2.0))
    case("index_fill", {"dim": 0, "value": 3.0}, [T([1, 2, 3], L), T([2, 0], L)], lambda a, i: a.index_fill(0, i, 3))
    case("index_fill_", {"dim": 1, "value": 0.5}, [r, T([2, 2, 0], L)], lambda a, i: (a * 1).index_fill_(1, i, 0.5))
    case("index_copy", {"dim": 1}, [r, T([3, 0], L), torch.randn(3, 2, dtype=torch.float64)], lambda a, i, s: a.index_copy(1, i, s))
    case("index_copy", {"dim": 0}, [r3, T([1], L), torch.randn(1, 3, 4, dtype=torch.float64)], lambda a, i, s: a.index_copy(0, i, s))
    # a 0-dim source into a 1-D tensor at one index (torch's "source is scalar")
    case("index_copy", {"dim": 0}, [T([1.5, -2., 0.25, 3.]), T([2], L), T(7.5)], lambda a, i, s: a.index_copy(0, i, s))
    case("index_copy_", {"dim": 0}, [r, T([2, 0], L), torch.randn(2, 4, dtype=torch.float64)], lambda a, i, s: (a * 1).index_copy_(0, i, s))
    case("index_put", {"accumulate": False}, [r, T([0, 2], L), T([1, 3], L), T([10.0, 20.0])], lambda a, i, j, v: a.index_put((i, j), v))
    case("index_put", {"accumulate": True}, [r, T([0, 2, 0], L), T([1, 3, 1], L), T([10.0, 20.0, 30.0])], lambda a, i, j, v: a.index_put((i, j), v, accumulate=True))
    case("index_put", {"accumulate": True}, [r, T([[0], [2]], L), T([-1, 1], L), T([5.0])], lambda a, i, j, v: a.index_put((i, j), v, accumulate=True))
    case("index_put1", {"accumulate": False}, [r3, T([1, -2], L), T([1.0, 2.0, 3.0, 4.0])], lambda a, i, v: a.index_put((i,), v))
    case("index_put1", {"accumulate": True}, [r3, T([1, 1], L), T([[1.0], [2.0], [3.0]])], lambda a, i, v: a.index_put((i,), v, accumulate=True))
    case("index_put1", {"accumulate": False}, [r, T([[True, False, True, False], [False] * 4, [True, True, False, False]], torch.bool), T([7.0])],
         lambda a, m, v: a.index_put((m,), v))
    case("index_put1", {"accumulate": True}, [r, T([True, False, True], torch.bool), T([1.0, 2.0, 3.0, 4.0])],
         lambda a, m, v: a.index_put((m,), v, accumulate=True))
    case("index_put_", {"accumulate": True}, [r, T([0, 0], L), T([1, 1], L), T([1.0, 2.0])], lambda a, i, j, v: (a * 1).index_put_((i, j), v, accumulate=True))
    m = T([[True, False, True, False], [False, False, False, True], [True, True, False, False]], torch.bool)
    case("masked_scatter", {}, [r, m, torch.randn(2, 4, dtype=torch.float64)], lambda a, mm, s: a.masked_scatter(mm, s))
    case("masked_scatter", {}, [r, T([True, False, False, True], torch.bool), torch.randn(7, dtype=torch.float64)], lambda a, mm, s: a.masked_scatter(mm, s))
    case("masked_scatter", {}, [r[0], m, torch.randn(5, dtype=torch.float64)], lambda a, mm, s: a.masked_scatter(mm, s))  # self broadcast
    case("masked_scatter_", {}, [r, m, torch.randn(6, dtype=torch.float64)], lambda a, mm, s: (a * 1).masked_scatter_(mm, s))
    case("scatter_reduce_", {"dim": 1, "reduce": "amax", "include_self": True}, [self, sidx, src], lambda s, i, x: (s * 1).scatter_reduce_(1, i, x, "amax"))

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(g.cases, f, separators=(",", ":"))
    print(len(g.cases), "cases ->", OUT)


if __name__ == "__main__":
    main()
