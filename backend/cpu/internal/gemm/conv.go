package gemm

import (
	"fmt"
	"unsafe"
)

// Convolution as implicit GEMM.
//
// Per image and group, a convolution is the product
// out[O, OH·OW] = W[O, C·KH·KW] × cols[C·KH·KW, OH·OW]; nothing here
// materialises cols. The input is first rearranged into a "phase" image:
// for stride s, row phase a and column phase b (the taps' offsets modulo
// s), xq[c][a][b][i][j] = x[c][i·s+a−p][j·s+b−p] (zero outside the input),
// i < HQ, j < WQ. Tap (ki, kj) of output (oh, ow) then reads
// xq[c][a][b][oh+hi][ow+wj] with hi = ki·d/s, wj = kj·d/s: in the flattened
// phase image, output column q = oh·WQ+ow of cols row (c, ki, kj) sits at
// rowOff(c, ki, kj) + q. So every row of cols is a contiguous run of xq
// (the WQ−OW columns at the end of each row of q are computed and thrown
// away), and packing a micro-panel of B is one fixed-size copy per k step.
// The rearranged input is the size of the input, not nine times it. A
// stride-1 convolution without padding reads the input itself.
//
// The gradient with respect to the input of a stride-1 convolution is the
// same kind of convolution of the output gradient with the flipped and
// transposed weight; for larger strides it is a GEMM into a column buffer
// followed by col2im. The gradient with respect to the weight reads the
// input rearranged channel-last (see convGradWeight).

// Conv describes a 2-D convolution (cross-correlation) over NCHW tensors:
// input [N, C, H, W], weight [O, C/G, KH, KW], output [N, O, OH, OW], with
// stride S, zero padding P and dilation D per spatial dim.
type Conv struct {
	N, C, H, W int
	O, KH, KW  int
	G          int
	SH, SW     int
	PH, PW     int
	DH, DW     int
	OH, OW     int
}

// Check panics unless the sizes are consistent.
func (cv Conv) Check() {
	ok := cv.N >= 0 && cv.C > 0 && cv.H > 0 && cv.W > 0 && cv.O > 0 && cv.KH > 0 && cv.KW > 0 &&
		cv.G > 0 && cv.C%cv.G == 0 && cv.O%cv.G == 0 && cv.SH > 0 && cv.SW > 0 && cv.DH > 0 && cv.DW > 0 &&
		cv.OH == (cv.H+2*cv.PH-cv.DH*(cv.KH-1)-1)/cv.SH+1 && cv.OW == (cv.W+2*cv.PW-cv.DW*(cv.KW-1)-1)/cv.SW+1 &&
		cv.OH > 0 && cv.OW > 0
	if !ok {
		panic(fmt.Sprintf("gemm: inconsistent convolution %+v", cv))
	}
}

// OutSize is the output size along one dim.
func OutSize(in, k, s, p, d int) int { return (in+2*p-d*(k-1)-1)/s + 1 }

// phases is the phase decomposition of one spatial dim.
type phases struct {
	n   int   // phases in use
	val []int // phase index → offset a in 0..s-1
	idx []int // tap → phase index
	off []int // tap → offset in the phase image (tap·d/s)
	q   int   // phase image size: output size + the largest off
}

func newPhases(k, s, d, out int) phases {
	ph := phases{idx: make([]int, k), off: make([]int, k)}
	seen := make(map[int]int, min(s, k)) // at most k phases (a map of s entries was gigabytes for a huge stride)
	for t := 0; t < k; t++ {
		v := t * d
		a := v % s
		i, ok := seen[a]
		if !ok {
			i = len(ph.val)
			seen[a] = i
			ph.val = append(ph.val, a)
		}
		ph.idx[t], ph.off[t] = i, v/s
	}
	ph.n = len(ph.val)
	ph.q = out + ph.off[k-1]
	return ph
}

// geom is a convolution's phase layout.
type geom struct {
	r, c     phases // rows, columns
	plane    int    // r.q·c.q
	chStride int    // elements per channel of xq
	img      int    // elements per image of xq
}

func newGeom(cv Conv) geom {
	g := geom{r: newPhases(cv.KH, cv.SH, cv.DH, cv.OH), c: newPhases(cv.KW, cv.SW, cv.DW, cv.OW)}
	g.plane = g.r.q * g.c.q
	g.chStride = g.r.n * g.c.n * g.plane
	g.img = cv.C * g.chStride
	return g
}

