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

// PyTorch 1.13 references from testdata/gen_gridsample_fixtures.py.

// TestGridSampleAsTorch checks every mode × padding mode × align_corners
// (4-D; bilinear and nearest 5-D), float64 and float32, output and the
// gradients with respect to the input and the grid, on every device.
func TestGridSampleAsTorch(t *testing.T) {
	runGradFixtures(t, "grid_sample", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var o GridSampleOptions
		var dt string
		c.param(t, "mode", &o.Mode)
		c.param(t, "padding_mode", &o.PaddingMode)
		c.param(t, "align", &o.AlignCorners)
		c.param(t, "dtype", &dt)
		x, g := in["x"], in["grid"]
		if dt == "float32" {
			return GridSample(x.Cast(Float32), g.Cast(Float32), o).Cast(Float64)
		}
		return GridSample(x, g, o)
	}, nil)
}

func TestAffineGridAsTorch(t *testing.T) {
	runGradFixtures(t, "affine_grid", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var size []int
		var align bool
		c.param(t, "size", &size)
		c.param(t, "align", &align)
		return AffineGrid(in["theta"], size, align)
	}, nil)
}

func TestGridSampleErrorsAsTorch(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "grid_sample_errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		Op     string            `json:"op"`
		A      []int             `json:"a"`
		B      []int             `json:"b"`
		Params map[string]string `json:"params"`
		Type   string            `json:"type"`
		Msg    string            `json:"msg"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, dev := range append(testDevices(), Meta) {
		for i, c := range cs {
			err := Try(func() {
				if c.Op == "grid_sample" {
					GridSample(Zeros(Shape(c.A), On(dev)), Zeros(Shape(c.B), On(dev)),
						GridSampleOptions{Mode: c.Params["mode"], PaddingMode: c.Params["padding_mode"]})
				} else {
					AffineGrid(Zeros(Shape(c.A), On(dev)), c.B, false)
				}
			})
			var ve *ValueError
			var se *ShapeError
			if err == nil || !errors.As(err, &ve) && !errors.As(err, &se) {
				t.Errorf("%v case %d: %T %v, PyTorch %s", dev, i, err, err, c.Msg)
				continue
			}
			if !strings.Contains(err.Error(), c.Msg) {
				t.Errorf("%v case %d: %v\nPyTorch: %s", dev, i, err, c.Msg)
			}
		}
	}
	for _, f := range []func(){
		func() {
			GridSample(Zeros(Shape{1, 1, 2, 2}), Zeros(Shape{1, 1, 1, 2}, Dtype(Float64)), GridSampleOptions{})
		},
		func() {
			GridSample(Zeros(Shape{1, 1, 2, 2}, Dtype(Int64)), Zeros(Shape{1, 1, 1, 2}, Dtype(Int64)), GridSampleOptions{})
		},
		func() { AffineGrid(Zeros(Shape{1, 2, 3}, Dtype(Int64)), []int{1, 1, 2, 2}, false) },
	} {
		err := Try(f)
		var de *DTypeError
		var ve *ValueError
		if !errors.As(err, &de) && !errors.As(err, &ve) {
			t.Errorf("dtype misuse: %T %v", err, err)
		}
	}
}

func TestGridSampleShapesMeta(t *testing.T) {
	x := Empty(Shape{2, 3, 5, 7}, On(Meta))
	for _, mode := range []string{"bilinear", "nearest", "bicubic"} {
		y := GridSample(x, Empty(Shape{2, 4, 6, 2}, On(Meta)), GridSampleOptions{Mode: mode})
		if !y.Shape().Equal(Shape{2, 3, 4, 6}) || y.Device() != Meta {
			t.Fatalf("%s: %v on %v", mode, y.Shape(), y.Device())
		}
	}
	y := GridSample(Empty(Shape{1, 2, 3, 4, 5}, On(Meta)), Empty(Shape{1, 6, 7, 8, 3}, On(Meta)), GridSampleOptions{})
	if !y.Shape().Equal(Shape{1, 2, 6, 7, 8}) {
		t.Fatal(y.Shape())
	}
	a := AffineGrid(Empty(Shape{2, 3, 4}, On(Meta)), []int{2, 5, 6, 7, 8}, true)
	if !a.Shape().Equal(Shape{2, 6, 7, 8, 3}) {
		t.Fatal(a.Shape())
	}
	// empty grid and empty batch, as PyTorch
	for _, dev := range testDevices() {
		e := GridSample(Zeros(Shape{0, 3, 4, 5}, On(dev)), Zeros(Shape{0, 3, 3, 2}, On(dev)), GridSampleOptions{})
		f := GridSample(Zeros(Shape{2, 3, 4, 5}, On(dev)), Zeros(Shape{2, 0, 3, 2}, On(dev)), GridSampleOptions{})
		if !e.Shape().Equal(Shape{0, 3, 3, 3}) || !f.Shape().Equal(Shape{2, 3, 0, 3}) {
			t.Fatal(e.Shape(), f.Shape())
		}
	}
}

// TestGridSampleIdentity: the identity affine grid with align_corners
// samples every pixel centre, so bilinear and bicubic return the input
// (hand-worked: the weights are exactly 1 and 0).
func TestGridSampleIdentity(t *testing.T) {
	for _, dev := range testDevices() {
		x := Arange(0, 2*3*4*5, 1, On(dev), Dtype(Float64)).Reshape(2, 3, 4, 5)
		theta := FromSlice([]float64{1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0}, Shape{2, 2, 3}, On(dev))
		for _, align := range []bool{false, true} {
			g := AffineGrid(theta, []int{2, 3, 4, 5}, align)
			for _, mode := range []string{"bilinear", "nearest", "bicubic"} {
				y := GridSample(x, g, GridSampleOptions{Mode: mode, AlignCorners: align})
				if !AllClose(y, x, 1e-12, 1e-12) {
					t.Fatalf("%v %s align=%v: %v", dev, mode, align, y)
				}
			}
		}
	}
}

// TestGridSampleOnEmulatedCUDA reruns the PyTorch fixtures with an
// emulated cuda:0 (the CUDA kernels of the ops GridSample is composed of).
func TestGridSampleOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	t.Run("GridSample", TestGridSampleAsTorch)
	t.Run("AffineGrid", TestAffineGridAsTorch)
	t.Run("Errors", TestGridSampleErrorsAsTorch)
	t.Run("Identity", TestGridSampleIdentity)
}

// TestGridSampleNonFinite: NaN and ±Inf coordinates give PyTorch 1.13's
// values (NaN through the zeros padding's and bicubic's weights, the
// clipped border or reflected pixel otherwise); huge ones do not panic.
func TestGridSampleNonFinite(t *testing.T) {
	nan := math.NaN()
	want := map[string][]float64{ // PyTorch 1.13, align_corners=False
		"bilinear zeros": {nan, nan, nan}, "bilinear border": {1, 5, 1}, "bilinear reflection": {1, 1, 1},
		"nearest zeros": {0, 0, 0}, "nearest border": {1, 5, 1}, "nearest reflection": {1, 1, 1},
		"bicubic zeros": {nan, nan, nan}, "bicubic border": {nan, nan, nan}, "bicubic reflection": {nan, nan, nan},
	}
	for _, dev := range testDevices() {
		x := Arange(1, 6, 1, Dtype(Float64), On(dev)).Reshape(1, 1, 1, 5)
		g := FromSlice([]float64{nan, 0, math.Inf(1), 0, math.Inf(-1), 0, 1e300, 0, -1e300, 0}, Shape{1, 1, 5, 2}, On(dev))
		for k, w := range want {
			f := strings.Fields(k)
			got := GridSample(x, g, GridSampleOptions{Mode: f[0], PaddingMode: f[1]}).Float64s()
			for i, v := range w {
				if !(v == got[i] || math.IsNaN(v) && math.IsNaN(got[i])) {
					t.Fatalf("%v %s: %v, PyTorch %v", dev, k, got[:3], w)
				}
			}
		}
	}
}

// TestGridSampleNonFiniteInput: out-of-bounds taps read zero, not the
// pixel their index was clamped to, so an Inf pixel does not turn the
// samples near the border into NaN (here the Inf is pixel 0 and the
// samples read pixels 4 and beyond). PyTorch 1.13, align_corners=False:
//
//	x = torch.tensor([inf, 2., 3., 4., 5.], dtype=torch.float64).reshape(1, 1, 1, 5)
//	g = torch.tensor([0.9, 0., 1.5, 0.]).reshape(1, 1, 2, 2)  # 3-D: [0.9, 0, 0, 1.5, 0, 0]
//	y = F.grid_sample(x, g, mode, padding_mode); y.sum().backward()
func TestGridSampleNonFiniteInput(t *testing.T) {
	inf := math.Inf(1)
	type want struct{ y, dx, dg []float64 }
	cases := map[string]want{
		"bilinear zeros":      {[]float64{3.75, 0}, []float64{0, 0, 0, 0, 0.75}, []float64{-12.5, -1.875, 0, 0}},
		"bilinear border":     {[]float64{5, 5}, []float64{0, 0, 0, 0, 2}, []float64{0, 0, 0, 0}},
		"bilinear reflection": {[]float64{5, 4.25}, []float64{0, 0, 0, 0.75, 1.25}, []float64{0, 0, -2.5, 0}},
		"bicubic zeros":       {[]float64{3.97265625, -0.17578125}, []float64{0, 0, 0, -0.10546875, 0.84375}, []float64{-12.5390625, 0, 2.9296875, 0}},
		"bicubic border":      {[]float64{5.10546875, 5}, []float64{0, 0, 0, -0.10546875, 2.10546875}, []float64{0.3515625, 0, 0, 0}},
		"bicubic reflection":  {[]float64{5.140625, 4.33203125}, []float64{0, 0, -0.10546875, 0.73828125, 1.3671875}, []float64{0.9375, 0, -2.9296875, 0}},
		"3d zeros":            {[]float64{3.75, 0}, []float64{0, 0, 0, 0, 0.75}, []float64{-12.5, -1.875, -1.875, 0, 0, 0}},
		"3d border":           {[]float64{5, 5}, []float64{0, 0, 0, 0, 2}, []float64{0, 0, 0, 0, 0, 0}},
		"3d reflection":       {[]float64{5, 4.25}, []float64{0, 0, 0, 0.75, 1.25}, []float64{0, 0, 0, -2.5, 0, 0}},
	}
	same := func(a, b []float64) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return len(a) == len(b)
	}
	for _, dev := range testDevices() {
		for k, w := range cases {
			f := strings.Fields(k)
			o := GridSampleOptions{Mode: f[0], PaddingMode: f[1]}
			xs, gs := Shape{1, 1, 1, 5}, Shape{1, 1, 2, 2}
			gv := []float64{0.9, 0, 1.5, 0}
			if f[0] == "3d" {
				o.Mode, xs, gs = "bilinear", Shape{1, 1, 1, 1, 5}, Shape{1, 1, 1, 2, 3}
				gv = []float64{0.9, 0, 0, 1.5, 0, 0}
			}
			x := FromSlice([]float64{inf, 2, 3, 4, 5}, xs, On(dev)).SetRequiresGrad(true)
			g := FromSlice(gv, gs, On(dev)).SetRequiresGrad(true)
			y := GridSample(x, g, o)
			y.Sum().Backward()
			if got := y.Float64s(); !same(got, w.y) {
				t.Errorf("%v %s: %v, PyTorch %v", dev, k, got, w.y)
			}
			if got := x.Grad().Float64s(); !same(got, w.dx) {
				t.Errorf("%v %s: input grad %v, PyTorch %v", dev, k, got, w.dx)
			}
			if got := g.Grad().Float64s(); !same(got, w.dg) {
				t.Errorf("%v %s: grid grad %v, PyTorch %v", dev, k, got, w.dg)
			}
		}
	}
}

// TestGridSampleNonFinite3D: PyTorch's 3-D kernel clips as
// std::min(size-1, std::max(x, 0)), so a NaN coordinate (and ±Inf
// reflected, which is NaN) reads the last pixel under border and
// reflection padding, where its 2-D kernel reads the first; under zeros
// padding it skips NaN taps (0, where 2-D gives NaN). PyTorch 1.13:
//
//	x = torch.arange(1., 6., dtype=torch.float64).reshape(1, 1, 1, 1, 5)
//	g = torch.tensor([nan, 0, 0, inf, 0, 0, -inf, 0, 0, 1e300, 0, 0, -1e300, 0, 0]).reshape(1, 1, 1, 5, 3)
//	F.grid_sample(x, g, mode, padding_mode, align_corners)
func TestGridSampleNonFinite3D(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	want := map[string][]float64{ // the same for both align_corners
		"zeros": {0, 0, 0, 0, 0}, "border": {5, 5, 1, 5, 1}, "reflection": {5, 5, 5, 1, 1},
	}
	for _, dev := range testDevices() {
		x := Arange(1, 6, 1, Dtype(Float64), On(dev)).Reshape(1, 1, 1, 1, 5)
		g := FromSlice([]float64{nan, 0, 0, inf, 0, 0, -inf, 0, 0, 1e300, 0, 0, -1e300, 0, 0}, Shape{1, 1, 1, 5, 3}, On(dev))
		for _, mode := range []string{"bilinear", "nearest"} {
			for pad, w := range want {
				for _, align := range []bool{false, true} {
					got := GridSample(x, g, GridSampleOptions{Mode: mode, PaddingMode: pad, AlignCorners: align}).Float64s()
					for i := range w {
						if got[i] != w[i] {
							t.Errorf("%v %s %s align=%v: %v, PyTorch %v", dev, mode, pad, align, got, w)
							break
						}
					}
				}
			}
		}
	}
}
