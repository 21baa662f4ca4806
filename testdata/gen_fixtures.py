#!/usr/bin/python3
"""Writes the PyTorch conformance fixtures in testdata/fixtures/*.json.

Run with /usr/bin/python3 (PyTorch 1.13, CPU) from the repository root:

    /usr/bin/python3 testdata/gen_fixtures.py

Every file holds {"torch": version, "cases": [...]}. A case is

    {"name": unique, "op": name, "inputs": [input...], "args": {...},
     "out": result | "outs": [result...] | "error": message,
     "view_ok": bool (views only), "str": text (printing only)}

An input is {"shape", "dtype", "data", "views"}: the flat row-major data of
a contiguous base tensor and a list of view steps applied to it to get the
operand, so non-contiguous operands are described exactly:
["transpose", d0, d1], ["slice", dim, start, end, step], ["expand", sizes].
A result is {"shape", "dtype", "data"} (plus "strides" for view ops).
NaN and infinities are written as the strings "nan", "inf", "-inf".
"""

import json
import math
import os

import torch

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

DT = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.bool: "bool",
}
BYNAME = {v: k for k, v in DT.items()}


def enc(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    return v


def flat(t):
    return [enc(v) for v in t.detach().contiguous().reshape(-1).tolist()]


def result(t, strides=False):
    r = {"shape": list(t.shape), "dtype": DT[t.dtype], "data": flat(t)}
    if strides:
        r["strides"] = list(t.stride())
    return r


def apply_views(t, views):
    for v in views:
        if v[0] == "transpose":
            t = t.transpose(v[1], v[2])
        elif v[0] == "slice":
            _, d, s, e, st = v
            idx = [slice(None)] * t.dim()
            idx[d] = slice(s, e, st)
            t = t[tuple(idx)]
        elif v[0] == "expand":
            t = t.expand(*v[1])
        else:
            raise ValueError(v)
    return t


class Arange:
    """An operand arange(n).reshape(shape) / div, written without its data."""

    def __init__(self, shape, dtype=torch.float32, div=1, mod=None):
        self.shape, self.dtype, self.div, self.mod = shape, dtype, div, mod

    def tensor(self):
        n = 1
        for d in self.shape:
            n *= d
        t = torch.arange(n, dtype=torch.float64)
        if self.mod:
            t = t % self.mod
        t = (t / self.div).to(self.dtype)
        return t.reshape(self.shape)


def inp(base, views=()):
    """Describes operand apply_views(base, views) and returns (spec, tensor)."""
    if isinstance(base, Arange):
        spec = {"shape": base.shape, "dtype": DT[base.dtype], "arange": {"div": base.div, "mod": base.mod or 0}}
        return spec, base.tensor()
    base = base.contiguous()
    spec = {"shape": list(base.shape), "dtype": DT[base.dtype], "data": flat(base)}
    if views:
        spec["views"] = [list(v) for v in views]
    return spec, apply_views(base, views)


def T(data, dtype=torch.float32):
    return torch.tensor(data, dtype=dtype)


def ints(shape, lo=-5, hi=6, dtype=torch.float32):
    return torch.randint(lo, hi, shape).to(dtype)


def rnd(shape, dtype=torch.float32):
    # rounded to 2 decimals: exact in the JSON, well inside float32
    return (torch.randn(shape, dtype=torch.float64) * 100).round() / 100


class Cases:
    def __init__(self):
        self.cases = []
        self.names = set()

    def add(self, name, op, operands, fn, args=None, views=False, extra=None):
        assert name not in self.names, name
        self.names.add(name)
        specs, tensors = [], []
        for o in operands:
            if isinstance(o, tuple):
                s, t = inp(*o)
            else:
                s, t = inp(o)
            specs.append(s)
            tensors.append(t)
        c = {"name": name, "op": op, "inputs": specs, "args": {k: enc(v) for k, v in (args or {}).items()}}
        try:
            r = fn(*tensors)
            if r is None:
                pass
            elif isinstance(r, (list, tuple)):
                c["outs"] = [result(x, views) for x in r]
            else:
                c["out"] = result(r, views)
        except Exception as e:  # PyTorch raised: ember must panic
            c["error"] = str(e).split("\n")[0]
        if extra:
            c.update(extra(*tensors))
        self.cases.append(c)

    def write(self, fname):
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, fname), "w") as f:
            json.dump({"torch": torch.__version__, "cases": self.cases}, f, separators=(",", ":"), allow_nan=False)
            f.write("\n")


def dtypes():
    return [torch.float32, torch.float64, torch.int64, torch.int32, torch.bool]


def sample(dt, shape):
    if dt == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if dt.is_floating_point:
        return (ints(shape, -4, 5, torch.float64) / 2).to(dt)
    return ints(shape, -4, 5, dt)


# ---------------------------------------------------------------- binary
def gen_binary():
    c = Cases()
    # broadcasting
    pairs = [
        ([3], [3]), ([2, 3], [3]), ([2, 1], [1, 3]), ([4, 1, 3], [2, 1]),
        ([1], [2, 3]), ([], [2, 3]), ([2, 3], []), ([5, 1, 4, 1], [3, 1, 1]),
        ([0], [1]), ([2, 0], [2, 1]), ([0, 3], [3]), ([1, 0], [4, 1]),
        ([2, 3], [3, 2]), ([3], [4]), ([2, 0], [3, 1]),
    ]
    for a, b in pairs:
        for op in ["add", "mul"]:
            fn = torch.add if op == "add" else torch.mul
            c.add(f"bcast_{op}_{a}_{b}", op, [ints(a), ints(b)], fn)
    # promotion: every dtype pair
    for op, fn in [("add", torch.add), ("mul", torch.mul), ("sub", torch.sub), ("div", torch.div)]:
        for da in dtypes():
            for db in dtypes():
                c.add(f"promote_{op}_{DT[da]}_{DT[db]}", op, [sample(da, [2, 3]), sample(db, [3])], fn)
    # zero-dim vs dimensioned
    for da in dtypes():
        for db in dtypes():
            c.add(f"zerodim_add_{DT[da]}_{DT[db]}_0d", "add", [sample(da, [3]), sample(db, [])], torch.add)
    # comparisons → bool, across dtypes and broadcast
    cmp = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}
    for op, fn in cmp.items():
        c.add(f"{op}_float", op, [T([1.0, 2.0, float("nan"), 3.0, float("inf")]), T([1.0, 3.0, float("nan"), 2.0, float("inf")])], fn)
        c.add(f"{op}_int_float", op, [T([[1, 2, 3]], torch.int64), T([[1.5], [2.0]], torch.float32)], fn)
        c.add(f"{op}_int32_bool", op, [T([0, 1, 2], torch.int32), T([True, True, False])], fn)
    # arithmetic with negative operands, ints and floats
    neg_f = T([-7.0, -7.0, 7.0, 7.0, -3.5, 3.5, 0.0, -0.0, 5.0, 2.0])
    neg_g = T([2.0, -2.0, 2.0, -2.0, 1.5, -1.5, 3.0, 2.0, 0.5, 0.0])
    neg_i = T([-7, -7, 7, 7, -8, 8, 0, 9, 1, 5], torch.int64)
    neg_j = T([2, -2, 2, -2, 3, -3, 4, -4, 1, 2], torch.int64)
    bops = {
        "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
        "pow": torch.pow, "maximum": torch.maximum, "minimum": torch.minimum,
        "remainder": torch.remainder, "floor_divide": torch.floor_divide, "atan2": torch.atan2,
    }
    for op, fn in bops.items():
        c.add(f"{op}_float_neg", op, [neg_f, neg_g], fn)
        if op != "atan2" or True:
            c.add(f"{op}_int_neg", op, [neg_i, neg_j], fn)
        c.add(f"{op}_f64_bcast", op, [rnd([3, 1], torch.float64).abs() + 0.5, rnd([4], torch.float64)], fn)
        c.add(f"{op}_int32", op, [neg_i.to(torch.int32), neg_j.to(torch.int32)], fn)
    c.add("maximum_nan", "maximum", [T([1.0, float("nan"), 2.0]), T([float("nan"), 1.0, 3.0])], torch.maximum)
    c.add("minimum_nan", "minimum", [T([1.0, float("nan"), 2.0]), T([float("nan"), 1.0, 3.0])], torch.minimum)
    c.add("div_by_zero", "div", [T([1.0, -1.0, 0.0]), T([0.0, 0.0, 0.0])], torch.div)
    c.add("div_int_by_zero", "div", [T([1, -1, 0], torch.int64), T([0, 0, 0], torch.int64)], torch.div)
    c.add("sub_bool_bool", "sub", [T([True, False]), T([True, True])], torch.sub)
    c.add("pow_int_negexp", "pow", [T([2, 3], torch.int64), T([-1, 2], torch.int64)], torch.pow)
    # floor_divide as Python's //: the quotient of x - fmod(x, y), not floor(x / y)
    fd_x = [1.0, -1.0, 5.0, -5.0, float("inf"), 7.5, 0.3, 1.0, -0.0]
    fd_y = [0.1, 0.1, float("inf"), float("inf"), 3.0, -0.5, 0.1, -float("inf"), 2.0]
    c.add("floor_divide_inexact", "floor_divide", [T(fd_x), T(fd_y)], torch.floor_divide)
    c.add("floor_divide_inexact_f64", "floor_divide", [T(fd_x, torch.float64), T(fd_y, torch.float64)], torch.floor_divide)
    c.add("add_bool_bool", "add", [T([True, False, False]), T([True, True, False])], torch.add)
    # logical
    for op, fn in [("logical_and", torch.logical_and), ("logical_or", torch.logical_or), ("logical_xor", torch.logical_xor)]:
        c.add(f"{op}_mixed", op, [T([0.0, 1.0, -2.0, 0.0]), T([0, 0, 3, 5], torch.int64)], fn)
    # non-contiguous operands
    base = ints([3, 4])
    c.add("add_transposed", "add", [(base, [("transpose", 0, 1)]), ints([4, 3])], torch.add)
    c.add("mul_stepped", "mul", [(ints([3, 8]), [("slice", 1, 1, None, 3)]), ints([3, 1])], torch.mul)
    c.add("sub_both_noncontig", "sub", [(ints([4, 3]), [("transpose", 0, 1)]), (ints([3, 9]), [("slice", 1, None, None, 2)])], torch.sub)
    c.add("add_expanded", "add", [(ints([3, 1]), [("expand", [3, 4])]), ints([3, 4])], torch.add)
    # where
    cond = T([[True, False, True], [False, False, True]])
    c.add("where_basic", "where", [cond, ints([2, 3]), ints([2, 3])], torch.where)
    c.add("where_bcast_promote", "where", [T([True, False, True]), T([[1], [2]], torch.int64), T([0.5], torch.float32)], torch.where)
    c.add("where_int32_f64", "where", [T([[True], [False]]), T([1, 2, 3], torch.int32), T([[0.25]], torch.float64)], torch.where)
    c.add("where_noncontig", "where", [(T([[True, False], [False, True], [True, True]]), [("transpose", 0, 1)]), ints([2, 3]), ints([3])], torch.where)
    c.add("where_bad_shape", "where", [T([True, False]), ints([3]), ints([3])], torch.where)
    # scalars
    scalar_vals = [("int", 2), ("int", -3), ("float", 2.5), ("float", -0.5)]
    for dt in dtypes():
        for kind, v in scalar_vals:
            for op, fn in [("add_scalar", torch.add), ("mul_scalar", torch.mul), ("sub_scalar", torch.sub), ("div_scalar", torch.div)]:
                if op == "sub_scalar" and dt == torch.bool:
                    continue
                c.add(f"{op}_{DT[dt]}_{kind}{v}", op, [sample(dt, [4])], lambda x, fn=fn, v=v: fn(x, v), args={"scalar": v, "kind": kind})
    for kind, v in [("int", 2), ("float", 2.5), ("int", 0)]:
        for op, fn in [("eq_scalar", torch.eq), ("lt_scalar", torch.lt), ("gt_scalar", torch.gt)]:
            c.add(f"{op}_{kind}{v}", op, [T([0, 1, 2, 3], torch.int64)], lambda x, fn=fn, v=v: fn(x, v), args={"scalar": v, "kind": kind})
            c.add(f"{op}_float_{kind}{v}", op, [T([0.0, 2.5, 2.0, float("nan")])], lambda x, fn=fn, v=v: fn(x, v), args={"scalar": v, "kind": kind})
    c.add("rsub_scalar_int", "rsub_scalar", [T([1, 2, 3], torch.int64)], lambda x: 10 - x, args={"scalar": 10, "kind": "int"})
    c.add("rsub_scalar_float", "rsub_scalar", [T([1.0, 2.0, 3.0])], lambda x: 0.5 - x, args={"scalar": 0.5, "kind": "float"})
    c.write("binary.json")


