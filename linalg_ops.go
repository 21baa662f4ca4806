package ember

import (
	"fmt"
	"math"
)

// Small linear-algebra-ish ops: diff, tensordot, addmm/addmv/addbmm/addr,
// mv, dot, vdot, inner, cov, corrcoef, trapezoid, vander, cartesian_prod,
// block_diag and msort, as torch 1.13 defines them. They are composed from
// existing differentiable ops (MatMul, Baddbmm, Cat, Pad, Cumprod, Sum,
// ...), so every device and autograd come with them; the products'
// results carry PyTorch's grad_fn names (AddmmBackward0, MvBackward0, ...).

// Diff is torch.diff(t, n, dim, prepend, append): the n-th forward
// difference along dim, out[i] = x[i+1] - x[i] applied n times, where x is
// t with prepend and append (nil for none; each of t's rank) joined before
// and after it along dim. Bool tensors differ by logical xor. An n at
// least the size of x along dim gives an empty result; n ≤ 0 gives x
// unchanged (a copy), as PyTorch 1.13.
func (t *Tensor) Diff(n, dim int, prepend, appendT *Tensor) *Tensor {
	const op = "diff"
	t.live(op)
	if t.Dim() == 0 {
		shapeErr(op, "diff expects input to be at least one-dimensional", t.shape)
	}
	d := t.dim(op, dim)
	x := t
	parts := []*Tensor{}
	for i, p := range []*Tensor{prepend, t, appendT} {
		if p == nil {
			continue
		}
		if i != 1 && p.live(op).Dim() != t.Dim() {
			shapeErr(op, "diff expects prepend or append to be the same dimension as input", t.shape, p.shape)
		}
		parts = append(parts, p)
	}
	if len(parts) > 1 {
		sameDevice(op, parts...)
		x = Cat(parts, d)
	}
	size := x.shape[d]
	n = min(n, size)
	if n <= 0 { // (an empty dim too: nothing to difference, a new tensor)
		return x.Clone()
	}
	step := func(y *Tensor, l int) *Tensor {
		hi, lo := y.Narrow(d, 1, l), y.Narrow(d, 0, l)
		if y.dtype == Bool {
			return hi.LogicalXor(lo)
		}
		return hi.Sub(lo)
	}
	if isMeta(x) { // only the shape: n steps would each cost a meta op
		return step(x, size-1).Narrow(d, 0, size-n)
	}
	for i := 0; i < n; i++ {
		x = step(x, x.shape[d]-1)
	}
	return x
}

// Tensordot contracts the last n dims of a with the first n dims of b, as
// torch.tensordot(a, b, dims=n).
func Tensordot(a, b *Tensor, n int) *Tensor {
	const op = "tensordot"
	a.live(op)
	b.live(op)
	if n < 0 {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("tensordot expects dims >= 0, but got dims=%d", n)})
	}
	// a's dims are -n..-1 and b's 0..n-1: past an operand's rank, the
	// first that does not exist is torch's error (no slices n long)
	if n > a.Dim() {
		return TensordotDims(a, b, []int{-n}, []int{0})
	}
	if n > b.Dim() {
		return TensordotDims(a, b, []int{-n}, []int{b.Dim()})
	}
	da, db := make([]int, n), make([]int, n)
	for i := 0; i < n; i++ {
		da[i], db[i] = i-n, i
	}
	return TensordotDims(a, b, da, db)
}

