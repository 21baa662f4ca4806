package nn

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// convAuditCase is a module of testdata/nn/conv_audit.json, written by
// testdata/gen_conv_audit_fixtures.py (PyTorch 1.13, float64).
type convAuditCase struct {
	Cls     string          `json:"cls"`
	In      int             `json:"in"`
	Out     int             `json:"out"`
	Kernel  json.RawMessage `json:"kernel"`
	KW      map[string]any  `json:"kw"`
	Weight  jsonTensor      `json:"weight"`
	Bias    *jsonTensor     `json:"bias"`
	X       jsonTensor      `json:"x"`
	Y       jsonTensor      `json:"y"`
	W       jsonTensor      `json:"w"`
	GX      jsonTensor      `json:"gx"`
	GWeight jsonTensor      `json:"gweight"`
	GBias   *jsonTensor     `json:"gbias"`
	Repr    string          `json:"repr"`
}

func (j jsonTensor) f64() *ember.Tensor { return ember.FromSlice(j.Data, ember.Shape(j.Shape)) }

// pairOf reads a PyTorch int or (h, w) argument.
func pairOf(t *testing.T, v any) (int, int, bool) {
	switch v := v.(type) {
	case float64:
		return int(v), int(v), false
	case []any:
		return int(v[0].(float64)), int(v[1].(float64)), true
	}
	t.Fatalf("argument %v", v)
	return 0, 0, false
}

func closeToJSON(t *testing.T, what string, got *ember.Tensor, want jsonTensor) {
	t.Helper()
	if !got.Shape().Equal(ember.Shape(want.Shape)) {
		t.Fatalf("%s: shape %v, PyTorch %v", what, got.Shape(), want.Shape)
	}
	for i, v := range got.Float64s() {
		if math.Abs(v-want.Data[i]) > 1e-9+1e-9*math.Abs(want.Data[i]) {
			t.Fatalf("%s[%d] = %v, PyTorch %v", what, i, v, want.Data[i])
		}
	}
}

// TestConvModulesAgainstPyTorch builds nn.Conv2d and nn.Conv1d with
// tuple kernel sizes, strides, paddings and dilations and padding='same'
// or 'valid' as PyTorch's constructors took them, loads PyTorch's
// weights and checks the output, the gradients and the repr.
// padding_mode's cases (testdata/gen_pad_fixtures.py) are in
// conv_padmode.json.
func TestConvModulesAgainstPyTorch(t *testing.T) {
	for _, file := range []string{"conv_audit.json", "conv_padmode.json"} {
		convModulesAgainstPyTorch(t, "../testdata/nn/"+file)
	}
}

func convModulesAgainstPyTorch(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cs []convAuditCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		var opts []ConvOption
		for k, v := range c.KW {
			if k == "padding_mode" {
				opts = append(opts, PaddingMode(v.(string)))
				continue
			}
			if k == "bias" {
				if v == false {
					opts = append(opts, NoBias())
				}
				continue
			}
			if k == "groups" {
				opts = append(opts, Groups(int(v.(float64))))
				continue
			}
			if k == "padding" {
				switch v {
				case "same":
					opts = append(opts, PaddingSame())
					continue
				case "valid":
					opts = append(opts, PaddingValid())
					continue
				}
			}
			h, w, two := pairOf(t, v)
			switch {
			case k == "stride" && two:
				opts = append(opts, StrideHW(h, w))
			case k == "stride":
				opts = append(opts, Stride(h))
			case k == "padding" && two:
				opts = append(opts, PaddingHW(h, w))
			case k == "padding":
				opts = append(opts, Padding(h))
			case k == "dilation" && two:
				opts = append(opts, DilationHW(h, w))
			case k == "dilation":
				opts = append(opts, Dilation(h))
			default:
				t.Fatalf("argument %s", k)
			}
		}
		var kv any
		if err := json.Unmarshal(c.Kernel, &kv); err != nil {
			t.Fatal(err)
		}
		kh, kw, two := pairOf(t, kv)
		var m interface {
			Module
			Forward(*ember.Tensor) *ember.Tensor
		}
		var weight, bias **ember.Tensor
		if c.Cls == "Conv2d" {
			if two {
				opts = append(opts, KernelHW(kh, kw))
			}
			m2 := NewConv2d(c.In, c.Out, kh, opts...)
			m, weight, bias = m2, &m2.Weight, &m2.Bias
		} else {
			m1 := NewConv1d(c.In, c.Out, kh, opts...)
			m, weight, bias = m1, &m1.Weight, &m1.Bias
		}
		if got := m.(interface{ String() string }).String(); got != c.Repr {
			t.Errorf("repr %q, PyTorch %q", got, c.Repr)
		}
		*weight = c.Weight.f64().SetRequiresGrad(true)
		if c.Bias != nil {
			*bias = c.Bias.f64().SetRequiresGrad(true)
		}
		x := c.X.f64().SetRequiresGrad(true)
		y := m.Forward(x)
		closeToJSON(t, c.Repr+" output", y, c.Y)
		y.Mul(c.W.f64()).Sum().Backward()
		closeToJSON(t, c.Repr+" grad x", x.Grad(), c.GX)
		closeToJSON(t, c.Repr+" grad weight", (*weight).Grad(), c.GWeight)
		if c.GBias != nil {
			closeToJSON(t, c.Repr+" grad bias", (*bias).Grad(), *c.GBias)
		}
	}
}

