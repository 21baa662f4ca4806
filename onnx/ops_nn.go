package onnx

import (
	"math"

	"github.com/emberml/ember"
)

// --- padding ---

// pad pads x: before[i] and after[i] elements on axis i (negative crops),
// with mode "constant" (value v), "reflect", "edge" or "wrap".
func pad(x *ember.Tensor, before, after []int, mode string, v float64) *ember.Tensor {
	for a := range before {
		b, e := before[a], after[a]
		if b < 0 {
			x = x.Narrow(a, -b, x.Size(a)+b)
			b = 0
		}
		if e < 0 {
			x = x.Narrow(a, 0, x.Size(a)+e)
			e = 0
		}
		if b == 0 && e == 0 {
			continue
		}
		d := x.Size(a)
		var lo, hi *ember.Tensor
		part := func(start, n int) *ember.Tensor { return x.Narrow(a, start, n) }
		switch mode {
		case "constant":
			sh := x.Shape()
			sh[a] = b
			checkElems(sh)
			lo = full(sh, v, x, x.DType())
			sh[a] = e
			hi = full(sh, v, x, x.DType())
		case "reflect":
			if b >= d || e >= d {
				fail("reflect pad %d/%d of a dimension of size %d", b, e, d)
			}
			lo = part(1, b).Flip(a)
			hi = part(d-1-e, e).Flip(a)
		case "edge":
			if d == 0 {
				fail("edge pad of an empty dimension")
			}
			sh := x.Shape()
			sh[a] = b
			checkElems(sh)
			lo = part(0, 1).Expand(sh...)
			sh[a] = e
			hi = part(d-1, 1).Expand(sh...)
		case "wrap":
			if b > d || e > d {
				fail("wrap pad larger than the dimension")
			}
			lo = part(d-b, b)
			hi = part(0, e)
		default:
			fail("pad mode %q", mode)
		}
		x = ember.Cat([]*ember.Tensor{lo, x, hi}, a)
	}
	return x
}

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		mode := n.str("mode", "constant")
		var pads []int64
		v := 0.0
		var ax []int64
		if n.opset < 11 {
			pads, v = n.ints("pads"), n.float("value", 0)
			if n.opset < 2 {
				pads = n.ints("paddings")
			}
		} else {
			pads = host(in[1])
			if c := opt(in, 2); c != nil && c.NumElements() > 0 {
				v = c.Reshape(-1).Float64s()[0]
			}
			ax = host(opt(in, 3))
		}
		r := x.Dim()
		if ax == nil {
			for i := 0; i < r; i++ {
				ax = append(ax, int64(i))
			}
		}
		if len(pads) != 2*len(ax) {
			fail("pads %v for %d axes", pads, len(ax))
		}
		b, e := make([]int, r), make([]int, r)
		for i, a := range axes(ax, r) {
			b[a], e[a] = int(pads[i]), int(pads[len(ax)+i])
		}
		final := x.Shape()
		for i := range final {
			final[i] += b[i] + e[i]
		}
		n.check(final)
		return one(pad(x, b, e, mode, v))
	}, "Pad")
}

// --- convolution ---

type convGeom struct {
	k, s, d, pb, pe []int
}

func convGeometry(n *node, spatial []int, kernel []int) convGeom {
	r := len(spatial)
	g := convGeom{k: kernel, s: ones(r), d: ones(r), pb: make([]int, r), pe: make([]int, r)}
	if v := n.ints("strides"); v != nil {
		g.s = toInts(v)
	}
	if v := n.ints("dilations"); v != nil {
		g.d = toInts(v)
	}
	if v := n.ints("kernel_shape"); v != nil {
		g.k = toInts(v)
	}
	if len(g.k) != r || len(g.s) != r || len(g.d) != r {
		fail("kernel %v, strides %v, dilations %v for %d spatial dims", g.k, g.s, g.d, r)
	}
	switch ap := n.str("auto_pad", "NOTSET"); ap {
	case "SAME_UPPER", "SAME_LOWER":
		for i := range spatial {
			out := (spatial[i] + g.s[i] - 1) / g.s[i]
			tot := max(0, (out-1)*g.s[i]+(g.k[i]-1)*g.d[i]+1-spatial[i])
			if ap == "SAME_UPPER" {
				g.pb[i], g.pe[i] = tot/2, tot-tot/2
			} else {
				g.pb[i], g.pe[i] = tot-tot/2, tot/2
			}
		}
	case "VALID":
	case "NOTSET", "":
		if p := n.ints("pads"); p != nil {
			if len(p) != 2*r {
				fail("pads %v for %d spatial dims", p, r)
			}
			for i := 0; i < r; i++ {
				g.pb[i], g.pe[i] = int(p[i]), int(p[r+i])
			}
		}
	default:
		fail("auto_pad %q", ap)
	}
	for i := 0; i < r; i++ {
		if g.s[i] <= 0 || g.d[i] <= 0 || g.k[i] <= 0 {
			fail("kernel %v, strides %v and dilations %v must be positive", g.k, g.s, g.d)
		}
	}
	return g
}

