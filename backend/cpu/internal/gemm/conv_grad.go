package gemm

import "unsafe"

// ConvGradInput computes gx, the gradient of a convolution's input, from
// gout (a contiguous [N, O, OH, OW]) and w (a contiguous
// [O, C/G, KH, KW]) into a contiguous [N, C, H, W] gx.
func ConvGradInput[T float](cv Conv, gout, w, gx []T) {
	cv.Check()
	if cv.N == 0 {
		return
	}
	if cv.SH == 1 && cv.SW == 1 {
		// The stride-1 convolution of gout, padded by d·(k−1)−p (cropped
		// when negative), with the weight flipped and transposed per group.
		cg, og, kk := cv.C/cv.G, cv.O/cv.G, cv.KH*cv.KW
		t := Conv{N: cv.N, C: cv.O, H: cv.OH, W: cv.OW, O: cv.C, KH: cv.KH, KW: cv.KW, G: cv.G,
			SH: 1, SW: 1, PH: cv.DH*(cv.KH-1) - cv.PH, PW: cv.DW*(cv.KW-1) - cv.PW, DH: cv.DH, DW: cv.DW, OH: cv.H, OW: cv.W}
		wl := wlayout{base: kk - 1, gs: og * cg * kk, rs: kk, cs: cg * kk, ks: -cv.KW, ls: -1}
		convForward(t, gout, [4]int{cv.O * cv.OH * cv.OW, cv.OH * cv.OW, cv.OW, 1}, w, wl, nil, gx)
		return
	}
	convGradInputCols(cv, gout, w, gx)
}

// convGradInputCols is the gradient of the input as a GEMM into a column
// buffer, cols = Wᵀ·gout per image and group, and col2im. Items are
// (image, group, block of channels), each owning its part of gx.
func convGradInputCols[T float](cv Conv, gout, w, gx []T) {
	kr := kernelOf[T]()
	cg, og, kk := cv.C/cv.G, cv.O/cv.G, cv.KH*cv.KW
	kg := cg * kk
	l := cv.OH * cv.OW
	hw := cv.H * cv.W
	cb := max(1, min(cg, (64<<10)/(kk*l)))
	blocks := (cg + cb - 1) / cb
	total := cv.N * cv.G * blocks
	cost := float64(cb*kk) * float64(og) * float64(l)
	t := workers(total, cost)
	cols := getScratch[T](t * cb * kk * l)
	defer putScratch(cols)
	runItems(total, t, func(wk, it int) {
		b := it % blocks
		it /= blocks
		g, n := it%cv.G, it/cv.G
		c0 := b * cb
		c1 := min(cg, c0+cb)
		rows := (c1 - c0) * kk
		buf := cols[wk*cb*kk*l : (wk*cb+cb)*kk*l]
		// cols[rows × l] = W[g·og.., c0·kk..]ᵀ × gout[n, g·og..]
		p := params[T]{kr: kr, transA: true, k: og, alpha: 1,
			a: w[g*og*kg+c0*kk:], lda: kg, b: gout[(n*cv.O+g*og)*l:], ldb: l, c: buf, ldc: l}
		p.run(0, rows, 0, l)
		for c := c0; c < c1; c++ {
			dst := gx[(n*cv.C+g*cg+c)*hw:][:hw]
			clear(dst)
			for t := 0; t < kk; t++ {
				ki, kj := t/cv.KW, t%cv.KW
				src := buf[((c-c0)*kk+t)*l:][:l]
				col2im(dst, src, cv, ki, kj)
			}
		}
	})
}

// col2im adds src, the [OH·OW] column of tap (ki, kj), into the [H·W]
// plane dst.
func col2im[T float](dst, src []T, cv Conv, ki, kj int) {
	// output columns with 0 ≤ ow·sw + kj·dw − pw < w
	off := kj*cv.DW - cv.PW
	ow0 := 0
	if off < 0 {
		ow0 = (-off + cv.SW - 1) / cv.SW
	}
	ow1 := 0
	if cv.W-off > 0 {
		ow1 = min(cv.OW, (cv.W-off+cv.SW-1)/cv.SW)
	}
	for oh := 0; oh < cv.OH; oh++ {
		ih := oh*cv.SH + ki*cv.DH - cv.PH
		if ih < 0 || ih >= cv.H {
			continue
		}
		row := dst[ih*cv.W:][:cv.W]
		s := src[oh*cv.OW:][:cv.OW]
		iw := ow0*cv.SW + off
		for ow := ow0; ow < ow1; ow++ {
			row[iw] += s[ow]
			iw += cv.SW
		}
	}
}

