package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// Structural ops: Tril, Triu, Repeat, Roll, Outer, Bmm and Baddbmm,
// composed from views, Where, Cat and MatMul, each recording PyTorch's
// grad_fn.

// triMask is the Bool [R, C] mask of the lower (upper) triangle of t's
// last two dims: col − row ≤ diagonal (≥ for upper).
func triMask(t *Tensor, diagonal int, upper bool) *Tensor {
	r, c := t.shape[t.Dim()-2], t.shape[t.Dim()-1]
	rows := Arange(0, float64(r), 1, On(t.dev), Dtype(Int64)).Reshape(r, 1)
	cols := Arange(0, float64(c), 1, On(t.dev), Dtype(Int64)).Reshape(1, c)
	d := cols.Sub(rows)
	if upper {
		return d.GtScalar(float64(diagonal) - 1)
	}
	return d.LtScalar(float64(diagonal) + 1)
}

func (t *Tensor) tri(name, gradFn string, diagonal int, upper bool) *Tensor {
	t.live(name)
	if t.Dim() < 2 {
		shapeErr(name, name+": input tensor must have at least 2 dimensions", t.shape)
	}
	m := triMask(t, diagonal, upper)
	out := Where(m, t.Detach(), zeroLike(t))
	return record(gradFn, out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
		return []*Tensor{Where(m, g, zeroLike(g))}
	})
}

// Tril returns the lower triangle of t's last two dims (the elements with
// col − row ≤ diagonal; 0 is the main diagonal, negative below it), the
// rest zero, as torch.tril (TrilBackward0).
func (t *Tensor) Tril(diagonal int) *Tensor { return t.tri("tril", "TrilBackward0", diagonal, false) }

// Triu returns the upper triangle (col − row ≥ diagonal), as torch.triu
// (TriuBackward0).
func (t *Tensor) Triu(diagonal int) *Tensor { return t.tri("triu", "TriuBackward0", diagonal, true) }

// Repeat tiles t reps[i] times along dim i, as torch.Tensor.repeat: reps
// has at least t's rank (leading entries add dims). Gradients:
// RepeatBackward0.
func (t *Tensor) Repeat(reps ...int) *Tensor {
	const name = "repeat"
	t.live(name)
	if len(reps) < t.Dim() {
		shapeErr(name, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor", t.shape)
	}
	for _, r := range reps {
		if r < 0 {
			shapeErr(name, fmt.Sprintf("Trying to create tensor with negative dimension %d", r), t.shape)
		}
	}
	lead := len(reps) - t.Dim()
	src := make(Shape, len(reps)) // t's shape with leading 1s
	for i := range src {
		src[i] = 1
		if i >= lead {
			src[i] = t.shape[i-lead]
		}
	}
	var inter, exp, final []int // [1, s0, 1, s1, ...], [r0, s0, r1, s1, ...], [r0*s0, ...]
	for i, r := range reps {
		inter = append(inter, 1, src[i])
		exp = append(exp, r, src[i])
		final = append(final, r*src[i])
	}
	out := t.Detach().Reshape(inter...).Expand(exp...).Contiguous().Reshape(final...)
	return record("RepeatBackward0", out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
		dims := make([]int, len(reps))
		for i := range dims {
			dims[i] = 2 * i
		}
		return []*Tensor{g.Reshape(exp...).Sum(Dims(dims...)).Reshape(t.shape...)}
	})
}

// roll rolls t (detached) by shifts along dims.
func roll(t *Tensor, shifts, dims []int) *Tensor {
	for i, s := range shifts {
		d := t.indexDim("roll", dims[i], noDims(dims[i]))
		n := t.shape[d]
		if n == 0 {
			continue
		}
		s = ((s % n) + n) % n
		if s == 0 {
			continue
		}
		t = Cat([]*Tensor{t.Narrow(d, n-s, s), t.Narrow(d, 0, n-s)}, d)
	}
	return t
}