// TestConvOptionErrors: PyTorch's ValueErrors for padding='same' with a
// stride and for an unknown padding string; a two-size option given to
// Conv1d is refused rather than half used.
func TestConvOptionErrors(t *testing.T) {
	testenv.Raises[*ember.ValueError](t, "same strided", func() { NewConv2d(3, 4, 3, PaddingSame(), Stride(2)) })
	testenv.Raises[*ember.ValueError](t, "same strided 1d", func() { NewConv1d(3, 4, 3, Stride(2), PaddingSame()) })
	testenv.Raises[*ember.ValueError](t, "1d two sizes", func() { NewConv1d(3, 4, 3, StrideHW(1, 2)) })
	testenv.Raises[*ember.ValueError](t, "1d kernel", func() { NewConv1d(3, 4, 3, KernelHW(1, 2)) })
	c := NewConv2d(3, 4, 3)
	c.PaddingName = "foo"
	e := testenv.Raises[*ember.ValueError](t, "bad name", func() { c.Forward(ember.Zeros(ember.Shape{1, 3, 5, 5})) })
	if e.Msg != "Invalid padding string 'foo', should be one of {'valid', 'same'}" {
		t.Errorf("message %q", e.Msg)
	}
	// the int options still make square settings
	c = NewConv2d(3, 4, 3, Stride(2), Padding(1), Dilation(2))
	if c.Kernel != [2]int{3, 3} || c.Stride != [2]int{2, 2} || c.Padding != [2]int{1, 1} || c.Dilation != [2]int{2, 2} {
		t.Errorf("square options: %+v", c)
	}
}

// TestConvTranspose2dAgainstPyTorch builds nn.ConvTranspose2d as
// testdata/nn/conv_transpose.json's PyTorch modules were built, loads
// their weights and checks the output, the gradients and the repr.
func TestConvTranspose2dAgainstPyTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/conv_transpose.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []convAuditCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cs {
		var opts []ConvOption
		for k, v := range c.KW {
			switch k {
			case "bias":
				if v == false {
					opts = append(opts, NoBias())
				}
				continue
			case "groups":
				opts = append(opts, Groups(int(v.(float64))))
				continue
			}
			h, w, _ := pairOf(t, v)
			switch k {
			case "stride":
				opts = append(opts, StrideHW(h, w))
			case "padding":
				opts = append(opts, PaddingHW(h, w))
			case "output_padding":
				opts = append(opts, OutputPaddingHW(h, w))
			case "dilation":
				opts = append(opts, DilationHW(h, w))
			default:
				t.Fatalf("argument %s", k)
			}
		}
		var kv any
		if err := json.Unmarshal(c.Kernel, &kv); err != nil {
			t.Fatal(err)
		}
		kh, kw, _ := pairOf(t, kv)
		m := NewConvTranspose2d(c.In, c.Out, kh, append(opts, KernelHW(kh, kw))...)
		if !m.Weight.Shape().Equal(ember.Shape(c.Weight.Shape)) {
			t.Fatalf("weight %v, PyTorch %v", m.Weight.Shape(), c.Weight.Shape)
		}
		if got := m.String(); got != c.Repr {
			t.Errorf("repr %q, PyTorch %q", got, c.Repr)
		}
		m.Weight = c.Weight.f64().SetRequiresGrad(true)
		if c.Bias != nil {
			m.Bias = c.Bias.f64().SetRequiresGrad(true)
		}
		x := c.X.f64().SetRequiresGrad(true)
		y := m.Forward(x)
		closeToJSON(t, c.Repr+" output", y, c.Y)
		y.Mul(c.W.f64()).Sum().Backward()
		closeToJSON(t, c.Repr+" grad x", x.Grad(), c.GX)
		closeToJSON(t, c.Repr+" grad weight", m.Weight.Grad(), c.GWeight)
		if c.GBias != nil {
			closeToJSON(t, c.Repr+" grad bias", m.Bias.Grad(), *c.GBias)
		}
	}
	// the init bound: kaiming_uniform_(a=√5) over fan-in Out/Groups·KH·KW
	// = 8/2·3·3 = 36, so 1/√36 for weight and bias
	m := NewConvTranspose2d(4, 8, 3, Groups(2))
	// (the 144 weights' largest is under 0.9/6 with probability 0.9^144,
	// the 8 biases' with 0.9^8: only their bound is checked)
	if mx := m.Weight.Abs().Max().Item(); mx > 1.0/6 || mx < 0.9/6 {
		t.Errorf("init bound: max |weight| = %v, want just under 1/6", mx)
	}
	if mx := m.Bias.Abs().Max().Item(); mx > 1.0/6 {
		t.Errorf("init bound: max |bias| = %v, want at most 1/6", mx)
	}
	testenv.Raises[*ember.ValueError](t, "same", func() { NewConvTranspose2d(3, 4, 3, PaddingSame()) })
	testenv.Raises[*ember.ValueError](t, "output padding on Conv2d", func() { NewConv2d(3, 4, 3, OutputPadding(1)) })
}
