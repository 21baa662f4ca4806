package cuda

import (
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
)

var _ backend.Attender = (*Backend)(nil)

// AttentionSupported: Float32, Float64, BFloat16 and Float16 (computed in
// float32, the outputs rounded once) with head dims up to 256 (the kernels
// keep a row in registers).
func (b *Backend) AttentionSupported(dt backend.DType, e, ev int) bool {
	_, ok := kernels.AttentionHeadDim(e, ev)
	return ok && slices.Contains(kernels.AttentionDTypes, dt)
}

func maskOperand(mask backend.View, p backend.AttentionParams) kernels.Operand {
	if p.Mask == backend.NoMask {
		return kernels.Operand{}
	}
	return operand(mask)
}

// AttentionForward runs the fused forward kernel (kernels.AttentionForward).
func (b *Backend) AttentionForward(out, lse, q, k, v, mask backend.View, p backend.AttentionParams) {
	d := devOf(out)
	run(d, kernels.AttentionForward(d.gpu.Props(), operand(out), operand(lse), operand(q), operand(k), operand(v), maskOperand(mask, p), p), out, lse, q, k, v, mask)
}

// AttentionBackward runs the dQ and the dK/dV kernels with a [B, L]
// scratch for each row's dO·O.
func (b *Backend) AttentionBackward(gq, gk, gv, gout, q, k, v, mask, out, lse backend.View, p backend.AttentionParams) {
	d := devOf(gq)
	ls := storageOf(lse.S)
	n := lse.NumElements()
	dd, err := b.Alloc(ls.Device(), ls.dt, n)
	if err != nil {
		backend.AllocPanic(ls.Device(), int64(n*ls.dt.Size()), err)
	}
	defer dd.Release() // the allocator reuses it only after the stream's queued work
	ddv := backend.View{S: dd, Shape: []int{n}, Strides: []int{1}}
	run(d, kernels.AttentionBackward(d.gpu.Props(), operand(gq), operand(gk), operand(gv), operand(gout),
		operand(q), operand(k), operand(v), maskOperand(mask, p), operand(out), operand(lse), operand(ddv), p),
		gq, gk, gv, gout, q, k, v, out, lse, ddv, mask)
}