// buildPhases fills xq (N images of g.img elements) from x with strides xs.
func buildPhases[T float](cv Conv, g geom, x []T, xs [4]int, xq []T) {
	rows := cv.N * cv.C * g.r.n * g.c.n
	// items of at least phaseItem elements: small planes one per item would
	// spend more on handing items out than on copying them
	per := max(1, phaseItem/g.plane)
	items := (rows + per - 1) / per
	np := g.r.n * g.c.n
	if pr := newPhaseRows[T](cv, g, xs); pr != nil {
		// a channel's phase planes at a time, each row of the input
		// plane loaded once and spread over the column phases
		chans := cv.N * cv.C
		cs := np * g.plane
		per := max(1, phaseItem/cs)
		items := (chans + per - 1) / per
		runItems(items, workers(items, float64(per*cs)/8), func(_, item int) {
			for ch := item * per; ch < min(chans, (item+1)*per); ch++ {
				n, c := ch/cv.C, ch%cv.C
				pr.fill(unsafe.Pointer(&xq[ch*cs]), unsafe.Pointer(&x[n*xs[0]+c*xs[1]]))
			}
		})
		return
	}
	var maps [][]int32
	if g.plane <= smallPlane && (cv.H-1)*xs[2]+(cv.W-1)*xs[3] < 1<<31 {
		// small planes (the last ResNet stages' 4×4): copy each through
		// its phase's map of source offsets (−1: padding), a loop of fixed
		// length, rather than row by row a few elements at a time
		maps = make([][]int32, np)
		for ph := range maps {
			maps[ph] = phaseMap(g.plane, xs[2], xs[3], cv.H, cv.W, g.r.q, g.c.q, cv.SH, cv.SW, g.r.val[ph/g.c.n]-cv.PH, g.c.val[ph%g.c.n]-cv.PW)
		}
	}
	runItems(items, workers(items, float64(per*g.plane)/8), func(_, item int) {
		it0 := item * per
		// plane it is phase ph of channel c of image n: walk them in order
		// rather than dividing per plane
		ph, nc := it0%np, it0/np
		n, c := nc/cv.C, nc%cv.C
		for it := it0; it < min(rows, it0+per); it++ {
			dst := xq[it*g.plane : (it+1)*g.plane]
			src := n*xs[0] + c*xs[1]
			if maps != nil {
				for k, o := range maps[ph][:len(dst)] {
					if o < 0 {
						dst[k] = 0
					} else {
						dst[k] = x[src+int(o)]
					}
				}
			} else {
				fillPhase(dst, x, src, xs[2], xs[3], cv.H, cv.W, g.r.q, g.c.q, cv.SH, cv.SW, g.r.val[ph/g.c.n]-cv.PH, g.c.val[ph%g.c.n]-cv.PW)
			}
			if ph++; ph == np {
				ph = 0
				if c++; c == cv.C {
					c = 0
					n++
				}
			}
		}
	})
}

// phaseRows lays out a channel's phase planes for phaseRowsAVX512 (float32
// input planes at most 16 wide with contiguous columns, phase rows at most
// 16 wide, at most 4 column phases): per row phase a and phase row i, the
// offset in the input plane of the row it reads (−1: a row of padding)
// and its offset among the channel's planes (column phase 0; phase b is b
// planes on); per column phase b, lane j of a phase row is lane perm[b][j]
// of the input row where bit j of keep[b] is set, else 0.
type phaseRows struct {
	soff, doff   []int
	perm         [4][16]int32
	keep         [4]int
	nb, plane    int
	lmask, smask int
}

