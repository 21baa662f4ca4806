package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// convTerms calls f for every term of the convolution's definition:
// output element oi (of a contiguous [N, O, OH, OW]) gets w[wi]·x[xi], where
// x[xi] is input element xg of a contiguous [N, C, H, W].
func convTerms(cv Conv, xs [4]int, f func(oi, wi, xi, xg int)) {
	cg, og := cv.C/cv.G, cv.O/cv.G
	for n := 0; n < cv.N; n++ {
		for o := 0; o < cv.O; o++ {
			g := o / og
			for oh := 0; oh < cv.OH; oh++ {
				for ow := 0; ow < cv.OW; ow++ {
					oi := ((n*cv.O+o)*cv.OH+oh)*cv.OW + ow
					for c := 0; c < cg; c++ {
						for ki := 0; ki < cv.KH; ki++ {
							ih := oh*cv.SH + ki*cv.DH - cv.PH
							if ih < 0 || ih >= cv.H {
								continue
							}
							for kj := 0; kj < cv.KW; kj++ {
								iw := ow*cv.SW + kj*cv.DW - cv.PW
								if iw < 0 || iw >= cv.W {
									continue
								}
								ci := g*cg + c
								f(oi, ((o*cg+c)*cv.KH+ki)*cv.KW+kj, n*xs[0]+ci*xs[1]+ih*xs[2]+iw*xs[3], ((n*cv.C+ci)*cv.H+ih)*cv.W+iw)
							}
						}
					}
				}
			}
		}
	}
}

// convRef is the convolution as its definition, float64 accumulation.
func convRef[T float](cv Conv, x []T, xs [4]int, w, bias []T) []float64 {
	out := make([]float64, cv.N*cv.O*cv.OH*cv.OW)
	if bias != nil {
		for i := range out {
			out[i] = float64(bias[i/(cv.OH*cv.OW)%cv.O])
		}
	}
	convTerms(cv, xs, func(oi, wi, xi, _ int) { out[oi] += float64(w[wi]) * float64(x[xi]) })
	return out
}

// convGradRef returns the gradients of Σ gout·conv(x, w) by the chain rule
// on the definition.
func convGradRef[T float](cv Conv, x []T, xs [4]int, w, gout []T) (gx, gw []float64) {
	gx = make([]float64, cv.N*cv.C*cv.H*cv.W)
	gw = make([]float64, cv.O*cv.C/cv.G*cv.KH*cv.KW)
	convTerms(cv, xs, func(oi, wi, xi, xg int) {
		gx[xg] += float64(gout[oi]) * float64(w[wi])
		gw[wi] += float64(gout[oi]) * float64(x[xi])
	})
	return gx, gw
}

type convCase struct {
	cv      Conv
	bias    bool
	layout  string // "nchw", "padded" (gaps in every dim), "nhwc" (channels last)
	threads int
}

func (tc convCase) String() string {
	c := tc.cv
	return fmt.Sprintf("N%d C%d %dx%d O%d k%dx%d g%d s%d,%d p%d,%d d%d,%d bias=%v %s t%d",
		c.N, c.C, c.H, c.W, c.O, c.KH, c.KW, c.G, c.SH, c.SW, c.PH, c.PW, c.DH, c.DW, tc.bias, tc.layout, tc.threads)
}

// inputLayout places an [N,C,H,W] input in a buffer with the case's
// strides; it returns the buffer, its strides and a function that writes
// element values.
func inputLayout[T float](r *rand.Rand, cv Conv, layout string) ([]T, [4]int) {
	var xs [4]int
	var size int
	switch layout {
	case "padded":
		w := cv.W + 3
		h := cv.H + 1
		xs = [4]int{(cv.C + 1) * h * w, h * w, w, 1}
		size = cv.N * xs[0]
	case "nhwc":
		xs = [4]int{cv.H * cv.W * cv.C, 1, cv.W * cv.C, cv.C}
		size = cv.N * xs[0]
	default:
		xs = [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}
		size = cv.N * xs[0]
	}
	x := make([]T, size)
	for i := range x {
		x[i] = T(math.NaN()) // gaps must never be read into a result
	}
	for n := 0; n < cv.N; n++ {
		for c := 0; c < cv.C; c++ {
			for h := 0; h < cv.H; h++ {
				for w := 0; w < cv.W; w++ {
					x[n*xs[0]+c*xs[1]+h*xs[2]+w*xs[3]] = T(r.Float64()*2 - 1)
				}
			}
		}
	}
	return x, xs
}

