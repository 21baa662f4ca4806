package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
)

// LayoutSize is the byte size of the C struct Layout:
// int ndim; int pad; long long shape[8]; long long stride[4][8].
const LayoutSize = 8 + 8*MaxDims + 8*maxOperands*MaxDims

// layout is backend.Layout (its Base unused: offsets go in the pointers).
type layout backend.Layout

// coalesce is backend.Coalesce as a layout.
func coalesce(shape []int, strides ...[]int) layout {
	cs, cst := backend.Coalesce(shape, strides...)
	return layout{Shape: cs, Strides: cst}
}

func (l layout) total() int { return backend.Layout(l).Total() }

// bytes packs l as the C struct Layout. It panics when l has more than
// MaxDims dims (a view that no coalescing brings to 8 dims).
func (l layout) bytes() []byte {
	if len(l.Shape) > MaxDims {
		panic(fmt.Sprintf("kernels: %d dims after coalescing, at most %d supported", len(l.Shape), MaxDims))
	}
	b := make([]byte, LayoutSize)
	binary.LittleEndian.PutUint32(b[0:], uint32(len(l.Shape)))
	for i, d := range l.Shape {
		binary.LittleEndian.PutUint64(b[8+8*i:], uint64(d))
	}
	for k, st := range l.Strides {
		for i, s := range st {
			binary.LittleEndian.PutUint64(b[8+8*MaxDims+8*(k*MaxDims+i):], uint64(int64(s)))
		}
	}
	return b
}

func ptrArg(o Operand) []byte {
	return u64Arg(o.Ptr + uint64(o.Offset*o.DType.Size()))
}

