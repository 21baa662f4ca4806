package ember

import (
	"encoding/json"
	"math"
	"os"
	"runtime"
	"testing"
)

// TestAutocastLinearStep compares a linear layer and cross-entropy step
// under Autocast(CPU, BFloat16) with torch.autocast("cpu", torch.bfloat16)
// (testdata/fixtures/half/autocast.json): the linear output is bfloat16
// (within one bf16 ulp: ember rounds the product and the bias sum
// separately), the loss float32, the gradients of the float32 parameters
// float32.
func TestAutocastLinearStep(t *testing.T) {
	raw, err := os.ReadFile("testdata/fixtures/half/autocast.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		X, W, B []float32
		T       []int64
		YBits   []uint16 `json:"y_bits"`
		Loss    float64
		WGrad   []float32 `json:"w_grad"`
		BGradX  []float32 `json:"b_grad"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	x := FromSlice(fx.X, Shape{4, 8})
	w := FromSlice(fx.W, Shape{5, 8}).SetRequiresGrad(true)
	b := FromSlice(fx.B, Shape{5}).SetRequiresGrad(true)
	var y, loss, s *Tensor
	Autocast(CPU, BFloat16, func() {
		y = Linear(x, w, b)
		loss = CrossEntropy(y, FromSlice(fx.T, nil), 0, "mean")
		s = y.Softmax(1)
		AutocastDisabled(func() {
			if _, on := AutocastDType(CPU); on {
				t.Error("AutocastDisabled left autocast on")
			}
			if z := x.MatMul(w.Detach().T()); z.DType() != Float32 {
				t.Errorf("matmul with autocast disabled: %v", z.DType())
			}
		})
		Autocast(CPU, Float16, func() {
			if z := x.MatMul(w.Detach().T()); z.DType() != Float16 {
				t.Errorf("nested Autocast(Float16) matmul: %v", z.DType())
			}
		})
		done := make(chan DType)
		go func() { done <- x.MatMul(w.Detach().T()).DType() }()
		if dt := <-done; dt != Float32 {
			t.Errorf("another goroutine's matmul under Autocast: %v", dt)
		}
	})
	if y.DType() != BFloat16 || loss.DType() != Float32 || s.DType() != Float32 {
		t.Fatalf("dtypes: linear %v, cross_entropy %v, softmax %v", y.DType(), loss.DType(), s.DType())
	}
	for i, g := range y.Bits() {
		if ulps(g, fx.YBits[i]) > 1 {
			t.Errorf("linear[%d] = %#04x, torch %#04x", i, g, fx.YBits[i])
		}
	}
	if l := loss.Item(); math.Abs(l-fx.Loss) > 1e-2*math.Abs(fx.Loss) {
		t.Errorf("loss %v, torch %v", l, fx.Loss)
	}
	loss.Backward()
	if w.Grad().DType() != Float32 {
		t.Fatalf("w.grad %v", w.Grad().DType())
	}
	if !AllClose(w.Grad(), FromSlice(fx.WGrad, Shape{5, 8}), 3e-2, 3e-3) || !AllClose(b.Grad(), FromSlice(fx.BGradX, Shape{5}), 3e-2, 3e-3) {
		t.Errorf("grads\n%v\n%v\ntorch\n%v\n%v", w.Grad(), b.Grad(), fx.WGrad, fx.BGradX)
	}
}

// TestAutocastReleasesCasts checks that the casts an autocast op makes of
// its operands are freed when the op returns and nothing needs them (no
// autograd): only the result's bytes stay allocated, as PyTorch's
// reference counting leaves it. Under autograd the casts stay (the op's
// node saved them) and backward still runs.
func TestAutocastReleasesCasts(t *testing.T) {
	for _, dev := range testDevices() {
		t.Run(dev.String(), func(t *testing.T) {
			x := Randn(Shape{2, 3, 8, 8}, On(dev))
			w := Randn(Shape{4, 3, 3, 3}, On(dev)).SetRequiresGrad(true)
			fw := Randn(Shape{5, 4}, On(dev)).SetRequiresGrad(true)
			q := Randn(Shape{1, 2, 4, 8}, On(dev)).SetRequiresGrad(true)
			ops := []struct {
				name string
				f    func() *Tensor
			}{
				{"conv2d", func() *Tensor { return Conv2d(x, w, nil, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1) }},
				{"matmul", func() *Tensor { return fw.MatMul(fw.T()) }},
				{"linear", func() *Tensor { return Linear(fw, fw, nil) }},
				{"attention", func() *Tensor { return ScaledDotProductAttention(q, q, q, AttentionOptions{Causal: true}) }},
			}
			for _, op := range ops {
				runtime.GC()
				before := MemoryAllocated(dev)
				var out *Tensor
				NoGrad(func() { Autocast(dev, BFloat16, func() { out = op.f() }) })
				if got, want := MemoryAllocated(dev)-before, int64(out.NumElements()*2); got > want {
					t.Errorf("%s: %d bytes more allocated after the op, want its bf16 result's %d", op.name, got, want)
				}
				var ref *Tensor // the float32 op: the result survived its casts' release
				NoGrad(func() { ref = op.f() })
				if !AllClose(out.Cast(Float32), ref, 5e-2, 5e-2) {
					t.Errorf("%s: bf16 result %v, float32 %v", op.name, out, ref)
				}
				var y *Tensor
				Autocast(dev, BFloat16, func() { y = op.f() })
				y.Cast(Float32).Sum().Backward() // the casts the graph saved are still there
			}
			if w.Grad() == nil || fw.Grad() == nil {
				t.Fatal("no gradients through the autocast ops")
			}
		})
	}
}
