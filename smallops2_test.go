package ember

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PyTorch 1.13 references for smallops_elem.go, smallops_reduce.go and
// smallops_index.go, from testdata/gen_smallops2_fixtures.py (the op-table
// rows, Logaddexp, Fmax, BitwiseAnd, Gcd, ..., are in table.json).

func loadSmallCases2(t *testing.T) []smallCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "smallops", "smallops2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []smallCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// (smallCase.ints is in shapeops_test.go)

func (c smallCase) dimsOpts() []ReduceOption {
	o := []ReduceOption{Dims(c.ints("dims")...)}
	if k, ok := c.Args["keepdim"]; ok && k.(bool) {
		o = append(o, KeepDim())
	}
	if _, ok := c.Args["correction"]; ok {
		o = append(o, Correction(c.f("correction")))
	}
	return o
}

// runSmallOp2 applies the case's op to in with ember.
func runSmallOp2(c smallCase, in []*Tensor) []*Tensor {
	one := func(x *Tensor) []*Tensor { return []*Tensor{x} }
	two := func(a, b *Tensor) []*Tensor { return []*Tensor{a, b} }
	switch c.Op {
	case "heaviside":
		return one(in[0].Heaviside(in[1]))
	case "isclose":
		return one(IsClose(in[0], in[1], c.f("rtol"), c.f("atol"), c.b("equal_nan")))
	case "logaddexp":
		return one(in[0].Logaddexp(in[1]))
	case "logaddexp2":
		return one(in[0].Logaddexp2(in[1]))
	case "fmax":
		return one(in[0].Fmax(in[1]))
	case "fmin":
		return one(in[0].Fmin(in[1]))
	case "amax":
		return one(in[0].Amax(c.dimsOpts()...))
	case "amin":
		return one(in[0].Amin(c.dimsOpts()...))
	case "aminmax":
		o := []ReduceOption{}
		if _, ok := c.Args["dim"]; ok {
			o = append(o, Dims(c.i("dim")))
		}
		if c.b("keepdim") {
			o = append(o, KeepDim())
		}
		return two(in[0].Aminmax(o...))
	case "count_nonzero":
		return one(in[0].CountNonzero(c.ints("dims")...))
	case "var_mean":
		return two(in[0].VarMean(c.dimsOpts()...))
	case "std_mean":
		return two(in[0].StdMean(c.dimsOpts()...))
	case "isin":
		return one(Isin(in[0], in[1], c.b("invert")))
	case "take_along_dim":
		if _, ok := c.Args["dim"]; ok {
			return one(in[0].TakeAlongDim(in[1], c.i("dim")))
		}
		return one(in[0].TakeAlongDim(in[1]))
	case "scatter_reduce":
		return one(in[0].ScatterReduce(c.i("dim"), in[1], in[2], c.Args["reduce"].(string), c.b("include_self")))
	case "scatter_reduce_":
		return one(in[0].MulScalar(1).ScatterReduceInPlace(c.i("dim"), in[1], in[2], c.Args["reduce"].(string), c.b("include_self")))
	case "index_fill":
		return one(in[0].IndexFill(c.i("dim"), in[1], c.f("value")))
	case "index_fill_":
		return one(in[0].MulScalar(1).IndexFillInPlace(c.i("dim"), in[1], c.f("value")))
	case "index_copy":
		return one(in[0].IndexCopy(c.i("dim"), in[1], in[2]))
	case "index_copy_":
		return one(in[0].MulScalar(1).IndexCopyInPlace(c.i("dim"), in[1], in[2]))
	case "index_put":
		return one(in[0].IndexPut(in[1:3], in[3], c.b("accumulate")))
	case "index_put1":
		return one(in[0].IndexPut(in[1:2], in[2], c.b("accumulate")))
	case "index_put_":
		return one(in[0].MulScalar(1).IndexPutInPlace(in[1:3], in[3], c.b("accumulate")))
	case "masked_scatter":
		return one(in[0].MaskedScatter(in[1], in[2]))
	case "masked_scatter_":
		return one(in[0].MulScalar(1).MaskedScatterInPlace(in[1], in[2]))
	}
	panic("unknown op " + c.Op)
}

// TestSmallOps2Fixtures compares every case's outputs (values, dtypes,
// shapes) and the gradients of sum(out·w) with PyTorch's, on every device
// present.
func TestSmallOps2Fixtures(t *testing.T) {
	cases := loadSmallCases2(t)
	for _, dev := range testDevices() {
		for ci, c := range cases {
			checkSmallCase(t, dev, ci, c, runSmallOp2, true, map[string]bool{"heaviside": true})
		}
	}
}

