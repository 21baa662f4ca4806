package nn_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
	"github.com/emberml/ember/internal/cuda/nccl/nccltest"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// runRanks runs f for every rank of an in-process group of n, each in its
// own goroutine (so forward and backward of the ranks overlap, and their
// hooks and graphs are recorded concurrently), and fails t on a panic.
func runRanks(t *testing.T, n int, f func(rank int, c *nn.FakeComm)) {
	t.Helper()
	comms := nn.FakeGroup(n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("rank %d: %v", r, p)
				}
			}()
			f(r, comms[r])
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); done <- struct{}{} }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("ranks deadlocked")
	}
}

func mlp() nn.Module {
	return nn.NewSequential(nn.NewLinear(6, 8, true), nn.NewReLU(), nn.NewLinear(8, 3, true))
}

// data is a fixed batch of 8 rows and class targets.
func data() (*ember.Tensor, *ember.Tensor) {
	ember.ManualSeed(11)
	x := ember.Randn(ember.Shape{8, 6})
	y := ember.FromSlice([]int64{0, 2, 1, 1, 0, 2, 2, 1}, nil)
	return x, y
}

// snapshot copies m's state dict (StateDict returns the live tensors).
func snapshot(m nn.Module) map[string]*ember.Tensor {
	out := map[string]*ember.Tensor{}
	for k, v := range m.StateDict() {
		out[k] = v.Detach().Clone()
	}
	return out
}

// bigBatch is the single-process reference: an mlp made with seed, and the
// same after three SGD steps on the whole batch.
func bigBatch(seed uint64, x, y *ember.Tensor) (init map[string]*ember.Tensor, trained nn.Module) {
	ember.ManualSeed(seed)
	ref := mlp()
	init = snapshot(ref)
	opt := sgd(ref)
	for range 3 {
		opt.ZeroGrad()
		nn.CrossEntropyLoss{}.Loss(ref.Forward(x), y).Backward()
		opt.Step()
	}
	return init, ref
}

func sgd(m nn.Module) *optim.SGD {
	return optim.NewSGD(optim.ModuleParams(m), nil, 0.1, 0.9, 0, 0, false)
}

func nearState(t *testing.T, what string, got, want nn.Module, tol float64) {
	t.Helper()
	w := want.StateDict()
	for k, v := range got.StateDict() {
		if !ember.AllClose(v.Cast(ember.Float64), w[k].Cast(ember.Float64), tol, tol) {
			t.Errorf("%s: %s = %v, want %v", what, k, v, w[k])
			return
		}
	}
}

// TestDDPMatchesBigBatch: two ranks, each with its own initialisation
// (DDP broadcasts rank 0's) and half of the batch, take three SGD steps
// (momentum 0.9) on the mean cross-entropy; averaging the ranks' gradients
// of their half-batch means is the gradient of the whole batch's mean, so
// the weights equal one process's training on the whole batch. Buckets of
// one parameter each and one bucket for all give the same result.
func TestDDPMatchesBigBatch(t *testing.T) {
	x, y := data()
	init, ref := bigBatch(1, x, y)
	inits := []map[string]*ember.Tensor{init, mlp().StateDict()} // rank 1 starts elsewhere
	ce := nn.CrossEntropyLoss{}
	for _, capMB := range []float64{1e-6, 25} {
		runRanks(t, 2, func(r int, c *nn.FakeComm) {
			m := mlp()
			if err := m.LoadStateDict(inits[r], true); err != nil {
				panic(err)
			}
			d, err := nn.NewDistributedDataParallel(m, nn.WithComm(c), nn.BucketCapMB(capMB))
			if err != nil {
				panic(err)
			}
			if n := len(d.BucketNames()); (capMB < 1 && n != 4) || (capMB > 1 && n != 1) {
				panic(fmt.Sprintf("%d buckets with cap %v MiB", n, capMB))
			}
			opt := sgd(m)
			xs, ys := x.Narrow(0, 4*r, 4), y.Narrow(0, 4*r, 4)
			for range 3 {
				opt.ZeroGrad()
				ce.Loss(d.Forward(xs), ys).Backward()
				opt.Step()
			}
			nearState(t, fmt.Sprintf("rank %d, buckets of %v MiB", r, capMB), m, ref, 1e-5)
		})
	}
}

