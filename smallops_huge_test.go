package ember

import (
	"math"
	"testing"
)

// TestRepeatInterleaveHugeRepeats: repeats whose total cannot be held give
// a typed error (the index was built in a host slice, one append per
// copy: 3·2^62 copies never returned, 2^40 were a fatal out-of-memory).
func TestRepeatInterleaveHugeRepeats(t *testing.T) {
	v := FromSlice([]float32{1, 2, 3}, Shape{3})
	raises[*ShapeError](t, "repeats overflow", func() { v.RepeatInterleave(math.MaxInt, 0) })
	raises[*ShapeError](t, "tensor repeats overflow", func() {
		v.RepeatInterleaveTensor(FromSlice([]int64{1 << 62, 1 << 62, 1 << 62}, Shape{3}), 0)
	})
	raises[*OutOfMemoryError](t, "repeats 2^50", func() { v.RepeatInterleave(1<<50, 0) })
	raises[*OutOfMemoryError](t, "tensor repeats 2^50", func() {
		v.RepeatInterleaveTensor(FromSlice([]int64{0, 1 << 50, 1}, Shape{3}), 0)
	})
	// zero repeats among others, leading and trailing, as torch
	// (torch.tensor([1.,2,3,4]).repeat_interleave(torch.tensor([0,2,0,1]))
	// is [2, 2, 4]; with [2, 0, 1, 0] it is [1, 1, 3]).
	w := FromSlice([]float32{1, 2, 3, 4}, Shape{4})
	for _, c := range []struct {
		r, want []int64
	}{
		{[]int64{0, 2, 0, 1}, []int64{2, 2, 4}},
		{[]int64{2, 0, 1, 0}, []int64{1, 1, 3}},
		{[]int64{0, 0, 0, 0}, []int64{}},
		{[]int64{1, 1, 1, 1}, []int64{1, 2, 3, 4}},
	} {
		got := w.RepeatInterleaveTensor(FromSlice(c.r, Shape{4}), 0).Cast(Int64).Int64s()
		if len(got) != len(c.want) {
			t.Fatalf("repeats %v: %v, want %v", c.r, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("repeats %v: %v, want %v", c.r, got, c.want)
			}
		}
	}
}

// TestTraceHugeOnMeta: Trace's diagonal index is made on the tensor's
// device: a meta [2^30, 2^30-1] traces to a 0-dim meta tensor (its host
// index was 8 GiB, a fatal out-of-memory error).
func TestTraceHugeOnMeta(t *testing.T) {
	got := Empty(Shape{1 << 30, 1<<30 - 1}, On(Meta)).Trace()
	if got.Dim() != 0 || got.Device() != Meta {
		t.Fatalf("trace on meta: %v on %v", got.Shape(), got.Device())
	}
	// and on the CPU, a non-square int32 matrix sums its diagonal to Int64
	// (torch.trace(torch.arange(12, dtype=torch.int32).reshape(3, 4)) is 15).
	m := Arange(0, 12, 1, Dtype(Int32)).Reshape(3, 4)
	if tr := m.Trace(); tr.DType() != Int64 || tr.Item() != 15 {
		t.Fatalf("trace int32: %v %v", tr.DType(), tr.Item())
	}
}

// TestBincountHugeValues: a value too large for its bins is a typed error
// naming bincount (2^63-1 wrapped to a negative bin count, and scatter_add
// reported an index out of bounds for size 0); a huge minlength or value
// that fits the element count is an *OutOfMemoryError.
func TestBincountHugeValues(t *testing.T) {
	raises[*ShapeError](t, "bincount 2^63-1", func() { Bincount(FromSlice([]int64{3, math.MaxInt64}, Shape{2}), nil, 0) })
	raises[*OutOfMemoryError](t, "bincount 2^50", func() { Bincount(FromSlice([]int64{1 << 50}, Shape{1}), nil, 0) })
	raises[*OutOfMemoryError](t, "bincount minlength 2^50", func() { Bincount(FromSlice([]int64{1}, Shape{1}), Ones(Shape{1}), 1<<50) })
	raises[*OutOfMemoryError](t, "histc 2^50 bins", func() { Ones(Shape{3}).Histc(1<<50, 0, 1) })
	// a value past 2^53 is read exactly: 2^53+1 needs 2^53+2 bins, still
	// refused, but by the size of those bins
	err := Try(func() { Bincount(FromSlice([]int64{1<<53 + 1}, Shape{1}), nil, 0) })
	if oom, ok := err.(*OutOfMemoryError); !ok || oom.Bytes != 8*(1<<53+2) {
		t.Fatalf("bincount 2^53+1: %v", err)
	}
}

