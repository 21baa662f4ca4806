package ember

import (
	"fmt"
	"math"
	"sort"
)

// Order statistics and related scans: median, nanmedian, kthvalue, mode,
// quantile, nansum/nanmean, searchsorted/bucketize, cummax/cummin,
// logcumsumexp and histc. Values are picked with Gather from their
// indices, so gradients flow to the chosen elements as PyTorch's
// value_selecting_reduction_backward does. Kthvalue, Mode, Cummax and
// Cummin choose their indices on the host (PyTorch's CPU algorithms, whose
// choice among equal values they reproduce); the rest run on t's device.

// movedLast returns t with dim d moved to the last place (a view).
func movedLast(t *Tensor, d int) *Tensor {
	if d == t.Dim()-1 {
		return t
	}
	return t.Unsqueeze(-1).Transpose(d, -1).Squeeze(d)
}

// keepShape is t's shape with dim d set to 1.
func keepShape(t *Tensor, d int) Shape {
	s := t.shape.clone()
	s[d] = 1
	return s
}

// selectAlong returns t's elements at idx (keepdim shape) along d, and
// idx, squeezed unless keepdim.
func selectAlong(t, idx *Tensor, d int, keepdim bool) (values, indices *Tensor) {
	values = t.Gather(d, idx)
	if !keepdim {
		return values.Squeeze(d), idx.Squeeze(d)
	}
	return values, idx
}

func (t *Tensor) reduceDimCheck(op string, dim int) int {
	d := t.dim(op, dim)
	if t.Dim() > 0 && t.shape[d] == 0 {
		shapeErr(op, fmt.Sprintf("%s(): Expected reduction dim %d to have non-zero size.", op, d), t.shape)
	}
	return d
}

func notBool(op, kernel string, t *Tensor) {
	if t.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("\"%s\" not implemented for 'Bool'", kernel)})
	}
}

// Median returns the median of all of t's elements, as torch.median(t):
// the lower of the two middle values for an even count, NaN if t holds a
// NaN (and for an empty floating tensor). Its gradient is shared evenly
// among the elements equal to the result (MedianBackward0).
func (t *Tensor) Median() *Tensor { return t.medianAll("median", false) }

// NanMedian is torch.nanmedian(t): Median of t's non-NaN elements (NaN
// when there are none).
func (t *Tensor) NanMedian() *Tensor { return t.medianAll("nanmedian", true) }

func (t *Tensor) medianAll(op string, ignoreNaN bool) *Tensor {
	t.live(op)
	notBool(op, "median_cpu", t)
	n := t.NumElements()
	if isMeta(t) {
		return empty(Shape{}, t.dtype, t.dev)
	}
	if n == 0 {
		if !t.dtype.IsFloat() {
			shapeErr(op, "median() input tensor cannot be empty", t.shape)
		}
		out := Full(Shape{}, math.NaN(), On(t.dev), Dtype(t.dtype))
		return record("MedianBackward0", out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
			return []*Tensor{Zeros(t.shape, On(g.dev), Dtype(g.dtype))}
		})
	}
	x := t.Detach().Reshape(-1)
	s, _ := x.Sort(0, false) // NaN last
	k := (n - 1) / 2
	if t.dtype.IsFloat() {
		nan := int(x.IsNaN().Sum().Item())
		switch {
		case !ignoreNaN && nan > 0:
			k = n - 1
		case ignoreNaN && nan == n:
			k = 0
		case ignoreNaN:
			k = (n - nan - 1) / 2
		}
	}
	out := s.Narrow(0, k, 1).Reshape()
	name := map[bool]string{false: "MedianBackward0", true: "NanmedianBackward0"}[ignoreNaN]
	xd := t.Detach()
	yd := out.Detach()
	return record(name, out, []*Tensor{t}, []*Tensor{xd, yd}, func(g *Tensor) []*Tensor {
		eq := xd.Eq(yd).LogicalOr(xd.IsNaN().LogicalAnd(yd.IsNaN()))
		mask := eq.Cast(xd.dtype)
		return []*Tensor{mask.Mul(g.Div(mask.Sum()))}
	})
}

// MedianDim returns the medians of t along dim and their Int64 positions,
// as torch.median(t, dim, keepdim): the lower median; among equal values
// the position PyTorch's CPU kernel reports (the one a stable sort puts
// at the middle); a slice holding NaN gives NaN and its first NaN's
// position. Gradients flow to the chosen elements.
func (t *Tensor) MedianDim(dim int, keepdim bool) (values, indices *Tensor) {
	return t.medianDim("median", dim, keepdim, false)
}

