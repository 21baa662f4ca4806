//go:build amd64 && !purego

package gemm

import (
	"math/bits"
	"sync"

	"golang.org/x/sys/cpu"
)

var hasAVX512BW = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// interleave sets d[j] = x[a+j] | x[a+ld+j]<<16 (ld > 0), 32 words at a
// time with AVX-512.
func interleave(d []uint32, x []uint16, a, ld int) {
	n := len(d)
	if !hasAVX512BW || n == 0 {
		interleaveGo(d, x, a, ld)
		return
	}
	_ = x[a+ld+n-1]
	for j := 0; j < n; j += 32 {
		m := 1<<min(32, n-j) - 1
		packBInter(&d[j], &x[a+j], ld, 1, 32, m, m)
	}
}

// interleaveRows sets dst[r·ds+j] = x[a+r·ss+j] | x[a+r·ss+ld+j]<<16 for
// r < rows, j < w (ld > 0), with AVX-512 in one call.
func interleaveRows(dst []uint32, x []uint16, a, ld, rows, ss, ds, w int) {
	if !hasAVX512BW || rows <= 0 || w <= 0 {
		interleaveRowsGo(dst, x, a, ld, rows, ss, ds, w)
		return
	}
	_ = dst[(rows-1)*ds+w-1]
	_ = x[a+(rows-1)*ss+ld+w-1]
	interleaveRowsAVX512(&dst[0], &x[a], ld, rows, ss, ds, w)
}

// roundSegs sets dst[i] to the bfloat16 nearest t[nr·r+j] + acc[i] (see
// RoundBF16; t[nr·r+j] alone when acc is nil), i = base + r·ldd + s.off + j,
// for r < rows, each segment s, column j < nr in s.mask; for 32-column
// tiles with AVX-512: each row of the tile rounded once, each segment
// stored under its mask.
func roundSegs(dst []uint16, base, ldd int, t []float32, nr, rows int, segs []roundSeg, acc []float32) {
	if !hasAVX512BW || nr != 32 || rows <= 0 || len(segs) == 0 {
		roundSegsGo(dst, base, ldd, t, nr, rows, segs, acc)
		return
	}
	_ = t[32*rows-1]
	last := 0
	for _, s := range segs {
		if s.mask == 0 || s.mask>>32 != 0 || int(s.off)+bits.TrailingZeros64(uint64(s.mask)) < 0 {
			panic("gemm: bad tile segment")
		}
		last = max(last, int(s.off)+63-bits.LeadingZeros64(uint64(s.mask)))
	}
	_ = dst[base+(rows-1)*ldd+last]
	var ap *float32
	if acc != nil {
		_ = acc[base+(rows-1)*ldd+last]
		ap = &acc[base]
	}
	roundSegsAVX512(&dst[base], ldd, &t[0], rows, &segs[0].off, len(segs), ap)
}

// phaseRows2 sets dst[r·ds+j] = x[a+r·ss+2j] | x[a+r·ss+ld+2j]<<16 for
// r < rows, j < w (the second term absent when ld < 0), with AVX-512 in
// one call where ld and ss are even: x read as 32-bit words, from a when
// a is even (the low halves), from a−1 when odd (the high halves).
func phaseRows2(dst []uint32, x []uint16, a, ld, rows, ss, ds, w int) {
	if !hasAVX512BW || rows <= 0 || w <= 0 || ld >= 0 && ld%2 != 0 || ss%2 != 0 {
		phaseRows2Go(dst, x, a, ld, rows, ss, ds, w)
		return
	}
	hi := a & 1
	// the last element read: the other half of the last word
	end := a + (rows-1)*ss + 2*(w-1) + 1 - 2*hi
	single, l := 0, ld
	if ld < 0 {
		single, l = 1, 0
	}
	end += l
	if end >= len(x) {
		// past x: the last row in Go
		phaseRows2(dst, x, a, ld, rows-1, ss, ds, w)
		phaseRows2Go(dst[(rows-1)*ds:], x, a+(rows-1)*ss, ld, 1, ss, ds, w)
		return
	}
	_ = dst[(rows-1)*ds+w-1]
	phaseRows2AVX512(&dst[0], &x[a-hi], l, rows, ss, ds, w, hi, single)
}

