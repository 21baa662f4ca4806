package onnx

import (
	"sort"
	"strings"

	"github.com/emberml/ember"
)

// constantNode evaluates a Constant node's value at load time (it is then
// folded like an initializer).
func constantNode(n *node, dir string, bud *budget) error {
	var t *ember.Tensor
	var err error
	switch {
	case n.has("value"):
		t, err = tensorFromProto(n.attr("value").GetT(), dir, bud)
	case n.has("value_float"):
		t = ember.Scalar(n.float("value_float", 0))
	case n.has("value_floats"):
		t = ember.FromSlice(append([]float32(nil), n.floats("value_floats")...), nil)
	case n.has("value_int"):
		t = ember.Scalar(float64(n.int("value_int", 0)), ember.Dtype(ember.Int64))
	case n.has("value_ints"):
		t = ember.FromSlice(append([]int64(nil), n.ints("value_ints")...), nil)
	default:
		return &UnsupportedError{Node: n.label(), OpType: "Constant", Msg: "only tensor, float(s) and int(s) values (no strings or sparse tensors)"}
	}
	if err != nil {
		return err
	}
	n.fn = func(*node, []*ember.Tensor) []*ember.Tensor { return one(t) }
	return nil
}

func shapeOf(t *ember.Tensor) []int64 {
	s := t.Shape()
	r := make([]int64, len(s))
	for i, d := range s {
		r[i] = int64(d)
	}
	return r
}

func i64(v []int64, like *ember.Tensor) *ember.Tensor {
	return ember.FromSlice(append([]int64{}, v...), ember.Shape{len(v)}, ember.On(like.Device()))
}

func reshape(x *ember.Tensor, want []int64, allowZero bool) *ember.Tensor {
	sh := x.Shape()
	out := make([]int, len(want))
	infer := -1
	known := 1
	for i, d := range want {
		switch {
		case d == 0 && !allowZero:
			if i >= len(sh) {
				fail("reshape: 0 at position %d copies a dimension %v does not have", i, sh)
			}
			out[i] = sh[i]
		case d == -1:
			if infer >= 0 {
				fail("reshape: more than one -1 in %v", want)
			}
			infer = i
			continue
		case d < 0:
			fail("reshape: bad dimension %d in %v", d, want)
		default:
			out[i] = int(d)
		}
		known *= out[i]
	}
	total := x.NumElements()
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			fail("reshape: cannot infer -1 for %v from %v", want, sh)
		}
		out[infer] = total / known
	}
	return x.Reshape(out...)
}

func unsqueeze(x *ember.Tensor, ax []int64) *ember.Tensor {
	r := axes(ax, x.Dim()+len(ax))
	sort.Ints(r)
	for _, a := range r {
		x = x.Unsqueeze(a)
	}
	return x
}