// NanMedianDim is torch.nanmedian(t, dim, keepdim): MedianDim over each
// slice's non-NaN values (NaN where a slice holds only NaN).
func (t *Tensor) NanMedianDim(dim int, keepdim bool) (values, indices *Tensor) {
	return t.medianDim("nanmedian", dim, keepdim, true)
}

func (t *Tensor) medianDim(op string, dim int, keepdim bool, ignoreNaN bool) (values, indices *Tensor) {
	t.live(op)
	notBool(op, "median_out", t)
	if t.Dim() == 0 {
		t.dim(op, dim)
		return t.Reshape(1).medianDim(op, 0, false, ignoreNaN)
	}
	d := t.reduceDimCheck("median", dim)
	n := t.shape[d]
	_, perm := t.Detach().Sort(d, false) // stable, NaN last
	ks := keepShape(t, d)
	var k *Tensor
	if t.dtype.IsFloat() {
		nan := t.Detach().IsNaN().Sum(Dims(d), KeepDim()) // Int64
		if ignoreNaN {
			k = nan.RSubScalar(float64(n-1)).Clamp(0, math.Inf(1)).FloorDivide(Full(Shape{}, 2, On(t.dev), Dtype(Int64)))
		} else {
			k = Where(nan.GtScalar(0), nan.RSubScalar(float64(n)), Full(Shape{}, float64((n-1)/2), On(t.dev), Dtype(Int64)))
		}
	} else {
		k = Full(ks, float64((n-1)/2), On(t.dev), Dtype(Int64))
	}
	return selectAlong(t, perm.Gather(d, k), d, keepdim)
}

// hostLines reads t (detached) with dim d moved last as float64 or int64
// lines of length n; put turns one int64 per line back into a tensor of
// t's shape with d of size 1.
func hostLines(t *Tensor, d int) (f []float64, i []int64, put func([]int64) *Tensor) {
	x := movedLast(t.Detach(), d).Contiguous()
	if t.dtype.IsFloat() || t.dtype == Bool {
		f = x.Float64s()
	} else {
		i = x.Int64s()
	}
	ls := x.shape.clone()
	ls[len(ls)-1] = 1
	put = func(v []int64) *Tensor {
		r := FromSlice(v, ls, On(t.dev))
		if d != t.Dim()-1 {
			r = r.Transpose(d, -1).Contiguous()
		}
		return r
	}
	return
}

// quickSelect is PyTorch's CPU quick_select_template (Sedgewick's
// partitioning with a median of three, NaN largest): after it, idx[k] is
// the index PyTorch's kthvalue reports.
func quickSelect[T float64 | int64](arr []T, idx []int64, k int) {
	gt := func(x, y T) bool {
		xn, yn := x != x, y != y
		return (xn && !yn) || x > y
	}
	swap := func(i, j int) {
		arr[i], arr[j] = arr[j], arr[i]
		idx[i], idx[j] = idx[j], idx[i]
	}
	L, R := 0, len(arr)-1
	for {
		if R <= L {
			return
		}
		if R == L+1 {
			if gt(arr[L], arr[R]) {
				swap(L, R)
			}
			return
		}
		P := (L + R) >> 1
		swap(P, L+1)
		if gt(arr[L+1], arr[R]) {
			swap(L+1, R)
		}
		if gt(arr[L], arr[R]) {
			swap(L, R)
		}
		if gt(arr[L+1], arr[L]) {
			swap(L+1, L)
		}
		i, j := L+1, R
		piv := arr[L]
		for {
			for i++; gt(piv, arr[i]); i++ {
			}
			for j--; gt(arr[j], piv); j-- {
			}
			if j < i {
				break
			}
			swap(i, j)
		}
		swap(L, j)
		if j <= k {
			L = i
		}
		if j >= k {
			R = j - 1
		}
	}
}

