package gemm

import (
	"math"
	"unsafe"
)

// The bfloat16 convolution: convForward's implicit GEMM on the bfloat16
// micro-kernel (see Bgemm), whose packed elements are 32-bit words each
// holding two k values.
//
// The pairs are input channels: pair channel P of group g holds channels
// 2P and 2P+1 of the group (the high one zero past an odd count). The
// phase image (see convForward) is built over pair channels, each element
// a word with channel 2P's value in the low half and 2P+1's in the high
// half, so a row of cols for pair (P, ki, kj) is again a contiguous run of
// the phase image, and packing a micro-panel of B is convForward's
// fixed-size copy of words. The weight is packed with the same pairs; the
// bias is one more pair, bias·1 in the high halves (copyPanel's bias row
// of float32 ones is, as words, bfloat16 1 in the high half and 0 in the
// low one). So each output is a float32 sum of exact products (bias
// included), rounded once to bfloat16 as soon as its item is finished.
//
// A kernel set without a bfloat16 kernel widens the operands to float32,
// runs ConvForward and rounds its result.

// ConvForwardBF16 is ConvForward on bfloat16 operands (their bits): x with
// strides xs, a contiguous weight [O, C/G, KH, KW], bias [O] or nil, into
// the contiguous out. Each output is accumulated in float32 and rounded
// once (see RoundBF16).
func ConvForwardBF16(cv Conv, x []uint16, xs [4]int, w, bias, out []uint16) {
	cv.Check()
	if cv.N == 0 {
		return
	}
	kr := current.Load().b
	if kr == nil {
		convForwardWidened(cv, x, xs, w, bias, out)
		return
	}
	convForwardPairs(kr, cv, x, xs, w, bias, out)
}

// convForwardWidened is ConvForwardBF16 through the float32 convolution.
func convForwardWidened(cv Conv, x []uint16, xs [4]int, w, bias, out []uint16) {
	xw := make([]float32, cv.N*cv.C*cv.H*cv.W)
	i := 0
	for n := 0; n < cv.N; n++ {
		for c := 0; c < cv.C; c++ {
			for h := 0; h < cv.H; h++ {
				o := n*xs[0] + c*xs[1] + h*xs[2]
				for j := 0; j < cv.W; j++ {
					xw[i] = math.Float32frombits(uint32(x[o+j*xs[3]]) << 16)
					i++
				}
			}
		}
	}
	nw := cv.O * cv.C / cv.G * cv.KH * cv.KW
	fo := make([]float32, cv.N*cv.O*cv.OH*cv.OW)
	ConvForward(cv, xw, [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}, widenBits(w[:nw]), widenBits(bias), fo)
	RoundBF16(out[:len(fo)], fo)
}

// words is s as 32-bit words.
func words(s []float32) []uint32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&s[0])), len(s))
}

// buildPairPhases fills xq (N images of g.img words, g the geometry over
// pc pair channels) from the bfloat16 x with strides xs: pair channel P
// (group P/cgp) interleaves channels 2·(P%cgp) and one more of its group.
func buildPairPhases(cv Conv, g geom, cgp int, x []uint16, xs [4]int, xq []uint32) {
	cg := cv.C / cv.G
	np := g.r.n * g.c.n
	pcs := cv.G * cgp
	rows := cv.N * pcs * np
	per := max(1, phaseItem/g.plane)
	items := (rows + per - 1) / per
	runItems(items, workers(items, float64(per*g.plane)/4), func(_, item int) {
		for it := item * per; it < min(rows, (item+1)*per); it++ {
			ph := it % np
			p := it / np % pcs
			n := it / (np * pcs)
			c0 := p/cgp*cg + 2*(p%cgp)
			s0 := n*xs[0] + c0*xs[1]
			s1 := -1
			if 2*(p%cgp)+1 < cg {
				s1 = s0 + xs[1]
			}
			fillPairPhase(xq[it*g.plane:(it+1)*g.plane], x, s0, s1, xs[2], xs[3], cv.H, cv.W, g.r.q, g.c.q, cv.SH, cv.SW,
				g.r.val[ph/g.c.n]-cv.PH, g.c.val[ph%g.c.n]-cv.PW)
		}
	})
}

