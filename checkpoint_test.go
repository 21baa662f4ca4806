package ember

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// mlpParams are the weights of a small MLP, made on dev from host data.
func mlpParams(dev Device, data map[string]fixTensor) map[string]*Tensor {
	p := map[string]*Tensor{}
	for k, v := range data {
		p[k] = v.on(dev).SetRequiresGrad(true)
	}
	return p
}

// TestCheckpointAsTorch: an MLP whose first two layers run under
// Checkpoint (their parameters read inside fn, not passed) gives
// PyTorch's output and gradients (testdata/gen_checkpoint_fixtures.py),
// and with an input that does not require grad, the checkpointed
// parameters get none, as PyTorch's reentrant checkpoint.
func TestCheckpointAsTorch(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		X, W   fixTensor
		Params map[string]fixTensor
		Cases  []struct {
			XRequiresGrad bool `json:"x_requires_grad"`
			Output        fixTensor
			Grads         map[string]*fixTensor
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, dev := range testDevices() {
		for _, c := range f.Cases {
			p := mlpParams(dev, f.Params)
			x := f.X.on(dev).SetRequiresGrad(c.XRequiresGrad)
			block := func(in ...*Tensor) *Tensor {
				h := Linear(in[0], p["w1"], p["b1"]).Tanh()
				return Linear(h, p["w2"], p["b2"]).ReLU()
			}
			h := Checkpoint(block, x)
			if h.RequiresGrad() != c.XRequiresGrad {
				t.Fatalf("%v: checkpoint output requires grad %v", dev, h.RequiresGrad())
			}
			out := Linear(h, p["w3"], p["b3"])
			closeTo(t, "checkpoint output", out, c.Output)
			out.Mul(f.W.on(dev)).Sum().Backward()
			for k, want := range c.Grads {
				got := x.Grad()
				if k != "x" {
					got = p[k].Grad()
				}
				switch {
				case want == nil && got != nil:
					t.Fatalf("%v x_requires_grad=%v: %s has a gradient, PyTorch none", dev, c.XRequiresGrad, k)
				case want != nil && got == nil:
					t.Fatalf("%v x_requires_grad=%v: no gradient for %s", dev, c.XRequiresGrad, k)
				case want != nil:
					closeTo(t, "checkpoint grad "+k, got, *want)
				}
			}
		}
	}
}

// TestCheckpointDropout: with Dropout inside, the recomputation draws the
// same mask (the generator is set back to its state at the forward), so
// the gradients equal those of the same net without Checkpoint, bit for
// bit; and the generator is restored after the recomputation, so the
// draws that follow are those that follow the plain run.
func TestCheckpointDropout(t *testing.T) {
	for _, dev := range testDevices() {
		ManualSeed(11)
		w1 := Randn(Shape{16, 8}, On(dev), Dtype(Float64))
		w2 := Randn(Shape{4, 16}, On(dev), Dtype(Float64))
		x0 := Randn(Shape{6, 8}, On(dev), Dtype(Float64))
		run := func(ckpt bool) (out, g1, g2, gx, next *Tensor) {
			a, b := w1.Clone().SetRequiresGrad(true), w2.Clone().SetRequiresGrad(true)
			x := x0.Clone().SetRequiresGrad(true)
			block := func(in ...*Tensor) *Tensor {
				h := Dropout(Linear(in[0], a, nil).ReLU(), 0.5, true)
				return Dropout(Linear(h, b, nil), 0.3, true)
			}
			ManualSeed(5)
			if ckpt {
				out = Checkpoint(block, x)
			} else {
				out = block(x)
			}
			Rand(Shape{3}, On(dev)) // a draw between forward and backward
			out.Mul(out).Sum().Backward()
			return out, a.Grad(), b.Grad(), x.Grad(), Rand(Shape{4}, On(dev))
		}
		o1, a1, b1, x1, n1 := run(false)
		o2, a2, b2, x2, n2 := run(true)
		zeros := o1.EqScalar(0).Cast(Float64).Sum().Item()
		if zeros == 0 {
			t.Fatalf("%v: dropout dropped nothing", dev)
		}
		for i, p := range [][2]*Tensor{{o1, o2}, {a1, a2}, {b1, b2}, {x1, x2}, {n1, n2}} {
			if !Equal(p[0], p[1]) {
				t.Fatalf("%v: tensor %d differs with Checkpoint:\n%v\n%v", dev, i, p[0], p[1])
			}
		}
	}
}

// liveBytes is MemoryAllocated(CPU) once the collector has freed what is
// unreachable.
func liveBytes() int64 {
	for i := 0; i < 20; i++ {
		before := MemoryAllocated(CPU)
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		if MemoryAllocated(CPU) == before {
			break
		}
	}
	return MemoryAllocated(CPU)
}

// TestCheckpointMemory: after the forward of a deep chain of layers, the
// graph keeps every layer's activations; checkpointed in segments of 4
// layers it keeps only the segments' inputs and outputs. The gradients
// are the same.
func TestCheckpointMemory(t *testing.T) {
	settleGC(t)
	const depth, width, batch = 16, 256, 128
	ManualSeed(2)
	ws := make([]*Tensor, depth)
	for i := range ws {
		ws[i] = Randn(Shape{width, width}).MulScalar(0.05).SetRequiresGrad(true)
	}
	x := Randn(Shape{batch, width}).SetRequiresGrad(true)
	layers := func(lo, hi int) func(in ...*Tensor) *Tensor {
		return func(in ...*Tensor) *Tensor {
			h := in[0]
			for i := lo; i < hi; i++ {
				h = Linear(h, ws[i], nil).ReLU()
			}
			return h
		}
	}
	grads := func() []*Tensor {
		var gs []*Tensor
		for _, w := range ws {
			gs = append(gs, w.Grad())
			w.SetGrad(nil)
		}
		gs = append(gs, x.Grad())
		x.SetGrad(nil)
		return gs
	}
	measure := func(ckpt bool) (int64, []*Tensor) {
		base := liveBytes()
		h := x
		for s := 0; s < depth; s += 4 {
			if ckpt {
				h = Checkpoint(layers(s, s+4), h)
			} else {
				h = layers(s, s+4)(h)
			}
		}
		kept := liveBytes() - base
		h.Sum().Backward()
		return kept, grads()
	}
	plain, g1 := measure(false)
	ckpt, g2 := measure(true)
	act := int64(batch * width * 4)
	t.Logf("live after forward: %d bytes plain, %d checkpointed (one activation %d)", plain, ckpt, act)
	if plain < depth*act || ckpt > 2*(depth/4+1)*act {
		t.Fatalf("live after forward: plain %d, checkpointed %d bytes; want plain ≥ %d and checkpointed ≤ %d", plain, ckpt, depth*act, 2*(depth/4+1)*act)
	}
	for i := range g1 {
		if !AllClose(g1[i], g2[i], 1e-5, 1e-6) {
			t.Fatalf("gradient %d differs with Checkpoint", i)
		}
	}
}

func TestCheckpointMisuse(t *testing.T) {
	x := Randn(Shape{3}).SetRequiresGrad(true)
	var ve *ValueError
	if err := Try(func() { Checkpoint(nil, x) }); !errors.As(err, &ve) {
		t.Fatalf("nil fn: %v", err)
	}
	var ae *AutogradError
	if err := Try(func() { Checkpoint(func(...*Tensor) *Tensor { return nil }, x) }); !errors.As(err, &ae) {
		t.Fatalf("nil output: %v", err)
	}
	// recomputed output that needs no grad: PyTorch's message
	c := Ones(Shape{3})
	y := Checkpoint(func(in ...*Tensor) *Tensor { return c.Add(in[0].Detach()) }, x)
	err := Try(func() { y.Sum().Backward() })
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "none of output has requires_grad=True") {
		t.Fatalf("constant output: %v", err)
	}
	// an input modified in place before backward
	z := x.MulScalar(1)
	y = Checkpoint(func(in ...*Tensor) *Tensor { return in[0].Mul(in[0]) }, z)
	z.AddScalarInPlace(1)
	if err := Try(func() { y.Sum().Backward() }); !errors.As(err, &ae) {
		t.Fatalf("in-place modified input: %v", err)
	}
	// under NoGrad it is fn itself
	NoGrad(func() {
		if y := Checkpoint(func(in ...*Tensor) *Tensor { return in[0].MulScalar(2) }, x); y.RequiresGrad() {
			t.Fatal("NoGrad: output requires grad")
		}
	})
}

