package ember

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Small tensor ops a PyTorch user reaches for: nonzero/argwhere, unique,
// bincount, repeat_interleave, meshgrid, lerp, trace, rot90 and kron. They
// are composed from existing ops (IndexSelect, ScatterAdd, Expand, Where,
// Mul, Flip, ...), so every device and autograd come with them; the ops
// whose result's size depends on the data (Nonzero, Unique, Bincount,
// RepeatInterleaveTensor) read the data back to the host, as PyTorch
// synchronises for them too (so they have no meta-device form).

func isMeta(t *Tensor) bool { return t.dev.Type == Meta.Type }

// rowMajorStrides returns the element strides of a contiguous shape.
func rowMajorStrides(s Shape) []int {
	st := make([]int, len(s))
	k := 1
	for d := len(s) - 1; d >= 0; d-- {
		st[d] = k
		k *= s[d]
	}
	return st
}

// nonzeroPositions returns the flat positions of t's non-zero elements (NaN
// counts as non-zero, as in PyTorch).
func nonzeroPositions(op string, t *Tensor) []int64 {
	t.live(op)
	return truePositions(t.Detach().Bools())
}

// Nonzero returns the indices of t's non-zero elements as an Int64 tensor
// of shape [n, t.Dim()], one row per element in row-major order, as
// torch.nonzero(t) (a non-zero 0-dim tensor gives shape [1, 0]).
func (t *Tensor) Nonzero() *Tensor {
	const op = "nonzero"
	pos := nonzeroPositions(op, t)
	nd := t.Dim()
	st := rowMajorStrides(t.shape)
	out := make([]int64, len(pos)*nd)
	for i, p := range pos {
		for d := 0; d < nd; d++ {
			out[i*nd+d] = p / int64(st[d]) % int64(t.shape[d])
		}
	}
	return FromSlice(out, Shape{len(pos), nd}, On(t.dev))
}

// NonzeroTuple is torch.nonzero(t, as_tuple=True): one Int64 tensor [n]
// per dim of t holding that coordinate of each non-zero element. A 0-dim
// t is taken as 1-D, as in PyTorch.
func (t *Tensor) NonzeroTuple() []*Tensor {
	const op = "nonzero"
	if t.live(op).Dim() == 0 {
		return t.Reshape(1).NonzeroTuple()
	}
	pos := nonzeroPositions(op, t)
	st := rowMajorStrides(t.shape)
	outs := make([]*Tensor, t.Dim())
	for d := range outs {
		c := make([]int64, len(pos))
		for i, p := range pos {
			c[i] = p / int64(st[d]) % int64(t.shape[d])
		}
		outs[d] = FromSlice(c, Shape{len(pos)}, On(t.dev))
	}
	return outs
}

// Argwhere is torch.argwhere(t): the same as Nonzero.
func (t *Tensor) Argwhere() *Tensor { return t.Nonzero() }

// runs groups the 1-D tensor s into runs of equal neighbours (NaN equals
// nothing, so each NaN is its own run): the start of each run, each
// element's run and each run's length.
func runs(s *Tensor) (starts, group, counts []int64) {
	n := s.NumElements()
	if n == 0 {
		return []int64{}, []int64{}, []int64{}
	}
	starts = []int64{0}
	group = make([]int64, n)
	if n > 1 {
		for i, b := range s.Narrow(0, 1, n-1).Ne(s.Narrow(0, 0, n-1)).Bools() {
			if b {
				starts = append(starts, int64(i+1))
			}
			group[i+1] = int64(len(starts) - 1)
		}
	}
	counts = make([]int64, len(starts))
	for i, st := range starts {
		end := int64(n)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		counts[i] = end - st
	}
	return starts, group, counts
}

// Unique returns the distinct elements of t (flattened) in ascending
// order, the position in values of each of t's elements (inverse, Int64 of
// t's shape) and how often each value occurs (counts, Int64), as
// torch.unique(t, sorted=True, return_inverse=True, return_counts=True)
// with dim=None. The result is not differentiable, as in PyTorch. (Each
// NaN is its own value here; PyTorch 1.13's CPU inverse and counts for
// NaNs are not meaningful.)
func (t *Tensor) Unique() (values, inverse, counts *Tensor) {
	const op = "unique"
	t.live(op)
	x := t.Detach().Reshape(-1)
	s, perm := x.Sort(0, false)
	starts, group, cnt := runs(s)
	dev := On(t.dev)
	values = s.IndexSelect(0, FromSlice(starts, Shape{len(starts)}, dev))
	inverse = Zeros(Shape{len(group)}, dev, Dtype(Int64)).Scatter(0, perm, FromSlice(group, Shape{len(group)}, dev))
	return values, inverse.Reshape(t.shape...), FromSlice(cnt, Shape{len(cnt)}, dev)
}

