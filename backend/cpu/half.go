package cpu

import (
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// Fast paths of the bfloat16 kernels on contiguous rows: a row is widened
// to float32 in chunks of halfChunk elements (on the stack), computed with
// package vec's float32 loops and narrowed once, so that every element is
// rounded exactly once, as the element loops (and PyTorch) do: the same
// bits. Other strides take the generated element loops.

// halfChunk is the float32 chunk: small enough for the stack and L1, long
// enough for the vector loops.
const halfChunk = 256

// halfBufs holds the float32 chunks (the vector loops' function tables
// would move chunks on the stack to the heap at every call).
var halfBufs = sync.Pool{New: func() any { return new([2][halfChunk]float32) }}

// vecOp is package vec's op for the binary ops it serves.
func vecOp(op backend.BinaryOp) (vec.Op, bool) {
	switch op {
	case backend.Add:
		return vec.Add, true
	case backend.Sub:
		return vec.Sub, true
	case backend.Mul:
		return vec.Mul, true
	case backend.Div:
		return vec.Div, true
	}
	return 0, false
}

// binaryBFloat16Rows is the generated kernel with the chunked float32
// loops on rows where dst is contiguous and each operand is contiguous or
// one broadcast scalar (not both scalars).
//
// Float16 keeps its element loop: ToF16 keeps a NaN's sign, and where both
// operands are NaNs of opposite signs the sign of the result depends on
// which operand the float32 instruction takes first, which the Go
// compiler's loop and package vec's assembly choose differently (PyTorch
// itself differs there between its vectorised body and scalar tail).
// bfloat16 has no such case: every NaN rounds to 0xFFFF.
func binaryBFloat16Rows(op backend.BinaryOp, d []backend.BF16, od, sd0, sd1 int, a []backend.BF16, oa, sa0, sa1 int, b []backend.BF16, ob, sb0, sb1, n0, n1 int) bool {
	vop, ok := vecOp(op)
	if !ok || n0 == 0 || sd1 != 1 || sa1 < 0 || sa1 > 1 || sb1 < 0 || sb1 > 1 || sa1 == 0 && sb1 == 0 {
		return binaryBFloat16(op, d, od, sd0, sd1, a, oa, sa0, sa1, b, ob, sb0, sb1, n0, n1)
	}
	buf := halfBufs.Get().(*[2][halfChunk]float32)
	defer halfBufs.Put(buf)
	x, y := &buf[0], &buf[1]
	for r := 0; r < n0; r++ {
		dd := d[od+r*sd0:][:n1]
		ra, rb := oa+r*sa0, ob+r*sb0
		for i := 0; i < n1; i += halfChunk {
			n := min(halfChunk, n1-i)
			xs, ys := x[:n], y[:n]
			switch {
			case sa1 == 1 && sb1 == 1:
				vec.F32FromBF16(xs, a[ra+i:])
				vec.F32FromBF16(ys, b[rb+i:])
				vec.Binary(vop, xs, xs, ys)
			case sa1 == 1:
				vec.F32FromBF16(xs, a[ra+i:])
				vec.BinaryScalar(vop, xs, xs, b[rb].Float32())
			default:
				vec.F32FromBF16(xs, b[rb+i:])
				vec.ScalarBinary(vop, xs, a[ra].Float32(), xs)
			}
			vec.BF16FromF32(dd[i:i+n], xs)
		}
	}
	return true
}

// unaryBFloat16Rows is unaryBFloat16 with ReLU on the bits of contiguous
// rows: negatives and -0 become +0, every NaN 0xFFFF (what rounding
// reluF's float32 NaN gives), the rest stays.
func unaryBFloat16Rows(op backend.UnaryOp, d []backend.BF16, od, sd0, sd1 int, a []backend.BF16, oa, sa0, sa1, n0, n1 int, p1, p2, p3 float64) bool {
	if op != backend.ReLU || n0 == 0 || sd1 != 1 || sa1 != 1 {
		return unaryBFloat16(op, d, od, sd0, sd1, a, oa, sa0, sa1, n0, n1, p1, p2, p3)
	}
	for r := 0; r < n0; r++ {
		vec.ReLUBF16(d[od+r*sd0:][:n1], a[oa+r*sa0:][:n1])
	}
	return true
}

// binaryBFloat16BoolRows is binaryBFloat16Bool with plain loops over rows
// where dst and a are contiguous and b is contiguous or one broadcast
// scalar, for the comparisons (exact in float32, as the element loops).
func binaryBFloat16BoolRows(op backend.BinaryOp, d []bool, od, sd0, sd1 int, a []backend.BF16, oa, sa0, sa1 int, b []backend.BF16, ob, sb0, sb1, n0, n1 int) bool {
	if op < backend.Eq || op > backend.Ge || n0 == 0 || sd1 != 1 || sa1 != 1 || sb1 < 0 || sb1 > 1 {
		return binaryBFloat16Bool(op, d, od, sd0, sd1, a, oa, sa0, sa1, b, ob, sb0, sb1, n0, n1)
	}
	for r := 0; r < n0; r++ {
		dd, aa := d[od+r*sd0:][:n1], a[oa+r*sa0:][:n1]
		if sb1 == 1 {
			cmpBF16(op, dd, aa, b[ob+r*sb0:][:n1])
		} else {
			cmpBF16Scalar(op, dd, aa, b[ob+r*sb0].Float32())
		}
	}
	return true
}

func cmpBF16(op backend.BinaryOp, d []bool, a, b []backend.BF16) {
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case backend.Eq:
		for i := range d {
			d[i] = a[i].Float32() == b[i].Float32()
		}
	case backend.Ne:
		for i := range d {
			d[i] = a[i].Float32() != b[i].Float32()
		}
	case backend.Lt:
		for i := range d {
			d[i] = a[i].Float32() < b[i].Float32()
		}
	case backend.Le:
		for i := range d {
			d[i] = a[i].Float32() <= b[i].Float32()
		}
	case backend.Gt:
		for i := range d {
			d[i] = a[i].Float32() > b[i].Float32()
		}
	case backend.Ge:
		for i := range d {
			d[i] = a[i].Float32() >= b[i].Float32()
		}
	}
}

func cmpBF16Scalar(op backend.BinaryOp, d []bool, a []backend.BF16, s float32) {
	a = a[:len(d)]
	switch op {
	case backend.Eq:
		for i := range d {
			d[i] = a[i].Float32() == s
		}
	case backend.Ne:
		for i := range d {
			d[i] = a[i].Float32() != s
		}
	case backend.Lt:
		for i := range d {
			d[i] = a[i].Float32() < s
		}
	case backend.Le:
		for i := range d {
			d[i] = a[i].Float32() <= s
		}
	case backend.Gt:
		for i := range d {
			d[i] = a[i].Float32() > s
		}
	case backend.Ge:
		for i := range d {
			d[i] = a[i].Float32() >= s
		}
	}
}