# ---------------------------------------------------------------- unary
def gen_unary():
    c = Cases()
    special = T([-2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.5, 3.0, float("nan"), float("inf"), float("-inf")])
    ops = {
        "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
        "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
        "sigmoid": torch.sigmoid, "relu": torch.relu, "sign": torch.sign, "square": torch.square,
        "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "log1p": torch.log1p,
        "expm1": torch.expm1, "erf": torch.erf, "reciprocal": torch.reciprocal,
        "logical_not": torch.logical_not,
    }
    for op, fn in ops.items():
        c.add(f"{op}_special", op, [special], fn)
        c.add(f"{op}_f64", op, [rnd([7], torch.float64)], fn)
        c.add(f"{op}_rand_f32", op, [rnd([2, 5]).float()], fn)
        c.add(f"{op}_int64", op, [T([-3, -1, 0, 1, 4], torch.int64)], fn)
        c.add(f"{op}_int32", op, [T([-3, 0, 2], torch.int32)], fn)
        c.add(f"{op}_bool", op, [T([True, False])], fn)
        c.add(f"{op}_transposed", op, [(rnd([3, 4]).float(), [("transpose", 0, 1)])], fn)
    c.add("round_halves", "round", [T([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997])], torch.round)
    c.add("sigmoid_big", "sigmoid", [T([-100.0, -20.0, 20.0, 100.0])], torch.sigmoid)
    c.add("tanh_big", "tanh", [T([-50.0, 50.0, 1e-8])], torch.tanh)
    # parameterised
    for lo, hi in [(-1.0, 1.0), (0.0, float("inf")), (float("-inf"), 0.5), (2.0, 1.0)]:
        c.add(f"clamp_{lo}_{hi}", "clamp", [special], lambda x, lo=lo, hi=hi: torch.clamp(x, lo, hi), args={"min": lo, "max": hi})
    c.add("clamp_int", "clamp", [T([-5, -1, 0, 3, 9], torch.int64)], lambda x: torch.clamp(x, -2, 4), args={"min": -2, "max": 4})
    c.add("clamp_int32", "clamp", [T([-5, -1, 0, 3, 9], torch.int32)], lambda x: torch.clamp(x, -2, 4), args={"min": -2, "max": 4})
    c.add("clamp_int_float_bounds", "clamp", [T([-5, -1, 0, 3, 9], torch.int64)], lambda x: torch.clamp(x, -1.5, 2.5), args={"min": -1.5, "max": 2.5})
    for slope in [0.01, 0.2]:
        c.add(f"leaky_relu_{slope}", "leaky_relu", [special], lambda x, s=slope: torch.nn.functional.leaky_relu(x, s), args={"slope": slope})
    c.add("leaky_relu_f64", "leaky_relu", [rnd([6], torch.float64)], lambda x: torch.nn.functional.leaky_relu(x, 0.1), args={"slope": 0.1})
    for e in [2, 3, 0.5, -1, 0, -0.5, 1.5]:
        c.add(f"pow_scalar_{e}", "pow_scalar", [special], lambda x, e=e: torch.pow(x, e), args={"exponent": e})
        c.add(f"pow_scalar_int_{e}", "pow_scalar", [T([-3, -1, 0, 1, 2, 4], torch.int64)], lambda x, e=e: torch.pow(x, e), args={"exponent": e})
    c.add("pow_scalar_f64", "pow_scalar", [rnd([5], torch.float64).abs()], lambda x: torch.pow(x, 2.5), args={"exponent": 2.5})
    c.write("unary.json")


# ---------------------------------------------------------------- reductions
def gen_reduce():
    c = Cases()
    x = rnd([2, 3, 4]).float()
    xi = ints([2, 3, 4], -3, 4, torch.int64)
    dimsets = [None, [0], [1], [2], [-1], [0, 2], [-1, -3], [1, 2], [0, 1, 2]]
    nan_x = rnd([3, 4]).float()
    nan_x[1, 2] = float("nan")
    layouts = {
        "contig": (x, []),
        "transposed": (rnd([4, 3, 2]).float(), [("transpose", 0, 2)]),
        "stepped": (rnd([2, 7, 4]).float(), [("slice", 1, 1, None, 2)]),
    }
    for op in ["sum", "mean", "prod", "max", "min", "var", "std", "any", "all"]:
        for lname, (base, views) in layouts.items():
            for ds in dimsets:
                for keep in [False, True]:
                    if ds is None and keep:
                        continue
                    if lname != "contig" and ds not in (None, [1], [0, 2], [-1]):
                        continue
                    args = {"keepdim": keep}
                    if ds is not None:
                        args["dims"] = ds
                    src = base
                    if op in ("any", "all"):
                        src = (base > 0.3)
                    c.add(f"{op}_{lname}_{ds}_{keep}", op, [(src, views)], lambda t, op=op, ds=ds, keep=keep: reduce_torch(op, t, ds, keep), args=args)
        c.add(f"{op}_nan", op, [nan_x], lambda t, op=op: reduce_torch(op, t, [1], False), args={"dims": [1], "keepdim": False})
        c.add(f"{op}_nan_all", op, [nan_x], lambda t, op=op: reduce_torch(op, t, None, False), args={"keepdim": False})
        src = xi if op not in ("any", "all") else xi
        c.add(f"{op}_int64", op, [src], lambda t, op=op: reduce_torch(op, t, [1], False), args={"dims": [1], "keepdim": False})
        c.add(f"{op}_int32_all", op, [xi.to(torch.int32)], lambda t, op=op: reduce_torch(op, t, None, False), args={"keepdim": False})
        c.add(f"{op}_bool", op, [xi > 0], lambda t, op=op: reduce_torch(op, t, [0], True), args={"dims": [0], "keepdim": True})
        c.add(f"{op}_empty_dim", op, [torch.zeros(2, 0)], lambda t, op=op: reduce_torch(op, t, [1], False), args={"dims": [1], "keepdim": False})
        c.add(f"{op}_scalar", op, [T(3.5)], lambda t, op=op: reduce_torch(op, t, None, False), args={"keepdim": False})
        c.add(f"{op}_bad_dim", op, [x], lambda t, op=op: reduce_torch(op, t, [3], False), args={"dims": [3], "keepdim": False})
    for corr in [0, 2]:
        for op in ["var", "std"]:
            c.add(f"{op}_correction{corr}", op, [x], lambda t, op=op, corr=corr: getattr(torch, op)(t, dim=(0, 2), correction=corr), args={"dims": [0, 2], "keepdim": False, "correction": corr})
    c.add("var_f64", "var", [rnd([4, 6], torch.float64)], lambda t: torch.var(t, dim=1), args={"dims": [1], "keepdim": False})
    c.add("sum_f64_big", "sum", [rnd([30, 20], torch.float64)], lambda t: t.sum(0), args={"dims": [0], "keepdim": False})
    # argmax/argmin
    tie = T([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 1.0], [5.0, float("nan"), 7.0, float("nan")]])
    for op in ["argmax", "argmin"]:
        fn = getattr(torch, op)
        for lname, (base, views) in layouts.items():
            c.add(f"{op}_{lname}_flat", op, [(base, views)], fn, args={})
            for d in [0, 1, -1, 2]:
                for keep in [False, True]:
                    c.add(f"{op}_{lname}_{d}_{keep}", op, [(base, views)], lambda t, d=d, keep=keep, fn=fn: fn(t, dim=d, keepdim=keep), args={"dim": d, "keepdim": keep})
        c.add(f"{op}_ties_nan", op, [tie], lambda t, fn=fn: fn(t, dim=1), args={"dim": 1, "keepdim": False})
        c.add(f"{op}_ties_flat", op, [tie[:2]], fn, args={})
        c.add(f"{op}_int", op, [xi], lambda t, fn=fn: fn(t, dim=0), args={"dim": 0, "keepdim": False})
        c.add(f"{op}_empty", op, [torch.zeros(0, 3)], lambda t, fn=fn: fn(t, dim=0), args={"dim": 0, "keepdim": False})
    # softmax / log_softmax
    s = rnd([2, 3, 4]).float() * 3
    for op, fn in [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)]:
        for d in [0, 1, 2, -1, -3]:
            c.add(f"{op}_{d}", op, [s], lambda t, d=d, fn=fn: fn(t, d), args={"dim": d})
        c.add(f"{op}_transposed", op, [(rnd([4, 3]).float(), [("transpose", 0, 1)])], lambda t, fn=fn: fn(t, 1), args={"dim": 1})
        c.add(f"{op}_big", op, [T([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]])], lambda t, fn=fn: fn(t, 1), args={"dim": 1})
        c.add(f"{op}_inf", op, [T([[float("-inf"), 0.0, 1.0], [float("-inf"), float("-inf"), 2.0]])], lambda t, fn=fn: fn(t, 1), args={"dim": 1})
        c.add(f"{op}_f64", op, [rnd([3, 5], torch.float64)], lambda t, fn=fn: fn(t, 0), args={"dim": 0})
        c.add(f"{op}_bad_dim", op, [s], lambda t, fn=fn: fn(t, 3), args={"dim": 3})
    c.write("reduce.json")


