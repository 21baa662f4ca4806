package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
)

// arr is a plain row-major reference array.
type arr struct {
	shape []int
	data  []float64
}

func numel(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// index converts a flat row-major position to a multi-index.
func index(shape []int, flat int) []int {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		idx[i] = flat % shape[i]
		flat /= shape[i]
	}
	return idx
}

func (a arr) at(idx []int) float64 {
	off := 0
	for i, d := range a.shape {
		off = off*d + idx[i]
	}
	return a.data[off]
}

func (a arr) transpose(d0, d1 int) arr {
	ns := append([]int{}, a.shape...)
	ns[d0], ns[d1] = ns[d1], ns[d0]
	out := arr{ns, make([]float64, numel(ns))}
	for f := range out.data {
		idx := index(ns, f)
		idx[d0], idx[d1] = idx[d1], idx[d0]
		out.data[f] = a.at(idx)
	}
	return out
}

func (a arr) slice(d, start, step int) arr {
	ns := append([]int{}, a.shape...)
	ns[d] = (a.shape[d] - start + step - 1) / step
	out := arr{ns, make([]float64, numel(ns))}
	for f := range out.data {
		idx := index(ns, f)
		idx[d] = start + idx[d]*step
		out.data[f] = a.at(idx)
	}
	return out
}

// bcastAt reads a at the position of idx in a broadcast result.
func (a arr) bcastAt(idx []int) float64 {
	lead := len(idx) - len(a.shape)
	own := make([]int, len(a.shape))
	for i := range own {
		if a.shape[i] != 1 {
			own[i] = idx[lead+i]
		}
	}
	return a.at(own)
}

func randArr(r *rand.Rand, shape []int) arr {
	a := arr{shape, make([]float64, numel(shape))}
	for i := range a.data {
		a.data[i] = float64(r.IntN(17) - 8) // small integers: float32 sums are exact
	}
	return a
}

func (a arr) f32(t *testing.T) *ember.Tensor {
	d := make([]float32, len(a.data))
	for i, v := range a.data {
		d[i] = float32(v)
	}
	return ember.FromSlice(d, ember.Shape(append([]int{}, a.shape...)))
}

func (a arr) i64() *ember.Tensor {
	d := make([]int64, len(a.data))
	for i, v := range a.data {
		d[i] = int64(v)
	}
	return ember.FromSlice(d, ember.Shape(append([]int{}, a.shape...)))
}

func checkVals(t *testing.T, what string, got *ember.Tensor, shape []int, want []float64) {
	t.Helper()
	if !got.Shape().Equal(shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), shape)
	}
	g := got.Float64s()
	for i := range want {
		if g[i] != want[i] && !(math.IsNaN(g[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s: element %d (%v) = %v, want %v", what, i, index(shape, i), g[i], want[i])
		}
	}
}

// operand makes a random operand of logical shape: contiguous, transposed
// (stored with the last two dims swapped), stepped (every other element of
// a wider base, at an offset), or narrowed (an offset into a longer base).
func operand(t *testing.T, r *rand.Rand, shape []int, kind int, dtype ember.DType) (arr, *ember.Tensor) {
	mk := func(a arr) *ember.Tensor {
		if dtype == ember.Int64 {
			return a.i64()
		}
		if dtype == ember.BFloat16 {
			return a.f32(t).Cast(ember.BFloat16) // small integers: exact
		}
		return a.f32(t)
	}
	n := len(shape)
	switch {
	case kind == 1 && n >= 2:
		base := append([]int{}, shape...)
		base[n-1], base[n-2] = base[n-2], base[n-1]
		b := randArr(r, base)
		return b.transpose(n-2, n-1), mk(b).Transpose(n-2, n-1)
	case kind == 2 && n >= 1:
		base := append([]int{}, shape...)
		base[n-1] = 2*shape[n-1] + 1
		b := randArr(r, base)
		return b.slice(n-1, 1, 2), mk(b).Slice(n-1, 1, 1<<30, 2)
	case kind == 3 && n >= 1:
		base := append([]int{}, shape...)
		base[0] = shape[0] + 3
		b := randArr(r, base)
		return b.slice(0, 2, 1).sliceTo(0, shape[0]), mk(b).Narrow(0, 2, shape[0])
	}
	a := randArr(r, shape)
	return a, mk(a)
}

func (a arr) sliceTo(d, n int) arr {
	ns := append([]int{}, a.shape...)
	ns[d] = n
	out := arr{ns, make([]float64, numel(ns))}
	for f := range out.data {
		out.data[f] = a.at(index(ns, f))
	}
	return out
}

func randShape(r *rand.Rand, rank, maxd int) []int {
	s := make([]int, rank)
	for i := range s {
		s[i] = 1 + r.IntN(maxd)
	}
	return s
}

// TestElementwise checks Binary and Unary on every layout against the reference.
func TestElementwise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 120; iter++ {
		rank := 1 + r.IntN(4)
		shape := randShape(r, rank, 7)
		// b broadcasts: some dims set to 1, maybe fewer dims
		bs := append([]int{}, shape[r.IntN(rank):]...)
		for i := range bs {
			if r.IntN(3) == 0 {
				bs[i] = 1
			}
		}
		dt := ember.Float32
		if iter%3 == 0 {
			dt = ember.Int64
		}
		ka, kb := r.IntN(4), r.IntN(4)
		a, at := operand(t, r, shape, ka, dt)
		b, bt := operand(t, r, bs, kb, dt)
		name := fmt.Sprintf("%v%d_%v%d_%v", shape, ka, bs, kb, dt)
		want := func(f func(x, y float64) float64) []float64 {
			out := make([]float64, numel(shape))
			for i := range out {
				idx := index(shape, i)
				out[i] = f(a.at(idx), b.bcastAt(idx))
			}
			return out
		}
		checkVals(t, name+" add", at.Add(bt), shape, want(func(x, y float64) float64 { return x + y }))
		checkVals(t, name+" mul", at.Mul(bt), shape, want(func(x, y float64) float64 { return x * y }))
		checkVals(t, name+" max", at.Maximum(bt), shape, want(math.Max))
		checkVals(t, name+" gt", bt.Lt(at), shape, want(func(x, y float64) float64 {
			if y < x {
				return 1
			}
			return 0
		}))
		neg := make([]float64, len(a.data))
		for i := range a.data {
			neg[i] = -a.at(index(shape, i))
		}
		checkVals(t, name+" neg", at.Neg(), shape, neg)
		checkVals(t, name+" copy", at.Contiguous(), shape, want(func(x, _ float64) float64 { return x }))
	}
}

