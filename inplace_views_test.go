package ember

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// In-place ops on views inside a graph (CopySlices): the idioms of
// testdata/gen_inplace_view_fixtures.py, one function per params.op, with
// inputs from PyTorch 1.13's fixture (ints are masks and indices).
var inplaceViewIdioms = map[string]func(in map[string]*Tensor) *Tensor{
	"narrow_add": func(in map[string]*Tensor) *Tensor { // y[:, :2] += b
		y := in["x"].MulScalar(2)
		y.Narrow(1, 0, 2).AddInPlace(in["b"])
		return y
	},
	"narrow_mul": func(in map[string]*Tensor) *Tensor {
		y := in["x"].MulScalar(2)
		y.Narrow(0, 0, 1).MulScalarInPlace(3)
		return y
	},
	"select_zero": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.Mul(x)
		y.Select(0, 0).ZeroInPlace()
		return y.Mul(x)
	},
	"rnn": func(in map[string]*Tensor) *Tensor { // out[:, t] = h
		x, w, u := in["x"], in["w"], in["u"]
		b, steps, hid := x.Size(0), x.Size(1), w.Size(1)
		out := Zeros(Shape{b, steps, hid}, On(x.Device()), Dtype(x.DType()))
		h := Zeros(Shape{b, hid}, On(x.Device()), Dtype(x.DType()))
		for t := 0; t < steps; t++ {
			h = x.Select(1, t).MatMul(w).Add(h.MatMul(u)).Tanh()
			out.Select(1, t).CopyFrom(h)
		}
		return out
	},
	"view_before": func(in map[string]*Tensor) *Tensor {
		y := in["x"].MulScalar(2)
		v1 := y.Select(0, 1)
		y.Select(0, 0).MulScalarInPlace(3)
		return v1.Mul(y.Select(0, 0))
	},
	"base_write": func(in map[string]*Tensor) *Tensor {
		y := in["x"].MulScalar(2)
		v := y.Select(0, 1)
		y.MulInPlace(in["x"])
		return v.MulScalar(5)
	},
	"chained": func(in map[string]*Tensor) *Tensor { // narrow of a transpose
		y := in["x"].MulScalar(2)
		y.T().Narrow(0, 1, 2).MulInPlace(in["w"])
		return y
	},
	"broadcast": func(in map[string]*Tensor) *Tensor {
		y := in["x"].MulScalar(2)
		y.Select(1, 1).AddInPlace(in["b"])
		return y
	},
	"masked": func(in map[string]*Tensor) *Tensor { // y[0][m] = 5
		y := in["x"].MulScalar(2)
		v := y.Select(0, 0)
		v.CopyFrom(WhereScalar(in["m"].Cast(Bool), 5, v))
		return y
	},
	"index": func(in map[string]*Tensor) *Tensor { // y[1][i] = src
		y := in["x"].MulScalar(2)
		v := y.Select(0, 1)
		v.CopyFrom(v.Scatter(0, in["i"], in["src"]))
		return y
	},
	"plain_buffer": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		buf := Zeros(Shape{4, 3}, On(x.Device()), Dtype(x.DType()))
		buf.Narrow(0, 1, 2).CopyFrom(x.MulScalar(2))
		return buf.MulScalar(3)
	},
	"overlapping": func(in map[string]*Tensor) *Tensor {
		y := in["x"].MulScalar(2)
		y.Narrow(1, 0, 2).MulInPlace(in["w"])
		y.Narrow(1, 1, 2).AddInPlace(in["b"])
		return y
	},
	"view_of_view": func(in map[string]*Tensor) *Tensor {
		y := in["x"].MulScalar(2)
		v := y.Select(0, 1)
		u := v.Narrow(0, 1, 2)
		v.Narrow(0, 0, 2).MulScalarInPlace(3)
		return u.Mul(y.Narrow(1, 0, 2))
	},
	"views_operand": func(in map[string]*Tensor) *Tensor { // y[0] += y[1]
		y := in["x"].MulScalar(2)
		y.Select(0, 0).AddInPlace(y.Select(0, 1))
		return y
	},
	"fill": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.Mul(x).AddScalar(1)
		y.Select(1, 1).FillInPlace(7)
		y.Select(0, 0).SqrtInPlace()
		return y
	},
	"view_self_add": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.MulScalar(2)
		v := y.Narrow(0, 0, 2)
		v.AddInPlace(v)
		return y.Mul(x)
	},
	"strided_base": func(in map[string]*Tensor) *Tensor {
		d := in["x"].MulScalar(2).T().Detach()
		d.Narrow(0, 0, 1).CopyFrom(in["h"].MulScalar(3))
		return d.Mul(in["x"].T())
	},
	"overlap_transpose": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.MulScalar(2)
		y.Narrow(1, 0, 2).MulInPlace(in["w"])
		y.T().Select(0, 1).MulInPlace(in["c"])
		return y.Mul(x)
	},
	"base_twice": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.MulScalar(2)
		v, u := y.Select(0, 1), y.Select(1, 1)
		y.MulInPlace(x)
		y.AddScalarInPlace(1)
		return v.Mul(u.Select(0, 0)).Add(u.Sum())
	},
	"inner_then_middle": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.MulScalar(2)
		v := y.Select(0, 1)
		u := v.Narrow(0, 1, 2)
		v.MulInPlace(x.Select(0, 0))
		u.MulInPlace(in["w"])
		return y.Mul(x).Add(u.Sum())
	},
	"negative_select": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.MulScalar(2)
		y.Select(1, -1).MulInPlace(x.Select(1, 0))
		y.Select(0, -2).AddInPlace(x.Select(0, 1))
		return y.Mul(y)
	},
	"permute_expand": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.MulScalar(2).Unsqueeze(0)
		y.Permute(2, 0, 1).Select(0, 1).MulInPlace(x.Select(1, 0).Unsqueeze(0))
		return y.Expand(2, 2, 3).Mul(x)
	},
	"div_views": func(in map[string]*Tensor) *Tensor {
		x := in["x"]
		y := x.MulScalar(2).AddScalar(3)
		y.Select(0, 0).Narrow(0, 0, 2).DivInPlace(in["w"].AddScalar(2))
		y.Select(1, 2).DivInPlace(x.Select(1, 1).AddScalar(3))
		return y.Mul(y)
	},
}

