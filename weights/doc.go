// Package weights reads and writes model weights: the safetensors format
// (LoadSafetensors, SaveSafetensors) and PyTorch's torch.save zip format
// (LoadPyTorch).
//
// Every loader treats its input as hostile: sizes, offsets, shapes and
// strides are checked against the file before anything is allocated, so a
// corrupt or truncated file gives a *FormatError, never a panic or an
// allocation larger than a small multiple of the file. A whole load is
// bounded (see SetLoadLimit): what it materialises, counted once per
// storage, stays within 16 × the file's size (at least 16 MiB, at most
// 16 GiB) unless raised; a file holds at most MaxTensors tensors. The
// tensors of a .pth file that share a storage share it after loading too,
// as in PyTorch (views, stride-0 expansions). Zip entries that overlap,
// pickles that would run the unpickler out of bounds (opcodes, stack,
// nested MARKs, memo) and safetensors headers that another parser could
// read differently (duplicate keys, non-UTF-8, data_offsets that are not
// two integers) are refused.
//
// ember has the dtypes float32, float64, float16, bfloat16, int64, int32
// and bool; tensors of those load as they are stored. Other stored integer
// dtypes are widened on load: uint8, int8 and int16 become int32; uint32
// becomes int64. Complex, quantized and sparse tensors are refused with
// an error that says so.
package weights

import (
	"fmt"

	"github.com/emberml/ember"
)

// FormatError reports a file that is not a valid weights file of the
// expected format.
type FormatError struct {
	Format string // "safetensors" or "pytorch"
	Path   string // the file, when known
	Msg    string
}

func (e *FormatError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", e.Format, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Format, e.Path, e.Msg)
}

// elemKind is a stored element type, before widening to an ember dtype.
type elemKind int

const (
	kF64 elemKind = iota
	kF32
	kF16
	kBF16
	kI64
	kI32
	kI16
	kI8
	kU8
	kU32
	kBool
)

func (k elemKind) size() int {
	switch k {
	case kF64, kI64:
		return 8
	case kF32, kI32, kU32:
		return 4
	case kF16, kBF16, kI16:
		return 2
	}
	return 1
}

// decode converts n little-endian elements of kind k in b into a tensor of
// the given shape.
func decode(k elemKind, b []byte, shape ember.Shape) *ember.Tensor {
	n := shape.NumElements()
	switch k {
	case kF64:
		out := make([]float64, n)
		for i := range out {
			out[i] = f64(b[8*i:])
		}
		return ember.FromSlice(out, shape)
	case kF32:
		out := make([]float32, n)
		for i := range out {
			out[i] = f32(b[4*i:])
		}
		return ember.FromSlice(out, shape)
	case kF16, kBF16: // kept two bytes wide: Float16 and BFloat16 tensors
		out := make([]uint16, n)
		for i := range out {
			out[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
		return ember.FromBits(out, k.dtype(), shape)
	case kI64:
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(u64(b[8*i:]))
		}
		return ember.FromSlice(out, shape)
	case kU32:
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(u32(b[4*i:]))
		}
		return ember.FromSlice(out, shape)
	case kI32:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(u32(b[4*i:]))
		}
		return ember.FromSlice(out, shape)
	case kI16:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8))
		}
		return ember.FromSlice(out, shape)
	case kI8:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(int8(b[i]))
		}
		return ember.FromSlice(out, shape)
	case kU8:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(b[i])
		}
		return ember.FromSlice(out, shape)
	default: // kBool
		out := make([]bool, n)
		for i := range out {
			out[i] = b[i] != 0
		}
		return ember.FromSlice(out, shape)
	}
}

// dtype is the ember dtype k loads as (the small integer kinds widen; the
// two-byte floats do not).
func (k elemKind) dtype() ember.DType {
	switch k {
	case kF64:
		return ember.Float64
	case kF32:
		return ember.Float32
	case kF16:
		return ember.Float16
	case kBF16:
		return ember.BFloat16
	case kI64, kU32:
		return ember.Int64
	case kI32, kI16, kI8, kU8:
		return ember.Int32
	}
	return ember.Bool
}
