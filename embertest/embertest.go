// Package embertest is ember's backend conformance suite. A backend's
// tests call Run (every PyTorch fixture case and the hand-worked tests, with
// values) or RunShapes (shape, dtype and device rules only, for backends
// without data such as meta) with one of the backend's devices:
//
//	func TestConformance(t *testing.T) { embertest.Run(t, ember.CPU) }
//
// The fixtures are testdata/fixtures/*.json, written from PyTorch by
// testdata/gen_fixtures.py. Every test body is device-agnostic.
package embertest

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/philox"
)

// Run runs every fixture case on dev, comparing shapes, dtypes and values
// with PyTorch's, the hand-worked tests (device rules, errors, copies
// between devices, random numbers), and convolution, pooling and batch
// norm on both ember.Kernels paths against PyTorch and each other.
func Run(t *testing.T, dev ember.Device) {
	t.Helper()
	if err := ember.CheckDevice(dev); err != nil {
		t.Skipf("device %v unusable: %v", dev, err)
	}
	t.Run("Fixtures", func(t *testing.T) { runFixtures(t, dev, true) })
	t.Run("TableFixtures", testTableFixtures)
	t.Run("SameDevice", func(t *testing.T) { testSameDevice(t, dev) })
	t.Run("ShapeErrors", func(t *testing.T) { testShapeErrors(t, dev) })
	t.Run("To", func(t *testing.T) { testTo(t, dev) })
	t.Run("Creation", func(t *testing.T) { testCreation(t, dev) })
	t.Run("Random", func(t *testing.T) { testRandom(t, dev) })
	t.Run("NativeKernels", func(t *testing.T) { testNativeKernels(t, dev) })
}

// RunShapes runs only the shape, dtype and device rules (no values), so a
// backend without data (meta) can run it.
func RunShapes(t *testing.T, dev ember.Device) {
	t.Helper()
	t.Run("Fixtures", func(t *testing.T) { runFixtures(t, dev, false) })
	t.Run("SameDevice", func(t *testing.T) { testSameDevice(t, dev) })
	t.Run("ShapeErrors", func(t *testing.T) { testShapeErrors(t, dev) })
}

// Known lists fixture cases where ember deliberately differs from PyTorch,
// with the reason; they are skipped.
var Known = map[string]string{}

// UnsupportedOn lists fixture cases a device type does not implement, as
// PyTorch's own backend for it does not: they are skipped there.
var UnsupportedOn = map[ember.DeviceType]map[string]string{
	ember.CUDAType: {
		"matmul_int64": "integer matmul is not implemented on CUDA (cuBLAS has no integer GEMM; PyTorch: \"addmm_cuda\" not implemented for 'Long')",
		"matmul_int32": "integer matmul is not implemented on CUDA (cuBLAS has no integer GEMM; PyTorch: \"addmm_cuda\" not implemented for 'Int')",
	},
}

func runFixtures(t *testing.T, dev ember.Device, values bool) {
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.File, ".json")+"/"+c.Name, func(t *testing.T) {
			if why, ok := Known[c.Name]; ok {
				t.Skip(why)
			}
			if why, ok := UnsupportedOn[dev.Type][c.Name]; ok {
				t.Skip(why)
			}
			runCase(t, c, dev, values)
		})
	}
}

