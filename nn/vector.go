package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// ParametersToVector flattens params into one 1-D tensor, their elements
// in order, as torch.nn.utils.parameters_to_vector. It records a graph
// (a Cat of reshapes), so a gradient flows back to the parameters.
// The parameters must share a device; parameters of mixed dtypes promote
// as ember.Cat does. No parameters panic with an *ember.ValueError.
func ParametersToVector(params []*ember.Tensor) *ember.Tensor {
	if len(params) == 0 {
		argErr("ParametersToVector", "expected a non-empty list of parameters")
	}
	flat := make([]*ember.Tensor, len(params))
	for i, p := range params {
		if p == nil {
			argErr("ParametersToVector", "parameter %d is nil", i)
		}
		if p.Device() != params[0].Device() {
			argErr("ParametersToVector", "Found two parameters on different devices, this is currently not supported.")
		}
		flat[i] = p.Reshape(-1)
	}
	return ember.Cat(flat, 0)
}

// VectorToParameters copies consecutive slices of the 1-D vec into params,
// each reshaped to its parameter's shape, as
// torch.nn.utils.vector_to_parameters. Unlike PyTorch, which points each
// parameter's .data at a view of vec (so the parameter takes vec's dtype
// and later writes to vec show through), it copies under no-grad, each
// parameter keeping its dtype and device. Elements of vec beyond the
// parameters are ignored, as in PyTorch; a vec too short panics with an
// *ember.ShapeError.
func VectorToParameters(vec *ember.Tensor, params []*ember.Tensor) {
	const op = "nn.VectorToParameters"
	if vec == nil {
		argErr("VectorToParameters", "expected torch.Tensor, but got: nil")
	}
	if vec.Dim() != 1 {
		panic(&ember.ShapeError{Op: op, Msg: "vec must be a 1-D tensor", Shapes: []ember.Shape{vec.Shape()}})
	}
	n := vec.Size(0)
	at := 0
	for i, p := range params {
		if p == nil {
			argErr("VectorToParameters", "parameter %d is nil", i)
		}
		k := p.NumElements()
		if at+k > n {
			panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("shape '%v' is invalid for input of size %d", p.Shape(), max(n-at, 0)), Shapes: []ember.Shape{vec.Shape(), p.Shape()}})
		}
		src := vec.Narrow(0, at, k).Reshape(p.Shape()...)
		ember.NoGrad(func() { p.CopyFrom(src) })
		at += k
	}
}
