package gemm

import "testing"

// TestGemv: one-row products large enough for the streaming path, every
// transpose, padding, alpha/beta (beta 0 over NaNs), one and two threads,
// against the reference product.
func TestGemv(t *testing.T) {
	defer clearRefs()
	defer SetThreads(0)
	for _, th := range []int{1, 2} {
		SetThreads(th)
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, tc := range []gemmCase{
					{m: 1, n: 300, k: 130, alpha: 1},
					{m: 1, n: 1000, k: 77, pad: 3, alpha: 0.5, beta: 2},
					{m: 1, n: 129, k: 300, alpha: -1, nanC: true},
				} {
					tc.transA, tc.transB = tA, tB
					check(t, tc, 0x1p-24, Sgemm)
					check(t, tc, 0x1p-53, Dgemm)
				}
			}
		}
	}
}
