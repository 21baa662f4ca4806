package ember

import (
	"math"
	"math/rand"
	"testing"

	"github.com/emberml/ember/backend"
)

// halfValues returns n random values exactly representable in dt, in
// [lo, hi), and their bits as a tensor of dt and shape.
func halfValues(rng *rand.Rand, dt DType, shape Shape, lo, hi float64) ([]float64, *Tensor) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	f := make([]float32, n)
	v := make([]float64, n)
	for i := range f {
		x := float32(lo + (hi-lo)*rng.Float64())
		if dt == BFloat16 {
			x = backend.ToBF16(x).Float32()
		} else {
			x = backend.ToF16(x).Float32()
		}
		f[i], v[i] = x, float64(x)
	}
	return v, FromSlice(f, shape).Cast(dt)
}

// permuted returns the row-major values of the contiguous v (of shape) with
// its dims permuted, and the permuted shape, by hand.
func permuted(v []float64, shape Shape, perm []int) ([]float64, Shape) {
	ps := make(Shape, len(perm))
	for i, p := range perm {
		ps[i] = shape[p]
	}
	st := backend.ContiguousStrides(shape)
	out := make([]float64, len(v))
	idx := make([]int, len(ps))
	for k := range out {
		off := 0
		for i, p := range perm {
			off += idx[i] * st[p]
		}
		out[k] = v[off]
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < ps[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, ps
}

// refReduce reduces the row-major v of shape over the dims marked in red, in
// float64 with plain loops: the keepdim-shaped results (row-major) and each
// output's sum of magnitudes (to bound float32 accumulation error).
func refReduce(op backend.ReduceOp, v []float64, shape Shape, red []bool) (out, mag []float64) {
	keep := shape.clone()
	for i, r := range red {
		if r {
			keep[i] = 1
		}
	}
	ks := backend.ContiguousStrides(keep)
	nOut := 1
	for _, d := range keep {
		nOut *= d
	}
	out, mag = make([]float64, nOut), make([]float64, nOut)
	for i := range out {
		switch op {
		case backend.Prod:
			out[i] = 1
		case backend.Max:
			out[i] = math.Inf(-1)
		case backend.Min:
			out[i] = math.Inf(1)
		}
	}
	idx := make([]int, len(shape))
	for _, x := range v {
		o := 0
		for i := range idx {
			if !red[i] {
				o += idx[i] * ks[i]
			}
		}
		switch op {
		case backend.Sum:
			out[o] += x
		case backend.Prod:
			out[o] *= x
		case backend.Max:
			out[o] = math.Max(out[o], x)
		case backend.Min:
			out[o] = math.Min(out[o], x)
		}
		mag[o] += math.Abs(x)
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, mag
}

// TestHalfReduceNative checks the CPU backend's ReduceHalf (bfloat16 and
// float16 read directly) against float64 reductions by hand, for the
// layouts it takes, that it declines the others, and that the public Sum,
// Mean, Prod, Max and Min agree with the reference once rounded, strided
// inputs (the float32 copy) included.
func TestHalfReduceNative(t *testing.T) {
	hr, ok := backendOf(CPU).(backend.HalfReducer)
	if !ok {
		t.Fatal("the CPU backend is not a backend.HalfReducer")
	}
	rng := rand.New(rand.NewSource(14))
	type tc struct {
		shape Shape
		perm  []int // nil: contiguous
		dims  [][]int
	}
	all3 := [][]int{nil, {2}, {1, 2}, {0}, {0, 1}, {1}, {0, 2}}
	cases := []tc{
		{Shape{3, 5, 7}, nil, all3},
		{Shape{2, 9, 1030}, nil, all3},
		{Shape{3, 4, 5, 14}, nil, [][]int{{0, 2, 3}, {0, 3}}}, // a convolution's bias gradient
		{Shape{4, 70000}, nil, [][]int{nil, {1}, {0}}},        // the parallel blocks of a long run
		{Shape{5, 6, 40}, []int{0, 2, 1}, all3},
		{Shape{33, 17}, []int{1, 0}, [][]int{nil, {0}, {1}}},
		{Shape{1}, nil, [][]int{nil, {0}}},
		{Shape{}, nil, [][]int{nil}},
	}
	for _, dt := range []DType{BFloat16, Float16} {
		eps, tiny := math.Pow(2, -8), 0.0 // a unit of rounding: half an ulp, relative, and the least subnormal
		if dt == Float16 {
			eps, tiny = math.Pow(2, -11), math.Pow(2, -24)
		}
		for _, c := range cases {
			for _, op := range []backend.ReduceOp{backend.Sum, backend.Prod, backend.Max, backend.Min} {
				lo, hi := -3.0, 3.0
				if op == backend.Prod {
					if c.shape.NumElements() > 20000 { // under- or overflows float32
						continue
					}
					lo, hi = 0.9, 1.1
				}
				v, x := halfValues(rng, dt, c.shape, lo, hi)
				shape := c.shape
				if c.perm != nil {
					x = x.Permute(c.perm...)
					v, shape = permuted(v, c.shape, c.perm)
				}
				for _, dims := range c.dims {
					var opts []ReduceOption
					if dims != nil {
						opts = append(opts, Dims(dims...))
					}
					_, red, keep := x.reduction("test", opts)
					want, mag := refReduce(op, v, shape, red)
					name := func() string {
						return dt.String() + " " + op.String() + " " + shape.String() + " dims " + Shape(dims).String()
					}

					// The backend's float32 result, unrounded.
					dst := empty(keep, Float32, CPU)
					took := hr.ReduceHalf(op, dst.view(), x.view())
					_, rd, _ := x.reduction("test", opts)
					nRed := 1
					for i, r := range rd {
						if r {
							nRed *= shape[i]
						}
					}
					if took {
						got := dst.Float32s()
						for i := range want {
							tol := 0.0
							switch op {
							case backend.Sum:
								tol = 1e-6 * mag[i]
							case backend.Prod:
								tol = float64(nRed) * 1.2e-7 * math.Abs(want[i])
							}
							if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
								t.Fatalf("%s: ReduceHalf[%d] = %v, want %v (±%g)", name(), i, got[i], want[i], tol)
							}
						}
					}
					// Contiguous inputs reduced over one run of dims (the
					// trailing or the leading ones) must take the native path.
					oneRun := dims == nil || len(dims) == 1 && dims[0] == 0 || len(dims) == 1 && dims[0] == len(shape)-1 ||
						len(dims) == 2 && (dims[0] == 1 && dims[1] == 2 || dims[0] == 0 && dims[1] == 1)
					if c.perm == nil && oneRun && nRed > 0 && len(shape) > 0 && !took {
						t.Errorf("%s: ReduceHalf declined a contiguous run", name())
					}
					// and so must planes: two runs, the inner one contiguous
					if c.perm == nil && len(shape) >= 3 && dims != nil && dims[0] == 0 && dims[len(dims)-1] == len(shape)-1 && dims[1] != 1 && !took {
						t.Errorf("%s: ReduceHalf declined planes", name())
					}

					// The public op, rounded once.
					var res *Tensor
					switch op {
					case backend.Sum:
						res = x.Sum(opts...)
					case backend.Prod:
						res = x.Prod(opts...)
					case backend.Max:
						res = x.Max(opts...)
					case backend.Min:
						res = x.Min(opts...)
					}
					if res.DType() != dt {
						t.Fatalf("%s: dtype %v", name(), res.DType())
					}
					got := res.Float32s()
					for i := range want {
						tol := 1.001*eps*math.Abs(want[i]) + 2e-6*mag[i] + tiny
						if op == backend.Prod {
							tol = (1.001*eps+float64(nRed)*1.2e-7)*math.Abs(want[i]) + tiny
						}
						if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
							t.Fatalf("%s: public [%d] = %v, want %v (±%g)", name(), i, got[i], want[i], tol)
						}
					}
					if op == backend.Sum && nRed > 0 {
						m := x.Mean(opts...)
						if m.DType() != dt {
							t.Fatalf("%s: mean dtype %v", name(), m.DType())
						}
						gm := m.Float32s()
						for i := range want {
							w := want[i] / float64(nRed)
							tol := 1.001*eps*math.Abs(w) + 2e-6*mag[i]/float64(nRed) + tiny
							if d := math.Abs(float64(gm[i]) - w); !(d <= tol) {
								t.Fatalf("%s: mean [%d] = %v, want %v (±%g)", name(), i, gm[i], w, tol)
							}
						}
					}
				}
			}
		}
	}
}

// TestHalfReduceNativeNaN: a NaN wins Max and Min and spreads through
// Sum on the native path, keepdim keeps the shape.
func TestHalfReduceNativeNaN(t *testing.T) {
	for _, dt := range []DType{BFloat16, Float16} {
		f := make([]float32, 2*2000)
		for i := range f {
			f[i] = float32(i%7) - 3
		}
		f[1500] = float32(math.NaN())
		x := FromSlice(f, Shape{2, 2000}).Cast(dt)
		for _, r := range []*Tensor{x.Max(Dims(1), KeepDim()), x.Min(Dims(1), KeepDim()), x.Sum(Dims(1), KeepDim())} {
			if !equalShape(r.Shape(), Shape{2, 1}) {
				t.Fatalf("%v: shape %v", dt, r.Shape())
			}
			g := r.Float32s()
			if !math.IsNaN(float64(g[0])) || math.IsNaN(float64(g[1])) {
				t.Fatalf("%v: got %v, want [NaN, finite]", dt, g)
			}
		}
		if g := x.Max(Dims(1)).Float32s(); g[1] != 3 {
			t.Fatalf("%v: max of row 1 = %v, want 3", dt, g[1])
		}
	}
}

// TestHalfReduceNativeAsCopy: where the CPU backend reduces a two-byte
// tensor natively, its unrounded float32 result is bit for bit that of the
// float32 Reduce on the tensor's float32 copy (the path it replaces): short
// runs, runs across the widening chunks, long runs in parallel blocks, and
// leading dims.
func TestHalfReduceNativeAsCopy(t *testing.T) {
	hr := backendOf(CPU).(backend.HalfReducer)
	rng := rand.New(rand.NewSource(23))
	cases := []struct {
		shape Shape
		dims  []int // nil: all
	}{
		{Shape{64, 16}, []int{1}}, {Shape{64, 24}, []int{1}}, {Shape{64, 31}, []int{1}}, {Shape{64, 33}, []int{1}},
		{Shape{8, 3000}, []int{1}}, {Shape{5, 4100}, []int{1}}, {Shape{3, 70001}, []int{1}},
		{Shape{70001}, nil}, {Shape{2, 40000}, nil}, {Shape{300, 7}, []int{0}}, {Shape{9, 5000}, []int{0}},
	}
	for _, dt := range []DType{BFloat16, Float16} {
		for _, c := range cases {
			for _, op := range []backend.ReduceOp{backend.Sum, backend.Max, backend.Min} {
				_, x := halfValues(rng, dt, c.shape, -3, 3)
				var opts []ReduceOption
				if c.dims != nil {
					opts = append(opts, Dims(c.dims...))
				}
				_, _, keep := x.reduction("test", opts)
				got := empty(keep, Float32, CPU)
				if !hr.ReduceHalf(op, got.view(), x.view()) {
					t.Fatalf("%v %v %v dims %v: ReduceHalf declined", dt, op, c.shape, c.dims)
				}
				want := empty(keep, Float32, CPU)
				f := x.Cast(Float32)
				f.be().Reduce(op, want.view(), f.view())
				g, w := got.Float32s(), want.Float32s()
				for i := range w {
					if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
						t.Fatalf("%v %v %v dims %v: [%d] = %v, the float32 copy's %v", dt, op, c.shape, c.dims, i, g[i], w[i])
					}
				}
			}
		}
	}
}