// TestReduce checks Sum, Max, Prod and ArgMax over leading, middle and
// trailing dims (and several dims) of every layout.
func TestReduce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 150; iter++ {
		rank := 1 + r.IntN(4)
		shape := randShape(r, rank, 6)
		kind := r.IntN(4)
		dt := ember.Float32
		if iter%4 == 0 {
			dt = ember.Int64
		}
		a, at := operand(t, r, shape, kind, dt)
		var dims []int
		red := make([]bool, rank)
		for i := range red {
			if r.IntN(2) == 0 {
				red[i] = true
				dims = append(dims, i)
			}
		}
		if len(dims) == 0 {
			d := r.IntN(rank)
			red[d], dims = true, []int{d}
		}
		keep := append([]int{}, shape...)
		for i := range keep {
			if red[i] {
				keep[i] = 1
			}
		}
		fold := func(init float64, f func(acc, x float64) float64) []float64 {
			out := make([]float64, numel(keep))
			for i := range out {
				out[i] = init
			}
			for i := range a.data {
				idx := index(shape, i)
				o := 0
				for k := range keep {
					j := idx[k]
					if red[k] {
						j = 0
					}
					o = o*keep[k] + j
				}
				out[o] = f(out[o], a.at(idx))
			}
			return out
		}
		name := fmt.Sprintf("%v_kind%d_dims%v_%v", shape, kind, dims, dt)
		opts := []ember.ReduceOption{ember.Dims(dims...), ember.KeepDim()}
		checkVals(t, name+" sum", at.Sum(opts...), keep, fold(0, func(acc, x float64) float64 { return acc + x }))
		checkVals(t, name+" max", at.Max(opts...), keep, fold(math.Inf(-1), math.Max))
		checkVals(t, name+" min", at.Min(opts...), keep, fold(math.Inf(1), math.Min))
		if numel(shape) < 40 {
			checkVals(t, name+" prod", at.Prod(opts...), keep, fold(1, func(acc, x float64) float64 { return acc * x }))
		}
		// ArgMax over one dim: first index of the maximum.
		d := dims[0]
		ks := append([]int{}, shape...)
		ks[d] = 1
		want := make([]float64, numel(ks))
		for i := range want {
			idx := index(ks, i)
			best, bi := math.Inf(-1), 0
			for j := 0; j < shape[d]; j++ {
				idx[d] = j
				if v := a.at(idx); v > best {
					best, bi = v, j
				}
			}
			want[i] = float64(bi)
		}
		checkVals(t, name+" argmax", at.ArgMaxDim(d, true), ks, want)
	}
}