// Roll shifts t's elements by shifts[i] along dims[i], wrapping around, as
// torch.roll; with no dims t is rolled flattened and reshaped back.
// Gradients: RollBackward0.
func (t *Tensor) Roll(shifts, dims []int) *Tensor {
	const name = "roll"
	t.live(name)
	x := t.Detach()
	var out *Tensor
	switch {
	case len(dims) == 0:
		if len(shifts) != 1 {
			shapeErr(name, fmt.Sprintf("shifts and dimensions must align. shifts: %d, dims: 0", len(shifts)), t.shape)
		}
		out = roll(x.Reshape(-1), shifts, []int{0}).Reshape(t.shape...)
	case len(dims) != len(shifts):
		shapeErr(name, fmt.Sprintf("shifts and dimensions must align. shifts: %d, dims:%d", len(shifts), len(dims)), t.shape)
	default:
		out = roll(x, shifts, dims)
		if out == x {
			out = x.Clone()
		}
	}
	neg := make([]int, len(shifts))
	for i, s := range shifts {
		neg[i] = -s
	}
	return record("RollBackward0", out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
		if len(dims) == 0 {
			return []*Tensor{roll(g.Reshape(-1), neg, []int{0}).Reshape(t.shape...)}
		}
		return []*Tensor{roll(g, neg, dims)}
	})
}

// Outer is the outer product of the 1-D a and b ([n] and [m] → [n, m]), as
// torch.outer (composed, as in PyTorch: MulBackward0).
func Outer(a, b *Tensor) *Tensor {
	const name = "outer"
	a.live(name)
	b.live(name)
	if a.Dim() != 1 || b.Dim() != 1 {
		shapeErr(name, "outer: expected 1-D arguments", a.shape, b.shape)
	}
	return a.Unsqueeze(1).Mul(b.Unsqueeze(0))
}

// Bmm is the batched matrix product of a [B, N, M] and b [B, M, P], as
// torch.bmm (no broadcasting; BmmBackward0).
func Bmm(a, b *Tensor) *Tensor {
	const name = "bmm"
	a.live(name)
	b.live(name)
	if a.Dim() != 3 || b.Dim() != 3 {
		shapeErr(name, "batch1 and batch2 must be 3D tensors", a.shape, b.shape)
	}
	if a.shape[0] != b.shape[0] || a.shape[2] != b.shape[1] {
		shapeErr(name, fmt.Sprintf("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d].", a.shape[0], a.shape[2], b.shape[0], b.shape[1]), a.shape, b.shape)
	}
	return a.MatMul(b)
}

// Baddbmm is beta·input + alpha·(b1 @ b2) for b1 [B, N, M], b2 [B, M, P]
// and input broadcasting to [B, N, P], as torch.baddbmm; with beta 0 the
// input is ignored (NaN in it does not propagate). Gradients:
// BaddbmmBackward0.
func Baddbmm(input, b1, b2 *Tensor, beta, alpha float64) *Tensor {
	const name = "baddbmm"
	input.live(name)
	if dt, ok := autocastLow(input, b1, b2); ok {
		return onCasts(dt, []*Tensor{input, b1, b2}, func(c []*Tensor) *Tensor { return Baddbmm(c[0], c[1], c[2], beta, alpha) })
	}
	sameDevice(name, input, b1, b2)
	// two-byte floats: the product in float32 from the two-byte operands,
	// scaled and added to beta·input in float32, rounded once (as PyTorch's
	// bf16 baddbmm)
	half := b1.dtype.IsHalf() && b2.dtype == b1.dtype && input.dtype == b1.dtype
	var p *Tensor
	if half {
		p = bmmHalfF32(name, b1.Detach(), b2.Detach())
	} else {
		p = Bmm(b1.Detach(), b2.Detach())
	}
	if !BroadcastShapes(name, input.shape, p.shape).Equal(p.shape) {
		shapeErr(name, fmt.Sprintf("the input must broadcast to %v", p.shape), input.shape, b1.shape, b2.shape)
	}
	out := p
	if alpha != 1 {
		out = p.MulScalar(alpha)
	}
	if beta != 0 {
		in := input.Detach()
		if half {
			in = in.Cast(Float32)
		}
		if beta != 1 {
			in = in.MulScalar(beta)
		}
		out = in.Add(out)
	}
	if half {
		out = out.Cast(b1.dtype)
	}
	bd1, bd2 := b1.Detach(), b2.Detach()
	back := func(g, bd1, bd2 *Tensor) []*Tensor {
		return []*Tensor{
			when(input.RequiresGrad(), func() *Tensor { return g.MulScalar(beta) }),
			gradIf(b1, func() *Tensor { return g.MatMul(bd2.Transpose(1, 2)).MulScalar(alpha) }),
			gradIf(b2, func() *Tensor { return bd1.Transpose(1, 2).MatMul(g).MulScalar(alpha) }),
		}
	}
	// (both closures hold b1 and b2, as the first-order one always has)
	return recordTwice("BaddbmmBackward0", out, []*Tensor{input, b1, b2}, savedIf(bd2, b1, bd1, b2),
		func(g *Tensor) []*Tensor { return back(g, bd1, bd2) }, func(g *Tensor) []*Tensor { return back(g, b1, b2) })
}

