package ember

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PyTorch 1.13 references for stack_ops.go and linalg_ops.go, from
// testdata/gen_shapeops_fixtures.py (the format and comparison of
// smallops_test.go).

func (c smallCase) ints(name string) []int {
	var out []int
	for _, v := range c.Args[name].([]any) {
		out = append(out, int(v.(float64)))
	}
	if out == nil {
		out = []int{}
	}
	return out
}

// runShapeOp applies the case's op to in with ember.
func runShapeOp(c smallCase, in []*Tensor) []*Tensor {
	one := func(t *Tensor) []*Tensor { return []*Tensor{t} }
	opt := func(flag string, k *int) *Tensor {
		if !c.b(flag) {
			return nil
		}
		*k++
		return in[*k]
	}
	switch c.Op {
	case "movedim":
		return one(in[0].Movedim(c.ints("src"), c.ints("dst")))
	case "moveaxis":
		return one(in[0].Moveaxis(c.ints("src"), c.ints("dst")))
	case "swapaxes":
		return one(in[0].Swapaxes(c.i("d0"), c.i("d1")))
	case "swapdims":
		return one(in[0].Swapdims(c.i("d0"), c.i("d1")))
	case "expand_as":
		return one(in[0].ExpandAs(in[1]))
	case "broadcast_to":
		return one(in[0].BroadcastTo(c.ints("shape")...))
	case "broadcast_tensors":
		return BroadcastTensors(in...)
	case "unflatten":
		return one(in[0].Unflatten(c.i("dim"), c.ints("sizes")...))
	case "hstack":
		return one(Hstack(in))
	case "vstack":
		return one(Vstack(in))
	case "row_stack":
		return one(RowStack(in))
	case "dstack":
		return one(Dstack(in))
	case "column_stack":
		return one(ColumnStack(in))
	case "tensor_split":
		return in[0].TensorSplit(c.i("sections"), c.i("dim"))
	case "tensor_split_at":
		return in[0].TensorSplitAt(c.ints("indices"), c.i("dim"))
	case "hsplit":
		return in[0].Hsplit(c.i("sections"))
	case "hsplit_at":
		return in[0].HsplitAt(c.ints("indices"))
	case "vsplit":
		return in[0].Vsplit(c.i("sections"))
	case "vsplit_at":
		return in[0].VsplitAt(c.ints("indices"))
	case "dsplit":
		return in[0].Dsplit(c.i("sections"))
	case "dsplit_at":
		return in[0].DsplitAt(c.ints("indices"))
	case "atleast_1d":
		return one(in[0].Atleast1d())
	case "atleast_2d":
		return one(in[0].Atleast2d())
	case "atleast_3d":
		return one(in[0].Atleast3d())
	case "ravel":
		return one(in[0].Transpose(0, 2).Ravel())
	case "fliplr":
		return one(in[0].Fliplr())
	case "flipud":
		return one(in[0].Flipud())
	case "tile":
		return one(in[0].Tile(c.ints("reps")...))
	case "diff":
		k := 0
		pre := opt("pre", &k)
		app := opt("app", &k)
		return one(in[0].Diff(c.i("n"), c.i("dim"), pre, app))
	case "tensordot":
		return one(Tensordot(in[0], in[1], c.i("n")))
	case "tensordot_dims":
		return one(TensordotDims(in[0], in[1], c.ints("da"), c.ints("db")))
	case "addmm":
		return one(Addmm(in[0], in[1], in[2], c.f("beta"), c.f("alpha")))
	case "addmv":
		return one(Addmv(in[0], in[1], in[2], c.f("beta"), c.f("alpha")))
	case "addbmm":
		return one(Addbmm(in[0], in[1], in[2], c.f("beta"), c.f("alpha")))
	case "addr":
		return one(Addr(in[0], in[1], in[2], c.f("beta"), c.f("alpha")))
	case "mv":
		return one(Mv(in[0], in[1]))
	case "dot":
		return one(Dot(in[0], in[1]))
	case "vdot":
		return one(Vdot(in[0], in[1]))
	case "inner":
		return one(Inner(in[0], in[1]))
	case "cov":
		k := 0
		fw := opt("fw", &k)
		aw := opt("aw", &k)
		return one(Cov(in[0], c.i("correction"), fw, aw))
	case "corrcoef":
		return one(Corrcoef(in[0]))
	case "trapezoid":
		return one(Trapezoid(in[0], in[1], c.i("dim")))
	case "trapezoid_dx":
		return one(TrapezoidDx(in[0], c.f("dx"), c.i("dim")))
	case "cumulative_trapezoid":
		return one(CumulativeTrapezoid(in[0], in[1], c.i("dim")))
	case "cumulative_trapezoid_dx":
		return one(CumulativeTrapezoidDx(in[0], c.f("dx"), c.i("dim")))
	case "vander":
		return one(Vander(in[0], c.i("n"), c.b("increasing")))
	case "cartesian_prod":
		return one(CartesianProd(in...))
	case "block_diag":
		return one(BlockDiag(in...))
	case "msort":
		return one(in[0].Msort())
	}
	panic("unknown op " + c.Op)
}