func randomConv(r *rand.Rand) convCase {
	var cv Conv
	for {
		cv.G = []int{1, 1, 1, 2, 3}[r.IntN(5)]
		cv.C = cv.G * (1 + r.IntN(5))
		cv.O = cv.G * (1 + r.IntN(6))
		if r.IntN(6) == 0 { // depthwise
			cv.G, cv.C = 4, 4
			cv.O = 4 * (1 + r.IntN(2))
		}
		cv.N = 1 + r.IntN(3)
		cv.H, cv.W = 1+r.IntN(12), 1+r.IntN(12)
		cv.KH, cv.KW = 1+r.IntN(4), 1+r.IntN(4)
		cv.SH, cv.SW = 1+r.IntN(3), 1+r.IntN(3)
		if r.IntN(2) == 0 {
			cv.SH, cv.SW = 1, 1
		}
		cv.DH, cv.DW = 1, 1
		if r.IntN(4) == 0 {
			cv.DH, cv.DW = 1+r.IntN(3), 1+r.IntN(3)
		}
		cv.PH, cv.PW = r.IntN(3), r.IntN(3)
		if r.IntN(8) == 0 {
			cv.PH, cv.PW = cv.KH+r.IntN(2), cv.KW+1 // padding beyond the kernel
		}
		cv.OH = OutSize(cv.H, cv.KH, cv.SH, cv.PH, cv.DH)
		cv.OW = OutSize(cv.W, cv.KW, cv.SW, cv.PW, cv.DW)
		if cv.H+2*cv.PH-cv.DH*(cv.KH-1)-1 >= 0 && cv.W+2*cv.PW-cv.DW*(cv.KW-1)-1 >= 0 {
			break
		}
	}
	return convCase{cv: cv, bias: r.IntN(2) == 0, layout: []string{"nchw", "nchw", "padded", "nhwc"}[r.IntN(4)], threads: 1 + r.IntN(3)}
}

// fixedConvs are shapes the random ones may miss: the networks' layers,
// a 1×1 stride-2, a wide image that spans several chunks, a large K.
func fixedConvs() []convCase {
	mk := func(n, c, h, o, k, s, p, g int) convCase {
		cv := Conv{N: n, C: c, H: h, W: h, O: o, KH: k, KW: k, G: g, SH: s, SW: s, PH: p, PW: p, DH: 1, DW: 1}
		cv.OH = OutSize(h, k, s, p, 1)
		cv.OW = cv.OH
		return convCase{cv: cv, bias: true, layout: "nchw", threads: 2}
	}
	// rect makes c's images h×w
	rect := func(c convCase, h, w int) convCase {
		c.cv.H, c.cv.W = h, w
		c.cv.OH, c.cv.OW = OutSize(h, c.cv.KH, c.cv.SH, c.cv.PH, 1), OutSize(w, c.cv.KW, c.cv.SW, c.cv.PW, 1)
		return c
	}
	return []convCase{
		mk(2, 16, 20, 24, 3, 1, 1, 1),
		mk(2, 8, 17, 16, 1, 2, 0, 1),
		mk(1, 3, 40, 8, 7, 2, 3, 1),
		mk(1, 64, 7, 20, 3, 1, 1, 1),
		mk(3, 6, 9, 6, 3, 1, 1, 6),
		mk(1, 2, 70, 3, 3, 1, 1, 1),
		mk(2, 40, 5, 33, 3, 2, 1, 1),
		// Winograd's shapes: odd sizes, no or double padding, groups
		mk(1, 17, 9, 18, 3, 1, 1, 1),
		mk(2, 20, 7, 16, 3, 1, 0, 1),
		mk(1, 16, 6, 20, 3, 1, 2, 1),
		mk(3, 32, 5, 32, 3, 1, 1, 2),
		mk(3, 24, 8, 40, 3, 1, 1, 1),             // 8×8 outputs: eight lanes are two tile rows
		rect(mk(5, 20, 6, 24, 3, 1, 1, 1), 6, 8), // 6×8: eight tiles cross into the next image
		// ResNet-18's last stages at 64×64, smaller: few columns, products
		// large enough for the parallel GEMM driver (O past whole panels)
		mk(4, 128, 4, 100, 3, 1, 1, 1),
		mk(8, 128, 2, 75, 3, 1, 1, 1),
		mk(6, 128, 4, 90, 3, 2, 1, 1),
		mk(16, 256, 2, 64, 3, 1, 1, 2),
		// exact columns in runs of whole output rows of 8 and 16
		mk(2, 16, 16, 24, 3, 2, 1, 1),
		mk(2, 32, 16, 40, 3, 1, 1, 1),
	}
}