// newPhaseRows returns the phaseRows of buildPhases(cv, g, x, xs), or nil
// where phaseRowsAVX512 cannot fill them (or this CPU cannot run it).
func newPhaseRows[T float](cv Conv, g geom, xs [4]int) *phaseRows {
	var z T
	if unsafe.Sizeof(z) != 4 || !hasPhaseRows || xs[3] != 1 || cv.W > 16 || g.c.q > 16 || g.c.n > 4 {
		return nil
	}
	pr := &phaseRows{nb: g.c.n, plane: g.plane, lmask: 1<<cv.W - 1, smask: 1<<g.c.q - 1}
	for b := 0; b < g.c.n; b++ {
		for j := 0; j < g.c.q; j++ {
			if iw := j*cv.SW + g.c.val[b] - cv.PW; iw >= 0 && iw < cv.W {
				pr.perm[b][j] = int32(iw)
				pr.keep[b] |= 1 << j
			}
		}
	}
	for a := 0; a < g.r.n; a++ {
		for i := 0; i < g.r.q; i++ {
			so := -1
			if ih := i*cv.SH + g.r.val[a] - cv.PH; ih >= 0 && ih < cv.H {
				so = ih * xs[2]
			}
			pr.soff = append(pr.soff, so)
			pr.doff = append(pr.doff, a*g.c.n*g.plane+i*g.c.q)
		}
	}
	return pr
}

// padPlanes fills xp with each of x's N·C planes zero-padded to hp×wp
// (PH rows and PW columns before): buildPhases for a stride-1 convolution
// whose one phase image is hp×wp (phaseRowsAVX512 where the planes are at
// most 16 wide).
func padPlanes[T float](cv Conv, x []T, xs [4]int, xp []T, hp, wp int) {
	if cv.SH != 1 || cv.SW != 1 {
		panic("padPlanes: stride is not 1")
	}
	one := func(q int) phases { return phases{n: 1, val: []int{0}, q: q} }
	g := geom{r: one(hp), c: one(wp), plane: hp * wp}
	g.chStride, g.img = g.plane, cv.C*g.plane
	buildPhases(cv, g, x, xs, xp)
}

// phaseItem is the fewest elements of xq one item of buildPhases fills.
const phaseItem = 4096

// smallPlane is the largest phase plane buildPhases copies through a map.
const smallPlane = 256

// phaseMap is fillPhase's source offset (from the plane's origin) for each
// element of a plane, −1 where fillPhase writes 0.
func phaseMap(plane, sr, sc, h, w, hq, wq, sh, sw, ph, pw int) []int32 {
	m := make([]int32, plane)
	for i := 0; i < hq; i++ {
		for j := 0; j < wq; j++ {
			ih, iw := i*sh+ph, j*sw+pw
			if ih < 0 || ih >= h || iw < 0 || iw >= w {
				m[i*wq+j] = -1
			} else {
				m[i*wq+j] = int32(ih*sr + iw*sc)
			}
		}
	}
	return m
}

// fillPhase writes dst[i·wq+j] = x[src + (i·sh+ph)·sr + (j·sw+pw)·sc]
// where that row and column lie in [0,h)×[0,w), else 0.
func fillPhase[T float](dst, x []T, src, sr, sc, h, w, hq, wq, sh, sw, ph, pw int) {
	// columns j with 0 ≤ j·sw+pw < w
	j0 := 0
	if pw < 0 {
		j0 = (-pw + sw - 1) / sw
	}
	j1 := 0
	if w-pw > 0 {
		j1 = (w - pw + sw - 1) / sw
	}
	j0, j1 = min(j0, wq), min(j1, wq)
	for i := 0; i < hq; i++ {
		row := dst[i*wq : (i+1)*wq]
		ih := i*sh + ph
		if ih < 0 || ih >= h || j0 >= j1 {
			clear(row)
			continue
		}
		clear(row[:j0])
		clear(row[j1:])
		s := src + ih*sr + (j0*sw+pw)*sc
		if sw*sc == 1 {
			copy(row[j0:j1], x[s:s+j1-j0])
			continue
		}
		st := sw * sc
		for j := j0; j < j1; j++ {
			row[j] = x[s]
			s += st
		}
	}
}

// wlayout addresses the weight as a [G][rows][chans][KH][KW] array:
// element (g, r, c, ki, kj) is w[base + g·gs + r·rs + c·cs + ki·ks + kj·ls].
type wlayout struct{ base, gs, rs, cs, ks, ls int }

// at starts a walk over row r of group g's k = (c, ki, kj) (kh×kw taps)
// at k: ki, kj and the element's index.
func (wl wlayout) at(g, r, k, kh, kw int) (ki, kj, idx int) {
	c, t := k/(kh*kw), k%(kh*kw)
	ki, kj = t/kw, t%kw
	return ki, kj, wl.base + g*wl.gs + r*wl.rs + c*wl.cs + ki*wl.ks + kj*wl.ls
}

