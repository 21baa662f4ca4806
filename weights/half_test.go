package weights

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/emberml/ember"
)

// TestHalfWeights loads PyTorch 1.13's bfloat16/float16 tensors from a
// torch.save checkpoint and a safetensors file (testdata/gen_fixtures.py,
// gen_half) without widening, compares their bits with torch's, and writes
// them back through SaveSafetensors.
func TestHalfWeights(t *testing.T) {
	raw, err := os.ReadFile("../testdata/fixtures/half/half.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Weights map[string]struct {
			Dtype string
			Shape []int
			Bits  []uint16
		}
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	check := func(src string, m map[string]*ember.Tensor, names ...string) {
		t.Helper()
		for _, k := range names {
			w := fx.Weights[k]
			x := m[k]
			if x == nil {
				t.Fatalf("%s: no %s", src, k)
			}
			if x.DType().String() != w.Dtype || x.Shape().String() != ember.Shape(w.Shape).String() {
				t.Errorf("%s %s: %v %v, torch %s %v", src, k, x.DType(), x.Shape(), w.Dtype, w.Shape)
				continue
			}
			got := x.Bits()
			for i := range got {
				if got[i] != w.Bits[i] {
					t.Errorf("%s %s[%d] = %#04x, torch %#04x", src, k, i, got[i], w.Bits[i])
					break
				}
			}
		}
	}
	pth, err := LoadPyTorch("../testdata/fixtures/half/half.pth")
	if err != nil {
		t.Fatal(err)
	}
	check("pth", pth, "wb", "wh", "wt")
	st, err := LoadSafetensors("../testdata/fixtures/half/half.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	check("safetensors", st, "wb", "wh")
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, pth, nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := ParseSafetensors(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	check("round trip", back, "wb", "wh", "wt")
	if !bytes.Contains(buf.Bytes(), []byte(`"BF16"`)) || !bytes.Contains(buf.Bytes(), []byte(`"F16"`)) {
		t.Error("SaveSafetensors did not write BF16 and F16")
	}
}