// UniqueConsecutive collapses each run of equal consecutive elements of t
// (flattened) to one, as torch.unique_consecutive(t, return_inverse=True,
// return_counts=True) with dim=None: the kept values, the run of each
// element (Int64 of t's shape) and each run's length.
func (t *Tensor) UniqueConsecutive() (values, inverse, counts *Tensor) {
	const op = "unique_consecutive"
	t.live(op)
	x := t.Detach().Reshape(-1)
	starts, group, cnt := runs(x)
	dev := On(t.dev)
	values = x.IndexSelect(0, FromSlice(starts, Shape{len(starts)}, dev))
	return values, FromSlice(group, Shape{len(group)}, dev).Reshape(t.shape...), FromSlice(cnt, Shape{len(cnt)}, dev)
}

// UniqueDim is torch.unique(t, dim=dim, sorted=True, return_inverse=True,
// return_counts=True): the distinct slices of t along dim, in
// lexicographic order, the slice of values each of t's slices became
// (Int64 [t.Size(dim)]) and how many slices each stands for. It reads t
// back to the host.
func (t *Tensor) UniqueDim(dim int) (values, inverse, counts *Tensor) {
	return t.uniqueDim("unique", dim, true)
}

// UniqueConsecutiveDim is torch.unique_consecutive(t, dim=dim,
// return_inverse=True, return_counts=True): runs of equal consecutive
// slices along dim collapsed to one.
func (t *Tensor) UniqueConsecutiveDim(dim int) (values, inverse, counts *Tensor) {
	return t.uniqueDim("unique_consecutive", dim, false)
}