func inplaceViewIdiom(t *testing.T, c gradFixture) func(map[string]*Tensor) *Tensor {
	t.Helper()
	var op string
	c.param(t, "op", &op)
	f := inplaceViewIdioms[op]
	if f == nil {
		t.Fatalf("no idiom %q", op)
	}
	return f
}

// TestInPlaceViewFixtures: values and gradients of each idiom match
// PyTorch's, on every device.
func TestInPlaceViewFixtures(t *testing.T) {
	seen := map[string]bool{}
	runGradFixtures(t, "inplace_views", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var op string
		c.param(t, "op", &op)
		seen[op] = true
		return inplaceViewIdiom(t, c)(in)
	}, nil)
	for op := range inplaceViewIdioms {
		if !seen[op] {
			t.Errorf("idiom %s has no fixture", op)
		}
	}
}

// TestInPlaceViewMeta: the idioms on the meta device record the same
// graph: the output's and the gradients' shapes.
func TestInPlaceViewMeta(t *testing.T) {
	for _, c := range loadGradFixtures(t, "inplace_views") {
		in := map[string]*Tensor{}
		for k, v := range c.Inputs {
			if v.Ints != nil {
				in[k] = v.on(CPU).To(Meta)
				continue
			}
			in[k] = Zeros(Shape(v.Shape), On(Meta), Dtype(Float64)).SetRequiresGrad(true)
		}
		out := inplaceViewIdiom(t, c)(in)
		if !out.Shape().Equal(Shape(c.Output.Shape)) || !out.RequiresGrad() {
			t.Fatalf("%s: meta output %v (requires grad %v), want %v", c.Params["op"], out.Shape(), out.RequiresGrad(), c.Output.Shape)
		}
		out.Sum().Backward()
		for k, g := range c.Grads {
			if in[k].Grad() == nil || !in[k].Grad().Shape().Equal(Shape(g.Shape)) {
				t.Errorf("%s: meta grad %s = %v, want shape %v", c.Params["op"], k, in[k].Grad(), g.Shape)
			}
		}
	}
}

