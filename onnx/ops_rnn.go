package onnx

import (
	"strings"

	"github.com/emberml/ember"
)

// The recurrent layers RNN, GRU and LSTM, composed from ember ops: the
// input projection of every step is one MatMul, then each step adds the
// recurrent projection and applies the gates. ONNX's gate orders are
// RNN: one gate; GRU: z, r, h; LSTM: i, o, f, c (peepholes i, o, f).

func init() {
	reg(rnnOp("RNN"), "RNN")
	reg(rnnOp("GRU"), "GRU")
	reg(rnnOp("LSTM"), "LSTM")
}

type activation func(x *ember.Tensor) *ember.Tensor

// rnnActivations reads the activations attribute (defaults def per
// direction), consuming activation_alpha and activation_beta in order by
// the activations that take them.
func rnnActivations(n *node, def []string, dirs int) []activation {
	names := make([]string, 0, len(def)*dirs)
	for _, b := range n.attr("activations").GetStrings() {
		names = append(names, string(b))
	}
	if len(names) == 0 {
		for d := 0; d < dirs; d++ {
			names = append(names, def...)
		}
	}
	if len(names) != len(def)*dirs {
		fail("%d activations, want %d per direction × %d directions", len(names), len(def), dirs)
	}
	alphas, betas := n.floats("activation_alpha"), n.floats("activation_beta")
	take := func(v *[]float32, def float64) float64 {
		if len(*v) == 0 {
			return def
		}
		x := float64((*v)[0])
		*v = (*v)[1:]
		return x
	}
	res := make([]activation, len(names))
	for i, name := range names {
		switch strings.ToLower(name) {
		case "sigmoid":
			res[i] = (*ember.Tensor).Sigmoid
		case "tanh":
			res[i] = (*ember.Tensor).Tanh
		case "relu":
			res[i] = (*ember.Tensor).ReLU
		case "affine":
			a, b := take(&alphas, 1), take(&betas, 0)
			res[i] = func(x *ember.Tensor) *ember.Tensor { return x.MulScalar(a).AddScalar(b) }
		case "leakyrelu":
			a := take(&alphas, 0.01)
			res[i] = func(x *ember.Tensor) *ember.Tensor { return x.LeakyReLU(a) }
		case "thresholdedrelu":
			a := take(&alphas, 1)
			res[i] = func(x *ember.Tensor) *ember.Tensor { return ember.WhereTensorScalar(x.GtScalar(a), x, 0) }
		case "scaledtanh":
			a, b := take(&alphas, 1), take(&betas, 1)
			res[i] = func(x *ember.Tensor) *ember.Tensor { return x.MulScalar(b).Tanh().MulScalar(a) }
		case "hardsigmoid":
			a, b := take(&alphas, 0.2), take(&betas, 0.5)
			res[i] = func(x *ember.Tensor) *ember.Tensor { return x.MulScalar(a).AddScalar(b).Clamp(0, 1) }
		case "elu":
			a := take(&alphas, 1)
			res[i] = func(x *ember.Tensor) *ember.Tensor { return x.ELU(a) }
		case "softsign":
			res[i] = func(x *ember.Tensor) *ember.Tensor { return x.Div(x.Abs().AddScalar(1)) }
		case "softplus":
			res[i] = func(x *ember.Tensor) *ember.Tensor { return x.Exp().AddScalar(1).Log() }
		default:
			unsupported(n, "activation %q", name)
		}
	}
	return res
}