// TensordotDims contracts dims dimsA of a with dims dimsB of b (pairwise),
// as torch.tensordot(a, b, dims=(dimsA, dimsB)): the result has a's other
// dims, then b's. A contracted size 1 on one side is summed over the
// other's (broadcast), as in PyTorch. The product is one matrix multiply
// of the permuted operands.
func TensordotDims(a, b *Tensor, dimsA, dimsB []int) *Tensor {
	const op = "tensordot"
	a.live(op)
	b.live(op)
	if len(dimsA) != len(dimsB) {
		shapeErr(op, "both dimension lists should have same length", a.shape, b.shape)
	}
	sameDevice(op, a, b)
	wrap := func(t *Tensor, ds []int) ([]int, []bool) {
		in := make([]bool, t.Dim())
		out := make([]int, len(ds))
		for i, d := range ds {
			if t.Dim() == 0 {
				shapeErr(op, noDims(d), t.shape)
			}
			d = wrapDim(op, d, t.Dim(), t.shape)
			if in[d] {
				shapeErr(op, fmt.Sprintf("dim %d appears multiple times in the list of dims", d), t.shape)
			}
			in[d] = true
			out[i] = d
		}
		return out, in
	}
	ca, inA := wrap(a, dimsA)
	cb, inB := wrap(b, dimsB)
	t1, t2 := a, b
	csize := 1
	for i := range ca {
		s1, s2 := a.shape[ca[i]], b.shape[cb[i]]
		switch {
		case s2 == 1:
			t1 = t1.Sum(Dims(ca[i]), KeepDim())
		case s1 == 1:
			t2 = t2.Sum(Dims(cb[i]), KeepDim())
		case s1 != s2:
			shapeErr(op, fmt.Sprintf("contracted dimensions need to match, but first has size %d in dim %d and second has size %d in dim %d", s1, ca[i], s2, cb[i]), a.shape, b.shape)
		default:
			csize *= s1
		}
	}
	var p1, p2 []int
	var rs Shape
	size1, size2 := 1, 1
	for d := 0; d < a.Dim(); d++ {
		if !inA[d] {
			p1 = append(p1, d)
			rs = append(rs, a.shape[d])
			size1 *= a.shape[d]
		}
	}
	p1 = append(p1, ca...)
	p2 = append(p2, cb...)
	for d := 0; d < b.Dim(); d++ {
		if !inB[d] {
			p2 = append(p2, d)
			rs = append(rs, b.shape[d])
			size2 *= b.shape[d]
		}
	}
	if rs == nil {
		rs = Shape{}
	}
	m1 := t1.Permute(p1...).Reshape(size1, csize)
	m2 := t2.Permute(p2...).Reshape(csize, size2)
	return m1.MatMul(m2).Reshape(rs...)
}

// broadcastInput panics with op's *ShapeError unless input expands to
// target, with torch's wording.
func broadcastInput(op string, input *Tensor, target Shape) {
	if err := Try(func() { input.Detach().Expand(target...) }); err != nil {
		if se, ok := err.(*ShapeError); ok {
			shapeErr(op, se.Msg, input.shape, target)
		}
		panic(err)
	}
}

// Addmm is beta·input + alpha·(m1 @ m2) for matrices m1 [n, m] and m2
// [m, p] and an input broadcasting to [n, p], as torch.addmm; with beta 0
// the input is ignored (NaN in it does not propagate). It runs as a
// one-batch Baddbmm.
func Addmm(input, m1, m2 *Tensor, beta, alpha float64) *Tensor {
	const op = "addmm"
	input.live(op)
	m1.live(op)
	m2.live(op)
	if m1.Dim() != 2 {
		shapeErr(op, fmt.Sprintf("mat1 must be a matrix, got %d-D tensor", m1.Dim()), m1.shape)
	}
	if m2.Dim() != 2 {
		shapeErr(op, fmt.Sprintf("mat2 must be a matrix, got %d-D tensor", m2.Dim()), m2.shape)
	}
	if m1.shape[1] != m2.shape[0] {
		shapeErr(op, fmt.Sprintf("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", m1.shape[0], m1.shape[1], m2.shape[0], m2.shape[1]), m1.shape, m2.shape)
	}
	n, p := m1.shape[0], m2.shape[1]
	broadcastInput(op, input, Shape{n, p})
	return rename(Baddbmm(input.Unsqueeze(0), m1.Unsqueeze(0), m2.Unsqueeze(0), beta, alpha).Reshape(n, p), "AddmmBackward0")
}