func closeEnough(got, want, scale, tol float64) bool {
	return math.Abs(got-want) <= tol*(1+math.Abs(want)+scale)
}

// convData is one test convolution: its operands and the definition's
// results.
type convData[T float] struct {
	tc            convCase
	x, w, b, gout []T
	xs            [4]int
	want          []float64 // forward
	wgx, wgw      []float64 // gradients
}

// convCases makes the test convolutions for T (their references take most
// of TestConv's time: they are computed once for every kernel set and
// method).
func convCases[T float]() []convData[T] {
	r := rand.New(rand.NewPCG(1, 2))
	cases := fixedConvs()
	n := 150
	if testing.Short() {
		n = 60
	}
	for range n {
		cases = append(cases, randomConv(r))
	}
	var ds []convData[T]
	for _, tc := range cases {
		cv := tc.cv
		d := convData[T]{tc: tc}
		d.x, d.xs = inputLayout[T](r, cv, tc.layout)
		d.w = randSlice[T](r, cv.O*cv.C/cv.G*cv.KH*cv.KW)
		if tc.bias {
			d.b = randSlice[T](r, cv.O)
		}
		d.want = convRef(cv, d.x, d.xs, d.w, d.b)
		d.gout = randSlice[T](r, len(d.want))
		d.wgx, d.wgw = convGradRef(cv, d.x, d.xs, d.w, d.gout)
		ds = append(ds, d)
	}
	return ds
}

// nans returns n NaNs: outputs start so, and an element never written shows.
func nans[T float](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(math.NaN())
	}
	return s
}

func testConv[T float](t *testing.T, cases []convData[T], tol float64) {
	defer SetThreads(0)
	for _, d := range cases {
		tc, cv := d.tc, d.tc.cv
		SetThreads(tc.threads)
		out := nans[T](len(d.want))
		ConvForward(cv, d.x, d.xs, d.w, d.b, out)
		k := float64(cv.C / cv.G * cv.KH * cv.KW)
		for i, w := range d.want {
			if !closeEnough(float64(out[i]), w, math.Sqrt(k), tol) {
				t.Fatalf("%v: forward out[%d] = %g, want %g", tc, i, out[i], w)
			}
		}
		gx := nans[T](len(d.wgx))
		gw := nans[T](len(d.w))
		ConvGradInput(cv, d.gout, d.w, gx)
		ConvGradWeight(cv, d.x, d.xs, d.gout, gw)
		for i, w := range d.wgx {
			if !closeEnough(float64(gx[i]), w, math.Sqrt(float64(cv.O*cv.KH*cv.KW)), tol) {
				t.Fatalf("%v: grad input [%d] = %g, want %g", tc, i, gx[i], w)
			}
		}
		for i, w := range d.wgw {
			if !closeEnough(float64(gw[i]), w, math.Sqrt(float64(cv.N*cv.OH*cv.OW)), tol) {
				t.Fatalf("%v: grad weight [%d] = %g, want %g", tc, i, gw[i], w)
			}
		}
	}
}

func TestConv(t *testing.T) {
	c32, c64 := convCases[float32](), convCases[float64]()
	forEachKernel(t, func(t *testing.T) {
		// forward: q or exact columns (float32's exact on the GEMM driver
		// or convPlan), Winograd or not, K blocks; weight gradient: GEMM
		// or dot products
		for _, mode := range []struct {
			name   string
			below  float64
			weight int
			wino   int
			kc     int // K block of the forward products (0: chosen)
			egemm  int // exactGEMMMode
		}{{"auto", exactBelow, 0, 0, 0, 0}, {"q,gemm,winograd,kc7", 0, 1, 2, 7, 0}, {"exact,dot,direct,kc13", 2, 2, 1, 13, 2},
			{"exact-plan,direct", 2, 0, 1, 0, 1}} {
			t.Run(mode.name, func(t *testing.T) {
				prevB, prevW, prevV, prevK, prevE := exactBelow, weightGradMode, winogradMode, convKCOverride, exactGEMMMode
				exactBelow, weightGradMode, winogradMode, convKCOverride, exactGEMMMode = mode.below, mode.weight, mode.wino, mode.kc, mode.egemm
				defer func() {
					exactBelow, weightGradMode, winogradMode, convKCOverride, exactGEMMMode = prevB, prevW, prevV, prevK, prevE
				}()
				t.Run("float32", func(t *testing.T) { testConv(t, c32, 1e-5) })
				t.Run("float64", func(t *testing.T) { testConv(t, c64, 1e-12) })
			})
		}
	})
}