// next moves such a walk one k on.
func (wl wlayout) next(ki, kj, idx, kh, kw int) (int, int, int) {
	kj++
	idx += wl.ls
	if kj == kw {
		kj = 0
		ki++
		idx += wl.ks - kw*wl.ls
		if ki == kh {
			ki = 0
			idx += wl.cs - kh*wl.ks
		}
	}
	return ki, kj, idx
}

// forwardLayout is the layout of a contiguous [O, C/G, KH, KW] weight.
func forwardLayout(cv Conv) wlayout {
	kk := cv.KH * cv.KW
	cg := cv.C / cv.G
	return wlayout{gs: cv.O / cv.G * cg * kk, rs: cg * kk, cs: kk, ks: cv.KW, ls: 1}
}

// packWeights packs each group's [rows × K] matrix A (K = chans·KH·KW, and
// one more column holding bias when bias != nil) into MR-row micro-panels,
// K block by K block: block b of group g starts at g·mpad·K + pc·mpad and
// holds panel ir at ir·kc. Rows past rows are zero.
func packWeights[T float](dst, w []T, wl wlayout, groups, rows, chans, kh, kw int, bias []T, mr, kcb int) {
	kg := chans * kh * kw
	k := kg
	if bias != nil {
		k++
	}
	mpad := (rows + mr - 1) / mr * mr
	blocks := (k + kcb - 1) / kcb
	panels := mpad / mr
	total := groups * blocks * panels
	contig := wl.ls == 1 && wl.ks == kw && wl.cs == kh*kw
	simd := kernelOf[T]().simdPack
	// an item moves mr·kcb elements: worth a second thread from ~256K
	runItems(total, workers(total, float64(mr*kcb)*8), func(_, it int) {
		ir := it % panels * mr
		b := it / panels % blocks
		g := it / (panels * blocks)
		pc := b * kcb
		kc := min(kcb, k-pc)
		d := dst[g*mpad*k+pc*mpad+ir*kc:][:mr*kc]
		if contig && ir+mr <= rows {
			// a whole panel with k along the rows: transpose the mr×kn
			// block, row by row of the panel (sequential stores)
			if kn := min(kc, kg-pc); kn > 0 {
				off := wl.base + g*wl.gs + ir*wl.rs + pc
				if !simd || !packPanelSIMD(d[:kn*mr], w, off, wl.rs, 1, mr, mr, kn, 1) {
					transposePanel(d, w[off:], wl.rs, mr, kn)
				}
			}
			if kn := kg - pc; kn < kc {
				for i := 0; i < mr; i++ {
					d[kn*mr+i] = bias[g*rows+ir+i]
				}
			}
			return
		}
		for i := 0; i < mr; i++ {
			r := ir + i
			if r >= rows {
				for p := 0; p < kc; p++ {
					d[p*mr+i] = 0
				}
				continue
			}
			if contig {
				// k runs along the row: a strided copy
				src := w[wl.base+g*wl.gs+r*wl.rs+pc:][:min(kc, kg-pc)]
				for p, v := range src {
					d[p*mr+i] = v
				}
				if pc+kc > kg {
					d[(kg-pc)*mr+i] = bias[g*rows+r]
				}
				continue
			}
			// walk (c, ki, kj) from k = pc
			ki, kj, idx := wl.at(g, r, pc, kh, kw)
			for p := 0; p < kc; p++ {
				if pc+p == kg {
					d[p*mr+i] = bias[g*rows+r]
					break
				}
				d[p*mr+i] = w[idx]
				ki, kj, idx = wl.next(ki, kj, idx, kh, kw)
			}
		}
	})
}

