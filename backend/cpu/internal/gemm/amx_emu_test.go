//go:build amd64 && !purego

package gemm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
)

// This file runs the machine code of bgemmAMX, as linked into the test
// binary, on an emulated CPU: no session so far had an AMX CPU, and
// bgemmAMXGo, the kernel's Go twin, is written by hand after the
// assembly, so it proves the packing and the driver but not the kernel's
// own addressing, loop and tile configuration. The emulator decodes the
// kernel's scalar instructions with golang.org/x/arch's x86asm and its AMX
// instructions (which x86asm does not know) by their encodings in Intel's
// SDM, and executes them on 16 registers and eight tile registers, with the
// tile configuration read from the kernel's own amxcfg and the SDM's
// checks: LDTILECFG's fields, the shapes TDPBF16PS requires, a tile
// instruction before any configuration, the tile state released before
// RET. Every memory access must lie in what the call gives the kernel (its
// arguments on the stack, the A and B panels, the 32×32 tile of C, the
// configuration): one outside them all fails the test, where on hardware
// it would touch a neighbour's data without a word (one that lands in
// another of them gives wrong values, which the test compares). The
// arithmetic of TDPBF16PS is amxTiles.dpbf16n (the SDM's, as the twin's).

// amxImage is bgemmAMX's machine code and configuration at run time.
type amxImage struct {
	code []byte  // bgemmAMX's ABI0 body
	cfg  uintptr // the 64-byte tile configuration it loads (amxcfg)
	err  error   // why they were not found
}

var (
	amxImg     amxImage
	amxImgOnce sync.Once
)

// loadAMXImage finds bgemmAMX's machine code through its Go func value:
// Go's ABI wrapper, which calls the assembly body (the runtime's function
// table gives where that body ends), and the configuration through the
// body's one RIP-relative LEA.
func loadAMXImage() *amxImage {
	amxImgOnce.Do(func() {
		amxImg.err = func() error {
			wrap := reflect.ValueOf(bgemmAMX).Pointer()
			body := uintptr(0)
			code := funcBytes(wrap)
			for pc := 0; pc < len(code) && body == 0; {
				in, err := x86asm.Decode(code[pc:], 64)
				if err != nil {
					return fmt.Errorf("bgemmAMX's wrapper at offset %d: %v", pc, err)
				}
				pc += in.Len
				if rel, ok := in.Args[0].(x86asm.Rel); ok && in.Op == x86asm.CALL {
					body = wrap + uintptr(pc) + uintptr(int64(rel))
				}
				if in.Op == x86asm.RET {
					break
				}
			}
			f := runtime.FuncForPC(body)
			if body == 0 || f == nil || f.Entry() != body || !strings.HasSuffix(f.Name(), ".bgemmAMX") {
				return fmt.Errorf("bgemmAMX's wrapper at %#x calls no bgemmAMX body", wrap)
			}
			amxImg.code = funcBytes(body)
			for pc := 0; pc < len(amxImg.code); {
				if ai, ok, err := decodeAMX(amxImg.code[pc:]); ok {
					if err != nil {
						return fmt.Errorf("bgemmAMX at offset %d: %v", pc, err)
					}
					pc += ai.n
					continue
				}
				in, err := x86asm.Decode(amxImg.code[pc:], 64)
				if err != nil {
					return fmt.Errorf("bgemmAMX at offset %d: %v", pc, err)
				}
				pc += in.Len
				if mem, ok := in.Args[1].(x86asm.Mem); ok && in.Op == x86asm.LEA && mem.Base == x86asm.RIP {
					if amxImg.cfg != 0 {
						return errors.New("bgemmAMX has two RIP-relative LEAs")
					}
					amxImg.cfg = body + uintptr(pc) + uintptr(mem.Disp)
				}
			}
			if amxImg.cfg == 0 {
				return errors.New("bgemmAMX loads no configuration")
			}
			return nil
		}()
	})
	return &amxImg
}

// funcBytes is the machine code of the function at entry, to where the
// runtime's function table says the next one starts (at most 64 KiB).
func funcBytes(entry uintptr) []byte {
	n := 0
	for n < 1<<16 {
		if g := runtime.FuncForPC(entry + uintptr(n)); g == nil || g.Entry() != entry {
			break
		}
		n++
	}
	return unsafe.Slice((*byte)(ptrAt(entry)), n)
}