// Addmv is beta·input + alpha·(mat @ vec) for mat [n, m], vec [m] and an
// input broadcasting to [n], as torch.addmv.
func Addmv(input, mat, vec *Tensor, beta, alpha float64) *Tensor {
	const op = "addmv"
	input.live(op)
	mat.live(op)
	vec.live(op)
	if mat.Dim() != 2 || vec.Dim() != 1 || input.Dim() > 1 {
		shapeErr(op, fmt.Sprintf("vector + matrix @ vector expected, got %d, %d, %d", input.Dim(), mat.Dim(), vec.Dim()), input.shape, mat.shape, vec.shape)
	}
	n := mat.shape[0]
	if mat.shape[1] != vec.shape[0] || input.Dim() == 1 && input.shape[0] != n && input.shape[0] != 1 {
		in := 1
		if input.Dim() == 1 {
			in = input.shape[0]
		}
		shapeErr(op, fmt.Sprintf("size mismatch, got %d, %dx%d,%d", in, n, mat.shape[1], vec.shape[0]), input.shape, mat.shape, vec.shape)
	}
	return rename(Addmm(input.Reshape(input.NumElements(), 1), mat, vec.Unsqueeze(1), beta, alpha).Reshape(n), "AddmvBackward0")
}

// Addbmm is beta·input + alpha·Σ_b b1[b] @ b2[b] for b1 [B, n, m], b2
// [B, m, p] and an input broadcasting to [n, p], as torch.addbmm: one
// matrix multiply of [n, B·m] by [B·m, p].
func Addbmm(input, b1, b2 *Tensor, beta, alpha float64) *Tensor {
	const op = "addbmm"
	input.live(op)
	b1.live(op)
	b2.live(op)
	if b1.Dim() != 3 {
		shapeErr(op, "batch1 must be a 3D tensor", b1.shape)
	}
	if b2.Dim() != 3 {
		shapeErr(op, "batch2 must be a 3D tensor", b2.shape)
	}
	if b1.shape[0] != b2.shape[0] {
		shapeErr(op, fmt.Sprintf("batch1 and batch2 must have same number of batches, got %d and %d", b1.shape[0], b2.shape[0]), b1.shape, b2.shape)
	}
	if b1.shape[2] != b2.shape[1] {
		shapeErr(op, fmt.Sprintf("Incompatible matrix sizes for bmm (%dx%d and %dx%d)", b1.shape[1], b1.shape[2], b2.shape[1], b2.shape[2]), b1.shape, b2.shape)
	}
	bs, n, m, p := b1.shape[0], b1.shape[1], b1.shape[2], b2.shape[2]
	broadcastInput(op, input, Shape{n, p})
	return rename(Addmm(input, b1.Permute(1, 0, 2).Reshape(n, bs*m), b2.Reshape(bs*m, p), beta, alpha), "AddbmmBackward0")
}

// Addr is beta·input + alpha·outer(v1, v2) for 1-D v1 [n], v2 [m] and an
// input broadcasting to [n, m], as torch.addr.
func Addr(input, v1, v2 *Tensor, beta, alpha float64) *Tensor {
	const op = "addr"
	input.live(op)
	v1.live(op)
	v2.live(op)
	if v1.Dim() != 1 {
		shapeErr(op, fmt.Sprintf("addr: Expected 1-D argument vec1, but got %d-D", v1.Dim()), v1.shape)
	}
	if v2.Dim() != 1 {
		shapeErr(op, fmt.Sprintf("addr: Expected 1-D argument vec2, but got %d-D", v2.Dim()), v2.shape)
	}
	return rename(Addmm(input, v1.Unsqueeze(1), v2.Unsqueeze(0), beta, alpha), "AddrBackward0")
}

// Mv is the matrix-vector product of mat [n, m] and vec [m], as torch.mv.
func Mv(mat, vec *Tensor) *Tensor {
	const op = "mv"
	mat.live(op)
	vec.live(op)
	if mat.Dim() != 2 || vec.Dim() != 1 {
		shapeErr(op, fmt.Sprintf("vector + matrix @ vector expected, got 1, %d, %d", mat.Dim(), vec.Dim()), mat.shape, vec.shape)
	}
	if mat.shape[1] != vec.shape[0] {
		shapeErr(op, fmt.Sprintf("size mismatch, got %d, %dx%d,%d", mat.shape[0], mat.shape[0], mat.shape[1], vec.shape[0]), mat.shape, vec.shape)
	}
	return mat.MatMul(vec)
}