// TestMatMul checks the GEMM paths (row-major, transposed, strided that
// needs packing, batched with broadcast batch strides) against the naive
// product, in float32, float64 and bfloat16 (exact float32 sums of small
// integers, rounded once to bfloat16).
func TestMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sizes := []int{1, 2, 3, 5, 8, 13, 17, 33, 64, 65}
	for iter := 0; iter < 60; iter++ {
		m, k, n := sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))]
		batch := 1 + r.IntN(3)
		ka, kb := r.IntN(3), r.IntN(3)
		dt := ember.Float32
		switch iter % 5 {
		case 0:
			dt = ember.Float64
		case 2:
			dt = ember.BFloat16
		}
		a, at := operand(t, r, []int{batch, m, k}, ka, dt)
		var b arr
		var bt *ember.Tensor
		bBcast := r.IntN(2) == 0
		if bBcast {
			b, bt = operand(t, r, []int{k, n}, kb, dt)
		} else {
			b, bt = operand(t, r, []int{batch, k, n}, kb, dt)
		}
		if dt == ember.Float64 {
			at, bt = at.Cast(ember.Float64), bt.Cast(ember.Float64)
		}
		want := make([]float64, batch*m*n)
		for bi := 0; bi < batch; bi++ {
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					var s float64
					for p := 0; p < k; p++ {
						bv := 0.0
						if bBcast {
							bv = b.at([]int{p, j})
						} else {
							bv = b.at([]int{bi, p, j})
						}
						s += a.at([]int{bi, i, p}) * bv
					}
					if dt == ember.BFloat16 {
						s = float64(backend.ToBF16(float32(s)).Float32())
					}
					want[(bi*m+i)*n+j] = s
				}
			}
		}
		checkVals(t, fmt.Sprintf("matmul b%d %dx%dx%d kinds %d/%d bcast %v %v", batch, m, k, n, ka, kb, bBcast, dt), at.MatMul(bt), []int{batch, m, n}, want)
	}
}

// TestThreads runs large kernels (past the one-goroutine threshold) with 1
// and 4 threads: the results must be identical.
func TestThreads(t *testing.T) {
	defer cpu.SetThreads(cpu.Threads())
	defer cpu.SetGrain(cpu.SetGrain(1 << 12))
	run := func() map[string][]float64 {
		ember.ManualSeed(7)
		x := ember.Randn(ember.Shape{300, 700})
		y := ember.Rand(ember.Shape{700})
		xi := x.MulScalar(10).Cast(ember.Int64)
		out := map[string][]float64{
			"add":        x.Add(y).Float64s(),
			"exp_t":      x.T().Exp().Float64s(),
			"copy_t":     x.T().Contiguous().Float64s(),
			"sum_all":    x.Sum().Float64s(),
			"sum_int":    xi.Sum().Float64s(),
			"sum_0":      x.Sum(ember.Dims(0)).Float64s(),
			"sum_1":      x.Sum(ember.Dims(1)).Float64s(),
			"sum_int_0":  xi.Sum(ember.Dims(0)).Float64s(),
			"max_1":      x.Max(ember.Dims(1)).Float64s(),
			"argmax_0":   x.ArgMaxDim(0, false).Float64s(),
			"any":        x.GtScalar(4).Any(ember.Dims(1)).Float64s(),
			"softmax":    x.Softmax(1).Float64s(),
			"matmul":     x.Narrow(0, 0, 200).MatMul(x.T().Narrow(1, 0, 90)).Float64s(),
			"matmul_int": xi.Narrow(0, 0, 50).MatMul(xi.T().Narrow(1, 0, 40)).Float64s(),
			"rand":       ember.Rand(ember.Shape{100003}).Float64s(),
		}
		return out
	}
	cpu.SetThreads(1)
	one := run()
	cpu.SetThreads(4)
	four := run()
	for name, a := range one {
		b := four[name]
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s: element %d: %v with 1 thread, %v with 4", name, i, a[i], b[i])
				break
			}
		}
	}
	// The single-output float sum split across workers stays accurate.
	if got, want := one["sum_all"][0], exactSum(t); math.Abs(got-want) > 1e-3*math.Max(1, math.Abs(want)) {
		t.Errorf("sum_all = %v, float64 reference %v", got, want)
	}
}

func exactSum(t *testing.T) float64 {
	ember.ManualSeed(7)
	var s float64
	for _, v := range ember.Randn(ember.Shape{300, 700}).Float64s() {
		s += v
	}
	return s
}
