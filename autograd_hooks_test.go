package ember

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
)

func f64(t *Tensor) []float64 { return t.Float64s() }

// TestPostAccumulateGradHook: y = Σ w·x + Σ w·w with w = [1 2 3], x = [4 5 6]
// reaches w by two paths; dy/dw = x + 2w = [6 9 12]. The hook must run once,
// after both contributions and the grad already there ([1 1 1]) are summed.
func TestPostAccumulateGradHook(t *testing.T) {
	w := FromSlice([]float64{1, 2, 3}, nil).SetRequiresGrad(true)
	x := FromSlice([]float64{4, 5, 6}, nil)
	w.SetGrad(Ones(Shape{3}, Dtype(Float64)))
	var seen [][]float64
	remove := w.RegisterPostAccumulateGradHook(func(p *Tensor) {
		if p != w {
			t.Errorf("hook got %p, want the leaf %p", p, w)
		}
		seen = append(seen, f64(p.Grad()))
	})
	w.Mul(x).Sum().Add(w.Mul(w).Sum()).Backward()
	if len(seen) != 1 || !slices.Equal(seen[0], []float64{7, 10, 13}) {
		t.Fatalf("hook saw %v, want one call with [7 10 13]", seen)
	}
	// a hook may replace the gradient: halve it
	remove()
	w.RegisterPostAccumulateGradHook(func(p *Tensor) { p.SetGrad(p.Grad().MulScalar(0.5)) })
	w.ZeroGrad()
	w.Mul(x).Sum().Backward()
	if got := f64(w.Grad()); !slices.Equal(got, []float64{2, 2.5, 3}) {
		t.Fatalf("grad after a halving hook %v, want [2 2.5 3]", got)
	}
	if len(seen) != 1 {
		t.Fatalf("a removed hook ran: %v", seen)
	}
	// backward from the leaf itself
	w.ZeroGrad()
	w.BackwardWith(FromSlice([]float64{2, 4, 6}, nil))
	if got := f64(w.Grad()); !slices.Equal(got, []float64{1, 2, 3}) {
		t.Fatalf("leaf backward with a halving hook: %v, want [1 2 3]", got)
	}
}

// TestHookOrderAndCallback: out = (x·w1)·w2 with x = 2, w1 = 3, w2 = 5.
// d out/d w2 = x·w1 = 6 is ready before the engine reaches w1
// (d out/d w1 = x·w2 = 10): w2's hook runs while w1 has no gradient yet,
// which is what lets DDP overlap communication with backward. The callback
// queued from a hook runs after every hook and before Backward returns;
// a leaf the pass does not reach (unused) gets no hook call.
func TestHookOrderAndCallback(t *testing.T) {
	x := Scalar(2, Dtype(Float64))
	w1 := Scalar(3, Dtype(Float64)).SetRequiresGrad(true)
	w2 := Scalar(5, Dtype(Float64)).SetRequiresGrad(true)
	unused := Scalar(7, Dtype(Float64)).SetRequiresGrad(true)
	var log []string
	w2.RegisterPostAccumulateGradHook(func(p *Tensor) {
		log = append(log, "w2")
		if p.Grad().Item() != 6 {
			t.Errorf("w2 grad %v, want 6", p.Grad().Item())
		}
		if w1.Grad() != nil {
			t.Errorf("w1 already has a gradient when w2's hook runs")
		}
		QueueCallback(func() {
			log = append(log, "callback")
			if w1.Grad() == nil || w1.Grad().Item() != 10 {
				t.Errorf("callback ran before w1's gradient (10) was accumulated")
			}
		})
	})
	w1.RegisterPostAccumulateGradHook(func(*Tensor) { log = append(log, "w1") })
	unused.RegisterPostAccumulateGradHook(func(*Tensor) { log = append(log, "unused") })
	x.Mul(w1).Mul(w2).Backward()
	if !slices.Equal(log, []string{"w2", "w1", "callback"}) {
		t.Fatalf("order %v, want [w2 w1 callback]", log)
	}
}

func TestHookMisuse(t *testing.T) {
	a := Scalar(1).SetRequiresGrad(true)
	b := a.MulScalar(2)
	var ae *AutogradError
	for name, f := range map[string]func(){
		"non-leaf":            func() { b.RegisterPostAccumulateGradHook(func(*Tensor) {}) },
		"no grad":             func() { Scalar(1).RegisterPostAccumulateGradHook(func(*Tensor) {}) },
		"callback off a hook": func() { QueueCallback(func() {}) },
	} {
		if err := Try(f); !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an *AutogradError", name, err)
		}
	}
}

// TestHooksConcurrentPasses runs backward passes in several goroutines at
// once, each queuing a callback from its hook: every callback must run in
// its own pass, once (run with -race).
func TestHooksConcurrentPasses(t *testing.T) {
	const n = 4
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for step := range 20 {
				w := FromSlice([]float64{float64(i), 1}, nil).SetRequiresGrad(true)
				calls := 0
				w.RegisterPostAccumulateGradHook(func(p *Tensor) {
					QueueCallback(func() { calls++ })
				})
				w.Mul(w).Sum().Backward() // grad 2w
				if g := f64(w.Grad()); calls != 1 || g[0] != float64(2*i) || g[1] != 2 {
					t.Errorf("goroutine %d step %d: %d callbacks, grad %v", i, step, calls, g)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestHookReentrantBackward: a hook may run a Backward of its own that
// reaches a leaf with a hook (PyTorch's reentrant backward); it used to
// wait forever for the hook lock its own goroutine held. x = [1], each
// pass adds d(e^x)/dx = e to x.grad and runs the hook, which starts
// another pass twice: three passes, grad 3e; a callback queued by the
// inner hook runs at the end of the inner pass.
func TestHookReentrantBackward(t *testing.T) {
	x := FromSlice([]float32{1}, Shape{1}, WithGrad())
	calls, inner := 0, 0
	x.RegisterPostAccumulateGradHook(func(l *Tensor) {
		calls++
		if calls == 2 {
			QueueCallback(func() { inner = calls })
		}
		if calls < 3 {
			l.Exp().Sum().Backward()
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		x.Exp().Sum().Backward()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a Backward inside a hook deadlocked")
	}
	if g := x.Grad().Item(); calls != 3 || inner != 3 || math.Abs(g-3*math.E) > 1e-5 {
		t.Errorf("calls %d, inner callback saw %d, grad %v; want 3, 3, 3e = %v", calls, inner, g, 3*math.E)
	}
}
