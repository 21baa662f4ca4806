package emu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
	"github.com/emberml/ember/internal/philox"
)

var (
	dtypes  = []backend.DType{backend.Float32, backend.Float64, backend.Int64, backend.Int32, backend.Bool}
	ewShape = [][]int{{1}, {7}, {1023}, {4099}, {3, 5, 7}, {2, 1, 9, 4}}
)

func TestUnknownKernel(t *testing.T) {
	l := lib(t)
	err := l.Run(kernels.Launch{Module: kernels.ModElementwise, Kernel: "ember_nope<float>", Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}})
	if _, ok := err.(*UnknownKernelError); !ok {
		t.Fatalf("Run of an unknown kernel: %v, want *UnknownKernelError", err)
	}
	err = l.Run(kernels.Launch{Module: kernels.ModElementwise, Kernel: "ember_fill<float>", Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{2048, 1, 1}})
	if _, ok := err.(*LaunchError); !ok {
		t.Fatalf("Run with a 2048-thread block: %v, want *LaunchError", err)
	}
}

// TestEveryKernelLoads checks the library has every name expression.
func TestEveryKernelLoads(t *testing.T) {
	l := lib(t)
	n := 0
	for m := range kernels.Modules() {
		for _, e := range kernels.NameExpressions(m) {
			if !l.Has(m, e) {
				t.Errorf("missing %s", e)
			}
			n++
		}
	}
	t.Logf("%d kernels in %s", n, l.Path)
}

func TestFill(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(1))
	for _, dt := range dtypes {
		for _, sh := range ewShape {
			for _, k := range []int{contig, sliced, transposed} {
				for _, v := range []float64{2.7, -1, 0} {
					b, cv, op := operand(t, l, rng, dt, sh, k, plain)
					cpuB.Fill(cv, v)
					launch(t, l, kernels.Fill(props, op, v))
					same(t, fmt.Sprintf("fill %v %v %s %v", dt, sh, viewNames[k], v), b.devData(), b.cpuData(), exact)
				}
			}
		}
	}
}

func TestCopy(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(2))
	for _, dd := range dtypes {
		for _, sd := range dtypes {
			for _, sh := range [][]int{{7}, {1023}, {3, 5, 7}} {
				for k := 0; k < numViewKinds; k++ {
					kind := general
					if dd.IsInt() {
						kind = plain // NaN/Inf → int is undefined
					}
					dk := k
					if dk == bcast {
						dk = sliced
					}
					d, dv, do := operand(t, l, rng, dd, sh, dk, plain)
					_, sv, so := operand(t, l, rng, sd, sh, k, kind)
					cpuB.Copy(dv, sv)
					launch(t, l, kernels.Copy(props, do, so))
					same(t, fmt.Sprintf("copy %v←%v %v %s", dd, sd, sh, viewNames[k]), d.devData(), d.cpuData(), exact)
				}
			}
		}
	}
}

func unaryKind(op backend.UnaryOp) int {
	switch op {
	case backend.PowScalar:
		return small
	}
	return general
}

// TestUnary runs every unary op of the op table, on every dtype it
// supports, with its table parameter sets (and a few more for clamp and
// pow), and compares with the CPU backend.
func TestUnary(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(3))
	extra := map[backend.UnaryOp][]backend.Params{
		backend.Clamp:     {{-1, 1.5}, {-1.5, 2.5}, {0.5, 0.5}},
		backend.PowScalar: {{0.5}},
	}
	for op := range backend.NumUnaryOps {
		var ps []backend.Params
		for _, a := range op.Row().Args {
			var p backend.Params
			copy(p[:], a)
			ps = append(ps, p)
		}
		ps = append(ps, extra[op]...)
		if ps == nil {
			ps = []backend.Params{{}}
		}
		for _, dt := range dtypes {
			if !kernels.UnarySupported(op, dt) {
				continue
			}
			od := dt
			if op.Class().BoolOut() {
				od = backend.Bool
			}
			for _, p := range ps {
				for si, sh := range ewShape {
					k := (si + int(op)) % numViewKinds
					d, dv, do := operand(t, l, rng, od, sh, (k+1)%3, plain)
					_, sv, so := operand(t, l, rng, dt, sh, k, unaryKind(op))
					cpuB.Unary(op, dv, sv, p)
					launch(t, l, kernels.Unary(props, op, do, so, p))
					same(t, fmt.Sprintf("%v %v %v %s p=%v", op, dt, sh, viewNames[k], p), d.devData(), d.cpuData(), tolFor(dt, op.Cost() > 1))
				}
			}
		}
	}
}