// TestSmallOps2Meta runs the cases whose result's shape does not depend on
// the data on the meta device: shapes and dtypes are PyTorch's.
func TestSmallOps2Meta(t *testing.T) {
	dataDependent := map[string]bool{"masked_scatter": true, "masked_scatter_": true}
	for ci, c := range loadSmallCases2(t) {
		if dataDependent[c.Op] {
			continue
		}
		what := fmt.Sprintf("%s %v case %d on meta", c.Op, c.Args, ci)
		in := make([]*Tensor, len(c.Inputs))
		for k, x := range c.Inputs {
			in[k] = Empty(Shape(x.Shape), On(Meta), Dtype(x.dtype()))
		}
		var outs []*Tensor
		if err := Try(func() { outs = runSmallOp2(c, in) }); err != nil {
			if errors.Is(err, ErrNoData) {
				continue
			}
			t.Fatalf("%s: %v", what, err)
		}
		for k, o := range outs {
			if o.Device() != Meta {
				t.Fatalf("%s: output %d on %v", what, k, o.Device())
			}
			smallClose(t, fmt.Sprintf("%s output %d", what, k), o, c.Outputs[k], true)
		}
	}
}

// TestSmallOps2Gradcheck: finite differences of the new differentiable ops
// on every device.
func TestSmallOps2Gradcheck(t *testing.T) {
	s34 := Shape{3, 4}
	idx := gin{shape: s34, ints: []int64{0, 2, 1, 0, 1, 1, 0, 2, 2, 0, 0, 1}}
	gradcheck(t, "logaddexp", func(x []*Tensor) *Tensor { return x[0].Logaddexp(x[1]) }, vals(s34, -2, 2, 1), vals(Shape{4}, -2, 2, 2))
	gradcheck(t, "logaddexp2", func(x []*Tensor) *Tensor { return x[0].Logaddexp2(x[1]) }, vals(s34, -2, 2, 1), vals(Shape{4}, -2, 2, 2))
	gradcheck(t, "fmax", func(x []*Tensor) *Tensor { return x[0].Fmax(x[1]) }, vals(s34, -2, 2, 1), vals(Shape{4}, -2, 2, 2))
	gradcheck(t, "fmin", func(x []*Tensor) *Tensor { return x[0].Fmin(x[1]) }, vals(s34, -2, 2, 1), vals(Shape{4}, -2, 2, 2))
	gradcheck(t, "deg2rad", func(x []*Tensor) *Tensor { return x[0].Deg2rad().Rad2deg().Deg2rad() }, vals(s34, -2, 2, 1))
	gradcheck(t, "amax", func(x []*Tensor) *Tensor { return x[0].Amax(Dims(0, 2)) }, vals(Shape{2, 3, 4}, -2, 2, 3))
	gradcheck(t, "amin", func(x []*Tensor) *Tensor { return x[0].Amin(Dims(1), KeepDim()) }, vals(s34, -2, 2, 3))
	gradcheck(t, "var_mean", func(x []*Tensor) *Tensor {
		v, m := x[0].VarMean(Dims(1), Correction(0))
		return v.Add(m.MulScalar(3))
	}, vals(s34, -2, 2, 4))
	gradcheck(t, "std_mean", func(x []*Tensor) *Tensor {
		v, m := x[0].StdMean(Dims(0))
		return v.Add(m.MulScalar(3))
	}, vals(s34, -2, 2, 4))
	gradcheck(t, "take_along_dim", func(x []*Tensor) *Tensor { return x[0].TakeAlongDim(x[1], 0) }, vals(s34, -2, 2, 5), idx)
	for _, red := range []string{"sum", "prod", "mean", "amax", "amin"} {
		for _, inc := range []bool{true, false} {
			gradcheck(t, fmt.Sprintf("scatter_reduce %s %v", red, inc), func(x []*Tensor) *Tensor {
				return x[0].ScatterReduce(1, x[1], x[2], red, inc)
			}, vals(s34, 0.5, 2, 6), idx, vals(s34, 0.5, 2, 7))
		}
	}
	i1 := gin{shape: Shape{2}, ints: []int64{2, 0}}
	gradcheck(t, "index_fill", func(x []*Tensor) *Tensor { return x[0].IndexFill(1, x[1], 0.5) }, vals(s34, -2, 2, 8), i1)
	gradcheck(t, "index_copy", func(x []*Tensor) *Tensor { return x[0].IndexCopy(0, x[1], x[2]) }, vals(s34, -2, 2, 8), i1, vals(Shape{2, 4}, -2, 2, 9))
	gradcheck(t, "index_put", func(x []*Tensor) *Tensor { return x[0].IndexPut([]*Tensor{x[1], x[1]}, x[2], true) }, vals(s34, -2, 2, 8), i1, vals(Shape{2}, -2, 2, 9))
	mask := gin{shape: s34, ints: []int64{1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0}}
	gradcheck(t, "masked_scatter", func(x []*Tensor) *Tensor { return x[0].MaskedScatter(x[1].Cast(Bool), x[2]) }, vals(s34, -2, 2, 8), mask, vals(Shape{7}, -2, 2, 9))
}

