package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/emberml/ember/backend"
)

// These tests check every kernel's fast paths (vectorised rows, 2-D blocks,
// offset tables, transposition tiles, parallel splits) against a reference
// that visits one element at a time, on random views: odd and tiny shapes,
// permuted, stepped and broadcast strides, offsets, every dtype. Elements of
// a destination storage outside its view must stay untouched.

var allDTypes = []backend.DType{backend.Float32, backend.Float64, backend.Int64, backend.Int32, backend.Bool}

// randShape has rank 0..5 and dims 1..maxd (rarely 0); big makes one
// layout large enough to be split across workers.
func randKernelShape(r *rand.Rand, big bool) []int {
	if big {
		return [][]int{{300, 257}, {3, 30001}, {65, 33, 31}, {2, 3, 110, 129}, {20000, 4}, {517, 5, 5, 5}}[r.IntN(6)]
	}
	s := make([]int, r.IntN(6))
	for i := range s {
		s[i] = 1 + r.IntN([]int{3, 8, 40}[r.IntN(3)])
		if r.IntN(40) == 0 {
			s[i] = 0
		}
	}
	return s
}

// randView lays a view of shape over a new storage: dims in a random
// physical order, some stepped, some broadcast (stride 0, when bcast), at
// an offset. It returns the view; the storage is filled with random values.
func randView(r *rand.Rand, dt backend.DType, shape []int, bcast bool) backend.View {
	nd := len(shape)
	perm := r.Perm(nd)
	if r.IntN(3) == 0 { // plain row-major half the time or so
		for i := range perm {
			perm[i] = i
		}
	}
	strides := make([]int, nd)
	acc := 1
	for i := nd - 1; i >= 0; i-- {
		d := perm[i]
		step := 1
		if r.IntN(5) == 0 {
			step = 2 + r.IntN(2)
		}
		strides[d] = acc * step
		acc *= max(shape[d], 1) * step
	}
	if bcast {
		for d := range shape {
			if r.IntN(4) == 0 {
				strides[d] = 0
			}
		}
	}
	off := 0
	if r.IntN(2) == 0 {
		off = r.IntN(7)
	}
	n := off + 1 + r.IntN(3)
	for d, s := range shape {
		if s == 0 {
			n = off + 1
			break
		}
		n += (s - 1) * strides[d]
	}
	st := newStorage(dt, n)
	fillRandom(r, st)
	return backend.View{S: st, Shape: shape, Strides: strides, Offset: off}
}

func fillRandom(r *rand.Rand, st *Storage) {
	switch d := st.data.(type) {
	case []float32:
		for i := range d {
			d[i] = float32(r.IntN(33)-16) / 4
		}
	case []float64:
		for i := range d {
			d[i] = r.NormFloat64() * 4
		}
	case []int64:
		for i := range d {
			d[i] = int64(r.IntN(41) - 20)
		}
	case []int32:
		for i := range d {
			d[i] = int32(r.IntN(41) - 20)
		}
	case []bool:
		for i := range d {
			d[i] = r.IntN(2) == 0
		}
	case []backend.BF16: // any bits: NaNs, infinities, subnormals too
		for i := range d {
			d[i] = backend.BF16(r.Uint32())
		}
	case []backend.F16:
		for i := range d {
			d[i] = backend.F16(r.Uint32())
		}
	}
}

