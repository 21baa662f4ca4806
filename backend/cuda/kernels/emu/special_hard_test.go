package emu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
)

// TestSpecialHardPoints compares the special functions with backend/cpu at
// their hard points: near poles and roots, large and subnormal arguments,
// erfinv near ±1.
func TestSpecialHardPoints(t *testing.T) {
	l := lib(t)
	pts := []float64{-2.5, -1.0000001, -0.9999999, -1e-8, 1e-8, -3.5, -100.5, -1e6 + 0.25, 1e-300, 1e15, 1e17, 1e20, 1.4616321449683622, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 10, -10.000001, 5e-310, 0.999999, 1 - 1e-15, -(1 - 1e-15), 1 - 1e-10, 0.3, 171.5, -171.5, 30, 1e-5, 2.5e-7, -4.000001, 1e300}
	for _, dt := range []backend.DType{backend.Float64, backend.Float32} {
		var data any = pts
		if dt == backend.Float32 {
			f := make([]float32, len(pts))
			for i, v := range pts {
				f[i] = float32(v)
			}
			data = f
		}
		for _, c := range []struct {
			op backend.UnaryOp
			p  backend.Params
		}{{backend.Lgamma, backend.Params{}}, {backend.Digamma, backend.Params{}}, {backend.Polygamma, backend.Params{1}}, {backend.Polygamma, backend.Params{2}}, {backend.Polygamma, backend.Params{3}}, {backend.Polygamma, backend.Params{7}}, {backend.Erfinv, backend.Params{}}, {backend.Erfc, backend.Params{}}, {backend.Sinc, backend.Params{}}, {backend.Logit, backend.Params{-1}}, {backend.Logit, backend.Params{1e-6}}} {
			sb := newBuf(t, l, data)
			sv, so := sb.view([]int{len(pts)}, []int{1}, 0)
			db := newBuf(t, l, data)
			dv, do := db.view([]int{len(pts)}, []int{1}, 0)
			cpuB.Unary(c.op, dv, sv, c.p)
			launch(t, l, kernels.Unary(props, c.op, do, so, c.p))
			same(t, fmt.Sprintf("%v %v p=%v", c.op, dt, c.p), db.devData(), db.cpuData(), tolFor(dt, true))
		}
	}
}
