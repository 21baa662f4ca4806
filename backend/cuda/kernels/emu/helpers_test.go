package emu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/cuda/kernels"
	"github.com/emberml/ember/internal/testenv"
)

// props are small blocks so the emulation stays quick; props1024 is the
// real maximum.
var (
	props     = kernels.DeviceProps{SMCount: 2, MaxThreadsPerBlock: 128, WarpSize: 32, SharedMemPerBlock: 48 << 10}
	props1024 = kernels.DeviceProps{SMCount: 2, MaxThreadsPerBlock: 1024, WarpSize: 32, SharedMemPerBlock: 48 << 10}
)

var compared atomic.Int64 // emulated kernel cases compared with the CPU backend

func TestMain(m *testing.M) {
	rc := m.Run()
	if n := compared.Load(); n > 0 {
		fmt.Printf("emu: %d emulated kernel cases compared with backend/cpu\n", n)
	}
	os.Exit(rc)
}

func lib(t *testing.T) *Lib {
	t.Helper()
	l, err := Load()
	testenv.NeedLib(t, "g++", err)
	return l
}

var cpuB = cpu.Backend{}

// buf is one storage held twice: on the CPU backend and in emulated device memory.
type buf struct {
	l   *Lib
	dt  backend.DType
	n   int
	cpu backend.Storage
	dev uint64
}

func newBuf(t *testing.T, l *Lib, host any) *buf {
	t.Helper()
	s, err := cpuB.FromHost(backend.Device{}, host)
	if err != nil {
		t.Fatal(err)
	}
	b := &buf{l: l, dt: s.DType(), n: s.Len(), cpu: s}
	raw := encode(host)
	b.dev = l.Malloc(len(raw))
	l.CopyIn(b.dev, raw)
	t.Cleanup(func() { l.Free(b.dev) })
	return b
}

func (b *buf) view(shape, strides []int, off int) (backend.View, kernels.Operand) {
	return backend.View{S: b.cpu, Shape: shape, Strides: strides, Offset: off},
		kernels.Operand{Ptr: b.dev, DType: b.dt, Shape: shape, Strides: strides, Offset: off}
}

func (b *buf) devData() any {
	raw := make([]byte, b.n*b.dt.Size())
	b.l.CopyOut(raw, b.dev)
	return decode(b.dt, raw)
}

func (b *buf) cpuData() any { return b.cpu.(backend.HostStorage).Data() }

