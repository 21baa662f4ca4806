package ember

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestGradReleasesIntermediateGrads: Grad without CreateGraph frees the
// gradients it passes between nodes as Backward does (left to the
// garbage collector, which does not see a device's memory, they made a
// loop of Grad calls grow); what it returns stays valid.
func TestGradReleasesIntermediateGrads(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the collector would hide it
	const n = 1 << 16                                // 256 KiB a tensor: above the CPU cache's minimum
	x := Rand(Shape{n}, WithGrad())
	h := x
	var mid *Tensor
	for i := range 6 {
		h = h.MulScalar(1.5).AddScalar(0.25).Sin()
		if i == 2 {
			mid = h
		}
	}
	loss := h.Sum().Add(h.Sum())
	before := MemoryAllocated(CPU)
	gs := Grad([]*Tensor{loss}, []*Tensor{x, mid, x})
	grew := MemoryAllocated(CPU) - before
	// the two gradients (512 KiB) and nothing else (but scalars)
	if grew > 2*n*4+2048 {
		t.Fatalf("Grad left %d bytes allocated, want about %d (its results)", grew, 2*n*4)
	}
	// the values: d/dx and d/dmid of 2·Σ of the chain, worked with float64
	xs, gx, gm, gx2 := x.Float32s(), gs[0].Float32s(), gs[1].Float32s(), gs[2].Float32s()
	for i := 0; i < n; i += 4099 {
		v, d, dm := float64(xs[i]), 2.0, 2.0
		for k := range 6 {
			u := v*1.5 + 0.25
			d *= 1.5 * math.Cos(u)
			if k > 2 {
				dm *= 1.5 * math.Cos(u)
			}
			v = math.Sin(u)
		}
		if math.Abs(float64(gx[i])-d) > 1e-4 || math.Abs(float64(gm[i])-dm) > 1e-4 || gx2[i] != gx[i] {
			t.Fatalf("grad[%d] = %v, %v, want %v, %v", i, gx[i], gm[i], d, dm)
		}
	}
	if x.Grad() != nil {
		t.Fatal("Grad accumulated into x")
	}
}