// TestDDPNoSync: inside NoSync a rank's backward only accumulates; the next
// synchronised backward all-reduces the sum. Two micro-batches of two rows
// per rank (one under NoSync) then equal one process's backward of the
// whole-batch mean losses of both micro-batches.
func TestDDPNoSync(t *testing.T) {
	x, y := data()
	ember.ManualSeed(2)
	ref := mlp()
	ce := nn.CrossEntropyLoss{}
	opt := sgd(ref)
	// micro-batch k of rank r: rows 4r+2k, 4r+2k+1
	micro := func(t *ember.Tensor, k int) *ember.Tensor {
		return ember.Cat([]*ember.Tensor{t.Narrow(0, 2*k, 2), t.Narrow(0, 4+2*k, 2)}, 0)
	}
	ce.Loss(ref.Forward(micro(x, 0)), micro(y, 0)).Add(ce.Loss(ref.Forward(micro(x, 1)), micro(y, 1))).Backward()
	init := snapshot(ref)
	opt.Step()
	runRanks(t, 2, func(r int, c *nn.FakeComm) {
		m := mlp()
		if err := m.LoadStateDict(init, true); err != nil {
			panic(err)
		}
		d, err := nn.NewDistributedDataParallel(m, nn.WithComm(c), nn.BucketCapMB(1e-6))
		if err != nil {
			panic(err)
		}
		before := c.Collectives["all_reduce"]
		d.NoSync(func() {
			ce.Loss(d.Forward(x.Narrow(0, 4*r, 2)), y.Narrow(0, 4*r, 2)).Backward()
		})
		if c.Collectives["all_reduce"] != before {
			panic("an all-reduce under NoSync")
		}
		ce.Loss(d.Forward(x.Narrow(0, 4*r+2, 2)), y.Narrow(0, 4*r+2, 2)).Backward()
		if c.Collectives["all_reduce"] != before+4 {
			panic(fmt.Sprintf("%d all-reduces for 4 buckets", c.Collectives["all_reduce"]-before))
		}
		sgd(m).Step()
		nearState(t, fmt.Sprintf("rank %d", r), m, ref, 1e-5)
	})
}

// TestDDPOverlap: with one bucket per parameter, the first all-reduce (the
// last layer's bias) starts while the first layer has no gradient yet:
// communication overlaps the rest of backward.
func TestDDPOverlap(t *testing.T) {
	x, y := data()
	runRanks(t, 2, func(r int, c *nn.FakeComm) {
		ember.ManualSeed(3)
		m := mlp().(*nn.Sequential)
		d, err := nn.NewDistributedDataParallel(m, nn.WithComm(c), nn.BucketCapMB(1e-6))
		if err != nil {
			panic(err)
		}
		first := m.At(0).(*nn.Linear).Weight
		var launches []bool
		c.OnLaunch = func(*ember.Tensor) { launches = append(launches, first.Grad() != nil) }
		nn.CrossEntropyLoss{}.Loss(d.Forward(x), y).Backward()
		if !reflect.DeepEqual(launches, []bool{false, false, false, true}) {
			panic(fmt.Sprintf("first layer's gradient present at each launch: %v, want [false false false true]", launches))
		}
		if !reflect.DeepEqual(d.BucketNames(), [][]string{{"2.bias"}, {"2.weight"}, {"0.bias"}, {"0.weight"}}) {
			panic(fmt.Sprintf("buckets %v", d.BucketNames()))
		}
	})
}

// branchy uses head B only when UseB, and head C never.
type branchy struct {
	nn.Base
	A, B, C *nn.Linear
	UseB    bool
}

func newBranchy() *branchy {
	m := &branchy{A: nn.NewLinear(6, 4, true), B: nn.NewLinear(4, 4, true), C: nn.NewLinear(4, 4, true)}
	m.Init(m)
	m.RegisterModule("a", m.A)
	m.RegisterModule("b", m.B)
	m.RegisterModule("c", m.C)
	return m
}

func (m *branchy) Forward(x *ember.Tensor) *ember.Tensor {
	h := m.A.Forward(x)
	if m.UseB {
		h = m.B.Forward(h.Tanh())
	}
	return h
}