// TestSmallOps2InPlace: the in-place forms bump the version, refuse a leaf
// that requires grad, and write through views.
func TestSmallOps2InPlace(t *testing.T) {
	x := FromSlice([]float64{1, 2, 3, 4, 5, 6}, Shape{2, 3})
	v := x.st.version.Load()
	i := FromSlice([]int64{0, 2}, Shape{2})
	x.IndexFillInPlace(1, i, -1)
	if x.st.version.Load() == v {
		t.Fatal("IndexFillInPlace did not bump the version")
	}
	if got := fmt.Sprint(x.Float64s()); got != "[-1 2 -1 -1 5 -1]" {
		t.Fatalf("IndexFillInPlace: %v", got)
	}
	// through a view: row 1 of x
	x.Select(0, 1).IndexCopyInPlace(0, FromSlice([]int64{1}, Shape{1}), FromSlice([]float64{9}, Shape{1}))
	if got := fmt.Sprint(x.Float64s()); got != "[-1 2 -1 -1 9 -1]" {
		t.Fatalf("IndexCopyInPlace through a view: %v", got)
	}
	x.IndexPutInPlace([]*Tensor{FromSlice([]int64{0, 0}, Shape{2}), FromSlice([]int64{1, 1}, Shape{2})}, FromSlice([]float64{1, 2}, Shape{2}), true)
	if got := fmt.Sprint(x.Float64s()); got != "[-1 5 -1 -1 9 -1]" {
		t.Fatalf("IndexPutInPlace accumulate: %v", got)
	}
	x.MaskedScatterInPlace(FromSlice([]bool{true, false, false}, Shape{3}), FromSlice([]float64{7, 8, 0}, Shape{3}))
	if got := fmt.Sprint(x.Float64s()); got != "[7 5 -1 8 9 -1]" {
		t.Fatalf("MaskedScatterInPlace: %v", got)
	}
	leaf := Ones(Shape{3}, Dtype(Float64)).SetRequiresGrad(true)
	err := Try(func() { leaf.IndexFillInPlace(0, i, 0) })
	var ae *AutogradError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "a leaf Variable that requires grad is being used in an in-place operation.") {
		t.Fatalf("leaf in place: %v", err)
	}
	// a tensor an op saved, then written in place: Backward refuses
	a := Ones(Shape{3}, Dtype(Float64)).SetRequiresGrad(true)
	b := a.MulScalar(2)
	c := b.Mul(b)
	b.IndexFillInPlace(0, i, 0)
	if err := Try(func() { c.Sum().Backward() }); err == nil || !strings.Contains(err.Error(), "modified by an inplace operation") {
		t.Fatalf("saved tensor written in place: %v", err)
	}
	if err := Try(func() { Ones(Shape{2, 3}).IndexFillInPlace(0, i, 0) }); err == nil {
		t.Fatal("IndexFillInPlace out of range: no error")
	}
	e := Ones(Shape{3}).Expand(2, 3)
	if err := Try(func() { e.IndexFillInPlace(1, i, 0) }); err == nil {
		t.Fatal("IndexFillInPlace on an expanded tensor: no error")
	}
}