func runCase(t *testing.T, c Case, dev ember.Device, values bool) {
	if c.Op == "str" {
		if !values {
			t.Skip("printing needs values")
		}
		x := c.Inputs[0].build(dev)
		got := x.CPU().String()
		if got != *c.Str {
			t.Errorf("String():\n got %s\nwant %s", got, *c.Str)
		}
		if dev != ember.CPU {
			if s := x.String(); !strings.Contains(s, fmt.Sprintf("device='%v'", dev)) {
				t.Errorf("String() on %v lacks the device suffix: %s", dev, s)
			}
		}
		return
	}
	in := make([]*ember.Tensor, len(c.Inputs))
	for i, s := range c.Inputs {
		in[i] = s.build(dev)
		if c.Grads != nil {
			in[i].SetRequiresGrad(true)
		}
	}
	var outs []*ember.Tensor
	err := ember.Try(func() { outs = c.apply(in) })
	if c.Error != "" {
		if err == nil {
			t.Fatalf("PyTorch raised %q; ember returned %v", c.Error, describe(outs))
		}
		var se *ember.ShapeError
		var de *ember.DTypeError
		if !errors.As(err, &se) && !errors.As(err, &de) {
			t.Errorf("error %T %v, want *ember.ShapeError or *ember.DTypeError (PyTorch: %s)", err, err, c.Error)
		}
		return
	}
	if err != nil {
		t.Fatalf("ember panicked: %v", err)
	}
	want := c.Outs
	if c.Out != nil {
		want = []Result{*c.Out}
	}
	if len(outs) != len(want) {
		t.Fatalf("%d outputs, want %d", len(outs), len(want))
	}
	for i, w := range want {
		checkResult(t, fmt.Sprintf("out[%d]", i), c.Op, outs[i], w, dev, values)
	}
	if c.Grads != nil {
		checkGrads(t, c, in, outs[0], dev, values)
	}
	if c.ViewOK != nil {
		shape := intList(c.ViewShape)
		verr := ember.Try(func() { in[0].View(shape...) })
		if *c.ViewOK && verr != nil {
			t.Errorf("View(%v) failed (%v); PyTorch's view succeeds", shape, verr)
		}
		if !*c.ViewOK && verr == nil {
			t.Errorf("View(%v) succeeded; PyTorch's view raises (strides %v)", shape, in[0].Strides())
		}
	}
}

// checkGrads compares the grad_fn and the gradients of sum(out · GradW)
// with PyTorch's.
func checkGrads(t *testing.T, c Case, in []*ember.Tensor, out *ember.Tensor, dev ember.Device, values bool) {
	t.Helper()
	if got := out.GradFn(); got != c.GradFn {
		t.Errorf("grad_fn %s, PyTorch's %s", got, c.GradFn)
	}
	if !values {
		return
	}
	w := ember.FromSlice(nums(c.GradW), out.Shape(), ember.On(dev)).Cast(out.DType())
	out.Mul(w).Sum().Backward()
	for i, want := range c.Grads {
		g := in[i].Grad()
		if g == nil {
			t.Fatalf("input %d got no gradient", i)
		}
		checkResult(t, fmt.Sprintf("grad[%d]", i), c.Op, g, want, dev, values)
	}
}

func describe(ts []*ember.Tensor) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%v %v", t.Shape(), t.DType()))
	}
	return strings.Join(parts, "; ")
}

func checkResult(t *testing.T, what, op string, got *ember.Tensor, w Result, dev ember.Device, values bool) {
	t.Helper()
	if !got.Shape().Equal(w.Shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), ember.Shape(w.Shape))
	}
	dt := dtypeOf(w.DType)
	if got.DType() != dt {
		t.Fatalf("%s: dtype %v, want %v", what, got.DType(), dt)
	}
	if got.Device() != dev {
		t.Fatalf("%s: device %v, want %v", what, got.Device(), dev)
	}
	if w.Strides != nil && ember.Shape(w.Shape).NumElements() > 0 {
		st := got.Strides()
		for i, s := range w.Strides {
			if w.Shape[i] > 1 && st[i] != s {
				t.Errorf("%s: strides %v, want %v (PyTorch)", what, st, w.Strides)
				break
			}
		}
	}
	if !values {
		return
	}
	wantV := nums(w.Data)
	if dt == ember.Bool {
		g := got.Bools()
		for i := range g {
			if g[i] != (wantV[i] != 0) {
				t.Fatalf("%s: element %d = %v, want %v\n got %v\nwant %v", what, i, g[i], wantV[i] != 0, g, wantV)
			}
		}
		return
	}
	if dt.IsInt() {
		g := got.Int64s()
		for i := range g {
			if float64(g[i]) != wantV[i] {
				t.Fatalf("%s: element %d = %d, want %v\n got %v\nwant %v", what, i, g[i], wantV[i], g, wantV)
			}
		}
		return
	}
	rtol, atol := tolerance(op, dt)
	g := got.Float64s()
	for i := range g {
		if !close(g[i], wantV[i], rtol, atol) {
			t.Fatalf("%s: element %d = %v, want %v (rtol %g, atol %g)\n got %v\nwant %v", what, i, g[i], wantV[i], rtol, atol, g, wantV)
		}
	}
}

