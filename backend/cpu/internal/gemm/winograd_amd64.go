//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// winoSegments calls f for each run of lanes g8..g8+8 of panel p whose tiles
// are consecutive in one row of tiles: lanes [l0, l1) relative to g8, the
// first tile's image, tile row and column.
func winoSegments(p, g8, nr, tiles, th, tw int, f func(l0, l1, n, ty, tx int)) {
	for l := 0; l < 8; {
		tile := p*nr + g8 + l
		if tile >= tiles {
			return
		}
		n, r := tile/(th*tw), tile%(th*tw)
		ty, tx := r/tw, r%tw
		seg := min(8-l, tw-tx, tiles-tile)
		f(l, l+seg, n, ty, tx)
		l += seg
	}
}

// winoInputAVX2 is winoInput with the AVX2 transform (float32 only); xpAll
// is the padded input with winoSlack elements on each side. It reports
// false when it cannot run.
func winoInputAVX2[T float](v, xpAll []T, cv Conv, gi, cg, hp, wp, th, tw, tiles, p0, np, nr int) bool {
	vf, ok := any(v).([]float32)
	if !ok || !hasAVX2 || nr%8 != 0 {
		return false
	}
	xf := any(xpAll).([]float32)
	plane := hp * wp
	var keep [8]int32
	for p := 0; p < np; p++ {
		for g8 := 0; g8 < nr; g8 += 8 {
			winoSegments(p0+p, g8, nr, tiles, th, tw, func(l0, l1, n, ty, tx int) {
				var mask *int32 // lanes outside [l0, l1) keep their values
				if l0 > 0 || l1 < 8 {
					for i := range keep {
						keep[i] = 0
						if i < l0 || i >= l1 {
							keep[i] = -1
						}
					}
					mask = &keep[0]
				}
				// lane l0 reads tile (ty, tx): lane 0 sits 2·l0 columns left
				soff := winoSlack + (n*cv.C+gi*cg)*plane + 2*ty*wp + 2*tx - 2*l0
				_ = xf[soff+(cg-1)*plane+3*wp+17] // the last channel's last read
				vs := winoVStride(cg, np, nr)
				_ = vf[15*vs+(p*cg+cg-1)*nr+g8+7]
				winoInAVX2(&vf[p*cg*nr+g8], vs, &xf[0], soff, wp, mask, cg, plane, nr)
			})
		}
	}
	return true
}

// winoOutputAVX2 is winoOutput with the AVX2 transform (float32 only). It
// reports false when it cannot run.
func winoOutputAVX2[T float](out, m, bias []T, cv Conv, gi, og, mpad, th, tw, tiles, p0, np, nr int) bool {
	of, ok := any(out).([]float32)
	if !ok || !hasAVX2 || nr%8 != 0 {
		return false
	}
	mf := any(m).([]float32)
	bf := make([]float32, og)
	if bias != nil {
		copy(bf, any(bias).([]float32)[gi*og:(gi+1)*og])
	}
	l := cv.OH * cv.OW
	var tmp [32]float32 // a partial segment's two rows of sixteen columns
	// 8×8 outputs (ResNet's 64×64 inputs at layer 2): four tiles per tile
	// row, so eight lanes are two whole tile rows, each eight columns
	rowPairs := cv.OW == 8 && cv.OH%2 == 0
	dOff := func(t int) int { // where tile t's outputs start, channel 0
		n, r := t/(th*tw), t%(th*tw)
		return (n*cv.O+gi*og)*l + 2*(r/tw)*cv.OW + 2*(r%tw)
	}
	for p := 0; p < np; p++ {
		for g8 := 0; g8 < nr; g8 += 8 {
			if t0 := (p0+p)*nr + g8; rowPairs && t0+8 <= tiles {
				d0, d1 := dOff(t0), dOff(t0+4)
				_ = mf[(p*16*mpad+15*mpad+og-1)*nr+g8+7] // the last read
				_ = of[d1+(og-1)*l+cv.OW+7]              // the last write
				winoOutAVX2(&of[0], d0, cv.OW, &mf[p*16*mpad*nr+g8], mpad*nr, &bf[0], 2, og, nr, l, d1-d0)
				continue
			}
			winoSegments(p0+p, g8, nr, tiles, th, tw, func(l0, l1, n, ty, tx int) {
				oy, ox := 2*ty, 2*tx
				col0 := ox - 2*l0 // output column of lane 0
				rows := min(2, cv.OH-oy)
				mo := &mf[p*16*mpad*nr+g8]
				_ = mf[(p*16*mpad+15*mpad+og-1)*nr+g8+7]
				if l0 == 0 && l1 == 8 && rows == 2 && ox+16 <= cv.OW {
					doff := (n*cv.O+gi*og)*l + oy*cv.OW + ox
					_ = of[doff+(og-1)*l+cv.OW+15] // the last write
					winoOutAVX2(&of[0], doff, cv.OW, mo, mpad*nr, &bf[0], 2, og, nr, l, 8)
					return
				}
				// columns [c0, c1) of the rows come from lanes [l0, l1)
				c0, c1 := ox, min(cv.OW, col0+2*l1)
				for o := 0; o < og; o++ {
					winoOutAVX2(&tmp[0], 0, 16, &mf[(p*16*mpad+o)*nr+g8], mpad*nr, &bf[o], 2, 1, 0, 0, 8)
					dst := of[(n*cv.O+gi*og+o)*l:]
					for r := 0; r < rows; r++ {
						copy(dst[(oy+r)*cv.OW+c0:(oy+r)*cv.OW+c1], tmp[r*16+c0-col0:])
					}
				}
			})
		}
	}
	return true
}

