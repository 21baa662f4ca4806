package onnx

import (
	"math"
	"sort"

	"github.com/emberml/ember"
)

// This file's name sorts last: its init wraps ops the other files register.

// Ops computed on the host: their work is data dependent (Unique), tiny
// (Det of small matrices) or a loop ember has no kernel for (a multiplying
// scatter).

func init() {
	reg(det, "Det")
	reg(unique, "Unique")
	reg(reverseSequence, "ReverseSequence")
	reg(maxUnpool, "MaxUnpool")
	registry["BatchNormalization"] = batchNormAny(registry["BatchNormalization"])
	registry["ScatterND"] = scatterNDMul(registry["ScatterND"])
}

func det(n *node, in []*ember.Tensor) []*ember.Tensor {
	x := in[0]
	sh := x.Shape()
	r := len(sh)
	if r < 2 || sh[r-1] != sh[r-2] {
		fail("Det of shape %v", sh)
	}
	m := sh[r-1]
	v := x.Float64s()
	cnt := 1
	for _, d := range sh[:r-2] {
		cnt *= d
	}
	out := make([]float64, cnt)
	a := make([]float64, m*m)
	for b := range out {
		copy(a, v[b*m*m:(b+1)*m*m])
		d := 1.0
		for c := 0; c < m; c++ {
			p := c
			for i := c + 1; i < m; i++ {
				if math.Abs(a[i*m+c]) > math.Abs(a[p*m+c]) {
					p = i
				}
			}
			if a[p*m+c] == 0 {
				d = 0
				break
			}
			if p != c {
				for j := 0; j < m; j++ {
					a[p*m+j], a[c*m+j] = a[c*m+j], a[p*m+j]
				}
				d = -d
			}
			d *= a[c*m+c]
			for i := c + 1; i < m; i++ {
				f := a[i*m+c] / a[c*m+c]
				for j := c; j < m; j++ {
					a[i*m+j] -= f * a[c*m+j]
				}
			}
		}
		out[b] = d
	}
	return one(ember.FromSlice(out, ember.Shape(sh[:r-2]), ember.On(x.Device())).Cast(x.DType()))
}

func unique(n *node, in []*ember.Tensor) []*ember.Tensor {
	x := in[0]
	a := 0
	if n.has("axis") {
		a = axis(n.int("axis", 0), x.Dim())
	} else {
		x = x.Reshape(-1)
	}
	sorted := n.int("sorted", 1) != 0
	perm := []int{a}
	for i := 0; i < x.Dim(); i++ {
		if i != a {
			perm = append(perm, i)
		}
	}
	v := x.Permute(perm...).Contiguous().Float64s() // slices along a, one after another
	L := x.Size(a)
	w := 0
	if L > 0 {
		w = len(v) / L
	}
	slice := func(i int) []float64 { return v[i*w : (i+1)*w] }
	less := func(p, q []float64) int {
		for k := range p {
			if p[k] != q[k] {
				if p[k] < q[k] {
					return -1
				}
				return 1
			}
		}
		return 0
	}
	var firsts []int // first occurrence of each distinct slice
	inverse := make([]int64, L)
	for i := 0; i < L; i++ {
		found := -1
		for j, f := range firsts {
			if less(slice(f), slice(i)) == 0 {
				found = j
				break
			}
		}
		if found < 0 {
			firsts = append(firsts, i)
			found = len(firsts) - 1
		}
		inverse[i] = int64(found)
	}
	order := make([]int, len(firsts))
	for i := range order {
		order[i] = i
	}
	if sorted {
		sort.SliceStable(order, func(p, q int) bool { return less(slice(firsts[order[p]]), slice(firsts[order[q]])) < 0 })
	}
	rank := make([]int64, len(order))
	idx := make([]int64, len(order))
	counts := make([]int64, len(order))
	for k, o := range order {
		rank[o] = int64(k)
		idx[k] = int64(firsts[o])
	}
	for i := range inverse {
		inverse[i] = rank[inverse[i]]
		counts[inverse[i]]++
	}
	dev := ember.On(x.Device())
	it := ember.FromSlice(idx, ember.Shape{len(idx)}, dev)
	return []*ember.Tensor{x.IndexSelect(a, it), it, ember.FromSlice(inverse, ember.Shape{L}, dev),
		ember.FromSlice(counts, ember.Shape{len(counts)}, dev)}
}

