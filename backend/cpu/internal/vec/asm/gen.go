// Command asm generates the AVX2 loops of package vec with avo.
//
// Run it through go generate in the parent directory:
//
//	go generate ./backend/cpu/internal/vec
//
// Elementwise kernels handle any n (vectors of four registers, then one
// register, then scalars). Reductions take n a multiple of their block
// (32 float32 or 16 float64) and leave their per-lane partial results in an
// array the Go side finishes, with the remainder.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// typ is an element type.
type typ struct {
	double bool
}

func (t typ) size() int      { return map[bool]int{false: 4, true: 8}[t.double] }
func (t typ) lanes() int     { return 32 / t.size() } // per ymm register
func (t typ) gotype() string { return map[bool]string{false: "float32", true: "float64"}[t.double] }
func (t typ) sfx() string    { return map[bool]string{false: "S", true: "D"}[t.double] }

var (
	f32 = typ{false}
	f64 = typ{true}
)

// Instruction pickers: packed (ymm) and scalar (xmm) forms per type.
func (t typ) packed(op string) func(...Op) {
	m := map[string][2]func(...Op){
		"add": {VADDPS, VADDPD}, "sub": {VSUBPS, VSUBPD}, "mul": {VMULPS, VMULPD}, "div": {VDIVPS, VDIVPD},
		"max": {VMAXPS, VMAXPD}, "min": {VMINPS, VMINPD}, "mov": {VMOVUPS, VMOVUPD},
	}
	return m[op][b2i(t.double)]
}

func (t typ) scalar(op string) func(...Op) {
	m := map[string][2]func(...Op){
		"add": {VADDSS, VADDSD}, "sub": {VSUBSS, VSUBSD}, "mul": {VMULSS, VMULSD}, "div": {VDIVSS, VDIVSD},
		"max": {VMAXSS, VMAXSD}, "min": {VMINSS, VMINSD}, "mov": {VMOVSS, VMOVSD},
	}
	return m[op][b2i(t.double)]
}