func ones(r int) []int {
	v := make([]int, r)
	for i := range v {
		v[i] = 1
	}
	return v
}

func spatialPad(x *ember.Tensor, pb, pe []int, v float64) *ember.Tensor {
	b := make([]int, x.Dim())
	e := make([]int, x.Dim())
	copy(b[2:], pb)
	copy(e[2:], pe)
	return pad(x, b, e, "constant", v)
}

// conv runs an N-d convolution (N = 1, 2, 3) on ember's Conv2d: 1-d as 2-d
// with height 1, 3-d as a sum over the kernel's depth of 2-d convolutions.
func conv(x, w, b *ember.Tensor, s, d, pb, pe []int, groups int) *ember.Tensor {
	r := x.Dim() - 2
	sym := true
	for i := range pb {
		sym = sym && pb[i] == pe[i]
	}
	if !sym {
		x = spatialPad(x, pb, pe, 0)
		pb, pe = make([]int, r), make([]int, r)
	}
	switch r {
	case 1:
		y := ember.Conv2d(x.Unsqueeze(2), w.Unsqueeze(2), b, [2]int{1, s[0]}, [2]int{0, pb[0]}, [2]int{1, d[0]}, groups)
		return y.Squeeze(2)
	case 2:
		return ember.Conv2d(x, w, b, [2]int{s[0], s[1]}, [2]int{pb[0], pb[1]}, [2]int{d[0], d[1]}, groups)
	case 3:
		x = spatialPad(x, []int{pb[0], 0, 0}, []int{pe[0], 0, 0}, 0)
		sh := x.Shape()
		N, C, D := sh[0], sh[1], sh[2]
		kd := w.Size(2)
		od := (D-d[0]*(kd-1)-1)/s[0] + 1
		if od <= 0 {
			fail("conv: output depth %d", od)
		}
		var acc *ember.Tensor
		for k := 0; k < kd; k++ {
			xs := x.Slice(2, k*d[0], k*d[0]+(od-1)*s[0]+1, s[0])          // N, C, od, H, W
			xs = xs.Permute(0, 2, 1, 3, 4).Reshape(N*od, C, sh[3], sh[4]) // N*od, C, H, W
			var bias *ember.Tensor
			if k == 0 {
				bias = b
			}
			y := ember.Conv2d(xs, w.Select(2, k), bias, [2]int{s[1], s[2]}, [2]int{pb[1], pb[2]}, [2]int{d[1], d[2]}, groups)
			if acc == nil {
				acc = y
			} else {
				acc = acc.Add(y)
			}
		}
		ys := acc.Shape()
		return acc.Reshape(N, od, ys[1], ys[2], ys[3]).Permute(0, 2, 1, 3, 4).Contiguous()
	}
	fail("convolution of rank %d", r)
	return nil
}

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, w, b := in[0], in[1], opt(in, 2)
		sh := x.Shape()
		g := convGeometry(n, sh[2:], w.Shape()[2:])
		return one(conv(x, w, b, g.s, g.d, g.pb, g.pe, int(n.int("group", 1))))
	}, "Conv")
	reg(convTranspose, "ConvTranspose")
}

// zeroInsert puts s-1 zeros between the elements of axis a.
func zeroInsert(x *ember.Tensor, a, s int) *ember.Tensor {
	if s == 1 {
		return x
	}
	L := x.Size(a)
	sh := x.Shape()
	z := append(append(append([]int{}, sh[:a+1]...), s-1), sh[a+1:]...)
	y := ember.Cat([]*ember.Tensor{x.Unsqueeze(a + 1), full(z, 0, x, x.DType())}, a+1)
	rs := append(append(append([]int{}, sh[:a]...), L*s), sh[a+1:]...)
	return y.Reshape(rs...).Narrow(a, 0, (L-1)*s+1)
}

