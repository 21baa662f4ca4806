package bench

import "github.com/emberml/ember"

// SDPAFLOPs is the FLOP count of a causal attention forward and backward,
// the FlashAttention convention: 4·B·H·T²·D forward and 8·B·H·T²·D
// backward (two and four T×T×D products), halved for the causal triangle.
func SDPAFLOPs(b, h, t, d int) float64 {
	return 12 * float64(b) * float64(h) * float64(t) * float64(t) * float64(d) / 2
}

// sdpaCausal is ember.ScaledDotProductAttention, causal, on q, k, v of
// [4, 12, 512, 64] float32: forward, then backward of the output's sum
// (PyTorch's reference in torch_bench.py is the explicit
// softmax(QKᵀ/√d + mask)·V, torch 1.13 having no fused attention).
func sdpaCausal() (func() float64, error) {
	const b, h, t, d = 4, 12, 512, 64
	ember.ManualSeed(1)
	q := ember.Randn(ember.Shape{b, h, t, d}).SetRequiresGrad(true)
	k := ember.Randn(ember.Shape{b, h, t, d}).SetRequiresGrad(true)
	v := ember.Randn(ember.Shape{b, h, t, d}).SetRequiresGrad(true)
	g := ember.Ones(ember.Shape{b, h, t, d})
	return func() float64 {
		out := ember.ScaledDotProductAttention(q, k, v, ember.AttentionOptions{Causal: true})
		out.BackwardWith(g)
		for _, x := range []*ember.Tensor{q, k, v} {
			x.Grad().Release()
			x.SetGrad(nil)
		}
		out.Release()
		return SDPAFLOPs(b, h, t, d)
	}, nil
}
