package backend

import "fmt"

// DType is the element type of a tensor.
type DType uint8

const (
	Float32 DType = iota // the default floating type
	Float64
	Int64 // the default integer type
	Int32
	Bool
	BFloat16 // bfloat16: float32's exponent range, 8 bits of significand (two bytes)
	Float16  // IEEE binary16 (two bytes)
	numDTypes
)

var dtypeNames = [...]string{"float32", "float64", "int64", "int32", "bool", "bfloat16", "float16"}

func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size is the number of bytes an element takes.
func (d DType) Size() int {
	switch d {
	case Float64, Int64:
		return 8
	case Float32, Int32:
		return 4
	case BFloat16, Float16:
		return 2
	case Bool:
		return 1
	}
	return 0
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 || d.IsHalf() }

// IsInt reports whether d is an integer type (not bool).
func (d DType) IsInt() bool { return d == Int64 || d == Int32 }

// Category orders the kinds of type as PyTorch's promotion does: bool < integer < floating.
func (d DType) Category() int {
	switch {
	case d == Bool:
		return 0
	case d.IsInt():
		return 1
	default:
		return 2
	}
}

// Promote returns the type two tensors of types a and b combine into
// (torch.promote_types): bfloat16 and float16 together give float32.
func Promote(a, b DType) DType {
	if a == b {
		return a
	}
	if a.IsHalf() && b.IsHalf() {
		return Float32
	}
	if a.Category() != b.Category() {
		if a.Category() > b.Category() {
			return a
		}
		return b
	}
	if a.Size() >= b.Size() {
		return a
	}
	return b
}