func close(a, b, rtol, atol float64) bool {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return math.IsNaN(a) && math.IsNaN(b)
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return a == b
	}
	return math.Abs(a-b) <= atol+rtol*math.Abs(b)
}

// other is a second device for the same-device rule: meta, or cpu on meta.
func other(dev ember.Device) ember.Device {
	if dev == ember.Meta {
		return ember.CPU
	}
	return ember.Meta
}

// mustPanic runs f and returns the error it panicked with.
func mustPanic(t *testing.T, what string, f func()) error {
	t.Helper()
	err := ember.Try(f)
	if err == nil {
		t.Fatalf("%s: no panic", what)
	}
	return err
}

func testSameDevice(t *testing.T, dev ember.Device) {
	o := other(dev)
	mk := func(d ember.Device) *ember.Tensor {
		return ember.FromSlice([]float32{1, 2, 3, 4, 5, 6}, ember.Shape{2, 3}, ember.On(d))
	}
	mkB := func(d ember.Device) *ember.Tensor {
		return ember.FromSlice([]bool{true, false, true, false, true, false}, ember.Shape{2, 3}, ember.On(d))
	}
	type binop struct {
		name string
		f    func(a, b *ember.Tensor) *ember.Tensor
	}
	ops := []binop{
		{"add", (*ember.Tensor).Add}, {"sub", (*ember.Tensor).Sub}, {"mul", (*ember.Tensor).Mul},
		{"div", (*ember.Tensor).Div}, {"pow", (*ember.Tensor).Pow}, {"maximum", (*ember.Tensor).Maximum},
		{"minimum", (*ember.Tensor).Minimum}, {"remainder", (*ember.Tensor).Remainder},
		{"floor_divide", (*ember.Tensor).FloorDivide}, {"atan2", (*ember.Tensor).Atan2},
		{"eq", (*ember.Tensor).Eq}, {"ne", (*ember.Tensor).Ne}, {"lt", (*ember.Tensor).Lt},
		{"le", (*ember.Tensor).Le}, {"gt", (*ember.Tensor).Gt}, {"ge", (*ember.Tensor).Ge},
		{"logical_and", (*ember.Tensor).LogicalAnd}, {"logical_or", (*ember.Tensor).LogicalOr},
		{"logical_xor", (*ember.Tensor).LogicalXor},
		{"matmul", func(a, b *ember.Tensor) *ember.Tensor { return a.MatMul(b.T()) }},
		{"where", func(a, b *ember.Tensor) *ember.Tensor { return ember.Where(mkB(a.Device()), a, b) }},
		{"cat", func(a, b *ember.Tensor) *ember.Tensor { return ember.Cat([]*ember.Tensor{a, b}, 0) }},
		{"stack", func(a, b *ember.Tensor) *ember.Tensor { return ember.Stack([]*ember.Tensor{a, b}, 0) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			for _, order := range [][2]ember.Device{{o, dev}, {dev, o}} {
				a, b := mk(order[0]), mk(order[1])
				err := mustPanic(t, op.name, func() { op.f(a, b) })
				var dm *ember.DeviceMismatchError
				if !errors.As(err, &dm) {
					t.Fatalf("panic %T %v, want *ember.DeviceMismatchError", err, err)
				}
				if dm.Op != op.name || len(dm.Devices) != 2 || dm.Devices[0] != order[0] || dm.Devices[1] != order[1] {
					t.Errorf("error %+v, want op %s devices [%v %v]", dm, op.name, order[0], order[1])
				}
				want := fmt.Sprintf("Expected all tensors to be on the same device, but found at least two devices, %v and %v! (op: %s)", order[0], order[1], op.name)
				if err.Error() != want {
					t.Errorf("message\n got %s\nwant %s", err.Error(), want)
				}
			}
		})
	}
	t.Run("where_cond", func(t *testing.T) {
		err := mustPanic(t, "where", func() { ember.Where(mkB(o), mk(dev), mk(dev)) })
		var dm *ember.DeviceMismatchError
		if !errors.As(err, &dm) || dm.Op != "where" || dm.Devices[0] != o || dm.Devices[1] != dev {
			t.Errorf("got %v", err)
		}
	})
	t.Run("message", func(t *testing.T) {
		e := &ember.DeviceMismatchError{Op: "mul", Devices: []ember.Device{ember.Meta, ember.CPU}}
		const want = "Expected all tensors to be on the same device, but found at least two devices, meta and cpu! (op: mul)"
		if e.Error() != want {
			t.Errorf("got %s", e.Error())
		}
	})
	t.Run("scalar_ops_stay", func(t *testing.T) {
		// Go scalars take the tensor's device: no mismatch.
		x := mk(dev)
		for _, y := range []*ember.Tensor{x.AddScalar(1), x.MulScalar(2.5), x.GtScalar(2), x.Sum(), x.Softmax(1)} {
			if y.Device() != dev {
				t.Errorf("result on %v, want %v", y.Device(), dev)
			}
		}
	})
}

