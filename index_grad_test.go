package ember

import (
	"errors"
	"math"
	"testing"
)

// Gradient checks of issue 13's ops (finite differences, every device) and
// their grad_fn names, as PyTorch names them.
func TestGradcheckIndexOps(t *testing.T) {
	s345 := Shape{3, 4, 5}
	x := vals(s345, -1, 1, 1)
	gidx := ints(Shape{2, 3, 5}, 0, 2, 1, 0, 0, 1, 2, 2, 0, 1, 1, 0, 2, 0, 0, 1, 1, 2, 2, 0, 0, 1, 2, 1, 0, 2, 2, 1, 0, 1)
	sel := ints(Shape{4}, 2, 0, 2, 1)
	cases := []struct {
		name, gradFn string
		f            func(xs []*Tensor) *Tensor
		ins          []gin
	}{
		{"gather", "GatherBackward0", func(xs []*Tensor) *Tensor { return xs[0].Gather(0, xs[1]) }, []gin{x, gidx}},
		{"scatter", "ScatterBackward0", func(xs []*Tensor) *Tensor {
			return xs[0].Scatter(0, xs[2], xs[1])
		}, []gin{x, vals(Shape{3, 4, 5}, -1, 1, 2), ints(Shape{3, 2, 1}, 2, 0, 1, 2, 0, 1)}},
		{"scatter_add", "ScatterAddBackward0", func(xs []*Tensor) *Tensor {
			return xs[0].ScatterAdd(0, xs[2], xs[1])
		}, []gin{x, vals(Shape{2, 3, 5}, -1, 1, 3), gidx}},
		{"index_select", "IndexSelectBackward0", func(xs []*Tensor) *Tensor { return xs[0].IndexSelect(0, xs[1]) }, []gin{x, sel}},
		{"index_add", "IndexAddBackward0", func(xs []*Tensor) *Tensor {
			return xs[0].IndexAdd(1, xs[2], xs[1])
		}, []gin{x, vals(Shape{3, 4, 5}, -1, 1, 4), ints(Shape{4}, 3, 3, 0, 1)}},
		{"masked_fill", "MaskedFillBackward0", func(xs []*Tensor) *Tensor {
			return xs[0].MaskedFill(xs[1].GtScalar(0), 2)
		}, []gin{x, ints(Shape{4, 1}, 1, 0, 0, 1)}},
		{"tril", "TrilBackward0", func(xs []*Tensor) *Tensor { return xs[0].Tril(1) }, []gin{x}},
		{"triu", "TriuBackward0", func(xs []*Tensor) *Tensor { return xs[0].Triu(-1) }, []gin{x}},
		{"cumsum", "CumsumBackward0", func(xs []*Tensor) *Tensor { return xs[0].Cumsum(1) }, []gin{x}},
		{"cumprod", "CumprodBackward0", func(xs []*Tensor) *Tensor { return xs[0].Cumprod(2) }, []gin{vals(s345, 0.5, 1.5, 5)}},
		{"sort", "SortBackward0", func(xs []*Tensor) *Tensor { v, _ := xs[0].Sort(2, true); return v }, []gin{x}},
		{"topk", "TopkBackward0", func(xs []*Tensor) *Tensor { v, _ := xs[0].TopK(2, 1, true, true); return v }, []gin{x}},
		{"repeat", "RepeatBackward0", func(xs []*Tensor) *Tensor { return xs[0].Repeat(2, 1, 1, 2) }, []gin{x}},
		{"roll", "RollBackward0", func(xs []*Tensor) *Tensor { return xs[0].Roll([]int{1, -2}, []int{0, 2}) }, []gin{x}},
		{"roll_flat", "RollBackward0", func(xs []*Tensor) *Tensor { return xs[0].Roll([]int{7}, nil) }, []gin{x}},
		{"bmm", "BmmBackward0", func(xs []*Tensor) *Tensor { return Bmm(xs[0], xs[1]) }, []gin{vals(Shape{2, 3, 4}, -1, 1, 6), vals(Shape{2, 4, 2}, -1, 1, 7)}},
		{"baddbmm", "BaddbmmBackward0", func(xs []*Tensor) *Tensor {
			return Baddbmm(xs[0], xs[1], xs[2], 0.5, 2)
		}, []gin{vals(Shape{3, 2}, -1, 1, 8), vals(Shape{2, 3, 4}, -1, 1, 6), vals(Shape{2, 4, 2}, -1, 1, 7)}},
		{"outer", "MulBackward0", func(xs []*Tensor) *Tensor { return Outer(xs[0], xs[1]) }, []gin{vals(Shape{3}, -1, 1, 9), vals(Shape{4}, -1, 1, 10)}},
		{"embedding", "EmbeddingBackward0", func(xs []*Tensor) *Tensor { return Embedding(xs[1], xs[0]) }, []gin{vals(Shape{5, 3}, -1, 1, 11), ints(Shape{2, 3}, 4, 0, 4, 2, 2, 1)}},
		{"embedding_padded", "EmbeddingBackward0", func(xs []*Tensor) *Tensor { return EmbeddingPadded(xs[1], xs[0], 4) }, []gin{vals(Shape{5, 3}, -1, 1, 11), ints(Shape{2, 3}, 4, 0, 4, 2, 2, 1)}},
		{"where_scalar", "WhereBackward0", func(xs []*Tensor) *Tensor { return WhereScalar(xs[0].GtScalar(0), 1.5, xs[0]) }, []gin{x}},
	}
	for _, c := range cases {
		if c.name == "embedding_padded" {
			continue // checked below: its gradient is not the finite difference at the padding row
		}
		gradcheck(t, c.name, c.f, c.ins...)
		xs := make([]*Tensor, len(c.ins))
		for i, in := range c.ins {
			xs[i] = in.on(CPU, in.data)
			if in.ints == nil {
				xs[i].SetRequiresGrad(true)
			}
		}
		if got := c.f(xs).GradFn(); got != c.gradFn {
			t.Errorf("%s: grad_fn %s, want %s", c.name, got, c.gradFn)
		}
	}
	// einsum forms, through the ops they are made of
	for _, eq := range []struct {
		eq     string
		shapes []Shape
	}{
		{"ij,jk->ik", []Shape{{2, 3}, {3, 4}}}, {"ii->", []Shape{{3, 3}}}, {"ii->i", []Shape{{3, 3}}},
		{"bij,bjk->bik", []Shape{{2, 2, 3}, {2, 3, 2}}}, {"i,j->ij", []Shape{{2}, {3}}}, {"ij->ji", []Shape{{2, 3}}},
		{"ij,jk,kl->il", []Shape{{2, 3}, {3, 2}, {2, 2}}},
		{"...ij,...jk->...ik", []Shape{{2, 2, 3}, {1, 3, 2}}}, {"i...->...", []Shape{{2, 3}}},
		{"iij->ji", []Shape{{2, 2, 3}}}, {"ij,ij->i", []Shape{{2, 3}, {1, 3}}},
	} {
		ins := make([]gin, len(eq.shapes))
		for i, s := range eq.shapes {
			ins[i] = vals(s, -1, 1, 20+i)
		}
		gradcheck(t, "einsum "+eq.eq, func(xs []*Tensor) *Tensor { return Einsum(eq.eq, xs...) }, ins...)
	}
}