func sliceAxis(x *ember.Tensor, a int, start, end, step int64) *ember.Tensor {
	d := int64(x.Size(a))
	if step == 0 {
		fail("slice step 0")
	}
	if step > 0 {
		if start < 0 {
			start += d
		}
		if end < 0 {
			end += d
		}
		start = max(0, min(start, d))
		end = max(0, min(end, d))
		if end <= start {
			return x.Narrow(a, int(start), 0)
		}
		return x.Slice(a, int(start), int(end), int(step))
	}
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	start = max(-1, min(start, d-1))
	end = max(-1, min(end, d-1))
	if start <= end {
		return x.Narrow(a, 0, 0)
	}
	// x[start:end:step] with step < 0 is flip(x)[d-1-start : d-1-end : -step]
	return x.Flip(a).Slice(a, int(d-1-start), int(d-1-end), int(-step))
}

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { fail("Constant without a value"); return nil }, "Constant")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		s := shapeOf(in[0])
		r := int64(len(s))
		st, en := n.int("start", 0), n.int("end", r)
		if st < 0 {
			st += r
		}
		if en < 0 {
			en += r
		}
		st, en = max(0, min(st, r)), max(0, min(en, r))
		if en < st {
			en = st
		}
		return one(i64(s[st:en], in[0]))
	}, "Shape")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(ember.Full(ember.Shape{}, float64(in[0].NumElements()), ember.On(in[0].Device()), ember.Dtype(ember.Int64)))
	}, "Size")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		if n.opset < 5 {
			return one(reshape(in[0], n.ints("shape"), false))
		}
		return one(reshape(in[0], host(in[1]), n.int("allowzero", 0) != 0))
	}, "Reshape")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		a := int(n.int("axis", 1))
		if a < 0 {
			a += x.Dim()
		}
		if a < 0 || a > x.Dim() {
			fail("flatten axis %d for rank %d", n.int("axis", 1), x.Dim())
		}
		sh := x.Shape()
		o, i := 1, 1
		for k, d := range sh {
			if k < a {
				o *= d
			} else {
				i *= d
			}
		}
		return one(x.Reshape(o, i))
	}, "Flatten")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		ax := n.ints("axes")
		if n.opset >= 13 {
			ax = host(opt(in, 1))
		}
		if len(ax) == 0 {
			var dims []int
			for i, d := range x.Shape() {
				if d == 1 {
					dims = append(dims, i)
				}
			}
			if len(dims) == 0 {
				return one(x)
			}
			return one(x.Squeeze(dims...))
		}
		r := axes(ax, x.Dim())
		for _, a := range r {
			if x.Size(a) != 1 {
				fail("squeeze of axis %d of size %d", a, x.Size(a))
			}
		}
		return one(x.Squeeze(r...))
	}, "Squeeze")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		ax := n.ints("axes")
		if n.opset >= 13 {
			ax = host(in[1])
		}
		return one(unsqueeze(in[0], ax))
	}, "Unsqueeze")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		perm := toInts(n.ints("perm"))
		if perm == nil {
			for i := x.Dim() - 1; i >= 0; i-- {
				perm = append(perm, i)
			}
		}
		return one(x.Permute(perm...))
	}, "Transpose")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		var ts []*ember.Tensor
		for _, t := range in {
			if t != nil {
				ts = append(ts, t)
			}
		}
		def := int64(0)
		if n.opset < 4 {
			def = 1
		}
		a := axis(n.int("axis", def), ts[0].Dim())
		dt := ts[0].DType()
		for _, t := range ts[1:] {
			dt = ember.PromoteTypes(dt, t.DType())
		}
		for i, t := range ts {
			ts[i] = t.Cast(dt)
		}
		if len(ts) == 1 {
			return one(ts[0])
		}
		return one(ember.Cat(ts, a))
	}, "Concat")
	reg(split, "Split")
	reg(slice, "Slice")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		want := toInts(host(in[1]))
		for _, d := range want {
			if d < 0 {
				fail("expand to negative dimension %d", d)
			}
		}
		n.check(want)
		sh := ember.BroadcastShapes("expand", x.Shape(), ember.Shape(want))
		n.check(sh)
		for x.Dim() < len(sh) {
			x = x.Unsqueeze(0)
		}
		return one(x.Expand(sh...))
	}, "Expand")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		reps := toInts(host(in[1]))
		sh := in[0].Shape()
		out := make([]int, len(sh))
		for i := range sh {
			out[i] = sh[i] * reps[i]
		}
		n.check(out)
		return one(in[0].Repeat(reps...))
	}, "Tile")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		sh := toInts(host(in[0]))
		v, dt := 0.0, ember.Float32
		if a := n.attr("value"); a != nil {
			t, err := tensorFromProto(a.GetT(), "", &budget{left: 1 << 20})
			if err != nil {
				panic(err)
			}
			v, dt = t.Reshape().Item(), t.DType()
		}
		n.check(sh)
		return one(full(sh, v, in[0], dt))
	}, "ConstantOfShape")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		s, l, d := in[0].Item(), in[1].Item(), in[2].Item()
		if d == 0 {
			fail("Range with delta 0")
		}
		cnt := int64(0)
		if v := (l - s) / d; v > 0 {
			cnt = int64(v)
			if float64(cnt) < v {
				cnt++
			}
		}
		n.check([]int{int(min(cnt, MaxElements+1))})
		dt := in[0].DType()
		if !isFloat(in[0]) {
			v := make([]int64, cnt)
			for i := range v {
				v[i] = int64(s) + int64(i)*int64(d)
			}
			return one(ember.FromSlice(v, nil, ember.On(in[0].Device())).Cast(dt))
		}
		v := make([]float64, cnt)
		for i := range v {
			v[i] = s + float64(i)*d
		}
		return one(ember.FromSlice(v, nil, ember.On(in[0].Device())).Cast(dt))
	}, "Range")
	reg(gather, "Gather")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, idx := in[0], in[1]
		a := axis(n.int("axis", 0), x.Dim())
		return one(x.Gather(a, wrapIdx(idx, x.Size(a))))
	}, "GatherElements")
	reg(gatherND, "GatherND")
	reg(scatterElements, "ScatterElements", "Scatter")
	reg(scatterND, "ScatterND")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		b := int(n.int("blocksize", 1))
		sh := x.Shape()
		N, C, H, W := sh[0], sh[1], sh[2], sh[3]
		if n.str("mode", "DCR") == "CRD" {
			y := x.Reshape(N, C/(b*b), b, b, H, W).Permute(0, 1, 4, 2, 5, 3)
			return one(y.Reshape(N, C/(b*b), H*b, W*b))
		}
		y := x.Reshape(N, b, b, C/(b*b), H, W).Permute(0, 3, 4, 1, 5, 2)
		return one(y.Reshape(N, C/(b*b), H*b, W*b))
	}, "DepthToSpace")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		b := int(n.int("blocksize", 1))
		sh := x.Shape()
		N, C, H, W := sh[0], sh[1], sh[2], sh[3]
		y := x.Reshape(N, C, H/b, b, W/b, b).Permute(0, 3, 5, 1, 2, 4)
		return one(y.Reshape(N, C*b*b, H/b, W/b))
	}, "SpaceToDepth")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		idx, vals := in[0], in[2]
		depth := int(in[1].Item())
		a := int(n.int("axis", -1))
		if a < 0 {
			a += idx.Dim() + 1
		}
		idx = idx.Cast(ember.Int64)
		idx = ember.Where(idx.LtScalar(0), idx.AddScalar(float64(depth)), idx).Unsqueeze(a)
		shape := make([]int, idx.Dim())
		for i := range shape {
			shape[i] = 1
		}
		shape[a] = depth
		r := ember.Arange(0, float64(depth), 1, ember.On(idx.Device()), ember.Dtype(ember.Int64)).Reshape(shape...)
		hot := idx.Eq(r)
		v := vals.Float64s()
		return one(ember.WhereScalars(hot, v[1], v[0], ember.On(idx.Device()), ember.Dtype(vals.DType())))
	}, "OneHot")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		if x.Dim() == 0 {
			x = x.Reshape(1)
		}
		nz := x.Ne(ember.ZerosLike(x)).Bools()
		sh := x.Shape()
		var coords [][]int64
		for i, b := range nz {
			if !b {
				continue
			}
			c := make([]int64, len(sh))
			r := i
			for k := len(sh) - 1; k >= 0; k-- {
				c[k] = int64(r % sh[k])
				r /= sh[k]
			}
			coords = append(coords, c)
		}
		v := make([]int64, 0, len(sh)*len(coords))
		for k := range sh {
			for _, c := range coords {
				v = append(v, c[k])
			}
		}
		return one(ember.FromSlice(v, ember.Shape{len(sh), len(coords)}, ember.On(x.Device())))
	}, "NonZero")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, cond := in[0], in[1]
		c := cond.Bools()
		var idx []int64
		a := -1
		if n.has("axis") {
			a = axis(n.int("axis", 0), x.Dim())
		} else {
			x = x.Reshape(-1)
			a = 0
		}
		for i, b := range c {
			if b && i < x.Size(a) {
				idx = append(idx, int64(i))
			}
		}
		return one(x.IndexSelect(a, ember.FromSlice(append([]int64{}, idx...), ember.Shape{len(idx)}, ember.On(x.Device()))))
	}, "Compress")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		k := int64(0)
		if t := opt(in, 1); t != nil {
			k = host(t)[0]
		}
		if n.int("upper", 1) != 0 {
			return one(x.Triu(int(k)))
		}
		return one(x.Tril(int(k)))
	}, "Trilu")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		a := axis(host(in[1])[0], x.Dim())
		rev := n.int("reverse", 0) != 0
		if rev {
			x = x.Flip(a)
		}
		y := x.Cumsum(a)
		if n.int("exclusive", 0) != 0 {
			y = y.Sub(x)
		}
		if rev {
			y = y.Flip(a)
		}
		return one(y.Cast(in[0].DType()))
	}, "CumSum")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		eq := strings.ReplaceAll(n.str("equation", ""), " ", "")
		return one(ember.Einsum(expandEllipsis(eq, in), in...))
	}, "Einsum")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		dt := x.DType()
		if n.has("dtype") {
			var err error
			if dt, err = emberType(int32(n.int("dtype", 1))); err != nil {
				panic(err)
			}
		}
		r, c := x.Size(0), x.Size(1)
		k := n.int("k", 0)
		rows := ember.Arange(0, float64(r), 1, ember.On(x.Device()), ember.Dtype(ember.Int64)).Reshape(r, 1)
		cols := ember.Arange(0, float64(c), 1, ember.On(x.Device()), ember.Dtype(ember.Int64)).Reshape(1, c)
		return one(cols.Sub(rows).EqScalar(float64(k)).Cast(dt))
	}, "EyeLike")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, k := in[0], int(host(in[1])[0])
		a := axis(n.int("axis", -1), x.Dim())
		v, i := x.TopK(k, a, n.int("largest", 1) != 0, true)
		return []*ember.Tensor{v, i.Cast(ember.Int64)}
	}, "TopK")
}