func loadShapeCases(t *testing.T) []smallCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "shapeops", "shapeops.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []smallCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestShapeOpsFixtures compares every case's outputs (values, dtypes,
// shapes) and the gradients of sum(out·w) with PyTorch's, on every device
// present.
func TestShapeOpsFixtures(t *testing.T) {
	cases := loadShapeCases(t)
	for _, dev := range testDevices() {
		for ci, c := range cases {
			if c.Args["cpu_only"] == true && dev != CPU {
				continue
			}
			checkSmallCase(t, dev, ci, c, runShapeOp, false, nil)
		}
	}
}

// TestShapeOpsMeta runs the fixture cases on the meta device: the shapes
// and dtypes are PyTorch's.
func TestShapeOpsMeta(t *testing.T) {
	for ci, c := range loadShapeCases(t) {
		what := fmt.Sprintf("%s %v case %d on meta", c.Op, c.Args, ci)
		in := make([]*Tensor, len(c.Inputs))
		for k, x := range c.Inputs {
			in[k] = Empty(Shape(x.Shape), On(Meta), Dtype(x.dtype()))
		}
		var outs []*Tensor
		if err := Try(func() { outs = runShapeOp(c, in) }); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(outs) != len(c.Outputs) {
			t.Fatalf("%s: %d outputs, PyTorch %d", what, len(outs), len(c.Outputs))
		}
		for k, o := range outs {
			if o.Device() != Meta && len(in) > 0 {
				t.Fatalf("%s: output %d on %v", what, k, o.Device())
			}
			smallClose(t, fmt.Sprintf("%s output %d", what, k), o, c.Outputs[k], true)
		}
	}
}

// TestGradcheckShapeOps compares the composed ops' gradients with central
// differences on every device (Vander's against PyTorch is impossible:
// torch 1.13's vander raises in backward).
func TestGradcheckShapeOps(t *testing.T) {
	gradcheck(t, "vander", func(x []*Tensor) *Tensor { return Vander(x[0], 4, false) }, vals(Shape{3}, -1.5, 1.5, 1))
	gradcheck(t, "vander zero", func(x []*Tensor) *Tensor { return Vander(x[0], 3, true) }, gin{shape: Shape{3}, data: []float64{0, 0.5, -2}})
	gradcheck(t, "tensordot", func(x []*Tensor) *Tensor { return TensordotDims(x[0], x[1], []int{2, 0}, []int{0, 1}) },
		vals(Shape{2, 3, 4}, -1, 1, 2), vals(Shape{4, 2, 3}, -1, 1, 3))
	gradcheck(t, "addbmm", func(x []*Tensor) *Tensor { return Addbmm(x[0], x[1], x[2], 0.5, -2) },
		vals(Shape{3}, -1, 1, 4), vals(Shape{2, 2, 3}, -1, 1, 5), vals(Shape{2, 3, 3}, -1, 1, 6))
	gradcheck(t, "cov", func(x []*Tensor) *Tensor { return Cov(x[0], 1, nil, x[1]) },
		vals(Shape{2, 4}, -1, 1, 7), vals(Shape{4}, 0.5, 2, 8))
	gradcheck(t, "corrcoef", func(x []*Tensor) *Tensor { return Corrcoef(x[0]) }, vals(Shape{3, 5}, -1, 1, 9))
	gradcheck(t, "cumulative_trapezoid", func(x []*Tensor) *Tensor { return CumulativeTrapezoid(x[0], x[1], 1) },
		vals(Shape{2, 4}, -1, 1, 10), vals(Shape{4}, 0, 3, 11))
	gradcheck(t, "diff", func(x []*Tensor) *Tensor { return x[0].Diff(2, 0, x[1], nil) },
		vals(Shape{4, 2}, -1, 1, 12), vals(Shape{1, 2}, -1, 1, 13))
	gradcheck(t, "block_diag", func(x []*Tensor) *Tensor { return BlockDiag(x[0], x[1]) },
		vals(Shape{2}, -1, 1, 14), vals(Shape{2, 3}, -1, 1, 15))
	gradcheck(t, "movedim", func(x []*Tensor) *Tensor { return x[0].Movedim([]int{0, 2}, []int{2, 1}).Unflatten(0, 2, 2) },
		vals(Shape{3, 4, 2}, -1, 1, 16))
}