func (t typ) bcast(src Op, dst Op) {
	if t.double {
		VBROADCASTSD(src, dst)
	} else {
		VBROADCASTSS(src, dst)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var ys = []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
	reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}

func xmm(y reg.VecPhysical) reg.VecPhysical { return y.AsX().(reg.VecPhysical) }

func mem(base reg.Register, disp int) Mem { return Mem{Base: base, Disp: disp} }

// loop emits the usual three-stage loop over n (in CX) elements: four
// registers at a time, one at a time, then one element at a time. body
// gets the register index and byte displacement (of the data; a cond
// pointer's is disp/size) and whether it is the scalar stage; ptrs are
// advanced by the elements consumed times their element size (t's unless
// listed in sizes).
func loop(t typ, name string, ptrs []reg.Register, sizes map[reg.Register]int, body func(i, disp int, scalar bool)) {
	n := reg.RCX
	vb := 32
	st := func(label string, regs, elems int, scalar bool, next string) {
		var adv []advance
		for _, p := range ptrs {
			size, ok := sizes[p]
			if !ok {
				size = t.size()
			}
			adv = append(adv, advance{p, elems * size})
		}
		stage(name, label, next, n, elems, adv, func() {
			for i := 0; i < regs; i++ {
				body(i, i*vb, scalar)
			}
		})
	}
	st("_x4", 4, 4*t.lanes(), false, "_x1")
	st("_x1", 1, t.lanes(), false, "_tail")
	st("_tail", 1, 1, true, "_done")
	done(name)
}

// advance is a pointer and the bytes it moves on by in one pass of a loop.
type advance struct {
	p     reg.Register
	bytes int
}

// stage emits a loop at name+label: while n ≥ elems, body, the pointers
// moved on and n reduced by elems; then on to name+next.
func stage(name, label, next string, n reg.Register, elems int, ptrs []advance, body func()) {
	Label(name + label)
	CMPQ(n, U32(elems))
	JL(LabelRef(name + next))
	body()
	for _, s := range ptrs {
		ADDQ(U32(s.bytes), s.p)
	}
	SUBQ(U32(elems), n)
	JMP(LabelRef(name + label))
}

// done emits name_done and the return.
func done(name string) {
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// blocks emits a loop over n elements (k scratch) in blocks of at most
// 2048: per block, the float32 lanes ys[0:4] zeroed, body run per elems
// elements (the pointers moved on), then flush; it ends at name_done.
func blocks(name string, n, k reg.Register, elems int, ptrs []advance, body, flush func()) {
	Label(name + "_block")
	TESTQ(n, n)
	JE(LabelRef(name + "_done"))
	MOVQ(n, k)
	CMPQ(k, U32(2048))
	JLE(LabelRef(name + "_k"))
	MOVQ(U32(2048), k)
	Label(name + "_k")
	SUBQ(k, n)
	for i := 0; i < 4; i++ {
		VXORPS(ys[i], ys[i], ys[i])
	}
	Label(name + "_inner")
	body()
	for _, s := range ptrs {
		ADDQ(U32(s.bytes), s.p)
	}
	SUBQ(U32(elems), k)
	JNE(LabelRef(name + "_inner"))
	flush()
	JMP(LabelRef(name + "_block"))
	Label(name + "_done")
}

// binary emits d[i] = a[i] op b[i] (form "vv"), a[i] op s ("vs") or
// s op b[i] ("sv").
func binary(t typ, op, form string) {
	name := op + form + t.sfx()
	g := t.gotype()
	var sig string
	switch form {
	case "vv":
		sig = fmt.Sprintf("func(d, a, b *%s, n int)", g)
	case "vs":
		sig = fmt.Sprintf("func(d, a *%s, s %s, n int)", g, g)
	case "sv":
		sig = fmt.Sprintf("func(d *%s, s %s, b *%s, n int)", g, g, g)
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes d[i] = %s for i < n.", name, map[string]string{"vv": "a[i] " + op + " b[i]", "vs": "a[i] " + op + " s", "sv": "s " + op + " b[i]"}[form]))
	d, a, b, n := reg.RDI, reg.RSI, reg.RDX, reg.RCX
	Load(Param("d"), d)
	Load(Param("n"), n)
	ptrs := []reg.Register{d}
	s := reg.Y15
	if form != "sv" {
		Load(Param("a"), a)
		ptrs = append(ptrs, a)
	}
	if form != "vs" {
		Load(Param("b"), b)
		ptrs = append(ptrs, b)
	}
	if form != "vv" {
		p, err := Param("s").Resolve()
		if err != nil {
			panic(err)
		}
		t.bcast(p.Addr, s)
	}
	loop(t, name, ptrs, nil, func(i, disp int, scalar bool) {
		y := ys[i]
		mov, f := t.packed("mov"), t.packed(op)
		sv := s
		if scalar {
			y, sv = xmm(y), xmm(s)
			mov, f = t.scalar("mov"), t.scalar(op)
		}
		switch form {
		case "vv":
			mov(mem(a, disp), y)
			f(mem(b, disp), y, y)
		case "vs":
			mov(mem(a, disp), y)
			f(sv, y, y)
		case "sv":
			f(mem(b, disp), sv, y)
		}
		mov(y, mem(d, disp))
	})
}

// relu emits d[i] = max(0, a[i]) with NaN kept and -0 made +0 (max then
// +0: Intel's max returns its second source for NaN and for equal zeros).
func relu(t typ) {
	name := "relu" + t.sfx()
	TEXT(name, NOSPLIT, fmt.Sprintf("func(d, a *%s, n int)", t.gotype()))
	Pragma("noescape")
	Doc(name + " computes d[i] = relu(a[i]) for i < n (NaN stays NaN).")
	d, a, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("a"), a)
	Load(Param("n"), n)
	z := reg.Y15
	VXORPS(z, z, z)
	loop(t, name, []reg.Register{d, a}, nil, func(i, disp int, scalar bool) {
		y, zz := ys[i], z
		mov, mx, add := t.packed("mov"), t.packed("max"), t.packed("add")
		if scalar {
			y, zz = xmm(y), xmm(z)
			mov, mx, add = t.scalar("mov"), t.scalar("max"), t.scalar("add")
		}
		mov(mem(a, disp), y)
		mx(y, zz, y) // Intel: max(src1 = 0, src2 = x)
		add(zz, y, y)
		mov(y, mem(d, disp))
	})
}

// reluGrad emits d[i] = y[i] <= 0 ? 0 : g[i] (ordered compare: a NaN y
// passes g), ReLU's gradient from its output y as PyTorch's
// threshold_backward: one pass instead of a comparison, a bool tensor and
// a blend.
func reluGrad(t typ) {
	name := "reluGrad" + t.sfx()
	g := t.gotype()
	TEXT(name, NOSPLIT, fmt.Sprintf("func(d, gr, y *%s, n int)", g))
	Pragma("noescape")
	Doc(name + " computes d[i] = y[i] <= 0 ? 0 : gr[i] for i < n (a NaN y passes gr[i]).")
	d, gp, yp, n := reg.RDI, reg.RSI, reg.RDX, reg.RCX
	Load(Param("d"), d)
	Load(Param("gr"), gp)
	Load(Param("y"), yp)
	Load(Param("n"), n)
	z := reg.Y15
	VXORPS(z, z, z)
	const le = 0x02 // LE_OS: false for NaN
	loop(t, name, []reg.Register{d, gp, yp}, nil, func(i, disp int, scalar bool) {
		m, v, zz := ys[i], ys[8+i%7], z
		mov := t.packed("mov")
		cmp, andn := VCMPPS, VANDNPS
		if t.double {
			cmp, andn = VCMPPD, VANDNPD
		}
		if scalar {
			m, v, zz = xmm(m), xmm(v), xmm(z)
			mov = t.scalar("mov")
			cmp = VCMPSS
			if t.double {
				cmp = VCMPSD
			}
		}
		mov(mem(yp, disp), m)
		cmp(U8(le), zz, m, m) // m = y <= 0 (all ones)
		mov(mem(gp, disp), v)
		andn(v, m, m) // m = ^m & g
		mov(m, mem(d, disp))
	})
}

// affine emits d[i] = a[i]·s + b with one rounding (FMA).
func affine(t typ) {
	name := "affine" + t.sfx()
	g := t.gotype()
	TEXT(name, NOSPLIT, fmt.Sprintf("func(d, a *%s, s, b %s, n int)", g, g))
	Pragma("noescape")
	Doc(name + " computes d[i] = a[i]·s + b, rounded once (FMA), for i < n.")
	d, a, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("a"), a)
	Load(Param("n"), n)
	sv, bv := reg.Y14, reg.Y15
	for _, x := range []struct {
		name string
		r    reg.VecPhysical
	}{{"s", sv}, {"b", bv}} {
		p, err := Param(x.name).Resolve()
		if err != nil {
			panic(err)
		}
		t.bcast(p.Addr, x.r)
	}
	fma, fmaS := VFMADD213PS, VFMADD213SS
	if t.double {
		fma, fmaS = VFMADD213PD, VFMADD213SD
	}
	loop(t, name, []reg.Register{d, a}, nil, func(i, disp int, scalar bool) {
		y, s1, b1 := ys[i], sv, bv
		mov, f := t.packed("mov"), fma
		if scalar {
			y, s1, b1 = xmm(y), xmm(sv), xmm(bv)
			mov, f = t.scalar("mov"), fmaS
		}
		mov(mem(a, disp), y)
		f(b1, s1, y) // y = s·y + b
		mov(y, mem(d, disp))
	})
}

// fmaV emits d[i] = a[i]·s[i] + b[i], rounded once (FMA): affine with a
// coefficient per element (batch norm's tiny planes, their channels'
// coefficients spread over an image).
func fmaV(t typ) {
	name := "fmav" + t.sfx()
	g := t.gotype()
	TEXT(name, NOSPLIT, fmt.Sprintf("func(d, a, s, b *%s, n int)", g))
	Pragma("noescape")
	Doc(name + " computes d[i] = a[i]·s[i] + b[i], rounded once (FMA), for i < n.")
	d, a, sp, bp, n := reg.RDI, reg.RSI, reg.RDX, reg.RBX, reg.RCX
	Load(Param("d"), d)
	Load(Param("a"), a)
	Load(Param("s"), sp)
	Load(Param("b"), bp)
	Load(Param("n"), n)
	fma, fmaS := VFMADD213PS, VFMADD213SS
	if t.double {
		fma, fmaS = VFMADD213PD, VFMADD213SD
	}
	loop(t, name, []reg.Register{d, a, sp, bp}, nil, func(i, disp int, scalar bool) {
		y, z := ys[i], ys[4+i]
		mov, f := t.packed("mov"), fma
		if scalar {
			y, z = xmm(y), xmm(z)
			mov, f = t.scalar("mov"), fmaS
		}
		mov(mem(a, disp), y)
		mov(mem(sp, disp), z)
		f(mem(bp, disp), z, y) // y = s·y + b
		mov(y, mem(d, disp))
	})
}

// fill emits d[i] = v.
func fill(t typ) {
	name := "fill" + t.sfx()
	TEXT(name, NOSPLIT, fmt.Sprintf("func(d *%s, v %s, n int)", t.gotype(), t.gotype()))
	Pragma("noescape")
	Doc(name + " sets d[i] = v for i < n.")
	d, n := reg.RDI, reg.RCX
	Load(Param("d"), d)
	Load(Param("n"), n)
	v := reg.Y15
	p, err := Param("v").Resolve()
	if err != nil {
		panic(err)
	}
	t.bcast(p.Addr, v)
	loop(t, name, []reg.Register{d}, nil, func(i, disp int, scalar bool) {
		if scalar {
			t.scalar("mov")(xmm(v), mem(d, disp))
		} else {
			t.packed("mov")(v, mem(d, disp))
		}
	})
}

// where emits d[i] = c[i] ? a[i] : b[i] with a or b a vector or a scalar
// s (forms "vv", "vs", "sv"); c is []bool (bytes 0 or 1).
func where(t typ, form string) {
	name := "where" + form + t.sfx()
	g := t.gotype()
	sig := map[string]string{
		"vv": fmt.Sprintf("func(d *%s, c *bool, a, b *%s, n int)", g, g),
		"vs": fmt.Sprintf("func(d *%s, c *bool, a *%s, s %s, n int)", g, g, g),
		"sv": fmt.Sprintf("func(d *%s, c *bool, s %s, b *%s, n int)", g, g, g),
	}[form]
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes d[i] = c[i] ? %s : %s for i < n.", name,
		map[bool]string{true: "s", false: "a[i]"}[form == "sv"], map[bool]string{true: "s", false: "b[i]"}[form == "vs"]))
	d, c, a, b, n := reg.RDI, reg.R8, reg.RSI, reg.RDX, reg.RCX
	Load(Param("d"), d)
	Load(Param("c"), c)
	Load(Param("n"), n)
	ptrs := []reg.Register{d, c}
	if form != "sv" {
		Load(Param("a"), a)
		ptrs = append(ptrs, a)
	}
	if form != "vs" {
		Load(Param("b"), b)
		ptrs = append(ptrs, b)
	}
	s, zero := reg.Y14, reg.Y15
	if form != "vv" {
		p, err := Param("s").Resolve()
		if err != nil {
			panic(err)
		}
		t.bcast(p.Addr, s)
	}
	VPXOR(zero, zero, zero)
	ext, eq, blend := VPMOVZXBD, VPCMPEQD, VBLENDVPS
	if t.double {
		ext, eq, blend = VPMOVZXBQ, VPCMPEQQ, VBLENDVPD
	}
	mov := t.packed("mov")
	loop(t, name, ptrs, map[reg.Register]int{c: 1}, func(i, disp int, scalar bool) {
		if scalar {
			smov := t.scalar("mov")
			x := reg.X0
			MOVBLZX(mem(c, 0), reg.EAX)
			TESTL(reg.EAX, reg.EAX)
			JE(LabelRef(name + "_false"))
			if form == "sv" {
				VMOVAPS(xmm(s), x)
			} else {
				smov(mem(a, 0), x)
			}
			JMP(LabelRef(name + "_store"))
			Label(name + "_false")
			if form == "vs" {
				VMOVAPS(xmm(s), x)
			} else {
				smov(mem(b, 0), x)
			}
			Label(name + "_store")
			smov(x, mem(d, 0))
			return
		}
		m, v := ys[i], ys[4+i]
		ext(mem(c, disp/t.size()), m)
		eq(zero, m, m) // all ones where c is false: take b there
		switch form {
		case "vv":
			mov(mem(a, disp), v)
			blend(m, mem(b, disp), v, v)
		case "vs":
			mov(mem(a, disp), v)
			blend(m, s, v, v)
		case "sv":
			blend(m, mem(b, disp), s, v)
		}
		mov(v, mem(d, disp))
	})
}