func TestBinary(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(4))
	for op := range backend.NumBinaryOps {
		for _, dt := range dtypes {
			if !kernels.BinarySupported(op, dt) {
				continue
			}
			od := dt
			if op.IsComparison() {
				od = backend.Bool
			}
			kind, kindB := general, general
			switch {
			case op == backend.Pow && dt.IsInt():
				kind, kindB = small, positive
			case op == backend.Pow:
				kindB = small
			case (op == backend.Remainder || op == backend.FloorDiv || op == backend.Fmod) && dt.IsInt():
				kindB = small // includes 0: x/0 = 0
			}
			for si, sh := range ewShape {
				for _, ks := range [][2]int{{contig, contig}, {(si + int(op)) % numViewKinds, bcast}, {bcast, transposed}, {sliced, transposed}} {
					d, dv, do := operand(t, l, rng, od, sh, ks[0]%3, plain)
					_, av, ao := operand(t, l, rng, dt, sh, ks[0], kind)
					_, bv, bo := operand(t, l, rng, dt, sh, ks[1], kindB)
					if op == backend.Eq || op == backend.Ne || op == backend.Maximum || op == backend.Minimum || op == backend.Fmax || op == backend.Fmin || op == backend.Heaviside {
						// make equal values (and ±0 pairs) likely
						_, bv, bo = av, av, ao
						if ks[1] == bcast {
							_, bv, bo = operand(t, l, rand.New(rand.NewSource(int64(si))), dt, sh, bcast, small)
						}
					}
					cpuB.Binary(op, dv, av, bv)
					launch(t, l, kernels.Binary(props, op, do, ao, bo))
					loose := op.Cost() > 1 || op == backend.Div
					same(t, fmt.Sprintf("%v %v %v %s,%s", op, dt, sh, viewNames[ks[0]], viewNames[ks[1]]), d.devData(), d.cpuData(), tolFor(dt, loose))
				}
			}
		}
	}
}

// TestMaximumSignedZeroAndNaN checks maximum/minimum on hand-made pairs.
func TestMaximumSignedZeroAndNaN(t *testing.T) {
	l := lib(t)
	nz := float32(math.Copysign(0, -1))
	nan := float32(math.NaN())
	a := []float32{0, nz, nan, 1, 2, nz}
	b := []float32{nz, 0, 1, nan, 2, nz}
	wantMax := []float32{0, 0, nan, nan, 2, nz}
	wantMin := []float32{nz, nz, nan, nan, 2, nz}
	for _, c := range []struct {
		op   backend.BinaryOp
		want []float32
	}{{backend.Maximum, wantMax}, {backend.Minimum, wantMin}} {
		ab, bb := newBuf(t, l, a), newBuf(t, l, b)
		d := newBuf(t, l, make([]float32, len(a)))
		sh, st := []int{len(a)}, []int{1}
		_, do := d.view(sh, st, 0)
		_, ao := ab.view(sh, st, 0)
		_, bo := bb.view(sh, st, 0)
		launch(t, l, kernels.Binary(props, c.op, do, ao, bo))
		got := d.devData().([]float32)
		compared.Add(1)
		for i := range got {
			g, w := got[i], c.want[i]
			if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
				t.Errorf("%v(%v, %v) = %v (bits %x), want %v", c.op, a[i], b[i], g, math.Float32bits(g), w)
			}
		}
	}
}

