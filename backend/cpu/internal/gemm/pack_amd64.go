//go:build amd64 && !purego

package gemm

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// packPanelSIMD packs a w-wide panel with the AVX-512 packing routines:
// dst[p*w+i] = alpha*s[off+i*is+p*ps] for i < rows, p < kc, and zero for
// rows ≤ i < w. Either is or ps must be 1. It reports false, having done
// nothing, when the panel cannot be packed this way.
func packPanelSIMD[T float](dst, s []T, off, is, ps, rows, w, kc int, alpha T) bool {
	var z T
	lanes := int(64 / unsafe.Sizeof(z))
	gather := ps == 1 && is != 1
	if !gather && is != 1 {
		return false
	}
	if gather && (lanes-1)*is > math.MaxInt32 {
		return false
	}
	// Bounds: the last element read and written.
	if rows > 0 {
		_ = s[off+(rows-1)*is+(kc-1)*ps]
	}
	_ = dst[kc*w-1]
	var idx [16]int32
	for g := 0; g < w; g += lanes {
		n := min(lanes, w-g)
		r := min(max(rows-g, 0), n)
		lmask, smask := 1<<r-1, 1<<n-1
		src := &s[off]
		if r > 0 {
			src = &s[off+g*is]
		}
		d := &dst[g]
		if lanes == 16 {
			d, src, alpha := (*float32)(unsafe.Pointer(d)), (*float32)(unsafe.Pointer(src)), float32(alpha)
			if gather {
				// whole blocks of 16 steps by transposing, the rest
				// gathered
				nb := kc / 16
				if r == 0 || !transposePack {
					nb = 0
				}
				if nb > 0 {
					var offs [16]int
					for i := range offs[:r] {
						offs[i] = 4 * i * is
					}
					packSTrans(d, src, &offs[0], nb, w, lmask, smask, alpha)
				}
				rest := kc - 16*nb
				if rest == 0 {
					continue
				}
				for i := range idx {
					idx[i] = int32(i * is)
				}
				if r > 0 {
					src = (*float32)(unsafe.Pointer(&s[off+g*is+16*nb]))
				}
				d = (*float32)(unsafe.Pointer(&dst[16*nb*w+g]))
				packSGather(d, src, &idx[0], rest, w, lmask, smask, alpha)
			} else {
				packSStrided(d, src, ps, kc, w, lmask, smask, alpha)
			}
			continue
		}
		d2, src2, alpha2 := (*float64)(unsafe.Pointer(d)), (*float64)(unsafe.Pointer(src)), float64(alpha)
		if gather {
			for i := range idx[:8] {
				idx[i] = int32(i * is)
			}
			packDGather(d2, src2, &idx[0], kc, w, lmask, smask, alpha2)
		} else {
			packDStrided(d2, src2, ps, kc, w, lmask, smask, alpha2)
		}
	}
	return true
}

// copyRows copies len(offs) rows of width bytes from src + offs[i]·2^shift
// to dst + i·width with AVX moves; it reports false, having done nothing,
// when the CPU or the width does not allow it.
func copyRows(dst, src unsafe.Pointer, offs []int, shift, width int) bool {
	if !canCopyRows(width) || len(offs) == 0 {
		return false
	}
	copyRowsAVX((*byte)(dst), (*byte)(src), &offs[0], len(offs), shift, width)
	return true
}

// copyRuns copies len(offs)·len(bases) rows of width bytes, row p·len(bases)+r
// from src + (offs[p]+bases[r])·2^shift, to dst one after another; it
// reports false, having done nothing, when the CPU or the width does not
// allow it.
func copyRuns(dst, src unsafe.Pointer, offs, bases []int, shift, width int) bool {
	if !canCopyRows(width) || len(offs) == 0 || len(bases) == 0 {
		return false
	}
	copyRunsAVX((*byte)(dst), (*byte)(src), &offs[0], len(offs), &bases[0], len(bases), shift, width)
	return true
}

// canCopyRows reports whether copyRows and copyRuns move rows of width bytes.
func canCopyRows(width int) bool {
	return hasAVX && (width == 8 || width == 16 || width == 32 || width == 64 || width == 128)
}