func encode(host any) []byte {
	var out []byte
	switch d := host.(type) {
	case []float32:
		for _, x := range d {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
	case []float64:
		for _, x := range d {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
		}
	case []int64:
		for _, x := range d {
			out = binary.LittleEndian.AppendUint64(out, uint64(x))
		}
	case []int32:
		for _, x := range d {
			out = binary.LittleEndian.AppendUint32(out, uint32(x))
		}
	case []bool:
		for _, x := range d {
			v := byte(0)
			if x {
				v = 1
			}
			out = append(out, v)
		}
	}
	return out
}

func decode(dt backend.DType, raw []byte) any {
	switch dt {
	case backend.Float32:
		d := make([]float32, len(raw)/4)
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return d
	case backend.Float64:
		d := make([]float64, len(raw)/8)
		for i := range d {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return d
	case backend.Int64:
		d := make([]int64, len(raw)/8)
		for i := range d {
			d[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return d
	case backend.Int32:
		d := make([]int32, len(raw)/4)
		for i := range d {
			d[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return d
	case backend.Bool:
		d := make([]bool, len(raw))
		for i := range d {
			d[i] = raw[i] != 0
		}
		return d
	}
	return nil
}

// data kinds
const (
	general  = iota // floats with specials (0, -0, ±Inf, NaN, halves); ints in [-20, 20]
	plain           // floats in [-3, 3] without specials; ints in [-20, 20]
	positive        // (0.1, 4)
	small           // ints in [-4, 4], floats in [-2, 2]
	nearOne         // [0.7, 1.3]; ints in {-1, 1, 1, 1}
)

var specials = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 0.5, 1.5, 2.5, -2.5, 1, -1}

func hostData(rng *rand.Rand, dt backend.DType, n, kind int) any {
	f := func() float64 {
		switch kind {
		case positive:
			return 0.1 + 3.9*rng.Float64()
		case small:
			return 4*rng.Float64() - 2
		case nearOne:
			return 0.7 + 0.6*rng.Float64()
		case general:
			if rng.Intn(8) == 0 {
				return specials[rng.Intn(len(specials))]
			}
		}
		return 6*rng.Float64() - 3
	}
	iv := func() int64 {
		switch kind {
		case small:
			return int64(rng.Intn(9) - 4)
		case positive:
			return int64(rng.Intn(20) + 1)
		case nearOne:
			return []int64{-1, 1, 1, 1}[rng.Intn(4)]
		}
		return int64(rng.Intn(41) - 20)
	}
	switch dt {
	case backend.Float32:
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(f())
		}
		return d
	case backend.Float64:
		d := make([]float64, n)
		for i := range d {
			d[i] = f()
		}
		return d
	case backend.Int64:
		d := make([]int64, n)
		for i := range d {
			d[i] = iv()
		}
		return d
	case backend.Int32:
		d := make([]int32, n)
		for i := range d {
			d[i] = int32(iv())
		}
		return d
	case backend.Bool:
		d := make([]bool, n)
		p := rng.Intn(3) // mostly false, mixed, mostly true
		for i := range d {
			d[i] = rng.Intn(16) < []int{1, 8, 15}[p]
		}
		if kind == nearOne { // all true
			for i := range d {
				d[i] = true
			}
		}
		return d
	}
	return nil
}

// view kinds
const (
	contig = iota
	transposed
	sliced
	bcast // inputs only: dim 0 (or the only dim) has stride 0
	numViewKinds
)

var viewNames = []string{"contig", "transposed", "sliced", "bcast"}

// layoutFor returns the storage length, strides and offset of a view of
// kind k with the given shape.
func layoutFor(k int, shape []int) (n int, strides []int, off int) {
	nd := len(shape)
	switch k {
	case transposed:
		rev := make([]int, nd)
		for i := range shape {
			rev[i] = shape[nd-1-i]
		}
		rs := backend.ContiguousStrides(rev)
		strides = make([]int, nd)
		for i := range shape {
			strides[i] = rs[nd-1-i]
		}
		return numelOf(shape), strides, 0
	case sliced:
		big := append([]int(nil), shape...)
		big[nd-1] = 2*shape[nd-1] + 1
		strides = backend.ContiguousStrides(big)
		strides[nd-1] = 2
		return numelOf(big) + 3, strides, 3
	case bcast:
		sub := append([]int(nil), shape...)
		sub[0] = 1
		strides = backend.ContiguousStrides(sub)
		strides[0] = 0
		return numelOf(sub), strides, 0
	}
	return numelOf(shape), backend.ContiguousStrides(shape), 0
}

func numelOf(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// operand makes a fresh random storage and a view of kind k on it.
func operand(t *testing.T, l *Lib, rng *rand.Rand, dt backend.DType, shape []int, k, kind int) (*buf, backend.View, kernels.Operand) {
	n, st, off := layoutFor(k, shape)
	b := newBuf(t, l, hostData(rng, dt, n, kind))
	v, o := b.view(shape, st, off)
	return b, v, o
}

type tol struct{ rel, abs float64 }

var exact = tol{}

func tolFor(dt backend.DType, loose bool) tol {
	switch {
	case dt == backend.Float32 && loose:
		return tol{3e-6, 1e-6}
	case dt == backend.Float64 && loose:
		return tol{1e-13, 1e-14}
	}
	return exact
}

// same compares whole storages (so writes outside the view show too).
func same(t *testing.T, name string, got, want any, tl tol) {
	t.Helper()
	compared.Add(1)
	bad := 0
	report := func(i int, g, w any) {
		if bad < 5 {
			t.Errorf("%s: element %d = %v, want %v", name, i, g, w)
		}
		bad++
	}
	fl := func(i int, g, w float64) {
		if g == w || (g != g && w != w) {
			return
		}
		if math.IsInf(w, 0) || math.IsInf(g, 0) || g != g || w != w || math.Abs(g-w) > tl.abs+tl.rel*math.Abs(w) {
			report(i, g, w)
		}
	}
	switch w := want.(type) {
	case []float32:
		g := got.([]float32)
		for i := range w {
			fl(i, float64(g[i]), float64(w[i]))
		}
	case []float64:
		g := got.([]float64)
		for i := range w {
			fl(i, g[i], w[i])
		}
	case []int64:
		g := got.([]int64)
		for i := range w {
			if g[i] != w[i] {
				report(i, g[i], w[i])
			}
		}
	case []int32:
		g := got.([]int32)
		for i := range w {
			if g[i] != w[i] {
				report(i, g[i], w[i])
			}
		}
	case []bool:
		g := got.([]bool)
		for i := range w {
			if g[i] != w[i] {
				report(i, g[i], w[i])
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements differ", name, bad)
	}
}

func launch(t *testing.T, l *Lib, ls []kernels.Launch) {
	t.Helper()
	if err := l.RunAll(ls); err != nil {
		t.Fatal(err)
	}
}