func convTranspose(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, w, b := in[0], in[1], opt(in, 2)
	groups := int(n.int("group", 1))
	sh := x.Shape()
	r := len(sh) - 2
	k := w.Shape()[2:]
	if v := n.ints("kernel_shape"); v != nil {
		k = toInts(v)
	}
	s, d := ones(r), ones(r)
	if v := n.ints("strides"); v != nil {
		s = toInts(v)
	}
	if v := n.ints("dilations"); v != nil {
		d = toInts(v)
	}
	op := make([]int, r)
	if v := n.ints("output_padding"); v != nil {
		op = toInts(v)
	}
	pb, pe := make([]int, r), make([]int, r)
	if p := n.ints("pads"); p != nil {
		for i := 0; i < r; i++ {
			pb[i], pe[i] = int(p[i]), int(p[r+i])
		}
	}
	ap := n.str("auto_pad", "NOTSET")
	outShape := toInts(n.ints("output_shape"))
	if len(outShape) > r {
		outShape = outShape[len(outShape)-r:]
	}
	if outShape == nil && (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
		outShape = make([]int, r)
		for i := range outShape {
			outShape[i] = sh[2+i] * s[i]
		}
	}
	if outShape != nil {
		for i := 0; i < r; i++ {
			tot := s[i]*(sh[2+i]-1) + op[i] + (k[i]-1)*d[i] + 1 - outShape[i]
			half := int(math.Floor(float64(tot) / 2))
			if ap == "SAME_UPPER" {
				pb[i], pe[i] = half, tot-half
			} else {
				pb[i], pe[i] = tot-half, half
			}
		}
	}
	for i := 0; i < r; i++ {
		x = zeroInsert(x, 2+i, s[i])
	}
	b2, e2 := make([]int, r), make([]int, r)
	for i := 0; i < r; i++ {
		b2[i] = (k[i]-1)*d[i] - pb[i]
		e2[i] = (k[i]-1)*d[i] - pe[i] + op[i]
	}
	x = spatialPad(x, b2, e2, 0)
	// weights: (Cin, Cout/g, k...) → (Cout, Cin/g, k...), flipped
	ws := w.Shape()
	cin, coutg := ws[0], ws[1]
	wg := w.Reshape(append([]int{groups, cin / groups, coutg}, k...)...)
	perm := []int{0, 2, 1}
	for i := 0; i < r; i++ {
		perm = append(perm, 3+i)
	}
	wg = wg.Permute(perm...).Reshape(append([]int{groups * coutg, cin / groups}, k...)...)
	var flip []int
	for i := 0; i < r; i++ {
		flip = append(flip, 2+i)
	}
	wg = wg.Flip(flip...)
	return one(conv(x, wg, b, ones(r), d, make([]int, r), make([]int, r), groups))
}

// --- pooling ---

func poolOutput(L, k, s, d, pb, pe int, ceil bool) int {
	span := L + pb + pe - d*(k-1) - 1
	if span < 0 {
		fail("pool window larger than the padded input")
	}
	o := span/s + 1
	if ceil && span%s != 0 {
		o++
		if (o-1)*s >= L+pb {
			o--
		}
	}
	return o
}

