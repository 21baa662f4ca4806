package gemm

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// ref computes C = alpha*op(A)*op(B) + beta*C with float64 accumulation,
// the straightforward triple loop (beta == 0 overwrites) over copies of
// op(A)'s rows and op(B)'s columns. The race detector leaves it alone: it
// runs on one goroutine, and instrumented it would take most of the -race
// tests' time.
//
//go:norace
func ref[T float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ar := make([]float64, m*k) // row i of op(A) at i*k
	bc := make([]float64, n*k) // column j of op(B) at j*k
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			if transA {
				ar[i*k+p] = float64(a[p*lda+i])
			} else {
				ar[i*k+p] = float64(a[i*lda+p])
			}
		}
	}
	for j := 0; j < n; j++ {
		for p := 0; p < k; p++ {
			if transB {
				bc[j*k+p] = float64(b[j*ldb+p])
			} else {
				bc[j*k+p] = float64(b[p*ldb+j])
			}
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p, v := range ar[i*k : i*k+k] {
				s += v * bc[j*k+p]
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			c[i*ldc+j] = T(v)
		}
	}
}

func randSlice[T float](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(r.Float64()*2 - 1)
	}
	return s
}

type gemmCase struct {
	transA, transB bool
	m, n, k        int
	pad            int // extra elements per row of A, B and C
	alpha, beta    float64
	nanC           bool
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,%dx%dx%d,pad=%d,alpha=%g,beta=%g,nan=%v",
		tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.pad, tc.alpha, tc.beta, tc.nanC)
}

// refData is one case's operands and its expected result.
type refData[T float] struct {
	a, b, c, want []T
	lda, ldb, ldc int
}

type refKey struct {
	tc   gemmCase
	size uintptr
}

// refs caches refData per case and element size: every kernel set, thread
// count and repetition checks the same case against one reference
// computation (the slow part of these tests, under the race detector
// most of all). Tests clear it when they end (clearRefs).
var refs sync.Map

func clearRefs() { refs.Clear() }

// refFor returns tc's operands (random, the same for every call) and
// expected result.
func refFor[T float](tc gemmCase) *refData[T] {
	var z T
	key := refKey{tc, unsafe.Sizeof(z)}
	if v, ok := refs.Load(key); ok {
		return v.(*refData[T])
	}
	ar, ac := tc.m, tc.k
	if tc.transA {
		ar, ac = tc.k, tc.m
	}
	br, bc := tc.k, tc.n
	if tc.transB {
		br, bc = tc.n, tc.k
	}
	h := fnv.New64a()
	fmt.Fprint(h, tc, key.size)
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	d := &refData[T]{lda: max(1, ac) + tc.pad, ldb: max(1, bc) + tc.pad, ldc: max(1, tc.n) + tc.pad}
	d.a = randSlice[T](r, max(0, ar*d.lda-tc.pad))
	d.b = randSlice[T](r, max(0, br*d.ldb-tc.pad))
	d.c = randSlice[T](r, max(0, tc.m*d.ldc))
	if tc.nanC {
		for i := range d.c {
			d.c[i] = T(math.NaN())
		}
	}
	d.want = append([]T(nil), d.c...)
	ref(tc.transA, tc.transB, tc.m, tc.n, tc.k, T(tc.alpha), d.a, d.lda, d.b, d.ldb, T(tc.beta), d.want, d.ldc)
	v, _ := refs.LoadOrStore(key, d)
	return v.(*refData[T])
}

// check runs one case through f and compares with ref. eps is the unit
// roundoff of T.
func check[T float](t *testing.T, tc gemmCase, eps float64,
	f func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)) {
	t.Helper()
	d := refFor[T](tc)
	a, b, c, want, lda, ldb, ldc := d.a, d.b, d.c, d.want, d.lda, d.ldb, d.ldc
	got := append([]T(nil), c...)
	f(tc.transA, tc.transB, tc.m, tc.n, tc.k, T(tc.alpha), a, lda, b, ldb, T(tc.beta), got, ldc)
	// Each entry sums k products of values in [-1, 1]: allow a few ulps
	// of the worst-case magnitude per term.
	tol := 4 * eps * float64(tc.k+2) * (math.Abs(tc.alpha) + math.Abs(tc.beta) + 1)
	for i := 0; i < tc.m; i++ {
		for j := 0; j < ldc; j++ {
			idx := i*ldc + j
			if idx >= len(c) {
				break
			}
			g, w := float64(got[idx]), float64(want[idx])
			if j >= tc.n {
				// Padding outside the view must be untouched.
				if !(g == float64(c[idx]) || (math.IsNaN(g) && math.IsNaN(float64(c[idx])))) {
					t.Fatalf("%v: C[%d,%d] outside the view changed: %v -> %v", tc, i, j, c[idx], g)
				}
				continue
			}
			if math.IsNaN(g) || math.Abs(g-w) > tol {
				t.Fatalf("%v: C[%d,%d] = %v, want %v (tol %g)", tc, i, j, g, w, tol)
			}
		}
	}
}