// ConvGradWeight computes gw (a contiguous [O, C/G, KH, KW]), the gradient
// of a convolution's weight, from the input x (strides xs, as in
// ConvForward) and gout (a contiguous [N, O, OH, OW]).
//
// Two methods. As dot products (convGradWeightDot):
// gw[o, (c, tap)] = Σ over images and output positions of
// gout[o, pos] · x[c, pos+tap]. In the phase layout of the forward pass
// (xq) the input row of (c, tap) is contiguous along the output positions
// q = oh·WQ+ow, and so is gout once spread to the same q (gq, zero at the
// columns past OW). Each entry is then a dot product of two contiguous
// vectors: the dot-product kernels compute tiles of them with no packing,
// accumulating over a chunk of images in registers. As a GEMM
// (convGradWeightGEMM), with the input rearranged channel-last.
func ConvGradWeight[T float](cv Conv, x []T, xs [4]int, gout, gw []T) {
	cv.Check()
	if cv.N == 0 {
		clear(gw[:cv.O*cv.C/cv.G*cv.KH*cv.KW])
		return
	}
	// The dot products win where the GEMM's panels would be narrow (few
	// channels per group, short columns); the GEMM wins on wide layers,
	// where the dot products' thrown-away columns and lane sums cost more
	// than its packing.
	cg := cv.C / cv.G
	dot := cg < 16 || cg*cv.KH*cv.KW < 128
	if weightGradMode != 0 {
		dot = weightGradMode == 2
	}
	if dot {
		convGradWeightDot(cv, x, xs, gout, gw)
		return
	}
	convGradWeightGEMM(cv, x, xs, gout, gw)
}

// weightGradMode lets tests force the weight gradient's method: 0 chooses,
// 1 the GEMM, 2 the dot products.
var weightGradMode = 0

