package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// MatMul is the matrix product with torch.matmul's rules: 1-D·1-D is a dot
// product, 2-D·2-D a matrix product, a 1-D operand gets a dim prepended
// (left) or appended (right) and removed afterwards, and batch dims broadcast.
func (t *Tensor) MatMul(o *Tensor) *Tensor {
	const name = "matmul"
	t.live(name)
	o.live(name)
	if dt, ok := autocastLow(t, o); ok {
		cs := []*Tensor{autocastCast(t, dt), autocastCast(o, dt)}
		return releaseCasts(cs[0].MatMul(cs[1]), []*Tensor{t, o}, cs)
	}
	if t.dtype.IsHalf() && t.dtype == o.dtype && t.dev.Type != backend.CUDAType && t.dev.Type != backend.CPUType {
		// half off CUDA (cublasGemmEx) and the CPU (bfloat16 natively,
		// VDPBF16PS where it can; float16 on the float32 kernels, widened
		// while packing): float32 products of the (already rounded)
		// operands, accumulated in float32 and rounded once.
		return inFloat32(t.dtype, []*Tensor{t, o}, func(c []*Tensor) *Tensor { return c[0].MatMul(c[1]) })
	}
	sameDevice(name, t, o)
	if t.Dim() == 0 || o.Dim() == 0 {
		shapeErr(name, "both arguments to matmul need to be at least 1D", t.shape, o.shape)
	}
	if t.dtype != o.dtype {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype, o.dtype}, Msg: "expected both operands to have the same dtype"})
	}
	if t.dtype == Bool {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype}, Msg: "matmul is not defined for bool"})
	}
	a, b := t.Detach(), o.Detach()
	if a.Dim() == 1 {
		a = a.Unsqueeze(0)
	}
	if b.Dim() == 1 {
		b = b.Unsqueeze(1)
	}
	m, k := a.shape[a.Dim()-2], a.shape[a.Dim()-1]
	k2, n := b.shape[b.Dim()-2], b.shape[b.Dim()-1]
	if k != k2 {
		shapeErr(name, fmt.Sprintf("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", m, k, k2, n), t.shape, o.shape)
	}
	batch := BroadcastShapes(name, a.shape[:a.Dim()-2], b.shape[:b.Dim()-2])
	bs := batch.NumElements()
	av := a.batchView(batch, m, k)
	bv := b.batchView(batch, k, n)
	out := empty(Shape{bs, m, n}, t.dtype, t.dev)
	if k == 0 {
		out.be().Fill(out.view(), 0)
	} else if bs*m*n > 0 {
		out.be().MatMul(out.view(), av, bv)
	}
	shape := append(batch.clone(), m, n)
	if t.Dim() == 1 {
		shape = append(shape[:len(shape)-2], shape[len(shape)-1])
	}
	if o.Dim() == 1 {
		shape = shape[:len(shape)-1]
	}
	return recordMatMul(t, o, out.as(shape, backend.ContiguousStrides(shape), 0))
}

// batchView expands t to batch+[r, c] and flattens the batch to one dim,
// copying only when the batch dims cannot share a single stride.
func (t *Tensor) batchView(batch Shape, r, c int) backend.View {
	full := append(batch.clone(), r, c)
	e := t.expandView(full)
	bs := batch.NumElements()
	// The batch dims collapse into one stride when each is the next one's
	// stride times its size (stride-0 broadcast dims collapse when all are 0).
	st := 0
	ok := true
	nb := len(batch)
	if nb > 0 {
		st = e.Strides[nb-1]
		for i := nb - 2; i >= 0; i-- {
			if batch[i+1] == 1 {
				continue
			}
			if e.Strides[i] != e.Strides[i+1]*batch[i+1] {
				ok = false
			}
		}
		// find the innermost non-trivial batch stride
		for i := nb - 1; i >= 0; i-- {
			if batch[i] != 1 {
				st = e.Strides[i]
				break
			}
		}
	}
	if !ok {
		c := (&Tensor{st: t.st, shape: full, strides: e.Strides, offset: e.Offset, dtype: t.dtype, dev: t.dev}).Contiguous()
		return backend.View{S: c.st.s, Shape: []int{bs, r, c.shape[len(full)-1]}, Strides: []int{r * c.shape[len(full)-1], c.shape[len(full)-1], 1}}
	}
	return backend.View{S: t.st.s, Shape: []int{bs, r, c}, Strides: []int{st, e.Strides[nb], e.Strides[nb+1]}, Offset: e.Offset}
}