// TestEmbeddingPaddingGrad checks padding_idx by hand: the padding row's
// gradient is zero, the others sum the output gradients of their lookups.
func TestEmbeddingPaddingGrad(t *testing.T) {
	for _, dev := range testDevices() {
		w := FromSlice([]float64{1, 2, 3, 4, 5, 6}, Shape{3, 2}, On(dev)).SetRequiresGrad(true)
		idx := FromSlice([]int64{2, 0, 2, 1}, Shape{4}, On(dev))
		out := EmbeddingPadded(idx, w, -1) // row 2
		if got := out.Float64s(); !floatsEq(got, []float64{5, 6, 1, 2, 5, 6, 3, 4}) {
			t.Fatalf("%v: lookup %v", dev, got)
		}
		g := FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2}, On(dev))
		out.Mul(g).Sum().Backward()
		if got := w.Grad().Float64s(); !floatsEq(got, []float64{3, 4, 7, 8, 0, 0}) {
			t.Errorf("%v: grad %v, want [3 4 7 8 0 0]", dev, got)
		}
	}
}

func floatsEq(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			return false
		}
	}
	return true
}

// TestIndexErrors: indices out of range are *IndexError panics naming the
// op: in the op on the CPU, at the next read from the device on CUDA (a
// deferred check).
func TestIndexErrors(t *testing.T) {
	for _, dev := range testDevices() {
		x := Zeros(Shape{3, 4}, On(dev))
		bad := FromSlice([]int64{0, 4}, Shape{1, 2}, On(dev))
		neg := FromSlice([]int64{-1}, Shape{1}, On(dev))
		for name, f := range map[string]func() *Tensor{
			"gather":       func() *Tensor { return x.Gather(1, bad) },
			"scatter":      func() *Tensor { return x.Scatter(1, bad, Ones(Shape{1, 2}, On(dev))) },
			"scatter_add":  func() *Tensor { return x.ScatterAdd(1, bad, Ones(Shape{1, 2}, On(dev))) },
			"index_select": func() *Tensor { return x.IndexSelect(0, neg) },
			"index_add":    func() *Tensor { return x.IndexAdd(0, neg, Ones(Shape{1, 4}, On(dev))) },
			"embedding":    func() *Tensor { return Embedding(FromSlice([]int64{3}, Shape{1}, On(dev)), x) },
			"one_hot":      func() *Tensor { return OneHot(FromSlice([]int64{5}, Shape{1}, On(dev)), 3) },
		} {
			err := Try(func() { f().CPU() })
			var ie *IndexError
			if !errors.As(err, &ie) || ie.Op != name {
				t.Errorf("%v %s: %v, want an *IndexError of %s", dev, name, err, name)
			}
		}
	}
}