func testShapeErrors(t *testing.T, dev ember.Device) {
	on := ember.On(dev)
	a := ember.Zeros(ember.Shape{2, 3}, on)
	b := ember.Zeros(ember.Shape{4}, on)
	cases := []struct {
		name string
		f    func()
	}{
		{"add", func() { a.Add(b) }},
		{"matmul", func() { a.MatMul(ember.Zeros(ember.Shape{4, 2}, on)) }},
		{"matmul_0d", func() { ember.Scalar(1, on).MatMul(b) }},
		{"reshape", func() { a.Reshape(7) }},
		{"reshape_two_inferred", func() { a.Reshape(-1, -1) }},
		{"view_transposed", func() { a.T().View(6) }},
		{"cat", func() { ember.Cat([]*ember.Tensor{a, b}, 0) }},
		{"cat_empty", func() { ember.Cat(nil, 0) }},
		{"dim", func() { a.Sum(ember.Dims(2)) }},
		{"dim_neg", func() { a.Softmax(-3) }},
		{"select", func() { a.Select(0, 2) }},
		{"narrow", func() { a.Narrow(1, 2, 2) }},
		{"expand", func() { a.Expand(2, 4) }},
		{"permute", func() { a.Permute(0) }},
		{"from_slice", func() { ember.FromSlice([]float32{1, 2, 3}, ember.Shape{2, 2}, on) }},
		{"empty_negative", func() { ember.Zeros(ember.Shape{-1}, on) }},
		{"max_empty", func() { ember.Zeros(ember.Shape{0}, on).Max() }},
		{"item", func() { a.Item() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := mustPanic(t, c.name, c.f)
			var se *ember.ShapeError
			if !errors.As(err, &se) {
				t.Errorf("panic %T %v, want *ember.ShapeError", err, err)
			}
		})
	}
	t.Run("message", func(t *testing.T) {
		err := mustPanic(t, "add", func() { a.Add(b) })
		const want = "add: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1 (shapes [2, 3], [4])"
		if err.Error() != want {
			t.Errorf("got %q\nwant %q", err.Error(), want)
		}
		// torch.zeros(5, 2, 3) + torch.zeros(4, 1): the dimension of the result
		err = mustPanic(t, "add", func() {
			ember.Zeros(ember.Shape{5, 2, 3}, on).Add(ember.Zeros(ember.Shape{4, 1}, on))
		})
		const want3 = "add: The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 1 (shapes [5, 2, 3], [4, 1])"
		if err.Error() != want3 {
			t.Errorf("got %q\nwant %q", err.Error(), want3)
		}
	})
}

