package ember

import (
	"math"
	"sync"
	"testing"
)

// TestConcurrentGradWhileTraining: Grad with CreateGraph (a second
// derivative) on one goroutine while another trains (Backward, an SGD
// step under NoGrad) with a shared leaf: Grad's results are the
// hand-worked ones every time (d/dx Σtanh(xw) = w(1 − t²), its own
// derivative −2w²t(1 − t²)), the trainer's NoGrad does not reach Grad's
// EnableGrad nor the reverse, and Grad adds nothing to the shared leaf's
// Grad. Run with -race.
func TestConcurrentGradWhileTraining(t *testing.T) {
	const steps = 40
	xs, ws := []float64{0.5, -1, 2}, []float64{1.5, -0.5, 0.25}
	w := FromSlice(ws, nil).SetRequiresGrad(true) // shared, read by both
	v := FromSlice([]float64{1, 2, 3}, nil).SetRequiresGrad(true)
	var wg sync.WaitGroup
	errs := make(chan string, 2*steps)
	wg.Add(2)
	go func() { // differentiates twice
		defer wg.Done()
		for range steps {
			x := FromSlice(xs, nil).SetRequiresGrad(true)
			gx := Grad([]*Tensor{x.Mul(w).Tanh().Sum()}, []*Tensor{x}, CreateGraph(true))[0]
			hx := Grad([]*Tensor{gx.Sum()}, []*Tensor{x})[0]
			g1, g2 := gx.Float64s(), hx.Float64s()
			for i := range xs {
				th := math.Tanh(xs[i] * ws[i])
				if math.Abs(g1[i]-ws[i]*(1-th*th)) > 1e-12 || math.Abs(g2[i]+2*ws[i]*ws[i]*th*(1-th*th)) > 1e-12 {
					errs <- "grad: wrong values"
				}
			}
			if x.Grad() != nil {
				errs <- "grad: accumulated into x"
			}
		}
	}()
	go func() { // trains v, reading w
		defer wg.Done()
		for range steps {
			v.Mul(w).Sum().Backward()
			NoGrad(func() { v.SubInPlace(v.Grad().MulScalar(0.1)) })
			v.SetGrad(nil)
		}
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// the trainer's passes alone reach w.Grad: Σ_k v_k, v_k = v₀ − 0.1·k·w
	got := w.Grad().Float64s()
	for i, v0 := range []float64{1, 2, 3} {
		want := steps*v0 - 0.1*ws[i]*steps*(steps-1)/2
		if math.Abs(got[i]-want) > 1e-9 {
			t.Fatalf("w.Grad %v, want %v at %d", got, want, i)
		}
	}
}