// trans emits a transposition of nblk k×k blocks (k = lanes of a ymm
// register): block b reads k rows of k elements at s + (kb+i)*lds and
// writes them as columns, d[r*ldd + kb + i] = s[(kb+i)*lds + r]; shuffle
// turns the k loaded rows r into the k columns, returned in order.
func trans(t typ, shuffle func(r []reg.VecPhysical) []reg.VecPhysical) {
	k := t.lanes()
	name := "trans" + t.sfx()
	TEXT(name, NOSPLIT, fmt.Sprintf("func(d *%s, ldd int, s *%s, lds int, nblk int)", t.gotype(), t.gotype()))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s transposes nblk %d×%d %s blocks: d[r*ldd + %db + i] = s[(%db+i)*lds + r] for r, i < %d.", name, k, k, t.gotype(), k, k, k))
	d, ldd, sp, lds, n := reg.RDI, reg.R8, reg.RSI, reg.R9, reg.RCX
	Load(Param("d"), d)
	Load(Param("ldd"), ldd)
	Load(Param("s"), sp)
	Load(Param("lds"), lds)
	Load(Param("nblk"), n)
	shift := U8(map[bool]uint8{false: 2, true: 3}[t.double])
	SHLQ(shift, ldd)
	SHLQ(shift, lds)
	p, q := reg.RAX, reg.RDX
	mov := t.packed("mov")
	Label(name + "_loop")
	TESTQ(n, n)
	JE(LabelRef(name + "_done"))
	r := ys[:k]
	MOVQ(sp, p)
	for i := 0; i < k; i++ {
		mov(Mem{Base: p}, r[i])
		if i < k-1 {
			ADDQ(lds, p)
		}
	}
	cols := shuffle(r)
	MOVQ(d, q)
	for i := 0; i < k; i++ {
		mov(cols[i], Mem{Base: q})
		if i < k-1 {
			ADDQ(ldd, q)
		}
	}
	// next block: k source rows on, k destination columns (32 bytes) on
	MOVQ(lds, p)
	SHLQ(U8(bitsOf(k)), p)
	ADDQ(p, sp)
	ADDQ(U8(32), d)
	DECQ(n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func bitsOf(k int) uint8 { return map[int]uint8{4: 2, 8: 3}[k] }

// shuffle8S transposes 8 rows of 8 float32 in registers (unpack pairs,
// shuffle quads, swap 128-bit halves).
func shuffle8S(r []reg.VecPhysical) []reg.VecPhysical {
	t := ys[8:16]
	for i := 0; i < 4; i++ {
		VUNPCKLPS(r[2*i+1], r[2*i], t[2*i])
		VUNPCKHPS(r[2*i+1], r[2*i], t[2*i+1])
	}
	// r0 = a0 b0 c0 d0 | a4 b4 c4 d4, r1 = a1 b1 c1 d1 | a5 ..., and so on
	VSHUFPS(U8(0x44), t[2], t[0], r[0])
	VSHUFPS(U8(0xEE), t[2], t[0], r[1])
	VSHUFPS(U8(0x44), t[3], t[1], r[2])
	VSHUFPS(U8(0xEE), t[3], t[1], r[3])
	VSHUFPS(U8(0x44), t[6], t[4], r[4])
	VSHUFPS(U8(0xEE), t[6], t[4], r[5])
	VSHUFPS(U8(0x44), t[7], t[5], r[6])
	VSHUFPS(U8(0xEE), t[7], t[5], r[7])
	for i := 0; i < 4; i++ {
		VPERM2F128(U8(0x20), r[4+i], r[i], t[i])
		VPERM2F128(U8(0x31), r[4+i], r[i], t[4+i])
	}
	return t
}

// shuffle4D transposes 4 rows of 4 float64 in registers.
func shuffle4D(r []reg.VecPhysical) []reg.VecPhysical {
	t := ys[4:8]
	VUNPCKLPD(r[1], r[0], t[0]) // a0 b0 | a2 b2
	VUNPCKHPD(r[1], r[0], t[1]) // a1 b1 | a3 b3
	VUNPCKLPD(r[3], r[2], t[2]) // c0 d0 | c2 d2
	VUNPCKHPD(r[3], r[2], t[3]) // c1 d1 | c3 d3
	VPERM2F128(U8(0x20), t[2], t[0], r[0])
	VPERM2F128(U8(0x20), t[3], t[1], r[1])
	VPERM2F128(U8(0x31), t[2], t[0], r[2])
	VPERM2F128(U8(0x31), t[3], t[1], r[3])
	return r
}

// sumS adds n (a multiple of 32) float32 in 32 float32 lanes over blocks
// of at most 2048 elements (64 per lane), each block's lanes then added
// into 32 float64 lanes: acc receives those 32 partial sums.
func sumS() { sumLanes("sumS", false) }

// sumBF16 is sumS on bfloat16 bits, widened in registers by a shift and a
// mask (no shuffles): the same lanes, blocks and partial sums as sumS on
// the widened float32 copy.
func sumBF16() { sumLanes("sumBF16", true) }

// sumLanes emits sumS, or sumBF16 when bf16.
func sumLanes(name string, bf16 bool) {
	if bf16 {
		TEXT(name, NOSPLIT, "func(x *uint16, n int, acc *[32]float64)")
		Pragma("noescape")
		Doc(name + " adds the bfloat16 x[:n] (n a multiple of 32) into 32 float64 partial sums (float32 lanes over blocks of 2048).")
	} else {
		TEXT(name, NOSPLIT, "func(x *float32, n int, acc *[32]float64)")
		Pragma("noescape")
		Doc(name + " adds x[:n] (n a multiple of 32) into 32 float64 partial sums (float32 lanes over blocks of 2048).")
	}
	x, n, k, p := reg.RSI, reg.RCX, reg.RDX, reg.RDI
	Load(Param("x"), x)
	Load(Param("n"), n)
	Load(Param("acc"), p)
	for i := 0; i < 8; i++ { // the partial sums so far: x is added to them
		VMOVUPD(mem(p, 32*i), ys[8+i])
	}
	body := func() {
		for i := 0; i < 4; i++ {
			VADDPS(mem(x, 32*i), ys[i], ys[i])
		}
	}
	xb := 128 // bytes of x a pass
	var order func()
	if bf16 {
		// Widening without shuffles: a dword holds two bfloat16, the even
		// element in its low half. Shifted left 16 it is the even element's
		// float32, masked to its high half the odd one's. ys[0], ys[1] sum
		// the even and odd elements of the first 16 of a pass, ys[2], ys[3]
		// of the second 16: each float32 lane still adds the elements
		// j ≡ lane (mod 32) in order, as sumS's lanes do, and order puts the
		// lanes back in element order before a block's flush.
		mask := reg.Y6
		konst(0xFFFF0000, mask)
		body = func() {
			for h := 0; h < 2; h++ {
				v, e := reg.Y4, reg.Y5
				VMOVDQU(mem(x, 32*h), v)
				VPSLLD(U8(16), v, e)
				VPAND(mask, v, v)
				VADDPS(e, ys[2*h], ys[2*h])
				VADDPS(v, ys[2*h+1], ys[2*h+1])
			}
		}
		order = func() {
			for h := 0; h < 2; h++ {
				ev, od := ys[2*h], ys[2*h+1]
				VUNPCKLPS(od, ev, reg.Y4) // 0 1 2 3 | 8 9 10 11
				VUNPCKHPS(od, ev, reg.Y5) // 4 5 6 7 | 12 13 14 15
				VPERM2F128(U8(0x20), reg.Y5, reg.Y4, ev)
				VPERM2F128(U8(0x31), reg.Y5, reg.Y4, od)
			}
		}
		xb = 64
	}
	blocks(name, n, k, 32, []advance{{x, xb}}, body, func() {
		if order != nil {
			order()
		}
		for i := 0; i < 4; i++ {
			lo, hi := ys[8+2*i], ys[9+2*i]
			VCVTPS2PD(xmm(ys[i]), reg.Y4)
			VADDPD(reg.Y4, lo, lo)
			VEXTRACTF128(U8(1), ys[i], reg.X5)
			VCVTPS2PD(reg.X5, reg.Y5)
			VADDPD(reg.Y5, hi, hi)
		}
	})
	for i := 0; i < 8; i++ {
		VMOVUPD(ys[8+i], mem(p, 32*i))
	}
	VZEROUPPER()
	RET()
}

// sumD adds n (a multiple of 16) float64 into 16 lanes.
func sumD() {
	TEXT("sumD", NOSPLIT, "func(x *float64, n int, acc *[16]float64)")
	Pragma("noescape")
	Doc("sumD adds x[:n] (n a multiple of 16) into 16 partial sums.")
	x, n, p := reg.RSI, reg.RCX, reg.RDI
	Load(Param("x"), x)
	Load(Param("n"), n)
	for i := 0; i < 4; i++ {
		VXORPD(ys[i], ys[i], ys[i])
	}
	Label("sumD_loop")
	TESTQ(n, n)
	JE(LabelRef("sumD_done"))
	for i := 0; i < 4; i++ {
		VADDPD(mem(x, 32*i), ys[i], ys[i])
	}
	ADDQ(U32(128), x)
	SUBQ(U32(16), n)
	JMP(LabelRef("sumD_loop"))
	Label("sumD_done")
	Load(Param("acc"), p)
	for i := 0; i < 4; i++ {
		VMOVUPD(ys[i], mem(p, 32*i))
	}
	VZEROUPPER()
	RET()
}

// extreme emits max or min over n (a multiple of four registers' lanes,
// at least that many): the lanes go to out, and it returns nonzero when
// some element is NaN (tracked apart, as max/min instructions drop NaNs).
func extreme(t typ, op string) {
	name := op + t.sfx()
	L := 4 * t.lanes()
	TEXT(name, NOSPLIT, fmt.Sprintf("func(x *%s, n int, out *[%d]%s) int", t.gotype(), L, t.gotype()))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s reduces x[:n] (n a positive multiple of %d) to %d lanes of %s in out; it returns nonzero when x holds a NaN.", name, L, L, op))
	x, n, p, r := reg.RSI, reg.RCX, reg.RDI, reg.RAX
	Load(Param("x"), x)
	Load(Param("n"), n)
	mov, f := t.packed("mov"), t.packed(op)
	cmp := VCMPPS
	msk := VMOVMSKPS
	if t.double {
		cmp, msk = VCMPPD, VMOVMSKPD
	}
	for i := 0; i < 4; i++ {
		mov(mem(x, 32*i), ys[i])
		cmp(U8(3), ys[i], ys[i], ys[4+i]) // unordered: NaN lanes
	}
	ADDQ(U32(128), x)
	SUBQ(U32(L), n)
	Label(name + "_loop")
	TESTQ(n, n)
	JE(LabelRef(name + "_done"))
	for i := 0; i < 4; i++ {
		v := ys[8+i]
		mov(mem(x, 32*i), v)
		cmp(U8(3), v, v, ys[12+i])
		VORPS(ys[12+i], ys[4+i], ys[4+i])
		f(v, ys[i], ys[i])
	}
	ADDQ(U32(128), x)
	SUBQ(U32(L), n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	Load(Param("out"), p)
	for i := 0; i < 4; i++ {
		mov(ys[i], mem(p, 32*i))
	}
	VORPS(reg.Y5, reg.Y4, reg.Y4)
	VORPS(reg.Y7, reg.Y6, reg.Y6)
	VORPS(reg.Y6, reg.Y4, reg.Y4)
	XORQ(r, r)
	msk(reg.Y4, reg.EAX)
	Store(r, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// konst broadcasts the 32-bit constant c into every lane of y.
func konst(c uint32, y reg.VecPhysical) {
	MOVL(U32(c), reg.EAX)
	VMOVD(reg.EAX, xmm(y))
	VPBROADCASTD(xmm(y), y)
}

// bf16FromS emits the narrowing of float32 to bfloat16 bits, 16 elements
// at a time (n a multiple of 16): h = (u + 0x7FFF + (u>>16)&1) >> 16,
// 0xFFFF where |u| is a NaN, as backend.ToBF16.
func bf16FromS() {
	TEXT("bf16FromS", NOSPLIT, "func(d *uint16, s *float32, n int)")
	Pragma("noescape")
	Doc("bf16FromS sets d[i] to the bfloat16 bits of s[i] (round to nearest even, NaN 0xFFFF) for i < n, n a multiple of 16.")
	d, src, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("s"), src)
	Load(Param("n"), n)
	one, bias, abs, inf, low := reg.Y15, reg.Y14, reg.Y13, reg.Y12, reg.Y11
	konst(1, one)
	konst(0x7FFF, bias)
	konst(0x7FFFFFFF, abs)
	konst(0x7F800000, inf)
	konst(0xFFFF, low)
	Label("bf16FromS_loop")
	CMPQ(n, U32(16))
	JL(LabelRef("bf16FromS_done"))
	for k := 0; k < 2; k++ {
		u, t, m := ys[k], ys[2+k], ys[4+k]
		VMOVDQU(mem(src, 32*k), u)
		VPSRLD(U8(16), u, t)
		VPAND(one, t, t)
		VPADDD(u, t, t)
		VPADDD(bias, t, t)
		VPSRLD(U8(16), t, t)
		VPAND(abs, u, m)
		VPCMPGTD(inf, m, m) // Intel: m = |u| > inf, a NaN
		VPOR(m, t, t)
		VPAND(low, t, t)
	}
	VPACKUSDW(ys[3], ys[2], ys[6]) // per 128-bit lane: elements 0-3, 8-11 | 4-7, 12-15
	VPERMQ(U8(0xD8), ys[6], ys[6])
	VMOVDQU(ys[6], mem(d, 0))
	ADDQ(U32(64), src)
	ADDQ(U32(32), d)
	SUBQ(U32(16), n)
	JMP(LabelRef("bf16FromS_loop"))
	Label("bf16FromS_done")
	VZEROUPPER()
	RET()
}

// sFromBF16 emits the widening of bfloat16 bits to float32, 32 elements at
// a time (n a multiple of 32): the bits shifted into the top half.
func sFromBF16() {
	TEXT("sFromBF16", NOSPLIT, "func(d *float32, s *uint16, n int)")
	Pragma("noescape")
	Doc("sFromBF16 sets d[i] to the float32 value of the bfloat16 bits s[i] for i < n, n a multiple of 32.")
	d, src, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("s"), src)
	Load(Param("n"), n)
	Label("sFromBF16_loop")
	CMPQ(n, U32(32))
	JL(LabelRef("sFromBF16_done"))
	for k := 0; k < 4; k++ {
		VPMOVZXWD(mem(src, 16*k), ys[k])
		VPSLLD(U8(16), ys[k], ys[k])
		VMOVDQU(ys[k], mem(d, 32*k))
	}
	ADDQ(U32(64), src)
	ADDQ(U32(128), d)
	SUBQ(U32(32), n)
	JMP(LabelRef("sFromBF16_loop"))
	Label("sFromBF16_done")
	VZEROUPPER()
	RET()
}

// f16FromS emits the narrowing of float32 to binary16 bits with F16C, 16
// elements at a time (n a multiple of 16): VCVTPS2PH rounding to nearest
// even (subnormals, overflow to infinity as backend.ToF16), a NaN first
// replaced by the quiet NaN of its sign without payload, so that it
// becomes 0x7E00 or 0xFE00.
func f16FromS() {
	TEXT("f16FromS", NOSPLIT, "func(d *uint16, s *float32, n int)")
	Pragma("noescape")
	Doc("f16FromS sets d[i] to the binary16 bits of s[i] (round to nearest even, a NaN 0x7E00 of its sign) for i < n, n a multiple of 16.")
	d, src, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("s"), src)
	Load(Param("n"), n)
	abs, inf, qnan, sgn := reg.Y15, reg.Y14, reg.Y13, reg.Y12
	konst(0x7FFFFFFF, abs)
	konst(0x7F800000, inf)
	konst(0x7FC00000, qnan)
	konst(0x80000000, sgn)
	Label("f16FromS_loop")
	CMPQ(n, U32(16))
	JL(LabelRef("f16FromS_done"))
	for k := 0; k < 2; k++ {
		u, m, t := ys[3*k], ys[3*k+1], ys[3*k+2]
		VMOVDQU(mem(src, 32*k), u)
		VPAND(abs, u, m)
		VPCMPGTD(inf, m, m) // a NaN
		VPAND(sgn, u, t)
		VPOR(qnan, t, t)
		VPBLENDVB(m, t, u, u) // u = m ? t : u
		VCVTPS2PH(U8(0), u, mem(d, 16*k))
	}
	ADDQ(U32(64), src)
	ADDQ(U32(32), d)
	SUBQ(U32(16), n)
	JMP(LabelRef("f16FromS_loop"))
	Label("f16FromS_done")
	VZEROUPPER()
	RET()
}

// sFromF16 emits the widening of binary16 bits to float32 with F16C, 16
// elements at a time (n a multiple of 16): VCVTPH2PS is exact, except that
// it quiets a signalling NaN, so NaNs are rebuilt from their bits (sign,
// all-ones exponent, the 10 payload bits shifted up), as F16.Float32.
func sFromF16() {
	TEXT("sFromF16", NOSPLIT, "func(d *float32, s *uint16, n int)")
	Pragma("noescape")
	Doc("sFromF16 sets d[i] to the float32 value of the binary16 bits s[i] for i < n, n a multiple of 16.")
	d, src, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("s"), src)
	Load(Param("n"), n)
	mag, inf16, sgn16, man, exp32 := reg.Y15, reg.Y14, reg.Y13, reg.Y12, reg.Y11
	konst(0x7FFF, mag)
	konst(0x7C00, inf16)
	konst(0x8000, sgn16)
	konst(0x3FF, man)
	konst(0x7F800000, exp32)
	Label("sFromF16_loop")
	CMPQ(n, U32(16))
	JL(LabelRef("sFromF16_done"))
	for k := 0; k < 2; k++ {
		w, r, m, s, p := ys[5*k], ys[5*k+1], ys[5*k+2], ys[5*k+3], ys[5*k+4]
		VPMOVZXWD(mem(src, 16*k), w)
		VCVTPH2PS(mem(src, 16*k), r)
		VPAND(mag, w, m)
		VPCMPGTD(inf16, m, m) // a NaN
		VPAND(sgn16, w, s)
		VPSLLD(U8(16), s, s)
		VPAND(man, w, p)
		VPSLLD(U8(13), p, p)
		VPOR(p, s, s)
		VPOR(exp32, s, s)
		VPBLENDVB(m, s, r, r) // r = m ? s : r
		VMOVDQU(r, mem(d, 32*k))
	}
	ADDQ(U32(32), src)
	ADDQ(U32(64), d)
	SUBQ(U32(16), n)
	JMP(LabelRef("sFromF16_loop"))
	Label("sFromF16_done")
	VZEROUPPER()
	RET()
}

// reluBF16 emits ReLU on bfloat16 bits, 16 elements at a time (n a
// multiple of 16): a signed 16-bit max with 0 clears negatives and -0, and
// NaNs (magnitude above 0x7F80) become 0xFFFF.
func reluBF16() {
	TEXT("reluBF16", NOSPLIT, "func(d, a *uint16, n int)")
	Pragma("noescape")
	Doc("reluBF16 sets d[i] to the bfloat16 bits of relu(a[i]) (+0 for negatives and -0, 0xFFFF for NaNs) for i < n, n a multiple of 16.")
	d, a, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("a"), a)
	Load(Param("n"), n)
	zero, mag, inf := reg.Y15, reg.Y14, reg.Y13
	VPXOR(zero, zero, zero)
	konst(0x7FFF7FFF, mag)
	konst(0x7F807F80, inf)
	Label("reluBF16_loop")
	CMPQ(n, U32(32))
	JL(LabelRef("reluBF16_x1"))
	for k := 0; k < 2; k++ {
		h, m := ys[2*k], ys[2*k+1]
		VMOVDQU(mem(a, 32*k), h)
		VPAND(mag, h, m)
		VPCMPGTW(inf, m, m) // a NaN
		VPMAXSW(zero, h, h)
		VPOR(m, h, h)
		VMOVDQU(h, mem(d, 32*k))
	}
	ADDQ(U32(64), a)
	ADDQ(U32(64), d)
	SUBQ(U32(32), n)
	JMP(LabelRef("reluBF16_loop"))
	Label("reluBF16_x1")
	CMPQ(n, U32(16))
	JL(LabelRef("reluBF16_done"))
	h, m := ys[0], ys[1]
	VMOVDQU(mem(a, 0), h)
	VPAND(mag, h, m)
	VPCMPGTW(inf, m, m)
	VPMAXSW(zero, h, h)
	VPOR(m, h, h)
	VMOVDQU(h, mem(d, 0))
	Label("reluBF16_done")
	VZEROUPPER()
	RET()
}

