package ember

import (
	"math"
	"testing"
)

// gradgradcheck compares the second-order gradients that Grad with
// CreateGraph gives, d/dx sum(dL/dx·v) for L = sum(f(xs)·w) and fixed
// weights w, v, with central differences of the first-order gradients
// (step 1e-6) in float64 on every device.
func gradgradcheck(t *testing.T, name string, f func(xs []*Tensor) *Tensor, ins ...gin) {
	t.Helper()
	for _, dev := range testDevices() {
		mk := func(k, j int, d float64) []*Tensor {
			xs := make([]*Tensor, len(ins))
			for i, in := range ins {
				data := in.data
				if i == k {
					data = append([]float64(nil), in.data...)
					data[j] += d
				}
				xs[i] = in.on(dev, data)
				if in.ints == nil {
					xs[i].SetRequiresGrad(true)
				}
			}
			return xs
		}
		var diff []*Tensor
		for _, in := range ins {
			if in.ints == nil {
				diff = append(diff, nil)
			}
		}
		pick := func(xs []*Tensor) []*Tensor {
			var d []*Tensor
			for i, in := range ins {
				if in.ints == nil {
					d = append(d, xs[i])
				}
			}
			return d
		}
		xs := mk(-1, 0, 0)
		out := f(xs)
		w := FromSlice(vals(out.shape, -1, 1, 7).data, out.shape, On(dev), Dtype(out.dtype))
		vs := make([]*Tensor, 0, len(diff))
		for i, in := range ins {
			if in.ints == nil {
				vs = append(vs, FromSlice(vals(in.shape, -1, 1, 3+i).data, in.shape, On(dev)))
			}
		}
		firstAt := func(xs []*Tensor, create bool) []*Tensor {
			o := f(xs)
			return Grad([]*Tensor{o.Mul(w).Sum()}, pick(xs), CreateGraph(create), AllowUnused(true))
		}
		gs := firstAt(xs, true)
		s := Zeros(Shape{}, On(dev), Dtype(Float64))
		for i, g := range gs {
			if g != nil && g.RequiresGrad() {
				s = s.Add(g.Mul(vs[i]).Sum())
			}
		}
		var second []*Tensor
		if s.RequiresGrad() {
			second = Grad([]*Tensor{s}, pick(xs), AllowUnused(true))
		} else {
			second = make([]*Tensor, len(gs))
		}
		// finite differences of sum(dL/dx·v)
		eval := func(k, j int, d float64) float64 {
			gs := firstAt(mk(k, j, d), false)
			var s float64
			for i, g := range gs {
				if g != nil {
					s += g.Mul(vs[i]).Sum().Item()
				}
			}
			return s
		}
		di := 0
		for k, in := range ins {
			if in.ints != nil {
				continue
			}
			var got []float64
			if second[di] != nil {
				got = second[di].Float64s()
			} else {
				got = make([]float64, in.shape.NumElements())
			}
			const h = 1e-6
			for j := range in.data {
				num := (eval(k, j, h) - eval(k, j, -h)) / (2 * h)
				if math.Abs(got[j]-num) > 1e-6+1e-4*math.Abs(num) {
					t.Errorf("%s on %v: d²/dx%d[%d] = %.10g, finite differences %.10g", name, dev, k, j, got[j], num)
				}
			}
			di++
		}
	}
}

func TestGradGradSmoke(t *testing.T) {
	x := FromSlice([]float64{1, 2, 3}, Shape{3}).SetRequiresGrad(true)
	y := x.PowScalar(3).Sum()
	g := Grad([]*Tensor{y}, []*Tensor{x}, CreateGraph(true))[0]
	t.Log(g.Float64s(), g.GradFn())
	h := Grad([]*Tensor{g.Sum()}, []*Tensor{x})[0]
	t.Log(h.Float64s())
	gradgradcheck(t, "tanh", func(xs []*Tensor) *Tensor { return xs[0].Tanh() }, vals(Shape{2, 3}, -1.9, 1.9, 1))
	gradgradcheck(t, "mul", func(xs []*Tensor) *Tensor { return xs[0].Mul(xs[1]) }, vals(Shape{2, 3}, -1.9, 1.9, 1), vals(Shape{3}, -1.9, 1.9, 2))
}
