package ember

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// halfOpsFixtures is testdata/fixtures/half/ops.json (testdata/gen_fixtures.py,
// gen_half_ops): PyTorch 1.13's results for two-byte ops it computes in
// float32 and rounds once, and its half-precision linspace. Cases marked
// emulated are the float32 op on the two-byte values, rounded once, where
// torch 1.13 has no CPU kernel for the dtype (or its kernel rounds at
// every step, see the generator).
type halfOpsFixtures struct {
	Cases []halfOpCase
}

type halfOpCase struct {
	Name, Op string
	Inputs   []halfOpTensor
	Out      halfOpTensor
	Grads    []halfOpTensor
	Args     map[string]any
	Emulated bool
}

// arg is the number argument name.
func (c halfOpCase) arg(name string) float64 { return c.Args[name].(float64) }

// ints is the list argument name.
func (c halfOpCase) ints(name string) []int {
	var out []int
	for _, v := range c.Args[name].([]any) {
		out = append(out, int(v.(float64)))
	}
	return out
}

// halfOpTensor is a tensor as its bits: 16 for the two-byte floats, 32 for
// float32, 64 for float64.
type halfOpTensor struct {
	Shape []int
	Dtype string
	Bits  []uint64
}

func (h halfOpTensor) tensor(dev Device) *Tensor {
	dt := halfDT(h.Dtype)
	switch dt {
	case Float32:
		v := make([]float32, len(h.Bits))
		for i, b := range h.Bits {
			v[i] = math.Float32frombits(uint32(b))
		}
		return FromSlice(v, Shape(h.Shape), On(dev))
	case Float64:
		v := make([]float64, len(h.Bits))
		for i, b := range h.Bits {
			v[i] = math.Float64frombits(b)
		}
		return FromSlice(v, Shape(h.Shape), On(dev))
	}
	v := make([]uint16, len(h.Bits))
	for i, b := range h.Bits {
		v[i] = uint16(b)
	}
	return FromBits(v, dt, Shape(h.Shape), On(dev))
}

// halfOpsDev is the device the ops.json tests run on: the CPU, and an
// emulated cuda:0 in TestHalfOpsOnEmulatedCUDA.
var halfOpsDev = CPU

// TestHalfOpsOnEmulatedCUDA runs the ops.json tests on an emulated cuda:0
// (the real CUDA kernels built with g++; no HalfMatMuler there, so the
// products go through float32 copies).
func TestHalfOpsOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	halfOpsDev = CUDA(0)
	defer func() { halfOpsDev = CPU }()
	for name, f := range map[string]func(*testing.T){
		"gelu": TestHalfGELU, "pool": TestHalfAdaptiveAvgPool2d, "inplace": TestHalfInPlaceWider,
		"fused": TestHalfInPlaceFused, "baddbmm": TestHalfBaddbmm, "linear": TestHalfLinearRoundsOnce, "linspace": TestHalfLinspace,
	} {
		t.Run(name, f)
	}
}