// TestSmallOps2Errors: misuse panics with the typed errors and PyTorch's
// wording.
func TestSmallOps2Errors(t *testing.T) {
	v := FromSlice([]float64{1, 2, 3}, Shape{3})
	f32 := v.Cast(Float32)
	m := Ones(Shape{2, 3})
	i := FromSlice([]int64{1, 2}, Shape{2})
	b := FromSlice([]bool{true, false}, Shape{2})
	raises := func(kind, what, msg string, f func()) {
		t.Helper()
		err := Try(f)
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if got := fmt.Sprintf("%T", err); got != kind {
			t.Fatalf("%s: %s (%v), want %s", what, got, err, kind)
		}
		if msg != "" && !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: %q does not say %q", what, err.Error(), msg)
		}
	}
	const se, ve, de, ie = "*ember.ShapeError", "*ember.ValueError", "*ember.DTypeError", "*ember.IndexError"
	raises(de, "heaviside dtypes", "heaviside is not yet implemented for tensors with different dtypes.", func() { v.Heaviside(f32) })
	raises(de, "logaddexp long", `"logaddexp" not implemented for 'Long'`, func() { i.Logaddexp(i) })
	raises(de, "bitwise_and float", `"bitwise_and" not implemented for 'Float'`, func() { f32.BitwiseAnd(f32) })
	raises(de, "bitwise_not float", `"bitwise_not" not implemented for 'Double'`, func() { v.BitwiseNot() })
	raises(de, "shift bool", `not implemented for 'Bool'`, func() { b.LeftShift(b) })
	raises(de, "gcd float", `"gcd" not implemented for 'Float'`, func() { i.Gcd(f32) })
	raises(se, "gcd shapes", "", func() { i.Gcd(FromSlice([]int64{1, 2, 3}, Shape{3})) })
	raises(de, "isclose dtypes", "Float did not match Double", func() { IsClose(f32, v, 1e-5, 1e-8, false) })
	raises(ve, "isclose rtol", "rtol must be greater than or equal to zero, but got -1", func() { IsClose(v, v, -1, 0, false) })
	raises(ve, "isclose atol", "atol must be greater than or equal to zero, but got -1", func() { IsClose(v, v, 0, -1, false) })
	raises(se, "amax empty", "Expected reduction dim 0 to have non-zero size", func() { Ones(Shape{0, 3}).Amax(Dims(0)) })
	raises(se, "amin dims twice", "dim 1 appears multiple times in the list of dims", func() { m.Amin(Dims(1, -1)) })
	raises(se, "aminmax empty", "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.", func() { Ones(Shape{0, 3}).Aminmax() })
	raises(se, "aminmax empty dim", "Expected reduction dim 0 to have non-zero size", func() { Ones(Shape{0, 3}).Aminmax(Dims(0)) })
	raises(se, "count_nonzero dims", "dim 0 appears multiple times in the list of dims", func() { m.CountNonzero(0, 0) })
	raises(de, "var_mean long", "var_mean only support floating point and complex dtypes", func() { i.VarMean() })
	raises(de, "std_mean long", "std_mean only support floating point and complex dtypes", func() { i.StdMean() })
	raises(de, "isin bool", "Unsupported input type encountered for isin(): Bool", func() { Isin(b, i, false) })
	raises(de, "take_along_dim int32", "torch.take_along_dim(): dtype of indices should be Long but got Int", func() { v.TakeAlongDim(i.Cast(Int32), 0) })
	raises(se, "take_along_dim rank", "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 2 dimensions for input, and 1 dimensions for indices", func() { m.TakeAlongDim(i, 0) })
	raises(ie, "take_along_dim range", "", func() { v.TakeAlongDim(FromSlice([]int64{3}, Shape{1}), 0) })
	raises(ve, "scatter_reduce reduce", "reduce argument must be either sum, prod, mean, amax or amin", func() { v.ScatterReduce(0, i, v, "foo", true) })
	raises(de, "scatter_reduce dtypes", "scatter_reduce(): Expected self.dtype to be equal to src.dtype", func() { v.ScatterReduce(0, i, f32, "sum", true) })
	raises(ie, "scatter_reduce range", "", func() { v.ScatterReduce(0, FromSlice([]int64{3}, Shape{1}), v, "sum", true) })
	raises(se, "scatter_reduce rank", "", func() { m.ScatterReduce(0, i, m, "sum", true) })
	raises(de, "index_fill float index", "index_fill_(): Expected dtype int64 for index.", func() { v.IndexFill(0, v, 1) })
	raises(ie, "index_fill range", "index -4 is out of bounds for dimension 0 with size 3", func() { v.IndexFill(0, FromSlice([]int64{-4}, Shape{1}), 1) })
	raises(ie, "index_put range", "index 3 is out of bounds for dimension 0 with size 3", func() { v.IndexPut([]*Tensor{FromSlice([]int64{-3, 3}, Shape{2})}, Scalar(1, Dtype(Float64)), false) })
	raises(se, "index_fill 2-D index", "Index is supposed to be a vector", func() { v.IndexFill(0, Ones(Shape{1, 1}, Dtype(Int64)), 1) })
	raises(de, "index_copy index dtype", "index_copy_(): Expected a long tensor for index, but got Float", func() { v.IndexCopy(0, f32.Narrow(0, 0, 1), v.Narrow(0, 0, 1)) })
	raises(de, "index_copy dtypes", "index_copy_(): self and source expected to have the same dtype", func() { v.IndexCopy(0, i, f32.Narrow(0, 0, 2)) })
	raises(se, "index_copy shapes", "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: 3 at dimension 0 and source slice shape: 2 at dimension 0.", func() { m.IndexCopy(0, FromSlice([]int64{0, 1}, Shape{2}), Ones(Shape{2, 2})) })
	raises(se, "index_copy scalar source", "index_copy_(): When source is scalar, index should have one element (got 2)", func() { v.IndexCopy(0, i, Scalar(1, Dtype(Float64))) })
	raises(se, "index_copy count", "index_copy_(): Number of indices (2) should be equal to source.size(dim) (3)", func() { m.IndexCopy(0, FromSlice([]int64{0, 1}, Shape{2}), Ones(Shape{3, 3})) })
	raises(de, "index_put dtypes", "Index put requires the source and destination dtypes match, got Double for the destination and Float for the source.", func() { v.IndexPut([]*Tensor{i}, f32, false) })
	raises(se, "index_put values", "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]", func() { v.IndexPut([]*Tensor{i}, v, false) })
	raises(de, "index_put int32", "tensors used as indices must be long, byte or bool tensors", func() { v.IndexPut([]*Tensor{FromSlice([]int32{5}, Shape{1})}, Scalar(1, Dtype(Float64)), false) })
	raises(se, "index_put too many", "too many indices for tensor of dimension 1", func() { v.IndexPut([]*Tensor{i, i}, v, false) })
	raises(de, "masked_scatter mask", "masked_scatter_ only supports boolean masks", func() { v.MaskedScatter(v, v) })
	raises(ve, "masked_scatter short", "Number of elements of source < number of ones in mask", func() {
		v.MaskedScatter(FromSlice([]bool{true, true, true}, Shape{3}), v.Narrow(0, 0, 2))
	})
	raises(se, "masked_scatter_ broadcast", "", func() { v.MaskedScatterInPlace(Ones(Shape{2, 3}, Dtype(Bool)), Ones(Shape{6}, Dtype(Float64))) })
}

