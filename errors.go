package ember

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/emberml/ember/backend"
)

// DeviceMismatchError is the panic of an op whose operands sit on
// different devices.
type DeviceMismatchError struct {
	Op      string
	Devices []Device // the distinct devices, in operand order
}

func (e *DeviceMismatchError) Error() string {
	names := make([]string, len(e.Devices))
	for i, d := range e.Devices {
		names[i] = d.String()
	}
	return fmt.Sprintf("Expected all tensors to be on the same device, but found at least two devices, %s! (op: %s)", strings.Join(names, " and "), e.Op)
}

// ShapeError is the panic of an op given shapes it cannot take.
type ShapeError struct {
	Op     string
	Shapes []Shape
	Msg    string
}

func (e *ShapeError) Error() string {
	parts := make([]string, len(e.Shapes))
	for i, s := range e.Shapes {
		parts[i] = s.String()
	}
	msg := fmt.Sprintf("%s: %s", e.Op, e.Msg)
	if len(parts) > 0 {
		msg += " (shapes " + strings.Join(parts, ", ") + ")"
	}
	return msg
}

// DTypeError is the panic of an op given dtypes it cannot take.
type DTypeError struct {
	Op     string
	DTypes []DType
	Msg    string
}

func (e *DTypeError) Error() string {
	parts := make([]string, len(e.DTypes))
	for i, d := range e.DTypes {
		parts[i] = d.String()
	}
	return fmt.Sprintf("%s: %s (dtypes %s)", e.Op, e.Msg, strings.Join(parts, ", "))
}

// ValueError is the panic of an op given element values it cannot take
// (an integer division by zero, a class index outside [0, C)), and of a
// function given an argument it cannot take (a nil function given to
// NoGrad or Autocast, a dropout probability outside [0, 1], a batch size
// of 0: Python's ValueError).
// The other packages (nn, optim, data, ...) panic with it too, naming
// themselves in Op ("nn.NewDropout").
type ValueError struct {
	Op  string
	Msg string
}

func (e *ValueError) Error() string { return fmt.Sprintf("%s: %s", e.Op, e.Msg) }

// ReleasedError is the panic of using a tensor after Release.
type ReleasedError struct{ Op string }

func (e *ReleasedError) Error() string {
	return fmt.Sprintf("%s: tensor used after Release", e.Op)
}

// ErrNoData is returned (or panicked) when reading a meta tensor's data. It
// is backend.ErrNoData, the error the meta backend returns, so errors.Is
// matches either.
var ErrNoData = backend.ErrNoData

// Try runs f and returns the error it panicked with, if that was an error
// value (ShapeError, DeviceMismatchError, DeviceError, ...). Other panics,
// including runtime errors, go on unwinding. A nil f is a *ValueError.
func Try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				var re runtime.Error
				if !errors.As(e, &re) {
					err = e
					return
				}
			}
			panic(r)
		}
	}()
	mustFunc("try", f) // returned as the error
	f()
	return nil
}

func shapeErr(op, msg string, shapes ...Shape) {
	panic(&ShapeError{Op: op, Shapes: shapes, Msg: msg})
}

// IndexError is the panic of an indexing op (Gather, Scatter, IndexSelect,
// IndexAdd, Embedding, OneHot, ...) given an index outside its dimension,
// as PyTorch's "index out of range" errors.
type IndexError struct {
	Op    string
	Index int64 // the first offending value found (the smallest or the largest)
	Dim   int
	Size  int
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("%s: index %d is out of bounds for dimension %d with size %d", e.Op, e.Index, e.Dim, e.Size)
}