// TestLogCumSumExpMemory: LogCumSumExp's scan takes a few times its input's
// memory, so a meta line of 2^58 works out its shape (the masked blocks
// of 32×32 per 32 elements were 32× the input: an element count past
// what a tensor can hold).
func TestLogCumSumExpMemory(t *testing.T) {
	x := Empty(Shape{1<<57 + 1, 2}, On(Meta))
	for _, d := range []int{0, 1} {
		if got := x.LogCumSumExp(d); !got.Shape().Equal(x.Shape()) {
			t.Fatalf("dim %d: %v", d, got.Shape())
		}
	}
}

// TestBincountDTypeFirst: Bincount checks the dtype before the dims, as
// torch.bincount: Bool and floating inputs of any rank are "bincount_cpu"
// not implemented (Bool and 2-D Float were a *ShapeError).
func TestBincountDTypeFirst(t *testing.T) {
	for name, in := range map[string]*Tensor{
		"bool 1-D":  FromSlice([]bool{true}, Shape{1}),
		"bool 0-D":  FromSlice([]bool{true}, Shape{}),
		"float 2-D": Ones(Shape{2, 2}),
		"float 0-D": Ones(Shape{}),
	} {
		raises[*DTypeError](t, "bincount "+name, func() { Bincount(in, nil, 0) })
	}
	raises[*ShapeError](t, "bincount int 2-D", func() { Bincount(Ones(Shape{1, 2}, Dtype(Int64)), nil, 0) })
}

// TestLogCumSumExpGradInfinities: LogCumSumExp's gradient is PyTorch
// 1.13's logcumsumexp_backward (exp(x + reverse logcumsumexp(log g -
// result)), split by g's sign), so infinite inputs give its zeros and NaNs
// (values from torch with grad_output 1, 2, ..., n; composed LogSumExp
// gradients gave NaN after a trailing -Inf and 1 for a leading one).
func TestLogCumSumExpGradInfinities(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct{ x, grad []float64 }{
		{[]float64{1, -inf, 2, -inf, -inf}, []float64{6.227297056439942, 0, 8.772702943560057, 0, 0}},
		{[]float64{-inf, -inf, -inf}, []float64{nan, nan, nan}},
		{[]float64{-inf, 3, -inf, -inf, 5, 1e-300}, []float64{nan, 10.307012537320649, 0, 0, 9.65758896026794, 0.03539850241141668}},
		{[]float64{inf, 1, 2}, []float64{nan, 0, 0}},
		{[]float64{1, inf, -inf}, []float64{1, nan, 0}},
	} {
		x := FromSlice(c.x, Shape{len(c.x)}, WithGrad())
		x.LogCumSumExp(0).Mul(Arange(1, float64(len(c.x)+1), 1, Dtype(Float64))).Sum().Backward()
		got := x.Grad().Float64s()
		for i, w := range c.grad {
			if math.IsNaN(w) != math.IsNaN(got[i]) || !math.IsNaN(w) && math.Abs(got[i]-w) > 1e-12*math.Max(1, math.Abs(w)) {
				t.Fatalf("x %v: grad %v, want %v", c.x, got, c.grad)
			}
		}
	}
}

// TestNanMeanAllNaNGrad: NanSum's gradient is g·(x not NaN), as PyTorch's
// nansum_backward, so NanMean over a row of only NaNs (g/0 = Inf) has a
// NaN gradient there, as torch.nanmean (it was 0): x = [[nan, 1, 3],
// [nan, nan, nan]], nanmean(x, 1) weighted by [1, 2] gives
// [[0, 0.5, 0.5], [nan, nan, nan]].
func TestNanMeanAllNaNGrad(t *testing.T) {
	nan := math.NaN()
	x := FromSlice([]float64{nan, 1, 3, nan, nan, nan}, Shape{2, 3}, WithGrad())
	x.NanMean(Dims(1)).Mul(FromSlice([]float64{1, 2}, Shape{2})).Sum().Backward()
	want := []float64{0, 0.5, 0.5, nan, nan, nan}
	got := x.Grad().Float64s()
	for i, w := range want {
		if math.IsNaN(w) != math.IsNaN(got[i]) || !math.IsNaN(w) && got[i] != w {
			t.Fatalf("grad %v, want %v", got, want)
		}
	}
	// the NaNs' gradient is 0 for a finite g (torch.nansum)
	y := FromSlice([]float32{float32(nan), 2}, Shape{2}, WithGrad())
	y.NanSum().MulScalar(3).Backward()
	if g := y.Grad().Float64s(); g[0] != 0 || g[1] != 3 {
		t.Fatalf("nansum grad %v, want [0 3]", g)
	}
}