func TestWhere(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(5))
	for _, dt := range dtypes {
		for si, sh := range ewShape {
			for _, ks := range [][3]int{{contig, contig, contig}, {bcast, transposed, sliced}, {transposed, bcast, contig}, {sliced, sliced, bcast}} {
				d, dv, do := operand(t, l, rng, dt, sh, si%3, plain)
				_, cv, co := operand(t, l, rng, backend.Bool, sh, ks[0], general)
				_, av, ao := operand(t, l, rng, dt, sh, ks[1], general)
				_, bv, bo := operand(t, l, rng, dt, sh, ks[2], general)
				cpuB.Where(dv, cv, av, bv)
				launch(t, l, kernels.Where(props, do, co, ao, bo))
				same(t, fmt.Sprintf("where %v %v", dt, sh), d.devData(), d.cpuData(), exact)
			}
		}
	}
}

func TestArange(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(6))
	for _, dt := range dtypes[:4] {
		for _, n := range []int{1, 7, 1023, 4099} {
			for _, ss := range [][2]float64{{0, 1}, {-3, 0.5}, {10, -0.25}} {
				d, dv, do := operand(t, l, rng, dt, []int{n}, contig, plain)
				cpuB.Arange(dv, ss[0], ss[1])
				launch(t, l, kernels.Arange(props, do, ss[0], ss[1]))
				same(t, fmt.Sprintf("arange %v %d %v", dt, n, ss), d.devData(), d.cpuData(), exact)
			}
		}
	}
}

func TestRandom(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(7))
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, n := range []int{1, 7, 1023, 4099} {
			for _, normal := range []bool{false, true} {
				for _, so := range [][2]uint64{{0, 0}, {0x123456789abcdef, 5}, {42, 1 << 33}} {
					// a view at an offset into a larger storage
					d := newBuf(t, l, hostData(rng, dt, n+2, plain))
					dv, do := d.view([]int{n}, []int{1}, 1)
					cpuB.Random(dv, so[0], so[1], normal)
					launch(t, l, kernels.Random(props, do, so[0], so[1], normal))
					tl := exact
					if normal {
						tl = tol{1e-6, 1e-6}
						if dt == backend.Float64 {
							tl = tol{1e-12, 1e-12}
						}
					}
					same(t, fmt.Sprintf("random %v n=%d normal=%v seed=%x off=%d", dt, n, normal, so[0], so[1]), d.devData(), d.cpuData(), tl)
				}
			}
		}
	}
	// Spot values straight from internal/philox, independent of backend/cpu.
	d := newBuf(t, l, make([]float32, 8))
	_, do := d.view([]int{8}, []int{1}, 0)
	launch(t, l, kernels.Random(props, do, 7, 3, false))
	got := d.devData().([]float32)
	compared.Add(1)
	for i, g := range got {
		x := philox.Block(7, 3+uint64(i/4))
		if w := philox.Uniform32(x[i%4]); math.Float32bits(g) != math.Float32bits(w) {
			t.Errorf("uniform element %d = %v, want %v", i, g, w)
		}
	}
}

// reduceCase: src shape, the dims reduced.
type reduceCase struct {
	shape []int
	dims  []int
}

var reduceCases = []reduceCase{
	{[]int{1}, []int{0}},
	{[]int{7}, []int{0}},
	{[]int{4099}, []int{0}},          // one output, block tree across 128 threads
	{[]int{37, 300}, []int{1}},       // trailing, block mode
	{[]int{300, 37}, []int{0}},       // leading, block mode
	{[]int{37, 5}, []int{0}},         // leading small: thread per output
	{[]int{5, 130, 3}, []int{1}},     // middle
	{[]int{3, 4, 5}, []int{0, 2}},    // two dims
	{[]int{6, 9}, []int{1}},          // small trailing
	{[]int{2, 1, 1030}, []int{2}},    // > 1024
	{[]int{4, 3}, []int{0, 1}},       // everything, tiny
	{[]int{3, 1, 4}, []int{1}},       // a size-1 dim
	{[]int{2, 5, 3, 7}, []int{1, 3}}, // non-adjacent
}

