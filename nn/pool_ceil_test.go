package nn

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
)

// TestPoolCeilMode: MaxPool2d and AvgPool2d with CeilMode over a 5×5
// arange, 2×2 windows at stride 2: PyTorch 1.13 gives a 3×3 output whose
// last row and column pool the clipped windows (values from
// F.max_pool2d / F.avg_pool2d(x, 2, 2, 0, ceil_mode=True)).
func TestPoolCeilMode(t *testing.T) {
	x := ember.Arange(0, 25, 1, ember.Dtype(ember.Float32)).Reshape(1, 1, 5, 5)
	mp := NewMaxPool2d(2, 0, 0)
	mp.CeilMode = true
	ap := NewAvgPool2d(2, 0, 0)
	ap.CeilMode = true
	for _, c := range []struct {
		m    *Pool
		want []float64
	}{
		{mp, []float64{6, 8, 9, 16, 18, 19, 21, 23, 24}},
		{ap, []float64{3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24}},
	} {
		got := c.m.Forward(x)
		if !got.Shape().Equal(ember.Shape{1, 1, 3, 3}) {
			t.Fatalf("%v: shape %v", c.m, got.Shape())
		}
		for i, v := range got.Float64s() {
			if v != c.want[i] {
				t.Fatalf("%v: [%d] = %v, PyTorch %v", c.m, i, v, c.want[i])
			}
		}
	}
	// repr(nn.MaxPool2d(2, ceil_mode=True)); AvgPool2d's leaves it out
	if got, want := mp.String(), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=True)"; got != want {
		t.Errorf("repr %q, want %q", got, want)
	}
	if got, want := ap.String(), "AvgPool2d(kernel_size=2, stride=2, padding=0)"; got != want {
		t.Errorf("repr %q, want %q", got, want)
	}
}

// TestPool1dModules runs MaxPool1d, AvgPool1d and AdaptiveAvgPool1d on
// the inputs of testdata/fixtures/grad/grad_pool1d.json (PyTorch 1.13's
// F.max_pool1d, ...) and checks the outputs, and the reprs against
// PyTorch's.
func TestPool1dModules(t *testing.T) {
	b, err := os.ReadFile("../testdata/fixtures/grad/grad_pool1d.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		Params struct {
			Kind            string
			Kernel          int
			Stride, Padding *int
			CountIncludePad *bool `json:"count_include_pad"`
			CeilMode        *bool `json:"ceil_mode"`
		}
		Inputs struct{ X jsonTensor }
		Output jsonTensor
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		var m interface {
			Forward(*ember.Tensor) *ember.Tensor
		}
		p := c.Params
		switch p.Kind {
		case "adaptive":
			m = NewAdaptiveAvgPool1d(p.Kernel)
		case "max":
			l := NewMaxPool1d(p.Kernel, *p.Stride, *p.Padding)
			l.CeilMode = *p.CeilMode
			m = l
		default:
			l := NewAvgPool1d(p.Kernel, *p.Stride, *p.Padding)
			l.CeilMode, l.CountIncludePad = *p.CeilMode, *p.CountIncludePad
			m = l
		}
		closeToJSON(t, p.Kind, m.Forward(c.Inputs.X.f64()), c.Output)
	}
	avg := NewAvgPool1d(3, 2, 1)
	avg.CeilMode = true
	for _, c := range []struct {
		m    fmt.Stringer
		want string
	}{
		{NewMaxPool1d(2, 0, 0), "MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"},
		{avg, "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))"},
		{NewAdaptiveAvgPool1d(3), "AdaptiveAvgPool1d(output_size=3)"},
	} {
		if got := c.m.String(); got != c.want {
			t.Errorf("repr %q, PyTorch %q", got, c.want)
		}
	}
}

// TestPoolNonSquare: nn.MaxPool2d((2, 1)) and nn.AvgPool2d((1, 3),
// stride=(1, 2), padding=(0, 1)) over a 4×3 arange: PyTorch 1.13's
// values and reprs.
func TestPoolNonSquare(t *testing.T) {
	x := ember.Arange(0, 12, 1, ember.Dtype(ember.Float64)).Reshape(1, 1, 4, 3)
	for _, c := range []struct {
		m     *Pool
		shape ember.Shape
		want  []float64
		repr  string
	}{
		{NewMaxPool2dHW([2]int{2, 1}, [2]int{}, [2]int{}), ember.Shape{1, 1, 2, 3}, []float64{3, 4, 5, 9, 10, 11},
			"MaxPool2d(kernel_size=(2, 1), stride=(2, 1), padding=0, dilation=1, ceil_mode=False)"},
		{NewAvgPool2dHW([2]int{1, 3}, [2]int{1, 2}, [2]int{0, 1}), ember.Shape{1, 1, 4, 2},
			[]float64{1.0 / 3, 1, 7.0 / 3, 3, 13.0 / 3, 5, 19.0 / 3, 7},
			"AvgPool2d(kernel_size=(1, 3), stride=(1, 2), padding=(0, 1))"},
	} {
		got := c.m.Forward(x)
		if !got.Shape().Equal(c.shape) {
			t.Fatalf("%v: shape %v, PyTorch %v", c.m, got.Shape(), c.shape)
		}
		for i, v := range got.Float64s() {
			if math.Abs(v-c.want[i]) > 1e-12 {
				t.Fatalf("%v: [%d] = %v, PyTorch %v", c.m, i, v, c.want[i])
			}
		}
		if s := c.m.String(); s != c.repr {
			t.Errorf("repr %q, PyTorch %q", s, c.repr)
		}
	}
}

// TestAdaptiveMaxPool2dModule: nn.AdaptiveMaxPool2d((3, 2)) over a 4×5
// arange (each window's maximum is its bottom-right element: rows
// [0,2) [1,3) [2,4), columns [0,3) [2,5)), and PyTorch's repr.
func TestAdaptiveMaxPool2dModule(t *testing.T) {
	m := NewAdaptiveMaxPool2d(3, 2)
	got := m.Forward(ember.Arange(0, 20, 1, ember.Dtype(ember.Float32)).Reshape(1, 4, 5))
	want := []float64{7, 9, 12, 14, 17, 19}
	if !got.Shape().Equal(ember.Shape{1, 3, 2}) {
		t.Fatalf("shape %v", got.Shape())
	}
	for i, v := range got.Float64s() {
		if v != want[i] {
			t.Fatalf("[%d] = %v, want %v", i, v, want[i])
		}
	}
	if s := m.String(); s != "AdaptiveMaxPool2d(output_size=(3, 2))" {
		t.Errorf("repr %q", s)
	}
}
