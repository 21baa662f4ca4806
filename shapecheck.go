package ember

import (
	"fmt"
	"github.com/emberml/ember/backend"
	"math"
)

// maxElems bounds a tensor's element count so that its size in bytes (at
// most 8 per element) and every offset into it fit in an int.
const maxElems = math.MaxInt / 8

// checkShape panics with a *ShapeError when shape has a negative size or
// more than maxElems elements, and returns its element count.
func checkShape(op string, shape Shape) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			shapeErr(op, fmt.Sprintf("negative dimension %d", d), shape)
		}
	}
	for _, d := range shape {
		if d == 0 {
			return 0
		}
	}
	for _, d := range shape {
		if n > maxElems/d {
			shapeErr(op, fmt.Sprintf("the number of elements of shape %v overflows", shape), shape)
		}
		n *= d
	}
	return n
}

// AsStrided returns a view of t's storage with the given shape, strides
// (in elements) and storage offset, as torch.as_strided. Every element of
// the view must lie inside the storage; sizes and strides must not be
// negative. The view does not track gradients.
func (t *Tensor) AsStrided(shape Shape, strides []int, offset int) *Tensor {
	t.live("as_strided")
	if len(strides) != len(shape) {
		shapeErr("as_strided", fmt.Sprintf("mismatch in length of strides (%d) and shape (%d)", len(strides), len(shape)), shape)
	}
	n := checkShape("as_strided", shape)
	if offset < 0 {
		shapeErr("as_strided", fmt.Sprintf("negative storage offset %d", offset), shape)
	}
	last := offset
	for i, d := range shape {
		s := strides[i]
		if s < 0 {
			shapeErr("as_strided", fmt.Sprintf("negative stride %d", s), shape)
		}
		if n > 0 {
			if s > 0 && d-1 > (maxElems-last)/s {
				shapeErr("as_strided", fmt.Sprintf("strides %v overflow", strides), shape)
			}
			last += (d - 1) * s
		}
	}
	if n > 0 && last >= t.st.s.Len() {
		shapeErr("as_strided", fmt.Sprintf("setStorage: sizes %v, strides %v and storage offset %d require a storage of %d elements, it has %d", shape, strides, offset, last+1, t.st.s.Len()), shape)
	}
	return t.Detach().as(shape.clone(), append([]int(nil), strides...), offset)
}

// checkDType panics with a *DTypeError when dt is not one of ember's dtypes.
func checkDType(op string, dt DType) {
	if dt > Float16 {
		panic(&DTypeError{Op: op, DTypes: []DType{dt}, Msg: "invalid dtype"})
	}
}

// checkIntDivisor panics with a *ValueError when an integer remainder,
// floor division or fmod has a zero among its divisors, as PyTorch raises
// ZeroDivisionError. Float ops skip it; on the CPU it is one pass over the
// divisor; on CUDA it is a deferred check (checks.go), reported at the next
// read from the device, as PyTorch's device-side assert.
func checkIntDivisor(op backend.BinaryOp, ct DType, b *Tensor) {
	if !ct.IsInt() || b.dev.Type == backend.MetaType {
		return
	}
	switch op {
	case backend.Remainder, backend.FloorDiv, backend.Fmod:
	default:
		return
	}
	if b.NumElements() == 0 {
		return
	}
	checkValues(b.dev, func() *Tensor { return b.EqScalar(0).Any() }, func() error {
		return &ValueError{Op: op.String(), Msg: "ZeroDivisionError: integer division by zero"}
	})
}
