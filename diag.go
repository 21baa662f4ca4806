package ember

import "fmt"

// Diagonal returns a view of the diagonal of t with respect to dims dim1
// and dim2, as torch.diagonal(t, offset, dim1, dim2): those two dims are
// removed and the diagonal is appended as the last dim. offset 0 is the
// main diagonal, a positive offset one above it, a negative one below it.
// Writing to the view writes to t; its gradient is g on the diagonal and
// 0 elsewhere (DiagonalBackward0).
func (t *Tensor) Diagonal(offset, dim1, dim2 int) *Tensor {
	const name = "diagonal"
	t.live(name)
	d1, d2 := t.dim(name, dim1), t.dim(name, dim2)
	if d1 == d2 {
		shapeErr(name, fmt.Sprintf("diagonal dimensions cannot be identical %d, %d", dim1, dim2), t.shape)
	}
	n := 0
	if offset >= 0 {
		if offset < t.shape[d2] {
			n = max(min(t.shape[d1], t.shape[d2]-offset), 0)
		}
	} else if -offset < t.shape[d1] {
		n = max(min(t.shape[d1]+offset, t.shape[d2]), 0)
	}
	off := t.offset
	if n > 0 {
		if offset >= 0 {
			off += offset * t.strides[d2]
		} else {
			off -= offset * t.strides[d1]
		}
	}
	var ns Shape
	var st []int
	for i := range t.shape {
		if i != d1 && i != d2 {
			ns = append(ns, t.shape[i])
			st = append(st, t.strides[i])
		}
	}
	ns = append(ns, n)
	st = append(st, t.strides[d1]+t.strides[d2])
	out := t.alias(ns, st, off)
	return recordSliceLike(t, out, "DiagonalBackward0", func(z *Tensor) *Tensor { return z.Diagonal(offset, dim1, dim2) })
}

// DiagEmbed returns a tensor whose diagonals (with respect to dims dim1
// and dim2 of the output, which has one more dim than t) hold the last dim
// of t, as torch.diag_embed(t, offset, dim1, dim2); everything else is 0.
// The usual call is DiagEmbed(0, -2, -1): a batch of diagonal matrices.
func (t *Tensor) DiagEmbed(offset, dim1, dim2 int) *Tensor {
	const name = "diag_embed"
	t.live(name)
	rank := t.Dim() + 1
	d1, d2 := wrapDim(name, dim1, rank, t.shape), wrapDim(name, dim2, rank, t.shape)
	if d1 == d2 {
		shapeErr(name, fmt.Sprintf("diagonal dimensions cannot be identical %d, %d", dim1, dim2), t.shape)
	}
	if t.Dim() == 0 {
		shapeErr(name, "Dimension out of range (expected to be in range of [-1, 0], but got -2)", t.shape)
	}
	last := t.shape[t.Dim()-1]
	abs := offset
	if abs < 0 {
		abs = -abs
	}
	if abs > maxElems-last {
		shapeErr(name, fmt.Sprintf("offset %d is too large", offset), t.shape)
	}
	sz := last + abs
	ns := make(Shape, rank)
	rest := t.shape[:t.Dim()-1]
	j := 0
	for i := range ns {
		if i == d1 || i == d2 {
			ns[i] = sz
			continue
		}
		ns[i] = rest[j]
		j++
	}
	checkShape(name, ns)
	out := Zeros(ns, On(t.dev), Dtype(t.dtype))
	out.Diagonal(offset, d1, d2).CopyFrom(t.Detach())
	if !needsGrad(t) {
		return out
	}
	return recordUnary(t, out, "DiagEmbedBackward0", func(g *Tensor) *Tensor { return g.Diagonal(offset, d1, d2) })
}

// Diag is torch.diag(t, diagonal): a 1-D t becomes a square matrix with t
// on its diagonal-th diagonal; a 2-D t gives a copy of its diagonal-th
// diagonal. Other ranks panic with a *ShapeError.
func (t *Tensor) Diag(diagonal int) *Tensor {
	const name = "diag"
	t.live(name)
	switch t.Dim() {
	case 1:
		return rename(t.DiagEmbed(diagonal, 0, 1), "DiagBackward0")
	case 2:
		return rename(t.Diagonal(diagonal, 0, 1).Clone(), "DiagBackward0")
	}
	shapeErr(name, fmt.Sprintf("diag(): Supports 1D or 2D tensors. Got %dD", t.Dim()), t.shape)
	return nil
}