// TestSortStableTies checks stability and NaN order by hand on every device.
func TestSortStableTies(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]float32{2, 1, float32(math.NaN()), 1, 2, 0, float32(math.NaN())}, Shape{7}, On(dev))
		v, i := x.Sort(0, false)
		if got := i.Int64s(); !intsEq(got, []int64{5, 1, 3, 0, 4, 2, 6}) {
			t.Errorf("%v ascending indices %v", dev, got)
		}
		if g := v.Float32s(); g[0] != 0 || g[4] != 2 || !math.IsNaN(float64(g[5])) || !math.IsNaN(float64(g[6])) {
			t.Errorf("%v ascending values %v", dev, g)
		}
		_, i = x.Sort(0, true)
		if got := i.Int64s(); !intsEq(got, []int64{2, 6, 0, 4, 1, 3, 5}) {
			t.Errorf("%v descending indices %v", dev, got)
		}
		// TopK with ties: the values are PyTorch's whatever the tie order
		tv, _ := FromSlice([]float64{1, 3, 3, 2, 3}, Shape{5}, On(dev)).TopK(3, 0, true, true)
		if got := tv.Float64s(); !floatsEq(got, []float64{3, 3, 3}) {
			t.Errorf("%v topk of ties %v", dev, got)
		}
		tv, _ = FromSlice([]float64{1, 3, 1, 2, 1}, Shape{5}, On(dev)).TopK(2, 0, false, true)
		if got := tv.Float64s(); !floatsEq(got, []float64{1, 1}) {
			t.Errorf("%v smallest of ties %v", dev, got)
		}
	}
}

