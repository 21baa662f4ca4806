package ember

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PyTorch 1.13 references from testdata/gen_interp_fixtures.py.

func interpFixtureOptions(t *testing.T, c gradFixture) InterpolateOptions {
	var o InterpolateOptions
	c.param(t, "mode", &o.Mode)
	if _, ok := c.Params["size"]; ok {
		c.param(t, "size", &o.Size)
	}
	if _, ok := c.Params["scale"]; ok {
		c.param(t, "scale", &o.ScaleFactor)
	}
	if _, ok := c.Params["align"]; ok {
		c.param(t, "align", &o.AlignCorners)
	}
	if _, ok := c.Params["recompute"]; ok {
		c.param(t, "recompute", &o.RecomputeScaleFactor)
	}
	return o
}

// TestGradFixturesInterpolate checks every mode's output and input
// gradient, in float64 and (on inputs PyTorch rounded to float32) in
// float32, where the source indices and weights are float32's.
func TestGradFixturesInterpolate(t *testing.T) {
	runGradFixtures(t, "interp", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		o := interpFixtureOptions(t, c)
		var dt string
		c.param(t, "dtype", &dt)
		x := in["x"]
		if dt == "float32" {
			return Interpolate(x.Cast(Float32), o).Cast(Float64)
		}
		return Interpolate(x, o)
	}, nil)
}

func TestGradFixturesPixelShuffle(t *testing.T) {
	runGradFixtures(t, "pixel_shuffle", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var op string
		var r int
		c.param(t, "op", &op)
		c.param(t, "r", &r)
		if op == "pixel_shuffle" {
			return PixelShuffle(in["x"], r)
		}
		return PixelUnshuffle(in["x"], r)
	}, nil)
}

func foldFixtureArgs(t *testing.T, p map[string]json.RawMessage) (k, d, pad, s [2]int) {
	get := func(name string) [2]int {
		var v any
		if err := json.Unmarshal(p[name], &v); err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case float64:
			return [2]int{int(v), int(v)}
		case []any:
			return [2]int{int(v[0].(float64)), int(v[1].(float64))}
		}
		t.Fatalf("param %s: %v", name, v)
		return [2]int{}
	}
	return get("k"), get("d"), get("p"), get("s")
}

func foldOutput(t *testing.T, p map[string]json.RawMessage) [2]int {
	var v []int
	if err := json.Unmarshal(p["out"], &v); err != nil {
		t.Fatal(err)
	}
	return [2]int{v[0], v[1]}
}

func TestGradFixturesFold(t *testing.T) {
	runGradFixtures(t, "fold", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var op string
		c.param(t, "op", &op)
		k, d, p, s := foldFixtureArgs(t, c.Params)
		if op == "unfold" {
			return Unfold(in["x"], k, d, p, s)
		}
		return Fold(in["x"], foldOutput(t, c.Params), k, d, p, s)
	}, nil)
}

type interpErrorFixture struct {
	Params map[string]json.RawMessage `json:"params"`
	Shape  []int                      `json:"shape"`
	DType  string                     `json:"dtype"`
	Type   string                     `json:"type"`
	Msg    string                     `json:"msg"`
}

// TestInterpErrorsAsTorch runs the calls PyTorch refuses: each panics
// with a typed error carrying PyTorch's message, on every device and the
// meta device.
func TestInterpErrorsAsTorch(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "interp_errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []interpErrorFixture
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, dev := range append(testDevices(), Meta) {
		for i, c := range cs {
			var op string
			json.Unmarshal(c.Params["op"], &op)
			dt := Float64
			if c.DType == "int64" {
				dt = Int64
			}
			x := Zeros(Shape(c.Shape), Dtype(dt), On(dev))
			err := Try(func() {
				switch op {
				case "interpolate":
					var o InterpolateOptions
					json.Unmarshal(c.Params["mode"], &o.Mode)
					var size, scale any
					json.Unmarshal(c.Params["size"], &size)
					json.Unmarshal(c.Params["scale_factor"], &scale)
					switch v := size.(type) {
					case float64:
						o.Size = []int{int(v)}
					case []any:
						for _, e := range v {
							o.Size = append(o.Size, int(e.(float64)))
						}
					}
					switch v := scale.(type) {
					case float64:
						o.ScaleFactor = []float64{v}
					case []any:
						for _, e := range v {
							o.ScaleFactor = append(o.ScaleFactor, e.(float64))
						}
					}
					json.Unmarshal(c.Params["align_corners"], &o.AlignCorners)
					json.Unmarshal(c.Params["recompute_scale_factor"], &o.RecomputeScaleFactor)
					Interpolate(x, o)
				case "pixel_shuffle", "pixel_unshuffle":
					var r int
					json.Unmarshal(c.Params["r"], &r)
					if op == "pixel_shuffle" {
						PixelShuffle(x, r)
					} else {
						PixelUnshuffle(x, r)
					}
				case "unfold":
					k, d, p, s := foldFixtureArgs(t, c.Params)
					Unfold(x, k, d, p, s)
				case "fold":
					k, d, p, s := foldFixtureArgs(t, c.Params)
					Fold(x, foldOutput(t, c.Params), k, d, p, s)
				}
			})
			if err == nil {
				t.Errorf("%v case %d %s %v: no error, PyTorch: %s", dev, i, op, c.Params, c.Msg)
				continue
			}
			var ve *ValueError
			var se *ShapeError
			var de *DTypeError
			if !errors.As(err, &ve) && !errors.As(err, &se) && !errors.As(err, &de) {
				t.Errorf("case %d: %T %v", i, err, err)
			}
			if c.Type == "IndexError" { // unfold of a 2-D input: PyTorch's own dim check fires first
				continue
			}
			msg := c.Msg
			if c.Type == "ValueError" && strings.Contains(msg, "scale_factor of shape") {
				msg = msg[:strings.Index(msg, "scale_factor of shape")] // Python prints its list
			}
			if !strings.Contains(err.Error(), msg) {
				t.Errorf("%v case %d %s: %v\nPyTorch: %s", dev, i, op, err, c.Msg)
			}
		}
	}
}

