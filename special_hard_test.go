package ember

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestSpecialHardPoints checks the special functions against PyTorch 1.13
// where precision is hard to keep: erfinv within 1e-15 of ±1, lgamma of
// subnormals, xlogy and logit of subnormals (testdata/gen_special_hard_fixtures.py).
func TestSpecialHardPoints(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "special", "special_hard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Op   string  `json:"op"`
		DT   string  `json:"dtype"`
		X    []any   `json:"x"`
		Want []any   `json:"want"`
		Rtol float64 `json:"rtol"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	num := func(v any) float64 {
		switch v {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		case "nan":
			return math.NaN()
		}
		return v.(float64)
	}
	for _, dev := range testDevices() {
		for _, c := range cases {
			xs := make([]float64, len(c.X))
			for i, v := range c.X {
				xs[i] = num(v)
			}
			dt := Float64
			if c.DT == "float32" {
				dt = Float32
			}
			x := FromSlice(xs, nil).Cast(dt).To(dev)
			var got []float64
			switch c.Op {
			case "erfinv":
				got = x.Erfinv().Float64s()
			case "lgamma":
				got = x.Lgamma().Float64s()
			case "xlogy":
				got = OnesLike(x).MulScalar(2).Xlogy(x).Float64s()
			case "logit":
				got = x.Logit(-1).Float64s()
			case "log":
				got = x.Log().Float64s()
			case "log10":
				got = x.Log10().Float64s()
			}
			for i, w := range c.Want {
				want := num(w)
				if !(math.Abs(got[i]-want) <= c.Rtol*math.Abs(want)) && got[i] != want && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
					t.Errorf("%s(%s %v) on %v = %v, PyTorch %v", c.Op, c.DT, xs[i], dev, got[i], want)
				}
			}
		}
	}
}

// TestLogitGradAtOne: d/dx logit(x) = 1/(x(1−x)) is 1/+0 = +Inf at x = 1
// (PyTorch 1.13's logit_backward, with eps 0, 1e-8 (1−eps rounds to 1 in
// float32) and none), not −Inf from a −0 for 1 − x.
func TestLogitGradAtOne(t *testing.T) {
	for _, dev := range testDevices() {
		for _, eps := range []float64{-1, 0, 1e-8} {
			x := FromSlice([]float32{1, 0.5}, nil).To(dev).SetRequiresGrad(true)
			x.Logit(eps).Sum().Backward()
			if g := x.Grad().Float64s(); !math.IsInf(g[0], 1) || g[1] != 4 {
				t.Errorf("logit eps %v on %v: grad %v, want [+Inf 4]", eps, dev, g)
			}
		}
	}
}

// TestRSubScalarZeroSign: 1 − t is +0 at t = 1 as PyTorch's rsub, so
// 1/(1 − t) is +Inf there, and asin's gradient 1/√(1 − x²) is +Inf at ±1.
func TestRSubScalarZeroSign(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]float32{1, -1}, nil).To(dev).SetRequiresGrad(true)
		if r := x.RSubScalar(1).Reciprocal().Float64s(); !math.IsInf(r[0], 1) || r[1] != 0.5 {
			t.Errorf("1/(1 − [1 −1]) on %v = %v, want [+Inf 0.5]", dev, r)
		}
		x.Asin().Sum().Backward()
		if g := x.Grad().Float64s(); !math.IsInf(g[0], 1) || !math.IsInf(g[1], 1) {
			t.Errorf("asin grad at ±1 on %v = %v, want [+Inf +Inf]", dev, g)
		}
	}
}