// bf16Key turns the bfloat16 bits in y into order keys in place: signed
// 16-bit integers that compare as the values do (-0 below +0), a NaN the
// largest key 0x7FFF. t and m are scratch; mag, inf and top hold 0x7FFF,
// 0x7F80 and 0x7FFF in every word.
func bf16Key(y, t, m, mag, inf reg.VecPhysical) {
	VPSRAW(U8(15), y, t)
	VPAND(mag, t, t)
	VPAND(mag, y, m)
	VPXOR(t, y, y)
	VPCMPGTW(inf, m, m) // a NaN
	VPBLENDVB(m, mag, y, y)
}

// maxKeysBF16 emits the order keys of bfloat16 rows, 16 elements at a
// time (n a multiple of 16): k[i] = key(s[i]), or max(k[i], key(s[i]))
// with acc.
func maxKeysBF16(acc bool) {
	name := map[bool]string{false: "keysBF16", true: "maxKeysBF16"}[acc]
	TEXT(name, NOSPLIT, "func(k *int16, s *uint16, n int)")
	Pragma("noescape")
	if acc {
		Doc(name + " sets k[i] = max(k[i], the order key of the bfloat16 bits s[i]) for i < n, n a multiple of 16.")
	} else {
		Doc(name + " sets k[i] to the order key of the bfloat16 bits s[i] (signed, ordered as the values, -0 below +0, NaN 0x7FFF) for i < n, n a multiple of 16.")
	}
	k, src, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("k"), k)
	Load(Param("s"), src)
	Load(Param("n"), n)
	mag, inf := reg.Y15, reg.Y14
	konst(0x7FFF7FFF, mag)
	konst(0x7F807F80, inf)
	keys := func(label, next string, regs int) {
		stage(name, label, next, n, 16*regs, []advance{{src, 32 * regs}, {k, 32 * regs}}, func() {
			for r := 0; r < regs; r++ {
				y, t, m := ys[3*r], ys[3*r+1], ys[3*r+2]
				VMOVDQU(mem(src, 32*r), y)
				bf16Key(y, t, m, mag, inf)
				if acc {
					VPMAXSW(mem(k, 32*r), y, y)
				}
				VMOVDQU(y, mem(k, 32*r))
			}
		})
	}
	keys("_x4", "_x1", 4)
	keys("_x1", "_done", 1)
	done(name)
}