func reverseSequence(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, lens := in[0], host(in[1])
	ta, ba := int(n.int("time_axis", 0)), int(n.int("batch_axis", 1))
	T, B := x.Size(ta), x.Size(ba)
	idx := make([]int64, T*B) // [T, B] or [B, T] as the axes lie
	for t := 0; t < T; t++ {
		for b := 0; b < B; b++ {
			s := int64(t)
			if l := lens[b]; int64(t) < l {
				s = l - 1 - int64(t)
			}
			if ta < ba {
				idx[t*B+b] = s
			} else {
				idx[b*T+t] = s
			}
		}
	}
	sh := ones(x.Dim())
	sh[ta], sh[ba] = T, B
	it := ember.FromSlice(idx, ember.Shape(sh), ember.On(x.Device())).Expand(x.Shape()...)
	return one(x.Gather(ta, it))
}

func maxUnpool(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, ind := in[0], in[1]
	sh := x.Shape()
	r := len(sh) - 2
	g := convGeometry(n, sh[2:], nil)
	out := append([]int{}, sh...)
	for i := 0; i < r; i++ {
		out[2+i] = (sh[2+i]-1)*g.s[i] - g.pb[i] - g.pe[i] + g.k[i]
	}
	li := ind.Cast(ember.Int64).Reshape(-1)
	if o := opt(in, 2); o != nil { // indices count in the default shape: re-encode them
		want := toInts(host(o))
		n.check(want)
		var enc *ember.Tensor
		rem := li
		stride := 1
		for i := len(out) - 1; i >= 0; i-- {
			c := rem.Remainder(scalarLike(float64(out[i]), rem))
			rem = rem.FloorDivide(scalarLike(float64(out[i]), rem))
			if enc == nil {
				enc = c
			} else {
				enc = enc.Add(c.MulScalar(float64(stride)))
			}
			stride *= want[i]
		}
		li, out = enc, want
	}
	n.check(out)
	total := 1
	for _, d := range out {
		total *= d
	}
	y := full([]int{total}, 0, x, x.DType()).Scatter(0, li, x.Reshape(-1))
	return one(y.Reshape(out...))
}

// batchNormAny adds BatchNormalization's training mode (opset 14+: batch
// statistics, and the updated running mean and variance as outputs 2 and 3).
func batchNormAny(inference opFunc) opFunc {
	return func(n *node, in []*ember.Tensor) []*ember.Tensor {
		if n.int("training_mode", 0) == 0 {
			return inference(n, in)
		}
		x, scale, bias, rm, rv := in[0], in[1], in[2], in[3], in[4]
		eps, mom := n.float("epsilon", 1e-5), n.float("momentum", 0.9)
		d := []int{0}
		d = append(d, spatialDims(x)...)
		r := x.Dim()
		m := x.Mean(ember.Dims(d...), ember.KeepDim())
		v := x.Var(ember.Dims(d...), ember.KeepDim(), ember.Correction(0))
		y := x.Sub(m).Mul(v.AddScalar(eps).Rsqrt()).Mul(channelShaped(scale, r)).Add(channelShaped(bias, r))
		nm := rm.MulScalar(mom).Add(m.Reshape(-1).MulScalar(1 - mom))
		nv := rv.MulScalar(mom).Add(v.Reshape(-1).MulScalar(1 - mom))
		return []*ember.Tensor{y, nm, nv}
	}
}

// scatterNDMul adds ScatterND's reduction "mul" (on the host).
func scatterNDMul(base opFunc) opFunc {
	return func(n *node, in []*ember.Tensor) []*ember.Tensor {
		if n.str("reduction", "none") != "mul" {
			return base(n, in)
		}
		x, idx, upd := in[0], in[1], in[2]
		sh := x.Shape()
		k := idx.Size(idx.Dim() - 1)
		R := 1
		for _, d := range sh[k:] {
			R *= d
		}
		lin := host(linearIndex(idx, sh))
		v, u := x.Float64s(), upd.Float64s()
		if len(u) != len(lin)*R {
			fail("ScatterND: %d updates for %d indices of %d elements", len(u), len(lin), R)
		}
		for i, l := range lin {
			if l < 0 || int(l)*R >= len(v) {
				fail("ScatterND index out of range")
			}
			for j := 0; j < R; j++ {
				v[int(l)*R+j] *= u[i*R+j]
			}
		}
		return one(ember.FromSlice(v, ember.Shape(sh), ember.On(x.Device())).Cast(x.DType()))
	}
}