// convGradWeightDot is the weight gradient as dot products.
func convGradWeightDot[T float](cv Conv, x []T, xs [4]int, gout, gw []T) {
	cg, og, kk := cv.C/cv.G, cv.O/cv.G, cv.KH*cv.KW
	kg := cg * kk
	gw = gw[:cv.O*kg]
	clear(gw)
	kr := kernelOf[T]()
	dmr, dnr, vw := kr.dmr, kr.dnr, kr.dvw
	g := newGeom(cv)
	wq := g.c.q
	lq := (cv.OH-1)*wq + cv.OW
	n := (lq + vw - 1) / vw * vw // q positions per image, whole vectors

	// B rows read n positions from each row start: at most n−lq past the
	// last valid one, which the slack covers.
	xq := getScratch[T](cv.N*g.img + vw)
	defer putScratch(xq)
	clear(xq[cv.N*g.img:])
	buildPhases(cv, g, x, xs, xq)

	// gq[img][o][q] = gout[img][o][oh·OW+ow], zero where ow ≥ OW or q ≥ lq
	l := cv.OH * cv.OW
	gq := getScratch[T](cv.N * cv.O * n)
	defer putScratch(gq)
	runItems(cv.N*cv.O, workers(cv.N*cv.O, float64(n)/8), func(_, it int) {
		d := gq[it*n : (it+1)*n]
		src := gout[it*l : (it+1)*l]
		for oh := 0; oh < cv.OH; oh++ {
			row := d[oh*wq:]
			copy(row[:cv.OW], src[oh*cv.OW:(oh+1)*cv.OW])
			if oh+1 < cv.OH {
				clear(row[cv.OW:wq])
			}
		}
		clear(d[lq:])
	})

	// Row offsets of B (input rows of (c, tap)) in an image of xq.
	offs := make([]int, kg+dnr)
	for m := 0; m < kg; m++ {
		c, t := m/kk, m%kk
		ki, kj := t/cv.KW, t%cv.KW
		offs[m] = c*g.chStride + (g.r.idx[ki]*g.c.n+g.c.idx[kj])*g.plane + g.r.off[ki]*wq + g.c.off[kj]
	}
	for m := kg; m < len(offs); m++ {
		offs[m] = offs[kg-1] // a partial tile reads a valid row again
	}

	// Items: blocks of tiles of one group; each owns its part of gw.
	oTiles, mTiles := (og+dmr-1)/dmr, (kg+dnr-1)/dnr
	t := numThreads()
	ob, mb := oTiles, mTiles // tiles per block
	for cv.G*((oTiles+ob-1)/ob)*((mTiles+mb-1)/mb) < 4*t && (ob > 1 || mb > 1) {
		if mb >= ob {
			mb = (mb + 1) / 2
		} else {
			ob = (ob + 1) / 2
		}
	}
	oBlocks, mBlocks := (oTiles+ob-1)/ob, (mTiles+mb-1)/mb
	total := cv.G * oBlocks * mBlocks
	var z T
	esz := int(unsafe.Sizeof(z))
	// images per kernel call: the B rows of a tile stay within ~16 KiB
	ic := max(1, (16<<10)/(dnr*n*esz))
	cost := float64(ob*dmr) * float64(mb*dnr) * float64(cv.N*n)
	runItems(total, workers(total, cost), func(_, it int) {
		mbk := it % mBlocks
		it /= mBlocks
		obk, gi := it%oBlocks, it/oBlocks
		var boff [16]int
		var tmp [64]T // a partial tile
		for i0 := 0; i0 < cv.N; i0 += ic {
			ni := min(ic, cv.N-i0)
			for mt := mbk * mb; mt < min(mTiles, (mbk+1)*mb); mt++ {
				m0 := mt * dnr
				for j := range dnr {
					boff[j] = offs[m0+j] + gi*cg*g.chStride
				}
				bp := &xq[i0*g.img]
				for ot := obk * ob; ot < min(oTiles, (obk+1)*ob); ot++ {
					o0 := ot * dmr
					a := &gq[(i0*cv.O+gi*og+o0)*n]
					rows, cols := min(dmr, og-o0), min(dnr, kg-m0)
					if rows == dmr && cols == dnr {
						kr.dot(n, ni, a, n, cv.O*n, bp, &boff[0], g.img, &gw[(gi*og+o0)*kg+m0], kg)
						continue
					}
					lda := n
					if rows < dmr {
						lda = 0 // the missing rows read row 0 again
					}
					clear(tmp[:dmr*dnr])
					if rows < dmr && rows > 1 {
						// rows 1.. are real: compute them one at a time
						for r := range rows {
							kr.dot(n, ni, &gq[(i0*cv.O+gi*og+o0+r)*n], 0, cv.O*n, bp, &boff[0], g.img, &tmp[0], dnr)
							for j := range cols {
								gw[(gi*og+o0+r)*kg+m0+j] += tmp[j]
							}
							clear(tmp[:dmr*dnr])
						}
						continue
					}
					kr.dot(n, ni, a, lda, cv.O*n, bp, &boff[0], g.img, &tmp[0], dnr)
					for r := range rows {
						for j := range cols {
							gw[(gi*og+o0+r)*kg+m0+j] += tmp[r*dnr+j]
						}
					}
				}
			}
		}
	})
}

