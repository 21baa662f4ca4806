// Package distributions holds probability distributions with
// torch.distributions' semantics (PyTorch 1.13): sampling, log
// densities, entropies, moments, CDFs and KL divergences, built only from
// ember's public tensor ops, so they run on every device and
// differentiate through autograd. RSample draws with the
// reparameterisation trick, differentiably with respect to the
// parameters; Sample draws without gradient.
//
// Parameters broadcast as in PyTorch (the batch shape is the broadcast
// of the parameter shapes) and are validated as torch's default
// validate_args=True does: a parameter outside its constraint, or a value
// outside the support given to LogProb, panics with an *ember.ValueError
// naming the distribution (values are not checked on the meta device,
// which has none). A method PyTorch does not provide for a distribution
// (RSample of a Bernoulli, CDF of a Gamma) panics with a
// *NotImplementedError.
//
// Random draws come from ember's generator (ember.ManualSeed); the
// streams are not PyTorch's.
package distributions

//go:generate go run ./internal/nilguardgen

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/emberml/ember"
)

// Distribution is the interface of every distribution, as
// torch.distributions.Distribution.
type Distribution interface {
	// BatchShape is the shape over which parameters are batched.
	BatchShape() ember.Shape
	// EventShape is the shape of a single draw (empty for univariate).
	EventShape() ember.Shape
	// HasRSample reports whether RSample is supported.
	HasRSample() bool
	// Sample draws sample shape + batch shape + event shape values,
	// without gradient.
	Sample(shape ...int) *ember.Tensor
	// RSample draws as Sample, differentiably w.r.t. the parameters.
	RSample(shape ...int) *ember.Tensor
	// LogProb is the log density (or mass) of value.
	LogProb(value *ember.Tensor) *ember.Tensor
	// CDF is the cumulative distribution function at value.
	CDF(value *ember.Tensor) *ember.Tensor
	// ICDF is the inverse CDF at value in [0, 1].
	ICDF(value *ember.Tensor) *ember.Tensor
	// Entropy is the entropy, of batch shape.
	Entropy() *ember.Tensor
	Mean() *ember.Tensor
	Variance() *ember.Tensor
	Stddev() *ember.Tensor
	String() string
}

// NotImplementedError is the panic of a method a distribution does not
// provide (torch raises NotImplementedError): RSample of a discrete
// distribution, CDF of a Gamma, the KL divergence of an unregistered
// pair.
type NotImplementedError struct {
	Op  string // "distributions.Bernoulli.RSample", "distributions.KLDivergence"
	Msg string
}

func (e *NotImplementedError) Error() string {
	if e.Msg == "" {
		return e.Op + ": not implemented"
	}
	return e.Op + ": " + e.Msg
}

// param is a named parameter, for String and error messages.
type param struct {
	name string
	t    *ember.Tensor
}

// base holds what every distribution shares and the defaults of the
// methods torch's base class leaves unimplemented.
type base struct {
	name   string
	batch  ember.Shape
	event  ember.Shape
	params []param
}

func (b *base) BatchShape() ember.Shape { return append(ember.Shape{}, b.batch...) }
func (b *base) EventShape() ember.Shape { return append(ember.Shape{}, b.event...) }
func (b *base) HasRSample() bool        { return false }

func (b *base) String() string {
	parts := make([]string, len(b.params))
	for i, p := range b.params {
		parts[i] = fmt.Sprintf("%s: %v", p.name, p.t.Shape())
	}
	return b.name + "(" + strings.Join(parts, ", ") + ")"
}

func (b *base) op(method string) string { return "distributions." + b.name + method }

func (b *base) notImplemented(method string) {
	panic(&NotImplementedError{Op: b.op("." + method), Msg: b.name + " does not implement " + method})
}

func (b *base) RSample(...int) *ember.Tensor     { b.notImplemented("RSample"); return nil }
func (b *base) CDF(*ember.Tensor) *ember.Tensor  { b.notImplemented("CDF"); return nil }
func (b *base) ICDF(*ember.Tensor) *ember.Tensor { b.notImplemented("ICDF"); return nil }
func (b *base) Entropy() *ember.Tensor           { b.notImplemented("Entropy"); return nil }
func (b *base) extended(sample []int) ember.Shape { // sample + batch + event
	for _, s := range sample {
		if s < 0 {
			panic(&ember.ValueError{Op: b.op(".Sample"), Msg: fmt.Sprintf("sample shape %v has a negative size", sample)})
		}
	}
	out := append(ember.Shape{}, sample...)
	out = append(out, b.batch...)
	return append(out, b.event...)
}

