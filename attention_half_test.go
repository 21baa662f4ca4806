package ember

import (
	"math"
	"testing"

	"github.com/emberml/ember/backend/cuda/cudatest"
)

// refAttention is softmax(q·kᵀ·scale + mask)·v in float64 for one [L, E],
// [S, E], [S, Ev] head (mask: nil, or additive [L, S] with -Inf for masked),
// with its gradients for the output gradient g [L, Ev]:
// dV = Pᵀg, dS = P∘(g·vᵀ − rowsum(g∘O)), dQ = scale·dS·k, dK = scale·dSᵀ·q.
func refAttention(q, k, v, mask, g []float64, l, s, e, ev int, scale float64) (out, dq, dk, dv []float64) {
	p := make([]float64, l*s)
	for i := range l {
		mx := math.Inf(-1)
		for j := range s {
			d := 0.0
			for c := range e {
				d += q[i*e+c] * k[j*e+c]
			}
			d *= scale
			if mask != nil {
				d += mask[i*s+j]
			}
			p[i*s+j] = d
			mx = math.Max(mx, d)
		}
		sum := 0.0
		for j := range s {
			p[i*s+j] = math.Exp(p[i*s+j] - mx)
			sum += p[i*s+j]
		}
		for j := range s {
			p[i*s+j] /= sum
		}
	}
	out, dq, dk, dv = make([]float64, l*ev), make([]float64, l*e), make([]float64, s*e), make([]float64, s*ev)
	for i := range l {
		for j := range s {
			for c := range ev {
				out[i*ev+c] += p[i*s+j] * v[j*ev+c]
				dv[j*ev+c] += p[i*s+j] * g[i*ev+c]
			}
		}
	}
	for i := range l {
		di := 0.0
		for c := range ev {
			di += g[i*ev+c] * out[i*ev+c]
		}
		for j := range s {
			dp := 0.0
			for c := range ev {
				dp += g[i*ev+c] * v[j*ev+c]
			}
			ds := p[i*s+j] * (dp - di) * scale
			for c := range e {
				dq[i*e+c] += ds * k[j*e+c]
				dk[j*e+c] += ds * q[i*e+c]
			}
		}
	}
	return out, dq, dk, dv
}

