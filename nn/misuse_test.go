package nn

import (
	"math"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// As torch.nn.Linear(0, 2) and Conv2d(0, 2, 3): a layer without inputs has
// a zero bias (PyTorch's bound "1/sqrt(fan_in) if fan_in > 0 else 0"), so
// its output is zeros, not NaN.
func TestZeroFanInInit(t *testing.T) {
	l := NewLinear(0, 2, true)
	if got := l.Bias.Float64s(); got[0] != 0 || got[1] != 0 {
		t.Fatalf("Linear(0, 2).Bias = %v, want [0 0]", got)
	}
	y := l.Forward(ember.Ones(ember.Shape{4, 0}))
	if !y.Shape().Equal(ember.Shape{4, 2}) {
		t.Fatalf("shape %v", y.Shape())
	}
	for i, v := range y.Float64s() {
		if v != 0 {
			t.Fatalf("Linear(0, 2) of a [4, 0] input [%d] = %v, want 0", i, v)
		}
	}
	if !l.Bias.RequiresGrad() {
		t.Fatal("bias does not require grad")
	}
	for _, c := range []*Conv2d{NewConv2d(0, 2, 3), NewConv2d(1, 2, 0)} {
		if got := c.Bias.Float64s(); got[0] != 0 || got[1] != 0 {
			t.Fatalf("Conv2d(%d, 2, %d).Bias = %v, want [0 0]", c.In, c.Kernel, got)
		}
	}
	// fan_in 1 still draws from U(-1, 1)
	b := NewLinear(1, 1000, true).Bias.Float64s()
	lo, hi := 0.0, 0.0
	for _, v := range b {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo < -1 || hi > 1 || hi-lo < 1.5 {
		t.Fatalf("Linear(1, 1000).Bias in [%v, %v], want about U(-1, 1)", lo, hi)
	}
}

// As torch's BatchNorm1d and BatchNorm2d: "expected 2D or 3D input (got 4D
// input)", "expected 4D input (got 2D input)", raised before the running
// statistics move.
func TestBatchNormInputRank(t *testing.T) {
	cases := []struct {
		bn    *BatchNorm
		shape ember.Shape
		msg   string
	}{
		{NewBatchNorm2d(3), ember.Shape{2, 3}, "expected 4D input (got 2D input)"},
		{NewBatchNorm2d(3), ember.Shape{2, 3, 4}, "expected 4D input (got 3D input)"},
		{NewBatchNorm2d(3), ember.Shape{2, 3, 4, 4, 1}, "expected 4D input (got 5D input)"},
		{NewBatchNorm1d(3), ember.Shape{2, 3, 4, 4}, "expected 2D or 3D input (got 4D input)"},
		{NewBatchNorm1d(3), ember.Shape{3}, "expected 2D or 3D input (got 1D input)"},
		{NewBatchNorm1d(3), ember.Shape{}, "expected 2D or 3D input (got 0D input)"},
	}
	for _, c := range cases {
		e := testenv.Raises[*ember.ValueError](t, c.msg, func() { c.bn.Forward(ember.Ones(c.shape)) })
		if e.Msg != c.msg {
			t.Errorf("%v: %q, want %q", c.shape, e.Msg, c.msg)
		}
		if n := c.bn.NumBatchesTracked.Item(); n != 0 {
			t.Errorf("%v: num_batches_tracked %v after a refused input", c.shape, n)
		}
	}
	// the ranks torch takes still work
	for _, c := range []struct {
		bn    *BatchNorm
		shape ember.Shape
	}{{NewBatchNorm1d(3), ember.Shape{2, 3}}, {NewBatchNorm1d(3), ember.Shape{2, 3, 4}}, {NewBatchNorm2d(3), ember.Shape{2, 3, 2, 2}}} {
		x := ember.Arange(0, float64(c.shape.NumElements()), 1, ember.Dtype(ember.Float32)).Reshape(c.shape...)
		y := c.bn.Forward(x)
		// every channel normalised to mean 0
		m := y.Transpose(0, 1).Reshape(3, -1).Mean(ember.Dims(1)).Float64s()
		for _, v := range m {
			if v > 1e-5 || v < -1e-5 {
				t.Errorf("%v: channel mean %v", c.shape, m)
			}
		}
	}
}

func TestBatchNormNilInput(t *testing.T) {
	e := testenv.Raises[*ember.ShapeError](t, "BatchNorm2d(nil)", func() { NewBatchNorm2d(3).Forward(nil) })
	if e.Op != "nn.BatchNorm2d" {
		t.Fatal(e)
	}
}

// KaimingNormalFanOut of a weight of fewer than 2 dims panics with
// PyTorch's ValueError (it was a Go index-out-of-range panic).
func TestKaimingNormalFanOutRank(t *testing.T) {
	for _, s := range []ember.Shape{{}, {4}} {
		testenv.Raises[*ember.ValueError](t, "KaimingNormalFanOut("+s.String()+")", func() { KaimingNormalFanOut(ember.Zeros(s)) })
	}
	w := KaimingNormalFanOut(ember.Zeros(ember.Shape{200, 3, 3, 3}))
	// N(0, 2/fan_out), fan_out = 200·9: the sample std within 10%
	std := math.Sqrt(w.Square().Mean().Item())
	if want := math.Sqrt(2.0 / 1800); math.Abs(std-want) > 0.1*want {
		t.Errorf("std %v, want about %v", std, want)
	}
}