func (t *Tensor) uniqueDim(op string, dim int, sorted bool) (values, inverse, counts *Tensor) {
	t.live(op)
	if t.Dim() == 0 {
		t.indexDim(op, dim, "Dimension specified as 0 but tensor has no dimensions")
	}
	d := t.dim(op, dim)
	zeros := 0
	for _, n := range t.shape {
		if n == 0 {
			zeros++
		}
	}
	if zeros > 1 {
		shapeErr(op, "Number of zero sized dimensions is more than one, so unique cannot be applied", t.shape)
	}
	if zeros == 1 && t.shape[d] != 0 {
		shapeErr(op, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied", t.shape)
	}
	n := t.shape[d]
	dev := On(t.dev)
	if n == 0 {
		none := FromSlice([]int64{}, Shape{0}, dev)
		return t.Detach().Clone(), none, none.Clone()
	}
	x := t.Detach().Transpose(0, d).Contiguous().Reshape(n, -1)
	m := x.shape[1]
	var f []float64
	var iv []int64
	if t.dtype.IsInt() {
		iv = x.Int64s()
	} else {
		f = x.Float64s()
	}
	cmp := func(a, b int) int { // lexicographic order of rows a and b
		for k := 0; k < m; k++ {
			if iv != nil {
				if u, v := iv[a*m+k], iv[b*m+k]; u != v {
					return map[bool]int{true: -1, false: 1}[u < v]
				}
				continue
			}
			if u, v := f[a*m+k], f[b*m+k]; u != v {
				if u < v {
					return -1
				}
				if u > v {
					return 1
				}
				return 2 // NaN: unequal, unordered
			}
		}
		return 0
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if sorted {
		sort.SliceStable(order, func(i, j int) bool { return cmp(order[i], order[j]) == -1 })
	}
	inv := make([]int64, n)
	var firsts, cnt []int64
	for i, r := range order {
		if i == 0 || cmp(order[i-1], r) != 0 {
			firsts = append(firsts, int64(r))
			cnt = append(cnt, 0)
		}
		inv[r] = int64(len(firsts) - 1)
		cnt[len(cnt)-1]++
	}
	values = t.Detach().IndexSelect(d, FromSlice(firsts, Shape{len(firsts)}, dev))
	return values, FromSlice(inv, Shape{n}, dev), FromSlice(cnt, Shape{len(cnt)}, dev)
}

// Bincount counts the occurrences of each value in the 1-D non-negative
// integer tensor input, as torch.bincount(input, weights, minlength): the
// result has max(max(input)+1, minlength) bins. Without weights (nil) it is
// Int64; with weights (1-D, input's length) bin i sums the weights of the
// elements equal to i, in Float32 for Float32 weights and Float64 for any
// other dtype, as PyTorch. It is not differentiable.
func Bincount(input, weights *Tensor, minlength int) *Tensor {
	const op = "bincount"
	input.live(op)
	if !input.dtype.IsInt() || input.dtype == Bool { // checked before the dims, as PyTorch
		panic(&DTypeError{Op: op, DTypes: []DType{input.dtype}, Msg: fmt.Sprintf("\"bincount_cpu\" not implemented for '%s'", torchTypeName(input.dtype))})
	}
	if input.Dim() != 1 {
		shapeErr(op, "bincount only supports 1-d non-negative integral inputs.", input.shape)
	}
	if minlength < 0 {
		panic(&ValueError{Op: op, Msg: "minlength should be >= 0"})
	}
	if weights != nil {
		weights.live(op)
		if weights.Dim() != 1 || weights.shape[0] != input.shape[0] {
			shapeErr(op, "weights should be 1-d and have the same length as input", input.shape, weights.shape)
		}
		sameDevice(op, input, weights)
	}
	idx := input.Detach().Cast(Int64)
	n := minlength
	if idx.NumElements() > 0 {
		if idx.Min().Item() < 0 {
			shapeErr(op, "bincount only supports 1-d non-negative integral inputs.", input.shape)
		}
		// read exactly (Item's float64 rounds past 2^53; 2^63-1 wrapped to
		// a negative size)
		mx := idx.Max().Int64s()[0]
		if mx >= maxElems {
			shapeErr(op, fmt.Sprintf("a value of %d needs more bins than a tensor can hold", mx), input.shape)
		}
		if m := int(mx) + 1; m > n {
			n = m
		}
	}
	dev := On(input.dev)
	if weights == nil {
		return Zeros(Shape{n}, dev, Dtype(Int64)).ScatterAdd(0, idx, OnesLike(idx))
	}
	dt := Float64
	if weights.dtype == Float32 {
		dt = Float32
	}
	return Zeros(Shape{n}, dev, Dtype(dt)).ScatterAdd(0, idx, weights.Detach().Cast(dt))
}

// RepeatInterleave repeats each slice of t along dim repeats times, as
// torch.repeat_interleave(t, repeats, dim) (torch's dim=None is
// t.Flatten().RepeatInterleave(repeats, 0)). Gradients sum the copies
// (IndexSelectBackward0, as PyTorch's composite).
func (t *Tensor) RepeatInterleave(repeats, dim int) *Tensor {
	const op = "repeat_interleave"
	t.live(op)
	if repeats < 0 {
		panic(&ValueError{Op: op, Msg: "repeats can not be negative"})
	}
	if t.Dim() == 0 {
		t.indexDim(op, dim, "Dimension specified as 0 but tensor has no dimensions")
	}
	d := t.dim(op, dim)
	rs := make([]int64, t.shape[d])
	for i := range rs {
		rs[i] = int64(repeats)
	}
	return repeatInterleave(t, d, rs)
}

// RepeatInterleaveTensor is torch.repeat_interleave(t, repeats, dim) with
// a tensor of repeats: integer, 0-dim or 1-D with one count per slice of
// t along dim (a single count applies to every slice).
func (t *Tensor) RepeatInterleaveTensor(repeats *Tensor, dim int) *Tensor {
	const op = "repeat_interleave"
	t.live(op)
	repeats.live(op)
	if t.Dim() == 0 {
		t.indexDim(op, dim, "Dimension specified as 0 but tensor has no dimensions")
	}
	d := t.dim(op, dim)
	if !repeats.dtype.IsInt() || repeats.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{repeats.dtype}, Msg: "repeats has to be Long or Int tensor"})
	}
	if repeats.Dim() > 1 {
		shapeErr(op, "repeats must be 0-dim or 1-dim tensor", repeats.shape)
	}
	n := t.shape[d]
	rv := repeats.Int64s()
	rs := rv
	if len(rv) == 1 {
		rs = make([]int64, n)
		for i := range rs {
			rs[i] = rv[0]
		}
	} else if len(rv) != n {
		shapeErr(op, "repeats must have the same size as input along dim", t.shape, repeats.shape)
	}
	return repeatInterleave(t, d, rs)
}

