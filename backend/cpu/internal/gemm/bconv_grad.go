package gemm

import "unsafe"

// ConvGradWeightBF16 computes gw (a contiguous [O, C/G, KH, KW], as
// float32 sums to be rounded once), the gradient of a bfloat16
// convolution's weight, from the bfloat16 bits of x (strides xs) and gout
// (a contiguous [N, O, OH, OW]) on the bfloat16 kernels: ConvGradWeight's
// GEMM (convGradWeightGEMM) with the output positions, its inner
// dimension, taken in pairs. It reports false, and leaves gw alone, where
// it has no such kernel or where ConvGradWeight would take the dot
// products (few channels per group): the caller then widens.
func ConvGradWeightBF16(cv Conv, x []uint16, xs [4]int, gout []uint16, gw []float32) bool {
	cv.Check()
	kr := current.Load().b
	cg := cv.C / cv.G
	dot := cg < 16 || cg*cv.KH*cv.KW < 128
	if weightGradMode != 0 {
		dot = weightGradMode == 2
	}
	if kr == nil || dot {
		return false
	}
	if cv.N == 0 {
		clear(gw[:cv.O*cg*cv.KH*cv.KW])
		return true
	}
	convGradWeightPairs(kr, cv, x, xs, gout, gw)
	return true
}