func rnnOp(kind string) opFunc {
	gates := map[string]int{"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
	defActs := map[string][]string{"RNN": {"Tanh"}, "GRU": {"Sigmoid", "Tanh"}, "LSTM": {"Sigmoid", "Tanh", "Tanh"}}[kind]
	return func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, w, r := opt(in, 0), opt(in, 1), opt(in, 2)
		if x == nil || w == nil || r == nil {
			fail("%s needs X, W and R", kind)
		}
		b, seqLens, h0 := opt(in, 3), opt(in, 4), opt(in, 5)
		var c0, p *ember.Tensor
		if kind == "LSTM" {
			c0, p = opt(in, 6), opt(in, 7)
			if n.int("input_forget", 0) != 0 {
				unsupported(n, "input_forget=1")
			}
		}
		layout := n.int("layout", 0)
		if layout != 0 && layout != 1 {
			fail("layout %d, want 0 or 1", layout)
		}
		dirName := n.str("direction", "forward")
		dirs := 1
		switch dirName {
		case "forward", "reverse":
		case "bidirectional":
			dirs = 2
		default:
			fail("direction %q, want forward, reverse or bidirectional", dirName)
		}
		if x.Dim() != 3 || w.Dim() != 3 || r.Dim() != 3 {
			fail("X, W and R must have rank 3, they have shapes %v, %v and %v", x.Shape(), w.Shape(), r.Shape())
		}
		if layout == 1 {
			x = x.Transpose(0, 1)
		}
		seq, batch, inSize := x.Size(0), x.Size(1), x.Size(2)
		hid := r.Size(2)
		if hs := n.int("hidden_size", int64(hid)); hs != int64(hid) {
			fail("hidden_size %d, but R has shape %v", hs, r.Shape())
		}
		want := func(name string, t *ember.Tensor, sh ...int) {
			if t != nil && !t.Shape().Equal(ember.Shape(sh)) {
				fail("%s has shape %v, want %v", name, t.Shape(), sh)
			}
		}
		want("W", w, dirs, gates*hid, inSize)
		want("R", r, dirs, gates*hid, hid)
		want("B", b, dirs, 2*gates*hid)
		want("sequence_lens", seqLens, batch)
		want("P", p, dirs, 3*hid)
		if layout == 1 {
			if h0 != nil {
				want("initial_h", h0, batch, dirs, hid)
				h0 = h0.Transpose(0, 1)
			}
			if c0 != nil {
				want("initial_c", c0, batch, dirs, hid)
				c0 = c0.Transpose(0, 1)
			}
		}
		want("initial_h", h0, dirs, batch, hid)
		want("initial_c", c0, dirs, batch, hid)
		acts := rnnActivations(n, defActs, dirs)
		clip := n.float("clip", 0)
		hasClip := n.has("clip")
		clipped := func(t *ember.Tensor) *ember.Tensor {
			if hasClip {
				return t.Clamp(-clip, clip)
			}
			return t
		}
		// masks[t]: [batch, 1], true where step t is inside the sequence
		var lens []int64
		if seqLens != nil {
			lens = host(seqLens)
			for _, l := range lens {
				if l < 0 || l > int64(seq) {
					fail("sequence_lens holds %d, out of range for %d steps", l, seq)
				}
			}
		}
		mask := func(t int) *ember.Tensor {
			if lens == nil {
				return nil
			}
			m := make([]bool, batch)
			all := true
			for i, l := range lens {
				m[i] = int64(t) < l
				all = all && m[i]
			}
			if all {
				return nil
			}
			return ember.FromSlice(m, ember.Shape{batch, 1}).To(x.Device())
		}
		var ys, hs, cs []*ember.Tensor
		for d := 0; d < dirs; d++ {
			reverse := dirName == "reverse" || d == 1
			wd, rd := w.Select(0, d), r.Select(0, d)
			xw := x.MatMul(wd.T()) // [seq, batch, gates·hid]
			var rb *ember.Tensor
			if b != nil {
				bd := b.Select(0, d)
				xw = xw.Add(bd.Narrow(0, 0, gates*hid))
				rb = bd.Narrow(0, gates*hid, gates*hid)
			}
			h := ember.Zeros(ember.Shape{batch, hid}, ember.On(x.Device()), ember.Dtype(x.DType()))
			if h0 != nil {
				h = h0.Select(0, d)
			}
			c := h
			if kind == "LSTM" {
				c = ember.ZerosLike(h)
				if c0 != nil {
					c = c0.Select(0, d)
				}
			}
			var pi, po, pf *ember.Tensor
			if p != nil {
				pd := p.Select(0, d)
				pi, po, pf = pd.Narrow(0, 0, hid), pd.Narrow(0, hid, hid), pd.Narrow(0, 2*hid, hid)
			}
			a := acts[d*len(defActs):]
			y := make([]*ember.Tensor, seq)
			for s := 0; s < seq; s++ {
				t := s
				if reverse {
					t = seq - 1 - s
				}
				xt := xw.Select(0, t)
				hr := h.MatMul(rd.T())
				if rb != nil {
					hr = hr.Add(rb)
				}
				var hn, cn *ember.Tensor
				switch kind {
				case "RNN":
					hn = a[0](clipped(xt.Add(hr)))
				case "GRU":
					z := a[0](clipped(xt.Narrow(1, 0, hid).Add(hr.Narrow(1, 0, hid))))
					rr := a[0](clipped(xt.Narrow(1, hid, hid).Add(hr.Narrow(1, hid, hid))))
					var ht *ember.Tensor
					if n.int("linear_before_reset", 0) != 0 {
						ht = xt.Narrow(1, 2*hid, hid).Add(rr.Mul(hr.Narrow(1, 2*hid, hid)))
					} else {
						rh := rr.Mul(h).MatMul(rd.Narrow(0, 2*hid, hid).T())
						if rb != nil {
							rh = rh.Add(rb.Narrow(0, 2*hid, hid))
						}
						ht = xt.Narrow(1, 2*hid, hid).Add(rh)
					}
					ht = a[1](clipped(ht))
					hn = z.RSubScalar(1).Mul(ht).Add(z.Mul(h))
				case "LSTM":
					g := xt.Add(hr)
					gi, gout, gf, gc := g.Narrow(1, 0, hid), g.Narrow(1, hid, hid), g.Narrow(1, 2*hid, hid), g.Narrow(1, 3*hid, hid)
					if p != nil {
						gi, gf = gi.Add(pi.Mul(c)), gf.Add(pf.Mul(c))
					}
					it, ft, ct := a[0](clipped(gi)), a[0](clipped(gf)), a[1](clipped(gc))
					cn = ft.Mul(c).Add(it.Mul(ct))
					if p != nil {
						gout = gout.Add(po.Mul(cn))
					}
					hn = a[0](clipped(gout)).Mul(a[2](cn))
				}
				if m := mask(t); m != nil {
					hn = ember.Where(m, hn, h)
					if cn != nil {
						cn = ember.Where(m, cn, c)
					}
					y[t] = ember.WhereTensorScalar(m, hn, 0)
				} else {
					y[t] = hn
				}
				h = hn
				if cn != nil {
					c = cn
				}
			}
			if seq > 0 {
				ys = append(ys, ember.Stack(y, 0))
			} else {
				ys = append(ys, ember.Zeros(ember.Shape{0, batch, hid}, ember.On(x.Device()), ember.Dtype(x.DType())))
			}
			hs, cs = append(hs, h), append(cs, c)
		}
		yAll, hAll := ember.Stack(ys, 1), ember.Stack(hs, 0) // [seq, dirs, batch, hid], [dirs, batch, hid]
		cAll := ember.Stack(cs, 0)
		if layout == 1 {
			yAll, hAll, cAll = yAll.Permute(2, 0, 1, 3), hAll.Transpose(0, 1), cAll.Transpose(0, 1)
		}
		if kind == "LSTM" {
			return []*ember.Tensor{yAll, hAll, cAll}
		}
		return []*ember.Tensor{yAll, hAll}
	}
}
