package nn_test

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/vision/models"
)

var cpu3 = []ember.Device{ember.CPU, ember.CPU, ember.CPU}

// twin returns a module built by mk with m's state.
func twin(t *testing.T, m nn.Module, mk func() nn.Module) nn.Module {
	t.Helper()
	c := mk()
	sd := map[string]*ember.Tensor{}
	for k, v := range m.StateDict() {
		sd[k] = v.Detach().Clone()
	}
	if err := c.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	c.Train(m.Training())
	return c
}

// lossOf is a loss that weighs every output element differently, so a
// gradient that lands on the wrong rows would show.
func lossOf(y *ember.Tensor) *ember.Tensor {
	w := ember.Arange(0, float64(y.NumElements()), 1, ember.On(y.Device()), ember.Dtype(y.DType())).Reshape(y.Shape()...).MulScalar(0.01).AddScalar(1)
	return y.Square().Mul(w).Sum()
}

// checkDP runs dp on x and ref on x (ref: the unwrapped twin, or a
// function of it) and compares outputs and parameter gradients.
func checkDP(t *testing.T, name string, dp *nn.DataParallel, x *ember.Tensor, ref func() *ember.Tensor, refParams []*ember.Tensor) {
	t.Helper()
	zeroGrads(dp)
	for _, p := range refParams {
		p.ZeroGrad()
	}
	y := dp.Forward(x)
	want := ref()
	if !y.Shape().Equal(want.Shape()) || !ember.AllClose(y.CPU(), want.CPU(), 1e-5, 1e-6) {
		t.Fatalf("%s: output %v, want %v", name, y, want)
	}
	lossOf(y).Backward()
	lossOf(want).Backward()
	for i, p := range dp.Parameters() {
		if p.Grad() == nil || !ember.AllClose(p.Grad().CPU(), refParams[i].Grad().CPU(), 1e-4, 1e-5) {
			t.Fatalf("%s: gradient of %s %v, want %v", name, dp.NamedParameters()[i].Name, p.Grad(), refParams[i].Grad())
		}
	}
}

// TestDataParallelMatchesModule: on [cpu, cpu, cpu], outputs and gradients
// equal the unwrapped module's on the whole batch, for batches split
// evenly (9 → 3+3+3), unevenly as torch.chunk (10 → 4+4+2, 7 → 3+3+1),
// into fewer pieces than devices (2 → 1+1, 4 → 2+2) and not at all (1).
func TestDataParallelMatchesModule(t *testing.T) {
	ember.ManualSeed(2)
	mlp := func() nn.Module {
		return nn.NewSequential(nn.NewLinear(5, 7, true), nn.NewReLU(), nn.NewLinear(7, 3, true))
	}
	m := mlp()
	ref := twin(t, m, mlp)
	dp := nn.NewDataParallel(m, cpu3...)
	for _, n := range []int{9, 10, 7, 2, 4, 1} {
		x := randn(n, 5)
		checkDP(t, "mlp", dp, x, func() *ember.Tensor { return ref.Forward(x) }, ref.Parameters())
	}

	// eval mode: BatchNorm uses its running statistics, so a split batch
	// gives the whole batch's result
	bnnet := func() nn.Module {
		return nn.NewSequential(nn.NewLinear(4, 6, true), nn.NewBatchNorm1d(6), nn.NewReLU(), nn.NewLinear(6, 2, true))
	}
	b := withBuffers(bnnet())
	b.Eval()
	bref := twin(t, b, bnnet)
	for _, n := range []int{8, 2} {
		x := randn(n, 4)
		checkDP(t, "bn eval", nn.NewDataParallel(b, cpu3...), x, func() *ember.Tensor { return bref.Forward(x) }, bref.Parameters())
	}

	cnn := func() nn.Module { return models.SimpleCNN(1, 10) }
	c := withBuffers(cnn())
	c.Eval()
	cref := twin(t, c, cnn)
	x := randn(5, 1, 28, 28)
	checkDP(t, "SimpleCNN eval", nn.NewDataParallel(c, cpu3...), x, func() *ember.Tensor { return cref.Forward(x) }, cref.Parameters())
}

// TestDataParallelTrainingBatchNorm: in training mode each replica
// normalises its own piece of the batch (as PyTorch's DataParallel), so the
// output is the concatenation of the module applied to each piece, and
// gradients are those of that concatenation.
func TestDataParallelTrainingBatchNorm(t *testing.T) {
	ember.ManualSeed(3)
	cnn := func() nn.Module { return models.SimpleCNN(1, 10) }
	c := cnn()
	cref := twin(t, c, cnn)
	x := randn(5, 1, 28, 28) // 2 + 2 + 1
	perPiece := func() *ember.Tensor {
		var outs []*ember.Tensor
		for _, piece := range x.Chunk(3, 0) {
			outs = append(outs, cref.Forward(piece))
		}
		return ember.Cat(outs, 0)
	}
	checkDP(t, "SimpleCNN train", nn.NewDataParallel(c, cpu3...), x, perPiece, cref.Parameters())
}