func dotCheck(op string, a, b *Tensor) {
	a.live(op)
	b.live(op)
	if a.Dim() != 1 || b.Dim() != 1 {
		shapeErr(op, fmt.Sprintf("1D tensors expected, but got %dD and %dD tensors", a.Dim(), b.Dim()), a.shape, b.shape)
	}
	if a.shape[0] != b.shape[0] {
		shapeErr(op, fmt.Sprintf("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number of elements, but got %d and %d elements respectively", a.shape[0], b.shape[0], a.shape[0], b.shape[0]), a.shape, b.shape)
	}
	if a.dtype != b.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{a.dtype, b.dtype}, Msg: fmt.Sprintf("dot : expected both vectors to have same dtype, but found %s and %s", torchTypeName(a.dtype), torchTypeName(b.dtype))})
	}
}

// Dot is the inner product of two 1-D tensors of one size and dtype, as
// torch.dot (a 0-dim result).
func Dot(a, b *Tensor) *Tensor {
	dotCheck("dot", a, b)
	return a.MatMul(b)
}

// Vdot is torch.vdot: for ember's real dtypes the same as Dot (there is
// no conjugate to take).
func Vdot(a, b *Tensor) *Tensor {
	dotCheck("vdot", a, b)
	return rename(a.MatMul(b), "VdotBackward0")
}

// Inner is torch.inner: the sum of products over the last dims of a and b
// (which must match), the result having a's other dims then b's; a 0-dim
// operand multiplies the other.
func Inner(a, b *Tensor) *Tensor {
	const op = "inner"
	a.live(op)
	b.live(op)
	if a.Dim() == 0 || b.Dim() == 0 {
		return a.Mul(b)
	}
	if a.shape[a.Dim()-1] != b.shape[b.Dim()-1] {
		shapeErr(op, fmt.Sprintf("inner() the last dimension must match on both input tensors but got shapes %v and %v", fmtInts(a.shape), fmtInts(b.shape)), a.shape, b.shape)
	}
	return TensordotDims(a, b, []int{-1}, []int{-1})
}

