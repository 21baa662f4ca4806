package ember

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gradients through ops with several outputs (Split, Chunk, SplitSizes,
// Unbind: one node for all pieces), against PyTorch 1.13 references from
// testdata/gen_multiout_fixtures.py.

func multioutCase(t *testing.T, name string) (map[string]*fixTensor, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "multiout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]*fixTensor{}
	var fn string
	for k, v := range m[name] {
		if k == "name" {
			if err := json.Unmarshal(v, &fn); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var f fixTensor
		if err := json.Unmarshal(v, &f); err != nil {
			t.Fatalf("%s.%s: %v", name, k, err)
		}
		out[k] = &f
	}
	return out, fn
}

// sameNode reports whether the pieces share one grad_fn node.
func sameNode(ps []*Tensor) bool {
	for _, p := range ps {
		if p.ag == nil || p.ag.node != ps[0].ag.node || p.ag.node.nout != len(ps) {
			return false
		}
	}
	return true
}

func TestSplitUnusedPieceFixture(t *testing.T) {
	c, name := multioutCase(t, "split_unused")
	for _, dev := range testDevices() {
		x := c["x"].on(dev).SetRequiresGrad(true)
		p := x.Split(2, 0)
		if p[0].GradFn() != name || !sameNode(p) {
			t.Fatalf("on %v: grad_fn %q (one node: %v), want %q", dev, p[0].GradFn(), sameNode(p), name)
		}
		p[0].Mul(c["w"].on(dev)).Sum().Add(p[2].Sin().Sum()).Backward()
		closeTo(t, "gx on "+dev.String(), x.Grad(), *c["gx"])
	}
}

func TestChunkPieceUsedTwiceFixture(t *testing.T) {
	c, name := multioutCase(t, "chunk_twice")
	for _, dev := range testDevices() {
		x := c["x"].on(dev).SetRequiresGrad(true)
		p := x.Chunk(3, 1)
		if p[1].GradFn() != name || !sameNode(p) {
			t.Fatalf("on %v: grad_fn %q, want %q", dev, p[1].GradFn(), name)
		}
		a, b, cc := p[0], p[1], p[2]
		a.Mul(b).Sum().Add(a.Mul(a).Sum()).Add(cc.Exp().Sum()).Backward()
		closeTo(t, "gx on "+dev.String(), x.Grad(), *c["gx"])
	}
}

func TestUnbindRetainedPiecesFixture(t *testing.T) {
	c, name := multioutCase(t, "unbind_retained")
	for _, dev := range testDevices() {
		x := c["x"].on(dev).SetRequiresGrad(true)
		u := x.Unbind(1)
		if u[2].GradFn() != name || !sameNode(u) {
			t.Fatalf("on %v: grad_fn %q, want %q", dev, u[2].GradFn(), name)
		}
		u[0].RetainGrad()
		u[1].RetainGrad()
		u[0].Mul(u[1]).Tanh().Sum().Add(u[0].PowScalar(3).Sum()).Backward()
		closeTo(t, "gx on "+dev.String(), x.Grad(), *c["gx"])
		closeTo(t, "gu0 on "+dev.String(), u[0].Grad(), *c["gu0"])
		closeTo(t, "gu1 on "+dev.String(), u[1].Grad(), *c["gu1"])
		if u[2].Grad() != nil {
			t.Errorf("on %v: a piece that did not call RetainGrad has a Grad", dev)
		}
	}
}

func TestSplitSizesGradOfPiecesFixture(t *testing.T) {
	c, name := multioutCase(t, "sizes_grad_pieces")
	for _, dev := range testDevices() {
		x := c["x"].on(dev).SetRequiresGrad(true)
		p := x.SplitSizes([]int{1, 3, 2}, 0)
		if p[0].GradFn() != name || !sameNode(p) {
			t.Fatalf("on %v: grad_fn %q, want %q", dev, p[0].GradFn(), name)
		}
		loss := p[0].Mul(p[1]).Sum().Add(p[1].PowScalar(2).Sum())
		gs := Grad([]*Tensor{loss}, []*Tensor{p[0], p[1]})
		closeTo(t, "g0 on "+dev.String(), gs[0], *c["g0"])
		closeTo(t, "g1 on "+dev.String(), gs[1], *c["g1"])
	}
}

func TestMultiOutputCreateGraphFixture(t *testing.T) {
	for _, dev := range testDevices() {
		c, _ := multioutCase(t, "unbind_create_graph")
		x := c["x"].on(dev).SetRequiresGrad(true)
		u := x.Unbind(0)
		loss := u[0].PowScalar(3).Sum().Add(u[1].Mul(u[3]).Sin().Sum())
		gx := Grad([]*Tensor{loss}, []*Tensor{x}, CreateGraph(true))[0]
		closeTo(t, "unbind gx on "+dev.String(), gx, *c["gx"])
		ggx := Grad([]*Tensor{gx.Mul(c["v"].on(dev)).Sum()}, []*Tensor{x})[0]
		closeTo(t, "unbind ggx on "+dev.String(), ggx, *c["ggx"])

		c, _ = multioutCase(t, "split_create_graph")
		x = c["x"].on(dev).SetRequiresGrad(true)
		p := x.Split(2, 1)
		p[0].Exp().Mul(p[1]).Sum().BackwardCreateGraph(nil)
		g := x.Grad()
		closeTo(t, "split gx on "+dev.String(), g, *c["gx"])
		x.ZeroGrad()
		g.Mul(c["v"].on(dev)).Sum().Backward()
		closeTo(t, "split ggx on "+dev.String(), x.Grad(), *c["ggx"])
	}
}

func TestMultiOutputGradGradCheck(t *testing.T) {
	gradgradcheck(t, "split", func(xs []*Tensor) *Tensor {
		p := xs[0].Split(2, 1)
		return p[0].Mul(p[2]).Exp().Add(p[0].PowScalar(2))
	}, vals(Shape{3, 6}, -1, 1, 1))
	gradgradcheck(t, "unbind", func(xs []*Tensor) *Tensor {
		u := xs[0].Unbind(0)
		return Stack([]*Tensor{u[2].Sin().Mul(u[0]), u[0].PowScalar(3)}, 0)
	}, vals(Shape{4, 3}, -1, 1, 2))
	gradcheck(t, "split sizes", func(xs []*Tensor) *Tensor {
		p := xs[0].SplitSizes([]int{0, 2, 1}, 0)
		return p[1].Tanh().Sum(Dims(0)).Mul(p[2].Squeeze(0))
	}, vals(Shape{3, 2}, -1, 1, 3))
}

// TestMultiOutputBackwardFromPiece backpropagates from one piece alone
// and from two pieces at once (hand-worked: each piece's gradient lands
// in its place, zeros elsewhere), and checks that the node runs once.
func TestMultiOutputBackwardFromPiece(t *testing.T) {
	for _, dev := range testDevices() {
		x := Zeros(Shape{3, 2}, On(dev)).SetRequiresGrad(true)
		u := x.Unbind(0)
		u[1].BackwardWith(Full(Shape{2}, 2, On(dev)))
		sameData(t, "from one piece on "+dev.String(), x.Grad(), []float64{0, 0, 2, 2, 0, 0})
		x.ZeroGrad()
		u = x.Unbind(0)
		gs := Grad([]*Tensor{u[0], u[2]}, []*Tensor{x}, GradOutputs(Full(Shape{2}, 1, On(dev)), Full(Shape{2}, 3, On(dev))))
		sameData(t, "from two pieces on "+dev.String(), gs[0], []float64{1, 1, 0, 0, 3, 3})
	}
	m := Zeros(Shape{3, 2}, On(Meta)).SetRequiresGrad(true)
	m.Unbind(0)[1].Sum().Add(m.Split(2, 0)[1].Sum()).Backward()
	if g := m.Grad(); g == nil || !g.Shape().Equal(Shape{3, 2}) || g.Device() != Meta {
		t.Errorf("meta: Grad %v", g)
	}
	x := Zeros(Shape{4, 2}).SetRequiresGrad(true)
	runs := 0
	p := x.Split(1, 0)
	n := p[0].ag.node
	bw := n.backwardN
	n.backwardN = func(gs []*Tensor) []*Tensor { runs++; return bw(gs) }
	p[0].Sum().Add(p[1].Sum()).Add(p[3].Mul(p[1]).Sum()).Backward()
	if runs != 1 {
		t.Errorf("SplitBackward0 ran %d times, want 1", runs)
	}
}

// TestSplitEmptyDim: an empty dim splits into one empty piece and chunks
// into n, one node's outputs as in PyTorch 1.13 (SplitBackward0, and
// SplitWithSizesBackward0 for chunk); backward gives an empty gradient.
func TestSplitEmptyDim(t *testing.T) {
	x := Zeros(Shape{0, 3}).SetRequiresGrad(true)
	s := x.Split(2, 0)
	c := x.Chunk(3, 0)
	if len(s) != 1 || s[0].GradFn() != "SplitBackward0" || len(c) != 3 || !sameNode(c) || c[2].GradFn() != "SplitWithSizesBackward0" || !c[1].Shape().Equal(Shape{0, 3}) {
		t.Fatalf("split: %d pieces (%s), chunk: %d pieces (%s)", len(s), s[0].GradFn(), len(c), c[0].GradFn())
	}
	c[1].Sum().Add(s[0].Sum()).Backward()
	if g := x.Grad(); g == nil || !g.Shape().Equal(Shape{0, 3}) {
		t.Errorf("Grad %v, want an empty [0 3]", g)
	}
}

// TestMultiOutputInPlaceRefused: a piece cannot be modified in place in a
// graph (PyTorch's error), also when taken through a further view.
func TestMultiOutputInPlaceRefused(t *testing.T) {
	x := Ones(Shape{4, 2}).SetRequiresGrad(true)
	y := x.MulScalar(2)
	for _, p := range [][]*Tensor{y.Split(2, 0), y.Chunk(2, 0), y.Unbind(0), y.SplitSizes([]int{1, 3}, 0)} {
		err := Try(func() { p[1].AddScalarInPlace(1) })
		var ae *AutogradError
		want := "Output 1 of " + p[1].GradFn() + " is a view and is being modified inplace. This view is the output of a function that returns multiple views."
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want an *AutogradError holding %q", err, want)
		}
	}
}

func sameData(t *testing.T, what string, got *Tensor, want []float64) {
	t.Helper()
	g := got.Float64s()
	if len(g) != len(want) {
		t.Fatalf("%s: %v, want %v", what, g, want)
	}
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("%s: %v, want %v", what, g, want)
		}
	}
}

