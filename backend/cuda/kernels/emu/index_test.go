package emu

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
)

// indexOperand is an Int64 view of shape with values in [0, hi): contiguous,
// or (bcast) stride 0 in dim 0.
func indexOperand(t *testing.T, l *Lib, rng *rand.Rand, shape []int, hi int, k int) (*buf, backend.View, kernels.Operand) {
	n, st, off := layoutFor(k, shape)
	d := make([]int64, n)
	for i := range d {
		d[i] = int64(rng.Intn(hi))
	}
	b := newBuf(t, l, d)
	v, o := b.view(shape, st, off)
	return b, v, o
}

// permIndex is an Int64 contiguous view of shape whose lines along dim are
// permutations of [0, shape[dim]) (scatter without accumulation is then
// deterministic).
func permIndex(t *testing.T, l *Lib, rng *rand.Rand, shape []int, dim int) (*buf, backend.View, kernels.Operand) {
	n := numelOf(shape)
	st := backend.ContiguousStrides(shape)
	d := make([]int64, n)
	lines := n / shape[dim]
	for line := range lines {
		// the offset of this line's first element
		off, rem := 0, line
		for i := len(shape) - 1; i >= 0; i-- {
			if i == dim {
				continue
			}
			off += (rem % shape[i]) * st[i]
			rem /= shape[i]
		}
		for j, p := range rng.Perm(shape[dim]) {
			d[off+j*st[dim]] = int64(p)
		}
	}
	b := newBuf(t, l, d)
	v, o := b.view(shape, st, 0)
	return b, v, o
}

func TestGather(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(11))
	for _, dt := range dtypes {
		for dim := range 3 {
			for k := range 3 {
				src := []int{4, 5, 6}
				ish := []int{3, 4, 5}
				ish[dim] = 7 // gathering more than the source holds along dim
				d, dv, do := operand(t, l, rng, dt, ish, (k+1)%3, plain)
				_, sv, so := operand(t, l, rng, dt, src, k, general)
				sv.Shape, so.Shape = withDim(ish, dim, src[dim]), withDim(ish, dim, src[dim])
				_, iv, io := indexOperand(t, l, rng, ish, src[dim], []int{contig, bcast}[k%2])
				cpuB.Gather(dv, sv, iv, dim)
				launch(t, l, kernels.Gather(props, do, so, io, dim))
				same(t, fmt.Sprintf("gather %v dim %d %s", dt, dim, viewNames[k]), d.devData(), d.cpuData(), exact)
			}
		}
	}
}

func withDim(shape []int, dim, n int) []int {
	s := append([]int(nil), shape...)
	s[dim] = n
	return s
}

func TestScatter(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(12))
	for _, dt := range dtypes {
		for dim := range 3 {
			for k := range 3 {
				dsh := []int{4, 5, 6}
				ish := []int{3, 4, 5}
				ish[dim] = dsh[dim]
				// set: each line of the index a permutation
				d, dv, do := operand(t, l, rng, dt, dsh, k, plain)
				_, sv, so := operand(t, l, rng, dt, ish, (k+1)%3, general)
				_, iv, io := permIndex(t, l, rng, ish, dim)
				cpuB.Scatter(dv, iv, sv, dim, false)
				launch(t, l, kernels.Scatter(props, do, io, so, dim, false))
				same(t, fmt.Sprintf("scatter %v dim %d %s", dt, dim, viewNames[k]), d.devData(), d.cpuData(), exact)
				if dt == backend.Bool {
					continue
				}
				// add: repeated indices, a broadcast index
				ish[dim] = 9
				d, dv, do = operand(t, l, rng, dt, dsh, k, plain)
				_, sv, so = operand(t, l, rng, dt, ish, []int{contig, bcast, sliced}[k], plain)
				_, iv, io = indexOperand(t, l, rng, ish, dsh[dim], []int{contig, bcast}[k%2])
				cpuB.Scatter(dv, iv, sv, dim, true)
				launch(t, l, kernels.Scatter(props, do, io, so, dim, true))
				same(t, fmt.Sprintf("scatter_add %v dim %d %s", dt, dim, viewNames[k]), d.devData(), d.cpuData(), tolFor(dt, true))
			}
		}
	}
}

func TestScan(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(13))
	for _, dt := range kernels.ScanDTypes {
		for dim := range 3 {
			for _, prod := range []bool{false, true} {
				for _, rev := range []bool{false, true} {
					k := (dim + b2i(prod)) % 3
					sh := []int{3, 40, 5}
					kind := plain
					if prod {
						kind = nearOne
					}
					d, dv, do := operand(t, l, rng, dt, sh, (k+1)%3, plain)
					_, sv, so := operand(t, l, rng, dt, sh, k, kind)
					cpuB.Scan(dv, sv, dim, prod, rev)
					launch(t, l, kernels.Scan(props, do, so, dim, prod, rev))
					same(t, fmt.Sprintf("scan %v dim %d prod %v reverse %v %s", dt, dim, prod, rev, viewNames[k]), d.devData(), d.cpuData(), tolFor(dt, true))
				}
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSort(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(14))
	for _, dt := range dtypes {
		for _, sh := range [][]int{{1}, {7}, {300}, {3, 33}, {5, 4, 6}} {
			for dim := range sh {
				for _, desc := range []bool{false, true} {
					k := (dim + len(sh)) % 3
					kind := general
					if dt.IsInt() {
						kind = small // many ties: checks stability
					}
					v, vv, vo := operand(t, l, rng, dt, sh, (k+1)%3, plain)
					ix, iv, io := operand(t, l, rng, backend.Int64, sh, k, plain)
					_, sv, so := operand(t, l, rng, dt, sh, k, kind)
					cpuB.Sort(vv, iv, sv, dim, desc)
					launch(t, l, kernels.Sort(props, vo, io, so, dim, desc))
					name := fmt.Sprintf("sort %v %v dim %d desc %v %s", dt, sh, dim, desc, viewNames[k])
					same(t, name+" values", v.devData(), v.cpuData(), exact)
					same(t, name+" indices", ix.devData(), ix.cpuData(), exact)
				}
			}
		}
	}
}