def reduce_torch(op, t, ds, keep):
    dims = tuple(ds) if ds is not None else None
    if op in ("sum", "mean", "prod", "max", "min", "var", "std"):
        if op == "prod":
            if dims is None:
                r = torch.prod(t)
                return r.reshape([1] * t.dim()) if keep else r
            r = t
            for d in sorted([d % max(t.dim(), 1) for d in dims], reverse=True):
                r = torch.prod(r, d, keepdim=True)
            if not keep:
                for d in sorted([d % max(t.dim(), 1) for d in dims], reverse=True):
                    r = r.squeeze(d) if t.dim() > 0 else r
            if len(set(d % max(t.dim(), 1) for d in dims)) != len(dims):
                raise RuntimeError("dim appears multiple times")
            for d in dims:
                if d >= max(t.dim(), 1) or d < -max(t.dim(), 1):
                    raise IndexError("Dimension out of range")
            return r
        fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin, "var": torch.var, "std": torch.std}[op]
        if dims is None:
            if op in ("max", "min"):
                r = fn(t)
            else:
                r = fn(t)
            return r.reshape([1] * t.dim()) if keep else r
        return fn(t, dim=dims, keepdim=keep)
    # any / all: torch 1.13 takes one dim at a time
    fn = torch.any if op == "any" else torch.all
    if dims is None:
        r = fn(t)
        return r.reshape([1] * t.dim()) if keep else r
    n = max(t.dim(), 1)
    for d in dims:
        if d >= n or d < -n:
            raise IndexError("Dimension out of range")
    r = t
    for d in sorted([d % n for d in dims], reverse=True):
        r = fn(r, d, keepdim=True) if t.dim() > 0 else fn(r)
    if not keep and t.dim() > 0:
        for d in sorted([d % n for d in dims], reverse=True):
            r = r.squeeze(d)
    return r


# ---------------------------------------------------------------- matmul
def gen_matmul():
    c = Cases()
    cases = [
        ([3], [3]), ([2, 3], [3]), ([3], [3, 4]), ([2, 3], [3, 4]),
        ([2, 1, 3, 4], [5, 4, 2]), ([4, 2, 3], [3]), ([3], [2, 3, 4]), ([2, 2, 3], [2, 3, 5]),
        ([1, 3], [3, 1]), ([3, 0], [0, 2]), ([0, 3], [3, 2]), ([2, 3], [4, 2]),
        ([3], [4]), ([1, 2, 3], [3, 2, 4]), ([2, 1, 2, 3], [1, 3, 3, 2]),
    ]
    for a, b in cases:
        c.add(f"matmul_{a}_{b}", "matmul", [ints(a, -3, 4), ints(b, -3, 4)], torch.matmul)
    c.add("matmul_f64", "matmul", [rnd([3, 5], torch.float64), rnd([5, 2], torch.float64)], torch.matmul)
    c.add("matmul_f32_rand", "matmul", [rnd([17, 33]).float(), rnd([33, 9]).float()], torch.matmul)
    c.add("matmul_int64", "matmul", [ints([2, 3], -3, 4, torch.int64), ints([3, 2], -3, 4, torch.int64)], torch.matmul)
    c.add("matmul_dtype_mismatch", "matmul", [ints([2, 3]), ints([3, 2], -3, 4, torch.float64)], torch.matmul)
    c.add("matmul_0d", "matmul", [T(2.0), ints([2])], torch.matmul)
    c.add("matmul_transposed_a", "matmul", [(ints([5, 4], -3, 4), [("transpose", 0, 1)]), ints([5, 3], -3, 4)], torch.matmul)
    c.add("matmul_transposed_b", "matmul", [ints([4, 5], -3, 4), (ints([3, 5], -3, 4), [("transpose", 0, 1)])], torch.matmul)
    c.add("matmul_transposed_both", "matmul", [(ints([5, 4], -3, 4), [("transpose", 0, 1)]), (ints([3, 5], -3, 4), [("transpose", 0, 1)])], torch.matmul)
    c.add("matmul_batched_transposed", "matmul", [(ints([2, 5, 4], -3, 4), [("transpose", 1, 2)]), (ints([3, 2, 5], -3, 4), [("transpose", 0, 1)])], torch.matmul)
    c.add("matmul_stepped", "matmul", [(ints([4, 10], -3, 4), [("slice", 1, 0, None, 2)]), (ints([5, 6], -3, 4), [("slice", 1, 1, None, 2)])], torch.matmul)
    c.add("matmul_expanded", "matmul", [(ints([1, 2, 3], -3, 4), [("expand", [4, 2, 3])]), ints([4, 3, 2], -3, 4)], torch.matmul)
    c.add("matmul_big", "matmul", [ints([23, 40], -3, 4), ints([40, 19], -3, 4)], torch.matmul)
    c.write("matmul.json")


# ---------------------------------------------------------------- views
def gen_views():
    c = Cases()
    a = torch.arange(24.0).reshape(2, 3, 4)
    at = (torch.arange(24.0).reshape(4, 3, 2), [("transpose", 0, 2)])  # shape [2,3,4], not contiguous
    ai = torch.arange(12).reshape(3, 4)

    def viewcase(name, op, src, fn, args, tryview=None):
        extra = None
        if tryview is not None:
            def extra(t):
                try:
                    t.view(*tryview)
                    return {"view_ok": True, "view_shape": tryview}
                except RuntimeError:
                    return {"view_ok": False, "view_shape": tryview}
        c.add(name, op, [src], fn, args=args, views=True, extra=extra)

    for shp in [[6, 4], [-1], [4, -1], [2, -1, 2], [24], [1, 24, 1], [3, 8], [2, 12], [-1, 6], [5, -1], [-1, -1], [2, 3, 4, 1]]:
        viewcase(f"reshape_{shp}", "reshape", a, lambda t, s=shp: t.reshape(*s), {"shape": shp}, tryview=shp)
        viewcase(f"reshape_transposed_{shp}", "reshape", at, lambda t, s=shp: t.reshape(*s), {"shape": shp}, tryview=shp)
        viewcase(f"view_{shp}", "view", a, lambda t, s=shp: t.view(*s), {"shape": shp})
        viewcase(f"view_transposed_{shp}", "view", at, lambda t, s=shp: t.view(*s), {"shape": shp})
    sl = (torch.arange(40.0).reshape(5, 8), [("slice", 1, 0, None, 2)])  # [5,4], stride (8,2)
    for shp in [[20], [5, 2, 2], [10, 2], [5, 4, 1]]:
        viewcase(f"view_stepped_{shp}", "view", sl, lambda t, s=shp: t.view(*s), {"shape": shp})
        viewcase(f"reshape_stepped_{shp}", "reshape", sl, lambda t, s=shp: t.reshape(*s), {"shape": shp}, tryview=shp)
    viewcase("view_rows_of_transposed", "view", (torch.arange(12.0).reshape(4, 3), [("transpose", 0, 1)]), lambda t: t.view(3, 2, 2), {"shape": [3, 2, 2]})
    viewcase("view_expanded", "view", (torch.arange(3.0).reshape(3, 1), [("expand", [3, 4])]), lambda t: t.view(3, 2, 2), {"shape": [3, 2, 2]})
    viewcase("view_empty", "view", torch.zeros(0, 3), lambda t: t.view(3, 0), {"shape": [3, 0]})
    viewcase("reshape_scalar", "reshape", T(5.0), lambda t: t.reshape(1, 1), {"shape": [1, 1]})
    viewcase("reshape_to_scalar", "reshape", T([5.0]), lambda t: t.reshape([]), {"shape": []})
    for d0, d1 in [(0, 1), (1, 2), (0, -1), (-1, -2), (2, 2), (0, 3)]:
        viewcase(f"transpose_{d0}_{d1}", "transpose", a, lambda t, d0=d0, d1=d1: t.transpose(d0, d1), {"d0": d0, "d1": d1}, tryview=[-1])
    for p in [[2, 0, 1], [0, 1, 2], [-1, 0, 1], [1, 0], [0, 0, 1]]:
        viewcase(f"permute_{p}", "permute", a, lambda t, p=p: t.permute(*p), {"perm": p})
    sq = torch.arange(6.0).reshape(1, 3, 1, 2)
    for ds in [[], [0], [2], [-2], [1], [0, 2]]:
        fn = (lambda t: t.squeeze()) if not ds else (lambda t, ds=ds: squeeze_dims(t, ds))
        viewcase(f"squeeze_{ds}", "squeeze", sq, fn, {"dims": ds})
    viewcase("squeeze_scalar", "squeeze", T(2.0), lambda t: t.squeeze(), {"dims": []})
    for d in [0, 1, 3, -1, -4, 4, -5]:
        viewcase(f"unsqueeze_{d}", "unsqueeze", a[0], lambda t, d=d: t.unsqueeze(d), {"dim": d})
    viewcase("unsqueeze_transposed", "unsqueeze", at, lambda t: t.unsqueeze(1), {"dim": 1})
    ex = torch.arange(3.0).reshape(3, 1)
    for shp in [[3, 4], [2, 3, 4], [-1, 5], [3, 1], [4, 4], [-1, 3, 2], [0, 3, 1]]:
        viewcase(f"expand_{shp}", "expand", ex, lambda t, s=shp: t.expand(*s), {"shape": shp})
    for d, s, l in [(0, 0, 1), (1, 1, 2), (2, 2, 2), (-1, 0, 4), (1, -2, 2), (1, 2, 2), (2, 4, 0), (0, 1, 1)]:
        viewcase(f"narrow_{d}_{s}_{l}", "narrow", a, lambda t, d=d, s=s, l=l: t.narrow(d, s, l), {"dim": d, "start": s, "length": l})
    for d, s, e, st in [(1, 0, 3, 1), (2, 1, None, 2), (2, -3, -1, 1), (2, None, None, 3), (0, -10, 10, 1), (2, 3, 1, 1), (1, -1, None, 1), (2, 0, 4, 5)]:
        def slicefn(t, d=d, s=s, e=e, st=st):
            idx = [slice(None)] * t.dim()
            idx[d] = slice(s, e, st)
            return t[tuple(idx)]
        viewcase(f"slice_{d}_{s}_{e}_{st}", "slice", a, slicefn, {"dim": d, "start": s, "end": e, "step": st})
    viewcase("slice_transposed", "slice", at, lambda t: t[:, :, 1::2], {"dim": 2, "start": 1, "end": None, "step": 2})
    for d, i in [(0, 1), (1, -1), (2, 0), (-1, 3), (1, 3), (0, -3)]:
        viewcase(f"select_{d}_{i}", "select", a, lambda t, d=d, i=i: t.select(d, i), {"dim": d, "index": i})
    for idx in [[1], [1, 2], [-1, 0, 3], [0, 0, 0]]:
        viewcase(f"index_{idx}", "index", a, lambda t, idx=idx: t[tuple(idx)], {"index": idx})
    viewcase("index_out_of_range", "index", a, lambda t: t[2], {"index": [2]})
    for s, e in [(0, -1), (1, 2), (0, 1), (-2, -1), (2, 2), (2, 0)]:
        viewcase(f"flatten_{s}_{e}", "flatten", a, lambda t, s=s, e=e: t.flatten(s, e), {"start": s, "end": e})
        viewcase(f"flatten_transposed_{s}_{e}", "flatten", at, lambda t, s=s, e=e: t.flatten(s, e), {"start": s, "end": e})
    viewcase("flatten_scalar", "flatten", T(4.0), lambda t: t.flatten(0, -1), {"start": 0, "end": -1})
    viewcase("t_matrix", "t", ai.float(), lambda t: t.t(), {})
    viewcase("t_vector", "t", torch.arange(3.0), lambda t: t.t(), {})
    viewcase("t_3d", "t", a, lambda t: t.t(), {})
    # split / chunk
    for size, d in [(2, 1), (1, 0), (3, 2), (4, 2), (5, 1), (2, -1)]:
        viewcase(f"split_{size}_{d}", "split", a, lambda t, size=size, d=d: t.split(size, d), {"size": size, "dim": d})
    for n, d in [(2, 1), (3, 1), (4, 2), (3, 2), (5, 0), (1, 0), (2, -1)]:
        viewcase(f"chunk_{n}_{d}", "chunk", a, lambda t, n=n, d=d: t.chunk(n, d), {"chunks": n, "dim": d})
    viewcase("chunk_empty_dim", "chunk", torch.zeros(0, 3), lambda t: t.chunk(2, 0), {"chunks": 2, "dim": 0})
    # cat / stack (multiple inputs)
    b1, b2 = torch.arange(6.0).reshape(2, 3), torch.arange(6.0, 12.0).reshape(2, 3)
    b3 = torch.arange(4.0).reshape(2, 2)
    for d in [0, 1, -1, -2]:
        c.add(f"cat_{d}", "cat", [b1, b2], lambda x, y, d=d: torch.cat([x, y], d), args={"dim": d}, views=True)
        c.add(f"stack_{d}", "stack", [b1, b2], lambda x, y, d=d: torch.stack([x, y], d), args={"dim": d}, views=True)
    c.add("stack_2", "stack", [b1, b2], lambda x, y: torch.stack([x, y], 2), args={"dim": 2}, views=True)
    c.add("cat_uneven", "cat", [b1, b3], lambda x, y: torch.cat([x, y], 1), args={"dim": 1}, views=True)
    c.add("cat_uneven_bad", "cat", [b1, b3], lambda x, y: torch.cat([x, y], 0), args={"dim": 0}, views=True)
    c.add("cat_promote", "cat", [ai[:1].to(torch.int32), b3[:, :1].reshape(1, 2).repeat(1, 2).double()], lambda x, y: torch.cat([x, y], 0), args={"dim": 0}, views=True)
    c.add("cat_three_noncontig", "cat", [(torch.arange(6.0).reshape(3, 2), [("transpose", 0, 1)]), b2, (torch.arange(12.0).reshape(2, 6), [("slice", 1, 0, None, 2)])], lambda x, y, z: torch.cat([x, y, z], 1), args={"dim": 1}, views=True)
    c.add("cat_rank_mismatch", "cat", [b1, torch.arange(3.0)], lambda x, y: torch.cat([x, y], 0), args={"dim": 0}, views=True)
    c.add("stack_shape_mismatch", "stack", [b1, b3], lambda x, y: torch.stack([x, y], 0), args={"dim": 0}, views=True)
    c.add("stack_bad_dim", "stack", [b1, b2], lambda x, y: torch.stack([x, y], 3), args={"dim": 3}, views=True)
    c.write("views.json")