func BenchmarkUnbindBackward(b *testing.B) {
	x := Randn(Shape{4000, 64, 32}).SetRequiresGrad(true)
	for range b.N {
		u := x.Unbind(0)
		s := make([]*Tensor, len(u))
		for i, p := range u {
			s[i] = p.Sum()
		}
		Stack(s, 0).Sum().Backward()
		x.ZeroGrad()
	}
}

// TestSplitSizesErrors: PyTorch 1.13's messages, as *ShapeErrors.
func TestSplitSizesErrors(t *testing.T) {
	x := Zeros(Shape{5, 3})
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { x.SplitSizes([]int{1, 2}, 0) }, "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0), but got split_sizes=[1, 2]"},
		{func() { x.SplitSizes([]int{-1, 6}, 0) }, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[-1, 6]"},
		{func() { x.SplitSizes(nil, 0) }, "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0), but got split_sizes=[]"},
		{func() { Scalar(1.0).SplitSizes([]int{1}, 0) }, "split expects at least a 1-dimensional tensor"},
		{func() { x.SplitSizes([]int{1, 4}, 2) }, "Dimension out of range"},
		{func() { x.SplitSizes([]int{1, math.MaxInt, math.MaxInt, 6}, 0) }, "split_with_sizes expects split_sizes to sum exactly to 5"},
	} {
		err := Try(c.f)
		var se *ShapeError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want a *ShapeError holding %q", err, c.want)
		}
	}
}
