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
	channelLast(cv, g, x, xs, xh)

	// Column m = tap·cg + c of a group's [og × kg] product, in panels of nr
	// columns, as convGradWeightGEMM has them
	runs, lanes := gradPanels(cv, g, nr)

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
		gradPositions(cv, g, p0, s.pos[:kc], s.gpos[:kc])
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
				addGradPanel(kr, kp, s.a, (*float32)(unsafe.Pointer(&bp[0])), buf.t, ga, og, kg, j, min(nr, kg-j))
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