// TestDataParallelRunningStats works BatchNorm1d's statistics by hand. The
// batch [[1 2] [3 6] [0 0] [2 2] [5 1] [7 3]] goes to three replicas, two
// rows each. Every piece of two rows normalises to ∓1/√(1+eps/σ²) (σ² the
// piece's biased variance). Only the first replica's statistics are kept:
// rows [1 2] and [3 6] have mean [2 4] and unbiased variance [2 8], so with
// momentum 0.1 running_mean = [0.2 0.4], running_var = 0.9 + 0.1·[2 8] =
// [1.1 1.7], and num_batches_tracked = 1.
func TestDataParallelRunningStats(t *testing.T) {
	bn := nn.NewBatchNorm1d(2)
	dp := nn.NewDataParallel(bn, cpu3...)
	x := ember.FromSlice([]float32{1, 2, 3, 6, 0, 0, 2, 2, 5, 1, 7, 3}, ember.Shape{6, 2})
	y := dp.Forward(x).Float64s()
	// biased variances per piece and channel
	vars := [3][2]float64{{1, 4}, {1, 1}, {1, 1}}
	for p := range 3 {
		for ch := range 2 {
			s := 1 / math.Sqrt(1+1e-5/vars[p][ch])
			lo, hi := y[4*p+ch], y[4*p+2+ch]
			xlo, xhi := x.Float64s()[4*p+ch], x.Float64s()[4*p+2+ch]
			if xlo > xhi {
				lo, hi = hi, lo
			}
			if math.Abs(lo+s) > 1e-6 || math.Abs(hi-s) > 1e-6 {
				t.Errorf("piece %d channel %d: outputs %v %v, want ∓%v", p, ch, lo, hi, s)
			}
		}
	}
	near := func(name string, got []float64, want ...float64) {
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6 {
				t.Errorf("%s = %v, want %v", name, got, want)
				return
			}
		}
	}
	near("running_mean", bn.RunningMean.Float64s(), 0.2, 0.4)
	near("running_var", bn.RunningVar.Float64s(), 1.1, 1.7)
	near("num_batches_tracked", bn.NumBatchesTracked.Float64s(), 1)
}

func TestDataParallelStateDict(t *testing.T) {
	m := nn.NewSequential(nn.NewLinear(2, 3, true), nn.NewBatchNorm1d(3))
	dp := nn.NewDataParallel(m, ember.CPU, ember.CPU)
	if len(dp.StateDict()) != 7 || dp.StateDict()["0.weight"] != m.At(0).(*nn.Linear).Weight {
		t.Fatalf("state dict keys %v, want the wrapped module's", names(dp.NamedParameters()))
	}
	if dp.Module() != nn.Module(m) || len(dp.Devices()) != 2 {
		t.Fatal("Module/Devices")
	}
	// a checkpoint of torch's DataParallel: every key prefixed
	sd := map[string]*ember.Tensor{}
	for k, v := range m.StateDict() {
		sd["module."+k] = ember.OnesLike(v)
	}
	if err := dp.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	if m.At(0).(*nn.Linear).Bias.Float64s()[2] != 1 {
		t.Fatal("prefixed keys not loaded")
	}
	plain := map[string]*ember.Tensor{}
	for k, v := range m.StateDict() {
		plain[k] = ember.ZerosLike(v)
	}
	if err := dp.LoadStateDict(plain, true); err != nil || m.At(0).(*nn.Linear).Bias.Float64s()[2] != 0 {
		t.Fatalf("plain keys: %v", err)
	}
	plain["module.0.bias"] = ember.Zeros(ember.Shape{3})
	if err := dp.LoadStateDict(plain, true); err == nil {
		t.Fatal("a key given with and without the prefix was accepted")
	}
	// inside another module: no "module." level
	outer := nn.NewSequential(dp)
	if _, ok := outer.StateDict()["0.0.weight"]; !ok {
		t.Fatalf("outer keys %v", names(outer.NamedParameters()))
	}
}

// Under NoGrad the replicas share the parameters (no copies) and the output
// records no graph.
func TestDataParallelNoGrad(t *testing.T) {
	m := nn.NewLinear(3, 2, true)
	dp := nn.NewDataParallel(m, cpu3...)
	x := randn(6, 3)
	var y *ember.Tensor
	ember.NoGrad(func() { y = dp.Forward(x) })
	if y.RequiresGrad() || !ember.AllClose(y, m.Forward(x), 1e-6, 1e-6) {
		t.Fatal("NoGrad forward")
	}
}