// TestInPlaceViewHistory: the grad_fn names PyTorch gives after a write
// through a view: the base's CopySlices, the written view's and an older
// view's AsStridedBackward0, whose gradients reach the new history.
func TestInPlaceViewHistory(t *testing.T) {
	for _, dev := range append(testDevices(), Meta) {
		x := Ones(Shape{2, 3}, On(dev)).SetRequiresGrad(true)
		y := x.MulScalar(2)
		old, w := y.Select(0, 1), y.Transpose(0, 1).Narrow(0, 0, 2)
		if old.GradFn() != "SelectBackward0" {
			t.Fatalf("%v: view before the write: %s", dev, old.GradFn())
		}
		w.MulScalarInPlace(3)
		for name, c := range map[string]struct {
			got, want string
		}{"base": {y.GradFn(), "CopySlices"}, "written view": {w.GradFn(), "AsStridedBackward0"}, "older view": {old.GradFn(), "AsStridedBackward0"}} {
			if c.got != c.want {
				t.Errorf("%v: %s grad_fn %s, want %s", dev, name, c.got, c.want)
			}
		}
		if y.IsLeaf() || !w.RequiresGrad() {
			t.Errorf("%v: the written tensors left the graph", dev)
		}
		// a plain buffer joins the graph through its view
		buf := Zeros(Shape{3}, On(dev))
		v := buf.Narrow(0, 2, 1)
		buf.Narrow(0, 0, 2).CopyFrom(x.Select(0, 0).Narrow(0, 0, 2))
		if buf.GradFn() != "CopySlices" || buf.IsLeaf() || !v.RequiresGrad() || v.GradFn() != "AsStridedBackward0" {
			t.Errorf("%v: plain buffer: %s leaf %v, older view requires grad %v (%s)", dev, buf.GradFn(), buf.IsLeaf(), v.RequiresGrad(), v.GradFn())
		}
		// without grad mode nothing is recorded
		NoGrad(func() {
			z := x.Detach().MulScalar(2)
			z.Narrow(0, 0, 1).AddScalarInPlace(1)
			if z.RequiresGrad() || z.GradFn() != "" {
				t.Errorf("%v: under NoGrad: %s", dev, z.GradFn())
			}
		})
		if dev == Meta {
			continue
		}
		// a second backward through a CopySlices that saved tensors
		y2 := x.MulScalar(2)
		y2.Narrow(1, 0, 2).MulInPlace(x.Narrow(1, 1, 2))
		s := y2.Sum()
		s.Backward()
		if err := Try(s.Backward); err == nil || !strings.Contains(err.Error(), "backward through the graph a second time") {
			t.Errorf("%v: second backward through CopySlices: %v", dev, err)
		}
	}
}

