package ember

import (
	"sync"
	"testing"
)

// A retained non-leaf's Grad read on one goroutine while Backward passes
// on another add into it: no data race (run with -race), and the total is
// worked by hand: y = 2x, three passes of sum(y·3) give y.Grad = 9.
func TestRetainGradReadDuringBackward(t *testing.T) {
	x := Ones(Shape{4}).SetRequiresGrad(true)
	y := x.MulScalar(2).RetainGrad()
	loss := y.MulScalar(3).Sum()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = y.Grad()
			}
		}
	}()
	for i := 0; i < 3; i++ {
		loss.BackwardRetain()
	}
	close(stop)
	wg.Wait()
	for _, v := range y.Grad().Float32s() {
		if v != 9 {
			t.Fatalf("y.Grad = %v, want 9s", y.Grad().Float32s())
		}
	}
}