// TestSmallOps2NoRuntimePanics runs every new op over every dtype, empty,
// 0-dim and size-1 shapes and in- and out-of-range dims: misuse must panic
// with a typed error (Try returns it), never a Go runtime error.
func TestSmallOps2NoRuntimePanics(t *testing.T) {
	var ins []*Tensor
	for _, dt := range []DType{Float32, Float64, Int64, Int32, Bool, BFloat16, Float16} {
		for _, s := range []Shape{{}, {0}, {3}, {2, 3}, {2, 0}, {0, 2}} {
			x := Arange(0, float64(s.NumElements()), 1, Dtype(Float64)).Reshape(s...).Remainder(Scalar(3, Dtype(Float64))).Cast(dt)
			ins = append(ins, x)
		}
	}
	for _, x := range ins {
		ix := x.Cast(Int64)
		for _, dim := range []int{-3, -1, 0, 1, 2} {
			ops := map[string]func(){
				"elem": func() {
					x.Heaviside(x)
					IsClose(x, x, 1e-5, 1e-8, true)
					x.Logaddexp(x)
					x.Fmax(x)
					x.BitwiseXor(x)
					x.Gcd(x)
					x.LeftShift(x)
					x.Signbit()
				},
				"amax":  func() { x.Amax(Dims(dim)); x.Amin(Dims(dim, 0), KeepDim()) },
				"amm":   func() { x.Aminmax(Dims(dim)) },
				"cnz":   func() { x.CountNonzero(dim) },
				"vm":    func() { x.VarMean(Dims(dim)); x.StdMean(Correction(2)) },
				"isin":  func() { Isin(x, x, true) },
				"take":  func() { x.TakeAlongDim(ix, dim); x.TakeAlongDim(ix) },
				"sr":    func() { x.ScatterReduce(dim, ix, x, "prod", false); x.ScatterReduce(dim, ix, x, "mean", true) },
				"ifill": func() { x.IndexFill(dim, ix, 2) },
				"icopy": func() { x.IndexCopy(dim, ix, x) },
				"iput":  func() { x.IndexPut([]*Tensor{ix}, x, true); x.IndexPut([]*Tensor{x.Cast(Bool)}, x, false) },
				"mscat": func() { x.MaskedScatter(x.Cast(Bool), x) },
				"inpl":  func() { x.Clone().IndexFillInPlace(dim, ix, 1); x.Clone().MaskedScatterInPlace(x.Cast(Bool), x) },
			}
			for name, f := range ops {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s on %v %v dim %d: untyped panic %v", name, x.DType(), x.Shape(), dim, r)
						}
					}()
					_ = Try(f)
				}()
			}
		}
	}
}

