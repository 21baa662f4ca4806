package ember

import (
	"sync"
	"testing"
)

// TestInPlaceViewConcurrentRefresh: goroutines using one view whose base
// was written in place regenerate its history once, without a data race
// (go test -race), and each output's pass sends PyTorch's gradient:
// y = 2x, v = y[0], y += 1, v·3 summed: dx = 3·2 on row 0, four passes 24.
func TestInPlaceViewConcurrentRefresh(t *testing.T) {
	for _, dev := range testDevices() {
		for round := 0; round < 20; round++ {
			x := Ones(Shape{2, 3}, On(dev), Dtype(Float64)).SetRequiresGrad(true)
			y := x.MulScalar(2)
			v := y.Select(0, 0)
			y.AddScalarInPlace(1)
			var wg sync.WaitGroup
			outs := make([]*Tensor, 4)
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = v.RequiresGrad()
					_ = v.GradFn()
					outs[i] = v.MulScalar(3).Sum()
				}()
			}
			wg.Wait()
			for _, o := range outs { // (concurrent passes into one leaf are another matter)
				o.BackwardWithRetain(nil) // the passes share y's history
			}
			if got := x.Grad().Float64s(); got[0] != 24 || got[2] != 24 || got[3] != 0 {
				t.Fatalf("%v: dx %v, want [24 24 24 0 0 0]", dev, got)
			}
		}
	}
}
