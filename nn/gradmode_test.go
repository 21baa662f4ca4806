package nn_test

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// The user's program of issue 18: one goroutine evaluates under NoGrad in a
// loop while the main goroutine trains. Grad mode is per goroutine, so no
// training step may fail or lose a gradient.
func TestNoGradOtherGoroutineDoesNotStopTraining(t *testing.T) {
	ember.ManualSeed(1)
	m := nn.NewSequential(nn.NewLinear(8, 16, true), nn.NewReLU(), nn.NewLinear(16, 4, true))
	evalm := nn.NewSequential(nn.NewLinear(8, 16, true), nn.NewReLU(), nn.NewLinear(16, 4, true))
	opt := optim.NewSGD(optim.ModuleParams(m), nil, 0.01, 0, 0, 0, false)
	x := ember.Randn(ember.Shape{32, 8})
	var stop atomic.Bool
	var evals atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			ember.NoGrad(func() {
				evalm.Forward(x).Sum().Item()
				if ember.IsGradEnabled() {
					panic("grad enabled inside NoGrad")
				}
			})
			evals.Add(1)
		}
	}()
	failures, silent := 0, 0
	for range 300 {
		opt.ZeroGrad()
		err := ember.Try(func() { m.Forward(x).Square().Mean().Backward() })
		if err != nil {
			failures++
			continue
		}
		for _, p := range m.Parameters() {
			if p.Grad() == nil {
				silent++
				break
			}
		}
		opt.Step()
	}
	stop.Store(true)
	wg.Wait()
	if failures != 0 || silent != 0 {
		t.Fatalf("%d of 300 steps failed and %d lost a gradient while another goroutine evaluated under NoGrad", failures, silent)
	}
	if evals.Load() == 0 {
		t.Fatal("the evaluating goroutine never ran")
	}
}

// DataParallel runs its replicas with the caller's grad mode.
func TestDataParallelNoGradReplicas(t *testing.T) {
	ember.ManualSeed(2)
	m := nn.NewLinear(4, 2, true)
	dp := nn.NewDataParallel(m, ember.CPU, ember.CPU)
	x := ember.Randn(ember.Shape{6, 4})
	var out *ember.Tensor
	ember.NoGrad(func() { out = dp.Forward(x) })
	if out.RequiresGrad() {
		t.Fatal("DataParallel.Forward inside NoGrad recorded a graph")
	}
	if !dp.Forward(x).RequiresGrad() {
		t.Fatal("DataParallel.Forward outside NoGrad recorded no graph")
	}
}

// TestDataParallelAutocastReplicas: autocast, per goroutine like grad mode,
// reaches every replica (torch's parallel_apply passes it on), and so does
// its disabled form.
func TestDataParallelAutocastReplicas(t *testing.T) {
	ember.ManualSeed(3)
	m := nn.NewLinear(4, 2, true)
	dp := nn.NewDataParallel(m, ember.CPU, ember.CPU)
	x := ember.Randn(ember.Shape{6, 4})
	var out, want *ember.Tensor
	ember.Autocast(ember.CPU, ember.BFloat16, func() {
		out = dp.Forward(x)
		want = m.Forward(x)
	})
	if out.DType() != ember.BFloat16 || want.DType() != ember.BFloat16 {
		t.Fatalf("under Autocast(bfloat16): DataParallel gave %v, the module %v; want bfloat16", out.DType(), want.DType())
	}
	if !slices.Equal(out.Float32s(), want.Float32s()) {
		t.Errorf("DataParallel under autocast\n%v\nwant the module's rows\n%v", out, want)
	}
	ember.Autocast(ember.CPU, ember.BFloat16, func() {
		ember.AutocastDisabled(func() { out = dp.Forward(x) })
	})
	if out.DType() != ember.Float32 {
		t.Errorf("under AutocastDisabled: %v, want float32", out.DType())
	}
}