// hasWinoWeights reports whether winoWeights may use winoWeightsAVX2;
// tests clear it to compare with the Go loop.
var hasWinoWeights = hasAVX2

// winoWeightsAVX2Panel is the panel (g, ir) of winoWeights with the AVX2
// transform, eight rows at a time, for kernels stored row-major (ks = 3,
// ls = 1). It reports false when it cannot run.
func winoWeightsAVX2Panel(dst, w []float32, wl wlayout, g, ir, groups, rows, chans, mr, kcb int) bool {
	flip := wl.ks == -3 && wl.ls == -1 // rotated by 180°: tap (a, b) 8 − 3a − b on
	if !hasWinoWeights || !flip && (wl.ks != 3 || wl.ls != 1) || 7*wl.rs >= 1<<31 {
		return false
	}
	// Eight rows at a time; a panel of eight rows or more ends with the
	// eight rows up to its end (overlapping the chunk before: the same
	// values written twice), so that every store is a whole vector (a
	// masked store takes tens of cycles on AMD). Smaller panels (the AVX2
	// set's six rows) store under a mask.
	kern, first := winoWeightsAVX2, 0 // first: the kernel's first element in memory, from (0, 0)'s
	switch {
	case flip && mr < 8:
		kern, first = winoWeightsFlipMaskAVX2, -8
	case flip:
		kern, first = winoWeightsFlipAVX2, -8
	case mr < 8:
		kern = winoWeightsMaskAVX2
	}
	mpad := (rows + mr - 1) / mr * mr
	per := mpad * chans
	for c0 := 0; c0 < mr; c0 += 8 {
		i0 := c0
		if mr >= 8 {
			i0 = min(c0, mr-8)
		}
		var idx, gmask, smask [8]int32
		valid, lanes := 0, min(8, mr-i0) // rows read, rows written
		for i := range lanes {
			smask[i] = -1
			if ir+i0+i < rows {
				gmask[i], idx[i] = -1, int32(i*wl.rs)
				valid = i + 1
			}
		}
		for pc := 0; pc < chans; pc += kcb {
			kc := min(kcb, chans-pc)
			d := g*per + pc*mpad + ir*kc + i0 // ξ 0, channel pc, row i0
			_ = dst[d+15*groups*per+(kc-1)*mr+lanes-1]
			s := 0
			if valid > 0 {
				s = wl.base + first + g*wl.gs + (ir+i0)*wl.rs + pc*wl.cs
				_ = w[s+(valid-1)*wl.rs+(kc-1)*wl.cs+8]
			}
			if valid == 8 && lanes == 8 { // eight rows that exist: loads and a transpose
				rk := winoWeightsRowsAVX2
				if flip {
					rk = winoWeightsRowsFlipAVX2
				}
				rk(&dst[d], groups*per, &w[s], &idx[0], wl.rs, kc, wl.cs, mr)
				continue
			}
			kern(&dst[d], groups*per, &w[s], &idx[0], &gmask[0], &smask[0], kc, wl.cs, mr)
		}
	}
	return true
}