// forEach calls f with the offset of every element of v, row-major.
func forEach(v backend.View, f func(i, off int)) {
	n := v.NumElements()
	idx := make([]int, len(v.Shape))
	for i := 0; i < n; i++ {
		off := v.Offset
		for d, x := range idx {
			off += x * v.Strides[d]
		}
		f(i, off)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < v.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// clone is a copy of v's storage as a new storage, with v moved onto it.
func clone(v backend.View) backend.View {
	st := v.S.(*Storage)
	c := newStorage(st.dt, st.n)
	switch d := st.data.(type) {
	case []float32:
		copy(c.data.([]float32), d)
	case []float64:
		copy(c.data.([]float64), d)
	case []int64:
		copy(c.data.([]int64), d)
	case []int32:
		copy(c.data.([]int32), d)
	case []bool:
		copy(c.data.([]bool), d)
	case []backend.BF16:
		copy(c.data.([]backend.BF16), d)
	case []backend.F16:
		copy(c.data.([]backend.F16), d)
	}
	v.S = c
	return v
}

// at reads element off of a storage as float64 (bool: 0/1).
func at(s backend.Storage, off int) float64 {
	switch d := s.(*Storage).data.(type) {
	case []float32:
		return float64(d[off])
	case []float64:
		return d[off]
	case []int64:
		return float64(d[off])
	case []int32:
		return float64(d[off])
	case []bool:
		if d[off] {
			return 1
		}
	case []backend.BF16:
		return float64(d[off].Float32())
	case []backend.F16:
		return float64(d[off].Float32())
	}
	return 0
}

// sameStorage compares two storages element by element (NaNs equal, signs
// of zero told apart for floats).
func sameStorage(t *testing.T, what string, got, want backend.Storage) {
	t.Helper()
	for i := 0; i < got.Len(); i++ {
		g, w := at(got, i), at(want, i)
		if g == w && math.Signbit(g) == math.Signbit(w) || g != g && w != w {
			continue
		}
		t.Fatalf("%s: storage element %d = %v, want %v", what, i, g, w)
	}
}

func describeView(v backend.View) string {
	return fmt.Sprintf("%v%v strides %v offset %d", v.S.DType(), v.Shape, v.Strides, v.Offset)
}

// iters is n, or a third of it with -short (the race detector's run).
func iters(n int) int {
	if testing.Short() {
		return n / 3
	}
	return n
}

// withThreads runs f with n kernel threads, splitting work from a few
// thousand elements on so that small layouts reach the parallel paths.
func withThreads(n int, f func()) {
	defer SetThreads(Threads())
	defer SetGrain(SetGrain(1 << 11))
	SetThreads(n)
	f()
}

// refBinary is Binary one element at a time, through the generated
// kernel's strided loop on 1×1 blocks.
func refBinary(op backend.BinaryOp, dst, a, b backend.View) {
	switch a.S.DType() {
	case backend.Float32:
		refBinaryT(op, dst, a, b, binaryFloat32, binaryFloat32Bool)
	case backend.Float64:
		refBinaryT(op, dst, a, b, binaryFloat64, binaryFloat64Bool)
	case backend.Int64:
		refBinaryT(op, dst, a, b, binaryInt64, binaryInt64Bool)
	case backend.Int32:
		refBinaryT(op, dst, a, b, binaryInt32, binaryInt32Bool)
	case backend.Bool:
		refBinaryT(op, dst, a, b, nil, binaryBoolBool)
	case backend.BFloat16:
		refBinaryT(op, dst, a, b, binaryBFloat16, binaryBFloat16Bool)
	case backend.Float16:
		refBinaryT(op, dst, a, b, binaryFloat16, binaryFloat16Bool)
	}
}

func refBinaryT[T any](op backend.BinaryOp, dst, a, b backend.View, same blockFn[T, T], toBool blockFn[bool, T]) {
	var oa, ob []int
	forEach(a, func(_, o int) { oa = append(oa, o) })
	forEach(b, func(_, o int) { ob = append(ob, o) })
	x, y := slice[T](a.S), slice[T](b.S)
	forEach(dst, func(i, o int) {
		if dst.S.DType() == backend.Bool {
			toBool(op, slice[bool](dst.S), o, 0, 0, x, oa[i], 0, 0, y, ob[i], 0, 0, 1, 1)
		} else {
			same(op, slice[T](dst.S), o, 0, 0, x, oa[i], 0, 0, y, ob[i], 0, 0, 1, 1)
		}
	})
}

// refUnary is Unary one element at a time, like refBinary.
func refUnary(op backend.UnaryOp, dst, a backend.View, p1, p2 float64) {
	var oa []int
	forEach(a, func(_, o int) { oa = append(oa, o) })
	forEach(dst, func(i, o int) {
		x := oa[i]
		switch a.S.DType() {
		case backend.Float32:
			unaryFloat32(op, slice[float32](dst.S), o, 0, 0, slice[float32](a.S), x, 0, 0, 1, 1, p1, p2, 0)
		case backend.Float64:
			unaryFloat64(op, slice[float64](dst.S), o, 0, 0, slice[float64](a.S), x, 0, 0, 1, 1, p1, p2, 0)
		case backend.Int64:
			unaryInt64(op, slice[int64](dst.S), o, 0, 0, slice[int64](a.S), x, 0, 0, 1, 1, p1, p2, 0)
		case backend.Int32:
			unaryInt32(op, slice[int32](dst.S), o, 0, 0, slice[int32](a.S), x, 0, 0, 1, 1, p1, p2, 0)
		case backend.BFloat16:
			unaryBFloat16(op, slice[backend.BF16](dst.S), o, 0, 0, slice[backend.BF16](a.S), x, 0, 0, 1, 1, p1, p2, 0)
		case backend.Float16:
			unaryFloat16(op, slice[backend.F16](dst.S), o, 0, 0, slice[backend.F16](a.S), x, 0, 0, 1, 1, p1, p2, 0)
		}
	})
}

// setAt writes v (converted) at element off of a storage.
func setAt(s backend.Storage, off int, v float64) {
	switch d := s.(*Storage).data.(type) {
	case []float32:
		d[off] = float32(v)
	case []float64:
		d[off] = v
	case []int64:
		d[off] = int64(v)
	case []int32:
		d[off] = int32(v)
	case []bool:
		d[off] = v != 0
	case []backend.BF16:
		d[off] = backend.ToBF16(float32(v))
	case []backend.F16:
		d[off] = backend.ToF16(float32(v))
	}
}

func TestBinaryKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ops := []backend.BinaryOp{backend.Add, backend.Sub, backend.Mul, backend.Div, backend.Maximum, backend.Pow, backend.Remainder, backend.Lt, backend.Eq, backend.LogicalAnd}
	for iter := 0; iter < iters(300); iter++ {
		big := iter%40 == 0
		shape := randKernelShape(r, big)
		dt := allDTypes[r.IntN(4)]
		op := ops[r.IntN(len(ops))]
		if op == backend.LogicalAnd {
			dt = backend.Bool
		}
		if op == backend.Div && !dt.IsFloat() || dt == backend.Bool && op != backend.LogicalAnd && op != backend.Eq {
			op = backend.Add
			if dt == backend.Bool {
				op = backend.Eq
			}
		}
		outDT := dt
		if op.IsComparison() {
			outDT = backend.Bool
		}
		a, b := randView(r, dt, shape, true), randView(r, dt, shape, true)
		if r.IntN(4) == 0 { // a scalar operand, as x op 2.5 is
			b.Strides = make([]int, len(shape))
		}
		dst := randView(r, outDT, shape, false)
		want := clone(dst)
		refBinary(op, want, a, b)
		threads := 1 + r.IntN(3)
		withThreads(threads, func() { Backend{}.Binary(op, dst, a, b) })
		sameStorage(t, fmt.Sprintf("%v %v: %s = %s, %s (threads %d)", op, dt, describeView(dst), describeView(a), describeView(b), threads), dst.S, want.S)
	}
}

func TestUnaryKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	ops := []backend.UnaryOp{backend.Neg, backend.ReLU, backend.Square, backend.Reciprocal, backend.Exp, backend.Abs, backend.Clamp}
	for iter := 0; iter < iters(200); iter++ {
		shape := randKernelShape(r, iter%40 == 0)
		dt := allDTypes[r.IntN(4)]
		op := ops[r.IntN(len(ops))]
		if !dt.IsFloat() && (op == backend.Reciprocal || op == backend.Exp) {
			op = backend.Neg
		}
		a, dst := randView(r, dt, shape, true), randView(r, dt, shape, false)
		if dt.IsFloat() && a.S.Len() > 3 { // NaN and -0 through ReLU and the others
			st := a.S.(*Storage)
			if d, ok := st.data.([]float32); ok {
				d[0], d[2] = float32(math.NaN()), float32(math.Copysign(0, -1))
			} else {
				d := st.data.([]float64)
				d[0], d[2] = math.NaN(), math.Copysign(0, -1)
			}
		}
		want := clone(dst)
		refUnary(op, want, a, -1.5, 2)
		threads := 1 + r.IntN(3)
		withThreads(threads, func() { Backend{}.Unary(op, dst, a, backend.Params{-1.5, 2}) })
		sameStorage(t, fmt.Sprintf("%v: %s = f(%s) threads %d", op, describeView(dst), describeView(a), threads), dst.S, want.S)
	}
}

func TestWhereKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for iter := 0; iter < iters(200); iter++ {
		shape := randKernelShape(r, iter%40 == 0)
		dt := allDTypes[r.IntN(5)]
		c := randView(r, backend.Bool, shape, true)
		a, b := randView(r, dt, shape, true), randView(r, dt, shape, true)
		switch r.IntN(4) { // the scalar forms of where(mask, g, 0)
		case 0:
			a.Strides = make([]int, len(shape))
		case 1:
			b.Strides = make([]int, len(shape))
		}
		dst := randView(r, dt, shape, false)
		want := clone(dst)
		var oc, oa, ob []int
		forEach(c, func(_, o int) { oc = append(oc, o) })
		forEach(a, func(_, o int) { oa = append(oa, o) })
		forEach(b, func(_, o int) { ob = append(ob, o) })
		forEach(want, func(i, o int) {
			src, so := b, ob[i]
			if at(c.S, oc[i]) != 0 {
				src, so = a, oa[i]
			}
			setAt(want.S, o, at(src.S, so))
		})
		threads := 1 + r.IntN(3)
		withThreads(threads, func() { Backend{}.Where(dst, c, a, b) })
		sameStorage(t, fmt.Sprintf("where %s = %s ? %s : %s threads %d", describeView(dst), describeView(c), describeView(a), describeView(b), threads), dst.S, want.S)
	}
}

