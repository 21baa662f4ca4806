package distributions

import (
	"fmt"

	"github.com/emberml/ember"
)

// Independent reinterprets the rightmost n batch dims of a base
// distribution as event dims (LogProb and Entropy sum over them), as
// torch.distributions.Independent.
type Independent struct {
	base
	Base Distribution
	N    int // reinterpreted_batch_ndims
}

// NewIndependent wraps d, moving its last n batch dims into the event.
func NewIndependent(d Distribution, n int) *Independent {
	const op = "distributions.Independent"
	if isNil(d) {
		panic(&ember.ValueError{Op: op, Msg: "base distribution is nil"})
	}
	bs := d.BatchShape()
	if n < 0 || n > len(bs) {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual %d vs %d", n, len(bs))})
	}
	cut := len(bs) - n
	return &Independent{
		base: base{name: "Independent", batch: bs[:cut:cut], event: append(append(ember.Shape{}, bs[cut:]...), d.EventShape()...)},
		Base: d, N: n,
	}
}

func (d *Independent) String() string {
	nilGuard(d, "String")
	return fmt.Sprintf("Independent(%s, %d)", d.Base.String(), d.N)
}
func (d *Independent) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return d.Base.HasRSample()
}
func (d *Independent) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Base.Mean()
}
func (d *Independent) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Base.Variance()
}
func (d *Independent) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Base.Stddev()
}
func (d *Independent) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return d.Base.Sample(s...)
}
func (d *Independent) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	return d.Base.RSample(s...)
}
func (d *Independent) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	return sumRightmost(d.Base.LogProb(v), d.N)
}
func (d *Independent) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return sumRightmost(d.Base.Entropy(), d.N)
}
