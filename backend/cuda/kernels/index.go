package kernels

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// Launch plans of the indexing module (index.cu): gather, scatter, scan
// and sort along one dim.

func zeroAt(strides []int, dim int) []int {
	s := append([]int(nil), strides...)
	s[dim] = 0
	return s
}

func oneAt(shape []int, dim int) []int {
	s := append([]int(nil), shape...)
	s[dim] = 1
	return s
}

// Gather writes dst[p] = src[p with dim ← index[p]] over dst's shape;
// index (Int64) has dst's shape, src has it except along dim.
func Gather(p DeviceProps, dst, src, index Operand, dim int) []Launch {
	l := coalesce(dst.Shape, dst.Strides, index.Strides, zeroAt(src.Strides, dim))
	return elementwise(p, ModIndex, fmt.Sprintf("ember_gather<%s>", ctype(dst.DType)), numel(dst.Shape),
		ptrArg(dst), ptrArg(index), ptrArg(src), l.bytes(), i64Arg(numel(dst.Shape)), i64Arg(src.Strides[dim]), i64Arg(src.Shape[dim]))
}

// Scatter writes (accumulate: adds, atomically) src[p] at dst[p with dim ←
// index[p]] over index's shape. Accumulation needs a numeric dtype.
func Scatter(p DeviceProps, dst, index, src Operand, dim int, accumulate bool) []Launch {
	acc := 0
	if accumulate {
		acc = 1
		if dst.DType == backend.Bool {
			panic(&backend.NotImplementedError{Op: "scatter_add", Device: backend.CUDAType, DType: dst.DType})
		}
	}
	n := numel(index.Shape)
	l := coalesce(index.Shape, index.Strides, src.Strides, zeroAt(dst.Strides, dim))
	return elementwise(p, ModIndex, fmt.Sprintf("ember_scatter<%s, %d>", ctype(dst.DType), acc), n,
		ptrArg(dst), ptrArg(index), ptrArg(src), l.bytes(), i64Arg(n), i64Arg(dst.Strides[dim]), i64Arg(dst.Shape[dim]))
}

// ScanDTypes are the dtypes Scan has kernels for.
var ScanDTypes = []backend.DType{backend.Float32, backend.Float64, backend.Int64}

// Scan writes the cumulative sum (prod: product) along dim, one thread
// per line, from the end when reverse is set.
func Scan(p DeviceProps, dst, src Operand, dim int, prod, reverse bool) []Launch {
	if dst.DType != backend.Float32 && dst.DType != backend.Float64 && dst.DType != backend.Int64 {
		panic(&backend.NotImplementedError{Op: "cumsum", Device: backend.CUDAType, DType: dst.DType})
	}
	n := dst.Shape[dim]
	shape := oneAt(dst.Shape, dim)
	lines := numel(shape)
	if n == 0 || lines == 0 {
		return nil
	}
	l := coalesce(shape, dst.Strides, src.Strides)
	return elementwise(p, ModIndex, fmt.Sprintf("ember_scan<%s, %d, %d>", ctype(dst.DType), b2i(prod), b2i(reverse)), lines,
		ptrArg(dst), ptrArg(src), l.bytes(), i64Arg(lines), i64Arg(n), i64Arg(dst.Strides[dim]), i64Arg(src.Strides[dim]))
}

// Sort sorts every line of src along dim stably into values and indices
// (Int64): one block per line, a bitonic network in place in the outputs.
func Sort(p DeviceProps, values, indices, src Operand, dim int, descending bool) []Launch {
	n := src.Shape[dim]
	shape := oneAt(src.Shape, dim)
	lines := numel(shape)
	if n == 0 || lines == 0 {
		return nil
	}
	pw := 1
	for pw < n {
		pw *= 2
	}
	l := coalesce(shape, values.Strides, indices.Strides, src.Strides)
	b := threads(p, max(pw/2, 1))
	g := min(lines, 65535)
	return []Launch{{Module: ModIndex, Kernel: fmt.Sprintf("ember_sort<%s, %d>", ctype(src.DType), b2i(descending)),
		Grid: [3]uint32{uint32(g), 1, 1}, Block: [3]uint32{uint32(b), 1, 1},
		Args: [][]byte{ptrArg(values), ptrArg(indices), ptrArg(src), l.bytes(), i64Arg(lines), i64Arg(n), i64Arg(pw),
			i64Arg(values.Strides[dim]), i64Arg(indices.Strides[dim]), i64Arg(src.Strides[dim])}}}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// indexNames lists the instantiations of the index module.
func indexNames() []string {
	var out []string
	for _, d := range allDTypes {
		c := ctype(d)
		out = append(out, fmt.Sprintf("ember_gather<%s>", c), fmt.Sprintf("ember_scatter<%s, 0>", c),
			fmt.Sprintf("ember_sort<%s, 0>", c), fmt.Sprintf("ember_sort<%s, 1>", c))
		if d != backend.Bool {
			out = append(out, fmt.Sprintf("ember_scatter<%s, 1>", c))
		}
	}
	for _, d := range halfDTypes { // gather and scatter copy bits; scatter_add adds in float
		out = append(out, fmt.Sprintf("ember_gather<%s>", ctype(d)), fmt.Sprintf("ember_scatter<%s, 0>", ctype(d)),
			fmt.Sprintf("ember_scatter<%s, 1>", ctype(d)))
	}
	for _, d := range ScanDTypes {
		for _, pr := range []int{0, 1} {
			for _, rv := range []int{0, 1} {
				out = append(out, fmt.Sprintf("ember_scan<%s, %d, %d>", ctype(d), pr, rv))
			}
		}
	}
	return out
}