// fillPairPhase is fillPhase for pair words: dst[i·wq+j] holds
// x[s0+o] | x[s1+o]<<16 with o = (i·sh+ph)·sr + (j·sw+pw)·sc (high half
// zero when s1 < 0), zero outside [0,h)×[0,w).
func fillPairPhase(dst []uint32, x []uint16, s0, s1, sr, sc, h, w, hq, wq, sh, sw, ph, pw int) {
	j0 := 0
	if pw < 0 {
		j0 = (-pw + sw - 1) / sw
	}
	j1 := 0
	if w-pw > 0 {
		j1 = (w - pw + sw - 1) / sw
	}
	j0, j1 = min(j0, wq), min(j1, wq)
	st := sw * sc
	// contiguous rows (two channels), or rows of every other element: the
	// plane cleared (one call, in cache), then all its rows in one
	// interleaveRows or phaseRows2
	if (s1 >= 0 && st == 1 || st == 2) && j0 < j1 {
		i0 := 0
		if ph < 0 {
			i0 = (-ph + sh - 1) / sh
		}
		i1 := min(hq, max(0, (h-ph+sh-1)/sh))
		if i0 < i1 {
			clear(dst[:hq*wq])
			a := s0 + (i0*sh+ph)*sr + (j0*sw+pw)*sc
			if st == 1 {
				interleaveRows(dst[i0*wq+j0:], x, a, s1-s0, i1-i0, sh*sr, wq, j1-j0)
			} else {
				ld := -1
				if s1 >= 0 {
					ld = s1 - s0
				}
				phaseRows2(dst[i0*wq+j0:], x, a, ld, i1-i0, sh*sr, wq, j1-j0)
			}
			return
		}
	}
	for i := 0; i < hq; i++ {
		row := dst[i*wq : (i+1)*wq]
		ih := i*sh + ph
		if ih < 0 || ih >= h || j0 >= j1 {
			clear(row)
			continue
		}
		clear(row[:j0])
		clear(row[j1:])
		o := ih*sr + (j0*sw+pw)*sc
		d := row[j0:j1]
		if s1 < 0 {
			s := s0 + o
			for j := range d {
				d[j] = uint32(x[s])
				s += st
			}
			continue
		}
		if st == 1 {
			interleave(d, x, s0+o, s1-s0)
			continue
		}
		a, b := s0+o, s1+o
		for j := range d {
			d[j] = uint32(x[a]) | uint32(x[b])<<16
			a += st
			b += st
		}
	}
}

// roundSeg is a run of a tile's columns (those in mask) and where they
// go: column j of a row to that row's offset off+j.
type roundSeg struct{ off, mask int64 }

// tileSegs bounds the runs of a tile that roundSegs takes at once.
const tileSegs = 8

// roundSegsGo sets dst[i] to the bfloat16 nearest t[nr·r+j] + acc[i] (see
// RoundBF16; t[nr·r+j] alone when acc is nil), i = base + r·ldd + s.off + j,
// for r < rows, each segment s, column j < nr in s.mask.
func roundSegsGo(dst []uint16, base, ldd int, t []float32, nr, rows int, segs []roundSeg, acc []float32) {
	for r := 0; r < rows; r++ {
		for _, s := range segs {
			for j := 0; j < nr; j++ {
				if s.mask>>j&1 != 0 {
					i := base + r*ldd + int(s.off) + j
					v := t[nr*r+j]
					if acc != nil {
						v += acc[i]
					}
					dst[i] = roundBF16(v)
				}
			}
		}
	}
}

// phaseRows2Go sets dst[r·ds+j] = x[a+r·ss+2j] | x[a+r·ss+ld+2j]<<16 for
// r < rows, j < w (the second term absent when ld < 0).
func phaseRows2Go(dst []uint32, x []uint16, a, ld, rows, ss, ds, w int) {
	for r := 0; r < rows; r++ {
		d := dst[r*ds:][:w]
		s := a + r*ss
		if ld < 0 {
			for j := range d {
				d[j] = uint32(x[s+2*j])
			}
			continue
		}
		for j := range d {
			d[j] = uint32(x[s+2*j]) | uint32(x[s+ld+2*j])<<16
		}
	}
}

// interleaveRowsGo sets dst[r·ds+j] = x[a+r·ss+j] | x[a+r·ss+ld+j]<<16 for
// r < rows, j < w.
func interleaveRowsGo(dst []uint32, x []uint16, a, ld, rows, ss, ds, w int) {
	for r := 0; r < rows; r++ {
		interleaveGo(dst[r*ds:][:w], x, a+r*ss, ld)
	}
}

// interleaveGo sets d[j] = x[a+j] | x[a+ld+j]<<16.
func interleaveGo(d []uint32, x []uint16, a, ld int) {
	lo, hi := x[a:][:len(d)], x[a+ld:][:len(d)]
	for j := range d {
		d[j] = uint32(lo[j]) | uint32(hi[j])<<16
	}
}

// panelRows is the rows of the weight's micro-panels in a bfloat16 q-mode
// convolution of og output channels a group: og cut into as few panels as
// mr rows allow, of about equal height, where the kernel computes partial
// panels at their cost (edge kernels). The kernel runs a few rows as
// slowly as many (ResNet-18's 64 channels are 4×14 + 8, 128 are 9×14 + 2,
// an 8- and a 2-row panel); 5×13 and 10×13 panels cost about their rows.
func panelRows(kr *kernel[float32], og int) int {
	if kr.edge == nil {
		return kr.mr
	}
	return (og + (og+kr.mr-1)/kr.mr - 1) / ((og + kr.mr - 1) / kr.mr)
}