// TestCopyFillKernels covers copies between every pair of dtypes (the
// memmove runs, offset tables and transposition tiles of equal dtypes among
// them) and Fill.
func TestCopyFillKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for iter := 0; iter < iters(300); iter++ {
		shape := randKernelShape(r, iter%40 == 0)
		switch iter % 7 {
		case 0: // a transposition big enough for tiles
			shape = []int{17 + r.IntN(40), 16 + r.IntN(50)}
		case 1: // a permutation with two large dims among small ones
			shape = []int{1 + r.IntN(3), 16 + r.IntN(20), 1 + r.IntN(5), 16 + r.IntN(30)}
		}
		sdt, ddt := allDTypes[r.IntN(5)], allDTypes[r.IntN(5)]
		if iter%2 == 0 {
			ddt = sdt
		}
		src, dst := randView(r, sdt, shape, true), randView(r, ddt, shape, false)
		want := clone(dst)
		var os []int
		forEach(src, func(_, o int) { os = append(os, o) })
		forEach(want, func(i, o int) { setAt(want.S, o, at(src.S, os[i])) })
		threads := 1 + r.IntN(3)
		withThreads(threads, func() { Backend{}.Copy(dst, src) })
		sameStorage(t, fmt.Sprintf("copy %s ← %s threads %d", describeView(dst), describeView(src), threads), dst.S, want.S)

		v := []float64{0, 1, -2.5, 7}[r.IntN(4)]
		want = clone(dst)
		forEach(want, func(_, o int) { setAt(want.S, o, v) })
		withThreads(threads, func() { Backend{}.Fill(dst, v) })
		sameStorage(t, fmt.Sprintf("fill %s with %v", describeView(dst), v), dst.S, want.S)
	}
}

