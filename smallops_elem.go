package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// Small elementwise ops that PyTorch users reach for; the plain ones
// (Logaddexp, Fmax, BitwiseAnd, Gcd, IsFinite, ...) are op-table rows
// (backend/optable), these need a check or a composition of their own.

// Heaviside returns the Heaviside step function of t: 0 where t < 0,
// values where t == 0 (either zero), 1 where t > 0, and 0 where t is NaN,
// broadcast, as torch.heaviside. t and values must share a dtype (a
// *DTypeError otherwise, as PyTorch refuses to promote); it has no
// gradient.
func (t *Tensor) Heaviside(values *Tensor) *Tensor {
	t.nonNil("heaviside")
	values.nonNil("heaviside")
	if t.dtype != values.dtype {
		panic(&DTypeError{Op: "heaviside", DTypes: []DType{t.dtype, values.dtype}, Msg: "heaviside is not yet implemented for tensors with different dtypes."})
	}
	return binary(backend.Heaviside, t, values, false)
}

// IsClose reports elementwise, as Bool, whether t and o are close:
// |t - o| <= atol + rtol·|o|, or equal (so equal infinities are close);
// NaNs are close to each other only with equalNaN. Shapes broadcast, as
// torch.isclose (PyTorch's defaults are rtol 1e-5, atol 1e-8). t and o
// must share a dtype, and rtol and atol must be non-negative.
func IsClose(t, o *Tensor, rtol, atol float64, equalNaN bool) *Tensor {
	t.nonNil("isclose")
	o.nonNil("isclose")
	sameDevice("isclose", t, o)
	if t.dtype != o.dtype {
		panic(&DTypeError{Op: "isclose", DTypes: []DType{t.dtype, o.dtype}, Msg: fmt.Sprintf("%s did not match %s", torchTypeName(t.dtype), torchTypeName(o.dtype))})
	}
	if !(rtol >= 0) {
		panic(&ValueError{Op: "isclose", Msg: fmt.Sprintf("rtol must be greater than or equal to zero, but got %v", rtol)})
	}
	if !(atol >= 0) {
		panic(&ValueError{Op: "isclose", Msg: fmt.Sprintf("atol must be greater than or equal to zero, but got %v", atol)})
	}
	a, b := t.Detach(), o.Detach()
	eq := a.Eq(b)
	if equalNaN && t.dtype.IsFloat() {
		eq = eq.LogicalOr(a.IsNaN().LogicalAnd(b.IsNaN()))
	}
	if t.dtype == Bool { // PyTorch compares bools as the default float dtype
		a, b = a.Cast(Float32), b.Cast(Float32)
	}
	// in PyTorch's order: |t - o| in t's dtype, atol + |rtol·o| in the
	// float dtype rtol·o promotes to (Float32 for integers)
	d := a.Sub(b).Abs()
	tol := b.MulScalar(rtol).Abs().AddScalar(atol)
	return eq.LogicalOr(d.IsFinite().LogicalAnd(d.Le(tol)))
}