// TestDDPUnusedParameters: rank 0 uses head B, rank 1 does not, nobody uses
// head C. Backward must not wait for B's or C's gradient on rank 1 (the
// end-of-backward callback completes the buckets with zeros); B's
// gradient is then rank 0's halved, on both ranks, and C keeps no
// gradient. A second case uses B on rank 1 only in a NoSync pass: its
// accumulated gradient counts at the next synchronised backward.
func TestDDPUnusedParameters(t *testing.T) {
	x, y := data()
	ember.ManualSeed(4)
	ref := newBranchy()
	init := snapshot(ref)
	loss := func(m nn.Module, x *ember.Tensor) *ember.Tensor { return m.Forward(x).Square().Mean() }
	// rank 0's local gradients: rows 0-3 with B
	ref.UseB = true
	loss(ref, x.Narrow(0, 0, 4)).Backward()
	gB0, gA0 := ref.B.Weight.Grad(), ref.A.Weight.Grad()
	ref.A.Weight.ZeroGrad()
	ref.UseB = false
	loss(ref, x.Narrow(0, 4, 4)).Backward()
	gA1 := ref.A.Weight.Grad()
	_ = y
	runRanks(t, 2, func(r int, c *nn.FakeComm) {
		m := newBranchy()
		if err := m.LoadStateDict(init, true); err != nil {
			panic(err)
		}
		m.UseB = r == 0
		d, err := nn.NewDistributedDataParallel(m, nn.WithComm(c), nn.BucketCapMB(1e-6))
		if err != nil {
			panic(err)
		}
		loss(d, x.Narrow(0, 4*r, 4)).Backward()
		if !ember.AllClose(m.B.Weight.Grad(), gB0.MulScalar(0.5), 1e-5, 1e-6) {
			panic(fmt.Sprintf("B's gradient %v, want rank 0's halved %v", m.B.Weight.Grad(), gB0.MulScalar(0.5)))
		}
		if !ember.AllClose(m.A.Weight.Grad(), gA0.Add(gA1).MulScalar(0.5), 1e-5, 1e-6) {
			panic("A's gradient is not the ranks' average")
		}
		if m.C.Weight.Grad() != nil {
			panic("C, used by no rank, got a gradient")
		}

		// B used by rank 1 under NoSync only
		for _, p := range m.Parameters() {
			p.ZeroGrad()
		}
		m.UseB = r == 1
		d.NoSync(func() { loss(d, x.Narrow(0, 4, 4)).Backward() })
		m.UseB = false
		loss(d, x.Narrow(0, 4, 4)).Backward()
		if g := m.B.Weight.Grad(); g == nil || g.Abs().Sum().Item() == 0 {
			panic(fmt.Sprintf("rank %d: B's gradient after rank 1's NoSync use: %v", r, g))
		}
	})
}

// TestDDPBuffers: buffers are broadcast from rank 0 before a forward that
// follows a synchronising one (the first forward counts as such), as
// PyTorch: not after a NoSync or NoGrad forward. Evaluation after training
// then uses rank 0's running statistics everywhere.
func TestDDPBuffers(t *testing.T) {
	x, _ := data()
	var mu sync.Mutex
	stats := map[int][]float64{}
	runRanks(t, 2, func(r int, c *nn.FakeComm) {
		ember.ManualSeed(5)
		bn := nn.NewBatchNorm1d(6)
		d, err := nn.NewDistributedDataParallel(nn.NewSequential(bn), nn.WithComm(c))
		if err != nil {
			panic(err)
		}
		base := c.Collectives["broadcast"] // the initial state
		mine := x.Narrow(0, 4*r, 4)
		d.Forward(mine).Sum().Backward()     // broadcast (the first forward), then a local update
		d.NoSync(func() { d.Forward(mine) }) // broadcast: the last forward synchronised
		d.Eval()
		var out *ember.Tensor
		ember.NoGrad(func() { out = d.Forward(mine) })          // no broadcast: the last forward was under NoSync
		if got := c.Collectives["broadcast"] - base; got != 4 { // 2 dtypes: float32 statistics, int64 counter
			panic(fmt.Sprintf("%d buffer broadcasts, want 2 of 2 dtypes", got))
		}
		d.Train(true)
		d.Forward(mine).Sum().Backward()
		d.Eval()
		ember.NoGrad(func() { out = d.Forward(mine) }) // broadcast: the last forward synchronised
		_ = out
		mu.Lock()
		stats[r] = bn.RunningMean.Float64s()
		mu.Unlock()
	})
	if !reflect.DeepEqual(stats[0], stats[1]) {
		t.Fatalf("running means after evaluation differ: %v vs %v", stats[0], stats[1])
	}
}

