package nn_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/vision/datasets"
	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/weights"
)

// The multi-process test re-executes the test binary as the workers of a
// group on 127.0.0.1, which read torchrun's environment contract (RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT) as a user's program does.

const workerEnv = "EMBER_NN_TEST_WORKER"

func TestMain(m *testing.M) {
	testenv.MainWithWorkers(m, workerEnv, map[string]func() error{"ddp-fashion": workerDDPFashion})
}

// The data are the first samples of Fashion-MNIST's test split (its file
// decompresses six times faster than the training split's, which matters
// under the race detector; which images they are does not matter here),
// read by the parent and handed to the workers in a file.
// The training both sides run: SimpleCNN with its BatchNorms in evaluation
// mode (a per-channel affine map with fixed statistics, still trained
// through weight and bias), so that the average of two ranks' gradients of
// their half-batch means is exactly the gradient of the whole batch's mean
// (batch statistics would differ between a half batch and the whole).
// Rank r's part of step s is samples [32s+16r, 32s+16r+16); the last step
// accumulates two micro-batches of 8 per rank, the first under NoSync.
// Rank 1 starts from other weights: DDP's broadcast must replace them.
// With -short (the race-detector run) the training is smaller:
// 1 step of 4 samples per rank.
var (
	ddpSteps = 3
	ddpRank  = 16 // samples per rank and step
)

const ddpWorld = 2

func ddpShort() {
	ddpSteps, ddpRank = 1, 4
}

func ddpModel(seed uint64) nn.Module {
	ember.ManualSeed(seed)
	m := models.SimpleCNN(1, 10)
	m.Eval()
	return m
}

func ddpOptimizer(m nn.Module) *optim.SGD {
	return optim.NewSGD(optim.ModuleParams(m), nil, 0.05, 0.9, 0, 5e-4, false)
}

// subset is the samples the test uses, which the parent loads once and
// hands to the workers in a file.
type subset struct{ x, y *ember.Tensor }

func loadSubset(ds *datasets.MNIST) subset {
	var xs, ys []*ember.Tensor
	for i := range (ddpSteps + 1) * ddpRank * ddpWorld {
		x, y := ds.Get(i)
		xs, ys = append(xs, x), append(ys, y)
	}
	return subset{ember.Stack(xs, 0), ember.Stack(ys, 0)}
}

// batch is samples [lo, lo+n).
func batch(ds subset, lo, n int) (*ember.Tensor, *ember.Tensor) {
	return ds.x.Narrow(0, lo, n), ds.y.Narrow(0, lo, n)
}

// rankBatch is what rank r sees at step s (micro-batch k of 2, or the whole
// step's part with k = -1).
func rankBatch(ds subset, s, r, k int) (*ember.Tensor, *ember.Tensor) {
	lo := s*ddpRank*ddpWorld + r*ddpRank
	if k < 0 {
		return batch(ds, lo, ddpRank)
	}
	return batch(ds, lo+k*ddpRank/2, ddpRank/2)
}

func workerDDPFashion() error {
	if os.Getenv("EMBER_NN_TEST_SHORT") == "1" {
		ddpShort()
	}
	f, err := weights.LoadSafetensors(filepath.Join(os.Getenv("EMBER_NN_TEST_OUT"), "data.safetensors"))
	if err != nil {
		return err
	}
	g, err := dist.InitProcessGroup(os.Getenv("EMBER_NN_TEST_BACKEND"), dist.Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	dev := g.Device()
	ds := subset{f["x"].To(dev), f["y"].To(dev)}
	r := g.Rank()
	m := ddpModel(uint64(100 + r)) // rank 1 starts elsewhere: DDP broadcasts rank 0's
	m.To(dev)
	d, err := nn.NewDistributedDataParallel(m, nn.BucketCapMB(0.1))
	if err != nil {
		return err
	}
	opt := ddpOptimizer(m)
	ce := nn.CrossEntropyLoss{}
	for s := range ddpSteps {
		opt.ZeroGrad()
		x, y := rankBatch(ds, s, r, -1)
		ce.Loss(d.Forward(x), y).Backward()
		opt.Step()
	}
	opt.ZeroGrad()
	d.NoSync(func() {
		x, y := rankBatch(ds, ddpSteps, r, 0)
		ce.Loss(d.Forward(x), y).Backward()
	})
	x, y := rankBatch(ds, ddpSteps, r, 1)
	ce.Loss(d.Forward(x), y).Backward()
	opt.Step()
	sd := map[string]*ember.Tensor{}
	for k, v := range d.StateDict() {
		sd[k] = v.CPU()
	}
	return weights.SaveSafetensors(filepath.Join(os.Getenv("EMBER_NN_TEST_OUT"), fmt.Sprintf("rank%d.safetensors", r)), sd)
}

// TestDDPTwoProcesses trains SimpleCNN with DDP in two processes and checks
// that both ranks end with the weights of one process training on the
// combined batches (the last step as the sum of the two micro-batches'
// whole-batch mean losses, which NoSync accumulation computes): on the cpu
// backend always, on nccl (one GPU per rank) where two GPUs exist.
func TestDDPTwoProcesses(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { testDDPProcs(t, "cpu") })
	t.Run("nccl", func(t *testing.T) {
		if n := ember.DeviceCount(); n < ddpWorld {
			t.Skipf("needs %d GPUs, %d present", ddpWorld, n)
		}
		testDDPProcs(t, "nccl")
	})
}