// TestInterpolateShapesMeta checks output shapes on the meta device.
func TestInterpolateShapesMeta(t *testing.T) {
	x := Empty(Shape{2, 3, 5, 7}, On(Meta))
	for _, c := range []struct {
		o    InterpolateOptions
		want Shape
	}{
		{InterpolateOptions{Size: []int{4}}, Shape{2, 3, 4, 4}},
		{InterpolateOptions{ScaleFactor: []float64{2.5, 0.5}, Mode: "bilinear"}, Shape{2, 3, 12, 3}},
		{InterpolateOptions{ScaleFactor: []float64{1.5}, Mode: "bicubic", AlignCorners: true}, Shape{2, 3, 7, 10}},
		{InterpolateOptions{ScaleFactor: []float64{0.5}, Mode: "area"}, Shape{2, 3, 2, 3}},
		{InterpolateOptions{Size: []int{3, 9}, Mode: "nearest-exact"}, Shape{2, 3, 3, 9}},
	} {
		if got := Interpolate(x, c.o).Shape(); !got.Equal(c.want) {
			t.Errorf("%+v: shape %v, want %v", c.o, got, c.want)
		}
	}
	if got := PixelShuffle(Empty(Shape{2, 12, 3, 4}, On(Meta)), 2).Shape(); !got.Equal(Shape{2, 3, 6, 8}) {
		t.Errorf("pixel_shuffle shape %v", got)
	}
	if got := Unfold(Empty(Shape{2, 3, 5, 6}, On(Meta)), [2]int{2, 3}, [2]int{1, 1}, [2]int{1, 0}, [2]int{2, 1}).Shape(); !got.Equal(Shape{2, 18, 12}) {
		t.Errorf("unfold shape %v", got)
	}
	if got := Fold(Empty(Shape{18, 12}, On(Meta)), [2]int{5, 6}, [2]int{2, 3}, [2]int{1, 1}, [2]int{1, 0}, [2]int{2, 1}).Shape(); !got.Equal(Shape{3, 5, 6}) {
		t.Errorf("fold shape %v", got)
	}
}

