package ember

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// line is the caller's file:line.
func line() string {
	_, file, l, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, l)
}

// TestDetectAnomalyNaN: sqrt's gradient at 0 is g/(2·0) = inf, times a
// zero weight NaN, the first NaN a backward returns; PyTorch 1.13 reports
// "Function 'SqrtBackward0' returned nan values in its 0th output.".
func TestDetectAnomalyNaN(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]float64{0, 1}, Shape{2}, On(dev)).SetRequiresGrad(true)
		var y *Tensor
		var at string
		var err error
		DetectAnomaly(func() {
			y, at = x.Sqrt(), line()
			z := y.Mul(FromSlice([]float64{0, 1}, Shape{2}, On(dev)))
			err = Try(func() { z.Sum().Backward() })
		})
		var ae *AutogradError
		if !errors.As(err, &ae) {
			t.Fatalf("on %v: %v, want an *AutogradError", dev, err)
		}
		for _, want := range []string{"Function 'SqrtBackward0' returned nan values in its 0th output.", "Traceback of forward call that caused the error:", at} {
			if !strings.Contains(ae.Msg, want) {
				t.Errorf("on %v: %q does not hold %q", dev, ae.Msg, want)
			}
		}
		// off: the NaN goes into the Grad silently, as PyTorch
		x.ZeroGrad()
		x.Sqrt().Mul(FromSlice([]float64{0, 1}, Shape{2}, On(dev))).Sum().Backward()
		if g := x.Grad().Float64s(); g[0] == g[0] {
			t.Errorf("on %v: Grad %v, want NaN first", dev, g)
		}
	}
}

// TestSetDetectAnomaly: the process-wide switch. log(-1) is NaN in
// forward; the first backward returning a NaN is Mul's, for its second
// input (w's gradient log(x)·g): PyTorch 1.13 reports "Function
// 'MulBackward0' returned nan values in its 1th output.".
func TestSetDetectAnomaly(t *testing.T) {
	SetDetectAnomaly(true)
	defer SetDetectAnomaly(false)
	if !IsAnomalyEnabled() {
		t.Fatal("IsAnomalyEnabled false after SetDetectAnomaly(true)")
	}
	x := FromSlice([]float64{-1, 2}, Shape{2}).SetRequiresGrad(true)
	w := FromSlice([]float64{1, 1}, Shape{2}).SetRequiresGrad(true)
	y := x.Log()
	z, at := y.Mul(w), line()
	err := Try(func() { z.Sum().Backward() })
	var ae *AutogradError
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "Function 'MulBackward0' returned nan values in its 1th output.") || !strings.Contains(ae.Msg, at) {
		t.Fatalf("got %v, want MulBackward0's NaN in its 1th output at %s", err, at)
	}
}

func TestDetectAnomalyScope(t *testing.T) {
	if IsAnomalyEnabled() {
		t.Fatal("anomaly detection on by default")
	}
	DetectAnomaly(func() {
		if !IsAnomalyEnabled() {
			t.Error("off inside DetectAnomaly")
		}
		done := make(chan bool)
		go func() { done <- IsAnomalyEnabled() }()
		if <-done {
			t.Error("another goroutine sees DetectAnomaly's mode")
		}
	})
	x := Ones(Shape{2}).SetRequiresGrad(true)
	if n := nodeOf(x.MulScalar(2)); n.trace != nil {
		t.Error("a node recorded with anomaly detection off keeps a trace")
	}
}

// TestDetectAnomalyOffAllocs: off, no trace is taken (on, each recorded
// op allocates one); BenchmarkDetectAnomalyOff reports the off path.
func TestDetectAnomalyOffAllocs(t *testing.T) {
	x := Ones(Shape{4}).SetRequiresGrad(true)
	f := func() { x.MulScalar(2).Sum().Backward() }
	off := testing.AllocsPerRun(20, f)
	var on float64
	DetectAnomaly(func() { on = testing.AllocsPerRun(20, f) })
	if on <= off {
		t.Errorf("allocations: %v with anomaly detection, %v without; want more with", on, off)
	}
}

func BenchmarkDetectAnomalyOff(b *testing.B) {
	x := Ones(Shape{4}).SetRequiresGrad(true)
	b.ReportAllocs()
	for range b.N {
		x.MulScalar(2).Sum().Backward()
	}
}

// TestDetectAnomalyInPlaceTrace: the error of a saved tensor modified in
// place carries the forward stack of the op that saved it (PyTorch prints
// it as the warning before that error).
func TestDetectAnomalyInPlaceTrace(t *testing.T) {
	x := Ones(Shape{2}).SetRequiresGrad(true)
	var err error
	var at string
	DetectAnomaly(func() {
		var y *Tensor
		y, at = x.Exp(), line()
		y.AddScalarInPlace(1)
		err = Try(func() { y.Sum().Backward() })
	})
	if err == nil || !strings.Contains(err.Error(), "modified by an inplace operation") || !strings.Contains(err.Error(), "Traceback of forward call that caused the error:") || !strings.Contains(err.Error(), at) {
		t.Errorf("got %v, want the in-place error with the trace of %s", err, at)
	}
}