func testDDPProcs(t *testing.T, backend string) {
	full, err := datasets.FashionMNIST(false)
	var miss *datasets.MissingError
	if errors.As(err, &miss) {
		testenv.NeedLib(t, "dataset-fashion-mnist", err)
	} else if err != nil {
		t.Fatal(err)
	}
	short := "0"
	if testing.Short() {
		ddpShort()
		short = "1"
	}
	out := t.TempDir()
	ds := loadSubset(full)
	if err := weights.SaveSafetensors(filepath.Join(out, "data.safetensors"), map[string]*ember.Tensor{"x": ds.x, "y": ds.y}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cmds []*exec.Cmd
	outs := make([][]byte, ddpWorld)
	errs := make(chan error, ddpWorld)
	for r := range ddpWorld {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"=ddp-fashion", "EMBER_NN_TEST_OUT="+out, "EMBER_NN_TEST_SHORT="+short, "EMBER_NN_TEST_BACKEND="+backend,
			"RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(ddpWorld), "LOCAL_RANK="+strconv.Itoa(r),
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port), "EMBER_DIST_TIMEOUT=90s")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmds = append(cmds, cmd)
		go func() {
			var err error
			outs[r], err = cmd.CombinedOutput()
			errs <- err
		}()
	}

	// meanwhile, the same training in this process on the combined batches
	ref := ddpModel(100)
	opt := ddpOptimizer(ref)
	ce := nn.CrossEntropyLoss{}
	for s := range ddpSteps {
		opt.ZeroGrad()
		x, y := batch(ds, s*ddpRank*ddpWorld, ddpRank*ddpWorld)
		ce.Loss(ref.Forward(x), y).Backward()
		opt.Step()
	}
	opt.ZeroGrad()
	for k := range 2 {
		var xs, ys []*ember.Tensor
		for r := range ddpWorld {
			x, y := rankBatch(ds, ddpSteps, r, k)
			xs, ys = append(xs, x), append(ys, y)
		}
		ce.Loss(ref.Forward(ember.Cat(xs, 0)), ember.Cat(ys, 0)).Backward()
	}
	opt.Step()

	var failed bool
	for range ddpWorld {
		if err := <-errs; err != nil && !failed {
			failed = true
			cancel() // the others would wait for it until the timeout
		}
	}
	if failed {
		t.Error("a worker failed")
	}
	for r, cmd := range cmds {
		if t.Failed() {
			t.Logf("rank %d output:\n%s", r, outs[r])
		}
		if err := syscall.Kill(cmd.Process.Pid, 0); err == nil {
			t.Errorf("rank %d (pid %d) is still alive", r, cmd.Process.Pid)
		}
	}
	if t.Failed() {
		return
	}
	want := ref.StateDict()
	for r := range ddpWorld {
		got, err := weights.LoadSafetensors(filepath.Join(out, fmt.Sprintf("rank%d.safetensors", r)))
		if err != nil {
			t.Fatal(err)
		}
		for k, w := range want {
			if !ember.AllClose(got[k].Cast(ember.Float64), w.Cast(ember.Float64), 1e-4, 1e-5) {
				t.Errorf("rank %d: %s differs from single-process training: max |Δ| %v", r, k, got[k].Cast(ember.Float64).Sub(w.Cast(ember.Float64)).Abs().Max().Item())
			}
		}
	}
}