// keysToBF16 turns order keys in y back into bfloat16 bits in place, the
// NaN key into 0xFFFF. t and e are scratch; mag holds 0x7FFF in every word.
func keysToBF16(y, t, e, mag reg.VecPhysical) {
	VPCMPEQW(mag, y, e) // the NaN key, which is its own inverse
	VPSRAW(U8(15), y, t)
	VPAND(mag, t, t)
	VPXOR(t, y, y)
	VPOR(e, y, y)
}

// windowMaxBF16 emits window maxima of a row of order keys at stride sw
// (1 or 2), 16 outputs at a time (n a multiple of 16): o[j] = the
// bfloat16 bits of max(k[sw*j : sw*j+kw]), kw ≥ 1. At stride 2 it reads
// k[2n+kw-2] besides, one key past the last window.
func windowMaxBF16(sw int) {
	name := fmt.Sprintf("windowMaxS%dBF16", sw)
	TEXT(name, NOSPLIT, "func(o *uint16, k *int16, n, kw int)")
	Pragma("noescape")
	extra := ""
	if sw == 2 {
		extra = "; it reads k[2n+kw-2] too"
	}
	Doc(fmt.Sprintf("%s sets o[j] to the bfloat16 bits of max(k[%d*j : %d*j+kw]) (order keys; NaN 0xFFFF) for j < n, n a multiple of 16, kw ≥ 1%s.", name, sw, sw, extra))
	o, k, n, kw, t, p := reg.RDI, reg.RSI, reg.RCX, reg.RDX, reg.R8, reg.R9
	Load(Param("o"), o)
	Load(Param("k"), k)
	Load(Param("n"), n)
	Load(Param("kw"), kw)
	mag := reg.Y15
	konst(0x7FFF7FFF, mag)
	// window emits the pass over keys 1..kw-1 of each window, p at key t
	// of output 0's
	window := func(each func()) {
		MOVQ(k, p)
		MOVQ(U32(1), t)
		Label(name + "_win")
		CMPQ(t, kw)
		JGE(LabelRef(name + "_out"))
		ADDQ(U32(2), p)
		each()
		INCQ(t)
		JMP(LabelRef(name + "_win"))
		Label(name + "_out")
	}
	stage(name, "_loop", "_done", n, 16, []advance{{k, 32 * sw}, {o, 32}}, func() {
		if sw == 1 {
			a, v, e := ys[0], ys[1], ys[2]
			VMOVDQU(mem(k, 0), a)
			window(func() { VPMAXSW(mem(p, 0), a, a) })
			keysToBF16(a, v, e, mag)
			VMOVDQU(a, mem(o, 0))
			return
		}
		// as dwords, window element t of output j is the low word of the
		// dword at key 2j+t: shifted into the high word (the low one
		// zero), the word maxima keep it
		a0, a1, v0, v1 := ys[0], ys[1], ys[2], ys[3]
		load := func(at reg.Register, r0, r1 reg.VecPhysical) {
			VMOVDQU(mem(at, 0), r0)
			VMOVDQU(mem(at, 32), r1)
			VPSLLD(U8(16), r0, r0)
			VPSLLD(U8(16), r1, r1)
		}
		load(k, a0, a1)
		window(func() {
			load(p, v0, v1)
			VPMAXSW(v0, a0, a0)
			VPMAXSW(v1, a1, a1)
		})
		keysToBF16(a0, v0, ys[4], mag)
		keysToBF16(a1, v1, ys[5], mag)
		VPSRLD(U8(16), a0, a0)
		VPSRLD(U8(16), a1, a1)
		VPACKUSDW(a1, a0, a0) // per 128-bit lane: outputs 0-3, 8-11 | 4-7, 12-15
		VPERMQ(U8(0xD8), a0, a0)
		VMOVDQU(a0, mem(o, 0))
	})
	done(name)
}

// widenBF16 loads 8 bfloat16 at m into y as float32 (the bits shifted
// into the top half).
func widenBF16(m Mem, y reg.VecPhysical) {
	VPMOVZXWD(m, y)
	VPSLLD(U8(16), y, y)
}

// bf16Consts holds the registers of the narrowing constants.
type bf16Consts struct{ one, bias, abs, inf, low reg.VecPhysical }

func newBF16Consts(one, bias, abs, inf, low reg.VecPhysical) bf16Consts {
	konst(1, one)
	konst(0x7FFF, bias)
	konst(0x7FFFFFFF, abs)
	konst(0x7F800000, inf)
	konst(0xFFFF, low)
	return bf16Consts{one, bias, abs, inf, low}
}

// narrowBF16 rounds the float32 in u0 (elements 0-7) and u1 (8-15) to
// bfloat16 bits as bf16FromS does and stores them at dst; s holds four
// scratch registers. u0 and u1 are clobbered.
func narrowBF16(c bf16Consts, u0, u1 reg.VecPhysical, s [4]reg.VecPhysical, dst Mem) {
	for k, u := range []reg.VecPhysical{u0, u1} {
		t, m := s[k], s[2+k]
		VPSRLD(U8(16), u, t)
		VPAND(c.one, t, t)
		VPADDD(u, t, t)
		VPADDD(c.bias, t, t)
		VPSRLD(U8(16), t, t)
		VPAND(c.abs, u, m)
		VPCMPGTD(c.inf, m, m) // a NaN
		VPOR(m, t, t)
		VPAND(c.low, t, t)
	}
	VPACKUSDW(s[1], s[0], u0) // per 128-bit lane: elements 0-3, 8-11 | 4-7, 12-15
	VPERMQ(U8(0xD8), u0, u0)
	VMOVDQU(u0, dst)
}

