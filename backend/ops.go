package backend

import (
	"fmt"

	"github.com/emberml/ember/backend/optable"
)

// UnaryOp names an elementwise function of one operand: a row of
// optable.Unaries (the constants are generated in zz_ops.go).
type UnaryOp uint8

// BinaryOp names an elementwise function of two operands: a row of
// optable.Binaries.
type BinaryOp uint8

// ReduceOp names a reduction: a row of optable.Reduces.
type ReduceOp uint8

// Params are a unary op's parameters (clamp's bounds, leaky_relu's
// slope, ...), in the order of its row's Params; unused ones are 0.
type Params [3]float64

// Row returns the op's row in the op table.
func (o UnaryOp) Row() *optable.Unary { return &optable.Unaries[o] }

func (o UnaryOp) String() string {
	if o < NumUnaryOps {
		return optable.Unaries[o].Name
	}
	return fmt.Sprintf("UnaryOp(%d)", uint8(o))
}

// Class is the op's dtype class.
func (o UnaryOp) Class() optable.Class { return optable.Unaries[o].Class }

// Cost is the op's relative cost per element.
func (o UnaryOp) Cost() int { return int(optable.Unaries[o].Cost) }

// Supports reports whether the op has a kernel for operands of dtype dt.
func (o UnaryOp) Supports(dt DType) bool {
	r := &optable.Unaries[o]
	return supports(dt, r.GoF, r.GoI, r.GoB)
}

func supports(dt DType, f, i, b string) bool {
	switch {
	case dt.IsFloat():
		return f != ""
	case dt.IsInt():
		return i != ""
	case dt == Bool:
		return b != ""
	}
	return false
}

// Row returns the op's row in the op table.
func (o BinaryOp) Row() *optable.Binary { return &optable.Binaries[o] }

func (o BinaryOp) String() string {
	if o < NumBinaryOps {
		return optable.Binaries[o].Name
	}
	return fmt.Sprintf("BinaryOp(%d)", uint8(o))
}

// Class is the op's dtype class.
func (o BinaryOp) Class() optable.Class { return optable.Binaries[o].Class }

// Cost is the op's relative cost per element.
func (o BinaryOp) Cost() int { return int(optable.Binaries[o].Cost) }

// Supports reports whether the op has a kernel for operands of dtype dt.
func (o BinaryOp) Supports(dt DType) bool {
	r := &optable.Binaries[o]
	return supports(dt, r.GoF, r.GoI, r.GoB)
}

// IsComparison reports whether the op writes a Bool result.
func (o BinaryOp) IsComparison() bool { return optable.Binaries[o].Class.BoolOut() }

func (o ReduceOp) String() string {
	if o < NumReduceOps {
		return optable.Reduces[o].Name
	}
	return fmt.Sprintf("ReduceOp(%d)", uint8(o))
}

// Supports reports whether the reduction has a kernel for sources of dtype dt.
func (o ReduceOp) Supports(dt DType) bool {
	r := &optable.Reduces[o]
	if dt == Bool {
		return r.Bools
	}
	return r.Ints && (dt.IsFloat() || dt.IsInt())
}

// OutDType is the dtype a reduction of a src of dtype dt writes.
func (o ReduceOp) OutDType(dt DType) DType {
	switch optable.Reduces[o].Out {
	case "int64":
		return Int64
	case "bool":
		return Bool
	}
	return dt
}
