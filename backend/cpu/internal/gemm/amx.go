package gemm

import "unsafe"

// The AMX-BF16 path of Bgemm. Intel's AMX units multiply tiles (16 rows of
// 64 bytes in eight tile registers): TDPBF16PS adds a 16×32 bfloat16 tile
// times a 32×16 one (as 16 rows of pair words) into a 16×16 float32 tile,
// 16 times the work of a VDPBF16PS. bgemmAMX (generated in asm/amx.go)
// holds a 32×32 tile of C in four tile registers; per 16 pairs of k it
// loads two A tiles and two B tiles and issues four TDPBF16PS.
//
// Its operands: the B panel is the VDPBF16PS kernel's (32 pair words per
// pair of k; a B tile is 16 of those rows, 128 bytes apart), the A panel
// holds its tiles whole, one after the other (per 16 pairs, rows 0-15 then
// rows 16-31, each tile 1 KiB of 64-byte rows), and k is zero-padded to
// whole tiles of 16 pairs (shape.ku). amxPack packs them; the driver is the
// float32 GEMM's. Products of fewer than 32 rows (a decode step's m = 1)
// stay on the VDPBF16PS kernel, whose edge kernels compute only the rows
// there are.
//
// TDPBF16PS's arithmetic, by the pseudocode of Intel's SDM: per row of C,
// two float32 sums start from zero, one over the products of the lower
// bfloat16 of each of the tile's 16 pairs, one over the higher ones, each
// product added with one rounding to nearest even; their sum is then added
// to C (two more roundings). Denormal inputs read as zero and denormal
// results are flushed, whatever MXCSR says. Intel does not promise that
// the hardware rounds exactly so. bgemmAMXGo is the kernel in Go on an
// emulation of the tile registers with that arithmetic: the same loads,
// strides and loop as the assembly, so the tests prove the packing and
// the blocking on any CPU. The kernel's own machine code is proven too, on
// any amd64 CPU: amx_emu_test.go runs bgemmAMX's bytes, as linked, on an
// emulated CPU (its tile configuration and accesses checked by the SDM's
// rules and the call's buffers) and compares it bit for bit with the twin.
//
// Linux grants a process the AMX state only on request (arch_prctl
// ARCH_REQ_XCOMP_PERM); see amx_linux_amd64.go. The path is opt-in
// (EMBER_GEMM_AMX=1) until it has run on an AMX CPU: no session so far had
// one.

// amxB is the AMX kernel's shape: 32×32 tiles, k in blocks of 16-pair
// multiples (at most 256: amxPack.packA). streamB: one A micro-panel (32
// rows × kc pairs, 32 KiB) stays in L1 while the packed B block (kc × nc,
// 512 KiB) streams from L2.
var amxB = shape{mr: 32, nr: 32, mc: 32 * 8, kc: 256, nc: 512, streamB: true, ku: 16}

// amxPairs is k (bfloat16 values) as the AMX kernel's k: pairs rounded up
// to whole tiles.
func amxPairs(k int) int { return ((k+1)/2 + 15) / 16 * 16 }

// amxPack packs bfloat16 operands for bgemmAMX.
type amxPack struct{ bfPack }

// realPairs is how many of pairs p0..p0+kc hold at least one k value.
func (q *amxPack) realPairs(p0, kc int) int {
	return max(0, (min(2*(p0+kc), q.k)-2*p0+1)/2)
}

// packA packs rows i0..i0+mc, pairs p0..p0+kc of op(A) into mr-row
// panels of whole tiles (see above): word (r, p) of a panel at
// (p/16)·16·mr + r·16 + p%16, zero past k and in the rows that complete
// the last panel.
func (q *amxPack) packA(dst []float32, i0, mc, p0, kc, mr int, simd bool) {
	d := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), len(dst))
	k0, k1 := 2*p0, min(2*(p0+kc), q.k)
	if kc%16 != 0 {
		panic("amxPack: k block not a multiple of 16 pairs")
	}
	full := (k1 - k0) / 2
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		panel := d[ir*kc : ir*kc+mr*kc]
		if !simd || q.transA || !amxRowsSIMD(panel, q.a[(i0+ir)*q.lda+k0:], rows, q.lda, full, kc/16, 16*mr) {
			amxRows(panel, q.a, q.lda, !q.transA, i0+ir, rows, k0, k1, kc, mr)
		} else if full*2 < k1-k0 { // an odd k's last value, alone in its word
			at := full/16*16*mr + full%16
			for i := range rows {
				panel[at+16*i] = uint32(q.a[(i0+ir+i)*q.lda+k1-1])
			}
		}
		for i := rows; i < mr; i++ { // the rows that complete the last panel
			for t := 0; t < kc; t += 16 {
				clear(panel[t*mr+i*16:][:16])
			}
		}
	}
}