func u64Arg(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func i64Arg(v int) []byte    { return u64Arg(uint64(int64(v))) }
func i32Arg(v int) []byte    { return binary.LittleEndian.AppendUint32(nil, uint32(int32(v))) }
func f64Arg(v float64) []byte {
	return u64Arg(math.Float64bits(v))
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func threads(p DeviceProps, want int) int {
	t := p.MaxThreadsPerBlock
	if t <= 0 || t > maxBlock {
		t = maxBlock
	}
	if t > want {
		t = want
	}
	// a power of two (the tree reductions need one)
	b := 1
	for b*2 <= t {
		b *= 2
	}
	return b
}

// grid1 sizes a grid-stride launch over n items with block threads each.
func grid1(p DeviceProps, n, block int) [3]uint32 {
	g := (n + block - 1) / block
	sm := p.SMCount
	if sm <= 0 {
		sm = 1
	}
	if lim := sm * 32; g > lim {
		g = lim
	}
	if g < 1 {
		g = 1
	}
	return [3]uint32{uint32(g), 1, 1}
}

func elementwise(p DeviceProps, module, kernel string, n int, args ...[]byte) []Launch {
	if n == 0 {
		return nil
	}
	b := threads(p, 256)
	return []Launch{{Module: module, Kernel: kernel, Grid: grid1(p, n, b), Block: [3]uint32{uint32(b), 1, 1}, Args: args}}
}

func strides(ops ...Operand) [][]int {
	s := make([][]int, len(ops))
	for i, o := range ops {
		s[i] = o.Strides
	}
	return s
}

// Fill sets every element of dst to v (converted as Go converts float64).
func Fill(p DeviceProps, dst Operand, v float64) []Launch {
	l := coalesce(dst.Shape, strides(dst)...)
	return elementwise(p, ModElementwise, fmt.Sprintf("ember_fill<%s>", ctype(dst.DType)), l.total(),
		ptrArg(dst), l.bytes(), i64Arg(l.total()), f64Arg(v))
}

// Copy copies src into dst elementwise, converting dtypes.
func Copy(p DeviceProps, dst, src Operand) []Launch {
	l := coalesce(dst.Shape, strides(dst, src)...)
	return elementwise(p, ModElementwise, fmt.Sprintf("ember_copy<%s, %s>", ctype(dst.DType), ctype(src.DType)), l.total(),
		ptrArg(dst), ptrArg(src), l.bytes(), i64Arg(l.total()))
}

// Unary applies op (with its parameters ps) to src into dst. It panics with a
// *backend.NotImplementedError for an op the dtype lacks.
func Unary(p DeviceProps, op backend.UnaryOp, dst, src Operand, ps backend.Params) []Launch {
	if !UnarySupported(op, src.DType) {
		panic(&backend.NotImplementedError{Op: op.String(), Device: backend.CUDAType, DType: src.DType})
	}
	l := coalesce(dst.Shape, strides(dst, src)...)
	return elementwise(p, ModElementwise, unaryName(op, src.DType), l.total(),
		ptrArg(dst), ptrArg(src), l.bytes(), i64Arg(l.total()), f64Arg(ps[0]), f64Arg(ps[1]), f64Arg(ps[2]))
}

// Binary applies op to a and b (same dtype) into dst (Bool for comparisons).
func Binary(p DeviceProps, op backend.BinaryOp, dst, a, b Operand) []Launch {
	if !BinarySupported(op, a.DType) {
		panic(&backend.NotImplementedError{Op: op.String(), Device: backend.CUDAType, DType: a.DType})
	}
	l := coalesce(dst.Shape, strides(dst, a, b)...)
	return elementwise(p, ModElementwise, binaryName(op, a.DType), l.total(),
		ptrArg(dst), ptrArg(a), ptrArg(b), l.bytes(), i64Arg(l.total()))
}

// Where writes a where cond (Bool) is true, else b.
func Where(p DeviceProps, dst, cond, a, b Operand) []Launch {
	l := coalesce(dst.Shape, strides(dst, cond, a, b)...)
	return elementwise(p, ModElementwise, fmt.Sprintf("ember_where<%s>", ctype(dst.DType)), l.total(),
		ptrArg(dst), ptrArg(cond), ptrArg(a), ptrArg(b), l.bytes(), i64Arg(l.total()))
}

// Arange writes start + i*step at element i of a contiguous dst.
func Arange(p DeviceProps, dst Operand, start, step float64) []Launch {
	if dst.DType == backend.Bool {
		panic(&backend.NotImplementedError{Op: "arange", Device: backend.CUDAType, DType: dst.DType})
	}
	n := numel(dst.Shape)
	return elementwise(p, ModElementwise, fmt.Sprintf("ember_arange<%s>", ctype(dst.DType)), n,
		ptrArg(dst), i64Arg(n), f64Arg(start), f64Arg(step))
}

// Random fills a contiguous floating dst from the Philox stream (seed,
// offset): element i uses block offset+i/4, lane i%4.
func Random(p DeviceProps, dst Operand, seed, offset uint64, normal bool) []Launch {
	if !dst.DType.IsFloat() {
		panic(&backend.NotImplementedError{Op: "random", Device: backend.CUDAType, DType: dst.DType})
	}
	n := numel(dst.Shape)
	nrm := 0
	if normal {
		nrm = 1
	}
	return elementwise(p, ModRandom, fmt.Sprintf("ember_random<%s, %d>", ctype(dst.DType), nrm), (n+3)/4,
		ptrArg(dst), i64Arg(n), u64Arg(seed), u64Arg(offset))
}

// Softmax runs (log-)softmax over the last dim of contiguous rows, one
// block per row.
func Softmax(p DeviceProps, dst, src Operand, log bool) []Launch {
	if !src.DType.IsFloat() {
		panic(&backend.NotImplementedError{Op: "softmax", Device: backend.CUDAType, DType: src.DType})
	}
	n := 1
	if len(src.Shape) > 0 {
		n = src.Shape[len(src.Shape)-1]
	}
	total := numel(src.Shape)
	if n == 0 || total == 0 {
		return nil
	}
	rows := total / n
	b := threads(p, n)
	if b < 32 && p.MaxThreadsPerBlock >= 32 {
		b = 32
	}
	lg := 0
	if log {
		lg = 1
	}
	g := rows
	if g > 65535 {
		g = 65535
	}
	return []Launch{{Module: ModReduce, Kernel: fmt.Sprintf("ember_softmax<%s, %d>", ctype(src.DType), lg),
		Grid: [3]uint32{uint32(g), 1, 1}, Block: [3]uint32{uint32(b), 1, 1},
		Args: [][]byte{ptrArg(dst), ptrArg(src), i64Arg(rows), i64Arg(n)}}}
}

// BlockReduceMin is the reduced extent from which Reduce gives each output
// a block (a shared-memory tree) instead of a thread.
const BlockReduceMin = 64

// Reduce reduces src over the dims where dst has size 1 and src does not
// (dst has src's rank). ArgMax/ArgMin take one such dim and write Int64;
// Any/All take Bool and write Bool.
func Reduce(p DeviceProps, op backend.ReduceOp, dst, src Operand) []Launch {
	if !ReduceSupported(op, src.DType) {
		panic(&backend.NotImplementedError{Op: op.String(), Device: backend.CUDAType, DType: src.DType})
	}
	ks := make([]int, len(src.Shape))
	rs := make([]int, len(src.Shape))
	nr := 0
	for i, d := range src.Shape {
		if dst.Shape[i] == 1 && d != 1 {
			ks[i], rs[i] = 1, d
			nr++
		} else {
			ks[i], rs[i] = d, 1
		}
	}
	if (op == backend.ArgMax || op == backend.ArgMin) && nr == 0 {
		return Fill(p, dst, 0)
	}
	kept := coalesce(ks, dst.Strides, src.Strides)
	red := coalesce(rs, src.Strides)
	nOut, nRed := kept.total(), red.total()
	if nOut == 0 {
		return nil
	}
	if nr == 0 {
		nRed = 1
	}
	blockMode := nRed >= BlockReduceMin || (nRed > 1 && nOut < 2*max(p.SMCount, 1))
	name := reduceName(op, src.DType)
	args := [][]byte{ptrArg(dst), ptrArg(src), kept.bytes(), red.bytes(), i64Arg(nOut), i64Arg(nRed)}
	if !blockMode {
		b := threads(p, 256)
		return []Launch{{Module: ModReduce, Kernel: name, Grid: grid1(p, nOut, b), Block: [3]uint32{uint32(b), 1, 1},
			Args: append(args, i32Arg(0))}}
	}
	b := threads(p, nRed)
	g := nOut
	if g > 65535 {
		g = 65535
	}
	return []Launch{{Module: ModReduce, Kernel: name, Grid: [3]uint32{uint32(g), 1, 1}, Block: [3]uint32{uint32(b), 1, 1},
		Args: append(args, i32Arg(1))}}
}