def squeeze_dims(t, ds):
    for d in sorted([d % t.dim() for d in ds], reverse=True):
        t = t.squeeze(d)
    return t


# ---------------------------------------------------------------- printing
def gen_print():
    c = Cases()

    def p(name, t):
        c.add(name, "str", [t], lambda x: None, extra=lambda x: {"str": str(x)})

    p("int_vec", torch.tensor([1, 2, 3]))
    p("int_neg", torch.tensor([[-10, 2], [3, 400]]))
    p("float_4dec", torch.tensor([1.5, 2.25, -3.125, 0.1]))
    p("float_round", torch.tensor([[0.123456, 10.5], [3.0, -2.71828]]))
    p("float_whole", torch.tensor([1.0, 2.0, -3.0]))
    p("float_whole_zero", torch.tensor([0.0, 0.0]))
    p("float_whole_big", torch.tensor([1.0, 100000.0]))
    p("float_whole_huge", torch.tensor([1.0, 1e9]))
    p("sci_tiny", torch.tensor([1e-5, 1.0]))
    p("sci_tiny_only", torch.tensor([1.5e-7, 2.5e-6]))
    p("sci_huge", torch.tensor([1.5e10, 2.0]))
    p("sci_ratio", torch.tensor([0.5, 1234.5]))
    p("nan_inf", torch.tensor([float("nan"), float("inf"), float("-inf"), 1.5]))
    p("nan_inf_whole", torch.tensor([float("nan"), float("inf"), 2.0]))
    p("only_nan", torch.tensor([float("nan")]))
    p("bool", torch.tensor([True, False, True]))
    p("bool_2d", torch.tensor([[True], [False]]))
    p("f64", torch.tensor([1.5, 2.0], dtype=torch.float64))
    p("f64_whole", torch.tensor([[1.0, 2.0]], dtype=torch.float64))
    p("int32", torch.tensor([1, -2], dtype=torch.int32))
    p("scalar_float", torch.tensor(3.5))
    p("scalar_int", torch.tensor(7))
    p("scalar_whole", torch.tensor(2.0))
    p("scalar_f64", torch.tensor(0.25, dtype=torch.float64))
    p("scalar_bool", torch.tensor(True))
    p("scalar_int32", torch.tensor(-4, dtype=torch.int32))
    p("empty_1d", torch.zeros(0))
    p("empty_2d", torch.zeros(2, 0))
    p("empty_int", torch.zeros(0, dtype=torch.int64))
    p("empty_int32_2d", torch.zeros(0, 3, dtype=torch.int32))
    p("big_1d", Arange([2000]))
    p("big_int", Arange([1500], torch.int64))
    p("big_2d", Arange([40, 30], div=7))
    p("big_3d", Arange([11, 10, 12], torch.int64))
    p("big_f64_mod", Arange([1001], torch.float64, div=4, mod=37))
    p("wide_floats", torch.arange(30.0) / 3)
    p("wide_ints", torch.arange(40) * 1000)
    p("wide_2d", (torch.arange(60.0) * 1.5).reshape(2, 30))
    p("three_d", torch.arange(24.0).reshape(2, 3, 4))
    p("three_d_int", torch.arange(12).reshape(2, 3, 2))
    p("four_d", torch.arange(16).reshape(2, 2, 2, 2))
    p("neg_zero", torch.tensor([-0.0, 1.0]))
    p("mixed_sign", torch.tensor([-1.25, 100.5]))
    p("rand", rnd([3, 3]).float())
    p("f64_wide", torch.arange(20.0, dtype=torch.float64) / 7)
    p("int32_wide", torch.arange(30, dtype=torch.int32) * 100)
    p("transposed", torch.arange(6.0).reshape(2, 3).t())
    p("bool_wide", torch.arange(30) % 3 == 0)
    c.write("print.json")


# ---------------------------------------------------------------- the op table
def gen_table():
    """Cases for every op of the op table that names a Fixture
    (testdata/ops.json, generated by backend/internal/opgen from
    backend/optable): the fixture expression is PyTorch's value, for every
    dtype, special values, non-contiguous and broadcast operands, and each
    parameter set."""
    import torch.nn.functional as F  # noqa: F401 (the expressions use F)

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops.json")) as f:
        table = json.load(f)

    def dec(v):
        return {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}.get(v, v) if isinstance(v, str) else v

    c = Cases()
    # gradient inputs: no value at a kink of any op (0, ±3, thresholds), plus NaN and ±Inf
    grad_x = T([-25.0, -4.5, -2.9, -1.3, -0.7, -0.2, 0.3, 0.9, 1.7, 2.8, 4.2, 25.0, float("nan"), float("inf"), float("-inf")], torch.float64)
    special = T([-4.0, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.5, 3.0, 4.0, 25.0, -25.0,
                 float("nan"), float("inf"), float("-inf")])
    for row in table["unary"]:
        op, params = row["name"], row["params"]
        fn = eval("lambda x, %s: %s" % (", ".join(["_t"] + params), row["fixture"]), {"torch": torch, "F": torch.nn.functional})
        sets = [[dec(v) for v in a] for a in row["args"]] or [[]]
        for k, a in enumerate(sets):
            args = dict(zip(params, a))
            f = (lambda x, a=a: fn(x, None, *a))
            sfx = "" if len(sets) == 1 else f"_p{k}"
            c.add(f"{op}{sfx}_special", op, [special], f, args=args)
            c.add(f"{op}{sfx}_special_f64", op, [special.double()], f, args=args)
            c.add(f"{op}{sfx}_rand", op, [rnd([3, 5]).float()], f, args=args)
            if k == 0:
                c.add(f"{op}_f64", op, [rnd([7], torch.float64)], f, args=args)
                c.add(f"{op}_int64", op, [T([-3, -1, 0, 1, 4], torch.int64)], f, args=args)
                c.add(f"{op}_int32", op, [T([-3, 0, 2], torch.int32)], f, args=args)
                c.add(f"{op}_bool", op, [T([True, False], torch.bool)], f, args=args)
                c.add(f"{op}_transposed", op, [(rnd([3, 4]).float(), [("transpose", 0, 1)])], f, args=args)
                c.add(f"{op}_stepped", op, [(rnd([2, 9]).float(), [("slice", 1, 1, None, 2)])], f, args=args)
            if row["grad_fn"]:
                grad_case(c, f"{op}{sfx}_grad", op, [grad_x], f, args)
    neg_f = T([-7.0, -7.0, 7.0, 7.0, -3.5, 3.5, 0.0, -0.0, 5.0, 2.0, float("nan"), float("inf"), 1.0, -0.0])
    neg_g = T([2.0, -2.0, 2.0, -2.0, 1.5, -1.5, 3.0, 2.0, 0.5, 0.0, 1.0, 2.0, float("-inf"), -1.0])
    neg_i = T([-7, -7, 7, 7, -8, 8, 0, 9, 1, 5], torch.int64)
    neg_j = T([2, -2, 2, -2, 3, -3, 4, -4, 1, 2], torch.int64)
    for row in table["binary"]:
        op = row["name"]
        fn = eval("lambda x, y: " + row["fixture"], {"torch": torch})
        c.add(f"{op}_float_neg", op, [neg_f, neg_g], fn)
        c.add(f"{op}_f64", op, [neg_f.double(), neg_g.double()], fn)
        c.add(f"{op}_int_neg", op, [neg_i, neg_j], fn)
        c.add(f"{op}_int32", op, [neg_i.to(torch.int32), neg_j.to(torch.int32)], fn)
        c.add(f"{op}_bool", op, [T([True, False, True], torch.bool), T([True, True, False], torch.bool)], fn)
        c.add(f"{op}_int_float", op, [T([[1, -2, 3]], torch.int64), T([[1.5], [-2.0]], torch.float32)], fn)
        c.add(f"{op}_bcast", op, [rnd([3, 1], torch.float64) + 0.5, rnd([4], torch.float64)], fn)
        c.add(f"{op}_transposed", op, [(rnd([3, 4]).float(), [("transpose", 0, 1)]), rnd([4, 3]).float()], fn)
        if row["grad_fn"]:
            ga = T([-2.5, -1.5, -0.6, -0.3, 0.4, 0.8, 1.3, 2.2, 3.5, 5.5], torch.float64)
            gb = T([1.5, -0.7, 2.5, 0.45, -1.2, 0.35, -2.9, 1.1, 0.9, -0.25], torch.float64)
            grad_case(c, f"{op}_grad", op, [ga, gb], fn, {})
    c.write("table.json")