// isNil reports whether d is nil or a nil pointer in the interface.
func isNil(d Distribution) bool {
	if d == nil {
		return true
	}
	v := reflect.ValueOf(d)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// isMeta reports whether t has no data to check.
func isMeta(t *ember.Tensor) bool { return t.Device().Type == ember.MetaType }

// allTrue reports whether every element of the Bool tensor ok is true
// (true on the meta device, which has no values).
func allTrue(ok *ember.Tensor) bool {
	if isMeta(ok) || ok.NumElements() == 0 {
		return true
	}
	return ok.All().Item() != 0
}

// check panics with torch's message when a parameter breaks its
// constraint (ok: where it holds).
func (b *base) check(name string, t, ok *ember.Tensor, constraint string) {
	if !allTrue(ok) {
		panic(&ember.ValueError{Op: "distributions." + b.name, Msg: fmt.Sprintf(
			"Expected parameter %s (Tensor of shape %v) of distribution %s to satisfy the constraint %s, but found invalid values",
			name, t.Shape(), b.String(), constraint)})
	}
}

// validateSample checks value's shape against batch+event and, with ok
// (where value lies in the support), its values, as torch's
// _validate_sample.
func (b *base) validateSample(method string, value *ember.Tensor, support string, ok func() *ember.Tensor) {
	if value == nil {
		panic(&ember.ValueError{Op: b.op("." + method), Msg: "value is nil"})
	}
	vs := value.Shape()
	ev := b.event
	if len(vs) < len(ev) || !ember.Shape(vs[len(vs)-len(ev):]).Equal(ev) {
		panic(&ember.ValueError{Op: b.op("." + method), Msg: fmt.Sprintf("The right-most size of value must match event_shape: %v vs %v.", vs, ev)})
	}
	want := append(append(ember.Shape{}, b.batch...), ev...)
	for i, j := len(vs)-1, len(want)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if vs[i] != 1 && want[j] != 1 && vs[i] != want[j] {
			panic(&ember.ValueError{Op: b.op("." + method), Msg: fmt.Sprintf("Value is not broadcastable with batch_shape+event_shape: %v vs %v.", vs, want)})
		}
	}
	if ok != nil && !isMeta(value) && !allTrue(ok()) {
		panic(&ember.ValueError{Op: b.op("." + method), Msg: fmt.Sprintf(
			"Expected value argument (Tensor of shape %v) to be within the support (%s) of the distribution %s, but found invalid values",
			vs, support, b.String())})
	}
}

// broadcastAll casts the parameters to one floating dtype (Float32 when
// none is floating) and expands them to their broadcast shape.
func broadcastAll(op string, ts ...*ember.Tensor) ([]*ember.Tensor, ember.Shape) {
	shapes := make([]ember.Shape, len(ts))
	for i, t := range ts {
		if t == nil {
			panic(&ember.ValueError{Op: op, Msg: "a parameter is nil"})
		}
		shapes[i] = t.Shape()
	}
	dt := floatDType(ts...)
	shape := ember.BroadcastShapes(op, shapes...)
	out := make([]*ember.Tensor, len(ts))
	for i, t := range ts {
		if t.DType() != dt {
			t = t.Cast(dt)
		}
		out[i] = t.Expand(shape...)
	}
	return out, shape
}

// floatDType is the promoted dtype of the floating ts (Float32 when none
// is floating).
func floatDType(ts ...*ember.Tensor) ember.DType {
	var dt ember.DType
	found := false
	for _, t := range ts {
		if t.DType().IsFloat() {
			if !found {
				dt, found = t.DType(), true
			} else {
				dt = ember.PromoteTypes(dt, t.DType())
			}
		}
	}
	if !found {
		dt = ember.Float32
	}
	return dt
}

// nilGuard panics with an *ember.ValueError naming the type and method
// when d is nil (a method called on a nil *Normal, ...), instead of the
// nil dereference Go would make.
func nilGuard[T any](d *T, method string) {
	if d == nil {
		name := reflect.TypeOf((*T)(nil)).Elem().Name()
		panic(&ember.ValueError{Op: "distributions." + name + "." + method, Msg: "called on a nil *distributions." + name})
	}
}

// asFloat casts value to like's dtype when it differs.
func asFloat(value, like *ember.Tensor) *ember.Tensor {
	if value.DType() != like.DType() {
		return value.Cast(like.DType())
	}
	return value
}

func full(like *ember.Tensor, shape ember.Shape, v float64) *ember.Tensor {
	return ember.Full(shape, v, ember.On(like.Device()), ember.Dtype(like.DType()))
}

func opts(like *ember.Tensor) []ember.Option {
	return []ember.Option{ember.On(like.Device()), ember.Dtype(like.DType())}
}

// eps and tiny are torch.finfo(dtype).eps and .tiny.
func eps(dt ember.DType) float64 {
	switch dt {
	case ember.Float64:
		return 0x1p-52
	case ember.Float16:
		return 0x1p-10
	case ember.BFloat16:
		return 0x1p-7
	}
	return 0x1p-23
}

func tiny(dt ember.DType) float64 {
	switch dt {
	case ember.Float64:
		return 0x1p-1022
	case ember.Float16:
		return 0x1p-14
	}
	return 0x1p-126
}

// sumRightmost sums the last n dims of t.
func sumRightmost(t *ember.Tensor, n int) *ember.Tensor {
	if n <= 0 {
		return t
	}
	dims := make([]int, n)
	for i := range dims {
		dims[i] = t.Dim() - n + i
	}
	return t.Sum(ember.Dims(dims...))
}

// noGrad runs f without gradient recording and detaches what it returns.
func noGrad(f func() *ember.Tensor) *ember.Tensor {
	var out *ember.Tensor
	ember.NoGrad(func() { out = f() })
	return out.Detach()
}

var log2Pi = math.Log(2 * math.Pi)