func pool(n *node, in []*ember.Tensor, isMax bool) []*ember.Tensor {
	x := in[0]
	sh := x.Shape()
	r := len(sh) - 2
	g := convGeometry(n, sh[2:], nil)
	ceil := n.int("ceil_mode", 0) != 0
	includePad := n.int("count_include_pad", 0) != 0
	if !isMax {
		g.d = ones(r)
		if v := n.ints("dilations"); v != nil {
			g.d = toInts(v)
		}
	}
	outs := make([]int, r)
	for i := 0; i < r; i++ {
		outs[i] = poolOutput(sh[2+i], g.k[i], g.s[i], g.d[i], g.pb[i], g.pe[i], ceil)
	}
	// ember's native 2-d pools when they apply
	if r == 2 && len(n.outputs) < 2 && g.d[0] == 1 && g.d[1] == 1 && g.pb[0] == g.pe[0] && g.pb[1] == g.pe[1] &&
		2*g.pb[0] <= g.k[0] && 2*g.pb[1] <= g.k[1] && (!ceil || outs[0] == poolOutput(sh[2], g.k[0], g.s[0], 1, g.pb[0], g.pe[0], false) &&
		outs[1] == poolOutput(sh[3], g.k[1], g.s[1], 1, g.pb[1], g.pe[1], false)) && (isMax || includePad || g.pb[0]+g.pb[1] == 0) {
		k, s, p := [2]int{g.k[0], g.k[1]}, [2]int{g.s[0], g.s[1]}, [2]int{g.pb[0], g.pb[1]}
		if isMax {
			return one(ember.MaxPool2d(x, k, s, p))
		}
		return one(ember.AvgPool2d(x, k, s, p, includePad))
	}
	// generic: the padded input's strided windows, one kernel offset at a time
	extra := make([]int, r)
	for i := 0; i < r; i++ {
		need := (outs[i]-1)*g.s[i] + g.d[i]*(g.k[i]-1) + 1
		extra[i] = max(0, need-(sh[2+i]+g.pb[i]+g.pe[i]))
	}
	pe := make([]int, r)
	for i := range pe {
		pe[i] = g.pe[i] + extra[i]
	}
	padV := 0.0
	if isMax {
		padV = math.Inf(-1)
		if !isFloat(x) {
			padV = math.MinInt32
		}
	}
	xp := spatialPad(x, g.pb, pe, padV)
	var cnt *ember.Tensor
	if !isMax {
		var mask *ember.Tensor
		ms := append([]int{1, 1}, sh[2:]...)
		if includePad {
			mask = spatialPad(full(ms, 1, x, x.DType()), g.pb, g.pe, 1)
			mask = spatialPad(mask, make([]int, r), extra, 0)
		} else {
			mask = spatialPad(full(ms, 1, x, x.DType()), g.pb, pe, 0)
		}
		cnt = windows(mask, g, outs, func(a, b *ember.Tensor) *ember.Tensor { return a.Add(b) }, nil)
	}
	if !isMax {
		sum := windows(xp, g, outs, func(a, b *ember.Tensor) *ember.Tensor { return a.Add(b) }, nil)
		return one(sum.Div(cnt))
	}
	var idx func([]int) *ember.Tensor
	if len(n.outputs) > 1 && n.outputs[1] != "" {
		idx = spatialIndex(x, g, outs, n.int("storage_order", 0) != 0)
	}
	var best, bestIdx *ember.Tensor
	offs := offsets(g.k)
	for _, off := range offs {
		w := window(xp, g, outs, off)
		if best == nil {
			best = w
			if idx != nil {
				bestIdx = idx(off)
			}
			continue
		}
		if idx != nil {
			gt := w.Gt(best)
			bestIdx = ember.Where(gt, idx(off), bestIdx)
		}
		best = best.Maximum(w)
	}
	if idx != nil {
		return []*ember.Tensor{best, bestIdx}
	}
	return one(best)
}

func offsets(k []int) [][]int {
	res := [][]int{{}}
	for _, kk := range k {
		var next [][]int
		for _, p := range res {
			for j := 0; j < kk; j++ {
				next = append(next, append(append([]int{}, p...), j))
			}
		}
		res = next
	}
	return res
}

func window(xp *ember.Tensor, g convGeom, outs, off []int) *ember.Tensor {
	w := xp
	for i := range outs {
		st := off[i] * g.d[i]
		w = w.Slice(2+i, st, st+(outs[i]-1)*g.s[i]+1, g.s[i])
	}
	return w
}

func windows(xp *ember.Tensor, g convGeom, outs []int, f func(a, b *ember.Tensor) *ember.Tensor, _ any) *ember.Tensor {
	var acc *ember.Tensor
	for _, off := range offsets(g.k) {
		w := window(xp, g, outs, off)
		if acc == nil {
			acc = w.Contiguous()
		} else {
			acc = f(acc, w)
		}
	}
	return acc
}