func loadHalfOps(t *testing.T) []halfOpCase {
	t.Helper()
	b, err := os.ReadFile("testdata/fixtures/half/ops.json")
	if err != nil {
		t.Fatal(err)
	}
	var f halfOpsFixtures
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// halfOpsCases runs f on each case of ops.json whose op is one of ops.
func halfOpsCases(t *testing.T, f func(t *testing.T, c halfOpCase), ops ...string) {
	n := 0
	for _, c := range loadHalfOps(t) {
		for _, op := range ops {
			if c.Op == op {
				t.Run(c.Name, func(t *testing.T) { f(t, c) })
				n++
			}
		}
	}
	if n == 0 {
		t.Fatalf("no %v cases in ops.json", ops)
	}
}

// checkHalfOut compares got with want (dtype, shape and bits): two-byte
// values within tol units in the last place (of one sign), float32 and
// float64 exactly; NaNs match NaNs.
func checkHalfOut(t *testing.T, what string, got *Tensor, want halfOpTensor, tol int) {
	t.Helper()
	if got.DType().String() != want.Dtype || !got.Shape().Equal(Shape(want.Shape)) {
		t.Fatalf("%s: %v %v, torch %s %v", what, got.DType(), got.Shape(), want.Dtype, want.Shape)
	}
	bad := 0
	report := func(i int, g, w any) {
		if bad++; bad <= 4 {
			t.Errorf("%s [%d]: %v, torch %v", what, i, g, w)
		}
	}
	switch got.DType() {
	case Float32:
		for i, v := range got.Contiguous().Float32s() {
			w := math.Float32frombits(uint32(want.Bits[i]))
			if math.Float32bits(v) != uint32(want.Bits[i]) && !(v != v && w != w) {
				report(i, v, w)
			}
		}
	case Float64:
		for i, v := range got.Contiguous().Float64s() {
			w := math.Float64frombits(want.Bits[i])
			if math.Float64bits(v) != want.Bits[i] && !(v != v && w != w) {
				report(i, v, w)
			}
		}
	default:
		wt := halfOpTensor{Shape: want.Shape, Dtype: want.Dtype, Bits: want.Bits}.tensor(CPU).Float32s()
		gv := got.Contiguous().Float32s()
		for i, g := range got.Contiguous().Bits() {
			w := uint16(want.Bits[i])
			if g == w || gv[i] != gv[i] && wt[i] != wt[i] {
				continue
			}
			if tol == 0 || ulps(g, w) > tol || (g^w)&0x8000 != 0 && gv[i] != 0 {
				report(i, gv[i], wt[i])
			}
		}
	}
	if bad > 4 {
		t.Errorf("%s: %d of %d differ", what, bad, len(want.Bits))
	}
}

// TestHalfGELU: GELU and its gradient on bfloat16/float16 are computed in
// float32 and rounded once (torch's bf16 GELU; float16 emulated), within
// one unit for erf's float32 implementations; the reviewer's values too.
func TestHalfGELU(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		x := c.Inputs[0].tensor(halfOpsDev).SetRequiresGrad(true)
		y := GELU(x)
		geluClose(t, "gelu", x, y, c.Out)
		y.BackwardWith(c.Inputs[1].tensor(halfOpsDev))
		geluClose(t, "gelu grad", x, x.Grad(), c.Grads[0])
		if x.DType() == BFloat16 {
			// bf16(-3.1) = -3.09375 and 1: x·Φ(x) = -0.0030573, 0.8413447,
			// nearest bf16 -0.0030517578125 and 0.83984375 (torch's too)
			if got := y.Float32s()[:2]; got[0] != -0.0030517578125 || got[1] != 0.83984375 {
				t.Errorf("gelu(bf16 [-3.1, 1]) = %v, want [-0.0030517578 0.83984375]", got)
			}
		}
	}, "gelu")
}

// geluClose compares a GELU result (or gradient) at x with torch's: within
// one unit in the last place, or, where 1 + erf(x/√2) cancels (x far
// below 0), within |x|·2⁻²² (a few float32 units of erf near -1, times
// |x|/2: float32 erf implementations differ there, and float16's
// subnormals resolve it).
func geluClose(t *testing.T, what string, x, got *Tensor, want halfOpTensor) {
	t.Helper()
	w := halfOpTensor{Shape: want.Shape, Dtype: want.Dtype, Bits: want.Bits}.tensor(CPU)
	if got.DType() != w.DType() || !got.Shape().Equal(w.Shape()) {
		t.Fatalf("%s: %v %v, torch %v %v", what, got.DType(), got.Shape(), w.DType(), w.Shape())
	}
	gb, wb := got.Bits(), w.Bits()
	gv, wv, xv := got.Float32s(), w.Float32s(), x.Float32s()
	bad := 0
	for i := range gb {
		d := math.Abs(float64(gv[i]) - float64(wv[i]))
		if gb[i] == wb[i] || (ulps(gb[i], wb[i]) <= 1 && (gb[i]^wb[i])&0x8000 == 0) || d <= math.Abs(float64(xv[i]))*0x1p-22 {
			continue
		}
		if bad++; bad <= 4 {
			t.Errorf("%s at x=%v: %v, torch %v", what, xv[i], gv[i], wv[i])
		}
	}
}