// copyRows at every width and element size it supports (the AVX-512
// kernels' 128-byte panel rows run here on any AVX machine).
func TestCopyRows(t *testing.T) {
	src := make([]float64, 512)
	for i := range src {
		src[i] = float64(i)
	}
	offs := []int{5, 0, 200, 37}
	for _, width := range []int{8, 16, 32, 64, 128} {
		for _, shift := range []int{2, 3} {
			esz := 1 << shift
			per := width / esz
			var got []byte
			want := make([]byte, 0, len(offs)*width)
			srcB := unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), len(src)*8)
			for _, o := range offs {
				want = append(want, srcB[o*esz:o*esz+width]...)
			}
			got = make([]byte, len(offs)*width+64) // a guard past the rows
			for i := range got {
				got[i] = 0xAA
			}
			if !copyRows(unsafe.Pointer(&got[0]), unsafe.Pointer(&src[0]), offs, shift, width) {
				t.Skip("copyRows needs AVX")
			}
			if string(got[:len(want)]) != string(want) {
				t.Fatalf("width %d shift %d (%d elements): rows differ", width, shift, per)
			}
			for i, b := range got[len(want):] {
				if b != 0xAA {
					t.Fatalf("width %d shift %d: byte %d past the rows written", width, shift, i)
				}
			}
		}
	}
}

// copyRuns at every width and element size it supports: row p·len(bases)+r
// from offs[p]+bases[r], nothing written past the rows.
func TestCopyRuns(t *testing.T) {
	src := make([]float64, 1024)
	for i := range src {
		src[i] = float64(i)
	}
	offs := []int{5, 0, 300, 37, 2}
	bases := []int{0, 64, 8, 130}
	srcB := unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), len(src)*8)
	for _, width := range []int{8, 16, 32, 64, 128} {
		for _, shift := range []int{2, 3} {
			esz := 1 << shift
			var want []byte
			for _, o := range offs {
				for _, b := range bases {
					want = append(want, srcB[(o+b)*esz:(o+b)*esz+width]...)
				}
			}
			got := make([]byte, len(want)+64)
			for i := range got {
				got[i] = 0xAA
			}
			if !copyRuns(unsafe.Pointer(&got[0]), unsafe.Pointer(&src[0]), offs, bases, shift, width) {
				t.Skip("copyRuns needs AVX")
			}
			if string(got[:len(want)]) != string(want) {
				t.Fatalf("width %d shift %d: rows differ", width, shift)
			}
			for i, b := range got[len(want):] {
				if b != 0xAA {
					t.Fatalf("width %d shift %d: byte %d past the rows written", width, shift, i)
				}
			}
		}
	}
}

// TestDot checks each set's dot-product kernels against sums worked out
// directly: tiles over several images, A rows repeated (lda 0) or apart,
// B rows at scattered offsets, C rows apart with untouched gaps.
func TestDot(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		t.Run("float32", func(t *testing.T) { testDot[float32](t, kernelOf[float32](), 1e-5) })
		t.Run("float64", func(t *testing.T) { testDot[float64](t, kernelOf[float64](), 1e-12) })
	})
}

func testDot[T float](t *testing.T, kr *kernel[T], tol float64) {
	r := rand.New(rand.NewPCG(3, 5))
	dmr, dnr := kr.dmr, kr.dnr
	for _, vecs := range []int{1, 2, 5} {
		for _, nimg := range []int{0, 1, 3} {
			for _, lda0 := range []bool{false, true} {
				n := vecs * kr.dvw
				lda := n + 3
				if lda0 {
					lda = 0
				}
				as := dmr*(n+3) + 1 // image stride of A
				bs := 7*n + 11      // of B
				boff := make([]int, dnr)
				for j := range boff {
					boff[j] = r.IntN(6*n + 11)
				}
				a := randSlice[T](r, max(1, nimg)*as)
				b := randSlice[T](r, max(1, nimg)*bs)
				ldc := dnr + 2
				c := randSlice[T](r, dmr*ldc)
				want := make([]float64, len(c))
				for i := range c {
					want[i] = float64(c[i])
				}
				for i := range dmr {
					for j := range dnr {
						for m := range nimg {
							for p := range n {
								want[i*ldc+j] += float64(a[m*as+i*lda+p]) * float64(b[m*bs+boff[j]+p])
							}
						}
					}
				}
				kr.dot(n, nimg, &a[0], lda, as, &b[0], &boff[0], bs, &c[0], ldc)
				for i := range c {
					if !closeEnough(float64(c[i]), want[i], math.Sqrt(float64(n*nimg)), tol) {
						t.Fatalf("%s %d×%d n=%d nimg=%d lda=%d: c[%d] = %g, want %g", kr.name, dmr, dnr, n, nimg, lda, i, c[i], want[i])
					}
				}
			}
		}
	}
}