// packPairWeights packs each group's [og × k] pair matrix A (k = cgp·KH·KW
// pairs, and one more holding bias<<16 when bias != nil) into mr-row
// micro-panels of pr rows each (the rest zero), K block by K block, as
// packWeights lays them out (panel i, rows i·pr.., at i·mr·kc): the pair
// rows are built first (pairRows), then each panel transposed from them
// by bfPack's packer (simd: with the AVX-512 routines).
func packPairWeights(dst []uint32, cv Conv, cgp int, w, bias []uint16, mr, pr, kcb int, simd bool) {
	og := cv.O / cv.G
	k := cgp * cv.KH * cv.KW
	if bias != nil {
		k++
	}
	rows := getScratch[float32](cv.O * k)
	defer putScratch(rows)
	pairRows(words(rows), cv, cgp, w, bias, k)
	a := unsafe.Slice((*uint16)(unsafe.Pointer(&rows[0])), 2*cv.O*k)
	q := bfPack{k: 2 * k}
	panels := (og + pr - 1) / pr
	mpad := panels * mr
	blocks := (k + kcb - 1) / kcb
	total := cv.G * blocks * panels
	d := unsafe.Slice((*float32)(unsafe.Pointer(&dst[0])), len(dst))
	runItems(total, workers(total, float64(mr*kcb)/2), func(_, it int) {
		i := it % panels
		b := it / panels % blocks
		g := it / (panels * blocks)
		pc := b * kcb
		kc := min(kcb, k-pc)
		q.panels(d[g*mpad*k+pc*mpad+i*mr*kc:][:mr*kc], a, 2*k, true, g*og+i*pr, min(pr, og-i*pr), pc, kc, mr, simd)
	})
}

// convForwardPairs is ConvForwardBF16 on the bfloat16 kernel kr: the loop
// of convForward over pair words, into a float32 scratch output rounded
// item by item; in q mode, each tile of the last K block is rounded from
// the kernel's tile buffer straight into out (roundSegs, adding the earlier
// K blocks' sums), and with one K block there is no float32 output at
// all; exact mode runs on the GEMM's driver (bconv_exact.go). Where that scratch would be large, the images go through
// in chunks whose float32 outputs take about pairChunkBytes, so that one
// scratch serves every chunk from the caches instead of a float32 copy of
// the whole output streaming through memory (ResNet-18's stem: 51 MB at
// batch 16, ~43 → ~27 ms on one core).
func convForwardPairs(kr *kernel[float32], cv Conv, x []uint16, xs [4]int, w, bias, out []uint16) {
	mr, nr := kr.mr, kr.nr
	cg, og := cv.C/cv.G, cv.O/cv.G
	cgp := (cg + 1) / 2
	pcv := cv
	pcv.C = cv.G * cgp
	g := newGeom(pcv)
	img, chStride, wq := g.img, g.chStride, g.c.q
	l := cv.OH * cv.OW
	per := cv.N
	if whole := 4 * cv.N * cv.O * l; whole > pairChunkMin {
		chunks := (whole + pairChunkBytes - 1) / pairChunkBytes
		per = (cv.N + chunks - 1) / chunks
	}
	xq := getScratch[float32](per*img + nr)
	defer putScratch(xq)
	var fo []float32 // the float32 outputs of a chunk, where tiles do not go to out
	var ap []float32
	exact := exactCols(cv, wq, nr, bfExactBelow) && useBconvExact(cv, cgp)
	for n0 := 0; n0 < cv.N; n0 += per {
		cc := cv
		cc.N = min(per, cv.N-n0)
		buildPairPhases(cc, g, cgp, x[n0*xs[0]:], xs, words(xq))
		if exact {
			k := cgp * cv.KH * cv.KW
			if bias != nil {
				k++
			}
			if ap == nil { // the pair rows, built once
				ap = getScratch[float32](cv.O * k)
				defer putScratch(ap)
				pairRows(words(ap), cv, cgp, w, bias, k)
			}
			bconvForwardExact(kr, cc, g, cgp, xq, words(ap), k, out[n0*cv.O*l:])
			continue
		}
		p := newConvPlan(kr, cc, g, img, chStride, wq, cgp, bias != nil, 2, panelRows(kr, og))
		if ap == nil { // the K blocks depend on k alone: packed once
			ap = getScratch[float32](cv.G * p.mpad * p.k)
			defer putScratch(ap)
			packPairWeights(words(ap), cv, cgp, w, bias, mr, p.pr, p.kcb, kr.simdPack)
		}
		o := out[n0*cv.O*l:]
		if !p.exact {
			// round each tile's valid outputs from the kernel's tile
			// buffer (the last K block) into out, row run by row run,
			// adding the earlier K blocks' sums from fo
			var acc []float32
			if p.k > p.kcb {
				if fo == nil {
					fo = getScratch[float32](per * cv.O * l)
					defer putScratch(fo)
				}
				acc = fo
			}
			p.tile = func(t []float32, rows, ir, jr, gi, n int) {
				ob := (n*cv.O + gi*og + ir) * l
				oh, ow := jr/wq, jr%wq
				var segs [tileSegs]roundSeg
				ns := 0
				for j := 0; j < nr && oh < cv.OH; {
					if cnt := min(nr-j, cv.OW-ow); cnt > 0 {
						if ns == len(segs) {
							roundSegs(o, ob, l, t, nr, rows, segs[:ns], acc)
							ns = 0
						}
						segs[ns] = roundSeg{int64(oh*cv.OW + ow - j), (1<<cnt - 1) << j}
						ns++
					}
					j += wq - ow
					oh, ow = oh+1, 0
				}
				roundSegs(o, ob, l, t, nr, rows, segs[:ns], acc)
			}
			p.run(xq, ap, acc, nil)
			continue
		}
		if fo == nil {
			fo = getScratch[float32](per * cv.O * l)
			defer putScratch(fo)
		}
		// exact mode (several small groups): round each item's finished
		// outputs while they are in cache
		p.run(xq, ap, fo, func(i0, i1, q0, q1, gi, n int) {
			for jj := q0; jj < min(q1, cc.N*l); {
				ni, li := jj/l, jj%l
				cnt := min(min(q1, cc.N*l)-jj, l-li)
				for i := i0; i < i1; i++ {
					r := (ni*cv.O+gi*og+i)*l + li
					RoundBF16(o[r:r+cnt], fo[r:r+cnt])
				}
				jj += cnt
			}
		})
	}
}