// bmmHalfF32 is Bmm of two-byte a [B, N, M] and b [B, M, P] (one dtype)
// into float32, unrounded: on the backend's half GEMM where it has one
// (backend.HalfMatMuler), else the float32 product of the widened operands.
func bmmHalfF32(name string, a, b *Tensor) *Tensor {
	if a.Dim() != 3 || b.Dim() != 3 {
		shapeErr(name, "batch1 and batch2 must be 3D tensors", a.shape, b.shape)
	}
	if a.shape[0] != b.shape[0] || a.shape[2] != b.shape[1] {
		shapeErr(name, fmt.Sprintf("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d].", a.shape[0], a.shape[2], b.shape[0], b.shape[1]), a.shape, b.shape)
	}
	if hm, ok := a.be().(backend.HalfMatMuler); ok {
		out := empty(Shape{a.shape[0], a.shape[1], b.shape[2]}, Float32, a.dev)
		if out.NumElements() == 0 || hm.MatMulHalfF32(out.view(), a.view(), b.view()) {
			return out
		}
		out.Release()
	}
	var out *Tensor
	AutocastDisabled(func() {
		a32, b32 := a.Cast(Float32), b.Cast(Float32)
		out = a32.MatMul(b32)
		a32.Release()
		b32.Release()
	})
	return out
}

// Pad pads t with the constant value, as torch.nn.functional.pad(t, pad,
// mode="constant", value): pad holds (before, after) pairs for the last
// dims, the last dim first ([left, right, top, bottom] pads the last two);
// a negative pad crops. The other modes (reflect, replicate, circular)
// are PadMode's. Gradients flow to t through the Cat and Narrow it is
// made of.
func Pad(t *Tensor, pad []int, value float64) *Tensor {
	const name = "constant_pad_nd"
	t.live(name)
	if len(pad)%2 != 0 {
		panic(&ValueError{Op: name, Msg: "Padding length must be divisible by 2"})
	}
	if len(pad)/2 > t.Dim() {
		shapeErr(name, fmt.Sprintf("Padding length too large: %d pads for a %d-dimensional input", len(pad), t.Dim()), t.shape)
	}
	checkFits(name, value, t.dtype)
	out := t
	for i := 0; i < len(pad)/2; i++ {
		d := t.Dim() - 1 - i
		before, after := pad[2*i], pad[2*i+1]
		n := out.shape[d]
		if before < -n || after < -n || n+before+after < 0 { // (before + after could overflow)
			shapeErr(name, fmt.Sprintf("The input size %d, plus negative padding %d and %d resulted in a negative output size, which is invalid. Check dimension %d of your input.", n, before, after, d), t.shape)
		}
		if before < 0 {
			out, n, before = out.Narrow(d, -before, n+before), n+before, 0
		}
		if after < 0 {
			out, n, after = out.Narrow(d, 0, n+after), n+after, 0
		}
		if before == 0 && after == 0 {
			continue
		}
		parts := []*Tensor{}
		for _, k := range []int{before, -1, after} {
			switch {
			case k == -1:
				parts = append(parts, out)
			case k > 0:
				checkShape(name, withSize(out.shape, d, k))
				parts = append(parts, Full(withSize(out.shape, d, k), value, On(t.dev), Dtype(t.dtype)))
			}
		}
		out = Cat(parts, d)
	}
	if out == t {
		out = t.Clone() // a new tensor, as PyTorch's
	}
	return rename(out, "ConstantPadNdBackward0")
}