// amxRows is amxRowsSIMD in Go, for rows i0..i0+rows of op(A) (k values
// along a line of src or ld apart), k values k0..k1 into kc words.
func amxRows(panel []uint32, src []uint16, ld int, alongLine bool, i0, rows, k0, k1, kc, mr int) {
	var row [256]uint32
	if kc > len(row) {
		panic("amxPack: k block over 256 pairs")
	}
	r := row[:kc]
	for i := range rows {
		pairWords(r, src, ld, alongLine, i0+i, k0, k1)
		clear(r[(k1-k0+1)/2:])
		for t := 0; t < kc; t += 16 {
			copy(panel[t*mr+i*16:][:16], r[t:t+16])
		}
	}
}

// pairWords sets dst[p] to the pair word of k values k0+2p and k0+2p+1 of
// line (a row of op(A)) of src, for k0+2p < k1; alongLine: the line's k
// values are consecutive in src, otherwise ld apart.
func pairWords(dst []uint32, src []uint16, ld int, alongLine bool, line, k0, k1 int) {
	at, step := line*ld+k0, 1
	if !alongLine {
		at, step = k0*ld+line, ld
	}
	p := 0
	for kk := k0; kk+1 < k1; kk += 2 {
		dst[p] = uint32(src[at]) | uint32(src[at+step])<<16
		at += 2 * step
		p++
	}
	if (k1-k0)%2 == 1 {
		dst[p] = uint32(src[at])
	}
}

// packB packs pairs p0..p0+kc and columns j0..j0+nc of op(B) into nr-column
// micro-panels, as bfPack does, with zero pairs past k.
func (q *amxPack) packB(dst []float32, p0, kc, j0, nc, nr int, simd bool) {
	full := q.realPairs(p0, kc)
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : jr*kc+nr*kc]
		q.panels(panel, q.b, q.ldb, q.transB, j0+jr, min(nr, nc-jr), p0, full, nr, simd)
		clear(panel[full*nr:])
	}
}

// amxTiles emulates the eight tile registers as bgemmAMX configures them:
// 16 rows of 16 32-bit words each.
type amxTiles [8][16][16]uint32

func (t *amxTiles) load(r int, p unsafe.Pointer, stride int) {
	for i := range t[r] {
		copy(t[r][i][:], unsafe.Slice((*uint32)(unsafe.Add(p, i*stride)), 16))
	}
}

func (t *amxTiles) store(r int, p unsafe.Pointer, stride int) {
	for i := range t[r] {
		copy(unsafe.Slice((*uint32)(unsafe.Add(p, i*stride)), 16), t[r][i][:])
	}
}

// dpbf16 is TDPBF16PS tmm[c] += tmm[a]·tmm[b] (see the notes above) on
// bgemmAMX's tiles: 16 rows of 16 words each.
func (t *amxTiles) dpbf16(c, a, b int) { t.dpbf16n(c, a, b, 16, 16, 16) }

// dpbf16n is TDPBF16PS on tiles configured otherwise: rows rows of C and
// A, k words in a row of A (rows of B), n words in a row of C and B.
func (t *amxTiles) dpbf16n(c, a, b, rows, k, n int) {
	for m := range rows {
		var lo, hi [16]float32
		for p, av := range t[a][m][:k] {
			for j, bv := range t[b][p][:n] {
				lo[j] = bfAdd(lo[j], bfWiden(uint16(av)), bfWiden(uint16(bv)))
				hi[j] = bfAdd(hi[j], bfWiden(uint16(av>>16)), bfWiden(uint16(bv>>16)))
			}
		}
		for j := range n {
			t[c][m][j] = toBits(bfAdd(fromBits(t[c][m][j]), bfAdd(lo[j], hi[j], 1), 1))
		}
	}
}

func fromBits(u uint32) float32 { return *(*float32)(unsafe.Pointer(&u)) }
func toBits(f float32) uint32   { return *(*uint32)(unsafe.Pointer(&f)) }

// bgemmAMXGo is bgemmAMX in Go, instruction for instruction on amxTiles.
//
//go:norace
func bgemmAMXGo(kc int, a, b, c *float32, ldc int, accum int) {
	var t amxTiles
	lda, ldb, ldcb := 64, 128, 4*ldc
	pa, pb, pc := unsafe.Pointer(a), unsafe.Pointer(b), unsafe.Pointer(c)
	pa1, pc1 := unsafe.Add(pa, 1024), unsafe.Add(pc, 16*ldcb)
	cTiles := [4]unsafe.Pointer{pc, unsafe.Add(pc, 64), pc1, unsafe.Add(pc1, 64)}
	if accum != 0 {
		for r, p := range cTiles {
			t.load(r, p, ldcb)
		}
	} // else: the tiles are zero
	for q := 0; q < kc/16; q++ { // (the assembly steps its pointers on by these)
		t.load(4, unsafe.Add(pa, 2048*q), lda)
		t.load(5, unsafe.Add(pa1, 2048*q), lda)
		t.load(6, unsafe.Add(pb, 16*128*q), ldb)
		t.load(7, unsafe.Add(pb, 16*128*q+64), ldb)
		t.dpbf16(0, 4, 6)
		t.dpbf16(1, 4, 7)
		t.dpbf16(2, 5, 6)
		t.dpbf16(3, 5, 7)
	}
	for r, p := range cTiles {
		t.store(r, p, ldcb)
	}
}