// bcastParam broadcasts the float32 parameter name into y.
func bcastParam(name string, y reg.VecPhysical) {
	p, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	VBROADCASTSS(p.Addr, y)
}

// lanesToAcc adds the float32 lanes in rs (8 each) to the float64
// partial sums at acc (lane j of rs[i] into acc[8i+j]).
func lanesToAcc(rs []reg.VecPhysical, acc reg.Register, t0, t1 reg.VecPhysical) {
	for i, r := range rs {
		VCVTPS2PD(xmm(r), t0)
		VADDPD(mem(acc, 64*i), t0, t0)
		VMOVUPD(t0, mem(acc, 64*i))
		VEXTRACTF128(U8(1), r, xmm(t1))
		VCVTPS2PD(xmm(t1), t1)
		VADDPD(mem(acc, 64*i+32), t1, t1)
		VMOVUPD(t1, mem(acc, 64*i+32))
	}
}

// sqDevBF16 emits Σ (x−m)² over bfloat16 x in 32 float32 lanes over blocks
// of 2048 elements, each block's lanes added into 32 float64 partial sums
// (as sumBF16; the square and the sum rounded separately, no FMA).
func sqDevBF16() { sqDev("sqDevBF16", true) }

// sqDevS is sqDevBF16 on float32 x.
func sqDevS() { sqDev("sqDevS", false) }

// elemLoad loads 8 elements at m into y as float32: bfloat16 widened, or
// float32 as they are; it returns the element size.
func elemLoad(bf16 bool) (func(m Mem, y reg.VecPhysical), int) {
	if bf16 {
		return widenBF16, 2
	}
	return func(m Mem, y reg.VecPhysical) { VMOVUPS(m, y) }, 4
}

// sqDev emits sqDevBF16 or sqDevS.
func sqDev(name string, bf16 bool) {
	et := "float32"
	if bf16 {
		et = "uint16"
	}
	TEXT(name, NOSPLIT, "func(x *"+et+", n int, m float32, acc *[32]float64)")
	Pragma("noescape")
	Doc(name + " adds (x[i]−m)² of the " + map[bool]string{true: "bfloat16", false: "float32"}[bf16] + " x[:n] (n a multiple of 32) into 32 float64 partial sums (float32 lanes over blocks of 2048).")
	load, esz := elemLoad(bf16)
	x, n, k, p := reg.RSI, reg.RCX, reg.RDX, reg.RDI
	Load(Param("x"), x)
	Load(Param("n"), n)
	Load(Param("acc"), p)
	mv := reg.Y15
	bcastParam("m", mv)
	blocks(name, n, k, 32, []advance{{x, 32 * esz}}, func() {
		for i := 0; i < 4; i++ {
			y := ys[4+i]
			load(mem(x, 8*esz*i), y)
			VSUBPS(mv, y, y)
			VMULPS(y, y, y)
			VADDPS(y, ys[i], ys[i])
		}
	}, func() { lanesToAcc(ys[:4], p, reg.Y4, reg.Y5) })
	VZEROUPPER()
	RET()
}

// gradSumsBF16 emits Σ g and Σ g·(x−m) over bfloat16 g and x, each in 16
// float32 lanes over blocks of 2048 elements, each block's lanes added
// into float64 partial sums: acc[0:16] for Σ g, acc[16:32] for Σ g·(x−m)
// (no FMA).
func gradSumsBF16() { gradSums("gradSumsBF16", true) }

// gradSumsS is gradSumsBF16 on float32 g and x.
func gradSumsS() { gradSums("gradSumsS", false) }

// gradSums emits gradSumsBF16 or gradSumsS.
func gradSums(name string, bf16 bool) {
	et := "float32"
	if bf16 {
		et = "uint16"
	}
	TEXT(name, NOSPLIT, "func(gr, x *"+et+", n int, m float32, acc *[32]float64)")
	Pragma("noescape")
	Doc(name + " adds g[i] and g[i]·(x[i]−m) of the " + map[bool]string{true: "bfloat16", false: "float32"}[bf16] + " g[:n] and x[:n] (n a multiple of 16) into float64 partial sums acc[0:16] and acc[16:32] (float32 lanes over blocks of 2048).")
	load, esz := elemLoad(bf16)
	g, x, n, k, p := reg.RSI, reg.RBX, reg.RCX, reg.RDX, reg.RDI
	Load(Param("gr"), g)
	Load(Param("x"), x)
	Load(Param("n"), n)
	Load(Param("acc"), p)
	mv := reg.Y15
	bcastParam("m", mv)
	blocks(name, n, k, 16, []advance{{g, 16 * esz}, {x, 16 * esz}}, func() {
		for i := 0; i < 2; i++ {
			gv, xv := ys[4+i], ys[6+i]
			load(mem(g, 8*esz*i), gv)
			load(mem(x, 8*esz*i), xv)
			VADDPS(gv, ys[i], ys[i])
			VSUBPS(mv, xv, xv)
			VMULPS(gv, xv, xv)
			VADDPS(xv, ys[2+i], ys[2+i])
		}
	}, func() { lanesToAcc(ys[:4], p, reg.Y4, reg.Y5) })
	VZEROUPPER()
	RET()
}

// affine2S emits d = ((g·a) + (x·b)) + c over float32 g and x, each step
// rounded (no FMA), 16 elements a pass; the rest to the Go loop.
func affine2S() {
	const name = "affine2S"
	TEXT(name, NOSPLIT, "func(d, gr, x *float32, n int, a, b, c float32)")
	Pragma("noescape")
	Doc(name + " sets d[i] = ((g[i]·a) + (x[i]·b)) + c (float32 steps, no FMA) for i < n, n a multiple of 16.")
	d, g, x, n, step := affine2Args()
	stage(name, "_loop", "_done", n, 16, []advance{{g, 64}, {x, 64}, {d, 64}}, func() {
		for k := 0; k < 2; k++ {
			gv, xv := ys[k], ys[2+k]
			VMOVUPS(mem(g, 32*k), gv)
			VMOVUPS(mem(x, 32*k), xv)
			step(gv, xv)
			VMOVUPS(gv, mem(d, 32*k))
		}
	})
	done(name)
}

// affine2Args loads affine2S's and affine2BF16's arguments (d, gr, x, n
// into registers, a, b, c broadcast) and returns the step that sets
// gv = ((gv·a) + (xv·b)) + c, each operation rounded (no FMA).
func affine2Args() (d, g, x, n reg.Register, step func(gv, xv reg.VecPhysical)) {
	d, g, x, n = reg.RDI, reg.RSI, reg.RBX, reg.RCX
	Load(Param("d"), d)
	Load(Param("gr"), g)
	Load(Param("x"), x)
	Load(Param("n"), n)
	av, bv, cv := reg.Y13, reg.Y14, reg.Y15
	bcastParam("a", av)
	bcastParam("b", bv)
	bcastParam("c", cv)
	return d, g, x, n, func(gv, xv reg.VecPhysical) {
		VMULPS(av, gv, gv)
		VMULPS(bv, xv, xv)
		VADDPS(xv, gv, gv)
		VADDPS(cv, gv, gv)
	}
}

// affine2BF16 emits d = bfloat16(g·a + x·b + c) over bfloat16 g and x, 16
// elements at a time: ((g·a) + (x·b)) + c, each step rounded to float32
// (no FMA), then to bfloat16 as bf16FromS.
func affine2BF16() {
	const name = "affine2BF16"
	TEXT(name, NOSPLIT, "func(d, gr, x *uint16, n int, a, b, c float32)")
	Pragma("noescape")
	Doc(name + " sets d[i] to the bfloat16 bits of ((g[i]·a) + (x[i]·b)) + c (float32 steps, round to nearest even, NaN 0xFFFF) for i < n, n a multiple of 16.")
	d, g, x, n, step := affine2Args()
	affineLoopBF16(name, n, []advance{{g, 32}, {x, 32}, {d, 32}}, mem(d, 0), func() {
		for k := 0; k < 2; k++ {
			gv, xv := ys[k], ys[2+k]
			widenBF16(mem(g, 16*k), gv)
			widenBF16(mem(x, 16*k), xv)
			step(gv, xv)
		}
	})
}

// affineLoopBF16 emits the loop of affine2BF16 and affineBF16, 16
// elements a pass: body leaves them as float32 in ys[0:2], narrowed to
// bfloat16 at dst (ys[4:8] scratch).
func affineLoopBF16(name string, n reg.Register, ptrs []advance, dst Mem, body func()) {
	cs := newBF16Consts(reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12)
	stage(name, "_loop", "_done", n, 16, ptrs, func() {
		body()
		narrowBF16(cs, ys[0], ys[1], [4]reg.VecPhysical{ys[4], ys[5], ys[6], ys[7]}, dst)
	})
	done(name)
}