// A panic in a replica reaches the caller with its type (wrapped with the
// replica); a module off devices[0] is refused.
func TestDataParallelErrors(t *testing.T) {
	dp := nn.NewDataParallel(nn.NewLinear(3, 2, true), cpu3...)
	err := ember.Try(func() { dp.Forward(randn(6, 4)) })
	var se *ember.ShapeError
	if !errors.As(err, &se) {
		t.Fatalf("wrong input width: %v, want a *ShapeError", err)
	}
	meta := nn.NewDataParallel(nn.NewLinear(3, 2, true), ember.Meta, ember.CPU)
	var de *ember.DeviceMismatchError
	if err := ember.Try(func() { meta.Forward(randn(6, 3)) }); !errors.As(err, &de) {
		t.Fatalf("module off devices[0]: %v, want a *DeviceMismatchError", err)
	}
}

// TestDataParallelGPUs runs over every GPU present (at least two).
func TestDataParallelGPUs(t *testing.T) {
	n := ember.DeviceCount()
	if n < 2 {
		t.Skipf("needs 2 GPUs, %d present", n)
	}
	ember.ManualSeed(4)
	mk := func() nn.Module { return models.SimpleCNN(1, 10) }
	m := mk()
	ref := twin(t, m, mk)
	ref.Eval()
	m.Eval()
	m.To(ember.CUDA(0))
	x := randn(2*n+1, 1, 28, 28)
	dp := nn.NewDataParallel(m)
	if len(dp.Devices()) != n {
		t.Fatalf("devices %v", dp.Devices())
	}
	checkDP(t, "SimpleCNN on GPUs", dp, x.CUDA(0), func() *ember.Tensor { return ref.Forward(x).CUDA(0) }, ref.Parameters())
}

// TestDataParallelEmulatedCUDA mixes devices, [cpu, cuda:0], with cuda:0
// the emulated device (the real CUDA backend over kernels built with g++):
// the second replica's parameters are ToCopyBackward0 copies, its piece of
// the batch goes to cuda:0 and its output and gradients come back to the
// CPU.
func TestDataParallelEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "TestDataParallelGPUs runs on it")()
	ember.ManualSeed(5)
	mk := func() nn.Module {
		return nn.NewSequential(nn.NewLinear(5, 7, true), nn.NewBatchNorm1d(7), nn.NewReLU(), nn.NewLinear(7, 3, true))
	}
	m := withBuffers(mk())
	m.Eval()
	ref := twin(t, m, mk)
	dp := nn.NewDataParallel(m, ember.CPU, ember.CUDA(0))
	x := randn(7, 5) // 4 on the CPU, 3 on cuda:0
	checkDP(t, "mlp on [cpu, cuda:0]", dp, x, func() *ember.Tensor { return ref.Forward(x) }, ref.Parameters())
	if y := dp.Forward(x); y.Device() != ember.CPU {
		t.Fatalf("output on %v, want cpu", y.Device())
	}
	// the other way round: the module on cuda:0, a replica on the CPU
	g := twin(t, m, mk)
	g.To(ember.CUDA(0))
	dg := nn.NewDataParallel(g, ember.CUDA(0), ember.CPU)
	checkDP(t, "mlp on [cuda:0, cpu]", dg, x, func() *ember.Tensor { return ref.Forward(x).CUDA(0) }, ref.Parameters())
	if y := dg.Forward(x); y.Device() != ember.CUDA(0) {
		t.Fatalf("output on %v, want cuda:0", y.Device())
	}
}

// noGradInside calls ember.NoGrad in its Forward for a piece whose first
// element is negative, after the other replicas have finished (so that
// they keep their graphs and the output alone lacks one).
type noGradInside struct {
	nn.Base
	Lin    *nn.Linear
	others *sync.WaitGroup // shared by the replicas: not a module
}

func (m *noGradInside) Forward(x *ember.Tensor) *ember.Tensor {
	if x.Float64s()[0] >= 0 {
		defer m.others.Done()
		return m.Lin.Forward(x)
	}
	m.others.Wait()
	var y *ember.Tensor
	ember.NoGrad(func() { y = m.Lin.Forward(x) })
	return y
}

// A replica that calls NoGrad makes outputs with and without graphs: that
// is refused rather than silently losing gradients.
func TestDataParallelNoGradInForward(t *testing.T) {
	m := &noGradInside{Lin: nn.NewLinear(2, 2, true), others: &sync.WaitGroup{}}
	m.Init(m)
	m.RegisterModule("lin", m.Lin)
	m.others.Add(2)
	x := ember.FromSlice([]float32{1, 1, 1, 1, 1, 1, 1, 1, -1, 1, 1, 1}, ember.Shape{6, 2})
	var ae *ember.AutogradError
	if err := ember.Try(func() { nn.NewDataParallel(m, cpu3...).Forward(x) }); !errors.As(err, &ae) {
		t.Fatalf("%v, want an *AutogradError", err)
	} else {
		t.Log(err)
	}
}

// emulatedCUDA makes cuda:0 the emulated device for the test, unless -short
// or a real GPU (then the test skips, saying what runs instead); it returns
// the restore function.
func emulatedCUDA(t *testing.T, instead string) (restore func()) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the kernel emulator: runs in the full suite")
	}
	if ember.DeviceCount() > 0 {
		t.Skip("a real GPU is present: " + instead)
	}
	return cudatest.Use(t)
}
