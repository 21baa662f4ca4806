package ember

import "testing"

// PyTorch 1.13 references from testdata/gen_highgrad_fixtures.py for the
// double backward of normalisation, attention, embedding and scans.

func TestGradPenaltyLayerNormFixture(t *testing.T) {
	var c map[string]fixTensor
	highgradCase(t, "gp_layernorm", &c)
	for _, dev := range testDevices() {
		p := map[string]*Tensor{}
		for _, k := range []string{"x", "w1", "b1", "lnw", "lnb", "w2", "b2"} {
			p[k] = c[k].on(dev).SetRequiresGrad(true)
		}
		h := LayerNorm(Linear(p["x"], p["w1"], p["b1"]), []int{8}, p["lnw"], p["lnb"], 1e-5).Tanh()
		d := Linear(h, p["w2"], p["b2"])
		gx := Grad([]*Tensor{d.Sum()}, []*Tensor{p["x"]}, CreateGraph(true))[0]
		what := " (layer_norm critic on " + dev.String() + ")"
		closeTo(t, "gx"+what, gx, c["gx"])
		gp := gx.Norm(2, Dims(1)).SubScalar(1).PowScalar(2).Mean()
		closeTo(t, "gp"+what, gp, c["gp"])
		gp.Backward()
		for k, g := range map[string]string{"w1": "gw1", "lnw": "glnw", "lnb": "glnb", "w2": "gw2", "x": "gxx"} {
			closeTo(t, g+what, p[k].Grad(), c[g])
		}
	}
}

func TestGradPenaltyTransformerFixture(t *testing.T) {
	var c map[string]fixTensor
	highgradCase(t, "gp_transformer", &c)
	names := []string{"ln1w", "ln1b", "wq", "wk", "wv", "wo", "ln2w", "ln2b", "f1", "f1b", "f2", "f2b", "hw"}
	for _, dev := range testDevices() {
		for _, k := range []Kernels{NativeKernels, GenericKernels} {
			p := map[string]*Tensor{}
			for _, n := range append(names, "x") {
				p[n] = c[n].on(dev).SetRequiresGrad(true)
			}
			x := p["x"]
			h := LayerNorm(x, []int{4}, p["ln1w"], p["ln1b"], 1e-5)
			q, kk, v := Linear(h, p["wq"], nil), Linear(h, p["wk"], nil), Linear(h, p["wv"], nil)
			a := k.ScaledDotProductAttention(q, kk, v, AttentionOptions{Causal: true})
			y := x.Add(Linear(a, p["wo"], nil))
			h = LayerNorm(y, []int{4}, p["ln2w"], p["ln2b"], 1e-5)
			y = y.Add(Linear(GELU(Linear(h, p["f1"], p["f1b"])), p["f2"], p["f2b"]))
			d := Linear(y.Mean(Dims(1)), p["hw"], nil)
			gx := Grad([]*Tensor{d.Sum()}, []*Tensor{x}, CreateGraph(true))[0]
			what := " (transformer critic on " + dev.String() + ", generic " + map[bool]string{true: "yes", false: "no"}[k == GenericKernels] + ")"
			closeTo(t, "gx"+what, gx, c["gx"])
			gp := gx.Reshape(2, -1).Norm(2, Dims(1)).SubScalar(1).PowScalar(2).Mean()
			closeTo(t, "gp"+what, gp, c["gp"])
			gp.Backward()
			closeTo(t, "x grad"+what, x.Grad(), c["gxx"])
			for _, n := range names {
				want, ok := c["g_"+n]
				if !ok { // no gradient in PyTorch: none here either, or zeros
					if g := p[n].Grad(); g != nil && g.Abs().Max().Item() != 0 {
						t.Errorf("%s grad%s: want none, got %v", n, what, g.Float64s())
					}
					continue
				}
				closeTo(t, n+" grad"+what, p[n].Grad(), want)
			}
		}
	}
}

func TestHVPMiscFixture(t *testing.T) {
	var c map[string]fixTensor
	highgradCase(t, "hvp_misc", &c)
	for _, dev := range testDevices() {
		x := c["x"].on(dev).SetRequiresGrad(true)
		w := c["w"].on(dev).SetRequiresGrad(true)
		bnw := c["bnw"].on(dev).SetRequiresGrad(true)
		idx := c["idx"].on(dev).Cast(Int64)
		e := Embedding(idx, w)
		y := BatchNorm(x, nil, nil, bnw, c["bnb"].on(dev), true, 0.1, 1e-5).Tanh().Mul(e)
		z := x.Select(1, 0).Mul(c["xz"].on(dev)).Cumprod(0)
		f := y.Sum().Add(x.Select(1, 1).AddScalar(0.5).Prod().MulScalar(0.3)).
			Add(z.Mul(Arange(1, 5, 1, On(dev), Dtype(Float64))).Sum())
		gs := Grad([]*Tensor{f}, []*Tensor{x, w}, CreateGraph(true))
		what := " on " + dev.String()
		closeTo(t, "gx"+what, gs[0], c["gx"])
		closeTo(t, "gw"+what, gs[1], c["gw"])
		s := gs[0].Mul(c["vx"].on(dev)).Sum().Add(gs[1].Mul(c["vw"].on(dev)).Sum())
		h := Grad([]*Tensor{s}, []*Tensor{x, w, bnw})
		closeTo(t, "hx"+what, h[0], c["hx"])
		closeTo(t, "hw"+what, h[1], c["hw"])
		closeTo(t, "hbnw"+what, h[2], c["hbnw"])
	}
}
