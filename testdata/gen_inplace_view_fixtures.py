"""Generate PyTorch reference gradients for in-place ops on views inside a
graph (CopySlices, view history regeneration) and the errors PyTorch raises
for the refused cases. Run with /usr/bin/python3 (torch 1.13):
    /usr/bin/python3 testdata/gen_inplace_view_fixtures.py
Writes testdata/fixtures/grad/grad_inplace_views.json in gen_grad_fixtures.py's
format (params.op names the idiom, mirrored by inplace_views_test.go; masks
and indices are stored as integers) and
testdata/fixtures/grad/inplace_view_errors.json: idiom name -> PyTorch's
error message.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_grad_fixtures as g  # noqa: E402


def narrow_add(x, b):  # y[:, :2] += b
    y = x * 2
    y.narrow(1, 0, 2).add_(b)
    return y


def narrow_mul(x):  # y.narrow(0, 0, 1).mul_(3)
    y = x * 2
    y.narrow(0, 0, 1).mul_(3)
    return y


def select_zero(x):  # y[0].zero_(), y read through a product with x
    y = x * x
    y[0].zero_()
    return y * x


def rnn(x, w, u):  # out[:, t] = h: fill a buffer step by step
    b, steps, _ = x.shape
    out = torch.zeros(b, steps, w.shape[1], dtype=x.dtype)
    h = torch.zeros(b, w.shape[1], dtype=x.dtype)
    for t in range(steps):
        h = torch.tanh(x[:, t] @ w + h @ u)
        out[:, t].copy_(h)
    return out


def view_before(x):  # a view made before the base was written through another
    y = x * 2
    v1 = y[1]
    y[0].mul_(3)
    return v1 * y[0]


def base_write(x):  # the base written directly, then a view made before
    y = x * 2
    v = y[1]
    y.mul_(x)
    return v * 5


def chained(x, w):  # narrow of a transpose, mul_ by a graph tensor
    y = x * 2
    y.t().narrow(0, 1, 2).mul_(w)
    return y


def broadcast(x, b):  # y[:, 1] += b with b broadcast over the view
    y = x * 2
    y[:, 1].add_(b)
    return y


def masked(x, m):  # y[0][m] = 5, as a where written through the view
    y = x * 2
    v = y[0]
    v.copy_(torch.where(m != 0, torch.tensor(5.0, dtype=x.dtype), v))
    return y


def index(x, src, i):  # y[1][i] = src, as a scatter written through the view
    y = x * 2
    v = y[1]
    v.copy_(v.scatter(0, i, src))
    return y


def plain_buffer(x):  # a plain tensor joins the graph through its view
    buf = torch.zeros(4, 3, dtype=x.dtype)
    buf[1:3].copy_(x * 2)
    return buf * 3


def overlapping(x, w, b):  # two writes through overlapping views
    y = x * 2
    y[:, 0:2].mul_(w)
    y[:, 1:3].add_(b)
    return y


def view_of_view(x):  # y[1][0:2] *= 3, then another view of y[1] read
    y = x * 2
    v = y[1]
    u = v[1:]
    v[0:2].mul_(3)
    return u * y[:, 0:2]


def views_operand(x):  # y[0] += y[1]: the operand a view of the same base
    y = x * 2
    y[0].add_(y[1])
    return y


def fill(x):  # y[:, 1].fill_(7), then sqrt_ through another view
    y = x * x + 1
    y[:, 1].fill_(7)
    y[0].sqrt_()
    return y


def view_self_add(x):  # v += v: the view its own operand
    y = x * 2
    v = y[0:2]
    v.add_(v)
    return y * x


def strided_base(x, h):  # a base not contiguous (a detached transpose)
    d = (x * 2).t().detach()
    d[0:1].copy_(h * 3)
    return d * x.t()


def overlap_transpose(x, w, c):  # a second write through another, overlapping view
    y = x * 2
    y[:, 0:2].mul_(w)
    y.t()[1].mul_(c)  # column 1 again, written by the first
    return y * x


def base_twice(x):  # the base written twice, then two views made before read
    y = x * 2
    v = y[1]
    u = y[:, 1]
    y.mul_(x)
    y.add_(1)
    return v * u[0] + u.sum()


def inner_then_middle(x, w):  # u of v made, v written, then u written
    y = x * 2
    v = y[1]
    u = v[1:]
    v.mul_(x[0])
    u.mul_(w)
    return y * x + u.sum()


def negative_select(x):  # select with negative indices, mul_ by a graph tensor
    y = x * 2
    y.select(1, -1).mul_(x[:, 0])
    y.select(0, -2).add_(x[1])
    return y * y


def permute_expand(x):  # a permuted view written, the base read expanded
    y = (x * 2).unsqueeze(0)
    y.permute(2, 0, 1)[1].mul_(x[:, 0].unsqueeze(0))
    return y.expand(2, 2, 3) * x


def div_views(x, w):  # div_ saves self's old value and the divisor
    y = x * 2 + 3
    y[0, 0:2].div_(w + 2)
    y[:, 2].div_(x[:, 1] + 3)
    return y * y


def errors():
    out = {}

    def run(name, f):
        try:
            f()
        except RuntimeError as e:
            out[name] = str(e)
            return
        raise SystemExit("%s: no error" % name)

    def leaf_view():
        x = torch.ones(3, requires_grad=True)
        x[0:2].mul_(2)

    def leaf_view_copy():
        x = torch.ones(3, requires_grad=True)
        x.view(3)[0].copy_(torch.tensor(1.0))

    def no_grad_view():
        y = torch.ones(3, requires_grad=True) * 2
        with torch.no_grad():
            v = y[0:2]
        v.mul_(2)

    def no_grad_view_plain():
        buf = torch.zeros(4)
        with torch.no_grad():
            v = buf[0:2]
        v.copy_(torch.ones(2, requires_grad=True))

    def no_grad_view_indirect():
        y = torch.ones(3, requires_grad=True) * 2
        with torch.no_grad():
            v = y[0:2]
        y.mul_(2)
        v * 1

    def split_output():
        y = torch.ones(4, requires_grad=True) * 2
        _, b = y.split(2)
        b.mul_(2)

    def chunk_view():
        y = torch.ones(4, requires_grad=True) * 2
        a, _ = y.chunk(2)
        a[0].mul_(2)

    def split_indirect():
        y = torch.ones(4, requires_grad=True) * 2
        a, _ = y.split(2)
        y.mul_(2)
        a * 1

    def split_plain():
        a, _ = torch.zeros(4).split(2)
        a.copy_(torch.ones(2, requires_grad=True))

    def saved_then_view_write():
        x = torch.ones(4, requires_grad=True)
        y = x * 2
        p = y[0:2] * x[0:2]  # saves the view y[0:2]
        y[2:].add_(1)  # another view of y: the version is y's
        p.sum().backward()

    def copy_slices_saved():
        x = torch.ones(4, requires_grad=True)
        w = x[0:2] * 1
        y = x * 2
        y[0:2].mul_(w)  # mul_ saves w
        w.add_(1)
        y.sum().backward()

    def version_one_op():  # one bump per in-place op
        x = torch.ones(4, requires_grad=True)
        y = x * 2
        z = y * y
        y.add_(1)
        z.sum().backward()

    def version_two_ops():
        x = torch.ones(4, requires_grad=True)
        y = x * 2
        z = y * y
        y.add_(1)
        y.mul_(2)
        z.sum().backward()

    def version_self_operand():  # mul_ saves y itself as its operand
        x = torch.ones(4, requires_grad=True)
        y = x * 2
        y.mul_(y)
        y.sum().backward()

    def version_view_copy():
        x = torch.ones(4, requires_grad=True)
        y = x * 2
        z = y.sin()
        y[1:].copy_(x[1:])
        z.sum().backward()

    def overlap_expand():  # (ember: ShapeError)
        (torch.ones(3, requires_grad=True) * 2).expand(2, 3).add_(1)

    def overlap_partial():  # (ember: ShapeError)
        y = torch.ones(3, requires_grad=True) * 2
        y[0:2].add_(y[1:3])

    def overlap_partial_copy():  # (ember: ShapeError)
        y = torch.ones(3, requires_grad=True) * 2
        y[0:2].copy_(y[1:3])

    for name, f in list(locals().items()):
        if callable(f) and name not in ("run",):
            run(name, f)
    return out


def main():
    torch.manual_seed(23)
    r = g.randn
    cases = [
        g.case({"op": "narrow_add"}, {"x": r(3, 4), "b": r(3, 2)}, narrow_add),
        g.case({"op": "narrow_mul"}, {"x": r(3, 4)}, narrow_mul),
        g.case({"op": "select_zero"}, {"x": r(2, 3)}, select_zero),
        g.case({"op": "rnn"}, {"x": r(2, 4, 3), "w": r(3, 5) * 0.5, "u": r(5, 5) * 0.5}, rnn),
        g.case({"op": "view_before"}, {"x": r(2, 3)}, view_before),
        g.case({"op": "base_write"}, {"x": r(2, 3)}, base_write),
        g.case({"op": "chained"}, {"x": r(3, 4), "w": r(2, 3)}, chained),
        g.case({"op": "broadcast"}, {"x": r(2, 3, 4), "b": r(4)}, broadcast),
        g.case({"op": "masked"}, {"x": r(2, 4), "m": torch.tensor([1, 0, 0, 1])}, masked),
        g.case({"op": "index"}, {"x": r(2, 4), "src": r(2), "i": torch.tensor([3, 0])}, index),
        g.case({"op": "plain_buffer"}, {"x": r(2, 3)}, plain_buffer),
        g.case({"op": "overlapping"}, {"x": r(2, 3), "w": r(2, 2), "b": r(2, 2)}, overlapping),
        g.case({"op": "view_of_view"}, {"x": r(2, 3)}, view_of_view),
        g.case({"op": "views_operand"}, {"x": r(2, 3)}, views_operand),
        g.case({"op": "fill"}, {"x": r(2, 3)}, fill),
        g.case({"op": "view_self_add"}, {"x": r(3, 2)}, view_self_add),
        g.case({"op": "strided_base"}, {"x": r(3, 2), "h": r(1, 3)}, strided_base),
        g.case({"op": "overlap_transpose"}, {"x": r(2, 3), "w": r(2, 2), "c": r(2)}, overlap_transpose),
        g.case({"op": "base_twice"}, {"x": r(2, 3)}, base_twice),
        g.case({"op": "inner_then_middle"}, {"x": r(2, 3), "w": r(2)}, inner_then_middle),
        g.case({"op": "negative_select"}, {"x": r(2, 3)}, negative_select),
        g.case({"op": "permute_expand"}, {"x": r(2, 3)}, permute_expand),
        g.case({"op": "div_views"}, {"x": r(2, 3), "w": r(2)}, div_views),
    ]
    os.makedirs(g.OUT, exist_ok=True)
    g.write("inplace_views", cases)
    with open(os.path.join(g.OUT, "inplace_view_errors.json"), "w") as f:
        json.dump(errors(), f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