// Kthvalue returns the k-th smallest values of t along dim (k from 1) and
// their Int64 positions, as torch.kthvalue(t, k, dim, keepdim); NaN counts
// as the largest value, and among equal values the position is the one
// PyTorch's CPU kernel picks (its quickselect is reproduced on the host).
// Gradients flow to the chosen elements.
func (t *Tensor) Kthvalue(k, dim int, keepdim bool) (values, indices *Tensor) {
	const op = "kthvalue"
	t.live(op)
	notBool(op, "kthvalue_cpu", t)
	if t.Dim() == 0 {
		t.dim(op, dim)
		if k != 1 {
			shapeErr(op, "kthvalue(): selected number k out of range for dimension 0", t.shape)
		}
		return t.Reshape(1).Kthvalue(k, 0, false)
	}
	d := t.reduceDimCheck(op, dim)
	n := t.shape[d]
	if k < 1 || k > n {
		shapeErr(op, fmt.Sprintf("kthvalue(): selected number k out of range for dimension %d", d), t.shape)
	}
	if isMeta(t) {
		return selectAlong(t, Zeros(keepShape(t, d), On(t.dev), Dtype(Int64)), d, keepdim)
	}
	f, iv, put := hostLines(t, d)
	lines := t.NumElements() / n
	out := make([]int64, lines)
	idx := make([]int64, n)
	for l := range out {
		for j := range idx {
			idx[j] = int64(j)
		}
		if f != nil {
			quickSelect(append([]float64(nil), f[l*n:(l+1)*n]...), idx, k-1)
		} else {
			quickSelect(append([]int64(nil), iv[l*n:(l+1)*n]...), idx, k-1)
		}
		out[l] = idx[k-1]
	}
	return selectAlong(t, put(out), d, keepdim)
}

// Mode returns the most frequent value of each slice of t along dim and a
// position where it occurs, as torch.mode(t, dim, keepdim): the smallest
// of equally frequent values, at the position PyTorch's CPU kernel
// reports (it sorts (value, position) pairs with libstdc++'s std::sort,
// reproduced here on the host, and takes the last pair of the value's
// run; NaNs are each their own value). Gradients flow to the chosen
// elements.
func (t *Tensor) Mode(dim int, keepdim bool) (values, indices *Tensor) {
	const op = "mode"
	t.live(op)
	if t.Dim() == 0 {
		t.dim(op, dim)
		return t.Reshape(1).Mode(0, false)
	}
	d := t.reduceDimCheck(op, dim)
	n := t.shape[d]
	if isMeta(t) {
		return selectAlong(t, Zeros(keepShape(t, d), On(t.dev), Dtype(Int64)), d, keepdim)
	}
	f, iv, put := hostLines(t, d)
	lines := t.NumElements() / n
	out := make([]int64, lines)
	idx := make([]int, n)
	for l := range out {
		for j := range idx {
			idx[j] = j
		}
		less := func(a, b int) bool { return iv[l*n+a] < iv[l*n+b] }
		if f != nil {
			less = func(a, b int) bool { return f[l*n+a] < f[l*n+b] }
		}
		eq := func(a, b int) bool { return !less(a, b) && !less(b, a) && (f == nil || f[l*n+a] == f[l*n+b]) }
		stdSort(idx, less)
		best, run := 0, 0
		for j := range idx {
			run++
			if j == n-1 || !eq(idx[j], idx[j+1]) {
				if run > best {
					best, out[l] = run, int64(idx[j])
				}
				run = 0
			}
		}
	}
	return selectAlong(t, put(out), d, keepdim)
}

// Quantile returns the q-quantiles of t (q: 0-dim or 1-D, t's dtype,
// values in [0, 1]), as torch.quantile(t, q, dim, keepdim, interpolation):
// over all elements, or along the one dim given with Dims (KeepDim keeps
// it). interpolation is "linear", "lower", "higher", "midpoint" or
// "nearest" (round half to even). For a 1-D q the quantiles make a new
// first dim. A slice holding NaN gives NaN. t must be Float32 or Float64
// and non-empty. Gradients flow through the sort and the interpolation.
func (t *Tensor) Quantile(q *Tensor, interpolation string, opts ...ReduceOption) *Tensor {
	return quantile("quantile", t, q, interpolation, false, opts)
}

// QuantileScalar is Quantile with one number q (torch.quantile(t, q, ...)).
func (t *Tensor) QuantileScalar(q float64, interpolation string, opts ...ReduceOption) *Tensor {
	return quantileScalar("quantile", t, q, interpolation, false, opts)
}

// NanQuantile is torch.nanquantile: Quantile over each slice's non-NaN
// values (NaN where a slice holds only NaN).
func (t *Tensor) NanQuantile(q *Tensor, interpolation string, opts ...ReduceOption) *Tensor {
	return quantile("nanquantile", t, q, interpolation, true, opts)
}

