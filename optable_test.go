package ember

import (
	"fmt"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestEveryOpHasAGradient walks the op table: every row that names a
// grad_fn has a rule, records PyTorch's grad_fn name, and passes a
// finite-difference gradcheck on every device present with each of its
// parameter sets; a row without one records nothing.
func TestEveryOpHasAGradient(t *testing.T) {
	s23 := Shape{2, 3}
	for op := range backend.NumUnaryOps {
		row := op.Row()
		x := FromSlice([]float64{0.5, 1.5}, Shape{2}).SetRequiresGrad(true)
		if row.GradFn == "" && !op.Supports(Float64) { // integer and Bool only (bitwise_not)
			continue
		}
		if row.GradFn == "" {
			if y := unary(op, x, 0, 0, 0); y.RequiresGrad() && y.dtype.IsFloat() {
				t.Errorf("%s has no grad_fn in the table but its result requires grad", op)
			}
			continue
		}
		if unaryRules[op] == nil {
			t.Errorf("%s: the table names grad_fn %s but there is no rule in unaryRules", op, row.GradFn)
			continue
		}
		lo, hi := row.Domain[0], row.Domain[1]
		if lo == 0 && hi == 0 {
			lo, hi = -1.9, 1.9
		}
		sets := row.Args
		if len(sets) == 0 {
			sets = [][]float64{nil}
		}
		for _, p := range sets {
			if got := unary(op, x, p...).GradFn(); got != row.GradFn {
				t.Errorf("%s%v: grad_fn %s, PyTorch's is %s", op, p, got, row.GradFn)
			}
			gradcheck(t, fmt.Sprintf("%s%v", op, p), func(xs []*Tensor) *Tensor { return unary(op, xs[0], p...) }, vals(s23, lo, hi, 1))
		}
	}
	for op := range backend.NumBinaryOps {
		row := op.Row()
		if row.GradFn == "" || !op.Supports(Float64) {
			continue
		}
		if binaryRules[op] == nil {
			t.Errorf("%s: the table names grad_fn %s but there is no rule in binaryRules", op, row.GradFn)
			continue
		}
		lo, hi := row.Domain[0], row.Domain[1]
		if lo == 0 && hi == 0 {
			lo, hi = 0.2, 2
		}
		a := FromSlice([]float64{0.5, 1.5}, Shape{2}).SetRequiresGrad(true)
		if got := binary(op, a, a.Detach().AddScalar(0.25), false).GradFn(); got != row.GradFn {
			t.Errorf("%s: grad_fn %s, PyTorch's is %s", op, got, row.GradFn)
		}
		f := func(xs []*Tensor) *Tensor { return binary(op, xs[0], xs[1], false) }
		gradcheck(t, op.String(), f, vals(s23, lo, hi, 3), vals(s23, lo+0.1, hi-0.1, 4))
		gradcheck(t, op.String()+"/bcast", f, vals(s23, lo, hi, 3), vals(Shape{3}, lo+0.1, hi-0.1, 5))
	}
}