// TestInPlaceViewErrors: what PyTorch refuses, with its messages
// (testdata/fixtures/grad/inplace_view_errors.json).
func TestInPlaceViewErrors(t *testing.T) {
	versionRE := regexp.MustCompile(`is at version \d+; expected version \d+`)
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "inplace_view_errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, dev := range append(testDevices(), Meta) {
		ones := func(n int) *Tensor { return Ones(Shape{n}, On(dev)) }
		graph := func(n int) *Tensor { return ones(n).SetRequiresGrad(true).MulScalar(2) }
		cases := map[string]func(){
			"leaf_view":      func() { ones(3).SetRequiresGrad(true).Narrow(0, 0, 2).MulScalarInPlace(2) },
			"leaf_view_copy": func() { ones(3).SetRequiresGrad(true).View(3).Select(0, 0).CopyFrom(Scalar(1, On(dev))) },
			"no_grad_view": func() {
				y := graph(3)
				var v *Tensor
				NoGrad(func() { v = y.Narrow(0, 0, 2) })
				v.MulScalarInPlace(2)
			},
			"no_grad_view_plain": func() {
				var v *Tensor
				buf := Zeros(Shape{4}, On(dev))
				NoGrad(func() { v = buf.Narrow(0, 0, 2) })
				v.CopyFrom(ones(2).SetRequiresGrad(true))
			},
			"no_grad_view_indirect": func() {
				y := graph(3)
				var v *Tensor
				NoGrad(func() { v = y.Narrow(0, 0, 2) })
				y.MulScalarInPlace(2)
				v.MulScalar(1)
			},
			"split_output":   func() { graph(4).Split(2, 0)[1].MulScalarInPlace(2) },
			"chunk_view":     func() { graph(4).Chunk(2, 0)[0].Select(0, 0).MulScalarInPlace(2) },
			"split_indirect": func() { y := graph(4); a := y.Split(2, 0)[0]; y.MulScalarInPlace(2); a.MulScalar(1) },
			"split_plain":    func() { Zeros(Shape{4}, On(dev)).Split(2, 0)[0].CopyFrom(ones(2).SetRequiresGrad(true)) },
			"saved_then_view_write": func() {
				x := ones(4).SetRequiresGrad(true)
				y := x.MulScalar(2)
				p := y.Narrow(0, 0, 2).Mul(x.Narrow(0, 0, 2))
				y.Narrow(0, 2, 2).AddScalarInPlace(1)
				p.Sum().Backward()
			},
			"version_one_op": func() {
				y := ones(4).SetRequiresGrad(true).MulScalar(2)
				z := y.Mul(y)
				y.AddScalarInPlace(1)
				z.Sum().Backward()
			},
			"version_two_ops": func() {
				y := ones(4).SetRequiresGrad(true).MulScalar(2)
				z := y.Mul(y)
				y.AddScalarInPlace(1)
				y.MulScalarInPlace(2)
				z.Sum().Backward()
			},
			"version_self_operand": func() {
				y := ones(4).SetRequiresGrad(true).MulScalar(2)
				y.MulInPlace(y)
				y.Sum().Backward()
			},
			"version_view_copy": func() {
				x := ones(4).SetRequiresGrad(true)
				y := x.MulScalar(2)
				z := y.Sin()
				y.Narrow(0, 1, 3).CopyFrom(x.Narrow(0, 1, 3))
				z.Sum().Backward()
			},
			"overlap_expand":       func() { graph(3).Unsqueeze(0).Expand(2, 3).AddScalarInPlace(1) },
			"overlap_partial":      func() { y := graph(3); y.Narrow(0, 0, 2).AddInPlace(y.Narrow(0, 1, 2)) },
			"overlap_partial_copy": func() { y := graph(3); y.Narrow(0, 0, 2).CopyFrom(y.Narrow(0, 1, 2)) },
			"copy_slices_saved": func() {
				x := ones(4).SetRequiresGrad(true)
				w := x.Narrow(0, 0, 2).MulScalar(1)
				y := x.MulScalar(2)
				y.Narrow(0, 0, 2).MulInPlace(w)
				w.AddScalarInPlace(1)
				y.Sum().Backward()
			},
		}
		for name, msg := range want {
			f := cases[name]
			if f == nil {
				t.Errorf("no case %s", name)
				continue
			}
			// PyTorch names the saved tensor, ember the node: the versions
			// (one bump per in-place op) must match
			version := versionRE.FindString(msg)
			if i := strings.Index(msg, ": ["); i >= 0 {
				msg = msg[:i]
			}
			err := Try(f)
			if err != nil && !strings.Contains(err.Error(), version) {
				t.Errorf("%v: %s: %v, want %q", dev, name, err, version)
			}
			var ok bool
			if strings.HasPrefix(name, "overlap_") {
				_, ok = err.(*ShapeError)
			} else {
				_, ok = err.(*AutogradError)
			}
			if !ok || !strings.Contains(err.Error(), msg) {
				t.Errorf("%v: %s: %v (%T), want %q", dev, name, err, err, msg)
			}
		}
		// still allowed: the same writes with grad mode off, and a view of a
		// plain leaf written with a graph operand
		NoGrad(func() {
			x := ones(3).SetRequiresGrad(true)
			x.Narrow(0, 0, 2).MulScalarInPlace(2)
			graph(4).Split(2, 0)[0].MulScalarInPlace(2)
		})
		p := ones(3)
		p.Narrow(0, 0, 2).MulInPlace(ones(2).SetRequiresGrad(true))
		if p.GradFn() != "CopySlices" {
			t.Errorf("%v: plain leaf written through a view: %q", dev, p.GradFn())
		}
	}
}
