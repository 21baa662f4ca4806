package nn

import (
	"math"
	"testing"

	"github.com/emberml/ember"
)

// The BCE losses written as ember.Functions, and the weighted cross
// entropy, have differentiable backwards: second derivatives d/dp Σ(dL/dp·v) over every input p
// against central differences of the first derivatives.
func TestBCEDoubleBackward(t *testing.T) {
	shape := ember.Shape{2, 3}
	mk := func(base []float64, k, j int, d float64) []*ember.Tensor {
		var ts []*ember.Tensor
		for i := 0; i < 3; i++ {
			data := append([]float64(nil), base[6*i:6*i+6]...)
			if i == k {
				data[j] += d
			}
			ts = append(ts, ember.FromSlice(data, shape).SetRequiresGrad(true))
		}
		return ts
	}
	v := []float64{0.3, -0.7, 1.1, 0.5, -0.2, 0.9}
	for name, c := range map[string]struct {
		base []float64
		loss func(xs []*ember.Tensor) *ember.Tensor
	}{
		"bce_with_logits_pos_weight": {
			[]float64{-1.2, 0.4, 2.0, -0.3, 0.8, -2.1, 0.1, 0.9, 0.5, 0.3, 0.7, 0.2, 1.5, 0.6, 2.2, 0.9, 1.1, 0.4},
			func(xs []*ember.Tensor) *ember.Tensor {
				return BCEWithLogitsLoss{Reduction: Mean, PosWeight: xs[2]}.Loss(xs[0].Mul(xs[0]), xs[1])
			},
		},
		"cross_entropy_weight_smoothing": { // composed of ops: differentiable as it is
			[]float64{-1.2, 0.4, 2.0, -0.3, 0.8, -2.1, 0.1, 0.9, 0.5, 0.3, 0.7, 0.2, 1.5, 0.6, 2.2, 0.9, 1.1, 0.4},
			func(xs []*ember.Tensor) *ember.Tensor {
				target := ember.FromSlice([]int64{2, 0}, ember.Shape{2})
				// (a constant weight: PyTorch refuses one that requires grad)
				w := ember.FromSlice([]float64{0.5, 1.5, 1.2}, ember.Shape{3})
				return CrossEntropyLoss{Weight: w, LabelSmoothing: 0.2}.Loss(xs[0].Mul(xs[1]).Add(xs[2].Sin()), target)
			},
		},
		"bce_weight": {
			[]float64{0.2, 0.4, 0.7, 0.35, 0.8, 0.6, 0.1, 0.9, 0.5, 0.3, 0.7, 0.2, 1.5, 0.6, 2.2, 0.9, 1.1, 0.4},
			func(xs []*ember.Tensor) *ember.Tensor {
				return BCELoss{Reduction: Sum, Weight: xs[2]}.Loss(xs[0].Sin(), xs[1])
			},
		},
	} {
		s := func(xs []*ember.Tensor, create bool) (*ember.Tensor, []*ember.Tensor) {
			gs := ember.Grad([]*ember.Tensor{c.loss(xs)}, xs, ember.CreateGraph(create))
			tot := ember.Zeros(ember.Shape{}, ember.Dtype(ember.Float64))
			vt := ember.FromSlice(v, shape)
			for _, g := range gs {
				tot = tot.Add(g.Mul(vt).Sum())
			}
			return tot, gs
		}
		xs := mk(c.base, -1, 0, 0)
		tot, _ := s(xs, true)
		second := ember.Grad([]*ember.Tensor{tot}, xs)
		const h = 1e-6
		for k := 0; k < 3; k++ {
			got := second[k].Float64s()
			for j := 0; j < 6; j++ {
				up, _ := s(mk(c.base, k, j, h), false)
				dn, _ := s(mk(c.base, k, j, -h), false)
				num := (up.Item() - dn.Item()) / (2 * h)
				if math.Abs(got[j]-num) > 1e-6+1e-4*math.Abs(num) {
					t.Errorf("%s: d²/dp%d[%d] = %.10g, finite differences %.10g", name, k, j, got[j], num)
				}
			}
		}
	}
}