def grad_case(c, name, op, inputs, fn, args):
    """A case whose gradients (of sum(out * w)) and grad_fn come from
    torch.autograd, in float64."""
    xs = [x.clone().requires_grad_(True) for x in inputs]
    y = fn(*xs)
    w = torch.linspace(-1, 1.5, y.numel(), dtype=y.dtype).reshape(y.shape)
    (y * w).sum().backward()
    extra = {"grad_fn": y.grad_fn.name(), "grad_w": flat(w), "grads": [result(x.grad) for x in xs]}
    c.add(name, op, inputs, fn, args=args, extra=lambda *ts: extra)


# ---------------------------------------------------------------- index (issue 13's ops)
def gen_index():
    """Indexing, scans, sorting and structural ops: testdata/fixtures/index.json.
    Seeded on its own so the files written before it keep their values."""
    torch.manual_seed(13)
    c = Cases()
    L = torch.int64
    x = rnd([3, 4, 5])
    xt = (rnd([5, 4, 3]), [("transpose", 0, 2)])
    for d in range(3):
        ish = [2, 3, 4]
        ish[d] = 6
        idx = torch.randint(0, [3, 4, 5][d], ish)
        c.add(f"gather_dim{d}", "gather", [x, idx], lambda a, i, d=d: torch.gather(a, d, i), {"dim": d})
        c.add(f"gather_t_dim{d}", "gather", [xt, idx], lambda a, i, d=d: torch.gather(a, d, i), {"dim": d})
    c.add("gather_neg_dim", "gather", [x, torch.randint(0, 5, [3, 4, 2])], lambda a, i: torch.gather(a, -1, i), {"dim": -1})
    c.add("gather_int", "gather", [ints([4, 3], dtype=L), torch.randint(0, 4, [2, 3])], lambda a, i: torch.gather(a, 0, i), {"dim": 0})
    c.add("gather_bool", "gather", [torch.rand(4, 3) > 0.5, torch.randint(0, 3, [4, 5])], lambda a, i: torch.gather(a, 1, i), {"dim": 1})
    c.add("gather_float_index", "gather", [x, T([[[0.0]]])], lambda a, i: torch.gather(a, 0, i), {"dim": 0})
    c.add("gather_rank_mismatch", "gather", [x, torch.zeros(2, 2, dtype=L)], lambda a, i: torch.gather(a, 0, i), {"dim": 0})
    for d in range(2):
        dst = rnd([4, 5])
        ish = [3, 4]
        # a permutation along d for each line: a deterministic scatter
        perm = torch.stack([torch.randperm([4, 5][d])[:ish[d]] for _ in range(ish[1 - d])], 1 - d)
        src = rnd([4, 5])
        c.add(f"scatter_dim{d}", "scatter", [dst, perm, src], lambda a, i, s, d=d: torch.scatter(a, d, i, s), {"dim": d})
        idx = torch.randint(0, [4, 5][d], [6, 5] if d == 0 else [4, 7])
        src = rnd([6, 5] if d == 0 else [4, 7])
        c.add(f"scatter_add_dim{d}", "scatter_add", [dst, idx, src], lambda a, i, s, d=d: torch.scatter_add(a, d, i, s), {"dim": d})
    c.add("scatter_add_int", "scatter_add", [ints([3, 4], dtype=L), torch.randint(0, 3, [5, 4]), ints([5, 4], dtype=L)],
          lambda a, i, s: torch.scatter_add(a, 0, i, s), {"dim": 0})
    c.add("scatter_add_small_src", "scatter_add", [rnd([3, 4]), torch.randint(0, 4, [2, 2]), rnd([3, 3])],
          lambda a, i, s: torch.scatter_add(a, 1, i, s), {"dim": 1})
    c.add("scatter_dtype_mismatch", "scatter", [rnd([3, 4]), torch.zeros(1, 1, dtype=L), ints([1, 1], dtype=L)],
          lambda a, i, s: torch.scatter(a, 0, i, s), {"dim": 0})
    for d in range(3):
        n = [3, 4, 5][d]
        idx = torch.randint(0, n, [6])
        c.add(f"index_select_dim{d}", "index_select", [x, idx], lambda a, i, d=d: torch.index_select(a, d, i), {"dim": d})
        c.add(f"index_select_t_dim{d}", "index_select", [xt, idx], lambda a, i, d=d: torch.index_select(a, d, i), {"dim": d})
        shp = [3, 4, 5]
        shp[d] = 6
        c.add(f"index_add_dim{d}", "index_add", [x, idx, rnd(shp)], lambda a, i, s, d=d: torch.index_add(a, d, i, s), {"dim": d})
    c.add("index_select_int", "index_select", [ints([5, 2], dtype=torch.int32), T([4, 0, 4], L)], lambda a, i: torch.index_select(a, 0, i), {"dim": 0})
    c.add("index_select_matrix_index", "index_select", [x, torch.zeros(2, 2, dtype=L)], lambda a, i: torch.index_select(a, 0, i), {"dim": 0})
    c.add("index_add_int", "index_add", [ints([4, 3], dtype=L), T([1, 1, 3], L), ints([3, 3], dtype=L)], lambda a, i, s: torch.index_add(a, 0, i, s), {"dim": 0})
    c.add("index_add_bad_src", "index_add", [rnd([4, 3]), T([1, 1, 3], L), rnd([2, 3])], lambda a, i, s: torch.index_add(a, 0, i, s), {"dim": 0})
    # masked_fill, where with scalars
    m = torch.rand(3, 4) > 0.5
    c.add("masked_fill", "masked_fill", [rnd([3, 4]), m], lambda a, k: a.masked_fill(k, -1.5), {"value": -1.5})
    c.add("masked_fill_bcast", "masked_fill", [rnd([2, 3, 4]), torch.rand(3, 1) > 0.5], lambda a, k: a.masked_fill(k, float("-inf")), {"value": float("-inf")})
    c.add("masked_fill_int", "masked_fill", [ints([3, 4], dtype=L), m], lambda a, k: a.masked_fill(k, 7), {"value": 7})
    c.add("masked_fill_not_bool", "masked_fill", [rnd([3, 4]), ints([3, 4], dtype=L)], lambda a, k: a.masked_fill(k, 1), {"value": 1})
    c.add("where_scalar_x", "where_scalar_x", [m, rnd([3, 4]).float()], lambda k, b: torch.where(k, 2.5, b), {"scalar": 2.5})
    c.add("where_scalar_x_int", "where_scalar_x", [m, ints([3, 4], dtype=L)], lambda k, b: torch.where(k, 2.5, b), {"scalar": 2.5})
    c.add("where_scalar_y", "where_scalar_y", [m, rnd([3, 4], torch.float64)], lambda k, a: torch.where(k, a, -1.0), {"scalar": -1.0})
    c.add("where_scalar_y_int", "where_scalar_y", [m, ints([3, 4], dtype=torch.int32)], lambda k, a: torch.where(k, a, 3), {"scalar": 3})
    c.add("where_scalars", "where_scalars", [m], lambda k: torch.where(k, 1.0, 0.5), {"a": 1.0, "b": 0.5})
    c.add("where_scalars_int", "where_scalars", [m], lambda k: torch.where(k, 4, -2), {"a": 4, "b": -2})
    # tril/triu
    for dg in [0, 1, -1, 3, -4]:
        c.add(f"tril_{dg}", "tril", [rnd([4, 5])], lambda a, dg=dg: torch.tril(a, dg), {"diagonal": dg})
        c.add(f"triu_{dg}", "triu", [rnd([2, 4, 3])], lambda a, dg=dg: torch.triu(a, dg), {"diagonal": dg})
    c.add("tril_t", "tril", [(rnd([5, 4]), [("transpose", 0, 1)])], lambda a: torch.tril(a, 0), {"diagonal": 0})
    c.add("triu_bool", "triu", [torch.ones(3, 3, dtype=torch.bool)], lambda a: torch.triu(a, 1), {"diagonal": 1})
    c.add("tril_1d", "tril", [rnd([4])], lambda a: torch.tril(a, 0), {"diagonal": 0})
    # cumsum/cumprod
    for d in range(3):
        c.add(f"cumsum_dim{d}", "cumsum", [x], lambda a, d=d: torch.cumsum(a, d), {"dim": d})
        c.add(f"cumsum_t_dim{d}", "cumsum", [xt], lambda a, d=d: torch.cumsum(a, d), {"dim": d})
        c.add(f"cumprod_dim{d}", "cumprod", [(torch.rand(3, 4, 5, dtype=torch.float64) + 0.5)], lambda a, d=d: torch.cumprod(a, d), {"dim": d})
    c.add("cumsum_f32", "cumsum", [torch.rand(2, 300)], lambda a: torch.cumsum(a, 1), {"dim": 1})
    c.add("cumsum_int32", "cumsum", [ints([3, 4], dtype=torch.int32)], lambda a: torch.cumsum(a, 0), {"dim": 0})
    c.add("cumsum_bool", "cumsum", [m], lambda a: torch.cumsum(a, 1), {"dim": 1})
    c.add("cumprod_int", "cumprod", [ints([3, 4], -2, 3, dtype=L)], lambda a: torch.cumprod(a, 1), {"dim": 1})
    c.add("cumsum_neg_dim", "cumsum", [x], lambda a: torch.cumsum(a, -1), {"dim": -1})
    # sort / argsort (stable), with ties and NaN
    tie = ints([4, 9], -2, 3)
    nan = T([[3.0, float("nan"), -1.0, 2.0, float("nan"), -float("inf"), 0.0, float("inf"), 2.0]])
    for desc in [False, True]:
        sfx = "_desc" if desc else ""
        for d in range(3):
            c.add(f"sort_dim{d}{sfx}", "sort", [x], lambda a, d=d, desc=desc: torch.sort(a, dim=d, descending=desc, stable=True), {"dim": d, "descending": desc})
        c.add(f"sort_ties{sfx}", "sort", [tie], lambda a, desc=desc: torch.sort(a, dim=1, descending=desc, stable=True), {"dim": 1, "descending": desc})
        c.add(f"sort_ties_dim0{sfx}", "sort", [(tie, [("transpose", 0, 1)])], lambda a, desc=desc: torch.sort(a, dim=0, descending=desc, stable=True), {"dim": 0, "descending": desc})
        c.add(f"sort_nan{sfx}", "sort", [nan], lambda a, desc=desc: torch.sort(a, dim=1, descending=desc, stable=True), {"dim": 1, "descending": desc})
        c.add(f"sort_int{sfx}", "sort", [ints([3, 50], -5, 6, dtype=L)], lambda a, desc=desc: torch.sort(a, dim=1, descending=desc, stable=True), {"dim": 1, "descending": desc})
        c.add(f"sort_long{sfx}", "sort", [rnd([2, 700])], lambda a, desc=desc: torch.sort(a, dim=1, descending=desc, stable=True), {"dim": 1, "descending": desc})
        c.add(f"argsort_ties{sfx}", "argsort", [tie], lambda a, desc=desc: torch.argsort(a, dim=1, descending=desc, stable=True), {"dim": 1, "descending": desc})
    # topk: inputs without ties
    u = torch.randperm(60).reshape(3, 4, 5).double() / 4
    for k, d, largest in [(2, 2, True), (3, 1, False), (1, 0, True), (5, 2, False), (0, 1, True)]:
        c.add(f"topk_{k}_{d}_{largest}", "topk", [u], lambda a, k=k, d=d, largest=largest: torch.topk(a, k, dim=d, largest=largest, sorted=True),
              {"k": k, "dim": d, "largest": largest})
    c.add("topk_too_many", "topk", [u], lambda a: torch.topk(a, 6, dim=2), {"k": 6, "dim": 2, "largest": True})
    # one_hot, repeat, roll
    c.add("one_hot", "one_hot", [T([[0, 3], [2, 1]], L)], lambda a: torch.nn.functional.one_hot(a, 5), {"num_classes": 5})
    c.add("one_hot_infer", "one_hot", [T([1, 0, 2], L)], lambda a: torch.nn.functional.one_hot(a, -1), {"num_classes": -1})
    c.add("one_hot_float", "one_hot", [T([1.0])], lambda a: torch.nn.functional.one_hot(a, 3), {"num_classes": 3})
    for reps in [[2, 3], [1, 2, 1], [2, 1, 1, 2], [3, 0]]:
        base = rnd([2, 3]) if len(reps) < 3 else rnd([2, 1, 3])
        if len(reps) == 4:
            base = rnd([2, 3])
        c.add(f"repeat_{reps}", "repeat", [base], lambda a, reps=reps: a.repeat(*reps), {"reps": reps})
    c.add("repeat_t", "repeat", [(rnd([3, 2]), [("transpose", 0, 1)])], lambda a: a.repeat(2, 2), {"reps": [2, 2]})
    c.add("repeat_too_few", "repeat", [rnd([2, 3])], lambda a: a.repeat(2), {"reps": [2]})
    for shifts, dims in [([1], [0]), ([-2], [1]), ([7], [1]), ([1, 2], [0, 1]), ([3], [])]:
        c.add(f"roll_{shifts}_{dims}", "roll", [Arange([3, 4])], lambda a, s=shifts, d=dims: torch.roll(a, s, d), {"shifts": shifts, "dims": dims})
    # outer, bmm, baddbmm, einsum
    c.add("outer", "outer", [rnd([3]), rnd([4])], torch.outer)
    c.add("outer_int", "outer", [ints([3], dtype=L), ints([2], dtype=L)], torch.outer)
    c.add("bmm", "bmm", [rnd([2, 3, 4]), rnd([2, 4, 5])], torch.bmm)
    c.add("bmm_t", "bmm", [(rnd([2, 4, 3]), [("transpose", 1, 2)]), rnd([2, 4, 2])], torch.bmm)
    c.add("bmm_batch_mismatch", "bmm", [rnd([2, 3, 4]), rnd([3, 4, 5])], torch.bmm)
    c.add("bmm_2d", "bmm", [rnd([3, 4]), rnd([4, 5])], torch.bmm)
    c.add("baddbmm", "baddbmm", [rnd([2, 3, 5]), rnd([2, 3, 4]), rnd([2, 4, 5])], lambda i, a, b: torch.baddbmm(i, a, b, beta=0.5, alpha=2.0), {"beta": 0.5, "alpha": 2.0})
    c.add("baddbmm_bcast", "baddbmm", [rnd([5]), rnd([2, 3, 4]), rnd([2, 4, 5])], lambda i, a, b: torch.baddbmm(i, a, b), {"beta": 1.0, "alpha": 1.0})
    c.add("baddbmm_beta0", "baddbmm", [T([float("nan")]), rnd([2, 3, 4]), rnd([2, 4, 5])], lambda i, a, b: torch.baddbmm(i, a, b, beta=0.0), {"beta": 0.0, "alpha": 1.0})
    eqs = [
        ("ij,jk->ik", [[3, 4], [4, 5]]), ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]), ("i,j->ij", [[3], [4]]),
        ("ii->", [[4, 4]]), ("ii->i", [[4, 4]]), ("ij->ji", [[3, 4]]), ("ij->j", [[3, 4]]), ("ij->", [[3, 4]]),
        ("i,i->", [[5], [5]]), ("bhqd,bhkd->bhqk", [[2, 2, 3, 4], [2, 2, 5, 4]]), ("ij,jk", [[3, 4], [4, 2]]),
        ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]), ("bij->bji", [[2, 3, 4]]), ("ijk->kij", [[2, 3, 4]]),
        ("ij,kj->ik", [[3, 4], [5, 4]]), ("ij,ij->ij", [[3, 4], [3, 4]]), ("iij->j", [[3, 3, 2]]), ("ik,jk->", [[2, 3], [4, 3]]),
    ]
    for eq, shapes in eqs:
        c.add(f"einsum_{eq}", "einsum", [rnd(s) for s in shapes], lambda *a, eq=eq: torch.einsum(eq, *a), {"equation": eq})
    c.add("einsum_bad_rank", "einsum", [rnd([3, 4])], lambda a: torch.einsum("ijk->i", a), {"equation": "ijk->i"})
    c.add("einsum_size_mismatch", "einsum", [rnd([3, 4]), rnd([5, 2])], lambda a, b: torch.einsum("ij,jk->ik", a, b), {"equation": "ij,jk->ik"})
    c.write("index.json")