func cases(r *rand.Rand, n int) []gemmCase {
	var cs []gemmCase
	shapes := [][3]int{
		{1, 1, 1}, {17, 33, 7}, {1, 50, 9}, {50, 1, 9}, {9, 13, 0}, {5, 7, 1},
		{14, 32, 5}, {15, 33, 17}, {28, 64, 3}, {6, 16, 8}, {4, 8, 2},
		{33, 65, 400}, {100, 37, 300}, {3, 300, 2}, {300, 3, 20},
	}
	for _, s := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				cs = append(cs, gemmCase{transA: ta, transB: tb, m: s[0], n: s[1], k: s[2], alpha: 1, beta: 0})
			}
		}
	}
	alphas := []float64{1, -1, 0.5, 2, 0}
	betas := []float64{0, 1, -1, 0.25}
	for i := 0; i < n; i++ {
		cs = append(cs, gemmCase{
			transA: r.IntN(2) == 0, transB: r.IntN(2) == 0,
			m: 1 + r.IntN(90), n: 1 + r.IntN(90), k: r.IntN(90),
			pad:   r.IntN(3) * r.IntN(5),
			alpha: alphas[r.IntN(len(alphas))], beta: betas[r.IntN(len(betas))],
		})
	}
	// beta == 0 must ignore NaNs in C; beta != 0 with k == 0 scales.
	cs = append(cs,
		gemmCase{m: 20, n: 40, k: 30, pad: 3, alpha: 1, beta: 0, nanC: true},
		gemmCase{transA: true, m: 3, n: 5, k: 0, alpha: 1, beta: 0, nanC: true},
		gemmCase{m: 7, n: 9, k: 0, pad: 1, alpha: 1, beta: 0.5},
		gemmCase{m: 7, n: 9, k: 4, pad: 1, alpha: 0, beta: -2},
		gemmCase{transB: true, m: 31, n: 45, k: 19, alpha: 0, beta: 0, nanC: true},
	)
	return cs
}

func TestSgemm(t *testing.T) {
	defer clearRefs()
	forEachKernel(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, tc := range cases(r, 200) {
			check(t, tc, 0x1p-24, Sgemm)
		}
	})
}

func TestDgemm(t *testing.T) {
	defer clearRefs()
	forEachKernel(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, tc := range cases(r, 200) {
			check(t, tc, 0x1p-53, Dgemm)
		}
	})
}

// TestLarge covers several cache blocks and the multi-goroutine split.
func TestLarge(t *testing.T) {
	defer clearRefs()
	defer SetThreads(0)
	SetThreads(3)
	forEachKernel(t, func(t *testing.T) {
		for _, tc := range []gemmCase{
			{m: 301, n: 1100, k: 530, pad: 5, alpha: 1.5, beta: 0.5},
			{transA: true, transB: true, m: 700, n: 90, k: 400, alpha: 1, beta: 0, nanC: true},
			{transB: true, m: 64, n: 800, k: 260, alpha: -1, beta: 1},
		} {
			check(t, tc, 0x1p-24, Sgemm)
			check(t, tc, 0x1p-53, Dgemm)
		}
	})
}

func TestConcurrent(t *testing.T) {
	defer clearRefs()
	r0 := rand.New(rand.NewPCG(7, 8))
	cs := cases(r0, 40)
	cs = append(cs, gemmCase{m: 200, n: 150, k: 120, alpha: 1, beta: 1})
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tc := range cs {
				check(t, tc, 0x1p-24, Sgemm)
				check(t, tc, 0x1p-53, Dgemm)
			}
		}()
	}
	wg.Wait()
}

func TestKernel(t *testing.T) {
	want := kernels[0].name
	if v := os.Getenv("EMBER_GEMM_KERNEL"); v != "" {
		want = v // the set the variable chose at start-up
	}
	if Kernel() != want {
		t.Fatalf("Kernel() = %q, want %q", Kernel(), want)
	}
	defer SetKernel(Kernel())
	if err := SetKernel("generic"); err != nil || Kernel() != "generic" {
		t.Fatalf("SetKernel(generic) = %v, Kernel() = %q", err, Kernel())
	}
	if err := SetKernel("nonesuch"); err == nil {
		t.Fatal("SetKernel(nonesuch) succeeded")
	}
}

