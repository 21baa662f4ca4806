package nn

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// TestPadModulesAgainstPyTorch builds the padding layers as
// testdata/nn/pad_modules.json's PyTorch modules were built
// (testdata/gen_pad_fixtures.py) and checks their repr and output.
func TestPadModulesAgainstPyTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/pad_modules.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		Cls     string     `json:"cls"`
		Padding []int      `json:"padding"`
		Value   float64    `json:"value"`
		X       jsonTensor `json:"x"`
		Y       jsonTensor `json:"y"`
		Repr    string     `json:"repr"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		var m *Pad
		switch c.Cls {
		case "ReflectionPad1d":
			m = NewReflectionPad1d(c.Padding...)
		case "ReflectionPad2d":
			m = NewReflectionPad2d(c.Padding...)
		case "ReflectionPad3d":
			m = NewReflectionPad3d(c.Padding...)
		case "ReplicationPad1d":
			m = NewReplicationPad1d(c.Padding...)
		case "ReplicationPad2d":
			m = NewReplicationPad2d(c.Padding...)
		case "ReplicationPad3d":
			m = NewReplicationPad3d(c.Padding...)
		case "ZeroPad2d":
			m = NewZeroPad2d(c.Padding...)
		case "ConstantPad1d":
			m = NewConstantPad1d(c.Value, c.Padding...)
		case "ConstantPad2d":
			m = NewConstantPad2d(c.Value, c.Padding...)
		case "ConstantPad3d":
			m = NewConstantPad3d(c.Value, c.Padding...)
		default:
			t.Fatalf("class %s", c.Cls)
		}
		if got := m.String(); got != c.Repr {
			t.Errorf("repr %q, PyTorch %q", got, c.Repr)
		}
		closeToJSON(t, c.Repr, m.Forward(c.X.f64()), c.Y)
	}
}

// TestPadModuleErrors: a padding of neither one nor 2k sizes is refused,
// and the input rules are F.pad's (PyTorch: ReflectionPad1d of a 4-D input
// is NotImplementedError, ConstantPad2d of a 1-D one "Padding length too
// large").
func TestPadModuleErrors(t *testing.T) {
	testenv.Raises[*ember.ValueError](t, "3 sizes", func() { NewReflectionPad2d(1, 2, 3) })
	testenv.Raises[*ember.ValueError](t, "no size", func() { NewZeroPad2d() })
	testenv.Raises[*ember.ValueError](t, "1d of 4-D", func() { NewReflectionPad1d(1).Forward(ember.Ones(ember.Shape{1, 1, 2, 3})) })
	testenv.Raises[*ember.ShapeError](t, "2d of 1-D", func() { NewConstantPad2d(2, 1).Forward(ember.Ones(ember.Shape{3})) })
	if got := NewZeroPad2d(1).Forward(ember.Ones(ember.Shape{1, 1, 1, 2, 3})).Shape(); !got.Equal(ember.Shape{1, 1, 1, 4, 5}) {
		t.Errorf("ZeroPad2d of 5-D: %v", got)
	}
	var p *Pad
	testenv.Raises[*ModuleError](t, "nil", func() { p.Forward(ember.Ones(ember.Shape{1, 2})) })
}

// TestConvPaddingModeErrors: PyTorch's ValueErrors for an unknown
// padding_mode and for a transposed convolution's non-zeros one, the
// errors F.pad gives a convolution (circular needs a batch dim; reflect a
// pad under the size), and a state dict padding_mode leaves as it was.
func TestConvPaddingModeErrors(t *testing.T) {
	e := testenv.Raises[*ember.ValueError](t, "bad mode", func() { NewConv2d(2, 3, 3, PaddingMode("foo")) })
	if !strings.Contains(e.Msg, "padding_mode must be one of") || !strings.Contains(e.Msg, "padding_mode='foo'") {
		t.Errorf("message %q", e.Msg)
	}
	testenv.Raises[*ember.ValueError](t, "bad mode 1d", func() { NewConv1d(2, 3, 3, PaddingMode("zero")) })
	e = testenv.Raises[*ember.ValueError](t, "transposed", func() { NewConvTranspose2d(2, 3, 3, PaddingMode("reflect")) })
	if !strings.Contains(e.Msg, `Only "zeros" padding mode is supported for ConvTranspose2d`) {
		t.Errorf("message %q", e.Msg)
	}
	NewConvTranspose2d(2, 3, 3, PaddingMode("zeros"))
	c := NewConv2d(2, 3, 3, Padding(1), PaddingMode("circular"))
	testenv.Raises[*ember.ShapeError](t, "circular unbatched", func() { c.Forward(ember.Ones(ember.Shape{2, 5, 5})) })
	c1 := NewConv1d(2, 3, 3, Padding(1), PaddingMode("circular"))
	testenv.Raises[*ember.ShapeError](t, "circular unbatched 1d", func() { c1.Forward(ember.Ones(ember.Shape{2, 5})) })
	c = NewConv2d(2, 3, 3, Padding(5), PaddingMode("reflect"))
	testenv.Raises[*ember.ShapeError](t, "reflect pad past the size", func() { c.Forward(ember.Ones(ember.Shape{1, 2, 5, 5})) })
	c.PaddingMode = "bogus"
	testenv.Raises[*ember.ValueError](t, "bad mode set later", func() { c.Forward(ember.Ones(ember.Shape{1, 2, 5, 5})) })
	var keys []string
	for k := range NewConv2d(2, 3, 3, PaddingMode("reflect")).StateDict() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "bias,weight" {
		t.Errorf("state dict keys %v", keys)
	}
	if s := NewConv2d(2, 3, 3, Padding(1), PaddingMode("zeros")).String(); s != "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))" {
		t.Errorf("zeros repr %q", s)
	}
}