// Cov is the covariance matrix of the variables in t's rows (observations
// in its columns; a 1-D t is one variable), as torch.cov(t, correction,
// fweights, aweights): fweights (integer) and aweights (floating; nil for
// none) weight each observation. The result is [vars, vars], or 0-dim for
// one variable. Integer t gives Float32. A non-positive number of degrees
// of freedom divides by zero (inf/NaN), as PyTorch (which warns). The
// checks of the weights' values read them back to the host.
func Cov(t *Tensor, correction int, fweights, aweights *Tensor) *Tensor {
	const op = "cov"
	t.live(op)
	if t.Dim() > 2 {
		shapeErr(op, fmt.Sprintf("cov(): expected input to have two or fewer dimensions but got an input with %d dimensions", t.Dim()), t.shape)
	}
	if t.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype}, Msg: "cov(): bool dtype is not supported for input"})
	}
	in := t
	if t.Dim() < 2 {
		in = t.Reshape(1, -1)
	}
	if !in.dtype.IsFloat() {
		in = in.Cast(Float32)
	}
	nobs := in.shape[1]
	var w *Tensor
	check := func(name string, x *Tensor, ok bool, kind string) {
		x.live(op)
		sameDevice(op, t, x)
		if x.Dim() > 1 {
			shapeErr(op, fmt.Sprintf("cov(): expected %s to have one or fewer dimensions but got %s with %d dimensions", name, name, x.Dim()), x.shape)
		}
		if !ok {
			panic(&DTypeError{Op: op, DTypes: []DType{x.dtype}, Msg: fmt.Sprintf("cov(): expected %s to have %s dtype but got %s with %s dtype", name, kind, name, torchTypeName(x.dtype))})
		}
		if x.NumElements() != nobs {
			shapeErr(op, fmt.Sprintf("cov(): expected %s to have the same numel as there are observations in the input but got %d != %d", name, x.NumElements(), nobs), t.shape, x.shape)
		}
		if nobs > 0 && !isMeta(x) && x.Detach().Min().Item() < 0 {
			panic(&ValueError{Op: op, Msg: fmt.Sprintf("cov(): %s cannot be negative", name)})
		}
	}
	if fweights != nil {
		check("fweights", fweights, fweights.live(op).dtype.IsInt() && fweights.dtype != Bool, "integral")
		w = fweights.Reshape(-1).Cast(in.dtype)
	}
	var aw *Tensor
	if aweights != nil {
		check("aweights", aweights, aweights.live(op).dtype.IsFloat(), "floating point")
		aw = aweights.Reshape(-1)
		if w == nil {
			w = aw
		} else {
			w = w.Mul(aw)
		}
	}
	var avg, c, normT *Tensor
	norm := float64(nobs - correction)
	if w == nil {
		avg = in.Sum(Dims(1)).DivScalar(float64(nobs))
		in = in.Sub(avg.Unsqueeze(1))
		c = in.MatMul(in.T())
	} else {
		wsum := w.Sum()
		if !isMeta(wsum) && wsum.Item() == 0 {
			panic(&ValueError{Op: op, Msg: "cov(): weights sum to zero, can't be normalized"})
		}
		avg = in.Mul(w).Sum(Dims(1)).Div(wsum)
		switch {
		case correction == 0:
			normT = wsum
		case aw != nil:
			normT = wsum.Sub(w.Mul(aw).Sum().MulScalar(float64(correction)).Div(wsum))
		default:
			normT = wsum.SubScalar(float64(correction))
		}
		in = in.Sub(avg.Unsqueeze(1))
		c = in.MatMul(in.Mul(w).T())
	}
	if normT == nil {
		if norm <= 0 {
			norm = 0
		}
		return c.DivScalar(norm).Squeeze()
	}
	if !isMeta(normT) && normT.Item() <= 0 {
		normT = normT.MulScalar(0)
	}
	return c.Div(normT).Squeeze()
}

// Corrcoef is torch.corrcoef: the Pearson correlation coefficients of the
// variables in t's rows, Cov(t, 1, nil, nil) scaled by the standard
// deviations and clipped to [-1, 1].
func Corrcoef(t *Tensor) *Tensor {
	const op = "corrcoef"
	t.live(op)
	c := Cov(t, 1, nil, nil)
	if c.Dim() == 0 {
		return c.Div(c)
	}
	n := c.shape[0]
	dev := On(c.dev)
	idx := Arange(0, float64(n), 1, dev, Dtype(Int64)).Mul(FromSlice([]int64{int64(n + 1)}, Shape{}, dev))
	sd := c.Reshape(-1).IndexSelect(0, idx).Sqrt()
	c = c.Div(sd.Reshape(-1, 1)).Div(sd.Reshape(1, -1))
	return c.Clamp(-1, 1)
}

// trapezoidX checks x against y and views it as trapezoid's spacing along d.
func trapezoidDx(op string, y, x *Tensor, d int) *Tensor {
	x.live(op)
	sameDevice(op, y, x)
	if y.dtype == Bool || x.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{y.dtype, x.dtype}, Msg: op + ": received a bool input for `x` or `y`, but bool is not supported"})
	}
	if !x.dtype.IsFloat() {
		x = x.Cast(Float32)
	}
	switch {
	case x.Dim() == 1:
		if x.shape[0] != y.shape[d] {
			shapeErr(op, op+": There must be one `x` value for each sample point", y.shape, x.shape)
		}
		s := make(Shape, y.Dim())
		for i := range s {
			s[i] = 1
		}
		s[d] = x.shape[0]
		x = x.Reshape(s...)
	case x.Dim() < y.Dim():
		s := make(Shape, y.Dim()-x.Dim(), y.Dim())
		for i := range s {
			s[i] = 1
		}
		x = x.Reshape(append(s, x.shape...)...)
	}
	if x.Dim() == 0 || d >= x.Dim() {
		shapeErr(op, op+": There must be one `x` value for each sample point", y.shape, x.shape)
	}
	return x.Slice(d, 1, math.MaxInt, 1).Sub(x.Slice(d, 0, -1, 1))
}

