package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
)

// Gather writes dst[p] = src[p with dim ← index[p]].
func (b *Backend) Gather(dst, src, index backend.View, dim int) {
	d := devOf(dst)
	run(d, kernels.Gather(d.gpu.Props(), operand(dst), operand(src), operand(index), dim), dst, src, index)
}

// Scatter writes (or atomically adds) src[p] at dst[p with dim ← index[p]].
func (b *Backend) Scatter(dst, index, src backend.View, dim int, accumulate bool) {
	d := devOf(dst)
	run(d, kernels.Scatter(d.gpu.Props(), operand(dst), operand(index), operand(src), dim, accumulate), dst, index, src)
}

// Scan writes a cumulative sum or product along dim.
func (b *Backend) Scan(dst, src backend.View, dim int, prod, reverse bool) {
	d := devOf(dst)
	run(d, kernels.Scan(d.gpu.Props(), operand(dst), operand(src), dim, prod, reverse), dst, src)
}

// Sort sorts every line along dim stably.
func (b *Backend) Sort(values, indices, src backend.View, dim int, descending bool) {
	d := devOf(values)
	run(d, kernels.Sort(d.gpu.Props(), operand(values), operand(indices), operand(src), dim, descending), values, indices, src)
}