// repeatInterleave builds the index on t's device (a 1 at the start of
// each slice's copies after the first, summed up), so a huge total is a
// typed error from the allocation, not a host slice of that size.
func repeatInterleave(t *Tensor, d int, rs []int64) *Tensor {
	const op = "repeat_interleave"
	var total int64
	starts := make([]int64, 0, len(rs))
	for i, r := range rs {
		if r < 0 {
			panic(&ValueError{Op: op, Msg: "repeats can not be negative"})
		}
		if i > 0 {
			starts = append(starts, total)
		}
		if r > maxElems-1-total {
			shapeErr(op, fmt.Sprintf("repeats sum to more than %d elements", maxElems-1), t.shape)
		}
		total += r
	}
	dev := On(t.dev)
	marks := Zeros(Shape{int(total) + 1}, dev, Dtype(Int64))
	if len(starts) > 0 {
		marks = marks.ScatterAdd(0, FromSlice(starts, Shape{len(starts)}, dev), Ones(Shape{len(starts)}, dev, Dtype(Int64)))
	}
	return t.IndexSelect(d, marks.Narrow(0, 0, int(total)).Cumsum(0))
}

// Meshgrid returns, for 0-D or 1-D tensors of one dtype and device, the
// coordinate grids as torch.meshgrid(*ts, indexing=indexing): with "ij"
// output i has shape [n0, n1, ...] and varies along dim i; with "xy" the
// first two dims are swapped ([n1, n0, n2, ...], Cartesian indexing). The
// grids are expanded views of the inputs (gradients sum over the copies).
func Meshgrid(indexing string, ts ...*Tensor) []*Tensor {
	const op = "meshgrid"
	if len(ts) == 0 {
		panic(&ValueError{Op: op, Msg: "torch.meshgrid expects a non-empty TensorList"})
	}
	if indexing != "ij" && indexing != "xy" {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s", indexing)})
	}
	shape := make(Shape, len(ts))
	for i, t := range ts {
		t.live(op)
		if t.Dim() > 1 {
			shapeErr(op, fmt.Sprintf("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: %v", t.shape), t.shape)
		}
		if t.dtype != ts[0].dtype {
			panic(&DTypeError{Op: op, DTypes: []DType{ts[0].dtype, t.dtype}, Msg: "meshgrid expects all tensors to have the same dtype"})
		}
		shape[i] = t.NumElements()
	}
	sameDevice(op, ts...)
	pos := make([]int, len(ts))
	for i := range pos {
		pos[i] = i
	}
	if indexing == "xy" && len(ts) >= 2 {
		pos[0], pos[1] = 1, 0
		shape[0], shape[1] = shape[1], shape[0]
	}
	outs := make([]*Tensor, len(ts))
	for i, t := range ts {
		v := make(Shape, len(ts))
		for j := range v {
			v[j] = 1
		}
		v[pos[i]] = shape[pos[i]]
		outs[i] = t.Reshape(v...).Expand(shape...)
	}
	return outs
}

// scalarTypeName is c10's lower-case name of dt ("float", "double", "long").
func scalarTypeName(dt DType) string { return strings.ToLower(torchTypeName(dt)) }

func lerpCheck(start, end *Tensor, weight *Tensor) {
	const op = "lerp"
	start.live(op)
	end.live(op)
	if !start.dtype.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{start.dtype}, Msg: fmt.Sprintf("\"lerp_kernel_scalar\" not implemented for '%s'", torchTypeName(start.dtype))})
	}
	if end.dtype != start.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{start.dtype, end.dtype}, Msg: fmt.Sprintf("expected dtype %s for `end` but got dtype %s", scalarTypeName(start.dtype), scalarTypeName(end.dtype))})
	}
	if weight != nil && weight.live(op).dtype != start.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{start.dtype, weight.dtype}, Msg: fmt.Sprintf("expected dtype %s for `weight` but got dtype %s", scalarTypeName(start.dtype), scalarTypeName(weight.dtype))})
	}
}

// Lerp is torch.lerp(start, end, weight): start + weight·(end - start),
// computed as PyTorch does (end - (end - start)·(1 - weight) where
// |weight| ≥ 0.5, so weight 1 gives end exactly). The three broadcast and
// share one floating dtype. Gradients: (1 - weight)·g, weight·g and
// (end - start)·g.
func Lerp(start, end, weight *Tensor) *Tensor {
	lerpCheck(start, end, weight)
	if start.dtype.IsHalf() { // PyTorch computes in float32
		return Lerp(start.Cast(Float32), end.Cast(Float32), weight.Cast(Float32)).Cast(start.dtype)
	}
	diff := end.Sub(start)
	lo := start.Add(weight.Mul(diff))
	hi := end.Sub(diff.Mul(weight.RSubScalar(1)))
	return Where(weight.Abs().LtScalar(0.5), lo, hi)
}