// NanQuantileScalar is NanQuantile with one number q.
func (t *Tensor) NanQuantileScalar(q float64, interpolation string, opts ...ReduceOption) *Tensor {
	return quantileScalar("nanquantile", t, q, interpolation, true, opts)
}

func quantileScalar(op string, t *Tensor, q float64, interp string, ignoreNaN bool, opts []ReduceOption) *Tensor {
	t.live(op)
	if !(q >= 0 && q <= 1) {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("quantile() q must be in the range [0, 1] but got %v", q)})
	}
	return quantile(op, t, Full(Shape{}, q, On(t.dev), Dtype(t.dtype)), interp, ignoreNaN, opts)
}

func quantile(op string, t, q *Tensor, interp string, ignoreNaN bool, opts []ReduceOption) *Tensor {
	t.live(op)
	q.live(op)
	switch interp {
	case "linear", "lower", "higher", "midpoint", "nearest":
	default:
		panic(&ValueError{Op: op, Msg: "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got " + interp})
	}
	o := reduceOpts{}
	for _, f := range opts {
		f(&o)
	}
	if len(o.dims) > 1 {
		panic(&ValueError{Op: op, Msg: "quantile() takes one dim"})
	}
	hasDim := o.dimsSet && len(o.dims) == 1
	d := 0
	if hasDim {
		d = t.dim(op, o.dims[0])
	}
	if t.NumElements() == 0 {
		shapeErr(op, "quantile() input tensor must be non-empty", t.shape)
	}
	if q.Dim() > 1 {
		shapeErr(op, "quantile() q must be a scalar or 1D tensor", q.shape)
	}
	if t.dtype != Float32 && t.dtype != Float64 {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype}, Msg: "quantile() input tensor must be either float or double dtype"})
	}
	if q.dtype != t.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype, q.dtype}, Msg: "quantile() q tensor must be same dtype as the input tensor"})
	}
	sameDevice(op, t, q)
	var outShape Shape
	if hasDim && t.Dim() > 0 {
		outShape = t.shape.clone()
		if o.keep {
			outShape[d] = 1
		} else {
			outShape = append(outShape[:d:d], outShape[d+1:]...)
		}
	} else if o.keep {
		outShape = make(Shape, t.Dim())
		for i := range outShape {
			outShape[i] = 1
		}
	}
	if !isMeta(q) && q.NumElements() > 0 {
		if !q.Ge(scalarLike(q, 0)).LogicalAnd(q.Le(scalarLike(q, 1))).All().Bools()[0] {
			panic(&ValueError{Op: op, Msg: "quantile() q values must be in the range [0, 1]"})
		}
	}
	var sorted *Tensor
	if !hasDim || t.Dim() == 0 {
		sorted, _ = t.Reshape(-1).Sort(0, false)
	} else {
		sorted, _ = t.Unsqueeze(-1).Transpose(d, -1).Sort(-1, false)
	}
	n := sorted.shape[sorted.Dim()-1]
	inShape := append(outShape.clone(), n)
	sorted = sorted.Reshape(inShape...)
	q1 := q.Reshape(-1)
	var ranks *Tensor
	if ignoreNaN {
		cnt := sorted.IsNaN().LogicalNot().Sum(Dims(-1), KeepDim()).Cast(t.dtype).SubScalar(1)
		ranks = q1.Mul(cnt)
		ranks = WhereScalar(ranks.LtScalar(0), 0, ranks)
	} else {
		last := float64(n - 1)
		anyNaN := sorted.IsNaN().Any(Dims(-1), KeepDim())
		ranks = WhereScalar(anyNaN, last, q1.MulScalar(last))
	}
	switch interp {
	case "lower":
		ranks = ranks.Floor()
	case "higher":
		ranks = ranks.Ceil()
	case "nearest":
		ranks = ranks.Round()
	}
	below := ranks.Cast(Int64)
	vb := sorted.Gather(-1, below)
	if interp == "linear" || interp == "midpoint" {
		var w *Tensor
		if interp == "midpoint" {
			w = Full(ranks.shape, 0.5, On(t.dev), Dtype(t.dtype))
		} else {
			w = ranks.Sub(below.Cast(t.dtype))
		}
		va := sorted.Gather(-1, ranks.Ceil().Cast(Int64))
		vb = Lerp(vb, va, w)
	}
	if q.Dim() == 0 {
		return vb.Squeeze(-1)
	}
	return vb.Unsqueeze(0).Transpose(0, -1).Squeeze(-1)
}

