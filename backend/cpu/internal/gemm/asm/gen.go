// Command asm generates the GEMM micro-kernels of package gemm with avo.
//
// Run it through go generate in the parent directory:
//
//	go generate ./backend/cpu/internal/gemm
//
// Every kernel computes one MR×NR tile of C = A·B from packed panels:
// a holds kc steps of MR values of op(A) (column of the tile's A rows),
// b holds kc steps of NR values of op(B) (row of the tile's B columns).
// The tile is accumulated in vector registers (NR is a whole number of
// vectors; each A value is broadcast and fused-multiply-added against the
// B vectors), then stored into C (row-major, ldc elements apart) either
// overwriting it (accum == 0) or adding to it (accum != 0). The bfloat16
// kernels (bgemmAVX512*) have the float32 layout with pair words of
// bfloat16 values and VDPBF16PS for the FMA; neither avo nor Go's
// assembler has the instruction, so it is emitted as bytes (dpbf16). The
// AMX-BF16 kernel (bgemmAMX, amx.go) works on tile registers, its
// instructions emitted as bytes too and checked against GNU as
// (amx_encoding.sh).
package main

import (
	"fmt"
	"os"
	"strconv"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// spec describes one micro-kernel.
type spec struct {
	name   string
	double bool // float64 elements
	zmm    bool // AVX-512 (zmm, embedded broadcasts) rather than AVX2 (ymm)
	mr     int  // rows of the tile (broadcast side)
	pmr    int  // rows of the packed A panel (0: mr); an edge kernel computes mr < pmr of them
	nv     int  // vectors per row of the tile (vector side)
	unroll int  // k steps per loop iteration
	// bf16: each packed element is a pair of bfloat16 values (two k
	// steps, the lower k in the low half) and each step is a VDPBF16PS
	// (AVX512_BF16) rather than an FMA; kc counts pairs. Needs zmm.
	bf16 bool
}

func (s spec) elem() int {
	if s.double {
		return 8
	}
	return 4
}

func (s spec) lanes() int {
	w := 32
	if s.zmm {
		w = 64
	}
	return w / s.elem()
}

func (s spec) nr() int { return s.nv * s.lanes() }

func vec(s spec, i int) reg.VecPhysical {
	if s.zmm {
		return []reg.VecPhysical{
			reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
			reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
			reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
			reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
		}[i]
	}
	return []reg.VecPhysical{
		reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15,
	}[i]
}

// pfDist is how many k steps ahead the kernels prefetch B.
var pfDist = 16

func gen(s spec) {
	typ := "float32"
	if s.double {
		typ = "float64"
	}
	if s.bf16 && (s.double || !s.zmm) {
		panic(s.name + ": bf16 kernels are float32 zmm ones")
	}
	TEXT(s.name, NOSPLIT, fmt.Sprintf("func(kc int, a, b, c *%s, ldc int, accum int)", typ))
	Pragma("noescape")
	from := "packed panels"
	if s.bf16 {
		from = "panels of packed bfloat16 pairs with VDPBF16PS"
	}
	if s.pmr != 0 && s.pmr != s.mr {
		Doc(fmt.Sprintf("%s computes the first %d rows of a %d×%d tile of C from %s (see package asm).", s.name, s.mr, s.pmr, s.nr(), from))
	} else {
		Doc(fmt.Sprintf("%s computes a %d×%d tile of C from %s (see package asm).", s.name, s.mr, s.nr(), from))
	}

	nregs := 16
	if s.zmm {
		nregs = 32
	}
	nacc := s.mr * s.nv
	// Registers: accumulators first, then B vectors (two sets, alternated
	// between unrolled steps, where there is room), then two broadcast
	// registers. No kernel multiplies by an embedded broadcast (m32bcst):
	// on Zen 5 the float32 kernel with VFMADD231PS m32bcst ran ~12% slower
	// than with a VBROADCASTSS into a register and register FMAs (14×32:
	// ~195 → ~220 GFLOP/s in L1, a 2048 product on one core ~165 → ~188),
	// and the bfloat16 one likewise with VDPBF16PS.
	nb := 2 * s.nv
	nbc := 2
	if nacc+s.nv+nbc > nregs {
		panic(s.name + ": too many registers")
	}
	if nacc+nb+nbc > nregs {
		nb = s.nv
	}
	acc := func(i, v int) reg.VecPhysical { return vec(s, i*s.nv+v) }
	bset := func(step, v int) reg.VecPhysical {
		sets := nb / s.nv
		return vec(s, nacc+(step%sets)*s.nv+v)
	}
	bcast := func(step int) reg.VecPhysical { return vec(s, nacc+nb+step%2) }

	kc := reg.RCX
	pa := reg.RAX
	pb := reg.RBX
	pc := reg.RDI
	ldc := reg.RSI
	tmp := reg.RDX
	Load(Param("kc"), kc)
	Load(Param("a"), pa)
	Load(Param("b"), pb)
	Load(Param("c"), pc)
	Load(Param("ldc"), ldc)
	if s.double {
		SHLQ(U8(3), ldc)
	} else {
		SHLQ(U8(2), ldc)
	}

	// Prefetch the C tile so that its lines arrive while we compute.
	MOVQ(pc, tmp)
	rowBytes := s.nr() * s.elem()
	for i := 0; i < s.mr; i++ {
		for off := 0; off < rowBytes; off += 64 {
			PREFETCHT0(Mem{Base: tmp, Disp: off})
		}
		if i+1 < s.mr {
			ADDQ(ldc, tmp)
		}
	}

	for i := 0; i < s.mr; i++ {
		for v := 0; v < s.nv; v++ {
			r := acc(i, v)
			if s.zmm {
				VPXORD(r, r, r)
			} else {
				VXORPS(r, r, r)
			}
		}
	}

	pmr := s.mr
	if s.pmr != 0 {
		pmr = s.pmr
	}
	aStep := pmr * s.elem()
	bStep := s.nr() * s.elem()
	vbytes := s.lanes() * s.elem()

	step := func(u int) {
		for v := 0; v < s.nv; v++ {
			m := Mem{Base: pb, Disp: u*bStep + v*vbytes}
			if s.double {
				VMOVUPD(m, bset(u, v))
			} else {
				VMOVUPS(m, bset(u, v))
			}
		}
		for i := 0; i < s.mr; i++ {
			am := Mem{Base: pa, Disp: u*aStep + i*s.elem()}
			bc := bcast(i)
			if s.double {
				VBROADCASTSD(am, bc)
			} else {
				VBROADCASTSS(am, bc)
			}
			for v := 0; v < s.nv; v++ {
				if s.bf16 {
					dpbf16(bc, bset(u, v), acc(i, v))
				} else if s.double {
					VFMADD231PD(bset(u, v), bc, acc(i, v))
				} else {
					VFMADD231PS(bset(u, v), bc, acc(i, v))
				}
			}
		}
	}

	Label("loop")
	CMPQ(kc, U8(s.unroll))
	JL(LabelRef("tail"))
	for u := 0; u < s.unroll; u++ {
		// Software prefetch of the streamed B panel, pfDist steps ahead,
		// one per cache line.
		for off := 0; off < bStep; off += 64 {
			PREFETCHT0(Mem{Base: pb, Disp: (pfDist+u)*bStep + off})
		}
		step(u)
	}
	ADDQ(U32(s.unroll*aStep), pa)
	ADDQ(U32(s.unroll*bStep), pb)
	SUBQ(U8(s.unroll), kc)
	JMP(LabelRef("loop"))

	Label("tail")
	TESTQ(kc, kc)
	JE(LabelRef("store"))
	step(0)
	ADDQ(U32(aStep), pa)
	ADDQ(U32(bStep), pb)
	DECQ(kc)
	JMP(LabelRef("tail"))

	Label("store")
	Load(Param("accum"), tmp)
	TESTQ(tmp, tmp)
	JE(LabelRef("overwrite"))
	for i := 0; i < s.mr; i++ {
		for v := 0; v < s.nv; v++ {
			m := Mem{Base: pc, Disp: v * vbytes}
			if s.double {
				VADDPD(m, acc(i, v), acc(i, v))
				VMOVUPD(acc(i, v), m)
			} else {
				VADDPS(m, acc(i, v), acc(i, v))
				VMOVUPS(acc(i, v), m)
			}
		}
		if i+1 < s.mr {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()

	Label("overwrite")
	for i := 0; i < s.mr; i++ {
		for v := 0; v < s.nv; v++ {
			m := Mem{Base: pc, Disp: v * vbytes}
			if s.double {
				VMOVUPD(acc(i, v), m)
			} else {
				VMOVUPS(acc(i, v), m)
			}
		}
		if i+1 < s.mr {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()
}

// dpbf16 emits VDPBF16PS a, b, acc (AVX512_BF16) on three registers: for
// each of the 16 float32 lanes i, acc += b.bf16[2i+1]·a.bf16[2i+1] +
// b.bf16[2i]·a.bf16[2i], a holding a broadcast pair (see package gemm's
// bgemm.go for its rounding). Neither avo v0.5.0 nor Go's assembler knows
// the instruction, so it is emitted as its bytes under a comment with its
// Go spelling: EVEX.512.F3.0F38.W0 52 /r with mod = 11, acc in reg, b in
// vvvv, a in r/m.
func dpbf16(a, b, acc reg.VecPhysical) {
	r, v, m := int(acc.PhysicalIndex()), int(b.PhysicalIndex()), int(a.PhysicalIndex())
	inv := func(x, bit int) byte { return byte(^(x >> bit) & 1) }
	p0 := inv(r, 3)<<7 | inv(m, 4)<<6 | inv(m, 3)<<5 | inv(r, 4)<<4 | 0b10 // R X B R' 00 mm=0F38
	p1 := byte(^v&0xF)<<3 | 1<<2 | 0b10                                    // W=0 vvvv 1 pp=F3
	p2 := byte(0b10)<<5 | inv(v, 4)<<3                                     // z=0 L'L=512 b=0 V' aaa=0
	modrm := 0xC0 | byte(r&7)<<3 | byte(m&7)
	Comment(fmt.Sprintf("VDPBF16PS %s, %s, %s", a.Asm(), b.Asm(), acc.Asm()))
	raw := func(op string, x Constant) { Instruction(&ir.Instruction{Opcode: op, Operands: []Op{x}}) }
	raw("LONG", U32(uint32(0x62)|uint32(p0)<<8|uint32(p1)<<16|uint32(p2)<<24))
	raw("WORD", U16(uint16(0x52)|uint16(modrm)<<8))
}

// genPack generates the AVX-512 packing routines for one precision:
//
//	packGather: dst[p*ds+i] = alpha*src[idx[i]+p] for p < kc, lane i in lmask
//	packStrided: dst[p*ds+i] = alpha*src[p*ld+i]  for p < kc, lane i in lmask
//
// Lanes outside lmask are stored as zero; only lanes in smask are stored.
// idx holds one int32 element offset per lane.
func genPack(double bool) {
	typ, sfx, lanes := "float32", "S", 16
	if double {
		typ, sfx, lanes = "float64", "D", 8
	}
	esz := 64 / lanes
	mul := func(a, b, c Op) {
		if double {
			VMULPD(a, b, c)
		} else {
			VMULPS(a, b, c)
		}
	}
	bcast := func(m Op, z Op) {
		if double {
			VBROADCASTSD(m, z)
		} else {
			VBROADCASTSS(m, z)
		}
	}
	for _, gather := range []bool{true, false} {
		name := "pack" + sfx + "Strided"
		sig := fmt.Sprintf("func(dst, src *%s, ld, kc, ds, lmask, smask int, alpha %s)", typ, typ)
		if gather {
			name = "pack" + sfx + "Gather"
			sig = fmt.Sprintf("func(dst, src *%s, idx *int32, kc, ds, lmask, smask int, alpha %s)", typ, typ)
		}
		TEXT(name, NOSPLIT, sig)
		Pragma("noescape")
		Doc(name + " packs a panel with AVX-512 (see genPack in package asm).")
		dst, src, kc, ds, lm, ld := reg.RDI, reg.RSI, reg.RCX, reg.RDX, reg.R8, reg.R9
		Load(Param("dst"), dst)
		Load(Param("src"), src)
		Load(Param("kc"), kc)
		Load(Param("ds"), ds)
		SHLQ(U8(map[bool]uint8{true: 3, false: 2}[double]), ds)
		Load(Param("lmask"), lm)
		Load(Param("smask"), reg.RAX)
		KMOVW(reg.EAX, reg.K1)
		alpha, err := Param("alpha").Resolve()
		if err != nil {
			panic(err)
		}
		bcast(alpha.Addr, reg.Z2)
		if gather {
			Load(Param("idx"), reg.RAX)
			if double {
				VMOVDQU32(Mem{Base: reg.RAX}, reg.Y1)
			} else {
				VMOVDQU32(Mem{Base: reg.RAX}, reg.Z1)
			}
		} else {
			Load(Param("ld"), ld)
			SHLQ(U8(map[bool]uint8{true: 3, false: 2}[double]), ld)
			KMOVW(lm.As32(), reg.K3)
		}
		// Two steps per iteration, alternating destination registers so
		// that the gathers do not depend on each other.
		zs := []reg.VecPhysical{reg.Z0, reg.Z3}
		one := func(z reg.VecPhysical) {
			if gather {
				VPXORD(z, z, z)
				KMOVW(lm.As32(), reg.K2)
				var idx reg.Register = reg.Z1
				if double {
					idx = reg.Y1
					VGATHERDPD(Mem{Base: src, Index: idx, Scale: uint8(esz)}, reg.K2, z)
				} else {
					VGATHERDPS(Mem{Base: src, Index: idx, Scale: uint8(esz)}, reg.K2, z)
				}
				ADDQ(U8(esz), src)
			} else {
				if double {
					VMOVUPD_Z(Mem{Base: src}, reg.K3, z)
				} else {
					VMOVUPS_Z(Mem{Base: src}, reg.K3, z)
				}
				ADDQ(ld, src)
			}
			mul(reg.Z2, z, z)
			if double {
				VMOVUPD(z, reg.K1, Mem{Base: dst})
			} else {
				VMOVUPS(z, reg.K1, Mem{Base: dst})
			}
			ADDQ(ds, dst)
		}
		Label("loop")
		CMPQ(kc, U8(2))
		JL(LabelRef("tail"))
		one(zs[0])
		one(zs[1])
		SUBQ(U8(2), kc)
		JMP(LabelRef("loop"))
		Label("tail")
		TESTQ(kc, kc)
		JE(LabelRef("done"))
		one(zs[0])
		Label("done")
		VZEROUPPER()
		RET()
	}
}

// genPackBF16 generates the AVX-512 packing routines of the bfloat16 GEMM,
// which pack pair words (two consecutive k values, the lower k in the low
// half) for up to 16 lanes i of a panel, for p < kc pairs:
//
//	packBGather: dst[p*ds+i] = the 32 bits at src + 2·idx[i] + 4p
//	             (op(X)'s k runs along memory: A row-major, B transposed)
//	packBInter:  dst[p*ds+i] = src[2p·ld+i] | src[(2p+1)·ld+i]<<16
//	             (k runs across rows: two rows interleaved)
//
// src is a *uint16 and idx holds one int32 element offset per lane. Lanes
// outside lmask are stored as zero; only lanes in smask are stored.
// packBInter packs up to 32 lanes (32-bit masks), packBGather 16.
func genPackBF16() {
	for _, gather := range []bool{true, false} {
		name := "packBInter"
		sig := "func(dst *uint32, src *uint16, ld, kc, ds, lmask, smask int)"
		if gather {
			name = "packBGather"
			sig = "func(dst *uint32, src *uint16, idx *int32, kc, ds, lmask, smask int)"
		}
		TEXT(name, NOSPLIT, sig)
		Pragma("noescape")
		Doc(name + " packs bfloat16 pairs with AVX-512 (see genPackBF16 in package asm).")
		dst, src, kc, ds, lm, ld := reg.RDI, reg.RSI, reg.RCX, reg.RDX, reg.R8, reg.R9
		Load(Param("dst"), dst)
		Load(Param("src"), src)
		Load(Param("kc"), kc)
		Load(Param("ds"), ds)
		SHLQ(U8(2), ds)
		Load(Param("lmask"), lm)
		Load(Param("smask"), reg.RAX)
		if gather {
			KMOVW(reg.EAX, reg.K1)
		} else {
			// 32 lanes: the high 16 in K5 (stores) and K4 (loads)
			KMOVD(reg.EAX, reg.K1)
			KSHIFTRD(U8(16), reg.K1, reg.K5)
		}
		if gather {
			Load(Param("idx"), reg.RAX)
			VMOVDQU32(Mem{Base: reg.RAX}, reg.Z1)
		} else {
			Load(Param("ld"), ld)
			SHLQ(U8(1), ld) // bytes between rows
			KMOVD(lm.As32(), reg.K3)
			KSHIFTRD(U8(16), reg.K3, reg.K4)
		}
		zs := [][4]reg.VecPhysical{{reg.Z0, reg.Z2, reg.Z5, reg.Z6}, {reg.Z3, reg.Z4, reg.Z7, reg.Z8}}
		one := func(z [4]reg.VecPhysical) {
			if gather {
				VPXORD(z[0], z[0], z[0])
				KMOVW(lm.As32(), reg.K2)
				VPGATHERDD(Mem{Base: src, Index: reg.Z1, Scale: 2}, reg.K2, z[0])
				ADDQ(U8(4), src)
			} else {
				VPMOVZXWD_Z(Mem{Base: src}, reg.K3, z[0])
				VPMOVZXWD_Z(Mem{Base: src, Index: ld, Scale: 1}, reg.K3, z[1])
				VPMOVZXWD_Z(Mem{Base: src, Disp: 32}, reg.K4, z[2])
				VPMOVZXWD_Z(Mem{Base: src, Index: ld, Scale: 1, Disp: 32}, reg.K4, z[3])
				VPSLLD(U8(16), z[1], z[1])
				VPSLLD(U8(16), z[3], z[3])
				VPORD(z[1], z[0], z[0])
				VPORD(z[3], z[2], z[2])
				LEAQ(Mem{Base: src, Index: ld, Scale: 2}, src)
				VMOVDQU32(z[2], reg.K5, Mem{Base: dst, Disp: 64})
			}
			VMOVDQU32(z[0], reg.K1, Mem{Base: dst})
			ADDQ(ds, dst)
		}
		Label("loop")
		CMPQ(kc, U8(2))
		JL(LabelRef("tail"))
		one(zs[0])
		one(zs[1])
		SUBQ(U8(2), kc)
		JMP(LabelRef("loop"))
		Label("tail")
		TESTQ(kc, kc)
		JE(LabelRef("done"))
		one(zs[0])
		Label("done")
		VZEROUPPER()
		RET()
	}
}

// genPairTaps generates pairTapsAVX512, the pair words of a convolution
// weight row (pairRow): word j = P·kk+t is w[2P·kk+t] | w[(2P+1)·kk+t]<<16.
// Sixteen words at a time come from the 64 bfloat16 values from their
// first low half on (two loads) through one VPERMI2W, whose index vector
// (the low and high halves' positions, lane pairs) depends only on where
// the sixteen start within a tap row, s = j mod kk; so does how far the
// next sixteen's values start. tab holds the 32 uint16 indices of each of
// the period's entries in order, adv their advances in values. chunks
// runs of sixteen words are written, each reading 64 values.
func genPairTaps() {
	TEXT("pairTapsAVX512", NOSPLIT, "func(d *uint32, w *uint16, chunks int, tab *uint16, adv *int, period int)")
	Pragma("noescape")
	Doc("pairTapsAVX512 writes chunks×16 pair words of a weight row from the permutation table tab (see genPairTaps in package asm).")
	d, w, n, tab, adv, per, e := reg.RDI, reg.RSI, reg.RCX, reg.R8, reg.R9, reg.R10, reg.R11
	Load(Param("d"), d)
	Load(Param("w"), w)
	Load(Param("chunks"), n)
	Load(Param("tab"), tab)
	Load(Param("adv"), adv)
	Load(Param("period"), per)
	XORQ(e, e)
	Label("loop")
	TESTQ(n, n)
	JE(LabelRef("done"))
	MOVQ(e, reg.RAX)
	SHLQ(U8(6), reg.RAX)
	VMOVDQU64(Mem{Base: tab, Index: reg.RAX, Scale: 1}, reg.Z2)
	VMOVDQU64(Mem{Base: w}, reg.Z0)
	VPERMI2W(Mem{Base: w, Disp: 64}, reg.Z0, reg.Z2)
	VMOVDQU64(reg.Z2, Mem{Base: d})
	ADDQ(U8(64), d)
	MOVQ(Mem{Base: adv, Index: e, Scale: 8}, reg.RAX)
	LEAQ(Mem{Base: w, Index: reg.RAX, Scale: 2}, w)
	INCQ(e)
	CMPQ(e, per)
	JL(LabelRef("next"))
	XORQ(e, e)
	Label("next")
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// genRoundBF16 generates roundBF16AVX512: dst[i] = the bfloat16 nearest
// src[i], ties to even, every NaN 0xFFFF (package backend's ToBF16), for
// i < n, n a multiple of 16.
func genRoundBF16() {
	TEXT("roundBF16AVX512", NOSPLIT, "func(dst *uint16, src *float32, n int)")
	Pragma("noescape")
	Doc("roundBF16AVX512 rounds n float32 (a multiple of 16) to bfloat16 bits (see genRoundBF16 in package asm).")
	dst, src, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("n"), n)
	one, half, nan := reg.Z29, reg.Z30, reg.Z31
	MOVL(U32(1), reg.EAX)
	VPBROADCASTD(reg.EAX, one)
	MOVL(U32(0x7FFF), reg.EAX)
	VPBROADCASTD(reg.EAX, half)
	MOVL(U32(0xFFFF), reg.EAX)
	VPBROADCASTD(reg.EAX, nan)
	Label("loop")
	CMPQ(n, U8(16))
	JL(LabelRef("done"))
	x, r := reg.Z0, reg.Z1
	VMOVDQU32(Mem{Base: src}, x)
	VPSRLD(U8(16), x, r)
	VPANDD(one, r, r)
	VPADDD(half, r, r)
	VPADDD(x, r, r)
	VPSRLD(U8(16), r, r)
	VCMPPS(U8(3), x, x, reg.K1) // unordered: NaN
	VMOVDQU32(nan, reg.K1, r)
	VPMOVDW(r, Mem{Base: dst})
	ADDQ(U8(64), src)
	ADDQ(U8(32), dst)
	SUBQ(U8(16), n)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// genPackBTrans generates packBTrans, the gather-free form of packBGather
// for whole blocks of 16 pairs: for nb blocks, the 16 rows at src + offs[i]
// (byte offsets; 64 bytes, 16 pair words, each) are transposed in
// registers (a 16×16 transpose of 32-bit words: unpacks of dwords and
// qwords, then two rounds of 128-bit lane shuffles) and step p of the block
// stored at dst + p·ds words; lanes outside lmask are zero, only lanes in
// smask are stored; then src advances 64 bytes and dst 16·ds words.
// Zen 4's VPGATHERDD takes about 1 ns a word; this, a few times less.
func genPackBTrans() {
	TEXT("packBTrans", NOSPLIT, "func(dst *uint32, src *uint16, offs *int, nb, ds, lmask, smask int)")
	Pragma("noescape")
	Doc("packBTrans packs blocks of 16 bfloat16 pairs of 16 rows by transposing them (see genPackBTrans in package asm).")
	packTrans(transOps{
		load: VMOVDQU32, store: VMOVDQU32,
		lo32: VPUNPCKLDQ, hi32: VPUNPCKHDQ, lo64: VPUNPCKLQDQ, hi64: VPUNPCKHQDQ,
		shuf: VSHUFI32X4, shufZ: VSHUFI32X4_Z,
	}, nil)
}

// genPackSTrans generates packSTrans, the float32 panel packer for operands
// whose k runs along memory (A row-major, B transposed): for each of nb
// blocks of 16 k steps it loads 16 values of each of 16 rows (row i at
// src + offs[i] bytes), transposes the 16×16 block in registers and stores
// step p's 16 lanes, times alpha, at dst + p·ds elements. Lanes outside
// lmask are zero; only lanes in smask are stored. src advances 64 bytes a
// block. It does what packSGather does with 16 row loads, 64 shuffles and
// 16 stores per block rather than 16 gathers, which read each cache line
// once per lane.
func genPackSTrans() {
	TEXT("packSTrans", NOSPLIT, "func(dst, src *float32, offs *int, nb, ds, lmask, smask int, alpha float32)")
	Pragma("noescape")
	Doc("packSTrans packs blocks of 16 k steps of 16 float32 rows by transposing them (see genPackSTrans in package asm).")
	alpha, err := Param("alpha").Resolve()
	if err != nil {
		panic(err)
	}
	packTrans(transOps{
		load: VMOVUPS, store: VMOVUPS,
		lo32: VUNPCKLPS, hi32: VUNPCKHPS, lo64: VUNPCKLPD, hi64: VUNPCKHPD,
		shuf: VSHUFF32X4, shufZ: VSHUFF32X4_Z,
	}, func(z reg.VecPhysical) { VMULPS_BCST(alpha.Addr, z, z) })
}

// transOps are the instructions of packTrans's 16×16 transpose of 32-bit
// words, of the integer or of the float domain.
type transOps struct {
	load, store, lo32, hi32, lo64, hi64, shuf func(...Op)
	shufZ                                     func(imm, a, b, k, dst Op)
}

// packTrans emits the body of packBTrans and packSTrans (see
// genPackBTrans) with op's instructions; scale, when not nil, is applied
// to each step's register before it is stored.
func packTrans(op transOps, scale func(z reg.VecPhysical)) {
	dst, src, offs, nb, ds, t := reg.RDI, reg.RSI, reg.RDX, reg.RCX, reg.R8, reg.R9
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("offs"), offs)
	Load(Param("nb"), nb)
	Load(Param("ds"), ds)
	SHLQ(U8(2), ds)
	Load(Param("lmask"), reg.RAX)
	KMOVW(reg.EAX, reg.K2)
	Load(Param("smask"), reg.RAX)
	KMOVW(reg.EAX, reg.K1)
	z := func(i int) reg.VecPhysical { return vec(spec{zmm: true}, i) }
	Label("loop")
	TESTQ(nb, nb)
	JE(LabelRef("done"))
	for i := 0; i < 16; i++ {
		MOVQ(Mem{Base: offs, Disp: 8 * i}, t)
		op.load(Mem{Base: src, Index: t, Scale: 1}, z(i))
	}
	// rows 2i, 2i+1 → t[2i] = [a0 b0 a1 b1], t[2i+1] = [a2 b2 a3 b3] per 128-bit lane
	for i := 0; i < 8; i++ {
		op.lo32(z(2*i+1), z(2*i), z(16+2*i))
		op.hi32(z(2*i+1), z(2*i), z(16+2*i+1))
	}
	// groups of four rows: v[g][j] = rows 4g..4g+3, word 4L+j in lane L
	for g := 0; g < 4; g++ {
		t0, t1, t2, t3 := z(16+4*g), z(16+4*g+1), z(16+4*g+2), z(16+4*g+3)
		op.lo64(t2, t0, z(4*g))
		op.hi64(t2, t0, z(4*g+1))
		op.lo64(t3, t1, z(4*g+2))
		op.hi64(t3, t1, z(4*g+3))
	}
	// across the four groups' 128-bit lanes
	for j := 0; j < 4; j++ {
		a, b, c, d := z(j), z(4+j), z(8+j), z(12+j)
		op.shuf(U8(0x44), b, a, z(16+4*j))   // [A0 A1 B0 B1]
		op.shuf(U8(0xEE), b, a, z(16+4*j+1)) // [A2 A3 B2 B3]
		op.shuf(U8(0x44), d, c, z(16+4*j+2)) // [C0 C1 D0 D1]
		op.shuf(U8(0xEE), d, c, z(16+4*j+3)) // [C2 C3 D2 D3]
	}
	for j := 0; j < 4; j++ {
		x0, x1, y0, y1 := z(16+4*j), z(16+4*j+1), z(16+4*j+2), z(16+4*j+3)
		// step 4L+j is lane L of every group
		op.shufZ(U8(0x88), y0, x0, reg.K2, z(j))
		op.shufZ(U8(0xDD), y0, x0, reg.K2, z(4+j))
		op.shufZ(U8(0x88), y1, x1, reg.K2, z(8+j))
		op.shufZ(U8(0xDD), y1, x1, reg.K2, z(12+j))
	}
	for s := 0; s < 16; s++ {
		// step s = 4L + j sits in z(4L + j), which is z(s)
		if scale != nil {
			scale(z(s))
		}
		op.store(z(s), reg.K1, Mem{Base: dst})
		ADDQ(ds, dst)
	}
	ADDQ(U8(64), src)
	DECQ(nb)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// genCopyRows generates copyRowsAVX: for i < n, copy width bytes (8, 16,
// 32, 64 or 128) from src + offs[i]<<shift (shift 2 or 3) to dst + i*width.
// It gathers the rows of a convolution's B micro-panel, each a contiguous
// run of the input (8 and 16 bytes: the output rows of 2×2 and 4×4 float32
// images).
func genCopyRows() {
	TEXT("copyRowsAVX", NOSPLIT, "func(dst, src *byte, offs *int, n, shift, width int)")
	Pragma("noescape")
	Doc("copyRowsAVX copies n rows of width bytes from src+offs[i]<<shift to dst (see genCopyRows in package asm).")
	dst, src, offs, n, sh, w, t := reg.RDI, reg.RSI, reg.RDX, reg.RCX, reg.R8, reg.R9, reg.RAX
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("offs"), offs)
	Load(Param("n"), n)
	Load(Param("shift"), sh)
	Load(Param("width"), w)
	ys := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	type variant struct{ shift, width int }
	var vs []variant
	for _, shift := range []int{2, 3} {
		for _, width := range []int{128, 64, 32, 16, 8} {
			vs = append(vs, variant{shift, width})
		}
	}
	name := func(v variant) string { return fmt.Sprintf("s%dw%d", v.shift, v.width) }
	for _, v := range vs {
		CMPQ(sh, U8(v.shift))
		JNE(LabelRef(name(v) + "no"))
		CMPQ(w, U8(v.width))
		JE(LabelRef(name(v)))
		Label(name(v) + "no")
	}
	RET()
	for _, v := range vs {
		Label(name(v))
		TESTQ(n, n)
		JE(LabelRef("done"))
		MOVQ(Mem{Base: offs}, t)
		at := Mem{Base: src, Index: t, Scale: uint8(1 << v.shift)}
		switch v.width {
		case 8: // one quadword through a general register
			MOVQ(at, t)
			MOVQ(t, Mem{Base: dst})
		case 16:
			VMOVUPS(at, reg.X0)
			VMOVUPS(reg.X0, Mem{Base: dst})
		default:
			nv := v.width / 32
			for i := 0; i < nv; i++ {
				at.Disp = 32 * i
				VMOVUPS(at, ys[i])
			}
			for i := 0; i < nv; i++ {
				VMOVUPS(ys[i], Mem{Base: dst, Disp: 32 * i})
			}
		}
		ADDQ(U8(8), offs)
		ADDQ(U32(v.width), dst)
		DECQ(n)
		JMP(LabelRef(name(v)))
	}
	Label("done")
	VZEROUPPER()
	RET()
}

// genCopyRuns generates copyRunsAVX: for p < n and r < nb, copy width
// bytes (8, 16, 32, 64 or 128) from src + (offs[p]+bases[r])<<shift (shift
// 2 or 3) to dst, rows one after another. It packs a small-image
// convolution's B micro-panel, whose columns are runs of whole output rows
// (bases: their offsets) and whose rows are taps (offs), without a list of
// every row's offset.
func genCopyRuns() {
	TEXT("copyRunsAVX", NOSPLIT, "func(dst, src *byte, offs *int, n int, bases *int, nb, shift, width int)")
	Pragma("noescape")
	Doc("copyRunsAVX copies n·nb rows of width bytes from src+(offs[p]+bases[r])<<shift to dst (see genCopyRuns in package asm).")
	dst, src, offs, n, bases, nb := reg.RDI, reg.RSI, reg.RDX, reg.RCX, reg.R10, reg.R11
	sh, w, o, t, r := reg.R8, reg.R9, reg.RAX, reg.RBX, reg.R12
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("offs"), offs)
	Load(Param("n"), n)
	Load(Param("bases"), bases)
	Load(Param("nb"), nb)
	Load(Param("shift"), sh)
	Load(Param("width"), w)
	ys := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	type variant struct{ shift, width int }
	var vs []variant
	for _, shift := range []int{2, 3} {
		for _, width := range []int{128, 64, 32, 16, 8} {
			vs = append(vs, variant{shift, width})
		}
	}
	name := func(v variant) string { return fmt.Sprintf("runs%dw%d", v.shift, v.width) }
	for _, v := range vs {
		CMPQ(sh, U8(v.shift))
		JNE(LabelRef(name(v) + "no"))
		CMPQ(w, U8(v.width))
		JE(LabelRef(name(v)))
		Label(name(v) + "no")
	}
	RET()
	for _, v := range vs {
		// for each tap p: o = offs[p]; for each run r: copy from o+bases[r]
		Label(name(v))
		TESTQ(n, n)
		JE(LabelRef("runsdone"))
		MOVQ(Mem{Base: offs}, o)
		XORQ(r, r)
		Label(name(v) + "run")
		CMPQ(r, nb)
		JE(LabelRef(name(v) + "next"))
		MOVQ(Mem{Base: bases, Index: r, Scale: 8}, t)
		ADDQ(o, t)
		at := Mem{Base: src, Index: t, Scale: uint8(1 << v.shift)}
		switch v.width {
		case 8:
			MOVQ(at, t)
			MOVQ(t, Mem{Base: dst})
		case 16:
			VMOVUPS(at, reg.X0)
			VMOVUPS(reg.X0, Mem{Base: dst})
		default:
			nv := v.width / 32
			for i := 0; i < nv; i++ {
				at.Disp = 32 * i
				VMOVUPS(at, ys[i])
			}
			for i := 0; i < nv; i++ {
				VMOVUPS(ys[i], Mem{Base: dst, Disp: 32 * i})
			}
		}
		ADDQ(U32(v.width), dst)
		INCQ(r)
		JMP(LabelRef(name(v) + "run"))
		Label(name(v) + "next")
		ADDQ(U8(8), offs)
		DECQ(n)
		JMP(LabelRef(name(v)))
	}
	Label("runsdone")
	VZEROUPPER()
	RET()
}

// genGatherSegs generates gatherSegsAVX512, which fills columns of a
// micro-panel of 32-bit words from runs of consecutive words: for each of
// ns segments s (four int64s: source word offset, destination word offset,
// load mask, store mask; at most 16 words), and each row p < n,
//
//	dst[p·ds + s.dst + i] = src[offs[p] + s.src + i]  for lane i in s.lmask
//	                        0                          for other lanes in s.smask
//
// (offs[p] ≥ 0; masked loads read only the lanes of lmask). The loop runs
// down a segment's column, one masked load and store a row.
func genGatherSegs() {
	TEXT("gatherSegsAVX512", NOSPLIT, "func(dst, src *uint32, offs *int, n int, segs *int64, ns, ds int)")
	Pragma("noescape")
	Doc("gatherSegsAVX512 copies runs of words into micro-panel columns (see genGatherSegs in package asm).")
	dst, src, offs, n, segs, ns, ds := reg.RDI, reg.RSI, reg.RDX, reg.RCX, reg.R8, reg.R9, reg.R10
	so, d, op, cnt, t, u := reg.R11, reg.R12, reg.R13, reg.R14, reg.RAX, reg.RBX
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("offs"), offs)
	Load(Param("n"), n)
	Load(Param("segs"), segs)
	Load(Param("ns"), ns)
	Load(Param("ds"), ds)
	SHLQ(U8(2), ds)
	TESTQ(n, n)
	JE(LabelRef("gsdone"))
	Label("gsseg")
	TESTQ(ns, ns)
	JE(LabelRef("gsdone"))
	MOVQ(Mem{Base: segs}, so)
	MOVQ(Mem{Base: segs, Disp: 8}, d)
	LEAQ(Mem{Base: dst, Index: d, Scale: 4}, d)
	MOVQ(Mem{Base: segs, Disp: 16}, t)
	KMOVW(t.As32(), reg.K1)
	MOVQ(Mem{Base: segs, Disp: 24}, t)
	KMOVW(t.As32(), reg.K2)
	MOVQ(offs, op)
	MOVQ(n, cnt)
	// two rows an iteration, alternating registers
	Label("gsrow2")
	CMPQ(cnt, U8(2))
	JL(LabelRef("gsrow1"))
	MOVQ(Mem{Base: op}, t)
	MOVQ(Mem{Base: op, Disp: 8}, u)
	ADDQ(so, t)
	ADDQ(so, u)
	VMOVDQU32_Z(Mem{Base: src, Index: t, Scale: 4}, reg.K1, reg.Z0)
	VMOVDQU32_Z(Mem{Base: src, Index: u, Scale: 4}, reg.K1, reg.Z1)
	VMOVDQU32(reg.Z0, reg.K2, Mem{Base: d})
	VMOVDQU32(reg.Z1, reg.K2, Mem{Base: d, Index: ds, Scale: 1})
	LEAQ(Mem{Base: d, Index: ds, Scale: 2}, d)
	ADDQ(U8(16), op)
	SUBQ(U8(2), cnt)
	JMP(LabelRef("gsrow2"))
	Label("gsrow1")
	TESTQ(cnt, cnt)
	JE(LabelRef("gsnext"))
	MOVQ(Mem{Base: op}, t)
	ADDQ(so, t)
	VMOVDQU32_Z(Mem{Base: src, Index: t, Scale: 4}, reg.K1, reg.Z0)
	VMOVDQU32(reg.Z0, reg.K2, Mem{Base: d})
	Label("gsnext")
	ADDQ(U8(32), segs)
	DECQ(ns)
	JMP(LabelRef("gsseg"))
	Label("gsdone")
	VZEROUPPER()
	RET()
}

// genInterleaveRows generates interleaveRowsAVX512, the pair phase image's
// row builder: for r < rows and i < w,
//
//	dst[r·ds+i] = src[r·ss+i] | src[r·ss+ld+i]<<16
//
// (src a *uint16, dst a *uint32; ss, ld and ds in elements), 32 words at a
// time, the last part of a row under a mask, one call for a whole plane.
func genInterleaveRows() {
	TEXT("interleaveRowsAVX512", NOSPLIT, "func(dst *uint32, src *uint16, ld, rows, ss, ds, w int)")
	Pragma("noescape")
	Doc("interleaveRowsAVX512 interleaves pairs of bfloat16 rows into words (see genInterleaveRows in package asm).")
	dst, src, ld, rows, ss, ds, w := loadRowArgs()
	d, s, j := reg.R11, reg.R12, reg.R13
	// K3 (lanes 0-15) and K4 (16-31): the mask of a row's last part,
	// w mod 32 lanes (all 32 when w is a multiple of 32)
	tailMask(w, 32, "irmask")
	KMOVD(reg.EAX, reg.K3)
	KSHIFTRD(U8(16), reg.K3, reg.K4)
	TESTQ(rows, rows)
	JE(LabelRef("irdone"))
	Label("irrow")
	MOVQ(dst, d)
	MOVQ(src, s)
	MOVQ(w, j)
	Label("ir32")
	CMPQ(j, U8(32))
	JLE(LabelRef("irlast"))
	VPMOVZXWD(Mem{Base: s}, reg.Z0)
	VPMOVZXWD(Mem{Base: s, Index: ld, Scale: 1}, reg.Z1)
	VPMOVZXWD(Mem{Base: s, Disp: 32}, reg.Z2)
	VPMOVZXWD(Mem{Base: s, Index: ld, Scale: 1, Disp: 32}, reg.Z3)
	VPSLLD(U8(16), reg.Z1, reg.Z1)
	VPSLLD(U8(16), reg.Z3, reg.Z3)
	VPORD(reg.Z1, reg.Z0, reg.Z0)
	VPORD(reg.Z3, reg.Z2, reg.Z2)
	VMOVDQU32(reg.Z0, Mem{Base: d})
	VMOVDQU32(reg.Z2, Mem{Base: d, Disp: 64})
	ADDQ(U8(64), s)
	ADDQ(U32(128), d)
	SUBQ(U8(32), j)
	JMP(LabelRef("ir32"))
	Label("irlast")
	VPMOVZXWD_Z(Mem{Base: s}, reg.K3, reg.Z0)
	VPMOVZXWD_Z(Mem{Base: s, Index: ld, Scale: 1}, reg.K3, reg.Z1)
	VPMOVZXWD_Z(Mem{Base: s, Disp: 32}, reg.K4, reg.Z2)
	VPMOVZXWD_Z(Mem{Base: s, Index: ld, Scale: 1, Disp: 32}, reg.K4, reg.Z3)
	VPSLLD(U8(16), reg.Z1, reg.Z1)
	VPSLLD(U8(16), reg.Z3, reg.Z3)
	VPORD(reg.Z1, reg.Z0, reg.Z0)
	VPORD(reg.Z3, reg.Z2, reg.Z2)
	VMOVDQU32(reg.Z0, reg.K3, Mem{Base: d})
	VMOVDQU32(reg.Z2, reg.K4, Mem{Base: d, Disp: 64})
	ADDQ(ss, src)
	ADDQ(ds, dst)
	DECQ(rows)
	JNE(LabelRef("irrow"))
	Label("irdone")
	VZEROUPPER()
	RET()
}

// genRoundSegs generates roundSegsAVX512, which rounds the rows of a
// 32-column float32 tile (a convolution's kernel tile, 128 bytes a row) to
// bfloat16 as genRoundBF16 does and stores runs of its columns: for each
// row r < rows and each of ns segments s (two int64s: an element offset
// and a 32-bit column mask),
//
//	dst[r·ldd + s.off + j] = bfloat16(src[32r + j] + acc[r·ldd + s.off + j])
//
// for column j in s.mask, without the acc term when acc is nil (acc, a
// float32 array laid out as dst, holds the earlier K blocks' sums). The
// tile is read with aligned whole-row loads, the acc values of all the
// row's segments loaded under their masks into the same two registers,
// each row rounded once and each segment stored from it under its mask
// (s.off may be negative: masked-off lanes touch no memory).
func genRoundSegs() {
	TEXT("roundSegsAVX512", NOSPLIT, "func(dst *uint16, ldd int, src *float32, rows int, segs *int64, ns int, acc *float32)")
	Pragma("noescape")
	Doc("roundSegsAVX512 rounds a 32-column tile to bfloat16 and stores runs of its columns (see genRoundSegs in package asm).")
	dst, ldd, src, rows, segs, ns, acc := reg.RDI, reg.RDX, reg.RSI, reg.RBX, reg.R8, reg.R9, reg.R12
	sp, n, t := reg.R10, reg.R11, reg.RAX
	Load(Param("dst"), dst)
	Load(Param("ldd"), ldd)
	Load(Param("src"), src)
	Load(Param("rows"), rows)
	Load(Param("segs"), segs)
	Load(Param("ns"), ns)
	Load(Param("acc"), acc)
	SHLQ(U8(1), ldd)
	one, half, nan := reg.Z29, reg.Z30, reg.Z31
	MOVL(U32(1), reg.EAX)
	VPBROADCASTD(reg.EAX, one)
	MOVL(U32(0x7FFF), reg.EAX)
	VPBROADCASTD(reg.EAX, half)
	MOVL(U32(0xFFFF), reg.EAX)
	VPBROADCASTD(reg.EAX, nan)
	round := func(x, r reg.VecPhysical, k reg.Register) {
		VPSRLD(U8(16), x, r)
		VPANDD(one, r, r)
		VPADDD(half, r, r)
		VPADDD(x, r, r)
		VPSRLD(U8(16), r, r)
		VCMPPS(U8(3), x, x, k) // unordered: NaN
		VMOVDQU32(nan, k, r)
	}
	TESTQ(rows, rows)
	JE(LabelRef("rsdone"))
	Label("rsrow")
	VMOVDQU32(Mem{Base: src}, reg.Z0)
	VMOVDQU32(Mem{Base: src, Disp: 64}, reg.Z2)
	TESTQ(acc, acc)
	JE(LabelRef("rsround"))
	// the acc values of the row's segments, lanes 0-15 in Z4, 16-31 in Z5
	VPXORD(reg.Z4, reg.Z4, reg.Z4)
	VPXORD(reg.Z5, reg.Z5, reg.Z5)
	MOVQ(segs, sp)
	MOVQ(ns, n)
	Label("rsacc")
	MOVQ(Mem{Base: sp}, t)
	KMOVD(Mem{Base: sp, Disp: 8}, reg.K1)
	KSHIFTRD(U8(16), reg.K1, reg.K4)
	VMOVDQU32(Mem{Base: acc, Index: t, Scale: 4}, reg.K1, reg.Z4)
	VMOVDQU32(Mem{Base: acc, Index: t, Scale: 4, Disp: 64}, reg.K4, reg.Z5)
	ADDQ(U8(16), sp)
	DECQ(n)
	JNE(LabelRef("rsacc"))
	VADDPS(reg.Z4, reg.Z0, reg.Z0)
	VADDPS(reg.Z5, reg.Z2, reg.Z2)
	LEAQ(Mem{Base: acc, Index: ldd, Scale: 2}, acc)
	Label("rsround")
	round(reg.Z0, reg.Z1, reg.K2)
	round(reg.Z2, reg.Z3, reg.K3)
	VPMOVDW(reg.Z1, reg.Y1)
	VPMOVDW(reg.Z3, reg.Y3)
	VINSERTI64X4(U8(1), reg.Y3, reg.Z1, reg.Z1)
	MOVQ(segs, sp)
	MOVQ(ns, n)
	Label("rsseg")
	MOVQ(Mem{Base: sp}, t)
	KMOVD(Mem{Base: sp, Disp: 8}, reg.K1)
	VMOVDQU16(reg.Z1, reg.K1, Mem{Base: dst, Index: t, Scale: 2})
	ADDQ(U8(16), sp)
	DECQ(n)
	JNE(LabelRef("rsseg"))
	ADDQ(ldd, dst)
	ADDQ(U32(128), src)
	DECQ(rows)
	JNE(LabelRef("rsrow"))
	Label("rsdone")
	VZEROUPPER()
	RET()
}

// loadRowArgs loads the row builders' common arguments (dst, src, ld,
// rows, ss, ds, w), ld and ss scaled to bytes of uint16, ds of uint32.
func loadRowArgs() (dst, src, ld, rows, ss, ds, w reg.Register) {
	dst, src, ld, rows, ss, ds, w = reg.RDI, reg.RSI, reg.RDX, reg.RBX, reg.R8, reg.R9, reg.R10
	for _, a := range []struct {
		name string
		r    reg.Register
	}{{"dst", dst}, {"src", src}, {"ld", ld}, {"rows", rows}, {"ss", ss}, {"ds", ds}, {"w", w}} {
		Load(Param(a.name), a.r)
	}
	SHLQ(U8(1), ld)
	SHLQ(U8(1), ss)
	SHLQ(U8(2), ds)
	return
}

// tailMask sets EAX to the mask of the last w mod lanes lanes of a row
// (all lanes when w is a multiple; lanes is 16 or 32). It uses RCX.
func tailMask(w reg.Register, lanes int, label string) {
	MOVQ(w, reg.RCX)
	ANDQ(U8(lanes-1), reg.RCX)
	MOVL(U32(1), reg.EAX)
	if lanes == 32 {
		SHLQ(reg.CL, reg.RAX)
		DECQ(reg.RAX)
	} else {
		SHLL(reg.CL, reg.EAX)
		DECL(reg.EAX)
	}
	TESTQ(reg.RCX, reg.RCX)
	JNE(LabelRef(label))
	MOVL(U32(uint32(1)<<lanes-1), reg.EAX)
	Label(label)
}

// genPhaseRows2 generates phaseRows2AVX512, interleaveRowsAVX512's form for
// stride-2 phases: for r < rows and j < w,
//
//	dst[r·ds+j] = src[r·ss+2j+hi] | src[r·ss+ld+2j+hi]<<16
//
// (the second term absent when single is 1), 16 words at a time: the
// source read as 32-bit words, whose low (hi = 0) or high (hi = 1) halves
// are the elements wanted, the last part of a row under a mask. It reads
// the other half of each word too: src[r·ss+2w−1+hi] must exist.
func genPhaseRows2() {
	TEXT("phaseRows2AVX512", NOSPLIT, "func(dst *uint32, src *uint16, ld, rows, ss, ds, w, hi, single int)")
	Pragma("noescape")
	Doc("phaseRows2AVX512 builds pair words of a stride-2 phase plane's rows (see genPhaseRows2 in package asm).")
	dst, src, ld, rows, ss, ds, w := loadRowArgs()
	d, sp, j := reg.R11, reg.R12, reg.R13
	// K3: the last part's lanes, w mod 16 (all 16 when a multiple)
	tailMask(w, 16, "p2mask")
	KMOVW(reg.EAX, reg.K3)
	lo := reg.Z31
	MOVL(U32(0xFFFF), reg.EAX)
	VPBROADCASTD(reg.EAX, lo)
	TESTQ(rows, rows)
	JE(LabelRef("p2done"))
	// the variant: hi·2 + single
	Load(Param("hi"), reg.RAX)
	Load(Param("single"), reg.RCX)
	LEAQ(Mem{Base: reg.RCX, Index: reg.RAX, Scale: 2}, reg.RAX)
	for v := 0; v < 4; v++ {
		CMPQ(reg.RAX, U8(v))
		JE(LabelRef(fmt.Sprintf("p2v%d", v)))
	}
	JMP(LabelRef("p2done"))
	for v := 0; v < 4; v++ {
		high, one := v>>1 == 1, v&1 == 1
		pre := fmt.Sprintf("p2v%d", v)
		// body computes Z0 from the words at sp (and sp+ld), lanes under
		// mask k (nil: all)
		body := func(k reg.Register) {
			load := func(m Mem, z reg.VecPhysical) {
				if k == nil {
					VMOVDQU32(m, z)
				} else {
					VMOVDQU32_Z(m, k, z)
				}
			}
			load(Mem{Base: sp}, reg.Z0)
			if high {
				VPSRLD(U8(16), reg.Z0, reg.Z0)
			} else {
				VPANDD(lo, reg.Z0, reg.Z0)
			}
			if !one {
				load(Mem{Base: sp, Index: ld, Scale: 1}, reg.Z1)
				if high {
					VPANDND(reg.Z1, lo, reg.Z1) // the high half in place
				} else {
					VPSLLD(U8(16), reg.Z1, reg.Z1)
				}
				VPORD(reg.Z1, reg.Z0, reg.Z0)
			}
			if k == nil {
				VMOVDQU32(reg.Z0, Mem{Base: d})
			} else {
				VMOVDQU32(reg.Z0, k, Mem{Base: d})
			}
		}
		Label(pre)
		MOVQ(dst, d)
		MOVQ(src, sp)
		MOVQ(w, j)
		Label(pre + "16")
		CMPQ(j, U8(16))
		JLE(LabelRef(pre + "last"))
		body(nil)
		ADDQ(U8(64), sp)
		ADDQ(U8(64), d)
		SUBQ(U8(16), j)
		JMP(LabelRef(pre + "16"))
		Label(pre + "last")
		body(reg.K3)
		ADDQ(ss, src)
		ADDQ(ds, dst)
		DECQ(rows)
		JNE(LabelRef(pre))
		JMP(LabelRef("p2done"))
	}
	Label("p2done")
	VZEROUPPER()
	RET()
}

// genPhaseRows generates phaseRowsAVX512, which fills the rows of a
// channel's phase planes (see package gemm's buildPhases) from an input
// plane whose rows are at most 16 float32 wide: for each r < n, the input
// row z (lanes in lmask of src+soff[r]; all zero where soff[r] < 0) gives
// one row of each of nb ≤ 4 column phases, row b at dst+doff[r]+b·plane:
// lane j (j in smask) is z[perm[b][j]] where bit j of keep[b] is set, else
// zero. Offsets count float32s.
func genPhaseRows() {
	TEXT("phaseRowsAVX512", NOSPLIT, "func(dst, src *float32, soff, doff *int, n int, perm *int32, keep *int, nb, plane, lmask, smask int)")
	Pragma("noescape")
	Doc("phaseRowsAVX512 fills rows of phase planes from an input plane (see genPhaseRows in package asm).")
	dst, src, soff, doff, n := reg.RDI, reg.RSI, reg.RDX, reg.R10, reg.RCX
	perm, keep, nb, plane, t, d := reg.R8, reg.R9, reg.R11, reg.R12, reg.RAX, reg.RBX
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("soff"), soff)
	Load(Param("doff"), doff)
	Load(Param("n"), n)
	Load(Param("perm"), perm)
	Load(Param("keep"), keep)
	Load(Param("nb"), nb)
	Load(Param("plane"), plane)
	SHLQ(U8(2), plane)
	Load(Param("lmask"), t)
	KMOVW(t.As32(), reg.K1)
	Load(Param("smask"), t)
	KMOVW(t.As32(), reg.K2)
	// the phases' permutations in Z4.., their keep masks in K3..
	idx := []reg.VecPhysical{reg.Z4, reg.Z5, reg.Z6, reg.Z7}
	km := []reg.OpmaskPhysical{reg.K3, reg.K4, reg.K5, reg.K6}
	for b := range idx {
		VMOVDQU32(Mem{Base: perm, Disp: 64 * b}, idx[b])
		MOVQ(Mem{Base: keep, Disp: 8 * b}, t)
		KMOVW(t.As32(), km[b])
	}
	Label("prow")
	TESTQ(n, n)
	JE(LabelRef("pdone"))
	VPXORD(reg.Z0, reg.Z0, reg.Z0)
	MOVQ(Mem{Base: soff}, t)
	TESTQ(t, t)
	JS(LabelRef("pzero"))
	VMOVUPS_Z(Mem{Base: src, Index: t, Scale: 4}, reg.K1, reg.Z0)
	Label("pzero")
	MOVQ(Mem{Base: doff}, d)
	LEAQ(Mem{Base: dst, Index: d, Scale: 4}, d)
	for b := range idx {
		if b > 0 {
			CMPQ(nb, U8(b))
			JLE(LabelRef("pnext"))
			ADDQ(plane, d)
		}
		VPERMPS_Z(reg.Z0, idx[b], km[b], reg.Z1)
		VMOVUPS(reg.Z1, reg.K2, Mem{Base: d})
	}
	Label("pnext")
	ADDQ(U8(8), soff)
	ADDQ(U8(8), doff)
	DECQ(n)
	JMP(LabelRef("prow"))
	Label("pdone")
	VZEROUPPER()
	RET()
}

// dotSpec describes one dot-product kernel: a tile of mr rows of A by nr
// rows of B, each entry a dot product along contiguous memory.
type dotSpec struct {
	name   string
	double bool
	zmm    bool
	mr, nr int
}

// genDot generates a dot-product tile kernel:
//
//	c[i*ldc+j] += Σ_img Σ_{p<n} a[img*as + i*lda + p] · b[img*bs + boff[j] + p]
//
// for i < mr, j < nr. n is a whole number of vectors. The accumulators stay
// in registers over all images and are summed across lanes at the end. It
// is the weight gradient of a convolution, whose two operands (output
// gradient and input) are both contiguous along the output positions, so
// nothing is packed.
func genDot(s dotSpec) {
	typ, esz := "float32", 4
	if s.double {
		typ, esz = "float64", 8
	}
	vbytes := 32
	if s.zmm {
		vbytes = 64
	}
	TEXT(s.name, NOSPLIT, fmt.Sprintf("func(n, nimg int, a *%s, lda, as int, b *%s, boff *int, bs int, c *%s, ldc int)", typ, typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds to a %d×%d tile of C the dot products of rows of A and B over nimg images (see genDot in package asm).", s.name, s.mr, s.nr))
	shift := U8(2)
	if s.double {
		shift = U8(3)
	}
	for _, p := range []string{"n", "lda", "as", "bs", "ldc"} {
		m, err := Param(p).Resolve()
		if err != nil {
			panic(err)
		}
		SHLQ(shift, m.Addr)
	}
	gp := []reg.GPPhysical{reg.RAX, reg.RBX, reg.RCX, reg.RDX, reg.RSI, reg.RDI, reg.R8, reg.R9, reg.R10, reg.R11, reg.R12, reg.R13}
	pa := gp[:s.mr]
	pb := gp[s.mr : s.mr+s.nr]
	pos := gp[s.mr+s.nr]
	img := gp[s.mr+s.nr+1]
	// A row pointers
	Load(Param("a"), pa[0])
	for i := 1; i < s.mr; i++ {
		MOVQ(pa[i-1], pa[i])
		ADDQ(NewParamAddr("lda", 24), pa[i])
	}
	// B row pointers: b + boff[j]*esz
	Load(Param("boff"), pos)
	for j := 0; j < s.nr; j++ {
		MOVQ(Mem{Base: pos, Disp: 8 * j}, pb[j])
		SHLQ(shift, pb[j])
		ADDQ(NewParamAddr("b", 40), pb[j])
	}
	vreg := func(i int) reg.VecPhysical { return vec(spec{zmm: s.zmm}, i) }
	acc := func(i, j int) reg.VecPhysical { return vreg(i*s.nr + j) }
	va := func(i int) reg.VecPhysical { return vreg(s.mr*s.nr + i) }
	vb := vreg(s.mr*s.nr + s.mr)
	if s.mr*s.nr+s.mr+1 > map[bool]int{false: 16, true: 32}[s.zmm] {
		panic(s.name + ": too many registers")
	}
	for i := 0; i < s.mr; i++ {
		for j := 0; j < s.nr; j++ {
			r := acc(i, j)
			if s.zmm {
				VPXORD(r, r, r)
			} else {
				VXORPS(r, r, r)
			}
		}
	}
	mov := func(src, dst Op) {
		if s.double {
			VMOVUPD(src, dst)
		} else {
			VMOVUPS(src, dst)
		}
	}
	fma := func(b, a, c Op) {
		if s.double {
			VFMADD231PD(b, a, c)
		} else {
			VFMADD231PS(b, a, c)
		}
	}
	Load(Param("nimg"), img)
	Label("image")
	TESTQ(img, img)
	JE(LabelRef("reduce"))
	XORQ(pos, pos)
	Label("step")
	CMPQ(pos, NewParamAddr("n", 0))
	JGE(LabelRef("next"))
	for i := 0; i < s.mr; i++ {
		mov(Mem{Base: pa[i], Index: pos, Scale: 1}, va(i))
	}
	for j := 0; j < s.nr; j++ {
		mov(Mem{Base: pb[j], Index: pos, Scale: 1}, vb)
		for i := 0; i < s.mr; i++ {
			fma(vb, va(i), acc(i, j))
		}
	}
	ADDQ(U8(vbytes), pos)
	JMP(LabelRef("step"))
	Label("next")
	for i := 0; i < s.mr; i++ {
		ADDQ(NewParamAddr("as", 32), pa[i])
	}
	for j := 0; j < s.nr; j++ {
		ADDQ(NewParamAddr("bs", 56), pb[j])
	}
	DECQ(img)
	JMP(LabelRef("image"))

	// Sum each accumulator's lanes and add it to C. The zmm kernels stay
	// with 512-bit and scalar instructions (AVX-512F alone: accumulators up
	// to Z23 are out of VEX's reach, and 128/256-bit EVEX forms would need
	// AVX-512VL).
	Label("reduce")
	cp := gp[0]
	Load(Param("c"), cp)
	t := vb
	for i := 0; i < s.mr; i++ {
		for j := 0; j < s.nr; j++ {
			r := acc(i, j)
			add := func(a, b Op) {
				if s.double {
					VADDPD(a, b, b)
				} else {
					VADDPS(a, b, b)
				}
			}
			if s.zmm {
				VSHUFF64X2(U8(0x0e), r, r, t) // 256-bit halves
				add(t, r)
				VSHUFF64X2(U8(0x01), r, r, t) // 128-bit lanes
				add(t, r)
			} else {
				VEXTRACTF128(U8(1), r, t.AsX())
				add(t.AsX(), r.AsX())
			}
			if s.double {
				VPERMILPD(U8(1), r, t)
				add(t, r)
			} else {
				VPERMILPS(U8(0x4e), r, t)
				add(t, r)
				VPERMILPS(U8(0xb1), r, t)
				add(t, r)
			}
			x := r.AsX()
			m := Mem{Base: cp, Disp: j * esz}
			if s.double {
				VADDSD(m, x, x)
				VMOVSD(x, m)
			} else {
				VADDSS(m, x, x)
				VMOVSS(x, m)
			}
		}
		if i+1 < s.mr {
			ADDQ(NewParamAddr("ldc", 72), cp)
		}
	}
	VZEROUPPER()
	RET()
}

// genWinograd generates the AVX2 Winograd F(2×2, 3×3) transforms for
// float32, eight tiles (lanes) at a time, each over n channels.
//
// winoInAVX2: the eight tiles' 4×4 input blocks start at src+soff
// (element offsets; tile k at +2k, rows ws apart); V = Bᵀ·d·B, ξ = 4a+b,
// goes to dst + ξ·ds, except in the lanes set in mask (nil: none). The row
// transform Bᵀ·d is taken on
// the raw rows (it commutes with picking the even and odd columns), then the
// columns are split into evens and odds for the column transform. Next
// channel: src += sstep, dst += dstep.
//
// winoOutAVX2: M[ξ] for eight tiles at m + ξ·ms; Y = Aᵀ·M·A + *bias, two
// output columns per tile: the first four tiles' eight columns go to
// dst+doff, the last four's to dst+doff+hs (hs = 8: sixteen columns in a
// row), and (rows == 2) the second output row one ldo below each. Next
// channel: m += mstep, dst += dstep, bias++.
func genWinograd() {
	TEXT("winoInAVX2", NOSPLIT, "func(dst *float32, ds int, src *float32, soff, ws int, mask *int32, n, sstep, dstep int)")
	Pragma("noescape")
	Doc("winoInAVX2 is Winograd F(2×2,3×3)'s input transform for eight tiles (see genWinograd in package asm).")
	dst, ds, src, ws, ws3, n, sstep, dstep, p := reg.RDI, reg.R8, reg.RSI, reg.R9, reg.R13, reg.RCX, reg.R10, reg.R11, reg.RDX
	Load(Param("dst"), dst)
	Load(Param("ds"), ds)
	SHLQ(U8(2), ds)
	Load(Param("src"), src)
	Load(Param("soff"), reg.RAX)
	LEAQ(Mem{Base: src, Index: reg.RAX, Scale: 4}, src)
	Load(Param("ws"), ws)
	SHLQ(U8(2), ws)
	LEAQ(Mem{Base: ws, Index: ws, Scale: 2}, ws3)
	// mask: the lanes whose dst values are kept (a blend and a plain store:
	// masked stores are slow on some CPUs); nil for none.
	Load(Param("mask"), reg.RAX)
	XORQ(reg.RBX, reg.RBX)
	TESTQ(reg.RAX, reg.RAX)
	JE(LabelRef("nomask"))
	VMOVDQU(Mem{Base: reg.RAX}, reg.Y15)
	INCQ(reg.RBX)
	Label("nomask")
	Load(Param("n"), n)
	Load(Param("sstep"), sstep)
	SHLQ(U8(2), sstep)
	Load(Param("dstep"), dstep)
	SHLQ(U8(2), dstep)
	row := func(r, off int) Mem {
		m := Mem{Base: src, Disp: 4 * off}
		switch r {
		case 1:
			m.Index, m.Scale = ws, 1
		case 2:
			m.Index, m.Scale = ws, 2
		case 3:
			m.Index, m.Scale = ws3, 1
		}
		return m
	}
	Label("chan")
	TESTQ(n, n)
	JE(LabelRef("done"))
	// Prefetch the rows of the channel after next: channels are a plane
	// apart, too far for the hardware prefetchers to follow.
	LEAQ(Mem{Base: src, Index: sstep, Scale: 2}, p)
	for r := 0; r < 4; r++ {
		m := Mem{Base: p}
		switch r {
		case 1:
			m.Index, m.Scale = ws, 1
		case 2:
			m.Index, m.Scale = ws, 2
		case 3:
			m.Index, m.Scale = ws3, 1
		}
		PREFETCHT0(m)
		m.Disp = 64
		PREFETCHT0(m)
	}
	MOVQ(dst, p)
	// Bᵀ rows: t0 = r0−r2, t1 = r1+r2, t2 = r2−r1, t3 = r1−r3
	type comb struct {
		x, y int
		add  bool
	}
	for _, c := range []comb{{0, 2, false}, {1, 2, true}, {2, 1, false}, {1, 3, false}} {
		ch := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
		for i, off := range []int{0, 8, 2, 10} {
			VMOVUPS(row(c.x, off), ch[i])
			if c.add {
				VADDPS(row(c.y, off), ch[i], ch[i])
			} else {
				VSUBPS(row(c.y, off), ch[i], ch[i])
			}
		}
		// columns j0 (evens of 0..15), j1 (odds), j2 (evens of 2..17), j3
		VSHUFPS(U8(0x88), reg.Y1, reg.Y0, reg.Y4)
		VPERMPD(U8(0xd8), reg.Y4, reg.Y4)
		VSHUFPS(U8(0xdd), reg.Y1, reg.Y0, reg.Y5)
		VPERMPD(U8(0xd8), reg.Y5, reg.Y5)
		VSHUFPS(U8(0x88), reg.Y3, reg.Y2, reg.Y6)
		VPERMPD(U8(0xd8), reg.Y6, reg.Y6)
		VSHUFPS(U8(0xdd), reg.Y3, reg.Y2, reg.Y7)
		VPERMPD(U8(0xd8), reg.Y7, reg.Y7)
		// ·B: v0 = j0−j2, v1 = j1+j2, v2 = j2−j1, v3 = j1−j3
		VSUBPS(reg.Y6, reg.Y4, reg.Y8)
		VADDPS(reg.Y6, reg.Y5, reg.Y9)
		VSUBPS(reg.Y5, reg.Y6, reg.Y10)
		VSUBPS(reg.Y7, reg.Y5, reg.Y11)
		for i, v := range []reg.VecPhysical{reg.Y8, reg.Y9, reg.Y10, reg.Y11} {
			lbl := fmt.Sprintf("st%d_%d", c.x*4+c.y, i)
			TESTQ(reg.RBX, reg.RBX)
			JE(LabelRef(lbl))
			VBLENDVPS(reg.Y15, Mem{Base: p}, v, v) // keep dst where the mask is set
			Label(lbl)
			VMOVUPS(v, Mem{Base: p})
			ADDQ(ds, p)
		}
	}
	ADDQ(sstep, src)
	ADDQ(dstep, dst)
	DECQ(n)
	JMP(LabelRef("chan"))
	Label("done")
	VZEROUPPER()
	RET()

	TEXT("winoOutAVX2", NOSPLIT, "func(dst *float32, doff, ldo int, m *float32, ms int, bias *float32, rows, n, mstep, dstep, hs int)")
	Pragma("noescape")
	Doc("winoOutAVX2 is Winograd F(2×2,3×3)'s output transform for eight tiles (see genWinograd in package asm).")
	d, ldo, mp, ms, ms4, ms12, bp, rows := reg.RDI, reg.R8, reg.RSI, reg.R9, reg.R12, reg.R13, reg.RBX, reg.RDX
	n, dstep = reg.RCX, reg.R11
	mstep := reg.R10
	pj := reg.RAX
	Load(Param("dst"), d)
	Load(Param("doff"), reg.RAX)
	LEAQ(Mem{Base: d, Index: reg.RAX, Scale: 4}, d)
	Load(Param("ldo"), ldo)
	SHLQ(U8(2), ldo)
	Load(Param("m"), mp)
	Load(Param("ms"), ms)
	SHLQ(U8(2), ms)
	LEAQ(Mem{Base: ms, Index: ms, Scale: 1}, ms4) // 2·ms
	ADDQ(ms4, ms4)                                // 4·ms
	LEAQ(Mem{Base: ms4, Index: ms4, Scale: 2}, ms12)
	Load(Param("bias"), bp)
	Load(Param("rows"), rows)
	Load(Param("n"), n)
	Load(Param("mstep"), mstep)
	SHLQ(U8(2), mstep)
	Load(Param("dstep"), dstep)
	SHLQ(U8(2), dstep)
	Label("ochan")
	TESTQ(n, n)
	JE(LabelRef("odone"))
	// Aᵀ rows: t0j = m0j+m1j+m2j, t1j = m1j−m2j−m3j, M row a of column j at
	// ξ = 4a+j
	MOVQ(mp, pj)
	t0 := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	t1 := []reg.VecPhysical{reg.Y4, reg.Y5, reg.Y6, reg.Y7}
	for j := 0; j < 4; j++ {
		m1 := Mem{Base: pj, Index: ms4, Scale: 1}
		m2 := Mem{Base: pj, Index: ms4, Scale: 2}
		m3 := Mem{Base: pj, Index: ms12, Scale: 1}
		VMOVUPS(m1, reg.Y8) // m1
		VADDPS(Mem{Base: pj}, reg.Y8, t0[j])
		VADDPS(m2, t0[j], t0[j]) // m0+m1+m2
		VSUBPS(m2, reg.Y8, t1[j])
		VSUBPS(m3, t1[j], t1[j]) // m1−m2−m3
		if j < 3 {
			ADDQ(ms, pj)
		}
	}
	VBROADCASTSS(Mem{Base: bp}, reg.Y13)
	// where the last four tiles' columns go: pj = dst + hs
	Load(Param("hs"), pj)
	LEAQ(Mem{Base: d, Index: pj, Scale: 4}, pj)
	// ·A: y0 = t0+t1+t2 + b, y1 = t1−t2−t3 + b, per output row
	for a, t := range [][]reg.VecPhysical{t0, t1} {
		VADDPS(t[1], t[0], reg.Y8)
		VADDPS(t[2], reg.Y8, reg.Y8)
		VADDPS(reg.Y13, reg.Y8, reg.Y8)
		VSUBPS(t[2], t[1], reg.Y9)
		VSUBPS(t[3], reg.Y9, reg.Y9)
		VADDPS(reg.Y13, reg.Y9, reg.Y9)
		// interleave the two columns: tile k → outputs 2k, 2k+1
		VUNPCKLPS(reg.Y9, reg.Y8, reg.Y10)
		VUNPCKHPS(reg.Y9, reg.Y8, reg.Y11)
		VPERM2F128(U8(0x20), reg.Y11, reg.Y10, reg.Y12)
		VPERM2F128(U8(0x31), reg.Y11, reg.Y10, reg.Y10)
		if a == 1 {
			CMPQ(rows, U8(2))
			JL(LabelRef("onext"))
			VMOVUPS(reg.Y12, Mem{Base: d, Index: ldo, Scale: 1})
			VMOVUPS(reg.Y10, Mem{Base: pj, Index: ldo, Scale: 1})
			continue
		}
		VMOVUPS(reg.Y12, Mem{Base: d})
		VMOVUPS(reg.Y10, Mem{Base: pj})
	}
	Label("onext")
	ADDQ(mstep, mp)
	ADDQ(dstep, d)
	ADDQ(U8(4), bp)
	DECQ(n)
	JMP(LabelRef("ochan"))
	Label("odone")
	VZEROUPPER()
	RET()
}

func main() {
	if v := os.Getenv("GEMM_PFDIST"); v != "" {
		pfDist, _ = strconv.Atoi(v)
	}
	ConstraintExpr("amd64,!purego")
	for _, s := range []spec{
		{name: "sgemmAVX512", zmm: true, mr: 14, nv: 2, unroll: 4},
		{name: "dgemmAVX512", double: true, zmm: true, mr: 14, nv: 2, unroll: 4},
		{name: "sgemmAVX2", mr: 6, nv: 2, unroll: 4},
		{name: "dgemmAVX2", double: true, mr: 6, nv: 2, unroll: 4},
	} {
		gen(s)
	}
	// Edge kernels of the AVX-512 float32 set: the first r rows of a
	// 14-row panel, so that a partial panel (O = 64 output channels is
	// 4×14 + 8) costs r rows of FMAs, not 14.
	for r := 1; r < 14; r++ {
		gen(spec{name: fmt.Sprintf("sgemmAVX512r%d", r), zmm: true, mr: r, pmr: 14, nv: 2, unroll: 4})
	}
	// The bfloat16 kernel and its edge kernels: the float32 kernel's
	// layout, one k pair per step.
	gen(spec{name: "bgemmAVX512", zmm: true, mr: 14, nv: 2, unroll: 4, bf16: true})
	for r := 1; r < 14; r++ {
		gen(spec{name: fmt.Sprintf("bgemmAVX512r%d", r), zmm: true, mr: r, pmr: 14, nv: 2, unroll: 4, bf16: true})
	}
	genAMX()
	genAMXRows()
	genPack(false)
	genPack(true)
	genPackBF16()
	genPairTaps()
	genRoundBF16()
	genPackBTrans()
	genPackSTrans()
	genCopyRows()
	genCopyRuns()
	genGatherSegs()
	genInterleaveRows()
	genPhaseRows2()
	genRoundSegs()
	genPhaseRows()
	genWinograd()
	genWinoWeights()
	for _, d := range []dotSpec{
		{name: "sdotAVX2", mr: 2, nr: 6},
		{name: "ddotAVX2", double: true, mr: 2, nr: 6},
		{name: "sdotAVX512", zmm: true, mr: 4, nr: 6},
		{name: "ddotAVX512", double: true, zmm: true, mr: 4, nr: 6},
	} {
		genDot(d)
	}
	Generate()
}

// genWinoWeights generates winoWeightsAVX2, Winograd F(2×2,3×3)'s weight
// transform U = G·g·Gᵀ for up to eight rows of a panel (lanes), channel
// after channel: for channel c < n, lane i and ξ = 4a+b,
//
//	dst[ξ·ps + c·ds + i] = U[a][b] of the 3×3 kernel at src + c·cs + idx[i]
//
// (a row-major 3×3 kernel), read by gathers under gmask (lanes not read
// are zero) and stored under smask.
//
// winoWeightsFlipAVX2 is the same for kernels stored rotated by 180°
// (tap (a, b) at src + 8 − 3a − b: the input gradient's). The *MaskAVX2
// forms store under smask (VMASKMOVPS, slow on AMD: tens of cycles a
// store); the others store all eight lanes and ignore it.
//
// winoWeightsRowsAVX2 and winoWeightsRowsFlipAVX2 do the same for eight
// rows that all exist (no masks), rows rs elements apart: each row's first
// eight taps by a plain load and an 8×8 transpose, the ninth by a gather
// (gathers are slow on AMD: ~40 cycles for nine of them per channel).
func genWinoWeights() {
	for _, flip := range []bool{false, true} {
		for _, masked := range []bool{false, true} {
			genWinoWeights1(flip, masked)
		}
		genWinoWeightsRows(flip)
	}
}

// winoGgT emits the transform from the nine tap vectors k (k[3p+q]: tap
// (p, q), each eight rows) to the 16 planes: G·g into t (t0j = k0j,
// t1j = (k0j+k1j+k2j)/2, t2j = (k0j−k1j+k2j)/2, t3j = k2j; t1j overwrites
// k1j, t2j goes to fresh[j]), then ·Gᵀ row by row, plane 4a+b stored at
// pd (advanced by ps between planes) through store.
func winoGgT(k [9]reg.VecPhysical, fresh [3]reg.VecPhysical, half, tmp reg.VecPhysical, pd, ps reg.Register, store func(reg.VecPhysical)) {
	var t [4][3]reg.VecPhysical
	for j := 0; j < 3; j++ {
		k0, k1, k2 := k[j], k[3+j], k[6+j]
		VSUBPS(k1, k0, fresh[j])
		VADDPS(k2, fresh[j], fresh[j])
		VMULPS(half, fresh[j], fresh[j])
		VADDPS(k0, k1, k1)
		VADDPS(k2, k1, k1)
		VMULPS(half, k1, k1)
		t[0][j], t[1][j], t[2][j], t[3][j] = k0, k1, fresh[j], k2
	}
	for a := 0; a < 4; a++ {
		t0, t1, t2 := t[a][0], t[a][1], t[a][2]
		store(t0)
		ADDQ(ps, pd)
		VADDPS(t1, t0, tmp)
		VADDPS(t2, tmp, tmp)
		VMULPS(half, tmp, tmp)
		store(tmp)
		ADDQ(ps, pd)
		VSUBPS(t1, t0, tmp)
		VADDPS(t2, tmp, tmp)
		VMULPS(half, tmp, tmp)
		store(tmp)
		ADDQ(ps, pd)
		store(t2)
		if a < 3 {
			ADDQ(ps, pd)
		}
	}
}

// broadcastHalf sets every lane of v to 0.5.
func broadcastHalf(v reg.VecPhysical) {
	MOVL(U32(0x3F000000), reg.EBX)
	VMOVD(reg.EBX, v.AsX())
	VBROADCASTSS(v.AsX(), v)
}

// endChannels closes a weight transform's channel loop (labels lbl+"chan"
// and lbl+"done"): dst on by ds, n down by one, back to the top.
func endChannels(lbl string, dst, ds, n reg.Register) {
	ADDQ(ds, dst)
	DECQ(n)
	JMP(LabelRef(lbl + "chan"))
	Label(lbl + "done")
	VZEROUPPER()
	RET()
}

func genWinoWeightsRows(flip bool) {
	name, lbl := "winoWeightsRowsAVX2", "wwr"
	if flip {
		name, lbl = "winoWeightsRowsFlipAVX2", "wwrf"
	}
	TEXT(name, NOSPLIT, "func(dst *float32, ps int, src *float32, idx *int32, rs, n, cs, ds int)")
	Pragma("noescape")
	Doc(name + " is Winograd F(2×2,3×3)'s weight transform for eight rows (see genWinoWeights in package asm).")
	dst, ps, src, src4, ix, rs, rs3, n, cs, ds, pd := reg.RDI, reg.R8, reg.RSI, reg.R13, reg.RDX, reg.R9, reg.R12, reg.RCX, reg.R10, reg.R11, reg.RAX
	Load(Param("dst"), dst)
	Load(Param("ps"), ps)
	SHLQ(U8(2), ps)
	Load(Param("src"), src)
	Load(Param("idx"), ix)
	Load(Param("rs"), rs)
	SHLQ(U8(2), rs)
	LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, rs3)
	LEAQ(Mem{Base: src, Index: rs, Scale: 4}, src4)
	Load(Param("n"), n)
	Load(Param("cs"), cs)
	SHLQ(U8(2), cs)
	Load(Param("ds"), ds)
	SHLQ(U8(2), ds)
	y := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}
	Label(lbl + "chan")
	TESTQ(n, n)
	JE(LabelRef(lbl + "done"))
	// rows 0..7: eight consecutive elements from the kernel's (flip:
	// second) element
	disp := 0
	if flip {
		disp = 4
	}
	rows := []Mem{{Base: src}, {Base: src, Index: rs, Scale: 1}, {Base: src, Index: rs, Scale: 2}, {Base: src, Index: rs3, Scale: 1},
		{Base: src4}, {Base: src4, Index: rs, Scale: 1}, {Base: src4, Index: rs, Scale: 2}, {Base: src4, Index: rs3, Scale: 1}}
	for i, m := range rows {
		m.Disp = disp
		VMOVUPS(m, y[i])
	}
	// 8×8 transpose: element m of each row into vector m (Y8..Y15)
	for i := 0; i < 4; i++ {
		VUNPCKLPS(y[2*i+1], y[2*i], y[8+2*i])
		VUNPCKHPS(y[2*i+1], y[2*i], y[9+2*i])
	}
	for h := 0; h < 2; h++ { // rows 0-3, rows 4-7
		b := 8 + 4*h
		VSHUFPS(U8(0x44), y[b+2], y[b], y[4*h])
		VSHUFPS(U8(0xEE), y[b+2], y[b], y[4*h+1])
		VSHUFPS(U8(0x44), y[b+3], y[b+1], y[4*h+2])
		VSHUFPS(U8(0xEE), y[b+3], y[b+1], y[4*h+3])
	}
	for m := 0; m < 4; m++ {
		VPERM2F128(U8(0x20), y[4+m], y[m], y[8+m])
		VPERM2F128(U8(0x31), y[4+m], y[m], y[12+m])
	}
	// the remaining element (flip: the first) by a gather into Y0
	VPCMPEQD(reg.Y1, reg.Y1, reg.Y1)
	VMOVDQU(Mem{Base: ix}, reg.Y2)
	VXORPS(reg.Y0, reg.Y0, reg.Y0)
	gd := 32
	if flip {
		gd = 0
	}
	VGATHERDPS(reg.Y1, Mem{Base: src, Index: reg.Y2, Scale: 4, Disp: gd}, reg.Y0)
	// tap (p, q) = 3p+q: loaded element m (Y8+m) is tap m and the
	// gathered one (memory element 8) tap 8; rotated, loaded element m
	// (memory element m+1) is tap 7−m and the gathered one (memory
	// element 0) tap 8 again
	var k [9]reg.VecPhysical
	for m := 0; m < 8; m++ {
		if flip {
			k[7-m] = y[8+m]
		} else {
			k[m] = y[8+m]
		}
	}
	k[8] = reg.Y0
	half := reg.Y7
	broadcastHalf(half)
	MOVQ(dst, pd)
	winoGgT(k, [3]reg.VecPhysical{reg.Y1, reg.Y2, reg.Y3}, half, reg.Y4, pd, ps, func(v reg.VecPhysical) { VMOVUPS(v, Mem{Base: pd}) })
	ADDQ(cs, src)
	ADDQ(cs, src4)
	endChannels(lbl, dst, ds, n)
}

func genWinoWeights1(flip, masked bool) {
	name, lbl := "winoWeights", "ww"
	if flip {
		name, lbl = name+"Flip", lbl+"f"
	}
	if masked {
		name, lbl = name+"Mask", lbl+"m"
	}
	name += "AVX2"
	TEXT(name, NOSPLIT, "func(dst *float32, ps int, src *float32, idx, gmask, smask *int32, n, cs, ds int)")
	Pragma("noescape")
	Doc(name + " is Winograd F(2×2,3×3)'s weight transform for up to eight rows (see genWinoWeights in package asm).")
	dst, ps, src, gm, n, cs, ds, pd := reg.RDI, reg.R8, reg.RSI, reg.RDX, reg.RCX, reg.R10, reg.R11, reg.RAX
	Load(Param("dst"), dst)
	Load(Param("ps"), ps)
	SHLQ(U8(2), ps)
	Load(Param("src"), src)
	Load(Param("idx"), reg.RBX)
	idx, tmp, smask, half := reg.Y12, reg.Y13, reg.Y14, reg.Y15
	VMOVDQU(Mem{Base: reg.RBX}, idx) // lane offsets
	Load(Param("gmask"), gm)
	Load(Param("smask"), reg.RBX)
	VMOVDQU(Mem{Base: reg.RBX}, smask)
	Load(Param("n"), n)
	Load(Param("cs"), cs)
	SHLQ(U8(2), cs)
	Load(Param("ds"), ds)
	SHLQ(U8(2), ds)
	broadcastHalf(half)
	k := [9]reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8} // tap (p, q) in k[3p+q]
	Label(lbl + "chan")
	TESTQ(n, n)
	JE(LabelRef(lbl + "done"))
	for tap, into := range k {
		if flip {
			tap = 8 - tap
		}
		VXORPS(into, into, into)
		VMOVDQU(Mem{Base: gm}, tmp)
		VGATHERDPS(tmp, Mem{Base: src, Index: idx, Scale: 4, Disp: 4 * tap}, into)
	}
	MOVQ(dst, pd)
	winoGgT(k, [3]reg.VecPhysical{reg.Y9, reg.Y10, reg.Y11}, half, tmp, pd, ps, func(v reg.VecPhysical) {
		if masked {
			VMASKMOVPS(v, smask, Mem{Base: pd})
		} else {
			VMOVUPS(v, Mem{Base: pd})
		}
	})
	ADDQ(cs, src)
	endChannels(lbl, dst, ds, n)
}