// trapezoidY checks y and returns it (integers as Float32) with dim d.
func trapezoidY(op string, y *Tensor, dim int, msg string) (*Tensor, int) {
	y.live(op)
	d := y.indexDim(op, dim, msg)
	if !y.dtype.IsFloat() && y.dtype != Bool {
		y = y.Cast(Float32)
	}
	return y, d
}

// Trapezoid integrates y along dim by the trapezoidal rule at the sample
// points x, as torch.trapezoid(y, x, dim=dim): x is 1-D (one point per
// sample along dim) or broadcasts against y. An empty dim integrates to
// zeros.
func Trapezoid(y, x *Tensor, dim int) *Tensor {
	const op = "trapezoid"
	y.live(op)
	d := y.indexDim(op, dim, noDims(dim))
	if y.shape[d] == 0 {
		return Zeros(withoutDim(y.shape, d), On(y.dev), Dtype(y.dtype))
	}
	y, _ = trapezoidY(op, y, dim, "")
	dx := trapezoidDx(op, y, x, d)
	return dx.Mul(y.Slice(d, 1, math.MaxInt, 1).Add(y.Slice(d, 0, -1, 1))).DivScalar(2).Sum(Dims(d))
}

// TrapezoidDx is torch.trapezoid(y, dx=dx, dim=dim): the trapezoidal rule
// with evenly spaced samples dx apart (torch.trapezoid(y) is dx = 1).
func TrapezoidDx(y *Tensor, dx float64, dim int) *Tensor {
	const op = "trapezoid"
	y.live(op)
	d := y.indexDim(op, dim, noDims(dim))
	if y.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{y.dtype}, Msg: "trapezoid: received a bool input for `y`, but bool is not supported"})
	}
	if y.shape[d] == 0 {
		return Zeros(withoutDim(y.shape, d), On(y.dev), Dtype(y.dtype))
	}
	y, _ = trapezoidY(op, y, dim, "")
	ends := y.Select(d, 0).Add(y.Select(d, -1)).MulScalar(0.5)
	return y.Sum(Dims(d)).Sub(ends).MulScalar(dx)
}

// CumulativeTrapezoid is torch.cumulative_trapezoid(y, x, dim=dim): the
// running trapezoidal integral along dim (one element fewer than y there).
func CumulativeTrapezoid(y, x *Tensor, dim int) *Tensor {
	const op = "cumulative_trapezoid"
	y, d := trapezoidY(op, y, dim, "slice() cannot be applied to a 0-dim tensor.")
	dx := trapezoidDx(op, y, x, d)
	return dx.Mul(y.Slice(d, 0, -1, 1).Add(y.Slice(d, 1, math.MaxInt, 1))).DivScalar(2).Cumsum(d)
}

// CumulativeTrapezoidDx is torch.cumulative_trapezoid(y, dx=dx, dim=dim).
func CumulativeTrapezoidDx(y *Tensor, dx float64, dim int) *Tensor {
	const op = "cumulative_trapezoid"
	y.live(op)
	if y.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{y.dtype}, Msg: "cumulative_trapezoid: received a bool input for `y`, but bool is not supported"})
	}
	y, d := trapezoidY(op, y, dim, "slice() cannot be applied to a 0-dim tensor.")
	return y.Slice(d, 0, -1, 1).Add(y.Slice(d, 1, math.MaxInt, 1)).MulScalar(dx / 2).Cumsum(d)
}

func withoutDim(s Shape, d int) Shape {
	return append(append(Shape{}, s[:d]...), s[d+1:]...)
}