// NanSum is torch.nansum: Sum treating NaN as zero (integer inputs: Sum).
// The gradient is g times 0 at the NaNs, as PyTorch's nansum_backward
// (so an infinite g, as NanMean's over only NaNs, gives NaN there).
func (t *Tensor) NanSum(opts ...ReduceOption) *Tensor {
	t.live("nansum")
	if !t.dtype.IsFloat() {
		return t.Sum(opts...)
	}
	td := t.Detach()
	nan := td.IsNaN()
	out := WhereScalar(nan, 0, td).Sum(opts...)
	shape := t.shape.clone()
	return record("NansumBackward0", out, []*Tensor{t}, []*Tensor{nan}, func(g *Tensor) []*Tensor {
		_, _, keep := reductionOf(shape, opts)
		return []*Tensor{g.Reshape(keep...).Expand(shape...).Mul(nan.LogicalNot().Cast(g.dtype))}
	})
}

// NanMean is torch.nanmean: the mean of the non-NaN elements over dims
// (NaN where there are none). t must be floating point.
func (t *Tensor) NanMean(opts ...ReduceOption) *Tensor {
	const op = "nanmean"
	t.live(op)
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("nanmean(): expected input to have floating point dtype but got %s", torchTypeName(t.dtype))})
	}
	cnt := t.IsNaN().LogicalNot().Sum(opts...).Cast(t.dtype)
	return t.NanSum(opts...).Div(cnt)
}

// Searchsorted finds, for each of values, where it would be inserted into
// the innermost dim of sortedSeq to keep it sorted, as
// torch.searchsorted(sortedSeq, values, right=right, sorter=sorter): the
// first such position (right: the last; torch's side="right" is
// right=true). sortedSeq is 1-D (values any shape) or shares values'
// leading dims; sorter (Int64, sortedSeq's shape, or nil) gives the order
// that sorts an unsorted sortedSeq. NaN values go to the end. The result
// is Int64 of values' shape. It runs PyTorch's binary search on the
// device, for all values at once, one Gather per halving (so a sequence
// that is not truly sorted, a NaN inside it, gives PyTorch's answer).
func Searchsorted(sortedSeq, values *Tensor, right bool, sorter *Tensor) *Tensor {
	const op = "searchsorted"
	sortedSeq.live(op)
	values.live(op)
	seq := sortedSeq.Detach()
	v := values.Detach()
	if sorter != nil {
		sorter.live(op)
		if !sorter.shape.Equal(seq.shape) {
			shapeErr(op, fmt.Sprintf("torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor %v and got sorter tensor %v", seq.shape, sorter.shape), seq.shape, sorter.shape)
		}
		if sorter.dtype != Int64 {
			panic(&DTypeError{Op: op, DTypes: []DType{sorter.dtype}, Msg: "torch.searchsorted(): sorter must be a tensor of long dtype"})
		}
		if seq.Dim() == 0 {
			shapeErr(op, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match", seq.shape)
		}
		seq = seq.Gather(-1, sorter)
	}
	sameDevice(op, seq, v)
	lead := func() bool {
		if seq.Dim() != v.Dim() {
			return false
		}
		return seq.shape[:seq.Dim()-1].Equal(v.shape[:v.Dim()-1])
	}
	if seq.Dim() == 0 || seq.Dim() != 1 && !lead() {
		shapeErr(op, fmt.Sprintf("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor %v and input value tensor %v", seq.shape, v.shape), seq.shape, v.shape)
	}
	if seq.dtype == Bool || v.dtype == Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{seq.dtype, v.dtype}, Msg: "\"searchsorted_out_cpu\" not implemented for 'Bool'"})
	}
	// PyTorch runs its binary search (moving past elements where
	// !(seq >= v), or !(seq > v) with right) whatever the sequence holds:
	// counting those elements instead differs where the sequence is not
	// truly sorted (a NaN inside it, unsorted input), so every length
	// runs the search.
	if seq.shape[seq.Dim()-1] == 0 {
		return Zeros(v.shape, On(v.dev), Dtype(Int64))
	}
	return searchBinary(seq, v, right)
}

