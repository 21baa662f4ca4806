package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// GroupNorm is torch.nn.GroupNorm: the channels of an [N, C, *] input are
// split into Groups groups, each normalised over its channels and
// positions with the group's mean and biased variance (the same in
// training and evaluation; there are no running statistics), then scaled
// and shifted per channel by Weight and Bias ([C]; nil both is
// affine=False).
type GroupNorm struct {
	Base
	Weight, Bias     *ember.Tensor
	Groups, Channels int
	Eps              float64
}

// NewGroupNorm returns a GroupNorm of groups groups over channels channels
// (weight 1, bias 0, eps 1e-5); channels must be divisible by groups.
func NewGroupNorm(groups, channels int) *GroupNorm {
	if groups <= 0 || channels < 0 || channels%groups != 0 {
		argErr("NewGroupNorm", "num_channels (%d) must be divisible by num_groups (%d)", channels, groups)
	}
	g := &GroupNorm{Groups: groups, Channels: channels, Eps: 1e-5}
	g.Init(g)
	g.Weight = param(ember.Ones(ember.Shape{channels}))
	g.Bias = param(ember.Zeros(ember.Shape{channels}))
	g.RegisterParameter("weight", &g.Weight)
	g.RegisterParameter("bias", &g.Bias)
	return g
}

// Forward normalises an [N, C, *] input. Another channel count panics with
// an *ember.ShapeError; one value per group (PyTorch's batch-size check)
// with an *ember.ValueError.
func (g *GroupNorm) Forward(x *ember.Tensor) (out *ember.Tensor) {
	CheckNil(g, "Forward")
	const op = "nn.GroupNorm"
	if x == nil {
		panic(&ember.ShapeError{Op: op, Msg: "nil tensor"})
	}
	s := x.Shape()
	if len(s) < 2 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{s}, Msg: fmt.Sprintf("Expected at least 2 dimensions for input tensor but received %d", len(s))})
	}
	if g.Groups <= 0 || g.Channels%g.Groups != 0 { // fields set after NewGroupNorm
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("num_channels (%d) must be divisible by num_groups (%d)", g.Channels, g.Groups)})
	}
	if s[1] != g.Channels {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{s}, Msg: fmt.Sprintf("Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape [%d] and input of shape %v", g.Channels, s)})
	}
	if dt := x.DType(); !dt.IsFloat() {
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{dt}, Msg: "group_norm needs a floating dtype"})
	}
	// torch.nn.functional.group_norm's _verify_batch_size on
	// [N·C/G, G, *]
	per := s[0] * s[1] / g.Groups
	for _, d := range s[2:] {
		per *= d
	}
	if per == 1 {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Expected more than 1 value per channel when training, got input size %v", s)})
	}
	if x.NumElements() == 0 {
		return x.MulScalar(1)
	}
	if dt := x.DType(); dt.IsHalf() {
		// the statistics and the affine in float32, the result rounded once
		x = x.Cast(ember.Float32)
		defer func() { out = out.Cast(dt) }()
	}
	xg := x.Reshape(s[0], g.Groups, -1)
	mean := xg.Mean(ember.Dims(2), ember.KeepDim())
	dev := xg.Sub(mean)
	v := dev.Square().Mean(ember.Dims(2), ember.KeepDim())
	y := dev.Mul(v.AddScalar(g.Eps).Rsqrt()).Reshape(s...)
	bshape := make([]int, len(s))
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[1] = g.Channels
	if g.Weight != nil {
		y = y.Mul(g.Weight.Cast(y.DType()).Reshape(bshape...))
	}
	if g.Bias != nil {
		y = y.Add(g.Bias.Cast(y.DType()).Reshape(bshape...))
	}
	return y
}

// ExtraRepr is "2, 6, eps=1e-05, affine=True", as PyTorch prints it.
func (g *GroupNorm) ExtraRepr() string {
	CheckNil(g, "ExtraRepr")
	return fmt.Sprintf("%d, %d, eps=%s, affine=%s", g.Groups, g.Channels, pyFloat(g.Eps), pyBool(g.Weight != nil))
}