func testTo(t *testing.T, dev ember.Device) {
	x := ember.FromSlice([]float32{1.5, -2, 3}, nil, ember.On(dev))
	if x.To(dev) != x {
		t.Error("To(own device) is not the same tensor")
	}
	if dev == ember.CPU && x.CPU() != x {
		t.Error("CPU() of a cpu tensor is not the same tensor")
	}
	if dev.Type == ember.CUDAType && x.CUDA(dev.Index) != x {
		t.Error("CUDA(i) of a cuda:i tensor is not the same tensor")
	}
	if x.Cast(ember.Float32) != x {
		t.Error("Cast to own dtype is not the same tensor")
	}
	// To another device copies.
	h := x.CPU()
	if dev != ember.CPU {
		if h == x || h.Device() != ember.CPU {
			t.Fatalf("CPU() of a %v tensor: %v on %v", dev, h, h.Device())
		}
	}
	if got := h.Float32s(); got[0] != 1.5 || got[1] != -2 || got[2] != 3 {
		t.Errorf("values after To: %v", got)
	}
	back := h.To(dev)
	if dev != ember.CPU && back == h {
		t.Error("To(dev) of a cpu tensor is the same tensor")
	}
	if back.Device() != dev || !back.Shape().Equal(ember.Shape{3}) {
		t.Errorf("round trip: %v on %v", back.Shape(), back.Device())
	}
	if got := back.Float32s(); got[0] != 1.5 || got[1] != -2 || got[2] != 3 {
		t.Errorf("values after round trip: %v", got)
	}
	// Non-contiguous source: the copy is in logical order.
	m := ember.FromSlice([]int32{1, 2, 3, 4, 5, 6}, ember.Shape{2, 3}, ember.On(dev)).T()
	mh := m.CPU()
	if got := mh.Int32s(); fmt.Sprint(got) != "[1 4 2 5 3 6]" || !mh.Shape().Equal(ember.Shape{3, 2}) {
		t.Errorf("transposed copy: %v %v", mh.Shape(), got)
	}
	// Meta copies keep shape and dtype.
	mm := m.To(ember.Meta)
	if mm.Device() != ember.Meta || !mm.Shape().Equal(ember.Shape{3, 2}) || mm.DType() != ember.Int32 {
		t.Errorf("To(meta): %v %v %v", mm.Device(), mm.Shape(), mm.DType())
	}
	if err := ember.Try(func() { mm.Data() }); !errors.Is(err, ember.ErrNoData) {
		t.Errorf("Data of meta: %v, want ErrNoData", err)
	}
	// Cast keeps the device.
	c := x.Cast(ember.Int64)
	if c.Device() != dev || fmt.Sprint(c.Int64s()) != "[1 -2 3]" {
		t.Errorf("Cast: %v %v", c.Device(), c.Int64s())
	}
}