func intsEq(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMultinomial: a chi-square test of the draws with replacement (fixed
// seed), the without-replacement rule, zero weights never drawn, and the
// same draws on every device for the same seed.
func TestMultinomial(t *testing.T) {
	w := []float64{0.1, 0.2, 0, 0.3, 0.4}
	var first []int64
	for _, dev := range testDevices() {
		ManualSeed(42)
		const n = 4000
		p := FromSlice(w, Shape{5}, On(dev))
		got := Multinomial(p, n, true).Int64s()
		if first == nil {
			first = got
		} else if !intsEq(got, first) {
			t.Errorf("%v: draws differ from the CPU's for the same seed", dev)
		}
		cnt := make([]float64, 5)
		for _, k := range got {
			cnt[k]++
		}
		if cnt[2] != 0 {
			t.Errorf("%v: a zero-weight category was drawn %v times", dev, cnt[2])
		}
		chi := 0.0
		for k, pk := range w {
			if pk > 0 {
				e := n * pk
				chi += (cnt[k] - e) * (cnt[k] - e) / e
			}
		}
		if chi > 16.27 { // 3 degrees of freedom, p = 0.001
			t.Errorf("%v: chi-square %.2f over counts %v", dev, chi, cnt)
		}
		// without replacement: distinct, never the zero weight; the first
		// draw follows the weights
		rows := 2000
		pr := FromSlice(w, Shape{1, 5}, On(dev)).Expand(rows, 5)
		d := Multinomial(pr, 4, false).Int64s()
		firsts := make([]float64, 5)
		for r := 0; r < rows; r++ {
			seen := map[int64]bool{}
			for _, k := range d[4*r : 4*r+4] {
				if seen[k] || k == 2 {
					t.Fatalf("%v: row %d draws %v", dev, r, d[4*r:4*r+4])
				}
				seen[k] = true
			}
			firsts[d[4*r]]++
		}
		chi = 0
		for k, pk := range w {
			if pk > 0 {
				e := float64(rows) * pk
				chi += (firsts[k] - e) * (firsts[k] - e) / e
			}
		}
		if chi > 16.27 {
			t.Errorf("%v: first draws without replacement: chi-square %.2f over %v", dev, chi, firsts)
		}
		if err := Try(func() { Multinomial(p, 5, false) }); err == nil {
			t.Errorf("%v: 5 draws without replacement from 4 non-zero weights succeeded", dev)
		}
	}
}

// TestCumprodGradAtZeros: the gradient Σ_{j≥i} g_j·Π_{k≤j,k≠i} x_k worked
// by hand (and as torch.cumprod's backward gives) where the input holds
// zeros: one, several, at the start and at the end of a slice.
func TestCumprodGradAtZeros(t *testing.T) {
	for _, dev := range testDevices() {
		for _, c := range []struct {
			x, g, want []float64
			shape      Shape
		}{
			{[]float64{2, 0, 3, 0, 5}, []float64{1, 2, 3, 4, 5}, []float64{1, 22, 0, 0, 0}, Shape{5}},
			{[]float64{3, 2, 0}, []float64{1, 1, 1}, []float64{3, 3, 6}, Shape{3}},
			{[]float64{0, 2, 3, 1, 0, 0}, []float64{1, 1, 1, 1, 1, 1}, []float64{9, 0, 0, 1, 1, 0}, Shape{2, 3}},
			{[]float64{2, 3, 4}, []float64{1, 1, 1}, []float64{16, 10, 6}, Shape{3}},
		} {
			x := FromSlice(c.x, c.shape, On(dev)).SetRequiresGrad(true)
			x.Cumprod(-1).Mul(FromSlice(c.g, c.shape, On(dev))).Sum().Backward()
			if got := x.Grad().Float64s(); !floatsEq(got, c.want) {
				t.Errorf("%v: cumprod grad of %v = %v, want %v", dev, c.x, got, c.want)
			}
		}
	}
}
