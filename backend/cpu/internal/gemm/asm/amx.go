package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AMX-BF16 kernel (bgemmAMX): a 32×32 tile of C from bfloat16 pair
// words, in eight tile registers, all of them 16 rows of 64 bytes:
//
//	tmm0 tmm1   C rows 0-15, columns 0-15 and 16-31 (float32)
//	tmm2 tmm3   C rows 16-31
//	tmm4 tmm5   A rows 0-15 and 16-31, 16 pairs (32 k values) each
//	tmm6 tmm7   B columns 0-15 and 16-31, 16 pair rows each
//
// Per 16 pairs: four tile loads and four TDPBF16PS (tmm0 += tmm4·tmm6, …).
// The A panel holds its tiles whole, in order (per 16 pairs, rows 0-15
// then rows 16-31: 2 KiB of 64-byte rows); the B panel is the VDPBF16PS
// kernel's, a row of 32 pair words per pair (a B tile is 16 of those rows,
// 128 bytes apart, from byte 0 or 64). kc is a multiple of 16.
//
// Tile state belongs to the thread and a goroutine may move between
// threads between calls, so each call loads the configuration and
// releases the tiles before it returns (Go never preempts assembly).
// Neither avo nor Go's assembler knows the AMX instructions: they are
// emitted as bytes, each after a comment "AMX: <instruction>" in Intel
// syntax, which the tests assemble with GNU as (testdata/amx_encoding.txt)
// and compare byte for byte.

// amxMem is a tile instruction's memory operand: disp(base)(index*1).
type amxMem struct {
	base, index reg.GPPhysical
	disp        int
}

func gpNum(r reg.GPPhysical) int { return int(r.PhysicalIndex()) }

func (m amxMem) String() string {
	s := fmt.Sprintf("[%s+%s*1", gp64Name(m.base), gp64Name(m.index))
	if m.disp != 0 {
		s += fmt.Sprintf("+0x%x", m.disp)
	}
	return s + "]"
}

// gp64Name is a 64-bit register's Intel name.
func gp64Name(r reg.GPPhysical) string {
	names := []string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
	return names[gpNum(r)]
}

// amxBytes emits an instruction as bytes after its comment.
func amxBytes(text string, bs ...byte) {
	Comment("AMX: " + text)
	for _, b := range bs {
		Instruction(&ir.Instruction{Opcode: "BYTE", Operands: []Op{U8(b)}})
	}
}

// vex3 is a three-byte VEX prefix, map 0F38, W0, L0 (every AMX
// instruction's): pp selects the implied prefix (0 none, 1 66, 2 F3,
// 3 F2); x and b extend the SIB index and the base or r/m register.
func vex3(pp byte, x, b bool, vvvv int) []byte {
	b1 := byte(0x80 | 0x02) // R̄ (tile registers are 0-7), map 0F38
	if !x {
		b1 |= 0x40
	}
	if !b {
		b1 |= 0x20
	}
	return []byte{0xC4, b1, byte(^vvvv&0xF)<<3 | pp}
}

// tileMem emits a tile load (pp 3, TILELOADD) or store (pp 2, TILESTORED).
func tileMem(pp byte, t int, m amxMem) {
	base, idx := gpNum(m.base), gpNum(m.index)
	if idx == 4 || m.disp < -128 || m.disp > 127 {
		panic("tileMem: unencodable operand")
	}
	mod := byte(0)
	if m.disp != 0 || base&7 == 5 {
		mod = 1
	}
	bs := append(vex3(pp, idx >= 8, base >= 8, 0), 0x4B, mod<<6|byte(t)<<3|4, byte(idx&7)<<3|byte(base&7))
	if mod == 1 {
		bs = append(bs, byte(int8(m.disp)))
	}
	if pp == 3 {
		amxBytes(fmt.Sprintf("tileloadd tmm%d,%s", t, m), bs...)
	} else {
		amxBytes(fmt.Sprintf("tilestored %s,tmm%d", m, t), bs...)
	}
}

func tileLoad(t int, m amxMem)  { tileMem(3, t, m) }
func tileStore(t int, m amxMem) { tileMem(2, t, m) }

func tileZero(t int) {
	amxBytes(fmt.Sprintf("tilezero tmm%d", t), append(vex3(3, false, false, 0), 0x49, 0xC0|byte(t)<<3)...)
}

// tdpbf16 emits TDPBF16PS: tmm[c] += tmm[a]·tmm[b] (a's rows of pairs
// times b's pair rows).
func tdpbf16(c, a, b int) {
	amxBytes(fmt.Sprintf("tdpbf16ps tmm%d,tmm%d,tmm%d", c, a, b), append(vex3(2, false, false, b), 0x5C, 0xC0|byte(c)<<3|byte(a))...)
}

// ldtilecfg loads the tile configuration at (r) (r not SP, BP, R12, R13).
func ldtilecfg(r reg.GPPhysical) {
	n := gpNum(r)
	if n&7 == 4 || n&7 == 5 {
		panic("ldtilecfg: unencodable register")
	}
	amxBytes(fmt.Sprintf("ldtilecfg [%s]", gp64Name(r)), append(vex3(0, false, n >= 8, 0), 0x49, byte(n&7))...)
}

func tileRelease() { amxBytes("tilerelease", append(vex3(0, false, false, 0), 0x49, 0xC0)...) }

