package gemm

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestAMXEncoding checks the bytes of every AMX instruction in
// kernels_amd64.s (emitted by hand, see asm/amx.go) against GNU as's
// encoding of the instruction named in the comment before them
// (testdata/amx_encoding.txt, made by asm/amx_encoding.sh).
func TestAMXEncoding(t *testing.T) {
	want := map[string]string{}
	fx, err := os.ReadFile("testdata/amx_encoding.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(fx)), "\n") {
		if ins, hex, ok := strings.Cut(line, "\t"); ok && !strings.HasPrefix(line, "#") {
			want[ins] = hex
		}
	}
	f, err := os.Open("kernels_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ins, got string
	seen := 0
	check := func() {
		if ins == "" {
			return
		}
		w, ok := want[ins]
		switch {
		case !ok:
			t.Errorf("%q: not in testdata/amx_encoding.txt (run asm/amx_encoding.sh)", ins)
		case got != w:
			t.Errorf("%q: bytes %s, GNU as %s", ins, got, w)
		}
		seen++
		ins, got = "", ""
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "// AMX: "); ok {
			check()
			ins = rest
			continue
		}
		if f := strings.Fields(line); len(f) == 2 && f[0] == "BYTE" && strings.HasPrefix(f[1], "$0x") && ins != "" {
			got += fmt.Sprintf("%02s", f[1][3:])
			continue
		}
		check()
	}
	check()
	if seen < 20 {
		t.Fatalf("found %d AMX instructions in kernels_amd64.s", seen)
	}
	t.Logf("%d AMX instructions match GNU as", seen)
}

// amxTwinSet is the kernel set in use with the Go twin of the AMX kernel.
func amxTwinSet() *kernelSet {
	ks := *current.Load()
	ks.name = "amx-go"
	if ks.b == nil {
		ks.b = bfGoKernel("amx-go") // Bgemm takes the AMX path only past its check for a bf16 kernel
	}
	ks.amx = newKernel("amx-go", amxB, bgemmAMXGo, nil, ks.b.simdPack)
	return &ks
}

func withSet(t *testing.T, ks *kernelSet) {
	old := current.Load()
	current.Store(ks)
	t.Cleanup(func() { current.Store(old) })
}

// amxCases add to bgemmCases the AMX kernel's edges: k around whole tiles
// of 16 pairs, two k blocks (more than 512 values), partial 32×32 tiles.
var amxCases = append(append([]bgemmCase(nil), bgemmCases...),
	bgemmCase{m: 32, n: 32, k: 32}, bgemmCase{m: 33, n: 31, k: 31, pad: 1}, bgemmCase{m: 64, n: 64, k: 33},
	bgemmCase{transA: true, m: 70, n: 96, k: 512}, bgemmCase{m: 40, n: 64, k: 513, pad: 2},
	bgemmCase{transB: true, m: 96, n: 100, k: 1100, threads: 2}, bgemmCase{transA: true, transB: true, m: 300, n: 70, k: 65, threads: 3})

// TestBgemmAMXGo runs Bgemm through the AMX path with the kernel's Go twin
// (any CPU) against float64 products.
func TestBgemmAMXGo(t *testing.T) {
	withSet(t, amxTwinSet())
	if p := BgemmPath(); !strings.Contains(p, "emulated AMX") {
		t.Fatalf("BgemmPath = %q", p)
	}
	for i, tc := range amxCases {
		bgemmRun(t, tc, uint64(100+i))
	}
}

// TestBgemmAMXChain checks the AMX path's arithmetic: in one k block
// (k ≤ 512) every element of C is TDPBF16PS's sums as Intel's SDM writes
// them, worked here one element at a time: per 16 pairs, a sum of the
// lower k's products and one of the higher k's from zero, their sum added
// to C, every step rounded to nearest even with denormals read as zero and
// flushed.
func TestBgemmAMXChain(t *testing.T) {
	withSet(t, amxTwinSet())
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []bgemmCase{{m: 32, n: 1, k: 1}, {m: 32, n: 32, k: 32}, {m: 35, n: 40, k: 77}, {transA: true, transB: true, m: 33, n: 65, k: 512}} {
		m, n, k := tc.m, tc.n, tc.k
		a, b := randBF(r, m*k), randBF(r, k*n)
		// a denormal and a huge value among the inputs
		a[0], b[len(b)-1] = 0x0001, 0x7F00
		c := make([]float32, m*n)
		ar, br := k, n
		if tc.transA {
			ar = m
		}
		if tc.transB {
			br = k
		}
		Bgemm(tc.transA, tc.transB, m, n, k, a, ar, b, br, c, n)
		prod := func(i, j, p int) (float32, float32) {
			if p >= k {
				return 0, 0
			}
			av, bv := a[i*k+p], b[p*n+j]
			if tc.transA {
				av = a[p*m+i]
			}
			if tc.transB {
				bv = b[j*k+p]
			}
			return bfWiden(av), bfWiden(bv)
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var acc float32
				for p0 := 0; p0 < k; p0 += 32 {
					var lo, hi float32
					for p := p0; p < p0+32; p += 2 {
						x0, y0 := prod(i, j, p)
						x1, y1 := prod(i, j, p+1)
						lo, hi = bfAdd(lo, x0, y0), bfAdd(hi, x1, y1)
					}
					acc = bfAdd(acc, bfAdd(lo, hi, 1), 1)
				}
				if got := c[i*n+j]; math.Float32bits(got) != math.Float32bits(acc) {
					t.Fatalf("%+v: c[%d][%d] = %v, want %v", tc, i, j, got, acc)
				}
			}
		}
	}
}