// TestReduceKernels reduces random views over random dims into contiguous
// keep-dim outputs and compares with a fold in float64 (float sums within
// a few ulps of the sum of magnitudes, everything else exactly).
func TestReduceKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	ops := []backend.ReduceOp{backend.Sum, backend.Max, backend.Min, backend.Prod, backend.ArgMax, backend.ArgMin, backend.Any, backend.All}
	for iter := 0; iter < iters(400); iter++ {
		shape := randKernelShape(r, iter%30 == 0)
		if len(shape) == 0 || iter%30 == 1 { // 1-D: long ones split one reduction across workers
			shape = []int{1 + r.IntN(100)}
			if iter%30 == 1 {
				shape[0] = 70001 + r.IntN(50000)
			}
		}
		op := ops[r.IntN(len(ops))]
		dt := allDTypes[r.IntN(4)]
		if iter%30 == 1 {
			op = ops[iter/30%3]
		}
		if op == backend.Any || op == backend.All {
			dt = backend.Bool
		}
		src := randView(r, dt, shape, true)
		if dt.IsFloat() && r.IntN(5) == 0 && src.S.Len() > 0 { // a NaN somewhere in the storage
			at := r.IntN(src.S.Len())
			if d, ok := src.S.(*Storage).data.([]float32); ok {
				d[at] = float32(math.NaN())
			} else {
				src.S.(*Storage).data.([]float64)[at] = math.NaN()
			}
		}
		keep := append([]int(nil), shape...)
		var red []int
		for d := range shape {
			if r.IntN(2) == 0 || op == backend.ArgMax || op == backend.ArgMin {
				red = append(red, d)
			}
		}
		if op == backend.ArgMax || op == backend.ArgMin {
			red = []int{r.IntN(len(shape))}
		}
		for _, d := range red {
			keep[d] = 1
		}
		if op == backend.Prod && numelOf(shape)/max(numelOf(keep), 1) > 6 {
			op = backend.Max // products of more would overflow or round
		}
		outDT := dt
		switch op {
		case backend.ArgMax, backend.ArgMin:
			outDT = backend.Int64
		}
		dst := backend.View{S: newStorage(outDT, numelOf(keep)), Shape: keep, Strides: backend.ContiguousStrides(keep)}
		if numelOf(shape) == 0 && (op == backend.Max || op == backend.Min || op == backend.ArgMax || op == backend.ArgMin) {
			continue // ember refuses these
		}
		want, mag := refReduce(op, src, keep, red)
		threads := 1 + r.IntN(3)
		withThreads(threads, func() { Backend{}.Reduce(op, dst, src) })
		name := fmt.Sprintf("%v over %v of %s threads %d", op, red, describeView(src), threads)
		for i := range want {
			g, w := at(dst.S, i), want[i]
			tol := 0.0
			if op == backend.Sum && dt.IsFloat() {
				tol = 1e-6 * mag[i]
			}
			if op == backend.Prod && dt == backend.Float32 {
				tol = 1e-6 * math.Abs(w)
			}
			if math.Abs(g-w) <= tol || g != g && w != w {
				continue
			}
			t.Fatalf("%s: output %d = %v, want %v", name, i, g, w)
		}
	}
}

func numelOf(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// refReduce folds src into the keep-dim shape one element at a time; mag
// is the sum of magnitudes per output (for sum tolerances).
func refReduce(op backend.ReduceOp, src backend.View, keep, red []int) (want, mag []float64) {
	n := numelOf(keep)
	want, mag = make([]float64, n), make([]float64, n)
	seen := make([]bool, n)
	best := make([]float64, n)
	isRed := make([]bool, len(keep))
	for _, d := range red {
		isRed[d] = true
	}
	kst := backend.ContiguousStrides(keep)
	idx := make([]int, len(src.Shape))
	forEach(src, func(i, off int) {
		rem := i
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d] = rem % src.Shape[d]
			rem /= src.Shape[d]
		}
		o, pos := 0, 0
		for d, x := range idx {
			if isRed[d] {
				pos = x // ArgMax/ArgMin reduce one dim
			} else {
				o += x * kst[d]
			}
		}
		x := at(src.S, off)
		mag[o] += math.Abs(x)
		first := !seen[o]
		seen[o] = true
		switch op {
		case backend.Sum:
			want[o] += x
		case backend.Prod:
			if first {
				want[o] = 1
			}
			want[o] *= x
		case backend.Max, backend.Min:
			if first || want[o] == want[o] && (x != x || op == backend.Max && x > want[o] || op == backend.Min && x < want[o]) {
				want[o] = x
			}
		case backend.ArgMax, backend.ArgMin:
			if first || best[o] == best[o] && (x != x || op == backend.ArgMax && x > best[o] || op == backend.ArgMin && x < best[o]) {
				best[o], want[o] = x, float64(pos)
			}
		case backend.Any:
			if first {
				want[o] = 0
			}
			if x != 0 {
				want[o] = 1
			}
		case backend.All:
			if first {
				want[o] = 1
			}
			if x == 0 {
				want[o] = 0
			}
		}
	})
	for o := range want {
		if !seen[o] {
			switch op {
			case backend.Prod, backend.All:
				want[o] = 1
			}
		}
	}
	return want, mag
}