// ptrAt is the address p as a pointer (without vet's complaint: the
// emulator computes addresses as the CPU does, from integers). Not
// inlined: Go 1.26.8's compiler crashed ("disjointTypes: one of arguments
// is not a pointer") inlining it into a copy.
//
//go:noinline
func ptrAt(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// memRange is memory a kernel call may touch.
type memRange struct {
	lo, hi uintptr
	write  bool
	name   string
}

// amxCPU is the emulated CPU: general registers, the zero and sign flags,
// the tile configuration (palette 1) and the tile registers.
type amxCPU struct {
	img    *amxImage
	code   []byte // the machine code run (img.code or a changed copy of it)
	cfg    []byte // nil: LDTILECFG reads memory; else what it reads at img.cfg
	r      [16]uint64
	frame  [7]uint64 // the stack (see amxStack)
	zf, sf bool
	cfgd   bool // a configuration is loaded
	rows   [8]int
	colsb  [8]int
	tiles  amxTiles
	mem    []memRange
	counts map[string]int // instructions executed, by mnemonic
}

// check fails unless n bytes at p lie in one range that allows the access.
func (m *amxCPU) check(what string, p uintptr, n int, write bool) error {
	for _, r := range m.mem {
		if p >= r.lo && p+uintptr(n) <= r.hi && (r.write || !write) {
			return nil
		}
	}
	kind := "reads"
	if write {
		kind = "writes"
	}
	near, dist := "", uintptr(math.MaxUint64)
	for _, r := range m.mem {
		d := r.lo - p
		if p >= r.lo {
			d = p - r.lo
		}
		if d < dist {
			near, dist = fmt.Sprintf("%s at [%#x, %#x)", r.name, r.lo, r.hi), d
		}
	}
	return fmt.Errorf("%s %s %d bytes at %#x, outside what the call allows it (the nearest: %s)", what, kind, n, p, near)
}

// The emulated stack: the kernel's frame (the return address, then its
// arguments, as Go's ABI0 passes them) at an address Go never maps, read
// from amxCPU.frame.
const (
	amxStack = 0x2000
	amxRet   = 0xdead0000 // the return address
)

// load reads the 8 bytes at p (on the emulated stack or in memory).
func (m *amxCPU) load(what string, p uintptr) (uint64, error) {
	if err := m.check(what, p, 8, false); err != nil {
		return 0, err
	}
	if p >= amxStack && p < amxStack+8*uintptr(len(m.frame)) {
		if p%8 != 0 {
			return 0, fmt.Errorf("%s reads the stack at %#x, not a slot", what, p)
		}
		return m.frame[(p-amxStack)/8], nil
	}
	return *(*uint64)(ptrAt(p)), nil
}

// run executes the kernel with these arguments.
func (m *amxCPU) run(kc int, a, b, c *float32, ldc, accum int) error {
	m.frame = [7]uint64{amxRet, uint64(kc), uint64(uintptr(unsafe.Pointer(a))), uint64(uintptr(unsafe.Pointer(b))),
		uint64(uintptr(unsafe.Pointer(c))), uint64(ldc), uint64(accum)}
	fp := uintptr(amxStack)
	ap, bp, cp := uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)), uintptr(unsafe.Pointer(c))
	panel := uintptr(amxB.mr * kc * 4)
	m.mem = append(m.mem[:0],
		memRange{fp, fp + 56, false, "arguments"},
		memRange{m.img.cfg, m.img.cfg + 64, false, "amxcfg"},
		memRange{ap, ap + panel, false, "A panel"},
		memRange{bp, bp + uintptr(amxB.nr*kc*4), false, "B panel"})
	for i := range amxB.mr {
		row := cp + uintptr(4*i*ldc)
		m.mem = append(m.mem, memRange{row, row + uintptr(4*amxB.nr), true, fmt.Sprintf("C row %d", i)})
	}
	m.r = [16]uint64{}
	m.r[4] = uint64(fp) // RSP
	m.cfgd = false
	base := uintptr(unsafe.Pointer(&m.img.code[0])) // where the code runs, for RIP
	if m.code == nil {
		m.code = m.img.code
	}
	pc := 0
	for steps := 0; ; steps++ {
		if steps > 1<<20 {
			return errors.New("bgemmAMX runs past a million instructions")
		}
		if pc < 0 || pc >= len(m.code) {
			return fmt.Errorf("bgemmAMX jumps to offset %d, outside its %d bytes", pc, len(m.code))
		}
		rest := m.code[pc:]
		next := pc
		if ai, ok, err := decodeAMX(rest); ok {
			if err == nil {
				err = m.amx(ai)
			}
			if err != nil {
				return fmt.Errorf("at offset %#x: %w", pc, err)
			}
			pc += ai.n
			continue
		}
		in, err := x86asm.Decode(rest, 64)
		if err != nil {
			return fmt.Errorf("at offset %#x: %v (% x)", pc, err, rest[:min(len(rest), 8)])
		}
		next = pc + in.Len
		m.counts[in.Op.String()]++
		jump, done, err := m.exec(in, base+uintptr(next))
		switch {
		case err != nil:
			return fmt.Errorf("at offset %#x (%v): %w", pc, in, err)
		case done:
			if m.cfgd {
				return errors.New("bgemmAMX returns with its tile configuration loaded (no TILERELEASE)")
			}
			return nil
		case jump != nil:
			next += int(*jump)
		}
		pc = next
	}
}