// TestAMXKernel runs the AMX kernel itself where it is enabled
// (EMBER_GEMM_AMX=1 on an AMX CPU) against float64 products, and says how
// many elements differ in their bits from its Go twin (the SDM's
// arithmetic, which Intel does not promise to be the hardware's).
func TestAMXKernel(t *testing.T) {
	ks := kernels[0]
	if ks.amx == nil {
		why := AMXStatus()
		if why == "" {
			why = "this CPU has no AMX-BF16"
		}
		t.Skipf("the AMX kernel is off: %s", why)
	}
	twin := amxTwinSet()
	differ, total := 0, 0
	for i, tc := range amxCases {
		withSet(t, ks)
		c := bgemmRun(t, tc, uint64(200+i))
		current.Store(twin)
		w := bgemmRun(t, tc, uint64(200+i))
		for j := range c {
			if math.Float32bits(c[j]) != math.Float32bits(w[j]) && !(c[j] != c[j] && w[j] != w[j]) {
				differ++
			}
		}
		total += len(c)
	}
	t.Logf("%d of %d elements differ in their bits from the Go twin", differ, total)
}

// TestAMXPackA packs A for the AMX kernel with the AVX-512 routine (where
// the CPU has it) and in Go, and checks both against the layout worked
// element by element: word (r, p) of a panel at (p/16)·16·mr + r·16 + p%16,
// the pair of k values 2p and 2p+1, zero past k and past the rows.
func TestAMXPackA(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	mr := amxB.mr
	for _, tc := range []struct{ m, k, lda, i0, mc, p0, kc int }{
		{40, 64, 64, 0, 40, 0, 32}, {40, 65, 70, 3, 33, 16, 32}, {70, 33, 33, 5, 64, 0, 32},
		{64, 600, 601, 0, 64, 256, 48}, {32, 1, 1, 0, 32, 0, 16}, {100, 513, 520, 7, 93, 240, 32},
	} {
		a := randBF(r, tc.m*tc.lda)
		for _, trans := range []bool{false, true} {
			lda := tc.lda
			if trans { // the same op(A) stored k×m
				lda = tc.m
				at := make([]uint16, tc.k*lda)
				for i := 0; i < tc.m; i++ {
					for p := 0; p < tc.k; p++ {
						at[p*lda+i] = a[i*tc.lda+p]
					}
				}
				a = at
			}
			q := &amxPack{bfPack{halfOps{a: a, lda: lda, transA: trans}, tc.k}}
			panels := (tc.mc + mr - 1) / mr
			for _, simd := range []bool{false, true} {
				dst := make([]float32, panels*mr*tc.kc)
				for i := range dst {
					dst[i] = float32(math.NaN())
				}
				q.packA(dst, tc.i0, tc.mc, tc.p0, tc.kc, mr, simd)
				d := words(dst)
				for i := 0; i < panels*mr; i++ {
					for p := 0; p < tc.kc; p++ {
						var want uint32
						for h, kk := range []int{2 * (tc.p0 + p), 2*(tc.p0+p) + 1} {
							if i < tc.mc && kk < tc.k {
								var v uint16
								if trans {
									v = a[kk*lda+tc.i0+i]
								} else {
									v = a[(tc.i0+i)*lda+kk]
								}
								want |= uint32(v) << (16 * h)
							}
						}
						at := i/mr*mr*tc.kc + p/16*16*mr + i%mr*16 + p%16
						if d[at] != want {
							t.Fatalf("%+v trans %v simd %v: row %d pair %d = %#x, want %#x", tc, trans, simd, i, p, d[at], want)
						}
					}
				}
			}
			if trans {
				break // a is now the transposed copy
			}
		}
	}
}