// copyPanel fills an nr-wide micro-panel: row p is src[base+offs[p]:][:nr],
// or all ones where offs[p] < 0 (only the last row, the bias row, may be);
// reads past the end of src give zeros. maxOff bounds the offsets.
func copyPanel[T float](dst, src []T, base int, offs []int, maxOff, nr int) {
	if last := len(offs) - 1; last >= 0 && offs[last] < 0 {
		d := dst[last*nr : last*nr+nr]
		for i := range d {
			d[i] = 1
		}
		offs = offs[:last]
	}
	if len(offs) == 0 {
		return
	}
	n := len(src)
	var z T
	esz := int(unsafe.Sizeof(z))
	if base+maxOff+nr <= n {
		_ = dst[len(offs)*nr-1]
		if copyRows(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[base]), offs, esz/4+1, nr*esz) {
			return
		}
	}
	for p, off := range offs {
		d := dst[p*nr : p*nr+nr]
		s := base + off
		if s+nr > n {
			m := copy(d, src[s:])
			clear(d[m:])
			continue
		}
		copyFixed(unsafe.Pointer(&d[0]), unsafe.Pointer(&src[s]), nr*esz)
	}
}

// copyFixed copies n bytes, with register moves for the panel widths in
// use (an array assignment through pointers becomes a call to memmove).
func copyFixed(dst, src unsafe.Pointer, n int) {
	switch n {
	case 128:
		copy64(dst, src)
		copy64(unsafe.Add(dst, 64), unsafe.Add(src, 64))
	case 64:
		copy64(dst, src)
	case 32:
		s, d := (*[4]uint64)(src), (*[4]uint64)(dst)
		a0, a1, a2, a3 := s[0], s[1], s[2], s[3]
		d[0], d[1], d[2], d[3] = a0, a1, a2, a3
	default:
		copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
	}
}

func copy64(dst, src unsafe.Pointer) {
	s, d := (*[8]uint64)(src), (*[8]uint64)(dst)
	a0, a1, a2, a3, a4, a5, a6, a7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = a0, a1, a2, a3, a4, a5, a6, a7
}

// ConvForward computes out = conv(x, w) + bias. x holds the input with
// strides xs (element (n,c,h,w) at n·xs[0]+c·xs[1]+h·xs[2]+w·xs[3]); w is a
// contiguous [O, C/G, KH, KW] weight; bias is [O] or nil; out is a
// contiguous [N, O, OH, OW].
func ConvForward[T float](cv Conv, x []T, xs [4]int, w, bias, out []T) {
	cv.Check()
	convForward(cv, x, xs, w, forwardLayout(cv), bias, out)
}

// convForward is ConvForward with the weight addressed through wl.
func convForward[T float](cv Conv, x []T, xs [4]int, w []T, wl wlayout, bias, out []T) {
	if cv.N == 0 {
		return
	}
	if useWinograd(cv, sizeOf[T]() == 4 && hasWinoWeights) {
		convWinograd(cv, x, xs, w, wl, bias, out)
		return
	}
	kr := kernelOf[T]()
	mr, nr := kr.mr, kr.nr
	g := newGeom(cv)
	// The input itself is the phase image when there is one phase and no
	// padding, and its columns are contiguous.
	var xq []T
	img, chStride, wq := g.img, g.chStride, g.c.q
	if cv.SH == 1 && cv.SW == 1 && cv.PH == 0 && cv.PW == 0 && xs[3] == 1 && xs[2] >= cv.W {
		xq, img, chStride, wq = x, xs[0], xs[1], xs[2]
	} else {
		xq = getScratch[T](cv.N*g.img + nr)
		defer putScratch(xq)
		buildPhases(cv, g, x, xs, xq)
	}

	// Small images: float32 runs on the GEMM's driver (conv_exact.go).
	if exactCols(cv, wq, nr, exactBelow) && convForwardExact(cv, g, xq, img, chStride, wq, w, wl, bias, out) {
		return
	}
	cg, og := cv.C/cv.G, cv.O/cv.G
	p := newConvPlan(kr, cv, g, img, chStride, wq, cg, bias != nil, 1, mr)
	ap := getScratch[T](cv.G * p.mpad * p.k)
	defer putScratch(ap)
	packWeights(ap, w, wl, cv.G, og, cg, cv.KH, cv.KW, bias, mr, p.kcb)
	p.run(xq, ap, out, nil)
}

