"""Writes linalg.json: inputs, values and gradients of torch.linalg (PyTorch
1.13, CPU, float64) for ember's linalg tests. Run with /usr/bin/python3 from
this directory. Each loss is a weighted sum of an output with fixed random
weights "w.<name>"; decompositions use sign-invariant losses (U*U, V*V,
U diag(S) Vh) since singular vectors and eigenvectors have arbitrary signs.
"""
import json
import math
import torch

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
la = torch.linalg
out = {}


def put(name, t):
    t = t.detach()
    # JSON has no Inf or NaN: those are the strings "inf", "-inf", "nan"
    data = [float(x) if math.isfinite(x) else str(float(x)) for x in t.reshape(-1).tolist()]
    out[name] = {"shape": list(t.shape), "data": data}


def inp(name, t):
    put(name, t)
    return t.clone().requires_grad_(True)


def weights(name, like):
    w = torch.randn(like.shape)
    put("w." + name, w)
    return w


def case(name, f, *args):
    """Values of f(*args) (a tensor or a tuple) and the gradient of
    sum(w * out) for each tensor output with respect to each input."""
    res = f(*args)
    res = res if isinstance(res, tuple) else (res,)
    loss = 0
    for i, r in enumerate(res):
        put(f"{name}.out{i}", r)
        if r.dtype.is_floating_point and r.requires_grad:
            loss = loss + (weights(f"{name}.out{i}", r) * r).sum()
    grads = torch.autograd.grad(loss, args, allow_unused=True)
    for i, g in enumerate(grads):
        put(f"{name}.grad{i}", g if g is not None else torch.zeros_like(args[i]))


A = inp("A", torch.randn(2, 3, 3) + 3 * torch.eye(3))
B = inp("B", torch.randn(2, 3, 2))
b1 = inp("b1", torch.randn(3))
bv = inp("bv", torch.randn(2, 3))
X = torch.randn(2, 3, 3)
SPD = inp("SPD", X @ X.mT + torch.eye(3))
W = inp("W", torch.randn(2, 4, 3))
Wd = inp("Wd", torch.randn(2, 3, 5))
B4 = inp("B4", torch.randn(2, 4, 2))
b4 = inp("b4", torch.randn(2, 4))
Sg = inp("Sing", torch.tensor([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]]))
R = inp("Rank", torch.randn(4, 2) @ torch.randn(2, 3))
NS = inp("NonSym", torch.randn(3, 3))
v1 = inp("v1", torch.randn(2, 3))
v2 = inp("v2", torch.randn(2, 3))

case("inv", la.inv, A)
case("solve", la.solve, A, B)
case("solve_vec", la.solve, A, b1)
case("solve_bvec", la.solve, A, bv)
A0 = inp("A0", torch.randn(3, 3) + 3 * torch.eye(3))
case("solve_bcast", la.solve, A0, B)
case("inv_transposed", lambda a: la.inv(a.mT), A)
case("lstsq_bcast", lambda a, b: la.lstsq(a, b).solution, W, inp("B41", B4[:1]))
# A is dense: solve_triangular reads one triangle only
case("solve_triangular_upper", lambda a, b: la.solve_triangular(a, b, upper=True), A, B)
case("solve_triangular_lower_unit", lambda a, b: la.solve_triangular(a, b, upper=False, unitriangular=True), A0, B)
case("det", la.det, A)
case("det_singular", la.det, Sg)
case("slogdet", lambda a: la.slogdet(a)[1], A)
put("slogdet.sign", la.slogdet(A)[0])
case("cholesky", la.cholesky, SPD)
case("cholesky_upper", lambda a: la.cholesky(a, upper=True), SPD)
case("qr_tall", la.qr, W)
case("qr_wide", la.qr, Wd)
case("qr_square_complete", lambda a: la.qr(a, mode="complete"), A)
case("qr_wide_complete", lambda a: la.qr(a, mode="complete"), Wd)
put("qr_tall_complete.R", la.qr(W, mode="complete")[1])
put("qr_r.R", la.qr(W, mode="r")[1])


def eigh_inv(a, uplo="L"):
    L, V = la.eigh(a, UPLO=uplo)
    return L, V * V, V @ torch.diag_embed(L) @ V.mT


case("eigh", eigh_inv, SPD)
case("eigh_upper", lambda a: eigh_inv(a, "U"), NS)
case("eigvalsh", la.eigvalsh, SPD)
put("eigvalsh_nonsym_L", la.eigvalsh(NS))
put("eigvalsh_nonsym_U", la.eigvalsh(NS, UPLO="U"))


def svd_inv(a, full=False):
    U, S, Vh = la.svd(a, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return S, U * U, Vh * Vh, (U * S.unsqueeze(-2)) @ Vh


case("svd_tall", svd_inv, W)
case("svd_wide", svd_inv, Wd)
case("svd_square", svd_inv, A)
case("svd_full_tall", lambda a: svd_inv(a, True), W)
case("svdvals", la.svdvals, Wd)
case("pinv_tall", la.pinv, W)
case("pinv_wide", la.pinv, Wd)
case("pinv_rank", la.pinv, R)
# an atol that drops each matrix's smallest singular value
Sw = la.svdvals(W).detach()
pinv_atol = float(Sw[:, -1].max()) * 1.01
assert pinv_atol < float(Sw[:, -2].min())
put("pinv_atol.atol", torch.tensor([pinv_atol]))
case("pinv_atol", lambda a: la.pinv(a, atol=pinv_atol, rtol=0.0), W)
case("lstsq", lambda a, b: la.lstsq(a, b).solution, W, B4)
# torch 1.13 fails to differentiate lstsq with a vector B (mat1 and mat2 shapes
# cannot be multiplied): values only
put("lstsq_vec.out0", la.lstsq(W, b4).solution)
for o in ["fro", "nuc", float("inf"), -float("inf"), 1, -1, 2, -2]:
    case(f"matrix_norm_{o}", lambda a: la.matrix_norm(a, ord=o), A)
    case(f"matrix_norm_tall_{o}", lambda a: la.matrix_norm(a, ord=o, dim=(0, 2), keepdim=True), W)
case("vector_norm_3", lambda a: la.vector_norm(a, ord=3, dim=(-1,)), W)
case("vector_norm_inf", lambda a: la.vector_norm(a, ord=float("inf")), W)
case("norm_none", lambda a: la.norm(a), W)
case("norm_vec1", lambda a: la.norm(a, ord=1, dim=1), W)
case("norm_mat_nuc", lambda a: la.norm(a, ord="nuc", dim=(1, 2)), W)
case("matrix_power_3", lambda a: la.matrix_power(a, 3), A)
case("matrix_power_m2", lambda a: la.matrix_power(a, -2), A)
case("matrix_power_0", lambda a: la.matrix_power(a, 0), A)
put("matrix_rank", la.matrix_rank(torch.stack([R, torch.randn(4, 3)])).double())
put("matrix_rank_tol", la.matrix_rank(W, atol=1.0, rtol=0.0).double())
case("cond", la.cond, W)
# torch 1.13's cond with a norm other than 2 modifies its inverse in place and
# cannot be differentiated: values only (ember composes MatrixNorm and Inv)
put("cond_fro.out0", la.cond(A, "fro"))
put("cond_1.out0", la.cond(A, 1))
put("cond_singular_1", la.cond(Sg, 1).unsqueeze(0))
case("cross", la.cross, v1, v2)
case("cross_dim0", lambda a, b: la.cross(a.mT, b.mT, dim=0), v1, v2)

with open("linalg.json", "w") as f:
    json.dump(out, f)
