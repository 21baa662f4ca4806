package ember

import (
	"slices"
	"testing"

	"github.com/emberml/ember/backend/cuda/cudatest"
)

// TestIndexHalf: gather, scatter, index_select and embedding copy bf16 and
// fp16 bits exactly (they were a silent no-op on the CPU); scatter_add
// (and the embedding's gradient) adds in float32 and rounds once (CUDA: a
// compare-and-swap loop on the 32-bit word). Values are small integers and halves, so every
// result is exact and equals the float32 op's, cast.
func TestIndexHalf(t *testing.T) {
	run := func(t *testing.T, dev Device) {
		src := []float32{1, -2, 3.5, 4, 0.5, -6, 7, 8, 9.5, 10, -11, 12}
		for _, dt := range []DType{BFloat16, Float16} {
			x32 := FromSlice(src, Shape{3, 4}, On(dev))
			x := x32.Cast(dt)
			idx := FromSlice([]int{2, 0, 1, 2, 1, 1, 0, 0}, Shape{2, 4}, On(dev))
			same := func(name string, got, want *Tensor) {
				t.Helper()
				if got.DType() != dt || !slices.Equal(got.CPU().Bits(), want.Cast(dt).CPU().Bits()) {
					t.Errorf("%v on %s: %s = %v, want %v", dt, dev, name, got.CPU().Float32s(), want.CPU().Float32s())
				}
			}
			same("gather", x.Gather(0, idx), x32.Gather(0, idx))
			rows := FromSlice([]int{2, 0, 2}, Shape{3}, On(dev))
			same("index_select", x.IndexSelect(0, rows), x32.IndexSelect(0, rows))
			same("embedding", Embedding(idx, x), Embedding(idx, x32))
			upd := FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 4}, On(dev))
			sidx := FromSlice([]int{0, 1, 2, 0, 2, 2, 1, 1}, Shape{2, 4}, On(dev))
			same("scatter", x.Scatter(0, sidx, upd.Cast(dt)), x32.Scatter(0, sidx, upd))
			same("scatter_add", x.ScatterAdd(0, sidx, upd.Cast(dt)), x32.ScatterAdd(0, sidx, upd))
			// the embedding's gradient scatter-adds rows (repeated ids: 0, 1, 2 twice or more)
			w := x.Detach().SetRequiresGrad(true)
			Embedding(idx, w).Sum().Backward()
			w32 := x32.Detach().SetRequiresGrad(true)
			Embedding(idx, w32).Sum().Backward()
			same("embedding backward", w.Grad(), w32.Grad())
		}
	}
	t.Run("cpu", func(t *testing.T) { run(t, CPU) })
	t.Run("cuda", func(t *testing.T) {
		if testing.Short() {
			t.Skip("emulated kernels: runs in the full suite")
		}
		if DeviceCount() == 0 {
			restore := cudatest.Use(t)
			defer restore()
		}
		run(t, CUDA(0))
	})
}

// TestSortScanHalf: sort, topk and cumsum/cumprod on bf16 and fp16 (the
// CPU's Sort left them zero): the values are small integers, so every
// result is exact.
func TestSortScanHalf(t *testing.T) {
	for _, dt := range []DType{BFloat16, Float16} {
		x := FromSlice([]float32{1, 3, 2, -5, 3}, nil).Cast(dt)
		v, i := x.Sort(0, false)
		if v.DType() != dt || !slices.Equal(v.Float32s(), []float32{-5, 1, 2, 3, 3}) || !slices.Equal(i.Int64s(), []int64{3, 0, 2, 1, 4}) {
			t.Errorf("%v sort: %v %v", dt, v.Float32s(), i.Int64s())
		}
		v, i = x.TopK(2, 0, true, true)
		if !slices.Equal(v.Float32s(), []float32{3, 3}) || !slices.Equal(i.Int64s(), []int64{1, 4}) {
			t.Errorf("%v topk: %v %v", dt, v.Float32s(), i.Int64s())
		}
		if c := x.Cumsum(0); c.DType() != dt || !slices.Equal(c.Float32s(), []float32{1, 4, 6, 1, 4}) {
			t.Errorf("%v cumsum: %v %v", dt, c.DType(), c.Float32s())
		}
		if c := x.Cumprod(0); !slices.Equal(c.Float32s(), []float32{1, 3, 6, -30, -90}) {
			t.Errorf("%v cumprod: %v", dt, c.Float32s())
		}
	}
}