func split(n *node, in []*ember.Tensor) []*ember.Tensor {
	x := in[0]
	a := axis(n.int("axis", 0), x.Dim())
	var sizes []int64
	if n.opset >= 13 {
		sizes = host(opt(in, 1))
	} else {
		sizes = n.ints("split")
	}
	d := int64(x.Size(a))
	if len(sizes) == 0 {
		k := int64(len(n.outputs))
		if n.has("num_outputs") {
			k = n.int("num_outputs", k)
		}
		per := (d + k - 1) / k
		for s := int64(0); s < d; s += per {
			sizes = append(sizes, min(per, d-s))
		}
		for int64(len(sizes)) < k {
			sizes = append(sizes, 0)
		}
	}
	var outs []*ember.Tensor
	off := 0
	for _, s := range sizes {
		if s < 0 || int64(off)+s > d {
			fail("split sizes %v do not fit dimension %d", sizes, d)
		}
		outs = append(outs, x.Narrow(a, off, int(s)))
		off += int(s)
	}
	return outs
}

func slice(n *node, in []*ember.Tensor) []*ember.Tensor {
	x := in[0]
	var starts, ends, ax, steps []int64
	if n.opset < 10 {
		starts, ends, ax = n.ints("starts"), n.ints("ends"), n.ints("axes")
	} else {
		starts, ends = host(in[1]), host(in[2])
		ax, steps = host(opt(in, 3)), host(opt(in, 4))
	}
	if len(starts) != len(ends) {
		fail("slice: %d starts, %d ends", len(starts), len(ends))
	}
	if ax == nil {
		for i := range starts {
			ax = append(ax, int64(i))
		}
	}
	for i := range starts {
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		x = sliceAxis(x, axis(ax[i], x.Dim()), starts[i], ends[i], step)
	}
	return one(x)
}