// spatialIndex returns, per kernel offset, the flat index (into the
// unpadded input, as MaxPool's Indices output counts) of each window element.
func spatialIndex(x *ember.Tensor, g convGeom, outs []int, colMajor bool) func(off []int) *ember.Tensor {
	sh := x.Shape()
	r := len(outs)
	return func(off []int) *ember.Tensor {
		size := 1
		for _, d := range sh[2:] {
			size *= d
		}
		var idx *ember.Tensor
		stride := 1
		for j := 0; j < r; j++ {
			i := r - 1 - j
			if colMajor {
				i = j
			}
			c := ember.Arange(0, float64(outs[i]), 1, ember.On(x.Device()), ember.Dtype(ember.Int64)).
				MulScalar(float64(g.s[i])).AddScalar(float64(off[i]*g.d[i] - g.pb[i]))
			rs := ones(r + 2)
			rs[2+i] = outs[i]
			c = c.Reshape(rs...).MulScalar(float64(stride))
			if idx == nil {
				idx = c
			} else {
				idx = idx.Add(c)
			}
			stride *= sh[2+i]
		}
		nc := ember.Arange(0, float64(sh[0]*sh[1]), 1, ember.On(x.Device()), ember.Dtype(ember.Int64)).
			MulScalar(float64(size)).Reshape(append([]int{sh[0], sh[1]}, ones(r)...)...)
		return idx.Add(nc)
	}
}

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return pool(n, in, true) }, "MaxPool")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return pool(n, in, false) }, "AveragePool")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		return one(x.Mean(ember.Dims(spatialDims(x)...), ember.KeepDim()))
	}, "GlobalAveragePool")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		return one(x.Max(ember.Dims(spatialDims(x)...), ember.KeepDim()))
	}, "GlobalMaxPool")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		p := float64(n.int("p", 2))
		sh := x.Shape()
		g := convGeometry(n, sh[2:], nil)
		outs := make([]int, len(sh)-2)
		for i := range outs {
			outs[i] = poolOutput(sh[2+i], g.k[i], g.s[i], g.d[i], g.pb[i], g.pe[i], false)
		}
		xp := spatialPad(x.Abs().PowScalar(p), g.pb, g.pe, 0)
		return one(windows(xp, g, outs, func(a, b *ember.Tensor) *ember.Tensor { return a.Add(b) }, nil).PowScalar(1 / p))
	}, "LpPool")
}

func spatialDims(x *ember.Tensor) []int {
	var d []int
	for i := 2; i < x.Dim(); i++ {
		d = append(d, i)
	}
	return d
}

// --- normalization ---

func channelShaped(t *ember.Tensor, rank int) *ember.Tensor {
	sh := ones(rank)
	sh[1] = t.NumElements()
	return t.Reshape(sh...)
}

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, scale, bias, mean, vr := in[0], in[1], in[2], in[3], in[4]
		eps := n.float("epsilon", 1e-5)
		if n.int("training_mode", 0) != 0 {
			unsupported(n, "training mode")
		}
		if x.Dim() == 4 && x.DType() == ember.Float32 {
			return one(ember.BatchNorm(x, mean, vr, scale, bias, false, 0, eps))
		}
		r := x.Dim()
		inv := channelShaped(vr, r).AddScalar(eps).Rsqrt().Mul(channelShaped(scale, r))
		return one(x.Sub(channelShaped(mean, r)).Mul(inv).Add(channelShaped(bias, r)))
	}, "BatchNormalization")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, scale, bias := in[0], in[1], in[2]
		eps := n.float("epsilon", 1e-5)
		d := spatialDims(x)
		m := x.Mean(ember.Dims(d...), ember.KeepDim())
		v := x.Var(ember.Dims(d...), ember.KeepDim(), ember.Correction(0))
		r := x.Dim()
		return one(x.Sub(m).Mul(v.AddScalar(eps).Rsqrt()).Mul(channelShaped(scale, r)).Add(channelShaped(bias, r)))
	}, "InstanceNormalization")
	reg(layerNorm, "LayerNormalization")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		ax := axes(n.ints("axes"), x.Dim())
		if ax == nil {
			ax = []int{0, 2, 3}
		}
		m := x.Mean(ember.Dims(ax...), ember.KeepDim())
		v := x.Sub(m).Square().Mean(ember.Dims(ax...), ember.KeepDim())
		return one(x.Sub(m).Div(v.Sqrt().AddScalar(1e-9)))
	}, "MeanVarianceNormalization")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		size := int(n.int("size", 1))
		alpha, beta, bias := n.float("alpha", 1e-4), n.float("beta", 0.75), n.float("bias", 1)
		sq := x.Square()
		b := make([]int, x.Dim())
		e := make([]int, x.Dim())
		b[1], e[1] = (size-1)/2, size/2
		sp := pad(sq, b, e, "constant", 0)
		C := x.Size(1)
		var acc *ember.Tensor
		for i := 0; i < size; i++ {
			w := sp.Narrow(1, i, C)
			if acc == nil {
				acc = w.Contiguous()
			} else {
				acc = acc.Add(w)
			}
		}
		return one(x.Div(acc.MulScalar(alpha / float64(size)).AddScalar(bias).PowScalar(beta)))
	}, "LRN")
}

