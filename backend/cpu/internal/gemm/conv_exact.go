package gemm

import "unsafe"

// A float32 convolution in exact mode (small images: each image's few
// output positions gathered into the columns, see newConvPlan) runs as one
// GEMM per group on the GEMM's own driver, out[O, N·L] = W[O, K] ×
// cols[K, N·L], with a packer (convExact) that takes A from the weight and
// gathers B from the phase image, and an output buffer that it scatters
// into out. The driver's threads share each packed block of B and take
// one A micro-panel at a time, each packing its own, so the weights are
// packed in parallel, once, inside the parallel product: convPlan's
// exact mode packed them serially before it, gathered B again in every
// band of rows, and had few columns to share out (ResNet-18's last
// stages at 64×64: 128 or 512 columns).

// exactGEMMMode lets tests force the choice: 0 chooses (float32), 1 never
// (convPlan's exact mode), 2 always for float32 (small groups too).
var exactGEMMMode = 0

// convExact is the packer of one group's product (an extPack).
type convExact struct {
	cv   Conv
	w    []float32
	wl   wlayout
	gi   int // group
	og   int // output channels of a group
	kg   int // K: channels of a group × taps
	xq   []float32
	offs []int // per k, the offset of cols' row k in the phase image
	cb   []int // per column, the offset of its position in the phase image
	xb   int   // the group's first channel in the phase image
	out  []float32
	bias []float32
	l    int // output positions per image
}

// packA packs rows i0..i0+mc, k steps p0..p0+kc of the group's weight.
func (e *convExact) packA(dst []float32, i0, mc, p0, kc, mr int, simd bool) {
	wl := e.wl
	if wl.ls == 1 && wl.ks == e.cv.KW && wl.cs == e.cv.KH*e.cv.KW {
		// k runs along the rows: a row-major [og × kg] matrix
		packA(dst, e.w[wl.base+e.gi*wl.gs:], wl.rs, false, i0, mc, p0, kc, mr, 1, simd)
		return
	}
	kh, kw := e.cv.KH, e.cv.KW
	for ir := 0; ir < mc; ir += mr {
		d := dst[ir*kc : ir*kc+mr*kc]
		for i := 0; i < mr; i++ {
			r := i0 + ir + i
			if ir+i >= mc {
				for p := 0; p < kc; p++ {
					d[p*mr+i] = 0
				}
				continue
			}
			// walk (c, ki, kj) from k = p0
			ki, kj, idx := wl.at(e.gi, r, p0, kh, kw)
			for p := 0; p < kc; p++ {
				d[p*mr+i] = e.w[idx]
				ki, kj, idx = wl.next(ki, kj, idx, kh, kw)
			}
		}
	}
}

// packB gathers k steps p0..p0+kc of columns j0..j0+nc of cols into
// nr-column micro-panels (zero past the last column).
func (e *convExact) packB(dst []float32, p0, kc, j0, nc, nr int, _ bool) {
	xq := e.xq[e.xb:]
	ow := e.cv.OW
	for jr := 0; jr < nc; jr += nr {
		cb := e.cb[j0+jr : j0+min(jr+nr, nc)]
		d := dst[jr*kc : jr*kc+nr*kc]
		if len(cb) == nr && nr%ow == 0 && (j0+jr)%ow == 0 && packRuns(d, xq, cb, e.offs[p0:p0+kc], ow) {
			continue
		}
		for p, off := range e.offs[p0 : p0+kc] {
			dp := d[p*nr : p*nr+nr]
			for t, c := range cb {
				dp[t] = xq[c+off]
			}
			clear(dp[len(cb):])
		}
	}
}

// packRuns fills the whole micro-panel d (len(cb) columns) whose columns
// are runs of ow consecutive ones (output rows: cb[t+1] = cb[t]+1 within a
// run), row p from xq[cb[t]+offs[p]], each run with one move (ow of 2, 4,
// 8, 16 or 32 float32); it reports false, having done nothing, where
// copyRuns cannot move a run.
func packRuns(d, xq []float32, cb, offs []int, ow int) bool {
	runs := len(cb) / ow
	var buf [64]int
	if len(offs) == 0 || runs > len(buf) || !canCopyRows(ow*4) {
		return false
	}
	_ = d[len(offs)*len(cb)-1]
	bases := buf[:runs]
	for r := range bases {
		bases[r] = cb[r*ow]
	}
	return copyRuns(unsafe.Pointer(&d[0]), unsafe.Pointer(&xq[0]), offs, bases, 2, ow*4)
}

// finish writes rows i0..i0+rows, columns j0..j0+cols of the product
// (row o, column n·L+li) to out[n, o, li], plus the bias.
func (e *convExact) finish(c []float32, ldc, i0, rows, j0, cols int) {
	l, o0 := e.l, e.gi*e.og
	for i := i0; i < i0+rows; i++ {
		var b float32
		if e.bias != nil {
			b = e.bias[o0+i]
		}
		for j := j0; j < j0+cols; {
			n, li := j/l, j%l
			cnt := min(l-li, j0+cols-j)
			d := e.out[(n*e.cv.O+o0+i)*l+li:][:cnt]
			for t, v := range c[i*ldc+j:][:cnt] {
				d[t] = v + b
			}
			j += cnt
		}
	}
}

// convForwardExact is convForward in exact mode for float32: xq is the
// phase image (layout g, image stride img, channel stride chStride, row
// stride wq). It reports false, having done nothing, for float64, and for
// several groups whose products are each too small to share out (groups
// run one after the other here; convPlan shares them out).
func convForwardExact[T float](cv Conv, g geom, xq []T, img, chStride, wq int, w []T, wl wlayout, bias, out []T) bool {
	var z T
	cg, og := cv.C/cv.G, cv.O/cv.G
	l := cv.OH * cv.OW
	cols := cv.N * l
	kg := cg * cv.KH * cv.KW
	flops := float64(og) * float64(cols) * float64(kg)
	if unsafe.Sizeof(z) != 4 || exactGEMMMode == 1 || (cv.G > 1 && flops < parallelFlops && exactGEMMMode != 2) {
		return false
	}
	xs, ws := any(xq).([]float32), any(w).([]float32)
	bs, os := any(bias).([]float32), any(out).([]float32)
	kr := kernelOf[float32]()
	cb := make([]int, cols)
	for j := range cb {
		n, li := j/l, j%l
		cb[j] = n*img + li/cv.OW*wq + li%cv.OW
	}
	e := &convExact{cv: cv, w: ws, wl: wl, og: og, kg: kg, xq: xs,
		offs: colOffsets(cv, g, chStride, wq, kg, kg), cb: cb, out: os, bias: bs, l: l}
	c := getScratch[float32](og * cols)
	defer putScratch(c)
	t := numThreads()
	for gi := 0; gi < cv.G; gi++ {
		e.gi, e.xb = gi, gi*cg*chStride
		p := params[float32]{kr: kr, k: kg, alpha: 1, c: c, ldc: cols, ext: e}
		if t <= 1 || flops < parallelFlops {
			p.run(0, og, 0, cols)
		} else {
			parallel(&p, og, cols, t)
		}
	}
	return true
}