// affineBF16 emits d = bfloat16(x·a + b) over bfloat16 x, 16 elements at a
// time: x·a + b rounded once to float32 (FMA), then to bfloat16 as
// bf16FromS.
func affineBF16() {
	const name = "affineBF16"
	TEXT(name, NOSPLIT, "func(d, x *uint16, n int, a, b float32)")
	Pragma("noescape")
	Doc(name + " sets d[i] to the bfloat16 bits of x[i]·a + b (FMA, then round to nearest even, NaN 0xFFFF) for i < n, n a multiple of 16.")
	d, x, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("d"), d)
	Load(Param("x"), x)
	Load(Param("n"), n)
	av, bv := reg.Y14, reg.Y15
	bcastParam("a", av)
	bcastParam("b", bv)
	affineLoopBF16(name, n, []advance{{x, 32}, {d, 32}}, mem(d, 0), func() {
		for k := 0; k < 2; k++ {
			widenBF16(mem(x, 16*k), ys[k])
			VFMADD213PS(bv, av, ys[k]) // y = a·y + b
		}
	})
}

// maxPool2x2BF16 emits max pooling of a bfloat16 plane with 2×2 windows
// at stride 2 and their indices, 16 outputs at a time with AVX-512 masks
// (a row's last, partial group masked: nothing read or written past it).
// Each window's values a, b (row 2y) and c, d (row 2y+1) become dword
// order keys (vec.KeyBF16, sign-extended); the maximum key gives the
// output's bits; the index is the first of a, b, c, d equal to it as
// floats (keys folded so that -0 equals +0), or, for a NaN maximum, the
// last NaN.
func maxPool2x2BF16() { maxPool2x2(false) }

// maxPool2x2S is maxPool2x2BF16 on float32 planes: order keys are the
// float32 bits themselves, two loads per row split into even and odd
// columns, and a window with a NaN gives its last NaN's own bits.
func maxPool2x2S() { maxPool2x2(true) }

func maxPool2x2(f32 bool) {
	name, typ, esz, keyMag, keyInf := "maxPool2x2BF16", "uint16", 2, uint32(0x7FFF), uint32(0x7F80)
	if f32 {
		name, typ, esz, keyMag, keyInf = "maxPool2x2S", "float32", 4, 0x7FFFFFFF, 0x7F800000
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(o *%s, ix *int64, x *%s, oh, ow, w int)", typ, typ))
	Pragma("noescape")
	Doc(name + " pools the plane x (rows w wide) with 2×2 windows at stride 2 into o[oh·ow] and the plane indices ix[oh·ow]: the first maximum of each window in row-major order, or its last NaN (AVX-512 F and BW).")
	o, ix, x, oh, ow, w := reg.RDI, reg.R8, reg.RSI, reg.R9, reg.R10, reg.R11
	r0, r1, base, rem, n, t := reg.R12, reg.R13, reg.RBX, reg.RDX, reg.RCX, reg.RAX
	Load(Param("o"), o)
	Load(Param("ix"), ix)
	Load(Param("x"), x)
	Load(Param("oh"), oh)
	Load(Param("ow"), ow)
	Load(Param("w"), w)
	Z := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}
	mag, inf, ones, one, wq, iota, step, b0, b1 := Z[31], Z[30], Z[29], Z[28], Z[27], Z[26], Z[25], Z[24], Z[23]
	MOVL(U32(keyMag), t.As32())
	VPBROADCASTD(t.As32(), mag)
	MOVL(U32(keyInf), t.As32())
	VPBROADCASTD(t.As32(), inf)
	VPTERNLOGD(U8(0xFF), ones, ones, ones)
	MOVQ(U32(1), t)
	VPBROADCASTQ(t, one)
	VPBROADCASTQ(w, wq)
	MOVQ(U32(32), t)
	VPBROADCASTQ(t, step)
	if f32 {
		VMOVDQU64(NewDataAddr(Symbol{Name: "maxPool2x2Iota", Static: true}, 0), iota)
	} else {
		iotaMem := GLOBL("maxPool2x2Iota", RODATA|NOPTR)
		for i := 0; i < 8; i++ {
			DATA(8*i, U64(2*i))
		}
		VMOVDQU64(iotaMem, iota)
	}
	evens, odds := Z[22], Z[21] // f32: dword indices of the even and odd columns of two loads
	if f32 {
		ev := GLOBL("maxPool2x2Evens", RODATA|NOPTR)
		for i := 0; i < 16; i++ {
			DATA(4*i, U32(uint32(2*i)))
		}
		VMOVDQU32(ev, evens)
		od := GLOBL("maxPool2x2Odds", RODATA|NOPTR)
		for i := 0; i < 16; i++ {
			DATA(4*i, U32(uint32(2*i+1)))
		}
		VMOVDQU32(od, odds)
	}
	XORQ(base, base)
	TESTQ(ow, ow)
	JE(LabelRef(name + "_done"))
	Label(name + "_row")
	TESTQ(oh, oh)
	JE(LabelRef(name + "_done"))
	LEAQ(Mem{Base: x, Index: base, Scale: uint8(esz)}, r0)
	LEAQ(Mem{Base: r0, Index: w, Scale: uint8(esz)}, r1)
	VPBROADCASTQ(base, b0)
	VPADDQ(iota, b0, b0)
	MOVQ(U32(16), t)
	VPBROADCASTQ(t, b1)
	VPADDQ(b0, b1, b1)
	MOVQ(ow, rem)
	Label(name + "_group")
	MOVQ(rem, n)
	CMPQ(n, U32(16))
	JLE(LabelRef(name + "_n"))
	MOVQ(U32(16), n)
	Label(name + "_n")
	// the input mask: 2n elements
	MOVL(U32(0xFFFFFFFF), t.As32())
	SHLQ(U8(1), n)
	BZHIL(n.As32(), t.As32(), t.As32())
	SHRQ(U8(1), n)
	KMOVD(t.As32(), reg.K1)
	a, b, c, d, tmp, u := Z[2], Z[3], Z[4], Z[5], Z[6], Z[7]
	if f32 {
		// 32 floats a row in two loads, then even and odd columns
		KSHIFTRD(U8(16), reg.K1, reg.K2)
		VMOVDQU32_Z(Mem{Base: r0}, reg.K1, Z[0])
		VMOVDQU32_Z(Mem{Base: r0, Disp: 64}, reg.K2, Z[12])
		VMOVDQU32_Z(Mem{Base: r1}, reg.K1, Z[1])
		VMOVDQU32_Z(Mem{Base: r1, Disp: 64}, reg.K2, Z[13])
		VMOVDQA32(evens, a)
		VPERMI2D(Z[12], Z[0], a)
		VMOVDQA32(odds, b)
		VPERMI2D(Z[12], Z[0], b)
		VMOVDQA32(evens, c)
		VPERMI2D(Z[13], Z[1], c)
		VMOVDQA32(odds, d)
		VPERMI2D(Z[13], Z[1], d)
		// the raw bits, for a NaN window's output
		for i, v := range []reg.VecPhysical{a, b, c, d} {
			VMOVDQA32(v, Z[14+i])
		}
	} else {
		VMOVDQU16_Z(Mem{Base: r0}, reg.K1, Z[0])
		VMOVDQU16_Z(Mem{Base: r1}, reg.K1, Z[1])
		VPSLLD(U8(16), Z[0], a)
		VPSRAD(U8(16), a, a)
		VPSRAD(U8(16), Z[0], b)
		VPSLLD(U8(16), Z[1], c)
		VPSRAD(U8(16), c, c)
		VPSRAD(U8(16), Z[1], d)
	}
	for _, v := range []reg.VecPhysical{a, b, c, d} { // order keys
		VPANDD(mag, v, u)
		VPCMPGTD(inf, u, reg.K2) // a NaN
		VPSRAD(U8(31), v, tmp)
		VPANDD(mag, tmp, tmp)
		VPXORD(tmp, v, v)
		VMOVDQA32(mag, reg.K2, v)
	}
	m, fm := Z[8], Z[9]
	VPMAXSD(a, b, m)
	VPMAXSD(c, d, fm)
	VPMAXSD(fm, m, m)
	// folded keys: negative ones up by one, so that -0 meets +0
	VMOVDQA32(m, fm)
	for _, v := range []reg.VecPhysical{a, b, c, d, fm} {
		VPSRAD(U8(31), v, tmp)
		VPSUBD(tmp, v, v)
	}
	ea, eb, ec, ed, nan := reg.K1, reg.K2, reg.K3, reg.K4, reg.K5
	VPCMPEQD(fm, a, ea)
	VPCMPEQD(fm, b, eb)
	VPCMPEQD(fm, c, ec)
	VPCMPEQD(fm, d, ed)
	VPCMPEQD(mag, m, nan)
	// the output bits: keys back to the element's bits; a NaN window
	// (bfloat16) 0xFFFF, (float32) its last NaN's bits, picked below
	VPSRAD(U8(31), m, tmp)
	VPANDD(mag, tmp, tmp)
	VPXORD(tmp, m, m)
	if !f32 {
		VMOVDQA32(ones, nan, m)
	}
	// andn(x, y, dst): dst = x &^ y
	andn := func(x, y, dst reg.Register) { KANDNW(x, y, dst) }
	k6, k7, k0 := reg.K6, reg.K7, reg.K0
	// row: a NaN maximum ? ed|ec : !(ea|eb)
	KORW(ea, eb, k6)
	KNOTW(k6, k6)
	andn(k6, nan, k6)
	KORW(ed, ec, k7)
	KANDW(k7, nan, k7)
	KORW(k6, k7, k6) // the row bit
	// col: a NaN maximum ? ed | (eb &^ ec) : !(ea | (ec &^ eb))
	andn(eb, ec, k7)
	KORW(k7, ed, k7)
	KANDW(k7, nan, k7)
	andn(ec, eb, k0)
	KORW(k0, ea, k0)
	KNOTW(k0, k0)
	andn(k0, nan, k0)
	KORW(k0, k7, k7) // the column bit
	// a NaN window (float32): the bits of the element the two bits pick
	if f32 {
		rawA, rawB, rawC, rawD := Z[14], Z[15], Z[16], Z[17]
		KANDNW(k7, k6, reg.K1) // column, not row: b
		KANDW(k6, k7, reg.K2)  // both: d
		KANDNW(k6, k7, reg.K3) // row, not column: c
		VMOVDQA32(rawA, tmp)
		VMOVDQA32(rawB, reg.K1, tmp)
		VMOVDQA32(rawC, reg.K3, tmp)
		VMOVDQA32(rawD, reg.K2, tmp)
		VMOVDQA32(tmp, nan, m)
	}
	lo, hi := Z[10], Z[11]
	VMOVDQA64(b0, lo)
	VMOVDQA64(b1, hi)
	VPADDQ(one, lo, k7, lo)
	VPADDQ(wq, lo, k6, lo)
	KSHIFTRW(U8(8), k7, k7)
	KSHIFTRW(U8(8), k6, k6)
	VPADDQ(one, hi, k7, hi)
	VPADDQ(wq, hi, k6, hi)
	// the output mask: n elements
	MOVL(U32(0xFFFF), t.As32())
	BZHIL(n.As32(), t.As32(), t.As32())
	KMOVW(t.As32(), reg.K1)
	KSHIFTRW(U8(8), reg.K1, reg.K2)
	if f32 {
		VMOVDQU32(m, reg.K1, Mem{Base: o})
	} else {
		VPMOVDW(m, m.AsY())
		VMOVDQU16(m.AsY(), reg.K1, Mem{Base: o})
	}
	VMOVDQU64(lo, reg.K1, Mem{Base: ix})
	VMOVDQU64(hi, reg.K2, Mem{Base: ix, Disp: 64})
	LEAQ(Mem{Base: o, Index: n, Scale: uint8(esz)}, o)
	LEAQ(Mem{Base: ix, Index: n, Scale: 8}, ix)
	ADDQ(U32(32*esz), r0)
	ADDQ(U32(32*esz), r1)
	VPADDQ(step, b0, b0)
	VPADDQ(step, b1, b1)
	SUBQ(n, rem)
	JNE(LabelRef(name + "_group"))
	LEAQ(Mem{Base: base, Index: w, Scale: 2}, base) // two input rows on
	DECQ(oh)
	JMP(LabelRef(name + "_row"))
	done(name)
}