func layerNorm(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, scale, bias := in[0], in[1], opt(in, 2)
	eps := n.float("epsilon", 1e-5)
	a := axis(n.int("axis", -1), x.Dim())
	sh := x.Shape()
	norm := sh[a:]
	want := len(n.outputs) == 1 || len(n.outputs) > 1 && n.outputs[1] == "" && (len(n.outputs) < 3 || n.outputs[2] == "")
	if want && ember.Shape(scale.Shape()).Equal(ember.Shape(norm)) && (bias == nil || ember.Shape(bias.Shape()).Equal(ember.Shape(norm))) &&
		x.DType() == ember.Float32 {
		return one(ember.LayerNorm(x, norm, scale, bias, eps))
	}
	var d []int
	for i := a; i < x.Dim(); i++ {
		d = append(d, i)
	}
	xf := x
	m := xf.Mean(ember.Dims(d...), ember.KeepDim())
	v := xf.Sub(m).Square().Mean(ember.Dims(d...), ember.KeepDim())
	inv := v.AddScalar(eps).Rsqrt()
	y := xf.Sub(m).Mul(inv).Mul(scale)
	if bias != nil {
		y = y.Add(bias)
	}
	return []*ember.Tensor{y.Cast(x.DType()), m, inv}
}

// --- matrix products ---

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return one(in[0].MatMul(in[1])) }, "MatMul")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		a, b, c := in[0], in[1], opt(in, 2)
		if n.int("transA", 0) != 0 {
			a = a.T()
		}
		if n.int("transB", 0) != 0 {
			b = b.T()
		}
		alpha, beta := n.float("alpha", 1), n.float("beta", 1)
		if c != nil && alpha == 1 && beta == 1 && c.Dim() == 1 && a.DType() == ember.Float32 && n.int("transB", 0) != 0 {
			return one(ember.Linear(a, in[1], c))
		}
		y := a.MatMul(b)
		if alpha != 1 {
			y = y.MulScalar(alpha)
		}
		if c != nil {
			if beta != 1 {
				c = c.MulScalar(beta)
			}
			y = y.Add(c)
		}
		return one(y)
	}, "Gemm")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		if t := opt(in, 2); t != nil && n.opset >= 12 && t.Reshape(-1).Bools()[0] {
			ratio := 0.5
			if r := opt(in, 1); r != nil {
				ratio = r.Reshape(-1).Float64s()[0]
			}
			if ratio != 0 {
				unsupported(n, "dropout in training mode (random)")
			}
		}
		if len(n.outputs) > 1 && n.outputs[1] != "" {
			return []*ember.Tensor{x, full(x.Shape(), 1, x, ember.Bool)}
		}
		return one(x)
	}, "Dropout")
}

// --- losses ---

func nll(n *node, logp, target, weight *ember.Tensor) *ember.Tensor {
	ign := n.int("ignore_index", math.MinInt64)
	hasIgn := n.has("ignore_index")
	target = target.Cast(ember.Int64)
	valid := ember.OnesLike(target).Cast(ember.Bool)
	safe := target
	if hasIgn {
		valid = target.EqScalar(float64(ign)).LogicalNot()
		safe = ember.WhereTensorScalar(valid, target, 0)
	}
	g := logp.Gather(1, safe.Unsqueeze(1)).Squeeze(1).Neg()
	w := valid.Cast(logp.DType())
	if weight != nil {
		w = weight.IndexSelect(0, safe.Reshape(-1)).Reshape(safe.Shape()...).Mul(w)
	}
	loss := g.Mul(w)
	switch n.str("reduction", "mean") {
	case "none":
		return loss
	case "sum":
		return loss.Sum()
	case "mean":
		return loss.Sum().Div(w.Sum())
	}
	fail("reduction %q", n.str("reduction", ""))
	return nil
}

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(nll(n, in[0], in[1], opt(in, 2)))
	}, "NegativeLogLikelihoodLoss")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		lp := in[0].LogSoftmax(1)
		l := nll(n, lp, in[1], opt(in, 2))
		return []*ember.Tensor{l, lp}
	}, "SoftmaxCrossEntropyLoss")
}