func wrapIdx(idx *ember.Tensor, size int) *ember.Tensor {
	idx = idx.Cast(ember.Int64)
	return ember.Where(idx.LtScalar(0), idx.AddScalar(float64(size)), idx)
}

func gather(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, idx := in[0], in[1]
	a := axis(n.int("axis", 0), x.Dim())
	ish := idx.Shape()
	flat := wrapIdx(idx, x.Size(a)).Reshape(-1)
	y := x.IndexSelect(a, flat)
	sh := x.Shape()
	out := append(append(append([]int{}, sh[:a]...), ish...), sh[a+1:]...)
	return one(y.Reshape(out...))
}

// linearIndex turns the last dimension of idx (coordinates into the leading
// dims of sh) into flat offsets.
func linearIndex(idx *ember.Tensor, sh []int) *ember.Tensor {
	k := idx.Size(idx.Dim() - 1)
	st := make([]int64, k)
	s := int64(1)
	for i := k - 1; i >= 0; i-- {
		st[i] = s
		s *= int64(sh[i])
	}
	dims := make([]int64, k)
	for i := range dims {
		dims[i] = int64(sh[i])
	}
	idx = idx.Cast(ember.Int64)
	d := i64(dims, idx)
	idx = ember.Where(idx.LtScalar(0), idx.Add(d), idx)
	return idx.Mul(i64(st, idx)).Sum(ember.Dims(idx.Dim() - 1))
}