// searchBinary is PyTorch's binary search (cus_lower_bound and
// cus_upper_bound), run for all values at once: one Gather and compare
// per halving, log2(len(seq)) + 1 rounds.
func searchBinary(seq, v *Tensor, right bool) *Tensor {
	m := seq.shape[seq.Dim()-1]
	dev := On(v.dev)
	lo := Zeros(v.shape, dev, Dtype(Int64))
	hi := Full(v.shape, float64(m), dev, Dtype(Int64))
	two := Full(Shape{}, 2, dev, Dtype(Int64))
	at := func(mid *Tensor) *Tensor {
		if seq.Dim() == 1 {
			return seq.IndexSelect(0, mid.Reshape(-1)).Reshape(mid.shape...)
		}
		return seq.Gather(-1, mid)
	}
	for k := m; ; k >>= 1 {
		active := lo.Lt(hi)
		mid := lo.Add(hi.Sub(lo).FloorDivide(two)).Clamp(0, float64(m-1))
		x := at(mid)
		var goRight *Tensor
		if right {
			goRight = x.Gt(v).LogicalNot()
		} else {
			goRight = x.Ge(v).LogicalNot()
		}
		lo = Where(active.LogicalAnd(goRight), mid.AddScalar(1), lo)
		hi = Where(active.LogicalAnd(goRight.LogicalNot()), mid, hi)
		if k == 0 {
			break
		}
	}
	return lo
}

// Bucketize returns, for each element of input, the index of its bucket
// among the 1-D sorted boundaries, as torch.bucketize(input, boundaries,
// right): with right=false boundaries[i-1] < x <= boundaries[i], with
// right=true boundaries[i-1] <= x < boundaries[i] (Int64, input's shape).
func Bucketize(input, boundaries *Tensor, right bool) *Tensor {
	const op = "bucketize"
	boundaries.live(op)
	input.live(op)
	if boundaries.Dim() != 1 {
		shapeErr(op, fmt.Sprintf("boundaries tensor must be 1 dimension, but got dim(%d)", boundaries.Dim()), boundaries.shape)
	}
	return Searchsorted(boundaries, input, right, nil)
}

// Cummax returns the running maximum of t along dim and, for each place,
// the position of that maximum, as torch.cummax(t, dim): among equal
// values the latest position; once a NaN is met the values are NaN, at
// the latest NaN's position. Gradients flow to the chosen elements.
func (t *Tensor) Cummax(dim int) (values, indices *Tensor) { return t.cumExtreme("cummax", dim, true) }

// Cummin is torch.cummin(t, dim): Cummax's running minimum.
func (t *Tensor) Cummin(dim int) (values, indices *Tensor) { return t.cumExtreme("cummin", dim, false) }

func (t *Tensor) cumExtreme(op string, dim int, isMax bool) (values, indices *Tensor) {
	t.live(op)
	if t.Dim() == 0 {
		t.dim(op, dim)
		v, i := t.Reshape(1).cumExtreme(op, 0, isMax)
		return v.Reshape(), i.Reshape()
	}
	d := t.dim(op, dim)
	n := t.shape[d]
	if n == 0 || t.NumElements() == 0 || isMeta(t) {
		idx := Zeros(t.shape, On(t.dev), Dtype(Int64))
		return t.Gather(d, idx), idx
	}
	x := movedLast(t.Detach(), d).Contiguous()
	lines := x.NumElements() / n
	out := make([]int64, x.NumElements())
	if t.dtype.IsFloat() || t.dtype == Bool {
		f := x.Float64s()
		for l := 0; l < lines; l++ {
			line := f[l*n : (l+1)*n]
			best, bi := line[0], 0
			for i, v := range line {
				if math.IsNaN(v) || !math.IsNaN(best) && (isMax && v >= best || !isMax && v <= best) {
					best, bi = v, i
				}
				out[l*n+i] = int64(bi)
			}
		}
	} else {
		iv := x.Int64s()
		for l := 0; l < lines; l++ {
			line := iv[l*n : (l+1)*n]
			best, bi := line[0], 0
			for i, v := range line {
				if isMax && v >= best || !isMax && v <= best {
					best, bi = v, i
				}
				out[l*n+i] = int64(bi)
			}
		}
	}
	idx := FromSlice(out, x.shape, On(t.dev))
	if d != t.Dim()-1 {
		idx = idx.Unsqueeze(d).Transpose(d, -1).Squeeze(-1).Contiguous()
	}
	return t.Gather(d, idx), idx
}