// convGradWeightPairs is convGradWeightGEMM on bfloat16 operands: the
// input rearranged channel-last in bfloat16, A (gout) and B (input rows)
// packed as words holding two consecutive positions (the second zero
// past an odd count), each goroutine's float32 accumulator summed at the
// end.
func convGradWeightPairs(kr *kernel[float32], cv Conv, x []uint16, xs [4]int, gout []uint16, gw []float32) {
	cg, og, kk := cv.C/cv.G, cv.O/cv.G, cv.KH*cv.KW
	kg := cg * kk
	mr, nr := kr.mr, kr.nr
	g := newGeom(cv)

	// xh[n][a][b][i][j][c], bfloat16
	xhs := getScratch[float32]((cv.N*g.img + 1) / 2)
	defer putScratch(xhs)
	xh := unsafe.Slice((*uint16)(unsafe.Pointer(&xhs[0])), cv.N*g.img)
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

	// Column m = tap·cg + c of a group's [og × kg] product, in panels of nr
	// columns: runs of one tap and each column's xh offset, as
	// convGradWeightGEMM has them.
	type run struct{ off, n int }
	var runs [][]run
	var lanes [][]int
	for m0 := 0; m0 < kg; m0 += nr {
		var rs []run
		var ls []int
		for m := m0; m < min(kg, m0+nr); {
			tap, c := m/cg, m%cg
			n := min(cg-c, m0+nr-m)
			ki, kj := tap/cv.KW, tap%cv.KW
			off := (((g.r.idx[ki]*g.c.n+g.c.idx[kj])*g.r.q+g.r.off[ki])*g.c.q+g.c.off[kj])*cv.C + c
			rs = append(rs, run{off, n})
			for i := range n {
				ls = append(ls, off+i)
			}
			m += n
		}
		runs = append(runs, rs)
		lanes = append(lanes, ls)
	}

	l := cv.OH * cv.OW
	total := cv.N * l
	kcb := 2 * balance((total+1)/2, kr.kc, 1) // positions per item, pairs of them
	items := (total + kcb - 1) / kcb
	mpad := (og + mr - 1) / mr * mr
	accSize := cv.G * og * kg // [g][o][tap][c]
	t := workers(items, float64(cv.O)*float64(kg)*float64(kcb)/2)
	t = max(1, min(t, (64<<20)/max(1, accSize)))
	acc := getScratch[float32](t * accSize)
	defer putScratch(acc)
	clear(acc)
	type state struct {
		pos, gpos []int // per position: xh offset, gout offset
		a         []float32
	}
	st := make([]state, t)
	runItems(items, t, func(wk, it int) {
		s := &st[wk]
		if s.a == nil {
			s.pos, s.gpos = make([]int, kcb), make([]int, kcb)
			s.a = getScratch[float32](mpad * kcb / 2)
		}
		buf := kr.buffers()
		defer kr.bufs.put(buf)
		p0 := it * kcb
		kc := min(kcb, total-p0)
		kp := (kc + 1) / 2
		for p := 0; p < kc; p++ {
			n, r := (p0+p)/l, (p0+p)%l
			oh, ow := r/cv.OW, r%cv.OW
			s.pos[p] = n*g.img + (oh*g.c.q+ow)*cv.C
			s.gpos[p] = n*cv.O*l + r
		}
		pos, gpos := s.pos[:kc], s.gpos[:kc]
		full := kc / 2 // pairs with both positions
		aw := words(s.a)
		myAcc := acc[wk*accSize : (wk+1)*accSize]
		for gi := 0; gi < cv.G; gi++ {
			// A: gout rows of group gi, a pair of positions per word
			for ir := 0; ir < mpad; ir += mr {
				d := aw[ir*kp : ir*kp+mr*kp]
				for i := 0; i < mr; i++ {
					o := ir + i
					if o >= og {
						for pp := range kp {
							d[pp*mr+i] = 0
						}
						continue
					}
					row := gout[(gi*og+o)*l:]
					for pp := range full {
						d[pp*mr+i] = uint32(row[gpos[2*pp]]) | uint32(row[gpos[2*pp+1]])<<16
					}
					if full < kp {
						d[full*mr+i] = uint32(row[gpos[kc-1]])
					}
				}
			}
			ga := myAcc[gi*og*kg:]
			for jp := range runs {
				// B panel jp: the input rows of each pair of positions
				bp := words(buf.bOf(kp * nr))
				rs, ls := runs[jp], lanes[jp]
				base := gi * cg
				if len(rs) == 1 && rs[0].n == nr {
					off := base + rs[0].off
					for pp := range full {
						a := pos[2*pp] + off
						interleave(bp[pp*nr:][:nr], xh, a, pos[2*pp+1]+off-a)
					}
				} else {
					for pp := range full {
						d := bp[pp*nr:][:nr]
						a, b := pos[2*pp]+base, pos[2*pp+1]+base
						for t, o := range ls {
							d[t] = uint32(xh[a+o]) | uint32(xh[b+o])<<16
						}
						clear(d[len(ls):])
					}
				}
				if full < kp {
					d := bp[full*nr:][:nr]
					a := pos[kc-1] + base
					for t, o := range ls {
						d[t] = uint32(xh[a+o])
					}
					clear(d[len(ls):])
				}
				j := jp * nr
				cols := min(nr, kg-j)
				bb := (*float32)(unsafe.Pointer(&bp[0]))
				for ir := 0; ir < og; ir += mr {
					fn, whole := kr.rowsFn(og - ir)
					a := &s.a[ir*kp]
					if whole && cols == nr {
						fn(kp, a, bb, &ga[ir*kg+j], kg, 1)
						continue
					}
					fn(kp, a, bb, &buf.t[0], nr, 0)
					for r := 0; r < min(mr, og-ir); r++ {
						dst := ga[(ir+r)*kg+j:][:cols]
						for c, v := range buf.t[r*nr : r*nr+cols] {
							dst[c] += v
						}
					}
				}
			}
		}
	})
	for wk := range st {
		if st[wk].a != nil {
			putScratch(st[wk].a)
		}
	}
	// gw[o][c][tap] = Σ_wk acc[wk][o][tap][c]
	for o := 0; o < cv.O; o++ {
		for tap := 0; tap < kk; tap++ {
			for c := 0; c < cg; c++ {
				var v float32
				for wk := 0; wk < t; wk++ {
					v += acc[wk*accSize+o*kg+tap*cg+c]
				}
				gw[o*kg+c*kk+tap] = v
			}
		}
	}
}