// convPlan is the blocking and threading of a direct convolution on the
// kernel kr, shared by convForward and convForwardPairs: the GEMM of each
// group's packed weight [og × k] with the columns of the phase image xq,
// item by item.
type convPlan[T float] struct {
	kr          *kernel[T]
	cv          Conv
	img, chs    int // image stride and channel stride of xq
	wq          int // row stride of a phase plane
	cs          int // channels of a group in xq (strides of the groups)
	offs        []int
	maxOff      int
	k, kcb      int
	og, mpad, l int
	pr          int // rows of an A panel (of mr, the rest zero)
	panels      int
	exact       bool
	cp, chunks  int
	rb, rowPans int
	total, t    int
	colBase     [][]int // per worker, exact mode: xq offset of each column
	// tile, when set (q mode), takes each tile of the last K block
	// instead of out: the kernel's rows×nr tile t (that block's sum
	// alone; out holds the earlier blocks') of rows ir.. (of group gi),
	// columns jr.. of image n.
	tile func(t []T, rows, ir, jr, gi, n int)
}

// newConvPlan plans the convolution cv over xq (its layout g, with image
// stride img, channel stride chStride and row stride wq; cs channels a
// group), k = cs·KH·KW rows of B, and one more when hasBias. costF scales
// the work of an item (for the thread count). The packed weight's panels
// (of mr rows) hold pr ≤ mr rows each (the rest zero; pr < mr needs the
// kernel's edge kernels), so that og rows can be cut into panels of
// about equal height.
func newConvPlan[T float](kr *kernel[T], cv Conv, g geom, img, chStride, wq, cs int, hasBias bool, costF float64, pr int) *convPlan[T] {
	mr, nr := kr.mr, kr.nr
	p := &convPlan[T]{kr: kr, cv: cv, img: img, chs: chStride, wq: wq, cs: cs}
	og := cv.O / cv.G
	kk := cv.KH * cv.KW
	kg := cs * kk
	k := kg
	if hasBias {
		k++
	}
	offs := colOffsets(cv, g, chStride, wq, kg, k)
	maxOff := 0
	for _, o := range offs[:kg] {
		maxOff = max(maxOff, o)
	}
	kcb := balance(k, convKC(kr.kc, nr, int(sizeOf[T]())), 1)
	mpad := (og + pr - 1) / pr * mr

	// Columns: in q mode, each image's q range [0, lq) in panels of nr (B
	// rows are contiguous runs of xq; the columns past OW are thrown away).
	// When that wastes too much (small images), exact mode: the N·L output
	// positions of all images in a row, panels gathered element by element.
	l := cv.OH * cv.OW
	panels := qPanels(cv, wq, nr)
	exact := exactCols(cv, wq, nr, exactBelow)
	imgs := cv.N // images with their own panels
	if exact {
		imgs, panels = 1, (cv.N*l+nr-1)/nr
	}
	t := numThreads()
	// A chunk's outputs (og rows) stay within ~256 KiB; among smaller
	// chunks, take the one whose items share out best among the threads
	// (the busiest thread's panels), the largest on a tie.
	cpMax := max(1, min(kr.convNC/nr, (64<<10)/(og*nr), panels))
	cp, best := cpMax, 0
	for c := cpMax; c >= max(1, cpMax/4); c-- {
		items := imgs * cv.G * ((panels + c - 1) / c)
		if load := (items + t - 1) / t * c; best == 0 || load < best {
			cp, best = c, load
		}
	}
	chunks := (panels + cp - 1) / cp
	rb := 1
	if items := imgs * cv.G * chunks; items < 2*t {
		rb = min(mpad/mr, (2*t+items-1)/items)
	}
	rowPanels := (mpad/mr + rb - 1) / rb
	total := imgs * cv.G * chunks * rb
	cost := costF * float64(og) * float64(k) * float64(cp*nr) / float64(rb)
	t = workers(total, cost)
	if exact {
		p.colBase = make([][]int, t)
		for i := range p.colBase {
			p.colBase[i] = make([]int, cp*nr)
		}
	}
	p.offs, p.maxOff, p.k, p.kcb = offs, maxOff, k, kcb
	p.og, p.mpad, p.l, p.pr = og, mpad, l, pr
	p.panels, p.exact, p.cp, p.chunks = panels, exact, cp, chunks
	p.rb, p.rowPans, p.total, p.t = rb, rowPanels, total, t
	return p
}

