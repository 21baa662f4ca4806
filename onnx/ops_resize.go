package onnx

import (
	"math"

	"github.com/emberml/ember"
)

// resize implements Resize (and Upsample) separably: along each axis whose
// size changes, every output element is a weighted sum of a few input
// elements (1 for nearest, 2 for linear, 4 for cubic), gathered with
// IndexSelect.
func resize(n *node, in []*ember.Tensor) []*ember.Tensor {
	x := in[0]
	r := x.Dim()
	sh := x.Shape()
	var scales []float64
	var sizes []int64
	var roi []float64
	mode := n.str("mode", "nearest")
	ctm := n.str("coordinate_transformation_mode", "half_pixel")
	nearest := n.str("nearest_mode", "round_prefer_floor")
	switch {
	case n.opType == "Upsample":
		if n.opset < 9 {
			for _, f := range n.floats("scales") {
				scales = append(scales, float64(f))
			}
		} else {
			scales = hostF(in[1])
		}
		ctm, nearest = "asymmetric", "floor"
	case n.opset < 11:
		scales = hostF(in[1])
		ctm, nearest = "asymmetric", "floor"
	default:
		roi = hostF(opt(in, 1))
		scales = hostF(opt(in, 2))
		sizes = host(opt(in, 3))
	}
	if mode == "bilinear" {
		mode = "linear"
	}
	if n.int("antialias", 0) != 0 {
		unsupported(n, "antialias")
	}
	if n.has("axes") || n.str("keep_aspect_ratio_policy", "stretch") != "stretch" {
		unsupported(n, "axes / keep_aspect_ratio_policy")
	}
	out := make([]int, r)
	sc := make([]float64, r)
	lenR := make([]float64, r) // the resized length align_corners divides by
	for i := 0; i < r; i++ {
		switch {
		case len(sizes) == r:
			out[i] = int(sizes[i])
			sc[i] = float64(sizes[i]) / float64(sh[i])
			lenR[i] = float64(sizes[i])
		case len(scales) == r:
			sc[i] = scales[i]
			out[i] = int(math.Floor(float64(sh[i]) * scales[i]))
			lenR[i] = float64(sh[i]) * scales[i]
		default:
			fail("resize needs %d scales or sizes (got %v, %v)", r, scales, sizes)
		}
	}
	n.check(out)
	A := n.float("cubic_coeff_a", -0.75)
	excl := n.int("exclude_outside", 0) != 0
	extrap := n.float("extrapolation_value", 0)
	var outside *ember.Tensor
	y := x
	if mode != "nearest" && !isFloat(y) {
		y = y.Cast(ember.Float32)
	}
	for a := 0; a < r; a++ {
		if out[a] == sh[a] && sc[a] == 1 && ctm != "tf_crop_and_resize" {
			continue
		}
		L, O := sh[a], out[a]
		taps := map[string]int{"nearest": 1, "linear": 2, "cubic": 4}[mode]
		if taps == 0 {
			fail("resize mode %q", mode)
		}
		idx := make([][]int64, taps)
		wts := make([][]float64, taps)
		for k := range idx {
			idx[k] = make([]int64, O)
			wts[k] = make([]float64, O)
		}
		var out1 []bool
		for o := 0; o < O; o++ {
			var xo float64
			s := sc[a]
			switch ctm {
			case "half_pixel":
				xo = (float64(o)+0.5)/s - 0.5
			case "pytorch_half_pixel":
				if O > 1 {
					xo = (float64(o)+0.5)/s - 0.5
				}
			case "align_corners":
				if lenR[a] > 1 {
					xo = float64(o) * float64(L-1) / (lenR[a] - 1)
				}
			case "asymmetric":
				xo = float64(o) / s
			case "tf_half_pixel_for_nn":
				xo = (float64(o) + 0.5) / s
			case "tf_crop_and_resize":
				st, en := roi[a], roi[r+a]
				if O > 1 {
					xo = st*float64(L-1) + float64(o)*(en-st)*float64(L-1)/float64(O-1)
				} else {
					xo = 0.5 * (st + en) * float64(L-1)
				}
				if xo < 0 || xo > float64(L-1) {
					if out1 == nil {
						out1 = make([]bool, O)
					}
					out1[o] = true
				}
			default:
				fail("coordinate_transformation_mode %q", ctm)
			}
			clampI := func(i int64) int64 { return max(0, min(i, int64(L-1))) }
			switch mode {
			case "nearest":
				var i float64
				switch nearest {
				case "round_prefer_floor":
					if xo == math.Floor(xo)+0.5 {
						i = math.Floor(xo)
					} else {
						i = math.Round(xo)
					}
				case "round_prefer_ceil":
					i = math.Round(xo)
					if xo == math.Floor(xo)+0.5 {
						i = math.Ceil(xo)
					}
				case "floor":
					i = math.Floor(xo)
				case "ceil":
					i = math.Ceil(xo)
				default:
					fail("nearest_mode %q", nearest)
				}
				idx[0][o], wts[0][o] = clampI(int64(i)), 1
			case "linear":
				xc := xo
				if ctm != "tf_crop_and_resize" {
					xc = max(0, min(xo, float64(L-1)))
				}
				f := math.Floor(xc)
				t := xc - f
				idx[0][o], wts[0][o] = clampI(int64(f)), 1-t
				idx[1][o], wts[1][o] = clampI(int64(f)+1), t
			case "cubic":
				f := math.Floor(xo)
				t := xo - f
				cs := [4]float64{cubic(t+1, A), cubic(t, A), cubic(1-t, A), cubic(2-t, A)}
				sum := 0.0
				for k := 0; k < 4; k++ {
					j := int64(f) - 1 + int64(k)
					if excl && (j < 0 || j >= int64(L)) {
						cs[k] = 0
					}
					sum += cs[k]
				}
				for k := 0; k < 4; k++ {
					if excl {
						cs[k] /= sum
					}
					idx[k][o], wts[k][o] = clampI(int64(f)-1+int64(k)), cs[k]
				}
			}
		}
		wsh := ones(r)
		wsh[a] = O
		var acc *ember.Tensor
		for k := 0; k < taps; k++ {
			g := y.IndexSelect(a, i64(idx[k], y))
			if mode != "nearest" {
				w := ember.FromSlice(wts[k], ember.Shape(wsh), ember.On(y.Device())).Cast(y.DType())
				g = g.Mul(w)
			}
			if acc == nil {
				acc = g
			} else {
				acc = acc.Add(g)
			}
		}
		y = acc
		if out1 != nil {
			m := ember.FromSlice(out1, ember.Shape(wsh), ember.On(y.Device()))
			if outside == nil {
				outside = m
			} else {
				outside = outside.LogicalOr(m)
			}
		}
	}
	if outside != nil {
		y = ember.Where(outside, ember.Full(ember.Shape{}, extrap, ember.On(y.Device()), ember.Dtype(y.DType())), y)
	}
	return one(y.Cast(x.DType()))
}

func cubic(x, A float64) float64 {
	x = math.Abs(x)
	switch {
	case x <= 1:
		return ((A+2)*x-(A+3))*x*x + 1
	case x < 2:
		return ((A*x-5*A)*x+8*A)*x - 4*A
	}
	return 0
}

func init() { reg(resize, "Resize", "Upsample") }