// TestCheckpointOnEmulatedCUDA reruns the PyTorch fixture and the dropout
// test with an emulated cuda:0 (the recomputation's generator state is
// per device type).
func TestCheckpointOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	t.Run("AsTorch", TestCheckpointAsTorch)
	t.Run("Dropout", TestCheckpointDropout)
}

// TestCheckpointAutocast: the recomputation runs under the autocast state
// of the forward (here bfloat16 on the CPU), although the backward runs
// outside Autocast, so the gradients equal those without Checkpoint.
func TestCheckpointAutocast(t *testing.T) {
	ManualSeed(6)
	w0 := Randn(Shape{8, 8})
	x0 := Randn(Shape{4, 8})
	run := func(ckpt bool) (*Tensor, *Tensor) {
		w := w0.Clone().SetRequiresGrad(true)
		x := x0.Clone().SetRequiresGrad(true)
		f := func(in ...*Tensor) *Tensor { return Linear(in[0], w, nil).ReLU() }
		var y *Tensor
		Autocast(CPU, BFloat16, func() {
			if ckpt {
				y = Checkpoint(f, x)
			} else {
				y = f(x)
			}
		})
		if y.DType() != BFloat16 {
			t.Fatalf("checkpoint=%v: output %v under autocast", ckpt, y.DType())
		}
		y.Cast(Float32).Sum().Backward()
		return w.Grad(), x.Grad()
	}
	w1, x1 := run(false)
	w2, x2 := run(true)
	if !Equal(w1, w2) || !Equal(x1, x2) {
		t.Fatalf("gradients differ with Checkpoint under autocast:\n%v\n%v", w1, w2)
	}
}
