package ember

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// TestConv2dBF16AsTorch runs bfloat16 Conv2d (x, w, bias bfloat16) forward
// and backward on the CPU, with the native kernels (the bfloat16 GEMM) and
// the generic ones (float32 on the rounded inputs), against
// torch.nn.functional.conv2d on bfloat16 tensors
// (testdata/fixtures/half/conv_bf16.json, testdata/gen_conv_bf16_fixtures.py).
// Both round float32 sums of exact products once, in different orders: an
// element may differ by a bfloat16 rounding of its value, plus a float32
// accumulation's error bounded here by a fraction of the case's largest
// element.
func TestConv2dBF16AsTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/fixtures/half/conv_bf16.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Cases []struct {
			Shape, Wshape, Oshape             []int
			Stride, Padding, Dilation, Groups int
			X, W, B, Out, Gout, Gx, Gw, Gb    []uint16
		}
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	val := func(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }
	check := func(t *testing.T, what string, got, want []uint16, rel, abs float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
		}
		var top float64
		for _, w := range want {
			top = max(top, math.Abs(val(w)))
		}
		same := 0
		for i := range got {
			g, w := val(got[i]), val(want[i])
			if got[i] == want[i] {
				same++
			}
			if d := math.Abs(g - w); !(d <= rel*math.Abs(w)+abs*top) {
				t.Fatalf("%s[%d] = %v, torch %v (±%g)", what, i, g, w, rel*math.Abs(w)+abs*top)
			}
		}
		t.Logf("%s: %d of %d bits as torch's", what, same, len(got))
	}
	for _, k := range []Kernels{NativeKernels, GenericKernels} {
		for i, c := range fx.Cases {
			x := FromBits(c.X, BFloat16, Shape(c.Shape)).SetRequiresGrad(true)
			w := FromBits(c.W, BFloat16, Shape(c.Wshape)).SetRequiresGrad(true)
			var b *Tensor
			if c.B != nil {
				b = FromBits(c.B, BFloat16, Shape{c.Wshape[0]}).SetRequiresGrad(true)
			}
			s, p, d := [2]int{c.Stride, c.Stride}, [2]int{c.Padding, c.Padding}, [2]int{c.Dilation, c.Dilation}
			if native := k.convsHalf(x, w, b); native != (k == NativeKernels) {
				t.Fatalf("%v: convsHalf = %v", k, native)
			}
			y := k.Conv2d(x, w, b, s, p, d, c.Groups)
			if y.DType() != BFloat16 || !y.Shape().Equal(Shape(c.Oshape)) {
				t.Fatalf("%v case %d: %v %v, want bfloat16 %v", k, i, y.DType(), y.Shape(), c.Oshape)
			}
			name := fmt.Sprintf("%v case %d", k, i)
			check(t, name+" out", y.Bits(), c.Out, 0x1p-8, 0x1p-10)
			y.BackwardWith(FromBits(c.Gout, BFloat16, Shape(c.Oshape)))
			check(t, name+" gx", x.Grad().Bits(), c.Gx, 0x1p-8, 0x1p-9)
			check(t, name+" gw", w.Grad().Bits(), c.Gw, 0x1p-8, 0x1p-9)
			if b != nil {
				check(t, name+" gb", b.Grad().Bits(), c.Gb, 0x1p-8, 0x1p-9)
			}
		}
	}
}