// LogCumSumExp is torch.logcumsumexp(t, dim): log(cumsum(exp(t))) along
// dim, computed stably: each place is a tree of pairwise LogSumExps of its
// prefix, so large and very negative values keep their precision. Without
// a scan kernel it is a work-efficient scan (neighbours paired, the pairs'
// sums scanned recursively, the even places filled in from them): about
// log2(n) rounds of device ops, a few times the input's memory. Integer
// inputs are refused, as PyTorch. Gradients: PyTorch's
// logcumsumexp_backward (itself a LogCumSumExp), infinities included.
func (t *Tensor) LogCumSumExp(dim int) *Tensor {
	const op = "logcumsumexp"
	t.live(op)
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("\"logcumsumexp_out_cpu\" not implemented for '%s'", torchTypeName(t.dtype))})
	}
	if t.Dim() == 0 {
		t.dim(op, dim)
		return t.Reshape(1).LogCumSumExp(0).Reshape()
	}
	d := t.dim(op, dim)
	if t.shape[d] == 0 {
		return t.Clone()
	}
	td := t.Detach()
	y := logCumSumExpLast(movedLast(td, d))
	if d != t.Dim()-1 {
		y = y.Unsqueeze(d).Transpose(d, -1).Squeeze(-1)
	}
	yd := y.Detach()
	return record("LogcumsumexpBackward0", y, []*Tensor{t}, []*Tensor{td, yd}, func(g *Tensor) []*Tensor {
		// PyTorch 1.13's logcumsumexp_backward: exp(x + reverse
		// logcumsumexp(log|g| - result)), for g > 0 less for g < 0 (the
		// other places log|g| is the dtype's lowest finite value)
		low := -math.MaxFloat64
		switch t.dtype {
		case Float32:
			low = -math.MaxFloat32
		case Float16:
			low = -65504
		case BFloat16:
			low = -3.3895313892515355e38
		}
		logAbs := g.Abs().Log()
		part := func(sel *Tensor) *Tensor {
			lg := WhereTensorScalar(sel, logAbs, low).Sub(yd)
			return lg.Flip(d).LogCumSumExp(d).Flip(d).Add(td).Exp()
		}
		return []*Tensor{part(g.GtScalar(0)).Sub(part(g.LtScalar(0)))}
	})
}

// logAddExp is log(exp(a) + exp(b)), stably (two -Infs give -Inf).
func logAddExp(a, b *Tensor) *Tensor { return Stack([]*Tensor{a, b}, -1).LogSumExp(Dims(-1)) }

// logCumSumExpLast is LogCumSumExp along x's last dim: place 2j+1 is the
// scan of the pair sums at j, place 2j that at j-1 plus x[2j].
func logCumSumExpLast(x *Tensor) *Tensor {
	n := x.shape[x.Dim()-1]
	if n == 1 {
		return x
	}
	lead := x.shape[:x.Dim()-1].clone()
	if n%2 == 1 { // -Inf adds nothing
		x = Cat([]*Tensor{x, Full(append(lead.clone(), 1), math.Inf(-1), On(x.dev), Dtype(x.dtype))}, -1)
	}
	h := (n + 1) / 2
	pairs := x.Reshape(append(lead.clone(), h, 2)...)
	even := pairs.Narrow(-1, 0, 1).Squeeze(-1) // x[2j]
	odd := logCumSumExpLast(logAddExp(even, pairs.Narrow(-1, 1, 1).Squeeze(-1)))
	var evens *Tensor
	if h == 1 {
		evens = even
	} else {
		evens = Cat([]*Tensor{even.Narrow(-1, 0, 1), logAddExp(odd.Narrow(-1, 0, h-1), even.Narrow(-1, 1, h-1))}, -1)
	}
	return Stack([]*Tensor{evens, odd}, -1).Reshape(append(lead.clone(), 2*h)...).Narrow(-1, 0, n)
}

