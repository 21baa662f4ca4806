package nn_test

import (
	"math"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// BCEWithLogitsLoss with a PosWeight is an ember.Function: its output and
// gradients against PyTorch 1.13's, on every device, and the gradient of
// the PosWeight (which PyTorch does not differentiate) against finite
// differences.
//
// The values are from
//
//	x = torch.tensor([[-2.5, -0.3, 0.0], [0.7, 1.9, 4.0]], dtype=torch.float64, requires_grad=True)
//	y = torch.tensor([[1.0, 0.25, 0.0], [0.5, 1.0, 0.9]], dtype=torch.float64, requires_grad=True)
//	pw = torch.tensor([3.0, 0.5, 2.0], dtype=torch.float64)
//	l = F.binary_cross_entropy_with_logits(x, y, pos_weight=pw, reduction=red)
//	(l * w).sum().backward()  # w = 1, or the weights below for "none"
func TestBCEWithLogitsPosWeightFunction(t *testing.T) {
	devs := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		devs = append(devs, ember.CUDA(i))
	}
	testBCEPosWeight(t, devs)
}

// The same on the emulated cuda:0 (the real CUDA kernels built with g++).
func TestBCEWithLogitsPosWeightFunctionEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "TestBCEWithLogitsPosWeightFunction runs on it")()
	testBCEPosWeight(t, []ember.Device{ember.CUDA(0)})
}

func testBCEPosWeight(t *testing.T, devs []ember.Device) {
	xs := []float64{-2.5, -0.3, 0.0, 0.7, 1.9, 4.0}
	ys := []float64{1.0, 0.25, 0.0, 0.5, 1.0, 0.9}
	pws := []float64{3.0, 0.5, 2.0}
	ws := []float64{0.3, -1.2, 0.8, 1.5, -0.4, 0.6}
	for _, c := range []struct {
		red          nn.Reduction
		loss, gx, gy []float64
	}{
		{nn.Mean, []float64{1.768821260383965}, []float64{-0.4620709099893782, 0.041227132964966405, 0.08333333333333333, -0.02727074261061128, -0.010842372863583158, 0.01097103351200431}, []float64{1.2762965780975166, -0.021196270372377257, 0.11552453009332421, 0.017728682961819286, -0.32828222985691335, -0.663641678680365}},
		{nn.Sum, []float64{10.61292756230379}, []float64{-2.772425459936269, 0.24736279778979842, 0.5, -0.16362445566366768, -0.06505423718149894, 0.06582620107202586}, []float64{7.657779468585099, -0.12717762223426354, 0.6931471805599453, 0.10637209777091572, -1.9696933791414801, -3.98185007208219}},
		{nn.None, []float64{7.736669202877649, 0.5225608389099611, 0.6931471805599453, 1.1563720977709155, 0.06969337914148031, 0.4344848630438385}, []float64{-0.8317276379808808, -0.29683535734775807, 0.4, -0.24543668349550152, 0.026021694872599577, 0.039495720643215514}, []float64{2.2973338405755297, 0.15261314668111625, 0.5545177444479562, 0.15955814665637358, 0.7878773516565921, -2.389110043249314}},
	} {
		for _, dev := range devs {
			on := ember.On(dev)
			x := ember.FromSlice(xs, ember.Shape{2, 3}, on).SetRequiresGrad(true)
			y := ember.FromSlice(ys, ember.Shape{2, 3}, on).SetRequiresGrad(true)
			pw := ember.FromSlice(pws, ember.Shape{3}, on).SetRequiresGrad(true)
			w := ember.FromSlice([]float64{1}, nil, on)
			if c.red == nn.None {
				w = ember.FromSlice(ws, ember.Shape{2, 3}, on)
			}
			crit := nn.BCEWithLogitsLoss{Reduction: c.red, PosWeight: pw}
			l := crit.Loss(x, y)
			if l.GradFn() != "BinaryCrossEntropyWithLogitsBackward0" || l.Device() != dev {
				t.Fatalf("%v on %v: grad_fn %q on %v", c.red, dev, l.GradFn(), l.Device())
			}
			l.Mul(w).Sum().Backward()
			for _, v := range []struct {
				what string
				got  *ember.Tensor
				want []float64
			}{{"loss", l, c.loss}, {"grad x", x.Grad(), c.gx}, {"grad target", y.Grad(), c.gy}} {
				for i, g := range v.got.Float64s() {
					if math.Abs(g-v.want[i]) > 1e-12*(1+math.Abs(v.want[i])) {
						t.Fatalf("%v on %v: %s[%d] = %.17g, PyTorch %.17g", c.red, dev, v.what, i, g, v.want[i])
					}
				}
			}
			// ∂/∂pw by central differences
			eval := func(j int, d float64) float64 {
				p := append([]float64(nil), pws...)
				p[j] += d
				var s float64
				ember.NoGrad(func() {
					l := nn.BCEWithLogitsLoss{Reduction: c.red, PosWeight: ember.FromSlice(p, ember.Shape{3}, on)}.Loss(x, y)
					s = l.Mul(w).Sum().Item()
				})
				return s
			}
			for j, g := range pw.Grad().Float64s() {
				const h = 1e-6
				num := (eval(j, h) - eval(j, -h)) / (2 * h)
				if math.Abs(g-num) > 1e-7+1e-6*math.Abs(num) {
					t.Fatalf("%v on %v: d/dpos_weight[%d] = %.10g, finite differences %.10g", c.red, dev, j, g, num)
				}
			}
		}
	}
}