// TestInterpolateHalf: bfloat16 and float16 interpolate in float32 and
// round once; PyTorch computed the reference that way
// (testdata/fixtures/grad/interp_half.json), bit for bit but bicubic.
func TestInterpolateHalf(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "interp_half.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		Params   map[string]json.RawMessage `json:"params"`
		Input    fixTensor                  `json:"input"`
		BFloat16 fixTensor                  `json:"bfloat16"`
		Float16  fixTensor                  `json:"float16"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, dev := range testDevices() {
		for i, c := range cs {
			o := interpFixtureOptions(t, gradFixture{Params: c.Params})
			for _, dt := range []DType{BFloat16, Float16} {
				want := c.BFloat16
				if dt == Float16 {
					want = c.Float16
				}
				got := Interpolate(c.Input.on(dev).Cast(dt), o)
				if got.DType() != dt {
					t.Fatalf("case %d %v: dtype %v", i, dt, got.DType())
				}
				if !got.Shape().Equal(Shape(want.Shape)) {
					t.Fatalf("case %d %v: shape %v, PyTorch %v", i, dt, got.Shape(), want.Shape)
				}
				// bicubic's float32 sums of four products may differ from
				// PyTorch's in the last float32 bit, which can flip the
				// final rounding: one unit in the last place
				ulp := 0.0
				if o.Mode == "bicubic" {
					ulp = math.Ldexp(1, -7)
					if dt == Float16 {
						ulp = math.Ldexp(1, -10)
					}
				}
				for j, v := range got.Float64s() {
					if math.Abs(v-want.Data[j]) > ulp*math.Abs(want.Data[j]) {
						t.Fatalf("%v case %d (%s) %v [%d] = %v, PyTorch %v", dev, i, o.Mode, dt, j, v, want.Data[j])
					}
				}
			}
		}
	}
}

// TestInterpolateBilinearSpeed: a 1×64×128×128 bilinear 2× upsample
// takes milliseconds.
func TestInterpolateBilinearSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	x := Randn(Shape{1, 64, 128, 128})
	o := InterpolateOptions{ScaleFactor: []float64{2}, Mode: "bilinear"}
	Interpolate(x, o)
	start := time.Now()
	Interpolate(x, o)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("bilinear 2x of 1x64x128x128 took %v", d)
	} else {
		t.Logf("bilinear 2x of 1x64x128x128: %v", d)
	}
}

// TestResampleHugeSizesRefused: sizes whose host-built indices would not
// fit are a *ShapeError, not a fatal out-of-memory; so are overflowing
// products.
func TestResampleHugeSizesRefused(t *testing.T) {
	x := Zeros(Shape{1, 1, 2, 2})
	for name, f := range map[string]func(){
		"size":    func() { Interpolate(x, InterpolateOptions{Size: []int{1 << 40, 1}}) },
		"scale":   func() { Interpolate(x, InterpolateOptions{ScaleFactor: []float64{1e15}, Mode: "bilinear"}) },
		"scale2":  func() { Interpolate(x, InterpolateOptions{ScaleFactor: []float64{1e300}}) },
		"shuffle": func() { PixelShuffle(Zeros(Shape{1, 4, 1, 1}), 1<<40) },
		"unfold":  func() { Unfold(x, [2]int{1, 1}, [2]int{1, 1}, [2]int{1 << 20, 1 << 20}, [2]int{1, 1}) },
		"fold": func() {
			Fold(Zeros(Shape{1, 1, 1}), [2]int{1 << 30, 1 << 30}, [2]int{1 << 30, 1 << 30}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1})
		},
	} {
		err := Try(f)
		var se *ShapeError
		var ve *ValueError
		if !errors.As(err, &se) && !errors.As(err, &ve) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestResampleEmptyBatch: a batch of 0 passes through, as PyTorch 1.13's
// (shapes from PyTorch), on every device.
func TestResampleEmptyBatch(t *testing.T) {
	for _, dev := range append(testDevices(), Meta) {
		x := Zeros(Shape{0, 2, 3, 3}, On(dev))
		for _, c := range []struct {
			got  *Tensor
			want Shape
		}{
			{Interpolate(x, InterpolateOptions{Size: []int{4}, Mode: "bicubic"}), Shape{0, 2, 4, 4}},
			{Interpolate(x, InterpolateOptions{Size: []int{4}, Mode: "nearest"}), Shape{0, 2, 4, 4}},
			{Interpolate(x, InterpolateOptions{Size: []int{4}, Mode: "area"}), Shape{0, 2, 4, 4}},
			{Unfold(x, [2]int{2, 2}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}), Shape{0, 8, 4}},
			{Fold(Zeros(Shape{0, 8, 4}, On(dev)), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}), Shape{0, 2, 3, 3}},
			{PixelShuffle(Zeros(Shape{0, 4, 3, 3}, On(dev)), 2), Shape{0, 1, 6, 6}},
		} {
			if !c.got.Shape().Equal(c.want) {
				t.Errorf("%v: shape %v, want %v", dev, c.got.Shape(), c.want)
			}
		}
	}
}

// TestResampleGradFnNames: the graph nodes carry PyTorch's names.
func TestResampleGradFnNames(t *testing.T) {
	x := Zeros(Shape{1, 4, 2, 2}).SetRequiresGrad(true)
	for _, c := range []struct {
		got  *Tensor
		want string
	}{
		{Interpolate(x, InterpolateOptions{Size: []int{3}, Mode: "bilinear"}), "UpsampleBilinear2DBackward1"},
		{Interpolate(x, InterpolateOptions{Size: []int{3}, Mode: "bicubic"}), "UpsampleBicubic2DBackward1"},
		{Interpolate(x, InterpolateOptions{Size: []int{3}}), "UpsampleNearest2DBackward1"},
		{Interpolate(x, InterpolateOptions{Size: []int{3}, Mode: "nearest-exact"}), "UpsampleNearestExact2DBackward1"},
		{Interpolate(x, InterpolateOptions{Size: []int{1}, Mode: "area"}), "AdaptiveAvgPool2DBackward0"},
		{Interpolate(x.Reshape(1, 4, 4), InterpolateOptions{Size: []int{3}, Mode: "linear"}), "UpsampleLinear1DBackward1"},
		{PixelShuffle(x, 2), "PixelShuffleBackward0"},
		{PixelUnshuffle(x, 2), "PixelUnshuffleBackward0"},
		{Unfold(x, [2]int{1, 1}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}), "Im2ColBackward0"},
		{Fold(x.Reshape(1, 4, 4), [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}), "Col2ImBackward0"},
	} {
		if g := c.got.GradFn(); g != c.want {
			t.Errorf("grad_fn %s, PyTorch %s", g, c.want)
		}
	}
}