// gp returns the index (0-15) and width in bits of a general register.
func gp(r x86asm.Reg) (int, int, bool) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return int(r - x86asm.RAX), 64, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return int(r - x86asm.EAX), 32, true
	}
	return 0, 0, false
}

// addr is a memory operand's address; rip is the next instruction's.
func (m *amxCPU) addr(x x86asm.Mem, rip uintptr) (uintptr, error) {
	if x.Segment != 0 {
		return 0, fmt.Errorf("segment %v", x.Segment)
	}
	p := uint64(x.Disp)
	switch x.Base {
	case 0:
	case x86asm.RIP:
		p += uint64(rip)
	default:
		i, w, ok := gp(x.Base)
		if !ok || w != 64 {
			return 0, fmt.Errorf("base %v", x.Base)
		}
		p += m.r[i]
	}
	if x.Index != 0 {
		i, w, ok := gp(x.Index)
		if !ok || w != 64 {
			return 0, fmt.Errorf("index %v", x.Index)
		}
		p += m.r[i] * uint64(x.Scale)
	}
	return uintptr(p), nil
}

// exec executes one scalar instruction: jump is a taken branch's
// displacement, done a RET to the caller.
func (m *amxCPU) exec(in x86asm.Inst, rip uintptr) (jump *x86asm.Rel, done bool, err error) {
	args := in.Args[:]
	for len(args) > 0 && args[len(args)-1] == nil {
		args = args[:len(args)-1]
	}
	// the value of argument i (a register, an immediate or memory)
	val := func(i int) (uint64, error) {
		switch x := args[i].(type) {
		case x86asm.Reg:
			r, w, ok := gp(x)
			if !ok {
				return 0, fmt.Errorf("register %v", x)
			}
			if w == 32 {
				return m.r[r] & math.MaxUint32, nil
			}
			return m.r[r], nil
		case x86asm.Imm:
			return uint64(x), nil
		case x86asm.Mem:
			p, err := m.addr(x, rip)
			if err != nil {
				return 0, err
			}
			if in.MemBytes != 8 {
				return 0, fmt.Errorf("a %d-byte load", in.MemBytes)
			}
			return m.load(in.Op.String(), p)
		}
		return 0, fmt.Errorf("operand %v", args[i])
	}
	// set writes v to register argument 0 (a 32-bit write clears the top)
	set := func(v uint64) error {
		r, w, ok := gp(args[0].(x86asm.Reg))
		if !ok {
			return fmt.Errorf("destination %v", args[0])
		}
		if w == 32 {
			v &= math.MaxUint32
		}
		m.r[r] = v
		m.zf, m.sf = v == 0, int64(v) < 0
		if w == 32 {
			m.sf = int32(v) < 0
		}
		return nil
	}
	if in.Op == x86asm.NOP {
		return nil, false, nil
	}
	if len(args) == 0 {
		if in.Op != x86asm.RET {
			return nil, false, fmt.Errorf("unsupported instruction %v", in.Op)
		}
		if to, err := m.load("RET", uintptr(m.r[4])); err != nil || to != amxRet {
			return nil, false, fmt.Errorf("RET to %#x, not the caller (%v)", to, err)
		}
		return nil, true, nil
	}
	if _, isReg := args[0].(x86asm.Reg); !isReg && in.Op != x86asm.JMP && in.Op != x86asm.JE && in.Op != x86asm.JNE {
		return nil, false, fmt.Errorf("destination %v", args[0])
	}
	two := func() (uint64, uint64, error) {
		if len(args) != 2 {
			return 0, 0, errors.New("want two operands")
		}
		x, err := val(0)
		if err != nil {
			return 0, 0, err
		}
		y, err := val(1)
		return x, y, err
	}
	switch in.Op {
	case x86asm.MOV:
		v, err := val(1)
		if err == nil {
			zf, sf := m.zf, m.sf
			err = set(v)
			m.zf, m.sf = zf, sf // MOV sets no flags
		}
		return nil, false, err
	case x86asm.LEA:
		x, ok := args[1].(x86asm.Mem)
		if !ok {
			return nil, false, fmt.Errorf("LEA of %v", args[1])
		}
		p, err := m.addr(x, rip)
		if err == nil {
			zf, sf := m.zf, m.sf
			err = set(uint64(p))
			m.zf, m.sf = zf, sf
		}
		return nil, false, err
	case x86asm.ADD, x86asm.SUB, x86asm.SHL, x86asm.SHR, x86asm.TEST:
		x, y, err := two()
		if err != nil {
			return nil, false, err
		}
		switch in.Op {
		case x86asm.ADD:
			return nil, false, set(x + y)
		case x86asm.SUB:
			return nil, false, set(x - y)
		case x86asm.SHL:
			return nil, false, set(x << (y & 63))
		case x86asm.SHR:
			return nil, false, set(x >> (y & 63))
		}
		v := x & y // TEST: flags only
		m.zf, m.sf = v == 0, int64(v) < 0
		return nil, false, nil
	case x86asm.DEC:
		x, err := val(0)
		if err != nil {
			return nil, false, err
		}
		return nil, false, set(x - 1)
	case x86asm.JMP, x86asm.JE, x86asm.JNE:
		rel, ok := args[0].(x86asm.Rel)
		if !ok {
			return nil, false, fmt.Errorf("indirect jump %v", args[0])
		}
		if in.Op == x86asm.JMP || (in.Op == x86asm.JE) == m.zf {
			return &rel, false, nil
		}
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("unsupported instruction %v", in.Op)
}

// amxInst is a decoded AMX instruction.
type amxInst struct {
	name         string // LDTILECFG, TILERELEASE, TILEZERO, TILELOADD, TILESTORED, TDPBF16PS
	n            int    // length in bytes
	reg, rm, v   int    // ModRM.reg, ModRM.rm (a register form), VEX.vvvv
	base, index  int    // a memory operand's registers, -1 for none
	scale        uint8
	disp         int64
	mem, sibForm bool // a memory operand; in SIB form
}

// decodeAMX decodes the AMX instruction at the start of code, if it is
// one: VEX.128.W0 in map 0F38, opcodes 49 (LDTILECFG, TILERELEASE,
// TILEZERO), 4B (TILELOADD, TILESTORED) and 5C (TDPBF16PS), by the
// encodings in Intel's SDM.
func decodeAMX(code []byte) (in amxInst, ok bool, err error) {
	if len(code) < 5 || code[0] != 0xC4 || code[1]&0x1F != 2 {
		return in, false, nil
	}
	op := code[3]
	if op != 0x49 && op != 0x4B && op != 0x5C {
		return in, false, nil
	}
	rx, xx, bx := ^code[1]>>7&1, ^code[1]>>6&1, ^code[1]>>5&1
	w, l, pp := code[2]>>7, code[2]>>2&1, code[2]&3
	modrm := code[4]
	mod := modrm >> 6
	in = amxInst{n: 5, reg: int(modrm>>3&7 | rx<<3), rm: int(modrm&7 | bx<<3), v: int(^code[2] >> 3 & 15), base: -1, index: -1}
	if w != 0 || l != 0 {
		return in, true, fmt.Errorf("AMX opcode %#x with VEX.W %d L %d", op, w, l)
	}
	if mod != 3 {
		in.mem = true
		switch {
		case modrm&7 == 4: // SIB
			if len(code) < 6 {
				return in, true, errors.New("truncated SIB")
			}
			sib := code[5]
			in.n, in.sibForm, in.scale = 6, true, sib>>6
			if idx := int(sib>>3&7 | xx<<3); idx != 4 {
				in.index = idx
			}
			in.base = int(sib&7 | bx<<3)
			if mod == 0 && sib&7 == 5 {
				in.base, mod = -1, 2 // disp32, no base
			}
		case mod == 0 && modrm&7 == 5:
			return in, true, errors.New("RIP-relative AMX operand") // the kernel has none
		default:
			in.base = in.rm
		}
		size := map[byte]int{1: 1, 2: 4}[mod]
		if len(code) < in.n+size {
			return in, true, errors.New("truncated displacement")
		}
		switch size {
		case 1:
			in.disp = int64(int8(code[in.n]))
		case 4:
			in.disp = int64(int32(binary.LittleEndian.Uint32(code[in.n:])))
		}
		in.n += size
	}
	switch {
	case op == 0x49 && pp == 0 && mod != 3:
		in.name = "LDTILECFG"
	case op == 0x49 && pp == 0 && modrm == 0xC0:
		in.name = "TILERELEASE"
	case op == 0x49 && pp == 3 && mod == 3:
		in.name = "TILEZERO"
	case op == 0x4B && pp == 3 && in.sibForm:
		in.name = "TILELOADD"
	case op == 0x4B && pp == 2 && in.sibForm:
		in.name = "TILESTORED"
	case op == 0x5C && pp == 2 && mod == 3:
		in.name = "TDPBF16PS"
	default:
		return in, true, fmt.Errorf("unknown AMX encoding % x", code[:in.n])
	}
	return in, true, nil
}

// amx executes an AMX instruction.
func (m *amxCPU) amx(in amxInst) error {
	m.counts[in.name]++
	var p uintptr
	var stride uint64
	if in.mem {
		if in.base >= 0 {
			p = uintptr(m.r[in.base])
		}
		p += uintptr(in.disp)
		if in.index >= 0 {
			stride = m.r[in.index] << in.scale
		}
	}
	tile := func(t int) error {
		if t > 7 {
			return fmt.Errorf("tile register %d", t)
		}
		if !m.cfgd {
			return errors.New("a tile instruction before LDTILECFG (#UD)")
		}
		if m.rows[t] == 0 {
			return fmt.Errorf("tmm%d is not configured (#UD)", t)
		}
		return nil
	}
	switch in.name {
	case "LDTILECFG":
		return m.ldtilecfg(p)
	case "TILERELEASE":
		m.cfgd, m.tiles = false, amxTiles{}
		return nil
	case "TILEZERO":
		if err := tile(in.reg); err != nil {
			return err
		}
		m.tiles[in.reg] = [16][16]uint32{}
		return nil
	case "TILELOADD", "TILESTORED":
		write, t := in.name == "TILESTORED", in.reg
		if in.index < 0 {
			return fmt.Errorf("%s without a SIB index (the stride)", in.name)
		}
		if err := tile(t); err != nil {
			return err
		}
		words := m.colsb[t] / 4
		for i := range m.rows[t] {
			row := p + uintptr(uint64(i)*stride)
			if err := m.check(in.name, row, m.colsb[t], write); err != nil {
				return err
			}
			mem := unsafe.Slice((*uint32)(ptrAt(row)), words)
			if write {
				copy(mem, m.tiles[t][i][:words])
			} else {
				clear(m.tiles[t][i][:])
				copy(m.tiles[t][i][:], mem)
			}
		}
		if !write {
			for i := m.rows[t]; i < 16; i++ {
				m.tiles[t][i] = [16]uint32{}
			}
		}
		return nil
	}
	// TDPBF16PS tmm(reg), tmm(rm), tmm(vvvv)
	c, a, b := in.reg, in.rm, in.v
	for _, t := range []int{c, a, b} {
		if err := tile(t); err != nil {
			return err
		}
	}
	switch {
	case c == a || c == b || a == b:
		return fmt.Errorf("TDPBF16PS tmm%d, tmm%d, tmm%d: registers not distinct (#UD)", c, a, b)
	case m.colsb[a]/4 != m.rows[b], m.colsb[c] != m.colsb[b], m.rows[c] != m.rows[a], m.colsb[a]%4 != 0, m.colsb[c]%4 != 0:
		return fmt.Errorf("TDPBF16PS tmm%d (%d×%dB), tmm%d (%d×%dB), tmm%d (%d×%dB): shapes do not match (#UD)",
			c, m.rows[c], m.colsb[c], a, m.rows[a], m.colsb[a], b, m.rows[b], m.colsb[b])
	}
	m.tiles.dpbf16n(c, a, b, m.rows[c], m.colsb[a]/4, m.colsb[c]/4)
	return nil
}

// ldtilecfg loads a 64-byte tile configuration (palette 1) from p, with
// the checks of the SDM's LDTILECFG (#GP on a reserved byte set, a
// palette other than 0 or 1, a start row, or a tile past 16 rows of 64
// bytes; a tile of 0 rows or 0 bytes is unconfigured and needs both 0).
func (m *amxCPU) ldtilecfg(p uintptr) error {
	if err := m.check("LDTILECFG", p, 64, false); err != nil {
		return err
	}
	cfg := unsafe.Slice((*byte)(ptrAt(p)), 64)
	if m.cfg != nil && p == m.img.cfg {
		cfg = m.cfg
	}
	m.tiles = amxTiles{}
	switch cfg[0] {
	case 0:
		m.cfgd = false
		return nil
	case 1:
	default:
		return fmt.Errorf("LDTILECFG: palette %d (#GP)", cfg[0])
	}
	if cfg[1] != 0 {
		return fmt.Errorf("LDTILECFG: start_row %d", cfg[1])
	}
	for i, v := range cfg[2:16] {
		if v != 0 {
			return fmt.Errorf("LDTILECFG: reserved byte %d is %#x (#GP)", 2+i, v)
		}
	}
	for t := range 16 {
		colsb, rows := int(binary.LittleEndian.Uint16(cfg[16+2*t:])), int(cfg[48+t])
		if t >= 8 {
			if colsb != 0 || rows != 0 {
				return fmt.Errorf("LDTILECFG: tile %d configured, palette 1 has 8 (#GP)", t)
			}
			continue
		}
		if colsb > 64 || rows > 16 || (colsb == 0) != (rows == 0) {
			return fmt.Errorf("LDTILECFG: tile %d of %d rows × %d bytes (#GP)", t, rows, colsb)
		}
		m.rows[t], m.colsb[t] = rows, colsb
	}
	m.cfgd = true
	return nil
}

// amxEmuKernel returns bgemmAMX run on the emulator as a kernel: calls
// counts the calls, the first error is kept in *fail.
func amxEmuKernel(img *amxImage, calls *atomic.Int64, fail *error, mu *sync.Mutex, counts map[string]int) kernelFunc[float32] {
	return func(kc int, a, b, c *float32, ldc int, accum int) {
		cpu := &amxCPU{img: img, counts: map[string]int{}}
		err := cpu.run(kc, a, b, c, ldc, accum)
		calls.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if err != nil && *fail == nil {
			*fail = err
		}
		for k, v := range cpu.counts {
			counts[k] += v
		}
	}
}

// TestAMXMachineCode runs Bgemm through the AMX path with bgemmAMX's
// machine code on the emulator (any amd64 Linux CPU), against float64
// products and bit for bit against the Go twin.
func TestAMXMachineCode(t *testing.T) {
	img := loadAMXImage()
	if img.err != nil {
		t.Skipf("bgemmAMX's machine code not found: %v", img.err)
	}
	var (
		calls  atomic.Int64
		fail   error
		mu     sync.Mutex
		counts = map[string]int{}
	)
	twin := amxTwinSet()
	emu := *twin
	emu.amx = newKernel("amx-emu", amxB, amxEmuKernel(img, &calls, &fail, &mu, counts), nil, twin.amx.simdPack)
	withSet(t, &emu)
	for i, tc := range amxCases {
		c := bgemmRun(t, tc, uint64(300+i))
		if fail != nil {
			t.Fatalf("%+v: %v", tc, fail)
		}
		current.Store(twin)
		w := bgemmRun(t, tc, uint64(300+i))
		current.Store(&emu)
		for j := range c {
			if math.Float32bits(c[j]) != math.Float32bits(w[j]) && !(c[j] != c[j] && w[j] != w[j]) {
				t.Fatalf("%+v: c[%d] = %v on the machine code, %v on the Go twin", tc, j, c[j], w[j])
			}
		}
	}
	if calls.Load() == 0 || counts["TDPBF16PS"] == 0 || counts["TILERELEASE"] != int(calls.Load()) {
		t.Fatalf("%d kernel calls, instructions %v", calls.Load(), counts)
	}
	t.Logf("%d calls of bgemmAMX (%d bytes of code), instructions executed: %v", calls.Load(), len(img.code), counts)
}

// TestAMXEmulatorChecks shows that the emulator's checks bite: the
// kernel's machine code with one instruction changed, or its tile
// configuration changed, fails with the access or the rule it breaks.
func TestAMXEmulatorChecks(t *testing.T) {
	img := loadAMXImage()
	if img.err != nil {
		t.Skipf("bgemmAMX's machine code not found: %v", img.err)
	}
	// A, B and C in one allocation, 16 KiB apart, so that a read past
	// one cannot land in another
	const kc, ldc, gap = 48, 40, 4096
	mem := make([]float32, 4*gap+amxB.mr*kc+amxB.nr*kc+amxB.mr*ldc)
	a := mem[gap:][:amxB.mr*kc]
	b := mem[2*gap+len(a):][:amxB.nr*kc]
	c := mem[3*gap+len(a)+len(b):][:amxB.mr*ldc]
	run := func(code, cfg []byte) error {
		cpu := &amxCPU{img: img, code: code, cfg: cfg, counts: map[string]int{}}
		return cpu.run(kc, &a[0], &b[0], &c[0], ldc, 1)
	}
	if err := run(nil, nil); err != nil {
		t.Fatalf("the kernel as built: %v", err)
	}
	// edit returns a copy of the code with the one instruction that match
	// accepts changed by change (its bytes).
	edit := func(match func(x86asm.Inst) bool, change func([]byte)) []byte {
		code := append([]byte(nil), img.code...)
		found := 0
		for pc := 0; pc < len(code); {
			if ai, ok, _ := decodeAMX(code[pc:]); ok {
				pc += ai.n
				continue
			}
			in, err := x86asm.Decode(code[pc:], 64)
			if err != nil {
				t.Fatalf("offset %#x: %v", pc, err)
			}
			if match(in) {
				change(code[pc : pc+in.Len])
				found++
			}
			pc += in.Len
		}
		if found != 1 {
			t.Fatalf("%d instructions match", found)
		}
		return code
	}
	isOp := func(op x86asm.Op, dst x86asm.Reg, imm int64) func(x86asm.Inst) bool {
		return func(in x86asm.Inst) bool {
			r, _ := in.Args[0].(x86asm.Reg)
			v, _ := in.Args[1].(x86asm.Imm)
			return in.Op == op && r == dst && int64(v) == imm
		}
	}
	setImm := func(v uint32) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint32(b[len(b)-4:], v) }
	}
	cfg := func(change func([]byte)) []byte {
		c := append([]byte(nil), unsafe.Slice((*byte)(ptrAt(img.cfg)), 64)...)
		change(c)
		return c
	}
	for _, tc := range []struct {
		name      string
		code, cfg []byte
		want      string
	}{
		{"A stepped 4 KiB a tile pair", edit(isOp(x86asm.ADD, x86asm.RSI, 0x800), setImm(0x1000)), nil, "TILELOADD reads 64 bytes"},
		{"B stepped one row short", edit(isOp(x86asm.ADD, x86asm.RDI, 0x800), setImm(0x880)), nil, "TILELOADD reads 64 bytes"},
		{"ldc taken as bytes", edit(isOp(x86asm.SHL, x86asm.RBX, 2), func(b []byte) { b[len(b)-1] = 0 }), nil, "TILELOADD reads 64 bytes"},
		{"no TILERELEASE", func() []byte {
			code := append([]byte(nil), img.code...)
			i := strings.Index(string(code), "\xc4\xe2\x78\x49\xc0")
			copy(code[i:], []byte{0x0F, 0x1F, 0x44, 0x00, 0x00}) // a 5-byte NOP
			return code
		}(), nil, "no TILERELEASE"},
		{"tile 7 of 15 rows", nil, cfg(func(c []byte) { c[48+7] = 15 }), "shapes do not match"},
		{"tile 4 of 60 bytes", nil, cfg(func(c []byte) { c[16+2*4] = 60 }), "shapes do not match"},
		{"tile 3 unconfigured", nil, cfg(func(c []byte) { c[16+2*3], c[48+3] = 0, 0 }), "tmm3 is not configured"},
		{"palette 2", nil, cfg(func(c []byte) { c[0] = 2 }), "palette 2"},
		{"a reserved byte", nil, cfg(func(c []byte) { c[5] = 1 }), "reserved byte 5"},
	} {
		err := run(tc.code, tc.cfg)
		t.Logf("%s: %v", tc.name, err)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