// Histc is torch.histc(t, bins, min, max): the counts of t's elements in
// bins equal-width bins spanning [min, max] (the last bin includes max;
// elements outside are left out, and NaNs are counted in the first bin, as
// PyTorch 1.13's CPU kernel does), in t's dtype. min == max uses
// t's smallest and largest element (widened by 1 each way if equal). t
// must be floating point.
func (t *Tensor) Histc(bins int, lo, hi float64) *Tensor {
	const op = "histc"
	t.live(op)
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("\"histogram_cpu\" not implemented for '%s'", torchTypeName(t.dtype))})
	}
	if bins <= 0 {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("torch.histogram(): bins must be > 0, but got %d for dimension 0", bins)})
	}
	if lo > hi {
		panic(&ValueError{Op: op, Msg: "torch.histc: max must be larger than min"})
	}
	x := t.Detach().Reshape(-1)
	dev := On(t.dev)
	if isMeta(t) {
		return Zeros(Shape{bins}, dev, Dtype(t.dtype))
	}
	if lo == hi && x.NumElements() > 0 {
		lo, hi = x.Min().Item(), x.Max().Item()
	}
	if lo == hi {
		lo, hi = lo-1, hi+1
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("torch.histc: range of [%v, %v] is not finite", lo, hi)})
	}
	// PyTorch's histc (linear interpolation without a search among the
	// edges): bin (elt - min)·bins/(max - min), truncated, in t's precision.
	if t.dtype != Float64 {
		lo, hi = float64(float32(lo)), float64(float32(hi))
	}
	span := hi - lo
	if t.dtype != Float64 {
		span = float64(float32(hi) - float32(lo))
	}
	inRange := x.Ge(scalarLike(x, lo)).LogicalAnd(x.Le(scalarLike(x, hi)))
	in := inRange.LogicalOr(x.IsNaN()) // PyTorch 1.13 counts NaN in the first bin
	p := x.SubScalar(lo).MulScalar(float64(bins)).DivScalar(span)
	p = WhereTensorScalar(inRange, p, 0).Trunc().Clamp(0, float64(bins-1)).Cast(Int64)
	return Zeros(Shape{bins}, dev, Dtype(t.dtype)).ScatterAdd(0, p, in.Cast(t.dtype))
}

// stdSort sorts idx by less as libstdc++'s std::sort does (introsort:
// median-of-three quicksort down to runs of 16, then insertion sort), so
// equal keys end in the same order as in PyTorch's CPU mode. Its bounds
// are checked: NaN keys make less inconsistent, where C++'s unguarded
// loops rely on a sentinel. Past the depth limit (heapsort in libstdc++,
// not reached by inputs a quicksort handles well) it sorts stably.
func stdSort(idx []int, less func(a, b int) bool) {
	n := len(idx)
	if n <= 1 {
		return
	}
	lg := 0
	for m := n; m > 1; m >>= 1 {
		lg++
	}
	introsortLoop(idx, 0, n, 2*lg, less)
	// __final_insertion_sort
	if n > 16 {
		insertionSort(idx, 0, 16, less)
		for i := 16; i < n; i++ {
			linearInsert(idx, i, 0, less)
		}
	} else {
		insertionSort(idx, 0, n, less)
	}
}

func introsortLoop(idx []int, first, last, depth int, less func(a, b int) bool) {
	for last-first > 16 {
		if depth == 0 {
			part := idx[first:last]
			sort.SliceStable(part, func(a, b int) bool { return less(part[a], part[b]) })
			return
		}
		depth--
		// __unguarded_partition_pivot
		mid := first + (last-first)/2
		a, b, c := first+1, mid, last-1
		lt := func(i, j int) bool { return less(idx[i], idx[j]) }
		var m int
		switch {
		case lt(a, b) && lt(b, c):
			m = b
		case lt(a, b) && lt(a, c):
			m = c
		case lt(a, b):
			m = a
		case lt(a, c):
			m = a
		case lt(b, c):
			m = c
		default:
			m = b
		}
		idx[first], idx[m] = idx[m], idx[first]
		lo, hi := first+1, last
		for {
			for lo < last && lt(lo, first) {
				lo++
			}
			hi--
			for hi > first && lt(first, hi) {
				hi--
			}
			if !(lo < hi) {
				break
			}
			idx[lo], idx[hi] = idx[hi], idx[lo]
			lo++
		}
		introsortLoop(idx, lo, last, depth, less)
		last = lo
	}
}

// insertionSort is libstdc++'s __insertion_sort on idx[first:last].
func insertionSort(idx []int, first, last int, less func(a, b int) bool) {
	for i := first + 1; i < last; i++ {
		if less(idx[i], idx[first]) {
			v := idx[i]
			copy(idx[first+1:i+1], idx[first:i])
			idx[first] = v
		} else {
			linearInsert(idx, i, first, less)
		}
	}
}

// linearInsert is __unguarded_linear_insert (stopping at lo).
func linearInsert(idx []int, i, lo int, less func(a, b int) bool) {
	v := idx[i]
	j := i - 1
	for j >= lo && less(v, idx[j]) {
		idx[j+1] = idx[j]
		j--
	}
	idx[j+1] = v
}