// LerpScalar is torch.lerp(start, end, weight) with a number weight.
func LerpScalar(start, end *Tensor, weight float64) *Tensor {
	lerpCheck(start, end, nil)
	if start.dtype.IsHalf() {
		return LerpScalar(start.Cast(Float32), end.Cast(Float32), weight).Cast(start.dtype)
	}
	diff := end.Sub(start)
	if math.Abs(weight) < 0.5 {
		return start.Add(diff.MulScalar(weight))
	}
	return end.Sub(diff.MulScalar(1 - weight))
}

// Trace is torch.trace: the sum of the main diagonal of a 2-D tensor
// (integer inputs sum to Int64).
func (t *Tensor) Trace() *Tensor {
	const op = "trace"
	t.live(op)
	if t.Dim() != 2 {
		shapeErr(op, fmt.Sprintf("trace: expected a matrix, but got tensor with dim %d", t.Dim()), t.shape)
	}
	if t.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype}, Msg: "\"trace\" not implemented for 'Bool'"})
	}
	r, c := t.shape[0], t.shape[1]
	n := min(r, c)
	// the diagonal's flat positions, made on t's device (a host slice of
	// min(rows, cols) was 8 GiB for a meta or expanded [2^30, 2^30-1])
	dev := On(t.dev)
	idx := Arange(0, float64(n), 1, dev, Dtype(Int64)).Mul(FromSlice([]int64{int64(c + 1)}, Shape{}, dev))
	return t.Reshape(-1).IndexSelect(0, idx).Sum()
}

// Rot90 rotates t by 90° k times in the plane of dims (default 0 and 1),
// from the first towards the second, as torch.rot90(t, k, dims).
func (t *Tensor) Rot90(k int, dims ...int) *Tensor {
	const op = "rot90"
	t.live(op)
	if dims == nil {
		dims = []int{0, 1}
	}
	if len(dims) != 2 {
		shapeErr(op, fmt.Sprintf("expected total rotation dims == 2, but got dims = %d", len(dims)), t.shape)
	}
	nd := t.Dim()
	if nd < 2 {
		shapeErr(op, fmt.Sprintf("expected total dims >= 2, but got total dims = %d", nd), t.shape)
	}
	d0, d1 := dims[0], dims[1]
	if d0 == d1 || d0-d1 == nd || d1-d0 == nd {
		shapeErr(op, fmt.Sprintf("expected rotation dims to be different, but got dim0 = %d and dim1 = %d", d0, d1), t.shape)
	}
	if d0 < -nd || d0 >= nd {
		shapeErr(op, fmt.Sprintf("Rotation dim0 out of range, dim0 = %d", d0), t.shape)
	}
	if d1 < -nd || d1 >= nd {
		shapeErr(op, fmt.Sprintf("Rotation dim1 out of range, dim1 = %d", d1), t.shape)
	}
	d0, d1 = t.dim(op, d0), t.dim(op, d1)
	switch ((k % 4) + 4) % 4 {
	case 1:
		return t.Flip(d1).Transpose(d0, d1)
	case 2:
		return t.Flip(d0, d1)
	case 3:
		return t.Flip(d0).Transpose(d0, d1)
	}
	return t.Clone()
}

// Kron is the Kronecker product torch.kron(a, b): with both shapes padded
// with leading 1s to the same rank, result[i·b.shape + j] = a[i]·b[j]
// (dtypes promote as in Mul).
func Kron(a, b *Tensor) *Tensor {
	const op = "kron"
	a.live(op)
	b.live(op)
	nd := max(a.Dim(), b.Dim())
	pa, pb := make(Shape, nd), make(Shape, nd)
	for i := 0; i < nd; i++ {
		pa[i], pb[i] = 1, 1
		if j := i - (nd - a.Dim()); j >= 0 {
			pa[i] = a.shape[j]
		}
		if j := i - (nd - b.Dim()); j >= 0 {
			pb[i] = b.shape[j]
		}
	}
	sa, sb, out := make(Shape, 2*nd), make(Shape, 2*nd), make(Shape, nd)
	for i := 0; i < nd; i++ {
		sa[2*i], sa[2*i+1] = pa[i], 1
		sb[2*i], sb[2*i+1] = 1, pb[i]
		out[i] = pa[i] * pb[i]
	}
	return a.Reshape(sa...).Mul(b.Reshape(sb...)).Reshape(out...)
}