def gen_half():
    """half/half.json (not a conformance-suite file): bfloat16 and float16. Values are bits (ints): float32
    inputs as their 32 bits, two-byte results as their 16 bits, so the
    cases compare exactly. Its own seed, so the other files do not move."""
    import struct
    g = torch.Generator().manual_seed(1414)
    f32bits = lambda t: t.float().contiguous().view(torch.int32).flatten().tolist()
    hbits = lambda t: t.contiguous().view(torch.int16).flatten().tolist()
    u16 = lambda v: [x & 0xFFFF for x in v]
    u32 = lambda v: [x & 0xFFFFFFFF for x in v]
    B = lambda bits: torch.tensor(struct.unpack("<%df" % len(bits), struct.pack("<%dI" % len(bits), *bits)))
    edge = [
        0x00000000, 0x80000000, 0x3F800000, 0xBF800000,
        0x3F808000, 0x3F818000, 0x3F808001, 0x3F817FFF,  # bf16 ties to even, above/below
        0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000,  # inf, NaNs
        0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF,  # max float, bf16 rounding to inf or not
        0x00000001, 0x00400000, 0x007FFFFF, 0x80000001, 0x00808000, 0x00018000,  # float32 subnormals
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000, 0xC77FF000,  # 65504, up to fp16 overflow
        0x33800000, 0x33000000, 0x33000001, 0x33400000, 0x32800000, 0x38800000, 0x387FC000, 0x38801000, 0x38802000, 0x3A000000,  # fp16 subnormals and ties
        0x3F802000, 0x3F801000, 0x3F803000, 0x3F800FFF,  # fp16 ties
        0x40490FDB, 0xC2F6E979, 0x3DCCCCCD, 0x4B800001, 0x5F000000,
    ]
    x = B(edge)
    cases = []
    cases.append({"name": "cast_f32", "in": edge, "bf16": u16(hbits(x.bfloat16())), "f16": u16(hbits(x.half()))})
    dv = [1.0 + 2.0 ** -8 + 2.0 ** -30, 1.0 + 2.0 ** -11 + 2.0 ** -40, 0.1, 1e-8, 65519.999, 3.3961e38, -2.0 ** -25 - 2.0 ** -60]
    xd = torch.tensor(dv, dtype=torch.float64)
    cases.append({"name": "cast_f64", "in_f64": dv, "bf16": u16(hbits(xd.bfloat16())), "f16": u16(hbits(xd.half()))})
    iv = [0, 1, -3, 257, 259, 2049, 2051, 16777217, 65520, 100000, -(2 ** 40) - 2 ** 30 - 1]
    xi = torch.tensor(iv, dtype=torch.int64)
    cases.append({"name": "cast_i64", "in_i64": iv, "bf16": u16(hbits(xi.bfloat16())), "f16": u16(hbits(xi.half()))})
    # back from the two-byte types: to float32 (exact), int64 (truncation), bool
    hb = x.bfloat16()
    fin = torch.isfinite(hb)
    cases.append({"name": "bf16_back", "bits": u16(hbits(hb)), "f32": u32(f32bits(hb.float())),
                  "i64": hb[fin].long().tolist(), "finite": fin.tolist(), "bool": (hb != 0).tolist()})
    hh = x.half()
    fin = torch.isfinite(hh)
    cases.append({"name": "f16_back", "bits": u16(hbits(hh)), "f32": u32(f32bits(hh.float())),
                  "i64": hh[fin].long().tolist(), "finite": fin.tolist(), "bool": (hh != 0).tolist()})
    # elementwise, computed in float32 and rounded once
    un = {
        "neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "sqrt": torch.sqrt, "square": torch.square,
        "floor": torch.floor, "reciprocal": torch.reciprocal, "exp": torch.exp, "log": torch.log,
        "tanh": torch.tanh, "sigmoid": torch.sigmoid, "sin": torch.sin, "silu": torch.nn.functional.silu,
    }
    bi = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
          "minimum": torch.minimum, "pow": torch.pow, "atan2": torch.atan2}
    cmp = {"eq": torch.eq, "lt": torch.lt, "ge": torch.ge}
    for dt, dn in ((torch.bfloat16, "bfloat16"), (torch.float16, "float16")):
        a = (torch.randn(64, generator=g) * 3).to(dt)
        b = (torch.randn(64, generator=g) * 3).to(dt)
        pos = (torch.rand(64, generator=g) * 4 + 0.05).to(dt)
        def ok(f, *args):  # torch 1.13 lacks some float16 kernels on the CPU: those cases are left out
            try:
                f(*args)
                return True
            except RuntimeError:
                return False
        for name, f in un.items():
            inp = pos if name in ("sqrt", "log") else a
            if ok(f, inp):
                cases.append({"name": f"{name}_{dn}", "op": name, "dtype": dn, "a": u16(hbits(inp)), "out": u16(hbits(f(inp)))})
        for name, f in bi.items():
            aa = pos if name == "pow" else a
            if ok(f, aa, b):
                cases.append({"name": f"{name}_{dn}", "op": name, "dtype": dn, "a": u16(hbits(aa)), "b": u16(hbits(b)), "out": u16(hbits(f(aa, b)))})
        for name, f in cmp.items():
            bb = torch.where(torch.arange(64) % 3 == 0, a, b)
            if ok(f, a, bb):
                cases.append({"name": f"{name}_{dn}", "op": name, "dtype": dn, "a": u16(hbits(a)), "b": u16(hbits(bb)), "bool": f(a, bb).tolist()})
        # reductions over [8, 64] (dim 1 and all), accumulated in float32 (torch 1.13 has no bfloat16 prod on the CPU)
        m = (torch.randn(8, 64, generator=g) * 2 + 0.5).to(dt)
        for name, f in (("sum", lambda t, d: t.sum(d)), ("mean", lambda t, d: t.mean(d)),
                        ("max", lambda t, d: t.amax(d)), ("min", lambda t, d: t.amin(d)),
                        ("var", lambda t, d: t.var(d)), ("softmax", lambda t, d: t.softmax(d))):
            if ok(f, m, 1):
                cases.append({"name": f"r{name}_{dn}", "op": name, "dtype": dn, "a": u16(hbits(m)), "out": u16(hbits(f(m, 1)))})
        if ok(lambda: m.argmax(1)):
            cases.append({"name": f"rargmax_{dn}", "op": "argmax", "dtype": dn, "a": u16(hbits(m)), "i64": m.argmax(1).tolist()})
        if ok(lambda: m.sum()):
            cases.append({"name": f"rsumall_{dn}", "op": "sumall", "dtype": dn, "a": u16(hbits(m)), "out": u16(hbits(m.sum().reshape(1)))})
        # mixed: int + half, half + float32, bf16 + fp16
        if ok(lambda: a + torch.arange(64)):
            cases.append({"name": f"int_plus_{dn}", "op": "int_plus", "dtype": dn, "a": u16(hbits(a)), "i64": list(range(64)),
                          "out": u16(hbits(a + torch.arange(64)))})
    a16 = torch.randn(16, generator=g).bfloat16()
    b16 = torch.randn(16, generator=g).half()
    cases.append({"name": "bf16_plus_f16", "a": u16(hbits(a16)), "b": u16(hbits(b16)), "f32": u32(f32bits(a16 + b16)), "dtype": str(a16 + b16)})
    prints = []
    for t in (torch.tensor([1.0, 2.5, 3.14159, -1e-3]).bfloat16(), torch.tensor([[1.0, 2.0], [3.0, 65504.0]]).half(),
              torch.tensor(0.1).bfloat16(), torch.tensor([float("nan"), float("inf"), 1e-7]).half(), torch.arange(5).bfloat16()):
        prints.append({"dtype": str(t.dtype)[6:], "shape": list(t.shape), "bits": u16(hbits(t)), "str": str(t)})
    proms = []
    for a_, b_ in ((torch.bfloat16, torch.float16), (torch.bfloat16, torch.float32), (torch.float16, torch.float64),
                   (torch.int64, torch.bfloat16), (torch.int32, torch.float16), (torch.bool, torch.bfloat16), (torch.bfloat16, torch.bfloat16)):
        proms.append([str(a_)[6:], str(b_)[6:], str(torch.promote_types(a_, b_))[6:]])
    # weights: a torch.save checkpoint and a safetensors file (written by
    # hand: torch 1.13 has no safetensors) holding bf16/fp16 tensors, one of
    # them a non-contiguous view, and their bits.
    wb = (torch.randn(3, 5, generator=g) * 4).bfloat16()
    wh = (torch.randn(4, 2, generator=g) * 300).half()
    wt = torch.randn(6, 4, generator=g).bfloat16().t()
    torch.save({"wb": wb, "wh": wh, "wt": wt}, os.path.join(OUT, "half", "half.pth"))
    hdr, blob = {}, b""
    for k, t in (("wb", wb), ("wh", wh)):
        raw = t.contiguous().view(torch.int16).numpy().tobytes()
        hdr[k] = {"dtype": "BF16" if t.dtype == torch.bfloat16 else "F16", "shape": list(t.shape), "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    h = json.dumps(hdr).encode()
    with open(os.path.join(OUT, "half", "half.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + blob)
    weights = {k: {"dtype": str(t.dtype)[6:], "shape": list(t.shape), "bits": u16(hbits(t))} for k, t in (("wb", wb), ("wh", wh), ("wt", wt))}
    # matrix products: torch.mm on bf16 (float32 accumulation, one rounding)
    ma = torch.randn(16, 96, generator=g).bfloat16()
    mb = torch.randn(96, 24, generator=g).bfloat16()
    cases.append({"name": "mm_bfloat16", "op": "mm", "dtype": "bfloat16", "a": u16(hbits(ma)), "b": u16(hbits(mb)), "out": u16(hbits(torch.mm(ma, mb)))})
    # float16: torch 1.13 has no CPU fp16 mm; PyTorch's fp16 mm elsewhere
    # (cuBLAS, later CPU releases) is the float32 product of the values,
    # rounded once: that
    ha = torch.randn(16, 96, generator=g).half()
    hb = torch.randn(96, 24, generator=g).half()
    cases.append({"name": "mm_float16", "op": "mm", "dtype": "float16", "a": u16(hbits(ha)), "b": u16(hbits(hb)), "out": u16(hbits(torch.mm(ha.float(), hb.float()).half()))})
    with open(os.path.join(OUT, "half", "half.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases, "print": prints, "promote": proms, "weights": weights}, f, indent=0)
        f.write("\n")


def gen_autocast():
    """half/autocast.json: a linear + cross-entropy step under
    torch.autocast("cpu", torch.bfloat16), its own seed."""
    torch.manual_seed(7)
    x = torch.randn(4, 8)
    w = torch.randn(5, 8, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    t = torch.tensor([1, 0, 4, 2])
    with torch.autocast("cpu", torch.bfloat16):
        y = torch.nn.functional.linear(x, w, b)
        loss = torch.nn.functional.cross_entropy(y, t)
    loss.backward()
    out = {"torch": torch.__version__, "x": x.flatten().tolist(), "w": w.detach().flatten().tolist(), "b": b.detach().flatten().tolist(),
           "t": t.tolist(), "y_bits": (y.detach().contiguous().view(torch.int16).flatten().int() & 0xFFFF).tolist(), "loss": loss.item(),
           "w_grad": w.grad.flatten().tolist(), "b_grad": b.grad.flatten().tolist()}
    # one training step of gen_nn_fixtures.py's small CNN without its LayerNorm (its initial
    # weights and batch from testdata/nn/cnn_grad.safetensors) under autocast
    import importlib.util
    import struct
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("gen_nn_fixtures", os.path.join(here, "gen_nn_fixtures.py"))
    nnfix = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nnfix)
    with open(os.path.join(here, "nn", "cnn_grad.safetensors"), "rb") as f:
        raw = f.read()
    hl = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + hl])
    dts = {"F32": torch.float32, "I64": torch.int64}
    T = {}
    for k, e in hdr.items():
        if k == "__metadata__":
            continue
        a, b = e["data_offsets"]
        T[k] = torch.frombuffer(bytearray(raw[8 + hl + a:8 + hl + b]), dtype=dts[e["dtype"]]).reshape(e["shape"])
    m = nnfix.small_cnn()
    m[8] = torch.nn.Identity()  # torch 1.13's CPU autocast fails on layer_norm (bf16 input, float32 weight)
    m.load_state_dict({k[5:]: v for k, v in T.items() if k.startswith("init.") and not k.startswith("init.8.")})
    with torch.autocast("cpu", torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(m(T["x"]), T["target"])
    loss.backward()
    out["cnn_loss"] = loss.item()
    out["cnn_grads"] = {k: p.grad.flatten().tolist() for k, p in m.named_parameters()}
    with open(os.path.join(OUT, "half", "autocast.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")


def gen_half_ops():
    """half/ops.json: bfloat16/float16 ops that PyTorch computes in float32
    and rounds once (GELU and its gradient, adaptive average pooling,
    baddbmm, linear, in-place ops with a wider operand, addcmul_, addcdiv_,
    add_ with alpha), linspace's values, and baddbmm/matmul under
    torch.autocast("cpu", bfloat16). Tensors as in gen_half: two-byte
    values as their bits, float32 as their 32 bits. Where torch 1.13 has no
    CPU float16 kernel the float16 case is the float32 op on the values,
    rounded once (what PyTorch's float16 kernels elsewhere compute),
    marked "emulated". Its own seed."""
    import struct
    g = torch.Generator().manual_seed(1415)
    F = torch.nn.functional
    DN = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32", torch.float64: "float64"}

    def T(t):
        t = t.detach().contiguous()
        if t.dtype in (torch.bfloat16, torch.float16):
            bits = [x & 0xFFFF for x in t.view(torch.int16).flatten().tolist()]
        elif t.dtype == torch.float32:
            bits = [x & 0xFFFFFFFF for x in t.view(torch.int32).flatten().tolist()]
        else:
            bits = [struct.unpack("<Q", struct.pack("<d", x))[0] for x in t.flatten().tolist()]
        return {"shape": list(t.shape), "dtype": DN[t.dtype], "bits": bits}

    cases = []

    def add(name, op, inputs, out, args=None, emulated=False, grads=None):
        c = {"name": name, "op": op, "inputs": [T(x) for x in inputs], "out": T(out)}
        if args:
            c["args"] = args
        if emulated:
            c["emulated"] = True
        if grads is not None:
            c["grads"] = [T(x) for x in grads]
        cases.append(c)

    def has(f):  # torch 1.13 lacks some CPU float16 kernels
        try:
            f()
            return True
        except RuntimeError:
            return False

    for dt in (torch.bfloat16, torch.float16):
        dn = DN[dt]
        # GELU (exact) and its gradient on [-5, 5]
        x = torch.cat([torch.tensor([-3.1, 1.0]), torch.linspace(-5, 5, 801)]).to(dt)
        gy = torch.randn(x.shape, generator=g).to(dt)
        if has(lambda: F.gelu(x)):
            add(f"gelu_{dn}", "gelu", [x, gy], F.gelu(x), grads=[torch.ops.aten.gelu_backward(gy, x)])
        else:
            add(f"gelu_{dn}", "gelu", [x, gy], F.gelu(x.float()).to(dt), emulated=True,
                grads=[torch.ops.aten.gelu_backward(gy.float(), x.float()).to(dt)])
        # adaptive average pooling to sizes other than 1x1, forward and backward
        for i, (xin, osz) in enumerate((((torch.arange(0, 81) / 7).reshape(1, 1, 9, 9), (2, 3)),
                                        (torch.randn(2, 3, 9, 7, generator=g) * 3, (4, 3)),
                                        (torch.randn(1, 2, 10, 11, generator=g) * 5, (3, 5)))):
            xh = xin.to(dt).requires_grad_()
            gout = torch.randn(xin.shape[0], xin.shape[1], *osz, generator=g).to(dt)
            # the gradient is the float32 one rounded once: torch 1.13's bf16
            # backward adds each window's share in bfloat16, rounding per step
            xf = xh.detach().float().requires_grad_()
            yf = F.adaptive_avg_pool2d(xf, osz)
            yf.backward(gout.float())
            if has(lambda: F.adaptive_avg_pool2d(xh, osz)):
                y = F.adaptive_avg_pool2d(xh, osz)
                assert torch.equal(y, yf.to(dt))
                add(f"adaptive_avg_pool2d_{i}_{dn}", "adaptive_avg_pool2d", [xh, gout], y, {"size": list(osz)}, grads=[xf.grad.to(dt)])
            else:
                add(f"adaptive_avg_pool2d_{i}_{dn}", "adaptive_avg_pool2d", [xh, gout], yf.to(dt), {"size": list(osz)}, True, [xf.grad.to(dt)])
        # baddbmm: small (torch's loop) and large enough for its GEMM path
        for i, (inp, b1, b2, beta, alpha) in enumerate((
                (torch.tensor([[[1.3]]]), torch.tensor([[[1.1]]]), torch.tensor([[[1.1]]]), 0.7, 1.3),
                (torch.randn(3, 5, generator=g) * 4, torch.randn(2, 3, 4, generator=g), torch.randn(2, 4, 5, generator=g) * 2, 0.7, 1.3),
                (torch.randn(2, 16, 24, generator=g), torch.randn(2, 16, 32, generator=g), torch.randn(2, 32, 24, generator=g), -0.3, 0.9),
                (torch.randn(2, 3, 5, generator=g), torch.randn(2, 3, 6, generator=g), torch.randn(2, 6, 5, generator=g), 1.0, 1.0),
                (torch.full((2, 3, 5), float("nan")), torch.randn(2, 3, 6, generator=g), torch.randn(2, 6, 5, generator=g), 0.0, 2.5))):
            args = {"beta": beta, "alpha": alpha}
            ih, b1h, b2h = inp.to(dt), b1.to(dt), b2.to(dt)
            once = torch.baddbmm(ih.float(), b1h.float(), b2h.float(), beta=beta, alpha=alpha).to(dt)
            # torch 1.13's bf16 baddbmm is that (float32, rounded once) on its
            # GEMM path; its loop for small products (b1 rows x b2 columns x
            # the inner size under 400) computes in bfloat16, rounding at
            # every step: those cases are the float32 op, rounded once
            if has(lambda: torch.baddbmm(ih, b1h, b2h, beta=beta, alpha=alpha)) and torch.equal(torch.baddbmm(ih, b1h, b2h, beta=beta, alpha=alpha), once):
                add(f"baddbmm_{i}_{dn}", "baddbmm", [ih, b1h, b2h], torch.baddbmm(ih, b1h, b2h, beta=beta, alpha=alpha), args)
            else:
                add(f"baddbmm_{i}_{dn}", "baddbmm", [ih, b1h, b2h], once, args, True)
        # linear with a bias: 2-D and 3-D input
        w = (torch.randn(6, 9, generator=g)).to(dt)
        b = (torch.randn(6, generator=g) * 3).to(dt)
        for i, xin in enumerate((torch.randn(5, 9, generator=g) * 2, torch.randn(2, 4, 9, generator=g) * 2,
                                 torch.tensor([-3.1, -1.5, -0.0, 0.0, 0.3, 0.7, 1.0, 2.5, 100.3]).reshape(1, 9))):
            xh = xin.to(dt)
            if has(lambda: F.linear(xh, w, b)):
                add(f"linear_{i}_{dn}", "linear", [xh, w, b], F.linear(xh, w, b))
            else:
                add(f"linear_{i}_{dn}", "linear", [xh, w, b], F.linear(xh.float(), w.float(), b.float()).to(dt), emulated=True)
        # in-place ops with a wider (or other two-byte) operand: computed in
        # the result type, rounded once on the store
        t = (torch.randn(64, generator=g) * 3).to(dt)
        other = torch.bfloat16 if dt == torch.float16 else torch.float16
        for on, o in (("f32", torch.randn(64, generator=g) * 0.01 + 0.5), ("f64", (torch.randn(64, generator=g) * 0.01 + 0.5).double()),
                      ("other", (torch.randn(64, generator=g) + 0.5).to(other))):
            for op in ("add_", "sub_", "mul_", "div_"):
                if has(lambda: getattr(t.clone(), op)(o)):
                    add(f"{op}{on}_{dn}", op, [t, o], getattr(t.clone(), op)(o))
                else:
                    add(f"{op}{on}_{dn}", op, [t, o], getattr(t.float(), op)(o).to(dt), emulated=True)
        # fused in-place ops: computed in float32 from the two-byte values
        n = 64
        t, o, a = (torch.randn(n, generator=g) * 3).to(dt), (torch.randn(n, generator=g) * 3).to(dt), torch.randn(n, generator=g).to(dt)
        bb = (torch.randn(n, generator=g).abs() + 0.1).to(dt)
        for v in (0.3, -0.7):
            if has(lambda: t.clone().addcmul_(a, bb, value=v)):
                add(f"addcmul_{v}_{dn}", "addcmul_", [t, a, bb], t.clone().addcmul_(a, bb, value=v), {"value": v})
                add(f"addcdiv_{v}_{dn}", "addcdiv_", [t, a, bb], t.clone().addcdiv_(a, bb, value=v), {"value": v})
            else:
                add(f"addcmul_{v}_{dn}", "addcmul_", [t, a, bb], (t.float() + (v * a.float()) * bb.float()).to(dt), {"value": v}, True)
                add(f"addcdiv_{v}_{dn}", "addcdiv_", [t, a, bb], (t.float() + (v * a.float()) / bb.float()).to(dt), {"value": v}, True)
            # add_ with alpha: n a multiple of 32 runs torch 1.13's vectorised
            # kernel throughout, whose bf16 alpha is rounded to bf16 and whose
            # arithmetic is float32, rounded once; float16 (a scalar Half
            # kernel in 1.13, rounding twice) emulated by that rule
            vr = float(torch.tensor(v).to(dt))
            if dt == torch.bfloat16:
                add(f"add_alpha_{v}_{dn}", "add_alpha", [t, o], t.clone().add_(o, alpha=v), {"alpha": v})
            else:
                add(f"add_alpha_{v}_{dn}", "add_alpha", [t, o], (t.float() + vr * o.float()).to(dt), {"alpha": v}, True)
            # a float32 tensor plus alpha times a two-byte one: all float32
            tf = torch.randn(n, generator=g)
            add(f"add_alpha_f32_{v}_{dn}", "add_alpha", [tf, o], tf.clone().add_(o.float(), alpha=v), {"alpha": v})
        cases.append({"name": f"addcmul_one_{dn}", "op": "addcmul_", "inputs": [T(torch.tensor([1.0]).to(dt)), T(torch.tensor([1.1]).to(dt)), T(torch.tensor([1.1]).to(dt))],
                      "args": {"value": 0.3}, "out": T((torch.tensor([1.0]).to(dt).float() + (0.3 * torch.tensor([1.1]).to(dt).float()) * torch.tensor([1.1]).to(dt).float()).to(dt))})
        # linspace (torch 1.13 computes it in the two-byte type)
        for i, (a_, b_, n_) in enumerate(((0, 1, 5), (-3.7, 12.9, 50), (0, 1000, 1001), (-100, 100, 33), (1.3, -2.7, 7),
                                          (5, 5, 1), (0.1, 0.2, 65), (2, 3, 2), (-1, 1, 0), (0, 255, 256), (-7.5, 300.25, 129))):
            add(f"linspace_{i}_{dn}", "linspace", [], torch.linspace(a_, b_, n_, dtype=dt), {"start": a_, "end": b_, "steps": n_})
    # under torch.autocast("cpu", bfloat16): baddbmm's float32 operands are
    # cast to bfloat16 (big enough for torch's GEMM path: float32, rounded
    # once); float64 operands keep their dtype (matmul)
    inp, b1, b2 = torch.randn(2, 16, 24, generator=g), torch.randn(2, 16, 32, generator=g), torch.randn(2, 32, 24, generator=g)
    with torch.autocast("cpu", torch.bfloat16):
        y = torch.baddbmm(inp, b1, b2, beta=0.7, alpha=1.3)
        md = torch.randn(3, 4, generator=g, dtype=torch.float64)
        ym = md @ md.t()
    add("autocast_baddbmm", "autocast_baddbmm", [inp, b1, b2], y, {"beta": 0.7, "alpha": 1.3})
    add("autocast_matmul_f64", "autocast_matmul", [md, md.t().contiguous()], ym)
    with open(os.path.join(OUT, "half", "ops.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    gen_binary()
    gen_unary()
    gen_reduce()
    gen_matmul()
    gen_views()
    gen_print()
    gen_table()
    gen_index()
    gen_half()
    gen_half_ops()
    gen_autocast()
    for f in sorted(os.listdir(OUT)):
        print(f, os.path.getsize(os.path.join(OUT, f)))