// TestSmallOps2ByHand: values worked by hand (bit operations past the
// fixtures' ranges).
func TestSmallOps2ByHand(t *testing.T) {
	for _, dev := range testDevices() {
		i := FromSlice([]int64{1, 2, -8, math.MinInt64}, Shape{4}, On(dev))
		s := FromSlice([]int64{64, -1, 65, 0}, Shape{4}, On(dev))
		// counts taken modulo 64, as x86 shifts (torch 1.13 on the CPU)
		if got := fmt.Sprint(i.LeftShift(s).Int64s()); got != "[1 0 -16 -9223372036854775808]" {
			t.Fatalf("LeftShift on %v: %v", dev, got)
		}
		if got := fmt.Sprint(i.RightShift(s).Int64s()); got != "[1 0 -4 -9223372036854775808]" {
			t.Fatalf("RightShift on %v: %v", dev, got)
		}
		// gcd(MinInt, 0) stays MinInt; lcm wraps as C
		if got := fmt.Sprint(i.Gcd(FromSlice([]int64{0, 6, 12, 0}, Shape{4}, On(dev))).Int64s()); got != "[1 2 4 -9223372036854775808]" {
			t.Fatalf("Gcd on %v: %v", dev, got)
		}
		if got := fmt.Sprint(i.BitwiseNot().Int64s()); got != "[-2 -3 7 9223372036854775807]" {
			t.Fatalf("BitwiseNot on %v: %v", dev, got)
		}
		i32 := FromSlice([]int32{1, 2, -8}, Shape{3}, On(dev))
		if got := fmt.Sprint(i32.LeftShift(FromSlice([]int32{32, 33, 1}, Shape{3}, On(dev))).Int64s()); got != "[1 4 -16]" {
			t.Fatalf("int32 LeftShift on %v: %v", dev, got)
		}
	}
}

// TestSmallOps2Huge: hostile shapes give typed errors or meta results,
// never a fatal host allocation: a 2^40-element broadcast of index_put's
// indices is a device allocation (a typed out-of-memory error), and meta
// tensors of 2^48 elements reduce and scatter to meta shapes.
func TestSmallOps2Huge(t *testing.T) {
	x := Ones(Shape{2, 2})
	a := Zeros(Shape{1 << 20, 1}, Dtype(Int64))
	b := Zeros(Shape{1, 1 << 20}, Dtype(Int64))
	raises[*OutOfMemoryError](t, "index_put 2^40 positions", func() { x.IndexPut([]*Tensor{a, b}, Scalar(1), false) })
	raises[*OutOfMemoryError](t, "take_along_dim 2^40", func() {
		Ones(Shape{1 << 20, 1, 4}).TakeAlongDim(Zeros(Shape{1, 1 << 20, 1}, Dtype(Int64)), 2)
	})
	h := Empty(Shape{1 << 24, 1 << 24}, On(Meta))
	hi := Empty(Shape{1 << 24, 1 << 24}, On(Meta), Dtype(Int64))
	for name, f := range map[string]func() *Tensor{
		"amax":           func() *Tensor { return h.Amax(Dims(0)) },
		"count_nonzero":  func() *Tensor { return h.CountNonzero(1) },
		"scatter_reduce": func() *Tensor { return h.ScatterReduce(1, hi, h, "prod", false) },
		"index_fill":     func() *Tensor { return h.IndexFill(0, Empty(Shape{5}, On(Meta), Dtype(Int64)), 1) },
		"index_put":      func() *Tensor { return h.IndexPut([]*Tensor{hi}, h, true) },
		"take_along_dim": func() *Tensor { return h.TakeAlongDim(hi, 1) },
		"isin":           func() *Tensor { return Isin(h, h, false) },
	} {
		var out *Tensor
		if err := Try(func() { out = f() }); err != nil {
			t.Fatalf("%s on meta: %v", name, err)
		}
		if out.Device() != Meta {
			t.Fatalf("%s: on %v", name, out.Device())
		}
	}
}
