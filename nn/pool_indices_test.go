package nn

import (
	"fmt"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// TestMaxPoolIndicesModules: MaxPool2d/1d's dilation and return_indices
// and MaxUnpool2d/1d as modules: PyTorch 1.13's reprs, and a round trip
// worked by hand (each 2×2 window's maximum and its place h·W + w, then
// written back into zeros).
func TestMaxPoolIndicesModules(t *testing.T) {
	for _, c := range []struct {
		m    Module
		want string
	}{
		{func() Module { p := NewMaxPool2d(3, 2, 1); p.Dilation = [2]int{2, 2}; return p }(), "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=False)"},
		{func() Module {
			p := NewMaxPool2dHW([2]int{3, 2}, [2]int{}, [2]int{})
			p.Dilation = [2]int{2, 1}
			return p
		}(), "MaxPool2d(kernel_size=(3, 2), stride=(3, 2), padding=0, dilation=(2, 1), ceil_mode=False)"},
		{func() Module { p := NewMaxPool1d(3, 2, 1); p.Dilation = 2; return p }(), "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=False)"},
		{NewMaxUnpool2d(2, 0, 0), "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"},
		{NewMaxUnpool2dHW([2]int{2, 3}, [2]int{1, 2}, [2]int{1, 1}), "MaxUnpool2d(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))"},
		{NewMaxUnpool1d(2, 0, 0), "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"},
	} {
		if got := c.m.(fmt.Stringer).String(); got != c.want {
			t.Errorf("repr %q, PyTorch %q", got, c.want)
		}
	}
	x := ember.FromSlice([]float64{1, 5, 2, 0, 4, 3, 9, 1, 0, 7, 6, 8, 2, 1, 3, 4}, ember.Shape{1, 1, 4, 4}).SetRequiresGrad(true)
	y, idx := NewMaxPool2d(2, 0, 0).ForwardWithIndices(x)
	if fmt.Sprint(y.Float64s(), idx.Int64s()) != "[5 9 7 8] [1 6 9 11]" {
		t.Fatalf("pool %v %v", y.Float64s(), idx.Int64s())
	}
	u := NewMaxUnpool2d(2, 0, 0).Unpool(y, idx)
	if fmt.Sprint(u.Float64s()) != "[0 5 0 0 0 0 9 0 0 7 0 8 0 0 0 0]" {
		t.Fatalf("unpool %v", u.Float64s())
	}
	u.Sum().Backward() // each maximum's gradient 1, the rest 0
	if fmt.Sprint(x.Grad().Float64s()) != "[0 1 0 0 0 0 1 0 0 1 0 1 0 0 0 0]" {
		t.Fatalf("grad %v", x.Grad().Float64s())
	}
	x1 := ember.FromSlice([]float64{3, 1, 4, 1, 5, 9, 2}, ember.Shape{1, 1, 7})
	p1 := NewMaxPool1d(3, 1, 0)
	p1.Dilation = 2 // windows {0, 2, 4}, {1, 3, 5}, {2, 4, 6}
	y1, i1 := p1.ForwardWithIndices(x1)
	if fmt.Sprint(y1.Float64s(), i1.Int64s()) != "[5 9 5] [4 5 4]" {
		t.Fatalf("pool1d %v %v", y1.Float64s(), i1.Int64s())
	}
	// an output of (3 − 1)·1 + 5 = 7
	if got := NewMaxUnpool1d(5, 1, 0).Unpool(y1, i1); fmt.Sprint(got.Float64s()) != "[0 0 0 0 5 9 0]" {
		t.Fatalf("unpool1d %v", got.Float64s())
	}
	a, ai := NewAdaptiveMaxPool2d(1, 2).ForwardWithIndices(x)
	if fmt.Sprint(a.Float64s(), ai.Int64s()) != "[7 9] [9 6]" {
		t.Fatalf("adaptive %v %v", a.Float64s(), ai.Int64s())
	}
	testenv.Raises[*ModuleError](t, "unpool Forward", func() { NewMaxUnpool2d(2, 0, 0).Forward(y) })
	testenv.Raises[*ModuleError](t, "avg indices", func() { NewAvgPool2d(2, 0, 0).ForwardWithIndices(x) })
	testenv.Raises[*ModuleError](t, "avg1d indices", func() { NewAvgPool1d(2, 0, 0).ForwardWithIndices(x1) })
	avg := NewAvgPool2d(2, 0, 0)
	avg.Dilation = [2]int{2, 2}
	testenv.Raises[*ember.ValueError](t, "avg dilation", func() { avg.Forward(x) })
	if got := NewAvgPool2d(2, 0, 0).String(); got != "AvgPool2d(kernel_size=2, stride=2, padding=0)" {
		t.Errorf("avg repr %q", got)
	}
}
