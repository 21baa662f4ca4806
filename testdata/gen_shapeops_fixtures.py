"""Generate PyTorch 1.13 reference values and gradients for ember's shape,
stacking and small linear-algebra ops (stack_ops.go, linalg_ops.go). Run
with /usr/bin/python3:
    /usr/bin/python3 testdata/gen_shapeops_fixtures.py
Writes testdata/fixtures/shapeops/shapeops.json in the format of
gen_smallops_fixtures.py (whose enc and case it reuses): a list of cases
  {"op", "args", "inputs": [T...], "outputs": [T...], "w": [T|null...],
   "grads": [T|null...]}
Inputs of a floating dtype require grad; cpu_only marks the integer
matrix products (CUDA has none, in PyTorch either); the gradients are those of
sum(out_i * w_i) over the floating outputs.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_smallops_fixtures as g  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "shapeops", "shapeops.json")
nan = float("nan")
case = g.case


def T(data, dtype=torch.float64):
    return torch.tensor(data, dtype=dtype)


def main():
    g.cases.clear()
    torch.manual_seed(11)
    r3 = torch.randn(2, 3, 4, dtype=torch.float64)
    m = torch.randn(2, 3, dtype=torch.float64)
    v3 = torch.randn(3, dtype=torch.float64)
    s = T(1.5)

    # shape and stacking
    case("movedim", {"src": [0], "dst": [2]}, [r3], lambda x: torch.movedim(x, 0, 2))
    case("movedim", {"src": [0, 1], "dst": [-1, 0]}, [r3], lambda x: torch.movedim(x, (0, 1), (-1, 0)))
    case("movedim", {"src": [2, 0], "dst": [0, 1]}, [r3], lambda x: torch.movedim(x, (2, 0), (0, 1)))
    case("movedim", {"src": [0], "dst": [-1]}, [s], lambda x: torch.movedim(x, 0, -1))
    case("moveaxis", {"src": [-1], "dst": [0]}, [r3], lambda x: torch.moveaxis(x, -1, 0))
    case("swapaxes", {"d0": 0, "d1": -1}, [r3], lambda x: torch.swapaxes(x, 0, -1))
    case("swapdims", {"d0": 1, "d1": 2}, [r3], lambda x: torch.swapdims(x, 1, 2))
    case("expand_as", {}, [T([[1.], [2.], [3.]]), torch.zeros(3, 4, dtype=torch.float64)], lambda x, o: x.expand_as(o))
    case("broadcast_to", {"shape": [2, 3, 4]}, [T([[1.], [2.], [3.]])], lambda x: torch.broadcast_to(x, (2, 3, 4)))
    case("broadcast_to", {"shape": [2, -1, 4]}, [T([[1.], [2.], [3.]])], lambda x: torch.broadcast_to(x, (2, -1, 4)))
    case("broadcast_tensors", {}, [T([[1.], [2.], [3.]]), T([1., 2., 3., 4.]), T([[[5.]], [[6.]]])],
         lambda a, b, c: torch.broadcast_tensors(a, b, c))
    case("unflatten", {"dim": 1, "sizes": [3, 1]}, [r3], lambda x: x.unflatten(1, (3, 1)))
    case("unflatten", {"dim": -1, "sizes": [2, -1]}, [r3], lambda x: x.unflatten(-1, (2, -1)))
    case("hstack", {}, [v3, T([7., 8.])], lambda a, b: torch.hstack([a, b]))
    case("hstack", {}, [m, T([[1.], [2.]])], lambda a, b: torch.hstack([a, b]))
    case("hstack", {}, [s, T(2, torch.int64)], lambda a, b: torch.hstack([a, b]))
    case("vstack", {}, [v3, m], lambda a, b: torch.vstack([a, b]))
    case("vstack", {}, [T([1, 2, 3], torch.int64), T([[0.5, 1.5, 2.5]], torch.float32)], lambda a, b: torch.vstack([a, b]))
    case("row_stack", {}, [s, T([3.])], lambda a, b: torch.row_stack([a, b]))
    case("dstack", {}, [v3, T([[4., 5., 6.]])], lambda a, b: torch.dstack([a, b]))
    case("dstack", {}, [m, r3[:, :, :2]], lambda a, b: torch.dstack([a, b]))
    case("column_stack", {}, [v3, torch.randn(3, 2, dtype=torch.float64), T([9.])[0:1].expand(3).clone()], lambda a, b, c: torch.column_stack([a, b, c]))
    case("column_stack", {}, [s, T([2.])], lambda a, b: torch.column_stack([a, b]))
    x7 = torch.randn(7, 2, dtype=torch.float64)
    case("tensor_split", {"sections": 3, "dim": 0}, [x7], lambda x: torch.tensor_split(x, 3, 0))
    case("tensor_split", {"sections": 5, "dim": 1}, [m], lambda x: torch.tensor_split(x, 5, 1))
    case("tensor_split_at", {"indices": [2, 1, 5], "dim": 1}, [m], lambda x: torch.tensor_split(x, [2, 1, 5], 1))
    case("tensor_split_at", {"indices": [-1], "dim": -1}, [m], lambda x: torch.tensor_split(x, [-1], -1))
    case("tensor_split_at", {"indices": [], "dim": 0}, [m], lambda x: torch.tensor_split(x, [], 0))
    case("hsplit", {"sections": 3}, [m], lambda x: torch.hsplit(x, 3))
    case("hsplit", {"sections": 3}, [v3], lambda x: torch.hsplit(x, 3))
    case("hsplit_at", {"indices": [1, 4]}, [m], lambda x: torch.hsplit(x, [1, 4]))
    case("vsplit", {"sections": 2}, [m], lambda x: torch.vsplit(x, 2))
    case("vsplit_at", {"indices": [1]}, [r3], lambda x: torch.vsplit(x, [1]))
    case("dsplit", {"sections": 2}, [r3], lambda x: torch.dsplit(x, 2))
    case("dsplit_at", {"indices": [3, -1]}, [r3], lambda x: torch.dsplit(x, [3, -1]))
    for x in [s, v3, m, r3.reshape(1, 2, 3, 4)]:
        case("atleast_1d", {}, [x], torch.atleast_1d)
        case("atleast_2d", {}, [x], torch.atleast_2d)
        case("atleast_3d", {}, [x], torch.atleast_3d)
    case("ravel", {}, [r3.transpose(0, 2).contiguous()], lambda x: torch.ravel(x.transpose(0, 2)))
    case("fliplr", {}, [r3], torch.fliplr)
    case("flipud", {}, [v3], torch.flipud)
    case("tile", {"reps": [2]}, [m], lambda x: torch.tile(x, (2,)))
    case("tile", {"reps": [2, 1, 2]}, [v3], lambda x: torch.tile(x, (2, 1, 2)))
    case("tile", {"reps": []}, [m], lambda x: torch.tile(x, ()))

    # math
    case("diff", {"n": 1, "dim": -1, "pre": False, "app": False}, [r3], lambda x: torch.diff(x))
    case("diff", {"n": 2, "dim": 0, "pre": True, "app": True}, [torch.randn(3, 2, dtype=torch.float64), T([[1., 2.]]), T([[3., -1.], [0.5, 2.]])],
         lambda x, p, a: torch.diff(x, 2, 0, p, a))
    case("diff", {"n": 1, "dim": 1, "pre": True, "app": False}, [m, T([[1], [2]], torch.int64)], lambda x, p: torch.diff(x, 1, 1, prepend=p))
    case("diff", {"n": 2, "dim": 0, "pre": False, "app": False}, [T([1, 4, 9, 16], torch.int64)], lambda x: torch.diff(x, 2))
    case("diff", {"n": 1, "dim": 0, "pre": False, "app": False}, [T([True, False, False, True], torch.bool)], lambda x: torch.diff(x))
    case("diff", {"n": 5, "dim": -1, "pre": False, "app": False}, [m], lambda x: torch.diff(x, 5))
    case("diff", {"n": 0, "dim": -1, "pre": False, "app": False}, [m], lambda x: torch.diff(x, 0))
    a = torch.randn(2, 3, 4, dtype=torch.float64)
    b = torch.randn(3, 4, 5, dtype=torch.float64)
    case("tensordot", {"n": 2}, [a, b], lambda x, y: torch.tensordot(x, y, 2))
    case("tensordot", {"n": 0}, [v3, T([1., -2.])], lambda x, y: torch.tensordot(x, y, 0))
    case("tensordot_dims", {"da": [1, 0], "db": [0, 2]}, [a, torch.randn(3, 4, 2, dtype=torch.float64)],
         lambda x, y: torch.tensordot(x, y, ([1, 0], [0, 2])))
    case("tensordot_dims", {"da": [0, -1], "db": [1, 0]}, [torch.randn(1, 3, 4, dtype=torch.float64), torch.randn(4, 2, 5, dtype=torch.float64)],
         lambda x, y: torch.tensordot(x, y, ([0, -1], [1, 0])))
    case("tensordot_dims", {"da": [], "db": []}, [s, v3], lambda x, y: torch.tensordot(x, y, ([], [])))
    case("tensordot", {"n": 1, "cpu_only": True}, [T([1, 2, 3], torch.int64), T([[1, 0], [2, 1], [0, 5]], torch.int64)], lambda x, y: torch.tensordot(x, y, 1))
    m1, m2 = torch.randn(2, 3, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)
    case("addmm", {"beta": 0.5, "alpha": 2.0}, [torch.randn(4, dtype=torch.float64), m1, m2], lambda i, x, y: torch.addmm(i, x, y, beta=0.5, alpha=2.0))
    case("addmm", {"beta": 1.0, "alpha": 1.0}, [torch.randn(2, 4, dtype=torch.float64), m1, m2], lambda i, x, y: torch.addmm(i, x, y))
    case("addmm", {"beta": 0.0, "alpha": -1.5}, [T([[nan], [1.]]), m1, m2], lambda i, x, y: torch.addmm(i, x, y, beta=0.0, alpha=-1.5))
    case("addmm", {"beta": 2.0, "alpha": 1.0}, [T(3.), torch.randn(2, 0, dtype=torch.float64), torch.randn(0, 3, dtype=torch.float64)],
         lambda i, x, y: torch.addmm(i, x, y, beta=2.0))
    case("addmv", {"beta": 0.5, "alpha": 2.0}, [torch.randn(2, dtype=torch.float64), m1, v3], lambda i, x, y: torch.addmv(i, x, y, beta=0.5, alpha=2.0))
    case("addmv", {"beta": 1.0, "alpha": 1.0}, [T(2.), m1, v3], lambda i, x, y: torch.addmv(i, x, y))
    case("addbmm", {"beta": 0.5, "alpha": 2.0}, [torch.randn(2, 4, dtype=torch.float64), torch.randn(3, 2, 5, dtype=torch.float64), torch.randn(3, 5, 4, dtype=torch.float64)],
         lambda i, x, y: torch.addbmm(i, x, y, beta=0.5, alpha=2.0))
    case("addbmm", {"beta": 1.0, "alpha": 1.0}, [torch.randn(1, dtype=torch.float64), torch.randn(2, 3, 2, dtype=torch.float64), torch.randn(2, 2, 3, dtype=torch.float64)],
         lambda i, x, y: torch.addbmm(i, x, y))
    case("addr", {"beta": 0.5, "alpha": 2.0}, [torch.randn(3, 2, dtype=torch.float64), v3, T([1., -1.])], lambda i, x, y: torch.addr(i, x, y, beta=0.5, alpha=2.0))
    case("addr", {"beta": 1.0, "alpha": 1.0}, [torch.randn(2, dtype=torch.float64), v3, T([1., -1.])], lambda i, x, y: torch.addr(i, x, y))
    case("mv", {}, [m1, v3], torch.mv)
    case("dot", {}, [v3, T([1., 2., -3.])], torch.dot)
    case("dot", {"cpu_only": True}, [T([1, 2, 3], torch.int64), T([4, 5, 6], torch.int64)], torch.dot)
    case("vdot", {}, [v3, T([1., 2., -3.])], torch.vdot)
    case("inner", {}, [m, torch.randn(4, 2, 3, dtype=torch.float64)], torch.inner)
    case("inner", {}, [v3, T([1., 2., -3.])], torch.inner)
    case("inner", {}, [s, m], torch.inner)
    obs = torch.randn(3, 5, dtype=torch.float64)
    fw = T([1, 2, 0, 3, 1], torch.int64)
    aw = T([0.5, 1.0, 2.0, 0.25, 1.5])
    case("cov", {"correction": 1, "fw": False, "aw": False}, [obs], lambda x: torch.cov(x))
    case("cov", {"correction": 0, "fw": False, "aw": False}, [obs[0]], lambda x: torch.cov(x, correction=0))
    case("cov", {"correction": 1, "fw": True, "aw": False}, [obs, fw], lambda x, f: torch.cov(x, fweights=f))
    case("cov", {"correction": 1, "fw": False, "aw": True}, [obs, aw], lambda x, a: torch.cov(x, aweights=a))
    case("cov", {"correction": 2, "fw": True, "aw": True}, [obs, fw, aw], lambda x, f, a: torch.cov(x, correction=2, fweights=f, aweights=a))
    case("cov", {"correction": 1, "fw": False, "aw": False}, [T([[1, 2, 4], [3, 1, 0]], torch.int64)], lambda x: torch.cov(x))
    case("cov", {"correction": 3, "fw": False, "aw": False}, [T([[1., 2., 4.]])], lambda x: torch.cov(x, correction=3))
    case("corrcoef", {}, [obs], torch.corrcoef)
    case("corrcoef", {}, [T([[1, 2, 4], [3, 1, 0]], torch.int64)], torch.corrcoef)
    y = torch.randn(2, 4, dtype=torch.float64)
    xs = T([0., 0.5, 1.5, 3.])
    case("trapezoid", {"dim": -1}, [y, xs], lambda a, b: torch.trapezoid(a, b))
    case("trapezoid", {"dim": 0}, [y, torch.randn(2, 4, dtype=torch.float64).cumsum(0)], lambda a, b: torch.trapezoid(a, b, dim=0))
    case("trapezoid", {"dim": 1}, [y, xs.reshape(1, 4)], lambda a, b: torch.trapezoid(a, b, dim=1))
    case("trapezoid", {"dim": 0}, [T([1, 2, 4], torch.int64), T([0, 1, 3], torch.int64)], lambda a, b: torch.trapezoid(a, b))
    case("trapezoid_dx", {"dx": 0.5, "dim": 0}, [y], lambda a: torch.trapezoid(a, dx=0.5, dim=0))
    case("trapezoid_dx", {"dx": 1.0, "dim": -1}, [y], lambda a: torch.trapezoid(a))
    case("trapezoid_dx", {"dx": 1.0, "dim": -1}, [T([1, 2, 4], torch.int64)], lambda a: torch.trapezoid(a))
    case("trapezoid_dx", {"dx": 2.0, "dim": 1}, [torch.zeros(2, 0, dtype=torch.float64)], lambda a: torch.trapezoid(a, dx=2.0, dim=1))
    case("cumulative_trapezoid", {"dim": -1}, [y, xs], lambda a, b: torch.cumulative_trapezoid(a, b))
    case("cumulative_trapezoid_dx", {"dx": 0.5, "dim": 0}, [y], lambda a: torch.cumulative_trapezoid(a, dx=0.5, dim=0))
    case("cumulative_trapezoid_dx", {"dx": 1.0, "dim": -1}, [T([1, 2, 4], torch.int64)], lambda a: torch.cumulative_trapezoid(a))
    vx = T([1.5, -0.5, 2.0, 0.75])

    def vander(x, n, inc):
        # torch 1.13's vander cannot be differentiated (its cumprod is
        # copied into place: backward raises), so the reference gradient
        # is that of the same matrix as powers; the values are checked
        # against torch.vander here. With n <= 1 torch's result is not
        # differentiable (no graph), and is used as is.
        p = torch.arange(n) if inc else torch.arange(n - 1, -1, -1)
        out = x.unsqueeze(1) ** p if x.is_floating_point() and n > 1 else torch.vander(x, n, inc)
        assert torch.allclose(out.detach(), torch.vander(x.detach(), n, inc), rtol=1e-15, atol=0) and out.dtype == torch.vander(x.detach(), n, inc).dtype
        return out
    case("vander", {"n": 4, "increasing": False}, [vx], lambda x: vander(x, 4, False))
    case("vander", {"n": 3, "increasing": True}, [vx], lambda x: vander(x, 3, True))
    case("vander", {"n": 5, "increasing": False}, [T([0., 2., -1.])], lambda x: vander(x, 5, False))
    case("vander", {"n": 1, "increasing": False}, [vx], lambda x: vander(x, 1, False))
    case("vander", {"n": 0, "increasing": False}, [vx], lambda x: vander(x, 0, False))
    case("vander", {"n": 3, "increasing": False}, [T([1, 2, 3], torch.int32)], lambda x: vander(x, 3, False))
    case("cartesian_prod", {}, [v3, T([1., 2.])], lambda a, b: torch.cartesian_prod(a, b))
    case("cartesian_prod", {}, [T([1, 2], torch.int64), T([3], torch.int64), T([4, 5], torch.int64)], lambda a, b, c: torch.cartesian_prod(a, b, c))
    case("cartesian_prod", {}, [v3], lambda a: torch.cartesian_prod(a))
    case("block_diag", {}, [T(2, torch.int64), v3, m], lambda a, b, c: torch.block_diag(a, b, c))
    case("block_diag", {}, [torch.zeros(0, 2, dtype=torch.float64), torch.ones(3, 0, dtype=torch.float64), m], lambda a, b, c: torch.block_diag(a, b, c))
    case("block_diag", {}, [], lambda: torch.block_diag())
    case("msort", {}, [torch.randn(4, 3, dtype=torch.float64)], torch.msort)
    case("msort", {}, [T([3, 1, 2], torch.int64)], torch.msort)

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(g.cases, f, separators=(",", ":"))
    print(len(g.cases), "cases ->", OUT)


if __name__ == "__main__":
    main()