func gatherND(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, idx := in[0], in[1]
	b := int(n.int("batch_dims", 0))
	sh := x.Shape()
	ish := idx.Shape()
	k := ish[len(ish)-1]
	B := 1
	for _, d := range sh[:b] {
		B *= d
	}
	P := 1
	for _, d := range sh[b : b+k] {
		P *= d
	}
	rest := sh[b+k:]
	lin := linearIndex(idx, sh[b:]) // [batch..., m...]
	perB := lin.NumElements() / max(B, 1)
	off := ember.Arange(0, float64(B), 1, ember.On(x.Device()), ember.Dtype(ember.Int64)).MulScalar(float64(P))
	lin = lin.Reshape(B, perB).Add(off.Reshape(B, 1)).Reshape(-1)
	flat := x.Reshape(append([]int{B * P}, rest...)...)
	y := flat.IndexSelect(0, lin)
	out := append(append([]int{}, ish[:len(ish)-1]...), rest...)
	return one(y.Reshape(out...))
}

func scatterElements(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, idx, upd := in[0], in[1], in[2]
	a := axis(n.int("axis", 0), x.Dim())
	idx = wrapIdx(idx, x.Size(a))
	switch n.str("reduction", "none") {
	case "none":
		return one(x.Scatter(a, idx, upd))
	case "add":
		return one(x.ScatterAdd(a, idx, upd))
	}
	unsupported(n, "reduction %q", n.str("reduction", ""))
	return nil
}

func scatterND(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, idx, upd := in[0], in[1], in[2]
	sh := x.Shape()
	k := idx.Size(idx.Dim() - 1)
	P := 1
	for _, d := range sh[:k] {
		P *= d
	}
	rest := sh[k:]
	R := 1
	for _, d := range rest {
		R *= d
	}
	lin := linearIndex(idx, sh).Reshape(-1, 1)
	m := lin.Size(0)
	flat := x.Reshape(P, R)
	u := upd.Reshape(m, R)
	li := lin.Expand(m, R)
	var y *ember.Tensor
	switch n.str("reduction", "none") {
	case "none":
		y = flat.Scatter(0, li, u)
	case "add":
		y = flat.ScatterAdd(0, li, u)
	default:
		unsupported(n, "reduction %q", n.str("reduction", ""))
	}
	return one(y.Reshape(sh...))
}

// expandEllipsis rewrites an einsum equation's "..." into letters the
// equation does not use (ember's Einsum takes letters only).
func expandEllipsis(eq string, ins []*ember.Tensor) string {
	if !strings.Contains(eq, "...") {
		return eq
	}
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	used := map[rune]bool{}
	for _, c := range eq {
		used[c] = true
	}
	var free []byte
	for c := 'A'; c <= 'z'; c++ {
		if (c <= 'Z' || c >= 'a') && !used[c] {
			free = append(free, byte(c))
		}
	}
	maxE := 0
	for i, t := range terms {
		if i >= len(ins) {
			fail("einsum: %d operands for %q", len(ins), eq)
		}
		if strings.Contains(t, "...") {
			e := ins[i].Dim() - (len(t) - 3)
			maxE = max(maxE, e)
		}
	}
	if maxE > len(free) {
		fail("einsum: too many dimensions")
	}
	ell := string(free[:maxE])
	for i, t := range terms {
		if strings.Contains(t, "...") {
			e := ins[i].Dim() - (len(t) - 3)
			terms[i] = strings.Replace(t, "...", ell[maxE-e:], 1)
		}
	}
	lhs = strings.Join(terms, ",")
	if explicit {
		return lhs + "->" + strings.Replace(rhs, "...", ell, 1)
	}
	cnt := map[rune]int{}
	for _, c := range strings.ReplaceAll(lhs, ",", "") {
		cnt[c]++
	}
	var once []string
	for c, k := range cnt {
		if k == 1 && !strings.ContainsRune(ell, c) {
			once = append(once, string(c))
		}
	}
	sort.Strings(once)
	return lhs + "->" + ell + strings.Join(once, "")
}
