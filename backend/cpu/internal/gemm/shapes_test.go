package gemm

import (
	"strings"
	"testing"
	"unsafe"
)

// The kernel sets the tests run besides the ones this CPU offers:
// "avx512-go" has exactly the AVX-512 set's register blocks, cache
// blocking and dot-product tile, and runs Go code (a micro-kernel for any
// mr×nr, goDot for any tile, Go packing). The layout logic of the GEMM,
// the convolutions, Winograd and the dot products is so proven for the
// AVX-512 shapes on any machine; only the assembly itself needs AVX-512
// hardware (archTestSets adds it there).
func testSets() []*kernelSet {
	sets := append([]*kernelSet(nil), kernels...)
	sets = append(sets, archTestSets()...)
	twin := &kernelSet{
		name: "avx512-go",
		s:    newKernel("avx512-go", avx512S, goKernel[float32](avx512S.mr, avx512S.nr), goDot[float32](avx512S.dmr, avx512S.dnr, avx512S.dvw), false),
		d:    newKernel("avx512-go", avx512D, goKernel[float64](avx512D.mr, avx512D.nr), goDot[float64](avx512D.dmr, avx512D.dnr, avx512D.dvw), false),
	}
	// the float32 edge kernels, as the assembly set has them
	twin.s.edge = make([]kernelFunc[float32], avx512S.mr)
	for r := 1; r < avx512S.mr; r++ {
		twin.s.edge[r] = goEdge[float32](r, avx512S.mr, avx512S.nr)
	}
	twin.b = bfGoKernel("avx512-go")
	return append(sets, twin)
}

// goEdge is goKernel's edge kernel: the first rows rows of an mr×nr tile
// whose A panel holds mr values per step.
func goEdge[T float](rows, mr, nr int) kernelFunc[T] {
	return func(kc int, a, b, c *T, ldc int, accum int) {
		as := unsafe.Slice(a, mr*kc)
		bs := unsafe.Slice(b, nr*kc)
		var acc [512]T
		for p := 0; p < kc; p++ {
			bp := bs[p*nr : p*nr+nr]
			for i, av := range as[p*mr : p*mr+rows] {
				row := acc[i*nr : i*nr+nr]
				for j, bv := range bp {
					row[j] += av * bv
				}
			}
		}
		esz := int(unsafe.Sizeof(*c))
		for i := 0; i < rows; i++ {
			dst := unsafe.Slice((*T)(unsafe.Add(unsafe.Pointer(c), i*ldc*esz)), nr)
			src := acc[i*nr : i*nr+nr]
			if accum == 0 {
				copy(dst, src)
				continue
			}
			for j, v := range src {
				dst[j] += v
			}
		}
	}
}

// TestKernelSets names the kernel sets the tests run on this CPU, in a
// line that scripts/gpu-check.sh shows in its summary.
func TestKernelSets(t *testing.T) {
	var names []string
	for _, ks := range testSets() {
		names = append(names, ks.name)
	}
	t.Logf("summary: kernel sets %s; %s", strings.Join(names, ", "), archNote())
}

// forEachKernel runs f with each of testSets in use.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	for _, ks := range testSets() {
		t.Run(ks.name, func(t *testing.T) {
			old := current.Load()
			current.Store(ks)
			defer current.Store(old)
			f(t)
		})
	}
}

// goKernel returns a pure-Go micro-kernel (see kernelFunc) for mr×nr tiles,
// mr·nr ≤ 512.
func goKernel[T float](mr, nr int) kernelFunc[T] {
	if mr*nr > 512 {
		panic("goKernel: tile too large")
	}
	return func(kc int, a, b, c *T, ldc int, accum int) { goTile(mr, nr, kc, a, b, c, ldc, accum) }
}

// goTile is goKernel's kernel. Like the assembly ones it is not
// instrumented by the race detector (which would make it the slowest part
// of the tests, and the races that matter are between the driver's
// goroutines, in its packing and bookkeeping).
//
//go:norace
func goTile[T float](mr, nr, kc int, a, b, c *T, ldc int, accum int) {
	as := unsafe.Slice(a, mr*kc)
	bs := unsafe.Slice(b, nr*kc)
	var acc [512]T
	for p := 0; p < kc; p++ {
		bp := bs[p*nr : p*nr+nr]
		for i, av := range as[p*mr : p*mr+mr] {
			row := acc[i*nr : i*nr+nr]
			for j, bv := range bp {
				row[j] += av * bv
			}
		}
	}
	esz := int(unsafe.Sizeof(*c))
	for i := 0; i < mr; i++ {
		dst := unsafe.Slice((*T)(unsafe.Add(unsafe.Pointer(c), i*ldc*esz)), nr)
		src := acc[i*nr : i*nr+nr]
		if accum == 0 {
			copy(dst, src)
			continue
		}
		for j, v := range src {
			dst[j] += v
		}
	}
}