func TestKnownValues(t *testing.T) {
	// [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]; with alpha 2, beta 1 and
	// C = ones: [39 45; 87 101].
	a := []float32{1, 2, 3, 4}
	b := []float32{5, 6, 7, 8}
	c := []float32{1, 1, 1, 1}
	Sgemm(false, false, 2, 2, 2, 2, a, 2, b, 2, 1, c, 2)
	want := []float32{39, 45, 87, 101}
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("C = %v, want %v", c, want)
		}
	}
	// Transposed: A^T * B^T with A^T = [1 3; 2 4], B^T = [5 7; 6 8]:
	// [23 31; 34 46].
	d := make([]float64, 4)
	Dgemm(true, true, 2, 2, 2, 1, []float64{1, 2, 3, 4}, 2, []float64{5, 6, 7, 8}, 2, 0, d, 2)
	wantD := []float64{23, 31, 34, 46}
	for i := range wantD {
		if d[i] != wantD[i] {
			t.Fatalf("C = %v, want %v", d, wantD)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	defer SetThreads(0)
	SetThreads(2)
	// The buffers' free lists survive collections; the GC is kept off anyway
	// so that nothing else it does counts here.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, n := range []int{40, 256} {
		a := make([]float32, n*n)
		b := make([]float32, n*n)
		c := make([]float32, n*n)
		Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n)
		Sgemm(false, true, n, n, n, 1, a, n, b, n, 0, c, n)
		allocs := testing.AllocsPerRun(5, func() {
			Sgemm(false, true, n, n, n, 1, a, n, b, n, 0, c, n)
		})
		if allocs > 0 {
			t.Errorf("n=%d: %v allocations per call", n, allocs)
		}
	}
}

func TestBadArgs(t *testing.T) {
	for name, f := range map[string]func(){
		"lda": func() {
			Sgemm(false, false, 2, 2, 3, 1, make([]float32, 6), 2, make([]float32, 6), 2, 0, make([]float32, 4), 2)
		},
		"lenb": func() {
			Sgemm(false, false, 2, 2, 3, 1, make([]float32, 6), 3, make([]float32, 5), 2, 0, make([]float32, 4), 2)
		},
		"neg": func() { Dgemm(false, false, -1, 2, 3, 1, nil, 3, nil, 2, 0, nil, 2) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestParallelBlocks repeats products with several column and k blocks on
// several goroutines, where bands of successive k blocks add into the same
// tiles of C and must not overlap in time.
func TestParallelBlocks(t *testing.T) {
	defer clearRefs()
	defer SetThreads(0)
	reps := 3
	if testing.Short() {
		reps = 1
	}
	forEachKernel(t, func(t *testing.T) {
		for _, th := range []int{2, 3} {
			SetThreads(th)
			for range reps {
				for _, tc := range []gemmCase{
					{m: 30, n: 1200, k: 1100, alpha: 1, beta: 0, nanC: true},
					{transA: true, transB: true, m: 45, n: 300, k: 1000, alpha: 2, beta: 0.5},
					{transB: true, m: 130, n: 90, k: 800, pad: 1, alpha: -1, beta: 1},
				} {
					check(t, tc, 0x1p-24, Sgemm)
					check(t, tc, 0x1p-53, Dgemm)
				}
			}
		}
	})
}

// TestNextSpin: idle workers poll twice as long after work came in time,
// long enough for the last wait when it came late within maxSpin, half as
// long after a longer wait; always within [minSpin, maxSpin].
func TestNextSpin(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct{ spin, wait, want time.Duration }{
		{100 * us, 0, 200 * us},
		{100 * us, 100 * us, 200 * us},
		{400 * us, 10 * us, maxSpin},
		{100 * us, 150 * us, 300 * us},
		{100 * us, maxSpin, maxSpin},
		{100 * us, maxSpin + 1, 50 * us},
		{minSpin, time.Second, minSpin},
		{maxSpin, time.Second, maxSpin / 2},
	} {
		if got := nextSpin(c.spin, c.wait); got != c.want {
			t.Errorf("nextSpin(%v, %v) = %v, want %v", c.spin, c.wait, got, c.want)
		}
	}
}