func TestDDPErrors(t *testing.T) {
	if _, err := nn.NewDistributedDataParallel(mlp()); !errors.Is(err, dist.ErrNotInitialized) {
		t.Fatalf("no group: %v, want ErrNotInitialized", err)
	}
	// models that differ across ranks
	runRanks(t, 2, func(r int, c *nn.FakeComm) {
		_, err := nn.NewDistributedDataParallel(nn.NewLinear(4, 2+r, true), nn.WithComm(c))
		if err == nil {
			panic("different models accepted")
		}
	})
	// a collective that fails inside backward
	c := nn.FakeGroup(1)[0]
	m := mlp()
	d, err := nn.NewDistributedDataParallel(m, nn.WithComm(c))
	if err != nil {
		t.Fatal(err)
	}
	c.Fail = &dist.RankError{Op: "all_reduce", Rank: 1, After: time.Second, Err: errors.New("timeout")}
	x, y := data()
	err = ember.Try(func() { nn.CrossEntropyLoss{}.Loss(d.Forward(x), y).Backward() })
	var re *dist.RankError
	var de *nn.DDPError
	if !errors.As(err, &de) || !errors.As(err, &re) || re.Rank != 1 {
		t.Fatalf("failed all-reduce: %v, want a *DDPError wrapping the *RankError", err)
	}
	// the module trains on after Close, without communication
	d.Close()
	c.Fail = nil
	nn.CrossEntropyLoss{}.Loss(m.Forward(x), y).Backward()
}

// TestDDPBuckets: parameters in reverse registration order; the first
// bucket closes at min(cap, 1 MiB), later ones at the cap.
func TestDDPBuckets(t *testing.T) {
	m := nn.NewSequential(nn.NewLinear(1024, 512, true), nn.NewLinear(512, 256, true), nn.NewLinear(256, 10, true))
	// float32 sizes: 0.weight 2 MiB, 0.bias 2 KiB, 1.weight 512 KiB, 1.bias 1 KiB, 2.weight 10 KiB, 2.bias 40 B
	for _, c := range []struct {
		capMB float64
		want  [][]string
	}{
		{25, [][]string{{"2.bias", "2.weight", "1.bias", "1.weight", "0.bias", "0.weight"}}},
		{0.5, [][]string{{"2.bias", "2.weight", "1.bias", "1.weight"}, {"0.bias", "0.weight"}}},
		{0.009, [][]string{{"2.bias", "2.weight"}, {"1.bias", "1.weight"}, {"0.bias", "0.weight"}}},
	} {
		d, err := nn.NewDistributedDataParallel(m, nn.WithComm(nn.FakeGroup(1)[0]), nn.BucketCapMB(c.capMB))
		if err != nil {
			t.Fatal(err)
		}
		if got := d.BucketNames(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("cap %v MiB: buckets %v, want %v", c.capMB, got, c.want)
		}
		d.Close()
	}
}

// TestDDPNCCLEmulated trains through dist's nccl backend without a GPU: the
// emulated cuda:0 (cudatest) and the stand-in libnccl.so.2 (nccltest), two
// ranks as goroutines sharing a store, both on cuda:0. The buckets, the
// broadcast and the hooks then work on CUDA tensors, and three SGD steps
// equal one process's on the whole batch, as on the CPU.
func TestDDPNCCLEmulated(t *testing.T) {
	defer emulatedCUDA(t, "TestDDPTwoProcesses/nccl runs where there are two")()
	nccltest.Build(t)
	store, err := dist.NewTCPStore("127.0.0.1:0", true, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	x, y := data()
	init, ref := bigBatch(6, x, y)
	ce := nn.CrossEntropyLoss{}
	dev := ember.CUDA(0)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := ember.Try(func() {
				g, err := dist.InitProcessGroup("nccl", dist.Options{Rank: r, WorldSize: 2, Store: store, Device: dev, Timeout: 30 * time.Second})
				if err != nil {
					panic(err)
				}
				defer g.Close()
				m := mlp()
				if r == 0 {
					if err := m.LoadStateDict(init, true); err != nil {
						panic(err)
					}
				}
				m.To(dev)
				d, err := nn.NewDistributedDataParallel(m, nn.WithProcessGroup(g), nn.BucketCapMB(1e-6))
				if err != nil {
					panic(err)
				}
				opt := sgd(m)
				xs, ys := x.Narrow(0, 4*r, 4).To(dev), y.Narrow(0, 4*r, 4).To(dev)
				for range 3 {
					opt.ZeroGrad()
					ce.Loss(d.Forward(xs), ys).Backward()
					opt.Step()
				}
				m.To(ember.CPU)
				nearState(t, fmt.Sprintf("rank %d on nccl", r), m, ref, 1e-5)
			})
			if err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
		}()
	}
	wg.Wait()
}