// convGradWeightGEMM is the weight gradient as a GEMM. Per group it is gw[o, (c, tap)] = Σ over images and outputs of
// gout[o, pos] · x[c, pos+tap]: a GEMM whose inner dimension is the
// output positions. The input is rearranged into phase images with the
// channel last (xh[a][b][i][j][c]), so that the B operand's row for one
// position and tap is a contiguous run of channels; A is gout, packed per
// block of positions and used for every tap. Each goroutine accumulates
// into its own [O × C/G·KH·KW] buffer; the buffers are summed at the end.
func convGradWeightGEMM[T float](cv Conv, x []T, xs [4]int, gout, gw []T) {
	cg, og, kk := cv.C/cv.G, cv.O/cv.G, cv.KH*cv.KW
	kg := cg * kk
	if cv.N == 0 {
		clear(gw[:cv.O*kg])
		return
	}
	kr := kernelOf[T]()
	mr, nr := kr.mr, kr.nr
	g := newGeom(cv)
	var z T
	esz := int(unsafe.Sizeof(z))
	shift := esz/4 + 1

	// xh[n][a][b][i][j][c]
	xh := getScratch[T](cv.N * g.img)
	defer putScratch(xh)
	channelLast(cv, g, x, xs, xh)

	// Column m = tap·cg + c of a group's [og × kg] product, in panels of nr
	// columns
	runs, lanes := gradPanels(cv, g, nr)

	l := cv.OH * cv.OW
	total := cv.N * l
	kcb := balance(total, kr.kc, 1)
	items := (total + kcb - 1) / kcb
	mpad := (og + mr - 1) / mr * mr
	accSize := cv.G * og * kg // [g][o][tap][c]
	cost := float64(cv.O) * float64(kg) * float64(kcb)
	t := workers(items, cost)
	// Each goroutine's accumulator is one more buffer of gw's size: keep
	// their total modest.
	t = max(1, min(t, (64<<20)/max(1, accSize)))
	acc := getScratch[T](t * accSize)
	defer putScratch(acc)
	clear(acc)
	type state struct {
		pos, gpos []int // per inner step: xh offset of the position, gout offset
		a         []T
	}
	st := make([]state, t)
	runItems(items, t, func(wk, it int) {
		s := &st[wk]
		if s.a == nil {
			s.pos, s.gpos = make([]int, kcb), make([]int, kcb)
			s.a = getScratch[T](mpad * kcb)
		}
		buf := kr.buffers()
		defer kr.bufs.put(buf)
		p0 := it * kcb
		kc := min(kcb, total-p0)
		gradPositions(cv, g, p0, s.pos[:kc], s.gpos[:kc])
		pos, gpos := s.pos[:kc], s.gpos[:kc]
		myAcc := acc[wk*accSize : (wk+1)*accSize]
		for gi := 0; gi < cv.G; gi++ {
			// A: gout rows of group gi, kc steps (runs of one image)
			for ir := 0; ir < mpad; ir += mr {
				d := s.a[ir*kc : ir*kc+mr*kc]
				for i := 0; i < mr; i++ {
					o := ir + i
					if o >= og {
						for p := range kc {
							d[p*mr+i] = 0
						}
						continue
					}
					row := (gi*og + o) * l
					for p := 0; p < kc; {
						n := min(kc-p, l-(p0+p)%l) // positions left in this image
						src := gout[gpos[p]+row:][:n]
						dp := d[p*mr:]
						for q, v := range src {
							dp[q*mr+i] = v
						}
						p += n
					}
				}
			}
			ga := myAcc[gi*og*kg:]
			for jp := range runs {
				// B panel jp: rows of xh for each position
				bp := buf.bOf(kc * nr)
				rs := runs[jp]
				if len(rs) == 1 && rs[0].n == nr &&
					copyRows(unsafe.Pointer(&bp[0]), unsafe.Pointer(&xh[rs[0].off+gi*cg]), pos, shift, nr*esz) {
					// one run of whole panel width
				} else if len(rs) == 1 && rs[0].n >= 8 {
					for p, ps := range pos {
						copy(bp[p*nr:p*nr+rs[0].n], xh[ps+rs[0].off+gi*cg:])
					}
				} else {
					ls := lanes[jp]
					for p, ps := range pos {
						d := bp[p*nr : p*nr+len(ls)]
						ps += gi * cg
						for t, o := range ls {
							d[t] = xh[ps+o]
						}
					}
				}
				j := jp * nr
				addGradPanel(kr, kc, s.a, &bp[0], buf.t, ga, og, kg, j, min(nr, kg-j))
			}
		}
	})
	for wk := range st {
		if st[wk].a != nil {
			putScratch(st[wk].a)
		}
	}
	sumGradAccs(cv, acc, t, accSize, gw)
}

