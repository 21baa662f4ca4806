//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// hasAsm reports whether this CPU runs the loops (they need AVX, the
// where loops AVX2; x/sys/cpu also checks that the OS saves the registers).
var hasAsm = cpu.X86.HasAVX && cpu.X86.HasAVX2

// hasF16C: the float16 conversions need F16C besides.
var hasF16C = cpu.X86.HasF16C

// hasAVX512BW: the max pooling with indices needs AVX-512 F and BW (and
// BZHI, which every such CPU has).
var hasAVX512BW = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2

// hasFMA reports whether the CPU has FMA3, which affineS/affineD need.
var hasFMA = cpu.X86.HasFMA

var (
	vvS = [...]func(d, a, b *float32, n int){addvvS, subvvS, mulvvS, divvvS}
	vsS = [...]func(d, a *float32, s float32, n int){addvsS, subvsS, mulvsS, divvsS}
	vvD = [...]func(d, a, b *float64, n int){addvvD, subvvD, mulvvD, divvvD}
	vsD = [...]func(d, a *float64, s float64, n int){addvsD, subvsD, mulvsD, divvsD}
)

// svS and svD compute s op b[i]; Add and Mul commute, so they reuse vs.
func svS(op Op, d *float32, s float32, b *float32, n int) {
	switch op {
	case Sub:
		subsvS(d, s, b, n)
	case Div:
		divsvS(d, s, b, n)
	default:
		vsS[op](d, b, s, n)
	}
}

func svD(op Op, d *float64, s float64, b *float64, n int) {
	switch op {
	case Sub:
		subsvD(d, s, b, n)
	case Div:
		divsvD(d, s, b, n)
	default:
		vsD[op](d, b, s, n)
	}
}