// goMax emits d = Go's max(a, b) for non-NaN lanes: VMAXPS returns its
// second source on a tie and on a NaN, so the two orders agree but for
// ±0 ties, where ANDing them gives +0 as Go's max does. t is scratch; a
// and b are kept.
func goMax(a, b, d, t reg.VecPhysical) {
	VMAXPS(b, a, d) // max(a, b): b on a tie
	VMAXPS(a, b, t) // max(b, a): a on a tie
	VANDPS(t, d, d)
}

// max2S emits max2S: d[i] = max(a[i], b[i]) with Go's max for non-NaN
// values (+0 over −0), reporting nonzero when a or b holds a NaN (the
// caller then pools that row in Go: its maxima are not max's there).
func max2S() {
	name := "max2S"
	TEXT(name, NOSPLIT, "func(d, a, b *float32, n int) int")
	Pragma("noescape")
	Doc(name + " sets d[i] = max(a[i], b[i]) (Go's max where neither is NaN) for i < n and returns nonzero when some a[i] or b[i] is NaN.")
	d, a, b, n := reg.RDI, reg.RSI, reg.RDX, reg.RCX
	Load(Param("d"), d)
	Load(Param("a"), a)
	Load(Param("b"), b)
	Load(Param("n"), n)
	// NaN lanes: the vector stages' in Y15, the scalar stage's in X14 (a
	// VEX.128 write clears a register's upper half)
	acc, sacc := reg.Y15, reg.X14
	VXORPS(acc, acc, acc)
	VXORPS(reg.Y14, reg.Y14, reg.Y14)
	body := func(i, disp int, scalar bool) {
		x, y, m, t := ys[i], ys[4+i], ys[8+i], ys[12]
		if scalar {
			x, y, m, t = xmm(x), xmm(y), xmm(m), xmm(t)
			VMOVSS(mem(a, disp), x)
			VMOVSS(mem(b, disp), y)
			VCMPSS(U8(3), y, x, t)
			VORPS(t, sacc, sacc)
			goMax(x, y, m, t)
			VMOVSS(m, mem(d, disp))
			return
		}
		VMOVUPS(mem(a, disp), x)
		VMOVUPS(mem(b, disp), y)
		VCMPPS(U8(3), y, x, t)
		VORPS(t, acc, acc)
		goMax(x, y, m, t)
		VMOVUPS(m, mem(d, disp))
	}
	adv := func(elems int) []advance { return []advance{{d, 4 * elems}, {a, 4 * elems}, {b, 4 * elems}} }
	stage(name, "_x4", "_x1", n, 32, adv(32), func() {
		for i := 0; i < 4; i++ {
			body(i, 32*i, false)
		}
	})
	stage(name, "_x1", "_tail", n, 8, adv(8), func() { body(0, 0, false) })
	stage(name, "_tail", "_done", n, 1, adv(1), func() { body(0, 0, true) })
	Label(name + "_done")
	VORPS(reg.Y14, acc, acc)
	XORQ(reg.RAX, reg.RAX)
	VMOVMSKPS(acc, reg.EAX)
	Store(reg.RAX, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// maxPool3S2S emits maxPool3S2S: o[k] = max(v[2k], v[2k+1], v[2k+2]) for
// k < n (n a multiple of 8; v[:2n+1] read), Go's max where no v is NaN:
// a 3-wide, stride-2 max pool along a row of column maxima. Sixteen v
// from v[2k] and sixteen from v[2k+1] are split into even and odd lanes
// (VSHUFPS), whose maxima are put back in order (VPERMPD).
func maxPool3S2S() {
	name := "maxPool3S2S"
	TEXT(name, NOSPLIT, "func(o, v *float32, n int)")
	Pragma("noescape")
	Doc(name + " sets o[k] = max(v[2k], v[2k+1], v[2k+2]) for k < n, n a multiple of 8 (Go's max where no v is NaN).")
	o, v, n := reg.RDI, reg.RSI, reg.RCX
	Load(Param("o"), o)
	Load(Param("v"), v)
	Load(Param("n"), n)
	stage(name, "_x1", "_done", n, 8, []advance{{o, 32}, {v, 64}}, func() {
		a0, a1, b0, b1 := reg.Y0, reg.Y1, reg.Y2, reg.Y3
		VMOVUPS(mem(v, 0), a0)
		VMOVUPS(mem(v, 32), a1)
		VMOVUPS(mem(v, 4), b0)
		VMOVUPS(mem(v, 36), b1)
		ev, od, nx := reg.Y4, reg.Y5, reg.Y6
		VSHUFPS(U8(0x88), a1, a0, ev) // v[2k]: lanes 0 2 8 10 | 4 6 12 14 of the sixteen
		VSHUFPS(U8(0xDD), a1, a0, od) // v[2k+1]
		VSHUFPS(U8(0xDD), b1, b0, nx) // v[2k+2]
		goMax(ev, od, reg.Y7, reg.Y8)
		goMax(reg.Y7, nx, reg.Y9, reg.Y8)
		VPERMPD(U8(0xD8), reg.Y9, reg.Y9) // quadwords 0 2 1 3: k in order
		VMOVUPS(reg.Y9, mem(o, 0))
	})
	done(name)
}

func main() {
	ConstraintExpr("amd64,!purego")
	for _, t := range []typ{f32, f64} {
		for _, op := range []string{"add", "sub", "mul", "div"} {
			binary(t, op, "vv")
			binary(t, op, "vs")
			if op == "sub" || op == "div" {
				binary(t, op, "sv")
			}
		}
		relu(t)
		reluGrad(t)
		affine(t)
		fmaV(t)
		fill(t)
		for _, form := range []string{"vv", "vs", "sv"} {
			where(t, form)
		}
		extreme(t, "max")
		extreme(t, "min")
	}
	sumS()
	sumBF16()
	sumD()
	trans(f32, shuffle8S)
	trans(f64, shuffle4D)
	bf16FromS()
	sFromBF16()
	f16FromS()
	sFromF16()
	reluBF16()
	maxKeysBF16(false)
	maxKeysBF16(true)
	windowMaxBF16(1)
	windowMaxBF16(2)
	sqDevBF16()
	gradSumsBF16()
	affine2BF16()
	sqDevS()
	gradSumsS()
	affine2S()
	affineBF16()
	maxPool2x2BF16()
	maxPool2x2S()
	max2S()
	maxPool3S2S()
	Generate()
}
