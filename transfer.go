package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// To returns a copy of t on dev; when t is already on dev it returns t itself
// (as PyTorch's .to and .cuda do). The original is untouched. A meta tensor
// has no data to copy to another device: that panics with an error wrapping
// ErrNoData, as PyTorch's "Cannot copy out of meta tensor; no data!".
func (t *Tensor) To(dev Device) *Tensor {
	t.live("to")
	if dev == t.dev {
		return t
	}
	b := backendOf(dev)
	var out *Tensor
	switch {
	case dev.Type == backend.MetaType:
		out = empty(t.shape, t.dtype, dev)
	default:
		host := t.hostData("to")
		s, err := b.FromHost(dev, host)
		if err != nil {
			panic(allocError(dev, int64(t.NumElements()*t.dtype.Size()), err))
		}
		out = &Tensor{st: newStorage(s, b, t.shape), shape: t.shape.clone(), strides: backend.ContiguousStrides(t.shape), dtype: t.dtype, dev: dev}
	}
	return carryGrad(t, out, "ToCopyBackward0")
}

// CPU returns t on the CPU (t itself when it is already there).
func (t *Tensor) CPU() *Tensor { return t.To(CPU) }

// CUDA returns t on cuda:i (t itself when it is already there).
func (t *Tensor) CUDA(i int) *Tensor { return t.To(CUDA(i)) }

// Cast returns t converted to dtype dt (t itself when it already has it).
func (t *Tensor) Cast(dt DType) *Tensor {
	t.live("to")
	checkDType("to", dt)
	if dt == t.dtype {
		return t
	}
	out := empty(t.shape, dt, t.dev)
	t.be().Copy(out.view(), t.view())
	if dt.IsFloat() && t.dtype.IsFloat() {
		return carryGrad(t, out, "ToCopyBackward0")
	}
	return out
}

// Contiguous returns t itself when it is row-major without gaps, else a
// contiguous copy.
func (t *Tensor) Contiguous() *Tensor {
	t.live("contiguous")
	if t.wholeStorage() {
		return t
	}
	out := empty(t.shape, t.dtype, t.dev)
	t.be().Copy(out.view(), t.view())
	return recordUnary(t, out, "CloneBackward0", func(g *Tensor) *Tensor { return g })
}

// Clone returns a copy with its own storage.
func (t *Tensor) Clone() *Tensor {
	t.live("clone")
	out := empty(t.shape, t.dtype, t.dev)
	t.be().Copy(out.view(), t.view())
	return recordUnary(t, out, "CloneBackward0", func(g *Tensor) *Tensor { return g })
}

// hostData copies the elements, in row-major order, into a new Go slice of
// t's dtype. It waits for queued work. Meta tensors panic with ErrNoData.
func (t *Tensor) hostData(op string) any {
	t.live(op)
	if t.dev.Type == backend.MetaType {
		panic(fmt.Errorf("%s: %w", op, ErrNoData))
	}
	c := t
	if !t.wholeStorage() {
		c = empty(t.shape, t.dtype, t.dev)
		t.be().Copy(c.view(), t.view())
		defer c.Release()
	}
	n := t.NumElements()
	var host any
	switch t.dtype {
	case Float32:
		host = make([]float32, n)
	case Float64:
		host = make([]float64, n)
	case Int64:
		host = make([]int64, n)
	case Int32:
		host = make([]int32, n)
	case Bool:
		host = make([]bool, n)
	case BFloat16:
		host = make([]backend.BF16, n)
	case Float16:
		host = make([]backend.F16, n)
	}
	if err := c.be().ToHost(c.st.s, host); err != nil {
		panic(fmt.Errorf("%s: reading %v tensor: %w", op, t.dev, err))
	}
	if err := flushChecks(t.dev); err != nil {
		panic(err)
	}
	return host
}

// Data returns a copy of the elements in row-major order as a Go slice of
// the tensor's own type ([]float32, []float64, []int64, []int32, []bool,
// or the bits []backend.BF16 / []backend.F16 of the two-byte floats).
func (t *Tensor) Data() any { return t.hostData("data") }

