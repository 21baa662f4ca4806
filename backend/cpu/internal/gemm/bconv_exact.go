package gemm

import "unsafe"

// A bfloat16 convolution in exact mode (small images, see newConvPlan)
// runs, as the float32 one does (conv_exact.go), one GEMM per group on the
// GEMM's own driver: out[O, N·L] = A[O, k] × cols[k, N·L] over pair words,
// with A the weight's pair rows built once (pairRows: row o holds, for each
// pair channel and tap, the pair word of the two channels' weights, then
// the bias pair), packed per band by bfPack's packer as a row-major
// bfloat16 matrix, and B gathered from the pair phase image into blocks
// the driver's threads share. convPlan's exact mode packed the weight
// serially before the product and streamed all of it past every chunk of
// columns, which left ResNet-18's last stage (512×512 taps, 7×7 maps) no
// faster on two threads than on one.

// bconvExact is the packer of one group's product (an extPack).
type bconvExact struct {
	bfPack           // A: the group's pair rows (pairRows), k along memory
	offs   []int     // per pair row of cols, its offset in the phase image (-1: the bias row)
	cb     []int     // per column, the offset of its position in the phase image
	xq     []float32 // the pair phase image (words), from the group's first pair channel
	out    []uint16
	o0     int // the group's first output channel
	o, l   int // output channels, positions per image
}

// packB gathers pairs p0..p0+kc of columns j0..j0+nc of cols into
// nr-column micro-panels (zero past the last column).
func (e *bconvExact) packB(dst []float32, p0, kc, j0, nc, nr int, _ bool) {
	for jr := 0; jr < nc; jr += nr {
		d, cb, offs := dst[jr*kc:jr*kc+nr*kc], e.cb[j0+jr:j0+min(jr+nr, nc)], e.offs[p0:p0+kc]
		if !gatherPanelSIMD(d, e.xq, cb, offs, nr) {
			gatherPanel(d, e.xq, cb, offs, nr)
		}
	}
}

// finish rounds rows i0..i0+rows, columns j0..j0+cols of the product
// (row o, column n·L+li) into out[n, o0+o, li].
func (e *bconvExact) finish(c []float32, ldc, i0, rows, j0, cols int) {
	for i := i0; i < i0+rows; i++ {
		for j := j0; j < j0+cols; {
			n, li := j/e.l, j%e.l
			cnt := min(e.l-li, j0+cols-j)
			RoundBF16(e.out[(n*e.o+e.o0+i)*e.l+li:][:cnt], c[i*ldc+j:][:cnt])
			j += cnt
		}
	}
}

// bfExactBelow is exactBelow for the bfloat16 convolution: with exact
// mode on the GEMM's driver it pays from fewer wasted q-mode columns than
// float32's does. 14×14 outputs (87.5% of the q-mode columns useful) run
// in q mode: on Zen 5, 2 threads, the CNN's 32→64 convolution took 0.92
// ms rather than 1.6 (exact mode's gathers cost as much as its product
// there), ResNet-18's 256→256 6.7 rather than 7.0, its stride-2 128→256
// 3.7 rather than 4.1. 7×7 ones (77.8%) stay exact: 7.0 ms rather than
// 8.5 in q mode for 512→512. Tests set it with exactBelow.
var bfExactBelow = 0.85

// useBconvExact reports whether convForwardPairs runs cv (in exact mode)
// on the GEMM's driver: as for float32 (see convForwardExact), not for
// several groups whose products are each too small to share out.
func useBconvExact(cv Conv, cgp int) bool {
	og := cv.O / cv.G
	flops := float64(og) * float64(cv.N*cv.OH*cv.OW) * float64(2*cgp*cv.KH*cv.KW)
	return exactGEMMMode != 1 && (cv.G == 1 || flops >= parallelFlops || exactGEMMMode == 2)
}

// bconvForwardExact is the product of convForwardPairs in exact mode for
// the images of cv: xq is their pair phase image (layout g, cgp pair
// channels a group), a the pair rows (pairRows, k words a row), out their
// outputs.
func bconvForwardExact(kr *kernel[float32], cv Conv, g geom, cgp int, xq []float32, a []uint32, k int, out []uint16) {
	og := cv.O / cv.G
	l := cv.OH * cv.OW
	cols := cv.N * l
	kg := cgp * cv.KH * cv.KW
	wq := g.c.q
	cb := make([]int, cols)
	for j := range cb {
		n, li := j/l, j%l
		cb[j] = n*g.img + li/cv.OW*wq + li%cv.OW
	}
	a16 := unsafe.Slice((*uint16)(unsafe.Pointer(&a[0])), 2*len(a))
	e := &bconvExact{offs: colOffsets(cv, g, g.chStride, wq, kg, k), cb: cb, out: out, o: cv.O, l: l}
	e.bfPack = bfPack{halfOps: halfOps{lda: 2 * k}, k: 2 * k}
	c := getScratch[float32](og * cols)
	defer putScratch(c)
	t := numThreads()
	flops := 2 * float64(og) * float64(cols) * float64(k)
	for gi := 0; gi < cv.G; gi++ {
		e.a = a16[gi*og*2*k : (gi+1)*og*2*k]
		e.xq = xq[gi*cgp*g.chStride:]
		e.o0 = gi * og
		p := params[float32]{kr: kr, k: k, alpha: 1, c: c, ldc: cols, ext: e}
		if t <= 1 || flops < 2*parallelFlops {
			p.run(0, og, 0, cols)
		} else {
			parallel(&p, og, cols, t)
		}
	}
}

// pairRows fills a (O rows of k words) with the weight's pair rows: word
// P·KH·KW+t of row o is w[o][2P][t] | w[o][2P+1][t]<<16 (the high half
// zero past an odd channel count of a group), tap t of KH·KW; word
// cgp·KH·KW, when bias != nil, is bias[o]<<16.
func pairRows(a []uint32, cv Conv, cgp int, w, bias []uint16, k int) {
	cg, kk := cv.C/cv.G, cv.KH*cv.KW
	rs := cg * kk
	per := max(1, 4096/k)
	items := (cv.O + per - 1) / per
	runItems(items, workers(items, float64(per*k)/2), func(_, it int) {
		for o := it * per; o < min(cv.O, (it+1)*per); o++ {
			d := a[o*k : (o+1)*k]
			pairRow(d[:cg/2*kk], w[o*rs:(o+1)*rs], cg/2, kk)
			if cg%2 == 1 {
				for t, v := range w[o*rs+(cg-1)*kk : (o+1)*rs] {
					d[cg/2*kk+t] = uint32(v)
				}
			}
			if bias != nil {
				d[k-1] = uint32(bias[o]) << 16
			}
		}
	})
}

// pairRowGo sets d[P·kk+t] = w[2P·kk+t] | w[(2P+1)·kk+t]<<16 for P < np,
// t < kk.
func pairRowGo(d []uint32, w []uint16, np, kk int) {
	for p := 0; p < np; p++ {
		lo, hi := w[2*p*kk:][:kk], w[(2*p+1)*kk:][:kk]
		dd := d[p*kk:][:kk]
		for t := range dd {
			dd[t] = uint32(lo[t]) | uint32(hi[t])<<16
		}
	}
}
