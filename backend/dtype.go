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
	numDTypes
)

var dtypeNames = [...]string{"float32", "float64", "int64", "int32", "bool"}

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
	case Bool:
		return 1
	}
	return 0
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

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
// (torch.promote_types).
func Promote(a, b DType) DType {
	if a == b {
		return a
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