// TestHalfKernels checks the bfloat16 and float16 fast paths (the row
// conversions of Copy, the float32 chunks of Binary, ReLU on bits) on
// random views of random bits against the element-at-a-time kernels:
// every bit of the result, NaNs' included, as ToBF16/ToF16 give it.
func TestHalfKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	halves := []backend.DType{backend.BFloat16, backend.Float16}
	bits := func(s backend.Storage) []uint16 {
		switch d := s.(*Storage).data.(type) {
		case []backend.BF16:
			return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(d))), len(d))
		case []backend.F16:
			return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(d))), len(d))
		}
		if bs, ok := s.(*Storage).data.([]bool); ok {
			u := make([]uint16, len(bs))
			for i, b := range bs {
				if b {
					u[i] = 1
				}
			}
			return u
		}
		f := s.(*Storage).data.([]float32)
		u := make([]uint16, 2*len(f))
		for i, x := range f {
			b := math.Float32bits(x)
			u[2*i], u[2*i+1] = uint16(b), uint16(b>>16)
		}
		return u
	}
	sameBits := func(what string, got, want backend.Storage) {
		t.Helper()
		g, w := bits(got), bits(want)
		for i := range g {
			if g[i] != w[i] {
				t.Fatalf("%s: storage bits %d = %#04x, want %#04x", what, i, g[i], w[i])
			}
		}
	}
	for iter := 0; iter < iters(600); iter++ {
		shape := randKernelShape(r, iter%20 == 0)
		if iter%5 == 0 { // long contiguous rows: several 256-element chunks
			shape = []int{1 + r.IntN(3), 200 + r.IntN(900)}
		}
		dt := halves[r.IntN(2)]
		threads := 1 + r.IntN(3)
		switch iter % 3 {
		case 0: // casts both ways
			f := randView(r, backend.Float32, shape, true)
			fd := f.S.(*Storage).data.([]float32)
			for i := range fd {
				fd[i] = math.Float32frombits(r.Uint32())
				if r.IntN(2) == 0 { // values in (and around) binary16's range
					fd[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(50)-30)))
				}
			}
			h := randView(r, dt, shape, false)
			want := clone(h)
			var os []int
			forEach(f, func(_, o int) { os = append(os, o) })
			forEach(want, func(i, o int) { setAt(want.S, o, float64(slice[float32](f.S)[os[i]])) })
			withThreads(threads, func() { Backend{}.Copy(h, f) })
			sameBits(fmt.Sprintf("copy %s ← %s", describeView(h), describeView(f)), h.S, want.S)

			h, f = randView(r, dt, shape, true), randView(r, backend.Float32, shape, false)
			wantF := clone(f)
			os = os[:0]
			forEach(h, func(_, o int) { os = append(os, o) })
			forEach(wantF, func(i, o int) { // not through float64, which quiets NaNs
				switch d := h.S.(*Storage).data.(type) {
				case []backend.BF16:
					slice[float32](wantF.S)[o] = d[os[i]].Float32()
				case []backend.F16:
					slice[float32](wantF.S)[o] = d[os[i]].Float32()
				}
			})
			withThreads(threads, func() { Backend{}.Copy(f, h) })
			sameBits(fmt.Sprintf("copy %s ← %s", describeView(f), describeView(h)), f.S, wantF.S)
		case 1:
			ops := []backend.BinaryOp{backend.Add, backend.Sub, backend.Mul, backend.Div, backend.Eq, backend.Ne, backend.Lt, backend.Le, backend.Gt, backend.Ge}
			op := ops[r.IntN(len(ops))]
			a, b := randView(r, dt, shape, true), randView(r, dt, shape, true)
			if r.IntN(3) == 0 { // equal elements, for Eq, Le and Ge
				b = a
			}
			switch r.IntN(4) {
			case 0:
				b.Strides = make([]int, len(shape))
			case 1:
				a.Strides = make([]int, len(shape))
			}
			outDT := dt
			if op.IsComparison() {
				outDT = backend.Bool
			}
			dst := randView(r, outDT, shape, false)
			want := clone(dst)
			refBinary(op, want, a, b)
			withThreads(threads, func() { Backend{}.Binary(op, dst, a, b) })
			sameBits(fmt.Sprintf("%v %v: %s = %s, %s", op, dt, describeView(dst), describeView(a), describeView(b)), dst.S, want.S)
		case 2:
			a, dst := randView(r, dt, shape, true), randView(r, dt, shape, false)
			want := clone(dst)
			refUnary(backend.ReLU, want, a, 0, 0)
			withThreads(threads, func() { Backend{}.Unary(backend.ReLU, dst, a, backend.Params{}) })
			sameBits(fmt.Sprintf("relu %v: %s = %s", dt, describeView(dst), describeView(a)), dst.S, want.S)
		}
	}
}