// pairChunkBytes bounds the float32 outputs of a chunk of images in
// convForwardPairs (at least one image a chunk) once the whole batch's
// would pass pairChunkMin; smaller outputs stay in the caches anyway, and
// fewer images an item cost small layers more than they saved.
var pairChunkBytes, pairChunkMin = 2 << 20, 8 << 20

// ConvGradInputBF16 is ConvGradInput on bfloat16 operands (their bits):
// gout a contiguous [N, O, OH, OW], w a contiguous [O, C/G, KH, KW], into
// the contiguous gx [N, C, H, W], each element a float32 sum of exact
// products rounded once. A stride-1 convolution's runs on the bfloat16
// kernels as the forward convolution of gout with the flipped, transposed
// weight (see ConvGradInput); other strides, and kernel sets without a
// bfloat16 kernel, widen to float32.
func ConvGradInputBF16(cv Conv, gout, w, gx []uint16) {
	cv.Check()
	if cv.N == 0 {
		return
	}
	kr := current.Load().b
	cg, og, kk := cv.C/cv.G, cv.O/cv.G, cv.KH*cv.KW
	nw := cv.O * cg * kk
	if kr == nil || cv.SH != 1 || cv.SW != 1 {
		g := widenBits(gout[:cv.N*cv.O*cv.OH*cv.OW])
		f := getScratch[float32](cv.N * cv.C * cv.H * cv.W)
		defer putScratch(f)
		ConvGradInput(cv, g, widenBits(w[:nw]), f)
		RoundBF16(gx[:len(f)], f)
		return
	}
	// wt[g·cg+c][o][ki][kj] = w[g·og+o][c][KH−1−ki][KW−1−kj]
	wt := make([]uint16, nw)
	for g := 0; g < cv.G; g++ {
		for o := 0; o < og; o++ {
			for c := 0; c < cg; c++ {
				src := w[((g*og+o)*cg+c)*kk:][:kk]
				dst := wt[((g*cg+c)*og+o)*kk:][:kk]
				for i, v := range src {
					dst[kk-1-i] = v
				}
			}
		}
	}
	t := Conv{N: cv.N, C: cv.O, H: cv.OH, W: cv.OW, O: cv.C, KH: cv.KH, KW: cv.KW, G: cv.G,
		SH: 1, SW: 1, PH: cv.DH*(cv.KH-1) - cv.PH, PW: cv.DW*(cv.KW-1) - cv.PW, DH: cv.DH, DW: cv.DW, OH: cv.H, OW: cv.W}
	convForwardPairs(kr, t, gout, [4]int{cv.O * cv.OH * cv.OW, cv.OH * cv.OW, cv.OW, 1}, wt, nil, gx)
}