// TestHalfAttentionKernel runs bf16 and fp16 attention on the CUDA
// backend's fused kernels (an emulated cuda:0: the g++-built kernels) —
// checked to be the fused path, not the float32 route — and compares the
// output and the gradients of q, k and v with float64 math on the same
// two-byte inputs: the output within an ulp of the exact value (the kernel
// computes in float32 and rounds once; plus 1e-6 for float32's rounding of
// sums that cancel to near zero), the gradients within two
// ulps plus 1% of their largest value (their D_i term uses the rounded
// output, as PyTorch's flash kernels do). Causal, a bool mask and an
// additive mask; the CPU's float32 route agrees to an ulp.
func TestHalfAttentionKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("emulated kernels: runs in the full suite")
	}
	if DeviceCount() == 0 {
		restore := cudatest.Use(t)
		defer restore()
	}
	dev := CUDA(0)
	const bh, l, s, e, ev = 3, 37, 45, 40, 24
	scale := 1 / math.Sqrt(e)
	for _, dt := range []DType{BFloat16, Float16} {
		mant := 7
		if dt == Float16 {
			mant = 10
		}
		tiny := math.Ldexp(1, -133) // bf16's smallest subnormal
		if dt == Float16 {
			tiny = math.Ldexp(1, -24)
		}
		ulp := func(x float64) float64 {
			if x == 0 {
				return tiny
			}
			return math.Max(math.Ldexp(1, math.Ilogb(x)-mant), tiny)
		}
		for _, kind := range []string{"none", "causal", "bool", "add"} {
			ManualSeed(5)
			sl := s
			if kind == "causal" {
				sl = l
			}
			q := Randn(Shape{bh, l, e}).Cast(dt)
			k := Randn(Shape{bh, sl, e}).Cast(dt)
			v := Randn(Shape{bh, sl, ev}).Cast(dt)
			g := Randn(Shape{bh, l, ev}).Cast(dt)
			var o AttentionOptions
			maskF := make([]float64, l*sl)
			switch kind {
			case "causal":
				o.Causal = true
				for i := range l {
					for j := i + 1; j < sl; j++ {
						maskF[i*sl+j] = math.Inf(-1)
					}
				}
			case "bool", "add":
				keep := Rand(Shape{l, sl}).LtScalar(0.7).Bools()
				for i := range l {
					keep[i*sl] = true // every row sees a key
				}
				add := make([]float32, l*sl)
				for x, kp := range keep {
					if !kp {
						add[x], maskF[x] = float32(math.Inf(-1)), math.Inf(-1)
					} else if kind == "add" {
						add[x] = float32(x%5) * 0.25
						maskF[x] = float64(add[x])
					}
				}
				if kind == "bool" {
					o.Mask = FromSlice(keep, Shape{l, sl})
				} else {
					o.Mask = FromSlice(add, Shape{l, sl}).Cast(dt)
				}
			}
			run := func(d Device) (out, gq, gk, gv *Tensor) {
				qd, kd, vd := q.To(d).SetRequiresGrad(true), k.To(d).SetRequiresGrad(true), v.To(d).SetRequiresGrad(true)
				od := o
				if o.Mask != nil {
					od.Mask = o.Mask.To(d)
				}
				out = ScaledDotProductAttention(qd, kd, vd, od)
				if d == dev && out.GradFn() != attentionGradFn {
					t.Fatalf("%v %s: grad_fn %q: not the fused kernel", dt, kind, out.GradFn())
				}
				out.Cast(Float32).Mul(g.To(d).Cast(Float32)).Sum().Backward()
				return out.CPU(), qd.Grad().CPU(), kd.Grad().CPU(), vd.Grad().CPU()
			}
			out, gq, gk, gv := run(dev)
			if out.DType() != dt || gq.DType() != dt {
				t.Fatalf("%v %s: out %v, grad %v", dt, kind, out.DType(), gq.DType())
			}
			f64 := func(x *Tensor) []float64 { return x.Float64s() }
			qs, ks, vs, gs := f64(q), f64(k), f64(v), f64(g)
			got := [4][]float64{f64(out), f64(gq), f64(gk), f64(gv)}
			worstOut, worstGrad := 0.0, 0.0
			for b := range bh {
				var m []float64
				if kind != "none" {
					m = maskF
				}
				ro, rq, rk, rv := refAttention(qs[b*l*e:(b+1)*l*e], ks[b*sl*e:(b+1)*sl*e], vs[b*sl*ev:(b+1)*sl*ev], m, gs[b*l*ev:(b+1)*l*ev], l, sl, e, ev, scale)
				for x, r := range ro {
					// an ulp, plus float32's rounding of sums that cancel
					// to near zero (|Σ p·v| ≪ Σ |p·v| ≈ 1)
					d := math.Abs(got[0][b*l*ev+x] - r)
					worstOut = math.Max(worstOut, d/ulp(r))
					if d > ulp(r)+1e-6 {
						t.Fatalf("%v %s: out[%d][%d] = %v, want %v within an ulp", dt, kind, b, x, got[0][b*l*ev+x], r)
					}
				}
				for gi, ref := range [][]float64{rq, rk, rv} {
					big := 0.0
					for _, r := range ref {
						big = math.Max(big, math.Abs(r))
					}
					n := len(ref)
					for x, r := range ref {
						d := math.Abs(got[gi+1][b*n+x] - r)
						worstGrad = math.Max(worstGrad, d/(2*ulp(r)+0.01*big))
						if d > 2*ulp(r)+0.01*big {
							t.Fatalf("%v %s: grad %d [%d][%d] = %v, want %v", dt, kind, gi, b, x, got[gi+1][b*n+x], r)
						}
					}
				}
			}
			cpu, _, _, _ := run(CPU)
			for x, c := range f64(cpu) {
				if d := math.Abs(c - got[0][x]); d > ulp(c)+1e-6 {
					t.Fatalf("%v %s: cuda out[%d] = %v, the CPU's %v", dt, kind, x, got[0][x], c)
				}
			}
			t.Logf("%v %s: out within %.2f ulp, grads within %.2f of the tolerance", dt, kind, worstOut, worstGrad)
		}
	}
}