// TestShapeOpsGradFnNames: the products' results carry PyTorch 1.13's
// grad_fn names.
func TestShapeOpsGradFnNames(t *testing.T) {
	v := Ones(Shape{3}).SetRequiresGrad(true)
	m := Ones(Shape{2, 3}).SetRequiresGrad(true)
	i := Ones(Shape{2}).SetRequiresGrad(true)
	for _, c := range []struct {
		got  *Tensor
		want string
	}{
		{Dot(v, v), "DotBackward0"},
		{Vdot(v, v), "VdotBackward0"},
		{Mv(m, v), "MvBackward0"},
		{Addmv(i, m, v, 1, 1), "AddmvBackward0"},
		{Addr(m, i, v, 1, 1), "AddrBackward0"},
		{Addmm(i.Unsqueeze(1), m, m.T(), 1, 1), "AddmmBackward0"},
		{Addbmm(m, m.Unsqueeze(0), Ones(Shape{1, 3, 3}), 1, 1), "AddbmmBackward0"},
		{m.Movedim([]int{0}, []int{1}), "PermuteBackward0"},
		{m.Swapaxes(0, 1), "TransposeBackward0"},
	} {
		if got := c.got.GradFn(); got != c.want {
			t.Errorf("grad_fn %s, PyTorch %s", got, c.want)
		}
	}
}

