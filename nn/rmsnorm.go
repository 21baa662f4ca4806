package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// RMSNorm is Llama's root-mean-square norm over the last dim,
// x · rsqrt(mean(x²) + Eps) · Weight, with Weight [Dim] (the state-dict
// key "weight"): PyTorch 2.4's nn.RMSNorm(dim, eps) and Hugging Face's
// LlamaRMSNorm. There is no bias and no mean subtraction.
type RMSNorm struct {
	Base
	Weight *ember.Tensor
	Dim    int
	Eps    float64
}

// NewRMSNorm returns an RMSNorm over a last dim of size dim (weight 1);
// Llama uses eps 1e-6 or 1e-5 (its config's rms_norm_eps).
func NewRMSNorm(dim int, eps float64) *RMSNorm {
	r := &RMSNorm{Dim: dim, Eps: eps}
	r.Init(r)
	r.Weight = param(ember.Ones(ember.Shape{dim}))
	r.RegisterParameter("weight", &r.Weight)
	return r
}

// Forward normalises x [..., Dim].
func (r *RMSNorm) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(r, "Forward")
	if x.Dim() == 0 || x.Shape()[x.Dim()-1] != r.Dim {
		panic(&ember.ShapeError{Op: "RMSNorm", Msg: fmt.Sprintf("expected an input of shape [*, %d], but got %v", r.Dim, x.Shape())})
	}
	var y *ember.Tensor
	if dt := x.DType(); dt.IsHalf() {
		// as LlamaRMSNorm: normalised in float32, rounded to x's dtype,
		// then scaled by the weight
		x32 := x.Cast(ember.Float32)
		y = x32.Mul(x32.Square().Mean(ember.Dims(-1), ember.KeepDim()).AddScalar(r.Eps).Rsqrt()).Cast(dt)
	} else {
		y = x.Mul(x.Square().Mean(ember.Dims(-1), ember.KeepDim()).AddScalar(r.Eps).Rsqrt())
	}
	if r.Weight != nil {
		y = y.Mul(r.Weight)
	}
	return y
}

// ExtraRepr is "(8,), eps=1e-06, elementwise_affine=True", as PyTorch 2.4
// prints nn.RMSNorm.
func (r *RMSNorm) ExtraRepr() string {
	CheckNil(r, "ExtraRepr")
	return fmt.Sprintf("%s, eps=%s, elementwise_affine=%s", pyTuple(r.Dim), pyFloat(r.Eps), pyBool(r.Weight != nil))
}
