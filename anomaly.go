package ember

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
)

// Anomaly detection, as torch.autograd.detect_anomaly: while it is on,
// every recorded op keeps the call stack of its forward, and Backward
// checks the gradients each node returns for NaN, panicking with an
// *AutogradError that names the node and the forward call site. Off, it
// costs one flag check per recorded op and per node run.

var (
	anomalyAll   atomic.Bool // SetDetectAnomaly
	anomalyLocal local[bool] // DetectAnomaly, per goroutine
)

// DetectAnomaly runs f with anomaly detection on for the calling
// goroutine (torch.autograd.detect_anomaly()): the ops f runs remember
// where they were called from, and a Backward f runs panics with an
// *AutogradError ("Function 'SqrtBackward0' returned nan values in its
// 0th output.", followed by the forward call's stack) as soon as a node's
// backward returns a NaN; the error of a saved tensor modified in place
// also carries the stack of the op that saved it. It slows forward and backward down; use it to
// debug.
func DetectAnomaly(f func()) { anomalyLocal.with("detect_anomaly", true, f) }

// SetDetectAnomaly turns anomaly detection (see DetectAnomaly) on or off
// for all goroutines (torch.autograd.set_detect_anomaly).
func SetDetectAnomaly(on bool) { anomalyAll.Store(on) }

// IsAnomalyEnabled reports whether anomaly detection is on for the
// calling goroutine (torch.is_anomaly_enabled()).
func IsAnomalyEnabled() bool {
	if anomalyAll.Load() {
		return true
	}
	on, _ := anomalyLocal.get()
	return on
}

// forwardTrace is the call stack of the op that recorded a node, kept in
// anomaly mode and formatted only when reported.
type forwardTrace []uintptr

// traceHere records the caller's stack, for a node being recorded.
func traceHere() forwardTrace {
	pcs := make([]uintptr, 64)
	return forwardTrace(pcs[:runtime.Callers(3, pcs)])
}

// String formats the stack from the first frame outside ember's own
// package (the op's caller; frames of the package's tests count as the
// caller's), as PyTorch's "Traceback of forward call that caused the
// error".
func (tr forwardTrace) String() string {
	var b strings.Builder
	b.WriteString("Traceback of forward call that caused the error:")
	frames := runtime.CallersFrames(tr)
	inside := true
	for {
		f, more := frames.Next()
		own := strings.HasPrefix(f.Function, "github.com/emberml/ember.") && !strings.HasSuffix(f.File, "_test.go")
		if inside && own && more {
			continue
		}
		inside = false
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			fmt.Fprintf(&b, "\n  %s:%d in %s", f.File, f.Line, f.Function)
		}
		if !more {
			break
		}
	}
	return b.String()
}

// checkAnomaly panics when one of the gradients n's backward returned
// holds a NaN (called in anomaly mode only).
func checkAnomaly(n *node, gs []*Tensor) {
	for j, g := range gs {
		if g == nil || !g.dtype.IsFloat() || g.dev.Type == MetaType {
			continue
		}
		var nan bool
		NoGrad(func() { nan = g.Detach().IsNaN().Any().Item() != 0 })
		if !nan {
			continue
		}
		msg := fmt.Sprintf("Function '%s' returned nan values in its %dth output.", n.name, j)
		if tr := n.forwardTrace(); tr != nil {
			msg += "\n" + tr.String()
		}
		panic(&AutogradError{Op: "backward", Msg: msg})
	}
}

// forwardTrace is the call stack of n's forward (a CopySlices node's: its
// in-place op's), nil unless it was recorded in anomaly mode.
func (n *node) forwardTrace() forwardTrace {
	if n.trace == nil && n.inner != nil {
		return n.inner.trace
	}
	return n.trace
}