// TestBuildPhases checks the phase image against its definition,
// xq[n][c][a][b][i][j] = x[n][c][i·SH+ra−PH][j·SW+cb−PW] (0 outside),
// for small planes (phaseRowsAVX512 where the CPU has it) and larger ones,
// contiguous and strided inputs, with the assembly and without.
func TestBuildPhases(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	type tc struct{ h, w, k, s, p, d int }
	var cases []tc
	for _, h := range []int{1, 3, 4, 7, 8, 16, 17} {
		for _, w := range []int{1, 2, 5, 8, 14, 16, 20} {
			for _, ksp := range [][4]int{{3, 1, 1, 1}, {3, 2, 1, 1}, {1, 2, 0, 1}, {3, 3, 2, 1}, {5, 2, 2, 1}, {3, 1, 2, 2}, {7, 4, 3, 1}, {2, 2, 0, 1}} {
				c := tc{h, w, ksp[0], ksp[1], ksp[2], ksp[3]}
				if OutSize(h, c.k, c.s, c.p, c.d) < 1 || OutSize(w, c.k, c.s, c.p, c.d) < 1 {
					continue
				}
				cases = append(cases, c)
			}
		}
	}
	defer func(v bool) { hasPhaseRows = v }(hasPhaseRows)
	asm := hasPhaseRows
	for _, c := range cases {
		cv := Conv{N: 2, C: 3, H: c.h, W: c.w, O: 1, KH: c.k, KW: c.k, G: 1, SH: c.s, SW: c.s,
			PH: c.p, PW: c.p, DH: c.d, DW: c.d}
		cv.OH, cv.OW = OutSize(c.h, c.k, c.s, c.p, c.d), OutSize(c.w, c.k, c.s, c.p, c.d)
		g := newGeom(cv)
		for _, layout := range []string{"nchw", "padded rows", "nhwc"} {
			xs := [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}
			switch layout {
			case "padded rows":
				xs = [4]int{cv.C * cv.H * (cv.W + 3), cv.H * (cv.W + 3), cv.W + 3, 1}
			case "nhwc":
				xs = [4]int{cv.H * cv.W * cv.C, 1, cv.W * cv.C, cv.C}
			}
			x := randSlice[float32](r, cv.N*xs[0])
			want := make([]float32, cv.N*g.img)
			for n := 0; n < cv.N; n++ {
				for ch := 0; ch < cv.C; ch++ {
					for a := 0; a < g.r.n; a++ {
						for b := 0; b < g.c.n; b++ {
							for i := 0; i < g.r.q; i++ {
								for j := 0; j < g.c.q; j++ {
									ih, iw := i*cv.SH+g.r.val[a]-cv.PH, j*cv.SW+g.c.val[b]-cv.PW
									if ih < 0 || ih >= cv.H || iw < 0 || iw >= cv.W {
										continue
									}
									want[n*g.img+ch*g.chStride+(a*g.c.n+b)*g.plane+i*g.c.q+j] = x[n*xs[0]+ch*xs[1]+ih*xs[2]+iw*xs[3]]
								}
							}
						}
					}
				}
			}
			for _, useAsm := range []bool{false, true} {
				if useAsm && !asm {
					continue
				}
				hasPhaseRows = useAsm
				got := make([]float32, len(want)+16)
				for i := range got {
					got[i] = float32(math.NaN())
				}
				buildPhases(cv, g, x, xs, got)
				for i, v := range want {
					if got[i] != v {
						t.Fatalf("%+v %s asm %v: xq[%d] = %v, want %v", c, layout, useAsm, i, got[i], v)
					}
				}
				for i, v := range got[len(want):] {
					if !math.IsNaN(float64(v)) {
						t.Fatalf("%+v %s asm %v: %d past the end written", c, layout, useAsm, i)
					}
				}
			}
		}
	}
}
