package nn

import "github.com/emberml/ember"

// LogSigmoid returns log(1/(1 + e^−x)), computed stably as min(x, 0) −
// log1p(e^−|x|), as torch.nn.functional.logsigmoid; its gradient is
// σ(−x) (1/2 at 0) and it records one LogSigmoidBackward0 node.
func LogSigmoid(x *ember.Tensor) *ember.Tensor {
	return ember.Apply(logSigmoid{}, x)
}

type logSigmoid struct{}

// Name is PyTorch's grad_fn for log_sigmoid.
func (logSigmoid) Name() string { return "LogSigmoidBackward0" }

func (logSigmoid) Forward(ctx *ember.FunctionCtx, in []*ember.Tensor) *ember.Tensor {
	x := in[0]
	if !x.DType().IsFloat() {
		panic(&ember.DTypeError{Op: "log_sigmoid", DTypes: []ember.DType{x.DType()}, Msg: "\"log_sigmoid_forward\" not implemented for '" + x.DType().String() + "'"})
	}
	ctx.SaveForBackward(x)
	return x.Neg().ReLU().Neg().Sub(x.Abs().Neg().Exp().Log1p())
}

func (logSigmoid) Backward(ctx *ember.FunctionCtx, g *ember.Tensor) []*ember.Tensor {
	return []*ember.Tensor{g.Mul(ctx.Saved()[0].Neg().Sigmoid())}
}