// TestShapeOpsErrors: misuse panics with the typed errors and PyTorch's
// wording.
func TestShapeOpsErrors(t *testing.T) {
	m := Ones(Shape{2, 3})
	v := Ones(Shape{3})
	d := Ones(Shape{3}, Dtype(Float64))
	s := Scalar(1)
	i3 := Ones(Shape{3}, Dtype(Int64))
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
	const se, ve, de = "*ember.ShapeError", "*ember.ValueError", "*ember.DTypeError"
	raises(se, "movedim len", "Invalid source or destination dims: source ([0, 1] dims) should contain the same number of dims as destination ([1] dims)", func() { m.Movedim([]int{0, 1}, []int{1}) })
	raises(se, "movedim rep src", "repeated dim in `source` ([0, 0])", func() { m.Movedim([]int{0, 0}, []int{0, 1}) })
	raises(se, "movedim rep dst", "repeated dim in `destination` ([1, -1])", func() { m.Movedim([]int{0, 1}, []int{1, -1}) })
	raises(se, "movedim range", "Dimension out of range (expected to be in range of [-2, 1], but got 2)", func() { m.Movedim([]int{2}, []int{0}) })
	raises(se, "expand_as", "", func() { m.ExpandAs(v) })
	raises(se, "broadcast_to", "must match the existing size (3) at non-singleton dimension 1", func() { v.BroadcastTo(2, 2) })
	raises(se, "broadcast_tensors", "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0", func() { BroadcastTensors(v, Ones(Shape{2})) })
	raises(se, "unflatten sizes", "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor", func() { m.Unflatten(1, 2, 2) })
	raises(se, "unflatten empty", "unflatten: sizes must be non-empty", func() { m.Unflatten(1) })
	raises(se, "unflatten two -1", "only one dimension can be inferred", func() { m.Unflatten(1, -1, -1) })
	raises(se, "unflatten infer", "unflatten: Provided sizes [-1, 2] don't multiply up to the size of dim 1 (3) in the input tensor", func() { m.Unflatten(1, -1, 2) })
	raises(se, "unflatten ambiguous -1", "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous", func() { Empty(Shape{0}).Unflatten(0, -1, 0) })
	raises(se, "unflatten negative dim", "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor", func() { m.Unflatten(-1, 2, 2) })
	raises(se, "unflatten 0-d", "Dimension specified as 0 but tensor has no dimensions", func() { s.Unflatten(0, 1) })
	raises(se, "hstack empty", "hstack expects a non-empty TensorList", func() { Hstack(nil) })
	raises(se, "vstack empty", "vstack expects a non-empty TensorList", func() { Vstack(nil) })
	raises(se, "dstack empty", "dstack expects a non-empty TensorList", func() { Dstack(nil) })
	raises(se, "column_stack empty", "column_stack expects a non-empty TensorList", func() { ColumnStack(nil) })
	raises(se, "column_stack rows", "Sizes of tensors must match except in dimension 1", func() { ColumnStack([]*Tensor{s, v}) })
	raises("*ember.DeviceMismatchError", "hstack devices", "", func() { Hstack([]*Tensor{v, Ones(Shape{3}, On(Meta))}) })
	raises(ve, "tensor_split 0", "number of sections must be larger than 0, got 0", func() { m.TensorSplit(0, 1) })
	raises(se, "tensor_split 0-d", "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims", func() { s.TensorSplit(2, 0) })
	raises(se, "tensor_split_at 0-d", "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims", func() { s.TensorSplitAt([]int{1}, 0) })
	raises(se, "hsplit 0-d", "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!", func() { s.Hsplit(1) })
	raises(se, "hsplit divisible", "torch.hsplit attempted to split along dimension 1, but the size of the dimension 3 is not divisible by the split_size 2!", func() { m.Hsplit(2) })
	raises(se, "hsplit 0", "not divisible by the split_size 0!", func() { m.Hsplit(0) })
	raises(ve, "hsplit negative", "number of sections must be larger than 0, got -1", func() { m.Hsplit(-1) })
	raises(se, "vsplit 1-D", "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!", func() { v.Vsplit(3) })
	raises(se, "vsplit divisible", "torch.vsplit attempted to split along dimension 0, but the size of the dimension 2 is not divisible by the split_size 3!", func() { m.Vsplit(3) })
	raises(se, "dsplit 2-D", "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!", func() { m.DsplitAt([]int{1}) })
	raises(se, "fliplr 1-D", "Input must be >= 2-d.", func() { v.Fliplr() })
	raises(se, "flipud 0-d", "Input must be >= 1-d.", func() { s.Flipud() })
	raises(se, "tile negative", "Trying to create tensor with negative dimension -3", func() { m.Tile(-3) })
	raises(se, "diff 0-d", "diff expects input to be at least one-dimensional", func() { s.Diff(1, -1, nil, nil) })
	raises(se, "diff prepend", "diff expects prepend or append to be the same dimension as input", func() { v.Diff(1, -1, m, nil) })
	raises(se, "diff append", "diff expects prepend or append to be the same dimension as input", func() { v.Diff(1, -1, nil, s) })
	raises(ve, "tensordot negative", "tensordot expects dims >= 0, but got dims=-1", func() { Tensordot(m, m, -1) })
	raises(se, "tensordot big", "Dimension out of range (expected to be in range of [-2, 1], but got -3)", func() { Tensordot(m, m, 3) })
	raises(se, "tensordot lengths", "both dimension lists should have same length", func() { TensordotDims(m, m, []int{0}, []int{0, 1}) })
	raises(se, "tensordot sizes", "contracted dimensions need to match, but first has size 2 in dim 0 and second has size 3 in dim 1", func() { TensordotDims(m, m, []int{0}, []int{1}) })
	raises(se, "tensordot repeated", "dim 0 appears multiple times in the list of dims", func() { TensordotDims(m, m, []int{0, 0}, []int{0, 0}) })
	raises(se, "tensordot 0-d", "Dimension specified as 0 but tensor has no dimensions", func() { TensordotDims(s, s, []int{0}, []int{0}) })
	raises(se, "addmm mat1", "mat1 must be a matrix, got 1-D tensor", func() { Addmm(v, v, m, 1, 1) })
	raises(se, "addmm mat2", "mat2 must be a matrix, got 1-D tensor", func() { Addmm(v, m, v, 1, 1) })
	raises(se, "addmm shapes", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", func() { Addmm(v, m, m, 1, 1) })
	raises(se, "addmm input", "must match the existing size (4) at non-singleton dimension 1", func() { Addmm(Ones(Shape{4}), m, Ones(Shape{3, 2}), 1, 1) })
	raises(se, "addmv dims", "vector + matrix @ vector expected, got 1, 2, 2", func() { Addmv(v, m, m, 1, 1) })
	raises(se, "addmv size", "size mismatch, got 3, 2x3,2", func() { Addmv(v, m, Ones(Shape{2}), 1, 1) })
	raises(se, "addmv input", "size mismatch, got 3, 2x3,3", func() { Addmv(v, m, v, 1, 1) })
	raises(se, "addmv input 2-D", "vector + matrix @ vector expected, got 2, 2, 1", func() { Addmv(Ones(Shape{2, 1}), m, v, 1, 1) })
	raises(se, "addbmm dims", "batch1 must be a 3D tensor", func() { Addbmm(m, m, m, 1, 1) })
	raises(se, "addbmm batches", "batch1 and batch2 must have same number of batches, got 2 and 3", func() { Addbmm(m, Ones(Shape{2, 2, 3}), Ones(Shape{3, 3, 3}), 1, 1) })
	raises(se, "addbmm inner", "Incompatible matrix sizes for bmm (2x3 and 2x3)", func() { Addbmm(m, Ones(Shape{2, 2, 3}), Ones(Shape{2, 2, 3}), 1, 1) })
	raises(se, "addbmm input", "must match the existing size (5) at non-singleton dimension 1", func() { Addbmm(Ones(Shape{5}), Ones(Shape{2, 2, 3}), Ones(Shape{2, 3, 3}), 1, 1) })
	raises(se, "addr vec1", "addr: Expected 1-D argument vec1, but got 2-D", func() { Addr(m, m, v, 1, 1) })
	raises(se, "addr input", "must match the existing size (3) at non-singleton dimension 1", func() { Addr(v, Ones(Shape{2}), Ones(Shape{2}), 1, 1) })
	raises(se, "mv dims", "vector + matrix @ vector expected, got 1, 1, 1", func() { Mv(v, v) })
	raises(se, "mv size", "size mismatch, got 2, 2x3,2", func() { Mv(m, Ones(Shape{2})) })
	raises(se, "dot 2-D", "1D tensors expected, but got 2D and 1D tensors", func() { Dot(m, v) })
	raises(se, "dot size", "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively", func() { Dot(v, Ones(Shape{4})) })
	raises(de, "dot dtype", "dot : expected both vectors to have same dtype, but found Float and Double", func() { Dot(v, d) })
	raises(de, "vdot dtype", "dot : expected both vectors to have same dtype, but found Float and Double", func() { Vdot(v, d) })
	raises(se, "inner", "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4]", func() { Inner(m, Ones(Shape{4})) })
	raises(se, "cov 3-D", "cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions", func() { Cov(Ones(Shape{2, 2, 2}), 1, nil, nil) })
	raises(de, "cov bool", "cov(): bool dtype is not supported for input", func() { Cov(m.Cast(Bool), 1, nil, nil) })
	raises(se, "cov fweights dims", "cov(): expected fweights to have one or fewer dimensions but got fweights with 2 dimensions", func() { Cov(m, 1, Ones(Shape{3, 1}, Dtype(Int64)), nil) })
	raises(de, "cov fweights dtype", "cov(): expected fweights to have integral dtype but got fweights with Float dtype", func() { Cov(m, 1, v, nil) })
	raises(se, "cov fweights numel", "cov(): expected fweights to have the same numel as there are observations in the input but got 2 != 3", func() { Cov(m, 1, Ones(Shape{2}, Dtype(Int64)), nil) })
	raises(ve, "cov fweights negative", "cov(): fweights cannot be negative", func() { Cov(m, 1, FromSlice([]int64{1, -1, 1}, nil), nil) })
	raises(se, "cov aweights dims", "cov(): expected aweights to have one or fewer dimensions but got aweights with 2 dimensions", func() { Cov(m, 1, nil, Ones(Shape{3, 1})) })
	raises(de, "cov aweights dtype", "cov(): expected aweights to have floating point dtype but got aweights with Long dtype", func() { Cov(m, 1, nil, i3) })
	raises(se, "cov aweights numel", "cov(): expected aweights to have the same numel as there are observations in the input but got 2 != 3", func() { Cov(m, 1, nil, Ones(Shape{2})) })
	raises(ve, "cov aweights negative", "cov(): aweights cannot be negative", func() { Cov(m, 1, nil, FromSlice([]float32{1, -1, 1}, nil)) })
	raises(ve, "cov weights zero", "cov(): weights sum to zero, can't be normalized", func() { Cov(m, 1, nil, Zeros(Shape{3})) })
	raises(se, "trapezoid 0-d", "Dimension specified as -1 but tensor has no dimensions", func() { TrapezoidDx(s, 1, -1) })
	raises(de, "trapezoid bool", "trapezoid: received a bool input for `y`, but bool is not supported", func() { TrapezoidDx(v.Cast(Bool), 1, -1) })
	raises(de, "trapezoid bool x", "trapezoid: received a bool input for `x` or `y`, but bool is not supported", func() { Trapezoid(v, v.Cast(Bool), -1) })
	raises(se, "trapezoid x", "trapezoid: There must be one `x` value for each sample point", func() { Trapezoid(m, Ones(Shape{2}), -1) })
	raises(se, "trapezoid x broadcast", "", func() { Trapezoid(Ones(Shape{2, 3, 4}), Ones(Shape{3, 5}), -1) })
	raises(se, "cumulative_trapezoid x", "cumulative_trapezoid: There must be one `x` value for each sample point", func() { CumulativeTrapezoid(m, Ones(Shape{2}), -1) })
	raises(se, "cumulative_trapezoid 0-d", "slice() cannot be applied to a 0-dim tensor.", func() { CumulativeTrapezoidDx(s, 1, -1) })
	raises(se, "vander 2-D", "x must be a one-dimensional tensor.", func() { Vander(m, 2, false) })
	raises(se, "vander 0-d", "x must be a one-dimensional tensor.", func() { Vander(s, 2, false) })
	raises(ve, "vander N", "N must be non-negative.", func() { Vander(v, -1, false) })
	raises(se, "cartesian_prod 2-D", "Expect a 1D vector, but got shape [2, 3]", func() { CartesianProd(m, v) })
	raises(se, "cartesian_prod 0-d", "Expect a 1D vector, but got shape []", func() { CartesianProd(s, v) })
	raises(ve, "cartesian_prod empty", "meshgrid expects a non-empty TensorList", func() { CartesianProd() })
	raises(de, "cartesian_prod dtypes", "meshgrid expects all tensors to have the same dtype", func() { CartesianProd(v, d) })
	raises(se, "block_diag 3-D", "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 1 has 3 dimensions", func() { BlockDiag(v, Ones(Shape{1, 1, 1})) })
	raises("*ember.DeviceMismatchError", "block_diag devices", "", func() { BlockDiag(v, Ones(Shape{2}, On(Meta))) })
}

// TestShapeOpsNoRuntimePanics runs every new op over every dtype, empty,
// 0-dim and size-1 shapes and in- and out-of-range dims: misuse must panic
// with a typed error (Try returns it), never a Go runtime error.
func TestShapeOpsNoRuntimePanics(t *testing.T) {
	var ins []*Tensor
	for _, dt := range []DType{Float32, Float64, Int64, Bool, BFloat16} {
		for _, s := range []Shape{{}, {0}, {3}, {2, 3}, {2, 0}, {0, 2}, {2, 1, 3}} {
			ins = append(ins, Arange(0, float64(s.NumElements()), 1, Dtype(Float64)).Reshape(s...).Remainder(Scalar(3, Dtype(Float64))).Cast(dt))
		}
	}
	for _, x := range ins {
		for _, dim := range []int{-4, -1, 0, 1, 2, 5} {
			ops := map[string]func(){
				"movedim": func() { x.Movedim([]int{dim}, []int{0}); x.Movedim([]int{0, dim}, []int{dim, 1}) },
				"swap":    func() { x.Swapaxes(dim, 0) },
				"bcast": func() {
					x.ExpandAs(Ones(Shape{2, 3}))
					x.BroadcastTo(dim, 3)
					BroadcastTensors(x, x, Ones(Shape{dim + 4}))
				},
				"unflat": func() { x.Unflatten(dim, -1); x.Unflatten(dim, 0, -1); x.Unflatten(dim, dim, -1) },
				"stacks": func() {
					Hstack([]*Tensor{x, x})
					Vstack([]*Tensor{x, x})
					Dstack([]*Tensor{x, x})
					ColumnStack([]*Tensor{x, x})
				},
				"tsplit": func() { x.TensorSplit(dim, dim); x.TensorSplitAt([]int{dim, -dim, 1 << 62}, dim) },
				"hsplit": func() {
					x.Hsplit(dim)
					x.HsplitAt([]int{dim})
					x.Vsplit(dim)
					x.VsplitAt(nil)
					x.Dsplit(dim)
					x.DsplitAt([]int{dim})
				},
				"atleast":  func() { x.Atleast1d(); x.Atleast2d(); x.Atleast3d(); x.Ravel() },
				"flip":     func() { x.Fliplr(); x.Flipud() },
				"tile":     func() { x.Tile(dim); x.Tile(dim, 2, 1, 1) },
				"diff":     func() { x.Diff(dim, dim, x, x); x.Diff(2, dim, nil, nil) },
				"tdot":     func() { Tensordot(x, x, dim); TensordotDims(x, x, []int{dim}, []int{0}) },
				"addmm":    func() { Addmm(x, x, x, 1, 1); Addmv(x, x, x, 0, 1); Addbmm(x, x, x, 1, 2); Addr(x, x, x, 1, 1) },
				"dots":     func() { Mv(x, x); Dot(x, x); Vdot(x, x); Inner(x, x) },
				"cov":      func() { Cov(x, dim, nil, nil); Cov(x, 1, x, x); Corrcoef(x) },
				"trap":     func() { Trapezoid(x, x, dim); TrapezoidDx(x, 0.5, dim) },
				"ctrap":    func() { CumulativeTrapezoid(x, x, dim); CumulativeTrapezoidDx(x, 0.5, dim) },
				"vander":   func() { Vander(x, dim, true); Vander(x, 3, false) },
				"cart":     func() { CartesianProd(x, x); CartesianProd(x) },
				"blockdia": func() { BlockDiag(x, x); BlockDiag(x) },
				"msort":    func() { x.Msort() },
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

// TestShapeOpsHugeSizes: hostile sizes give a shape on the meta device or
// a typed error, never a Go runtime panic or an allocation of the size
// asked for.
func TestShapeOpsHugeSizes(t *testing.T) {
	huge := Empty(Shape{1 << 40}, On(Meta))
	if got := huge.Diff(1<<39, 0, nil, nil).Shape(); !got.Equal(Shape{1<<40 - 1<<39}) {
		t.Fatalf("diff on meta: %v", got)
	}
	if got := Vander(Empty(Shape{1 << 20}, On(Meta)), 1<<30, false).Shape(); !got.Equal(Shape{1 << 20, 1 << 30}) {
		t.Fatalf("vander on meta: %v", got)
	}
	if got := Vander(Ones(Shape{0}), 1<<60, true).Shape(); !got.Equal(Shape{0, 1 << 60}) {
		t.Fatalf("vander empty: %v", got)
	}
	raises[*ShapeError](t, "vander overflow", func() { Vander(Ones(Shape{1 << 20}), math.MaxInt/2, false) })
	raises[*OutOfMemoryError](t, "vander 2^50", func() { Vander(Ones(Shape{4}), 1<<50, false) })
	raises[*ShapeError](t, "tensor_split 2^40 sections", func() { Ones(Shape{3}).TensorSplit(1<<40, 0) })
	raises[*ShapeError](t, "block_diag overflow", func() {
		b := Empty(Shape{1 << 60, 1}, On(Meta))
		BlockDiag(b, b, b, b, b, b, b, b, b)
	})
	raises[*ShapeError](t, "unflatten overflow", func() { Ones(Shape{4}).Unflatten(0, 1<<40, 1<<40, 0, -1) })
	raises[*ShapeError](t, "tile overflow", func() { Ones(Shape{4}).Tile(math.MaxInt/2, 4) })
	if got := Empty(Shape{1 << 30, 1 << 20}, On(Meta)).Tile(4, 1).Shape(); !got.Equal(Shape{1 << 32, 1 << 20}) {
		t.Fatalf("tile on meta: %v", got)
	}
	if err := Try(func() { BlockDiag(Empty(Shape{1 << 29, 1 << 29}, On(Meta)), Empty(Shape{2, 2}, On(Meta))) }); err != nil {
		t.Fatalf("block_diag on meta: %v", err)
	}
}

// TestShapeOpsOnEmulatedCUDA reruns the PyTorch fixtures and gradient
// checks with an emulated cuda:0 present, so every op also runs through
// the CUDA backend's kernels.
func TestShapeOpsOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	t.Run("Fixtures", TestShapeOpsFixtures)
	t.Run("Gradcheck", TestGradcheckShapeOps)
}