// Vander is the Vandermonde matrix of the 1-D x with n columns, as
// torch.vander(x, N=n, increasing): column j is x^(n-1-j), or x^j when
// increasing (pass n = x.Size(0) for torch's default N). Integer and bool
// x give Int64. Gradients flow through the Cumprod the powers come from
// (torch 1.13's vander raises in backward; with n ≤ 1 neither has a graph).
func Vander(x *Tensor, n int, increasing bool) *Tensor {
	const op = "vander"
	x.live(op)
	if x.Dim() != 1 {
		shapeErr(op, "x must be a one-dimensional tensor.", x.shape)
	}
	if n < 0 {
		panic(&ValueError{Op: op, Msg: "N must be non-negative."})
	}
	dt := PromoteTypes(x.dtype, Int64)
	rows := x.shape[0]
	checkShape(op, Shape{rows, n})
	if n <= 1 { // no power of x: not differentiable, as PyTorch
		x = x.Detach()
	}
	if n == 0 || rows == 0 || isMeta(x) {
		// (only the shape: no powers to compute)
		if x.dtype != dt {
			x = x.Cast(dt)
		}
		return x.Reshape(rows, 1).Expand(rows, n).MulScalar(0)
	}
	xc := x
	if xc.dtype != dt {
		xc = xc.Cast(dt)
	}
	out := OnesLike(xc).Reshape(rows, 1)
	if n > 1 {
		out = Cat([]*Tensor{out, xc.Unsqueeze(1).Expand(rows, n-1).Cumprod(1)}, 1)
	}
	if !increasing {
		out = out.Flip(1)
	}
	return out
}

// CartesianProd is torch.cartesian_prod: the rows of every combination of
// one element from each 1-D tensor ([Π n_i, len(ts)]; a single tensor is
// returned as is).
func CartesianProd(ts ...*Tensor) *Tensor {
	const op = "cartesian_prod"
	if len(ts) == 0 {
		panic(&ValueError{Op: op, Msg: "meshgrid expects a non-empty TensorList"})
	}
	for _, t := range ts {
		if t.live(op).Dim() != 1 {
			shapeErr(op, fmt.Sprintf("Expect a 1D vector, but got shape %v", fmtInts(t.shape)), t.shape)
		}
	}
	if len(ts) == 1 {
		return ts[0]
	}
	grids := Meshgrid("ij", ts...)
	for i, g := range grids {
		grids[i] = g.Reshape(-1)
	}
	return Stack(grids, 1)
}

// BlockDiag is torch.block_diag: the tensors (0-, 1- or 2-D; a 1-D [n] is
// a row [1, n]) placed along the diagonal of a zero matrix, in their
// promoted dtype. No tensors give an empty Float32 [1, 0], as PyTorch.
func BlockDiag(ts ...*Tensor) *Tensor {
	const op = "block_diag"
	if len(ts) == 0 {
		return Empty(Shape{1, 0})
	}
	dt := ts[0].live(op).dtype
	blocks := make([]*Tensor, len(ts))
	rows, cols := 0, 0
	for i, t := range ts {
		t.live(op)
		if t.Dim() > 2 {
			shapeErr(op, fmt.Sprintf("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %d has %d dimensions", i, t.Dim()), t.shape)
		}
		dt = PromoteTypes(dt, t.dtype)
		blocks[i] = t.Atleast2d()
		if blocks[i].shape[0] > maxElems-rows || blocks[i].shape[1] > maxElems-cols {
			shapeErr(op, "the blocks' sizes add up to more than a tensor can hold", t.shape)
		}
		rows += blocks[i].shape[0]
		cols += blocks[i].shape[1]
	}
	sameDevice(op, ts...)
	checkShape(op, Shape{rows, cols})
	at := 0
	for i, b := range blocks {
		if b.dtype != dt {
			b = b.Cast(dt)
		}
		c := b.shape[1]
		blocks[i] = Pad(b, []int{at, cols - at - c}, 0)
		at += c
	}
	return Cat(blocks, 0)
}

// Msort sorts t along dim 0 in ascending order, as torch.msort (the
// values of Sort(0, false)).
func (t *Tensor) Msort() *Tensor {
	t.live("msort")
	v, _ := t.Sort(0, false)
	return v
}