func TestReduce(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(8))
	for op := range backend.NumReduceOps {
		for _, dt := range dtypes {
			if !kernels.ReduceSupported(op, dt) {
				continue
			}
			od := dt
			switch op {
			case backend.ArgMax, backend.ArgMin:
				od = backend.Int64
			case backend.Any, backend.All:
				od = backend.Bool
			}
			for ci, c := range reduceCases {
				if (op == backend.ArgMax || op == backend.ArgMin) && len(c.dims) != 1 {
					continue
				}
				dsh := append([]int(nil), c.shape...)
				for _, d := range c.dims {
					dsh[d] = 1
				}
				for _, k := range []int{contig, transposed, sliced} {
					kind := general
					switch {
					case op == backend.Prod:
						kind = nearOne
					case op == backend.Sum && dt.IsFloat():
						kind = plain
					case (op == backend.ArgMax || op == backend.ArgMin) && dt.IsInt():
						kind = small // ties
					case op == backend.All && ci%2 == 0:
						kind = nearOne // all true
					}
					d, dv, do := operand(t, l, rng, od, dsh, (k+1)%3, plain)
					_, sv, so := operand(t, l, rng, dt, c.shape, k, kind)
					for _, p := range []kernels.DeviceProps{props, props1024} {
						if p == props1024 && ci != 2 && ci != 9 {
							continue
						}
						cpuB.Reduce(op, dv, sv)
						launch(t, l, kernels.Reduce(p, op, do, so))
						tl := exact
						if op == backend.Sum || op == backend.Prod {
							tl = tolFor(dt, true)
							if dt == backend.Float32 {
								tl = tol{2e-5, 2e-5}
							}
						}
						same(t, fmt.Sprintf("%v %v %v dims %v %s threads %d", op, dt, c.shape, c.dims, viewNames[k], p.MaxThreadsPerBlock), d.devData(), d.cpuData(), tl)
					}
				}
			}
		}
	}
}

// TestArgMaxTiesAndNaN checks hand-made rows: first occurrence wins ties,
// NaN counts as the maximum (and minimum), the first NaN wins.
func TestArgMaxTiesAndNaN(t *testing.T) {
	l := lib(t)
	nan := math.NaN()
	rows := [][]float64{
		{1, 3, 3, 2},
		{nan, 1, 5, nan},
		{1, 2, nan, 7},
		{-1, -1, -1, -1},
	}
	want := map[backend.ReduceOp][]int64{backend.ArgMax: {1, 0, 2, 0}, backend.ArgMin: {0, 0, 2, 0}}
	for _, long := range []bool{false, true} {
		for op, w := range want {
			var host []float64
			n := 4
			if long { // stretch each row to 1000 by repeating its smallest non-NaN value after it
				n = 1000
			}
			for _, r := range rows {
				row := append([]float64(nil), r...)
				fillv := -1.0
				if op == backend.ArgMin {
					fillv = 100
				}
				for len(row) < n {
					row = append(row, fillv)
				}
				host = append(host, row...)
			}
			src := newBuf(t, l, host)
			dst := newBuf(t, l, make([]int64, len(rows)))
			_, so := src.view([]int{len(rows), n}, []int{n, 1}, 0)
			_, do := dst.view([]int{len(rows), 1}, []int{1, 1}, 0)
			launch(t, l, kernels.Reduce(props, op, do, so))
			got := dst.devData().([]int64)
			compared.Add(1)
			ww := append([]int64(nil), w...)
			if long && op == backend.ArgMin {
				ww[3] = 0
			}
			for i := range got {
				if got[i] != ww[i] {
					t.Errorf("%v row %d (len %d) = %d, want %d", op, i, n, got[i], ww[i])
				}
			}
		}
	}
}

func TestSoftmax(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(9))
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, sh := range [][]int{{1}, {3, 7}, {2, 1500}, {4, 1, 129}, {5}} {
			for _, lg := range []bool{false, true} {
				for _, p := range []kernels.DeviceProps{props, props1024} {
					if p == props1024 && sh[len(sh)-1] < 1000 {
						continue
					}
					kind := plain
					if sh[0] == 5 {
						kind = general // NaN and ±Inf in the row
					}
					d, dv, do := operand(t, l, rng, dt, sh, contig, plain)
					_, sv, so := operand(t, l, rng, dt, sh, contig, kind)
					cpuB.Softmax(dv, sv, lg)
					launch(t, l, kernels.Softmax(p, do, so, lg))
					same(t, fmt.Sprintf("softmax %v %v log=%v threads %d", dt, sh, lg, p.MaxThreadsPerBlock), d.devData(), d.cpuData(), tolFor(dt, true))
				}
			}
		}
	}
}