// pairRow sets d[P·kk+t] = w[2P·kk+t] | w[(2P+1)·kk+t]<<16 for P < np,
// t < kk: sixteen words a permutation (pairTapsAVX512) where kk allows it
// (3×3 kernels: 9 taps), else packBInter, 32 taps at a time.
func pairRow(d []uint32, w []uint16, np, kk int) {
	if !hasAVX512BW || np == 0 {
		pairRowGo(d, w, np, kk)
		return
	}
	n := np * kk
	_ = d[n-1]
	_ = w[2*n-1]
	if tb := pairTable(kk); tb != nil {
		// Chunk c reads 64 values from its first low half, lo(16c): past
		// the row (into the values after it) but not past w's capacity.
		chunks := n / 16
		for chunks > 0 && tapLow(16*(chunks-1), kk)+64 > cap(w) {
			chunks--
		}
		if chunks > 0 {
			pairTapsAVX512(&d[0], &w[0], chunks, &tb.idx[0], &tb.adv[0], len(tb.adv))
		}
		for j := 16 * chunks; j < n; j++ {
			l := tapLow(j, kk)
			d[j] = uint32(w[l]) | uint32(w[l+kk])<<16
		}
		return
	}
	for t := 0; t < kk; t += 32 {
		m := 1<<min(32, kk-t) - 1
		packBInter(&d[t], &w[t], kk, np, kk, m, m)
	}
}

// tapLow is the position in a weight row of word j's low half (pairRow).
func tapLow(j, kk int) int { return j + kk*(j/kk) }

// pairTab is pairTapsAVX512's table for kk taps: for each sixteen words
// starting at 16e (e < period, after which the pattern repeats), the 32
// positions of their halves from the first low half on, and how far the
// next sixteen's first low half is.
type pairTab struct {
	idx []uint16
	adv []int
}

var pairTabs sync.Map // kk → *pairTab (nil: sixteen words span more than 64 values)

func pairTable(kk int) *pairTab {
	if v, ok := pairTabs.Load(kk); ok {
		return v.(*pairTab)
	}
	t := newPairTab(kk)
	pairTabs.Store(kk, t)
	return t
}

func newPairTab(kk int) *pairTab {
	period := kk >> min(4, bits.TrailingZeros(uint(kk))) // kk/gcd(16, kk): 16·period is a multiple of kk
	t := &pairTab{idx: make([]uint16, 32*period), adv: make([]int, period)}
	for e := range period {
		j0 := 16 * e
		b := tapLow(j0, kk)
		for i := range 16 {
			l := tapLow(j0+i, kk) - b
			if l+kk > 63 {
				return nil
			}
			t.idx[32*e+2*i], t.idx[32*e+2*i+1] = uint16(l), uint16(l+kk)
		}
		t.adv[e] = tapLow(j0+16, kk) - b
	}
	return t
}

// gatherPanelSIMD is gatherPanel for panels of up to 32 columns whose
// rows of offs are all at least 0 but for trailing bias rows (−1), with
// AVX-512: each run of up to 16 consecutive columns (cb[t+1] = cb[t]+1) is
// one masked move a row (gatherSegsAVX512). It reports false, having done
// nothing, where it cannot be used.
func gatherPanelSIMD(dst, src []float32, cb, offs []int, nr int) bool {
	if !hasAVX512 || nr > 32 || len(offs) == 0 {
		return false
	}
	n := len(offs)
	for n > 0 && offs[n-1] < 0 {
		n--
	}
	maxOff := 0
	for _, o := range offs[:n] {
		if o < 0 {
			return false
		}
		maxOff = max(maxOff, o)
	}
	valid := len(cb)
	for valid > 0 && cb[valid-1] < 0 {
		valid--
	}
	var segs [34][4]int64
	ns, maxC := 0, 0
	for t := 0; t < valid; {
		if cb[t] < 0 {
			return false
		}
		e := t + 1
		for e < valid && e-t < 16 && cb[e] == cb[e-1]+1 {
			e++
		}
		m := int64(1)<<(e-t) - 1
		segs[ns] = [4]int64{int64(cb[t]), int64(t), m, m}
		ns++
		maxC = max(maxC, cb[e-1])
		t = e
	}
	for t := valid; t < nr; t += 16 { // zero columns
		segs[ns] = [4]int64{0, int64(t), 0, int64(1)<<min(16, nr-t) - 1}
		ns++
	}
	_ = dst[len(offs)*nr-1]
	if n > 0 {
		if valid > 0 {
			_ = src[maxC+maxOff]
		}
		gatherSegsAVX512(&words(dst)[0], &words(src)[0], &offs[0], n, &segs[0][0], ns, nr)
	}
	for p := n; p < len(offs); p++ {
		d := dst[p*nr : p*nr+nr]
		for i := range d {
			d[i] = 1
		}
	}
	return true
}