var hasAVX = cpu.X86.HasAVX

// transposePack packs float32 panels whose k runs along memory by 16×16
// register transposes (packSTrans) rather than gathers; tests clear it to
// compare the two.
var transposePack = true

// bfPanelSIMD packs a w-wide (w ≤ 32) panel of kc bfloat16 pair words (see
// bfPack) with the AVX-512 routines. Lane i < rows of step p is, with
// along (k runs along memory), the pair at s[off+i·is+2p:]; otherwise
// s[off+2p·is+i] | s[off+(2p+1)·is+i]<<16. Lanes rows ≤ i < w are zero. It
// reports false, having done nothing, when the panel cannot be packed so.
func bfPanelSIMD(dst []uint32, s []uint16, off, is, rows, w, kc int, along bool) bool {
	if kc == 0 || w > 32 || (along && 15*is > math.MaxInt32) {
		return false
	}
	// Bounds: the last element read and written.
	if rows > 0 {
		if along {
			_ = s[off+(rows-1)*is+2*kc-1]
		} else {
			_ = s[off+(2*kc-1)*is+rows-1]
		}
	}
	_ = dst[kc*w-1]
	if !along {
		// one pass of up to 32 lanes: each row's cache lines once
		r := min(max(rows, 0), w)
		packBInter(&dst[0], &s[off], is, kc, w, 1<<r-1, 1<<w-1)
		return true
	}
	var idx [16]int32
	for i := range idx {
		idx[i] = int32(i * is)
	}
	for g := 0; g < w; g += 16 {
		n := min(16, w-g)
		r := min(max(rows-g, 0), n)
		lmask, smask := 1<<r-1, 1<<n-1
		src := &s[off]
		if r > 0 {
			src = &s[off+g*is]
		}
		// whole blocks of 16 pairs by transposing, the rest gathered
		nb := kc / 16
		if nb > 0 {
			var offs [16]int
			for i := range offs {
				if i < r {
					offs[i] = 2 * i * is
				}
			}
			packBTrans(&dst[g], src, &offs[0], nb, w, lmask, smask)
		}
		if rest := kc - 16*nb; rest > 0 {
			s2 := src
			if r > 0 {
				s2 = &s[off+g*is+32*nb]
			}
			packBGather(&dst[16*nb*w+g], s2, &idx[0], rest, w, lmask, smask)
		}
	}
	return true
}

var hasAVX512 = cpu.X86.HasAVX512F

// hasPhaseRows reports whether buildPhases may use phaseRowsAVX512; tests
// clear it to compare with the Go copies.
var hasPhaseRows = hasAVX512

// fill writes one channel's phase planes at dst (float32s) from its input
// plane at src.
func (pr *phaseRows) fill(dst, src unsafe.Pointer) {
	phaseRowsAVX512((*float32)(dst), (*float32)(src), &pr.soff[0], &pr.doff[0], len(pr.soff),
		&pr.perm[0][0], &pr.keep[0], pr.nb, pr.plane, pr.lmask, pr.smask)
}

// roundBF16SIMD rounds the longest prefix of src that is a multiple of 16
// into dst with AVX-512 and returns its length (0 without AVX-512).
func roundBF16SIMD(dst []uint16, src []float32) int {
	n := len(src) &^ 15
	if !hasAVX512 || n == 0 {
		return 0
	}
	_ = dst[n-1]
	roundBF16AVX512(&dst[0], &src[0], n)
	return n
}

// amxRowsSIMD packs rows of A into bgemmAMX's tiles with AVX-512 (see
// amxRowsAVX512): row i's words from src[i·ld:], at dst[q·qs+i·16:]. It
// returns false where the CPU cannot (the caller packs them).
func amxRowsSIMD(dst []uint32, src []uint16, rows, ld, words, nq, qs int) bool {
	if !hasAVX512 || rows <= 0 || words <= 0 || nq <= 0 {
		return false
	}
	_ = src[(rows-1)*ld+2*words-1]
	_ = dst[(nq-1)*qs+(rows-1)*16+15]
	amxRowsAVX512(&dst[0], &src[0], rows, ld, words, nq, qs)
	return true
}