// colOffsets returns the offsets in the phase image (layout g, channel
// stride chStride, row stride wq) of the rows of cols, k of them: the kg
// rows of a group's channels and taps, and -1 for any after (the bias row).
func colOffsets(cv Conv, g geom, chStride, wq, kg, k int) []int {
	kk := cv.KH * cv.KW
	offs := make([]int, k)
	for kx := range offs {
		c, t := kx/kk, kx%kk
		if kx >= kg {
			offs[kx] = -1
			continue
		}
		ki, kj := t/cv.KW, t%cv.KW
		offs[kx] = c*chStride + (g.r.idx[ki]*g.c.n+g.c.idx[kj])*g.plane + g.r.off[ki]*wq + g.c.off[kj]
	}
	return offs
}

// qPanels is how many nr-column panels cover one image's outputs in q
// mode, phase rows wq wide (the columns past OW are thrown away).
func qPanels(cv Conv, wq, nr int) int {
	lq := (cv.OH-1)*wq + cv.OW // columns of q with outputs
	return (lq + nr - 1) / nr
}

// exactCols reports whether the forward product gathers the exact output
// positions as columns (exact mode) rather than contiguous runs of q,
// which would waste too many columns (small images): below, the fraction
// of useful q-mode columns under which it does (exactBelow, bfExactBelow).
func exactCols(cv Conv, wq, nr int, below float64) bool {
	return float64(cv.OH*cv.OW) < below*float64(qPanels(cv, wq, nr)*nr)
}

// run computes out (a contiguous [N, O, OH, OW]) from xq and ap, the
// weights packed in K blocks of kcb. After each item's last K block,
// finish (when not nil) is called with the item's output rows [i0, i1)
// of group gi and its columns [q0, q1) (of image n in q mode, of the
// N·L positions in exact mode).
func (p *convPlan[T]) run(xq, ap, out []T, finish func(i0, i1, q0, q1, gi, n int)) {
	kr, cv := p.kr, p.cv
	mr, nr := kr.mr, kr.nr
	og, k, kcb, mpad, l, wq := p.og, p.k, p.kcb, p.mpad, p.l, p.wq
	offs, maxOff, exact := p.offs, p.maxOff, p.exact
	rb, chunks, cp := p.rb, p.chunks, p.cp
	runItems(p.total, p.t, func(wk, it int) {
		r := it % rb
		it /= rb
		ch := it % chunks
		it /= chunks
		gi, n := it%cv.G, it/cv.G
		buf := kr.buffers()
		defer kr.bufs.put(buf)
		bb := buf.bOf(kcb * nr)
		pr := p.pr
		i0 := r * p.rowPans * pr
		i1 := min(og, i0+p.rowPans*pr)
		q0 := ch * cp * nr
		q1 := min(q0+cp*nr, p.panels*nr)
		xb := n*p.img + gi*p.cs*p.chs
		ob := (n*cv.O + gi*og) * l
		var cb []int
		if exact {
			// column j is output position j%l of image j/l
			cb = p.colBase[wk][:q1-q0]
			for j := range cb {
				jj := q0 + j
				if jj >= cv.N*l {
					cb[j] = -1
					continue
				}
				ni, li := jj/l, jj%l
				cb[j] = ni*p.img + gi*p.cs*p.chs + li/cv.OW*wq + li%cv.OW
			}
		}
		for pc := 0; pc < k; pc += kcb {
			kc := min(kcb, k-pc)
			apb := ap[gi*mpad*k+pc*mpad:]
			accum := 0
			if pc > 0 {
				accum = 1
			}
			for jr := q0; jr < q1; jr += nr {
				var direct bool
				var o0 int // output offset of the tile's first column
				if exact {
					gatherPanel(bb, xq, cb[jr-q0:jr-q0+nr], offs[pc:pc+kc], nr)
					ni, li := jr/l, jr%l
					direct = li+nr <= l
					o0 = (ni*cv.O+gi*og)*l + li
				} else {
					copyPanel(bb, xq, xb+jr, offs[pc:pc+kc], maxOff, nr)
					oh, ow := jr/wq, jr%wq
					direct = ow+nr <= cv.OW
					o0 = ob + oh*cv.OW + ow
				}
				for ir := i0; ir < i1; ir += pr {
					a := &apb[ir/pr*mr*kc]
					rows := min(pr, og-ir)
					fn, whole := kr.rowsFn(rows)
					if p.tile != nil && pc+kc == k {
						fn(kc, a, &bb[0], &buf.t[0], nr, 0)
						p.tile(buf.t, rows, ir, jr, gi, n)
						continue
					}
					if direct && whole {
						fn(kc, a, &bb[0], &out[o0+ir*l], l, accum)
						continue
					}
					fn(kc, a, &bb[0], &buf.t[0], nr, 0)
					if exact {
						mergeExact(out, cv.O*l, (gi*og+ir)*l, l, buf.t, rows, nr, jr, cv.N*l, accum)
					} else {
						mergeTile(out, ob+ir*l, l, buf.t, rows, nr, jr, wq, cv.OH, cv.OW, accum)
					}
				}
			}
		}
		if finish != nil {
			finish(i0, i1, q0, q1, gi, n)
		}
	})
}