// channelLast rearranges x (strides xs) into g's phase images with the
// channel last, xh[n][a][b][i][j][c], zero where the input is padding:
// the B operand of the weight gradient's GEMM, whose row for one position
// and tap is a contiguous run of channels.
func channelLast[E any](cv Conv, g geom, x []E, xs [4]int, xh []E) {
	planes := cv.N * g.r.n * g.c.n
	runItems(planes*g.r.q, workers(planes*g.r.q, float64(g.c.q*cv.C)/8), func(_, it int) {
		i := it % g.r.q
		pl := it / g.r.q
		b := pl % g.c.n
		a := pl / g.c.n % g.r.n
		n := pl / (g.c.n * g.r.n)
		dst := xh[(pl*g.r.q+i)*g.c.q*cv.C:][:g.c.q*cv.C]
		ih := i*cv.SH + g.r.val[a] - cv.PH
		if ih < 0 || ih >= cv.H {
			clear(dst)
			return
		}
		for j := 0; j < g.c.q; j++ {
			d := dst[j*cv.C : (j+1)*cv.C]
			iw := j*cv.SW + g.c.val[b] - cv.PW
			if iw < 0 || iw >= cv.W {
				clear(d)
				continue
			}
			s := n*xs[0] + ih*xs[2] + iw*xs[3]
			for c := range d {
				d[c] = x[s]
				s += xs[1]
			}
		}
	})
}

// gradRun is a run of one tap among a weight-gradient panel's columns:
// its xh offset and its length.
type gradRun struct{ off, n int }

// gradPanels splits the columns m = tap·cg + c of a group's [og × kg]
// weight gradient into panels of nr: per panel, its runs of one tap and
// each column's xh offset (tap, channel).
func gradPanels(cv Conv, g geom, nr int) (runs [][]gradRun, lanes [][]int) {
	cg := cv.C / cv.G
	kg := cg * cv.KH * cv.KW
	for m0 := 0; m0 < kg; m0 += nr {
		var rs []gradRun
		var ls []int
		for m := m0; m < min(kg, m0+nr); {
			tap, c := m/cg, m%cg
			n := min(cg-c, m0+nr-m)
			ki, kj := tap/cv.KW, tap%cv.KW
			off := (((g.r.idx[ki]*g.c.n+g.c.idx[kj])*g.r.q+g.r.off[ki])*g.c.q+g.c.off[kj])*cv.C + c
			rs = append(rs, gradRun{off, n})
			for i := range n {
				ls = append(ls, off+i)
			}
			m += n
		}
		runs = append(runs, rs)
		lanes = append(lanes, ls)
	}
	return runs, lanes
}

// gradPositions sets pos[p] and gpos[p] to the xh and the gout offsets of
// output position p0+p (over the N·OH·OW positions), for p < len(pos).
func gradPositions(cv Conv, g geom, p0 int, pos, gpos []int) {
	l := cv.OH * cv.OW
	for p := range pos {
		n, r := (p0+p)/l, (p0+p)%l
		oh, ow := r/cv.OW, r%cv.OW
		pos[p] = n*g.img + (oh*g.c.q+ow)*cv.C
		gpos[p] = n*cv.O*l + r
	}
}

// addGradPanel adds the product of a (og gout rows packed in mr-row
// panels of k steps) and the B panel b (nr columns, cols of them real)
// into columns j.. of ga (rows kg apart), through t for a partial tile.
func addGradPanel[T float](kr *kernel[T], k int, a []T, b *T, t, ga []T, og, kg, j, cols int) {
	mr, nr := kr.mr, kr.nr
	for ir := 0; ir < og; ir += mr {
		fn, whole := kr.rowsFn(og - ir)
		if whole && cols == nr {
			fn(k, &a[ir*k], b, &ga[ir*kg+j], kg, 1)
			continue
		}
		fn(k, &a[ir*k], b, &t[0], nr, 0)
		for r := 0; r < min(mr, og-ir); r++ {
			dst := ga[(ir+r)*kg+j:][:cols]
			for c, v := range t[r*nr : r*nr+cols] {
				dst[c] += v
			}
		}
	}
}

// sumGradAccs sets gw[o][c][tap] = Σ_wk acc[wk][o][tap][c] over the t
// accumulators of accSize elements each.
func sumGradAccs[T float](cv Conv, acc []T, t, accSize int, gw []T) {
	cg, kk := cv.C/cv.G, cv.KH*cv.KW
	kg := cg * kk
	for o := 0; o < cv.O; o++ {
		for tap := 0; tap < kk; tap++ {
			for c := 0; c < cg; c++ {
				var v T
				for wk := 0; wk < t; wk++ {
					v += acc[wk*accSize+o*kg+tap*cg+c]
				}
				gw[o*kg+c*kk+tap] = v
			}
		}
	}
}