func convertAll[D float32 | float64 | int64 | int32](host any) []D {
	switch h := host.(type) {
	case []float32:
		return conv[D](h)
	case []float64:
		return conv[D](h)
	case []int64:
		return conv[D](h)
	case []int32:
		return conv[D](h)
	case []bool:
		out := make([]D, len(h))
		for i, b := range h {
			if b {
				out[i] = 1
			}
		}
		return out
	case []backend.BF16:
		out := make([]D, len(h))
		for i, v := range h {
			out[i] = D(v.Float32())
		}
		return out
	case []backend.F16:
		out := make([]D, len(h))
		for i, v := range h {
			out[i] = D(v.Float32())
		}
		return out
	}
	return nil
}

// FromBits makes a BFloat16 or Float16 tensor from the raw bits of its
// elements (bfloat16: the top 16 bits of a float32; float16: IEEE
// binary16), in row-major order; options as FromSlice (a Dtype option
// converts). Other dtypes are a *DTypeError.
func FromBits(bits []uint16, dt DType, shape Shape, opts ...Option) *Tensor {
	if shape == nil {
		shape = Shape{len(bits)}
	}
	if checkShape("from_bits", shape) != len(bits) {
		shapeErr("from_bits", fmt.Sprintf("%d elements do not fill shape %v", len(bits), shape), shape)
	}
	var host any
	switch dt {
	case BFloat16:
		h := make([]backend.BF16, len(bits))
		for i, b := range bits {
			h[i] = backend.BF16(b)
		}
		host = h
	case Float16:
		h := make([]backend.F16, len(bits))
		for i, b := range bits {
			h[i] = backend.F16(b)
		}
		host = h
	default:
		panic(&DTypeError{Op: "from_bits", DTypes: []DType{dt}, Msg: "FromBits takes BFloat16 or Float16"})
	}
	o := makeOptions(dt, opts)
	b := backendOf(o.dev)
	s, err := b.FromHost(o.dev, host)
	if err != nil {
		panic(allocError(o.dev, int64(len(bits)*2), err))
	}
	t := &Tensor{st: newStorage(s, b, shape), shape: shape.clone(), strides: backend.ContiguousStrides(shape), dtype: dt, dev: o.dev}
	if o.dtype != dt {
		t = t.Cast(o.dtype)
	}
	return finish(t, o)
}

// Bits returns the raw bits of a BFloat16 or Float16 tensor's elements in
// row-major order (see FromBits); other dtypes are a *DTypeError.
func (t *Tensor) Bits() []uint16 {
	t.nonNil("bits")
	if !t.dtype.IsHalf() {
		panic(&DTypeError{Op: "bits", DTypes: []DType{t.dtype}, Msg: "Bits needs a BFloat16 or Float16 tensor"})
	}
	out := make([]uint16, t.NumElements())
	switch h := t.hostData("bits").(type) {
	case []backend.BF16:
		for i, v := range h {
			out[i] = uint16(v)
		}
	case []backend.F16:
		for i, v := range h {
			out[i] = uint16(v)
		}
	}
	return out
}

func conv[D, S float32 | float64 | int64 | int32](s []S) []D {
	if d, ok := any(s).([]D); ok {
		return d
	}
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = D(v)
	}
	return out
}

// Float32s returns the elements in row-major order, converted to float32.
func (t *Tensor) Float32s() []float32 { return convertAll[float32](t.hostData("float32s")) }

// Float64s returns the elements in row-major order, converted to float64.
func (t *Tensor) Float64s() []float64 { return convertAll[float64](t.hostData("float64s")) }

// Int64s returns the elements in row-major order, converted to int64.
func (t *Tensor) Int64s() []int64 { return convertAll[int64](t.hostData("int64s")) }

// Int32s returns the elements in row-major order, converted to int32.
func (t *Tensor) Int32s() []int32 { return convertAll[int32](t.hostData("int32s")) }

// Bools returns the elements in row-major order as bools (nonzero is true).
func (t *Tensor) Bools() []bool {
	host := t.hostData("bools")
	if b, ok := host.([]bool); ok {
		return b
	}
	f := convertAll[float64](host)
	out := make([]bool, len(f))
	for i, v := range f {
		out[i] = v != 0
	}
	return out
}

// Item returns the value of a one-element tensor as float64.
func (t *Tensor) Item() float64 {
	t.nonNil("item")
	if t.NumElements() != 1 {
		shapeErr("item", fmt.Sprintf("a Tensor with %d elements cannot be converted to Scalar", t.NumElements()), t.shape)
	}
	return convertAll[float64](t.hostData("item"))[0]
}