// storeRows stores (accum == 0) or adds columns j..j+n of the rows×nr tile
// t into dst: row r at o + r·ldd.
func storeRows[T float](dst []T, o, ldd int, t []T, j, nr, rows, n, accum int) {
	for r := 0; r < rows; r++ {
		d := dst[o+r*ldd : o+r*ldd+n]
		s := t[r*nr+j : r*nr+j+n]
		if accum == 0 {
			copy(d, s)
			continue
		}
		for i, v := range s {
			d[i] += v
		}
	}
}

// gatherPanel fills an nr-wide micro-panel: row p, column t is
// src[cb[t]+offs[p]] (zero where cb[t] < 0), or one where offs[p] < 0.
func gatherPanel[T float](dst, src []T, cb []int, offs []int, nr int) {
	valid := len(cb)
	for valid > 0 && cb[valid-1] < 0 {
		valid--
	}
	cb = cb[:valid]
	for p, off := range offs {
		d := dst[p*nr : p*nr+nr]
		if off < 0 {
			for i := range d {
				d[i] = 1
			}
			continue
		}
		for t, c := range cb {
			d[t] = src[c+off]
		}
		clear(d[valid:])
	}
}

// mergeExact stores (accum == 0) or adds the rows×nr tile t, whose columns
// are output positions j = jr.. of all images (image j/l, position j%l;
// none past total), into dst: row r of image n at n·img + ob + r·l.
func mergeExact[T float](dst []T, img, ob, l int, t []T, rows, nr, jr, total, accum int) {
	for j := 0; j < nr && jr+j < total; {
		n, li := (jr+j)/l, (jr+j)%l
		cnt := min(nr-j, l-li, total-jr-j)
		storeRows(dst, n*img+ob+li, l, t, j, nr, rows, cnt, accum)
		j += cnt
	}
}

// mergeTile stores (accum == 0) or adds the rows×nr tile t, whose columns
// are q = jr.. in a phase plane of width wq, into the valid outputs of dst
// (row r at ob + r·ldd, column oh·ow_+ow), one run of valid columns at a
// time.
func mergeTile[T float](dst []T, ob, ldd int, t []T, rows, nr, jr, wq, oh_, ow_, accum int) {
	oh, ow := jr/wq, jr%wq
	for j := 0; j < nr && oh < oh_; {
		if n := min(nr-j, ow_-ow); n > 0 { // valid columns from here on this row
			storeRows(dst, ob+oh*ow_+ow, ldd, t, j, nr, rows, n, accum)
		}
		j += wq - ow // to the start of the next row
		oh, ow = oh+1, 0
	}
}

// exactBelow is the fraction of useful columns in q mode below which the
// forward product gathers exact columns instead (tests set it to 0 and 2
// to force either mode).
var exactBelow = 0.8

var convKCOverride = 0

// convKC is the K block of a convolution: the B micro-panel is packed per
// product, so it may outgrow L1 (it streams from L2); a longer K block
// means fewer passes over the output.
func convKC(kc, nr, esz int) int {
	if convKCOverride > 0 {
		return convKCOverride
	}
	return max(kc, (96<<10)/(nr*esz))
}

// transposePanel sets d[p·mr+i] = s[i·lds+p] for i < mr, p < n: an mr-row
// block of a row-major matrix into a micro-panel.
func transposePanel[T float](d, s []T, lds, mr, n int) {
	_ = d[n*mr-1]
	_ = s[(mr-1)*lds+n-1]
	for p := 0; p < n; p++ {
		dd := d[p*mr : p*mr+mr]
		for i := range dd {
			dd[i] = s[i*lds+p]
		}
	}
}