func testCreation(t *testing.T, dev ember.Device) {
	on := ember.On(dev)
	check := func(name string, x *ember.Tensor, shape ember.Shape, dt ember.DType, want string) {
		t.Helper()
		if x.Device() != dev || !x.Shape().Equal(shape) || x.DType() != dt {
			t.Errorf("%s: %v %v %v, want %v %v %v", name, x.Device(), x.Shape(), x.DType(), dev, shape, dt)
			return
		}
		if got := fmt.Sprint(x.Float64s()); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	check("zeros", ember.Zeros(ember.Shape{2, 2}, on), ember.Shape{2, 2}, ember.Float32, "[0 0 0 0]")
	check("ones_i32", ember.Ones(ember.Shape{3}, on, ember.Dtype(ember.Int32)), ember.Shape{3}, ember.Int32, "[1 1 1]")
	check("full", ember.Full(ember.Shape{2}, 2.5, on, ember.Dtype(ember.Float64)), ember.Shape{2}, ember.Float64, "[2.5 2.5]")
	check("scalar", ember.Scalar(-4, on), ember.Shape{}, ember.Float32, "[-4]")
	check("arange_int", ember.Arange(0, 5, 2, on), ember.Shape{3}, ember.Int64, "[0 2 4]")
	check("arange_float", ember.Arange(0, 1, 0.25, on), ember.Shape{4}, ember.Float32, "[0 0.25 0.5 0.75]")
	check("arange_neg", ember.Arange(3, 0, -1, on), ember.Shape{3}, ember.Int64, "[3 2 1]")
	check("linspace", ember.Linspace(0, 1, 5, on), ember.Shape{5}, ember.Float32, "[0 0.25 0.5 0.75 1]")
	check("eye", ember.Eye(3, on), ember.Shape{3, 3}, ember.Float32, "[1 0 0 0 1 0 0 0 1]")
	check("from_slice_cast", ember.FromSlice([]float64{1.7, -1.7}, nil, on, ember.Dtype(ember.Int64)), ember.Shape{2}, ember.Int64, "[1 -1]")
	check("zeros_like", ember.ZerosLike(ember.FromSlice([]int32{5, 6}, nil, on)), ember.Shape{2}, ember.Int32, "[0 0]")
	check("bool_sum", ember.FromSlice([]bool{true, true, false}, nil, on).Sum(), ember.Shape{}, ember.Int64, "[2]")
	if v := ember.FromSlice([]float64{2.5}, ember.Shape{}, on).Item(); v != 2.5 {
		t.Errorf("Item = %v", v)
	}
	if err := ember.Synchronize(dev); err != nil {
		t.Errorf("Synchronize: %v", err)
	}
}

func testRandom(t *testing.T, dev ember.Device) {
	on := ember.On(dev)
	const seed = 1234
	ember.ManualSeed(seed)
	a := ember.Rand(ember.Shape{3, 5}, on).Float32s()
	an := ember.Randn(ember.Shape{6}, on).Float32s()
	ember.ManualSeed(seed)
	b := ember.Rand(ember.Shape{3, 5}, on).Float32s()
	bn := ember.Randn(ember.Shape{6}, on).Float32s()
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(an) != fmt.Sprint(bn) {
		t.Errorf("same seed, different numbers:\n%v\n%v\n%v\n%v", a, b, an, bn)
	}
	// The Philox stream: element i is Block(seed, offset+i/4) lane i%4; the
	// first call after ManualSeed starts at offset 0, the next at Blocks(15)=4.
	for i, v := range a {
		want := philox.Uniform32(philox.Block(seed, uint64(i/4))[i%4])
		if v != want {
			t.Fatalf("Rand[%d] = %v, want %v (Philox)", i, v, want)
		}
	}
	for i, v := range an {
		want := float32(philox.Normal(philox.Block(seed, 4+uint64(i/4)), i%4))
		if math.Abs(float64(v-want)) > 1e-6 {
			t.Fatalf("Randn[%d] = %v, want %v (Philox)", i, v, want)
		}
	}
	ember.ManualSeed(seed)
	d := ember.Rand(ember.Shape{4}, on, ember.Dtype(ember.Float64)).Float64s()
	for i, v := range d {
		if want := philox.Uniform64(philox.Block(seed, 0)[i]); v != want {
			t.Errorf("Rand float64[%d] = %v, want %v", i, v, want)
		}
	}
	// Successive calls differ.
	x, y := ember.Rand(ember.Shape{8}, on).Float32s(), ember.Rand(ember.Shape{8}, on).Float32s()
	if fmt.Sprint(x) == fmt.Sprint(y) {
		t.Error("two Rand calls returned the same numbers")
	}
	// Moments.
	const n = 200000
	u := ember.Rand(ember.Shape{n}, on)
	if m := u.Mean().Item(); math.Abs(m-0.5) > 0.005 {
		t.Errorf("uniform mean %v", m)
	}
	if v := u.Var().Item(); math.Abs(v-1.0/12) > 0.002 {
		t.Errorf("uniform variance %v, want 1/12", v)
	}
	if lo, hi := u.Min().Item(), u.Max().Item(); lo < 0 || hi >= 1 {
		t.Errorf("uniform range [%v, %v]", lo, hi)
	}
	z := ember.Randn(ember.Shape{n}, on)
	if m := z.Mean().Item(); math.Abs(m) > 0.01 {
		t.Errorf("normal mean %v", m)
	}
	if v := z.Var().Item(); math.Abs(v-1) > 0.02 {
		t.Errorf("normal variance %v", v)
	}
	if err := ember.Try(func() { ember.Rand(ember.Shape{2}, on, ember.Dtype(ember.Int64)) }); err == nil {
		t.Error("Rand with Int64 did not panic")
	}
}