// genAMX generates bgemmAMX and its tile configuration.
func genAMX() {
	// Palette 1; tiles 0-7 of 16 rows of 64 bytes (colsb: 16-bit words
	// from byte 16, rows: bytes from byte 48).
	cfg := GLOBL("amxcfg", RODATA|NOPTR)
	DATA(0, U8(1))
	for t := 0; t < 8; t++ {
		DATA(16+2*t, U16(64))
	}
	for t := 0; t < 8; t++ {
		DATA(48+t, U8(16))
	}
	for off := 56; off < 64; off++ {
		DATA(off, U8(0))
	}

	TEXT("bgemmAMX", NOSPLIT, "func(kc int, a, b, c *float32, ldc int, accum int)")
	Pragma("noescape")
	Doc("bgemmAMX computes a 32×32 tile of C from panels of packed bfloat16 pairs with AMX-BF16 tiles (see package asm); kc is a multiple of 16.")
	n, a, b, c := reg.RCX, reg.RSI, reg.RDI, reg.RDX
	lda, ldb, ldc := reg.R8, reg.R9, reg.RBX // bytes between rows of A, B, C
	a1, c1 := reg.R10, reg.R11               // A rows 16-31, C rows 16-31
	Load(Param("a"), a)
	Load(Param("b"), b)
	Load(Param("c"), c)
	Load(Param("kc"), n)
	SHRQ(U8(4), n)
	MOVQ(U32(64), lda)
	LEAQ(Mem{Base: a, Disp: 1024}, a1)
	MOVQ(U32(128), ldb)
	Load(Param("ldc"), ldc)
	SHLQ(U8(2), ldc)
	MOVQ(ldc, c1)
	SHLQ(U8(4), c1)
	ADDQ(c, c1)
	cTiles := []amxMem{{c, ldc, 0}, {c, ldc, 64}, {c1, ldc, 0}, {c1, ldc, 64}}

	LEAQ(cfg, reg.RAX)
	ldtilecfg(reg.RAX)
	Load(Param("accum"), reg.RAX)
	TESTQ(reg.RAX, reg.RAX)
	JZ(LabelRef("amxzero"))
	for t, m := range cTiles {
		tileLoad(t, m)
	}
	JMP(LabelRef("amxloop0"))
	Label("amxzero")
	for t := range cTiles {
		tileZero(t)
	}
	Label("amxloop0")
	TESTQ(n, n)
	JZ(LabelRef("amxstore"))
	Label("amxloop")
	tileLoad(4, amxMem{a, lda, 0})
	tileLoad(5, amxMem{a1, lda, 0})
	tileLoad(6, amxMem{b, ldb, 0})
	tileLoad(7, amxMem{b, ldb, 64})
	tdpbf16(0, 4, 6)
	tdpbf16(1, 4, 7)
	tdpbf16(2, 5, 6)
	tdpbf16(3, 5, 7)
	ADDQ(U32(2048), a)
	ADDQ(U32(2048), a1)
	ADDQ(U32(16*128), b)
	DECQ(n)
	JNZ(LabelRef("amxloop"))
	Label("amxstore")
	for t, m := range cTiles {
		tileStore(t, m)
	}
	tileRelease()
	RET()
}

// genAMXRows generates amxRowsAVX512, bgemmAMX's A packer for rows of A
// whose k values are consecutive: for i < rows, q < nq and j < 16,
//
//	dst[q·qs + i·16 + j] = word 16q+j of row i if 16q+j < words, else 0
//
// where row i starts at src + i·ld (bfloat16 elements) and is read as
// 32-bit words (two consecutive k values, the lower in the low half): a
// masked 64-byte load and a store per tile row.
func genAMXRows() {
	TEXT("amxRowsAVX512", NOSPLIT, "func(dst *uint32, src *uint16, rows, ld, words, nq, qs int)")
	Pragma("noescape")
	Doc("amxRowsAVX512 packs rows of pair words into AMX A tiles (see genAMXRows in package asm).")
	dst, src, rows, ld, words, nq, qs := reg.RDI, reg.RSI, reg.RDX, reg.R8, reg.R9, reg.R10, reg.R11
	s, d, w, q := reg.R12, reg.R13, reg.RCX, reg.RBX
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("rows"), rows)
	Load(Param("ld"), ld)
	Load(Param("words"), words)
	Load(Param("nq"), nq)
	Load(Param("qs"), qs)
	SHLQ(U8(1), ld)
	SHLQ(U8(2), qs)
	TESTQ(rows, rows)
	JLE(LabelRef("amxrdone"))
	TESTQ(nq, nq)
	JLE(LabelRef("amxrdone"))
	Label("amxrrow")
	MOVQ(src, s)
	MOVQ(dst, d)
	MOVQ(words, w)
	MOVQ(nq, q)
	Label("amxrq")
	// the mask of min(max(w, 0), 16) lanes
	MOVL(U32(0xFFFF), reg.EAX)
	CMPQ(w, U8(16))
	JGE(LabelRef("amxrmask"))
	XORL(reg.EAX, reg.EAX)
	TESTQ(w, w)
	JLE(LabelRef("amxrmask"))
	MOVL(U32(1), reg.EAX)
	SHLL(reg.CL, reg.EAX)
	DECL(reg.EAX)
	Label("amxrmask")
	KMOVW(reg.EAX, reg.K1)
	VMOVDQU32_Z(Mem{Base: s}, reg.K1, reg.Z0)
	VMOVDQU32(reg.Z0, Mem{Base: d})
	ADDQ(U8(64), s)
	ADDQ(qs, d)
	SUBQ(U8(16), w)
	DECQ(q)
	JNE(LabelRef("amxrq"))
	ADDQ(ld, src)
	ADDQ(U8(64), dst)
	DECQ(rows)
	JNE(LabelRef("amxrrow"))
	Label("amxrdone")
	VZEROUPPER()
	RET()
}
